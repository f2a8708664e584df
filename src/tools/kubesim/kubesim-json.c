/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-json.h"

#include <math.h>
#include <string.h>

#include "meshsync-error.h"

static gboolean
append_double(GString *out, gdouble d)
{
	gchar buf[G_ASCII_DTOSTR_BUF_SIZE];
	gint prec;

	if (!isfinite(d)) {
		g_string_append(out, "null");
		return FALSE;
	}
	/* the shortest form that reads back as the same double */
	for (prec = 1; prec <= 17; prec++) {
		g_snprintf(buf, sizeof(buf), "%.*g", prec, d);
		if (g_ascii_strtod(buf, NULL) == d)
			break;
	}
	g_string_append(out, buf);
	return TRUE;
}

gboolean
kubesim_json_append_node(GString *out, JsonNode *node, MsdJsonStringMode mode)
{
	gboolean ok = TRUE;

	switch (json_node_get_node_type(node)) {
	case JSON_NODE_VALUE: {
		GType t = json_node_get_value_type(node);

		if (t == G_TYPE_STRING)
			msd_json_string_append(out, json_node_get_string(node), -1, mode);
		else if (t == G_TYPE_INT64)
			g_string_append_printf(out, "%" G_GINT64_FORMAT, json_node_get_int(node));
		else if (t == G_TYPE_BOOLEAN)
			g_string_append(out, json_node_get_boolean(node) ? "true" : "false");
		else if (t == G_TYPE_DOUBLE)
			ok = append_double(out, json_node_get_double(node));
		else
			g_string_append(out, "null");
		break;
	}
	case JSON_NODE_ARRAY: {
		JsonArray *a = json_node_get_array(node);
		guint n = json_array_get_length(a);

		g_string_append_c(out, '[');
		for (guint i = 0; i < n; i++) {
			if (i > 0)
				g_string_append_c(out, ',');
			ok = kubesim_json_append_node(out, json_array_get_element(a, i), mode) &&
			     ok;
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
			msd_json_string_append(out, name, -1, mode);
			g_string_append_c(out, ':');
			ok = kubesim_json_append_node(out, member, mode) && ok;
		}
		g_string_append_c(out, '}');
		break;
	}
	case JSON_NODE_NULL:
	default:
		g_string_append(out, "null");
		break;
	}
	return ok;
}

GBytes *
kubesim_json_node_to_bytes(JsonNode *node)
{
	GString *out = g_string_sized_new(256);

	kubesim_json_append_node(out, node, MSD_JSON_STRING_GO);
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

static void
indent_newline(GString *out, guint depth)
{
	g_string_append_c(out, '\n');
	for (guint i = 0; i < depth; i++)
		g_string_append(out, "  ");
}

gchar *
kubesim_json_indent(const gchar *compact)
{
	GString *out = g_string_new(NULL);
	gboolean in_string = FALSE;
	guint depth = 0;

	for (const gchar *p = compact; *p != '\0'; p++) {
		gchar c = *p;

		if (in_string) {
			g_string_append_c(out, c);
			if (c == '\\' && p[1] != '\0')
				g_string_append_c(out, *++p);
			else if (c == '"')
				in_string = FALSE;
			continue;
		}
		switch (c) {
		case '"':
			in_string = TRUE;
			g_string_append_c(out, c);
			break;
		case '{':
		case '[':
			g_string_append_c(out, c);
			if (p[1] == (c == '{' ? '}' : ']')) {
				g_string_append_c(out, *++p);
				break;
			}
			indent_newline(out, ++depth);
			break;
		case '}':
		case ']':
			indent_newline(out, --depth);
			g_string_append_c(out, c);
			break;
		case ',':
			g_string_append_c(out, c);
			indent_newline(out, depth);
			break;
		case ':':
			g_string_append(out, ": ");
			break;
		case ' ':
		case '\n':
		case '\t':
		case '\r':
			break;
		default:
			g_string_append_c(out, c);
		}
	}
	return g_string_free(out, FALSE);
}
