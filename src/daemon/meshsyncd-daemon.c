/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncDaemon"

#include "config.h"

#include <glib-unix.h>
#include <glib/gi18n.h>
#include <stdlib.h>

#include <libmeshsync/meshsync.h>

#include "meshsyncd-daemon.h"
#include "meshsyncd-dbus-service.h"
#include "meshsyncd-notify.h"
#include "meshsyncd-one-shot.h"
#include "meshsyncd-tls-trust.h"

typedef struct {
	GMainLoop *loop;            /* (owned) */
	MeshSyncService *service;   /* (owned) (nullable) */
	MeshsyncdDBusService *dbus; /* (owned) (nullable): with --dbus */
	MeshsyncdNotify *notify;    /* (owned): the service manager's view */
	GCancellable *start_cancel; /* (owned) (nullable): while starting */
	gboolean start_done;
	GError *start_error; /* (owned) (nullable) */
	gboolean stop_done;
	GError *stop_error; /* (owned) (nullable) */
	guint stop_timer;
	gint status;
	gboolean stop_after_sync;
	gboolean one_shot;        /* --stop-after-sync or -stopAfter: give up on lasting errors */
	gint64 unreachable_since; /* monotonic µs of the first of a row of connection failures */
	gboolean stopping;
} MeshsyncdDaemon;

static void
meshsyncd_daemon_clear(MeshsyncdDaemon *self)
{
	g_clear_handle_id(&self->stop_timer, g_source_remove);
	g_clear_object(&self->notify);
	if (self->dbus != NULL)
		g_signal_handlers_disconnect_by_data(self->dbus, self);
	g_clear_object(&self->dbus);
	if (self->service != NULL)
		g_signal_handlers_disconnect_by_data(self->service, self);
	g_clear_object(&self->service);
	g_clear_object(&self->start_cancel);
	g_clear_error(&self->start_error);
	g_clear_error(&self->stop_error);
	g_clear_pointer(&self->loop, g_main_loop_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(MeshsyncdDaemon, meshsyncd_daemon_clear)

static gint
meshsyncd_daemon_fail(const gchar *message)
{
	g_printerr("meshsync: %s\n", message);
	return EXIT_FAILURE;
}

gboolean
meshsyncd_daemon_parse_go_bool(const gchar *value)
{
	static const gchar *const truthy[] = {"1", "t", "T", "TRUE", "true", "True"};

	for (guint i = 0; value != NULL && i < G_N_ELEMENTS(truthy); i++) {
		if (g_str_equal(value, truthy[i]))
			return TRUE;
	}
	return FALSE;
}

static gboolean
meshsyncd_daemon_signal_cb(gpointer user_data)
{
	MeshsyncdDaemon *self = user_data;

	g_message("signal received");
	/* a signal while waiting for the broker ends the wait; the run then stops cleanly */
	if (self->start_cancel != NULL)
		g_cancellable_cancel(self->start_cancel);
	self->stopping = TRUE;
	g_main_loop_quit(self->loop);
	return G_SOURCE_CONTINUE;
}

static gboolean
meshsyncd_daemon_stop_after_cb(gpointer user_data)
{
	MeshsyncdDaemon *self = user_data;

	self->stop_timer = 0;
	g_message("stop-after time reached");
	g_main_loop_quit(self->loop);
	return G_SOURCE_REMOVE;
}

static void
meshsyncd_daemon_give_up(MeshsyncdDaemon *self, const gchar *message)
{
	g_printerr("meshsync: %s\n", message);
	meshsyncd_notify_failed(self->notify, message);
	self->status = EXIT_FAILURE;
	g_main_loop_quit(self->loop);
}

static void
meshsyncd_daemon_ready_cb(MeshSyncService *service, GParamSpec *pspec, MeshsyncdDaemon *self)
{
	g_auto(GStrv) names = NULL;

	if (!meshsync_service_get_ready(service))
		return;
	self->unreachable_since = 0;
	names = meshsync_handler_get_resource_names(meshsync_service_get_handler(service));
	if (names == NULL || names[0] == NULL) {
		/* a run that can never hold anything is a configuration error, not an empty
		 * cluster: say so rather than write or publish nothing and look successful */
		meshsyncd_daemon_give_up(
		        self, _("nothing to watch: no resource type of the watch configuration "
		                "(and -outputResources) is served by the API server"));
		return;
	}
	if (self->stop_after_sync) {
		g_message("initial sync written: stopping as asked");
		g_main_loop_quit(self->loop);
	}
}

static void
meshsyncd_daemon_run_failed_cb(MeshSyncService *service, const GError *error, MeshsyncdDaemon *self)
{
	/* a long-running daemon keeps retrying (credentials get fixed, servers come back); a
	 * one-shot run is waited for by a person or a script, which needs the reason now */
	if (!self->one_shot ||
	    !meshsyncd_one_shot_error_is_lasting(error, &self->unreachable_since))
		return;
	meshsyncd_daemon_give_up(self, error->message);
}

static void
meshsyncd_daemon_failed_cb(MeshSyncService *service, const GError *error, MeshsyncdDaemon *self)
{
	meshsyncd_daemon_give_up(self, error->message);
}

/* Without the name, clients (and systemd, with Type=dbus) cannot find the daemon: stop. */
static void
meshsyncd_daemon_name_lost_cb(MeshsyncdDBusService *service,
                              const gchar *reason,
                              MeshsyncdDaemon *self)
{
	g_printerr("meshsync: %s\n", reason);
	meshsyncd_notify_failed(self->notify, reason);
	self->status = EXIT_FAILURE;
	g_main_loop_quit(self->loop);
}

gboolean
meshsyncd_daemon_parse_output(const gchar *output, gboolean *file, gboolean *broker, GError **error)
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
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            _("unsupported output mode \"%s\", supported list is [broker, "
			              "file]"),
			            mode);
			return FALSE;
		}
	}
	return TRUE;
}

/* A flag wins over its environment variable; empty means unset. */
static const gchar *
meshsyncd_daemon_option_or_env(const gchar *option, const gchar *variable)
{
	const gchar *value = option != NULL ? option : g_getenv(variable);

	return value != NULL && *value != '\0' ? value : NULL;
}

static MeshSyncBroker *
meshsyncd_daemon_new_broker(const MeshsyncdDaemonOptions *options, GError **error)
{
	const gchar *url = g_getenv("BROKER_URL");
	const gchar *token = meshsyncd_daemon_option_or_env(options->broker_token, "NATS_TOKEN");
	const gchar *creds = meshsyncd_daemon_option_or_env(options->broker_creds, "NATS_CREDS");
	const gchar *ca = meshsyncd_daemon_option_or_env(options->broker_tls_ca, "NATS_TLS_CA");
	const gchar *cert =
	        meshsyncd_daemon_option_or_env(options->broker_tls_cert, "NATS_TLS_CERT");
	const gchar *key = meshsyncd_daemon_option_or_env(options->broker_tls_key, "NATS_TLS_KEY");
	g_autoptr(MeshSyncBroker) broker = NULL;

	if (url == NULL || *url == '\0') {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		                    _("BROKER_URL is not set: broker mode needs the NATS address "
		                      "(BROKER_URL=nats://host:4222), or run with -output file"));
		return NULL;
	}
	if ((cert == NULL) != (key == NULL)) {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		                    _("--broker-tls-cert and --broker-tls-key go together"));
		return NULL;
	}
	broker = meshsync_broker_new(url, error);
	if (broker == NULL)
		return NULL;
	if (token != NULL)
		meshsync_broker_set_token(broker, token);
	if (creds != NULL)
		meshsync_broker_set_credentials_file(broker, creds);
	if (ca != NULL || cert != NULL)
		meshsync_broker_set_tls(broker, ca, cert, key);
	meshsync_broker_set_connect_timeout(broker, options->broker_connect_timeout_s);
	meshsync_broker_set_jetstream(broker, options->jetstream);
	meshsync_broker_set_jetstream_state(broker, options->jetstream_state);
	meshsync_broker_set_jetstream_limits(broker, options->jetstream_replicas,
	                                     options->jetstream_max_bytes);
	if (options->jetstream_ack_timeout_ms > 0)
		meshsync_broker_set_jetstream_ack_timeout(broker,
		                                          options->jetstream_ack_timeout_ms);
	return g_steal_pointer(&broker);
}

/* "a, b,,c" -> {"a", "b", "c"} */
static GStrv
meshsyncd_daemon_split_list(const gchar *list)
{
	g_auto(GStrv) parts = g_strsplit(list, ",", -1);
	g_autoptr(GStrvBuilder) builder = g_strv_builder_new();

	for (guint i = 0; parts[i] != NULL; i++) {
		g_strstrip(parts[i]);
		if (*parts[i] != '\0')
			g_strv_builder_add(builder, parts[i]);
	}
	return g_strv_builder_end(builder);
}

/* Flags and environment into the service: everything else is the library's. */
static MeshSyncService *
meshsyncd_daemon_new_service(const MeshsyncdDaemonOptions *options, GError **error)
{
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MeshSyncService) service = NULL;
	gboolean file = options->file_output;
	gboolean broker = options->broker_output;

	config = meshsync_kube_config_load(options->kubeconfig, options->context, error);
	if (config == NULL)
		return NULL;
	meshsyncd_tls_trust_cluster_only(config);
	meshsync_kube_config_set_http2(
	        config, options->kube_http2 ||
	                        meshsyncd_daemon_parse_go_bool(g_getenv("MESHSYNC_KUBE_HTTP2")));
	service = meshsync_service_new(config);
	if (options->watch_config != NULL) {
		g_autoptr(MeshSyncWatchConfig) watch =
		        meshsync_watch_config_new_from_file(options->watch_config, error);

		if (watch == NULL)
			return NULL;
		meshsync_service_set_watch_config(service, watch);
	}
	if (options->output_resources != NULL) {
		g_auto(GStrv) resources =
		        meshsync_watch_config_split_list(options->output_resources);

		meshsync_service_set_output_resources(service, (const gchar *const *)resources);
	}
	if (options->output_namespaces != NULL) {
		g_auto(GStrv) namespaces =
		        meshsync_watch_config_split_list(options->output_namespaces);

		meshsync_service_set_output_namespaces(service, (const gchar *const *)namespaces);
	}
	if (options->namespaces != NULL) {
		g_auto(GStrv) namespaces = meshsyncd_daemon_split_list(options->namespaces);

		meshsync_service_set_namespaces(service, (const gchar *const *)namespaces);
	}
	if (broker) {
		g_autoptr(MeshSyncBroker) nats = meshsyncd_daemon_new_broker(options, error);

		if (nats == NULL)
			return NULL;
		meshsync_service_set_broker(service, nats);
		g_object_set(service, "max-sessions", options->max_sessions, "exec-enabled",
		             !options->disable_exec, "exec-idle-timeout",
		             options->exec_idle_timeout_s, NULL);
		if (options->exec_namespaces != NULL) {
			g_auto(GStrv) namespaces = g_strsplit(options->exec_namespaces, ",", -1);

			for (guint i = 0; namespaces[i] != NULL; i++)
				g_strstrip(namespaces[i]);
			g_object_set(service, "exec-namespaces", namespaces, NULL);
		}
		meshsync_service_set_content_dedup(
		        service,
		        meshsyncd_daemon_parse_go_bool(g_getenv("MESHSYNC_BROKER_CONTENT_DEDUP")));
	}
	if (file)
		meshsync_service_set_output_file(service, options->output_file,
		                                 options->output_extended);
	meshsync_service_set_health(service, options->health_address, options->health_port);
	meshsync_service_set_strict_readiness(service, options->strict_readiness);
	meshsync_service_set_reconcile_interval(service, options->reconcile_interval_ms);
	meshsync_service_set_store_compression(service, options->store_compressed);
	if (options->delivery_queue_size > 0)
		meshsync_service_set_delivery_queue_size(service, options->delivery_queue_size);
	meshsync_service_set_shard(service, options->shard, options->total_shards);
	return g_steal_pointer(&service);
}

static void
meshsyncd_daemon_started_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	MeshsyncdDaemon *self = user_data;

	meshsync_service_start_finish(MESHSYNC_SERVICE(source), result, &self->start_error);
	self->start_done = TRUE;
	g_main_loop_quit(self->loop);
}

static void
meshsyncd_daemon_stopped_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	MeshsyncdDaemon *self = user_data;

	meshsync_service_stop_finish(MESHSYNC_SERVICE(source), result, &self->stop_error);
	self->stop_done = TRUE;
	g_main_loop_quit(self->loop);
}

gint
meshsyncd_daemon_run(const MeshsyncdDaemonOptions *options)
{
	g_auto(MeshsyncdDaemon) self = {0};
	g_autoptr(GError) error = NULL;

	self.status = EXIT_SUCCESS;
	self.stop_after_sync = options->stop_after_sync;
	self.one_shot = options->stop_after_sync || options->stop_after_ns >= 0;
	self.loop = g_main_loop_new(NULL, FALSE);
	/* before anything can take long: the watchdog pings while the broker is waited for */
	self.notify = meshsyncd_notify_new();
	g_unix_signal_add(SIGINT, meshsyncd_daemon_signal_cb, &self);
	g_unix_signal_add(SIGTERM, meshsyncd_daemon_signal_cb, &self);

	self.service = meshsyncd_daemon_new_service(options, &error);
	if (self.service == NULL)
		return meshsyncd_daemon_fail(error->message);
	g_signal_connect(self.service, "failed", G_CALLBACK(meshsyncd_daemon_failed_cb), &self);
	g_signal_connect(self.service, "run-failed", G_CALLBACK(meshsyncd_daemon_run_failed_cb),
	                 &self);
	g_signal_connect(self.service, "notify::ready", G_CALLBACK(meshsyncd_daemon_ready_cb),
	                 &self);
	meshsyncd_notify_watch_service(self.notify, self.service);

	self.start_cancel = g_cancellable_new();
	meshsync_service_start_async(self.service, self.start_cancel, meshsyncd_daemon_started_cb,
	                             &self);
	while (!self.start_done)
		g_main_loop_run(self.loop);
	g_clear_object(&self.start_cancel);
	if (self.start_error != NULL) {
		if (g_error_matches(self.start_error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
			meshsyncd_notify_stopping(self.notify);
			return EXIT_SUCCESS;
		}
		meshsyncd_notify_failed(self.notify, self.start_error->message);
		return meshsyncd_daemon_fail(self.start_error->message);
	}
	meshsyncd_notify_started(self.notify);

	if (options->dbus_bus != G_BUS_TYPE_NONE) {
		self.dbus = meshsyncd_dbus_service_new(
		        meshsync_service_get_handler(self.service),
		        meshsync_kube_config_get_server(
		                meshsync_service_get_kube_config(self.service)),
		        options->dbus_bus);
		meshsyncd_dbus_service_set_service(self.dbus, self.service);
		g_signal_connect(self.dbus, "name-lost", G_CALLBACK(meshsyncd_daemon_name_lost_cb),
		                 &self);
		meshsyncd_dbus_service_start(self.dbus);
	}
	if (options->stop_after_ns >= 0)
		self.stop_timer =
		        g_timeout_add((guint)MIN(options->stop_after_ns / 1000000, G_MAXUINT),
		                      meshsyncd_daemon_stop_after_cb, &self);
	if (!self.stopping)
		g_main_loop_run(self.loop);

	meshsyncd_notify_stopping(self.notify);
	meshsync_service_stop_async(self.service, NULL, meshsyncd_daemon_stopped_cb, &self);
	while (!self.stop_done)
		g_main_loop_run(self.loop);
	/* a run that failed leaves no empty snapshot to be taken for an empty cluster */
	if (self.status != EXIT_SUCCESS && meshsync_service_get_file_writer(self.service) != NULL &&
	    meshsync_file_writer_remove_if_unused(meshsync_service_get_file_writer(self.service)))
		g_message("removed the empty snapshot %s",
		          meshsync_file_writer_get_path(
		                  meshsync_service_get_file_writer(self.service)));
	if (self.stop_error != NULL)
		return meshsyncd_daemon_fail(self.stop_error->message);
	return self.status;
}
