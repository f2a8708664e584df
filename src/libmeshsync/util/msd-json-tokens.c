/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSync"

#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "meshsync-error.h"
#include "util/msd-json-tokens.h"
#include "util/msd-utf8.h"

void
msd_json_tokens_init(MsdJsonTokens *self)
{
	memset(self, 0, sizeof(*self));
}

void
msd_json_tokens_clear(MsdJsonTokens *self)
{
	g_free(self->tokens);
	msd_json_checked_free(self->checked);
	memset(self, 0, sizeof(*self));
}

/* First byte of the value's text (the opening quote for strings). */
static inline gint32
tok_text_start(const MsdJsonToken *t)
{
	return t->type == MSD_JSON_STRING ? t->start - 1 : t->start;
}

/* One past the last byte of the value's text. */
static inline gint32
tok_text_end(const MsdJsonToken *t)
{
	return t->type == MSD_JSON_STRING ? t->end + 1 : t->end;
}

/* Whether the decoded text of string token @index is the @n bytes at @text. */
static gboolean
string_equals_len(const MsdJsonTokens *self, gint index, const gchar *text, gsize n)
{
	const MsdJsonToken *t = &self->tokens[index];
	g_autoptr(GString) scratch = NULL;
	const gchar *s;
	gsize len;

	if (t->plain)
		return (gsize)(t->end - t->start) == n &&
		       (n == 0 || self->data[t->start] == text[0]) &&
		       memcmp(self->data + t->start, text, n) == 0;
	/* an escape shortens the text: a raw span shorter than @text cannot decode to it */
	if ((gsize)(t->end - t->start) < n)
		return FALSE;
	scratch = g_string_new(NULL);
	s = msd_json_tokens_string(self, index, scratch, &len);
	return len == n && memcmp(s, text, n) == 0;
}

gint
msd_json_tokens_member_len(const MsdJsonTokens *self, gint object, const gchar *key, gsize key_len)
{
	gint found = -1;
	gint j;

	if (!msd_json_tokens_is_object(self, object))
		return -1;
	j = object + 1;
	for (gint k = 0; k < self->tokens[object].size; k++) {
		if (string_equals_len(self, j, key, key_len))
			found = j + 1;
		j = self->tokens[j + 1].next;
	}
	return found;
}

gint
msd_json_tokens_path(const MsdJsonTokens *self, gint object, ...)
{
	va_list args;
	const gchar *key;
	gint index = object;

	va_start(args, object);
	while (index >= 0 && (key = va_arg(args, const gchar *)) != NULL)
		index = msd_json_tokens_member(self, index, key);
	va_end(args);
	return index;
}

const gchar *
msd_json_tokens_raw(const MsdJsonTokens *self, gint index, gsize *length)
{
	*length = (gsize)(self->tokens[index].end - self->tokens[index].start);
	return self->data + self->tokens[index].start;
}

const gchar *
msd_json_tokens_span(const MsdJsonTokens *self, gint index, gsize *length)
{
	gint32 start = tok_text_start(&self->tokens[index]);

	*length = (gsize)(tok_text_end(&self->tokens[index]) - start);
	return self->data + start;
}

static guint
hex4(const gchar *p)
{
	guint v = 0;

	for (gint i = 0; i < 4; i++)
		v = (v << 4) | (guint)g_ascii_xdigit_value(p[i]);
	return v;
}

gint
msd_json_decode_escape(const gchar *p, gsize n, gunichar *cp)
{
	guint v;

	/* escapes were checked by the tokenizer: a known letter, or u and four hex digits */
	switch (p[1]) {
	case 'b':
		*cp = '\b';
		return 2;
	case 'f':
		*cp = '\f';
		return 2;
	case 'n':
		*cp = '\n';
		return 2;
	case 'r':
		*cp = '\r';
		return 2;
	case 't':
		*cp = '\t';
		return 2;
	case 'u':
		break;
	default: /* '"', '\\' and '/' stand for themselves */
		*cp = (guchar)p[1];
		return 2;
	}
	v = hex4(p + 2);
	if (v < 0xd800 || v >= 0xe000) {
		*cp = v;
		return 6;
	}
	/* a high surrogate pairs only with an escaped low one right after it; anything else is
	 * U+FFFD, and the following escape is read on its own */
	if (v < 0xdc00 && n >= 12 && p[6] == '\\' && p[7] == 'u') {
		guint lo = hex4(p + 8);

		if (lo >= 0xdc00 && lo < 0xe000) {
			*cp = 0x10000 + ((v - 0xd800) << 10) + (lo - 0xdc00);
			return 12;
		}
	}
	*cp = 0xfffd;
	return 6;
}

void
msd_json_tokens_append_decoded(const MsdJsonTokens *self, gint index, GString *out)
{
	const MsdJsonToken *t = &self->tokens[index];
	const gchar *p = self->data + t->start;
	gint32 n = t->end - t->start;
	gint32 i = 0;

	if (t->plain) {
		g_string_append_len(out, p, n);
		return;
	}
	while (i < n) {
		guchar c = (guchar)p[i];
		gint32 run = i;
		gunichar cp;
		gint sz;

		while (run < n && (guchar)p[run] < 0x80 && p[run] != '\\')
			run++;
		if (run > i) {
			g_string_append_len(out, p + i, run - i);
			i = run;
			continue;
		}
		if (c != '\\') {
			sz = msd_utf8_decode((const guchar *)p + i, (gsize)(n - i), &cp);
			if (sz == 0) {
				g_string_append_len(out, MSD_UTF8_REPLACEMENT, 3);
				i++;
			} else {
				g_string_append_len(out, p + i, sz);
				i += sz;
			}
			continue;
		}
		i += msd_json_decode_escape(p + i, (gsize)(n - i), &cp);
		if (cp < 0x80)
			g_string_append_c(out, (gchar)cp);
		else
			g_string_append_unichar(out, cp);
	}
}

const gchar *
msd_json_tokens_string(const MsdJsonTokens *self, gint index, GString *scratch, gsize *length)
{
	const MsdJsonToken *t = &self->tokens[index];

	if (t->plain) {
		*length = (gsize)(t->end - t->start);
		return self->data + t->start;
	}
	g_string_truncate(scratch, 0);
	msd_json_tokens_append_decoded(self, index, scratch);
	*length = scratch->len;
	return scratch->str;
}

gchar *
msd_json_tokens_dup_string(const MsdJsonTokens *self, gint index)
{
	const MsdJsonToken *t;
	GString *out;

	switch (msd_json_tokens_type(self, index)) {
	case MSD_JSON_STRING:
		break;
	case MSD_JSON_NUMBER:
	case MSD_JSON_TRUE:
	case MSD_JSON_FALSE:
	case MSD_JSON_NULL:
		t = &self->tokens[index];
		return g_strndup(self->data + t->start, (gsize)(t->end - t->start));
	case MSD_JSON_OBJECT:
	case MSD_JSON_ARRAY:
	default:
		return NULL;
	}
	t = &self->tokens[index];
	if (t->plain)
		return g_strndup(self->data + t->start, (gsize)(t->end - t->start));
	out = g_string_sized_new((gsize)(t->end - t->start));
	msd_json_tokens_append_decoded(self, index, out);
	return g_string_free(out, FALSE);
}

gboolean
msd_json_tokens_string_equals(const MsdJsonTokens *self, gint index, const gchar *text)
{
	return msd_json_tokens_is_string(self, index) &&
	       string_equals_len(self, index, text, strlen(text));
}
