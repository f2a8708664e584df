/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSync"

#include "config.h"

#include <string.h>

#include "util/msd-json-string.h"
#include "util/msd-bytes16.h"
#include "util/msd-utf8.h"

enum {
	COPY = 0,   /* the byte as it is */
	ESCAPE = 1, /* an ASCII byte written as an escape */
	UTF8 = 2,   /* the lead of a sequence to check (Go modes only) */
};

/* One class per byte and mode: a table lookup keeps the common path to one load and branch,
 * which matters because this runs over every byte that goes on the wire. */
static const guint8 plain_class[256] = {
        [0x00 ... 0x1f] = ESCAPE,
        ['"'] = ESCAPE,
        ['\\'] = ESCAPE,
};

static const guint8 go_class[256] = {
        [0x00 ... 0x1f] = ESCAPE, ['"'] = ESCAPE, ['\\'] = ESCAPE,        ['<'] = ESCAPE,
        ['>'] = ESCAPE,           ['&'] = ESCAPE, [0x80 ... 0xff] = UTF8,
};

static const gchar hex_digits[] = "0123456789abcdef";

static gchar *put_ascii_escape(gchar *w, guchar c);

/* The escape of ASCII byte @c as GO writes it, escaped again: every backslash doubled, the
 * quote of \" escaped too. */
static gchar *
put_nested_escape(gchar *w, guchar c)
{
	gchar once[8];
	gchar *end = put_ascii_escape(once, c);

	for (const gchar *q = once; q < end; q++) {
		if (*q == '\\' || *q == '"')
			*w++ = '\\';
		*w++ = *q;
	}
	return w;
}

/* Writes the escape for ASCII byte @c at @w; returns the new write position. */
static gchar *
put_ascii_escape(gchar *w, guchar c)
{
	*w++ = '\\';
	switch (c) {
	case '"':
	case '\\':
		*w++ = (gchar)c;
		break;
	case '\b':
		*w++ = 'b';
		break;
	case '\f':
		*w++ = 'f';
		break;
	case '\n':
		*w++ = 'n';
		break;
	case '\r':
		*w++ = 'r';
		break;
	case '\t':
		*w++ = 't';
		break;
	default:
		*w++ = 'u';
		*w++ = '0';
		*w++ = '0';
		*w++ = hex_digits[c >> 4];
		*w++ = hex_digits[c & 0xf];
	}
	return w;
}

/* Makes room for at least @need more bytes after @w, keeping some slack for the rest of the
 * text (@rest input bytes, which need at least as many output bytes). */
static gchar *
reserve(GString *out, gchar *w, gchar **limit, gsize need, gsize rest)
{
	gsize offset = (gsize)(w - out->str);

	g_string_set_size(out, offset + need + rest + rest / 4 + 64);
	*limit = out->str + out->len;
	return out->str + offset;
}

/* The bytes of @x that need more than a copy, as a lane mask. */
static inline MsdBytes16
special_lanes(MsdBytes16 x, MsdJsonStringMode mode)
{
	MsdBytes16 special = (MsdBytes16)((x < 0x20) | (x == '"') | (x == '\\'));

	if (mode != MSD_JSON_STRING_PLAIN)
		special |= (MsdBytes16)((x == '<') | (x == '>') | (x == '&') | (x >= 0x80));
	return special;
}

/* How many bytes from @p on are copied as they are (class COPY). */
static inline gsize
copy_run(const guchar *p, gsize n, MsdJsonStringMode mode, const guint8 *class)
{
	gsize i = 0;

	while (i + 16 <= n) {
		MsdBytes16 x;
		guint lane;

		memcpy(&x, p + i, 16);
		lane = msd_bytes16_first_lane(special_lanes(x, mode));
		if (lane < 16)
			return i + lane;
		i += 16;
	}
	while (i < n && class[p[i]] == COPY)
		i++;
	return i;
}

void
msd_json_string_append_escaped(GString *out, const gchar *s, gssize length, MsdJsonStringMode mode)
{
	const guchar *p = (const guchar *)s;
	const guint8 *class = mode == MSD_JSON_STRING_PLAIN ? plain_class : go_class;
	gsize n = length < 0 ? strlen(s) : (gsize)length;
	gsize i = copy_run(p, n, mode, class);
	gchar *w;
	gchar *limit;

	/* Most text needs no escape at all: one copy. */
	if (i == n) {
		msd_json_string_append_raw(out, s, n);
		return;
	}
	/* Write straight into the buffer. The invariant: room for the rest of the input copied
	 * as it is. An escape writes at most 6 bytes more than it reads (\u0001, \ufffd for
	 * one bad byte, \u2028 for three; nested: \\u0001, \\\" for one), so room is
	 * checked only there. */
	w = reserve(out, out->str + out->len, &limit, i, n - i);
	memcpy(w, s, i);
	w += i;
	while (i < n) {
		guchar c;
		gunichar cp;
		gint sz;

		if (n - i >= 16) {
			/* copy 16 bytes whatever they are (the invariant leaves room for them),
			 * keep those before the first that needs more */
			MsdBytes16 x;
			guint lane;

			memcpy(&x, p + i, 16);
			lane = msd_bytes16_first_lane(special_lanes(x, mode));
			memcpy(w, &x, 16);
			w += lane;
			i += lane;
			if (lane == 16)
				continue;
		} else if (class[p[i]] == COPY) {
			*w++ = (gchar)p[i++];
			continue;
		}
		c = p[i];
		if ((gsize)(limit - w) < n - i + 6)
			w = reserve(out, w, &limit, 7, n - i);
		if (class[c] == ESCAPE) {
			w = mode == MSD_JSON_STRING_GO_NESTED ? put_nested_escape(w, c)
			                                      : put_ascii_escape(w, c);
			i++;
		} else if ((sz = msd_utf8_decode(p + i, n - i, &cp)) == 0) {
			if (mode == MSD_JSON_STRING_GO) {
				memcpy(w, "\\ufffd", 6);
				w += 6;
			} else {
				memcpy(w, MSD_UTF8_REPLACEMENT, 3);
				w += 3;
			}
			i++;
		} else if (cp == 0x2028 || cp == 0x2029) {
			if (mode == MSD_JSON_STRING_GO_NESTED)
				*w++ = '\\';
			memcpy(w, cp == 0x2028 ? "\\u2028" : "\\u2029", 6);
			w += 6;
			i += (gsize)sz;
		} else {
			memcpy(w, p + i, (gsize)sz);
			w += sz;
			i += (gsize)sz;
		}
	}
	g_string_truncate(out, (gsize)(w - out->str));
}

void
msd_json_string_append(GString *out, const gchar *s, gssize length, MsdJsonStringMode mode)
{
	g_string_append_c(out, '"');
	msd_json_string_append_escaped(out, s, length, mode);
	g_string_append_c(out, '"');
}

void
msd_json_string_append_unichar(GString *out, gunichar c, MsdJsonStringMode mode)
{
	gchar buf[8];

	if (c < 0x80) {
		const guint8 *class = mode == MSD_JSON_STRING_PLAIN ? plain_class : go_class;

		if (class[c] != ESCAPE)
			g_string_append_c(out, (gchar)c);
		else if (mode == MSD_JSON_STRING_GO_NESTED)
			g_string_append_len(out, buf, put_nested_escape(buf, (guchar)c) - buf);
		else
			g_string_append_len(out, buf, put_ascii_escape(buf, (guchar)c) - buf);
		return;
	}
	msd_json_string_append_escaped(out, buf, g_unichar_to_utf8(c, buf), mode);
}
