/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSync"

#include "config.h"

#include <string.h>

#include "util/msd-json-string.h"
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

void
msd_json_string_append_escaped(GString *out, const gchar *s, gssize length, MsdJsonStringMode mode)
{
	const guchar *p = (const guchar *)s;
	const guint8 *class = mode == MSD_JSON_STRING_PLAIN ? plain_class : go_class;
	gsize n = length < 0 ? strlen(s) : (gsize)length;
	gsize start = out->len;
	gsize i = 0;
	gchar *w;

	/* six output bytes per input byte is the worst case (\u0001, \ufffd): write straight into
	 * the string's buffer and trim once at the end */
	g_string_set_size(out, start + n * 6);
	w = out->str + start;
	while (i < n) {
		guchar c = p[i];
		gunichar cp;
		gint sz;

		switch (class[c]) {
		case COPY: {
			/* the whole run of bytes that need nothing, in one copy */
			gsize run = i + 1;

			while (run < n && class[p[run]] == COPY)
				run++;
			memcpy(w, p + i, run - i);
			w += run - i;
			i = run;
			continue;
		}
		case ESCAPE:
			w = put_ascii_escape(w, c);
			i++;
			continue;
		default:
			break;
		}
		sz = msd_utf8_decode(p + i, n - i, &cp);
		if (sz == 0) {
			if (mode == MSD_JSON_STRING_GO) {
				memcpy(w, "\\ufffd", 6);
				w += 6;
			} else {
				memcpy(w, MSD_UTF8_REPLACEMENT, 3);
				w += 3;
			}
			i++;
		} else if (cp == 0x2028 || cp == 0x2029) {
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

		if (class[c] == ESCAPE)
			g_string_append_len(out, buf, put_ascii_escape(buf, (guchar)c) - buf);
		else
			g_string_append_c(out, (gchar)c);
		return;
	}
	msd_json_string_append_escaped(out, buf, g_unichar_to_utf8(c, buf), mode);
}
