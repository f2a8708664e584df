/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * One file: upstream's pipeline table, the default whitelist, the MeshSync custom resource's
 * watch list and the output filters are one configuration with one set of names; the table
 * itself is a third of the file.
 */

#define G_LOG_DOMAIN "MeshSyncConfig"

#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "meshsync-error.h"
#include "meshsync-watch-config.h"
#include "meshsync-watch-config-private.h"
#include "util/msd-yaml.h"
#include "util/msd-i18n.h"

/**
 * MeshSyncWatchConfig:
 *
 * What MeshSync watches and what it lets through.
 *
 * Each watched resource type is named as upstream MeshSync names it,
 * `<resource>.<version>.<group>` (`pods.v1.`, `deployments.v1.apps`), belongs to a stage
 * (global or local) and carries the event types that are published for it. The configuration
 * comes from the built-in default, from the MeshSync custom resource
 * (`meshery/meshery-meshsync`), or from a YAML file, and later from CustomResourceDefinitions
 * that appear at run time.
 *
 * Two output filters complete it: a resource allow-list (`-outputResources`) that decides
 * which types get an informer at all, and a namespace allow-list (`-outputNamespaces`) applied
 * to each event.
 */

typedef struct {
	gchar *name;
	MeshSyncWatchStage stage;
	GStrv events;
	gboolean from_crd;
} MeshSyncWatchEntry;

struct _MeshSyncWatchConfig {
	GObject parent_instance;

	GPtrArray *entries;     /* (owned) (element-type MeshSyncWatchEntry): global first */
	GHashTable *resources;  /* (owned) (nullable): lower-cased names and plurals */
	GHashTable *namespaces; /* (owned) (nullable) */

	/* the tier-config; all full and empty lists without one */
	MeshSyncWatchDepth depth; /* for names without an override */
	GHashTable *depths;       /* (owned) (nullable): name -> override, GINT_TO_POINTER */
	gchar *mode;              /* (owned) (nullable): kept for fd1, read by nothing yet */
	GStrv enabled_infra;      /* (owned) */
	GStrv disabled_infra;     /* (owned) */
};

G_DEFINE_FINAL_TYPE(MeshSyncWatchConfig, meshsync_watch_config, G_TYPE_OBJECT)

static const gchar *const default_events[] = {"ADDED", "MODIFIED", "DELETED", NULL};

/* Upstream's built-in pipeline table, in its order; many names are not listable resources
 * (singular names, review APIs): they are skipped when they do not resolve in discovery. */
static const gchar *const builtin_global[] = {
        "namespaces.v1.",
        "configmaps.v1.",
        "nodes.v1.",
        "secrets.v1.",
        "persistentvolumes.v1.",
        "persistentvolumeclaims.v1.",
        NULL,
};

static const gchar *const builtin_local[] = {
        "replicasets.v1.apps",
        "pods.v1.",
        "services.v1.",
        "deployments.v1.apps",
        "statefulsets.v1.apps",
        "daemonsets.v1.apps",
        "ingresses.v1.networking.k8s.io",
        "ingressclass.v1.networking.k8s.io",
        "endpoints.v1.",
        "endpointslices.v1.discovery.k8s.io",
        "container.v1.core",
        "job.v1.batch",
        "service.apis",
        "csidriver.v1.storage.k8s.io",
        "csinode.v1.storage.k8s.io",
        "csistoragecapacity.v1.storage.k8s.io",
        "volume.v1.",
        "volumeattributesclass.v1alpha1.storage.k8s.io",
        "clustertrustbundle.v1alpha1.certificates.k8s.io",
        "controllerrevision.v1.apps",
        "customresourcedefinition.v1.apiextensions.k8s.io",
        "event.v1.events.k8s.io",
        "limitrange.v1.",
        "horizontalpodautoscaler.v2.autoscaling",
        "mutatingwebhookconfiguration.v1.admissionregistration.k8s.io",
        "podschedulingcontext.v1alpha2.resource.k8s.io",
        "podtemplate.v1.",
        "poddisruptionbudget.v1.policy",
        "priorityclass.v1.scheduling.k8s.io",
        "resourceclaim.v1alpha2.resource.k8s.io",
        "resourceclaimtemplate.v1alpha2.resource.k8s.io",
        "resourceclass.v1alpha2.resource.k8s.io",
        "validatingwebhookconfiguration.v1.admissionregistration.k8s.io",
        "validatingadmissionpolicy.v1beta1.admissionregistration.k8s.io",
        "validatingadmissionpolicybinding.v1beta1.admissionregistration.k8s.io",
        "binding.v1.",
        "certificatesigningrequest.v1.certificates.k8s.io",
        "clusterrolebinding.v1.rbac.authorization.k8s.io",
        "componentstatus.v1.",
        "flowschema.v1.flowcontrol.apiserver.k8s.io",
        "ipaddress.v1alpha1.networking.k8s.io",
        "lease.v1.coordination.k8s.io",
        "localsubjectaccessreview.v1.authorization.k8s.io",
        "node.v1.",
        "networkpolicy.v1.networking.k8s.io",
        "prioritylevelconfiguration.v1.flowcontrol.apiserver.k8s.io",
        "resourcequota.v1.",
        "role.v1.rbac.authorization.k8s.io",
        "rolebinding.v1.rbac.authorization.k8s.io",
        "runtimeclass.v1.node.k8s.io",
        "selfsubjectaccessreview.v1.authorization.k8s.io",
        "selfsubjectreview.v1.authentication.k8s.io",
        "selfsubjectrulesreview.v1.authorization.k8s.io",
        /* Upstream spells this entry "serviceaccount.v1.", which never resolves, so it never
         * watched ServiceAccounts (its issue 393); the plural makes the entry work. */
        "serviceaccounts.v1.",
        "servicecidr.v1alpha1.networking.k8s.io",
        "storageversion.v1alpha1.internal.apiserver.k8s.io",
        "subjectaccessreview.v1.authorization.k8s.io",
        "tokenrequest.v1.authentication.k8s.io",
        "tokenreview.v1.authentication.k8s.io",
        "cronjobs.v1.batch",
        "replicationcontrollers.v1.",
        "storageclasses.v1.storage.k8s.io",
        "clusterroles.v1.rbac.authorization.k8s.io",
        "volumeattachments.v1.storage.k8s.io",
        "apiservices.v1.apiregistration.k8s.io",
        NULL,
};

/* Upstream's local whitelist, used when there is no MeshSync custom resource. */
static const gchar *const builtin_whitelist[] = {
        "grafanas.v1beta1.grafana.integreatly.org",
        "prometheuses.v1.monitoring.coreos.com",
        "namespaces.v1.",
        "configmaps.v1.",
        "nodes.v1.",
        "secrets.v1.",
        "persistentvolumes.v1.",
        "persistentvolumeclaims.v1.",
        "replicasets.v1.apps",
        "pods.v1.",
        "services.v1.",
        "deployments.v1.apps",
        "statefulsets.v1.apps",
        "daemonsets.v1.apps",
        "ingresses.v1.networking.k8s.io",
        "endpoints.v1.",
        "endpointslices.v1.discovery.k8s.io",
        "cronjobs.v1.batch",
        "replicationcontrollers.v1.",
        "storageclasses.v1.storage.k8s.io",
        "clusterroles.v1.rbac.authorization.k8s.io",
        "volumeattachments.v1.storage.k8s.io",
        "apiservices.v1.apiregistration.k8s.io",
        "serviceaccounts.v1.",
        NULL,
};

static void
meshsync_watch_entry_free(MeshSyncWatchEntry *entry)
{
	g_free(entry->name);
	g_strfreev(entry->events);
	g_free(entry);
}

static void
meshsync_watch_config_finalize(GObject *object)
{
	MeshSyncWatchConfig *self = MESHSYNC_WATCH_CONFIG(object);

	g_ptr_array_unref(self->entries);
	g_clear_pointer(&self->resources, g_hash_table_unref);
	g_clear_pointer(&self->namespaces, g_hash_table_unref);
	g_clear_pointer(&self->depths, g_hash_table_unref);
	g_free(self->mode);
	g_strfreev(self->enabled_infra);
	g_strfreev(self->disabled_infra);
	G_OBJECT_CLASS(meshsync_watch_config_parent_class)->finalize(object);
}

static void
meshsync_watch_config_class_init(MeshSyncWatchConfigClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = meshsync_watch_config_finalize;
}

static void
meshsync_watch_config_init(MeshSyncWatchConfig *self)
{
	self->entries = g_ptr_array_new_with_free_func((GDestroyNotify)meshsync_watch_entry_free);
	self->enabled_infra = g_new0(gchar *, 1);
	self->disabled_infra = g_new0(gchar *, 1);
}

static MeshSyncWatchEntry *
meshsync_watch_config_find(MeshSyncWatchConfig *self, const gchar *name, guint *index)
{
	for (guint i = 0; i < self->entries->len; i++) {
		MeshSyncWatchEntry *entry = g_ptr_array_index(self->entries, i);

		if (g_strcmp0(entry->name, name) == 0) {
			if (index != NULL)
				*index = i;
			return entry;
		}
	}
	return NULL;
}

static void
meshsync_watch_config_append(MeshSyncWatchConfig *self,
                             const gchar *name,
                             MeshSyncWatchStage stage,
                             const gchar *const *events,
                             gboolean from_crd)
{
	MeshSyncWatchEntry *entry = g_new0(MeshSyncWatchEntry, 1);
	guint insert_at = self->entries->len;

	entry->name = g_strdup(name);
	entry->stage = stage;
	entry->events = g_strdupv((GStrv)events);
	entry->from_crd = from_crd;
	/* Keep the global stage ahead of the local one. */
	if (stage == MESHSYNC_WATCH_STAGE_GLOBAL) {
		for (guint i = 0; i < self->entries->len; i++) {
			MeshSyncWatchEntry *other = g_ptr_array_index(self->entries, i);

			if (other->stage == MESHSYNC_WATCH_STAGE_LOCAL) {
				insert_at = i;
				break;
			}
		}
	}
	g_ptr_array_insert(self->entries, (gint)insert_at, entry);
}

/* Walks the built-in table, global then local, handing each name and its stage to @keep. */
typedef const gchar *const *(*MeshSyncWatchFilter)(const gchar *name, gpointer user_data);

static MeshSyncWatchConfig *
meshsync_watch_config_new_filtered(MeshSyncWatchFilter filter, gpointer user_data)
{
	MeshSyncWatchConfig *self = g_object_new(MESHSYNC_TYPE_WATCH_CONFIG, NULL);
	const gchar *const *tables[] = {builtin_global, builtin_local};
	const MeshSyncWatchStage stages[] = {MESHSYNC_WATCH_STAGE_GLOBAL,
	                                     MESHSYNC_WATCH_STAGE_LOCAL};

	for (guint t = 0; t < G_N_ELEMENTS(tables); t++) {
		for (guint i = 0; tables[t][i] != NULL; i++) {
			const gchar *const *events = filter(tables[t][i], user_data);

			if (events != NULL)
				meshsync_watch_config_append(self, tables[t][i], stages[t], events,
				                             FALSE);
		}
	}
	return self;
}

static const gchar *const *
meshsync_watch_filter_all(const gchar *name, gpointer user_data)
{
	return default_events;
}

static const gchar *const *
meshsync_watch_filter_builtin_whitelist(const gchar *name, gpointer user_data)
{
	return g_strv_contains(builtin_whitelist, name) ? default_events : NULL;
}

/**
 * meshsync_watch_config_new_default:
 *
 * Creates the configuration MeshSync uses when there is no MeshSync custom resource:
 * upstream's built-in local whitelist applied to its pipeline table, which gives 22 resource
 * types (6 global, 16 local), each with the events ADDED, MODIFIED and DELETED. That is
 * upstream's 21 and ServiceAccounts, which upstream means to watch but never does (see
 * doc/deviations.md).
 *
 * Returns: (transfer full): a new configuration
 */
MeshSyncWatchConfig *
meshsync_watch_config_new_default(void)
{
	return meshsync_watch_config_new_filtered(meshsync_watch_filter_builtin_whitelist, NULL);
}

/**
 * meshsync_watch_config_new_builtin_table:
 *
 * Creates a configuration holding upstream's whole built-in pipeline table (71 names), the
 * fallback when a MeshSync custom resource exists but its watch list cannot be used. Names
 * that are not watchable resources are skipped later, when they do not resolve in
 * discovery.
 *
 * Returns: (transfer full): a new configuration
 */
MeshSyncWatchConfig *
meshsync_watch_config_new_builtin_table(void)
{
	return meshsync_watch_config_new_filtered(meshsync_watch_filter_all, NULL);
}

static JsonNode *
meshsync_watch_member_ci(JsonObject *object, const gchar *key)
{
	g_autoptr(GList) members = json_object_get_members(object);

	/* Upstream decodes these keys into untagged Go fields, which match case-insensitively. */
	for (GList *l = members; l != NULL; l = l->next) {
		if (g_ascii_strcasecmp(l->data, key) == 0)
			return json_object_get_member(object, l->data);
	}
	return NULL;
}

/* Watch lists written for upstream name its ServiceAccount entry by the singular spelling;
 * they mean the entry that now resolves. */
static const gchar *
meshsync_watch_canonical_name(const gchar *name)
{
	return g_strcmp0(name, "serviceaccount.v1.") == 0 ? "serviceaccounts.v1." : name;
}

typedef struct {
	GHashTable *whitelist; /* name -> GStrv events */
	GHashTable *blacklist; /* name set */
} MeshSyncWatchLists;

static const gchar *const *
meshsync_watch_filter_lists(const gchar *name, gpointer user_data)
{
	MeshSyncWatchLists *lists = user_data;

	if (lists->whitelist != NULL)
		return g_hash_table_lookup(lists->whitelist, name);
	return g_hash_table_contains(lists->blacklist, name) ? NULL : default_events;
}

/* Reads whitelist entries ({"Resource": name, "Events": [...]}), skipping bad ones with a
 * warning rather than giving up on the whole list (upstream aborts discovery instead). */
static GHashTable *
meshsync_watch_read_whitelist(JsonArray *array, const gchar *origin)
{
	GHashTable *table =
	        g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_strfreev);

	for (guint i = 0; i < json_array_get_length(array); i++) {
		JsonNode *item = json_array_get_element(array, i);
		JsonNode *resource;
		JsonNode *events;
		g_autoptr(GStrvBuilder) builder = g_strv_builder_new();
		const gchar *name;

		if (!JSON_NODE_HOLDS_OBJECT(item)) {
			g_warning("%s: whitelist[%u] is not an object: skipped", origin, i);
			continue;
		}
		resource = meshsync_watch_member_ci(json_node_get_object(item), "Resource");
		events = meshsync_watch_member_ci(json_node_get_object(item), "Events");
		if (resource == NULL || json_node_get_value_type(resource) != G_TYPE_STRING) {
			g_warning("%s: whitelist[%u] has no Resource name: skipped", origin, i);
			continue;
		}
		name = meshsync_watch_canonical_name(json_node_get_string(resource));
		if (!g_strv_contains(builtin_global, name) &&
		    !g_strv_contains(builtin_local, name)) {
			g_warning("%s: whitelist[%u] names %s, which is not in the pipeline table: "
			          "skipped",
			          origin, i, name);
			continue;
		}
		if (events != NULL && JSON_NODE_HOLDS_ARRAY(events)) {
			JsonArray *list = json_node_get_array(events);

			for (guint e = 0; e < json_array_get_length(list); e++) {
				JsonNode *event = json_array_get_element(list, e);

				if (json_node_get_value_type(event) == G_TYPE_STRING)
					g_strv_builder_add(builder, json_node_get_string(event));
				else
					g_warning(
					        "%s: whitelist[%u] (%s): event %u is not a string: "
					        "skipped",
					        origin, i, name, e);
			}
		} else if (events != NULL && !JSON_NODE_HOLDS_NULL(events)) {
			g_warning("%s: whitelist[%u] (%s): Events is not a list: no events", origin,
			          i, name);
		}
		g_hash_table_replace(table, g_strdup(name), g_strv_builder_end(builder));
	}
	return table;
}

static GHashTable *
meshsync_watch_read_blacklist(JsonArray *array, const gchar *origin)
{
	GHashTable *set = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

	for (guint i = 0; i < json_array_get_length(array); i++) {
		JsonNode *item = json_array_get_element(array, i);

		if (json_node_get_value_type(item) != G_TYPE_STRING) {
			g_warning("%s: blacklist[%u] is not a string: skipped", origin, i);
			continue;
		}
		g_hash_table_add(
		        set, g_strdup(meshsync_watch_canonical_name(json_node_get_string(item))));
	}
	return set;
}

/* A list arrives either as a JSON array (YAML file) or as a string holding JSON (the
 * custom resource's ConfigMap-shaped data). */
static JsonArray *
meshsync_watch_list_value(JsonNode *node, const gchar *origin, const gchar *what, GError **error)
{
	g_autoptr(JsonParser) parser = NULL;
	g_autoptr(GError) parse_error = NULL;
	JsonNode *root;

	if (node == NULL || JSON_NODE_HOLDS_NULL(node))
		return NULL;
	if (JSON_NODE_HOLDS_ARRAY(node))
		return json_array_ref(json_node_get_array(node));
	if (json_node_get_value_type(node) != G_TYPE_STRING) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: %s is neither a list nor a string holding a JSON list"), origin,
		            what);
		return NULL;
	}
	if (*json_node_get_string(node) == '\0')
		return NULL;
	parser = json_parser_new();
	if (!json_parser_load_from_data(parser, json_node_get_string(node), -1, &parse_error)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: %s is not valid JSON: %s"), origin, what, parse_error->message);
		return NULL;
	}
	root = json_parser_get_root(parser);
	if (root == NULL || !JSON_NODE_HOLDS_ARRAY(root)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: %s is not a JSON list"), origin, what);
		return NULL;
	}
	return json_array_ref(json_node_get_array(root));
}

static MeshSyncWatchConfig *
meshsync_watch_config_new_from_list_nodes(JsonNode *whitelist_node,
                                          JsonNode *blacklist_node,
                                          const gchar *origin,
                                          GError **error)
{
	g_autoptr(JsonArray) whitelist = NULL;
	g_autoptr(JsonArray) blacklist = NULL;
	MeshSyncWatchLists lists = {NULL, NULL};
	MeshSyncWatchConfig *self;
	GError *local_error = NULL;

	whitelist = meshsync_watch_list_value(whitelist_node, origin, "whitelist", &local_error);
	if (local_error == NULL)
		blacklist = meshsync_watch_list_value(blacklist_node, origin, "blacklist",
		                                      &local_error);
	if (local_error != NULL) {
		g_propagate_error(error, local_error);
		return NULL;
	}
	if (whitelist != NULL && json_array_get_length(whitelist) == 0)
		g_clear_pointer(&whitelist, json_array_unref);
	if (blacklist != NULL && json_array_get_length(blacklist) == 0)
		g_clear_pointer(&blacklist, json_array_unref);
	if (whitelist == NULL && blacklist == NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: both the whitelist and the blacklist are missing or empty"),
		            origin);
		return NULL;
	}
	if (whitelist != NULL && blacklist != NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: a whitelist and a blacklist together are not supported"),
		            origin);
		return NULL;
	}

	if (whitelist != NULL)
		lists.whitelist = meshsync_watch_read_whitelist(whitelist, origin);
	else
		lists.blacklist = meshsync_watch_read_blacklist(blacklist, origin);
	self = meshsync_watch_config_new_filtered(meshsync_watch_filter_lists, &lists);
	g_clear_pointer(&lists.whitelist, g_hash_table_unref);
	g_clear_pointer(&lists.blacklist, g_hash_table_unref);
	return self;
}

/* What a tier-config says, kept apart until all of it has been read: a fault anywhere leaves
 * the configuration without tiers rather than with half of them. */
typedef struct {
	MeshSyncWatchDepth depth;
	GHashTable *depths; /* name -> depth */
	gchar *mode;
	GStrv enabled_infra;
	GStrv disabled_infra;
} MeshSyncWatchTiers;

static void
meshsync_watch_tiers_clear(MeshSyncWatchTiers *tiers)
{
	g_clear_pointer(&tiers->depths, g_hash_table_unref);
	g_clear_pointer(&tiers->mode, g_free);
	g_clear_pointer(&tiers->enabled_infra, g_strfreev);
	g_clear_pointer(&tiers->disabled_infra, g_strfreev);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(MeshSyncWatchTiers, meshsync_watch_tiers_clear)

static gboolean
meshsync_watch_depth_parse(const gchar *word, MeshSyncWatchDepth *depth)
{
	/* fd1's words; its Go decoder would take any case of a key, not of a value, but a
	 * value in another case is still plainly meant */
	if (g_ascii_strcasecmp(word, "full") == 0)
		*depth = MESHSYNC_WATCH_DEPTH_FULL;
	else if (g_ascii_strcasecmp(word, "shallow") == 0)
		*depth = MESHSYNC_WATCH_DEPTH_SHALLOW;
	else
		return FALSE;
	return TRUE;
}

/* A list of strings, or NULL for an absent or null member; @error for anything else. */
static GStrv
meshsync_watch_tiers_strings(JsonObject *object, const gchar *key, GError **error)
{
	JsonNode *node = meshsync_watch_member_ci(object, key);
	g_autoptr(GStrvBuilder) builder = NULL;
	JsonArray *array;

	if (node == NULL || JSON_NODE_HOLDS_NULL(node))
		return NULL;
	if (!JSON_NODE_HOLDS_ARRAY(node)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s is not a list of strings"), key);
		return NULL;
	}
	array = json_node_get_array(node);
	builder = g_strv_builder_new();
	for (guint i = 0; i < json_array_get_length(array); i++) {
		JsonNode *item = json_array_get_element(array, i);

		if (json_node_get_value_type(item) != G_TYPE_STRING) {
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            _("%s[%u] is not a string"), key, i);
			return NULL;
		}
		g_strv_builder_add(builder, json_node_get_string(item));
	}
	return g_strv_builder_end(builder);
}

/* The override lists: names of @depth; a name already given the other depth is a fault. */
static gboolean
meshsync_watch_tiers_read_overrides(MeshSyncWatchTiers *tiers,
                                    JsonObject *object,
                                    const gchar *key,
                                    MeshSyncWatchDepth depth,
                                    GError **error)
{
	g_auto(GStrv) names = meshsync_watch_tiers_strings(object, key, error);

	if (names == NULL)
		return error == NULL || *error == NULL;
	for (guint i = 0; names[i] != NULL; i++) {
		const gchar *name = meshsync_watch_canonical_name(names[i]);
		gpointer other;

		if (g_hash_table_lookup_extended(tiers->depths, name, NULL, &other) &&
		    GPOINTER_TO_INT(other) != (gint)depth) {
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            _("%s is listed both as Full and as Shallow"), name);
			return FALSE;
		}
		g_hash_table_replace(tiers->depths, g_strdup(name), GINT_TO_POINTER(depth));
	}
	return TRUE;
}

/* Reads a tier-config: a JSON object (from a YAML file) or a string holding one (the
 * resource's ConfigMap-shaped data). Keys match in any case, as fd1's untagged Go fields
 * would; unknown keys are ignored, as Go does. */
static gboolean
meshsync_watch_tiers_read(MeshSyncWatchTiers *tiers, JsonNode *node, GError **error)
{
	g_autoptr(JsonParser) parser = NULL;
	g_autoptr(GError) parse_error = NULL;
	JsonObject *object;
	JsonNode *member;

	if (json_node_get_value_type(node) == G_TYPE_STRING) {
		parser = json_parser_new();
		if (!json_parser_load_from_data(parser, json_node_get_string(node), -1,
		                                &parse_error)) {
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            _("not valid JSON: %s"), parse_error->message);
			return FALSE;
		}
		node = json_parser_get_root(parser);
	}
	if (node == NULL || !JSON_NODE_HOLDS_OBJECT(node)) {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		                    _("not a JSON object"));
		return FALSE;
	}
	object = json_node_get_object(node);

	tiers->depth = MESHSYNC_WATCH_DEPTH_FULL;
	member = meshsync_watch_member_ci(object, "Depth");
	if (member != NULL && !JSON_NODE_HOLDS_NULL(member)) {
		if (json_node_get_value_type(member) != G_TYPE_STRING) {
			g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			                    _("Depth is not a string"));
			return FALSE;
		}
		if (*json_node_get_string(member) != '\0' &&
		    !meshsync_watch_depth_parse(json_node_get_string(member), &tiers->depth)) {
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            _("Depth \"%s\" is neither shallow nor full"),
			            json_node_get_string(member));
			return FALSE;
		}
	}
	member = meshsync_watch_member_ci(object, "Mode");
	if (member != NULL && !JSON_NODE_HOLDS_NULL(member)) {
		if (json_node_get_value_type(member) != G_TYPE_STRING) {
			g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			                    _("Mode is not a string"));
			return FALSE;
		}
		tiers->mode = g_strdup(json_node_get_string(member));
	}
	tiers->depths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	if (!meshsync_watch_tiers_read_overrides(tiers, object, "Full", MESHSYNC_WATCH_DEPTH_FULL,
	                                         error) ||
	    !meshsync_watch_tiers_read_overrides(tiers, object, "Shallow",
	                                         MESHSYNC_WATCH_DEPTH_SHALLOW, error))
		return FALSE;
	tiers->enabled_infra = meshsync_watch_tiers_strings(object, "EnabledInfra", error);
	if (error != NULL && *error != NULL)
		return FALSE;
	tiers->disabled_infra = meshsync_watch_tiers_strings(object, "DisabledInfra", error);
	return error == NULL || *error == NULL;
}

/* A tier-config that cannot be read leaves the configuration as the lists alone make it:
 * one warning, then every type in full, which is what the resource did before tiers. */
static void
meshsync_watch_config_apply_tiers(MeshSyncWatchConfig *self, JsonNode *node, const gchar *origin)
{
	g_auto(MeshSyncWatchTiers) tiers = {MESHSYNC_WATCH_DEPTH_FULL, NULL, NULL, NULL, NULL};
	g_autoptr(GError) error = NULL;

	if (node == NULL || JSON_NODE_HOLDS_NULL(node))
		return;
	if (json_node_get_value_type(node) == G_TYPE_STRING && *json_node_get_string(node) == '\0')
		return;
	if (!meshsync_watch_tiers_read(&tiers, node, &error)) {
		g_warning("%s: tier-config ignored, every type is watched in full: %s", origin,
		          error->message);
		return;
	}
	self->depth = tiers.depth;
	self->depths = g_steal_pointer(&tiers.depths);
	self->mode = g_steal_pointer(&tiers.mode);
	if (tiers.enabled_infra != NULL) {
		g_strfreev(self->enabled_infra);
		self->enabled_infra = g_steal_pointer(&tiers.enabled_infra);
	}
	if (tiers.disabled_infra != NULL) {
		g_strfreev(self->disabled_infra);
		self->disabled_infra = g_steal_pointer(&tiers.disabled_infra);
	}
}

static MeshSyncWatchConfig *
meshsync_watch_config_new_from_lists(JsonNode *whitelist_node,
                                     JsonNode *blacklist_node,
                                     JsonNode *tiers_node,
                                     const gchar *origin,
                                     GError **error)
{
	MeshSyncWatchConfig *self = meshsync_watch_config_new_from_list_nodes(
	        whitelist_node, blacklist_node, origin, error);

	if (self != NULL)
		meshsync_watch_config_apply_tiers(self, tiers_node, origin);
	return self;
}

static MeshSyncWatchConfig *
meshsync_watch_config_new_from_cr_node(JsonNode *root, const gchar *origin, GError **error)
{
	JsonObject *object;
	JsonNode *spec;
	JsonNode *watch_list;
	JsonNode *data;

	if (!JSON_NODE_HOLDS_OBJECT(root)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: not a MeshSync object"), origin);
		return NULL;
	}
	object = json_node_get_object(root);
	spec = json_object_get_member(object, "spec");
	if (spec == NULL || !JSON_NODE_HOLDS_OBJECT(spec)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: spec is missing or not an object"), origin);
		return NULL;
	}
	watch_list = json_object_get_member(json_node_get_object(spec), "watch-list");
	if (watch_list == NULL || !JSON_NODE_HOLDS_OBJECT(watch_list)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: spec.watch-list is missing or not an object"), origin);
		return NULL;
	}
	data = json_object_get_member(json_node_get_object(watch_list), "data");
	if (data == NULL || !JSON_NODE_HOLDS_OBJECT(data)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: spec.watch-list.data is missing or not an object"), origin);
		return NULL;
	}
	return meshsync_watch_config_new_from_lists(
	        json_object_get_member(json_node_get_object(data), "whitelist"),
	        json_object_get_member(json_node_get_object(data), "blacklist"),
	        json_object_get_member(json_node_get_object(data), "tier-config"), origin, error);
}

/**
 * meshsync_watch_config_new_from_resource:
 * @json: the MeshSync custom resource as JSON
 * @length: the length of @json in bytes, or -1 if it is nul-terminated
 * @error: return location for a #GError
 *
 * Reads the watch list of a MeshSync custom resource (`meshery.io/v1alpha1`), held in
 * `spec.watch-list.data` as a `whitelist` (a JSON list of `{"Resource": name, "Events":
 * [...]}`) or a `blacklist` (a JSON list of names), each a string holding JSON.
 *
 * A whitelist keeps the table entries it names, with its events; a blacklist keeps every
 * table entry it does not name, with the default events. A bad entry is skipped with a
 * warning naming it.
 *
 * A `tier-config` beside them (a string holding a JSON object with `Depth`, `Full`,
 * `Shallow`, `Mode`, `EnabledInfra` and `DisabledInfra`, keys in any case) sets the depth of
 * each type (see [method@MeshSync.WatchConfig.get_depth]). One that cannot be read is
 * ignored with one warning naming the fault: every type is then watched in full.
 *
 * A resource without a usable watch list is an error; upstream then falls back to
 * [ctor@MeshSync.WatchConfig.new_builtin_table].
 *
 * Returns: (transfer full): a new configuration, or %NULL on error
 */
MeshSyncWatchConfig *
meshsync_watch_config_new_from_resource(const gchar *json, gssize length, GError **error)
{
	g_autoptr(JsonParser) parser = json_parser_new();
	g_autoptr(GError) parse_error = NULL;

	g_return_val_if_fail(json != NULL, NULL);

	if (!json_parser_load_from_data(parser, json, length, &parse_error)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("MeshSync resource: not valid JSON: %s"), parse_error->message);
		return NULL;
	}
	return meshsync_watch_config_new_from_cr_node(json_parser_get_root(parser),
	                                              "MeshSync resource", error);
}

/**
 * meshsync_watch_config_new_from_file:
 * @path: a YAML or JSON file
 * @error: return location for a #GError
 *
 * Reads a watch configuration for use outside Kubernetes. The file holds either a MeshSync
 * custom resource (`kind: MeshSync`), or a mapping with a `whitelist` (a list of mappings
 * with `resource` and `events`) or a `blacklist` (a list of names):
 *
 * ```yaml
 * whitelist:
 *   - resource: pods.v1.
 *     events: [ADDED, MODIFIED, DELETED]
 *   - resource: deployments.v1.apps
 *     events: [ADDED, DELETED]
 * tier-config:
 *   depth: shallow
 *   full: [deployments.v1.apps]
 * ```
 *
 * The `tier-config` is optional, a mapping or a string holding JSON, read as in
 * [ctor@MeshSync.WatchConfig.new_from_resource].
 *
 * Returns: (transfer full): a new configuration, or %NULL on error
 */
MeshSyncWatchConfig *
meshsync_watch_config_new_from_file(const gchar *path, GError **error)
{
	g_autofree gchar *contents = NULL;
	g_autoptr(JsonNode) root = NULL;
	gsize length = 0;
	JsonObject *object;
	JsonNode *kind;

	g_return_val_if_fail(path != NULL, NULL);

	if (!g_file_get_contents(path, &contents, &length, error)) {
		g_prefix_error(error, _("watch configuration: "));
		return NULL;
	}
	root = msd_yaml_parse_document(contents, length, path, error);
	if (root == NULL)
		return NULL;
	if (!JSON_NODE_HOLDS_OBJECT(root)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: expected a mapping with a whitelist or a blacklist"), path);
		return NULL;
	}
	object = json_node_get_object(root);
	kind = json_object_get_member(object, "kind");
	/* any YAML may be here: json-glib's string getter warns on a kind that is a mapping */
	if (kind != NULL && json_node_get_value_type(kind) == G_TYPE_STRING &&
	    g_strcmp0(json_node_get_string(kind), "MeshSync") == 0)
		return meshsync_watch_config_new_from_cr_node(root, path, error);
	return meshsync_watch_config_new_from_lists(json_object_get_member(object, "whitelist"),
	                                            json_object_get_member(object, "blacklist"),
	                                            json_object_get_member(object, "tier-config"),
	                                            path, error);
}

/**
 * meshsync_watch_config_get_names:
 * @self: a #MeshSyncWatchConfig
 * @stage: the stage
 *
 * Lists the watched names of one stage in registration order, CustomResourceDefinition
 * entries included. The resource filter is not applied; see
 * [method@MeshSync.WatchConfig.accepts_resource].
 *
 * Returns: (transfer full) (array zero-terminated=1): the names
 */
gchar **
meshsync_watch_config_get_names(MeshSyncWatchConfig *self, MeshSyncWatchStage stage)
{
	g_autoptr(GStrvBuilder) builder = g_strv_builder_new();

	g_return_val_if_fail(MESHSYNC_IS_WATCH_CONFIG(self), NULL);

	for (guint i = 0; i < self->entries->len; i++) {
		MeshSyncWatchEntry *entry = g_ptr_array_index(self->entries, i);

		if (entry->stage == stage)
			g_strv_builder_add(builder, entry->name);
	}
	return g_strv_builder_end(builder);
}

/**
 * meshsync_watch_config_get_events:
 * @self: a #MeshSyncWatchConfig
 * @name: a watched name, such as `pods.v1.`
 *
 * Gets the event types published for @name, as configured (verbatim strings: an entry
 * listing `DELETE` never matches `DELETED`, as upstream).
 *
 * Returns: (transfer none) (array zero-terminated=1) (nullable): the events, or %NULL when
 *   @name is not watched
 */
const gchar *const *
meshsync_watch_config_get_events(MeshSyncWatchConfig *self, const gchar *name)
{
	MeshSyncWatchEntry *entry;

	g_return_val_if_fail(MESHSYNC_IS_WATCH_CONFIG(self), NULL);

	entry = meshsync_watch_config_find(self, name, NULL);
	return entry != NULL ? (const gchar *const *)entry->events : NULL;
}

/**
 * meshsync_watch_config_wants_event:
 * @self: a #MeshSyncWatchConfig
 * @name: a watched name, such as `pods.v1.`
 * @event_type: `ADDED`, `MODIFIED` or `DELETED`
 *
 * Tells whether events of @event_type on @name are published.
 *
 * Returns: %TRUE if they are
 */
gboolean
meshsync_watch_config_wants_event(MeshSyncWatchConfig *self,
                                  const gchar *name,
                                  const gchar *event_type)
{
	const gchar *const *events = meshsync_watch_config_get_events(self, name);

	return events != NULL && g_strv_contains(events, event_type);
}

/**
 * meshsync_watch_config_get_depth:
 * @self: a #MeshSyncWatchConfig
 * @name: a watched name, such as `pods.v1.`
 *
 * Gets how deep @name is watched: the tier-config's `Full` or `Shallow` list when one names
 * it, else its `Depth`. Without a tier-config, every type is watched in full.
 *
 * Returns: the depth
 */
MeshSyncWatchDepth
meshsync_watch_config_get_depth(MeshSyncWatchConfig *self, const gchar *name)
{
	gpointer depth;

	g_return_val_if_fail(MESHSYNC_IS_WATCH_CONFIG(self), MESHSYNC_WATCH_DEPTH_FULL);
	g_return_val_if_fail(name != NULL, MESHSYNC_WATCH_DEPTH_FULL);

	if (self->depths != NULL && g_hash_table_lookup_extended(self->depths, name, NULL, &depth))
		return (MeshSyncWatchDepth)GPOINTER_TO_INT(depth);
	return self->depth;
}

/**
 * meshsync_watch_config_get_mode:
 * @self: a #MeshSyncWatchConfig
 *
 * Gets the tier-config's `Mode`, as written. MeshSync does not interpret it; it is kept for
 * consumers of fd1's `DiscoveryConfig`.
 *
 * Returns: (nullable): the mode, or %NULL when the tier-config has none
 */
const gchar *
meshsync_watch_config_get_mode(MeshSyncWatchConfig *self)
{
	g_return_val_if_fail(MESHSYNC_IS_WATCH_CONFIG(self), NULL);

	return self->mode;
}

/**
 * meshsync_watch_config_get_enabled_infra:
 * @self: a #MeshSyncWatchConfig
 *
 * Gets the tier-config's `EnabledInfra`: the infrastructures whose deeper discovery is
 * wanted.
 *
 * Returns: (transfer none) (array zero-terminated=1): the names, empty when unset
 */
const gchar *const *
meshsync_watch_config_get_enabled_infra(MeshSyncWatchConfig *self)
{
	g_return_val_if_fail(MESHSYNC_IS_WATCH_CONFIG(self), NULL);

	return (const gchar *const *)self->enabled_infra;
}

/**
 * meshsync_watch_config_get_disabled_infra:
 * @self: a #MeshSyncWatchConfig
 *
 * Gets the tier-config's `DisabledInfra`: the infrastructures never looked into deeper, even
 * when detected.
 *
 * Returns: (transfer none) (array zero-terminated=1): the names, empty when unset
 */
const gchar *const *
meshsync_watch_config_get_disabled_infra(MeshSyncWatchConfig *self)
{
	g_return_val_if_fail(MESHSYNC_IS_WATCH_CONFIG(self), NULL);

	return (const gchar *const *)self->disabled_infra;
}

/**
 * meshsync_watch_config_add_crd:
 * @self: a #MeshSyncWatchConfig
 * @name: the name derived from a CustomResourceDefinition, `<plural>.<version>.<group>`
 *
 * Adds a custom resource type to the global stage with the default events, as upstream does
 * when a CustomResourceDefinition appears while the MeshSync custom resource exists.
 *
 * Returns: %TRUE if the configuration changed (the name was not watched yet)
 */
gboolean
meshsync_watch_config_add_crd(MeshSyncWatchConfig *self, const gchar *name)
{
	g_return_val_if_fail(MESHSYNC_IS_WATCH_CONFIG(self), FALSE);
	g_return_val_if_fail(name != NULL, FALSE);

	if (meshsync_watch_config_find(self, name, NULL) != NULL)
		return FALSE;
	meshsync_watch_config_append(self, name, MESHSYNC_WATCH_STAGE_GLOBAL, default_events, TRUE);
	return TRUE;
}

/**
 * meshsync_watch_config_remove_crd:
 * @self: a #MeshSyncWatchConfig
 * @name: a name added by [method@MeshSync.WatchConfig.add_crd]
 *
 * Removes a custom resource type whose CustomResourceDefinition was deleted. Entries of the
 * built-in configuration are never removed this way.
 *
 * Returns: %TRUE if the configuration changed
 */
gboolean
meshsync_watch_config_remove_crd(MeshSyncWatchConfig *self, const gchar *name)
{
	MeshSyncWatchEntry *entry;
	guint index = 0;

	g_return_val_if_fail(MESHSYNC_IS_WATCH_CONFIG(self), FALSE);

	entry = meshsync_watch_config_find(self, name, &index);
	if (entry == NULL || !entry->from_crd)
		return FALSE;
	g_ptr_array_remove_index(self->entries, index);
	return TRUE;
}

void
meshsync_watch_config_get_settings(MeshSyncWatchConfig *self,
                                   const gchar *name,
                                   MeshSyncWatchSettings *settings)
{
	MeshSyncWatchEntry *entry;

	g_return_if_fail(MESHSYNC_IS_WATCH_CONFIG(self));
	g_return_if_fail(settings != NULL);

	entry = meshsync_watch_config_find(self, name, NULL);
	settings->watched = entry != NULL;
	settings->events = entry != NULL ? (const gchar *const *)entry->events : NULL;
	settings->depth = meshsync_watch_config_get_depth(self, name);
}

static gboolean
meshsync_watch_events_equal(const gchar *const *a, const gchar *const *b)
{
	guint n = a != NULL ? g_strv_length((GStrv)a) : 0;

	/* a set: the order an entry lists its events in means nothing */
	if (n != (b != NULL ? g_strv_length((GStrv)b) : 0))
		return FALSE;
	for (guint i = 0; i < n; i++) {
		if (!g_strv_contains(b, a[i]))
			return FALSE;
	}
	return TRUE;
}

MeshSyncWatchChangeKind
meshsync_watch_settings_compare(const MeshSyncWatchSettings *before,
                                const MeshSyncWatchSettings *after)
{
	if (!before->watched && !after->watched)
		return MESHSYNC_WATCH_CHANGE_NONE;
	if (!before->watched)
		return MESHSYNC_WATCH_CHANGE_ADDED;
	if (!after->watched)
		return MESHSYNC_WATCH_CHANGE_REMOVED;
	/* settings that shape the informer itself go here, as MESHSYNC_WATCH_CHANGE_REPLACED */
	if (before->depth != after->depth)
		return MESHSYNC_WATCH_CHANGE_REPLACED;
	if (!meshsync_watch_events_equal(before->events, after->events))
		return MESHSYNC_WATCH_CHANGE_EVENTS;
	return MESHSYNC_WATCH_CHANGE_NONE;
}

void
meshsync_watch_change_free(MeshSyncWatchChange *change)
{
	g_free(change->name);
	g_free(change);
}

static void
meshsync_watch_diff_one(GPtrArray *changes,
                        MeshSyncWatchConfig *before,
                        MeshSyncWatchConfig *after,
                        const gchar *name)
{
	MeshSyncWatchSettings old_settings;
	MeshSyncWatchSettings new_settings;
	MeshSyncWatchChangeKind kind;
	MeshSyncWatchChange *change;

	meshsync_watch_config_get_settings(before, name, &old_settings);
	meshsync_watch_config_get_settings(after, name, &new_settings);
	kind = meshsync_watch_settings_compare(&old_settings, &new_settings);
	if (kind == MESHSYNC_WATCH_CHANGE_NONE)
		return;
	change = g_new0(MeshSyncWatchChange, 1);
	change->name = g_strdup(name);
	change->kind = kind;
	g_ptr_array_add(changes, change);
}

GPtrArray *
meshsync_watch_config_diff(MeshSyncWatchConfig *before, MeshSyncWatchConfig *after)
{
	GPtrArray *changes =
	        g_ptr_array_new_with_free_func((GDestroyNotify)meshsync_watch_change_free);

	g_return_val_if_fail(MESHSYNC_IS_WATCH_CONFIG(before), changes);
	g_return_val_if_fail(MESHSYNC_IS_WATCH_CONFIG(after), changes);

	for (guint i = 0; i < after->entries->len; i++) {
		MeshSyncWatchEntry *entry = g_ptr_array_index(after->entries, i);

		meshsync_watch_diff_one(changes, before, after, entry->name);
	}
	for (guint i = 0; i < before->entries->len; i++) {
		MeshSyncWatchEntry *entry = g_ptr_array_index(before->entries, i);

		if (meshsync_watch_config_find(after, entry->name, NULL) == NULL)
			meshsync_watch_diff_one(changes, before, after, entry->name);
	}
	return changes;
}

static GHashTable *
meshsync_watch_set_copy(GHashTable *set)
{
	GHashTable *copy;
	GHashTableIter iter;
	gpointer key;

	if (set == NULL)
		return NULL;
	copy = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_hash_table_iter_init(&iter, set);
	while (g_hash_table_iter_next(&iter, &key, NULL))
		g_hash_table_add(copy, g_strdup(key));
	return copy;
}

/* The tier-config of @source in place of @self's. */
static void
meshsync_watch_config_copy_tiers(MeshSyncWatchConfig *self, MeshSyncWatchConfig *source)
{
	GHashTableIter iter;
	gpointer key;
	gpointer value;

	g_clear_pointer(&self->depths, g_hash_table_unref);
	if (source->depths != NULL) {
		self->depths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
		g_hash_table_iter_init(&iter, source->depths);
		while (g_hash_table_iter_next(&iter, &key, &value))
			g_hash_table_insert(self->depths, g_strdup(key), value);
	}
	self->depth = source->depth;
	g_free(self->mode);
	self->mode = g_strdup(source->mode);
	g_strfreev(self->enabled_infra);
	self->enabled_infra = g_strdupv(source->enabled_infra);
	g_strfreev(self->disabled_infra);
	self->disabled_infra = g_strdupv(source->disabled_infra);
}

MeshSyncWatchConfig *
meshsync_watch_config_copy(MeshSyncWatchConfig *self)
{
	MeshSyncWatchConfig *copy;

	g_return_val_if_fail(MESHSYNC_IS_WATCH_CONFIG(self), NULL);

	copy = g_object_new(MESHSYNC_TYPE_WATCH_CONFIG, NULL);
	for (guint i = 0; i < self->entries->len; i++) {
		MeshSyncWatchEntry *entry = g_ptr_array_index(self->entries, i);

		meshsync_watch_config_append(copy, entry->name, entry->stage,
		                             (const gchar *const *)entry->events, entry->from_crd);
	}
	copy->resources = meshsync_watch_set_copy(self->resources);
	copy->namespaces = meshsync_watch_set_copy(self->namespaces);
	meshsync_watch_config_copy_tiers(copy, self);
	return copy;
}

void
meshsync_watch_config_replace_entries(MeshSyncWatchConfig *self,
                                      MeshSyncWatchConfig *source,
                                      gboolean keep_crds)
{
	g_autoptr(GPtrArray) old = NULL;

	g_return_if_fail(MESHSYNC_IS_WATCH_CONFIG(self));
	g_return_if_fail(MESHSYNC_IS_WATCH_CONFIG(source));

	meshsync_watch_config_copy_tiers(self, source);
	old = g_steal_pointer(&self->entries);
	self->entries = g_ptr_array_new_with_free_func((GDestroyNotify)meshsync_watch_entry_free);
	for (guint i = 0; i < source->entries->len; i++) {
		MeshSyncWatchEntry *entry = g_ptr_array_index(source->entries, i);

		meshsync_watch_config_append(self, entry->name, entry->stage,
		                             (const gchar *const *)entry->events, entry->from_crd);
	}
	for (guint i = 0; keep_crds && i < old->len; i++) {
		MeshSyncWatchEntry *entry = g_ptr_array_index(old, i);

		if (entry->from_crd && meshsync_watch_config_find(self, entry->name, NULL) == NULL)
			meshsync_watch_config_append(self, entry->name, entry->stage,
			                             (const gchar *const *)entry->events, TRUE);
	}
}

/* Elements are taken as they are (upstream does not trim them once it has split its flag),
 * and an empty element is kept: it stands for the cluster scope. */
static GHashTable *
meshsync_watch_list_set(const gchar *const *items, gboolean with_plurals)
{
	GHashTable *set;

	if (items == NULL || items[0] == NULL)
		return NULL;
	set = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	for (guint i = 0; items[i] != NULL; i++) {
		if (with_plurals) {
			gchar *lower = g_ascii_strdown(items[i], -1);

			g_hash_table_add(set, meshsync_pluralise(lower));
			g_hash_table_add(set, lower);
		} else {
			g_hash_table_add(set, g_strdup(items[i]));
		}
	}
	return set;
}

/**
 * meshsync_watch_config_set_output_resources:
 * @self: a #MeshSyncWatchConfig
 * @resources: (array zero-terminated=1) (nullable): resource names, the elements of
 *   `-outputResources` (`pod`, `deployment`, ...)
 *
 * Restricts the informers to the named resources. Each element is lower-cased and matched
 * together with its plural (`pod` also allows `pods`) against the first part of a watched
 * name. %NULL or an empty array lifts the restriction.
 */
void
meshsync_watch_config_set_output_resources(MeshSyncWatchConfig *self, const gchar *const *resources)
{
	g_return_if_fail(MESHSYNC_IS_WATCH_CONFIG(self));

	g_clear_pointer(&self->resources, g_hash_table_unref);
	self->resources = meshsync_watch_list_set(resources, TRUE);
}

/**
 * meshsync_watch_config_set_output_namespaces:
 * @self: a #MeshSyncWatchConfig
 * @namespaces: (array zero-terminated=1) (nullable): namespaces, the elements of
 *   `-outputNamespaces`
 *
 * Restricts the published events to objects in the named namespaces. Cluster-scoped objects
 * have the empty namespace, so they pass only if an element is empty (upstream's trailing
 * comma). Elements are matched as they are. %NULL or an empty array lifts the restriction.
 */
void
meshsync_watch_config_set_output_namespaces(MeshSyncWatchConfig *self,
                                            const gchar *const *namespaces)
{
	g_return_if_fail(MESHSYNC_IS_WATCH_CONFIG(self));

	g_clear_pointer(&self->namespaces, g_hash_table_unref);
	self->namespaces = meshsync_watch_list_set(namespaces, FALSE);
}

/**
 * meshsync_watch_config_split_list:
 * @list: (nullable): a list flag's value, such as `-outputNamespaces`'s
 *
 * Splits a list as upstream's flags do: the whole value is trimmed, then split on commas;
 * the elements are not trimmed and empty ones are kept (`"a,"` is `a` and the cluster
 * scope).
 *
 * Returns: (transfer full) (nullable): the elements, or %NULL for an empty list
 */
gchar **
meshsync_watch_config_split_list(const gchar *list)
{
	g_autofree gchar *trimmed = NULL;

	if (list == NULL)
		return NULL;
	trimmed = g_strstrip(g_strdup(list));
	if (*trimmed == '\0')
		return NULL;
	return g_strsplit(trimmed, ",", -1);
}

/**
 * meshsync_watch_config_accepts_resource:
 * @self: a #MeshSyncWatchConfig
 * @name: a watched name, such as `pods.v1.`
 *
 * Tells whether @name passes the resource filter, i.e. whether it gets an informer.
 *
 * Returns: %TRUE if it does
 */
gboolean
meshsync_watch_config_accepts_resource(MeshSyncWatchConfig *self, const gchar *name)
{
	const gchar *dot;
	g_autofree gchar *first = NULL;

	g_return_val_if_fail(MESHSYNC_IS_WATCH_CONFIG(self), FALSE);

	if (self->resources == NULL)
		return TRUE;
	dot = strchr(name, '.');
	first = dot != NULL ? g_strndup(name, dot - name) : g_strdup(name);
	return g_hash_table_contains(self->resources, first);
}

/**
 * meshsync_watch_config_accepts_namespace:
 * @self: a #MeshSyncWatchConfig
 * @namespace_: (nullable): an object's namespace; %NULL for cluster-scoped objects
 *
 * Tells whether an object in @namespace_ passes the namespace filter.
 *
 * Returns: %TRUE if it does
 */
gboolean
meshsync_watch_config_accepts_namespace(MeshSyncWatchConfig *self, const gchar *namespace_)
{
	g_return_val_if_fail(MESHSYNC_IS_WATCH_CONFIG(self), FALSE);

	if (self->namespaces == NULL)
		return TRUE;
	return g_hash_table_contains(self->namespaces, namespace_ != NULL ? namespace_ : "");
}

/**
 * meshsync_watch_name_parse:
 * @name: a watched name, `<resource>.<version>.<group>`
 * @resource: (out) (optional): the resource, such as `pods`
 * @version: (out) (optional): the version, such as `v1`
 * @group: (out) (optional): the group, empty for the core group; it may hold dots
 *
 * Splits a watched name as upstream does: a name needs at least two dots, and everything
 * after the second dot is the group (`ingresses.v1.networking.k8s.io`).
 *
 * Returns: %TRUE if @name could be split
 */
gboolean
meshsync_watch_name_parse(const gchar *name, gchar **resource, gchar **version, gchar **group)
{
	g_auto(GStrv) parts = NULL;

	g_return_val_if_fail(name != NULL, FALSE);

	parts = g_strsplit(name, ".", 3);
	if (g_strv_length(parts) < 3)
		return FALSE;
	if (resource != NULL)
		*resource = g_strdup(parts[0]);
	if (version != NULL)
		*version = g_strdup(parts[1]);
	if (group != NULL)
		*group = g_strdup(parts[2]);
	return TRUE;
}

/**
 * meshsync_pluralise:
 * @word: a lower-case resource name
 *
 * Makes the plural of a resource name the way upstream MeshSync does: `es` after a final
 * `s`, `x`, `z`, `ch` or `sh`, else `s` (`ingress` → `ingresses`, `quiz` → `quizes`).
 *
 * Returns: (transfer full): the plural
 */
gchar *
meshsync_pluralise(const gchar *word)
{
	g_return_val_if_fail(word != NULL, NULL);

	if (g_str_has_suffix(word, "s") || g_str_has_suffix(word, "x") ||
	    g_str_has_suffix(word, "z") || g_str_has_suffix(word, "ch") ||
	    g_str_has_suffix(word, "sh"))
		return g_strconcat(word, "es", NULL);
	return g_strconcat(word, "s", NULL);
}
