/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/* for memmem() and memrchr() */
#define _GNU_SOURCE

#include "kubesim-write.h"

#include <string.h>

/* Characters Kubernetes uses for generated name suffixes (no vowels, no look-alikes). */
static const gchar kubesim_alnum[] = "bcdfghjklmnpqrstvwxz2456789";

void
kubesim_append_uint(GString *s, guint64 value)
{
	gchar digits[24];
	guint n = sizeof digits;

	do {
		digits[--n] = (gchar)('0' + value % 10);
		value /= 10;
	} while (value != 0);
	g_string_append_len(s, digits + n, sizeof digits - n);
}

static void
put_two(gchar *out, guint value)
{
	out[0] = (gchar)('0' + value / 10 % 10);
	out[1] = (gchar)('0' + value % 10);
}

/* RFC 3339 in UTC without GDateTime: a pod carries a dozen timestamps and GDateTime formatting
 * would dominate the run time. Days to civil date after H. Hinnant's public-domain algorithm. */
void
kubesim_format_time(gchar *out, gint64 unix_seconds)
{
	gint64 days = unix_seconds / 86400;
	gint64 secs = unix_seconds % 86400;
	gint64 z = days + 719468;
	gint64 era = z / 146097;
	gint64 doe = z - era * 146097;
	gint64 yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	gint64 doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	gint64 mp = (5 * doy + 2) / 153;
	guint day = (guint)(doy - (153 * mp + 2) / 5 + 1);
	guint month = (guint)(mp < 10 ? mp + 3 : mp - 9);
	guint year = (guint)(yoe + era * 400 + (month <= 2));

	put_two(out, year / 100);
	put_two(out + 2, year % 100);
	out[4] = '-';
	put_two(out + 5, month);
	out[7] = '-';
	put_two(out + 8, day);
	out[10] = 'T';
	put_two(out + 11, (guint)(secs / 3600));
	out[13] = ':';
	put_two(out + 14, (guint)(secs / 60 % 60));
	out[16] = ':';
	put_two(out + 17, (guint)(secs % 60));
	out[19] = 'Z';
	out[20] = '\0';
}

void
kubesim_append_time(GString *s, gint64 unix_seconds)
{
	gchar text[KUBESIM_TIME_LEN + 1];

	kubesim_format_time(text, unix_seconds);
	g_string_append_c(s, '"');
	g_string_append_len(s, text, KUBESIM_TIME_LEN);
	g_string_append_c(s, '"');
}

void
kubesim_append_ipv4(GString *s, guint a, guint b, guint c, guint d)
{
	g_string_append_c(s, '"');
	kubesim_append_uint(s, a);
	g_string_append_c(s, '.');
	kubesim_append_uint(s, b);
	g_string_append_c(s, '.');
	kubesim_append_uint(s, c);
	g_string_append_c(s, '.');
	kubesim_append_uint(s, d);
	g_string_append_c(s, '"');
}

void
kubesim_random_hex(GRand *rand, gchar *out, guint len)
{
	static const gchar hex[] = "0123456789abcdef";
	guint32 bits = 0;
	guint i;

	for (i = 0; i < len; i++) {
		if (i % 8 == 0)
			bits = g_rand_int(rand);
		out[i] = hex[bits & 0xf];
		bits >>= 4;
	}
	out[len] = '\0';
}

void
kubesim_random_uid(GRand *rand, gchar *out)
{
	gchar hex[33];

	kubesim_random_hex(rand, hex, 32);
	hex[12] = '4';
	hex[16] = "89ab"[g_rand_int_range(rand, 0, 4)];
	memcpy(out, hex, 8);
	out[8] = '-';
	memcpy(out + 9, hex + 8, 4);
	out[13] = '-';
	memcpy(out + 14, hex + 12, 4);
	out[18] = '-';
	memcpy(out + 19, hex + 16, 4);
	out[23] = '-';
	memcpy(out + 24, hex + 20, 12);
	out[36] = '\0';
}

void
kubesim_random_suffix(GRand *rand, gchar *out, guint len)
{
	guint i;

	for (i = 0; i < len; i++)
		out[i] = kubesim_alnum[g_rand_int_range(rand, 0, sizeof kubesim_alnum - 1)];
	out[len] = '\0';
}

const gchar *
kubesim_find(const gchar *haystack, gsize length, const gchar *needle)
{
	return memmem(haystack, length, needle, strlen(needle));
}

const gchar *
kubesim_find_last(const gchar *haystack, gsize length, const gchar *needle)
{
	gsize n = strlen(needle);
	const gchar *p = haystack + length;

	while ((p = memrchr(haystack, needle[0], (gsize)(p - haystack))) != NULL) {
		if ((gsize)(haystack + length - p) >= n && memcmp(p, needle, n) == 0)
			return p;
	}
	return NULL;
}
