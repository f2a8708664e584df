/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-requests.h"

#include <json-glib/json-glib.h>

struct _KubesimRequests {
	GHashTable *resources; /* "verb group/resource[/sub]" → count (GUINT_TO_POINTER) */
	GHashTable *paths;     /* "verb path" → count */
};

KubesimRequests *
kubesim_requests_new(void)
{
	KubesimRequests *requests = g_new0(KubesimRequests, 1);

	requests->resources = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	requests->paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	return requests;
}

void
kubesim_requests_free(KubesimRequests *requests)
{
	if (requests == NULL)
		return;
	g_hash_table_unref(requests->resources);
	g_hash_table_unref(requests->paths);
	g_free(requests);
}

static void
count(GHashTable *table, gchar *key)
{
	guint n = GPOINTER_TO_UINT(g_hash_table_lookup(table, key));

	g_hash_table_replace(table, key, GUINT_TO_POINTER(n + 1));
}

void
kubesim_requests_record_resource(KubesimRequests *requests,
                                 const gchar *verb,
                                 const gchar *group,
                                 const gchar *resource,
                                 const gchar *subresource)
{
	count(requests->resources,
	      g_strdup_printf("%s %s/%s%s%s", verb, group, resource, subresource != NULL ? "/" : "",
	                      subresource != NULL ? subresource : ""));
}

void
kubesim_requests_record_path(KubesimRequests *requests, const gchar *verb, const gchar *path)
{
	count(requests->paths, g_strdup_printf("%s %s", verb, path));
}

static gint
compare_keys(gconstpointer a, gconstpointer b, gpointer user_data)
{
	return g_strcmp0(*(const gchar *const *)a, *(const gchar *const *)b);
}

/* Sorted, so that two answers for the same requests are the same text. */
static void
add_table(JsonBuilder *builder, const gchar *member, GHashTable *table)
{
	g_autofree const gchar **keys = (const gchar **)g_hash_table_get_keys_as_array(table, NULL);
	guint n = g_hash_table_size(table);

	g_qsort_with_data(keys, n, sizeof(*keys), compare_keys, NULL);
	json_builder_set_member_name(builder, member);
	json_builder_begin_object(builder);
	for (guint i = 0; i < n; i++) {
		json_builder_set_member_name(builder, keys[i]);
		json_builder_add_int_value(builder,
		                           GPOINTER_TO_UINT(g_hash_table_lookup(table, keys[i])));
	}
	json_builder_end_object(builder);
}

gchar *
kubesim_requests_to_json(KubesimRequests *requests)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autoptr(JsonNode) root = NULL;

	json_builder_begin_object(builder);
	add_table(builder, "resources", requests->resources);
	add_table(builder, "nonResourceURLs", requests->paths);
	json_builder_end_object(builder);
	root = json_builder_get_root(builder);
	return json_to_string(root, FALSE);
}

void
kubesim_requests_reset(KubesimRequests *requests)
{
	g_hash_table_remove_all(requests->resources);
	g_hash_table_remove_all(requests->paths);
}

const gchar *
kubesim_requests_verb(const gchar *method, gboolean named, gboolean watch)
{
	if (g_strcmp0(method, "GET") == 0 || g_strcmp0(method, "HEAD") == 0)
		return watch ? "watch" : named ? "get" : "list";
	if (g_strcmp0(method, "POST") == 0)
		return "create";
	if (g_strcmp0(method, "PUT") == 0)
		return "update";
	if (g_strcmp0(method, "PATCH") == 0)
		return "patch";
	if (g_strcmp0(method, "DELETE") == 0)
		return named ? "delete" : "deletecollection";
	return "unknown";
}
