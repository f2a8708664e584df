/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncDiscovery"

#include "config.h"

#include "meshsync-api-resource.h"

/**
 * MeshSyncApiResource:
 *
 * One resource type served by the API server, as discovery found it.
 *
 * A resource type is named by its group, version and plural (`apps`, `v1`, `deployments`;
 * the core group is the empty string). It also records the kind of its objects, whether they
 * live in namespaces, the verbs the server allows and the subresources it offers (`log`,
 * `exec`, `status`, ...). Instances are immutable: every property is construct-only.
 */
struct _MeshSyncApiResource {
	GObject parent_instance;

	gchar *group;         /* (owned) (not nullable): "" for the core group */
	gchar *version;       /* (owned) */
	gchar *group_version; /* (owned): "v1" or "apps/v1" */
	gchar *kind;          /* (owned) */
	gchar *plural;        /* (owned) */
	gboolean namespaced;
	GStrv verbs;        /* (owned) (not nullable) */
	GStrv subresources; /* (owned) (not nullable) */
};

G_DEFINE_FINAL_TYPE(MeshSyncApiResource, meshsync_api_resource, G_TYPE_OBJECT)

enum {
	PROP_0,
	PROP_GROUP,
	PROP_VERSION,
	PROP_GROUP_VERSION,
	PROP_KIND,
	PROP_PLURAL,
	PROP_NAMESPACED,
	PROP_VERBS,
	PROP_SUBRESOURCES,
	PROP_WATCHABLE,
	N_PROPS
};

static GParamSpec *props[N_PROPS];

static GStrv
meshsync_api_resource_copy_strv(const gchar *const *strv)
{
	if (strv == NULL)
		return g_new0(gchar *, 1);
	return g_strdupv((gchar **)strv);
}

static void
meshsync_api_resource_update_group_version(MeshSyncApiResource *self)
{
	g_free(self->group_version);
	if (self->group == NULL || self->group[0] == '\0')
		self->group_version = g_strdup(self->version);
	else
		self->group_version = g_strdup_printf("%s/%s", self->group, self->version);
}

static void
meshsync_api_resource_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
	MeshSyncApiResource *self = MESHSYNC_API_RESOURCE(object);

	switch (prop_id) {
	case PROP_GROUP:
		g_value_set_string(value, self->group);
		break;
	case PROP_VERSION:
		g_value_set_string(value, self->version);
		break;
	case PROP_GROUP_VERSION:
		g_value_set_string(value, self->group_version);
		break;
	case PROP_KIND:
		g_value_set_string(value, self->kind);
		break;
	case PROP_PLURAL:
		g_value_set_string(value, self->plural);
		break;
	case PROP_NAMESPACED:
		g_value_set_boolean(value, self->namespaced);
		break;
	case PROP_VERBS:
		g_value_set_boxed(value, self->verbs);
		break;
	case PROP_SUBRESOURCES:
		g_value_set_boxed(value, self->subresources);
		break;
	case PROP_WATCHABLE:
		g_value_set_boolean(value, meshsync_api_resource_get_watchable(self));
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
	}
}

static void
meshsync_api_resource_set_property(GObject *object,
                                   guint prop_id,
                                   const GValue *value,
                                   GParamSpec *pspec)
{
	MeshSyncApiResource *self = MESHSYNC_API_RESOURCE(object);

	switch (prop_id) {
	case PROP_GROUP:
		g_free(self->group);
		self->group = g_strdup(g_value_get_string(value) != NULL ? g_value_get_string(value)
		                                                         : "");
		break;
	case PROP_VERSION:
		g_free(self->version);
		self->version = g_value_dup_string(value);
		break;
	case PROP_KIND:
		g_free(self->kind);
		self->kind = g_value_dup_string(value);
		break;
	case PROP_PLURAL:
		g_free(self->plural);
		self->plural = g_value_dup_string(value);
		break;
	case PROP_NAMESPACED:
		self->namespaced = g_value_get_boolean(value);
		break;
	case PROP_VERBS:
		g_strfreev(self->verbs);
		self->verbs = meshsync_api_resource_copy_strv(g_value_get_boxed(value));
		break;
	case PROP_SUBRESOURCES:
		g_strfreev(self->subresources);
		self->subresources = meshsync_api_resource_copy_strv(g_value_get_boxed(value));
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
	}
}

static void
meshsync_api_resource_constructed(GObject *object)
{
	MeshSyncApiResource *self = MESHSYNC_API_RESOURCE(object);

	G_OBJECT_CLASS(meshsync_api_resource_parent_class)->constructed(object);

	/* g_object_new() without some properties must still give a usable object */
	if (self->group == NULL)
		self->group = g_strdup("");
	if (self->version == NULL)
		self->version = g_strdup("");
	if (self->kind == NULL)
		self->kind = g_strdup("");
	if (self->plural == NULL)
		self->plural = g_strdup("");
	if (self->verbs == NULL)
		self->verbs = g_new0(gchar *, 1);
	if (self->subresources == NULL)
		self->subresources = g_new0(gchar *, 1);
	meshsync_api_resource_update_group_version(self);
}

static void
meshsync_api_resource_finalize(GObject *object)
{
	MeshSyncApiResource *self = MESHSYNC_API_RESOURCE(object);

	g_free(self->group);
	g_free(self->version);
	g_free(self->group_version);
	g_free(self->kind);
	g_free(self->plural);
	g_strfreev(self->verbs);
	g_strfreev(self->subresources);

	G_OBJECT_CLASS(meshsync_api_resource_parent_class)->finalize(object);
}

static void
meshsync_api_resource_class_init(MeshSyncApiResourceClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	GParamFlags construct_flags =
	        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;
	GParamFlags read_flags = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

	object_class->get_property = meshsync_api_resource_get_property;
	object_class->set_property = meshsync_api_resource_set_property;
	object_class->constructed = meshsync_api_resource_constructed;
	object_class->finalize = meshsync_api_resource_finalize;

	/**
	 * MeshSyncApiResource:group: (getter get_group)
	 *
	 * The API group, such as `apps`; the empty string for the core group.
	 */
	props[PROP_GROUP] = g_param_spec_string("group", NULL, NULL, "", construct_flags);

	/**
	 * MeshSyncApiResource:version: (getter get_version)
	 *
	 * The version within the group, such as `v1`.
	 */
	props[PROP_VERSION] = g_param_spec_string("version", NULL, NULL, NULL, construct_flags);

	/**
	 * MeshSyncApiResource:group-version: (getter get_group_version)
	 *
	 * The `apiVersion` of the objects: `v1` for the core group, else `group/version`.
	 */
	props[PROP_GROUP_VERSION] =
	        g_param_spec_string("group-version", NULL, NULL, NULL, read_flags);

	/**
	 * MeshSyncApiResource:kind: (getter get_kind)
	 *
	 * The kind of the objects, such as `Deployment`.
	 */
	props[PROP_KIND] = g_param_spec_string("kind", NULL, NULL, NULL, construct_flags);

	/**
	 * MeshSyncApiResource:plural: (getter get_plural)
	 *
	 * The plural resource name used in URLs, such as `deployments`.
	 */
	props[PROP_PLURAL] = g_param_spec_string("plural", NULL, NULL, NULL, construct_flags);

	/**
	 * MeshSyncApiResource:namespaced: (getter get_namespaced)
	 *
	 * Whether the objects live in namespaces.
	 */
	props[PROP_NAMESPACED] =
	        g_param_spec_boolean("namespaced", NULL, NULL, FALSE, construct_flags);

	/**
	 * MeshSyncApiResource:verbs: (getter get_verbs)
	 *
	 * The verbs the server allows on the resource, such as `get`, `list` and `watch`.
	 */
	props[PROP_VERBS] = g_param_spec_boxed("verbs", NULL, NULL, G_TYPE_STRV, construct_flags);

	/**
	 * MeshSyncApiResource:subresources: (getter get_subresources)
	 *
	 * The subresources the server offers, such as `log` and `status`.
	 */
	props[PROP_SUBRESOURCES] =
	        g_param_spec_boxed("subresources", NULL, NULL, G_TYPE_STRV, construct_flags);

	/**
	 * MeshSyncApiResource:watchable: (getter get_watchable)
	 *
	 * Whether an informer can follow the resource: its verbs include both `list` and
	 * `watch`.
	 */
	props[PROP_WATCHABLE] = g_param_spec_boolean("watchable", NULL, NULL, FALSE, read_flags);

	g_object_class_install_properties(object_class, N_PROPS, props);
}

static void
meshsync_api_resource_init(MeshSyncApiResource *self)
{
}

/**
 * meshsync_api_resource_new:
 * @group: (nullable): the API group, `NULL` or `""` for the core group
 * @version: the version within the group, such as `v1`
 * @kind: the kind of the objects, such as `Pod`
 * @plural: the plural resource name, such as `pods`
 * @namespaced: whether the objects live in namespaces
 * @verbs: (array zero-terminated=1) (nullable): the allowed verbs
 * @subresources: (array zero-terminated=1) (nullable): the subresource names, such as `log`
 *
 * Creates the description of one resource type.
 *
 * Discovery creates these from the server's documents; scripts may create their own, for
 * instance to test a stage without a server.
 *
 * Returns: (transfer full): a new #MeshSyncApiResource
 */
MeshSyncApiResource *
meshsync_api_resource_new(const gchar *group,
                          const gchar *version,
                          const gchar *kind,
                          const gchar *plural,
                          gboolean namespaced,
                          const gchar *const *verbs,
                          const gchar *const *subresources)
{
	g_return_val_if_fail(version != NULL, NULL);
	g_return_val_if_fail(kind != NULL, NULL);
	g_return_val_if_fail(plural != NULL, NULL);

	return g_object_new(MESHSYNC_TYPE_API_RESOURCE, "group", group != NULL ? group : "",
	                    "version", version, "kind", kind, "plural", plural, "namespaced",
	                    namespaced, "verbs", verbs, "subresources", subresources, NULL);
}

/**
 * meshsync_api_resource_get_group: (get-property group)
 * @self: a #MeshSyncApiResource
 *
 * Gets the API group.
 *
 * The core group (pods, namespaces, services, ...) is the empty string.
 *
 * Returns: the group, such as `apps`
 */
const gchar *
meshsync_api_resource_get_group(MeshSyncApiResource *self)
{
	g_return_val_if_fail(MESHSYNC_IS_API_RESOURCE(self), NULL);
	return self->group;
}

/**
 * meshsync_api_resource_get_version: (get-property version)
 * @self: a #MeshSyncApiResource
 *
 * Gets the version within the group.
 *
 * This is the version the resource was discovered in, not necessarily the group's
 * preferred one.
 *
 * Returns: the version, such as `v1`
 */
const gchar *
meshsync_api_resource_get_version(MeshSyncApiResource *self)
{
	g_return_val_if_fail(MESHSYNC_IS_API_RESOURCE(self), NULL);
	return self->version;
}

/**
 * meshsync_api_resource_get_group_version: (get-property group-version)
 * @self: a #MeshSyncApiResource
 *
 * Gets the `apiVersion` of the resource's objects.
 *
 * This is the version alone for the core group (`v1`) and `group/version` otherwise
 * (`apps/v1`), as in the objects' `apiVersion` field.
 *
 * Returns: the group version
 */
const gchar *
meshsync_api_resource_get_group_version(MeshSyncApiResource *self)
{
	g_return_val_if_fail(MESHSYNC_IS_API_RESOURCE(self), NULL);
	return self->group_version;
}

/**
 * meshsync_api_resource_get_kind: (get-property kind)
 * @self: a #MeshSyncApiResource
 *
 * Gets the kind of the resource's objects.
 *
 * The kind is the CamelCase type name found in each object's `kind` field.
 *
 * Returns: the kind, such as `Deployment`
 */
const gchar *
meshsync_api_resource_get_kind(MeshSyncApiResource *self)
{
	g_return_val_if_fail(MESHSYNC_IS_API_RESOURCE(self), NULL);
	return self->kind;
}

/**
 * meshsync_api_resource_get_plural: (get-property plural)
 * @self: a #MeshSyncApiResource
 *
 * Gets the plural resource name.
 *
 * This is the lower-case name used in URL paths and in `kubectl get`.
 *
 * Returns: the plural, such as `deployments`
 */
const gchar *
meshsync_api_resource_get_plural(MeshSyncApiResource *self)
{
	g_return_val_if_fail(MESHSYNC_IS_API_RESOURCE(self), NULL);
	return self->plural;
}

/**
 * meshsync_api_resource_get_namespaced: (get-property namespaced)
 * @self: a #MeshSyncApiResource
 *
 * Gets whether the resource's objects live in namespaces.
 *
 * Cluster-scoped resources such as namespaces and nodes return %FALSE.
 *
 * Returns: %TRUE for a namespaced resource
 */
gboolean
meshsync_api_resource_get_namespaced(MeshSyncApiResource *self)
{
	g_return_val_if_fail(MESHSYNC_IS_API_RESOURCE(self), FALSE);
	return self->namespaced;
}

/**
 * meshsync_api_resource_get_verbs: (get-property verbs)
 * @self: a #MeshSyncApiResource
 *
 * Gets the verbs the server allows on the resource.
 *
 * The list comes from discovery as is, in the server's order.
 *
 * Returns: (transfer none) (array zero-terminated=1): the verbs
 */
const gchar *const *
meshsync_api_resource_get_verbs(MeshSyncApiResource *self)
{
	g_return_val_if_fail(MESHSYNC_IS_API_RESOURCE(self), NULL);
	return (const gchar *const *)self->verbs;
}

/**
 * meshsync_api_resource_get_subresources: (get-property subresources)
 * @self: a #MeshSyncApiResource
 *
 * Gets the subresources the server offers on the resource.
 *
 * These are the parts after the slash of discovery entries such as `pods/log`.
 *
 * Returns: (transfer none) (array zero-terminated=1): the subresource names
 */
const gchar *const *
meshsync_api_resource_get_subresources(MeshSyncApiResource *self)
{
	g_return_val_if_fail(MESHSYNC_IS_API_RESOURCE(self), NULL);
	return (const gchar *const *)self->subresources;
}

/**
 * meshsync_api_resource_has_verb:
 * @self: a #MeshSyncApiResource
 * @verb: a verb, such as `watch`
 *
 * Checks whether the server allows a verb on the resource.
 *
 * The comparison is exact, as the API server's authorization is.
 *
 * Returns: %TRUE if @verb is among the resource's verbs
 */
gboolean
meshsync_api_resource_has_verb(MeshSyncApiResource *self, const gchar *verb)
{
	g_return_val_if_fail(MESHSYNC_IS_API_RESOURCE(self), FALSE);
	g_return_val_if_fail(verb != NULL, FALSE);
	return g_strv_contains((const gchar *const *)self->verbs, verb);
}

/**
 * meshsync_api_resource_get_watchable: (get-property watchable)
 * @self: a #MeshSyncApiResource
 *
 * Gets whether an informer can follow the resource.
 *
 * That needs both the `list` and the `watch` verb; resources without them (such as
 * `bindings` or `tokenreviews`) are skipped by the informers.
 *
 * Returns: %TRUE if the resource can be listed and watched
 */
gboolean
meshsync_api_resource_get_watchable(MeshSyncApiResource *self)
{
	g_return_val_if_fail(MESHSYNC_IS_API_RESOURCE(self), FALSE);
	return meshsync_api_resource_has_verb(self, "list") &&
	       meshsync_api_resource_has_verb(self, "watch");
}

/**
 * meshsync_api_resource_build_path:
 * @self: a #MeshSyncApiResource
 * @namespace_: (nullable): a namespace, or %NULL for all namespaces
 *
 * Builds the URL path of the resource's collection.
 *
 * Core resources live under `/api/v1`, the others under `/apis/<group>/<version>`; a
 * namespace narrows a namespaced resource to `.../namespaces/<namespace>/<plural>` and is
 * ignored for a cluster-scoped one. The result has no query string.
 *
 * Returns: (transfer full): the path, such as `/apis/apps/v1/namespaces/shop/deployments`
 */
gchar *
meshsync_api_resource_build_path(MeshSyncApiResource *self, const gchar *namespace_)
{
	GString *path;

	g_return_val_if_fail(MESHSYNC_IS_API_RESOURCE(self), NULL);

	path = g_string_new(NULL);
	if (self->group[0] == '\0')
		g_string_append_printf(path, "/api/%s", self->version);
	else
		g_string_append_printf(path, "/apis/%s/%s", self->group, self->version);
	if (self->namespaced && namespace_ != NULL && namespace_[0] != '\0') {
		g_string_append(path, "/namespaces/");
		g_string_append_uri_escaped(path, namespace_, NULL, FALSE);
	}
	g_string_append_c(path, '/');
	g_string_append(path, self->plural);
	return g_string_free(path, FALSE);
}
