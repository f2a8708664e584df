/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-crd.h"

#include "kubesim-json.h"

static gchar **
string_array(JsonObject *obj, const gchar *member)
{
	JsonArray *a;
	GStrvBuilder *builder;
	gchar **strv;
	guint i;

	if (obj == NULL || !json_object_has_member(obj, member) ||
	    !JSON_NODE_HOLDS_ARRAY(json_object_get_member(obj, member)))
		return NULL;
	a = json_object_get_array_member(obj, member);
	builder = g_strv_builder_new();
	for (i = 0; i < json_array_get_length(a); i++) {
		JsonNode *n = json_array_get_element(a, i);
		if (JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING)
			g_strv_builder_add(builder, json_node_get_string(n));
	}
	strv = g_strv_builder_end(builder);
	g_strv_builder_unref(builder);
	return strv;
}

static JsonObject *
object_member(JsonObject *obj, const gchar *member)
{
	JsonNode *n;

	if (obj == NULL)
		return NULL;
	n = json_object_get_member(obj, member);
	return n != NULL && JSON_NODE_HOLDS_OBJECT(n) ? json_node_get_object(n) : NULL;
}

void
kubesim_crd_register(KubesimStore *store, KubesimObject *crd)
{
	g_autoptr(GBytes) json = kubesim_object_get_json(crd);
	g_autoptr(JsonNode) root = NULL;
	g_autoptr(GError) error = NULL;
	JsonObject *spec, *names;
	JsonArray *versions;
	const gchar *group, *plural, *kind;
	g_auto(GStrv) short_names = NULL;
	g_auto(GStrv) categories = NULL;
	gboolean namespaced;
	guint i;

	root = kubesim_json_parse(g_bytes_get_data(json, NULL), g_bytes_get_size(json), &error);
	if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root))
		return;
	spec = object_member(json_node_get_object(root), "spec");
	names = object_member(spec, "names");
	if (spec == NULL || names == NULL || !json_object_has_member(spec, "versions")) {
		g_warning("CustomResourceDefinition %s has no spec.names or spec.versions: not "
		          "served",
		          crd->name);
		return;
	}
	group = json_object_get_string_member_with_default(spec, "group", "");
	plural = json_object_get_string_member_with_default(names, "plural", NULL);
	kind = json_object_get_string_member_with_default(names, "kind", NULL);
	if (plural == NULL || kind == NULL || group[0] == '\0') {
		g_warning("CustomResourceDefinition %s lacks spec.group, spec.names.plural or "
		          "spec.names.kind: not served",
		          crd->name);
		return;
	}
	namespaced =
	        g_strcmp0(json_object_get_string_member_with_default(spec, "scope", "Namespaced"),
	                  "Cluster") != 0;
	short_names = string_array(names, "shortNames");
	categories = string_array(names, "categories");
	versions = json_object_get_array_member(spec, "versions");
	for (i = 0; versions != NULL && i < json_array_get_length(versions); i++) {
		JsonNode *vn = json_array_get_element(versions, i);
		JsonObject *v;
		KubesimResource res = {0};
		g_autofree gchar *singular = NULL;
		const gchar *subs_status[] = {"status", NULL};
		if (!JSON_NODE_HOLDS_OBJECT(vn))
			continue;
		v = json_node_get_object(vn);
		if (!json_object_get_boolean_member_with_default(v, "served", TRUE))
			continue;
		singular = g_strdup(
		        json_object_get_string_member_with_default(names, "singular", NULL));
		if (singular == NULL)
			singular = g_ascii_strdown(kind, -1);
		res.group = (gchar *)group;
		res.version = (gchar *)json_object_get_string_member_with_default(v, "name", "v1");
		res.resource = (gchar *)plural;
		res.singular = singular;
		res.kind = (gchar *)kind;
		res.list_kind = (gchar *)json_object_get_string_member_with_default(
		        names, "listKind", NULL);
		res.namespaced = namespaced;
		res.short_names = short_names;
		res.categories = categories;
		if (object_member(object_member(v, "subresources"), "status") != NULL)
			res.subresources = (gchar **)subs_status;
		res.crd_name = crd->name;
		if (kubesim_store_lookup(store, group, res.version, plural) != NULL)
			continue;
		kubesim_store_add_resource(store, &res);
		g_debug("serving %s/%s %s from CustomResourceDefinition %s", group, res.version,
		        plural, crd->name);
	}
}

void
kubesim_crd_unregister(KubesimStore *store, KubesimObject *crd)
{
	GPtrArray *resources = kubesim_store_get_resources(store);
	guint i = 0;

	while (i < resources->len) {
		KubesimResource *res = g_ptr_array_index(resources, i);
		if (g_strcmp0(res->crd_name, crd->name) == 0) {
			kubesim_store_remove_resource(store, res);
			continue;
		}
		i++;
	}
}
