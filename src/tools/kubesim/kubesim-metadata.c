/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-metadata.h"

#include <string.h>

#include "kubesim-json.h"
#include "kubesim-object-json.h"

/* Go's encoding of the typed structs: their member order. */
static const gchar *const owner_reference_keys[] = {
        "apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion", NULL};
static const gchar *const managed_fields_keys[] = {"manager",    "operation", "apiVersion",  "time",
                                                   "fieldsType", "fieldsV1",  "subresource", NULL};

/* The annotation apps/v1's conversion moves into the internal DaemonSet's spec. */
#define DAEMONSET_TEMPLATE_GENERATION "deprecated.daemonset.template.generation"

/* What omitempty leaves out: typed members that decode from these encode to nothing. */
static gboolean
is_empty(const MsdJsonTokens *doc, gint index)
{
	const gchar *raw;
	gsize len;

	switch (msd_json_tokens_type(doc, index)) {
	case MSD_JSON_NULL:
		return TRUE;
	case MSD_JSON_OBJECT:
	case MSD_JSON_ARRAY:
		return msd_json_tokens_size(doc, index) == 0;
	case MSD_JSON_STRING:
		raw = msd_json_tokens_raw(doc, index, &len);
		return len == 0 && raw != NULL;
	default:
		return FALSE;
	}
}

static void
append_key(GString *out, const gchar *key, gboolean *first)
{
	if (!*first)
		g_string_append_c(out, ',');
	*first = FALSE;
	msd_json_string_append(out, key, -1, MSD_JSON_STRING_GO);
	g_string_append_c(out, ':');
}

static void
append_span(GString *out, const MsdJsonTokens *doc, gint index)
{
	gsize len;
	const gchar *span = msd_json_tokens_span(doc, index, &len);

	g_string_append_len(out, span, len);
}

/* An array of objects, each with its members in @keys' order. */
static void
append_ordered_array(GString *out, const MsdJsonTokens *doc, gint array, const gchar *const *keys)
{
	gint n = msd_json_tokens_size(doc, array);
	gint item = array + 1;

	g_string_append_c(out, '[');
	for (gint i = 0; i < n; i++) {
		gboolean first = TRUE;

		if (i > 0)
			g_string_append_c(out, ',');
		if (!msd_json_tokens_is_object(doc, item)) {
			append_span(out, doc, item);
		} else {
			g_string_append_c(out, '{');
			for (guint k = 0; keys[k] != NULL; k++) {
				gint value = msd_json_tokens_member(doc, item, keys[k]);
				if (value < 0 || is_empty(doc, value))
					continue;
				append_key(out, keys[k], &first);
				append_span(out, doc, value);
			}
			g_string_append_c(out, '}');
		}
		item = msd_json_tokens_skip(doc, item);
	}
	g_string_append_c(out, ']');
}

typedef struct {
	gchar *key; /* decoded */
	gint key_tok;
} MapEntry;

static gint
map_entry_compare(gconstpointer a, gconstpointer b)
{
	/* Go writes a map's keys sorted by their bytes */
	return strcmp(((const MapEntry *)a)->key, ((const MapEntry *)b)->key);
}

static void
map_entry_clear(gpointer data)
{
	g_free(((MapEntry *)data)->key);
}

/* A map[string]string member (labels, annotations) as Go writes it: keys sorted, without
 * @drop, nothing when no key is left. */
static void
append_map(GString *out,
           const MsdJsonTokens *doc,
           const gchar *name,
           gint object,
           const gchar *drop,
           gboolean *first)
{
	g_autoptr(GArray) entries = g_array_new(FALSE, FALSE, sizeof(MapEntry));
	gint n = msd_json_tokens_size(doc, object);
	gint key = object + 1;

	g_array_set_clear_func(entries, map_entry_clear);
	for (gint i = 0; i < n; i++) {
		MapEntry entry = {msd_json_tokens_dup_string(doc, key), key};

		if (drop != NULL && g_strcmp0(entry.key, drop) == 0)
			g_free(entry.key);
		else
			g_array_append_val(entries, entry);
		key = msd_json_tokens_skip(doc, key + 1);
	}
	if (entries->len == 0)
		return;
	g_array_sort(entries, map_entry_compare);
	append_key(out, name, first);
	g_string_append_c(out, '{');
	for (guint i = 0; i < entries->len; i++) {
		gint tok = g_array_index(entries, MapEntry, i).key_tok;

		if (i > 0)
			g_string_append_c(out, ',');
		append_span(out, doc, tok);
		g_string_append_c(out, ':');
		append_span(out, doc, tok + 1);
	}
	g_string_append_c(out, '}');
}

static void
append_object_meta(GString *out, const MsdJsonTokens *doc, gint meta, const gchar *drop)
{
	gboolean first = TRUE;

	g_string_append_c(out, '{');
	for (guint k = 0; meta >= 0 && kubesim_object_meta_order[k] != NULL; k++) {
		const gchar *key = kubesim_object_meta_order[k];
		gint value = msd_json_tokens_member(doc, meta, key);

		if (value < 0 || is_empty(doc, value))
			continue;
		if ((g_str_equal(key, "labels") || g_str_equal(key, "annotations")) &&
		    msd_json_tokens_is_object(doc, value)) {
			append_map(out, doc, key, value,
			           g_str_equal(key, "annotations") ? drop : NULL, &first);
			continue;
		}
		append_key(out, key, &first);
		if (g_str_equal(key, "ownerReferences") && msd_json_tokens_is_array(doc, value))
			append_ordered_array(out, doc, value, owner_reference_keys);
		else if (g_str_equal(key, "managedFields") && msd_json_tokens_is_array(doc, value))
			append_ordered_array(out, doc, value, managed_fields_keys);
		else
			append_span(out, doc, value);
	}
	g_string_append_c(out, '}');
}

static void
append_head(GString *out, const gchar *version)
{
	g_string_append_printf(out,
	                       "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/"
	                       "%s\",\"metadata\":",
	                       version);
}

void
kubesim_metadata_append(GString *out,
                        const KubesimResource *res,
                        KubesimObject *obj,
                        const gchar *version)
{
	g_autoptr(GBytes) json = kubesim_object_get_json(obj);
	g_auto(MsdJsonTokens) doc = MSD_JSON_TOKENS_INIT;
	gsize len;
	const gchar *js = g_bytes_get_data(json, &len);
	gboolean daemonset = res->crd_name == NULL && g_strcmp0(res->group, "apps") == 0 &&
	                     g_strcmp0(res->kind, "DaemonSet") == 0;

	append_head(out, version);
	if (msd_json_tokens_parse(&doc, js, len, NULL))
		append_object_meta(out, &doc, msd_json_tokens_member(&doc, 0, "metadata"),
		                   daemonset ? DAEMONSET_TEMPLATE_GENERATION : NULL);
	else
		g_string_append(out, "{}");
	g_string_append_c(out, '}');
}

void
kubesim_metadata_append_bookmark(GString *out,
                                 guint64 rv,
                                 gboolean initial_events_end,
                                 const gchar *version)
{
	append_head(out, version);
	g_string_append_printf(out, "{\"resourceVersion\":\"%" G_GUINT64_FORMAT "\"%s}}", rv,
	                       initial_events_end
	                               ? ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}"
	                               : "");
}
