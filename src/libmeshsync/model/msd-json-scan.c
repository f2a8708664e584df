/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include "meshsync-error.h"
#include "msd-json-scan.h"
#include "msd-utf8.h"

/* The one translation unit that instantiates jsmn: static, so that other users of jsmn.h in
 * the same library (the kube client, the tools) can never clash with this copy. */
#define JSMN_STATIC
#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#include <jsmn.h>

void
msd_json_doc_init(MsdJsonDoc *doc)
{
	memset(doc, 0, sizeof(*doc));
}

void
msd_json_doc_clear(MsdJsonDoc *doc)
{
	g_free(doc->tok);
	g_free(doc->raw);
	memset(doc, 0, sizeof(*doc));
}

static gboolean
is_ws(gchar c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* First byte of the value's text (the opening quote for strings). */
static gint32
tok_text_start(const MsdJsonTok *t)
{
	return t->type == MSD_JSON_STRING ? t->start - 1 : t->start;
}

/* One past the last byte of the value's text. */
static gint32
tok_text_end(const MsdJsonTok *t)
{
	return t->type == MSD_JSON_STRING ? t->end + 1 : t->end;
}

/* The bytes in [from, to) must be whitespace around exactly one @sep (or none if @sep is 0). */
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
	MsdJsonTok *tok;
	gint n;
} Walk;

/* Validate the value at token @i and everything under it; returns the index after it, or -1. */
static gint
walk_value(Walk *w, gint i, guint depth)
{
	const jsmntok_t *r;
	MsdJsonTok *t;

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
			MsdJsonTok *key;
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

gboolean
msd_json_doc_parse(MsdJsonDoc *doc, const gchar *js, gsize len, GError **error)
{
	jsmn_parser parser;
	Walk w;
	gint rc;

	g_return_val_if_fail(js != NULL || len == 0, FALSE);

	doc->js = js;
	doc->len = len;
	doc->n_tok = 0;
	if (len > G_MAXINT32 / 2) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            "JSON document too large (%" G_GSIZE_FORMAT " bytes)", len);
		return FALSE;
	}
	if (!check_depth(js, len)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            "JSON nested deeper than %d levels", MSD_JSON_MAX_DEPTH);
		return FALSE;
	}
	if (doc->cap_raw == 0) {
		doc->cap_raw = (gint)MIN(len / 6 + 16, 1 << 16);
		doc->raw = g_new(jsmntok_t, doc->cap_raw);
	}
	jsmn_init(&parser);
	for (;;) {
		rc = jsmn_parse(&parser, js, len, doc->raw, (guint)doc->cap_raw);
		if (rc != JSMN_ERROR_NOMEM)
			break;
		/* jsmn resumes where it stopped once it has room for more tokens */
		doc->cap_raw *= 2;
		doc->raw = g_renew(jsmntok_t, doc->raw, doc->cap_raw);
	}
	if (rc <= 0) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            rc == JSMN_ERROR_PART || rc == 0 ? "JSON document is truncated"
		                                             : "JSON syntax error near byte %u",
		            parser.pos);
		return FALSE;
	}
	if (doc->cap_tok < rc) {
		g_free(doc->tok);
		doc->cap_tok = MAX(rc, 16);
		doc->tok = g_new(MsdJsonTok, doc->cap_tok);
	}
	w.js = js;
	w.raw = doc->raw;
	w.tok = doc->tok;
	w.n = rc;
	if (walk_value(&w, 0, 0) != rc || !check_gap(js, 0, tok_text_start(&doc->tok[0]), 0) ||
	    !check_gap(js, tok_text_end(&doc->tok[0]), (gint32)len, 0)) {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		                    "JSON syntax error");
		return FALSE;
	}
	doc->n_tok = rc;
	return TRUE;
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
msd_json_doc_append_decoded(const MsdJsonDoc *doc, gint idx, GString *out)
{
	const MsdJsonTok *t = &doc->tok[idx];
	const gchar *p = doc->js + t->start;
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
msd_json_doc_string(const MsdJsonDoc *doc, gint idx, GString *scratch, gsize *len)
{
	const MsdJsonTok *t = &doc->tok[idx];

	if (t->plain) {
		*len = (gsize)(t->end - t->start);
		return doc->js + t->start;
	}
	g_string_truncate(scratch, 0);
	msd_json_doc_append_decoded(doc, idx, scratch);
	*len = scratch->len;
	return scratch->str;
}

gint
msd_json_doc_member(const MsdJsonDoc *doc, gint obj, const gchar *key)
{
	g_autoptr(GString) scratch = NULL;
	gsize key_len = strlen(key);
	gint found = -1;
	gint j;

	if (obj < 0 || doc->tok[obj].type != MSD_JSON_OBJECT)
		return -1;
	j = obj + 1;
	for (gint k = 0; k < doc->tok[obj].size; k++) {
		const MsdJsonTok *kt = &doc->tok[j];
		const gchar *s;
		gsize n;

		if (kt->plain) {
			s = doc->js + kt->start;
			n = (gsize)(kt->end - kt->start);
		} else {
			if (scratch == NULL)
				scratch = g_string_new(NULL);
			s = msd_json_doc_string(doc, j, scratch, &n);
		}
		if (n == key_len && memcmp(s, key, n) == 0)
			found = j + 1;
		j = doc->tok[j + 1].next;
	}
	return found;
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
msd_json_doc_sorted_members(const MsdJsonDoc *doc, gint obj, gint *n_members)
{
	gint size = doc->tok[obj].size;
	MsdJsonMember *m = g_new(MsdJsonMember, MAX(size, 1));
	gboolean sorted = TRUE;
	gint j = obj + 1;
	gint out = 0;

	for (gint k = 0; k < size; k++) {
		const MsdJsonTok *kt = &doc->tok[j];

		m[k].key_tok = j;
		m[k].value_tok = j + 1;
		m[k].owned = NULL;
		if (kt->plain) {
			m[k].key = doc->js + kt->start;
			m[k].key_len = (gsize)(kt->end - kt->start);
		} else {
			GString *s = g_string_new(NULL);

			msd_json_doc_append_decoded(doc, j, s);
			m[k].key_len = s->len;
			m[k].owned = g_string_free(s, FALSE);
			m[k].key = m[k].owned;
		}
		if (k > 0 && sorted && member_cmp(&m[k - 1], &m[k]) > 0)
			sorted = FALSE;
		j = doc->tok[j + 1].next;
	}
	if (!sorted)
		qsort(m, (gsize)size, sizeof(MsdJsonMember), member_cmp);
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
