/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>
#include <nats/nats.h>

G_BEGIN_DECLS

/*
 * The thread-to-loop link: what nats.c's threads may touch. Its callbacks (given the link as
 * their closure) only queue copies here and attach one idle source to the owner's context;
 * the idle hands the events to the owner's handler on the loop thread, in order. Refcounted:
 * a connection and each of its subscriptions hold a reference until nats.c's last callback.
 */
typedef struct _MsdNatsLink MsdNatsLink;

typedef enum {
	MSD_NATS_LINK_EVENT_MESSAGE,
	MSD_NATS_LINK_EVENT_DISCONNECTED,
	MSD_NATS_LINK_EVENT_RECONNECTED,
	MSD_NATS_LINK_EVENT_CLOSED,
	MSD_NATS_LINK_EVENT_ERROR,
} MsdNatsLinkEventKind;

typedef struct {
	MsdNatsLinkEventKind kind;
	gint64 sid;
	gchar *subject;
	gchar *reply;
	GBytes *payload;
	natsStatus status;
	guint64 reconnects; /* RECONNECTED: nats.c's count, read in the callback */
	gint64 max_payload; /* RECONNECTED: what the new server takes */
} MsdNatsLinkEvent;

/* Loop thread; the owner is held for the call, which may drop the last other reference. */
typedef void (*MsdNatsLinkHandler)(GObject *owner, MsdNatsLinkEvent *event);

MsdNatsLink *msd_nats_link_new(GMainContext *context, MsdNatsLinkHandler handler, GObject *owner);
MsdNatsLink *msd_nats_link_ref(MsdNatsLink *link);
void msd_nats_link_unref(gpointer link);
/* The owner is going away: events still queued are dropped. Loop thread. */
void msd_nats_link_detach(MsdNatsLink *link);
void msd_nats_link_event_free(MsdNatsLinkEvent *event);

/* nats.c callbacks, with the link as closure. The closed callback drops the reference taken
 * for the connection; the completion callback the one taken for the subscription. */
void
msd_nats_link_message_cb(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure);
void msd_nats_link_disconnected_cb(natsConnection *nc, void *closure);
void msd_nats_link_reconnected_cb(natsConnection *nc, void *closure);
void msd_nats_link_closed_cb(natsConnection *nc, void *closure);
void
msd_nats_link_error_cb(natsConnection *nc, natsSubscription *sub, natsStatus err, void *closure);
void msd_nats_link_subscription_complete_cb(void *closure);

/* nats.c's count of connections made after the first; G_MAXUINT64 if it cannot be read,
 * which no confirmation ever matches. Takes the connection lock: never on the loop thread. */
guint64 msd_nats_link_read_reconnects(natsConnection *nc);

G_END_DECLS
