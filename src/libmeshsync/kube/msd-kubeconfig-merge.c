/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncKube"

#include "config.h"

#include "meshsync-error.h"
#include "kube/msd-kubeconfig-merge.h"
#include "util/msd-yaml.h"
#include "util/msd-json-object.h"
#include "util/msd-i18n.h"

struct _MsdKubeconfigMerge {
	GHashTable *clusters; /* (element-type utf8 MsdKubeconfigEntry) */
	GHashTable *contexts;
	GHashTable *users;
	gchar *current_context; /* (nullable) */
	GPtrArray *origins;     /* (element-type utf8): the files read, for messages */
	gchar *source;
};

/* ---- reading the tree ---- */

gchar *
msd_kubeconfig_entry_field(const MsdKubeconfigEntry *entry, const gchar *member)
{
	if (entry->prefix != NULL)
		return g_strdup_printf("%s: %s[%s].%s.%s", entry->origin, entry->section,
		                       entry->name, entry->prefix, member);
	return g_strdup_printf("%s: %s[%s].%s", entry->origin, entry->section, entry->name, member);
}

/* YAML's core schema makes `token: 12345` an integer and `namespace: true` a boolean;
 * kubeconfig fields are strings, so take the text back. */
gboolean
msd_kubeconfig_entry_get_string(const MsdKubeconfigEntry *entry,
                                const gchar *member,
                                gchar **out,
                                GError **error)
{
	JsonObject *object;
	JsonNode *node;
	GType type;

	*out = NULL;
	if (entry->body == NULL || !JSON_NODE_HOLDS_OBJECT(entry->body))
		return TRUE;
	object = json_node_get_object(entry->body);
	node = json_object_get_member(object, member);
	if (node == NULL || JSON_NODE_HOLDS_NULL(node))
		return TRUE;
	if (!JSON_NODE_HOLDS_VALUE(node)) {
		g_autofree gchar *field = msd_kubeconfig_entry_field(entry, member);
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: not a string"), field);
		return FALSE;
	}
	type = json_node_get_value_type(node);
	if (type == G_TYPE_STRING)
		*out = g_strdup(json_node_get_string(node));
	else if (type == G_TYPE_INT64)
		*out = g_strdup_printf("%" G_GINT64_FORMAT, json_node_get_int(node));
	else if (type == G_TYPE_BOOLEAN)
		*out = g_strdup(json_node_get_boolean(node) ? "true" : "false");
	else if (type == G_TYPE_DOUBLE)
		*out = g_strdup_printf("%g", json_node_get_double(node));
	if (*out != NULL && (*out)[0] == '\0')
		g_clear_pointer(out, g_free);
	return TRUE;
}

gboolean
msd_kubeconfig_entry_get_boolean(const MsdKubeconfigEntry *entry,
                                 const gchar *member,
                                 gboolean *out,
                                 GError **error)
{
	g_autofree gchar *text = NULL;

	*out = FALSE;
	if (!msd_kubeconfig_entry_get_string(entry, member, &text, error))
		return FALSE;
	if (text == NULL || g_ascii_strcasecmp(text, "false") == 0)
		return TRUE;
	if (g_ascii_strcasecmp(text, "true") == 0) {
		*out = TRUE;
		return TRUE;
	}
	{
		g_autofree gchar *field = msd_kubeconfig_entry_field(entry, member);
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: \"%s\" is not true or false"), field, text);
	}
	return FALSE;
}

JsonNode *
msd_kubeconfig_entry_get_member(const MsdKubeconfigEntry *entry, const gchar *member)
{
	JsonNode *node;

	if (entry->body == NULL || !JSON_NODE_HOLDS_OBJECT(entry->body))
		return NULL;
	node = json_object_get_member(json_node_get_object(entry->body), member);
	if (node == NULL || JSON_NODE_HOLDS_NULL(node))
		return NULL;
	return node;
}

gchar *
msd_kubeconfig_entry_resolve_path(const MsdKubeconfigEntry *entry, const gchar *path)
{
	return g_canonicalize_filename(path, entry->dir);
}

static void
msd_kubeconfig_entry_free(MsdKubeconfigEntry *entry)
{
	g_clear_pointer(&entry->body, json_node_unref);
	g_free(entry->origin);
	g_free(entry->dir);
	g_free(entry->section);
	g_free(entry->name);
	g_free(entry);
}

/* ---- merging files ---- */

static MsdKubeconfigMerge *
msd_kubeconfig_merge_new(void)
{
	MsdKubeconfigMerge *self = g_new0(MsdKubeconfigMerge, 1);

	self->clusters = g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
	                                       (GDestroyNotify)msd_kubeconfig_entry_free);
	self->contexts = g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
	                                       (GDestroyNotify)msd_kubeconfig_entry_free);
	self->users = g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
	                                    (GDestroyNotify)msd_kubeconfig_entry_free);
	self->origins = g_ptr_array_new_with_free_func(g_free);
	return self;
}

void
msd_kubeconfig_merge_free(MsdKubeconfigMerge *self)
{
	if (self == NULL)
		return;
	g_hash_table_unref(self->clusters);
	g_hash_table_unref(self->contexts);
	g_hash_table_unref(self->users);
	g_free(self->current_context);
	g_ptr_array_unref(self->origins);
	g_free(self->source);
	g_free(self);
}

static gboolean
msd_kubeconfig_merge_section(JsonObject *root,
                             const gchar *section,
                             const gchar *body_member,
                             GHashTable *table,
                             const gchar *origin,
                             const gchar *dir,
                             GError **error)
{
	JsonNode *node = json_object_get_member(root, section);
	JsonArray *array;

	if (node == NULL || JSON_NODE_HOLDS_NULL(node))
		return TRUE;
	if (!JSON_NODE_HOLDS_ARRAY(node)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: %s: not a list"), origin, section);
		return FALSE;
	}
	array = json_node_get_array(node);
	for (guint i = 0; i < json_array_get_length(array); i++) {
		JsonNode *item = json_array_get_element(array, i);
		JsonObject *object;
		const gchar *name;
		JsonNode *body;
		MsdKubeconfigEntry *entry;

		if (!JSON_NODE_HOLDS_OBJECT(item)) {
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            _("%s: %s[%u]: not a mapping"), origin, section, i);
			return FALSE;
		}
		object = json_node_get_object(item);
		name = msd_json_object_get_string(object, "name");
		if (name == NULL || name[0] == '\0') {
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            _("%s: %s[%u].name: missing"), origin, section, i);
			return FALSE;
		}
		body = json_object_get_member(object, body_member);
		if (body != NULL && !JSON_NODE_HOLDS_OBJECT(body) && !JSON_NODE_HOLDS_NULL(body)) {
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            _("%s: %s[%s].%s: not a mapping"), origin, section, name,
			            body_member);
			return FALSE;
		}
		/* kubectl's rule: the first file that defines a name wins */
		if (g_hash_table_contains(table, name))
			continue;
		entry = g_new0(MsdKubeconfigEntry, 1);
		entry->body = body != NULL ? json_node_ref(body) : NULL;
		entry->origin = g_strdup(origin);
		entry->dir = g_strdup(dir);
		entry->section = g_strdup(section);
		entry->name = g_strdup(name);
		g_hash_table_insert(table, entry->name, entry);
	}
	return TRUE;
}

static gboolean
msd_kubeconfig_merge_add_data(MsdKubeconfigMerge *self,
                              const gchar *data,
                              gsize length,
                              const gchar *origin,
                              const gchar *dir,
                              GError **error)
{
	g_autoptr(GPtrArray) documents = NULL;
	g_autoptr(GError) local_error = NULL;
	JsonNode *root_node;
	JsonObject *root;
	const gchar *current;

	documents = msd_yaml_parse_documents(data, length, origin, &local_error);
	if (documents == NULL) {
		/* the YAML reader's message already reads FILE:LINE:COLUMN: problem */
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		                    local_error->message);
		return FALSE;
	}
	g_ptr_array_add(self->origins, g_strdup(origin));
	/* an empty file is an empty config, as for kubectl */
	if (documents->len == 0)
		return TRUE;
	if (documents->len > 1) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: more than one YAML document"), origin);
		return FALSE;
	}
	root_node = g_ptr_array_index(documents, 0);
	if (JSON_NODE_HOLDS_NULL(root_node))
		return TRUE;
	if (!JSON_NODE_HOLDS_OBJECT(root_node)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: not a kubeconfig mapping"), origin);
		return FALSE;
	}
	root = json_node_get_object(root_node);
	if (!msd_kubeconfig_merge_section(root, "clusters", "cluster", self->clusters, origin, dir,
	                                  error))
		return FALSE;
	if (!msd_kubeconfig_merge_section(root, "contexts", "context", self->contexts, origin, dir,
	                                  error))
		return FALSE;
	if (!msd_kubeconfig_merge_section(root, "users", "user", self->users, origin, dir, error))
		return FALSE;
	current = msd_json_object_get_string(root, "current-context");
	if (self->current_context == NULL && current != NULL && current[0] != '\0')
		self->current_context = g_strdup(current);
	return TRUE;
}

MsdKubeconfigMerge *
msd_kubeconfig_merge_new_from_files(const gchar *const *paths, gboolean missing_ok, GError **error)
{
	g_autoptr(MsdKubeconfigMerge) self = msd_kubeconfig_merge_new();
	g_autoptr(GString) listed = g_string_new(NULL);

	for (guint i = 0; paths != NULL && paths[i] != NULL; i++) {
		g_autoptr(GError) local_error = NULL;
		g_autofree gchar *contents = NULL;
		g_autofree gchar *absolute = NULL;
		g_autofree gchar *dir = NULL;
		gsize length = 0;

		if (paths[i][0] == '\0')
			continue;
		if (listed->len > 0)
			g_string_append_c(listed, ':');
		g_string_append(listed, paths[i]);
		if (!g_file_get_contents(paths[i], &contents, &length, &local_error)) {
			if (missing_ok &&
			    g_error_matches(local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT)) {
				g_debug("kubeconfig %s does not exist, skipped", paths[i]);
				continue;
			}
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            _("%s: cannot read: %s"), paths[i], local_error->message);
			return NULL;
		}
		absolute = g_canonicalize_filename(paths[i], NULL);
		dir = g_path_get_dirname(absolute);
		if (!msd_kubeconfig_merge_add_data(self, contents, length, paths[i], dir, error))
			return NULL;
	}
	if (self->origins->len == 0) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("no kubeconfig file exists among: %s"),
		            listed->len > 0 ? listed->str : _("(no files given)"));
		return NULL;
	}
	self->source = g_string_free(g_steal_pointer(&listed), FALSE);
	return g_steal_pointer(&self);
}

MsdKubeconfigMerge *
msd_kubeconfig_merge_new_from_data(const gchar *data, gsize length, GError **error)
{
	g_autoptr(MsdKubeconfigMerge) self = msd_kubeconfig_merge_new();
	g_autofree gchar *cwd = g_get_current_dir();

	if (!msd_kubeconfig_merge_add_data(self, data, length, "kubeconfig data", cwd, error))
		return NULL;
	self->source = g_strdup("kubeconfig data");
	return g_steal_pointer(&self);
}

const gchar *
msd_kubeconfig_merge_get_source(MsdKubeconfigMerge *self)
{
	return self->source;
}

gchar *
msd_kubeconfig_merge_describe(MsdKubeconfigMerge *self)
{
	g_autoptr(GString) text = g_string_new(NULL);

	for (guint i = 0; i < self->origins->len; i++) {
		if (i > 0)
			g_string_append_c(text, ':');
		g_string_append(text, g_ptr_array_index(self->origins, i));
	}
	return g_strdup(text->str);
}

const gchar *
msd_kubeconfig_merge_get_current_context(MsdKubeconfigMerge *self)
{
	return self->current_context;
}

const MsdKubeconfigEntry *
msd_kubeconfig_merge_get_context(MsdKubeconfigMerge *self, const gchar *name)
{
	return g_hash_table_lookup(self->contexts, name);
}

const MsdKubeconfigEntry *
msd_kubeconfig_merge_get_cluster(MsdKubeconfigMerge *self, const gchar *name)
{
	return g_hash_table_lookup(self->clusters, name);
}

const MsdKubeconfigEntry *
msd_kubeconfig_merge_get_user(MsdKubeconfigMerge *self, const gchar *name)
{
	return g_hash_table_lookup(self->users, name);
}
