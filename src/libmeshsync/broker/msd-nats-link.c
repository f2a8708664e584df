/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncBroker"

#include "config.h"

#include "broker/msd-nats-link.h"

/* Messages waiting for the main loop; beyond this a stalled loop would only grow memory. */
#define MSD_NATS_LINK_MAX_QUEUED_MESSAGES 100000

struct _MsdNatsLink {
	gatomicrefcount ref;
	GMainContext *context; /* (owned) */
	GMutex lock;           /* protects the fields up to idle */
	GQueue events;         /* (element-type MsdNatsLinkEvent) (owned) */
	guint n_messages;
	guint64 n_dropped;
	GSource *idle; /* (owned) (nullable): scheduled and not yet run */
	MsdNatsLinkHandler handler;
	GObject *owner; /* (unowned) (nullable): loop thread only */
};

void
msd_nats_link_event_free(MsdNatsLinkEvent *event)
{
	g_free(event->subject);
	g_free(event->reply);
	if (event->payload != NULL)
		g_bytes_unref(event->payload);
	g_free(event);
}

MsdNatsLink *
msd_nats_link_new(GMainContext *context, MsdNatsLinkHandler handler, GObject *owner)
{
	MsdNatsLink *link = g_new0(MsdNatsLink, 1);

	g_atomic_ref_count_init(&link->ref);
	link->context = g_main_context_ref(context);
	link->handler = handler;
	link->owner = owner;
	g_mutex_init(&link->lock);
	g_queue_init(&link->events);
	return link;
}

MsdNatsLink *
msd_nats_link_ref(MsdNatsLink *link)
{
	g_atomic_ref_count_inc(&link->ref);
	return link;
}

void
msd_nats_link_unref(gpointer data)
{
	MsdNatsLink *link = data;

	if (!g_atomic_ref_count_dec(&link->ref))
		return;
	g_queue_clear_full(&link->events, (GDestroyNotify)msd_nats_link_event_free);
	if (link->idle != NULL) {
		g_source_destroy(link->idle);
		g_source_unref(link->idle);
	}
	g_mutex_clear(&link->lock);
	g_main_context_unref(link->context);
	g_free(link);
}

void
msd_nats_link_detach(MsdNatsLink *link)
{
	link->owner = NULL;
}

static gboolean
msd_nats_link_idle_cb(gpointer data)
{
	MsdNatsLink *link = data;
	GQueue events = G_QUEUE_INIT;
	MsdNatsLinkEvent *event;

	g_mutex_lock(&link->lock);
	events = link->events;
	g_queue_init(&link->events);
	link->n_messages = 0;
	g_clear_pointer(&link->idle, g_source_unref);
	g_mutex_unlock(&link->lock);

	while ((event = g_queue_pop_head(&events)) != NULL) {
		/* A handler may drop the last reference to the owner. */
		if (link->owner != NULL) {
			g_autoptr(GObject) owner = g_object_ref(link->owner);

			link->handler(owner, event);
		}
		msd_nats_link_event_free(event);
	}
	return G_SOURCE_REMOVE;
}

/* Any thread. */
static void
msd_nats_link_push(MsdNatsLink *link, MsdNatsLinkEvent *event)
{
	g_mutex_lock(&link->lock);
	if (event->kind == MSD_NATS_LINK_EVENT_MESSAGE) {
		if (link->n_messages >= MSD_NATS_LINK_MAX_QUEUED_MESSAGES) {
			link->n_dropped++;
			g_mutex_unlock(&link->lock);
			msd_nats_link_event_free(event);
			return;
		}
		link->n_messages++;
	}
	g_queue_push_tail(&link->events, event);
	if (link->idle == NULL) {
		/* Not g_main_context_invoke(): from a thread without a context of its own it
		 * may run the function right here, on the nats.c thread. */
		link->idle = g_idle_source_new();
		g_source_set_static_name(link->idle, "meshsync-broker-events");
		g_source_set_priority(link->idle, G_PRIORITY_DEFAULT);
		g_source_set_callback(link->idle, msd_nats_link_idle_cb, msd_nats_link_ref(link),
		                      msd_nats_link_unref);
		g_source_attach(link->idle, link->context);
	}
	g_mutex_unlock(&link->lock);
}

/* A subscription's delivery thread. */
void
msd_nats_link_message_cb(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
	MsdNatsLinkEvent *event = g_new0(MsdNatsLinkEvent, 1);
	const gchar *reply = natsMsg_GetReply(msg);

	event->kind = MSD_NATS_LINK_EVENT_MESSAGE;
	event->sid = natsSubscription_GetID(sub);
	event->subject = g_strdup(natsMsg_GetSubject(msg));
	event->reply = reply != NULL && *reply != '\0' ? g_strdup(reply) : NULL;
	event->payload = g_bytes_new(natsMsg_GetData(msg), (gsize)natsMsg_GetDataLength(msg));
	natsMsg_Destroy(msg);
	msd_nats_link_push(closure, event);
}

static void
msd_nats_link_push_simple(void *closure, MsdNatsLinkEventKind kind, natsStatus status)
{
	MsdNatsLinkEvent *event = g_new0(MsdNatsLinkEvent, 1);

	event->kind = kind;
	event->status = status;
	msd_nats_link_push(closure, event);
}

/* The library's async-callback thread, for the four below. */
void
msd_nats_link_disconnected_cb(natsConnection *nc, void *closure)
{
	msd_nats_link_push_simple(closure, MSD_NATS_LINK_EVENT_DISCONNECTED, NATS_OK);
}

/* nats.c's count of connections made after the first; G_MAXUINT64 if it cannot be read,
 * which no confirmation ever matches. Takes the connection lock: never on the loop thread. */
guint64
msd_nats_link_read_reconnects(natsConnection *nc)
{
	natsStatistics *stats = NULL;
	uint64_t reconnects = G_MAXUINT64;

	if (natsStatistics_Create(&stats) == NATS_OK &&
	    natsConnection_GetStats(nc, stats) == NATS_OK)
		natsStatistics_GetCounts(stats, NULL, NULL, NULL, NULL, &reconnects);
	natsStatistics_Destroy(stats);
	return reconnects;
}

void
msd_nats_link_reconnected_cb(natsConnection *nc, void *closure)
{
	MsdNatsLinkEvent *event = g_new0(MsdNatsLinkEvent, 1);

	event->kind = MSD_NATS_LINK_EVENT_RECONNECTED;
	/* Before the loop sends anything on this connection: the replay window's baseline. */
	event->reconnects = msd_nats_link_read_reconnects(nc);
	event->max_payload = natsConnection_GetMaxPayload(nc);
	msd_nats_link_push(closure, event);
}

void
msd_nats_link_closed_cb(natsConnection *nc, void *closure)
{
	msd_nats_link_push_simple(closure, MSD_NATS_LINK_EVENT_CLOSED, NATS_OK);
	/* The last callback of a connection: drop the reference taken before Connect. */
	msd_nats_link_unref(closure);
}

void
msd_nats_link_error_cb(natsConnection *nc, natsSubscription *sub, natsStatus err, void *closure)
{
	msd_nats_link_push_simple(closure, MSD_NATS_LINK_EVENT_ERROR, err);
}

/* The delivery thread is done with the link: no message callback can follow. */
void
msd_nats_link_subscription_complete_cb(void *closure)
{
	msd_nats_link_unref(closure);
}
