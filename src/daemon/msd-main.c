/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <glib-unix.h>
#include <glib/gi18n.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>

#include <libmeshsync/meshsync.h>

#include "msd-go-flags.h"
#include "msd-resource-table.h"

typedef struct {
	GMainLoop *loop;           /* (owned) */
	GCancellable *cancellable; /* (owned) */
	MeshSyncDiscovery *discovery;
	gboolean list_resources;
	gint exit_status;
} MsdRun;

static gboolean
msd_main_signal_cb(gpointer user_data)
{
	MsdRun *run = user_data;

	g_message("signal received: stopping");
	g_cancellable_cancel(run->cancellable);
	g_main_loop_quit(run->loop);
	return G_SOURCE_CONTINUE;
}

static void
msd_main_discovery_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	MsdRun *run = user_data;
	MeshSyncDiscovery *discovery = MESHSYNC_DISCOVERY(source);
	g_autoptr(GError) error = NULL;
	GPtrArray *resources;
	guint watchable = 0;

	if (!meshsync_discovery_run_finish(discovery, result, &error)) {
		if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
			g_printerr("meshsync: %s\n", error->message);
			run->exit_status = EXIT_FAILURE;
		}
		g_main_loop_quit(run->loop);
		return;
	}

	resources = meshsync_discovery_get_resources(discovery);
	for (guint i = 0; i < resources->len; i++) {
		if (meshsync_api_resource_get_watchable(g_ptr_array_index(resources, i)))
			watchable++;
	}
	g_message("discovered %u resource types (%u watchable) on Kubernetes %s", resources->len,
	          watchable, meshsync_discovery_get_server_version(discovery));

	if (run->list_resources) {
		g_autofree gchar *table = msd_resource_table_render(resources);
		fputs(table, stdout);
		fflush(stdout);
	}
	g_main_loop_quit(run->loop);
}

int
main(int argc, char **argv)
{
	g_autoptr(GOptionContext) context = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MeshSyncDiscovery) discovery = NULL;
	g_autoptr(GMainLoop) loop = NULL;
	g_autoptr(GCancellable) cancellable = NULL;
	g_auto(GStrv) args = NULL;
	g_autofree gchar *kubeconfig = NULL;
	g_autofree gchar *kube_context = NULL;
	gboolean list_resources = FALSE;
	gboolean verbose = FALSE;
	gboolean version = FALSE;
	MsdRun run = {0};
	const GOptionEntry entries[] = {
	        {"kubeconfig", 0, 0, G_OPTION_ARG_FILENAME, &kubeconfig,
	         N_("Kubernetes configuration file (default: in-cluster, then $KUBECONFIG, then "
	            "~/.kube/config)"),
	         N_("FILE")},
	        {"context", 0, 0, G_OPTION_ARG_STRING, &kube_context,
	         N_("Context of the configuration file to use instead of its current-context"),
	         N_("NAME")},
	        {"list-resources", 0, 0, G_OPTION_ARG_NONE, &list_resources,
	         N_("Discover the API server's resource types, print them as a table and exit"),
	         NULL},
	        {"verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, N_("Log debug messages"), NULL},
	        {"version", 0, 0, G_OPTION_ARG_NONE, &version, N_("Print the version and exit"),
	         NULL},
	        {NULL},
	};

	setlocale(LC_ALL, "");
	bindtextdomain(GETTEXT_PACKAGE, LOCALEDIR);
	bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
	textdomain(GETTEXT_PACKAGE);

	args = msd_go_flags_normalize(argc, argv);
	context = g_option_context_new(NULL);
	g_option_context_set_summary(
	        context,
	        _("Keeps Meshery in sync with the state of a Kubernetes cluster.\n\n"
	          "Upstream's single-dash flags (-output, -stopAfter, ...) are accepted too."));
	g_option_context_add_main_entries(context, entries, GETTEXT_PACKAGE);
	if (!g_option_context_parse_strv(context, &args, &error)) {
		g_printerr("meshsync: %s\n", error->message);
		g_printerr(_("Run 'meshsync --help' to see the options.\n"));
		return 2;
	}
	if (version) {
		g_print("meshsync %s\n", meshsync_get_version());
		return EXIT_SUCCESS;
	}
	if (verbose || g_getenv("DEBUG") != NULL)
		g_log_set_debug_enabled(TRUE);

	config = meshsync_kube_config_load(kubeconfig, kube_context, &error);
	if (config == NULL) {
		g_printerr("meshsync: %s\n", error->message);
		return EXIT_FAILURE;
	}
	g_message("using %s (%s), server %s", meshsync_kube_config_get_source(config),
	          meshsync_kube_config_get_in_cluster(config)
	                  ? "in-cluster"
	                  : meshsync_kube_config_get_context_name(config),
	          meshsync_kube_config_get_server(config));

	discovery = meshsync_discovery_new(config, &error);
	if (discovery == NULL) {
		g_printerr("meshsync: %s\n", error->message);
		return EXIT_FAILURE;
	}

	loop = g_main_loop_new(NULL, FALSE);
	cancellable = g_cancellable_new();
	run.loop = loop;
	run.cancellable = cancellable;
	run.discovery = discovery;
	run.list_resources = list_resources;
	run.exit_status = EXIT_SUCCESS;
	g_unix_signal_add(SIGINT, msd_main_signal_cb, &run);
	g_unix_signal_add(SIGTERM, msd_main_signal_cb, &run);

	meshsync_discovery_run_async(discovery, cancellable, msd_main_discovery_cb, &run);
	g_main_loop_run(loop);
	return run.exit_status;
}
