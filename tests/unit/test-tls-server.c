/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <glib/gstdio.h>
#include <libsoup/soup.h>

#include "test-tls-server.h"

typedef struct {
	guint status;
	GBytes *body; /* (owned) */
	guint hits;
} MsdTestRoute;

struct _MsdTestServer {
	SoupServer *server; /* (owned) */
	gchar *url;         /* (owned) */
	gchar *token;       /* (owned) (nullable) */
	gboolean gzip;
	GHashTable *routes;       /* (owned): path -> MsdTestRoute */
	GHashTable *misses;       /* (owned): path -> hit count, as GUINT_TO_POINTER */
	SoupMessageHeaders *last; /* (owned) (nullable): headers of the last request */
	GTlsCertificate *peer;    /* (owned) (nullable): client certificate of the last request */
};

static const gchar not_found_status[] =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
        "\"message\":\"the server could not find the requested resource\",\"reason\":\"NotFound\","
        "\"details\":{},\"code\":404}";

static const gchar unauthorized_status[] =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
        "\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\",\"code\":401}";

static void
msd_test_route_free(MsdTestRoute *route)
{
	g_bytes_unref(route->body);
	g_free(route);
}

static GBytes *
msd_test_server_gzip(GBytes *plain)
{
	g_autoptr(GZlibCompressor) compressor =
	        g_zlib_compressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP, -1);
	g_autoptr(GOutputStream) memory = g_memory_output_stream_new_resizable();
	g_autoptr(GOutputStream) out = NULL;
	g_autoptr(GError) error = NULL;
	gsize size = 0;
	const guint8 *data = g_bytes_get_data(plain, &size);

	out = g_converter_output_stream_new(memory, G_CONVERTER(compressor));
	g_assert_true(g_output_stream_write_all(out, data, size, NULL, NULL, &error));
	g_assert_no_error(error);
	g_assert_true(g_output_stream_close(out, NULL, &error));
	g_assert_no_error(error);
	return g_memory_output_stream_steal_as_bytes(G_MEMORY_OUTPUT_STREAM(memory));
}

static void
msd_test_server_respond(MsdTestServer *self, SoupServerMessage *msg, guint status, GBytes *body)
{
	g_autoptr(GBytes) payload = NULL;
	SoupMessageHeaders *headers = soup_server_message_get_response_headers(msg);
	gsize size = 0;
	gconstpointer data;
	const gchar *accepts = soup_message_headers_get_one(
	        soup_server_message_get_request_headers(msg), "Accept-Encoding");

	/* as the API server does: gzip only for a client that asks for it */
	if (self->gzip && accepts != NULL && strstr(accepts, "gzip") != NULL) {
		payload = msd_test_server_gzip(body);
		soup_message_headers_replace(headers, "Content-Encoding", "gzip");
	} else {
		payload = g_bytes_ref(body);
	}
	data = g_bytes_get_data(payload, &size);
	soup_server_message_set_status(msg, status, NULL);
	soup_server_message_set_response(msg, "application/json", SOUP_MEMORY_COPY, data, size);
}

static void
msd_test_server_handler(SoupServer *server,
                        SoupServerMessage *msg,
                        const char *path,
                        GHashTable *query,
                        gpointer user_data)
{
	MsdTestServer *self = user_data;
	SoupMessageHeaders *request = soup_server_message_get_request_headers(msg);
	MsdTestRoute *route;

	g_clear_pointer(&self->last, soup_message_headers_unref);
	self->last = soup_message_headers_new(SOUP_MESSAGE_HEADERS_REQUEST);
	g_set_object(&self->peer, soup_server_message_get_tls_peer_certificate(msg));
	{
		SoupMessageHeadersIter iter;
		const char *name;
		const char *value;

		soup_message_headers_iter_init(&iter, request);
		while (soup_message_headers_iter_next(&iter, &name, &value))
			soup_message_headers_append(self->last, name, value);
	}

	route = g_hash_table_lookup(self->routes, path);
	if (route != NULL) {
		route->hits++;
	} else {
		guint misses = GPOINTER_TO_UINT(g_hash_table_lookup(self->misses, path));

		g_hash_table_replace(self->misses, g_strdup(path), GUINT_TO_POINTER(misses + 1));
	}

	if (self->token != NULL) {
		g_autofree gchar *expected = g_strdup_printf("Bearer %s", self->token);

		if (g_strcmp0(soup_message_headers_get_one(request, "Authorization"), expected) !=
		    0) {
			g_autoptr(GBytes) body = g_bytes_new_static(unauthorized_status,
			                                            strlen(unauthorized_status));

			msd_test_server_respond(self, msg, SOUP_STATUS_UNAUTHORIZED, body);
			return;
		}
	}
	if (route == NULL) {
		g_autoptr(GBytes) body =
		        g_bytes_new_static(not_found_status, strlen(not_found_status));

		msd_test_server_respond(self, msg, SOUP_STATUS_NOT_FOUND, body);
		return;
	}
	msd_test_server_respond(self, msg, route->status, route->body);
}

MsdTestServer *
msd_test_server_new(gboolean tls)
{
	MsdTestServer *self = g_new0(MsdTestServer, 1);
	g_autoptr(GError) error = NULL;
	g_autoptr(GTlsCertificate) cert = NULL;
	g_autofree gchar *cert_file = NULL;
	g_autofree gchar *key_file = NULL;
	GSList *uris;
	SoupServerListenOptions options = SOUP_SERVER_LISTEN_IPV4_ONLY;

	if (tls) {
		cert_file = msd_test_data_path("tls", "server.pem", NULL);
		key_file = msd_test_data_path("tls", "server.key", NULL);
		cert = g_tls_certificate_new_from_files(cert_file, key_file, &error);
		g_assert_no_error(error);
		self->server = soup_server_new("tls-certificate", cert, NULL);
		options |= SOUP_SERVER_LISTEN_HTTPS;
	} else {
		self->server = soup_server_new(NULL, NULL);
	}
	self->routes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
	                                     (GDestroyNotify)msd_test_route_free);
	self->misses = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	soup_server_add_handler(self->server, NULL, msd_test_server_handler, self, NULL);
	soup_server_listen_local(self->server, 0, options, &error);
	g_assert_no_error(error);

	uris = soup_server_get_uris(self->server);
	g_assert_nonnull(uris);
	self->url = g_strdup_printf("%s://127.0.0.1:%d", tls ? "https" : "http",
	                            g_uri_get_port(uris->data));
	g_slist_free_full(uris, (GDestroyNotify)g_uri_unref);
	return self;
}

void
msd_test_server_free(MsdTestServer *self)
{
	soup_server_disconnect(self->server);
	g_object_unref(self->server);
	/* let the closed connections' sources run, so they free what they hold */
	while (g_main_context_iteration(NULL, FALSE))
		;
	g_hash_table_unref(self->routes);
	g_hash_table_unref(self->misses);
	g_clear_pointer(&self->last, soup_message_headers_unref);
	g_clear_object(&self->peer);
	g_free(self->url);
	g_free(self->token);
	g_free(self);
}

const gchar *
msd_test_server_get_url(MsdTestServer *self)
{
	return self->url;
}

void
msd_test_server_set_token(MsdTestServer *self, const gchar *token)
{
	g_free(self->token);
	self->token = g_strdup(token);
}

void
msd_test_server_set_gzip(MsdTestServer *self, gboolean gzip)
{
	self->gzip = gzip;
}

void
msd_test_server_add(MsdTestServer *self, const gchar *path, guint status, const gchar *body)
{
	MsdTestRoute *route = g_new0(MsdTestRoute, 1);

	route->status = status;
	route->body = g_bytes_new(body, strlen(body));
	g_hash_table_replace(self->routes, g_strdup(path), route);
}

void
msd_test_server_add_fixture(MsdTestServer *self, const gchar *path, const gchar *name)
{
	g_autofree gchar *file = msd_test_data_path("discovery", name, NULL);
	g_autofree gchar *contents = NULL;
	g_autoptr(GError) error = NULL;

	g_file_get_contents(file, &contents, NULL, &error);
	g_assert_no_error(error);
	msd_test_server_add(self, path, SOUP_STATUS_OK, contents);
}

guint
msd_test_server_get_hits(MsdTestServer *self, const gchar *path)
{
	MsdTestRoute *route = g_hash_table_lookup(self->routes, path);

	if (route != NULL)
		return route->hits;
	return GPOINTER_TO_UINT(g_hash_table_lookup(self->misses, path));
}

const gchar *
msd_test_server_get_last_header(MsdTestServer *self, const gchar *name)
{
	if (self->last == NULL)
		return NULL;
	return soup_message_headers_get_one(self->last, name);
}

static gboolean
msd_test_server_accept_certificate_cb(SoupServerMessage *msg,
                                      GTlsCertificate *peer,
                                      GTlsCertificateFlags errors,
                                      gpointer user_data)
{
	g_autofree gchar *ca_file = msd_test_data_path("tls", "ca.pem", NULL);
	g_autoptr(GTlsCertificate) ca = NULL;
	g_autoptr(GError) error = NULL;

	/* the client certificate must come from the test CA, whatever GnuTLS thought */
	ca = g_tls_certificate_new_from_file(ca_file, &error);
	g_assert_no_error(error);
	return g_tls_certificate_verify(peer, NULL, ca) == 0;
}

static void
msd_test_server_request_started_cb(SoupServer *server, SoupServerMessage *msg, gpointer user_data)
{
	g_signal_connect(msg, "accept-certificate",
	                 G_CALLBACK(msd_test_server_accept_certificate_cb), NULL);
}

void
msd_test_server_request_client_certificate(MsdTestServer *self)
{
	g_autofree gchar *ca = msd_test_data_path("tls", "ca.pem", NULL);
	g_autoptr(GTlsDatabase) database = NULL;
	g_autoptr(GError) error = NULL;

	database = g_tls_file_database_new(ca, &error);
	g_assert_no_error(error);
	g_object_set(self->server, "tls-database", database, "tls-auth-mode",
	             G_TLS_AUTHENTICATION_REQUESTED, NULL);
	g_signal_connect(self->server, "request-started",
	                 G_CALLBACK(msd_test_server_request_started_cb), NULL);
}

GTlsCertificate *
msd_test_server_get_last_peer_certificate(MsdTestServer *self)
{
	return self->peer;
}

gchar *
msd_test_data_path(const gchar *first, ...)
{
	const gchar *top = g_getenv("MESHSYNC_TEST_DATA");
	g_autoptr(GPtrArray) parts = g_ptr_array_new();
	va_list args;
	const gchar *part;

	g_assert_nonnull(top);
	g_ptr_array_add(parts, (gpointer)top);
	va_start(args, first);
	for (part = first; part != NULL; part = va_arg(args, const gchar *))
		g_ptr_array_add(parts, (gpointer)part);
	va_end(args);
	g_ptr_array_add(parts, NULL);
	return g_build_filenamev((gchar **)parts->pdata);
}

MeshSyncKubeConfig *
msd_test_kubeconfig_new(const gchar *server,
                        const gchar *ca_name,
                        const gchar *token,
                        const gchar *cluster_extra)
{
	g_autofree gchar *user = NULL;

	if (token != NULL)
		user = g_strdup_printf("token: %s", token);
	return msd_test_kubeconfig_new_with_user(server, ca_name, cluster_extra, user);
}

MeshSyncKubeConfig *
msd_test_kubeconfig_new_with_user(const gchar *server,
                                  const gchar *ca_name,
                                  const gchar *cluster_extra,
                                  const gchar *user)
{
	g_autoptr(GString) yaml = g_string_new(NULL);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *dir = NULL;
	g_autofree gchar *path = NULL;
	MeshSyncKubeConfig *config;
	static guint counter = 0;

	g_string_append_printf(yaml,
	                       "apiVersion: v1\n"
	                       "kind: Config\n"
	                       "current-context: test\n"
	                       "clusters:\n"
	                       "- name: test\n"
	                       "  cluster:\n"
	                       "    server: %s\n",
	                       server);
	if (ca_name != NULL) {
		g_autofree gchar *ca = msd_test_data_path("tls", ca_name, NULL);

		g_string_append_printf(yaml, "    certificate-authority: %s\n", ca);
	}
	if (cluster_extra != NULL)
		g_string_append_printf(yaml, "    %s\n", cluster_extra);
	g_string_append(yaml, "contexts:\n"
	                      "- name: test\n"
	                      "  context: {cluster: test, user: tester}\n"
	                      "users:\n"
	                      "- name: tester\n");
	if (user != NULL)
		g_string_append_printf(yaml, "  user:\n    %s\n", user);
	else
		g_string_append(yaml, "  user: {}\n");

	/* G_TEST_OPTION_ISOLATE_DIRS removes this directory after each test */
	dir = g_build_filename(g_get_user_config_dir(), "kube", NULL);
	g_assert_cmpint(g_mkdir_with_parents(dir, 0700), ==, 0);
	path = g_strdup_printf("%s/config-%u", dir, ++counter);
	g_file_set_contents(path, yaml->str, (gssize)yaml->len, &error);
	g_assert_no_error(error);
	config = meshsync_kube_config_new_from_file(path, NULL, &error);
	g_assert_no_error(error);
	g_assert_nonnull(config);
	return config;
}

void
msd_test_wait_for(gboolean *flag)
{
	while (!*flag)
		g_main_context_iteration(NULL, TRUE);
}

void
msd_test_async_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	MsdTestAsync *async = user_data;

	async->result = g_object_ref(result);
	async->done = TRUE;
}
