/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <string.h>

#include "meshsync-error.h"
#include "broker/msd-nats-connection.h"

/* The publish and subscribe paths against a server are covered through MeshSyncBroker in
 * test-broker.c; these are the connection's answers before the broker handed it a
 * natsConnection, and that none of them reaches the owner. */

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

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/nats-connection/unattached", test_unattached);
	g_test_add_func("/nats-connection/clean-error-text", test_clean_error_text);
	return g_test_run();
}
