/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <signal.h>
#include <string.h>
#include <sys/prctl.h>

#include "meshsync-error.h"
#include "broker/msd-nats-connection.h"

/* The connection alone: its answers before it has a natsConnection, and against a real
 * nats-server its write marks, subscriptions, flush and the hold that outlives a close. The
 * broker's use of it (reconnects, replay, JetStream) is covered in test-broker.c. */

#define WAIT_FOR(cond)  \
	while (!(cond)) \
	g_main_context_iteration(NULL, TRUE)

static guint owner_calls;

static void
owner_event_cb(gpointer owner, MsdNatsLinkEvent *event)
{
	owner_calls++;
}

static void
owner_congestion_cb(gpointer owner, gboolean congested)
{
	owner_calls++;
}

static void
owner_plain_cb(gpointer owner)
{
	owner_calls++;
}

static const MsdNatsConnectionOwnerFuncs owner_funcs = {
        .event = owner_event_cb,
        .congestion_changed = owner_congestion_cb,
        .reconnect_buffer_full = owner_plain_cb,
        .written = owner_plain_cb,
};

static void
message_cb(const gchar *subject, const gchar *reply, GBytes *payload, gpointer user_data)
{
	g_assert_not_reached();
}

static void
test_unattached(void)
{
	g_autoptr(MsdNatsConnection) conn = NULL;
	g_autoptr(GError) error = NULL;
	gint owner = 0;

	owner_calls = 0;
	conn = msd_nats_connection_new(g_main_context_default(), "nats://127.0.0.1:4222",
	                               &owner_funcs, &owner);
	g_assert_false(msd_nats_connection_is_attached(conn));
	g_assert_null(msd_nats_connection_hold(conn));
	g_assert_cmpint(msd_nats_connection_get_max_payload(conn), ==, 0);
	g_assert_cmpuint(msd_nats_connection_get_buffered(conn), ==, 0);
	g_assert_false(msd_nats_connection_has_output(conn));
	g_assert_false(msd_nats_connection_get_congested(conn));
	g_assert_true(msd_nats_connection_drain_output(conn, 10, &error));
	g_assert_no_error(error);

	g_assert_false(msd_nats_connection_publish_unchecked(conn, "a.b", "x", 1, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION);
	g_assert_nonnull(strstr(error->message, "nats://127.0.0.1:4222"));
	g_clear_error(&error);

	g_assert_false(
	        msd_nats_connection_publish_with_id(conn, "a.b", "r", "id-1", "x", 1, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION);
	g_clear_error(&error);

	g_assert_cmpuint(
	        msd_nats_connection_subscribe(conn, "a.>", NULL, message_cb, NULL, NULL, &error),
	        ==, 0);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION);
	g_clear_error(&error);

	/* an unknown id and a close without a natsConnection are no-ops */
	msd_nats_connection_unsubscribe(conn, 42);
	msd_nats_connection_close(conn);
	g_assert_cmpuint(owner_calls, ==, 0);
}

/* What nats.c says reaches the user without the places in its sources. */
static void
test_clean_error_text(void)
{
	static const struct {
		const gchar *in;
		const gchar *out;
	} cases[] = {
	        {"(conn.c:2088): No server available for connection",
	         "No server available for connection"},
	        {"SSL handshake error (opts.c:12) (conn.c:88)", "SSL handshake error"},
	        {"Authorization Violation", "Authorization Violation"},
	        {"bad value (expected 3)", "bad value (expected 3)"},
	        {"(x.c:)", "(x.c:)"},
	        {"", ""},
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree gchar *text = msd_nats_connection_clean_error_text(cases[i].in);

		g_assert_cmpstr(text, ==, cases[i].out);
	}
}

/* ------------------------------------------------------------------------------------------
 * Against a nats-server.
 */

typedef struct {
	GArray *congestion; /* (element-type gboolean): what the owner was told, in order */
	guint closed;
	guint messages;
	gsize message_bytes;
	gboolean done;
	gboolean ok;
} Owner;

static void
server_event_cb(gpointer data, MsdNatsLinkEvent *event)
{
	Owner *owner = data;

	if (event->kind == MSD_NATS_LINK_EVENT_CLOSED)
		owner->closed++;
}

static void
server_congestion_cb(gpointer data, gboolean congested)
{
	Owner *owner = data;

	g_array_append_val(owner->congestion, congested);
}

static void
server_plain_cb(gpointer data)
{
}

static const MsdNatsConnectionOwnerFuncs server_funcs = {
        .event = server_event_cb,
        .congestion_changed = server_congestion_cb,
        .reconnect_buffer_full = server_plain_cb,
        .written = server_plain_cb,
};

static void
server_message_cb(const gchar *subject, const gchar *reply, GBytes *payload, gpointer data)
{
	Owner *owner = data;

	owner->messages++;
	owner->message_bytes += g_bytes_get_size(payload);
}

static void
die_with_parent(gpointer data)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

static guint
free_port(void)
{
	g_autoptr(GSocket) socket = NULL;
	g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback(G_SOCKET_FAMILY_IPV4);
	g_autoptr(GSocketAddress) any = g_inet_socket_address_new(loopback, 0);
	g_autoptr(GSocketAddress) bound = NULL;
	g_autoptr(GError) error = NULL;

	socket = g_socket_new(G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP,
	                      &error);
	g_assert_no_error(error);
	g_assert_true(g_socket_bind(socket, any, TRUE, &error));
	bound = g_socket_get_local_address(socket, &error);
	g_assert_no_error(error);
	return g_inet_socket_address_get_port(G_INET_SOCKET_ADDRESS(bound));
}

static void
connect_done_cb(GObject *source, GAsyncResult *res, gpointer data)
{
	Owner *owner = data;
	guint64 reconnects = 0;
	natsStatus status = NATS_OK;
	g_autofree gchar *reason = NULL;

	owner->ok = msd_nats_connection_connect_finish(MSD_NATS_CONNECTION(source), res, TRUE,
	                                               &reconnects, &status, &reason);
	g_assert_true(owner->ok == (reason == NULL));
	owner->done = TRUE;
}

static void
flush_done_cb(GObject *source, GAsyncResult *res, gpointer data)
{
	Owner *owner = data;
	g_autoptr(GError) error = NULL;

	owner->ok = msd_nats_connection_flush_finish(MSD_NATS_CONNECTION(source), res, &error);
	g_assert_no_error(error);
	owner->done = TRUE;
}

/* A nats-server on @port that dies with the test. */
static GSubprocess *
spawn_server(guint port)
{
	const gchar *binary = g_getenv("NATS_SERVER");
	g_autofree gchar *port_text = g_strdup_printf("%u", port);
	const gchar *argv[] = {binary, "-a", "127.0.0.1", "-p", port_text, NULL};
	g_autoptr(GSubprocessLauncher) launcher = NULL;
	g_autoptr(GError) error = NULL;
	GSubprocess *server;

	g_assert_nonnull(binary);
	launcher = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_SILENCE |
	                                     G_SUBPROCESS_FLAGS_STDERR_SILENCE);
	g_subprocess_launcher_set_child_setup(launcher, die_with_parent, NULL, NULL);
	server = g_subprocess_launcher_spawnv(launcher, argv, &error);
	g_assert_no_error(error);
	return server;
}

/* Connects @conn to @url (retrying until the server listens), connected state set; returns
 * the options, which must outlive the connection. */
static natsOptions *
connect_to(MsdNatsConnection *conn, const gchar *url, Owner *owner)
{
	const gchar *servers[] = {url, NULL};
	MsdNatsSettings settings = {
	        .servers = servers,
	        .attempt_timeout_ms = 2000,
	        .max_reconnects = 0,
	        .reconnect_wait_ms = 100,
	        .ping_interval_ms = 1000,
	        .max_pings_out = 3,
	};
	g_autoptr(GError) error = NULL;
	natsOptions *opts = msd_nats_connection_build_options(conn, &settings, &error);

	g_assert_no_error(error);
	g_assert_nonnull(opts);
	/* until the server listens, an attempt is refused at once */
	owner->ok = FALSE;
	while (!owner->ok) {
		owner->done = FALSE;
		msd_nats_connection_connect_async(conn, opts, connect_done_cb, owner);
		WAIT_FOR(owner->done);
	}
	g_assert_true(msd_nats_connection_is_attached(conn));
	msd_nats_connection_set_state(conn, MESHSYNC_BROKER_STATE_CONNECTED);
	return opts;
}

#define SERVER_HIGH_MARK (64 * 1024)
#define SERVER_LOW_MARK  (16 * 1024)
#define SERVER_MESSAGE   (8 * 1024)

static void
test_server(void)
{
	guint port = free_port();
	g_autofree gchar *url = g_strdup_printf("nats://127.0.0.1:%u", port);
	g_autoptr(GSubprocess) server = spawn_server(port);
	g_autoptr(MsdNatsConnection) conn = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *payload = g_malloc0(SERVER_MESSAGE);
	natsOptions *opts;
	Owner owner = {.congestion = g_array_new(FALSE, FALSE, sizeof(gboolean))};
	guint published = 0;
	natsConnection *held;

	conn = msd_nats_connection_new(g_main_context_default(), url, &server_funcs, &owner);
	msd_nats_connection_set_marks(conn, SERVER_HIGH_MARK, SERVER_LOW_MARK);
	opts = connect_to(conn, url, &owner);
	g_assert_cmpuint(msd_nats_connection_subscribe(conn, "t.>", NULL, server_message_cb, &owner,
	                                               NULL, &error),
	                 !=, 0);
	g_assert_no_error(error);

	/* Without the loop nothing leaves the write buffer: the high mark is passed after as
	 * many messages as it holds, and the owner is told once. */
	while (!msd_nats_connection_get_congested(conn)) {
		g_assert_true(msd_nats_connection_publish_unchecked(conn, "t.a", payload,
		                                                    SERVER_MESSAGE, &error));
		g_assert_no_error(error);
		published++;
		g_assert_cmpuint(published, <=, SERVER_HIGH_MARK / SERVER_MESSAGE + 1);
	}
	g_assert_cmpuint(msd_nats_connection_get_buffered(conn), >, SERVER_HIGH_MARK);
	g_assert_cmpuint(owner.congestion->len, ==, 1);
	g_assert_true(g_array_index(owner.congestion, gboolean, 0));
	/* congested or not, a publish is still taken (with its Nats-Msg-Id too) */
	g_assert_true(msd_nats_connection_publish_with_id(conn, "t.b", "r.b", "id-1", payload,
	                                                  SERVER_MESSAGE, &error));
	g_assert_no_error(error);
	published++;
	g_assert_cmpuint(owner.congestion->len, ==, 1);

	/* The loop drains the buffer into the socket: below the low mark the owner is told
	 * once more, and every message comes back through the subscription. */
	WAIT_FOR(owner.congestion->len == 2);
	g_assert_false(g_array_index(owner.congestion, gboolean, 1));
	g_assert_false(msd_nats_connection_get_congested(conn));
	WAIT_FOR(owner.messages == published);
	g_assert_cmpuint(owner.message_bytes, ==, (gsize)published * SERVER_MESSAGE);

	owner.done = FALSE;
	msd_nats_connection_flush_async(conn, 5000, flush_done_cb, &owner);
	WAIT_FOR(owner.done);
	g_assert_true(owner.ok);

	/* A worker's hold outlives the close: the natsConnection goes with the last release. */
	held = msd_nats_connection_hold(conn);
	g_assert_nonnull(held);
	msd_nats_connection_close(conn);
	msd_nats_connection_set_state(conn, MESHSYNC_BROKER_STATE_CLOSED);
	g_assert_true(msd_nats_connection_is_attached(conn));
	g_assert_null(msd_nats_connection_hold(conn));
	g_assert_false(msd_nats_connection_publish_unchecked(conn, "t.a", "x", 1, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION);
	g_clear_error(&error);
	msd_nats_connection_release(conn);
	g_assert_false(msd_nats_connection_is_attached(conn));
	WAIT_FOR(owner.closed == 1);
	g_assert_cmpuint(owner.congestion->len, ==, 2);

	natsOptions_Destroy(opts);
	g_clear_object(&conn);
	g_subprocess_send_signal(server, SIGKILL);
	g_assert_true(g_subprocess_wait(server, NULL, NULL));
	g_array_unref(owner.congestion);
}

typedef struct {
	GPtrArray *subjects; /* (element-type utf8): NULL for a no-responders status */
	GPtrArray *replies;
	GString *payloads; /* each payload, then '|' */
} Polled;

static void
polled_cb(const gchar *subject, const gchar *reply, GBytes *payload, gpointer data)
{
	Polled *polled = data;
	gsize len = 0;
	const gchar *body = g_bytes_get_data(payload, &len);

	g_ptr_array_add(polled->subjects, g_strdup(subject));
	g_ptr_array_add(polled->replies, g_strdup(reply));
	g_string_append_len(polled->payloads, body, (gssize)len);
	g_string_append_c(polled->payloads, '|');
}

#define POLLED_MESSAGES 300

/* A polled subscription's messages reach its function on the loop, in order, with their
 * reply subjects; a no-responders status reaches it without a subject; after the
 * unsubscription nothing does. The publishes with an id outnumber the batch of messages
 * destroyed together, and the connection's end destroys the rest. */
static void
test_polled(void)
{
	guint port = free_port();
	g_autofree gchar *url = g_strdup_printf("nats://127.0.0.1:%u", port);
	g_autoptr(GSubprocess) server = spawn_server(port);
	g_autoptr(MsdNatsConnection) conn = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GString) expected = g_string_new(NULL);
	Owner owner = {.congestion = g_array_new(FALSE, FALSE, sizeof(gboolean))};
	Polled polled = {g_ptr_array_new_with_free_func(g_free),
	                 g_ptr_array_new_with_free_func(g_free), g_string_new(NULL)};
	natsOptions *opts;
	guint id;

	conn = msd_nats_connection_new(g_main_context_default(), url, &server_funcs, &owner);
	opts = connect_to(conn, url, &owner);
	id = msd_nats_connection_subscribe_polled(conn, "p.>", polled_cb, &polled, NULL, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(id, !=, 0);
	/* the subscription is at the server once a flush returns */
	owner.done = FALSE;
	msd_nats_connection_flush_async(conn, 5000, flush_done_cb, &owner);
	WAIT_FOR(owner.done);

	for (guint i = 0; i < POLLED_MESSAGES; i++) {
		g_autofree gchar *subject = g_strdup_printf("p.m.%u", i);
		g_autofree gchar *msg_id = g_strdup_printf("id-%u", i);
		g_autofree gchar *body = g_strdup_printf("payload %u", i);

		g_assert_true(msd_nats_connection_publish_with_id(conn, subject,
		                                                  i % 2 ? "q.reply" : NULL, msg_id,
		                                                  body, strlen(body), &error));
		g_assert_no_error(error);
		g_string_append_printf(expected, "%s|", body);
	}
	WAIT_FOR(polled.subjects->len == POLLED_MESSAGES);
	g_assert_cmpstr(polled.payloads->str, ==, expected->str);
	for (guint i = 0; i < POLLED_MESSAGES; i++) {
		g_autofree gchar *subject = g_strdup_printf("p.m.%u", i);

		g_assert_cmpstr(g_ptr_array_index(polled.subjects, i), ==, subject);
		g_assert_cmpstr(g_ptr_array_index(polled.replies, i), ==, i % 2 ? "q.reply" : NULL);
	}

	/* nobody listens on n.x: the server answers the reply subject with a status */
	g_assert_true(msd_nats_connection_publish_with_id(conn, "n.x", "p.status", "id-n", "?", 1,
	                                                  &error));
	g_assert_no_error(error);
	WAIT_FOR(polled.subjects->len == POLLED_MESSAGES + 1);
	g_assert_null(g_ptr_array_index(polled.subjects, POLLED_MESSAGES));
	g_assert_true(g_str_has_suffix(polled.payloads->str, "||"));

	msd_nats_connection_unsubscribe(conn, id);
	g_assert_true(msd_nats_connection_publish_unchecked(conn, "p.after", "x", 1, &error));
	g_assert_no_error(error);
	owner.done = FALSE;
	msd_nats_connection_flush_async(conn, 5000, flush_done_cb, &owner);
	WAIT_FOR(owner.done);
	while (g_main_context_iteration(NULL, FALSE))
		;
	g_assert_cmpuint(polled.subjects->len, ==, POLLED_MESSAGES + 1);

	msd_nats_connection_close(conn);
	msd_nats_connection_set_state(conn, MESHSYNC_BROKER_STATE_CLOSED);
	WAIT_FOR(owner.closed == 1);
	natsOptions_Destroy(opts);
	g_clear_object(&conn);
	g_subprocess_send_signal(server, SIGKILL);
	g_assert_true(g_subprocess_wait(server, NULL, NULL));
	g_array_unref(owner.congestion);
	g_ptr_array_unref(polled.subjects);
	g_ptr_array_unref(polled.replies);
	g_string_free(polled.payloads, TRUE);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/nats-connection/unattached", test_unattached);
	g_test_add_func("/nats-connection/clean-error-text", test_clean_error_text);
	g_test_add_func("/nats-connection/server", test_server);
	g_test_add_func("/nats-connection/polled", test_polled);
	return g_test_run();
}
