/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-json.h"

#include <math.h>
#include <string.h>

#include "meshsync-error.h"

#define JSMN_STATIC
#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wdeclaration-after-statement"
#include <jsmn.h>
#pragma GCC diagnostic pop

#define TOK(doc, i) (((jsmntok_t *)(doc)->tokens)[i])

gboolean
kubesim_json_doc_init(KubesimJsonDoc *doc, const gchar *js, gsize len)
{
	jsmn_parser parser;
	guint n = MAX(64, len / 4);
	gint rc;

	memset(doc, 0, sizeof(*doc));
	doc->js = js;
	doc->len = len;
	for (;;) {
		doc->tokens = g_new(jsmntok_t, n);
		jsmn_init(&parser);
		rc = jsmn_parse(&parser, js, len, doc->tokens, n);
		if (rc != JSMN_ERROR_NOMEM)
			break;
		g_free(doc->tokens);
		n *= 2;
	}
	if (rc <= 0) {
		g_clear_pointer(&doc->tokens, g_free);
		return FALSE;
	}
	doc->n_tokens = rc;
	return TRUE;
}

void
kubesim_json_doc_clear(KubesimJsonDoc *doc)
{
	g_clear_pointer(&doc->tokens, g_free);
	doc->n_tokens = 0;
}

gint
kubesim_json_skip(const KubesimJsonDoc *doc, gint tok)
{
	/* jsmn gives each container its direct child count; walk them, an iterative subtree skip */
	gint pending = 1;

	while (pending > 0 && tok < doc->n_tokens) {
		pending += TOK(doc, tok).size;
		pending--;
		tok++;
	}
	return tok;
}

gboolean
kubesim_json_is_object(const KubesimJsonDoc *doc, gint tok)
{
	return tok >= 0 && tok < doc->n_tokens && TOK(doc, tok).type == JSMN_OBJECT;
}

gboolean
kubesim_json_is_array(const KubesimJsonDoc *doc, gint tok)
{
	return tok >= 0 && tok < doc->n_tokens && TOK(doc, tok).type == JSMN_ARRAY;
}

gboolean
kubesim_json_is_string(const KubesimJsonDoc *doc, gint tok)
{
	return tok >= 0 && tok < doc->n_tokens && TOK(doc, tok).type == JSMN_STRING;
}

gint
kubesim_json_size(const KubesimJsonDoc *doc, gint tok)
{
	if (tok < 0 || tok >= doc->n_tokens)
		return 0;
	return TOK(doc, tok).size;
}

static gboolean
key_equals(const KubesimJsonDoc *doc, gint tok, const gchar *key, gsize key_len)
{
	const jsmntok_t *t = &TOK(doc, tok);

	/* keys we look up never need unescaping */
	return t->type == JSMN_STRING && (gsize)(t->end - t->start) == key_len &&
	       memcmp(doc->js + t->start, key, key_len) == 0;
}

static gint
member_n(const KubesimJsonDoc *doc, gint obj, const gchar *key, gsize key_len)
{
	gint n, i, tok;

	if (!kubesim_json_is_object(doc, obj))
		return -1;
	n = TOK(doc, obj).size;
	tok = obj + 1;
	for (i = 0; i < n; i++) {
		if (key_equals(doc, tok, key, key_len))
			return tok + 1;
		tok = kubesim_json_skip(doc, tok + 1);
	}
	return -1;
}

gint
kubesim_json_member(const KubesimJsonDoc *doc, gint obj, const gchar *key)
{
	return member_n(doc, obj, key, strlen(key));
}

gint
kubesim_json_path(const KubesimJsonDoc *doc, const gchar *path)
{
	gint tok = 0;
	const gchar *p = path;

	while (tok >= 0 && *p != '\0') {
		const gchar *dot = strchr(p, '.');
		gsize n = dot != NULL ? (gsize)(dot - p) : strlen(p);
		tok = member_n(doc, tok, p, n);
		p += n;
		if (*p == '.')
			p++;
	}
	return tok;
}

void
kubesim_json_raw(const KubesimJsonDoc *doc, gint tok, const gchar **start, gsize *len)
{
	const jsmntok_t *t = &TOK(doc, tok);

	if (t->type == JSMN_STRING) {
		*start = doc->js + t->start - 1;
		*len = t->end - t->start + 2;
	} else {
		*start = doc->js + t->start;
		*len = t->end - t->start;
	}
}

static void
append_utf8(GString *out, gunichar c)
{
	gchar buf[8];
	gint n = g_unichar_to_utf8(c, buf);

	g_string_append_len(out, buf, n);
}

gchar *
kubesim_json_string(const KubesimJsonDoc *doc, gint tok)
{
	const jsmntok_t *t;
	GString *out;
	const gchar *p, *end;

	if (tok < 0 || tok >= doc->n_tokens)
		return NULL;
	t = &TOK(doc, tok);
	if (t->type == JSMN_PRIMITIVE)
		return g_strndup(doc->js + t->start, t->end - t->start);
	if (t->type != JSMN_STRING)
		return NULL;
	p = doc->js + t->start;
	end = doc->js + t->end;
	if (memchr(p, '\\', end - p) == NULL)
		return g_strndup(p, end - p);
	out = g_string_sized_new(end - p);
	while (p < end) {
		if (*p != '\\' || p + 1 >= end) {
			g_string_append_c(out, *p++);
			continue;
		}
		p++;
		switch (*p) {
		case 'n':
			g_string_append_c(out, '\n');
			break;
		case 't':
			g_string_append_c(out, '\t');
			break;
		case 'r':
			g_string_append_c(out, '\r');
			break;
		case 'b':
			g_string_append_c(out, '\b');
			break;
		case 'f':
			g_string_append_c(out, '\f');
			break;
		case 'u':
			if (p + 4 < end) {
				gchar hex[5] = {p[1], p[2], p[3], p[4], 0};
				gunichar c = g_ascii_strtoull(hex, NULL, 16);
				p += 4;
				if (c >= 0xd800 && c < 0xdc00 && p + 6 < end && p[1] == '\\' &&
				    p[2] == 'u') {
					gchar lo_hex[5] = {p[3], p[4], p[5], p[6], 0};
					gunichar lo = g_ascii_strtoull(lo_hex, NULL, 16);
					c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
					p += 6;
				}
				append_utf8(out, c);
			}
			break;
		default:
			g_string_append_c(out, *p);
			break;
		}
		p++;
	}
	return g_string_free(out, FALSE);
}

void
kubesim_json_append_string(GString *out, const gchar *s)
{
	const guchar *p;

	g_string_append_c(out, '"');
	for (p = (const guchar *)s; *p != '\0'; p++) {
		switch (*p) {
		case '"':
			g_string_append(out, "\\\"");
			break;
		case '\\':
			g_string_append(out, "\\\\");
			break;
		case '\n':
			g_string_append(out, "\\n");
			break;
		case '\r':
			g_string_append(out, "\\r");
			break;
		case '\t':
			g_string_append(out, "\\t");
			break;
		case '<':
		case '>':
		case '&':
			g_string_append_printf(out, "\\u%04x", *p);
			break;
		default:
			if (*p < 0x20)
				g_string_append_printf(out, "\\u%04x", *p);
			else if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
				/* U+2028 and U+2029, escaped by Go for JavaScript safety */
				g_string_append_printf(out, "\\u202%c", p[2] == 0xa8 ? '8' : '9');
				p += 2;
			} else
				g_string_append_c(out, *p);
			break;
		}
	}
	g_string_append_c(out, '"');
}

static void
append_double(GString *out, gdouble d)
{
	gchar buf[G_ASCII_DTOSTR_BUF_SIZE];
	gint prec;

	if (!isfinite(d)) {
		g_string_append(out, "null");
		return;
	}
	/* the shortest form that reads back as the same double */
	for (prec = 1; prec <= 17; prec++) {
		g_snprintf(buf, sizeof(buf), "%.*g", prec, d);
		if (g_ascii_strtod(buf, NULL) == d)
			break;
	}
	g_string_append(out, buf);
}

void
kubesim_json_append_node(GString *out, JsonNode *node)
{
	switch (json_node_get_node_type(node)) {
	case JSON_NODE_NULL:
		g_string_append(out, "null");
		break;
	case JSON_NODE_VALUE: {
		GType t = json_node_get_value_type(node);
		if (t == G_TYPE_STRING)
			kubesim_json_append_string(out, json_node_get_string(node));
		else if (t == G_TYPE_INT64)
			g_string_append_printf(out, "%" G_GINT64_FORMAT, json_node_get_int(node));
		else if (t == G_TYPE_BOOLEAN)
			g_string_append(out, json_node_get_boolean(node) ? "true" : "false");
		else if (t == G_TYPE_DOUBLE)
			append_double(out, json_node_get_double(node));
		else
			g_string_append(out, "null");
		break;
	}
	case JSON_NODE_ARRAY: {
		JsonArray *a = json_node_get_array(node);
		guint i, n = json_array_get_length(a);
		g_string_append_c(out, '[');
		for (i = 0; i < n; i++) {
			if (i > 0)
				g_string_append_c(out, ',');
			kubesim_json_append_node(out, json_array_get_element(a, i));
		}
		g_string_append_c(out, ']');
		break;
	}
	case JSON_NODE_OBJECT: {
		JsonObjectIter iter;
		const gchar *name;
		JsonNode *member;
		gboolean first = TRUE;
		json_object_iter_init_ordered(&iter, json_node_get_object(node));
		g_string_append_c(out, '{');
		while (json_object_iter_next_ordered(&iter, &name, &member)) {
			if (!first)
				g_string_append_c(out, ',');
			first = FALSE;
			kubesim_json_append_string(out, name);
			g_string_append_c(out, ':');
			kubesim_json_append_node(out, member);
		}
		g_string_append_c(out, '}');
		break;
	}
	default:
		g_string_append(out, "null");
		break;
	}
}

GBytes *
kubesim_json_node_to_bytes(JsonNode *node)
{
	GString *out = g_string_sized_new(256);

	kubesim_json_append_node(out, node);
	return g_string_free_to_bytes(out);
}

GBytes *
kubesim_json_compact(const gchar *js, gsize len)
{
	gchar *out = g_malloc(len + 1);
	gsize i, o = 0;
	gboolean in_string = FALSE;

	for (i = 0; i < len; i++) {
		gchar c = js[i];
		if (in_string) {
			out[o++] = c;
			if (c == '\\' && i + 1 < len)
				out[o++] = js[++i];
			else if (c == '"')
				in_string = FALSE;
		} else if (c == '"') {
			in_string = TRUE;
			out[o++] = c;
		} else if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
			out[o++] = c;
		}
	}
	out[o] = '\0';
	return g_bytes_new_take(out, o);
}

JsonNode *
kubesim_json_parse(const gchar *js, gsize len, GError **error)
{
	g_autoptr(JsonParser) parser = json_parser_new();
	g_autoptr(GError) error_local = NULL;

	if (!json_parser_load_from_data(parser, js, len, &error_local)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            "request body is not valid JSON: %s", error_local->message);
		return NULL;
	}
	if (json_parser_get_root(parser) == NULL) {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		                    "request body is empty");
		return NULL;
	}
	return json_node_copy(json_parser_get_root(parser));
}
