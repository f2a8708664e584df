/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * meshsync-kubesim: a simulated Kubernetes API server for tests and demos. It keeps objects in
 * memory as compact JSON and serves discovery, list, watch and CRUD the way kubectl and
 * client libraries expect.
 */

#include <glib-unix.h>
#include <stdio.h>
#include <string.h>

#include "kubesim-churn.h"
#include "kubesim-install.h"
#include "kubesim-kubeconfig.h"
#include "kubesim-pack.h"
#include "kubesim-resources.h"
#include "kubesim-server.h"

#include "kubesim-tls.h"
#include "kubesim-workload.h"
#include "meshsync-error.h"

/* From this many generated pods up, objects are packed unless --store-compression says. */
#define KUBESIM_PACK_FROM_PODS 200000

static gboolean
on_signal(gpointer data)
{
	g_main_loop_quit(data);
	return G_SOURCE_REMOVE;
}

static gchar *
base_url(SoupServer *server, gboolean tls)
{
	GSList *uris = soup_server_get_uris(server);
	GUri *uri = uris != NULL ? uris->data : NULL;
	gchar *url;

	if (uri == NULL)
		return NULL;
	if (strchr(g_uri_get_host(uri), ':') != NULL)
		url = g_strdup_printf("%s://[%s]:%d", tls ? "https" : "http", g_uri_get_host(uri),
		                      g_uri_get_port(uri));
	else
		url = g_strdup_printf("%s://%s:%d", tls ? "https" : "http", g_uri_get_host(uri),
		                      g_uri_get_port(uri));
	g_slist_free_full(uris, (GDestroyNotify)g_uri_unref);
	return url;
}

int
main(int argc, char **argv)
{
	gint port = 0;
	g_autofree gchar *address = NULL;
	gboolean tls = FALSE;
	g_autofree gchar *token = NULL;
	g_autofree gchar *restricted_token = NULL;
	g_autofree gchar *kubeconfig = NULL;
	g_autofree gchar *data = NULL;
	gint pods = 0;
	gint namespaces = 0;
	gdouble churn_rate = 0;
	gboolean churn_controllers = FALSE;
	gint64 seed = 1;
	gint history = 10000;
	gint page_token_ttl = 300;
	gint bookmark_interval = 60;
	gdouble rv_block_timeout = 1.0;
	g_autofree gchar *request_log = NULL;
	gboolean no_compression = FALSE;
	g_autofree gchar *store_compression = NULL;
	g_autofree gchar *install = NULL;
	const GOptionEntry entries[] = {
	        {"port", 0, 0, G_OPTION_ARG_INT, &port, "TCP port to listen on (0: a free one)",
	         "N"},
	        {"address", 0, 0, G_OPTION_ARG_STRING, &address,
	         "Address to listen on (default 127.0.0.1)", "A"},
	        {"tls", 0, 0, G_OPTION_ARG_NONE, &tls,
	         "Serve HTTPS with a self-signed CA made at start", NULL},
	        {"token", 0, 0, G_OPTION_ARG_STRING, &token,
	         "Require 'Authorization: Bearer T' on API requests", "T"},
	        {"restricted-token", 0, 0, G_OPTION_ARG_STRING, &restricted_token,
	         "Accept 'Authorization: Bearer T' as user \"restricted\", who has no RBAC "
	         "grant: discovery only, 403 for every resource",
	         "T"},
	        {"write-kubeconfig", 0, 0, G_OPTION_ARG_FILENAME, &kubeconfig,
	         "Write a kubeconfig for this server to FILE", "FILE"},
	        {"data", 0, 0, G_OPTION_ARG_FILENAME, &data,
	         "Load manifests (YAML or JSON) from a file or directory", "PATH"},
	        {"pods", 0, 0, G_OPTION_ARG_INT, &pods, "Generate N pods (default 0)", "N"},
	        {"namespaces", 0, 0, G_OPTION_ARG_INT, &namespaces,
	         "Spread generated objects over M namespaces", "M"},
	        {"churn", 0, 0, G_OPTION_ARG_DOUBLE, &churn_rate,
	         "Keep modifying, creating and deleting pods at this rate", "EVENTS_PER_SECOND"},
	        {"churn-controllers", 0, 0, G_OPTION_ARG_NONE, &churn_controllers,
	         "With --churn, ReplicaSets and Deployments follow their pods' counts (their "
	         "events come on top of the rate)",
	         NULL},
	        {"seed", 0, 0, G_OPTION_ARG_INT64, &seed, "Seed of the generator and churn", "S"},
	        {"history", 0, 0, G_OPTION_ARG_INT, &history,
	         "Events a watch can resume from; older resourceVersions get 410 (default 10000)",
	         "N"},
	        {"page-token-ttl", 0, 0, G_OPTION_ARG_INT, &page_token_ttl,
	         "Seconds a continue token stays valid (default 300)", "SECONDS"},
	        {"bookmark-interval", 0, 0, G_OPTION_ARG_INT, &bookmark_interval,
	         "Seconds between BOOKMARK events on watches that allow them (default 60)",
	         "SECONDS"},
	        {"rv-block-timeout", 0, 0, G_OPTION_ARG_DOUBLE, &rv_block_timeout,
	         "Seconds a read at a resourceVersion not reached yet waits before 504 (default "
	         "1; a real server waits 3; 0 answers at once)",
	         "SECONDS"},
	        {"no-compression", 0, 0, G_OPTION_ARG_NONE, &no_compression,
	         "Never gzip answers (as a server with the APIResponseCompression and "
	         "WatchListCompression feature gates off)",
	         NULL},
	        {"store-compression", 0, 0, G_OPTION_ARG_STRING, &store_compression,
	         "How objects are kept: zstd (packed) or none (plain JSON); default: zstd from "
	         "200,000 generated pods up, none below",
	         "zstd|none"},
	        {"install", 0, 0, G_OPTION_ARG_STRING, &install,
	         "Install these infrastructures at start, comma-separated (istio, linkerd, "
	         "prometheus-operator, grafana-operator)",
	         "LIST"},
	        {"request-log", 0, 0, G_OPTION_ARG_FILENAME, &request_log,
	         "Write every API request (method, path, query, headers) to FILE as a JSON "
	         "line",
	         "FILE"},
	        {NULL},
	};
	g_autoptr(GOptionContext) context = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(KubesimStore) store = NULL;
	g_autoptr(KubesimServer) server = NULL;
	g_autoptr(SoupServer) soup = NULL;
	g_autoptr(GTlsCertificate) cert = NULL;
	g_autoptr(GMainLoop) loop = NULL;
	g_autoptr(KubesimChurn) churn = NULL;
	g_autofree gchar *ca_pem = NULL;
	g_autofree gchar *url = NULL;
	g_autoptr(GInetAddress) inet = NULL;
	g_autoptr(GSocketAddress) sockaddr = NULL;
	KubesimConfig config = {0};
	KubesimWorkload workload = {0};
	guint loaded = 0, refused = 0;
	gint64 started = g_get_monotonic_time();

	context = g_option_context_new("- simulated Kubernetes API server");
	g_option_context_set_summary(
	        context,
	        "Serves discovery, list, watch and CRUD for the common Kubernetes types and "
	        "for CustomResourceDefinitions, from memory.\nPrints its base URL as the "
	        "first line of standard output once it listens; logs go to standard "
	        "error.\nTest hooks live under /kubesim/ (objects, stats, faults, fail, delay, "
	        "close-watches, expire-next-watch, malformed-watch-line, compact, replace, "
	        "install, "
	        "snapshot, restore, requests); see doc/kubesim.md.");
	g_option_context_add_main_entries(context, entries, NULL);
	if (!g_option_context_parse(context, &argc, &argv, &error)) {
		g_printerr("meshsync-kubesim: %s\n", error->message);
		return 2;
	}
	if (port < 0 || port > 65535 || pods < 0 || namespaces < 0 || history <= 0 ||
	    page_token_ttl <= 0 || churn_rate < 0 || rv_block_timeout < 0 ||
	    rv_block_timeout > 3600) {
		g_printerr("meshsync-kubesim: --port, --pods, --namespaces, --history, "
		           "--page-token-ttl, --churn and --rv-block-timeout take non-negative "
		           "numbers\n");
		return 2;
	}

	if (store_compression != NULL && g_strcmp0(store_compression, "zstd") != 0 &&
	    g_strcmp0(store_compression, "none") != 0) {
		g_printerr("meshsync-kubesim: --store-compression takes zstd or none\n");
		return 2;
	}
	/* Packing costs churn three times the CPU per event: only a workload that would not fit
	 * plain pays it unless asked. */
	if (store_compression == NULL)
		kubesim_pack_set_enabled(pods >= KUBESIM_PACK_FROM_PODS);
	else
		kubesim_pack_set_enabled(g_str_equal(store_compression, "zstd"));
	store = kubesim_store_new(history);
	kubesim_resources_install(store);
	workload.namespaces = namespaces;
	workload.pods = pods;
	workload.seed = (guint32)seed;
	workload.data = data;
	if (!kubesim_workload_load(store, &workload, &loaded, &refused, &error)) {
		g_printerr("meshsync-kubesim: %s\n", error->message);
		return 1;
	}
	if (install != NULL) {
		g_auto(GStrv) names = g_strsplit(install, ",", -1);

		for (guint i = 0; names[i] != NULL; i++) {
			guint n = 0;

			if (!kubesim_install(store, g_strstrip(names[i]), &n, &error)) {
				g_printerr("meshsync-kubesim: --install: %s\n", error->message);
				return 2;
			}
			loaded += n;
		}
	}
	g_message("loaded %u objects (%u refused) in %.2f s", loaded, refused,
	          (g_get_monotonic_time() - started) / (gdouble)G_USEC_PER_SEC);

	if (tls) {
		/* A kube-apiserver is Go's crypto/tls: TLS 1.2 and 1.3 only, AEAD ciphers, and
		 * on hardware with AES its own order (AES-128-GCM, AES-256-GCM, ChaCha20) over
		 * the client's. GnuTLS alone would take the client's first, AES-256-GCM for
		 * clients built on GnuTLS or OpenSSL. glib-networking reads this once. */
		if (g_getenv("G_TLS_GNUTLS_PRIORITY") == NULL)
			g_setenv("G_TLS_GNUTLS_PRIORITY", KUBESIM_TLS_PRIORITY, TRUE);
		cert = kubesim_tls_generate(&ca_pem, &error);
		if (cert == NULL) {
			g_printerr("meshsync-kubesim: %s\n", error->message);
			return 1;
		}
	}
	/* no Server header: a kube-apiserver sends none */
	soup = soup_server_new("tls-certificate", cert, NULL);
	config.history = history;
	config.page_token_ttl = page_token_ttl;
	config.bookmark_interval = bookmark_interval;
	config.token = token;
	config.restricted_token = restricted_token;
	config.rv_block_ms = (guint)(rv_block_timeout * 1000 + 0.5);
	server = kubesim_server_new(&config, &workload, store);
	kubesim_set_compression(!no_compression);
	if (request_log != NULL &&
	    !kubesim_requests_open_log(server->requests, request_log, &error)) {
		g_printerr("meshsync-kubesim: %s\n", error->message);
		return 1;
	}
	kubesim_server_attach(server, soup);

	inet = g_inet_address_new_from_string(address != NULL ? address : "127.0.0.1");
	if (inet == NULL) {
		g_printerr("meshsync-kubesim: --address %s is not an IP address\n", address);
		return 2;
	}
	sockaddr = g_inet_socket_address_new(inet, port);
	if (!soup_server_listen(soup, sockaddr, tls ? SOUP_SERVER_LISTEN_HTTPS : 0, &error)) {
		g_printerr("meshsync-kubesim: cannot listen on %s:%d: %s\n",
		           address != NULL ? address : "127.0.0.1", port, error->message);
		return 1;
	}
	url = base_url(soup, tls);
	if (kubeconfig != NULL &&
	    !kubesim_kubeconfig_write(kubeconfig, url, ca_pem, token, &error)) {
		g_printerr("meshsync-kubesim: %s\n", error->message);
		return 1;
	}
	if (churn_rate > 0)
		churn = kubesim_churn_new(store, churn_rate, (guint32)seed, churn_controllers);

	/* the startup contract: the URL is the first line of stdout, once everything is ready */
	fprintf(stdout, "%s\n", url);
	fflush(stdout);
	g_message("serving %s (%u objects, resourceVersion %" G_GUINT64_FORMAT ")", url,
	          kubesim_store_count_objects(store), kubesim_store_get_rv(store));

	loop = g_main_loop_new(NULL, FALSE);
	g_unix_signal_add(SIGTERM, on_signal, loop);
	g_unix_signal_add(SIGINT, on_signal, loop);
	g_main_loop_run(loop);
	g_message("shutting down");
	g_clear_pointer(&churn, kubesim_churn_free);
	kubesim_watch_close_all(server);
	soup_server_disconnect(soup);
	return 0;
}
