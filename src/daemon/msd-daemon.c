/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <glib-unix.h>
#include <glib/gi18n.h>
#include <stdlib.h>

#include <libmeshsync/meshsync.h>

#include "msd-daemon.h"

typedef struct {
	GMainLoop *loop;              /* (owned) */
	MeshSyncHandler *handler;     /* (owned) (nullable) */
	MeshSyncFileWriter *snapshot; /* (owned) (nullable) */
	MeshSyncWriter *writer;       /* (owned) (nullable) */
	guint stop_timer;
	gint status;
	gboolean stop_after_sync;
} MsdDaemon;

static void
msd_daemon_clear(MsdDaemon *self)
{
	g_clear_handle_id(&self->stop_timer, g_source_remove);
	g_clear_object(&self->handler);
	g_clear_object(&self->writer);
	g_clear_object(&self->snapshot);
	g_clear_pointer(&self->loop, g_main_loop_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(MsdDaemon, msd_daemon_clear)

static gint
msd_daemon_fail(const gchar *message)
{
	g_printerr("meshsync: %s\n", message);
	return EXIT_FAILURE;
}

static gboolean
msd_daemon_signal_cb(gpointer user_data)
{
	MsdDaemon *self = user_data;

	g_message("signal received");
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

gint
msd_daemon_run(const MsdDaemonOptions *options)
{
	g_auto(MsdDaemon) self = {NULL, NULL, NULL, NULL, 0, EXIT_SUCCESS, FALSE};
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MeshSyncWatchConfig) watch = NULL;
	g_autoptr(GError) error = NULL;
	gboolean file = FALSE;
	gboolean broker = FALSE;

	if (!msd_daemon_parse_output(options->output, &file, &broker, &error))
		return msd_daemon_fail(error->message);
	if (broker)
		return msd_daemon_fail(_("output mode \"broker\" (NATS) is not available in this "
		                         "release yet; run with -output file"));

	config = meshsync_kube_config_load(options->kubeconfig, options->context, &error);
	if (config == NULL)
		return msd_daemon_fail(error->message);
	if (options->watch_config != NULL) {
		watch = meshsync_watch_config_new_from_file(options->watch_config, &error);
		if (watch == NULL)
			return msd_daemon_fail(error->message);
	}
	self.snapshot =
	        meshsync_file_writer_new(options->output_file, options->output_extended, &error);
	if (self.snapshot == NULL)
		return msd_daemon_fail(error->message);
	self.writer = g_object_ref(MESHSYNC_WRITER(self.snapshot));
	g_message("writing the snapshot to %s%s%s", meshsync_file_writer_get_path(self.snapshot),
	          options->output_extended ? " and every event to " : "",
	          options->output_extended ? meshsync_file_writer_get_extended_path(self.snapshot)
	                                   : "");

	self.handler = meshsync_handler_new(config, self.writer);
	if (watch != NULL)
		meshsync_handler_set_watch_config(self.handler, watch);
	meshsync_handler_set_output_resources(self.handler, options->output_resources);
	meshsync_handler_set_output_namespaces(self.handler, options->output_namespaces);
	g_signal_connect(self.handler, "failed", G_CALLBACK(msd_daemon_failed_cb), &self);
	g_signal_connect(self.handler, "ready-changed", G_CALLBACK(msd_daemon_ready_changed_cb),
	                 &self);
	self.stop_after_sync = options->stop_after_sync;

	self.loop = g_main_loop_new(NULL, FALSE);
	g_unix_signal_add(SIGINT, msd_daemon_signal_cb, &self);
	g_unix_signal_add(SIGTERM, msd_daemon_signal_cb, &self);
	if (!meshsync_handler_start(self.handler, &error))
		return msd_daemon_fail(error->message);
	if (options->stop_after_ns >= 0)
		self.stop_timer =
		        g_timeout_add((guint)MIN(options->stop_after_ns / 1000000, G_MAXUINT),
		                      msd_daemon_stop_after_cb, &self);
	g_message("meshsync: run started");
	g_main_loop_run(self.loop);

	g_message("meshsync: shutting down");
	meshsync_handler_stop(self.handler);
	if (!meshsync_writer_close(self.writer, &error)) {
		g_printerr("meshsync: %s\n", error->message);
		return EXIT_FAILURE;
	}
	g_message("snapshot %s: %u documents written", meshsync_file_writer_get_path(self.snapshot),
	          meshsync_file_writer_get_n_documents(self.snapshot));
	return self.status;
}
