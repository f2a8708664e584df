/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <malloc.h>
#include <signal.h>
#include <sys/prctl.h>
#include <string.h>
#include <unistd.h>

#include "meshsync-broker-writer.h"
#include "meshsync-broker.h"
#include "meshsync-error.h"
#include "meshsync-resource.h"
#include "meshsync-broker-private.h"
#include "health/msd-engine-metrics.h"
#include "health/msd-metrics.h"

/* Iterates the loop until the condition holds; the meson timeout catches a hang. */
#define WAIT_FOR(cond)  \
	while (!(cond)) \
	g_main_context_iteration(NULL, TRUE)

/* ------------------------------------------------------------------------------------------
 * A nats-server per test, on a port of its own choosing, read back from its ports file.
 */

typedef struct {
	GSubprocess *proc;
	gchar *dir;
	gchar *conf;
	guint port;
} NatsServer;

static gboolean
tick_cb(gpointer data)
{
	*(gboolean *)data = TRUE;
	return G_SOURCE_REMOVE;
}

static guint
read_ports_file(const gchar *dir)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const gchar *name;

	while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
		g_autofree gchar *path = NULL;
		g_autofree gchar *text = NULL;
		g_autoptr(JsonParser) parser = json_parser_new();
		JsonNode *node;
		JsonObject *root;
		JsonArray *clients;
		const gchar *client;
		const gchar *colon;

		if (!g_str_has_suffix(name, ".ports"))
			continue;
		path = g_build_filename(dir, name, NULL);
		/* The file may be caught half-written: read again next round. */
		if (!g_file_get_contents(path, &text, NULL, NULL) ||
		    !json_parser_load_from_data(parser, text, -1, NULL) ||
		    json_parser_get_root(parser) == NULL ||
		    !JSON_NODE_HOLDS_OBJECT(json_parser_get_root(parser)))
			return 0;
		/* an empty file (created, not yet written) parses to no root at all */
		node = json_parser_get_root(parser);
		if (node == NULL || !JSON_NODE_HOLDS_OBJECT(node))
			return 0;
		root = json_node_get_object(node);
		/* {"nats":["nats://127.0.0.1:PORT"]} */
		if (!json_object_has_member(root, "nats"))
			return 0;
		clients = json_object_get_array_member(root, "nats");
		if (clients == NULL || json_array_get_length(clients) == 0)
			return 0;
		client = json_array_get_string_element(clients, 0);
		colon = strrchr(client, ':');
		g_assert_nonnull(colon);
		return (guint)g_ascii_strtoull(colon + 1, NULL, 10);
	}
	return 0;
}

static void
die_with_parent(gpointer data)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

/* port 0: any free port. */
static void
nats_server_start(NatsServer *server, guint port, const gchar *const *extra)
{
	const gchar *binary = g_getenv("NATS_SERVER");
	g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GError) error = NULL;
	g_autoptr(GSubprocessLauncher) launcher = NULL;
	gint64 deadline = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;

	g_assert_nonnull(binary);
	g_clear_pointer(&server->dir, g_free);
	server->dir = g_dir_make_tmp("meshsync-nats-XXXXXX", &error);
	g_assert_no_error(error);
	g_ptr_array_add(argv, g_strdup(binary));
	if (server->conf != NULL) {
		g_ptr_array_add(argv, g_strdup("-c"));
		g_ptr_array_add(argv, g_strdup(server->conf));
	}
	g_ptr_array_add(argv, g_strdup("-a"));
	g_ptr_array_add(argv, g_strdup("127.0.0.1"));
	g_ptr_array_add(argv, g_strdup("-p"));
	g_ptr_array_add(argv, port != 0 ? g_strdup_printf("%u", port) : g_strdup("-1"));
	g_ptr_array_add(argv, g_strdup("--ports_file_dir"));
	g_ptr_array_add(argv, g_strdup(server->dir));
	for (guint i = 0; extra != NULL && extra[i] != NULL; i++)
		g_ptr_array_add(argv, g_strdup(extra[i]));
	g_ptr_array_add(argv, NULL);

	launcher = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_SILENCE |
	                                     G_SUBPROCESS_FLAGS_STDERR_SILENCE);
	/* A failed assertion aborts the test: the server must not outlive it. */
	g_subprocess_launcher_set_child_setup(launcher, die_with_parent, NULL, NULL);
	server->proc =
	        g_subprocess_launcher_spawnv(launcher, (const gchar *const *)argv->pdata, &error);
	g_assert_no_error(error);

	/* Poll for the ports file, which the server writes once it listens. */
	server->port = 0;
	while ((server->port = read_ports_file(server->dir)) == 0) {
		gboolean ticked = FALSE;
		g_autoptr(GSource) tick = g_timeout_source_new(10);

		g_assert_cmpint(g_get_monotonic_time(), <, deadline);
		g_source_set_callback(tick, tick_cb, &ticked, NULL);
		g_source_attach(tick, NULL);
		WAIT_FOR(ticked);
	}
	if (port != 0)
		g_assert_cmpuint(server->port, ==, port);
}

static void
nats_server_kill(NatsServer *server)
{
	if (server->proc == NULL)
		return;
	g_subprocess_send_signal(server->proc, SIGKILL);
	g_assert_true(g_subprocess_wait(server->proc, NULL, NULL));
	g_clear_object(&server->proc);
}

static void
nats_server_clear(NatsServer *server)
{
	nats_server_kill(server);
	if (server->dir != NULL) {
		g_autoptr(GDir) d = g_dir_open(server->dir, 0, NULL);
		const gchar *name;

		while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
			g_autofree gchar *path = g_build_filename(server->dir, name, NULL);

			g_unlink(path);
		}
		g_rmdir(server->dir);
	}
	if (server->conf != NULL)
		g_unlink(server->conf);
	g_clear_pointer(&server->dir, g_free);
	g_clear_pointer(&server->conf, g_free);
}

static gchar *
nats_server_url(NatsServer *server)
{
	return g_strdup_printf("nats://127.0.0.1:%u", server->port);
}

/* ------------------------------------------------------------------------------------------ */

typedef struct {
	gboolean done;
	gboolean ok;
	GError *error;
} AsyncResult;

static void
connect_cb(GObject *source, GAsyncResult *res, gpointer data)
{
	AsyncResult *r = data;

	r->ok = meshsync_broker_connect_finish(MESHSYNC_BROKER(source), res, &r->error);
	r->done = TRUE;
}

static void
flush_cb(GObject *source, GAsyncResult *res, gpointer data)
{
	AsyncResult *r = data;

	r->ok = meshsync_broker_flush_finish(MESHSYNC_BROKER(source), res, &r->error);
	r->done = TRUE;
}

static void
close_cb(GObject *source, GAsyncResult *res, gpointer data)
{
	AsyncResult *r = data;

	r->ok = meshsync_broker_close_finish(MESHSYNC_BROKER(source), res, &r->error);
	r->done = TRUE;
}

static gboolean
broker_connect(MeshSyncBroker *broker, GError **error)
{
	AsyncResult r = {0};

	meshsync_broker_connect_async(broker, NULL, connect_cb, &r);
	WAIT_FOR(r.done);
	if (r.error != NULL)
		g_propagate_error(error, r.error);
	return r.ok;
}

static MeshSyncBroker *
broker_new_connected(const gchar *url)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncBroker) broker = meshsync_broker_new(url, &error);

	g_assert_no_error(error);
	g_assert_true(broker_connect(broker, &error));
	g_assert_no_error(error);
	g_assert_cmpint(meshsync_broker_get_state(broker), ==, MESHSYNC_BROKER_STATE_CONNECTED);
	g_assert_true(meshsync_broker_get_writable(broker));
	return g_steal_pointer(&broker);
}

/* A broker that pings every @ping_ms, so that a server stopped for longer than the default
 * three seconds does not make it reconnect. */
static MeshSyncBroker *
broker_new_pinging(const gchar *url, guint ping_ms)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncBroker) broker = meshsync_broker_new(url, &error);

	g_assert_no_error(error);
	meshsync_broker_set_ping(broker, ping_ms, 2);
	g_assert_true(broker_connect(broker, &error));
	g_assert_no_error(error);
	return g_steal_pointer(&broker);
}

static void
broker_flush(MeshSyncBroker *broker)
{
	AsyncResult r = {0};

	meshsync_broker_flush_async(broker, 10000, NULL, flush_cb, &r);
	WAIT_FOR(r.done);
	g_assert_no_error(r.error);
	g_assert_true(r.ok);
}

static void
publish_string(MeshSyncBroker *broker, const gchar *subject, const gchar *text)
{
	g_autoptr(GBytes) payload = g_bytes_new(text, strlen(text));
	g_autoptr(GError) error = NULL;

	g_assert_true(meshsync_broker_publish(broker, subject, payload, &error));
	g_assert_no_error(error);
}

typedef struct {
	GPtrArray *payloads; /* (element-type utf8) */
	GPtrArray *subjects;
	GThread *thread;
	MeshSyncBroker *broker;
} Received;

static Received *
received_new(void)
{
	Received *r = g_new0(Received, 1);

	r->payloads = g_ptr_array_new_with_free_func(g_free);
	r->subjects = g_ptr_array_new_with_free_func(g_free);
	r->thread = g_thread_self();
	return r;
}

static void
received_free(gpointer data)
{
	Received *r = data;

	g_ptr_array_unref(r->payloads);
	g_ptr_array_unref(r->subjects);
	g_free(r);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Received, received_free)

static void
received_cb(MeshSyncBroker *broker,
            const gchar *subject,
            const gchar *reply,
            GBytes *payload,
            gpointer data)
{
	Received *r = data;
	gsize len;
	const gchar *bytes = g_bytes_get_data(payload, &len);

	/* Delivered on the thread that runs the broker's context, never on a nats.c thread. */
	g_assert_true(g_thread_self() == r->thread);
	g_assert_true(g_main_context_is_owner(g_main_context_default()));
	g_ptr_array_add(r->payloads, g_strndup(bytes, len));
	g_ptr_array_add(r->subjects, g_strdup(subject));
}

static guint
subscribe(MeshSyncBroker *broker, const gchar *subject, const gchar *queue, Received *r)
{
	g_autoptr(GError) error = NULL;
	guint id = meshsync_broker_subscribe(broker, subject, queue, received_cb, r, NULL, &error);

	g_assert_no_error(error);
	g_assert_cmpuint(id, >, 0);
	return id;
}

static MeshSyncResource *
make_pod(const gchar *name, const gchar *uid, const gchar *rv, const gchar *extra)
{
	g_autofree gchar *json = NULL;
	g_autoptr(GError) error = NULL;
	MeshSyncResource *resource;

	json = g_strdup_printf("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
	                       "{\"name\":\"%s\",\"namespace\":\"shop\"%s%s%s,"
	                       "\"resourceVersion\":\"%s\",\"annotations\":{\"x\":\"%s\"}},"
	                       "\"spec\":{\"nodeName\":\"n1\"}}",
	                       name, uid != NULL ? ",\"uid\":\"" : "", uid != NULL ? uid : "",
	                       uid != NULL ? "\"" : "", rv, extra != NULL ? extra : "");
	resource = meshsync_resource_new_from_json(json, -1, MESHSYNC_EVENT_TYPE_ADDED, "cluster-1",
	                                           &error);
	g_assert_no_error(error);
	return resource;
}

/* ------------------------------------------------------------------------------------------ */

static void
test_publish_subscribe(void)
{
	NatsServer server = {0};
	g_autofree gchar *url = NULL;
	g_autoptr(MeshSyncBroker) broker = NULL;
	g_autoptr(MeshSyncBroker) other = NULL;
	g_autoptr(Received) same = received_new();
	g_autoptr(Received) second = received_new();
	const guint n = 2000;

	nats_server_start(&server, 0, NULL);
	url = nats_server_url(&server);
	broker = broker_new_connected(url);
	other = broker_new_connected(url);
	g_assert_cmpint(meshsync_broker_get_max_payload(broker), ==, 1048576);
	subscribe(broker, "test.pubsub.*", NULL, same);
	subscribe(other, "test.pubsub.>", NULL, second);
	/* The SUBs are known to the server once their PINGs are answered. */
	broker_flush(broker);
	broker_flush(other);

	for (guint i = 0; i < n; i++) {
		g_autofree gchar *text = g_strdup_printf("message %u", i);

		publish_string(broker, "test.pubsub.a", text);
	}
	WAIT_FOR(same->payloads->len == n && second->payloads->len == n);
	for (guint i = 0; i < n; i++) {
		g_autofree gchar *text = g_strdup_printf("message %u", i);

		g_assert_cmpstr(g_ptr_array_index(same->payloads, i), ==, text);
		g_assert_cmpstr(g_ptr_array_index(second->payloads, i), ==, text);
		g_assert_cmpstr(g_ptr_array_index(same->subjects, i), ==, "test.pubsub.a");
	}
	broker_flush(broker);
	g_assert_cmpuint(meshsync_broker_get_buffered_bytes(broker), ==, 0);
	meshsync_broker_close(broker);
	meshsync_broker_close(other);
	g_assert_cmpint(meshsync_broker_get_state(broker), ==, MESHSYNC_BROKER_STATE_CLOSED);
	nats_server_clear(&server);
}

static void
test_bad_subjects(void)
{
	NatsServer server = {0};
	g_autofree gchar *url = NULL;
	g_autoptr(MeshSyncBroker) broker = NULL;
	const gchar *bad[] = {"", "a b", "a..b", ".a", "a.", "a\tb", "a\nb"};

	nats_server_start(&server, 0, NULL);
	url = nats_server_url(&server);
	broker = broker_new_connected(url);
	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(GBytes) payload = g_bytes_new_static("x", 1);
		g_autoptr(GError) error = NULL;

		g_assert_false(meshsync_broker_publish(broker, bad[i], payload, &error));
		g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);
	}
	{
		g_autoptr(GError) error = NULL;
		guint id = meshsync_broker_subscribe(broker, "bad subject", NULL, received_cb, NULL,
		                                     NULL, &error);

		g_assert_cmpuint(id, ==, 0);
		g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);
	}
	{
		/* a writer checks its subject once, and every write says so */
		g_autoptr(MeshSyncBrokerWriter) writer = meshsync_broker_writer_new(broker, "a b");
		g_autoptr(MeshSyncResource) pod = make_pod("p", "uid-p", "1", NULL);

		for (guint i = 0; i < 2; i++) {
			g_autoptr(GError) error = NULL;

			g_assert_false(meshsync_writer_write(MESHSYNC_WRITER(writer), pod,
			                                     MESHSYNC_EVENT_TYPE_ADDED, &error));
			g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);
			g_assert_nonnull(strstr(error->message, "invalid subject 'a b'"));
		}
		g_assert_cmpuint(meshsync_broker_writer_get_n_errors(writer), ==, 2);
		g_assert_cmpuint(meshsync_broker_writer_get_n_published(writer), ==, 0);
	}
	meshsync_broker_close(broker);
	nats_server_clear(&server);
}

static void
test_queue_groups(void)
{
	NatsServer server = {0};
	g_autofree gchar *url = NULL;
	g_autoptr(MeshSyncBroker) publisher = NULL;
	g_autoptr(MeshSyncBroker) w1 = NULL;
	g_autoptr(MeshSyncBroker) w2 = NULL;
	g_autoptr(Received) r1 = received_new();
	g_autoptr(Received) r2 = received_new();
	g_autoptr(Received) all = received_new();
	const guint n = 400;

	nats_server_start(&server, 0, NULL);
	url = nats_server_url(&server);
	publisher = broker_new_connected(url);
	w1 = broker_new_connected(url);
	w2 = broker_new_connected(url);
	subscribe(w1, "test.queue", "workers", r1);
	subscribe(w2, "test.queue", "workers", r2);
	subscribe(publisher, "test.queue", NULL, all);
	broker_flush(w1);
	broker_flush(w2);
	broker_flush(publisher);

	for (guint i = 0; i < n; i++) {
		g_autofree gchar *text = g_strdup_printf("%u", i);

		publish_string(publisher, "test.queue", text);
	}
	WAIT_FOR(all->payloads->len == n && r1->payloads->len + r2->payloads->len == n);
	/* Each message went to one member of the group; both members got some. */
	g_assert_cmpuint(r1->payloads->len, >, 0);
	g_assert_cmpuint(r2->payloads->len, >, 0);
	/* Nothing more is on its way: a round trip through each member shows it. */
	broker_flush(publisher);
	broker_flush(w1);
	broker_flush(w2);
	g_assert_cmpuint(r1->payloads->len + r2->payloads->len, ==, n);
	nats_server_clear(&server);
}

static void
test_envelope_exact(void)
{
	NatsServer server = {0};
	g_autofree gchar *url = NULL;
	g_autoptr(MeshSyncBroker) broker = NULL;
	g_autoptr(MeshSyncBrokerWriter) writer = NULL;
	g_autoptr(MeshSyncResource) pod = make_pod("web-1", "uid-1", "7", "a");
	g_autoptr(Received) r = received_new();
	g_autoptr(GError) error = NULL;
	g_autofree gchar *object = NULL;
	g_autofree gchar *expected = NULL;
	g_autofree gchar *expected_deleted = NULL;

	nats_server_start(&server, 0, NULL);
	url = nats_server_url(&server);
	broker = broker_new_connected(url);
	writer = meshsync_broker_writer_new(broker, NULL);
	subscribe(broker, MESHSYNC_SUBJECT_CORE, NULL, r);
	broker_flush(broker);

	g_assert_true(meshsync_writer_is_writable(MESHSYNC_WRITER(writer)));
	g_assert_true(meshsync_writer_write(MESHSYNC_WRITER(writer), pod, MESHSYNC_EVENT_TYPE_ADDED,
	                                    &error));
	g_assert_no_error(error);
	g_assert_true(meshsync_writer_write(MESHSYNC_WRITER(writer), pod,
	                                    MESHSYNC_EVENT_TYPE_DELETED, &error));
	g_assert_true(meshsync_writer_flush(MESHSYNC_WRITER(writer), &error));
	g_assert_no_error(error);
	WAIT_FOR(r->payloads->len == 2);

	object = meshsync_resource_to_json(pod);
	g_assert_true(g_str_has_prefix(object, "{"));
	expected = g_strconcat("{\"ObjectType\":\"meshsync-data\",\"EventType\":\"ADDED\","
	                       "\"Request\":null,\"Object\":",
	                       object, "}", NULL);
	expected_deleted =
	        g_strconcat("{\"ObjectType\":\"meshsync-data\",\"EventType\":\"DELETED\","
	                    "\"Request\":null,\"Object\":",
	                    object, "}", NULL);
	g_assert_cmpstr(g_ptr_array_index(r->payloads, 0), ==, expected);
	g_assert_cmpstr(g_ptr_array_index(r->payloads, 1), ==, expected_deleted);
	g_assert_cmpstr(g_ptr_array_index(r->subjects, 0), ==, "meshery.meshsync.core");
	g_assert_cmpuint(meshsync_broker_writer_get_n_published(writer), ==, 2);

	g_assert_true(meshsync_writer_close(MESHSYNC_WRITER(writer), &error));
	g_assert_false(meshsync_writer_is_writable(MESHSYNC_WRITER(writer)));
	g_assert_false(meshsync_writer_write(MESHSYNC_WRITER(writer), pod,
	                                     MESHSYNC_EVENT_TYPE_ADDED, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE);
	nats_server_clear(&server);
}

static void
state_changed_cb(GObject *object, GParamSpec *pspec, gpointer data)
{
	GArray *states = data;
	MeshSyncBrokerState state = meshsync_broker_get_state(MESHSYNC_BROKER(object));

	g_array_append_val(states, state);
}

static void
test_outage_replays_buffer(void)
{
	NatsServer server = {0};
	g_autofree gchar *url = NULL;
	g_autoptr(MeshSyncBroker) broker = NULL;
	g_autoptr(Received) r = received_new();
	g_autoptr(GArray) states = g_array_new(FALSE, FALSE, sizeof(MeshSyncBrokerState));
	guint port;
	const guint n = 300;

	nats_server_start(&server, 0, NULL);
	port = server.port;
	url = nats_server_url(&server);
	broker = broker_new_connected(url);
	g_signal_connect(broker, "notify::state", G_CALLBACK(state_changed_cb), states);
	subscribe(broker, "test.outage", NULL, r);
	broker_flush(broker);
	publish_string(broker, "test.outage", "before");
	WAIT_FOR(r->payloads->len == 1);

	nats_server_kill(&server);
	WAIT_FOR(meshsync_broker_get_state(broker) == MESHSYNC_BROKER_STATE_RECONNECTING);
	for (guint i = 0; i < n; i++) {
		g_autofree gchar *text = g_strdup_printf("during %u", i);

		publish_string(broker, "test.outage", text);
	}
	g_assert_true(meshsync_broker_get_writable(broker));
	g_assert_cmpuint(meshsync_broker_get_buffered_bytes(broker), >, 0);

	nats_server_start(&server, port, NULL);
	WAIT_FOR(meshsync_broker_get_state(broker) == MESHSYNC_BROKER_STATE_CONNECTED);
	WAIT_FOR(r->payloads->len == n + 1);
	for (guint i = 0; i < n; i++) {
		g_autofree gchar *text = g_strdup_printf("during %u", i);

		g_assert_cmpstr(g_ptr_array_index(r->payloads, i + 1), ==, text);
	}
	g_assert_cmpuint(meshsync_broker_get_reconnects(broker), ==, 1);
	g_assert_cmpuint(states->len, ==, 2);
	g_assert_cmpint(g_array_index(states, MeshSyncBrokerState, 0), ==,
	                MESHSYNC_BROKER_STATE_RECONNECTING);
	g_assert_cmpint(g_array_index(states, MeshSyncBrokerState, 1), ==,
	                MESHSYNC_BROKER_STATE_CONNECTED);
	meshsync_broker_close(broker);
	nats_server_clear(&server);
}

static void
count_notify_cb(GObject *object, GParamSpec *pspec, gpointer data)
{
	(*(guint *)data)++;
}

static void
count_writable_cb(MeshSyncWriter *writer, gpointer data)
{
	(*(guint *)data)++;
}

static void
test_buffer_full(void)
{
	NatsServer server = {0};
	g_autofree gchar *url = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncBroker) broker = NULL;
	g_autoptr(MeshSyncBrokerWriter) writer = NULL;
	g_autoptr(Received) r = received_new();
	g_autofree gchar *big = g_strnfill(1000, 'x');
	g_autoptr(GBytes) payload = g_bytes_new(big, 1000);
	guint writable_changes = 0;
	guint writer_changes = 0;
	guint accepted = 0;
	guint port;

	nats_server_start(&server, 0, NULL);
	port = server.port;
	url = nats_server_url(&server);
	broker = meshsync_broker_new(url, &error);
	g_assert_no_error(error);
	meshsync_broker_set_reconnect_buffer_size(broker, 16 * 1024);
	g_assert_true(broker_connect(broker, &error));
	writer = meshsync_broker_writer_new(broker, "test.full");
	g_signal_connect(broker, "notify::writable", G_CALLBACK(count_notify_cb),
	                 &writable_changes);
	g_signal_connect(writer, "writable-changed", G_CALLBACK(count_writable_cb),
	                 &writer_changes);
	subscribe(broker, "test.full", NULL, r);
	broker_flush(broker);

	nats_server_kill(&server);
	WAIT_FOR(meshsync_broker_get_state(broker) == MESHSYNC_BROKER_STATE_RECONNECTING);
	while (meshsync_broker_publish(broker, "test.full", payload, &error))
		accepted++;
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION);
	g_assert_nonnull(strstr(error->message, "test.full"));
	g_assert_nonnull(strstr(error->message, url));
	g_clear_error(&error);
	/* 16 KB of ~1 KB messages; the library checks before appending. */
	g_assert_cmpuint(accepted, >=, 10);
	g_assert_cmpuint(accepted, <=, 17);
	g_assert_false(meshsync_broker_get_writable(broker));
	g_assert_false(meshsync_writer_is_writable(MESHSYNC_WRITER(writer)));
	g_assert_cmpuint(writable_changes, ==, 1);
	g_assert_cmpuint(writer_changes, ==, 1);

	nats_server_start(&server, port, NULL);
	WAIT_FOR(meshsync_broker_get_writable(broker));
	g_assert_cmpuint(writable_changes, ==, 2);
	g_assert_cmpuint(writer_changes, ==, 2);
	g_assert_true(meshsync_writer_is_writable(MESHSYNC_WRITER(writer)));
	/* Everything accepted during the outage arrives. */
	WAIT_FOR(r->payloads->len == accepted);
	meshsync_broker_close(broker);
	nats_server_clear(&server);
}

static void
test_oversize(void)
{
	NatsServer server = {0};
	g_autofree gchar *url = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncBroker) broker = NULL;
	g_autoptr(MeshSyncBrokerWriter) writer = NULL;
	g_autoptr(Received) r = received_new();
	g_autofree gchar *huge = g_strnfill(2000, 'y');
	g_autofree gchar *annotation = g_strnfill(1500, 'z');
	g_autoptr(GBytes) payload = g_bytes_new(huge, 2000);
	g_autoptr(MeshSyncResource) big_pod = make_pod("big", "uid-big", "1", annotation);
	g_autoptr(MeshSyncResource) small_pod = make_pod("small", "uid-small", "1", NULL);
	int fd;

	fd = g_file_open_tmp("meshsync-nats-XXXXXX.conf", &server.conf, &error);
	g_assert_no_error(error);
	g_assert_cmpint(write(fd, "max_payload: 1024\n", 18), ==, 18);
	close(fd);
	nats_server_start(&server, 0, NULL);
	url = nats_server_url(&server);
	broker = broker_new_connected(url);
	g_assert_cmpint(meshsync_broker_get_max_payload(broker), ==, 1024);
	subscribe(broker, "test.>", NULL, r);
	subscribe(broker, MESHSYNC_SUBJECT_CORE, NULL, r);
	broker_flush(broker);

	g_assert_false(meshsync_broker_publish(broker, "test.big", payload, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);
	g_assert_nonnull(strstr(error->message, "test.big"));
	g_assert_nonnull(strstr(error->message, "2000"));
	g_assert_nonnull(strstr(error->message, "1024"));
	g_clear_error(&error);

	writer = meshsync_broker_writer_new(broker, NULL);
	g_assert_false(meshsync_writer_write(MESHSYNC_WRITER(writer), big_pod,
	                                     MESHSYNC_EVENT_TYPE_ADDED, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);
	g_assert_nonnull(strstr(error->message, "Pod shop/big"));
	g_clear_error(&error);
	g_assert_cmpuint(meshsync_broker_writer_get_n_oversize(writer), ==, 1);
	g_assert_true(meshsync_writer_is_writable(MESHSYNC_WRITER(writer)));

	/* The connection is still good. */
	publish_string(broker, "test.small", "fits");
	g_assert_true(meshsync_writer_write(MESHSYNC_WRITER(writer), small_pod,
	                                    MESHSYNC_EVENT_TYPE_ADDED, &error));
	g_assert_no_error(error);
	WAIT_FOR(r->payloads->len == 2);
	/* Two subscriptions: no order between them. */
	g_assert_true(
	        g_ptr_array_find_with_equal_func(r->subjects, "test.small", g_str_equal, NULL));
	g_assert_true(g_ptr_array_find_with_equal_func(r->subjects, MESHSYNC_SUBJECT_CORE,
	                                               g_str_equal, NULL));
	g_assert_cmpuint(meshsync_broker_writer_get_n_published(writer), ==, 1);
	meshsync_broker_close(broker);
	nats_server_clear(&server);
}

static void
assert_unauthorized(const gchar *url, const gchar *token)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncBroker) broker = meshsync_broker_new(url, &error);

	g_assert_no_error(error);
	if (token != NULL)
		meshsync_broker_set_token(broker, token);
	g_assert_false(broker_connect(broker, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_UNAUTHORIZED);
	g_assert_nonnull(strstr(error->message, meshsync_broker_get_url(broker)));
	g_assert_nonnull(strstr(error->message, "Authorization Violation"));
	g_assert_cmpint(meshsync_broker_get_state(broker), ==, MESHSYNC_BROKER_STATE_DISCONNECTED);
}

static void
test_auth_token(void)
{
	NatsServer server = {0};
	const gchar *args[] = {"--auth", "s3cr3t-token", NULL};
	g_autofree gchar *plain = NULL;
	g_autofree gchar *in_url = NULL;
	g_autofree gchar *wrong = NULL;
	g_autoptr(MeshSyncBroker) a = NULL;
	g_autoptr(MeshSyncBroker) b = NULL;
	g_autoptr(GError) error = NULL;

	nats_server_start(&server, 0, args);
	plain = nats_server_url(&server);
	in_url = g_strdup_printf("nats://s3cr3t-token@127.0.0.1:%u", server.port);
	wrong = g_strdup_printf("nats://nope@127.0.0.1:%u", server.port);

	a = broker_new_connected(in_url);
	b = meshsync_broker_new(plain, &error);
	meshsync_broker_set_token(b, "s3cr3t-token");
	g_assert_true(broker_connect(b, &error));
	g_assert_no_error(error);

	assert_unauthorized(wrong, NULL);
	assert_unauthorized(plain, NULL);
	assert_unauthorized(plain, "wrong");
	nats_server_clear(&server);
}

static void
test_auth_user_password(void)
{
	NatsServer server = {0};
	const gchar *args[] = {"--user", "alice", "--pass", "p@ss:word", NULL};
	g_autofree gchar *good = NULL;
	g_autofree gchar *wrong = NULL;
	g_autoptr(MeshSyncBroker) broker = NULL;
	g_autoptr(Received) r = received_new();

	nats_server_start(&server, 0, args);
	good = g_strdup_printf("nats://alice:p%%40ss%%3Aword@127.0.0.1:%u", server.port);
	wrong = g_strdup_printf("nats://alice:other@127.0.0.1:%u", server.port);

	broker = broker_new_connected(good);
	g_assert_null(strstr(meshsync_broker_get_url(broker), "alice"));
	subscribe(broker, "test.auth", NULL, r);
	broker_flush(broker);
	publish_string(broker, "test.auth", "in");
	WAIT_FOR(r->payloads->len == 1);

	assert_unauthorized(wrong, NULL);
	meshsync_broker_close(broker);
	nats_server_clear(&server);
}

static void
test_tls(void)
{
	NatsServer server = {0};
	const gchar *data = g_getenv("MESHSYNC_TEST_DATA");
	g_autofree gchar *cert = NULL;
	g_autofree gchar *key = NULL;
	g_autofree gchar *ca = NULL;
	g_autofree gchar *other_ca = NULL;
	g_autofree gchar *url = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncBroker) broker = NULL;
	g_autoptr(MeshSyncBroker) untrusted = NULL;
	g_autoptr(Received) r = received_new();
	const gchar *args[] = {"--tls", "--tlscert", NULL, "--tlskey", NULL, NULL};

	g_assert_nonnull(data);
	cert = g_build_filename(data, "tls", "server.pem", NULL);
	key = g_build_filename(data, "tls", "server.key", NULL);
	ca = g_build_filename(data, "tls", "ca.pem", NULL);
	other_ca = g_build_filename(data, "tls", "other-ca.pem", NULL);
	args[2] = cert;
	args[4] = key;
	nats_server_start(&server, 0, args);
	url = g_strdup_printf("tls://127.0.0.1:%u", server.port);

	broker = meshsync_broker_new(url, &error);
	g_assert_no_error(error);
	meshsync_broker_set_tls(broker, ca, NULL, NULL);
	g_assert_true(broker_connect(broker, &error));
	g_assert_no_error(error);
	subscribe(broker, "test.tls", NULL, r);
	broker_flush(broker);
	publish_string(broker, "test.tls", "secret");
	WAIT_FOR(r->payloads->len == 1);

	untrusted = meshsync_broker_new(url, &error);
	meshsync_broker_set_tls(untrusted, other_ca, NULL, NULL);
	g_assert_false(broker_connect(untrusted, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_TLS);
	g_assert_nonnull(strstr(error->message, url));
	meshsync_broker_close(broker);
	nats_server_clear(&server);
}

static guint
free_port(void)
{
	NatsServer server = {0};
	guint port;

	/* A port the server just released: nothing listens there now. */
	nats_server_start(&server, 0, NULL);
	port = server.port;
	nats_server_clear(&server);
	return port;
}

static void
test_connect_timeout(void)
{
	guint port = free_port();
	g_autofree gchar *url = g_strdup_printf("127.0.0.1:%u", port);
	g_autofree gchar *shown = g_strdup_printf("nats://127.0.0.1:%u", port);
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncBroker) broker = meshsync_broker_new(url, &error);
	g_autoptr(GArray) states = g_array_new(FALSE, FALSE, sizeof(MeshSyncBrokerState));
	g_autofree gchar *expected = NULL;

	g_assert_no_error(error);
	g_signal_connect(broker, "notify::state", G_CALLBACK(state_changed_cb), states);
	meshsync_broker_set_connect_timeout(broker, 1);
	g_assert_false(broker_connect(broker, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION);
	expected = g_strdup_printf("cannot reach the broker at %s within 1 s: ", shown);
	g_assert_true(g_str_has_prefix(error->message, expected));
	g_assert_cmpuint(states->len, ==, 2);
	g_assert_cmpint(g_array_index(states, MeshSyncBrokerState, 0), ==,
	                MESHSYNC_BROKER_STATE_CONNECTING);
	g_assert_cmpint(g_array_index(states, MeshSyncBrokerState, 1), ==,
	                MESHSYNC_BROKER_STATE_DISCONNECTED);
	g_clear_error(&error);

	/* Nothing to publish to, nothing to flush. */
	{
		g_autoptr(GBytes) payload = g_bytes_new_static("x", 1);
		AsyncResult r = {0};

		g_assert_false(meshsync_broker_publish(broker, "test.x", payload, &error));
		g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION);
		meshsync_broker_flush_async(broker, 100, NULL, flush_cb, &r);
		WAIT_FOR(r.done);
		g_assert_error(r.error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION);
		g_clear_error(&r.error);
	}
}

static void
test_connect_waits_for_broker(void)
{
	NatsServer server = {0};
	guint port = free_port();
	g_autofree gchar *url = g_strdup_printf("127.0.0.1:%u", port);
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncBroker) broker = meshsync_broker_new(url, &error);
	AsyncResult r = {0};

	g_assert_no_error(error);
	meshsync_broker_connect_async(broker, NULL, connect_cb, &r);
	g_assert_cmpint(meshsync_broker_get_state(broker), ==, MESHSYNC_BROKER_STATE_CONNECTING);
	nats_server_start(&server, port, NULL);
	WAIT_FOR(r.done);
	g_assert_no_error(r.error);
	g_assert_true(r.ok);
	g_assert_cmpint(meshsync_broker_get_state(broker), ==, MESHSYNC_BROKER_STATE_CONNECTED);
	meshsync_broker_close(broker);
	nats_server_clear(&server);
}

static void
test_connect_cancelled(void)
{
	guint port = free_port();
	g_autofree gchar *url = g_strdup_printf("127.0.0.1:%u", port);
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncBroker) broker = meshsync_broker_new(url, &error);
	g_autoptr(GCancellable) cancellable = g_cancellable_new();
	AsyncResult r = {0};

	meshsync_broker_connect_async(broker, cancellable, connect_cb, &r);
	g_cancellable_cancel(cancellable);
	WAIT_FOR(r.done);
	g_assert_error(r.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
	g_clear_error(&r.error);
	g_assert_cmpint(meshsync_broker_get_state(broker), ==, MESHSYNC_BROKER_STATE_DISCONNECTED);
}

static void
test_flush_and_close(void)
{
	NatsServer server = {0};
	g_autofree gchar *url = NULL;
	g_autoptr(MeshSyncBroker) publisher = NULL;
	g_autoptr(MeshSyncBroker) subscriber = NULL;
	g_autoptr(Received) r = received_new();
	g_autoptr(Received) control = received_new();
	const guint n = 5000;
	guint at_close;

	nats_server_start(&server, 0, NULL);
	url = nats_server_url(&server);
	publisher = broker_new_connected(url);
	subscriber = broker_new_connected(url);
	subscribe(subscriber, "test.close", NULL, r);
	subscribe(publisher, "test.close", NULL, control);
	broker_flush(subscriber);
	broker_flush(publisher);
	for (guint i = 0; i < n; i++)
		publish_string(publisher, "test.close", "payload");
	broker_flush(publisher);
	WAIT_FOR(r->payloads->len > 0);

	/* Once closed, nothing reaches the callback, even what was already queued. */
	meshsync_broker_close(subscriber);
	at_close = r->payloads->len;
	WAIT_FOR(control->payloads->len == n);
	broker_flush(publisher);
	while (g_main_context_iteration(NULL, FALSE))
		;
	g_assert_cmpuint(r->payloads->len, ==, at_close);
	g_assert_cmpint(meshsync_broker_get_state(subscriber), ==, MESHSYNC_BROKER_STATE_CLOSED);
	g_assert_false(meshsync_broker_get_writable(subscriber));
	nats_server_clear(&server);
}

static void
test_unsubscribe(void)
{
	NatsServer server = {0};
	g_autofree gchar *url = NULL;
	g_autoptr(MeshSyncBroker) broker = NULL;
	g_autoptr(Received) gone = received_new();
	g_autoptr(Received) kept = received_new();
	guint id;

	nats_server_start(&server, 0, NULL);
	url = nats_server_url(&server);
	broker = broker_new_connected(url);
	id = subscribe(broker, "test.unsub", NULL, gone);
	subscribe(broker, "test.unsub", NULL, kept);
	broker_flush(broker);
	publish_string(broker, "test.unsub", "one");
	WAIT_FOR(gone->payloads->len == 1 && kept->payloads->len == 1);
	meshsync_broker_unsubscribe(broker, id);
	publish_string(broker, "test.unsub", "two");
	WAIT_FOR(kept->payloads->len == 2);
	broker_flush(broker);
	g_assert_cmpuint(gone->payloads->len, ==, 1);
	meshsync_broker_close(broker);
	nats_server_clear(&server);
}

/* ------------------------------------------------------------------------------------------
 * Content dedup, the cases of upstream's content_deduplicator_test.
 */

typedef struct {
	NatsServer server;
	MeshSyncBroker *broker;
	MeshSyncBrokerWriter *writer;
} DedupFixture;

static void
dedup_setup(DedupFixture *f, gconstpointer data)
{
	g_autofree gchar *url = NULL;

	nats_server_start(&f->server, 0, NULL);
	url = nats_server_url(&f->server);
	f->broker = broker_new_connected(url);
	f->writer = meshsync_broker_writer_new(f->broker, "test.dedup");
	meshsync_broker_writer_set_content_dedup(f->writer, TRUE);
}

static void
dedup_teardown(DedupFixture *f, gconstpointer data)
{
	g_clear_object(&f->writer);
	meshsync_broker_close(f->broker);
	g_clear_object(&f->broker);
	nats_server_clear(&f->server);
}

static void
dedup_write(DedupFixture *f, MeshSyncResource *resource, MeshSyncEventType type)
{
	g_autoptr(GError) error = NULL;

	g_assert_true(meshsync_writer_write(MESHSYNC_WRITER(f->writer), resource, type, &error));
	g_assert_no_error(error);
}

static guint64
dedup_n(DedupFixture *f)
{
	return meshsync_broker_writer_get_n_published(f->writer);
}

static void
test_dedup_identical_updates(DedupFixture *f, gconstpointer data)
{
	g_autoptr(MeshSyncResource) pod = make_pod("a", "uid-a", "1", "same");

	dedup_write(f, pod, MESHSYNC_EVENT_TYPE_ADDED);
	dedup_write(f, pod, MESHSYNC_EVENT_TYPE_MODIFIED);
	dedup_write(f, pod, MESHSYNC_EVENT_TYPE_MODIFIED);
	g_assert_cmpuint(dedup_n(f), ==, 1);
}

static void
test_dedup_changing_content(DedupFixture *f, gconstpointer data)
{
	for (guint i = 0; i < 3; i++) {
		g_autofree gchar *rv = g_strdup_printf("%u", i + 1);
		g_autoptr(MeshSyncResource) pod = make_pod("a", "uid-a", rv, rv);

		dedup_write(f, pod, MESHSYNC_EVENT_TYPE_MODIFIED);
	}
	g_assert_cmpuint(dedup_n(f), ==, 3);
	{
		g_autoptr(MeshSyncResource) again = make_pod("a", "uid-a", "3", "3");

		dedup_write(f, again, MESHSYNC_EVENT_TYPE_MODIFIED);
	}
	g_assert_cmpuint(dedup_n(f), ==, 3);
}

static void
test_dedup_delete(DedupFixture *f, gconstpointer data)
{
	g_autoptr(MeshSyncResource) pod = make_pod("a", "uid-a", "1", NULL);

	dedup_write(f, pod, MESHSYNC_EVENT_TYPE_ADDED);
	dedup_write(f, pod, MESHSYNC_EVENT_TYPE_DELETED);
	dedup_write(f, pod, MESHSYNC_EVENT_TYPE_DELETED);
	g_assert_cmpuint(dedup_n(f), ==, 3);
	/* The delete forgot the uid: the same content is news again, and then tracked. */
	dedup_write(f, pod, MESHSYNC_EVENT_TYPE_ADDED);
	g_assert_cmpuint(dedup_n(f), ==, 4);
	dedup_write(f, pod, MESHSYNC_EVENT_TYPE_MODIFIED);
	g_assert_cmpuint(dedup_n(f), ==, 4);
}

static void
test_dedup_no_uid(DedupFixture *f, gconstpointer data)
{
	g_autoptr(MeshSyncResource) no_uid = make_pod("a", NULL, "1", NULL);
	g_autoptr(MeshSyncResource) empty_uid = make_pod("b", "", "1", NULL);

	dedup_write(f, no_uid, MESHSYNC_EVENT_TYPE_ADDED);
	dedup_write(f, no_uid, MESHSYNC_EVENT_TYPE_MODIFIED);
	dedup_write(f, empty_uid, MESHSYNC_EVENT_TYPE_ADDED);
	dedup_write(f, empty_uid, MESHSYNC_EVENT_TYPE_MODIFIED);
	g_assert_cmpuint(dedup_n(f), ==, 4);
}

static void
test_dedup_per_uid(DedupFixture *f, gconstpointer data)
{
	g_autoptr(MeshSyncResource) one = make_pod("a", "uid-1", "1", NULL);
	g_autoptr(MeshSyncResource) two = make_pod("a", "uid-2", "1", NULL);

	dedup_write(f, one, MESHSYNC_EVENT_TYPE_ADDED);
	dedup_write(f, two, MESHSYNC_EVENT_TYPE_ADDED);
	dedup_write(f, one, MESHSYNC_EVENT_TYPE_MODIFIED);
	dedup_write(f, two, MESHSYNC_EVENT_TYPE_MODIFIED);
	g_assert_cmpuint(dedup_n(f), ==, 2);
}

static void
test_dedup_off(DedupFixture *f, gconstpointer data)
{
	g_autoptr(MeshSyncResource) pod = make_pod("a", "uid-a", "1", NULL);

	meshsync_broker_writer_set_content_dedup(f->writer, FALSE);
	dedup_write(f, pod, MESHSYNC_EVENT_TYPE_ADDED);
	dedup_write(f, pod, MESHSYNC_EVENT_TYPE_MODIFIED);
	g_assert_cmpuint(dedup_n(f), ==, 2);
}

static void
test_dedup_failed_publish(void)
{
	NatsServer server = {0};
	g_autoptr(GError) error = NULL;
	g_autofree gchar *url = NULL;
	g_autoptr(MeshSyncBroker) broker = NULL;
	g_autoptr(MeshSyncBrokerWriter) writer = NULL;
	g_autoptr(MeshSyncResource) pod = make_pod("a", "uid-a", "1", NULL);

	nats_server_start(&server, 0, NULL);
	url = nats_server_url(&server);
	broker = meshsync_broker_new(url, &error);
	writer = meshsync_broker_writer_new(broker, "test.dedup");
	meshsync_broker_writer_set_content_dedup(writer, TRUE);

	/* Not connected yet: the publish fails and nothing is remembered. */
	g_assert_false(meshsync_writer_write(MESHSYNC_WRITER(writer), pod,
	                                     MESHSYNC_EVENT_TYPE_ADDED, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION);
	g_clear_error(&error);
	g_assert_cmpuint(meshsync_broker_writer_get_n_errors(writer), ==, 1);

	g_assert_true(broker_connect(broker, &error));
	g_assert_true(meshsync_writer_write(MESHSYNC_WRITER(writer), pod, MESHSYNC_EVENT_TYPE_ADDED,
	                                    &error));
	g_assert_cmpuint(meshsync_broker_writer_get_n_published(writer), ==, 1);
	g_assert_true(meshsync_writer_write(MESHSYNC_WRITER(writer), pod,
	                                    MESHSYNC_EVENT_TYPE_MODIFIED, &error));
	g_assert_cmpuint(meshsync_broker_writer_get_n_published(writer), ==, 1);
	meshsync_broker_close(broker);
	nats_server_clear(&server);
}

/* ------------------------------------------------------------------------------------------
 * Bounded write buffer: publishes faster than the socket takes them turn writable off above
 * the high mark and on again below the low one; every message still arrives.
 */

#define MARK_HIGH     (256 * 1024)
#define MARK_LOW      (64 * 1024)
#define BURST_MESSAGE 16384

typedef struct {
	GArray *writable; /* gboolean, one per notify::writable */
	GArray *buffered; /* guint64: the buffered bytes at that moment */
} WritableLog;

static void
writable_log_cb(GObject *object, GParamSpec *pspec, gpointer data)
{
	WritableLog *log = data;
	gboolean writable = meshsync_broker_get_writable(MESHSYNC_BROKER(object));
	guint64 buffered = meshsync_broker_get_buffered_bytes(MESHSYNC_BROKER(object));

	g_array_append_val(log->writable, writable);
	g_array_append_val(log->buffered, buffered);
}

static void
publish_numbered(MeshSyncBroker *broker, const gchar *subject, guint i)
{
	g_autofree gchar *text = g_malloc(BURST_MESSAGE + 1);
	g_autofree gchar *prefix = g_strdup_printf("msg %08u|", i);
	g_autoptr(GBytes) payload = NULL;
	g_autoptr(GError) error = NULL;

	memset(text, 'p', BURST_MESSAGE);
	memcpy(text, prefix, strlen(prefix));
	payload = g_bytes_new_take(g_steal_pointer(&text), BURST_MESSAGE);
	g_assert_true(meshsync_broker_publish(broker, subject, payload, &error));
	g_assert_no_error(error);
}

static void
assert_numbered_all(Received *r, guint n)
{
	g_assert_cmpuint(r->payloads->len, ==, n);
	for (guint i = 0; i < n; i++) {
		g_autofree gchar *prefix = g_strdup_printf("msg %08u", i);
		const gchar *payload = g_ptr_array_index(r->payloads, i);

		g_assert_cmpuint(strlen(payload), ==, BURST_MESSAGE);
		g_assert_true(g_str_has_prefix(payload, prefix));
	}
}

typedef struct {
	NatsServer server;
	gchar *url;
	MeshSyncBroker *publisher;
	MeshSyncBroker *subscriber;
	MeshSyncBrokerWriter *writer;
	Received *r;
	WritableLog log;
	guint writer_changes;
} BurstFixture;

static void
burst_setup(BurstFixture *f, gconstpointer data)
{
	nats_server_start(&f->server, 0, NULL);
	f->url = nats_server_url(&f->server);
	f->publisher = broker_new_pinging(f->url, 120000);
	meshsync_broker_set_write_buffer_marks(f->publisher, MARK_HIGH, MARK_LOW);
	/* the subscriber has a connection of its own, like Meshery */
	f->subscriber = broker_new_pinging(f->url, 120000);
	f->r = received_new();
	subscribe(f->subscriber, "test.burst", NULL, f->r);
	broker_flush(f->subscriber);
	broker_flush(f->publisher);
	f->writer = meshsync_broker_writer_new(f->publisher, "test.burst");
	f->log.writable = g_array_new(FALSE, FALSE, sizeof(gboolean));
	f->log.buffered = g_array_new(FALSE, FALSE, sizeof(guint64));
	g_signal_connect(f->publisher, "notify::writable", G_CALLBACK(writable_log_cb), &f->log);
	g_signal_connect(f->writer, "writable-changed", G_CALLBACK(count_writable_cb),
	                 &f->writer_changes);
}

static void
burst_teardown(BurstFixture *f, gconstpointer data)
{
	if (f->server.proc != NULL)
		g_subprocess_send_signal(f->server.proc, SIGCONT);
	g_clear_object(&f->writer);
	meshsync_broker_close(f->publisher);
	meshsync_broker_close(f->subscriber);
	g_clear_object(&f->publisher);
	g_clear_object(&f->subscriber);
	received_free(f->r);
	g_array_unref(f->log.writable);
	g_array_unref(f->log.buffered);
	g_free(f->url);
	nats_server_clear(&f->server);
}

/* The two notifications a congestion gives: off above the high mark, on below the low one. */
static void
assert_one_congestion(BurstFixture *f)
{
	g_assert_cmpuint(f->log.writable->len, ==, 2);
	g_assert_false(g_array_index(f->log.writable, gboolean, 0));
	g_assert_cmpuint(g_array_index(f->log.buffered, guint64, 0), >, MARK_HIGH);
	g_assert_true(g_array_index(f->log.writable, gboolean, 1));
	g_assert_cmpuint(g_array_index(f->log.buffered, guint64, 1), <=, MARK_LOW);
	g_assert_cmpuint(f->writer_changes, ==, 2);
	g_assert_true(meshsync_writer_is_writable(MESHSYNC_WRITER(f->writer)));
}

/* The same, for a socket that may still take data while the server is stopped (a loaded
 * machine lets the kernel grow a loopback buffer while the flusher runs late): writable may
 * turn off and on more than once, but it alternates, off only past the high mark and on
 * only at or below the low one, and ends on. */
static void
assert_congestions(BurstFixture *f)
{
	guint n = f->log.writable->len;

	g_assert_cmpuint(n, >=, 2);
	g_assert_cmpuint(n % 2, ==, 0);
	for (guint i = 0; i < n; i++) {
		gboolean writable = g_array_index(f->log.writable, gboolean, i);
		guint64 buffered = g_array_index(f->log.buffered, guint64, i);

		g_assert_cmpint(writable, ==, i % 2 == 1);
		if (writable)
			g_assert_cmpuint(buffered, <=, MARK_LOW);
		else
			g_assert_cmpuint(buffered, >, MARK_HIGH);
	}
	g_assert_cmpuint(f->writer_changes, ==, n);
	g_assert_true(meshsync_writer_is_writable(MESHSYNC_WRITER(f->writer)));
}

/* Without returning to the loop nothing reaches the socket: writable turns off exactly at
 * the publish that takes the buffer over the high mark. */
static void
test_write_buffer_burst(BurstFixture *f, gconstpointer data)
{
	guint n = 0;

	while (meshsync_broker_get_writable(f->publisher)) {
		guint64 buffered;

		publish_numbered(f->publisher, "test.burst", n++);
		buffered = meshsync_broker_get_buffered_bytes(f->publisher);
		g_assert_cmpint(meshsync_broker_get_writable(f->publisher), ==,
		                buffered <= MARK_HIGH);
		g_assert_cmpuint(n, <, 10 * MARK_HIGH / BURST_MESSAGE);
	}
	g_assert_cmpuint(n, >=, MARK_HIGH / (BURST_MESSAGE + 64));
	g_assert_false(meshsync_writer_is_writable(MESHSYNC_WRITER(f->writer)));
	g_assert_cmpuint(f->writer_changes, ==, 1);
	/* still taken while not writable: the property is advice, no message is refused */
	publish_numbered(f->publisher, "test.burst", n++);

	WAIT_FOR(meshsync_broker_get_writable(f->publisher));
	assert_one_congestion(f);
	WAIT_FOR(f->r->payloads->len == n);
	assert_numbered_all(f->r, n);
}

/* A broker that stops reading: the socket fills, then the write buffer; once it reads again
 * everything drains and arrives. */
static void
test_write_buffer_stopped_server(BurstFixture *f, gconstpointer data)
{
	/* loopback socket buffers take a few MB at most; this is far beyond them */
	const guint limit = (64 * 1024 * 1024) / BURST_MESSAGE;
	guint n = 0;

	g_subprocess_send_signal(f->server.proc, SIGSTOP);
	while (meshsync_broker_get_writable(f->publisher)) {
		g_assert_cmpuint(n, <, limit);
		publish_numbered(f->publisher, "test.burst", n++);
		/* let the loop write what the socket takes */
		while (g_main_context_iteration(NULL, FALSE))
			;
	}
	g_assert_cmpuint(meshsync_broker_get_buffered_bytes(f->publisher), >, MARK_HIGH);
	g_assert_false(meshsync_writer_is_writable(MESHSYNC_WRITER(f->writer)));
	g_assert_cmpuint(f->writer_changes % 2, ==, 1);
	g_test_message("%u messages of %u bytes before the buffer passed its mark", n,
	               BURST_MESSAGE);

	g_subprocess_send_signal(f->server.proc, SIGCONT);
	WAIT_FOR(meshsync_broker_get_writable(f->publisher));
	assert_congestions(f);
	WAIT_FOR(f->r->payloads->len == n);
	assert_numbered_all(f->r, n);
}

/* Fills the write buffer of a broker whose server stopped reading beyond what the kernel
 * could ever take for it: 48 MiB, more than the largest send plus receive buffers a loopback
 * connection may grow to (4 MiB and 32 MiB by default), so that some of it stays. */
static void
burst_fill_stopped(BurstFixture *f)
{
	const guint64 beyond = 48 * 1024 * 1024;
	guint n = 0;

	g_subprocess_send_signal(f->server.proc, SIGSTOP);
	while (meshsync_broker_get_buffered_bytes(f->publisher) <= beyond) {
		publish_numbered(f->publisher, "test.burst", n++);
		while (g_main_context_iteration(NULL, FALSE))
			;
	}
	g_assert_false(meshsync_broker_get_writable(f->publisher));
}

static gboolean
set_true_cb(gpointer data)
{
	*(gboolean *)data = TRUE;
	return G_SOURCE_REMOVE;
}

/* What the socket does not take holds the loop in close(); close_async() lets it run, then
 * closes anyway and says what was left. */
static void
test_close_async_stopped_server(BurstFixture *f, gconstpointer data)
{
	AsyncResult r = {0};
	gboolean idle_ran = FALSE;

	burst_fill_stopped(f);
	meshsync_broker_close_async(f->publisher, NULL, close_cb, &r);
	g_assert_cmpint(meshsync_broker_get_state(f->publisher), !=, MESHSYNC_BROKER_STATE_CLOSED);
	g_idle_add_full(G_PRIORITY_DEFAULT_IDLE, set_true_cb, &idle_ran, NULL);
	WAIT_FOR(r.done);
	g_assert_true(idle_ran);
	g_assert_false(r.ok);
	g_assert_error(r.error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION);
	g_clear_error(&r.error);
	g_assert_cmpint(meshsync_broker_get_state(f->publisher), ==, MESHSYNC_BROKER_STATE_CLOSED);
	g_assert_false(meshsync_broker_get_writable(f->publisher));

	/* closed already: done at once, and fine */
	r = (AsyncResult){0};
	meshsync_broker_close_async(f->publisher, NULL, close_cb, &r);
	WAIT_FOR(r.done);
	g_assert_no_error(r.error);
	g_assert_true(r.ok);
}

/* Cancelling stops the wait for the socket: the broker closes at once. */
static void
test_close_async_cancelled(BurstFixture *f, gconstpointer data)
{
	g_autoptr(GCancellable) cancellable = g_cancellable_new();
	AsyncResult r = {0};

	burst_fill_stopped(f);
	meshsync_broker_close_async(f->publisher, cancellable, close_cb, &r);
	g_cancellable_cancel(cancellable);
	WAIT_FOR(r.done);
	g_assert_false(r.ok);
	g_assert_error(r.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
	g_clear_error(&r.error);
	g_assert_cmpint(meshsync_broker_get_state(f->publisher), ==, MESHSYNC_BROKER_STATE_CLOSED);
}

/* A socket that takes data: the loop hands the whole write buffer over, then the broker
 * closes and says nothing was left. (Whether the server reads it all before the connection
 * goes is up to TCP; a flush before closing is what confirms delivery.) */
static void
test_close_async_hands_buffer_over(BurstFixture *f, gconstpointer data)
{
	AsyncResult r = {0};

	for (guint i = 0; i < 200; i++)
		publish_numbered(f->publisher, "test.burst", i);
	g_assert_cmpuint(meshsync_broker_get_buffered_bytes(f->publisher), >, MARK_HIGH);
	meshsync_broker_close_async(f->publisher, NULL, close_cb, &r);
	g_assert_cmpint(meshsync_broker_get_state(f->publisher), !=, MESHSYNC_BROKER_STATE_CLOSED);
	WAIT_FOR(r.done);
	g_assert_no_error(r.error);
	g_assert_true(r.ok);
	g_assert_cmpint(meshsync_broker_get_state(f->publisher), ==, MESHSYNC_BROKER_STATE_CLOSED);
	g_assert_cmpuint(meshsync_broker_get_buffered_bytes(f->publisher), ==, 0);
}

/* ------------------------------------------------------------------------------------------
 * Throughput (-m perf): ~5 KB envelopes from the loop thread, with a subscriber in another
 * process when python3 is there to be one.
 */

static const gchar subscriber_script[] =
        "import sys, time\n"
        "from nats_client import NatsClient\n"
        "nc = NatsClient.from_url(sys.argv[1], timeout=60).connect()\n"
        "nc.subscribe(sys.argv[2])\n"
        "print('ready', flush=True)\n"
        "n, size, start = int(sys.argv[3]), 0, None\n"
        "for msg in nc.messages(count=n, timeout=60):\n"
        "    start = start or time.monotonic()\n"
        "    size += len(msg.data)\n"
        "print(n, size, time.monotonic() - start, flush=True)\n";

/* Publishes n envelopes of about 5 KB from the loop thread, in chunks with the loop running
 * between them, then waits for the server's PONG. */
static gdouble
perf_publish(MeshSyncBrokerWriter *writer, MeshSyncBroker *broker, guint n, gsize *envelope)
{
	g_autofree gchar *filler = g_strnfill(4800, 'p');
	g_autoptr(MeshSyncResource) pod = make_pod("perf", "uid-perf", "1", filler);
	g_autofree gchar *json = meshsync_resource_to_json(pod);
	g_autoptr(GError) error = NULL;
	const guint chunk = 1000;
	gint64 start = g_get_monotonic_time();

	*envelope = strlen(json) + strlen("{\"ObjectType\":\"meshsync-data\",\"EventType\":"
	                                  "\"MODIFIED\",\"Request\":null,\"Object\":}");
	for (guint i = 0; i < n; i += chunk) {
		for (guint j = 0; j < chunk; j++) {
			g_assert_true(meshsync_writer_write(MESHSYNC_WRITER(writer), pod,
			                                    MESHSYNC_EVENT_TYPE_MODIFIED, &error));
		}
		while (g_main_context_iteration(NULL, FALSE))
			;
	}
	broker_flush(broker);
	return (gdouble)(g_get_monotonic_time() - start) / G_USEC_PER_SEC;
}

static void
test_perf_publish(void)
{
	NatsServer server = {0};
	g_autofree gchar *url = NULL;
	g_autoptr(MeshSyncBroker) broker = NULL;
	g_autoptr(MeshSyncBrokerWriter) writer = NULL;
	const guint n = 200000;
	gsize envelope;
	gdouble seconds;

	nats_server_start(&server, 0, NULL);
	url = nats_server_url(&server);
	broker = broker_new_connected(url);
	writer = meshsync_broker_writer_new(broker, NULL);
	seconds = perf_publish(writer, broker, n, &envelope);
	g_test_minimized_result(seconds, "no subscriber: %u x %" G_GSIZE_FORMAT " B in %.3f s", n,
	                        envelope, seconds);
	g_test_message("no subscriber: %.0f msg/s, %.1f MB/s", n / seconds,
	               (gdouble)n * (gdouble)envelope / seconds / 1e6);
	g_assert_cmpuint(meshsync_broker_writer_get_n_published(writer), ==, n);

	/* The same bytes without the writer: what the adapter and nats.c cost on their own. */
	{
		g_autofree gchar *text = g_strnfill(envelope, 'e');
		g_autoptr(GBytes) payload = g_bytes_new_take(g_steal_pointer(&text), envelope);
		g_autoptr(GError) error = NULL;
		gint64 start = g_get_monotonic_time();

		for (guint i = 0; i < n; i += 1000) {
			for (guint j = 0; j < 1000; j++)
				g_assert_true(meshsync_broker_publish(broker, "test.raw", payload,
				                                      &error));
			while (g_main_context_iteration(NULL, FALSE))
				;
		}
		broker_flush(broker);
		seconds = (gdouble)(g_get_monotonic_time() - start) / G_USEC_PER_SEC;
		g_test_message("raw publish, no subscriber: %.0f msg/s, %.1f MB/s", n / seconds,
		               (gdouble)n * (gdouble)envelope / seconds / 1e6);
	}
	meshsync_broker_close(broker);
	nats_server_clear(&server);
}

static void
test_perf_publish_subscriber(void)
{
	NatsServer server = {0};
	g_autofree gchar *url = NULL;
	g_autofree gchar *lib = g_build_filename(g_getenv("G_TEST_SRCDIR"), "lib", NULL);
	g_autofree gchar *count = NULL;
	g_autofree gchar *line = NULL;
	g_autofree gchar *result = NULL;
	g_autoptr(GSubprocessLauncher) launcher = NULL;
	g_autoptr(GSubprocess) sub = NULL;
	g_autoptr(GDataInputStream) out = NULL;
	g_autoptr(MeshSyncBroker) broker = NULL;
	g_autoptr(MeshSyncBrokerWriter) writer = NULL;
	g_autoptr(GError) error = NULL;
	g_auto(GStrv) fields = NULL;
	const guint n = 50000;
	gsize envelope;
	gdouble seconds;

	g_assert_nonnull(g_getenv("G_TEST_SRCDIR"));
	nats_server_start(&server, 0, NULL);
	url = nats_server_url(&server);
	count = g_strdup_printf("%u", n);
	launcher = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE);
	g_subprocess_launcher_setenv(launcher, "PYTHONPATH", lib, TRUE);
	g_subprocess_launcher_set_child_setup(launcher, die_with_parent, NULL, NULL);
	sub = g_subprocess_launcher_spawn(launcher, &error, "python3", "-c", subscriber_script, url,
	                                  MESHSYNC_SUBJECT_CORE, count, NULL);
	g_assert_no_error(error);
	out = g_data_input_stream_new(g_subprocess_get_stdout_pipe(sub));
	line = g_data_input_stream_read_line(out, NULL, NULL, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(line, ==, "ready");

	broker = broker_new_connected(url);
	writer = meshsync_broker_writer_new(broker, NULL);
	seconds = perf_publish(writer, broker, n, &envelope);
	g_test_message("publisher with a Python subscriber: %.0f msg/s, %.1f MB/s", n / seconds,
	               (gdouble)n * (gdouble)envelope / seconds / 1e6);
	result = g_data_input_stream_read_line(out, NULL, NULL, &error);
	g_assert_no_error(error);
	g_assert_nonnull(result);
	fields = g_strsplit(result, " ", 3);
	g_assert_cmpuint(g_strv_length(fields), ==, 3);
	g_assert_cmpuint(g_ascii_strtoull(fields[0], NULL, 10), ==, n);
	g_assert_cmpuint(g_ascii_strtoull(fields[1], NULL, 10), ==, (guint64)n * envelope);
	g_test_message("Python subscriber received %s envelopes in %s s: %.0f msg/s", fields[0],
	               fields[2], n / g_ascii_strtod(fields[2], NULL));
	g_assert_true(g_subprocess_wait_check(sub, NULL, &error));
	meshsync_broker_close(broker);
	nats_server_clear(&server);
}

/* ------------------------------------------------------------------------------------------
 * The replay window: resource events kept until the server confirmed them and sent again, in
 * order, after a reconnection. Each pod version carries its number as its resourceVersion.
 */

static MeshSyncBrokerReplayStats
replay_stats(MeshSyncBroker *broker)
{
	MeshSyncBrokerReplayStats stats;

	meshsync_broker_get_replay_stats(broker, &stats);
	return stats;
}

/* The resourceVersion of the object in an envelope. */
static guint
payload_rv(const gchar *payload)
{
	const gchar *p = strstr(payload, "\"resourceVersion\":\"");

	g_assert_nonnull(p);
	return (guint)g_ascii_strtoull(p + strlen("\"resourceVersion\":\""), NULL, 10);
}

static void
write_version(MeshSyncBrokerWriter *writer, guint version)
{
	g_autofree gchar *rv = g_strdup_printf("%u", version);
	g_autofree gchar *filler = g_strnfill(400, 'v');
	g_autoptr(MeshSyncResource) pod = make_pod("versioned", "uid-versioned", rv, filler);
	g_autoptr(GError) error = NULL;

	g_assert_true(meshsync_writer_write(MESHSYNC_WRITER(writer), pod,
	                                    MESHSYNC_EVENT_TYPE_MODIFIED, &error));
	g_assert_no_error(error);
}

/* Asserts the versions received, in order, are @first..@last. */
static void
assert_versions(Received *r, guint from_index, guint first, guint last)
{
	g_assert_cmpuint(r->payloads->len, >=, from_index + last - first + 1);
	for (guint v = first; v <= last; v++)
		g_assert_cmpuint(payload_rv(g_ptr_array_index(r->payloads, from_index + v - first)),
		                 ==, v);
}

/* Confirmations come every 200 ms or 1000 messages, empty the window and count; nothing is
 * sent twice while the connection holds. */
static void
test_replay_confirmations_drop_window(void)
{
	NatsServer server = {0};
	g_autofree gchar *url = NULL;
	g_autoptr(MeshSyncBroker) publisher = NULL;
	g_autoptr(MeshSyncBroker) subscriber = NULL;
	g_autoptr(MeshSyncBrokerWriter) writer = NULL;
	g_autoptr(Received) r = received_new();
	g_autoptr(MsdMetrics) metrics = msd_metrics_new();
	g_autofree gchar *text = NULL;
	MeshSyncBrokerReplayStats stats;
	const guint n = 2500;
	gdouble value = 0;

	nats_server_start(&server, 0, NULL);
	url = nats_server_url(&server);
	publisher = broker_new_connected(url);
	subscriber = broker_new_connected(url);
	subscribe(subscriber, "test.replay", NULL, r);
	broker_flush(subscriber);
	writer = meshsync_broker_writer_new(publisher, "test.replay");
	msd_engine_metrics_bind_broker(metrics, publisher, writer);

	for (guint i = 1; i <= n; i++)
		write_version(writer, i);
	/* Nothing went to the loop yet: all of it is held, none confirmed. */
	stats = replay_stats(publisher);
	g_assert_cmpuint(stats.messages, ==, n);
	g_assert_cmpuint(stats.confirmations, ==, 0);
	g_assert_cmpuint(stats.bytes, >, n * 400);
	g_assert_true(msd_metrics_lookup(metrics, "meshsync_broker_window_messages", &value, NULL));
	g_assert_cmpfloat(value, ==, n);

	WAIT_FOR(replay_stats(publisher).messages == 0);
	stats = replay_stats(publisher);
	g_assert_cmpuint(stats.bytes, ==, 0);
	g_assert_cmpuint(stats.unsent_bytes, ==, 0);
	g_assert_cmpuint(stats.confirmations, >=, 1);
	g_assert_cmpuint(stats.resent, ==, 0);
	/* Once empty, at most the chunk appended to and eight spare ones stay mapped. */
	g_assert_cmpuint(stats.mapped_bytes, <=, 9 * 1024 * 1024);
	WAIT_FOR(r->payloads->len == n);
	assert_versions(r, 0, 1, n);

	/* A quiet connection gets no confirmations: nothing is unconfirmed. */
	{
		guint64 confirmations = stats.confirmations;

		broker_flush(publisher);
		g_assert_cmpuint(replay_stats(publisher).confirmations, ==, confirmations);
	}

	/* A flush waits for the confirmation of what is held. */
	write_version(writer, n + 1);
	g_assert_cmpuint(replay_stats(publisher).messages, ==, 1);
	broker_flush(publisher);
	g_assert_cmpuint(replay_stats(publisher).messages, ==, 0);
	WAIT_FOR(r->payloads->len == n + 1);
	g_assert_cmpuint(meshsync_broker_writer_get_n_published(writer), ==, n + 1);

	text = msd_metrics_render(metrics);
	g_assert_nonnull(strstr(text, "# TYPE meshsync_broker_window_bytes gauge\n"
	                              "meshsync_broker_window_bytes 0\n"));
	g_assert_nonnull(strstr(text, "# TYPE meshsync_broker_resent_messages_total counter\n"
	                              "meshsync_broker_resent_messages_total 0\n"));
	g_assert_nonnull(strstr(text, "# TYPE meshsync_broker_confirmations_total counter\n"));
	g_assert_true(
	        msd_metrics_lookup(metrics, "meshsync_broker_confirmations_total", &value, NULL));
	g_assert_cmpfloat(value, ==, (gdouble)replay_stats(publisher).confirmations);
	msd_engine_metrics_unbind_broker(metrics);
	meshsync_broker_close(publisher);
	meshsync_broker_close(subscriber);
	nats_server_clear(&server);
}

/* While confirmations do not come, the window fills: not writable at the bound (events are
 * still taken), writable again once a confirmation emptied it. */
static void
test_replay_window_full(void)
{
	NatsServer server = {0};
	g_autofree gchar *url = NULL;
	g_autoptr(MeshSyncBroker) publisher = NULL;
	g_autoptr(MeshSyncBroker) subscriber = NULL;
	g_autoptr(MeshSyncBrokerWriter) writer = NULL;
	g_autoptr(Received) r = received_new();
	guint writer_changes = 0;
	guint n = 0;

	nats_server_start(&server, 0, NULL);
	url = nats_server_url(&server);
	publisher = broker_new_connected(url);
	subscriber = broker_new_connected(url);
	subscribe(subscriber, "test.full", NULL, r);
	broker_flush(subscriber);
	meshsync_broker_set_replay_window(publisher, 64 * 1024);
	/* no confirmation unless asked for */
	meshsync_broker_set_confirm_policy(publisher, G_MAXUINT, G_MAXUINT);
	writer = meshsync_broker_writer_new(publisher, "test.full");
	g_signal_connect(writer, "writable-changed", G_CALLBACK(count_writable_cb),
	                 &writer_changes);

	while (meshsync_writer_is_writable(MESHSYNC_WRITER(writer))) {
		write_version(writer, ++n);
		/* sent as the loop runs: full means unconfirmed, not unsent */
		while (g_main_context_iteration(NULL, FALSE))
			;
		g_assert_cmpuint(n, <, 1000);
	}
	g_assert_cmpuint(replay_stats(publisher).bytes, >=, 64 * 1024);
	g_assert_cmpuint(replay_stats(publisher).unsent_bytes, ==, 0);
	g_assert_false(meshsync_broker_get_writable(publisher));
	g_assert_cmpuint(writer_changes, ==, 1);
	/* advice only: a write past the bound is still taken */
	write_version(writer, ++n);
	WAIT_FOR(r->payloads->len == n);

	meshsync_broker_set_confirm_policy(publisher, 200, 1000);
	broker_flush(publisher);
	g_assert_true(meshsync_writer_is_writable(MESHSYNC_WRITER(writer)));
	g_assert_cmpuint(writer_changes, ==, 2);
	g_assert_cmpuint(replay_stats(publisher).bytes, ==, 0);
	assert_versions(r, 0, 1, n);
	meshsync_broker_close(publisher);
	meshsync_broker_close(subscriber);
	nats_server_clear(&server);
}

/* A TCP relay on the test's loop between a broker and the server: closed, it refuses
 * connections, so a test decides when the broker gets back to a restarted server. */
typedef struct {
	GSocketService *service;
	guint port;
	guint upstream;
	gboolean open;
	GCancellable *cancellable;
	GPtrArray *streams; /* (element-type GIOStream) */
} Gate;

static gboolean
gate_incoming_cb(GSocketService *service, GSocketConnection *conn, GObject *source, gpointer data)
{
	Gate *gate = data;
	g_autoptr(GSocketClient) client = g_socket_client_new();
	g_autoptr(GSocketConnection) up = NULL;

	if (gate->open)
		up = g_socket_client_connect_to_host(client, "127.0.0.1", (guint16)gate->upstream,
		                                     NULL, NULL);
	if (up == NULL) {
		g_io_stream_close(G_IO_STREAM(conn), NULL, NULL);
		return TRUE;
	}
	g_ptr_array_add(gate->streams, g_object_ref(conn));
	g_ptr_array_add(gate->streams, g_object_ref(up));
	/* done when either side ends: then both are closed */
	g_io_stream_splice_async(G_IO_STREAM(conn), G_IO_STREAM(up),
	                         G_IO_STREAM_SPLICE_CLOSE_STREAM1 |
	                                 G_IO_STREAM_SPLICE_CLOSE_STREAM2,
	                         G_PRIORITY_DEFAULT, gate->cancellable, NULL, NULL);
	return TRUE;
}

static void
gate_start(Gate *gate, guint upstream)
{
	g_autoptr(GError) error = NULL;

	gate->upstream = upstream;
	gate->open = TRUE;
	gate->cancellable = g_cancellable_new();
	gate->streams = g_ptr_array_new_with_free_func(g_object_unref);
	gate->service = g_socket_service_new();
	gate->port =
	        g_socket_listener_add_any_inet_port(G_SOCKET_LISTENER(gate->service), NULL, &error);
	g_assert_no_error(error);
	g_signal_connect(gate->service, "incoming", G_CALLBACK(gate_incoming_cb), gate);
	g_socket_service_start(gate->service);
}

/* Closes the gate and drops the connections through it. */
static void
gate_cut(Gate *gate)
{
	gate->open = FALSE;
	g_cancellable_cancel(gate->cancellable);
	g_clear_object(&gate->cancellable);
	gate->cancellable = g_cancellable_new();
	for (guint i = 0; i < gate->streams->len; i++)
		g_io_stream_close(g_ptr_array_index(gate->streams, i), NULL, NULL);
	g_ptr_array_set_size(gate->streams, 0);
}

static void
gate_clear(Gate *gate)
{
	gate_cut(gate);
	g_socket_service_stop(gate->service);
	g_socket_listener_close(G_SOCKET_LISTENER(gate->service));
	g_clear_object(&gate->service);
	g_clear_object(&gate->cancellable);
	g_clear_pointer(&gate->streams, g_ptr_array_unref);
}

/*
 * The exact sequence a consumer sees across a reconnection: versions 1-100 confirmed; 101-150
 * sent, received, not confirmed; the broker dies; 151-300 published while it is away. After
 * the restart: 101-150 again, in order, then 151-300, and no version handed to nats.c during
 * the outage (it would have gone first, out of order).
 */
static void
test_replay_reconnect_resends_in_order(void)
{
	NatsServer server = {0};
	Gate gate = {0};
	g_autofree gchar *url = NULL;
	g_autofree gchar *gated = NULL;
	g_autoptr(MeshSyncBroker) publisher = NULL;
	g_autoptr(MeshSyncBroker) subscriber = NULL;
	g_autoptr(MeshSyncBrokerWriter) writer = NULL;
	g_autoptr(Received) r = received_new();
	MeshSyncBrokerReplayStats stats;
	guint port;

	nats_server_start(&server, 0, NULL);
	port = server.port;
	url = nats_server_url(&server);
	gate_start(&gate, port);
	gated = g_strdup_printf("nats://127.0.0.1:%u", gate.port);
	publisher = broker_new_connected(gated);
	subscriber = broker_new_connected(url);
	subscribe(subscriber, "test.order", NULL, r);
	broker_flush(subscriber);
	writer = meshsync_broker_writer_new(publisher, "test.order");

	for (guint i = 1; i <= 100; i++)
		write_version(writer, i);
	WAIT_FOR(replay_stats(publisher).messages == 0);
	meshsync_broker_set_confirm_policy(publisher, G_MAXUINT, G_MAXUINT);
	for (guint i = 101; i <= 150; i++)
		write_version(writer, i);
	WAIT_FOR(r->payloads->len == 150);
	g_assert_cmpuint(replay_stats(publisher).messages, ==, 50);

	gate_cut(&gate);
	nats_server_kill(&server);
	WAIT_FOR(meshsync_broker_get_state(publisher) == MESHSYNC_BROKER_STATE_RECONNECTING);
	for (guint i = 151; i <= 300; i++)
		write_version(writer, i);
	stats = replay_stats(publisher);
	g_assert_cmpuint(stats.messages, ==, 200);
	/* nothing of it went to nats.c: all unsent, in the window */
	g_assert_cmpuint(stats.unsent_bytes, ==, stats.bytes);
	g_assert_cmpuint(meshsync_broker_get_buffered_bytes(publisher), >=, stats.bytes);
	g_assert_true(meshsync_writer_is_writable(MESHSYNC_WRITER(writer)));

	nats_server_start(&server, port, NULL);
	WAIT_FOR(meshsync_broker_get_state(subscriber) == MESHSYNC_BROKER_STATE_CONNECTED);
	broker_flush(subscriber);
	gate.open = TRUE;
	WAIT_FOR(meshsync_broker_get_state(publisher) == MESHSYNC_BROKER_STATE_CONNECTED);
	WAIT_FOR(r->payloads->len == 150 + 200);
	assert_versions(r, 0, 1, 150);
	assert_versions(r, 150, 101, 300);
	stats = replay_stats(publisher);
	g_assert_cmpuint(stats.resent, ==, 50);
	g_assert_cmpuint(meshsync_broker_get_reconnects(publisher), ==, 1);

	meshsync_broker_set_confirm_policy(publisher, 200, 1000);
	broker_flush(publisher);
	g_assert_cmpuint(replay_stats(publisher).messages, ==, 0);
	/* nothing more on its way */
	broker_flush(subscriber);
	g_assert_cmpuint(r->payloads->len, ==, 350);
	meshsync_broker_close(publisher);
	meshsync_broker_close(subscriber);
	gate_clear(&gate);
	nats_server_clear(&server);
}

/*
 * A hung server (SIGSTOP): the pings go unanswered, the connection is given up within
 * seconds while the server still hangs, and once it resumes everything not confirmed arrives.
 * The subscriber pings rarely so that it stays connected through the hang.
 */
static void
test_replay_stale_connection(void)
{
	NatsServer server = {0};
	g_autofree gchar *url = NULL;
	g_autoptr(MeshSyncBroker) publisher = NULL;
	g_autoptr(MeshSyncBroker) subscriber = NULL;
	g_autoptr(MeshSyncBrokerWriter) writer = NULL;
	g_autoptr(Received) r = received_new();
	g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
	gint64 stopped;
	guint last = 0;

	nats_server_start(&server, 0, NULL);
	url = nats_server_url(&server);
	publisher = broker_new_connected(url);
	subscriber = broker_new_pinging(url, 120000);
	subscribe(subscriber, "test.stale", NULL, r);
	broker_flush(subscriber);
	writer = meshsync_broker_writer_new(publisher, "test.stale");

	for (guint i = 1; i <= 100; i++)
		write_version(writer, ++last);
	WAIT_FOR(replay_stats(publisher).messages == 0);

	g_subprocess_send_signal(server.proc, SIGSTOP);
	stopped = g_get_monotonic_time();
	for (guint i = 0; i < 200; i++)
		write_version(writer, ++last);
	WAIT_FOR(meshsync_broker_get_state(publisher) == MESHSYNC_BROKER_STATE_RECONNECTING);
	g_test_message("stale connection noticed after %.1f s",
	               (gdouble)(g_get_monotonic_time() - stopped) / G_USEC_PER_SEC);
	for (guint i = 0; i < 100; i++)
		write_version(writer, ++last);
	g_assert_cmpuint(replay_stats(publisher).messages, ==, 300);
	g_subprocess_send_signal(server.proc, SIGCONT);

	WAIT_FOR(meshsync_broker_get_state(publisher) == MESHSYNC_BROKER_STATE_CONNECTED);
	WAIT_FOR(replay_stats(publisher).messages == 0);
	g_assert_cmpuint(replay_stats(publisher).resent, >, 0);
	/* every version arrives, at least once; the connection's own order holds */
	while (g_hash_table_size(seen) < last) {
		g_main_context_iteration(NULL, TRUE);
		for (guint i = 0; i < r->payloads->len; i++)
			g_hash_table_add(seen, GUINT_TO_POINTER(payload_rv(
			                               g_ptr_array_index(r->payloads, i))));
	}
	for (guint v = 1; v <= last; v++)
		g_assert_true(g_hash_table_contains(seen, GUINT_TO_POINTER(v)));
	g_assert_cmpuint(meshsync_broker_get_reconnects(publisher), ==, 1);
	g_assert_cmpint(meshsync_broker_get_state(subscriber), ==, MESHSYNC_BROKER_STATE_CONNECTED);
	meshsync_broker_close(publisher);
	meshsync_broker_close(subscriber);
	nats_server_clear(&server);
}

/* ------------------------------------------------------------------------------------------
 * JetStream's last-state mode names one subject per object. The window holds a subject only
 * while its event waits for the PubAck: names churned through leave nothing behind (interned
 * subjects used to stay resident for good, one per name ever seen).
 */

static void
remove_tree(GFile *file)
{
	g_autoptr(GFileEnumerator) children =
	        g_file_enumerate_children(file, G_FILE_ATTRIBUTE_STANDARD_NAME,
	                                  G_FILE_QUERY_INFO_NOFOLLOW_SYMLINKS, NULL, NULL);
	GFile *child;

	while (children != NULL && g_file_enumerator_iterate(children, NULL, &child, NULL, NULL) &&
	       child != NULL)
		remove_tree(child);
	g_file_delete(file, NULL, NULL);
}

static gsize
heap_in_use(void)
{
	struct mallinfo2 info = mallinfo2();

	return info.uordblks + info.hblkhd;
}

static void
churn_state_subjects(MeshSyncBroker *broker, guint from, guint to)
{
	static const gchar body[] = "{\"kind\":\"Pod\"}";
	MsdReplayPart part = {body, sizeof body - 1};
	MeshSyncBrokerJetStreamStats stats;

	for (guint i = from; i < to; i++) {
		g_autofree gchar *subject =
		        g_strdup_printf("meshery.meshsync.state.test.Pod.churn.pod-%07u", i);
		g_autofree gchar *msg_id = g_strdup_printf("churn-%u", i);
		g_autoptr(GError) error = NULL;

		g_assert_true(meshsync_broker_publish_event_jetstream(broker, subject, &part, 1,
		                                                      msg_id, &error));
		g_assert_no_error(error);
		/* Keep the window small, so that what is measured is what stays after the acks. */
		meshsync_broker_get_jetstream_stats(broker, &stats);
		while (stats.pending >= 2048) {
			g_main_context_iteration(NULL, TRUE);
			meshsync_broker_get_jetstream_stats(broker, &stats);
		}
	}
	do {
		g_main_context_iteration(NULL, TRUE);
		meshsync_broker_get_jetstream_stats(broker, &stats);
	} while (stats.pending > 0);
}

static void
test_jetstream_state_churn_heap_flat(void)
{
	g_autofree gchar *store = g_dir_make_tmp("meshsync-js-XXXXXX", NULL);
	const gchar *extra[] = {"-js", "--store_dir", store, NULL};
	NatsServer server = {0};
	g_autofree gchar *url = NULL;
	g_autoptr(MeshSyncBroker) broker = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GFile) store_dir = NULL;
	MeshSyncBrokerJetStreamStats stats;
	gsize before;
	gsize after;

	g_assert_nonnull(store);
	nats_server_start(&server, 0, extra);
	url = nats_server_url(&server);
	broker = meshsync_broker_new(url, &error);
	g_assert_no_error(error);
	meshsync_broker_set_jetstream(broker, TRUE);
	meshsync_broker_set_jetstream_state(broker, TRUE);
	g_assert_true(broker_connect(broker, &error));
	g_assert_no_error(error);
	g_assert_true(meshsync_broker_get_jetstream_state_active(broker));

	/* The first names grow what is sized once (hash tables, nats.c's buffers). */
	churn_state_subjects(broker, 0, 20000);
	before = heap_in_use();
	churn_state_subjects(broker, 20000, 220000);
	after = heap_in_use();
	g_test_message("heap in use: %" G_GSIZE_FORMAT " before, %" G_GSIZE_FORMAT " after", before,
	               after);
	meshsync_broker_get_jetstream_stats(broker, &stats);
	g_assert_cmpuint(stats.acked, ==, 220000);
	/* Interned, 200,000 subjects of 50 bytes and their table entries would be over 12 MiB. */
	g_assert_cmpuint(after, <, before + 4 * 1024 * 1024);

	meshsync_broker_close(broker);
	nats_server_clear(&server);
	store_dir = g_file_new_for_path(store);
	remove_tree(store_dir);
}

/* The broker writer picks the durable path; the broker does not send an event it was told to
 * put on JetStream anywhere else when that stream is not in use. */
static void
test_jetstream_path_not_in_use(void)
{
	static const gchar body[] = "{\"kind\":\"Pod\"}";
	MsdReplayPart part = {body, sizeof body - 1};
	g_autoptr(MeshSyncBroker) broker = NULL;
	g_autoptr(GError) error = NULL;

	broker = meshsync_broker_new("nats://127.0.0.1:4222", &error);
	g_assert_no_error(error);
	meshsync_broker_set_jetstream(broker, TRUE);
	meshsync_broker_set_jetstream_state(broker, TRUE);
	g_assert_false(meshsync_broker_get_jetstream_active(broker));

	g_assert_false(meshsync_broker_publish_event_jetstream(broker, MESHSYNC_SUBJECT_CORE, &part,
	                                                       1, "id-1", &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_NOT_SUPPORTED);
	g_clear_error(&error);
	g_assert_false(meshsync_broker_publish_event_jetstream(
	        broker, "meshery.meshsync.state.test.Pod.default.web", &part, 1, "id-1", &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_NOT_SUPPORTED);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/broker/publish-subscribe", test_publish_subscribe);
	g_test_add_func("/broker/bad-subjects", test_bad_subjects);
	g_test_add_func("/broker/queue-groups", test_queue_groups);
	g_test_add_func("/broker/unsubscribe", test_unsubscribe);
	g_test_add_func("/broker/envelope-exact", test_envelope_exact);
	g_test_add_func("/broker/outage-replays-buffer", test_outage_replays_buffer);
	g_test_add_func("/broker/buffer-full", test_buffer_full);
	g_test_add_func("/broker/oversize", test_oversize);
	g_test_add_func("/broker/auth/token", test_auth_token);
	g_test_add_func("/broker/auth/user-password", test_auth_user_password);
	g_test_add_func("/broker/tls", test_tls);
	g_test_add_func("/broker/connect/timeout", test_connect_timeout);
	g_test_add_func("/broker/connect/waits-for-broker", test_connect_waits_for_broker);
	g_test_add_func("/broker/connect/cancelled", test_connect_cancelled);
	g_test_add_func("/broker/flush-and-close", test_flush_and_close);
	g_test_add("/broker/dedup/identical-updates", DedupFixture, NULL, dedup_setup,
	           test_dedup_identical_updates, dedup_teardown);
	g_test_add("/broker/dedup/changing-content", DedupFixture, NULL, dedup_setup,
	           test_dedup_changing_content, dedup_teardown);
	g_test_add("/broker/dedup/delete", DedupFixture, NULL, dedup_setup, test_dedup_delete,
	           dedup_teardown);
	g_test_add("/broker/dedup/no-uid", DedupFixture, NULL, dedup_setup, test_dedup_no_uid,
	           dedup_teardown);
	g_test_add("/broker/dedup/per-uid", DedupFixture, NULL, dedup_setup, test_dedup_per_uid,
	           dedup_teardown);
	g_test_add("/broker/dedup/off", DedupFixture, NULL, dedup_setup, test_dedup_off,
	           dedup_teardown);
	g_test_add_func("/broker/dedup/failed-publish", test_dedup_failed_publish);
	g_test_add("/broker/write-buffer/burst", BurstFixture, NULL, burst_setup,
	           test_write_buffer_burst, burst_teardown);
	g_test_add("/broker/write-buffer/stopped-server", BurstFixture, NULL, burst_setup,
	           test_write_buffer_stopped_server, burst_teardown);
	g_test_add("/broker/close-async/stopped-server", BurstFixture, NULL, burst_setup,
	           test_close_async_stopped_server, burst_teardown);
	g_test_add("/broker/close-async/cancelled", BurstFixture, NULL, burst_setup,
	           test_close_async_cancelled, burst_teardown);
	g_test_add("/broker/close-async/hands-buffer-over", BurstFixture, NULL, burst_setup,
	           test_close_async_hands_buffer_over, burst_teardown);
	g_test_add_func("/broker/replay/confirmations-drop-window",
	                test_replay_confirmations_drop_window);
	g_test_add_func("/broker/replay/window-full", test_replay_window_full);
	g_test_add_func("/broker/replay/reconnect-resends-in-order",
	                test_replay_reconnect_resends_in_order);
	g_test_add_func("/broker/replay/stale-connection", test_replay_stale_connection);
	g_test_add_func("/broker/jetstream/path-not-in-use", test_jetstream_path_not_in_use);
	g_test_add_func("/broker/jetstream/state-churn-heap-flat",
	                test_jetstream_state_churn_heap_flat);
	if (g_test_perf()) {
		g_test_add_func("/broker/perf/publish", test_perf_publish);
		g_test_add_func("/broker/perf/publish-subscriber", test_perf_publish_subscriber);
	}
	return g_test_run();
}
