/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * One file for one public class: the facade over the set-up chain, the delivery and the CRD
 * follower, with the event function that joins them; half of it is the documented properties,
 * signals and methods of MeshSyncHandler.
 */

#define G_LOG_DOMAIN "MeshSyncEngine"

#include "config.h"

#include <string.h>

#include "engine/msd-delivery.h"
#include "engine/msd-run-setup.h"
#include "meshsync-enum-types.h"
#include "meshsync-error.h"
#include "meshsync-handler-private.h"
#include "meshsync-resource-private.h"

/**
 * MeshSyncHandler:
 *
 * Owns one MeshSync sync against one API server: discovery, the watch configuration, the
 * informers, and the writer the resulting events go to.
 *
 * [method@MeshSync.Handler.start] discovers the server, reads the cluster id (the uid of the
 * `kube-system` namespace) and the MeshSync custom resource, builds a fresh
 * [class@MeshSync.Pipeline] (register the global types, register the local types, start the
 * informers) and runs it. Every object then arrives as an ADDED event, and later changes as
 * MODIFIED and DELETED; each event is converted into a [class@MeshSync.Resource], filtered,
 * emitted as [signal@MeshSync.Handler::resource-event] and handed to the writer, one at a time
 * and in order. Once every informer has its initial state, [property@MeshSync.Handler:ready]
 * turns true.
 *
 * [method@MeshSync.Handler.resync] (and, when the MeshSync custom resource exists, the
 * appearance or removal of a CustomResourceDefinition) tears the run down after a quiet
 * period and starts a new one from discovery on.
 *
 * The handler is a facade: the set-up chain with its retries and resyncs, the ordered
 * delivery to the writer and the CustomResourceDefinition follower are private helpers.
 * [class@MeshSync.Service] assembles a handler with its outputs, the broker and the health
 * server; use the handler alone to sync into writers of your own.
 *
 * Everything happens in the thread-default main context of the thread that called
 * [method@MeshSync.Handler.start] (for a handler a [class@MeshSync.Service] made, the
 * service's), never in the global default context unless that is the one: several handlers
 * can run side by side, each on its own thread and loop.
 */

struct _MeshSyncHandler {
	GObject parent_instance;

	MsdEngineContext *engine;   /* (owned): its main context, the service's when it made us */
	gboolean engine_given;      /* by a service: not replaced at start */
	MeshSyncKubeConfig *config; /* (owned) */
	MeshSyncWriter *writer;     /* (owned) (nullable) */
	MsdKubeClient *client;      /* (owned) (nullable): from start on */
	MsdRunSetup *setup;         /* (owned) (nullable): from start on */
	MsdDelivery *delivery;      /* (owned) */
	MsdAttributeCache *cache;   /* (owned): specs of watch events, over every run */

	/* the configuration's draft, copied into the engine context at start */
	MsdEngineOptions *options; /* (owned) */
	guint resync_delay_ms;     /* may change at any time: not one of the options */

	MeshSyncHandlerInformerFunc informer_synced;
	gpointer informer_synced_data;
	MsdInfraTierPublishFunc infra_publish;
	gpointer infra_publish_data;
	MeshSyncHandlerUnwrittenFunc unwritten;
	gpointer unwritten_data;
	guint64 n_converted;   /* events converted into resources */
	guint64 n_unconverted; /* events dropped: filtered or not written (before conversion),
	                        * or unreadable */

	gboolean started;
	gboolean stopped;
};

G_DEFINE_FINAL_TYPE(MeshSyncHandler, meshsync_handler, G_TYPE_OBJECT)

enum {
	PROP_0,
	PROP_KUBE_CONFIG,
	PROP_WRITER,
	PROP_READY,
	PROP_CLUSTER_ID,
	N_PROPS,
};

static GParamSpec *properties[N_PROPS];

enum {
	SIGNAL_RESOURCE_EVENT,
	SIGNAL_READY_CHANGED,
	SIGNAL_PIPELINE_CREATED,
	SIGNAL_FAILED,
	SIGNAL_RUN_FAILED,
	SIGNAL_RECONCILED,
	N_SIGNALS,
};

static guint signals[N_SIGNALS];

#define MESHSYNC_HANDLER_RESYNC_DELAY_MS 5000
/* Bytes of spec wire forms kept for the next event of the same object: about 5,000 pod
 * specs, more than a cluster's pods change within a few seconds. */
#define MESHSYNC_HANDLER_CACHE_BYTES (32u << 20)

/* Every informer change comes here while the tokens it was read from are alive: one
 * conversion from those tokens, the filters, then the ordered delivery. */
static void
meshsync_handler_event_cb(MsdInformer *informer, const MsdInformerEvent *event, gpointer user_data)
{
	MeshSyncHandler *self = user_data;
	MeshSyncWatchConfig *watch = msd_run_setup_get_watch_config(self->setup);
	const gchar *cluster_id = msd_run_setup_get_cluster_id(self->setup);
	g_autoptr(MeshSyncResource) resource = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GBytes) object = NULL;
	gsize length = 0;
	const gchar *data;

	static const gchar *const all_events[] = {"ADDED", "MODIFIED", "DELETED", NULL};
	const gchar *const *events =
	        meshsync_watch_config_get_events(watch, msd_informer_get_name(informer));

	/* a tier-3 type is in no configuration: every change of it is published */
	if (events == NULL && msd_run_setup_is_tier3_informer(self->setup, informer))
		events = all_events;

	/* A type the configuration no longer names (its CRD was removed) is still watched until
	 * the resync; what it published must still be retracted, or the consumer keeps it. */
	if (events == NULL ? event->type != MESHSYNC_EVENT_TYPE_DELETED
	                   : !g_strv_contains(events, meshsync_event_type_to_string(event->type)))
		return;
	/* What is dropped is dropped before the conversion: the stored entry has the namespace
	 * and the uid. */
	if (!meshsync_watch_config_accepts_namespace(watch, event->entry->namespace_) ||
	    (event->type == MESHSYNC_EVENT_TYPE_MODIFIED && self->unwritten != NULL &&
	     self->unwritten(event->entry->uid, self->unwritten_data))) {
		self->n_unconverted++;
		return;
	}
	if (event->doc != NULL) {
		/* the tokens the informer read the object with: no second parse. Only watch
		 * events use the cache: a list's objects are each seen once, and filling it
		 * there would only add to the initial sync's peak. */
		resource = meshsync_resource_new_from_tokens(
		        event->doc, event->index, event->kind, event->api_version, event->type,
		        cluster_id != NULL ? cluster_id : "",
		        event->read_at != 0 ? self->cache : NULL,
		        msd_engine_context_get_convert_state(self->engine), &error);
	} else {
		/* found deleted by a relist: the store's copy is all there is */
		object = msd_store_entry_dup_object(event->entry);
		data = g_bytes_get_data(object, &length);
		resource = meshsync_resource_new_from_json_full(
		        data, (gssize)length, event->type, cluster_id != NULL ? cluster_id : "",
		        msd_engine_context_get_convert_state(self->engine), &error);
	}
	if (resource == NULL) {
		/* an object the server sent that the conversion cannot read: a remote condition,
		 * counted (not converted) and said, not a fault of this program */
		self->n_unconverted++;
		g_message("%s: %s event for %s/%s not converted: %s",
		          msd_informer_get_name(informer),
		          meshsync_event_type_to_string(event->type), event->entry->namespace_,
		          event->entry->name, error->message);
		return;
	}
	self->n_converted++;
	msd_delivery_push_timed(self->delivery, resource, event->type, event->read_at);
}

static void
meshsync_handler_announce_cb(MeshSyncResource *resource,
                             MeshSyncEventType event_type,
                             gpointer user_data)
{
	g_signal_emit(user_data, signals[SIGNAL_RESOURCE_EVENT], 0, resource, event_type);
}

/* Back-pressure: once the delivery's coalescing queue is full (the writer away or slow for
 * longer than it absorbs), the informers stop reading the API server (the TCP window then
 * holds the server back) instead of buffering without bound. */
static void
meshsync_handler_paused_cb(MsdDelivery *delivery, GParamSpec *pspec, MeshSyncHandler *self)
{
	MsdRun *run = msd_run_setup_get_run(self->setup);

	if (run == NULL)
		return;
	if (msd_delivery_get_paused(delivery)) {
		g_info("the output is behind and its queue full: informers paused");
		msd_run_pause(run);
	} else {
		msd_run_resume(run);
	}
}

static void
meshsync_handler_delivery_failed_cb(MsdDelivery *delivery, const GError *error, gpointer data)
{
	MeshSyncHandler *self = data;

	g_info("%s", error->message);
	g_signal_emit(self, signals[SIGNAL_FAILED], 0, error);
	meshsync_handler_stop(self);
}

static void
meshsync_handler_pipeline_created_cb(MsdRunSetup *setup,
                                     MeshSyncPipeline *pipeline,
                                     MeshSyncHandler *self)
{
	/* a new run starts paused if the output is still behind */
	if (msd_delivery_get_paused(self->delivery))
		msd_run_pause(msd_run_setup_get_run(setup));
	g_signal_emit(self, signals[SIGNAL_PIPELINE_CREATED], 0, pipeline);
}

static void
meshsync_handler_run_failed_cb(MsdRunSetup *setup, const GError *error, MeshSyncHandler *self)
{
	g_signal_emit(self, signals[SIGNAL_RUN_FAILED], 0, error);
}

static void
meshsync_handler_reconciled_cb(MsdRunSetup *setup,
                               guint added,
                               guint modified,
                               guint deleted,
                               guint listed,
                               guint failed,
                               MeshSyncHandler *self)
{
	g_signal_emit(self, signals[SIGNAL_RECONCILED], 0, added, modified, deleted, listed,
	              failed);
}

static void
meshsync_handler_ready_cb(MsdRunSetup *setup, GParamSpec *pspec, MeshSyncHandler *self)
{
	gboolean ready = msd_run_setup_get_ready(setup);

	g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_READY]);
	g_signal_emit(self, signals[SIGNAL_READY_CHANGED], 0, ready);
}

static void
meshsync_handler_informer_synced_cb(MsdRunSetup *setup,
                                    MsdInformer *informer,
                                    MeshSyncHandler *self)
{
	if (self->informer_synced != NULL)
		self->informer_synced(informer, self->informer_synced_data);
}

static void
meshsync_handler_cluster_id_cb(MsdRunSetup *setup, GParamSpec *pspec, MeshSyncHandler *self)
{
	g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_CLUSTER_ID]);
}

static void
meshsync_handler_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
	MeshSyncHandler *self = MESHSYNC_HANDLER(object);

	switch (prop_id) {
	case PROP_KUBE_CONFIG:
		g_value_set_object(value, self->config);
		break;
	case PROP_WRITER:
		g_value_set_object(value, self->writer);
		break;
	case PROP_READY:
		g_value_set_boolean(value, meshsync_handler_get_ready(self));
		break;
	case PROP_CLUSTER_ID:
		g_value_set_string(value, meshsync_handler_get_cluster_id(self));
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
	}
}

static void
meshsync_handler_set_property(GObject *object,
                              guint prop_id,
                              const GValue *value,
                              GParamSpec *pspec)
{
	MeshSyncHandler *self = MESHSYNC_HANDLER(object);

	switch (prop_id) {
	case PROP_KUBE_CONFIG:
		self->config = g_value_dup_object(value);
		break;
	case PROP_WRITER:
		self->writer = g_value_dup_object(value);
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
	}
}

static void
meshsync_handler_constructed(GObject *object)
{
	MeshSyncHandler *self = MESHSYNC_HANDLER(object);

	G_OBJECT_CLASS(meshsync_handler_parent_class)->constructed(object);
	/* built alone (from Python, a test): replaced at start by the context of the thread that
	 * starts us; the delivery needs one from the beginning */
	self->engine = msd_engine_context_new();
	self->delivery = msd_delivery_new(self->engine, self->writer);
	msd_delivery_set_announce_func(self->delivery, meshsync_handler_announce_cb, self);
	g_signal_connect(self->delivery, "notify::paused", G_CALLBACK(meshsync_handler_paused_cb),
	                 self);
	g_signal_connect(self->delivery, "failed", G_CALLBACK(meshsync_handler_delivery_failed_cb),
	                 self);
}

static void
meshsync_handler_dispose(GObject *object)
{
	MeshSyncHandler *self = MESHSYNC_HANDLER(object);

	meshsync_handler_stop(self);
	if (self->setup != NULL)
		g_signal_handlers_disconnect_by_data(self->setup, self);
	if (self->delivery != NULL)
		g_signal_handlers_disconnect_by_data(self->delivery, self);
	G_OBJECT_CLASS(meshsync_handler_parent_class)->dispose(object);
}

static void
meshsync_handler_finalize(GObject *object)
{
	MeshSyncHandler *self = MESHSYNC_HANDLER(object);

	g_clear_object(&self->setup);
	g_clear_object(&self->delivery);
	g_clear_object(&self->engine);
	g_clear_pointer(&self->cache, msd_attribute_cache_free);
	g_clear_object(&self->config);
	g_clear_object(&self->writer);
	g_clear_object(&self->client);
	msd_engine_options_free(self->options);
	G_OBJECT_CLASS(meshsync_handler_parent_class)->finalize(object);
}

/* resource-event is emitted once per event: without marshallers of its own, GLib's generic
 * one would go through libffi for every call (about 1 µs per event under churn). */
typedef void (*MeshSyncHandlerResourceEventFunc)(gpointer instance,
                                                 gpointer resource,
                                                 gint event_type,
                                                 gpointer data);

static void
meshsync_handler_marshal_VOID__OBJECT_ENUM(GClosure *closure,
                                           GValue *return_value,
                                           guint n_param_values,
                                           const GValue *param_values,
                                           gpointer invocation_hint,
                                           gpointer marshal_data)
{
	GCClosure *cc = (GCClosure *)closure;
	MeshSyncHandlerResourceEventFunc callback;
	gpointer data1;
	gpointer data2;

	g_return_if_fail(n_param_values == 3);
	if (G_CCLOSURE_SWAP_DATA(closure)) {
		data1 = closure->data;
		data2 = g_value_peek_pointer(param_values + 0);
	} else {
		data1 = g_value_peek_pointer(param_values + 0);
		data2 = closure->data;
	}
	callback = (MeshSyncHandlerResourceEventFunc)(marshal_data != NULL ? marshal_data
	                                                                   : cc->callback);
	callback(data1, g_value_get_object(param_values + 1), g_value_get_enum(param_values + 2),
	         data2);
}

static void
meshsync_handler_marshal_VOID__OBJECT_ENUMv(GClosure *closure,
                                            GValue *return_value,
                                            gpointer instance,
                                            va_list args,
                                            gpointer marshal_data,
                                            int n_params,
                                            GType *param_types)
{
	GCClosure *cc = (GCClosure *)closure;
	MeshSyncHandlerResourceEventFunc callback;
	gpointer data1;
	gpointer data2;
	gpointer resource;
	gint event_type;
	gboolean held;
	va_list args_copy;

	va_copy(args_copy, args);
	resource = va_arg(args_copy, gpointer);
	event_type = va_arg(args_copy, gint);
	va_end(args_copy);
	/* held for the call, as the generic marshaller does: a handler may drop the last ref */
	held = resource != NULL && (param_types[0] & G_SIGNAL_TYPE_STATIC_SCOPE) == 0;
	if (held)
		g_object_ref(resource);
	if (G_CCLOSURE_SWAP_DATA(closure)) {
		data1 = closure->data;
		data2 = instance;
	} else {
		data1 = instance;
		data2 = closure->data;
	}
	callback = (MeshSyncHandlerResourceEventFunc)(marshal_data != NULL ? marshal_data
	                                                                   : cc->callback);
	callback(data1, resource, event_type, data2);
	if (held)
		g_object_unref(resource);
}

static void
meshsync_handler_class_init(MeshSyncHandlerClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->get_property = meshsync_handler_get_property;
	object_class->set_property = meshsync_handler_set_property;
	object_class->constructed = meshsync_handler_constructed;
	object_class->dispose = meshsync_handler_dispose;
	object_class->finalize = meshsync_handler_finalize;

	/**
	 * MeshSyncHandler:kube-config:
	 *
	 * The API server to sync from.
	 */
	properties[PROP_KUBE_CONFIG] = g_param_spec_object(
	        "kube-config", NULL, NULL, MESHSYNC_TYPE_KUBE_CONFIG,
	        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

	/**
	 * MeshSyncHandler:writer:
	 *
	 * Where the events go; %NULL when the program only listens to
	 * [signal@MeshSync.Handler::resource-event].
	 */
	properties[PROP_WRITER] = g_param_spec_object("writer", NULL, NULL, MESHSYNC_TYPE_WRITER,
	                                              G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
	                                                      G_PARAM_STATIC_STRINGS);

	/**
	 * MeshSyncHandler:ready: (getter get_ready)
	 *
	 * Whether every informer of the current run has delivered its initial state.
	 */
	properties[PROP_READY] = g_param_spec_boolean("ready", NULL, NULL, FALSE,
	                                              G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

	/**
	 * MeshSyncHandler:cluster-id: (getter get_cluster_id)
	 *
	 * The cluster id every resource carries: the uid of the `kube-system` namespace. %NULL
	 * until it has been read; empty when it could not be.
	 */
	properties[PROP_CLUSTER_ID] = g_param_spec_string(
	        "cluster-id", NULL, NULL, NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
	g_object_class_install_properties(object_class, N_PROPS, properties);

	/**
	 * MeshSyncHandler::resource-event:
	 * @self: the handler
	 * @resource: the resource in its canonical shape
	 * @event_type: what happened to it
	 *
	 * Emitted for every event that passes the filters, before it is handed to the writer.
	 */
	signals[SIGNAL_RESOURCE_EVENT] =
	        g_signal_new("resource-event", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
	                     NULL, meshsync_handler_marshal_VOID__OBJECT_ENUM, G_TYPE_NONE, 2,
	                     MESHSYNC_TYPE_RESOURCE, MESHSYNC_TYPE_EVENT_TYPE);
	g_signal_set_va_marshaller(signals[SIGNAL_RESOURCE_EVENT], G_TYPE_FROM_CLASS(klass),
	                           meshsync_handler_marshal_VOID__OBJECT_ENUMv);

	/**
	 * MeshSyncHandler::ready-changed:
	 * @self: the handler
	 * @ready: the new value of [property@MeshSync.Handler:ready]
	 *
	 * Emitted when the initial sync of a run completes, and when a run is torn down.
	 */
	signals[SIGNAL_READY_CHANGED] =
	        g_signal_new("ready-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
	                     NULL, NULL, G_TYPE_NONE, 1, G_TYPE_BOOLEAN);

	/**
	 * MeshSyncHandler::pipeline-created:
	 * @self: the handler
	 * @pipeline: the new pipeline, holding the engine's own stages
	 *
	 * Emitted when a run builds its pipeline, before it starts: a program may append
	 * stages of its own with [method@MeshSync.Pipeline.add_stage].
	 */
	signals[SIGNAL_PIPELINE_CREATED] =
	        g_signal_new("pipeline-created", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
	                     NULL, NULL, NULL, G_TYPE_NONE, 1, MESHSYNC_TYPE_PIPELINE);

	/**
	 * MeshSyncHandler::failed:
	 * @self: the handler
	 * @error: what went wrong
	 *
	 * Emitted when the handler cannot go on, for example when the writer reports
	 * %MESHSYNC_ERROR_WRITE; the handler has stopped by then.
	 */
	signals[SIGNAL_FAILED] = g_signal_new("failed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
	                                      0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_ERROR);

	/**
	 * MeshSyncHandler::run-failed:
	 * @self: the handler
	 * @error: why the run could not get going
	 *
	 * Emitted each time a run fails before its initial sync (the server cannot be reached,
	 * discovery is refused, the credentials are rejected). The handler tries again after a
	 * growing delay; a one-shot program may stop it instead.
	 */
	signals[SIGNAL_RUN_FAILED] =
	        g_signal_new("run-failed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
	                     NULL, NULL, G_TYPE_NONE, 1, G_TYPE_ERROR);

	/**
	 * MeshSyncHandler::reconciled:
	 * @self: the handler
	 * @added: objects found that no watch had reported
	 * @modified: objects found changed without a watch event
	 * @deleted: objects gone without a watch event
	 * @listed: the objects the tick's lists held
	 * @failed: resource types whose list failed (given up for this tick)
	 *
	 * Emitted after each reconcile tick (see
	 * [method@MeshSync.Handler.set_reconcile_interval]); every drift counted here was
	 * passed on as one event.
	 */
	signals[SIGNAL_RECONCILED] = g_signal_new(
	        "reconciled", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
	        G_TYPE_NONE, 5, G_TYPE_UINT, G_TYPE_UINT, G_TYPE_UINT, G_TYPE_UINT, G_TYPE_UINT);
}

static void
meshsync_handler_init(MeshSyncHandler *self)
{
	self->resync_delay_ms = MESHSYNC_HANDLER_RESYNC_DELAY_MS;
	self->options = msd_engine_options_new();
	self->cache = msd_attribute_cache_new(MESHSYNC_HANDLER_CACHE_BYTES);
}

/**
 * meshsync_handler_new:
 * @config: the API server to sync from
 * @writer: (nullable): where the events go
 *
 * Creates a handler; nothing happens until [method@MeshSync.Handler.start].
 *
 * Returns: (transfer full): a new handler
 */
MeshSyncHandler *
meshsync_handler_new(MeshSyncKubeConfig *config, MeshSyncWriter *writer)
{
	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(config), NULL);
	g_return_val_if_fail(writer == NULL || MESHSYNC_IS_WRITER(writer), NULL);

	return g_object_new(MESHSYNC_TYPE_HANDLER, "kube-config", config, "writer", writer, NULL);
}

/**
 * meshsync_handler_set_watch_config:
 * @self: a #MeshSyncHandler
 * @watch_config: (nullable): what to watch
 *
 * Sets what to watch, instead of reading the MeshSync custom resource (or, without one,
 * using the default). Call it before [method@MeshSync.Handler.start].
 */
void
meshsync_handler_set_watch_config(MeshSyncHandler *self, MeshSyncWatchConfig *watch_config)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));
	g_return_if_fail(!self->started);

	g_set_object(&self->options->watch, watch_config);
}

/**
 * meshsync_handler_get_watch_config:
 * @self: a #MeshSyncHandler
 *
 * Gets the watch configuration in force.
 *
 * Returns: (transfer none) (nullable): the configuration, or %NULL before the first run has
 *   chosen one
 */
MeshSyncWatchConfig *
meshsync_handler_get_watch_config(MeshSyncHandler *self)
{
	g_return_val_if_fail(MESHSYNC_IS_HANDLER(self), NULL);
	return self->setup != NULL ? msd_run_setup_get_watch_config(self->setup) : NULL;
}

/**
 * meshsync_handler_set_output_resources:
 * @self: a #MeshSyncHandler
 * @resources: (array zero-terminated=1) (nullable): resource names, the elements of
 *   `-outputResources` (`pod`, `deployment`, ...)
 *
 * Limits the informers to these resources; see
 * [method@MeshSync.WatchConfig.set_output_resources]. Call it before
 * [method@MeshSync.Handler.start].
 */
void
meshsync_handler_set_output_resources(MeshSyncHandler *self, const gchar *const *resources)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));
	g_return_if_fail(!self->started);

	msd_engine_options_set_strv(&self->options->output_resources, resources);
}

/**
 * meshsync_handler_set_output_namespaces:
 * @self: a #MeshSyncHandler
 * @namespaces: (array zero-terminated=1) (nullable): namespaces, the elements of
 *   `-outputNamespaces`
 *
 * Limits the events to these namespaces; see
 * [method@MeshSync.WatchConfig.set_output_namespaces]. Call it before
 * [method@MeshSync.Handler.start].
 */
void
meshsync_handler_set_output_namespaces(MeshSyncHandler *self, const gchar *const *namespaces)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));
	g_return_if_fail(!self->started);

	msd_engine_options_set_strv(&self->options->output_namespaces, namespaces);
}

/**
 * meshsync_handler_set_namespaces:
 * @self: a #MeshSyncHandler
 * @namespaces: (nullable) (array zero-terminated=1): the namespaces to watch, or %NULL (or
 *   an empty array) for the whole cluster
 *
 * Scopes the sync to these namespaces: each namespaced type is listed and watched in each of
 * them (`/api/v1/namespaces/NS/pods`, ...), never cluster-wide, so a Role in those
 * namespaces is all the access it needs and it holds only their objects. Cluster-scoped types
 * are still listed cluster-wide; one the server refuses is skipped with a message. Unlike
 * [method@MeshSync.Handler.set_output_namespaces], which only filters what is written, this
 * decides what is read. Call it before [method@MeshSync.Handler.start].
 */
void
meshsync_handler_set_namespaces(MeshSyncHandler *self, const gchar *const *namespaces)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));
	g_return_if_fail(!self->started);

	msd_engine_options_set_namespaces(self->options, namespaces);
}

/**
 * meshsync_handler_set_shard:
 * @self: a #MeshSyncHandler
 * @index: this replica's shard, from 0
 * @total: how many shards the objects are spread over; 0 or 1 for none
 *
 * Holds and passes on only the objects whose uid falls in shard @index of @total (FNV-1a of
 * the uid modulo @total, as kube-state-metrics shards), so that @total replicas together
 * publish every object exactly once and each holds about a @total-th of them. Every replica
 * still lists and watches every type (the API server's work does not shrink; memory and
 * conversion do), the CustomResourceDefinitions are followed by all, and `cluster_id` is the
 * same everywhere. Call it before [method@MeshSync.Handler.start].
 */
void
meshsync_handler_set_shard(MeshSyncHandler *self, guint index, guint total)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));
	g_return_if_fail(!self->started);
	g_return_if_fail(total <= 1 || index < total);

	msd_engine_options_set_shard(self->options, index, total);
}

/**
 * meshsync_handler_set_reconcile_interval:
 * @self: a #MeshSyncHandler
 * @milliseconds: time between reconcile ticks; 0 (the default) for none
 *
 * Reconciles periodically, as upstream's design fd5 describes: each tick lists every watched
 * type afresh, one after another, and passes on exactly one ADDED, MODIFIED or DELETED for
 * each object that drifted from what the watches said (a missed delete goes out with the
 * last stored state), nothing for the others; a list that fails never deletes. Ticks are
 * jittered by up to a tenth of the interval. The daemon refuses intervals under five minutes;
 * the library takes what it is given. Call it before [method@MeshSync.Handler.start].
 */
void
meshsync_handler_set_reconcile_interval(MeshSyncHandler *self, guint milliseconds)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));
	g_return_if_fail(!self->started);

	self->options->reconcile_interval_ms = milliseconds;
}

/**
 * meshsync_handler_set_store_compression:
 * @self: a #MeshSyncHandler
 * @compressed: whether the informers' stores hold their objects compressed (the default)
 *
 * The stores keep every watched object's JSON for the informer-store reply, relists and
 * reconciliation. Compressed (zstd, with a dictionary per resource type trained from its
 * first objects) they take a fraction of the memory, at the cost of compressing each changed
 * object once and decompressing where a whole object is read back; doc/performance.md has
 * both measured. On unless set off, or unless MESHSYNC_STORE_COMPRESSION=none is in the
 * environment when the handler is made. Call it before [method@MeshSync.Handler.start].
 */
void
meshsync_handler_set_store_compression(MeshSyncHandler *self, gboolean compressed)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));
	g_return_if_fail(!self->started);

	self->options->compress_store = compressed;
}

/**
 * meshsync_handler_set_delivery_queue_size:
 * @self: a #MeshSyncHandler
 * @events: events that may wait for the output (default 100,000); at least 1
 *
 * While the output cannot take events (a broker away or behind, a slow disk), they wait in a
 * coalescing queue where an update of an object already waiting replaces its state, and the
 * informers keep reading. Once @events wait (or 32 MiB of resources), the informers stop
 * reading until an eighth of that is left; nothing is dropped. Call it before
 * [method@MeshSync.Handler.start].
 */
void
meshsync_handler_set_delivery_queue_size(MeshSyncHandler *self, guint events)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));
	g_return_if_fail(!self->started);
	g_return_if_fail(events > 0);

	self->options->delivery_queue_size = events;
}

/**
 * meshsync_handler_set_resync_delay:
 * @self: a #MeshSyncHandler
 * @milliseconds: the quiet period
 *
 * Sets how long a resync waits for further resync requests before it tears the run down
 * (5000 ms by default, as upstream).
 */
void
meshsync_handler_set_resync_delay(MeshSyncHandler *self, guint milliseconds)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));
	self->resync_delay_ms = milliseconds;
	if (self->setup != NULL)
		msd_run_setup_set_resync_delay(self->setup, milliseconds);
}

/**
 * meshsync_handler_start:
 * @self: a #MeshSyncHandler
 * @error: return location for a #GError
 *
 * Starts syncing. The work goes on in the thread-default main context: discovery, the
 * watch configuration, the informers. A server that cannot be reached is retried with a
 * growing delay.
 *
 * Returns: %TRUE if the handler started; %FALSE when its configuration is unusable
 */
gboolean
meshsync_handler_start(MeshSyncHandler *self, GError **error)
{
	MsdKubeClient *client;

	g_return_val_if_fail(MESHSYNC_IS_HANDLER(self), FALSE);
	g_return_val_if_fail(!self->started, FALSE);

	if (!self->engine_given) {
		/* the loop its HTTP runs in: the thread-default context of this thread */
		g_autoptr(MsdEngineContext) engine = msd_engine_context_new();

		g_set_object(&self->engine, engine);
		msd_delivery_set_engine_context(self->delivery, engine);
	}
	/* the engine's client: its discovery and sessions send through the same one */
	client = msd_engine_context_get_kube_client(self->engine, self->config, error);
	if (client == NULL)
		return FALSE;
	self->client = g_object_ref(client);
	self->started = TRUE;
	/* from here on the configuration is the engine's, and fixed */
	msd_engine_context_set_options(self->engine, self->options);
	msd_delivery_set_watermarks(self->delivery, self->options->delivery_queue_size,
	                            self->options->delivery_queue_size / 8);
	self->setup =
	        msd_run_setup_new(self->engine, self->client, meshsync_handler_event_cb, self);
	msd_run_setup_set_resync_delay(self->setup, self->resync_delay_ms);
	msd_run_setup_set_infra_publish_func(self->setup, self->infra_publish,
	                                     self->infra_publish_data);
	g_signal_connect(self->setup, "notify::ready", G_CALLBACK(meshsync_handler_ready_cb), self);
	g_signal_connect(self->setup, "notify::cluster-id",
	                 G_CALLBACK(meshsync_handler_cluster_id_cb), self);
	g_signal_connect(self->setup, "pipeline-created",
	                 G_CALLBACK(meshsync_handler_pipeline_created_cb), self);
	g_signal_connect(self->setup, "reconciled", G_CALLBACK(meshsync_handler_reconciled_cb),
	                 self);
	g_signal_connect(self->setup, "run-failed", G_CALLBACK(meshsync_handler_run_failed_cb),
	                 self);
	g_signal_connect(self->setup, "informer-synced",
	                 G_CALLBACK(meshsync_handler_informer_synced_cb), self);
	msd_run_setup_start(self->setup);
	return TRUE;
}

/**
 * meshsync_handler_stop:
 * @self: a #MeshSyncHandler
 *
 * Stops every informer and pending request. Events already received are still handed to
 * the writer; the writer itself is left open for the program to flush and close.
 */
void
meshsync_handler_stop(MeshSyncHandler *self)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));

	if (!self->started || self->stopped)
		return;
	self->stopped = TRUE;
	msd_run_setup_stop(self->setup);
	/* nothing received is dropped */
	msd_delivery_drain(self->delivery);
}

/**
 * meshsync_handler_resync:
 * @self: a #MeshSyncHandler
 *
 * Asks for a resync: after the quiet period (see
 * [method@MeshSync.Handler.set_resync_delay]) without further requests, the current run is
 * torn down and a new one discovers and lists everything again.
 */
void
meshsync_handler_resync(MeshSyncHandler *self)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));

	if (!self->started || self->stopped)
		return;
	msd_run_setup_request_resync(self->setup);
}

/**
 * meshsync_handler_get_ready: (get-property ready)
 * @self: a #MeshSyncHandler
 *
 * Tells whether the current run has its initial state.
 *
 * Returns: %TRUE once every informer has synced
 */
gboolean
meshsync_handler_get_ready(MeshSyncHandler *self)
{
	g_return_val_if_fail(MESHSYNC_IS_HANDLER(self), FALSE);
	return self->setup != NULL && msd_run_setup_get_ready(self->setup);
}

/**
 * meshsync_handler_get_cluster_id: (get-property cluster-id)
 * @self: a #MeshSyncHandler
 *
 * Gets the cluster id.
 *
 * Returns: (nullable): the uid of `kube-system`, empty if unknown, %NULL before it was read
 */
const gchar *
meshsync_handler_get_cluster_id(MeshSyncHandler *self)
{
	g_return_val_if_fail(MESHSYNC_IS_HANDLER(self), NULL);
	return self->setup != NULL ? msd_run_setup_get_cluster_id(self->setup) : NULL;
}

/**
 * meshsync_handler_get_n_objects:
 * @self: a #MeshSyncHandler
 *
 * Counts the objects the informers of the current run hold.
 *
 * Returns: the count
 */
guint
meshsync_handler_get_n_objects(MeshSyncHandler *self)
{
	g_return_val_if_fail(MESHSYNC_IS_HANDLER(self), 0);
	return self->setup != NULL ? msd_run_setup_get_n_objects(self->setup) : 0;
}

/**
 * meshsync_handler_get_discovery:
 * @self: a #MeshSyncHandler
 *
 * Gets the discovery of the current run: the API server's version and resource types as the
 * run found them. A resync replaces it; between runs there is none.
 *
 * Returns: (transfer none) (nullable): the discovery, or %NULL before the first run's
 *   discovery and while a resync discovers again
 */
MeshSyncDiscovery *
meshsync_handler_get_discovery(MeshSyncHandler *self)
{
	g_return_val_if_fail(MESHSYNC_IS_HANDLER(self), NULL);
	return self->setup != NULL ? msd_run_setup_get_discovery(self->setup) : NULL;
}

/**
 * meshsync_handler_get_initial_sync_seconds:
 * @self: a #MeshSyncHandler
 *
 * Gets how long the last run took from its start to its complete initial state.
 *
 * Returns: seconds, or 0 before the first run completed
 */
gdouble
meshsync_handler_get_initial_sync_seconds(MeshSyncHandler *self)
{
	g_return_val_if_fail(MESHSYNC_IS_HANDLER(self), 0);
	return self->setup != NULL ? msd_run_setup_get_initial_sync_seconds(self->setup) : 0;
}

/**
 * meshsync_handler_get_resource_names:
 * @self: a #MeshSyncHandler
 *
 * Lists the watched resource types of the current run (`pods.v1.`, ...).
 *
 * Returns: (transfer full) (array zero-terminated=1): the names
 */
gchar **
meshsync_handler_get_resource_names(MeshSyncHandler *self)
{
	MsdRun *run;

	g_return_val_if_fail(MESHSYNC_IS_HANDLER(self), NULL);

	run = self->setup != NULL ? msd_run_setup_get_run(self->setup) : NULL;
	if (run == NULL)
		return g_new0(gchar *, 1);
	return msd_run_dup_informer_names(run);
}

void
meshsync_handler_get_counters(MeshSyncHandler *self, MsdInformerCounters *counters)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));
	g_return_if_fail(counters != NULL);

	if (self->setup == NULL) {
		memset(counters, 0, sizeof(*counters));
		return;
	}
	msd_run_setup_get_counters(self->setup, counters);
}

void
meshsync_handler_set_unwritten_func(MeshSyncHandler *self,
                                    MeshSyncHandlerUnwrittenFunc func,
                                    gpointer user_data)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));
	self->unwritten = func;
	self->unwritten_data = user_data;
}

void
meshsync_handler_get_conversions(MeshSyncHandler *self, guint64 *converted, guint64 *unconverted)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));
	if (converted != NULL)
		*converted = self->n_converted;
	if (unconverted != NULL)
		*unconverted = self->n_unconverted;
}

void
meshsync_handler_get_cache_stats(MeshSyncHandler *self, MsdAttributeCacheStats *stats)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));
	g_return_if_fail(stats != NULL);

	msd_attribute_cache_get_stats(self->cache, stats);
}

void
meshsync_handler_set_cache_bytes(MeshSyncHandler *self, gsize max_bytes)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));
	g_return_if_fail(!self->started);

	g_clear_pointer(&self->cache, msd_attribute_cache_free);
	if (max_bytes > 0)
		self->cache = msd_attribute_cache_new(max_bytes);
}

void
meshsync_handler_set_retry_delays(MeshSyncHandler *self, guint initial_ms, guint max_ms)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));
	g_return_if_fail(!self->started);
	self->options->retry_initial_ms = initial_ms;
	self->options->retry_max_ms = max_ms;
}

MsdDelivery *
meshsync_handler_get_delivery(MeshSyncHandler *self)
{
	g_return_val_if_fail(MESHSYNC_IS_HANDLER(self), NULL);
	return self->delivery;
}

void
meshsync_handler_set_options(MeshSyncHandler *self, const MsdEngineOptions *options)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));
	g_return_if_fail(options != NULL);
	g_return_if_fail(!self->started);

	msd_engine_options_free(self->options);
	self->options = msd_engine_options_copy(options);
}

void
meshsync_handler_set_engine_context(MeshSyncHandler *self, MsdEngineContext *engine)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));
	g_return_if_fail(MSD_IS_ENGINE_CONTEXT(engine));
	g_return_if_fail(!self->started);

	g_set_object(&self->engine, engine);
	self->engine_given = TRUE;
	msd_delivery_set_engine_context(self->delivery, engine);
}

MsdEngineContext *
meshsync_handler_get_engine_context(MeshSyncHandler *self)
{
	g_return_val_if_fail(MESHSYNC_IS_HANDLER(self), NULL);
	return self->engine;
}

GPtrArray *
meshsync_handler_dup_complete_objects(MeshSyncHandler *self)
{
	g_return_val_if_fail(MESHSYNC_IS_HANDLER(self), NULL);

	return self->setup != NULL ? msd_run_setup_dup_complete_objects(self->setup) : NULL;
}

void
meshsync_handler_set_infra_publish_func(MeshSyncHandler *self,
                                        MsdInfraTierPublishFunc func,
                                        gpointer user_data)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));
	self->infra_publish = func;
	self->infra_publish_data = user_data;
	if (self->setup != NULL)
		msd_run_setup_set_infra_publish_func(self->setup, func, user_data);
}

void
meshsync_handler_set_informer_synced_func(MeshSyncHandler *self,
                                          MeshSyncHandlerInformerFunc func,
                                          gpointer user_data)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));
	self->informer_synced = func;
	self->informer_synced_data = func != NULL ? user_data : NULL;
}

/**
 * meshsync_handler_describe_listing:
 * @self: a #MeshSyncHandler
 *
 * Describes the initial list in progress: the types still listing, each with the objects it
 * brought so far (`pods.v1.: 12,500, services.v1.: 40`), the numbers of the progress lines the
 * library logs every 5 seconds. A service manager's status line or a progress bar reads it.
 *
 * Returns: (transfer full) (nullable): the description, empty once every type has its initial
 *   state, or %NULL while no run is listing
 */
gchar *
meshsync_handler_describe_listing(MeshSyncHandler *self)
{
	MsdRun *run;

	g_return_val_if_fail(MESHSYNC_IS_HANDLER(self), NULL);

	run = self->setup != NULL ? msd_run_setup_get_run(self->setup) : NULL;
	return run != NULL ? msd_run_describe_listing(run) : NULL;
}

/**
 * meshsync_handler_get_n_synced_types:
 * @self: a #MeshSyncHandler
 *
 * Counts the resource types of the current run that have their initial state: a progress
 * bar's numerator, over the length of meshsync_handler_get_resource_names(). A type watched
 * in several namespaces counts once all its namespaces are listed.
 *
 * Returns: the number of types synced, 0 while no run has informers
 */
guint
meshsync_handler_get_n_synced_types(MeshSyncHandler *self)
{
	MsdRun *run;
	guint started = 0, synced = 0;

	g_return_val_if_fail(MESHSYNC_IS_HANDLER(self), 0);

	run = self->setup != NULL ? msd_run_setup_get_run(self->setup) : NULL;
	if (run != NULL)
		msd_run_count_types(run, &started, &synced);
	return synced;
}
