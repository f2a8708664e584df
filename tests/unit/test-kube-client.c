/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <libsoup/soup.h>

#include "meshsync-error.h"
#include "kube/msd-kube-client.h"
#include "test-tls-server.h"

static const gchar api_body[] = "{\"kind\":\"APIVersions\",\"versions\":[\"v1\"]}";

/* GETs @path with a client made from @config and returns the body or the error. */
static GBytes *
msd_test_get(MeshSyncKubeConfig *config,
             const gchar *path,
             GCancellable *cancellable,
             GError **error)
{
	g_autoptr(MsdKubeClient) client = NULL;
	MsdTestAsync async = {0};
	GBytes *body;

	client = msd_kube_client_new(config, error);
	g_assert_nonnull(client);
	msd_kube_client_get_async(client, path, cancellable, msd_test_async_cb, &async);
	msd_test_wait_for(&async.done);
	body = msd_kube_client_get_finish(client, async.result, error);
	g_object_unref(async.result);
	return body;
}

static void
msd_test_assert_body(GBytes *body, const gchar *expected)
{
	gsize size = 0;
	const gchar *data;

	g_assert_nonnull(body);
	data = g_bytes_get_data(body, &size);
	g_assert_cmpmem(data, size, expected, strlen(expected));
}

static void
test_kube_client_ca_accepted(void)
{
	g_autoptr(MsdTestServer) server = msd_test_server_new(TRUE);
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GError) error = NULL;

	msd_test_server_add(server, "/api", SOUP_STATUS_OK, api_body);
	config = msd_test_kubeconfig_new(msd_test_server_get_url(server), "ca.pem", NULL, NULL);
	body = msd_test_get(config, "/api", NULL, &error);
	g_assert_no_error(error);
	msd_test_assert_body(body, api_body);
}

static void
test_kube_client_ca_bundle(void)
{
	g_autoptr(MsdTestServer) server = msd_test_server_new(TRUE);
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GError) error = NULL;

	/* the right CA is the second certificate of the bundle */
	msd_test_server_add(server, "/api", SOUP_STATUS_OK, api_body);
	config = msd_test_kubeconfig_new(msd_test_server_get_url(server), "bundle.pem", NULL, NULL);
	body = msd_test_get(config, "/api", NULL, &error);
	g_assert_no_error(error);
	msd_test_assert_body(body, api_body);
}

static void
test_kube_client_wrong_ca(void)
{
	g_autoptr(MsdTestServer) server = msd_test_server_new(TRUE);
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *expected = NULL;

	msd_test_server_add(server, "/api", SOUP_STATUS_OK, api_body);
	config = msd_test_kubeconfig_new(msd_test_server_get_url(server), "other-ca.pem", NULL,
	                                 NULL);
	body = msd_test_get(config, "/api", NULL, &error);
	g_assert_null(body);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_TLS);
	expected = g_strdup_printf("GET %s/api: TLS certificate of %s is not trusted by the "
	                           "configured CA",
	                           msd_test_server_get_url(server),
	                           msd_test_server_get_url(server) + strlen("https://"));
	g_assert_cmpstr(error->message, ==, expected);
	/* the handshake failed: no request reached the handler */
	g_assert_cmpuint(msd_test_server_get_hits(server, "/api"), ==, 0);
}

static void
test_kube_client_tls_server_name(void)
{
	g_autoptr(MsdTestServer) server = msd_test_server_new(TRUE);
	g_autoptr(MeshSyncKubeConfig) good = NULL;
	g_autoptr(MeshSyncKubeConfig) bad = NULL;
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GBytes) body2 = NULL;
	g_autoptr(GError) error = NULL;

	msd_test_server_add(server, "/api", SOUP_STATUS_OK, api_body);
	/* the server certificate names "kubernetes" among its subjectAltNames */
	good = msd_test_kubeconfig_new(msd_test_server_get_url(server), "ca.pem", NULL,
	                               "tls-server-name: kubernetes");
	body = msd_test_get(good, "/api", NULL, &error);
	g_assert_no_error(error);
	msd_test_assert_body(body, api_body);

	bad = msd_test_kubeconfig_new(msd_test_server_get_url(server), "ca.pem", NULL,
	                              "tls-server-name: elsewhere.example");
	body2 = msd_test_get(bad, "/api", NULL, &error);
	g_assert_null(body2);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_TLS);
	g_assert_nonnull(strstr(error->message, "elsewhere.example"));
	g_assert_nonnull(strstr(error->message, "does not match"));
}

static void
test_kube_client_insecure(void)
{
	g_autoptr(MsdTestServer) server = msd_test_server_new(TRUE);
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GError) error = NULL;

	msd_test_server_add(server, "/api", SOUP_STATUS_OK, api_body);
	config = msd_test_kubeconfig_new(msd_test_server_get_url(server), NULL, NULL,
	                                 "insecure-skip-tls-verify: true");
	/* honoured, but said: a person must know the API server is not authenticated */
	g_test_expect_message("MeshSyncKube", G_LOG_LEVEL_WARNING,
	                      "TLS verification of the API server https://*is off*");
	body = msd_test_get(config, "/api", NULL, &error);
	g_test_assert_expected_messages();
	g_assert_no_error(error);
	msd_test_assert_body(body, api_body);
}

static void
test_kube_client_system_trust(void)
{
	g_autoptr(MsdTestServer) server = msd_test_server_new(TRUE);
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GError) error = NULL;

	/* no CA in the config: the system store, which has never heard of the test CA */
	msd_test_server_add(server, "/api", SOUP_STATUS_OK, api_body);
	config = msd_test_kubeconfig_new(msd_test_server_get_url(server), NULL, NULL, NULL);
	body = msd_test_get(config, "/api", NULL, &error);
	g_assert_null(body);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_TLS);
	g_assert_nonnull(strstr(error->message, "system trust store"));
}

static void
test_kube_client_token_sent(void)
{
	g_autoptr(MsdTestServer) server = msd_test_server_new(TRUE);
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *user_agent = NULL;

	msd_test_server_set_token(server, "s3cret-token");
	msd_test_server_add(server, "/api", SOUP_STATUS_OK, api_body);
	config = msd_test_kubeconfig_new(msd_test_server_get_url(server), "ca.pem", "s3cret-token",
	                                 NULL);
	body = msd_test_get(config, "/api", NULL, &error);
	g_assert_no_error(error);
	msd_test_assert_body(body, api_body);
	g_assert_cmpstr(msd_test_server_get_last_header(server, "Authorization"), ==,
	                "Bearer s3cret-token");
	g_assert_cmpstr(msd_test_server_get_last_header(server, "Accept"), ==, "application/json");
	user_agent = g_strdup_printf("meshsync/%s (linux) libsoup", PACKAGE_VERSION);
	g_assert_cmpstr(msd_test_server_get_last_header(server, "User-Agent"), ==, user_agent);
	g_assert_nonnull(
	        strstr(msd_test_server_get_last_header(server, "Accept-Encoding"), "gzip"));
	g_assert_cmpuint(msd_test_server_get_hits(server, "/api"), ==, 1);
}

static void
test_kube_client_client_certificate(void)
{
	g_autoptr(MsdTestServer) server = msd_test_server_new(TRUE);
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *cert = msd_test_data_path("tls", "client.pem", NULL);
	g_autofree gchar *key = msd_test_data_path("tls", "client.key", NULL);
	g_autofree gchar *user = NULL;
	g_autofree gchar *expected_pem = NULL;
	g_autofree gchar *sent_pem = NULL;
	g_autoptr(GTlsCertificate) expected = NULL;
	GTlsCertificate *sent;

	msd_test_server_request_client_certificate(server);
	msd_test_server_add(server, "/api", SOUP_STATUS_OK, api_body);
	user = g_strdup_printf("client-certificate: %s\n    client-key: %s", cert, key);
	config = msd_test_kubeconfig_new_with_user(msd_test_server_get_url(server), "ca.pem", NULL,
	                                           user);
	body = msd_test_get(config, "/api", NULL, &error);
	g_assert_no_error(error);
	msd_test_assert_body(body, api_body);

	sent = msd_test_server_get_last_peer_certificate(server);
	g_assert_nonnull(sent);
	expected = g_tls_certificate_new_from_file(cert, &error);
	g_assert_no_error(error);
	g_object_get(sent, "certificate-pem", &sent_pem, NULL);
	g_object_get(expected, "certificate-pem", &expected_pem, NULL);
	g_assert_cmpstr(sent_pem, ==, expected_pem);
}

static void
test_kube_client_unauthorized(void)
{
	g_autoptr(MsdTestServer) server = msd_test_server_new(TRUE);
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *expected = NULL;

	msd_test_server_set_token(server, "s3cret-token");
	msd_test_server_add(server, "/api", SOUP_STATUS_OK, api_body);
	config = msd_test_kubeconfig_new(msd_test_server_get_url(server), "ca.pem", NULL, NULL);
	body = msd_test_get(config, "/api", NULL, &error);
	g_assert_null(body);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_UNAUTHORIZED);
	expected = g_strdup_printf("GET %s/api: 401 Unauthorized", msd_test_server_get_url(server));
	g_assert_cmpstr(error->message, ==, expected);
	g_assert_null(msd_test_server_get_last_header(server, "Authorization"));
	/* one retry with fresh credentials, no more */
	g_assert_cmpuint(msd_test_server_get_hits(server, "/api"), ==, 2);
}

static void
test_kube_client_forbidden(void)
{
	g_autoptr(MsdTestServer) server = msd_test_server_new(FALSE);
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *expected = NULL;

	msd_test_server_add(server, "/api/v1/pods", SOUP_STATUS_FORBIDDEN,
	                    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
	                    "\"message\":\"pods is forbidden: User \\\"x\\\" cannot list resource "
	                    "\\\"pods\\\" in API group \\\"\\\" at the cluster scope\","
	                    "\"reason\":\"Forbidden\",\"code\":403}");
	config = msd_test_kubeconfig_new(msd_test_server_get_url(server), NULL, "t", NULL);
	body = msd_test_get(config, "/api/v1/pods?limit=500", NULL, &error);
	g_assert_null(body);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_FORBIDDEN);
	expected = g_strdup_printf("GET %s/api/v1/pods?limit=500: 403 Forbidden: pods is "
	                           "forbidden: User \"x\" cannot list resource \"pods\" in API "
	                           "group \"\" at the cluster scope",
	                           msd_test_server_get_url(server));
	g_assert_cmpstr(error->message, ==, expected);
}

static void
test_kube_client_not_found(void)
{
	g_autoptr(MsdTestServer) server = msd_test_server_new(FALSE);
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *expected = NULL;

	config = msd_test_kubeconfig_new(msd_test_server_get_url(server), NULL, NULL, NULL);
	body = msd_test_get(config, "/apis/nothing.example/v1", NULL, &error);
	g_assert_null(body);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_NOT_FOUND);
	expected = g_strdup_printf("GET %s/apis/nothing.example/v1: 404 Not Found: the server "
	                           "could not find the requested resource",
	                           msd_test_server_get_url(server));
	g_assert_cmpstr(error->message, ==, expected);
}

static void
test_kube_client_error_from_status(void)
{
	g_autoptr(GBytes) gone = NULL;
	g_autoptr(GBytes) text = NULL;
	g_autoptr(GError) error_gone = NULL;
	g_autoptr(GError) error_text = NULL;
	g_autoptr(GError) error_empty = NULL;
	const gchar gone_json[] = "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":"
	                          "\"too old resource version: 1 (42)\",\"reason\":\"Expired\","
	                          "\"code\":410}";
	const gchar text_body[] =
	        "no endpoints available for service metrics-server\nmore detail\n";

	gone = g_bytes_new_static(gone_json, strlen(gone_json));
	error_gone =
	        msd_kube_client_error_from_status("GET https://h/api/v1/pods?watch=1", 410, gone);
	g_assert_error(error_gone, MESHSYNC_ERROR, MESHSYNC_ERROR_GONE);
	g_assert_cmpstr(error_gone->message, ==,
	                "GET https://h/api/v1/pods?watch=1: 410 Gone: too old resource version: "
	                "1 (42)");

	text = g_bytes_new_static(text_body, strlen(text_body));
	error_text = msd_kube_client_error_from_status("GET https://h/apis/m/v1", 503, text);
	g_assert_error(error_text, MESHSYNC_ERROR, MESHSYNC_ERROR_HTTP);
	g_assert_cmpstr(error_text->message, ==,
	                "GET https://h/apis/m/v1: 503 Service Unavailable: no endpoints available "
	                "for service metrics-server");

	error_empty = msd_kube_client_error_from_status("GET https://h/x", 500, NULL);
	g_assert_error(error_empty, MESHSYNC_ERROR, MESHSYNC_ERROR_HTTP);
	g_assert_cmpstr(error_empty->message, ==, "GET https://h/x: 500 Internal Server Error");
}

/* kube-apiserver's /readyz while it starts: one check a line, the failing ones named */
static void
test_kube_client_error_from_health_check(void)
{
	const gchar readyz[] = "[+]ping ok\n[+]etcd ok\n"
	                       "[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\n"
	                       "[+]poststarthook/start-apiserver-admission-initializer ok\n"
	                       "[-]poststarthook/apiservice-discovery-controller failed: reason "
	                       "withheld\nreadyz check failed\n";
	const gchar passing[] = "[+]ping ok\n[+]etcd ok\n";
	g_autoptr(GBytes) failing_body = g_bytes_new_static(readyz, strlen(readyz));
	g_autoptr(GBytes) passing_body = g_bytes_new_static(passing, strlen(passing));
	g_autoptr(GString) many = g_string_new(NULL);
	g_autoptr(GBytes) many_body = NULL;
	g_autoptr(GError) failing = NULL;
	g_autoptr(GError) odd = NULL;
	g_autoptr(GError) overlong = NULL;

	failing = msd_kube_client_error_from_status("GET https://h/readyz", 500, failing_body);
	g_assert_error(failing, MESHSYNC_ERROR, MESHSYNC_ERROR_HTTP);
	g_assert_cmpstr(failing->message, ==,
	                "GET https://h/readyz: 500 Internal Server Error: failing checks: "
	                "poststarthook/rbac/bootstrap-roles, "
	                "poststarthook/apiservice-discovery-controller");
	g_assert_cmpuint(msd_kube_client_error_get_status(failing), ==, 500);

	/* a 500 whose list names no failing check: its first line, as any plain text */
	odd = msd_kube_client_error_from_status("GET https://h/readyz", 500, passing_body);
	g_assert_cmpstr(odd->message, ==,
	                "GET https://h/readyz: 500 Internal Server Error: "
	                "[+]ping ok");

	/* a hostile list is cut, not copied whole into every retry's message */
	for (guint i = 0; i < 10000; i++)
		g_string_append_printf(many, "[-]check-%u failed: reason withheld\n", i);
	many_body = g_bytes_new(many->str, many->len);
	overlong = msd_kube_client_error_from_status("GET https://h/readyz", 500, many_body);
	g_assert_true(g_str_has_suffix(overlong->message, ", ..."));
	g_assert_cmpuint(strlen(overlong->message), <, 400);
}

static void
test_kube_client_connection_refused(void)
{
	g_autoptr(GSocketListener) listener = g_socket_listener_new();
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *url = NULL;
	g_autofree gchar *expected = NULL;
	g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback(G_SOCKET_FAMILY_IPV4);
	g_autoptr(GSocketAddress) address = g_inet_socket_address_new(loopback, 0);
	g_autoptr(GSocketAddress) bound = NULL;
	guint16 port;

	/* a port that was just free: nothing listens there once the listener is closed */
	g_socket_listener_add_address(listener, address, G_SOCKET_TYPE_STREAM,
	                              G_SOCKET_PROTOCOL_TCP, NULL, &bound, &error);
	g_assert_no_error(error);
	port = g_inet_socket_address_get_port(G_INET_SOCKET_ADDRESS(bound));
	g_socket_listener_close(listener);

	url = g_strdup_printf("http://127.0.0.1:%u", port);
	config = msd_test_kubeconfig_new(url, NULL, NULL, NULL);
	body = msd_test_get(config, "/version", NULL, &error);
	g_assert_null(body);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION);
	expected = g_strdup_printf("GET %s/version: connection refused", url);
	g_assert_cmpstr(error->message, ==, expected);
}

static void
test_kube_client_gzip(void)
{
	g_autoptr(MsdTestServer) server = msd_test_server_new(TRUE);
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *file = msd_test_data_path("discovery", "api-v1.json", NULL);
	g_autofree gchar *contents = NULL;

	g_file_get_contents(file, &contents, NULL, &error);
	g_assert_no_error(error);
	msd_test_server_set_gzip(server, TRUE);
	msd_test_server_add(server, "/api/v1", SOUP_STATUS_OK, contents);
	config = msd_test_kubeconfig_new(msd_test_server_get_url(server), "ca.pem", NULL, NULL);
	body = msd_test_get(config, "/api/v1", NULL, &error);
	g_assert_no_error(error);
	msd_test_assert_body(body, contents);
}

/* The cluster's disable-compression: gzip is not asked for (libsoup's decoder would add its
 * own Accept-Encoding), so a server that compresses when asked answers plain. */
static void
test_kube_client_disable_compression(void)
{
	g_autoptr(MsdTestServer) server = msd_test_server_new(TRUE);
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GError) error = NULL;

	msd_test_server_set_gzip(server, TRUE);
	msd_test_server_add(server, "/api", SOUP_STATUS_OK, api_body);
	config = msd_test_kubeconfig_new(msd_test_server_get_url(server), "ca.pem", NULL,
	                                 "disable-compression: true");
	g_assert_true(meshsync_kube_config_get_disable_compression(config));
	body = msd_test_get(config, "/api", NULL, &error);
	g_assert_no_error(error);
	msd_test_assert_body(body, api_body);
	g_assert_null(msd_test_server_get_last_header(server, "Accept-Encoding"));
}

/* A body over the limit (here after gzip, so the announced length says nothing) fails
 * naming the URL and the limit, instead of growing without bound; one at the limit passes. */
static void
test_kube_client_body_limit(void)
{
	g_autoptr(MsdTestServer) server = msd_test_server_new(TRUE);
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MsdKubeClient) client = NULL;
	g_autoptr(GString) big = g_string_new("{\"items\":[");
	g_autofree gchar *expected = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GBytes) body = NULL;
	MsdTestAsync async = {0};

	for (guint i = 0; i < 500000; i++)
		g_string_append(big, i == 0 ? "{}" : ",{}");
	g_string_append(big, "]}");
	msd_test_server_set_gzip(server, TRUE);
	msd_test_server_add(server, "/api/v1/pods", SOUP_STATUS_OK, big->str);
	config = msd_test_kubeconfig_new(msd_test_server_get_url(server), "ca.pem", NULL, NULL);
	client = msd_kube_client_new(config, &error);
	g_assert_no_error(error);

	msd_kube_client_set_max_body(client, 1024 * 1024);
	msd_kube_client_get_async(client, "/api/v1/pods", NULL, msd_test_async_cb, &async);
	msd_test_wait_for(&async.done);
	body = msd_kube_client_get_finish(client, async.result, &error);
	g_clear_object(&async.result);
	g_assert_null(body);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_TOO_LARGE);
	expected = g_strdup_printf("GET %s/api/v1/pods: response body exceeds the limit of 1 MiB",
	                           msd_test_server_get_url(server));
	g_assert_cmpstr(error->message, ==, expected);
	g_clear_error(&error);

	msd_kube_client_set_max_body(client, big->len);
	async.done = FALSE;
	msd_kube_client_get_async(client, "/api/v1/pods", NULL, msd_test_async_cb, &async);
	msd_test_wait_for(&async.done);
	body = msd_kube_client_get_finish(client, async.result, &error);
	g_clear_object(&async.result);
	g_assert_no_error(error);
	msd_test_assert_body(body, big->str);
}

static void
test_kube_client_stream(void)
{
	g_autoptr(MsdTestServer) server = msd_test_server_new(TRUE);
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MsdKubeClient) client = NULL;
	g_autoptr(GInputStream) stream = NULL;
	g_autoptr(GInputStream) missing = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GBytes) read = NULL;
	MsdTestAsync ok = {0};
	MsdTestAsync bad = {0};
	MsdTestAsync spliced = {0};
	g_autoptr(GOutputStream) sink = NULL;
	const gchar events[] = "{\"type\":\"ADDED\",\"object\":{}}\n";

	msd_test_server_add(server, "/api/v1/pods", SOUP_STATUS_OK, events);
	config = msd_test_kubeconfig_new(msd_test_server_get_url(server), "ca.pem", NULL, NULL);
	client = msd_kube_client_new(config, &error);
	g_assert_no_error(error);

	msd_kube_client_stream_async(client, "/api/v1/pods?watch=1", NULL, msd_test_async_cb, &ok);
	msd_test_wait_for(&ok.done);
	stream = msd_kube_client_stream_finish(client, ok.result, &error);
	g_object_unref(ok.result);
	g_assert_no_error(error);
	sink = g_memory_output_stream_new_resizable();
	g_output_stream_splice_async(sink, stream,
	                             G_OUTPUT_STREAM_SPLICE_CLOSE_SOURCE |
	                                     G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET,
	                             G_PRIORITY_DEFAULT, NULL, msd_test_async_cb, &spliced);
	msd_test_wait_for(&spliced.done);
	g_assert_cmpint(g_output_stream_splice_finish(sink, spliced.result, &error), ==,
	                strlen(events));
	g_object_unref(spliced.result);
	g_assert_no_error(error);
	read = g_memory_output_stream_steal_as_bytes(G_MEMORY_OUTPUT_STREAM(sink));
	msd_test_assert_body(read, events);

	msd_kube_client_stream_async(client, "/api/v1/nodes?watch=1", NULL, msd_test_async_cb,
	                             &bad);
	msd_test_wait_for(&bad.done);
	missing = msd_kube_client_stream_finish(client, bad.result, &error);
	g_object_unref(bad.result);
	g_assert_null(missing);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_NOT_FOUND);
	g_assert_nonnull(strstr(error->message, "the server could not find"));
}

static void
test_kube_client_cancelled(void)
{
	g_autoptr(MsdTestServer) server = msd_test_server_new(TRUE);
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(GCancellable) cancellable = g_cancellable_new();
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GError) error = NULL;

	msd_test_server_add(server, "/api", SOUP_STATUS_OK, api_body);
	config = msd_test_kubeconfig_new(msd_test_server_get_url(server), "ca.pem", NULL, NULL);
	g_cancellable_cancel(cancellable);
	body = msd_test_get(config, "/api", cancellable, &error);
	g_assert_null(body);
	g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

static void
test_kube_client_error_status(void)
{
	g_autoptr(GError) bad = msd_kube_client_error_from_status(
	        "GET https://h:6443/api/v1/pods?watch=1&sendInitialEvents=true", 400, NULL);
	g_autoptr(GError) unavailable =
	        msd_kube_client_error_from_status("GET https://h/api/v1/pods", 503, NULL);
	g_autoptr(GError) forbidden =
	        msd_kube_client_error_from_status("GET https://h/api/v1/pods", 403, NULL);
	g_autoptr(GError) transport = g_error_new(MESHSYNC_ERROR, MESHSYNC_ERROR_HTTP,
	                                          "GET https://h/x: Message Corrupt");
	g_autoptr(GError) other = g_error_new_literal(G_IO_ERROR, G_IO_ERROR_FAILED, "x: 500 y");

	g_assert_cmpuint(msd_kube_client_error_get_status(bad), ==, 400);
	g_assert_cmpuint(msd_kube_client_error_get_status(unavailable), ==, 503);
	g_assert_cmpuint(msd_kube_client_error_get_status(forbidden), ==, 403);
	g_assert_cmpuint(msd_kube_client_error_get_status(transport), ==, 0);
	g_assert_cmpuint(msd_kube_client_error_get_status(other), ==, 0);
	g_assert_cmpuint(msd_kube_client_error_get_status(NULL), ==, 0);
	/* a caller's prefix does not hide it */
	g_prefix_error(&unavailable, "pods.v1.: ");
	g_assert_cmpuint(msd_kube_client_error_get_status(unavailable), ==, 503);
}

static void
get_done_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	GBytes **out = user_data;
	g_autoptr(GError) error = NULL;

	*out = msd_kube_client_get_finish(MSD_KUBE_CLIENT(source), result, &error);
	g_assert_no_error(error);
}

/* A one-shot request asks the server to close its connection; an ordinary one does not. */
static void
test_kube_client_one_shot(void)
{
	g_autoptr(MsdTestServer) server = msd_test_server_new(TRUE);
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MsdKubeClient) client = NULL;
	g_autoptr(GError) error = NULL;
	GBytes *body = NULL;

	msd_test_server_add(server, "/api", SOUP_STATUS_OK, api_body);
	config = msd_test_kubeconfig_new(msd_test_server_get_url(server), "ca.pem", NULL, NULL);
	client = msd_kube_client_new(config, &error);
	g_assert_no_error(error);

	msd_kube_client_get_full_async(client, "/api", MSD_KUBE_REQUEST_ONE_SHOT, NULL, get_done_cb,
	                               &body);
	while (body == NULL)
		g_main_context_iteration(NULL, TRUE);
	msd_test_assert_body(body, api_body);
	g_clear_pointer(&body, g_bytes_unref);
	g_assert_cmpstr(msd_test_server_get_last_header(server, "Connection"), ==, "close");

	msd_kube_client_get_async(client, "/api", NULL, get_done_cb, &body);
	while (body == NULL)
		g_main_context_iteration(NULL, TRUE);
	g_clear_pointer(&body, g_bytes_unref);
	g_assert_cmpstr(msd_test_server_get_last_header(server, "Connection"), !=, "close");
	g_assert_cmpuint(msd_test_server_get_hits(server, "/api"), ==, 2);
}

/* A plain HTTP server of raw sockets, for what SoupServer will not do: answer half a body and
 * then nothing, or nothing at all, on a connection it keeps open, as a black-holed one is.
 * "/pair" is answered once two requests wait for it, so that the client holds two connections. */
typedef struct {
	GSocketService *service;
	guint16 port;
	guint accepted;
	GPtrArray *held; /* (element-type GSocketConnection): never closed while the test runs */
	GPtrArray
	        *waiting; /* (element-type GSocketConnection): "/pair" requests not answered yet */
} MsdStallServer;

typedef struct {
	MsdStallServer *server;
	GSocketConnection *connection; /* (owned) */
	gchar buffer[4096];
} MsdStallRead;

static void msd_stall_read_next(MsdStallServer *server, GSocketConnection *connection);

static void
msd_stall_write(GSocketConnection *connection, const gchar *text)
{
	g_autoptr(GError) error = NULL;

	g_output_stream_write_all(g_io_stream_get_output_stream(G_IO_STREAM(connection)), text,
	                          strlen(text), NULL, NULL, &error);
	g_assert_no_error(error);
}

static void
msd_stall_answer_ok(GSocketConnection *connection)
{
	g_autofree gchar *answer =
	        g_strdup_printf("HTTP/1.1 200 OK\r\nContent-Type: "
	                        "application/json\r\nContent-Length: %zu\r\n\r\n%s",
	                        strlen(api_body), api_body);

	msd_stall_write(connection, answer);
}

static void
msd_stall_read_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autofree MsdStallRead *read = user_data;
	g_autoptr(GSocketConnection) connection = read->connection;
	gssize n = g_input_stream_read_finish(G_INPUT_STREAM(source), result, NULL);

	if (n <= 0)
		return;
	read->buffer[n] = '\0';
	if (g_str_has_prefix(read->buffer, "GET /body-stall ")) {
		/* the headers and the start of a body that never comes */
		msd_stall_write(connection, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
		                            "Content-Length: 1000\r\n\r\n{\"kind\":");
		return;
	}
	if (g_str_has_prefix(read->buffer, "GET /headers-stall "))
		return;
	if (g_str_has_prefix(read->buffer, "GET /pair ")) {
		g_ptr_array_add(read->server->waiting, g_object_ref(connection));
		if (read->server->waiting->len < 2)
			return;
		for (guint i = 0; i < read->server->waiting->len; i++) {
			GSocketConnection *waiting = g_ptr_array_index(read->server->waiting, i);

			msd_stall_answer_ok(waiting);
			msd_stall_read_next(read->server, waiting);
		}
		g_ptr_array_set_size(read->server->waiting, 0);
		return;
	}
	msd_stall_answer_ok(connection);
	msd_stall_read_next(read->server, connection);
}

/* Requests are small and come whole in one read on loopback. */
static void
msd_stall_read_next(MsdStallServer *server, GSocketConnection *connection)
{
	MsdStallRead *read = g_new0(MsdStallRead, 1);

	read->server = server;
	read->connection = g_object_ref(connection);
	g_input_stream_read_async(g_io_stream_get_input_stream(G_IO_STREAM(connection)),
	                          read->buffer, sizeof(read->buffer) - 1, G_PRIORITY_DEFAULT, NULL,
	                          msd_stall_read_cb, read);
}

static gboolean
msd_stall_incoming_cb(GSocketService *service,
                      GSocketConnection *connection,
                      GObject *source,
                      gpointer user_data)
{
	MsdStallServer *server = user_data;

	server->accepted++;
	g_ptr_array_add(server->held, g_object_ref(connection));
	msd_stall_read_next(server, connection);
	return TRUE;
}

static MsdStallServer *
msd_stall_server_new(void)
{
	MsdStallServer *server = g_new0(MsdStallServer, 1);
	g_autoptr(GError) error = NULL;

	server->held = g_ptr_array_new_with_free_func(g_object_unref);
	server->waiting = g_ptr_array_new_with_free_func(g_object_unref);
	server->service = g_socket_service_new();
	server->port = g_socket_listener_add_any_inet_port(G_SOCKET_LISTENER(server->service), NULL,
	                                                   &error);
	g_assert_no_error(error);
	g_signal_connect(server->service, "incoming", G_CALLBACK(msd_stall_incoming_cb), server);
	g_socket_service_start(server->service);
	return server;
}

static void
msd_stall_server_free(MsdStallServer *server)
{
	g_socket_service_stop(server->service);
	g_socket_listener_close(G_SOCKET_LISTENER(server->service));
	g_object_unref(server->service);
	g_ptr_array_unref(server->waiting);
	g_ptr_array_unref(server->held);
	g_free(server);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsdStallServer, msd_stall_server_free)

static GBytes *
msd_stall_get(MsdKubeClient *client, const gchar *path, GError **error)
{
	MsdTestAsync async = {0};
	GBytes *body;

	msd_kube_client_get_async(client, path, NULL, msd_test_async_cb, &async);
	msd_test_wait_for(&async.done);
	body = msd_kube_client_get_finish(client, async.result, error);
	g_object_unref(async.result);
	return body;
}

/* A list page that stops arriving mid-body, or an answer that never starts, is given up after
 * the stall bound with a line that says so, and the requests that follow leave the pooled
 * connections opened before it alone: the same gateway may have forgotten them too. */
static void
test_kube_client_stall(void)
{
	g_autoptr(MsdStallServer) server = msd_stall_server_new();
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MsdKubeClient) client = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GBytes) stalled = NULL;
	g_autoptr(GBytes) after = NULL;
	g_autofree gchar *url = g_strdup_printf("http://127.0.0.1:%u", server->port);
	g_autofree gchar *expected = NULL;
	GBytes *pair[2] = {NULL, NULL};
	guint before;

	g_setenv("MESHSYNC_KUBE_STALL_TIMEOUT", "1", TRUE);
	config = msd_test_kubeconfig_new(url, NULL, NULL, NULL);
	client = msd_kube_client_new(config, &error);
	g_unsetenv("MESHSYNC_KUBE_STALL_TIMEOUT");
	g_assert_no_error(error);

	/* two pooled connections */
	msd_kube_client_get_async(client, "/pair", NULL, get_done_cb, &pair[0]);
	msd_kube_client_get_async(client, "/pair", NULL, get_done_cb, &pair[1]);
	while (pair[0] == NULL || pair[1] == NULL)
		g_main_context_iteration(NULL, TRUE);
	g_bytes_unref(pair[0]);
	g_bytes_unref(pair[1]);
	g_assert_cmpuint(server->accepted, ==, 2);

	stalled = msd_stall_get(client, "/body-stall", &error);
	g_assert_null(stalled);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION);
	expected = g_strdup_printf("GET %s/body-stall: nothing received for 1 s in the middle of "
	                           "the answer; its connection is given up",
	                           url);
	g_assert_cmpstr(error->message, ==, expected);
	g_clear_error(&error);
	g_clear_pointer(&expected, g_free);

	/* the other pooled connection still answers, but is not used */
	before = server->accepted;
	after = msd_stall_get(client, "/api", &error);
	g_assert_no_error(error);
	msd_test_assert_body(after, api_body);
	g_assert_cmpuint(server->accepted, ==, before + 1);

	stalled = msd_stall_get(client, "/headers-stall", &error);
	g_assert_null(stalled);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION);
	expected = g_strdup_printf("GET %s/headers-stall: no answer within 1 s; its connection is "
	                           "given up",
	                           url);
	g_assert_cmpstr(error->message, ==, expected);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
	g_test_add_func("/kube-client/tls/ca-accepted", test_kube_client_ca_accepted);
	g_test_add_func("/kube-client/tls/ca-bundle", test_kube_client_ca_bundle);
	g_test_add_func("/kube-client/tls/wrong-ca", test_kube_client_wrong_ca);
	g_test_add_func("/kube-client/tls/server-name", test_kube_client_tls_server_name);
	g_test_add_func("/kube-client/tls/insecure", test_kube_client_insecure);
	g_test_add_func("/kube-client/tls/system-trust", test_kube_client_system_trust);
	g_test_add_func("/kube-client/auth/token-sent", test_kube_client_token_sent);
	g_test_add_func("/kube-client/auth/client-certificate",
	                test_kube_client_client_certificate);
	g_test_add_func("/kube-client/auth/unauthorized", test_kube_client_unauthorized);
	g_test_add_func("/kube-client/status/forbidden", test_kube_client_forbidden);
	g_test_add_func("/kube-client/status/not-found", test_kube_client_not_found);
	g_test_add_func("/kube-client/status/error-from-status",
	                test_kube_client_error_from_status);
	g_test_add_func("/kube-client/status/error-status", test_kube_client_error_status);
	g_test_add_func("/kube-client/status/health-check",
	                test_kube_client_error_from_health_check);
	g_test_add_func("/kube-client/connection-refused", test_kube_client_connection_refused);
	g_test_add_func("/kube-client/gzip", test_kube_client_gzip);
	g_test_add_func("/kube-client/disable-compression", test_kube_client_disable_compression);
	g_test_add_func("/kube-client/body-limit", test_kube_client_body_limit);
	g_test_add_func("/kube-client/stream", test_kube_client_stream);
	g_test_add_func("/kube-client/cancelled", test_kube_client_cancelled);
	g_test_add_func("/kube-client/one-shot", test_kube_client_one_shot);
	g_test_add_func("/kube-client/stall", test_kube_client_stall);
	return g_test_run();
}
