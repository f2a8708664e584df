/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncModel"

#include "config.h"

#include <string.h>

#include "meshsync-enum-types.h"
#include "meshsync-error.h"
#include "meshsync-resource.h"
#include "model/msd-model.h"
#include "meshsync-resource-private.h"
#include "model/msd-builder-signals.h"
#include "model/msd-service-endpoint.h"

/**
 * MeshSyncResource:
 *
 * One Kubernetes object in Meshery's canonical `KubernetesResource` shape.
 *
 * A resource is made from the object's JSON text with [ctor@MeshSync.Resource.new_from_json]
 * and written back in the exact byte form upstream MeshSync publishes with
 * [method@MeshSync.Resource.to_json]. It keeps the wire fields as text, not a JSON tree:
 * `spec`, `status`, `data` and friends are held as the canonical JSON text upstream puts in
 * its string fields.
 *
 * Instances are immutable once complete: at once for most objects, after the reachability
 * probe for a Service that needs one. The wire form is made once, the first time it is asked
 * for, and kept: [method@MeshSync.Resource.get_wire_bytes] hands out those very bytes, so
 * every writer of an event shares one serialization.
 */
struct _MeshSyncResource {
	GObject parent_instance;

	MsdModel model;
	MeshSyncEventType event_type;
	gchar *component_metadata;   /* (owned) (nullable): JSON text */
	MsdServiceEndpoint *pending; /* (owned) (nullable): endpoint waiting for a probe */
	GBytes *wire;                /* (owned) (nullable) (atomic): made once, on first use */
};

G_DEFINE_FINAL_TYPE(MeshSyncResource, meshsync_resource, G_TYPE_OBJECT)

enum {
	PROP_0,
	PROP_API_VERSION,
	PROP_KIND,
	PROP_NAME,
	PROP_NAMESPACE,
	PROP_UID,
	PROP_RESOURCE_VERSION,
	PROP_CLUSTER_ID,
	PROP_EVENT_TYPE,
	N_PROPS
};

static GParamSpec *props[N_PROPS];

/**
 * meshsync_event_type_to_string:
 * @event_type: an event type
 *
 * Gets the wire name of an event type.
 *
 * The names are those upstream MeshSync uses in its broker envelopes: `ADDED`, `MODIFIED` and
 * `DELETED`.
 *
 * Returns: (transfer none): the name, or `UNKNOWN` for a value outside the enumeration
 */
const gchar *
meshsync_event_type_to_string(MeshSyncEventType event_type)
{
	switch (event_type) {
	case MESHSYNC_EVENT_TYPE_ADDED:
		return "ADDED";
	case MESHSYNC_EVENT_TYPE_MODIFIED:
		return "MODIFIED";
	case MESHSYNC_EVENT_TYPE_DELETED:
		return "DELETED";
	default:
		return "UNKNOWN";
	}
}

/**
 * meshsync_event_type_from_string:
 * @str: a wire name such as `ADDED`
 * @event_type: (out) (optional): where to store the event type
 *
 * Parses the wire name of an event type.
 *
 * The comparison is exact (upper case), as on the wire.
 *
 * Returns: %TRUE if @str names an event type
 */
gboolean
meshsync_event_type_from_string(const gchar *str, MeshSyncEventType *event_type)
{
	static const MeshSyncEventType all[] = {
	        MESHSYNC_EVENT_TYPE_ADDED,
	        MESHSYNC_EVENT_TYPE_MODIFIED,
	        MESHSYNC_EVENT_TYPE_DELETED,
	};

	if (str == NULL)
		return FALSE;
	for (guint i = 0; i < G_N_ELEMENTS(all); i++) {
		if (strcmp(str, meshsync_event_type_to_string(all[i])) == 0) {
			if (event_type != NULL)
				*event_type = all[i];
			return TRUE;
		}
	}
	return FALSE;
}

static void
meshsync_resource_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
	MeshSyncResource *self = MESHSYNC_RESOURCE(object);

	switch (prop_id) {
	case PROP_API_VERSION:
		g_value_set_string(value, meshsync_resource_get_api_version(self));
		break;
	case PROP_KIND:
		g_value_set_string(value, meshsync_resource_get_kind(self));
		break;
	case PROP_NAME:
		g_value_set_string(value, meshsync_resource_get_name(self));
		break;
	case PROP_NAMESPACE:
		g_value_set_string(value, meshsync_resource_get_namespace(self));
		break;
	case PROP_UID:
		g_value_set_string(value, meshsync_resource_get_uid(self));
		break;
	case PROP_RESOURCE_VERSION:
		g_value_set_string(value, meshsync_resource_get_resource_version(self));
		break;
	case PROP_CLUSTER_ID:
		g_value_set_string(value, meshsync_resource_get_cluster_id(self));
		break;
	case PROP_EVENT_TYPE:
		g_value_set_enum(value, self->event_type);
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
	}
}

static void
meshsync_resource_finalize(GObject *object)
{
	MeshSyncResource *self = MESHSYNC_RESOURCE(object);

	msd_model_clear(&self->model);
	g_free(self->component_metadata);
	msd_service_endpoint_free(self->pending);
	if (self->wire != NULL)
		g_bytes_unref(self->wire);

	G_OBJECT_CLASS(meshsync_resource_parent_class)->finalize(object);
}

static void
meshsync_resource_class_init(MeshSyncResourceClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	GParamFlags flags = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

	object_class->get_property = meshsync_resource_get_property;
	object_class->finalize = meshsync_resource_finalize;

	/**
	 * MeshSyncResource:api-version: (getter get_api_version)
	 *
	 * The object's `apiVersion`, such as `v1` or `apps/v1`.
	 */
	props[PROP_API_VERSION] = g_param_spec_string("api-version", NULL, NULL, "", flags);

	/**
	 * MeshSyncResource:kind: (getter get_kind)
	 *
	 * The object's kind, such as `Pod`.
	 */
	props[PROP_KIND] = g_param_spec_string("kind", NULL, NULL, "", flags);

	/**
	 * MeshSyncResource:name: (getter get_name)
	 *
	 * The object's `metadata.name`, or %NULL when it has none.
	 */
	props[PROP_NAME] = g_param_spec_string("name", NULL, NULL, NULL, flags);

	/**
	 * MeshSyncResource:namespace: (getter get_namespace)
	 *
	 * The object's namespace, or %NULL for a cluster-scoped object.
	 */
	props[PROP_NAMESPACE] = g_param_spec_string("namespace", NULL, NULL, NULL, flags);

	/**
	 * MeshSyncResource:uid: (getter get_uid)
	 *
	 * The object's `metadata.uid`; the empty string when it has none.
	 */
	props[PROP_UID] = g_param_spec_string("uid", NULL, NULL, "", flags);

	/**
	 * MeshSyncResource:resource-version: (getter get_resource_version)
	 *
	 * The object's `metadata.resourceVersion` (opaque text), or %NULL when it has none.
	 */
	props[PROP_RESOURCE_VERSION] =
	        g_param_spec_string("resource-version", NULL, NULL, NULL, flags);

	/**
	 * MeshSyncResource:cluster-id: (getter get_cluster_id)
	 *
	 * The id of the cluster the object comes from (the empty string when unknown).
	 */
	props[PROP_CLUSTER_ID] = g_param_spec_string("cluster-id", NULL, NULL, "", flags);

	/**
	 * MeshSyncResource:event-type: (getter get_event_type)
	 *
	 * The event the resource was converted for.
	 */
	props[PROP_EVENT_TYPE] =
	        g_param_spec_enum("event-type", NULL, NULL, MESHSYNC_TYPE_EVENT_TYPE,
	                          MESHSYNC_EVENT_TYPE_ADDED, flags);

	g_object_class_install_properties(object_class, N_PROPS, props);
}

static void
meshsync_resource_init(MeshSyncResource *self)
{
}

/**
 * meshsync_resource_new_from_json:
 * @json: (array length=length) (element-type guint8): the JSON text of one Kubernetes object
 * @length: the length of @json in bytes, or -1 when it is NUL-terminated
 * @event_type: the event the object comes with
 * @cluster_id: (nullable): the id of the cluster, or %NULL for an unknown one
 * @error: return location for a #GError
 *
 * Converts one Kubernetes object into its canonical model.
 *
 * The conversion follows upstream MeshSync field by field, with two deliberate fixes:
 * `pattern_resource` is parsed from the textual UUID in the label `design.meshery.io/id`, and
 * a `spec` or `status` that is `null` counts as absent. Secrets have their `data`,
 * `binaryData` and `stringData` values replaced by `[REDACTED]` when the environment variable
 * `MESHSYNC_REDACT_SECRETS` is `1` or `true`.
 *
 * The event type must be known here because a Service gets its `component_metadata` for
 * `ADDED` and `MODIFIED` events only. A Service whose external endpoint needs a reachability
 * check keeps `component_metadata` null until the engine has probed it.
 *
 * Returns: (transfer full): a new resource, or %NULL with @error set when @json is not a
 *   JSON object
 */
MeshSyncResource *
meshsync_resource_new_from_json(const gchar *json,
                                gssize length,
                                MeshSyncEventType event_type,
                                const gchar *cluster_id,
                                GError **error)
{
	return meshsync_resource_new_from_json_full(json, length, event_type, cluster_id, NULL,
	                                            error);
}

MeshSyncResource *
meshsync_resource_new_from_json_full(const gchar *json,
                                     gssize length,
                                     MeshSyncEventType event_type,
                                     const gchar *cluster_id,
                                     MsdConvertState *state,
                                     GError **error)
{
	g_auto(MsdJsonTokens) doc = MSD_JSON_TOKENS_INIT;

	g_return_val_if_fail(json != NULL || length == 0, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	if (length < 0)
		length = (gssize)strlen(json);
	if (!msd_json_tokens_parse(&doc, json, (gsize)length, error))
		return NULL;
	return meshsync_resource_new_from_tokens(&doc, 0, NULL, NULL, event_type, cluster_id, NULL,
	                                         state, error);
}

/*
 * The conversion of an object some caller has tokenized already: the informer's watch line
 * or list page. See meshsync-resource-private.h for the contract.
 */
MeshSyncResource *
meshsync_resource_new_from_tokens(const MsdJsonTokens *doc,
                                  gint index,
                                  const gchar *default_kind,
                                  const gchar *default_api_version,
                                  MeshSyncEventType event_type,
                                  const gchar *cluster_id,
                                  MsdAttributeCache *cache,
                                  MsdConvertState *state,
                                  GError **error)
{
	g_autoptr(MeshSyncResource) self = NULL;
	MsdServiceEndpoint *ep = NULL;

	g_return_val_if_fail(doc != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	self = g_object_new(MESHSYNC_TYPE_RESOURCE, NULL);
	self->event_type = event_type;
	if (!msd_model_convert_tokens(&self->model, doc, index, default_kind, default_api_version,
	                              event_type, cluster_id, &ep, cache, state, error))
		return NULL;
	if (ep != NULL) {
		if (msd_service_endpoint_needs_probe(ep)) {
			self->pending = ep;
		} else {
			self->component_metadata = msd_service_endpoint_to_metadata(ep, TRUE);
			msd_service_endpoint_free(ep);
		}
	} else if (msd_builder_signals_apply(msd_model_get(&self->model, MSD_F_KIND),
	                                     msd_model_get(&self->model, MSD_F_API_VERSION))) {
		self->component_metadata = msd_builder_signals_to_metadata(
		        doc, index, msd_model_get(&self->model, MSD_F_KIND));
	}
	return g_steal_pointer(&self);
}

/**
 * meshsync_resource_get_wire_bytes:
 * @self: a resource
 *
 * Gets the resource serialized as upstream MeshSync's `KubernetesResource`, the bytes
 * [method@MeshSync.Resource.to_json] returns a copy of (without a terminating NUL).
 *
 * The bytes are made the first time they are asked for and kept for the lifetime of the
 * resource, so every writer that publishes or stores the same event shares them. Ask for them
 * only once the resource is complete: a Service waiting for its reachability probe (see
 * [method@MeshSync.Resource.to_json]) is serialized as it is then, without
 * `component_metadata`, and can no longer be completed.
 *
 * Returns: (transfer none): the wire bytes
 */
GBytes *
meshsync_resource_get_wire_bytes(MeshSyncResource *self)
{
	GBytes *wire;

	g_return_val_if_fail(MESHSYNC_IS_RESOURCE(self), NULL);

	wire = g_atomic_pointer_get(&self->wire);
	if (wire == NULL) {
		GString *out = g_string_sized_new(
		        msd_model_wire_size_hint(&self->model) +
		        (self->component_metadata != NULL ? strlen(self->component_metadata) : 0));

		msd_model_write_wire(&self->model, self->component_metadata, out);
		wire = g_string_free_to_bytes(out);
		/* a resource shared between threads may race here: the first one wins */
		if (!g_atomic_pointer_compare_and_exchange(&self->wire, NULL, wire)) {
			g_bytes_unref(wire);
			wire = g_atomic_pointer_get(&self->wire);
		}
	}
	return wire;
}

/**
 * meshsync_resource_to_json:
 * @self: a resource
 *
 * Serializes the resource as upstream MeshSync's `KubernetesResource`.
 *
 * The text is byte for byte what upstream publishes as the `Object` of a resource event:
 * compact, fields in upstream's order, the JSON-holding fields as strings, label and
 * annotation values in their escaped form, and the fields upstream never fills present as
 * empty strings. It is a copy of [method@MeshSync.Resource.get_wire_bytes], with the same
 * rule: a Service that still needs its reachability probe is written without
 * `component_metadata`.
 *
 * Returns: (transfer full): the JSON text
 */
gchar *
meshsync_resource_to_json(MeshSyncResource *self)
{
	gsize len = 0;
	const gchar *data;

	g_return_val_if_fail(MESHSYNC_IS_RESOURCE(self), NULL);

	data = g_bytes_get_data(meshsync_resource_get_wire_bytes(self), &len);
	return g_strndup(data, len);
}

static const gchar *
nullable_field(MeshSyncResource *self, MsdField f)
{
	return self->model.f[f].len > 0 ? msd_model_get(&self->model, f) : NULL;
}

/**
 * meshsync_resource_get_api_version: (get-property api-version)
 * @self: a resource
 *
 * Gets the object's `apiVersion`.
 *
 * Returns: (transfer none): the API version, possibly empty
 */
const gchar *
meshsync_resource_get_api_version(MeshSyncResource *self)
{
	g_return_val_if_fail(MESHSYNC_IS_RESOURCE(self), NULL);
	return msd_model_get(&self->model, MSD_F_API_VERSION);
}

/**
 * meshsync_resource_get_kind: (get-property kind)
 * @self: a resource
 *
 * Gets the object's kind.
 *
 * Returns: (transfer none): the kind, possibly empty
 */
const gchar *
meshsync_resource_get_kind(MeshSyncResource *self)
{
	g_return_val_if_fail(MESHSYNC_IS_RESOURCE(self), NULL);
	return msd_model_get(&self->model, MSD_F_KIND);
}

/**
 * meshsync_resource_get_name: (get-property name)
 * @self: a resource
 *
 * Gets the object's name.
 *
 * Returns: (transfer none) (nullable): the name, or %NULL when the object has none
 */
const gchar *
meshsync_resource_get_name(MeshSyncResource *self)
{
	g_return_val_if_fail(MESHSYNC_IS_RESOURCE(self), NULL);
	return nullable_field(self, MSD_F_NAME);
}

/**
 * meshsync_resource_get_namespace: (get-property namespace)
 * @self: a resource
 *
 * Gets the object's namespace.
 *
 * Returns: (transfer none) (nullable): the namespace, or %NULL for a cluster-scoped object
 */
const gchar *
meshsync_resource_get_namespace(MeshSyncResource *self)
{
	g_return_val_if_fail(MESHSYNC_IS_RESOURCE(self), NULL);
	return nullable_field(self, MSD_F_NAMESPACE);
}

/**
 * meshsync_resource_get_uid: (get-property uid)
 * @self: a resource
 *
 * Gets the object's UID.
 *
 * Returns: (transfer none): the UID, empty when the object has none
 */
const gchar *
meshsync_resource_get_uid(MeshSyncResource *self)
{
	g_return_val_if_fail(MESHSYNC_IS_RESOURCE(self), NULL);
	return msd_model_get(&self->model, MSD_F_UID);
}

/**
 * meshsync_resource_get_resource_version: (get-property resource-version)
 * @self: a resource
 *
 * Gets the object's resource version, an opaque string.
 *
 * Returns: (transfer none) (nullable): the resource version, or %NULL when the object has none
 */
const gchar *
meshsync_resource_get_resource_version(MeshSyncResource *self)
{
	g_return_val_if_fail(MESHSYNC_IS_RESOURCE(self), NULL);
	return nullable_field(self, MSD_F_RESOURCE_VERSION);
}

/**
 * meshsync_resource_get_cluster_id: (get-property cluster-id)
 * @self: a resource
 *
 * Gets the id of the cluster the object comes from.
 *
 * Returns: (transfer none): the cluster id, empty when unknown
 */
const gchar *
meshsync_resource_get_cluster_id(MeshSyncResource *self)
{
	g_return_val_if_fail(MESHSYNC_IS_RESOURCE(self), NULL);
	return msd_model_get(&self->model, MSD_F_CLUSTER_ID);
}

/**
 * meshsync_resource_get_event_type: (get-property event-type)
 * @self: a resource
 *
 * Gets the event the resource was converted for.
 *
 * Returns: the event type
 */
MeshSyncEventType
meshsync_resource_get_event_type(MeshSyncResource *self)
{
	g_return_val_if_fail(MESHSYNC_IS_RESOURCE(self), MESHSYNC_EVENT_TYPE_ADDED);
	return self->event_type;
}

/**
 * meshsync_resource_get_label:
 * @self: a resource
 * @key: a label key
 *
 * Looks up one of the object's labels.
 *
 * The value is given as it appears on the wire: in its JSON-escaped form (a value `a"b` is
 * returned as `a\"b`, `&` as `\u0026`), which for ordinary label values is the value itself.
 *
 * Returns: (transfer none) (nullable): the value, or %NULL when there is no such label
 */
const gchar *
meshsync_resource_get_label(MeshSyncResource *self, const gchar *key)
{
	const MsdModel *m;

	g_return_val_if_fail(MESHSYNC_IS_RESOURCE(self), NULL);
	g_return_val_if_fail(key != NULL, NULL);

	m = &self->model;
	for (guint i = 0; i < m->n_labels; i++) {
		if (strcmp(msd_model_str(m, m->kv[i].key), key) == 0)
			return msd_model_str(m, m->kv[i].value);
	}
	return NULL;
}

const MsdServiceEndpoint *
meshsync_resource_get_pending_endpoint(MeshSyncResource *self)
{
	g_return_val_if_fail(MESHSYNC_IS_RESOURCE(self), NULL);
	return self->pending;
}

void
meshsync_resource_complete_probe(MeshSyncResource *self, gboolean reachable)
{
	g_return_if_fail(MESHSYNC_IS_RESOURCE(self));
	/* the wire bytes are final once made: a writer may hold them already */
	g_return_if_fail(g_atomic_pointer_get(&self->wire) == NULL);

	if (self->pending == NULL)
		return;
	g_free(self->component_metadata);
	self->component_metadata = msd_service_endpoint_to_metadata(self->pending, reachable);
	g_clear_pointer(&self->pending, msd_service_endpoint_free);
}

const gchar *
meshsync_resource_get_component_metadata(MeshSyncResource *self)
{
	g_return_val_if_fail(MESHSYNC_IS_RESOURCE(self), NULL);
	return self->component_metadata;
}

const MsdModel *
meshsync_resource_get_model(MeshSyncResource *self)
{
	g_return_val_if_fail(MESHSYNC_IS_RESOURCE(self), NULL);
	return &self->model;
}

static void
resource_probed_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	MeshSyncResource *self = g_task_get_source_object(task);
	g_autoptr(GError) error = NULL;
	gboolean reachable = msd_service_endpoint_probe_finish(result, &error);

	if (!reachable && g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	meshsync_resource_complete_probe(self, reachable);
	g_task_return_boolean(task, TRUE);
}

void
meshsync_resource_probe_async(MeshSyncResource *self,
                              GCancellable *cancellable,
                              GAsyncReadyCallback callback,
                              gpointer user_data)
{
	g_autoptr(GTask) task = NULL;

	g_return_if_fail(MESHSYNC_IS_RESOURCE(self));

	task = g_task_new(self, cancellable, callback, user_data);
	g_task_set_source_tag(task, meshsync_resource_probe_async);
	if (self->pending == NULL) {
		g_task_return_boolean(task, TRUE);
		return;
	}
	msd_service_endpoint_probe_async(self->pending, cancellable, resource_probed_cb,
	                                 g_steal_pointer(&task));
}

gboolean
meshsync_resource_probe_finish(MeshSyncResource *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
	g_return_val_if_fail(g_task_get_source_tag(G_TASK(result)) == meshsync_resource_probe_async,
	                     FALSE);
	return g_task_propagate_boolean(G_TASK(result), error);
}
