/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <glib-unix.h>
#include <glib/gi18n.h>
#include <stdlib.h>

#include <libmeshsync/meshsync.h>

#include "meshsync-handler-private.h"
#include "msd-daemon.h"
#include "msd-dbus-service.h"
#include "meshsync-health-server-private.h"
#include "health/msd-metrics.h"
#include "broker/msd-request-listener.h"

/* How long shutdown waits for the broker to take what is still buffered. */
#define MSD_DAEMON_FLUSH_TIMEOUT_MS 5000

#define MSD_CHECK_BROKER "broker"
#define MSD_CHECK_SYNCED "informers-synced"

typedef struct {
	GMainLoop *loop;              /* (owned) */
	MeshSyncHandler *handler;     /* (owned) (nullable) */
	MeshSyncFileWriter *snapshot; /* (owned) (nullable) */
	MeshSyncBroker *broker;       /* (owned) (nullable) */
	MeshSyncBrokerWriter *events; /* (owned) (nullable) */
	MsdRequestListener *listener; /* (owned) (nullable) */
	MeshSyncWriter *writer;       /* (owned) (nullable) */
	MeshSyncHealthServer *health; /* (owned) (nullable) */
	MsdMetrics *metrics;          /* (owned) (nullable) */
	MsdDBusService *dbus;         /* (owned) (nullable): with --dbus */
	GCancellable *connect_cancel; /* (owned) (nullable): while waiting for the broker */
	GError *connect_error;        /* (owned) (nullable) */
	gboolean connect_done;
	gboolean flush_done;
	guint stop_timer;
	gint status;
	gboolean stop_after_sync;
	gboolean stopping;
} MsdDaemon;

static const gchar *const msd_broker_gauges[] = {
        "meshsync_broker_buffered_bytes",     "meshsync_broker_reconnects",
        "meshsync_broker_messages_published", "meshsync_broker_messages_oversize",
        "meshsync_broker_publish_errors",
};

static void
msd_daemon_clear(MsdDaemon *self)
{
	g_clear_handle_id(&self->stop_timer, g_source_remove);
	/* The callback gauges read the broker and its writer: drop them first. */
	for (guint i = 0; self->metrics != NULL && i < G_N_ELEMENTS(msd_broker_gauges); i++)
		msd_metrics_remove(self->metrics, msd_broker_gauges[i], NULL);
	if (self->listener != NULL)
		msd_request_listener_stop(self->listener);
	g_clear_object(&self->listener);
	if (self->dbus != NULL)
		g_signal_handlers_disconnect_by_data(self->dbus, self);
	g_clear_object(&self->dbus);
	g_clear_object(&self->handler);
	g_clear_object(&self->writer);
	g_clear_object(&self->events);
	g_clear_object(&self->snapshot);
	if (self->broker != NULL) {
		g_signal_handlers_disconnect_by_data(self->broker, self);
		meshsync_broker_close(self->broker);
	}
	g_clear_object(&self->broker);
	g_clear_object(&self->health);
	g_clear_object(&self->metrics);
	g_clear_object(&self->connect_cancel);
	g_clear_error(&self->connect_error);
	g_clear_pointer(&self->loop, g_main_loop_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(MsdDaemon, msd_daemon_clear)

static gint
msd_daemon_fail(const gchar *message)
{
	g_printerr("meshsync: %s\n", message);
	return EXIT_FAILURE;
}

gboolean
msd_daemon_parse_go_bool(const gchar *value)
{
	static const gchar *const truthy[] = {"1", "t", "T", "TRUE", "true", "True"};

	for (guint i = 0; value != NULL && i < G_N_ELEMENTS(truthy); i++) {
		if (g_str_equal(value, truthy[i]))
			return TRUE;
	}
	return FALSE;
}

static gboolean
msd_daemon_signal_cb(gpointer user_data)
{
	MsdDaemon *self = user_data;

	g_message("signal received");
	/* A signal while waiting for the broker ends the wait; the run then stops cleanly. */
	if (self->connect_cancel != NULL)
		g_cancellable_cancel(self->connect_cancel);
	self->stopping = TRUE;
	g_main_loop_quit(self->loop);
	return G_SOURCE_CONTINUE;
}

static gboolean
msd_daemon_stop_after_cb(gpointer user_data)
{
	MsdDaemon *self = user_data;

	self->stop_timer = 0;
	g_message("stop-after time reached");
	g_main_loop_quit(self->loop);
	return G_SOURCE_REMOVE;
}

static void
msd_daemon_ready_changed_cb(MeshSyncHandler *handler, gboolean ready, MsdDaemon *self)
{
	meshsync_health_server_set_check(self->health, MSD_CHECK_SYNCED, ready,
	                                 "the informers have not synced yet");
	if (ready && self->stop_after_sync) {
		g_message("initial sync written: stopping as asked");
		g_main_loop_quit(self->loop);
	}
}

static void
msd_daemon_failed_cb(MeshSyncHandler *handler, const GError *error, MsdDaemon *self)
{
	g_printerr("meshsync: %s\n", error->message);
	self->status = EXIT_FAILURE;
	g_main_loop_quit(self->loop);
}

/* Without the name, clients (and systemd, with Type=dbus) cannot find the daemon: stop. */
static void
msd_daemon_name_lost_cb(MsdDBusService *service, const gchar *reason, MsdDaemon *self)
{
	g_printerr("meshsync: %s\n", reason);
	self->status = EXIT_FAILURE;
	g_main_loop_quit(self->loop);
}

static const gchar *
msd_daemon_state_text(MeshSyncBrokerState state)
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
msd_daemon_broker_state_cb(GObject *broker, GParamSpec *pspec, MsdDaemon *self)
{
	MeshSyncBrokerState state = meshsync_broker_get_state(MESHSYNC_BROKER(broker));
	const gchar *text = msd_daemon_state_text(state);

	g_message("broker connection state: %s", text);
	meshsync_health_server_set_check(self->health, MSD_CHECK_BROKER,
	                                 state == MESHSYNC_BROKER_STATE_CONNECTED, text);
}

/* Upstream takes "broker" or "file"; "broker,file" asks for both, through a composite. */
static gboolean
msd_daemon_parse_output(const gchar *output, gboolean *file, gboolean *broker, GError **error)
{
	g_auto(GStrv) modes = g_strsplit(output != NULL ? output : "broker", ",", -1);

	*file = FALSE;
	*broker = FALSE;
	for (guint i = 0; modes[i] != NULL; i++) {
		g_autofree gchar *mode = g_strstrip(g_strdup(modes[i]));

		if (g_strcmp0(mode, "file") == 0) {
			*file = TRUE;
		} else if (g_strcmp0(mode, "broker") == 0) {
			*broker = TRUE;
		} else {
			g_set_error(
			        error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			        "unsupported output mode \"%s\", supported list is [broker, file]",
			        mode);
			return FALSE;
		}
	}
	return TRUE;
}

/* A flag wins over its environment variable; empty means unset. */
static const gchar *
msd_daemon_option_or_env(const gchar *option, const gchar *variable)
{
	const gchar *value = option != NULL ? option : g_getenv(variable);

	return value != NULL && *value != '\0' ? value : NULL;
}

static gdouble
msd_daemon_buffered_gauge(gpointer data)
{
	return (gdouble)meshsync_broker_get_buffered_bytes(data);
}

static gdouble
msd_daemon_reconnects_gauge(gpointer data)
{
	return (gdouble)meshsync_broker_get_reconnects(data);
}

static gdouble
msd_daemon_published_gauge(gpointer data)
{
	return (gdouble)meshsync_broker_writer_get_n_published(data);
}

static gdouble
msd_daemon_oversize_gauge(gpointer data)
{
	return (gdouble)meshsync_broker_writer_get_n_oversize(data);
}

static gdouble
msd_daemon_errors_gauge(gpointer data)
{
	return (gdouble)meshsync_broker_writer_get_n_errors(data);
}

static void
msd_daemon_register_broker_metrics(MsdDaemon *self)
{
	msd_metrics_gauge_set_func(self->metrics, msd_broker_gauges[0],
	                           "Bytes published while the broker was away, not sent yet",
	                           msd_daemon_buffered_gauge, self->broker, NULL, NULL);
	msd_metrics_gauge_set_func(self->metrics, msd_broker_gauges[1],
	                           "Reconnections to the broker (cumulative)",
	                           msd_daemon_reconnects_gauge, self->broker, NULL, NULL);
	msd_metrics_gauge_set_func(
	        self->metrics, msd_broker_gauges[2],
	        "Resource events published on meshery.meshsync.core (cumulative)",
	        msd_daemon_published_gauge, self->events, NULL, NULL);
	msd_metrics_gauge_set_func(self->metrics, msd_broker_gauges[3],
	                           "Resource events too large for the broker, dropped (cumulative)",
	                           msd_daemon_oversize_gauge, self->events, NULL, NULL);
	msd_metrics_gauge_set_func(self->metrics, msd_broker_gauges[4],
	                           "Resource events the broker refused (cumulative)",
	                           msd_daemon_errors_gauge, self->events, NULL, NULL);
}

static void
msd_daemon_connect_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	MsdDaemon *self = user_data;

	meshsync_broker_connect_finish(MESHSYNC_BROKER(source), result, &self->connect_error);
	self->connect_done = TRUE;
	g_main_loop_quit(self->loop);
}

static gboolean
msd_daemon_setup_broker(MsdDaemon *self, const MsdDaemonOptions *options, GError **error)
{
	const gchar *url = g_getenv("BROKER_URL");
	const gchar *token = msd_daemon_option_or_env(options->broker_token, "NATS_TOKEN");
	const gchar *creds = msd_daemon_option_or_env(options->broker_creds, "NATS_CREDS");
	const gchar *ca = msd_daemon_option_or_env(options->broker_tls_ca, "NATS_TLS_CA");
	const gchar *cert = msd_daemon_option_or_env(options->broker_tls_cert, "NATS_TLS_CERT");
	const gchar *key = msd_daemon_option_or_env(options->broker_tls_key, "NATS_TLS_KEY");

	if (url == NULL || *url == '\0') {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		                    _("BROKER_URL is not set: broker mode needs the NATS address "
		                      "(BROKER_URL=nats://host:4222), or run with -output file"));
		return FALSE;
	}
	if ((cert == NULL) != (key == NULL)) {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		                    _("--broker-tls-cert and --broker-tls-key go together"));
		return FALSE;
	}
	self->broker = meshsync_broker_new(url, error);
	if (self->broker == NULL)
		return FALSE;
	if (token != NULL)
		meshsync_broker_set_token(self->broker, token);
	if (creds != NULL)
		meshsync_broker_set_credentials_file(self->broker, creds);
	if (ca != NULL || cert != NULL)
		meshsync_broker_set_tls(self->broker, ca, cert, key);
	meshsync_broker_set_connect_timeout(self->broker, options->broker_connect_timeout_s);
	g_signal_connect(self->broker, "notify::state", G_CALLBACK(msd_daemon_broker_state_cb),
	                 self);

	self->events = meshsync_broker_writer_new(self->broker, MESHSYNC_SUBJECT_CORE);
	if (msd_daemon_parse_go_bool(g_getenv("MESHSYNC_BROKER_CONTENT_DEDUP"))) {
		g_message("meshsync: broker content deduplication enabled");
		meshsync_broker_writer_set_content_dedup(self->events, TRUE);
	}
	msd_daemon_register_broker_metrics(self);
	return TRUE;
}

/* Start-up waits for the broker (retrying until the connect timeout), as upstream does
 * before anything else runs. FALSE with @error when it never came, or cancelled. */
static gboolean
msd_daemon_wait_for_broker(MsdDaemon *self, GError **error)
{
	self->connect_cancel = g_cancellable_new();
	meshsync_broker_connect_async(self->broker, self->connect_cancel, msd_daemon_connect_cb,
	                              self);
	while (!self->connect_done)
		g_main_loop_run(self->loop);
	g_clear_object(&self->connect_cancel);
	if (self->connect_error != NULL) {
		g_propagate_error(error, g_steal_pointer(&self->connect_error));
		return FALSE;
	}
	return TRUE;
}

static void
msd_daemon_flush_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	MsdDaemon *self = user_data;
	g_autoptr(GError) error = NULL;

	if (!meshsync_broker_flush_finish(MESHSYNC_BROKER(source), result, &error))
		g_warning("messages may be lost: %s", error->message);
	self->flush_done = TRUE;
	g_main_loop_quit(self->loop);
}

/* Upstream exits without flushing; we give the broker a bounded time to take the rest. */
static void
msd_daemon_flush_broker(MsdDaemon *self)
{
	MeshSyncBrokerState state = meshsync_broker_get_state(self->broker);

	if (state != MESHSYNC_BROKER_STATE_CONNECTED && state != MESHSYNC_BROKER_STATE_RECONNECTING)
		return;
	meshsync_broker_flush_async(self->broker, MSD_DAEMON_FLUSH_TIMEOUT_MS, NULL,
	                            msd_daemon_flush_cb, self);
	while (!self->flush_done)
		g_main_loop_run(self->loop);
	g_message("broker flushed: %" G_GUINT64_FORMAT " events published",
	          meshsync_broker_writer_get_n_published(self->events));
}

static gboolean
msd_daemon_start_health(MsdDaemon *self,
                        const MsdDaemonOptions *options,
                        gboolean broker,
                        GError **error)
{
	self->metrics = msd_metrics_new();
	self->health = meshsync_health_server_new();
	meshsync_health_server_set_metrics(self->health, self->metrics);
	if (broker)
		meshsync_health_server_set_check(self->health, MSD_CHECK_BROKER, FALSE,
		                                 "not connected");
	meshsync_health_server_set_check(self->health, MSD_CHECK_SYNCED, FALSE,
	                                 "the informers have not synced yet");
	if (!meshsync_health_server_listen(self->health, options->health_address,
	                                   options->health_port, error))
		return FALSE;
	g_message("meshsync: health endpoints /healthz, /readyz and /metrics listening on %s:%u",
	          options->health_address != NULL ? options->health_address : "*",
	          meshsync_health_server_get_port(self->health));
	return TRUE;
}

gint
msd_daemon_run(const MsdDaemonOptions *options)
{
	g_auto(MsdDaemon) self = {0};
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MeshSyncWatchConfig) watch = NULL;
	g_autoptr(GError) error = NULL;
	gboolean file = FALSE;
	gboolean broker = FALSE;

	self.status = EXIT_SUCCESS;
	if (!msd_daemon_parse_output(options->output, &file, &broker, &error))
		return msd_daemon_fail(error->message);

	self.loop = g_main_loop_new(NULL, FALSE);
	g_unix_signal_add(SIGINT, msd_daemon_signal_cb, &self);
	g_unix_signal_add(SIGTERM, msd_daemon_signal_cb, &self);
	if (!msd_daemon_start_health(&self, options, broker, &error))
		return msd_daemon_fail(error->message);

	config = meshsync_kube_config_load(options->kubeconfig, options->context, &error);
	if (config == NULL)
		return msd_daemon_fail(error->message);
	if (options->watch_config != NULL) {
		watch = meshsync_watch_config_new_from_file(options->watch_config, &error);
		if (watch == NULL)
			return msd_daemon_fail(error->message);
	}
	if (broker) {
		if (!msd_daemon_setup_broker(&self, options, &error))
			return msd_daemon_fail(error->message);
		if (!msd_daemon_wait_for_broker(&self, &error)) {
			if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
				return EXIT_SUCCESS;
			return msd_daemon_fail(error->message);
		}
		/* The state notification came before the check was watched closely enough. */
		meshsync_health_server_set_check(
		        self.health, MSD_CHECK_BROKER,
		        meshsync_broker_get_state(self.broker) == MESHSYNC_BROKER_STATE_CONNECTED,
		        msd_daemon_state_text(meshsync_broker_get_state(self.broker)));
	}
	if (file) {
		self.snapshot = meshsync_file_writer_new(options->output_file,
		                                         options->output_extended, &error);
		if (self.snapshot == NULL)
			return msd_daemon_fail(error->message);
		g_message("writing the snapshot to %s%s%s",
		          meshsync_file_writer_get_path(self.snapshot),
		          options->output_extended ? " and every event to " : "",
		          options->output_extended
		                  ? meshsync_file_writer_get_extended_path(self.snapshot)
		                  : "");
	}
	if (file && broker) {
		g_autoptr(MeshSyncCompositeWriter) both = meshsync_composite_writer_new();

		meshsync_composite_writer_add(both, MESHSYNC_WRITER(self.events));
		meshsync_composite_writer_add(both, MESHSYNC_WRITER(self.snapshot));
		self.writer = MESHSYNC_WRITER(g_steal_pointer(&both));
	} else if (broker) {
		self.writer = g_object_ref(MESHSYNC_WRITER(self.events));
	} else {
		self.writer = g_object_ref(MESHSYNC_WRITER(self.snapshot));
	}

	self.handler = meshsync_handler_new(config, self.writer);
	if (watch != NULL)
		meshsync_handler_set_watch_config(self.handler, watch);
	meshsync_handler_set_output_resources(self.handler, options->output_resources);
	meshsync_handler_set_output_namespaces(self.handler, options->output_namespaces);
	meshsync_handler_set_metrics(self.handler, self.metrics);
	g_signal_connect(self.handler, "failed", G_CALLBACK(msd_daemon_failed_cb), &self);
	g_signal_connect(self.handler, "ready-changed", G_CALLBACK(msd_daemon_ready_changed_cb),
	                 &self);
	self.stop_after_sync = options->stop_after_sync;

	if (broker) {
		self.listener =
		        msd_request_listener_new(self.broker, self.handler, meshsync_get_version());
		msd_request_listener_set_metrics(self.listener, self.metrics);
		if (!msd_request_listener_start(self.listener, &error))
			return msd_daemon_fail(error->message);
	}
	if (options->dbus_bus != G_BUS_TYPE_NONE) {
		self.dbus = msd_dbus_service_new(
		        self.handler, meshsync_kube_config_get_server(config), options->dbus_bus);
		g_signal_connect(self.dbus, "name-lost", G_CALLBACK(msd_daemon_name_lost_cb),
		                 &self);
		msd_dbus_service_start(self.dbus);
	}
	if (!meshsync_handler_start(self.handler, &error))
		return msd_daemon_fail(error->message);
	if (options->stop_after_ns >= 0)
		self.stop_timer =
		        g_timeout_add((guint)MIN(options->stop_after_ns / 1000000, G_MAXUINT),
		                      msd_daemon_stop_after_cb, &self);
	g_message("meshsync: run started");
	if (!self.stopping)
		g_main_loop_run(self.loop);

	g_message("meshsync: shutting down");
	if (self.listener != NULL)
		msd_request_listener_stop(self.listener);
	meshsync_handler_stop(self.handler);
	if (!meshsync_writer_close(self.writer, &error)) {
		g_printerr("meshsync: %s\n", error->message);
		return EXIT_FAILURE;
	}
	if (self.broker != NULL)
		msd_daemon_flush_broker(&self);
	if (self.snapshot != NULL)
		g_message("snapshot %s: %u documents written",
		          meshsync_file_writer_get_path(self.snapshot),
		          meshsync_file_writer_get_n_documents(self.snapshot));
	return self.status;
}
