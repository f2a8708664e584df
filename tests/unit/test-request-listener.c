/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>

#include "meshsync-broker.h"
#include "meshsync-error.h"
#include "meshsync-handler.h"
#include "meshsync-kube-config.h"
#include "broker/msd-request-listener.h"

/* Iterates the loop until the condition holds; the meson timeout catches a hang. */
#define WAIT_FOR(cond)  \
	while (!(cond)) \
	g_main_context_iteration(NULL, TRUE)

/* ------------------------------------------------------------------------------------------
 * Envelope parsing, reply extraction, batch splitting
 */

static void
test_parse_exact_keys(void)
{
	const gchar *text = "{\"ObjectType\":\"request-payload\",\"EventType\":\"ADDED\","
	                    "\"Request\":{\"Entity\":\"informer-store\",\"Payload\":"
	                    "{\"Reply\":\"meshery-server.meshsync.store\"}},\"Object\":null}";
	g_autoptr(GError) error = NULL;
	g_autoptr(MsdRequest) request = msd_request_parse(text, strlen(text), &error);
	g_autofree gchar *reply = NULL;

	g_assert_no_error(error);
	g_assert_cmpstr(request->entity, ==, "informer-store");
	reply = msd_request_dup_reply(request->payload);
	g_assert_cmpstr(reply, ==, "meshery-server.meshsync.store");
}

static void
test_parse_case_insensitive(void)
{
	const gchar *text = "{\"request\":{\"ENTITY\":\"meshsync-meta\",\"payload\":"
	                    "{\"reply\":\"a.b\"}},\"Unknown\":1}";
	g_autoptr(GError) error = NULL;
	g_autoptr(MsdRequest) request = msd_request_parse(text, strlen(text), &error);
	g_autofree gchar *reply = NULL;

	g_assert_no_error(error);
	g_assert_cmpstr(request->entity, ==, "meshsync-meta");
	reply = msd_request_dup_reply(request->payload);
	g_assert_cmpstr(reply, ==, "a.b");
}

static void
test_parse_last_key_wins(void)
{
	const gchar *text = "{\"Request\":{\"Entity\":\"log-stream\",\"entity\":\"active-exec\"}}";
	g_autoptr(GError) error = NULL;
	g_autoptr(MsdRequest) request = msd_request_parse(text, strlen(text), &error);

	g_assert_no_error(error);
	g_assert_cmpstr(request->entity, ==, "active-exec");
	g_assert_null(request->payload);
}

static void
test_parse_rejects(void)
{
	const gchar *const bad[] = {
	        "",
	        "{",
	        "[]",
	        "\"Request\"",
	        "{\"ObjectType\":\"\"}",
	        "{\"Request\":null}",
	        "{\"Request\":\"informer-store\"}",
	        "{\"Request\":{\"Entity\":[1]}}",
	};

	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(MsdRequest) request = msd_request_parse(bad[i], strlen(bad[i]), &error);

		g_assert_null(request);
		g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);
		/* one line, for the log */
		g_assert_null(strchr(error->message, '\n'));
	}
}

static void
test_reply_missing(void)
{
	const gchar *const payloads[] = {"null", "{}", "{\"Reply\":\"\"}", "{\"Reply\":5}",
	                                 "\"x\""};

	for (guint i = 0; i < G_N_ELEMENTS(payloads); i++) {
		g_autoptr(JsonNode) node = json_from_string(payloads[i], NULL);
		g_autofree gchar *reply = msd_request_dup_reply(node);

		g_assert_null(reply);
	}
	g_assert_null(msd_request_dup_reply(NULL));
}

static void
test_split_batches(void)
{
	struct {
		guint n, size;
		const guint *expect;
		guint n_expect;
	} cases[] = {
	        {0, 10, NULL, 0},
	        {1, 10, (const guint[]){1}, 1},
	        {5, 5, (const guint[]){5}, 1},
	        {11, 5, (const guint[]){5, 5, 1}, 3},
	        {10, 5, (const guint[]){5, 5}, 2},
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GArray) batches = msd_request_split_batches(cases[i].n, cases[i].size);

		g_assert_cmpuint(batches->len, ==, cases[i].n_expect);
		for (guint j = 0; j < batches->len; j++)
			g_assert_cmpuint(g_array_index(batches, guint, j), ==, cases[i].expect[j]);
	}
}

/* ------------------------------------------------------------------------------------------
 * Against a real nats-server: replies and the one active-exec ticker
 */

typedef struct {
	GSubprocess *proc;
	gchar *dir;
	guint port;
} NatsServer;

static void
die_with_parent(gpointer data)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

static guint
read_port(const gchar *dir)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const gchar *name;

	while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
		g_autofree gchar *path = g_build_filename(dir, name, NULL);
		g_autofree gchar *text = NULL;
		g_autoptr(JsonNode) root = NULL;
		JsonArray *clients;
		const gchar *colon;

		if (!g_str_has_suffix(name, ".ports") ||
		    !g_file_get_contents(path, &text, NULL, NULL))
			continue;
		/* {"nats":["nats://127.0.0.1:PORT"]}; it may be caught half-written */
		root = json_from_string(text, NULL);
		if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root) ||
		    !json_object_has_member(json_node_get_object(root), "nats"))
			return 0;
		clients = json_object_get_array_member(json_node_get_object(root), "nats");
		colon = strrchr(json_array_get_string_element(clients, 0), ':');
		return (guint)g_ascii_strtoull(colon + 1, NULL, 10);
	}
	return 0;
}

static gboolean
tick_cb(gpointer data)
{
	*(gboolean *)data = TRUE;
	return G_SOURCE_REMOVE;
}

static void
nats_server_start(NatsServer *server)
{
	const gchar *binary = g_getenv("NATS_SERVER");
	g_autoptr(GSubprocessLauncher) launcher = NULL;
	g_autoptr(GError) error = NULL;
	gint64 deadline = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;

	g_assert_nonnull(binary);
	server->dir = g_dir_make_tmp("meshsync-rl-XXXXXX", &error);
	g_assert_no_error(error);
	launcher = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_SILENCE |
	                                     G_SUBPROCESS_FLAGS_STDERR_SILENCE);
	g_subprocess_launcher_set_child_setup(launcher, die_with_parent, NULL, NULL);
	server->proc =
	        g_subprocess_launcher_spawn(launcher, &error, binary, "-a", "127.0.0.1", "-p", "-1",
	                                    "--ports_file_dir", server->dir, NULL);
	g_assert_no_error(error);
	while ((server->port = read_port(server->dir)) == 0) {
		gboolean ticked = FALSE;

		g_assert_cmpint(g_get_monotonic_time(), <, deadline);
		g_timeout_add(10, tick_cb, &ticked);
		WAIT_FOR(ticked);
	}
}

static void
nats_server_clear(NatsServer *server)
{
	g_autoptr(GDir) d = NULL;
	const gchar *name;

	if (server->proc != NULL) {
		g_subprocess_force_exit(server->proc);
		g_subprocess_wait(server->proc, NULL, NULL);
	}
	g_clear_object(&server->proc);
	d = g_dir_open(server->dir, 0, NULL);
	while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
		g_autofree gchar *path = g_build_filename(server->dir, name, NULL);

		g_unlink(path);
	}
	g_rmdir(server->dir);
	g_clear_pointer(&server->dir, g_free);
}

typedef struct {
	NatsServer server;
	MeshSyncBroker *broker;   /* the listener's connection */
	MeshSyncBroker *client;   /* the requester */
	MeshSyncHandler *handler; /* never started: not ready */
	MsdRequestListener *listener;
	GPtrArray *received; /* "subject payload" */
} Fixture;

static void
connect_cb(GObject *source, GAsyncResult *res, gpointer data)
{
	g_autoptr(GError) error = NULL;

	g_assert_true(meshsync_broker_connect_finish(MESHSYNC_BROKER(source), res, &error));
	g_assert_no_error(error);
	*(gboolean *)data = TRUE;
}

static MeshSyncBroker *
connected_broker(guint port)
{
	g_autofree gchar *url = g_strdup_printf("nats://127.0.0.1:%u", port);
	g_autoptr(GError) error = NULL;
	MeshSyncBroker *broker = meshsync_broker_new(url, &error);
	gboolean done = FALSE;

	g_assert_no_error(error);
	meshsync_broker_connect_async(broker, NULL, connect_cb, &done);
	WAIT_FOR(done);
	return broker;
}

static void
received_cb(MeshSyncBroker *broker,
            const gchar *subject,
            const gchar *reply,
            GBytes *payload,
            gpointer user_data)
{
	Fixture *fixture = user_data;
	gsize len = 0;
	const gchar *data = g_bytes_get_data(payload, &len);

	g_ptr_array_add(fixture->received, g_strdup_printf("%s %.*s", subject, (gint)len, data));
}

static void
flush_cb(GObject *source, GAsyncResult *res, gpointer data)
{
	g_autoptr(GError) error = NULL;

	g_assert_true(meshsync_broker_flush_finish(MESHSYNC_BROKER(source), res, &error));
	*(gboolean *)data = TRUE;
}

/* A flush round trip on a connection: the server has processed what it sent before. */
static void
flush(MeshSyncBroker *broker)
{
	gboolean done = FALSE;

	meshsync_broker_flush_async(broker, 5000, NULL, flush_cb, &done);
	WAIT_FOR(done);
}

static void
fixture_setup(Fixture *fixture, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *kubeconfig =
	        g_build_filename(g_getenv("MESHSYNC_TEST_DATA"), "kubeconfig", "token.yaml", NULL);
	g_autoptr(MeshSyncKubeConfig) config = NULL;

	nats_server_start(&fixture->server);
	fixture->broker = connected_broker(fixture->server.port);
	fixture->client = connected_broker(fixture->server.port);
	fixture->received = g_ptr_array_new_with_free_func(g_free);
	config = meshsync_kube_config_load(kubeconfig, NULL, &error);
	g_assert_no_error(error);
	fixture->handler = meshsync_handler_new(config, NULL);
	fixture->listener =
	        msd_request_listener_new(MESHSYNC_BUS(fixture->broker), fixture->handler, "v1.2.3");
	g_assert_true(msd_request_listener_start(fixture->listener, &error));
	g_assert_no_error(error);
	flush(fixture->broker);
	for (guint i = 0; i < 3; i++) {
		const gchar *subjects[] = {MSD_SUBJECT_META, MSD_SUBJECT_ACTIVE_EXEC,
		                           "store.reply"};

		g_assert_cmpuint(meshsync_broker_subscribe(fixture->client, subjects[i], NULL,
		                                           received_cb, fixture, NULL, &error),
		                 >, 0);
	}
	flush(fixture->client);
}

static void
fixture_teardown(Fixture *fixture, gconstpointer data)
{
	msd_request_listener_stop(fixture->listener);
	g_clear_object(&fixture->listener);
	g_clear_object(&fixture->handler);
	meshsync_broker_close(fixture->client);
	meshsync_broker_close(fixture->broker);
	g_clear_object(&fixture->client);
	g_clear_object(&fixture->broker);
	g_clear_pointer(&fixture->received, g_ptr_array_unref);
	nats_server_clear(&fixture->server);
}

static void
send_request(Fixture *fixture, const gchar *json)
{
	g_autoptr(GBytes) payload = g_bytes_new(json, strlen(json));
	g_autoptr(GError) error = NULL;

	g_assert_true(
	        meshsync_broker_publish(fixture->client, MSD_SUBJECT_REQUEST, payload, &error));
	g_assert_no_error(error);
}

static guint
count_prefix(GPtrArray *received, const gchar *prefix)
{
	guint n = 0;

	for (guint i = 0; i < received->len; i++)
		n += g_str_has_prefix(g_ptr_array_index(received, i), prefix);
	return n;
}

static void
test_meta_reply(Fixture *fixture, gconstpointer data)
{
	send_request(fixture, "{\"Request\":{\"Entity\":\"meshsync-meta\"}}");
	WAIT_FOR(fixture->received->len == 1);
	g_assert_cmpstr(g_ptr_array_index(fixture->received, 0), ==,
	                "meshsync-meta {\"ObjectType\":\"\",\"EventType\":\"\",\"Request\":null,"
	                "\"Object\":\"v1.2.3\"}");
}

static void
test_one_active_exec_ticker(Fixture *fixture, gconstpointer data)
{
	msd_request_listener_set_active_exec_period(fixture->listener, 20);
	for (guint i = 0; i < 4; i++)
		send_request(fixture, "{\"Request\":{\"Entity\":\"active-exec\"}}");
	send_request(fixture, "{\"Request\":{\"Entity\":\"meshsync-meta\"}}");
	/* Requests are handled in order: the meta reply comes after all four. */
	WAIT_FOR(count_prefix(fixture->received, "meshsync-meta ") == 1);
	g_assert_true(msd_request_listener_get_active_exec_running(fixture->listener));
	/* The ticker keeps publishing the (empty) list. */
	WAIT_FOR(count_prefix(fixture->received, "active_sessions.exec ") >= 3);
	/* Subscriptions deliver independently: no order between the two subjects. */
	for (guint i = 0; i < fixture->received->len; i++) {
		const gchar *msg = g_ptr_array_index(fixture->received, i);

		if (g_str_has_prefix(msg, "active_sessions.exec "))
			g_assert_cmpstr(msg, ==,
			                "active_sessions.exec {\"ObjectType\":\"active-exec\","
			                "\"EventType\":\"\",\"Request\":null,\"Object\":[]}");
	}
	msd_request_listener_stop(fixture->listener);
	g_assert_false(msd_request_listener_get_active_exec_running(fixture->listener));
}

static void
store_cb(GObject *source, GAsyncResult *res, gpointer data)
{
	gssize *n = data;

	*n = msd_request_listener_reply_store_finish(MSD_REQUEST_LISTENER(source), res, NULL);
}

static void
test_store_not_ready(Fixture *fixture, gconstpointer data)
{
	gssize n = -2;

	msd_request_listener_reply_store_async(fixture->listener, "store.reply", NULL, store_cb,
	                                       &n);
	WAIT_FOR(n != -2);
	g_assert_cmpint(n, ==, 0);
	/* Nothing reached the reply subject: a meta round trip proves it. */
	send_request(fixture, "{\"Request\":{\"Entity\":\"meshsync-meta\"}}");
	WAIT_FOR(count_prefix(fixture->received, "meshsync-meta ") == 1);
	g_assert_cmpuint(count_prefix(fixture->received, "store.reply "), ==, 0);
}

static void
test_malformed_then_answers(Fixture *fixture, gconstpointer data)
{
	g_test_expect_message("MeshSyncBroker", G_LOG_LEVEL_MESSAGE, "*request is not JSON*");
	send_request(fixture, "{oops");
	g_test_expect_message("MeshSyncBroker", G_LOG_LEVEL_MESSAGE, "*has no Request*");
	send_request(fixture, "{\"Request\":null}");
	g_test_expect_message("MeshSyncBroker", G_LOG_LEVEL_MESSAGE, "*without a Reply subject*");
	send_request(fixture, "{\"Request\":{\"Entity\":\"informer-store\",\"Payload\":null}}");
	send_request(fixture, "{\"Request\":{\"Entity\":\"no-such-thing\"}}");
	send_request(fixture, "{\"request\":{\"entity\":\"meshsync-meta\"}}");
	WAIT_FOR(count_prefix(fixture->received, "meshsync-meta ") == 1);
	g_test_assert_expected_messages();
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);

	g_test_add_func("/request-listener/parse/exact-keys", test_parse_exact_keys);
	g_test_add_func("/request-listener/parse/case-insensitive", test_parse_case_insensitive);
	g_test_add_func("/request-listener/parse/last-key-wins", test_parse_last_key_wins);
	g_test_add_func("/request-listener/parse/rejects", test_parse_rejects);
	g_test_add_func("/request-listener/reply/missing", test_reply_missing);
	g_test_add_func("/request-listener/batches", test_split_batches);
	g_test_add("/request-listener/nats/meta", Fixture, NULL, fixture_setup, test_meta_reply,
	           fixture_teardown);
	g_test_add("/request-listener/nats/active-exec", Fixture, NULL, fixture_setup,
	           test_one_active_exec_ticker, fixture_teardown);
	g_test_add("/request-listener/nats/store-not-ready", Fixture, NULL, fixture_setup,
	           test_store_not_ready, fixture_teardown);
	g_test_add("/request-listener/nats/malformed", Fixture, NULL, fixture_setup,
	           test_malformed_then_answers, fixture_teardown);
	return g_test_run();
}
