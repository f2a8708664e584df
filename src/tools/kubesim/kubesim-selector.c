/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-selector.h"

#include <string.h>

#include "kubesim-json.h"

typedef enum {
	OP_EQUALS,
	OP_NOT_EQUALS,
	OP_EXISTS,
	OP_NOT_EXISTS,
	OP_IN,
	OP_NOT_IN,
} Op;

typedef struct {
	gchar *key;
	Op op;
	gchar **values;
} Requirement;

struct _KubesimSelector {
	GArray *labels; /* Requirement */
	GArray *fields; /* Requirement, only =, != */
};

static void
requirement_clear(gpointer data)
{
	Requirement *r = data;

	g_free(r->key);
	g_strfreev(r->values);
}

/* Splits on commas outside parentheses: "a in (x,y),b" has two terms. */
static GPtrArray *
split_terms(const gchar *s)
{
	GPtrArray *terms = g_ptr_array_new_with_free_func(g_free);
	const gchar *start = s, *p;
	gint depth = 0;

	for (p = s;; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
		if (*p == '\0' || (*p == ',' && depth == 0)) {
			g_autofree gchar *term = g_strndup(start, p - start);
			g_strstrip(term);
			if (term[0] != '\0')
				g_ptr_array_add(terms, g_steal_pointer(&term));
			if (*p == '\0')
				break;
			start = p + 1;
		}
	}
	return terms;
}

static gboolean
valid_key(const gchar *key)
{
	const gchar *p;

	if (key[0] == '\0')
		return FALSE;
	for (p = key; *p != '\0'; p++) {
		if (!g_ascii_isalnum(*p) && strchr("-_./", *p) == NULL)
			return FALSE;
	}
	return TRUE;
}

static gboolean
parse_label_term(const gchar *term, Requirement *r)
{
	const gchar *op;

	memset(r, 0, sizeof(*r));
	if (term[0] == '!') {
		r->op = OP_NOT_EXISTS;
		r->key = g_strstrip(g_strdup(term + 1));
		return valid_key(r->key);
	}
	if (strchr(term, '(') != NULL) {
		const gchar *open = strchr(term, '(');
		const gchar *close = strrchr(term, ')');
		g_autofree gchar *head = g_strstrip(g_strndup(term, open - term));
		g_autofree gchar *inner = NULL;
		gchar *space;
		guint i;
		if (close == NULL || close < open || close[1] != '\0')
			return FALSE;
		space = strrchr(head, ' ');
		if (space == NULL)
			return FALSE;
		if (g_strcmp0(space + 1, "in") == 0)
			r->op = OP_IN;
		else if (g_strcmp0(space + 1, "notin") == 0)
			r->op = OP_NOT_IN;
		else
			return FALSE;
		*space = '\0';
		r->key = g_strstrip(g_strdup(head));
		inner = g_strndup(open + 1, close - open - 1);
		r->values = g_strsplit(inner, ",", -1);
		for (i = 0; r->values[i] != NULL; i++)
			g_strstrip(r->values[i]);
		return valid_key(r->key);
	}
	if ((op = strstr(term, "!=")) != NULL) {
		r->op = OP_NOT_EQUALS;
		r->key = g_strstrip(g_strndup(term, op - term));
		r->values = g_new0(gchar *, 2);
		r->values[0] = g_strstrip(g_strdup(op + 2));
	} else if ((op = strstr(term, "==")) != NULL) {
		r->op = OP_EQUALS;
		r->key = g_strstrip(g_strndup(term, op - term));
		r->values = g_new0(gchar *, 2);
		r->values[0] = g_strstrip(g_strdup(op + 2));
	} else if ((op = strchr(term, '=')) != NULL) {
		r->op = OP_EQUALS;
		r->key = g_strstrip(g_strndup(term, op - term));
		r->values = g_new0(gchar *, 2);
		r->values[0] = g_strstrip(g_strdup(op + 1));
	} else {
		r->op = OP_EXISTS;
		r->key = g_strstrip(g_strdup(term));
	}
	return valid_key(r->key);
}

KubesimSelector *
kubesim_selector_new(const gchar *label_selector,
                     const gchar *field_selector,
                     KubesimStatus **status_out)
{
	g_autoptr(KubesimSelector) sel = g_new0(KubesimSelector, 1);
	guint i;

	sel->labels = g_array_new(FALSE, TRUE, sizeof(Requirement));
	sel->fields = g_array_new(FALSE, TRUE, sizeof(Requirement));
	g_array_set_clear_func(sel->labels, requirement_clear);
	g_array_set_clear_func(sel->fields, requirement_clear);
	if (label_selector != NULL) {
		g_autoptr(GPtrArray) terms = split_terms(label_selector);
		for (i = 0; i < terms->len; i++) {
			Requirement r;
			gboolean ok = parse_label_term(g_ptr_array_index(terms, i), &r);
			g_array_append_val(sel->labels, r);
			if (!ok) {
				*status_out = kubesim_status_new(
				        400, "BadRequest",
				        "unable to parse requirement: invalid label selector term "
				        "\"%s\"",
				        (const gchar *)g_ptr_array_index(terms, i));
				return NULL;
			}
		}
	}
	if (field_selector != NULL) {
		g_autoptr(GPtrArray) terms = split_terms(field_selector);
		for (i = 0; i < terms->len; i++) {
			Requirement r;
			gboolean ok = parse_label_term(g_ptr_array_index(terms, i), &r);
			ok = ok && (r.op == OP_EQUALS || r.op == OP_NOT_EQUALS);
			g_array_append_val(sel->fields, r);
			if (!ok) {
				*status_out = kubesim_status_new(
				        400, "BadRequest", "invalid field selector term \"%s\"",
				        (const gchar *)g_ptr_array_index(terms, i));
				return NULL;
			}
		}
	}
	return g_steal_pointer(&sel);
}

void
kubesim_selector_free(KubesimSelector *sel)
{
	if (sel == NULL)
		return;
	if (sel->labels != NULL)
		g_array_unref(sel->labels);
	if (sel->fields != NULL)
		g_array_unref(sel->fields);
	g_free(sel);
}

gboolean
kubesim_selector_is_empty(const KubesimSelector *sel)
{
	return sel == NULL || (sel->labels->len == 0 && sel->fields->len == 0);
}

static gchar *
field_value(const KubesimObject *obj, const gchar *path)
{
	g_auto(MsdJsonTokens) doc = MSD_JSON_TOKENS_INIT;
	g_auto(GStrv) parts = NULL;
	gsize len;
	g_autoptr(GBytes) obj_json = NULL;
	const gchar *js;
	gint tok;

	if (g_strcmp0(path, "metadata.name") == 0)
		return g_strdup(obj->name);
	if (g_strcmp0(path, "metadata.namespace") == 0)
		return g_strdup(obj->namespace_ != NULL ? obj->namespace_ : "");
	/* other fields (spec.nodeName, status.phase, involvedObject.name...) from the JSON */
	obj_json = kubesim_object_get_json(obj);
	js = g_bytes_get_data(obj_json, &len);
	if (!msd_json_tokens_parse(&doc, js, len, NULL))
		return g_strdup("");
	parts = g_strsplit(path, ".", -1);
	tok = 0;
	for (guint i = 0; parts[i] != NULL && tok >= 0; i++)
		tok = msd_json_tokens_member(&doc, tok, parts[i]);
	if (tok < 0)
		return g_strdup("");
	return msd_json_tokens_dup_string(&doc, tok);
}

gboolean
kubesim_selector_matches(const KubesimSelector *sel, const KubesimObject *obj)
{
	guint i;

	if (sel == NULL)
		return TRUE;
	for (i = 0; i < sel->fields->len; i++) {
		const Requirement *r = &g_array_index(sel->fields, Requirement, i);
		g_autofree gchar *value = field_value(obj, r->key);
		gboolean equal = g_strcmp0(value != NULL ? value : "", r->values[0]) == 0;
		if (equal != (r->op == OP_EQUALS))
			return FALSE;
	}
	for (i = 0; i < sel->labels->len; i++) {
		const Requirement *r = &g_array_index(sel->labels, Requirement, i);
		const gchar *value = kubesim_object_label(obj, r->key);
		gboolean ok;
		switch (r->op) {
		case OP_EQUALS:
			ok = g_strcmp0(value, r->values[0]) == 0;
			break;
		case OP_NOT_EQUALS:
			ok = g_strcmp0(value, r->values[0]) != 0;
			break;
		case OP_EXISTS:
			ok = value != NULL;
			break;
		case OP_NOT_EXISTS:
			ok = value == NULL;
			break;
		case OP_IN:
			ok = value != NULL &&
			     g_strv_contains((const gchar *const *)r->values, value);
			break;
		case OP_NOT_IN:
		default:
			ok = value == NULL ||
			     !g_strv_contains((const gchar *const *)r->values, value);
			break;
		}
		if (!ok)
			return FALSE;
	}
	return TRUE;
}
