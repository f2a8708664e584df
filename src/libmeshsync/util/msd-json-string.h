/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>
#include <string.h>

G_BEGIN_DECLS

/* memcpy() for the few bytes of a key or a short value, without the call: two copies of a
 * fixed size that overlap cover every length up to 16, reading and writing only [0, n). */
static inline void
msd_copy_short(gchar *w, const gchar *s, gsize n)
{
	if (n >= 8 && n <= 16) {
		guint64 a, b;

		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(w, &a, 8);
		memcpy(w + n - 8, &b, 8);
	} else if (n >= 4 && n < 8) {
		guint32 a, b;

		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		memcpy(w, &a, 4);
		memcpy(w + n - 4, &b, 4);
	} else if (n < 4) {
		for (gsize i = 0; i < n; i++)
			w[i] = s[i];
	} else {
		memcpy(w, s, n);
	}
}

/* Room for @n more bytes at the end of @out, already counted in its length (and the NUL
 * after them written): for a writer that fills a few pieces in one go. */
static inline gchar *
msd_json_string_extend(GString *out, gsize n)
{
	if (G_UNLIKELY(out->len + n >= out->allocated_len)) {
		g_string_set_size(out, out->len + n);
		return out->str + out->len - n;
	}
	out->len += n;
	out->str[out->len] = '\0';
	return out->str + out->len - n;
}

/* g_string_append_len() for the writers' hot paths: GLib 2.74 inlines it only for constant
 * lengths and otherwise calls g_string_insert_len(), which costs more than a short copy. */
static inline void
msd_json_string_append_raw(GString *out, const gchar *s, gsize n)
{
	if (G_LIKELY(out->len + n < out->allocated_len)) {
		msd_copy_short(out->str + out->len, s, n);
		out->len += n;
		out->str[out->len] = '\0';
	} else {
		g_string_append_len(out, s, (gssize)n);
	}
}

/*
 * The project's one JSON string-literal writer. Output JSON is never produced by json-glib 1.6,
 * whose generator copies byte 0x1F raw; the modes cover what the callers need.
 */
typedef enum {
	/* RFC 8259: quote, backslash and control characters escaped, every other byte copied */
	MSD_JSON_STRING_PLAIN,
	/* Go's encoding/json: also `<` `>` `&` U+2028 U+2029 escaped; each byte of invalid UTF-8
	 * becomes the six characters \ufffd (the encoder on a raw Go string) */
	MSD_JSON_STRING_GO,
	/* as GO, but invalid UTF-8 becomes U+FFFD itself: what Go's decoder stored, so what a
	 * decode-then-encode round trip shows */
	MSD_JSON_STRING_GO_DECODED,
	/* GO_DECODED, and that escaped once more as GO escapes a string: the text as it reads
	 * inside a JSON string that is itself inside a JSON string (a `"` is `\\\"`), which is
	 * how upstream's wire carries spec and status */
	MSD_JSON_STRING_GO_NESTED,
} MsdJsonStringMode;

/* Appends @s escaped for the inside of a JSON string literal. @length may be -1 for a
 * NUL-terminated string. */
void
msd_json_string_append_escaped(GString *out, const gchar *s, gssize length, MsdJsonStringMode mode);

/* Appends @s as a complete JSON string literal, quotes included. */
void msd_json_string_append(GString *out, const gchar *s, gssize length, MsdJsonStringMode mode);

/* Appends one code point escaped as @mode escapes it inside a literal. */
void msd_json_string_append_unichar(GString *out, gunichar c, MsdJsonStringMode mode);

G_END_DECLS
