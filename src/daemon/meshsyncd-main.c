/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncDaemon"

#include "config.h"

#include <glib/gi18n.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmeshsync/meshsync.h>

#include "meshsyncd-daemon.h"
#include "meshsyncd-dbus-service.h"
#include "meshsyncd-go-duration.h"
#include "meshsyncd-go-flags.h"
#include "meshsyncd-log.h"
#include "meshsyncd-resource-table.h"
#include "meshsyncd-tls-trust.h"
#include "util/msd-localedir.h"

/* DEBUG=true (any case) or DEBUG=1, as upstream. */
static gboolean
meshsyncd_main_debug_requested(void)
{
	const gchar *debug = g_getenv("DEBUG");

	return debug != NULL &&
	       (g_ascii_strcasecmp(debug, "true") == 0 || g_strcmp0(debug, "1") == 0);
}

/* Upstream's design fd5: the flag, else RECONCILE_INTERVAL (which Meshery Operator sets from
 * the MeshSync resource's spec.reconcile-interval); 0 or empty: off. A malformed value is a
 * usage error; an interval under the floor (5 minutes: a LIST of every type is not free for
 * the API server) is refused with a warning and reconciliation stays off, as fd5 asks. */
static gboolean
meshsyncd_main_parse_reconcile(const gchar *flag, const gchar *floor_flag, guint *interval_ms)
{
	const gchar *value = flag != NULL ? flag : g_getenv("RECONCILE_INTERVAL");
	const gchar *origin = flag != NULL ? "-reconcileInterval" : "RECONCILE_INTERVAL";
	gint64 floor_ns = (gint64)5 * 60 * G_USEC_PER_SEC * 1000;
	gint64 ns = 0;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *text = g_strstrip(g_strdup(value != NULL ? value : ""));

	*interval_ms = 0;
	if (floor_flag != NULL && !meshsyncd_go_duration_parse(floor_flag, &floor_ns, &error)) {
		g_printerr("meshsync: --reconcile-floor: %s\n", error->message);
		return FALSE;
	}
	if (*text == '\0')
		return TRUE;
	if (!meshsyncd_go_duration_parse(text, &ns, &error)) {
		g_printerr("meshsync: %s: %s\n", origin, error->message);
		return FALSE;
	}
	if (ns == 0)
		return TRUE;
	if (ns < floor_ns) {
		g_printerr(
		        _("meshsync: %s %s is below the %s minimum: no periodic reconciliation\n"),
		        origin, text, floor_flag != NULL ? floor_flag : "5m");
		return TRUE;
	}
	*interval_ms = (guint)MIN(ns / 1000000, G_MAXUINT);
	return TRUE;
}

/* --shard, else the ordinal a StatefulSet gives its pods (POD_NAME "meshsync-2" is shard 2),
 * as kube-state-metrics finds its shard. */
static gboolean
meshsyncd_main_parse_shard(gint shard, gint total, guint *shard_out, guint *total_out)
{
	if (total < 1) {
		g_printerr(_("meshsync: --total-shards must be at least 1\n"));
		return FALSE;
	}
	if (shard < 0 && total > 1) {
		const gchar *pod = g_getenv("POD_NAME");
		const gchar *dash = pod != NULL ? strrchr(pod, '-') : NULL;
		guint64 ordinal = 0;

		if (dash == NULL ||
		    !g_ascii_string_to_unsigned(dash + 1, 10, 0, G_MAXINT32, &ordinal, NULL)) {
			g_printerr(_("meshsync: --total-shards %d needs --shard, or POD_NAME "
			             "ending in "
			             "the StatefulSet ordinal\n"),
			           total);
			return FALSE;
		}
		shard = (gint)ordinal;
	}
	if (shard < 0)
		shard = 0;
	if (shard >= total) {
		g_printerr(_("meshsync: shard %d is not below --total-shards %d\n"), shard, total);
		return FALSE;
	}
	*shard_out = (guint)shard;
	*total_out = (guint)total;
	return TRUE;
}

typedef struct {
	GMainLoop *loop; /* (owned) */
	gint exit_status;
} MeshsyncdListRun;

static void
meshsyncd_main_discovery_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	MeshsyncdListRun *run = user_data;
	MeshSyncDiscovery *discovery = MESHSYNC_DISCOVERY(source);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *table = NULL;

	if (!meshsync_discovery_run_finish(discovery, result, &error)) {
		g_printerr("meshsync: %s\n", error->message);
		run->exit_status = EXIT_FAILURE;
		g_main_loop_quit(run->loop);
		return;
	}
	table = meshsyncd_resource_table_render(meshsync_discovery_get_resources(discovery));
	fputs(table, stdout);
	fflush(stdout);
	g_main_loop_quit(run->loop);
}

/* --list-resources: discovery only, printed like `kubectl api-resources`. */
static gint
meshsyncd_main_list_resources(const gchar *kubeconfig, const gchar *kube_context)
{
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MeshSyncDiscovery) discovery = NULL;
	g_autoptr(GError) error = NULL;
	MeshsyncdListRun run = {NULL, EXIT_SUCCESS};

	config = meshsync_kube_config_load(kubeconfig, kube_context, &error);
	if (config == NULL) {
		g_printerr("meshsync: %s\n", error->message);
		return EXIT_FAILURE;
	}
	meshsyncd_tls_trust_cluster_only(config);
	discovery = meshsync_discovery_new(config, &error);
	if (discovery == NULL) {
		g_printerr("meshsync: %s\n", error->message);
		return EXIT_FAILURE;
	}
	run.loop = g_main_loop_new(NULL, FALSE);
	meshsync_discovery_run_async(discovery, NULL, meshsyncd_main_discovery_cb, &run);
	g_main_loop_run(run.loop);
	g_main_loop_unref(run.loop);
	return run.exit_status;
}

int
main(int argc, char **argv)
{
	g_autoptr(GOptionContext) context = NULL;
	g_autoptr(GError) error = NULL;
	g_auto(GStrv) args = NULL;
	g_autofree gchar *kubeconfig = NULL;
	g_autofree gchar *kube_context = NULL;
	g_autofree gchar *output = NULL;
	g_autofree gchar *output_file = NULL;
	g_autofree gchar *output_namespaces = NULL;
	g_autofree gchar *output_resources = NULL;
	g_autofree gchar *namespaces = NULL;
	g_autofree gchar *stop_after = NULL;
	g_autofree gchar *broker_url = NULL;
	g_autofree gchar *watch_config = NULL;
	g_autofree gchar *broker_token = NULL;
	g_autofree gchar *broker_creds = NULL;
	g_autofree gchar *broker_tls_ca = NULL;
	g_autofree gchar *broker_tls_cert = NULL;
	g_autofree gchar *broker_tls_key = NULL;
	g_autofree gchar *health_address = NULL;
	g_autofree gchar *dbus = NULL;
	g_autofree gchar *exec_namespaces = NULL;
	g_autofree gchar *exec_idle_timeout = NULL;
	g_autofree gchar *readiness = NULL;
	g_autofree gchar *reconcile_interval = NULL;
	g_autofree gchar *reconcile_floor = NULL;
	g_autofree gchar *store_compression = NULL;
	gint shard = -1;
	gint total_shards = 1;
	g_autofree gchar *log_format = NULL;
	g_autofree gchar *log_level = NULL;
	MeshsyncdLogFormat format = MESHSYNCD_LOG_FORMAT_TEXT;
	MeshsyncdLogLevel level = MESHSYNCD_LOG_LEVEL_INFO;
	gint max_sessions = 64;
	gint delivery_queue_size = 100000;
	gboolean disable_exec = FALSE;
	gint broker_connect_timeout = 300;
	gboolean jetstream = FALSE;
	gboolean jetstream_state = FALSE;
	gint jetstream_replicas = 1;
	gint64 jetstream_max_bytes = 256 * 1024 * 1024;
	gint jetstream_ack_timeout = 0;
	gint health_port = MESHSYNC_HEALTH_PORT;
	gboolean output_extended = FALSE;
	gboolean stop_after_sync = FALSE;
	gboolean list_resources = FALSE;
	gboolean verbose = FALSE;
	gboolean redact_secrets = FALSE;
	gboolean kube_http2 = FALSE;
	gboolean version = FALSE;
	MeshsyncdDaemonOptions options = {0};
	const GOptionEntry entries[] = {
	        {"output", 0, 0, G_OPTION_ARG_STRING, &output,
	         N_("Where events go: broker (default) or file; broker,file for both"), N_("MODE")},
	        {"outputFile", 0, 0, G_OPTION_ARG_FILENAME, &output_file,
	         N_("Snapshot file (file mode); default meshery-cluster-snapshot-DATE-NN.yaml"),
	         N_("FILE")},
	        {"outputExtended", 0, 0, G_OPTION_ARG_NONE, &output_extended,
	         N_("Also write every event, with its type, to FILE-extended.yaml")},
	        {"outputNamespaces", 0, 0, G_OPTION_ARG_STRING, &output_namespaces,
	         N_("Comma-separated namespaces whose objects are emitted"), N_("LIST")},
	        {"outputResources", 0, 0, G_OPTION_ARG_STRING, &output_resources,
	         N_("Comma-separated resources that get an informer (pod, deployment, ...)"),
	         N_("LIST")},
	        {"namespaces", 0, 0, G_OPTION_ARG_STRING, &namespaces,
	         N_("Comma-separated namespaces to list and watch, instead of the whole cluster "
	            "(default: $MESHSYNC_NAMESPACES; a Role in each is enough)"),
	         N_("LIST")},
	        {"stopAfter", 0, 0, G_OPTION_ARG_STRING, &stop_after,
	         N_("Stop after this long (Go duration: 8s, 1m30s); negative: never"),
	         N_("DURATION")},
	        {"stop-after-sync", 0, 0, G_OPTION_ARG_NONE, &stop_after_sync,
	         N_("Stop once the initial sync is complete and written (a one-shot snapshot)"),
	         NULL},
	        {"watch-config", 0, 0, G_OPTION_ARG_FILENAME, &watch_config,
	         N_("What to watch, instead of the MeshSync resource or the default (YAML)"),
	         N_("FILE")},
	        {"kubeconfig", 0, 0, G_OPTION_ARG_FILENAME, &kubeconfig,
	         N_("Kubernetes configuration file (default: in-cluster, then $KUBECONFIG, then "
	            "~/.kube/config)"),
	         N_("FILE")},
	        {"context", 0, 0, G_OPTION_ARG_STRING, &kube_context,
	         N_("Context of the configuration file to use instead of its current-context"),
	         N_("NAME")},
	        {"kube-http2", 0, 0, G_OPTION_ARG_NONE, &kube_http2,
	         N_("Offer HTTP/2 to the API server, all watches on one connection (default: "
	            "HTTP/1.1, a connection per watch with TCP back-pressure; also "
	            "MESHSYNC_KUBE_HTTP2=true)"),
	         NULL},
	        {"list-resources", 0, 0, G_OPTION_ARG_NONE, &list_resources,
	         N_("Discover the API server's resource types, print them as a table and exit"),
	         NULL},
	        {"broker-url", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &broker_url,
	         N_("Accepted for compatibility and ignored, as upstream: use BROKER_URL"),
	         N_("URL")},
	        {"broker-token", 0, 0, G_OPTION_ARG_STRING, &broker_token,
	         N_("Token the broker asks for (default: $NATS_TOKEN; BROKER_URL may also carry "
	            "token@ or user:password@ before the host)"),
	         N_("TOKEN")},
	        {"broker-creds", 0, 0, G_OPTION_ARG_FILENAME, &broker_creds,
	         N_("NATS credentials file, user JWT and NKey seed (default: $NATS_CREDS)"),
	         N_("FILE")},
	        {"broker-tls-ca", 0, 0, G_OPTION_ARG_FILENAME, &broker_tls_ca,
	         N_("CA certificates that sign the broker's certificate (default: $NATS_TLS_CA)"),
	         N_("FILE")},
	        {"broker-tls-cert", 0, 0, G_OPTION_ARG_FILENAME, &broker_tls_cert,
	         N_("Client certificate for the broker (default: $NATS_TLS_CERT)"), N_("FILE")},
	        {"broker-tls-key", 0, 0, G_OPTION_ARG_FILENAME, &broker_tls_key,
	         N_("Key of the client certificate (default: $NATS_TLS_KEY)"), N_("FILE")},
	        {"broker-connect-timeout", 0, 0, G_OPTION_ARG_INT, &broker_connect_timeout,
	         N_("How long start-up waits for the broker before it gives up (default 300)"),
	         N_("SECONDS")},
	        {"jetstream", 0, 0, G_OPTION_ARG_NONE, &jetstream,
	         N_("Durable delivery: publish resource events to the JetStream stream "
	            "MESHSYNC_EVENTS (also $MESHSYNC_JETSTREAM=true)"),
	         NULL},
	        {"jetstream-state", 0, 0, G_OPTION_ARG_NONE, &jetstream_state,
	         N_("With --jetstream, also keep the last state of every object in the stream "
	            "MESHSYNC_STATE (also $MESHSYNC_JETSTREAM_STATE=true)"),
	         NULL},
	        {"jetstream-replicas", 0, 0, G_OPTION_ARG_INT, &jetstream_replicas,
	         N_("Replicas of the stream when meshsync creates it (default 1)"), N_("N")},
	        {"jetstream-max-bytes", 0, 0, G_OPTION_ARG_INT64, &jetstream_max_bytes,
	         N_("Most the stream keeps when meshsync creates it (default 268435456)"),
	         N_("BYTES")},
	        {"jetstream-ack-timeout-ms", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_INT,
	         &jetstream_ack_timeout, NULL, NULL},
	        {"health-port", 0, 0, G_OPTION_ARG_INT, &health_port,
	         N_("Port of /healthz, /readyz and /metrics (default 11000; 0: any free port, "
	            "logged)"),
	         N_("PORT")},
	        {"health-address", 0, 0, G_OPTION_ARG_STRING, &health_address,
	         N_("Address the health endpoints listen on (default: every address, as a pod "
	            "needs; the systemd unit passes 127.0.0.1)"),
	         N_("ADDRESS")},
	        {"reconcileInterval", 0, 0, G_OPTION_ARG_STRING, &reconcile_interval,
	         N_("List every watched type again this often and pass on what drifted (Go "
	            "duration, at least 5m; default: $RECONCILE_INTERVAL, else never)"),
	         N_("DURATION")},
	        /* for tests: the smallest interval accepted */
	        {"reconcile-floor", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &reconcile_floor,
	         NULL, N_("DURATION")},
	        {"shard", 0, 0, G_OPTION_ARG_INT, &shard,
	         N_("This replica's shard, from 0 (default: the ordinal ending $POD_NAME, as a "
	            "StatefulSet names its pods)"),
	         N_("I")},
	        {"total-shards", 0, 0, G_OPTION_ARG_INT, &total_shards,
	         N_("Spread the objects over N replicas by uid; each publishes its shard only "
	            "(default 1)"),
	         N_("N")},
	        {"readiness", 0, 0, G_OPTION_ARG_STRING, &readiness,
	         N_("What /readyz means: latch (default, as upstream: ready for good once the "
	            "broker is connected, in file mode once synced) or strict (ready while the "
	            "broker is connected and the informers are synced)"),
	         N_("MODE")},
	        {"dbus", 0, 0, G_OPTION_ARG_STRING, &dbus,
	         N_("Publish io.meshery.MeshSync1 on this D-Bus bus: session or system "
	            "(default: none)"),
	         N_("BUS")},
	        {"store-compression", 0, 0, G_OPTION_ARG_STRING, &store_compression,
	         N_("How the store holds objects: zstd (compressed with a dictionary per "
	            "resource type) or none (default: $MESHSYNC_STORE_COMPRESSION, else zstd)"),
	         N_("MODE")},
	        {"redact-secrets", 0, 0, G_OPTION_ARG_NONE, &redact_secrets,
	         N_("Publish Secrets with their data, binaryData and stringData values replaced by "
	            "[REDACTED] (as MESHSYNC_REDACT_SECRETS=true does)"),
	         NULL},
	        {"delivery-queue-size", 0, 0, G_OPTION_ARG_INT, &delivery_queue_size,
	         N_("Events that may wait for the output, an object's updates merged into one, "
	            "before the informers stop reading (default 100000)"),
	         N_("N")},
	        {"max-sessions", 0, 0, G_OPTION_ARG_INT, &max_sessions,
	         N_("Most log and exec sessions open at once (default 64); more are refused with "
	            "an "
	            "error message"),
	         N_("N")},
	        {"disable-exec", 0, 0, G_OPTION_ARG_NONE, &disable_exec,
	         N_("Refuse every exec-request (log streams still work)"), NULL},
	        {"exec-namespaces", 0, 0, G_OPTION_ARG_STRING, &exec_namespaces,
	         N_("Comma-separated namespaces exec sessions may be opened in (default: all)"),
	         N_("LIST")},
	        {"exec-idle-timeout", 0, 0, G_OPTION_ARG_STRING, &exec_idle_timeout,
	         N_("Close an exec session without input or output for this long (Go duration, "
	            "default 30m; 0: never)"),
	         N_("DURATION")},
	        {"log-format", 0, 0, G_OPTION_ARG_STRING, &log_format,
	         N_("How log lines are written to stderr: text (default; to the journal when "
	            "stderr is connected to it) or json (one object a line)"),
	         N_("FORMAT")},
	        {"log-level", 0, 0, G_OPTION_ARG_STRING, &log_level,
	         N_("Least severe messages logged: error, warning, info (default) or debug"),
	         N_("LEVEL")},
	        {"verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose,
	         N_("Log meshsync's debug messages (--log-level=debug, as DEBUG=true does)"), NULL},
	        {"version", 0, 0, G_OPTION_ARG_NONE, &version, N_("Print the version and exit"),
	         NULL},
	        {NULL},
	};

	setlocale(LC_ALL, "");
	bindtextdomain(GETTEXT_PACKAGE, msd_localedir());
	bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
	textdomain(GETTEXT_PACKAGE);

	args = meshsyncd_go_flags_normalize(argc, argv);
	context = g_option_context_new(NULL);
	g_option_context_set_summary(
	        context,
	        _("Keeps Meshery in sync with the state of a Kubernetes cluster.\n\n"
	          "Upstream's single-dash flags (-output file, -stopAfter=8s) work as well.\n\n"
	          "Environment: BROKER_URL (NATS address, required in broker mode), NATS_TOKEN,\n"
	          "NATS_CREDS, NATS_TLS_CA, NATS_TLS_CERT, NATS_TLS_KEY,\n"
	          "MESHSYNC_BROKER_CONTENT_DEDUP (1, t, true: skip unchanged objects),\n"
	          "MESHSYNC_REDACT_SECRETS, MESHSYNC_NAMESPACES, DEBUG, KUBECONFIG."));
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
	if (args[0] != NULL && args[1] != NULL) {
		/* upstream's flag package stops at the first non-flag and ignores the rest; a
		 * stray word is more often a mistyped flag value, so refuse it */
		g_printerr(_("meshsync: unexpected argument \"%s\"\n"), args[1]);
		g_printerr(_("Run 'meshsync --help' to see the options.\n"));
		return 2;
	}
	if (!meshsyncd_daemon_parse_output(output, &options.file_output, &options.broker_output,
	                                   &error)) {
		g_printerr("meshsync: %s\n", error->message);
		return 2;
	}
	if (readiness != NULL && g_strcmp0(readiness, "latch") != 0 &&
	    g_strcmp0(readiness, "strict") != 0) {
		g_printerr(_("meshsync: --readiness must be latch or strict, not \"%s\"\n"),
		           readiness);
		return 2;
	}
	options.strict_readiness = g_strcmp0(readiness, "strict") == 0;
	/* the environment's spelling, as for the other options a deployment sets there */
	if (store_compression == NULL)
		store_compression = g_strdup(g_getenv("MESHSYNC_STORE_COMPRESSION"));
	if (store_compression != NULL && g_strcmp0(store_compression, "zstd") != 0 &&
	    g_strcmp0(store_compression, "none") != 0) {
		g_printerr(_("meshsync: --store-compression must be zstd or none, not \"%s\"\n"),
		           store_compression);
		return 2;
	}
	options.store_compressed = g_strcmp0(store_compression, "none") != 0;
	if (!meshsyncd_main_parse_reconcile(reconcile_interval, reconcile_floor,
	                                    &options.reconcile_interval_ms))
		return 2;
	if (!meshsyncd_main_parse_shard(shard, total_shards, &options.shard, &options.total_shards))
		return 2;
	/* the library reads the variable when the service starts: the flag is its spelling on
	 * the command line */
	if (redact_secrets)
		g_setenv("MESHSYNC_REDACT_SECRETS", "true", TRUE);
	if (!meshsyncd_log_parse_format(log_format, &format, &error) ||
	    !meshsyncd_log_parse_level(log_level, &level, &error)) {
		g_printerr("meshsync: %s\n", error->message);
		return 2;
	}
	if (verbose || meshsyncd_main_debug_requested())
		level = MESHSYNCD_LOG_LEVEL_DEBUG;
	meshsyncd_log_install(format, level);
	if (list_resources)
		return meshsyncd_main_list_resources(kubeconfig, kube_context);

	options.stop_after_ns = -1;
	if (stop_after != NULL &&
	    !meshsyncd_go_duration_parse(g_strstrip(stop_after), &options.stop_after_ns, &error)) {
		g_printerr(_("meshsync: -stopAfter: %s\n"), error->message);
		return 2;
	}
	if (broker_connect_timeout <= 0) {
		g_printerr(_("meshsync: --broker-connect-timeout must be a positive number of "
		             "seconds\n"));
		return 2;
	}
	if (jetstream_replicas < 1 || jetstream_replicas > 5) {
		g_printerr("meshsync: --jetstream-replicas must be between 1 and 5\n");
		return 2;
	}
	if (jetstream_max_bytes <= 0) {
		g_printerr("meshsync: --jetstream-max-bytes must be a positive number of bytes\n");
		return 2;
	}
	if (health_port < 0 || health_port > 65535) {
		g_printerr(_("meshsync: --health-port must be between 0 and 65535\n"));
		return 2;
	}
	if (delivery_queue_size < 1) {
		g_printerr(_("meshsync: --delivery-queue-size must be at least 1\n"));
		return 2;
	}
	options.delivery_queue_size = (guint)delivery_queue_size;
	if (max_sessions < 0) {
		g_printerr(_("meshsync: --max-sessions must not be negative\n"));
		return 2;
	}
	options.exec_idle_timeout_s = 30 * 60;
	if (exec_idle_timeout != NULL) {
		gint64 ns = 0;

		if (!meshsyncd_go_duration_parse(g_strstrip(exec_idle_timeout), &ns, &error)) {
			g_printerr(_("meshsync: --exec-idle-timeout: %s\n"), error->message);
			return 2;
		}
		if (ns < 0) {
			g_printerr(_("meshsync: --exec-idle-timeout must not be negative\n"));
			return 2;
		}
		/* whole seconds, rounded up so that a short timeout never becomes "never" */
		options.exec_idle_timeout_s = (guint)MIN((ns + G_TIME_SPAN_SECOND * 1000 - 1) /
		                                                 (G_TIME_SPAN_SECOND * 1000),
		                                         G_MAXUINT);
	}
	options.max_sessions = (guint)max_sessions;
	options.disable_exec = disable_exec;
	options.exec_namespaces = exec_namespaces;
	options.dbus_bus = G_BUS_TYPE_NONE;
	if (dbus != NULL && !meshsyncd_dbus_service_parse_bus(dbus, &options.dbus_bus, &error)) {
		g_printerr("meshsync: %s\n", error->message);
		return 2;
	}
	options.broker_token = broker_token;
	options.broker_creds = broker_creds;
	options.broker_tls_ca = broker_tls_ca;
	options.broker_tls_cert = broker_tls_cert;
	options.broker_tls_key = broker_tls_key;
	options.broker_connect_timeout_s = (guint)broker_connect_timeout;
	options.jetstream =
	        jetstream || meshsyncd_daemon_parse_go_bool(g_getenv("MESHSYNC_JETSTREAM"));
	options.jetstream_state = jetstream_state || meshsyncd_daemon_parse_go_bool(
	                                                     g_getenv("MESHSYNC_JETSTREAM_STATE"));
	options.jetstream_replicas = (guint)jetstream_replicas;
	options.jetstream_max_bytes = (guint64)jetstream_max_bytes;
	options.jetstream_ack_timeout_ms = (guint)MAX(jetstream_ack_timeout, 0);
	options.health_address = health_address;
	options.health_port = (guint)health_port;
	options.kubeconfig = kubeconfig;
	options.context = kube_context;
	options.kube_http2 = kube_http2;
	options.output_file = output_file;
	options.output_extended = output_extended;
	options.stop_after_sync = stop_after_sync;
	options.output_namespaces = output_namespaces;
	options.output_resources = output_resources;
	options.namespaces = namespaces != NULL ? namespaces : g_getenv("MESHSYNC_NAMESPACES");
	if (options.namespaces != NULL && *options.namespaces == '\0')
		options.namespaces = NULL;
	options.watch_config = watch_config;
	return meshsyncd_daemon_run(&options);
}
