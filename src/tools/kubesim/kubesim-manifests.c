/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kubesim-json.h"
#include "kubesim-workload.h"
#include "meshsync-error.h"
#include "util/msd-yaml.h"

/*
 * The objects are re-serialised by a small writer of our own rather than json_to_string():
 * json-glib 1.6 leaves some control characters unescaped and can print doubles such as
 * "1e+21.0", which no JSON parser accepts.
 */

static const gchar *
kubesim_member_string(JsonObject *object, const gchar *member)
{
	JsonNode *node = json_object_get_member(object, member);

	if (node == NULL || !JSON_NODE_HOLDS_VALUE(node) ||
	    json_node_get_value_type(node) != G_TYPE_STRING)
		return NULL;
	return json_node_get_string(node);
}

/* @where reads "FILE: document N" or "FILE: document N, item M" for the error messages. */
static gboolean
kubesim_emit_object(JsonNode *node,
                    const gchar *where,
                    KubesimObjectSink sink,
                    gpointer user_data,
                    GError **error)
{
	JsonObject *object;
	JsonNode *metadata;
	const gchar *name;
	g_autoptr(GString) text = NULL;
	g_autoptr(GBytes) bytes = NULL;

	if (!JSON_NODE_HOLDS_OBJECT(node)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            "%s: not a Kubernetes object (expected a mapping)", where);
		return FALSE;
	}
	object = json_node_get_object(node);
	if (g_strcmp0(kubesim_member_string(object, "apiVersion"), "") <= 0) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            "%s: apiVersion is missing or not a string", where);
		return FALSE;
	}
	if (g_strcmp0(kubesim_member_string(object, "kind"), "") <= 0) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            "%s: kind is missing or not a string", where);
		return FALSE;
	}
	metadata = json_object_get_member(object, "metadata");
	name = (metadata != NULL && JSON_NODE_HOLDS_OBJECT(metadata))
	               ? kubesim_member_string(json_node_get_object(metadata), "name")
	               : NULL;
	if (name == NULL || *name == '\0') {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            "%s: metadata.name is missing or not a string", where);
		return FALSE;
	}

	text = g_string_sized_new(1024);
	if (!kubesim_json_append_node(text, node, MSD_JSON_STRING_PLAIN)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            "%s: %s contains a value JSON cannot represent (infinity or NaN)",
		            where, name);
		return FALSE;
	}
	bytes = g_bytes_new(text->str, text->len);
	sink(bytes, user_data);
	return TRUE;
}

/* A typed list (PodList) may leave kind and apiVersion off its items: they follow from the
 * list. A generic `kind: List` may not, and its items are checked as they are. */
static void
kubesim_fill_item_type(JsonNode *item, const gchar *list_kind, const gchar *list_api_version)
{
	JsonObject *object;

	if (g_str_equal(list_kind, "List") || !JSON_NODE_HOLDS_OBJECT(item))
		return;
	object = json_node_get_object(item);
	if (!json_object_has_member(object, "kind")) {
		g_autofree gchar *kind = g_strndup(list_kind, strlen(list_kind) - strlen("List"));

		json_object_set_string_member(object, "kind", kind);
	}
	if (!json_object_has_member(object, "apiVersion"))
		json_object_set_string_member(object, "apiVersion", list_api_version);
}

static gboolean
kubesim_load_document(JsonNode *doc,
                      const gchar *file,
                      guint index,
                      KubesimObjectSink sink,
                      gpointer user_data,
                      GError **error)
{
	g_autofree gchar *where = g_strdup_printf("%s: document %u", file, index);
	JsonObject *object;
	const gchar *kind;
	const gchar *api_version;
	JsonNode *items;
	guint i;

	if (!JSON_NODE_HOLDS_OBJECT(doc))
		return kubesim_emit_object(doc, where, sink, user_data, error);
	object = json_node_get_object(doc);
	kind = kubesim_member_string(object, "kind");
	api_version = kubesim_member_string(object, "apiVersion");
	items = json_object_get_member(object, "items");
	if (kind == NULL || !g_str_has_suffix(kind, "List") || items == NULL)
		return kubesim_emit_object(doc, where, sink, user_data, error);

	if (!JSON_NODE_HOLDS_ARRAY(items)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            "%s: items of %s is not a list", where, kind);
		return FALSE;
	}
	for (i = 0; i < json_array_get_length(json_node_get_array(items)); i++) {
		JsonNode *item = json_array_get_element(json_node_get_array(items), i);
		g_autofree gchar *item_where = g_strdup_printf("%s, item %u", where, i + 1);

		kubesim_fill_item_type(item, kind, api_version != NULL ? api_version : "v1");
		if (!kubesim_emit_object(item, item_where, sink, user_data, error))
			return FALSE;
	}
	return TRUE;
}

static gboolean
kubesim_load_file(const gchar *file, KubesimObjectSink sink, gpointer user_data, GError **error)
{
	g_autofree gchar *contents = NULL;
	gsize length = 0;
	g_autoptr(GError) local_error = NULL;
	g_autoptr(GPtrArray) docs = NULL;
	guint i;

	if (!g_file_get_contents(file, &contents, &length, &local_error)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "%s: cannot read manifest: %s", file, local_error->message);
		return FALSE;
	}
	docs = msd_yaml_parse_documents(contents, length, file, error);
	if (docs == NULL)
		return FALSE;
	for (i = 0; i < docs->len; i++) {
		if (!kubesim_load_document(g_ptr_array_index(docs, i), file, i + 1, sink, user_data,
		                           error))
			return FALSE;
	}
	return TRUE;
}

static gboolean
kubesim_is_manifest_name(const gchar *name)
{
	return name[0] != '.' &&
	       (g_str_has_suffix(name, ".yaml") || g_str_has_suffix(name, ".yml") ||
	        g_str_has_suffix(name, ".json"));
}

static gint
kubesim_compare_names(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const gchar *const *)a, *(const gchar *const *)b);
}

gboolean
kubesim_manifests_load(const gchar *path,
                       KubesimObjectSink sink,
                       gpointer user_data,
                       GError **error)
{
	g_autoptr(GDir) dir = NULL;
	g_autoptr(GPtrArray) names = NULL;
	g_autoptr(GError) local_error = NULL;
	const gchar *name;
	guint i;

	g_return_val_if_fail(path != NULL, FALSE);
	g_return_val_if_fail(sink != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	if (!g_file_test(path, G_FILE_TEST_IS_DIR))
		return kubesim_load_file(path, sink, user_data, error);

	dir = g_dir_open(path, 0, &local_error);
	if (dir == NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "%s: cannot list manifest directory: %s", path, local_error->message);
		return FALSE;
	}
	names = g_ptr_array_new_with_free_func(g_free);
	while ((name = g_dir_read_name(dir)) != NULL) {
		g_autofree gchar *full = NULL;

		if (!kubesim_is_manifest_name(name))
			continue;
		full = g_build_filename(path, name, NULL);
		if (g_file_test(full, G_FILE_TEST_IS_REGULAR))
			g_ptr_array_add(names, g_steal_pointer(&full));
	}
	/* Name order makes the objects, and so their resourceVersions, reproducible. */
	g_ptr_array_sort(names, kubesim_compare_names);
	for (i = 0; i < names->len; i++) {
		if (!kubesim_load_file(g_ptr_array_index(names, i), sink, user_data, error))
			return FALSE;
	}
	return TRUE;
}
