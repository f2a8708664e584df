/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <libsoup/soup.h>
#include <string.h>

#include "meshsync-error.h"
#include "meshsync-health-server.h"
#include "meshsync-health-server-private.h"

typedef struct {
	MeshSyncHealthServer *server;
	SoupSession *session;
} MsdTestFixture;

typedef struct {
	guint status;
	gchar *body;
	SoupMessageHeaders *headers;
	GError *error;
} MsdTestResponse;

static void
msd_test_response_free(MsdTestResponse *response)
{
	g_free(response->body);
	g_clear_pointer(&response->headers, soup_message_headers_unref);
	g_clear_error(&response->error);
	g_free(response);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsdTestResponse, msd_test_response_free)

static SoupSession *
msd_test_session_new(void)
{
	/* Straight to the loopback server, whatever the environment says about proxies. */
	g_autoptr(GProxyResolver) direct = g_simple_proxy_resolver_new(NULL, NULL);

	return soup_session_new_with_options("proxy-resolver", direct, NULL);
}

static void
msd_test_setup(MsdTestFixture *fixture, gconstpointer data)
{
	g_autoptr(GError) error = NULL;

	fixture->server = meshsync_health_server_new();
	g_assert_true(meshsync_health_server_listen(fixture->server, "127.0.0.1", 0, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(meshsync_health_server_get_port(fixture->server), >, 0);
	fixture->session = msd_test_session_new();
}

static void
msd_test_teardown(MsdTestFixture *fixture, gconstpointer data)
{
	g_clear_object(&fixture->session);
	/* Let the server see the client connections close before it goes. */
	while (g_main_context_iteration(NULL, FALSE))
		;
	g_assert_finalize_object(fixture->server);
}

static void
msd_test_read_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	GAsyncResult **out = user_data;

	*out = g_object_ref(result);
}

/* Sends @method @path to 127.0.0.1:@port and runs the default main context (which serves
 * the request as well) until the answer is in. */
static MsdTestResponse *
msd_test_request_port(SoupSession *session, guint port, const gchar *method, const gchar *path)
{
	g_autofree gchar *uri = g_strdup_printf("http://127.0.0.1:%u%s", port, path);
	g_autoptr(SoupMessage) msg = soup_message_new(method, uri);
	g_autoptr(GAsyncResult) result = NULL;
	g_autoptr(GBytes) bytes = NULL;
	MsdTestResponse *response = g_new0(MsdTestResponse, 1);

	g_assert_nonnull(msg);
	soup_session_send_and_read_async(session, msg, G_PRIORITY_DEFAULT, NULL, msd_test_read_cb,
	                                 &result);
	while (result == NULL)
		g_main_context_iteration(NULL, TRUE);
	bytes = soup_session_send_and_read_finish(session, result, &response->error);
	if (bytes == NULL)
		return response;
	response->status = soup_message_get_status(msg);
	/* g_strndup (NULL, 0) would be NULL: an empty body reads as "". An empty GBytes may
	 * have no data pointer at all, and memcpy from NULL is undefined even for 0 bytes. */
	response->body = g_strnfill(g_bytes_get_size(bytes), ' ');
	if (g_bytes_get_size(bytes) > 0)
		memcpy(response->body, g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes));
	response->headers = soup_message_headers_ref(soup_message_get_response_headers(msg));
	return response;
}

static MsdTestResponse *
msd_test_request(MsdTestFixture *fixture, const gchar *method, const gchar *path)
{
	MsdTestResponse *response = msd_test_request_port(
	        fixture->session, meshsync_health_server_get_port(fixture->server), method, path);

	g_assert_no_error(response->error);
	return response;
}

static void
msd_test_assert_plain(MsdTestResponse *response, guint status, const gchar *body)
{
	g_assert_cmpuint(response->status, ==, status);
	g_assert_cmpstr(response->body, ==, body);
	g_assert_cmpstr(soup_message_headers_get_one(response->headers, "Content-Type"), ==,
	                "text/plain; charset=utf-8");
	g_assert_cmpstr(soup_message_headers_get_one(response->headers, "X-Content-Type-Options"),
	                ==, "nosniff");
}

static void
test_health_server_healthz(MsdTestFixture *fixture, gconstpointer data)
{
	g_autoptr(MsdTestResponse) get = msd_test_request(fixture, "GET", "/healthz");
	g_autoptr(MsdTestResponse) head = msd_test_request(fixture, "HEAD", "/healthz");
	g_autoptr(MsdTestResponse) query = msd_test_request(fixture, "GET", "/healthz?verbose");

	/* Alive regardless of readiness. */
	g_assert_false(meshsync_health_server_get_ready(fixture->server));
	msd_test_assert_plain(get, SOUP_STATUS_OK, "ok");
	msd_test_assert_plain(head, SOUP_STATUS_OK, "");
	g_assert_cmpint(soup_message_headers_get_content_length(head->headers), ==, 2);
	msd_test_assert_plain(query, SOUP_STATUS_OK, "ok");
}

static void
msd_test_notify_cb(GObject *object, GParamSpec *pspec, gpointer user_data)
{
	guint *count = user_data;

	(*count)++;
}

static void
msd_test_assert_readyz(MsdTestFixture *fixture, guint status, const gchar *verbose)
{
	const gchar *short_body = status == SOUP_STATUS_OK ? "ok" : "not ready";
	const gchar *verbose_paths[] = {"/readyz?verbose", "/readyz?verbose=1",
	                                "/readyz?verbose=true", "/readyz?exclude=x&verbose="};
	const gchar *short_paths[] = {"/readyz", "/readyz?verbose=0", "/readyz?verbose=false",
	                              "/readyz?verbosity=1"};

	for (guint i = 0; i < G_N_ELEMENTS(short_paths); i++) {
		g_autoptr(MsdTestResponse) response =
		        msd_test_request(fixture, "GET", short_paths[i]);

		msd_test_assert_plain(response, status, short_body);
	}
	for (guint i = 0; i < G_N_ELEMENTS(verbose_paths); i++) {
		g_autoptr(MsdTestResponse) response =
		        msd_test_request(fixture, "GET", verbose_paths[i]);

		msd_test_assert_plain(response, status, verbose);
	}
	g_assert_cmpint(meshsync_health_server_get_ready(fixture->server), ==,
	                status == SOUP_STATUS_OK);
}

static void
test_health_server_readyz(MsdTestFixture *fixture, gconstpointer data)
{
	guint notified = 0;
	gboolean ready = TRUE;

	g_signal_connect(fixture->server, "notify::ready", G_CALLBACK(msd_test_notify_cb),
	                 &notified);

	/* No check registered: not ready. */
	msd_test_assert_readyz(fixture, SOUP_STATUS_SERVICE_UNAVAILABLE, "readyz check failed\n");

	meshsync_health_server_set_check(fixture->server, "broker", TRUE, NULL);
	meshsync_health_server_set_check(fixture->server, "informers-synced", FALSE,
	                                 "3 of 5 informers synced");
	g_assert_cmpuint(notified, ==, 2); /* ready for a moment with broker alone */
	msd_test_assert_readyz(fixture, SOUP_STATUS_SERVICE_UNAVAILABLE,
	                       "[+]broker ok\n"
	                       "[-]informers-synced failed: 3 of 5 informers synced\n"
	                       "readyz check failed\n");

	meshsync_health_server_set_check(fixture->server, "informers-synced", TRUE, "ignored");
	g_assert_cmpuint(notified, ==, 3);
	g_object_get(fixture->server, "ready", &ready, NULL);
	g_assert_true(ready);
	msd_test_assert_readyz(fixture, SOUP_STATUS_OK,
	                       "[+]broker ok\n"
	                       "[+]informers-synced ok\n"
	                       "readyz check passed\n");

	/* Setting an unchanged state notifies nothing. */
	meshsync_health_server_set_check(fixture->server, "broker", TRUE, NULL);
	g_assert_cmpuint(notified, ==, 3);

	/* Back to failing; a check without a reason has its reason withheld. */
	meshsync_health_server_set_check(fixture->server, "broker", FALSE, NULL);
	g_assert_cmpuint(notified, ==, 4);
	msd_test_assert_readyz(fixture, SOUP_STATUS_SERVICE_UNAVAILABLE,
	                       "[-]broker failed: reason withheld\n"
	                       "[+]informers-synced ok\n"
	                       "readyz check failed\n");

	meshsync_health_server_set_check(fixture->server, "broker", TRUE, NULL);
	msd_test_assert_readyz(fixture, SOUP_STATUS_OK,
	                       "[+]broker ok\n"
	                       "[+]informers-synced ok\n"
	                       "readyz check passed\n");
	g_assert_cmpuint(notified, ==, 5);
}

static void
test_health_server_not_found(MsdTestFixture *fixture, gconstpointer data)
{
	const gchar *paths[] = {"/",          "/healthz/", "/healthzz", "/readyz/informers",
	                        "/metrics/x", "/livez",    "/HEALTHZ"};

	for (guint i = 0; i < G_N_ELEMENTS(paths); i++) {
		g_autoptr(MsdTestResponse) get = msd_test_request(fixture, "GET", paths[i]);
		g_autoptr(MsdTestResponse) post = msd_test_request(fixture, "POST", paths[i]);

		msd_test_assert_plain(get, SOUP_STATUS_NOT_FOUND, "404 page not found\n");
		msd_test_assert_plain(post, SOUP_STATUS_NOT_FOUND, "404 page not found\n");
	}
}

static void
test_health_server_method(MsdTestFixture *fixture, gconstpointer data)
{
	const gchar *paths[] = {"/healthz", "/readyz", "/metrics"};
	const gchar *methods[] = {"POST", "PUT", "DELETE", "PATCH", "OPTIONS"};

	meshsync_health_server_set_check(fixture->server, "broker", TRUE, NULL);
	for (guint i = 0; i < G_N_ELEMENTS(paths); i++) {
		for (guint j = 0; j < G_N_ELEMENTS(methods); j++) {
			g_autoptr(MsdTestResponse) response =
			        msd_test_request(fixture, methods[j], paths[i]);

			msd_test_assert_plain(response, SOUP_STATUS_METHOD_NOT_ALLOWED,
			                      "405 method not allowed\n");
			g_assert_cmpstr(soup_message_headers_get_one(response->headers, "Allow"),
			                ==, "GET, HEAD");
		}
	}
}

static void
test_health_server_metrics(MsdTestFixture *fixture, gconstpointer data)
{
	g_autoptr(MsdMetrics) metrics = msd_metrics_new();
	const gchar *expected = "# HELP meshsync_events_total Resource events emitted\n"
	                        "# TYPE meshsync_events_total counter\n"
	                        "meshsync_events_total{kind=\"Pod\",type=\"ADDED\"} 2\n"
	                        "meshsync_events_total{kind=\"Service\",type=\"DELETED\"} 1\n"
	                        "# HELP meshsync_objects Objects held in the stores\n"
	                        "# TYPE meshsync_objects gauge\n"
	                        "meshsync_objects 42\n"
	                        "meshsync_objects{namespace=\"a\\\\b \\\"c\\\"\\nd\"} 0.5\n";

	/* The default registry is empty. */
	{
		g_autoptr(MsdTestResponse) response = msd_test_request(fixture, "GET", "/metrics");

		g_assert_cmpuint(response->status, ==, SOUP_STATUS_OK);
		g_assert_cmpstr(response->body, ==, "");
		g_assert_cmpstr(soup_message_headers_get_one(response->headers, "Content-Type"), ==,
		                "text/plain; version=0.0.4; charset=utf-8");
		g_assert_cmpstr(
		        soup_message_headers_get_one(response->headers, "X-Content-Type-Options"),
		        ==, "nosniff");
	}

	meshsync_health_server_set_metrics(fixture->server, metrics);
	g_assert_true(meshsync_health_server_get_metrics(fixture->server) == metrics);
	msd_metrics_gauge_set(metrics, "meshsync_objects", "Objects held in the stores", 42, NULL);
	msd_metrics_gauge_set(metrics, "meshsync_objects", NULL, 0.5, "namespace", "a\\b \"c\"\nd",
	                      NULL);
	msd_metrics_counter_add(metrics, "meshsync_events_total", "Resource events emitted", 1,
	                        "type", "DELETED", "kind", "Service", NULL);
	msd_metrics_counter_add(metrics, "meshsync_events_total", "Resource events emitted", 2,
	                        "kind", "Pod", "type", "ADDED", NULL);
	{
		g_autoptr(MsdTestResponse) response = msd_test_request(fixture, "GET", "/metrics");

		g_assert_cmpuint(response->status, ==, SOUP_STATUS_OK);
		g_assert_cmpstr(response->body, ==, expected);
	}

	/* Every scrape renders the registry as it is now. */
	msd_metrics_gauge_set(metrics, "meshsync_objects", NULL, 43, NULL);
	{
		g_autoptr(MsdTestResponse) response = msd_test_request(fixture, "GET", "/metrics");
		g_autoptr(MsdTestResponse) head = msd_test_request(fixture, "HEAD", "/metrics");

		g_assert_nonnull(strstr(response->body, "\nmeshsync_objects 43\n"));
		g_assert_null(strstr(response->body, "\nmeshsync_objects 42\n"));
		g_assert_cmpuint(head->status, ==, SOUP_STATUS_OK);
		g_assert_cmpstr(head->body, ==, "");
	}
}

static void
test_health_server_port_in_use(MsdTestFixture *fixture, gconstpointer data)
{
	guint port = meshsync_health_server_get_port(fixture->server);
	g_autoptr(MeshSyncHealthServer) second = meshsync_health_server_new();
	g_autoptr(GError) error = NULL;
	g_autofree gchar *where = g_strdup_printf("127.0.0.1:%u", port);
	guint notified = 0;

	g_signal_connect(second, "notify::port", G_CALLBACK(msd_test_notify_cb), &notified);
	g_assert_false(meshsync_health_server_listen(second, "127.0.0.1", port, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_FAILED);
	if (strstr(error->message, where) == NULL)
		g_test_fail_printf("‘%s’ does not name %s", error->message, where);
	g_assert_cmpuint(meshsync_health_server_get_port(second), ==, 0);
	g_assert_cmpuint(notified, ==, 0);
	g_clear_error(&error);

	/* Every address includes the one in use. */
	g_assert_false(meshsync_health_server_listen(second, NULL, port, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_FAILED);
	g_clear_error(&error);

	/* The first server still answers, and the second may try elsewhere. */
	{
		g_autoptr(MsdTestResponse) response = msd_test_request(fixture, "GET", "/healthz");

		msd_test_assert_plain(response, SOUP_STATUS_OK, "ok");
	}
	g_assert_true(meshsync_health_server_listen(second, "127.0.0.1", 0, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(notified, ==, 1);
	g_assert_cmpuint(meshsync_health_server_get_port(second), !=, port);
	{
		g_autoptr(MsdTestResponse) response = msd_test_request_port(
		        fixture->session, meshsync_health_server_get_port(second), "GET",
		        "/healthz");

		g_assert_no_error(response->error);
		msd_test_assert_plain(response, SOUP_STATUS_OK, "ok");
	}
}

static guint
msd_test_count_fds(void)
{
	g_autoptr(GDir) dir = g_dir_open("/proc/self/fd", 0, NULL);
	guint n = 0;

	g_assert_nonnull(dir);
	while (g_dir_read_name(dir) != NULL)
		n++;
	return n;
}

/* A probe opens a connection, asks once and goes: the server must not keep (or leak) it. */
static void
test_health_server_probes_close(MsdTestFixture *fixture, gconstpointer data)
{
	guint port = meshsync_health_server_get_port(fixture->server);
	guint before;
	guint after;

	/* One warm-up request, so lazily opened fds (resolver, proxy modules) are counted. */
	{
		g_autoptr(SoupSession) session = msd_test_session_new();
		g_autoptr(MsdTestResponse) response =
		        msd_test_request_port(session, port, "GET", "/healthz");

		g_assert_no_error(response->error);
	}
	while (g_main_context_iteration(NULL, FALSE))
		;
	before = msd_test_count_fds();
	for (guint i = 0; i < 40; i++) {
		g_autoptr(SoupSession) session = msd_test_session_new();
		g_autoptr(MsdTestResponse) response =
		        msd_test_request_port(session, port, "GET", i % 2 ? "/readyz" : "/healthz");

		g_assert_no_error(response->error);
		g_assert_cmpstr(soup_message_headers_get_one(response->headers, "Connection"), ==,
		                "close");
		g_clear_object(&session);
		while (g_main_context_iteration(NULL, FALSE))
			;
	}
	after = msd_test_count_fds();
	g_assert_cmpuint(after, <=, before + 2);
}

static void
test_health_server_listen_all(void)
{
	g_autoptr(MeshSyncHealthServer) server = meshsync_health_server_new();
	g_autoptr(SoupSession) session = msd_test_session_new();
	g_autoptr(GError) error = NULL;
	g_autoptr(MsdTestResponse) response = NULL;
	guint port = 0;

	g_assert_cmpuint(meshsync_health_server_get_port(server), ==, 0);
	g_assert_true(meshsync_health_server_listen(server, NULL, 0, &error));
	g_assert_no_error(error);
	g_object_get(server, "port", &port, NULL);
	g_assert_cmpuint(port, >, 0);
	g_assert_cmpuint(port, ==, meshsync_health_server_get_port(server));
	response = msd_test_request_port(session, port, "GET", "/healthz");
	g_assert_no_error(response->error);
	msd_test_assert_plain(response, SOUP_STATUS_OK, "ok");
}

static void
test_health_server_bad_address(void)
{
	g_autoptr(MeshSyncHealthServer) server = meshsync_health_server_new();
	g_autoptr(GError) error = NULL;

	g_assert_false(meshsync_health_server_listen(server, "localhost:80", 0, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, "localhost:80"));
	g_clear_error(&error);
	g_assert_false(meshsync_health_server_listen(server, "127.0.0.1", 70000, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG);
	g_assert_cmpuint(meshsync_health_server_get_port(server), ==, 0);
}

/* Dropping the server closes the port. */
static void
test_health_server_close(void)
{
	MeshSyncHealthServer *server = meshsync_health_server_new();
	g_autoptr(SoupSession) session = msd_test_session_new();
	g_autoptr(SoupSession) fresh = msd_test_session_new();
	g_autoptr(GError) error = NULL;
	g_autoptr(MsdTestResponse) before = NULL;
	g_autoptr(MsdTestResponse) after = NULL;
	guint port;

	g_assert_true(meshsync_health_server_listen(server, "127.0.0.1", 0, &error));
	g_assert_no_error(error);
	port = meshsync_health_server_get_port(server);
	before = msd_test_request_port(session, port, "GET", "/healthz");
	g_assert_no_error(before->error);
	g_assert_cmpuint(before->status, ==, SOUP_STATUS_OK);

	g_assert_finalize_object(server);
	after = msd_test_request_port(fresh, port, "GET", "/healthz");
	g_assert_error(after->error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);

	g_test_add("/health-server/healthz", MsdTestFixture, NULL, msd_test_setup,
	           test_health_server_healthz, msd_test_teardown);
	g_test_add("/health-server/readyz", MsdTestFixture, NULL, msd_test_setup,
	           test_health_server_readyz, msd_test_teardown);
	g_test_add("/health-server/not-found", MsdTestFixture, NULL, msd_test_setup,
	           test_health_server_not_found, msd_test_teardown);
	g_test_add("/health-server/method", MsdTestFixture, NULL, msd_test_setup,
	           test_health_server_method, msd_test_teardown);
	g_test_add("/health-server/metrics", MsdTestFixture, NULL, msd_test_setup,
	           test_health_server_metrics, msd_test_teardown);
	g_test_add("/health-server/port-in-use", MsdTestFixture, NULL, msd_test_setup,
	           test_health_server_port_in_use, msd_test_teardown);
	g_test_add("/health-server/probes-close", MsdTestFixture, NULL, msd_test_setup,
	           test_health_server_probes_close, msd_test_teardown);
	g_test_add_func("/health-server/listen-all", test_health_server_listen_all);
	g_test_add_func("/health-server/bad-address", test_health_server_bad_address);
	g_test_add_func("/health-server/close", test_health_server_close);

	return g_test_run();
}
