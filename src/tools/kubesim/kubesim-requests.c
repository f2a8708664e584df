/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-requests.h"

#include <errno.h>
#include <json-glib/json-glib.h>
#include <stdio.h>

struct _KubesimRequests {
	GHashTable *resources; /* "verb group/resource[/sub]" → count (GUINT_TO_POINTER) */
	GHashTable *paths;     /* "verb path" → count */
	GHashTable *names;     /* "verb group/resource[/sub]" → set of object names */
	FILE *log;             /* (nullable): the request log */
};

KubesimRequests *
kubesim_requests_new(void)
{
	KubesimRequests *requests = g_new0(KubesimRequests, 1);

	requests->resources = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	requests->paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	requests->names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
	                                        (GDestroyNotify)g_hash_table_unref);
	return requests;
}

void
kubesim_requests_free(KubesimRequests *requests)
{
	if (requests == NULL)
		return;
	g_hash_table_unref(requests->resources);
	g_hash_table_unref(requests->paths);
	g_hash_table_unref(requests->names);
	if (requests->log != NULL)
		fclose(requests->log);
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
                                 const gchar *subresource,
                                 const gchar *name)
{
	gchar *key = g_strdup_printf("%s %s/%s%s%s", verb, group, resource,
	                             subresource != NULL ? "/" : "",
	                             subresource != NULL ? subresource : "");

	if (name != NULL) {
		GHashTable *set = g_hash_table_lookup(requests->names, key);

		if (set == NULL) {
			set = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
			g_hash_table_insert(requests->names, g_strdup(key), set);
		}
		g_hash_table_add(set, g_strdup(name));
	}
	count(requests->resources, key);
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
static const gchar **
sorted_keys(GHashTable *table, guint *n)
{
	const gchar **keys = (const gchar **)g_hash_table_get_keys_as_array(table, n);

	g_qsort_with_data(keys, *n, sizeof(*keys), compare_keys, NULL);
	return keys;
}

static void
add_table(JsonBuilder *builder, const gchar *member, GHashTable *table)
{
	guint n;
	g_autofree const gchar **keys = sorted_keys(table, &n);

	json_builder_set_member_name(builder, member);
	json_builder_begin_object(builder);
	for (guint i = 0; i < n; i++) {
		json_builder_set_member_name(builder, keys[i]);
		json_builder_add_int_value(builder,
		                           GPOINTER_TO_UINT(g_hash_table_lookup(table, keys[i])));
	}
	json_builder_end_object(builder);
}

static void
add_names(JsonBuilder *builder, GHashTable *names)
{
	guint n;
	g_autofree const gchar **keys = sorted_keys(names, &n);

	json_builder_set_member_name(builder, "resourceNames");
	json_builder_begin_object(builder);
	for (guint i = 0; i < n; i++) {
		guint m;
		g_autofree const gchar **set = sorted_keys(g_hash_table_lookup(names, keys[i]), &m);

		json_builder_set_member_name(builder, keys[i]);
		json_builder_begin_array(builder);
		for (guint j = 0; j < m; j++)
			json_builder_add_string_value(builder, set[j]);
		json_builder_end_array(builder);
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
	add_names(builder, requests->names);
	json_builder_end_object(builder);
	root = json_builder_get_root(builder);
	return json_to_string(root, FALSE);
}

void
kubesim_requests_reset(KubesimRequests *requests)
{
	g_hash_table_remove_all(requests->resources);
	g_hash_table_remove_all(requests->paths);
	g_hash_table_remove_all(requests->names);
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

gboolean
kubesim_requests_open_log(KubesimRequests *requests, const gchar *path, GError **error)
{
	FILE *log = fopen(path, "w");

	if (log == NULL) {
		int saved = errno;
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved),
		            "cannot write the request log %s: %s", path, g_strerror(saved));
		return FALSE;
	}
	if (requests->log != NULL)
		fclose(requests->log);
	requests->log = log;
	return TRUE;
}

static const gchar *
http_version_name(SoupHTTPVersion version)
{
	switch (version) {
	case SOUP_HTTP_1_0:
		return "HTTP/1.0";
	case SOUP_HTTP_1_1:
		return "HTTP/1.1";
	case SOUP_HTTP_2_0:
		return "HTTP/2";
	default:
		return "";
	}
}

void
kubesim_requests_log(KubesimRequests *requests, SoupServerMessage *msg)
{
	g_autoptr(JsonBuilder) builder = NULL;
	g_autoptr(JsonNode) root = NULL;
	g_autofree gchar *line = NULL;
	GUri *uri = soup_server_message_get_uri(msg);
	SoupMessageHeadersIter iter;
	const char *name, *value;

	if (requests->log == NULL)
		return;
	builder = json_builder_new();
	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "method");
	json_builder_add_string_value(builder, soup_server_message_get_method(msg));
	/* as sent: the path and query still percent-encoded, so a replay sends the same bytes */
	json_builder_set_member_name(builder, "path");
	json_builder_add_string_value(builder, uri != NULL ? g_uri_get_path(uri) : "");
	json_builder_set_member_name(builder, "query");
	if (uri != NULL && g_uri_get_query(uri) != NULL)
		json_builder_add_string_value(builder, g_uri_get_query(uri));
	else
		json_builder_add_null_value(builder);
	json_builder_set_member_name(builder, "http");
	json_builder_add_string_value(builder,
	                              http_version_name(soup_server_message_get_http_version(msg)));
	json_builder_set_member_name(builder, "headers");
	json_builder_begin_array(builder);
	soup_message_headers_iter_init(&iter, soup_server_message_get_request_headers(msg));
	while (soup_message_headers_iter_next(&iter, &name, &value)) {
		json_builder_begin_array(builder);
		json_builder_add_string_value(builder, name);
		json_builder_add_string_value(builder, value);
		json_builder_end_array(builder);
	}
	json_builder_end_array(builder);
	json_builder_end_object(builder);
	root = json_builder_get_root(builder);
	line = json_to_string(root, FALSE);
	/* a line at a time and flushed: a test reads the log while the server runs */
	fprintf(requests->log, "%s\n", line);
	fflush(requests->log);
}
