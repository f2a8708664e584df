/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSync"

#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "meshsync-error.h"
#include "util/msd-json-tokens.h"
#include "util/msd-utf8.h"

/* The one translation unit that instantiates jsmn, with the one configuration the project
 * uses: strict mode (no bare words as keys) and parent links (closing a bracket is O(depth)). */
#define JSMN_STATIC
#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wdeclaration-after-statement"
#include <jsmn.h>
#pragma GCC diagnostic pop

void
msd_json_tokens_init(MsdJsonTokens *self)
{
	memset(self, 0, sizeof(*self));
}

void
msd_json_tokens_clear(MsdJsonTokens *self)
{
	g_free(self->tokens);
	g_free(self->jsmn);
	memset(self, 0, sizeof(*self));
}

static inline gboolean
is_ws(gchar c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
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

/* jsmn does not look at the bytes between tokens, so "[1 2]" and "{"a" 1}" pass it: the bytes
 * in [from, to) must be whitespace around exactly one @sep (or none if @sep is 0). */
static gboolean
check_gap(const gchar *js, gint32 from, gint32 to, gchar sep)
{
	gint32 i = from;

	while (i < to && is_ws(js[i]))
		i++;
	if (sep != 0) {
		if (i >= to || js[i] != sep)
			return FALSE;
		i++;
		while (i < to && is_ws(js[i]))
			i++;
	}
	return i == to;
}

/* A number as RFC 8259 spells it: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static gboolean
check_number(const gchar *p, gint32 n)
{
	gint32 i = 0;

	if (i < n && p[i] == '-')
		i++;
	if (i >= n)
		return FALSE;
	if (p[i] == '0') {
		i++;
	} else if (p[i] >= '1' && p[i] <= '9') {
		while (i < n && g_ascii_isdigit(p[i]))
			i++;
	} else {
		return FALSE;
	}
	if (i < n && p[i] == '.') {
		i++;
		if (i >= n || !g_ascii_isdigit(p[i]))
			return FALSE;
		while (i < n && g_ascii_isdigit(p[i]))
			i++;
	}
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		i++;
		if (i < n && (p[i] == '+' || p[i] == '-'))
			i++;
		if (i >= n || !g_ascii_isdigit(p[i]))
			return FALSE;
		while (i < n && g_ascii_isdigit(p[i]))
			i++;
	}
	return i == n;
}

/* Go's decoder rejects numbers that overflow a float64 (1e400): so do we, before any writer
 * has to format one. Plain integers up to 18 digits cannot overflow; skip the conversion. */
static gboolean
check_number_range(const gchar *p, gint32 n)
{
	gchar buf[64];
	g_autofree gchar *heap = NULL;
	const gchar *text = buf;
	gdouble v;

	if (n <= 18 && memchr(p, '.', n) == NULL && memchr(p, 'e', n) == NULL &&
	    memchr(p, 'E', n) == NULL)
		return TRUE;
	if (n < (gint32)sizeof(buf)) {
		memcpy(buf, p, n);
		buf[n] = '\0';
	} else {
		heap = g_strndup(p, n);
		text = heap;
	}
	v = g_ascii_strtod(text, NULL);
	return isfinite(v);
}

/* Raw control bytes are not allowed inside JSON strings (jsmn lets them through); also note
 * whether the bytes can be used as the decoded text directly. */
static gboolean
check_string(const gchar *p, gint32 n, guint8 *plain)
{
	gboolean is_plain = TRUE;

	for (gint32 i = 0; i < n; i++) {
		guchar c = (guchar)p[i];

		if (c < 0x20)
			return FALSE;
		if (c == '\\' || c >= 0x80)
			is_plain = FALSE;
	}
	*plain = is_plain;
	return TRUE;
}

/* jsmn closes a bracket by walking up from the last token, which makes a document nested n
 * deep cost n^2 steps (100,000 brackets: seconds). One quick pass bounds the depth first. */
static gboolean
check_depth(const gchar *js, gsize len)
{
	const gchar *p = js;
	const gchar *end = js + len;
	guint depth = 0;

	while (p < end) {
		switch (*p++) {
		case '"':
			/* skip the string with memchr: a quote ends it unless an odd number of
			 * backslashes precedes it; jsmn reports an unterminated one */
			for (;;) {
				const gchar *q = memchr(p, '"', (gsize)(end - p));
				const gchar *b;

				if (q == NULL)
					return TRUE;
				b = q;
				while (b > p && b[-1] == '\\')
					b--;
				p = q + 1;
				if (((q - b) & 1) == 0)
					break;
			}
			break;
		case '[':
		case '{':
			if (++depth > MSD_JSON_MAX_DEPTH)
				return FALSE;
			break;
		case ']':
		case '}':
			if (depth > 0)
				depth--;
			break;
		default:
			break;
		}
	}
	return TRUE;
}

typedef struct {
	const gchar *js;
	const jsmntok_t *raw;
	MsdJsonToken *tok;
	gint n;
} Walk;

/* Validates the value at token @i and everything under it, filling in our token layout;
 * returns the index after it, or -1. */
static gint
walk_value(Walk *w, gint i, guint depth)
{
	const jsmntok_t *r;
	MsdJsonToken *t;

	if (i >= w->n || depth > MSD_JSON_MAX_DEPTH)
		return -1;
	r = &w->raw[i];
	t = &w->tok[i];
	t->start = r->start;
	t->end = r->end;
	t->size = r->size;
	t->plain = 0;

	switch (r->type) {
	case JSMN_PRIMITIVE: {
		const gchar *p = w->js + r->start;
		gint32 n = r->end - r->start;

		if (r->size != 0)
			return -1;
		if (n == 4 && memcmp(p, "true", 4) == 0)
			t->type = MSD_JSON_TRUE;
		else if (n == 5 && memcmp(p, "false", 5) == 0)
			t->type = MSD_JSON_FALSE;
		else if (n == 4 && memcmp(p, "null", 4) == 0)
			t->type = MSD_JSON_NULL;
		else if (check_number(p, n) && check_number_range(p, n))
			t->type = MSD_JSON_NUMBER;
		else
			return -1;
		t->next = i + 1;
		return i + 1;
	}
	case JSMN_STRING:
		t->type = MSD_JSON_STRING;
		if (r->size != 0 || !check_string(w->js + r->start, r->end - r->start, &t->plain))
			return -1;
		t->next = i + 1;
		return i + 1;
	case JSMN_ARRAY: {
		gint j = i + 1;
		gint32 pos = r->start + 1;

		t->type = MSD_JSON_ARRAY;
		for (gint k = 0; k < r->size; k++) {
			gint after;

			if (j >= w->n)
				return -1;
			after = walk_value(w, j, depth + 1);
			if (after < 0 ||
			    !check_gap(w->js, pos, tok_text_start(&w->tok[j]), k == 0 ? 0 : ','))
				return -1;
			pos = tok_text_end(&w->tok[j]);
			j = after;
		}
		if (!check_gap(w->js, pos, r->end - 1, 0))
			return -1;
		t->next = j;
		return j;
	}
	case JSMN_OBJECT: {
		gint j = i + 1;
		gint32 pos = r->start + 1;

		t->type = MSD_JSON_OBJECT;
		for (gint k = 0; k < r->size; k++) {
			MsdJsonToken *key;
			gint after;

			if (j + 1 >= w->n || w->raw[j].type != JSMN_STRING || w->raw[j].size != 1)
				return -1;
			key = &w->tok[j];
			key->type = MSD_JSON_STRING;
			key->start = w->raw[j].start;
			key->end = w->raw[j].end;
			key->size = 0;
			key->next = j + 1;
			if (!check_string(w->js + key->start, key->end - key->start, &key->plain) ||
			    !check_gap(w->js, pos, key->start - 1, k == 0 ? 0 : ','))
				return -1;
			after = walk_value(w, j + 1, depth + 1);
			if (after < 0 ||
			    !check_gap(w->js, key->end + 1, tok_text_start(&w->tok[j + 1]), ':'))
				return -1;
			pos = tok_text_end(&w->tok[j + 1]);
			j = after;
		}
		if (!check_gap(w->js, pos, r->end - 1, 0))
			return -1;
		t->next = j;
		return j;
	}
	default:
		return -1;
	}
}

/* A document whose one value is a number or a literal: jsmn is not asked (see the caller). The
 * primitive's text runs from the first non-blank byte to the next blank one; the walk checks
 * that it is a valid number or literal and the caller that only blanks follow. Fills @tok. */
static gboolean
top_level_primitive(const gchar *js, gsize len, jsmntok_t *tok)
{
	gsize start = 0;
	gsize end;

	while (start < len && is_ws(js[start]))
		start++;
	if (start == len || js[start] == '{' || js[start] == '[' || js[start] == '"')
		return FALSE;
	end = start;
	while (end < len && !is_ws(js[end]))
		end++;
	tok->type = JSMN_PRIMITIVE;
	tok->start = (int)start;
	tok->end = (int)end;
	tok->size = 0;
	tok->parent = -1;
	return TRUE;
}

gboolean
msd_json_tokens_parse(MsdJsonTokens *self, const gchar *data, gsize length, GError **error)
{
	jsmn_parser parser;
	Walk w;
	gint rc;
	gint after;

	g_return_val_if_fail(data != NULL || length == 0, FALSE);

	self->data = data;
	self->length = length;
	self->n_tokens = 0;
	/* jsmn's offsets are ints, ours gint32 */
	if (length > G_MAXINT32 / 2) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            "malformed JSON (document too large: %" G_GSIZE_FORMAT " bytes)",
		            length);
		return FALSE;
	}
	if (!check_depth(data, length)) {
		/* a limit of ours, not broken JSON: callers may skip just this document */
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_TOO_LARGE,
		            "JSON nested deeper than %d levels", MSD_JSON_MAX_DEPTH);
		return FALSE;
	}
	if (self->jsmn_allocated == 0) {
		/* Kubernetes objects average one token per 12-20 bytes */
		self->jsmn_allocated = (gint)MIN(length / 6 + 16, 1 << 16);
		self->jsmn = g_new(jsmntok_t, self->jsmn_allocated);
	}
	jsmn_init(&parser);
	if (top_level_primitive(data, length, self->jsmn)) {
		/* strict jsmn wants a delimiter after a primitive, so a document that is one bare
		 * number or literal would be "truncated" at the very end of the text and valid
		 * with a space after it: RFC 8259 accepts both, so the token is made here and
		 * checked by the same walk as every other value */
		rc = 1;
	} else {
		rc = jsmn_parse(&parser, data, length, self->jsmn, (guint)self->jsmn_allocated);
	}
	while (rc == JSMN_ERROR_NOMEM) {
		/* jsmn resumes where it stopped once it has room for more tokens */
		self->jsmn_allocated *= 2;
		self->jsmn = g_renew(jsmntok_t, self->jsmn, self->jsmn_allocated);
		rc = jsmn_parse(&parser, data, length, self->jsmn, (guint)self->jsmn_allocated);
	}
	if (rc <= 0) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            "malformed JSON (%s at byte %u of %" G_GSIZE_FORMAT ")",
		            rc == JSMN_ERROR_PART ? "truncated document"
		            : rc == 0             ? "no value"
		                                  : "invalid character",
		            parser.pos, length);
		return FALSE;
	}
	if (self->allocated < rc) {
		g_free(self->tokens);
		self->allocated = MAX(rc, 16);
		self->tokens = g_new(MsdJsonToken, self->allocated);
	}
	w.js = data;
	w.raw = self->jsmn;
	w.tok = self->tokens;
	w.n = rc;
	after = walk_value(&w, 0, 0);
	if (after < 0 || !check_gap(data, 0, tok_text_start(&self->tokens[0]), 0)) {
		g_set_error(
		        error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		        "malformed JSON (invalid structure, literal or string in %" G_GSIZE_FORMAT
		        " bytes)",
		        length);
		return FALSE;
	}
	/* jsmn accepts several top-level values in a row; a document is exactly one */
	if (after != rc || !check_gap(data, tok_text_end(&self->tokens[0]), (gint32)length, 0)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            "malformed JSON (trailing data after byte %d of %" G_GSIZE_FORMAT ")",
		            tok_text_end(&self->tokens[0]), length);
		return FALSE;
	}
	self->n_tokens = rc;
	return TRUE;
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
		       memcmp(self->data + t->start, text, n) == 0;
	/* an escape shortens the text: a raw span shorter than @text cannot decode to it */
	if ((gsize)(t->end - t->start) < n)
		return FALSE;
	scratch = g_string_new(NULL);
	s = msd_json_tokens_string(self, index, scratch, &len);
	return len == n && memcmp(s, text, n) == 0;
}

gint
msd_json_tokens_member(const MsdJsonTokens *self, gint object, const gchar *key)
{
	gsize key_len = strlen(key);
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

	/* escapes were checked by jsmn: a known letter, or u and four hex digits */
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

static gint
member_cmp(gconstpointer a, gconstpointer b)
{
	const MsdJsonMember *ma = a;
	const MsdJsonMember *mb = b;
	gint c = memcmp(ma->key, mb->key, MIN(ma->key_len, mb->key_len));

	if (c != 0)
		return c;
	if (ma->key_len != mb->key_len)
		return ma->key_len < mb->key_len ? -1 : 1;
	/* keep document order among duplicates so that the last one can win */
	return ma->key_tok < mb->key_tok ? -1 : 1;
}

MsdJsonMember *
msd_json_tokens_sorted_members(const MsdJsonTokens *self, gint object, gint *n_members)
{
	gint size = self->tokens[object].size;
	MsdJsonMember *m = g_new(MsdJsonMember, MAX(size, 1));
	gboolean sorted = TRUE;
	gint j = object + 1;
	gint out = 0;

	for (gint k = 0; k < size; k++) {
		const MsdJsonToken *kt = &self->tokens[j];

		m[k].key_tok = j;
		m[k].value_tok = j + 1;
		m[k].owned = NULL;
		if (kt->plain) {
			m[k].key = self->data + kt->start;
			m[k].key_len = (gsize)(kt->end - kt->start);
		} else {
			GString *s = g_string_new(NULL);

			msd_json_tokens_append_decoded(self, j, s);
			m[k].key_len = s->len;
			m[k].owned = g_string_free(s, FALSE);
			m[k].key = m[k].owned;
		}
		if (k > 0 && sorted && member_cmp(&m[k - 1], &m[k]) > 0)
			sorted = FALSE;
		j = self->tokens[j + 1].next;
	}
	if (!sorted && size <= 32) {
		/* the few members of a Kubernetes object: an insertion sort beats qsort's calls */
		for (gint k = 1; k < size; k++) {
			MsdJsonMember x = m[k];
			gint i = k;

			for (; i > 0 && member_cmp(&m[i - 1], &x) > 0; i--)
				m[i] = m[i - 1];
			m[i] = x;
		}
	} else if (!sorted) {
		qsort(m, (gsize)size, sizeof(MsdJsonMember), member_cmp);
	}
	/* drop all but the last of each run of equal keys */
	for (gint k = 0; k < size; k++) {
		if (k + 1 < size && m[k].key_len == m[k + 1].key_len &&
		    memcmp(m[k].key, m[k + 1].key, m[k].key_len) == 0) {
			g_free(m[k].owned);
			continue;
		}
		m[out++] = m[k];
	}
	*n_members = out;
	return m;
}

void
msd_json_members_free(MsdJsonMember *members, gint n_members)
{
	for (gint k = 0; k < n_members; k++)
		g_free(members[k].owned);
	g_free(members);
}
