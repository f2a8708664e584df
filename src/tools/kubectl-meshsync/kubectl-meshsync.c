/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * kubectl-meshsync: the `kubectl meshsync` plugin. `snapshot` captures the cluster into a
 * YAML file as the daemon's file mode writes it, and stops when the initial sync is complete,
 * so the default capture is whole however big the cluster; `version` prints the version.
 */

#include "config.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libmeshsync/meshsync.h>

#include "meshsyncd-go-duration.h"
#include "meshsyncd-one-shot.h"
#include "util/msd-localedir.h"

#define KMS_EXIT_USAGE 2

static gboolean kms_verbose;

#define KMS_COMMANDS                                                                          \
	N_("Usage:\n"                                                                         \
	   "  kubectl meshsync snapshot [OPTION…]   capture the cluster into a YAML file\n" \
	   "  kubectl meshsync version              print the version\n\n"                    \
	   "Run 'kubectl meshsync snapshot --help' for the snapshot's options.\n")

/* How often the progress is looked at. */
#define KMS_PROGRESS_MS 200

typedef struct {
	GMainLoop *loop;
	MeshSyncService *service;
	gboolean tty;
	gint64 started_us;
	gint64 unreachable_since_us;
	gint status;
	gchar *failure;    /* (owned) (nullable): what ends the capture with exit 1 */
	gboolean complete; /* the initial sync was written */
	gboolean stopping;
	guint last_synced;     /* the progress said last, for plain output */
	gboolean progress_out; /* a progress line is on the terminal */
	GHashTable *counts;    /* (owned): kind -> objects, taken when the sync is complete */
} KmsCapture;

static void
kms_clear_progress(KmsCapture *self)
{
	if (self->tty && self->progress_out) {
		g_printerr("\r\033[K");
		self->progress_out = FALSE;
	}
}

/* Types of the run, and how many of them have their initial state; FALSE before the run has
 * its types. */
static gboolean
kms_progress_counts(KmsCapture *self, guint *total, guint *synced)
{
	MeshSyncHandler *handler = meshsync_service_get_handler(self->service);
	g_auto(GStrv) names = NULL;

	if (handler == NULL)
		return FALSE;
	names = meshsync_handler_get_resource_names(handler);
	if (names == NULL)
		return FALSE;
	*total = g_strv_length(names);
	*synced = MIN(meshsync_handler_get_n_synced_types(handler), *total);
	return TRUE;
}

static gboolean
kms_progress_cb(gpointer data)
{
	KmsCapture *self = data;
	gdouble elapsed = (gdouble)(g_get_monotonic_time() - self->started_us) / G_USEC_PER_SEC;
	MeshSyncHandler *handler = meshsync_service_get_handler(self->service);
	guint total = 0, synced = 0;
	g_autofree gchar *line = NULL;

	if (self->stopping)
		return G_SOURCE_CONTINUE;
	if (!kms_progress_counts(self, &total, &synced)) {
		if (self->tty) {
			g_printerr("\r\033[K");
			g_printerr(_("discovering the API server's resource types… %.1f s"),
			           elapsed);
			self->progress_out = TRUE;
		}
		return G_SOURCE_CONTINUE;
	}
	line = g_strdup_printf(_("%u of %u resource types synced, %u objects, %.1f s"), synced,
	                       total, meshsync_handler_get_n_objects(handler), elapsed);
	if (self->tty) {
		g_printerr("\r\033[K%s", line);
		self->progress_out = TRUE;
	} else if (synced != self->last_synced) {
		g_printerr("%s\n", line);
	}
	self->last_synced = synced;
	return G_SOURCE_CONTINUE;
}

static void
kms_stopped_cb(GObject *source, GAsyncResult *result, gpointer data)
{
	KmsCapture *self = data;
	g_autoptr(GError) error = NULL;

	if (!meshsync_service_stop_finish(MESHSYNC_SERVICE(source), result, &error) &&
	    self->failure == NULL)
		self->failure = g_strdup(error->message);
	g_main_loop_quit(self->loop);
}

static void
kms_stop(KmsCapture *self)
{
	if (self->stopping)
		return;
	self->stopping = TRUE;
	meshsync_service_stop_async(self->service, NULL, kms_stopped_cb, self);
}

static void
kms_fail(KmsCapture *self, const gchar *message)
{
	if (self->failure == NULL)
		self->failure = g_strdup(message);
	kms_stop(self);
}

static void
kms_count_store(KmsCapture *self)
{
	g_autoptr(GPtrArray) store =
	        meshsync_handler_dup_store(meshsync_service_get_handler(self->service));

	for (guint i = 0; store != NULL && i < store->len; i++) {
		const gchar *kind = meshsync_resource_get_kind(g_ptr_array_index(store, i));
		guint n = GPOINTER_TO_UINT(g_hash_table_lookup(self->counts, kind));

		g_hash_table_replace(self->counts, g_strdup(kind), GUINT_TO_POINTER(n + 1));
	}
}

static void
kms_ready_cb(MeshSyncService *service, GParamSpec *pspec, KmsCapture *self)
{
	g_auto(GStrv) names = NULL;

	if (!meshsync_service_get_ready(service) || self->stopping)
		return;
	names = meshsync_handler_get_resource_names(meshsync_service_get_handler(service));
	if (names == NULL || names[0] == NULL) {
		kms_fail(self, _("nothing to capture: the API server serves none of the resource "
		                 "types asked for"));
		return;
	}
	self->unreachable_since_us = 0;
	self->complete = TRUE;
	kms_count_store(self);
	kms_stop(self);
}

/* A capture is waited for by a person or a script: what will not get better ends it, by the
 * daemon's rules for one-shot runs. */
static void
kms_run_failed_cb(MeshSyncService *service, const GError *error, KmsCapture *self)
{
	if (meshsyncd_one_shot_error_is_lasting(error, &self->unreachable_since_us))
		kms_fail(self, error->message);
}

static void
kms_failed_cb(MeshSyncService *service, const GError *error, KmsCapture *self)
{
	kms_fail(self, error->message);
}

static gboolean
kms_deadline_cb(gpointer data)
{
	KmsCapture *self = data;
	MeshSyncHandler *handler = meshsync_service_get_handler(self->service);
	g_autofree gchar *listing = NULL;

	if (self->stopping)
		return G_SOURCE_REMOVE;
	listing = handler != NULL ? meshsync_handler_describe_listing(handler) : NULL;
	if (listing != NULL && *listing != '\0') {
		g_autofree gchar *message = g_strdup_printf(
		        _("the initial sync was not complete when --duration ended; still listing "
		          "(objects so far): %s"),
		        listing);
		kms_fail(self, message);
	} else {
		kms_fail(self, _("the initial sync was not complete when --duration ended: the "
		                 "API server's resource types were not all discovered yet"));
	}
	return G_SOURCE_REMOVE;
}

static void
kms_started_cb(GObject *source, GAsyncResult *result, gpointer data)
{
	KmsCapture *self = data;
	g_autoptr(GError) error = NULL;

	if (!meshsync_service_start_finish(MESHSYNC_SERVICE(source), result, &error))
		kms_fail(self, error->message);
}

static gint
kms_compare_kinds(gconstpointer a, gconstpointer b)
{
	return g_strcmp0(*(const gchar *const *)a, *(const gchar *const *)b);
}

static void
kms_print_summary(KmsCapture *self, const gchar *path, gboolean to_stdout)
{
	g_autoptr(GPtrArray) kinds = g_ptr_array_new();
	GHashTableIter iter;
	gpointer key;
	guint total = 0;
	gsize width = strlen(_("KIND"));
	GStatBuf st;

	g_hash_table_iter_init(&iter, self->counts);
	while (g_hash_table_iter_next(&iter, &key, NULL)) {
		g_ptr_array_add(kinds, key);
		width = MAX(width, strlen(key));
	}
	g_ptr_array_sort(kinds, kms_compare_kinds);
	g_printerr("%-*s %s\n", (gint)width, _("KIND"), _("COUNT"));
	for (guint i = 0; i < kinds->len; i++) {
		const gchar *kind = g_ptr_array_index(kinds, i);
		guint n = GPOINTER_TO_UINT(g_hash_table_lookup(self->counts, kind));

		g_printerr("%-*s %u\n", (gint)width, kind, n);
		total += n;
	}
	g_printerr("%-*s %u\n", (gint)width, _("total"), total);
	if (to_stdout)
		return;
	if (g_stat(path, &st) == 0) {
		g_autofree gchar *bytes = g_strdup_printf("%" G_GINT64_FORMAT, (gint64)st.st_size);

		g_printerr(_("snapshot written to %s (%s bytes)\n"), path, bytes);
	}
}

/* meshery-cluster-snapshot-YYYYMMDD-NN.yaml with the first NN not taken in the working
 * directory, as upstream's plugin names its file. */
static gchar *
kms_default_file(void)
{
	g_autoptr(GDateTime) now = g_date_time_new_now_local();
	g_autofree gchar *day = g_date_time_format(now, "%Y%m%d");

	for (guint n = 0; n < 100; n++) {
		gchar *name = g_strdup_printf("meshery-cluster-snapshot-%s-%02u.yaml", day, n);

		if (!g_file_test(name, G_FILE_TEST_EXISTS))
			return name;
		g_free(name);
	}
	return g_strdup_printf("meshery-cluster-snapshot-%s-99.yaml", day);
}

static gboolean
kms_copy_to_stdout(const gchar *path, GError **error)
{
	g_autofree gchar *contents = NULL;
	gsize length = 0;

	if (!g_file_get_contents(path, &contents, &length, error))
		return FALSE;
	if (fwrite(contents, 1, length, stdout) != length || fflush(stdout) != 0) {
		g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
		            _("cannot write the snapshot to standard output: %s"),
		            g_strerror(errno));
		return FALSE;
	}
	return TRUE;
}

/* The -r elements the server does not serve, by kind, plural or short name as kubectl
 * takes them; NULL when all are served. */
static gchar *
kms_unknown_resources(MeshSyncDiscovery *discovery, gchar **resources)
{
	GPtrArray *served = meshsync_discovery_get_resources(discovery);
	g_autoptr(GString) unknown = g_string_new(NULL);

	for (guint i = 0; resources != NULL && resources[i] != NULL; i++) {
		gboolean found = FALSE;

		for (guint j = 0; !found && served != NULL && j < served->len; j++) {
			MeshSyncApiResource *res = g_ptr_array_index(served, j);
			g_autofree gchar *kind =
			        g_ascii_strdown(meshsync_api_resource_get_kind(res), -1);
			const gchar *plural = meshsync_api_resource_get_plural(res);

			found = g_str_equal(resources[i], kind) ||
			        g_str_equal(resources[i], plural);
		}
		if (!found)
			g_string_append_printf(unknown, "%s\"%s\"", unknown->len > 0 ? ", " : "",
			                       resources[i]);
	}
	return unknown->len > 0 ? g_string_free(g_steal_pointer(&unknown), FALSE) : NULL;
}

typedef struct {
	GMainLoop *loop;
	gboolean ok;
	GError *error;
} KmsDiscoveryWait;

static void
kms_discovered_cb(GObject *source, GAsyncResult *result, gpointer data)
{
	KmsDiscoveryWait *wait = data;

	wait->ok = meshsync_discovery_run_finish(MESHSYNC_DISCOVERY(source), result, &wait->error);
	g_main_loop_quit(wait->loop);
}

/* The server is asked for its types before anything is captured: an unreachable server, a
 * refused token or a -r name it does not serve is said at once, in one line, instead of
 * after retries or as an empty file. */
static gboolean
kms_check_server(MeshSyncKubeConfig *config, gchar **resources, GError **error)
{
	g_autoptr(MeshSyncDiscovery) discovery = NULL;
	g_autoptr(GMainLoop) loop = NULL;
	g_autofree gchar *unknown = NULL;
	KmsDiscoveryWait wait = {NULL};

	discovery = meshsync_discovery_new(config, error);
	if (discovery == NULL)
		return FALSE;
	loop = g_main_loop_new(NULL, FALSE);
	wait.loop = loop;
	meshsync_discovery_run_async(discovery, NULL, kms_discovered_cb, &wait);
	g_main_loop_run(loop);
	if (!wait.ok) {
		g_propagate_error(error, wait.error);
		return FALSE;
	}
	unknown = kms_unknown_resources(discovery, resources);
	if (unknown != NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("the API server at %s serves no resource type %s"),
		            meshsync_kube_config_get_server(config), unknown);
		return FALSE;
	}
	return TRUE;
}

/* "-r pod,Deployment -r svc" as one lower-cased list. */
static gchar **
kms_split_list(gchar **given, gboolean lower)
{
	g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(g_free);

	for (guint i = 0; given != NULL && given[i] != NULL; i++) {
		g_auto(GStrv) parts = g_strsplit(given[i], ",", -1);

		for (guint j = 0; parts[j] != NULL; j++) {
			g_autofree gchar *item = g_strstrip(g_strdup(parts[j]));

			if (*item == '\0')
				continue;
			g_ptr_array_add(out,
			                lower ? g_ascii_strdown(item, -1) : g_steal_pointer(&item));
		}
	}
	if (out->len == 0)
		return NULL;
	g_ptr_array_add(out, NULL);
	return (gchar **)g_ptr_array_free(g_steal_pointer(&out), FALSE);
}

static gint
kms_usage_error(GOptionContext *context, const gchar *message)
{
	g_autofree gchar *help = g_option_context_get_help(context, TRUE, NULL);

	g_printerr("kubectl meshsync: %s\n\n%s", message, help);
	return KMS_EXIT_USAGE;
}

static gint
kms_snapshot(gint argc, gchar **argv)
{
	g_autoptr(GOptionContext) context = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MeshSyncService) service = NULL;
	g_autoptr(GMainLoop) loop = NULL;
	g_autoptr(GSource) progress = NULL;
	g_autoptr(GSource) deadline = NULL;
	g_autofree gchar *file = NULL;
	g_autofree gchar *output = NULL;
	g_autofree gchar *duration = NULL;
	g_autofree gchar *kubeconfig = NULL;
	g_autofree gchar *kube_context = NULL;
	g_autofree gchar *target = NULL;
	g_autofree gchar *tmpdir = NULL;
	g_auto(GStrv) resources_arg = NULL;
	g_auto(GStrv) namespaces_arg = NULL;
	g_auto(GStrv) resources = NULL;
	g_auto(GStrv) namespaces = NULL;
	gboolean extended = FALSE;
	gboolean redact = FALSE;
	gboolean to_stdout;
	gint64 duration_ns = -1;
	KmsCapture capture = {NULL};
	const GOptionEntry entries[] = {
	        {"file", 'f', 0, G_OPTION_ARG_FILENAME, &file,
	         N_("Write the snapshot to FILE (default: "
	            "meshery-cluster-snapshot-YYYYMMDD-NN.yaml in the working directory)"),
	         N_("FILE")},
	        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
	         N_("The same as --file; \"-\" writes the snapshot to standard output"),
	         N_("FILE")},
	        {"duration", 'd', 0, G_OPTION_ARG_STRING, &duration,
	         N_("Give up when the initial sync is not complete after this long (Go duration, "
	            "such as 8s or 2m; default: wait until it is complete)"),
	         N_("DURATION")},
	        {"resources", 'r', 0, G_OPTION_ARG_STRING_ARRAY, &resources_arg,
	         N_("Capture only these resource types (comma list, any case: pod,Deployment)"),
	         N_("TYPES")},
	        {"namespace", 'n', 0, G_OPTION_ARG_STRING_ARRAY, &namespaces_arg,
	         N_("Capture only objects of this namespace (repeat it or give a comma list)"),
	         N_("NAMESPACE")},
	        {"kubeconfig", 0, 0, G_OPTION_ARG_FILENAME, &kubeconfig,
	         N_("The kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else the "
	            "pod's service account)"),
	         N_("FILE")},
	        {"context", 0, 0, G_OPTION_ARG_STRING, &kube_context,
	         N_("The kubeconfig context (default: its current context)"), N_("NAME")},
	        {"extended", 0, 0, G_OPTION_ARG_NONE, &extended,
	         N_("Write every event seen, not only the final state of each object"), NULL},
	        {"redact-secrets", 0, 0, G_OPTION_ARG_NONE, &redact,
	         N_("Leave the values of Secrets out of the snapshot"), NULL},
	        {"verbose", 'v', 0, G_OPTION_ARG_NONE, &kms_verbose,
	         N_("Show the engine's log lines as it works"), NULL},
	        {NULL},
	};

	/* the usage line reads as the user typed it */
	g_set_prgname("kubectl meshsync snapshot");
	context = g_option_context_new(NULL);
	g_option_context_set_summary(
	        context, _("Captures the cluster's objects into a YAML file, as meshsync's file "
	                   "mode writes it, for Meshery to import. The capture ends when the "
	                   "initial sync is complete, so it is whole however big the cluster."));
	g_option_context_add_main_entries(context, entries, GETTEXT_PACKAGE);
	if (!g_option_context_parse(context, &argc, &argv, &error))
		return kms_usage_error(context, error->message);
	if (argc > 1) {
		g_autofree gchar *message =
		        g_strdup_printf(_("unexpected argument \"%s\""), argv[1]);

		return kms_usage_error(context, message);
	}
	if (file != NULL && output != NULL)
		return kms_usage_error(context, _("--file and --output name the same thing: give "
		                                  "one"));
	if (duration != NULL) {
		if (!meshsyncd_go_duration_parse(duration, &duration_ns, &error))
			return kms_usage_error(context, error->message);
		if (duration_ns <= 0)
			return kms_usage_error(context, _("--duration must be more than 0"));
	}
	target = g_strdup(output != NULL ? output : file);
	if (target == NULL)
		target = kms_default_file();
	to_stdout = g_str_equal(target, "-");
	resources = kms_split_list(resources_arg, TRUE);
	namespaces = kms_split_list(namespaces_arg, FALSE);
	if (redact)
		g_setenv("MESHSYNC_REDACT_SECRETS", "true", TRUE);

	config = meshsync_kube_config_load(kubeconfig, kube_context, &error);
	if (config == NULL || !kms_check_server(config, resources, &error)) {
		g_printerr("kubectl meshsync: %s\n", error->message);
		return EXIT_FAILURE;
	}

	if (to_stdout) {
		tmpdir = g_dir_make_tmp("kubectl-meshsync-XXXXXX", &error);
		if (tmpdir == NULL) {
			g_printerr("kubectl meshsync: %s\n", error->message);
			return EXIT_FAILURE;
		}
		g_free(target);
		target = g_build_filename(tmpdir, "snapshot.yaml", NULL);
	}

	service = meshsync_service_new(config);
	meshsync_service_set_output_file(service, target, extended);
	if (resources != NULL)
		meshsync_service_set_output_resources(service, (const gchar *const *)resources);
	if (namespaces != NULL)
		meshsync_service_set_output_namespaces(service, (const gchar *const *)namespaces);
	loop = g_main_loop_new(NULL, FALSE);
	capture.loop = loop;
	capture.service = service;
	capture.tty = isatty(STDERR_FILENO);
	capture.started_us = g_get_monotonic_time();
	capture.last_synced = G_MAXUINT;
	capture.counts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_signal_connect(service, "notify::ready", G_CALLBACK(kms_ready_cb), &capture);
	g_signal_connect(service, "run-failed", G_CALLBACK(kms_run_failed_cb), &capture);
	g_signal_connect(service, "failed", G_CALLBACK(kms_failed_cb), &capture);

	progress = g_timeout_source_new(KMS_PROGRESS_MS);
	g_source_set_callback(progress, kms_progress_cb, &capture, NULL);
	g_source_set_static_name(progress, "[kubectl-meshsync] progress");
	g_source_attach(progress, NULL);
	if (duration_ns > 0) {
		deadline = g_timeout_source_new((guint)MIN(duration_ns / 1000000, G_MAXUINT));
		g_source_set_callback(deadline, kms_deadline_cb, &capture, NULL);
		g_source_set_static_name(deadline, "[kubectl-meshsync] duration");
		g_source_attach(deadline, NULL);
	}
	meshsync_service_start_async(service, NULL, kms_started_cb, &capture);
	g_main_loop_run(loop);
	g_source_destroy(progress);
	if (deadline != NULL)
		g_source_destroy(deadline);
	kms_clear_progress(&capture);

	if (capture.failure == NULL && capture.complete && to_stdout &&
	    !kms_copy_to_stdout(target, &error))
		capture.failure = g_strdup(error->message);
	if (to_stdout) {
		g_unlink(target);
		g_rmdir(tmpdir);
	}
	if (capture.failure != NULL) {
		g_printerr("kubectl meshsync: %s\n", capture.failure);
		if (!to_stdout && g_file_test(target, G_FILE_TEST_EXISTS))
			g_printerr(_("kubectl meshsync: %s holds what was captured before that\n"),
			           target);
		capture.status = EXIT_FAILURE;
	} else {
		kms_print_summary(&capture, target, to_stdout);
	}
	g_free(capture.failure);
	g_hash_table_unref(capture.counts);
	return capture.status;
}

/* The library's routine lines (run started, types listed) are for a daemon's log: the
 * capture says what matters itself, so only warnings and errors are shown unless asked
 * (--verbose, or G_MESSAGES_DEBUG as for any GLib program). */
static GLogWriterOutput
kms_log_writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer data)
{
	if (!kms_verbose && g_getenv("G_MESSAGES_DEBUG") == NULL &&
	    (level & (G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO | G_LOG_LEVEL_DEBUG)) != 0)
		return G_LOG_WRITER_HANDLED;
	return g_log_writer_default(level, fields, n_fields, data);
}

int
main(int argc, char **argv)
{
	const gchar *command = argc > 1 ? argv[1] : NULL;

	setlocale(LC_ALL, "");
	bindtextdomain(GETTEXT_PACKAGE, msd_localedir());
	bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
	textdomain(GETTEXT_PACKAGE);
	g_log_set_writer_func(kms_log_writer, NULL, NULL);

	/* krew installs the plugin under upstream's name, meshsync-snapshot, as a link named
	 * kubectl-meshsync_snapshot: `kubectl meshsync-snapshot -f x` is the snapshot command */
	{
		g_autofree gchar *self = g_path_get_basename(argv[0]);

		if (g_str_has_suffix(self, "meshsync_snapshot") ||
		    g_str_has_suffix(self, "meshsync-snapshot"))
			return kms_snapshot(argc, argv);
	}
	if (g_strcmp0(command, "snapshot") == 0)
		return kms_snapshot(argc - 1, argv + 1);
	if (g_strcmp0(command, "version") == 0 || g_strcmp0(command, "--version") == 0) {
		g_print("kubectl-meshsync %s\n", meshsync_get_version());
		return EXIT_SUCCESS;
	}
	if (g_strcmp0(command, "-h") == 0 || g_strcmp0(command, "--help") == 0 ||
	    g_strcmp0(command, "help") == 0) {
		g_print("%s", _(KMS_COMMANDS));
		return EXIT_SUCCESS;
	}
	if (command == NULL)
		g_printerr(_("kubectl meshsync: no command given\n\n"));
	else
		g_printerr(_("kubectl meshsync: unknown command \"%s\"\n\n"), command);
	g_printerr("%s", _(KMS_COMMANDS));
	return KMS_EXIT_USAGE;
}
