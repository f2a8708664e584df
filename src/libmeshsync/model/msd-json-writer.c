/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncModel"

#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/msd-json-string.h"
#include "model/msd-json-writer.h"

void
msd_json_append_escaped(GString *out, const gchar *s, gssize len)
{
	msd_json_string_append_escaped(out, s, len, MSD_JSON_STRING_GO);
}

void
msd_json_append_string(GString *out, const gchar *s, gssize len)
{
	msd_json_string_append(out, s, len, MSD_JSON_STRING_GO);
}

/* The body of string token @idx, decoded as Go's decoder would and re-encoded; @nested
 * escapes that once more (MSD_JSON_STRING_GO_NESTED). */
static void
write_string_body(GString *out, const MsdJsonTokens *doc, gint idx, gboolean nested)
{
	const MsdJsonToken *t = &doc->tokens[idx];
	const gchar *p = doc->data + t->start;
	gsize n = (gsize)(t->end - t->start);
	MsdJsonStringMode mode = nested ? MSD_JSON_STRING_GO_NESTED : MSD_JSON_STRING_GO_DECODED;
	gsize i = 0;

	if (t->verbatim) {
		/* nothing Go would escape, at either level */
		msd_json_string_append_raw(out, p, n);
		return;
	}
	if (t->plain) {
		msd_json_string_append_escaped(out, p, (gssize)n, mode);
		return;
	}
	/* One pass: runs of ASCII that needs nothing are copied (a string body has no raw quote
	 * or control byte), the rest goes to the escaper up to the next backslash, and the
	 * escapes Go writes back as they are read are copied without decoding them. */
	while (i < n) {
		gsize run = i;
		gchar e;

		while (run < n && p[run] != '\\' && (guchar)p[run] < 0x80 && p[run] != '<' &&
		       p[run] != '>' && p[run] != '&')
			run++;
		if (run > i) {
			msd_json_string_append_raw(out, p + i, run - i);
			i = run;
			continue;
		}
		if (p[i] != '\\') {
			const gchar *bs = memchr(p + i, '\\', n - i);
			gsize seg = bs != NULL ? (gsize)(bs - p) : n;

			msd_json_string_append_escaped(out, p + i, (gssize)(seg - i), mode);
			i = seg;
			continue;
		}
		e = p[i + 1];
		switch (e) {
		case '"':
		case '\\':
		case 'b':
		case 'f':
		case 'n':
		case 'r':
		case 't':
			if (!nested) {
				msd_json_string_append_raw(out, p + i, 2);
			} else if (e == '"' || e == '\\') {
				/* \" escaped again: \\\" */
				gchar twice[4] = {'\\', '\\', '\\', e};

				msd_json_string_append_raw(out, twice, 4);
			} else {
				gchar twice[3] = {'\\', '\\', e};

				msd_json_string_append_raw(out, twice, 3);
			}
			i += 2;
			continue;
		case '/':
			g_string_append_c(out, '/');
			i += 2;
			continue;
		default: {
			gunichar cp;

			i += (gsize)msd_json_decode_escape(p + i, n - i, &cp);
			msd_json_string_append_unichar(
			        out, cp, nested ? MSD_JSON_STRING_GO_NESTED : MSD_JSON_STRING_GO);
			break;
		}
		}
	}
}

void
msd_json_write_string_body(GString *out, const MsdJsonTokens *doc, gint idx)
{
	g_return_if_fail(msd_json_tokens_is_string(doc, idx));
	write_string_body(out, doc, idx, FALSE);
}

/* Go's map order: decoded keys bytewise, the shorter first; document order among equal keys
 * so that the last one can win. */
static inline gint
member_order(const MsdJsonMember *a, const MsdJsonMember *b)
{
	gsize n = MIN(a->key_len, b->key_len);
	gint c;

	if (n > 0 && a->key[0] != b->key[0])
		return (guchar)a->key[0] < (guchar)b->key[0] ? -1 : 1;
	c = memcmp(a->key, b->key, n);
	if (c != 0)
		return c;
	if (a->key_len != b->key_len)
		return a->key_len < b->key_len ? -1 : 1;
	return a->key_tok < b->key_tok ? -1 : 1;
}

static gint
member_order_cb(gconstpointer a, gconstpointer b)
{
	return member_order(a, b);
}

void
msd_json_members_init_sorted(MsdJsonMembers *members, const MsdJsonTokens *doc, gint object)
{
	gint size = doc->tokens[object].size;
	MsdJsonMember *m =
	        size <= MSD_JSON_MEMBERS_LOCAL ? members->local : g_new(MsdJsonMember, size);
	gboolean sorted = TRUE;
	gint j = object + 1;
	gint out = 0;

	for (gint k = 0; k < size; k++) {
		const MsdJsonToken *kt = &doc->tokens[j];

		m[k].key_tok = j;
		m[k].value_tok = j + 1;
		m[k].owned = NULL;
		if (kt->plain) {
			m[k].key = doc->data + kt->start;
			m[k].key_len = (gsize)(kt->end - kt->start);
		} else {
			GString *decoded = g_string_new(NULL);

			msd_json_tokens_append_decoded(doc, j, decoded);
			m[k].key_len = decoded->len;
			m[k].owned = g_string_free(decoded, FALSE);
			m[k].key = m[k].owned;
		}
		if (k > 0 && sorted && member_order(&m[k - 1], &m[k]) > 0)
			sorted = FALSE;
		j = doc->tokens[j + 1].next;
	}
	if (!sorted && size <= 32) {
		/* the few members of a Kubernetes object: an insertion sort beats qsort's calls */
		for (gint k = 1; k < size; k++) {
			MsdJsonMember x = m[k];
			gint i = k;

			for (; i > 0 && member_order(&m[i - 1], &x) > 0; i--)
				m[i] = m[i - 1];
			m[i] = x;
		}
	} else if (!sorted) {
		qsort(m, (gsize)size, sizeof(MsdJsonMember), member_order_cb);
	}
	/* drop all but the last of each run of equal keys */
	for (gint k = 0; k < size; k++) {
		if (k + 1 < size && m[k].key_len == m[k + 1].key_len &&
		    (m[k].key_len == 0 || m[k].key[0] == m[k + 1].key[0]) &&
		    memcmp(m[k].key, m[k + 1].key, m[k].key_len) == 0) {
			g_free(m[k].owned);
			continue;
		}
		m[out++] = m[k];
	}
	members->m = m;
	members->n = out;
}

void
msd_json_members_clear(MsdJsonMembers *members)
{
	for (gint k = 0; k < members->n; k++)
		g_free(members->m[k].owned);
	if (members->m != members->local)
		g_free(members->m);
	members->m = NULL;
	members->n = 0;
}

/* Shortest decimal digits that read back as @v (> 0, finite), choosing the nearest when two
 * candidates of the same length both read back, as Go's strconv does. Returns the number of
 * digits; @exp10 receives x with v = d.ddd * 10^x. */
static gint
shortest_digits(gdouble v, gchar digits[24], gint *exp10)
{
	for (gint prec = 1; prec <= 17; prec++) {
		gchar buf[40];
		gchar *e;
		guint64 mant = 0;
		guint64 pow = 1;
		gint x;
		gdouble back;
		gchar fmt[8];

		/* g_ascii_formatd: the daemon may run under a locale with a decimal comma */
		g_snprintf(fmt, sizeof(fmt), "%%.%de", prec - 1);
		g_ascii_formatd(buf, sizeof(buf), fmt, v);
		e = strchr(buf, 'e');
		x = atoi(e + 1);
		for (gchar *q = buf; q < e; q++) {
			if (g_ascii_isdigit(*q))
				mant = mant * 10 + (guint64)(*q - '0');
		}
		for (gint k = 1; k < prec; k++)
			pow *= 10;
		back = g_ascii_strtod(buf, NULL);
		if (back != v) {
			/* the other neighbour at this precision may still be inside the interval
			 * that rounds to v (the interval is lopsided at powers of two) */
			if (back < v) {
				mant++;
				if (mant == pow * 10) {
					mant = pow;
					x++;
				}
			} else {
				mant--;
				if (mant < pow) {
					mant = pow * 10 - 1;
					x--;
				}
			}
			g_snprintf(buf, sizeof(buf), "%" G_GUINT64_FORMAT "e%d", mant,
			           x - prec + 1);
			if (g_ascii_strtod(buf, NULL) != v)
				continue;
		}
		g_snprintf(digits, 24, "%" G_GUINT64_FORMAT, mant);
		*exp10 = x;
		return prec;
	}
	/* not reached for finite doubles: 17 significant digits always read back */
	g_snprintf(digits, 24, "0");
	*exp10 = 0;
	return 1;
}

void
msd_json_append_double(GString *out, gdouble v)
{
	gchar digits[24];
	gint nd;
	gint x;
	gdouble a = fabs(v);

	if (!isfinite(v)) {
		/* Go refuses to encode these; null keeps the output valid JSON */
		g_string_append_len(out, "null", 4);
		return;
	}
	if (signbit(v))
		g_string_append_c(out, '-');
	if (a == 0) {
		g_string_append_c(out, '0');
		return;
	}
	nd = shortest_digits(a, digits, &x);
	if (a < 1e-6 || a >= 1e21) {
		g_string_append_c(out, digits[0]);
		if (nd > 1) {
			g_string_append_c(out, '.');
			g_string_append_len(out, digits + 1, nd - 1);
		}
		/* Go prints at least two exponent digits, then trims e-07 to e-7 */
		g_string_append_printf(out, "e%c%d", x < 0 ? '-' : '+', ABS(x));
		return;
	}
	if (x >= 0) {
		if (nd <= x + 1) {
			g_string_append_len(out, digits, nd);
			for (gint k = nd; k <= x; k++)
				g_string_append_c(out, '0');
		} else {
			g_string_append_len(out, digits, x + 1);
			g_string_append_c(out, '.');
			g_string_append_len(out, digits + x + 1, nd - x - 1);
		}
	} else {
		g_string_append_len(out, "0.", 2);
		for (gint k = 0; k < -x - 1; k++)
			g_string_append_c(out, '0');
		g_string_append_len(out, digits, nd);
	}
}

void
msd_json_append_number(GString *out, const gchar *text, gsize len)
{
	gchar buf[64];
	g_autofree gchar *heap = NULL;
	const gchar *z = buf;
	gboolean integral = TRUE;
	gsize digits = 0;

	for (gsize i = 0; i < len; i++) {
		if (text[i] == '.' || text[i] == 'e' || text[i] == 'E') {
			integral = FALSE;
			break;
		}
		if (text[i] != '-')
			digits++;
	}
	/* Kubernetes' decoder keeps integers that fit an int64 as int64, and makes every other
	 * number a float64 */
	if (integral && digits <= 18) {
		if (len == 2 && text[0] == '-' && text[1] == '0')
			g_string_append_c(out, '0');
		else
			msd_json_string_append_raw(out, text, len);
		return;
	}
	if (len < sizeof(buf)) {
		memcpy(buf, text, len);
		buf[len] = '\0';
	} else {
		heap = g_strndup(text, len);
		z = heap;
	}
	if (integral && digits == 19) {
		gint64 v;

		if (g_ascii_string_to_signed(z, 10, G_MININT64, G_MAXINT64, &v, NULL)) {
			g_string_append_printf(out, "%" G_GINT64_FORMAT, v);
			return;
		}
	}
	msd_json_append_double(out, g_ascii_strtod(z, NULL));
}

static void write_value_depth(GString *out, const MsdJsonTokens *doc, gint idx, gboolean nested);

/* Verbatim text between quotes (escaped when @nested), and a colon after them when @colon:
 * one copy. */
static inline __attribute__((always_inline)) void
write_verbatim_quoted(GString *out, const gchar *text, gsize n, gboolean nested, gboolean colon)
{
	gchar *w = msd_json_string_extend(out, n + (nested ? 4 : 2) + (colon ? 1 : 0));

	if (nested)
		*w++ = '\\';
	*w++ = '"';
	msd_copy_short(w, text, n);
	w += n;
	if (nested)
		*w++ = '\\';
	*w++ = '"';
	if (colon)
		*w = ':';
}

/* A member's key (decoded text @key) with its quotes and colon. */
static inline __attribute__((always_inline)) void
write_key(GString *out,
          const MsdJsonTokens *doc,
          gint key_tok,
          const gchar *key,
          gsize key_len,
          gboolean nested)
{
	if (doc->tokens[key_tok].verbatim) {
		write_verbatim_quoted(out, key, key_len, nested, TRUE);
	} else if (nested) {
		msd_json_string_append_raw(out, "\\\"", 2);
		msd_json_string_append_escaped(out, key, (gssize)key_len,
		                               MSD_JSON_STRING_GO_NESTED);
		msd_json_string_append_raw(out, "\\\":", 3);
	} else {
		g_string_append_c(out, '"');
		msd_json_string_append_escaped(out, key, (gssize)key_len, MSD_JSON_STRING_GO);
		msd_json_string_append_raw(out, "\":", 2);
	}
}

/* Go's map order of two plain keys (their raw bytes are the decoded text): bytewise, the
 * shorter first. */
static inline gint
plain_key_cmp(const MsdJsonTokens *doc, gint a, gint b)
{
	const MsdJsonToken *ta = &doc->tokens[a];
	const MsdJsonToken *tb = &doc->tokens[b];
	const gchar *pa = doc->data + ta->start;
	const gchar *pb = doc->data + tb->start;
	gsize la = (gsize)(ta->end - ta->start);
	gsize lb = (gsize)(tb->end - tb->start);
	gint c;

	if (la > 0 && lb > 0 && pa[0] != pb[0])
		return (guchar)pa[0] < (guchar)pb[0] ? -1 : 1;
	c = memcmp(pa, pb, MIN(la, lb));
	if (c != 0)
		return c;
	return la < lb ? -1 : la > lb ? 1 : 0;
}

/* A member's or element's value: verbatim strings (most values of a Kubernetes object) are
 * written here, without a call per value; the rest recurse. */
static inline __attribute__((always_inline)) void
write_member_value(GString *out, const MsdJsonTokens *doc, gint idx, gboolean nested)
{
	const MsdJsonToken *t = &doc->tokens[idx];

	if (t->type == MSD_JSON_STRING && t->verbatim)
		write_verbatim_quoted(out, doc->data + t->start, (gsize)(t->end - t->start), nested,
		                      FALSE);
	else
		write_value_depth(out, doc, idx, nested);
}

#define SMALL_OBJECT_MEMBERS 16

/* Most objects of a Kubernetes object have a few members with plain keys: those sort as
 * token indices on the stack, without the member records of msd_json_members_init_sorted().
 * FALSE (nothing written) for any other object. */
static gboolean
write_small_object(GString *out, const MsdJsonTokens *doc, gint idx, gboolean nested)
{
	gint keys[SMALL_OBJECT_MEMBERS];
	gint size = doc->tokens[idx].size;
	gint j = idx + 1;
	gboolean first = TRUE;

	if (size > SMALL_OBJECT_MEMBERS)
		return FALSE;
	for (gint k = 0; k < size; k++) {
		if (!doc->tokens[j].plain)
			return FALSE;
		keys[k] = j;
		j = doc->tokens[j + 1].next;
	}
	/* stable: equal keys keep document order, so that the last of a run is the one Go keeps */
	for (gint k = 1; k < size; k++) {
		gint x = keys[k];
		gint i = k;

		for (; i > 0 && plain_key_cmp(doc, keys[i - 1], x) > 0; i--)
			keys[i] = keys[i - 1];
		keys[i] = x;
	}
	g_string_append_c(out, '{');
	for (gint k = 0; k < size; k++) {
		const MsdJsonToken *kt = &doc->tokens[keys[k]];

		if (k + 1 < size && plain_key_cmp(doc, keys[k], keys[k + 1]) == 0)
			continue;
		if (!first)
			g_string_append_c(out, ',');
		first = FALSE;
		write_key(out, doc, keys[k], doc->data + kt->start, (gsize)(kt->end - kt->start),
		          nested);
		write_member_value(out, doc, keys[k] + 1, nested);
	}
	g_string_append_c(out, '}');
	return TRUE;
}

/* @nested: the serialization as it reads inside a JSON string (every quote and backslash of
 * it escaped), written in the same pass. */
static void
write_value_depth(GString *out, const MsdJsonTokens *doc, gint idx, gboolean nested)
{
	const MsdJsonToken *t = &doc->tokens[idx];

	if (G_UNLIKELY(t->opaque)) {
		/* left untokenized by the parse (MsdJsonSkip) but asked for after all: its span
		 * was checked then, so tokenizing it now cannot fail */
		MsdJsonTokens inner;

		msd_json_tokens_init(&inner);
		if (msd_json_tokens_parse(&inner, doc->data + t->start, (gsize)(t->end - t->start),
		                          NULL))
			write_value_depth(out, &inner, 0, nested);
		msd_json_tokens_clear(&inner);
		return;
	}
	switch ((MsdJsonType)t->type) {
	case MSD_JSON_OBJECT: {
		MsdJsonMembers members;

		if (write_small_object(out, doc, idx, nested))
			break;
		msd_json_members_init_sorted(&members, doc, idx);
		g_string_append_c(out, '{');
		for (gint k = 0; k < members.n; k++) {
			const MsdJsonMember *m = &members.m[k];

			if (k > 0)
				g_string_append_c(out, ',');
			write_key(out, doc, m->key_tok, m->key, m->key_len, nested);
			write_member_value(out, doc, m->value_tok, nested);
		}
		g_string_append_c(out, '}');
		msd_json_members_clear(&members);
		break;
	}
	case MSD_JSON_ARRAY: {
		gint j = idx + 1;

		g_string_append_c(out, '[');
		for (gint k = 0; k < t->size; k++) {
			if (k > 0)
				g_string_append_c(out, ',');
			write_member_value(out, doc, j, nested);
			j = doc->tokens[j].next;
		}
		g_string_append_c(out, ']');
		break;
	}
	case MSD_JSON_STRING:
		if (nested)
			msd_json_string_append_raw(out, "\\\"", 2);
		else
			g_string_append_c(out, '"');
		write_string_body(out, doc, idx, nested);
		if (nested)
			msd_json_string_append_raw(out, "\\\"", 2);
		else
			g_string_append_c(out, '"');
		break;
	case MSD_JSON_NUMBER:
		msd_json_append_number(out, doc->data + t->start, (gsize)(t->end - t->start));
		break;
	case MSD_JSON_TRUE:
		msd_json_string_append_raw(out, "true", 4);
		break;
	case MSD_JSON_FALSE:
		msd_json_string_append_raw(out, "false", 5);
		break;
	case MSD_JSON_NULL:
	default:
		msd_json_string_append_raw(out, "null", 4);
		break;
	}
}

void
msd_json_write_value(GString *out, const MsdJsonTokens *doc, gint idx)
{
	g_return_if_fail(idx >= 0 && idx < doc->n_tokens);
	write_value_depth(out, doc, idx, FALSE);
}

void
msd_json_write_raw(GString *out, const MsdJsonTokens *doc, gint idx)
{
	g_return_if_fail(idx >= 0 && idx < doc->n_tokens);
	if (doc->tokens[idx].type == MSD_JSON_STRING)
		write_string_body(out, doc, idx, FALSE);
	else if (doc->tokens[idx].type != MSD_JSON_NULL)
		write_value_depth(out, doc, idx, FALSE);
}

void
msd_json_write_raw_nested(GString *out, const MsdJsonTokens *doc, gint idx)
{
	g_return_if_fail(idx >= 0 && idx < doc->n_tokens);
	if (doc->tokens[idx].type == MSD_JSON_STRING)
		write_string_body(out, doc, idx, TRUE);
	else if (doc->tokens[idx].type != MSD_JSON_NULL)
		write_value_depth(out, doc, idx, TRUE);
}

gchar *
msd_json_canonicalize(const gchar *js, gssize len, GError **error)
{
	MsdJsonTokens doc;
	GString *out;

	msd_json_tokens_init(&doc);
	if (len < 0)
		len = (gssize)strlen(js);
	if (!msd_json_tokens_parse(&doc, js, (gsize)len, error)) {
		msd_json_tokens_clear(&doc);
		return NULL;
	}
	out = g_string_sized_new((gsize)len + 16);
	write_value_depth(out, &doc, 0, FALSE);
	msd_json_tokens_clear(&doc);
	return g_string_free(out, FALSE);
}
