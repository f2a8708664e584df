/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* json-glib's *_get_string_member_with_default() warns (a critical) when the member exists
 * but is no string, and these documents come from outside (kubeconfig files, plugin output,
 * server answers): a member of another type reads as absent here instead. */
static inline const gchar *
msd_json_object_get_string(JsonObject *object, const gchar *member)
{
	JsonNode *node = object != NULL ? json_object_get_member(object, member) : NULL;

	if (node == NULL || !JSON_NODE_HOLDS_VALUE(node) ||
	    json_node_get_value_type(node) != G_TYPE_STRING)
		return NULL;
	return json_node_get_string(node);
}

static inline gboolean
msd_json_object_get_boolean(JsonObject *object, const gchar *member, gboolean fallback)
{
	JsonNode *node = object != NULL ? json_object_get_member(object, member) : NULL;

	if (node == NULL || !JSON_NODE_HOLDS_VALUE(node) ||
	    json_node_get_value_type(node) != G_TYPE_BOOLEAN)
		return fallback;
	return json_node_get_boolean(node);
}

/* A member as Go's decoder finds a struct field: every key that folds to @name (ASCII case)
 * is assigned in document order, so the last such key wins. */
static inline JsonNode *
msd_json_object_get_member_folded(JsonObject *object, const gchar *name)
{
	g_autoptr(GList) members = json_object_get_members(object);
	JsonNode *found = NULL;

	for (GList *l = members; l != NULL; l = l->next) {
		if (g_ascii_strcasecmp(l->data, name) == 0)
			found = json_object_get_member(object, l->data);
	}
	return found;
}

G_END_DECLS
