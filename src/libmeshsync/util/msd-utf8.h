/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define MSD_UTF8_REPLACEMENT "\xef\xbf\xbd"

/*
 * Decode one UTF-8 sequence at @s the way Go's utf8.DecodeRune does: returns its length
 * (1-4) and stores the code point, or returns 0 when the bytes are not a valid, shortest,
 * non-surrogate sequence; the caller then treats exactly one byte as invalid.
 */
static inline gint
msd_utf8_decode(const guchar *s, gsize n, gunichar *cp)
{
	guchar c = s[0];
	guchar lo = 0x80, hi = 0xbf;
	gint len;
	gunichar v;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		v = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		v = c & 0x07;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (n < (gsize)len || s[1] < lo || s[1] > hi)
		return 0;
	v = (v << 6) | (s[1] & 0x3f);
	for (gint i = 2; i < len; i++) {
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	*cp = v;
	return len;
}

G_END_DECLS
