/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * Small writers of JSON fragments for the objects kubesim makes itself (the workload
 * generator, churn and its simulated kubelet). They write straight into a GString without
 * escaping where the value is known not to need it (names, hashes, IPs, times), which is what
 * keeps generating 100,000 pods down to seconds.
 */

/* Length of an RFC 3339 UTC time with second precision, as Kubernetes writes it. */
#define KUBESIM_TIME_LEN 20

/* Appends "@value" without escaping: for names, hashes and IPs only. */
static inline void
kubesim_append_plain(GString *s, const gchar *value)
{
	g_string_append_c(s, '"');
	g_string_append(s, value);
	g_string_append_c(s, '"');
}

void kubesim_append_uint(GString *s, guint64 value);
/* Writes @unix_seconds as KUBESIM_TIME_LEN characters and a NUL into @out. */
void kubesim_format_time(gchar *out, gint64 unix_seconds);
/* Appends the time, quoted. */
void kubesim_append_time(GString *s, gint64 unix_seconds);
/* Appends "a.b.c.d", quoted. */
void kubesim_append_ipv4(GString *s, guint a, guint b, guint c, guint d);

/* @len lowercase hex digits and a NUL. */
void kubesim_random_hex(GRand *rand, gchar *out, guint len);
/* A version 4 UUID in text form; @out holds 37 bytes. */
void kubesim_random_uid(GRand *rand, gchar *out);
/* @len characters of the alphabet Kubernetes uses for generated name suffixes, and a NUL. */
void kubesim_random_suffix(GRand *rand, gchar *out, guint len);

/* The first @needle in the @length bytes at @haystack, or NULL. */
const gchar *kubesim_find(const gchar *haystack, gsize length, const gchar *needle);
/* The last one, searched from the end: fast when @needle starts with a rare byte. */
const gchar *kubesim_find_last(const gchar *haystack, gsize length, const gchar *needle);

G_END_DECLS
