/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * One file: the service is the composition root, and its parts (outputs, broker and request
 * answering, health server and metrics, sessions) are built, started, made ready and stopped in
 * one order that reads top to bottom here; most of the length is the documented setters of the
 * public API.
 */

#define G_LOG_DOMAIN "MeshSyncEngine"

#include "config.h"

#include "broker/msd-request-listener.h"
#include "broker/msd-session-relay.h"
#include "engine/msd-engine-context.h"
#include "health/msd-build-info.h"
#include "health/msd-engine-metrics.h"
#include "health/msd-metrics.h"
#include "health/msd-process-metrics.h"
#include "meshsync-broker-writer.h"
#include "meshsync-composite-writer.h"
#include "meshsync-enum-types.h"
#include "meshsync-error.h"
#include "meshsync-file-writer-private.h"
#include "meshsync-handler-private.h"
#include "meshsync-health-server-private.h"
#include "meshsync-service.h"
#include "util/msd-i18n.h"

/**
 * MeshSyncService:
 *
 * A whole MeshSync run assembled from configuration: what the `meshsync` daemon runs, for any
 * program.
 *
 * A service owns a [class@MeshSync.Handler] and gives it its outputs: the YAML snapshot
 * ([method@MeshSync.Service.set_output_file]), the broker
 * ([method@MeshSync.Service.set_broker]: every event on `meshery.meshsync.core`, and the
 * requests on `meshery.meshsync.request` answered: `informer-store`, `resync-discovery`,
 * `meshsync-meta`, `active-exec`, and the log and exec sessions of `log-stream` and
 * `exec-request`, see [class@MeshSync.Session] and
 * [property@MeshSync.Service:max-sessions]), any writers of the caller's
 * ([method@MeshSync.Service.add_writer]), or several of them at once. With
 * [method@MeshSync.Service.set_health] it serves `/healthz`, `/readyz` and `/metrics`.
 *
 * [method@MeshSync.Service.start_async] listens for health probes, waits for the broker (up to
 * its connect timeout), opens the outputs and starts the handler; it completes once the sync
 * is under way, not when it is complete: [property@MeshSync.Service:ready] tells that.
 * [method@MeshSync.Service.stop_async] stops the informers, writes out what was received,
 * closes the outputs and gives the broker a bounded time to take what it still holds.
 *
 * From Python, broker mode with request answering and readiness probes is:
 *
 * ```python
 * service = MeshSync.Service.new(MeshSync.KubeConfig.load(None, None))
 * service.set_broker(MeshSync.Broker.new("nats://127.0.0.1:4222"))
 * service.set_health(None, 11000)
 * service.start_async(None, lambda s, r: s.start_finish(r))
 * GLib.MainLoop().run()
 * ```
 *
 * Everything runs in the thread-default main context of the thread that calls
 * [method@MeshSync.Service.start_async].
 */

/* How long stopping waits for the broker to take what is still buffered. */
#define MESHSYNC_SERVICE_FLUSH_TIMEOUT_MS 5000

#define MESHSYNC_CHECK_BROKER "broker"
#define MESHSYNC_CHECK_SYNCED "informers-synced"

typedef enum {
	MESHSYNC_SERVICE_IDLE,
	MESHSYNC_SERVICE_STARTING,
	MESHSYNC_SERVICE_RUNNING,
	MESHSYNC_SERVICE_STOPPING,
	MESHSYNC_SERVICE_STOPPED,
} MeshSyncServiceState;

struct _MeshSyncService {
	GObject parent_instance;

	/* configuration */
	MeshSyncKubeConfig *config; /* (owned) */
	MsdEngineOptions *options;  /* (owned): the engine's configuration, handed over at start */
	gboolean file_output;
	gchar *output_file; /* (owned) (nullable): NULL picks upstream's default name */
	gboolean output_extended;
	MeshSyncBroker *broker; /* (owned) (nullable) */
	MeshSyncBus *bus;       /* (owned) (nullable): a host's, for requests it hands over */
	gboolean content_dedup;
	GPtrArray *extra_writers; /* (owned) (element-type MeshSyncWriter) */
	gboolean health_enabled;
	gchar *health_address; /* (owned) (nullable) */
	guint health_port;
	guint flush_timeout_ms;
	guint max_sessions;
	gboolean exec_enabled;
	GStrv exec_namespaces; /* (owned) (nullable): every namespace */
	guint exec_idle_timeout;
	gboolean strict_readiness;

	/* assembled by start */
	MeshSyncServiceState state;
	MsdEngineContext *engine;            /* (owned) (nullable): from start on */
	MsdMetrics *metrics;                 /* (owned) (nullable) */
	MeshSyncHealthServer *health;        /* (owned) (nullable) */
	MeshSyncFileWriter *file_writer;     /* (owned) (nullable) */
	MeshSyncBrokerWriter *broker_writer; /* (owned) (nullable) */
	MeshSyncWriter *writer;              /* (owned) (nullable): what the handler writes to */
	MeshSyncHandler *handler;            /* (owned) (nullable) */
	MsdRequestListener *listener;        /* (owned) (nullable) */
	MsdSessionRelay *sessions;           /* (owned) (nullable): log and exec sessions */
};

G_DEFINE_FINAL_TYPE(MeshSyncService, meshsync_service, G_TYPE_OBJECT)

enum {
	PROP_0,
	PROP_KUBE_CONFIG,
	PROP_READY,
	PROP_MAX_SESSIONS,
	PROP_EXEC_ENABLED,
	PROP_EXEC_NAMESPACES,
	PROP_EXEC_IDLE_TIMEOUT,
	PROP_STRICT_READINESS,
	N_PROPS,
};

static GParamSpec *props[N_PROPS];

enum {
	SIGNAL_FAILED,
	SIGNAL_RUN_FAILED,
	SIGNAL_SESSIONS_CHANGED,
	N_SIGNALS,
};

static guint signals[N_SIGNALS];

static const gchar *
meshsync_service_broker_state_text(MeshSyncBrokerState state)
{
	switch (state) {
	case MESHSYNC_BROKER_STATE_DISCONNECTED:
		return "not connected";
	case MESHSYNC_BROKER_STATE_CONNECTING:
		return "connecting";
	case MESHSYNC_BROKER_STATE_CONNECTED:
		return "connected";
	case MESHSYNC_BROKER_STATE_RECONNECTING:
		return "connection lost, reconnecting";
	case MESHSYNC_BROKER_STATE_CLOSED:
		return "connection closed";
	default:
		return "unknown";
	}
}

static void
meshsync_service_update_broker_check(MeshSyncService *self)
{
	MeshSyncBrokerState state = meshsync_broker_get_state(self->broker);

	if (self->health != NULL)
		meshsync_health_server_set_check(self->health, MESHSYNC_CHECK_BROKER,
		                                 state == MESHSYNC_BROKER_STATE_CONNECTED,
		                                 meshsync_service_broker_state_text(state));
}

/* A delegated infrastructure detected or gone: its adapter learns it on the broker. */
static void
meshsync_service_publish_infra_cb(GBytes *envelope, gpointer user_data)
{
	MeshSyncService *self = user_data;
	MeshSyncBus *bus = self->broker != NULL ? MESHSYNC_BUS(self->broker) : self->bus;
	g_autoptr(GError) error = NULL;

	if (bus != NULL && !meshsync_bus_publish(bus, MSD_SUBJECT_INFRA_DETECTED, envelope, &error))
		g_message("%s: not published: %s", MSD_SUBJECT_INFRA_DETECTED, error->message);
}

static void
meshsync_service_broker_state_cb(MeshSyncBroker *broker, GParamSpec *pspec, MeshSyncService *self)
{
	g_info("broker connection state: %s",
	       meshsync_service_broker_state_text(meshsync_broker_get_state(broker)));
	meshsync_service_update_broker_check(self);
}

/* Upstream is ready once its broker handler exists, synced or not; the sync is part of
 * readiness in file mode (where upstream is never ready) and in the strict meaning. */
static gboolean
meshsync_service_sync_gates_readiness(MeshSyncService *self)
{
	return self->strict_readiness || self->broker == NULL;
}

static void
meshsync_service_ready_changed_cb(MeshSyncHandler *handler, gboolean ready, MeshSyncService *self)
{
	if (self->health != NULL && meshsync_service_sync_gates_readiness(self))
		meshsync_health_server_set_check(self->health, MESHSYNC_CHECK_SYNCED, ready,
		                                 "the informers have not synced yet");
	g_object_notify_by_pspec(G_OBJECT(self), props[PROP_READY]);
}

static void
meshsync_service_handler_failed_cb(MeshSyncHandler *handler,
                                   const GError *error,
                                   MeshSyncService *self)
{
	g_signal_emit(self, signals[SIGNAL_FAILED], 0, error);
}

static void
meshsync_service_run_failed_cb(MeshSyncHandler *handler, const GError *error, MeshSyncService *self)
{
	g_signal_emit(self, signals[SIGNAL_RUN_FAILED], 0, error);
}

static void
meshsync_service_sessions_changed_cb(MeshSyncService *self)
{
	g_signal_emit(self, signals[SIGNAL_SESSIONS_CHANGED], 0);
}

static gboolean
meshsync_service_start_health(MeshSyncService *self, GError **error)
{
	self->metrics = msd_metrics_new();
	/* what the engine's parts count goes here: they find it in the engine context */
	msd_engine_context_set_metrics(self->engine, self->metrics);
	msd_build_info_register(self->metrics);
	msd_process_metrics_register(self->metrics);
	msd_engine_metrics_declare(self->metrics, self->broker != NULL);
	if (self->broker != NULL) {
		msd_request_listener_declare_metrics(self->metrics);
		msd_session_relay_declare_metrics(self->metrics);
	}
	self->health = meshsync_health_server_new();
	meshsync_health_server_set_metrics(self->health, self->metrics);
	meshsync_health_server_set_latch(self->health, !self->strict_readiness);
	if (self->broker != NULL)
		meshsync_health_server_set_check(self->health, MESHSYNC_CHECK_BROKER, FALSE,
		                                 "not connected");
	if (meshsync_service_sync_gates_readiness(self))
		meshsync_health_server_set_check(self->health, MESHSYNC_CHECK_SYNCED, FALSE,
		                                 "the informers have not synced yet");
	if (!meshsync_health_server_listen(self->health, self->health_address, self->health_port,
	                                   error))
		return FALSE;
	g_info("meshsync: health endpoints /healthz, /readyz and /metrics listening on %s:%u",
	       self->health_address != NULL ? self->health_address : "*",
	       meshsync_health_server_get_port(self->health));
	return TRUE;
}

/* The outputs, in upstream's order of importance: the broker, then the snapshot, then the
 * caller's; more than one goes through a composite, which hands every writer the same
 * resource. */
static gboolean
meshsync_service_open_outputs(MeshSyncService *self, GError **error)
{
	g_autoptr(GPtrArray) writers = g_ptr_array_new_with_free_func(g_object_unref);

	if (self->broker != NULL) {
		self->broker_writer =
		        meshsync_broker_writer_new(self->broker, MESHSYNC_SUBJECT_CORE);
		if (self->content_dedup) {
			g_info("meshsync: broker content deduplication enabled");
			meshsync_broker_writer_set_content_dedup(self->broker_writer, TRUE);
		}
		if (self->metrics != NULL)
			msd_engine_metrics_bind_broker(self->metrics, self->broker,
			                               self->broker_writer);
		g_ptr_array_add(writers, g_object_ref(self->broker_writer));
	}
	if (self->file_output) {
		self->file_writer =
		        meshsync_file_writer_new(self->output_file, self->output_extended, error);
		if (self->file_writer == NULL)
			return FALSE;
		g_info("writing the snapshot to %s%s%s",
		       meshsync_file_writer_get_path(self->file_writer),
		       self->output_extended ? " and every event to " : "",
		       self->output_extended
		               ? meshsync_file_writer_get_extended_path(self->file_writer)
		               : "");
		g_ptr_array_add(writers, g_object_ref(self->file_writer));
	}
	for (guint i = 0; i < self->extra_writers->len; i++)
		g_ptr_array_add(writers, g_object_ref(g_ptr_array_index(self->extra_writers, i)));

	if (writers->len == 1) {
		self->writer = g_object_ref(g_ptr_array_index(writers, 0));
	} else if (writers->len > 1) {
		g_autoptr(MeshSyncCompositeWriter) all = meshsync_composite_writer_new();

		for (guint i = 0; i < writers->len; i++)
			meshsync_composite_writer_add(all, g_ptr_array_index(writers, i));
		self->writer = MESHSYNC_WRITER(g_steal_pointer(&all));
	}
	return TRUE;
}

static gboolean
meshsync_service_unwritten_cb(const gchar *uid, gpointer user_data)
{
	return meshsync_file_writer_has_object(user_data, uid);
}

static gboolean
meshsync_service_start_sync(MeshSyncService *self, GError **error)
{
	if (!meshsync_service_open_outputs(self, error))
		return FALSE;

	self->handler = meshsync_handler_new(self->config, self->writer);
	meshsync_handler_set_engine_context(self->handler, self->engine);
	meshsync_handler_set_options(self->handler, self->options);
	/* The snapshot alone: a MODIFIED event of an object it holds would be converted for
	 * nothing. */
	if (self->file_writer != NULL && self->writer == MESHSYNC_WRITER(self->file_writer) &&
	    meshsync_file_writer_get_extended_path(self->file_writer) == NULL)
		meshsync_handler_set_unwritten_func(self->handler, meshsync_service_unwritten_cb,
		                                    self->file_writer);
	if (self->metrics != NULL)
		msd_engine_metrics_bind_handler(self->metrics, self->handler);
	g_signal_connect(self->handler, "ready-changed",
	                 G_CALLBACK(meshsync_service_ready_changed_cb), self);
	g_signal_connect(self->handler, "failed", G_CALLBACK(meshsync_service_handler_failed_cb),
	                 self);
	g_signal_connect(self->handler, "run-failed", G_CALLBACK(meshsync_service_run_failed_cb),
	                 self);

	if (self->broker != NULL || self->bus != NULL) {
		MeshSyncBus *bus = self->broker != NULL ? MESHSYNC_BUS(self->broker) : self->bus;

		self->listener =
		        msd_request_listener_new(bus, self->handler, meshsync_get_version());
		msd_request_listener_set_shard(self->listener, self->options->shard_index,
		                               self->options->shard_total);
		self->sessions = msd_session_relay_new(bus, self->engine, self->config);
		msd_session_relay_set_limits(self->sessions, self->max_sessions, self->exec_enabled,
		                             (const gchar *const *)self->exec_namespaces,
		                             self->exec_idle_timeout);
		g_signal_connect_swapped(self->sessions, "changed",
		                         G_CALLBACK(meshsync_service_sessions_changed_cb), self);
		msd_request_listener_set_sessions(self->listener, self->sessions);
		meshsync_handler_set_infra_publish_func(self->handler,
		                                        meshsync_service_publish_infra_cb, self);
		/* A host's bus hands its requests over through handle_request(). */
		if (self->broker != NULL && !msd_request_listener_start(self->listener, error))
			return FALSE;
	}
	return meshsync_handler_start(self->handler, error);
}

static void
meshsync_service_start_failed(MeshSyncService *self, GTask *task, GError *error)
{
	self->state = MESHSYNC_SERVICE_STOPPED;
	g_task_return_error(task, error);
}

static void
meshsync_service_connected_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	MeshSyncService *self = g_task_get_source_object(task);
	GError *error = NULL;

	if (!meshsync_broker_connect_finish(MESHSYNC_BROKER(source), result, &error)) {
		meshsync_service_start_failed(self, task, error);
		return;
	}
	/* the state notification may have come before the check was watched */
	meshsync_service_update_broker_check(self);
	if (!meshsync_service_start_sync(self, &error)) {
		meshsync_service_start_failed(self, task, error);
		return;
	}
	self->state = MESHSYNC_SERVICE_RUNNING;
	g_info("meshsync: run started");
	g_task_return_boolean(task, TRUE);
}

/**
 * meshsync_service_start_async:
 * @self: a #MeshSyncService
 * @cancellable: (nullable): stops waiting for the broker
 * @callback: called once the sync is under way, or failed to start
 * @user_data: for @callback
 *
 * Starts everything that was configured: the health endpoints first (so that probes see a
 * live process while it waits), then the broker connection (retried until its connect
 * timeout), the outputs, and the handler. The callback runs in the thread-default main
 * context of the caller.
 */
void
meshsync_service_start_async(MeshSyncService *self,
                             GCancellable *cancellable,
                             GAsyncReadyCallback callback,
                             gpointer user_data)
{
	g_autoptr(GTask) task = NULL;
	GError *error = NULL;

	g_return_if_fail(MESHSYNC_IS_SERVICE(self));
	g_return_if_fail(cancellable == NULL || G_IS_CANCELLABLE(cancellable));

	task = g_task_new(self, cancellable, callback, user_data);
	g_task_set_source_tag(task, meshsync_service_start_async);
	if (self->state != MESHSYNC_SERVICE_IDLE) {
		g_task_return_new_error(task, MESHSYNC_ERROR, MESHSYNC_ERROR_FAILED,
		                        _("the service was started already"));
		return;
	}
	self->state = MESHSYNC_SERVICE_STARTING;
	/* the loop of the thread that starts us: every timer of the engine goes there */
	self->engine = msd_engine_context_new();
	if (self->health_enabled && !meshsync_service_start_health(self, &error)) {
		meshsync_service_start_failed(self, task, error);
		return;
	}
	if (self->broker != NULL) {
		g_signal_connect(self->broker, "notify::state",
		                 G_CALLBACK(meshsync_service_broker_state_cb), self);
		meshsync_broker_connect_async(self->broker, cancellable,
		                              meshsync_service_connected_cb,
		                              g_steal_pointer(&task));
		return;
	}
	if (!meshsync_service_start_sync(self, &error)) {
		meshsync_service_start_failed(self, task, error);
		return;
	}
	self->state = MESHSYNC_SERVICE_RUNNING;
	g_info("meshsync: run started");
	g_task_return_boolean(task, TRUE);
}

/**
 * meshsync_service_start_finish:
 * @self: a #MeshSyncService
 * @result: the result passed to the callback
 * @error: return location for a #GError
 *
 * Finishes [method@MeshSync.Service.start_async].
 *
 * Returns: %TRUE once the sync is under way; %FALSE when the health port could not be bound,
 *   the broker never answered (or refused the credentials), an output could not be opened,
 *   or the start was cancelled (%G_IO_ERROR_CANCELLED)
 */
gboolean
meshsync_service_start_finish(MeshSyncService *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
	g_return_val_if_fail(g_task_get_source_tag(G_TASK(result)) == meshsync_service_start_async,
	                     FALSE);
	return g_task_propagate_boolean(G_TASK(result), error);
}

static void
meshsync_service_log_totals(MeshSyncService *self)
{
	if (self->broker_writer != NULL)
		g_info("broker flushed: %" G_GUINT64_FORMAT " events published",
		       meshsync_broker_writer_get_n_published(self->broker_writer));
	if (self->file_writer != NULL)
		g_info("snapshot %s: %u documents written",
		       meshsync_file_writer_get_path(self->file_writer),
		       meshsync_file_writer_get_n_documents(self->file_writer));
}

static void
meshsync_service_stopped(MeshSyncService *self, GTask *task)
{
	GError *error = g_task_get_task_data(task);

	self->state = MESHSYNC_SERVICE_STOPPED;
	meshsync_service_log_totals(self);
	if (error != NULL)
		g_task_return_error(task, g_error_copy(error));
	else
		g_task_return_boolean(task, TRUE);
}

static void
meshsync_service_broker_closed_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	g_autoptr(GError) error = NULL;

	if (!meshsync_broker_close_finish(MESHSYNC_BROKER(source), result, &error) &&
	    !g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
		g_info("%s", error->message);
	meshsync_service_stopped(g_task_get_source_object(task), task);
}

/* The broker closes without holding the loop: what the socket has not taken yet goes out
 * while health probes and D-Bus calls are still answered. Takes @task. */
static void
meshsync_service_close_broker(MeshSyncService *self, GTask *task)
{
	meshsync_broker_close_async(self->broker, g_task_get_cancellable(task),
	                            meshsync_service_broker_closed_cb, task);
}

static void
meshsync_service_flushed_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	GTask *task = user_data;
	g_autoptr(GError) error = NULL;

	if (!meshsync_broker_flush_finish(MESHSYNC_BROKER(source), result, &error))
		g_message("messages may be lost: %s", error->message);
	meshsync_service_close_broker(g_task_get_source_object(task), task);
}

/**
 * meshsync_service_stop_async:
 * @self: a #MeshSyncService
 * @cancellable: (nullable): a #GCancellable
 * @callback: called once everything is stopped
 * @user_data: for @callback
 *
 * Stops the informers and the request answering, writes out every event already received,
 * closes the outputs and waits (a bounded time, see
 * [method@MeshSync.Service.set_flush_timeout]) for the broker to take what it still buffers,
 * then closes the broker with [method@MeshSync.Broker.close_async], so the main loop keeps
 * running until the callback.
 * Unlike upstream, nothing published before the stop is thrown away while the broker is
 * reachable.
 */
void
meshsync_service_stop_async(MeshSyncService *self,
                            GCancellable *cancellable,
                            GAsyncReadyCallback callback,
                            gpointer user_data)
{
	g_autoptr(GTask) task = NULL;
	g_autoptr(GError) error = NULL;
	MeshSyncBrokerState state;

	g_return_if_fail(MESHSYNC_IS_SERVICE(self));

	task = g_task_new(self, cancellable, callback, user_data);
	g_task_set_source_tag(task, meshsync_service_stop_async);
	if (self->state != MESHSYNC_SERVICE_RUNNING) {
		self->state = MESHSYNC_SERVICE_STOPPED;
		g_task_return_boolean(task, TRUE);
		return;
	}
	self->state = MESHSYNC_SERVICE_STOPPING;
	g_info("meshsync: shutting down");
	if (self->listener != NULL)
		msd_request_listener_stop(self->listener);
	if (self->sessions != NULL)
		msd_session_relay_stop_all(self->sessions);
	meshsync_handler_stop(self->handler);
	if (self->writer != NULL && !meshsync_writer_close(self->writer, &error))
		g_task_set_task_data(task, g_steal_pointer(&error), (GDestroyNotify)g_error_free);
	if (self->broker == NULL) {
		meshsync_service_stopped(self, task);
		return;
	}
	state = meshsync_broker_get_state(self->broker);
	if (state != MESHSYNC_BROKER_STATE_CONNECTED &&
	    state != MESHSYNC_BROKER_STATE_RECONNECTING) {
		meshsync_service_close_broker(self, g_steal_pointer(&task));
		return;
	}
	meshsync_broker_flush_async(self->broker, self->flush_timeout_ms, cancellable,
	                            meshsync_service_flushed_cb, g_steal_pointer(&task));
}

/**
 * meshsync_service_stop_finish:
 * @self: a #MeshSyncService
 * @result: the result passed to the callback
 * @error: return location for a #GError
 *
 * Finishes [method@MeshSync.Service.stop_async].
 *
 * Returns: %TRUE when everything was written; %FALSE when closing an output failed (for
 *   example %MESHSYNC_ERROR_WRITE on a full disk)
 */
gboolean
meshsync_service_stop_finish(MeshSyncService *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
	g_return_val_if_fail(g_task_get_source_tag(G_TASK(result)) == meshsync_service_stop_async,
	                     FALSE);
	return g_task_propagate_boolean(G_TASK(result), error);
}

static void
meshsync_service_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
	MeshSyncService *self = MESHSYNC_SERVICE(object);

	switch (prop_id) {
	case PROP_KUBE_CONFIG:
		g_value_set_object(value, self->config);
		break;
	case PROP_READY:
		g_value_set_boolean(value, meshsync_service_get_ready(self));
		break;
	case PROP_MAX_SESSIONS:
		g_value_set_uint(value, self->max_sessions);
		break;
	case PROP_EXEC_ENABLED:
		g_value_set_boolean(value, self->exec_enabled);
		break;
	case PROP_EXEC_NAMESPACES:
		g_value_set_boxed(value, self->exec_namespaces);
		break;
	case PROP_EXEC_IDLE_TIMEOUT:
		g_value_set_uint(value, self->exec_idle_timeout);
		break;
	case PROP_STRICT_READINESS:
		g_value_set_boolean(value, self->strict_readiness);
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
	}
}

static void
meshsync_service_set_property(GObject *object,
                              guint prop_id,
                              const GValue *value,
                              GParamSpec *pspec)
{
	MeshSyncService *self = MESHSYNC_SERVICE(object);

	switch (prop_id) {
	case PROP_KUBE_CONFIG:
		self->config = g_value_dup_object(value);
		break;
	case PROP_MAX_SESSIONS:
		meshsync_service_set_max_sessions(self, g_value_get_uint(value));
		break;
	case PROP_EXEC_ENABLED:
		meshsync_service_set_exec_enabled(self, g_value_get_boolean(value));
		break;
	case PROP_EXEC_NAMESPACES:
		meshsync_service_set_exec_namespaces(self, g_value_get_boxed(value));
		break;
	case PROP_EXEC_IDLE_TIMEOUT:
		meshsync_service_set_exec_idle_timeout(self, g_value_get_uint(value));
		break;
	case PROP_STRICT_READINESS:
		meshsync_service_set_strict_readiness(self, g_value_get_boolean(value));
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
	}
}

static void
meshsync_service_dispose(GObject *object)
{
	MeshSyncService *self = MESHSYNC_SERVICE(object);

	if (self->listener != NULL)
		msd_request_listener_stop(self->listener);
	g_clear_object(&self->listener);
	if (self->sessions != NULL) {
		g_signal_handlers_disconnect_by_data(self->sessions, self);
		msd_session_relay_stop_all(self->sessions);
	}
	g_clear_object(&self->sessions);
	if (self->metrics != NULL) {
		/* the gauges read the handler and the broker: drop them first */
		msd_engine_metrics_unbind_handler(self->metrics, self->handler);
		msd_engine_metrics_unbind_broker(self->metrics);
	}
	if (self->handler != NULL) {
		g_signal_handlers_disconnect_by_data(self->handler, self);
		meshsync_handler_stop(self->handler);
	}
	g_clear_object(&self->handler);
	g_clear_object(&self->writer);
	g_clear_object(&self->broker_writer);
	g_clear_object(&self->file_writer);
	if (self->broker != NULL) {
		g_signal_handlers_disconnect_by_data(self->broker, self);
		meshsync_broker_close(self->broker);
	}
	g_clear_object(&self->broker);
	g_clear_object(&self->bus);
	g_clear_object(&self->health);
	g_clear_object(&self->metrics);
	g_clear_object(&self->engine);
	if (self->extra_writers != NULL)
		g_ptr_array_set_size(self->extra_writers, 0);
	G_OBJECT_CLASS(meshsync_service_parent_class)->dispose(object);
}

static void
meshsync_service_finalize(GObject *object)
{
	MeshSyncService *self = MESHSYNC_SERVICE(object);

	g_clear_object(&self->config);
	msd_engine_options_free(self->options);
	g_free(self->output_file);
	g_free(self->health_address);
	g_strfreev(self->exec_namespaces);
	g_ptr_array_unref(self->extra_writers);
	G_OBJECT_CLASS(meshsync_service_parent_class)->finalize(object);
}

static void
meshsync_service_class_init(MeshSyncServiceClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->get_property = meshsync_service_get_property;
	object_class->set_property = meshsync_service_set_property;
	object_class->dispose = meshsync_service_dispose;
	object_class->finalize = meshsync_service_finalize;

	/**
	 * MeshSyncService:kube-config: (getter get_kube_config)
	 *
	 * The API server to sync from.
	 */
	props[PROP_KUBE_CONFIG] = g_param_spec_object(
	        "kube-config", NULL, NULL, MESHSYNC_TYPE_KUBE_CONFIG,
	        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

	/**
	 * MeshSyncService:ready: (getter get_ready)
	 *
	 * Whether the current run has its complete initial state; see
	 * [property@MeshSync.Handler:ready].
	 */
	props[PROP_READY] = g_param_spec_boolean("ready", NULL, NULL, FALSE,
	                                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS |
	                                                 G_PARAM_EXPLICIT_NOTIFY);

	/**
	 * MeshSyncService:max-sessions: (getter get_max_sessions) (setter set_max_sessions)
	 *
	 * How many log and exec sessions may be open at once (64 by default); the request for
	 * one more gets an `error` message.
	 */
	props[PROP_MAX_SESSIONS] = g_param_spec_uint(
	        "max-sessions", NULL, NULL, 0, G_MAXUINT, MSD_SESSION_DEFAULT_MAX,
	        G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
	/**
	 * MeshSyncService:exec-enabled: (getter get_exec_enabled) (setter set_exec_enabled)
	 *
	 * Whether `exec-request` may open a shell in a container (the daemon's
	 * `--disable-exec` turns it off).
	 */
	props[PROP_EXEC_ENABLED] = g_param_spec_boolean("exec-enabled", NULL, NULL, TRUE,
	                                                G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
	                                                        G_PARAM_EXPLICIT_NOTIFY);
	/**
	 * MeshSyncService:exec-namespaces:
	 *
	 * The only namespaces exec sessions may be opened in; %NULL for all of them.
	 */
	props[PROP_EXEC_NAMESPACES] = g_param_spec_boxed(
	        "exec-namespaces", NULL, NULL, G_TYPE_STRV,
	        G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
	/**
	 * MeshSyncService:exec-idle-timeout:
	 *
	 * Seconds an exec session may go without input or output before it is closed (30
	 * minutes by default); 0 for never.
	 */
	props[PROP_EXEC_IDLE_TIMEOUT] = g_param_spec_uint(
	        "exec-idle-timeout", NULL, NULL, 0, G_MAXUINT, MSD_SESSION_DEFAULT_IDLE_SECONDS,
	        G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
	/* clang-format off */
	/**
	 * MeshSyncService:strict-readiness: (getter get_strict_readiness) (setter set_strict_readiness)
	 *
	 * What `/readyz` means. Off (the default), it is upstream MeshSync's: 200 for good from
	 * the first time the broker is connected (in file mode, from the end of the first initial
	 * sync), so a broker blip or a resync never takes the pod out of its Service. On, it is
	 * 200 exactly while the broker is connected and the informers are synced.
	 */
	/* clang-format on */
	props[PROP_STRICT_READINESS] = g_param_spec_boolean(
	        "strict-readiness", NULL, NULL, FALSE,
	        G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
	g_object_class_install_properties(object_class, N_PROPS, props);

	/**
	 * MeshSyncService::sessions-changed:
	 * @self: the service
	 *
	 * A log or exec session was opened or closed; see
	 * [method@MeshSync.Service.dup_sessions].
	 */
	signals[SIGNAL_SESSIONS_CHANGED] =
	        g_signal_new("sessions-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
	                     NULL, NULL, NULL, G_TYPE_NONE, 0);

	/**
	 * MeshSyncService::failed:
	 * @self: the service
	 * @error: what went wrong
	 *
	 * Emitted when the sync cannot go on, for example when an output reports
	 * %MESHSYNC_ERROR_WRITE; the handler has stopped by then. Stop the service and report the
	 * error.
	 */
	signals[SIGNAL_FAILED] = g_signal_new("failed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
	                                      0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_ERROR);

	/**
	 * MeshSyncService::run-failed:
	 * @self: the service
	 * @error: why the run could not get going
	 *
	 * Emitted each time a run fails before its initial sync: the API server cannot be
	 * reached, its certificate is not trusted, the credentials are rejected (see
	 * [signal@MeshSync.Handler::run-failed]). The service keeps trying, with a growing
	 * delay; a one-shot program may stop it instead.
	 */
	signals[SIGNAL_RUN_FAILED] =
	        g_signal_new("run-failed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
	                     NULL, NULL, G_TYPE_NONE, 1, G_TYPE_ERROR);
}

static void
meshsync_service_init(MeshSyncService *self)
{
	self->options = msd_engine_options_new();
	self->extra_writers = g_ptr_array_new_with_free_func(g_object_unref);
	self->flush_timeout_ms = MESHSYNC_SERVICE_FLUSH_TIMEOUT_MS;
	self->health_port = MESHSYNC_HEALTH_PORT;
	self->max_sessions = MSD_SESSION_DEFAULT_MAX;
	self->exec_enabled = TRUE;
	self->exec_idle_timeout = MSD_SESSION_DEFAULT_IDLE_SECONDS;
}

/**
 * meshsync_service_new:
 * @config: the API server to sync from
 *
 * Creates a service with no output yet; configure it, then call
 * [method@MeshSync.Service.start_async].
 *
 * Returns: (transfer full): a new service
 */
MeshSyncService *
meshsync_service_new(MeshSyncKubeConfig *config)
{
	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(config), NULL);
	return g_object_new(MESHSYNC_TYPE_SERVICE, "kube-config", config, NULL);
}

#define MESHSYNC_SERVICE_CHECK_CONFIGURABLE(self)                         \
	G_STMT_START                                                      \
	{                                                                 \
		g_return_if_fail(MESHSYNC_IS_SERVICE(self));              \
		g_return_if_fail((self)->state == MESHSYNC_SERVICE_IDLE); \
	}                                                                 \
	G_STMT_END

/**
 * meshsync_service_set_watch_config:
 * @self: a #MeshSyncService
 * @watch_config: (nullable): what to watch
 *
 * Sets what to watch instead of the MeshSync custom resource (or, without one, the default
 * set). Call it before starting.
 */
void
meshsync_service_set_watch_config(MeshSyncService *self, MeshSyncWatchConfig *watch_config)
{
	MESHSYNC_SERVICE_CHECK_CONFIGURABLE(self);
	g_set_object(&self->options->watch, watch_config);
}

/**
 * meshsync_service_set_output_resources:
 * @self: a #MeshSyncService
 * @resources: (array zero-terminated=1) (nullable): resource names as `-outputResources`
 *   takes them (`pod`, `deployment`, ...)
 *
 * Limits the informers to these resources; %NULL or an empty list watches everything
 * configured. Call it before starting.
 */
void
meshsync_service_set_output_resources(MeshSyncService *self, const gchar *const *resources)
{
	MESHSYNC_SERVICE_CHECK_CONFIGURABLE(self);
	msd_engine_options_set_strv(&self->options->output_resources, resources);
}

/**
 * meshsync_service_set_output_namespaces:
 * @self: a #MeshSyncService
 * @namespaces: (array zero-terminated=1) (nullable): namespaces whose objects are emitted
 *
 * Limits the events to these namespaces (cluster-scoped objects always pass), as
 * `-outputNamespaces` does; %NULL or an empty list emits every namespace. Call it before
 * starting.
 */
void
meshsync_service_set_output_namespaces(MeshSyncService *self, const gchar *const *namespaces)
{
	MESHSYNC_SERVICE_CHECK_CONFIGURABLE(self);
	msd_engine_options_set_strv(&self->options->output_namespaces, namespaces);
}

/**
 * meshsync_service_set_namespaces:
 * @self: a #MeshSyncService
 * @namespaces: (array zero-terminated=1) (nullable): the namespaces to watch; %NULL or an
 *   empty list for the whole cluster
 *
 * Scopes the sync to these namespaces, as the daemon's `--namespaces` does: namespaced types
 * are listed and watched in each of them only, so a Role there is enough and memory follows
 * what they hold; see [method@MeshSync.Handler.set_namespaces]. Call it before starting.
 */
void
meshsync_service_set_namespaces(MeshSyncService *self, const gchar *const *namespaces)
{
	MESHSYNC_SERVICE_CHECK_CONFIGURABLE(self);
	msd_engine_options_set_namespaces(self->options, namespaces);
}

/**
 * meshsync_service_set_shard:
 * @self: a #MeshSyncService
 * @index: this replica's shard, from 0
 * @total: how many shards; 0 or 1 for none
 *
 * Publishes (and holds) only shard @index of @total of the objects; see
 * [method@MeshSync.Handler.set_shard]. Sharded, every replica receives every request: each
 * answers `informer-store` with its own objects and resyncs on `resync-discovery`, and
 * shard 0 alone answers `meshsync-meta`, `active-exec` and the log and exec sessions. Call it
 * before starting.
 */
void
meshsync_service_set_shard(MeshSyncService *self, guint index, guint total)
{
	MESHSYNC_SERVICE_CHECK_CONFIGURABLE(self);
	g_return_if_fail(total <= 1 || index < total);
	msd_engine_options_set_shard(self->options, index, total);
}

/**
 * meshsync_service_set_reconcile_interval:
 * @self: a #MeshSyncService
 * @milliseconds: time between reconcile ticks; 0 (the default) for none
 *
 * Reconciles periodically; see [method@MeshSync.Handler.set_reconcile_interval]. Call it
 * before starting.
 */
void
meshsync_service_set_reconcile_interval(MeshSyncService *self, guint milliseconds)
{
	MESHSYNC_SERVICE_CHECK_CONFIGURABLE(self);
	self->options->reconcile_interval_ms = milliseconds;
}

/**
 * meshsync_service_set_store_compression:
 * @self: a #MeshSyncService
 * @compressed: whether the informers' stores hold their objects compressed (the default)
 *
 * See [method@MeshSync.Handler.set_store_compression]. Call it before starting.
 */
void
meshsync_service_set_store_compression(MeshSyncService *self, gboolean compressed)
{
	MESHSYNC_SERVICE_CHECK_CONFIGURABLE(self);
	self->options->compress_store = compressed;
}

/**
 * meshsync_service_set_delivery_queue_size:
 * @self: a #MeshSyncService
 * @events: events that may wait for the output (default 100,000); at least 1
 *
 * How many events may wait, merged per object, while the output cannot take them; see
 * [method@MeshSync.Handler.set_delivery_queue_size]. Call it before starting.
 */
void
meshsync_service_set_delivery_queue_size(MeshSyncService *self, guint events)
{
	MESHSYNC_SERVICE_CHECK_CONFIGURABLE(self);
	g_return_if_fail(events > 0);
	self->options->delivery_queue_size = events;
}

/**
 * meshsync_service_set_output_file:
 * @self: a #MeshSyncService
 * @path: (nullable) (type filename): the snapshot file, or %NULL for upstream's
 *   `meshery-cluster-snapshot-YYYYMMDD-NN.yaml` in the working directory
 * @extended: whether to write every event, with its type, to `<name>-extended.yaml` too
 *
 * Writes the YAML snapshot (file mode); see [class@MeshSync.FileWriter]. Call it before
 * starting.
 */
void
meshsync_service_set_output_file(MeshSyncService *self, const gchar *path, gboolean extended)
{
	MESHSYNC_SERVICE_CHECK_CONFIGURABLE(self);
	self->file_output = TRUE;
	g_free(self->output_file);
	self->output_file = g_strdup(path);
	self->output_extended = extended;
}

/**
 * meshsync_service_set_broker:
 * @self: a #MeshSyncService
 * @broker: (nullable): the NATS broker, configured but not connected yet
 *
 * Publishes every event on `meshery.meshsync.core` in upstream's envelope and answers the
 * requests on `meshery.meshsync.request` (broker mode). The service connects the broker when
 * it starts and closes it when it goes away. Call it before starting.
 */
void
meshsync_service_set_broker(MeshSyncService *self, MeshSyncBroker *broker)
{
	MESHSYNC_SERVICE_CHECK_CONFIGURABLE(self);
	g_return_if_fail(broker == NULL || MESHSYNC_IS_BROKER(broker));
	g_set_object(&self->broker, broker);
}

/**
 * meshsync_service_set_bus:
 * @self: a #MeshSyncService
 * @bus: (nullable): the host's bus
 *
 * For a host that embeds the engine and has a broker of its own: the requests it hands to
 * [method@MeshSync.Service.handle_request] are answered on @bus, and the log and exec
 * sessions they open publish their output and take their input there, as they do on NATS
 * in broker mode. The events go to a writer of the host's ([method@MeshSync.Service.add_writer]).
 * A service with a broker uses the broker instead. Call it before starting.
 */
void
meshsync_service_set_bus(MeshSyncService *self, MeshSyncBus *bus)
{
	MESHSYNC_SERVICE_CHECK_CONFIGURABLE(self);
	g_return_if_fail(bus == NULL || MESHSYNC_IS_BUS(bus));
	g_set_object(&self->bus, bus);
}

/**
 * meshsync_service_handle_request:
 * @self: a #MeshSyncService
 * @envelope: a request as upstream sends it on `meshery.meshsync.request`
 *
 * Answers a request that reached the host's bus (see [method@MeshSync.Service.set_bus]) as
 * if it had arrived over NATS: `informer-store`, `resync-discovery`, `meshsync-meta`,
 * `active-exec`, `log-stream` and `exec-request`. Undecodable requests are logged and
 * dropped. Before the service started, and after it stopped, the request is ignored.
 */
void
meshsync_service_handle_request(MeshSyncService *self, GBytes *envelope)
{
	g_return_if_fail(MESHSYNC_IS_SERVICE(self));
	g_return_if_fail(envelope != NULL);

	if (self->listener == NULL) {
		g_debug("a request before the service started or after it stopped: ignored");
		return;
	}
	msd_request_listener_handle(self->listener, envelope);
}

/**
 * meshsync_service_set_content_dedup:
 * @self: a #MeshSyncService
 * @content_dedup: whether to skip objects whose content was already published
 *
 * Upstream's `MESHSYNC_BROKER_CONTENT_DEDUP`; see
 * [method@MeshSync.BrokerWriter.set_content_dedup]. Call it before starting.
 */
void
meshsync_service_set_content_dedup(MeshSyncService *self, gboolean content_dedup)
{
	MESHSYNC_SERVICE_CHECK_CONFIGURABLE(self);
	self->content_dedup = content_dedup;
}

/**
 * meshsync_service_add_writer:
 * @self: a #MeshSyncService
 * @writer: an output of the caller's
 *
 * Hands every event to @writer as well, after the broker and the snapshot. Call it before
 * starting.
 */
void
meshsync_service_add_writer(MeshSyncService *self, MeshSyncWriter *writer)
{
	MESHSYNC_SERVICE_CHECK_CONFIGURABLE(self);
	g_return_if_fail(MESHSYNC_IS_WRITER(writer));
	g_ptr_array_add(self->extra_writers, g_object_ref(writer));
}

/**
 * meshsync_service_set_health:
 * @self: a #MeshSyncService
 * @address: (nullable): the address to listen on, or %NULL for every address
 * @port: the port (0 picks a free one; see [method@MeshSync.HealthServer.get_port])
 *
 * Serves `/healthz`, `/readyz` (checks `informers-synced`, and `broker` in broker mode) and
 * `/metrics`; see [class@MeshSync.HealthServer]. Call it before starting.
 */
void
meshsync_service_set_health(MeshSyncService *self, const gchar *address, guint port)
{
	MESHSYNC_SERVICE_CHECK_CONFIGURABLE(self);
	g_return_if_fail(port <= G_MAXUINT16);
	self->health_enabled = TRUE;
	g_free(self->health_address);
	self->health_address = g_strdup(address);
	self->health_port = port;
}

/**
 * meshsync_service_set_flush_timeout:
 * @self: a #MeshSyncService
 * @milliseconds: how long stopping waits for the broker
 *
 * Sets how long [method@MeshSync.Service.stop_async] waits for the broker to take the
 * messages it still buffers (5000 ms by default).
 */
void
meshsync_service_set_flush_timeout(MeshSyncService *self, guint milliseconds)
{
	g_return_if_fail(MESHSYNC_IS_SERVICE(self));
	self->flush_timeout_ms = milliseconds;
}

/**
 * meshsync_service_get_kube_config: (get-property kube-config)
 * @self: a #MeshSyncService
 *
 * Gets the API server's configuration.
 *
 * Returns: (transfer none): the configuration
 */
MeshSyncKubeConfig *
meshsync_service_get_kube_config(MeshSyncService *self)
{
	g_return_val_if_fail(MESHSYNC_IS_SERVICE(self), NULL);
	return self->config;
}

/**
 * meshsync_service_get_handler:
 * @self: a #MeshSyncService
 *
 * Gets the handler, to follow its events and state.
 *
 * Returns: (transfer none) (nullable): the handler, %NULL before the service started
 */
MeshSyncHandler *
meshsync_service_get_handler(MeshSyncService *self)
{
	g_return_val_if_fail(MESHSYNC_IS_SERVICE(self), NULL);
	return self->handler;
}

/**
 * meshsync_service_get_broker:
 * @self: a #MeshSyncService
 *
 * Gets the broker of broker mode.
 *
 * Returns: (transfer none) (nullable): the broker, or %NULL without one
 */
MeshSyncBroker *
meshsync_service_get_broker(MeshSyncService *self)
{
	g_return_val_if_fail(MESHSYNC_IS_SERVICE(self), NULL);
	return self->broker;
}

/**
 * meshsync_service_get_file_writer:
 * @self: a #MeshSyncService
 *
 * Gets the snapshot writer of file mode.
 *
 * Returns: (transfer none) (nullable): the writer, %NULL before the service started or
 *   without file output
 */
MeshSyncFileWriter *
meshsync_service_get_file_writer(MeshSyncService *self)
{
	g_return_val_if_fail(MESHSYNC_IS_SERVICE(self), NULL);
	return self->file_writer;
}

/**
 * meshsync_service_get_health_server:
 * @self: a #MeshSyncService
 *
 * Gets the health server, for its port or checks of the caller's.
 *
 * Returns: (transfer none) (nullable): the server, %NULL before the service started or
 *   without [method@MeshSync.Service.set_health]
 */
MeshSyncHealthServer *
meshsync_service_get_health_server(MeshSyncService *self)
{
	g_return_val_if_fail(MESHSYNC_IS_SERVICE(self), NULL);
	return self->health;
}

/**
 * meshsync_service_get_ready: (get-property ready)
 * @self: a #MeshSyncService
 *
 * Tells whether the current run has its initial state.
 *
 * Returns: %TRUE once every informer has synced
 */
gboolean
meshsync_service_get_ready(MeshSyncService *self)
{
	g_return_val_if_fail(MESHSYNC_IS_SERVICE(self), FALSE);
	return self->handler != NULL && meshsync_handler_get_ready(self->handler);
}

/**
 * meshsync_service_set_max_sessions: (set-property max-sessions)
 * @self: a #MeshSyncService
 * @max_sessions: the most log and exec sessions open at once
 *
 * Call it before starting.
 */
void
meshsync_service_set_max_sessions(MeshSyncService *self, guint max_sessions)
{
	MESHSYNC_SERVICE_CHECK_CONFIGURABLE(self);
	if (self->max_sessions == max_sessions)
		return;
	self->max_sessions = max_sessions;
	g_object_notify_by_pspec(G_OBJECT(self), props[PROP_MAX_SESSIONS]);
}

/**
 * meshsync_service_get_max_sessions: (get-property max-sessions)
 * @self: a #MeshSyncService
 *
 * Gets how many log and exec sessions may be open at once.
 *
 * Returns: the most log and exec sessions open at once
 */
guint
meshsync_service_get_max_sessions(MeshSyncService *self)
{
	g_return_val_if_fail(MESHSYNC_IS_SERVICE(self), 0);
	return self->max_sessions;
}

/**
 * meshsync_service_set_exec_enabled: (set-property exec-enabled)
 * @self: a #MeshSyncService
 * @enabled: whether exec sessions may be opened
 *
 * Call it before starting.
 */
void
meshsync_service_set_exec_enabled(MeshSyncService *self, gboolean enabled)
{
	MESHSYNC_SERVICE_CHECK_CONFIGURABLE(self);
	if (self->exec_enabled == !!enabled)
		return;
	self->exec_enabled = !!enabled;
	g_object_notify_by_pspec(G_OBJECT(self), props[PROP_EXEC_ENABLED]);
}

/**
 * meshsync_service_get_exec_enabled: (get-property exec-enabled)
 * @self: a #MeshSyncService
 *
 * Gets whether exec requests are answered.
 *
 * Returns: whether exec sessions may be opened
 */
gboolean
meshsync_service_get_exec_enabled(MeshSyncService *self)
{
	g_return_val_if_fail(MESHSYNC_IS_SERVICE(self), FALSE);
	return self->exec_enabled;
}

/**
 * meshsync_service_set_exec_namespaces: (set-property exec-namespaces)
 * @self: a #MeshSyncService
 * @namespaces: (array zero-terminated=1) (nullable): the namespaces exec is allowed in;
 *   %NULL or empty for all
 *
 * Call it before starting.
 */
void
meshsync_service_set_exec_namespaces(MeshSyncService *self, const gchar *const *namespaces)
{
	MESHSYNC_SERVICE_CHECK_CONFIGURABLE(self);
	g_strfreev(self->exec_namespaces);
	self->exec_namespaces = namespaces != NULL && namespaces[0] != NULL
	                                ? g_strdupv((gchar **)namespaces)
	                                : NULL;
	g_object_notify_by_pspec(G_OBJECT(self), props[PROP_EXEC_NAMESPACES]);
}

/**
 * meshsync_service_get_exec_namespaces: (get-property exec-namespaces)
 * @self: a #MeshSyncService
 *
 * Gets the namespaces exec sessions may open in.
 *
 * Returns: (array zero-terminated=1) (transfer none) (nullable): the namespaces exec is
 *   allowed in, %NULL for all
 */
const gchar *const *
meshsync_service_get_exec_namespaces(MeshSyncService *self)
{
	g_return_val_if_fail(MESHSYNC_IS_SERVICE(self), NULL);
	return (const gchar *const *)self->exec_namespaces;
}

/**
 * meshsync_service_set_exec_idle_timeout: (set-property exec-idle-timeout)
 * @self: a #MeshSyncService
 * @seconds: how long an exec session may be idle; 0 for ever
 *
 * Call it before starting.
 */
void
meshsync_service_set_exec_idle_timeout(MeshSyncService *self, guint seconds)
{
	MESHSYNC_SERVICE_CHECK_CONFIGURABLE(self);
	if (self->exec_idle_timeout == seconds)
		return;
	self->exec_idle_timeout = seconds;
	g_object_notify_by_pspec(G_OBJECT(self), props[PROP_EXEC_IDLE_TIMEOUT]);
}

/**
 * meshsync_service_get_exec_idle_timeout: (get-property exec-idle-timeout)
 * @self: a #MeshSyncService
 *
 * Gets how long an exec session may go without input or output before it is stopped.
 *
 * Returns: the seconds an exec session may be idle, 0 for ever
 */
guint
meshsync_service_get_exec_idle_timeout(MeshSyncService *self)
{
	g_return_val_if_fail(MESHSYNC_IS_SERVICE(self), 0);
	return self->exec_idle_timeout;
}

/**
 * meshsync_service_dup_sessions:
 * @self: a #MeshSyncService
 *
 * Lists the log and exec sessions the broker's requests opened and that are still open.
 *
 * Returns: (transfer container) (element-type MeshSyncSession): the sessions
 */
GPtrArray *
meshsync_service_dup_sessions(MeshSyncService *self)
{
	g_return_val_if_fail(MESHSYNC_IS_SERVICE(self), NULL);
	if (self->sessions == NULL)
		return g_ptr_array_new_with_free_func(g_object_unref);
	return msd_session_relay_dup_sessions(self->sessions);
}

/**
 * meshsync_service_set_strict_readiness: (set-property strict-readiness)
 * @self: a #MeshSyncService
 * @strict: %TRUE for `/readyz` to follow the broker and the sync as they are now
 *
 * Call it before starting.
 */
void
meshsync_service_set_strict_readiness(MeshSyncService *self, gboolean strict)
{
	MESHSYNC_SERVICE_CHECK_CONFIGURABLE(self);
	if (self->strict_readiness == !!strict)
		return;
	self->strict_readiness = !!strict;
	g_object_notify_by_pspec(G_OBJECT(self), props[PROP_STRICT_READINESS]);
}

/**
 * meshsync_service_get_strict_readiness: (get-property strict-readiness)
 * @self: a #MeshSyncService
 *
 * Gets whether `/readyz` follows the broker and the sync as they are now rather than
 * latching as upstream's does.
 *
 * Returns: %TRUE for the strict meaning
 */
gboolean
meshsync_service_get_strict_readiness(MeshSyncService *self)
{
	g_return_val_if_fail(MESHSYNC_IS_SERVICE(self), FALSE);
	return self->strict_readiness;
}
