/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include "broker/msd-nats-link.h"

typedef struct {
	GArray *kinds;    /* (element-type MsdNatsLinkEventKind) */
	GArray *statuses; /* (element-type natsStatus) */
	GThread *thread;  /* where the handler ran last */
	GObject *last_owner;
} Recorder;

static Recorder recorder;

static void
record_cb(GObject *owner, MsdNatsLinkEvent *event)
{
	g_array_append_val(recorder.kinds, event->kind);
	g_array_append_val(recorder.statuses, event->status);
	recorder.thread = g_thread_self();
	recorder.last_owner = owner;
}

static void
recorder_reset(void)
{
	g_clear_pointer(&recorder.kinds, g_array_unref);
	g_clear_pointer(&recorder.statuses, g_array_unref);
	recorder.kinds = g_array_new(FALSE, FALSE, sizeof(MsdNatsLinkEventKind));
	recorder.statuses = g_array_new(FALSE, FALSE, sizeof(natsStatus));
	recorder.thread = NULL;
	recorder.last_owner = NULL;
}

/* What nats.c's async-callback thread does on a broken connection. */
static gpointer
nats_thread(gpointer data)
{
	MsdNatsLink *link = data;

	msd_nats_link_disconnected_cb(NULL, link);
	msd_nats_link_error_cb(NULL, NULL, NATS_SLOW_CONSUMER, link);
	return NULL;
}

static void
test_events_in_order_on_loop(void)
{
	g_autoptr(GMainContext) context = g_main_context_new();
	g_autoptr(GObject) owner = g_object_new(G_TYPE_OBJECT, NULL);
	MsdNatsLink *link = msd_nats_link_new(context, record_cb, owner);
	GThread *thread;

	recorder_reset();
	thread = g_thread_new("nats", nats_thread, link);
	g_thread_join(thread);
	/* queued, not run on the calling thread */
	g_assert_cmpuint(recorder.kinds->len, ==, 0);

	while (recorder.kinds->len < 2)
		g_main_context_iteration(context, TRUE);
	g_assert_cmpint(g_array_index(recorder.kinds, MsdNatsLinkEventKind, 0), ==,
	                MSD_NATS_LINK_EVENT_DISCONNECTED);
	g_assert_cmpint(g_array_index(recorder.kinds, MsdNatsLinkEventKind, 1), ==,
	                MSD_NATS_LINK_EVENT_ERROR);
	g_assert_cmpint(g_array_index(recorder.statuses, natsStatus, 1), ==, NATS_SLOW_CONSUMER);
	g_assert_true(recorder.thread == g_thread_self());
	g_assert_true(recorder.last_owner == owner);
	/* nothing went to the global default context */
	g_assert_false(g_main_context_pending(NULL));
	msd_nats_link_unref(link);
}

static void
test_detached_owner_gets_nothing(void)
{
	g_autoptr(GMainContext) context = g_main_context_new();
	g_autoptr(GObject) owner = g_object_new(G_TYPE_OBJECT, NULL);
	MsdNatsLink *link = msd_nats_link_new(context, record_cb, owner);

	recorder_reset();
	msd_nats_link_disconnected_cb(NULL, link);
	msd_nats_link_detach(link);
	while (g_main_context_pending(context))
		g_main_context_iteration(context, FALSE);
	g_assert_cmpuint(recorder.kinds->len, ==, 0);
	msd_nats_link_unref(link);
}

/* The closed callback is nats.c's last for a connection: it drops the connection's reference,
 * and the CLOSED event still arrives. */
static void
test_closed_drops_connection_reference(void)
{
	g_autoptr(GMainContext) context = g_main_context_new();
	g_autoptr(GObject) owner = g_object_new(G_TYPE_OBJECT, NULL);
	MsdNatsLink *link = msd_nats_link_new(context, record_cb, owner);

	recorder_reset();
	msd_nats_link_closed_cb(NULL, msd_nats_link_ref(link));
	while (recorder.kinds->len < 1)
		g_main_context_iteration(context, TRUE);
	g_assert_cmpint(g_array_index(recorder.kinds, MsdNatsLinkEventKind, 0), ==,
	                MSD_NATS_LINK_EVENT_CLOSED);
	msd_nats_link_unref(link);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/nats-link/events-in-order-on-loop", test_events_in_order_on_loop);
	g_test_add_func("/nats-link/detached-owner-gets-nothing", test_detached_owner_gets_nothing);
	g_test_add_func("/nats-link/closed-drops-connection-reference",
	                test_closed_drops_connection_reference);
	return g_test_run();
}
