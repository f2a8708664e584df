/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncEngine"

#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "meshsync-discovery-private.h"
#include "meshsync-enum-types.h"
#include "meshsync-error.h"
#include "meshsync-handler-private.h"
#include "meshsync-pipeline-private.h"
#include "meshsync-resource.h"
#include "pipeline/msd-builtin-stages.h"
#include "util/msd-json-tokens.h"
#include "meshsync-resource-private.h"
#include "pipeline/msd-run.h"

/**
 * MeshSyncHandler:
 *
 * Owns one MeshSync run against one API server: discovery, the watch configuration, the
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
 * Everything happens in the thread-default main context of the thread that called
 * [method@MeshSync.Handler.start].
 */

/* Events queue up while a Service reachability probe runs; past this many, the informers
 * stop reading until the writer catches up, instead of buffering without bound. */
#define MESHSYNC_HANDLER_BACKLOG_HIGH 4096
#define MESHSYNC_HANDLER_BACKLOG_LOW  512

#define MESHSYNC_HANDLER_RESYNC_DELAY_MS 5000
#define MESHSYNC_HANDLER_RETRY_MIN_MS    800
#define MESHSYNC_HANDLER_RETRY_MAX_MS    30000

#define MESHSYNC_CR_PATH "/apis/meshery.io/v1alpha1/namespaces/meshery/meshsyncs/meshery-meshsync"

typedef struct {
	MeshSyncResource *resource;
	MeshSyncEventType event_type;
	gboolean announced; /* resource-event emitted and counted: not again on a retry */
} MeshSyncPendingEvent;

struct _MeshSyncHandler {
	GObject parent_instance;

	MeshSyncKubeConfig *config;          /* (owned) */
	MeshSyncWriter *writer;              /* (owned) (nullable) */
	MeshSyncWatchConfig *explicit_watch; /* (owned) (nullable): set by the program */
	MeshSyncWatchConfig *watch;          /* (owned) (nullable): in force */
	gchar *output_resources;             /* (owned) (nullable) */
	gchar *output_namespaces;            /* (owned) (nullable) */
	guint resync_delay_ms;

	MsdKubeClient *client;        /* (owned) (nullable): from start on */
	GCancellable *cancellable;    /* (owned) (nullable): the current run */
	MeshSyncDiscovery *discovery; /* (owned) (nullable): the current run's */
	MsdRun *run;                  /* (owned) (nullable) */
	MeshSyncPipeline *pipeline;   /* (owned) (nullable) */
	MsdInformer *crd_informer;    /* (owned) (nullable): when the MeshSync CR exists */
	gboolean crd_synced;
	gboolean waiting_for_crds;
	gchar *cluster_id;   /* (owned) (nullable): known after the first run */
	gboolean configured; /* watch configuration chosen */

	gboolean started;
	gboolean stopped;
	gboolean failed; /* the writer refused an event: nothing more goes to it */
	gboolean ready;
	guint retry_id;
	guint retry_ms;
	guint flush_id; /* a flush of the writer waiting for the loop to go idle */
	guint resync_id;
	gint64 run_started_us;
	gdouble initial_sync_seconds;

	MsdMetrics *metrics;  /* (owned) (nullable) */
	guint64 past_relists; /* of runs already torn down */
	guint64 past_restarts;

	GQueue pending; /* (element-type MeshSyncPendingEvent) */
	gboolean probing;
	gboolean backlog_paused;
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
	N_SIGNALS,
};

static guint signals[N_SIGNALS];

static void meshsync_handler_begin_run(MeshSyncHandler *self);
static void meshsync_handler_process_pending(MeshSyncHandler *self);

static void
meshsync_pending_event_free(MeshSyncPendingEvent *event)
{
	g_object_unref(event->resource);
	g_free(event);
}

static void
meshsync_handler_set_ready(MeshSyncHandler *self, gboolean ready)
{
	if (self->ready == ready)
		return;
	self->ready = ready;
	g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_READY]);
	g_signal_emit(self, signals[SIGNAL_READY_CHANGED], 0, ready);
}

/* Tears the current run down; events already converted stay queued and are still written. */
static void
meshsync_handler_end_run(MeshSyncHandler *self)
{
	if (self->cancellable != NULL)
		g_cancellable_cancel(self->cancellable);
	g_clear_object(&self->cancellable);
	if (self->run != NULL) {
		GPtrArray *informers = msd_run_get_informers(self->run);

		for (guint i = 0; i < informers->len; i++) {
			MsdInformerCounters counters;

			msd_informer_get_counters(g_ptr_array_index(informers, i), &counters);
			self->past_relists += counters.relists;
			self->past_restarts += counters.watch_restarts;
		}
		g_signal_handlers_disconnect_by_data(self->run, self);
		msd_run_stop(self->run);
	}
	g_clear_object(&self->run);
	g_clear_object(&self->pipeline);
	g_clear_object(&self->discovery);
	g_clear_handle_id(&self->retry_id, g_source_remove);
	self->backlog_paused = FALSE;
	self->waiting_for_crds = FALSE;
	meshsync_handler_set_ready(self, FALSE);
}

static gboolean
meshsync_handler_retry_cb(gpointer user_data)
{
	MeshSyncHandler *self = user_data;

	self->retry_id = 0;
	meshsync_handler_begin_run(self);
	return G_SOURCE_REMOVE;
}

/* A run that could not get going (server unreachable, discovery failed) is tried again with
 * a growing delay; a daemon keeps trying rather than exiting. */
static void
meshsync_handler_retry_later(MeshSyncHandler *self, const GError *error)
{
	guint delay;

	meshsync_handler_end_run(self);
	self->retry_ms = self->retry_ms == 0
	                         ? MESHSYNC_HANDLER_RETRY_MIN_MS
	                         : MIN(self->retry_ms * 2, MESHSYNC_HANDLER_RETRY_MAX_MS);
	/* Jitter in [d/2, d] so that many instances do not retry in step. */
	delay = self->retry_ms / 2 + (guint)g_random_int_range(0, (gint32)(self->retry_ms / 2) + 1);
	g_warning("%s; retrying in %.1f s", error->message, delay / 1000.0);
	self->retry_id = g_timeout_add(delay, meshsync_handler_retry_cb, self);
	g_source_set_static_name(g_main_context_find_source_by_id(NULL, self->retry_id),
	                         "[meshsync] retry run");
}

static void
meshsync_handler_fail(MeshSyncHandler *self, const GError *error)
{
	self->failed = TRUE;
	g_warning("%s", error->message);
	g_signal_emit(self, signals[SIGNAL_FAILED], 0, error);
	meshsync_handler_stop(self);
}

static gboolean
meshsync_handler_flush_cb(gpointer user_data)
{
	MeshSyncHandler *self = user_data;
	g_autoptr(GError) error = NULL;

	self->flush_id = 0;
	if (self->writer == NULL || self->failed)
		return G_SOURCE_REMOVE;
	if (!meshsync_writer_flush(self->writer, &error)) {
		if (g_error_matches(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE))
			meshsync_handler_fail(self, error);
		else
			g_warning("flushing the output: %s", error->message);
	}
	return G_SOURCE_REMOVE;
}

/* Writers buffer; what was written reaches its destination once the loop has nothing more
 * urgent to do, so a burst of events costs one flush and a quiet period leaves nothing
 * behind in a buffer. */
static void
meshsync_handler_schedule_flush(MeshSyncHandler *self)
{
	if (self->flush_id != 0 || self->writer == NULL || self->stopped)
		return;
	self->flush_id = g_idle_add_full(G_PRIORITY_LOW, meshsync_handler_flush_cb, self, NULL);
	g_source_set_static_name(g_main_context_find_source_by_id(NULL, self->flush_id),
	                         "[meshsync] flush output");
}

static void
meshsync_handler_pause_for_output(MeshSyncHandler *self)
{
	/* Hold events back, and stop reading the API server, until the output can take them
	 * again: nothing is dropped. */
	if (!self->backlog_paused && self->run != NULL) {
		g_message("the output cannot take events now: informers paused");
		self->backlog_paused = TRUE;
		msd_run_pause(self->run);
	}
}

/* Hands one event to the writer. Returns FALSE when the writer could not take it because
 * it is not writable (a broker whose buffer is full): the event stays queued and is tried
 * again once the writer says it is writable. */
static gboolean
meshsync_handler_deliver(MeshSyncHandler *self, MeshSyncPendingEvent *event)
{
	MeshSyncResource *resource = event->resource;
	MeshSyncEventType type = event->event_type;
	g_autoptr(GError) error = NULL;

	if (!event->announced) {
		event->announced = TRUE;
		g_signal_emit(self, signals[SIGNAL_RESOURCE_EVENT], 0, resource, type);
		if (self->metrics != NULL)
			msd_metrics_counter_add(
			        self->metrics, "meshsync_events_total",
			        "Resource events handed to the output, by kind and type", 1, "kind",
			        meshsync_resource_get_kind(resource), "type",
			        meshsync_event_type_to_string(type), NULL);
	}
	if (self->writer == NULL || self->failed)
		return TRUE;
	if (meshsync_writer_write(self->writer, resource, type, &error)) {
		meshsync_handler_schedule_flush(self);
		return TRUE;
	}
	if (g_error_matches(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE)) {
		/* An output that cannot take events (disk full) would silently lose every later
		 * one: stop here and let the program say so. */
		meshsync_handler_fail(self, error);
		return TRUE;
	}
	if (!self->stopped && !meshsync_writer_is_writable(self->writer))
		return FALSE;
	g_warning("%s %s %s/%s not written: %s", meshsync_event_type_to_string(type),
	          meshsync_resource_get_kind(resource), meshsync_resource_get_namespace(resource),
	          meshsync_resource_get_name(resource), error->message);
	return TRUE;
}

static void
meshsync_handler_probe_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MeshSyncHandler) self = user_data;
	MeshSyncPendingEvent *head;
	g_autoptr(GError) error = NULL;

	self->probing = FALSE;
	head = g_queue_peek_head(&self->pending);
	if (head == NULL || G_OBJECT(head->resource) != source)
		return; /* the queue was flushed meanwhile */
	if (!meshsync_resource_probe_finish(head->resource, result, &error))
		meshsync_resource_complete_probe(head->resource, FALSE);
	/* A held event stays at the head; process_pending pauses until the writer recovers. */
	if (meshsync_handler_deliver(self, head)) {
		g_queue_pop_head(&self->pending);
		meshsync_pending_event_free(head);
	}
	meshsync_handler_process_pending(self);
}

static gboolean
meshsync_handler_writer_ready(MeshSyncHandler *self)
{
	return self->writer == NULL || self->failed || meshsync_writer_is_writable(self->writer);
}

static void
meshsync_handler_process_pending(MeshSyncHandler *self)
{
	MeshSyncPendingEvent *head;

	while (!self->probing && (head = g_queue_peek_head(&self->pending)) != NULL) {
		if (!meshsync_handler_writer_ready(self)) {
			meshsync_handler_pause_for_output(self);
			return;
		}
		if (meshsync_resource_get_pending_endpoint(head->resource) != NULL) {
			/* Keep the order: later events wait until this Service is probed. */
			self->probing = TRUE;
			meshsync_resource_probe_async(head->resource, NULL,
			                              meshsync_handler_probe_cb,
			                              g_object_ref(self));
			return;
		}
		if (!meshsync_handler_deliver(self, head)) {
			meshsync_handler_pause_for_output(self);
			return;
		}
		g_queue_pop_head(&self->pending);
		meshsync_pending_event_free(head);
	}
	if (self->backlog_paused && self->pending.length <= MESHSYNC_HANDLER_BACKLOG_LOW &&
	    meshsync_handler_writer_ready(self) && self->run != NULL) {
		/* Resuming may deliver events at once, and one of them may stop the handler and
		 * drop the run: keep it alive until the informers are done. */
		g_autoptr(MsdRun) run = g_object_ref(self->run);

		self->backlog_paused = FALSE;
		msd_run_resume(run);
	}
}

static void
meshsync_handler_writable_changed_cb(MeshSyncWriter *writer, MeshSyncHandler *self)
{
	meshsync_handler_process_pending(self);
}

static void
meshsync_handler_enqueue(MeshSyncHandler *self,
                         const gchar *name,
                         MeshSyncEventType type,
                         GBytes *object)
{
	g_autoptr(MeshSyncResource) resource = NULL;
	g_autoptr(GError) error = NULL;
	MeshSyncPendingEvent *pending;
	gsize length = 0;
	const gchar *data = g_bytes_get_data(object, &length);

	if (!meshsync_watch_config_wants_event(self->watch, name,
	                                       meshsync_event_type_to_string(type)))
		return;
	resource = meshsync_resource_new_from_json(data, (gssize)length, type,
	                                           self->cluster_id != NULL ? self->cluster_id : "",
	                                           &error);
	if (resource == NULL) {
		g_warning("%s: %s event not converted: %s", name,
		          meshsync_event_type_to_string(type), error->message);
		return;
	}
	if (!meshsync_watch_config_accepts_namespace(self->watch,
	                                             meshsync_resource_get_namespace(resource)))
		return;

	pending = g_new0(MeshSyncPendingEvent, 1);
	pending->resource = g_steal_pointer(&resource);
	pending->event_type = type;
	g_queue_push_tail(&self->pending, pending);
	meshsync_handler_process_pending(self);
	if (!self->backlog_paused && self->pending.length >= MESHSYNC_HANDLER_BACKLOG_HIGH &&
	    self->run != NULL) {
		g_debug("%u events waiting to be written: informers paused", self->pending.length);
		self->backlog_paused = TRUE;
		msd_run_pause(self->run);
	}
}

static void
meshsync_handler_run_event_cb(MsdRun *run,
                              MsdInformer *informer,
                              MeshSyncEventType event,
                              GBytes *object,
                              MeshSyncHandler *self)
{
	meshsync_handler_enqueue(self, msd_informer_get_name(informer), event, object);
}

static void
meshsync_handler_log_summary(MeshSyncHandler *self)
{
	GPtrArray *informers = msd_run_get_informers(self->run);
	g_autoptr(GString) kinds = g_string_new(NULL);
	guint total = 0;

	for (guint i = 0; i < informers->len; i++) {
		MsdInformer *informer = g_ptr_array_index(informers, i);
		guint size = msd_store_get_size(msd_informer_get_store(informer));

		total += size;
		g_string_append_printf(
		        kinds, "%s%s %u", kinds->len > 0 ? ", " : "",
		        meshsync_api_resource_get_kind(msd_informer_get_resource(informer)), size);
	}
	g_message("initial sync complete: %u objects of %u resource types in %.2f s (%s)", total,
	          informers->len, self->initial_sync_seconds, kinds->str);
}

static void
meshsync_handler_pipeline_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MeshSyncHandler) self = user_data;
	g_autoptr(GError) error = NULL;

	if (!meshsync_pipeline_run_finish(MESHSYNC_PIPELINE(source), result, &error)) {
		if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ||
		    MESHSYNC_PIPELINE(source) != self->pipeline)
			return;
		g_prefix_error(&error, "pipeline: ");
		meshsync_handler_retry_later(self, error);
		return;
	}
	if (MESHSYNC_PIPELINE(source) != self->pipeline)
		return;
	self->retry_ms = 0;
	self->initial_sync_seconds =
	        (gdouble)(g_get_monotonic_time() - self->run_started_us) / G_USEC_PER_SEC;
	meshsync_handler_log_summary(self);
	meshsync_handler_set_ready(self, TRUE);
}

static void
meshsync_handler_build_pipeline(MeshSyncHandler *self)
{
	g_autoptr(MeshSyncStage) global = msd_register_stage_new(MESHSYNC_WATCH_STAGE_GLOBAL);
	g_autoptr(MeshSyncStage) local = msd_register_stage_new(MESHSYNC_WATCH_STAGE_LOCAL);
	g_autoptr(MeshSyncStage) start = msd_start_informers_stage_new();

	self->run = msd_run_new(self->client, self->discovery, self->watch);
	g_signal_connect(self->run, "event", G_CALLBACK(meshsync_handler_run_event_cb), self);
	self->pipeline = meshsync_pipeline_new();
	meshsync_pipeline_set_run(self->pipeline, self->run);
	meshsync_pipeline_add_stage(self->pipeline, global);
	meshsync_pipeline_add_stage(self->pipeline, local);
	meshsync_pipeline_add_stage(self->pipeline, start);
	g_signal_emit(self, signals[SIGNAL_PIPELINE_CREATED], 0, self->pipeline);
	/* A handler of the signal may have stopped us. */
	if (self->stopped || self->pipeline == NULL)
		return;
	meshsync_pipeline_run_async(self->pipeline, self->cancellable, meshsync_handler_pipeline_cb,
	                            g_object_ref(self));
}

/* The name a CustomResourceDefinition gets in the watch configuration, as upstream builds
 * it: <plural>.<first version listed>.<group>. */
static gchar *
meshsync_handler_crd_name(GBytes *object)
{
	g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;
	gsize length = 0;
	const gchar *data = g_bytes_get_data(object, &length);
	g_autofree gchar *group = NULL;
	g_autofree gchar *plural = NULL;
	g_autofree gchar *version = NULL;
	gint versions;

	if (!msd_json_tokens_parse(&tokens, data, length, NULL))
		return NULL;
	group = msd_json_tokens_dup_string(&tokens,
	                                   msd_json_tokens_path(&tokens, 0, "spec", "group", NULL));
	plural = msd_json_tokens_dup_string(
	        &tokens, msd_json_tokens_path(&tokens, 0, "spec", "names", "plural", NULL));
	versions = msd_json_tokens_path(&tokens, 0, "spec", "versions", NULL);
	if (versions >= 0 && tokens.tokens[versions].type == MSD_JSON_ARRAY &&
	    tokens.tokens[versions].size > 0)
		version = msd_json_tokens_dup_string(
		        &tokens, msd_json_tokens_member(&tokens, (guint)versions + 1, "name"));
	if (group == NULL || plural == NULL)
		return NULL;
	return g_strdup_printf("%s.%s.%s", plural, version != NULL ? version : "", group);
}

static void
meshsync_handler_crd_event_cb(MsdInformer *informer,
                              MeshSyncEventType event,
                              GBytes *object,
                              MeshSyncHandler *self)
{
	g_autofree gchar *name = meshsync_handler_crd_name(object);
	gboolean changed = FALSE;

	if (name == NULL) {
		g_warning("customresourcedefinitions: an object without spec.group or "
		          "spec.names.plural: ignored");
		return;
	}
	if (event == MESHSYNC_EVENT_TYPE_ADDED)
		changed = meshsync_watch_config_add_crd(self->watch, name);
	else if (event == MESHSYNC_EVENT_TYPE_DELETED)
		changed = meshsync_watch_config_remove_crd(self->watch, name);
	if (!changed)
		return;
	g_message("custom resource type %s %s%s", name,
	          event == MESHSYNC_EVENT_TYPE_ADDED ? "added" : "removed",
	          self->crd_synced ? ": resync scheduled" : "");
	/* CRDs already there at start join the first run; later ones trigger a resync. */
	if (self->crd_synced)
		meshsync_handler_resync(self);
}

static void
meshsync_handler_crd_synced_cb(MsdInformer *informer, MeshSyncHandler *self)
{
	self->crd_synced = TRUE;
	if (self->waiting_for_crds) {
		self->waiting_for_crds = FALSE;
		meshsync_handler_build_pipeline(self);
	}
}

static void
meshsync_handler_watch_crds(MeshSyncHandler *self)
{
	MeshSyncApiResource *crds = meshsync_discovery_lookup(
	        self->discovery, "apiextensions.k8s.io", NULL, "customresourcedefinitions");

	if (crds == NULL) {
		g_warning("the MeshSync resource exists but the server serves no "
		          "customresourcedefinitions: custom resources are not followed");
		return;
	}
	self->crd_informer = msd_informer_new(self->client, crds);
	g_signal_connect(self->crd_informer, "event", G_CALLBACK(meshsync_handler_crd_event_cb),
	                 self);
	g_signal_connect(self->crd_informer, "synced", G_CALLBACK(meshsync_handler_crd_synced_cb),
	                 self);
	g_signal_connect(self->crd_informer, "denied", G_CALLBACK(meshsync_handler_crd_synced_cb),
	                 self);
	msd_informer_start(self->crd_informer);
}

static void
meshsync_handler_configured(MeshSyncHandler *self)
{
	if (!self->configured) {
		self->configured = TRUE;
		meshsync_watch_config_set_output_resources(self->watch, self->output_resources);
		meshsync_watch_config_set_output_namespaces(self->watch, self->output_namespaces);
	}
	if (self->crd_informer != NULL && !self->crd_synced) {
		self->waiting_for_crds = TRUE;
		return;
	}
	meshsync_handler_build_pipeline(self);
}

static void
meshsync_handler_cr_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MeshSyncHandler) self = user_data;
	g_autoptr(GError) error = NULL;
	g_autoptr(GBytes) body =
	        msd_kube_client_get_finish(MSD_KUBE_CLIENT(source), result, &error);

	if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
		return;
	if (body != NULL) {
		gsize length = 0;
		const gchar *data = g_bytes_get_data(body, &length);

		self->watch = meshsync_watch_config_new_from_resource(data, (gssize)length, &error);
		if (self->watch == NULL) {
			g_warning("%s; watching upstream's whole built-in table instead",
			          error->message);
			self->watch = meshsync_watch_config_new_builtin_table();
		} else {
			g_message("watch configuration from the MeshSync resource "
			          "meshery/meshery-meshsync");
		}
		meshsync_handler_watch_crds(self);
	} else {
		if (!g_error_matches(error, MESHSYNC_ERROR, MESHSYNC_ERROR_NOT_FOUND))
			g_warning("cannot read the MeshSync resource (%s): using the default watch "
			          "configuration",
			          error->message);
		else
			g_message("no MeshSync resource: using the default watch configuration");
		self->watch = meshsync_watch_config_new_default();
	}
	meshsync_handler_configured(self);
}

static void
meshsync_handler_choose_watch_config(MeshSyncHandler *self)
{
	if (self->watch != NULL) {
		meshsync_handler_configured(self);
		return;
	}
	if (self->explicit_watch != NULL) {
		self->watch = g_object_ref(self->explicit_watch);
		meshsync_handler_configured(self);
		return;
	}
	msd_kube_client_get_async(self->client, MESHSYNC_CR_PATH, self->cancellable,
	                          meshsync_handler_cr_cb, g_object_ref(self));
}

static void
meshsync_handler_cluster_id_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MeshSyncHandler) self = user_data;
	g_autoptr(GError) error = NULL;
	g_autoptr(GBytes) body =
	        msd_kube_client_get_finish(MSD_KUBE_CLIENT(source), result, &error);
	g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;

	if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
		return;
	if (body != NULL) {
		gsize length = 0;
		const gchar *data = g_bytes_get_data(body, &length);

		if (msd_json_tokens_parse(&tokens, data, length, &error))
			self->cluster_id = msd_json_tokens_dup_string(
			        &tokens, msd_json_tokens_path(&tokens, 0, "metadata", "uid", NULL));
	}
	if (self->cluster_id == NULL) {
		/* Upstream publishes an empty cluster_id in this case too. */
		g_warning("cannot read the uid of namespace kube-system (%s): cluster_id will be "
		          "empty",
		          error != NULL ? error->message : "no metadata.uid");
		self->cluster_id = g_strdup("");
	}
	g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_CLUSTER_ID]);
	meshsync_handler_choose_watch_config(self);
}

static void
meshsync_handler_discovery_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MeshSyncHandler) self = user_data;
	g_autoptr(GError) error = NULL;
	MeshSyncDiscovery *discovery = MESHSYNC_DISCOVERY(source);

	if (!meshsync_discovery_run_finish(discovery, result, &error)) {
		if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ||
		    discovery != self->discovery)
			return;
		g_prefix_error(&error, "discovery failed: ");
		meshsync_handler_retry_later(self, error);
		return;
	}
	if (discovery != self->discovery)
		return;
	g_message("discovered %u resource types on Kubernetes %s at %s",
	          meshsync_discovery_get_resources(discovery)->len,
	          meshsync_discovery_get_server_version(discovery),
	          msd_kube_client_get_server(self->client));
	if (self->cluster_id == NULL) {
		msd_kube_client_get_async(self->client, "/api/v1/namespaces/kube-system",
		                          self->cancellable, meshsync_handler_cluster_id_cb,
		                          g_object_ref(self));
		return;
	}
	meshsync_handler_choose_watch_config(self);
}

static void
meshsync_handler_begin_run(MeshSyncHandler *self)
{
	self->cancellable = g_cancellable_new();
	self->run_started_us = g_get_monotonic_time();
	self->discovery = meshsync_discovery_new_for_client(self->client);
	meshsync_discovery_run_async(self->discovery, self->cancellable,
	                             meshsync_handler_discovery_cb, g_object_ref(self));
}

static gboolean
meshsync_handler_resync_cb(gpointer user_data)
{
	MeshSyncHandler *self = user_data;

	self->resync_id = 0;
	g_message("resync: tearing the run down and listing again");
	meshsync_handler_end_run(self);
	self->retry_ms = 0;
	meshsync_handler_begin_run(self);
	return G_SOURCE_REMOVE;
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
		g_value_set_boolean(value, self->ready);
		break;
	case PROP_CLUSTER_ID:
		g_value_set_string(value, self->cluster_id);
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
		if (self->writer != NULL)
			g_signal_connect_object(self->writer, "writable-changed",
			                        G_CALLBACK(meshsync_handler_writable_changed_cb),
			                        self, 0);
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
	}
}

static const gchar *const meshsync_handler_gauges[] = {
        "meshsync_objects",
        "meshsync_relists",
        "meshsync_watch_restarts",
        "meshsync_ready",
};

static void
meshsync_handler_drop_metrics(MeshSyncHandler *self)
{
	if (self->metrics == NULL)
		return;
	for (guint i = 0; i < G_N_ELEMENTS(meshsync_handler_gauges); i++)
		msd_metrics_remove(self->metrics, meshsync_handler_gauges[i], NULL);
	g_clear_object(&self->metrics);
}

static void
meshsync_handler_dispose(GObject *object)
{
	MeshSyncHandler *self = MESHSYNC_HANDLER(object);

	meshsync_handler_stop(self);
	meshsync_handler_drop_metrics(self);
	G_OBJECT_CLASS(meshsync_handler_parent_class)->dispose(object);
}

static void
meshsync_handler_finalize(GObject *object)
{
	MeshSyncHandler *self = MESHSYNC_HANDLER(object);

	g_clear_handle_id(&self->flush_id, g_source_remove);
	g_queue_clear_full(&self->pending, (GDestroyNotify)meshsync_pending_event_free);
	g_clear_object(&self->config);
	g_clear_object(&self->writer);
	g_clear_object(&self->explicit_watch);
	g_clear_object(&self->watch);
	g_clear_object(&self->client);
	g_free(self->output_resources);
	g_free(self->output_namespaces);
	g_free(self->cluster_id);
	G_OBJECT_CLASS(meshsync_handler_parent_class)->finalize(object);
}

static void
meshsync_handler_class_init(MeshSyncHandlerClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->get_property = meshsync_handler_get_property;
	object_class->set_property = meshsync_handler_set_property;
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
	signals[SIGNAL_RESOURCE_EVENT] = g_signal_new(
	        "resource-event", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
	        G_TYPE_NONE, 2, MESHSYNC_TYPE_RESOURCE, MESHSYNC_TYPE_EVENT_TYPE);

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
}

static void
meshsync_handler_init(MeshSyncHandler *self)
{
	g_queue_init(&self->pending);
	self->resync_delay_ms = MESHSYNC_HANDLER_RESYNC_DELAY_MS;
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

	g_set_object(&self->explicit_watch, watch_config);
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
	return self->watch;
}

/**
 * meshsync_handler_set_output_resources:
 * @self: a #MeshSyncHandler
 * @list: (nullable): comma-separated resource names, as `-outputResources` takes them
 *
 * Limits the informers to these resources; see
 * [method@MeshSync.WatchConfig.set_output_resources]. Call it before
 * [method@MeshSync.Handler.start].
 */
void
meshsync_handler_set_output_resources(MeshSyncHandler *self, const gchar *list)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));
	g_return_if_fail(!self->started);

	g_free(self->output_resources);
	self->output_resources = g_strdup(list);
}

/**
 * meshsync_handler_set_output_namespaces:
 * @self: a #MeshSyncHandler
 * @list: (nullable): comma-separated namespaces, as `-outputNamespaces` takes them
 *
 * Limits the events to these namespaces; see
 * [method@MeshSync.WatchConfig.set_output_namespaces]. Call it before
 * [method@MeshSync.Handler.start].
 */
void
meshsync_handler_set_output_namespaces(MeshSyncHandler *self, const gchar *list)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));
	g_return_if_fail(!self->started);

	g_free(self->output_namespaces);
	self->output_namespaces = g_strdup(list);
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
	g_return_val_if_fail(MESHSYNC_IS_HANDLER(self), FALSE);
	g_return_val_if_fail(!self->started, FALSE);

	self->client = msd_kube_client_new(self->config, error);
	if (self->client == NULL)
		return FALSE;
	self->started = TRUE;
	meshsync_handler_begin_run(self);
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
	MeshSyncPendingEvent *head;

	g_return_if_fail(MESHSYNC_IS_HANDLER(self));

	if (!self->started || self->stopped)
		return;
	self->stopped = TRUE;
	g_clear_handle_id(&self->resync_id, g_source_remove);
	g_clear_handle_id(&self->flush_id, g_source_remove);
	meshsync_handler_end_run(self);
	if (self->crd_informer != NULL) {
		g_signal_handlers_disconnect_by_data(self->crd_informer, self);
		msd_informer_stop(self->crd_informer);
	}
	g_clear_object(&self->crd_informer);

	/* Nothing received is dropped: a Service still waiting for its probe is written as if
	 * the probe had failed. */
	self->probing = FALSE;
	while ((head = g_queue_pop_head(&self->pending)) != NULL) {
		if (meshsync_resource_get_pending_endpoint(head->resource) != NULL)
			meshsync_resource_complete_probe(head->resource, FALSE);
		/* Stopped: an output that still cannot take the event reports it as not
		 * written rather than holding it. */
		meshsync_handler_deliver(self, head);
		meshsync_pending_event_free(head);
	}
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
	g_clear_handle_id(&self->resync_id, g_source_remove);
	self->resync_id = g_timeout_add(self->resync_delay_ms, meshsync_handler_resync_cb, self);
	g_source_set_static_name(g_main_context_find_source_by_id(NULL, self->resync_id),
	                         "[meshsync] resync");
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
	return self->ready;
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
	return self->cluster_id;
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
	GPtrArray *informers;
	guint total = 0;

	g_return_val_if_fail(MESHSYNC_IS_HANDLER(self), 0);

	if (self->run == NULL)
		return 0;
	informers = msd_run_get_informers(self->run);
	for (guint i = 0; i < informers->len; i++)
		total +=
		        msd_store_get_size(msd_informer_get_store(g_ptr_array_index(informers, i)));
	return total;
}

MeshSyncDiscovery *
meshsync_handler_get_discovery(MeshSyncHandler *self)
{
	g_return_val_if_fail(MESHSYNC_IS_HANDLER(self), NULL);
	return self->discovery;
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
	return self->initial_sync_seconds;
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
	g_return_val_if_fail(MESHSYNC_IS_HANDLER(self), NULL);

	if (self->run == NULL)
		return g_new0(gchar *, 1);
	return msd_run_dup_informer_names(self->run);
}

static guint64
meshsync_handler_sum_counters(MeshSyncHandler *self, gboolean relists)
{
	guint64 total = relists ? self->past_relists : self->past_restarts;
	GPtrArray *informers;

	if (self->run == NULL)
		return total;
	informers = msd_run_get_informers(self->run);
	for (guint i = 0; i < informers->len; i++) {
		MsdInformerCounters counters;

		msd_informer_get_counters(g_ptr_array_index(informers, i), &counters);
		total += relists ? counters.relists : counters.watch_restarts;
	}
	return total;
}

static gdouble
meshsync_handler_objects_gauge(gpointer user_data)
{
	return meshsync_handler_get_n_objects(user_data);
}

static gdouble
meshsync_handler_relists_gauge(gpointer user_data)
{
	return (gdouble)meshsync_handler_sum_counters(user_data, TRUE);
}

static gdouble
meshsync_handler_restarts_gauge(gpointer user_data)
{
	return (gdouble)meshsync_handler_sum_counters(user_data, FALSE);
}

static gdouble
meshsync_handler_ready_gauge(gpointer user_data)
{
	return meshsync_handler_get_ready(user_data) ? 1 : 0;
}

void
meshsync_handler_set_metrics(MeshSyncHandler *self, MsdMetrics *metrics)
{
	g_return_if_fail(MESHSYNC_IS_HANDLER(self));

	meshsync_handler_drop_metrics(self);
	if (metrics == NULL)
		return;
	self->metrics = g_object_ref(metrics);
	/* The gauges read the handler at scrape time and are removed when it goes away. */
	msd_metrics_gauge_set_func(metrics, "meshsync_objects",
	                           "Objects held by the informers of the current run",
	                           meshsync_handler_objects_gauge, self, NULL, NULL);
	msd_metrics_gauge_set_func(
	        metrics, "meshsync_relists",
	        "Lists started again after a watch expired or broke (cumulative)",
	        meshsync_handler_relists_gauge, self, NULL, NULL);
	msd_metrics_gauge_set_func(metrics, "meshsync_watch_restarts",
	                           "Watches reopened after they ended (cumulative)",
	                           meshsync_handler_restarts_gauge, self, NULL, NULL);
	msd_metrics_gauge_set_func(metrics, "meshsync_ready",
	                           "1 once the current run has its complete initial state",
	                           meshsync_handler_ready_gauge, self, NULL, NULL);
}

static void
meshsync_handler_collect_object(MsdStoreEntry *entry, gpointer user_data)
{
	g_ptr_array_add(user_data, g_bytes_ref(entry->object));
}

GPtrArray *
meshsync_handler_dup_objects(MeshSyncHandler *self)
{
	GPtrArray *objects = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
	GPtrArray *informers;

	g_return_val_if_fail(MESHSYNC_IS_HANDLER(self), objects);

	if (self->run == NULL)
		return objects;
	informers = msd_run_get_informers(self->run);
	for (guint i = 0; i < informers->len; i++)
		msd_store_foreach(msd_informer_get_store(g_ptr_array_index(informers, i)),
		                  meshsync_handler_collect_object, objects);
	return objects;
}
