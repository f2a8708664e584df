/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

#include "meshsync-event-type.h"
#include "meshsync-resource.h"

G_BEGIN_DECLS

/*
 * The events waiting for a writer that cannot take them now, in the order they came, with a
 * latest-value index per object: an ADDED or MODIFIED of an object that already has an
 * ADDED or MODIFIED waiting replaces that event's state instead of queueing behind it, so a
 * burst of updates during a broker outage becomes one write carrying the last state.
 *
 *  - An event merged into takes the newer resource and keeps its type (ADDED then MODIFIED
 *    goes out as ADDED) and its place in the queue: an object's events never reorder, since
 *    only the last one waiting for it is ever merged into; across objects the order is not
 *    kept (the later state goes out where the first one waited).
 *  - A DELETED is never merged and never merged into: ADDED then DELETED go out as both, the
 *    DELETED carrying the state it was read with; an ADDED after a DELETED (the object made
 *    again) waits behind the DELETED as an event of its own.
 *  - An event the writer has seen already (announced, refused, being probed) is sealed:
 *    nothing merges into it, so what was announced is what is written.
 *
 * Events pushed with @coalesce FALSE (the writer is taking events as they come) are not
 * indexed: the hot path costs no hashing. Not a GObject: owned by one MsdDelivery, used on
 * its thread only.
 */
typedef struct {
	MeshSyncResource *resource; /* (owned) */
	MeshSyncEventType event_type;
	gboolean sealed;    /* seen by the writer or its announcement: never merged into */
	gboolean indexed;   /* the latest event waiting for its key, in the index */
	gboolean announced; /* the queue's owner's: announced once, not again on a retry */
	gint64 read_at;     /* when the first event merged here was read; 0: not measured */
	gsize size;         /* its wire size estimate as counted in the bytes; 0: not counted */
} MsdQueuedEvent;

typedef struct _MsdCoalescingQueue MsdCoalescingQueue;

MsdCoalescingQueue *msd_coalescing_queue_new(void);
void msd_coalescing_queue_free(MsdCoalescingQueue *self);

/* Appends an event, or merges it into the one waiting for its key when @coalesce; TRUE when
 * merged. A reference to @resource is taken. */
gboolean msd_coalescing_queue_push(MsdCoalescingQueue *self,
                                   MeshSyncResource *resource,
                                   MeshSyncEventType event_type,
                                   gint64 read_at,
                                   gboolean coalesce);

MsdQueuedEvent *msd_coalescing_queue_peek_head(MsdCoalescingQueue *self);
/* (transfer full): out of the queue and its index; NULL when empty. */
MsdQueuedEvent *msd_coalescing_queue_pop_head(MsdCoalescingQueue *self);
/* Puts back a popped event the writer refused; it is sealed. */
void msd_coalescing_queue_push_head(MsdCoalescingQueue *self, MsdQueuedEvent *event);

void msd_queued_event_free(MsdQueuedEvent *event);

/* Events waiting. */
guint msd_coalescing_queue_get_length(MsdCoalescingQueue *self);
/* Objects with an event that can still be merged into (the index's size). */
guint msd_coalescing_queue_get_n_keys(MsdCoalescingQueue *self);
/* Estimated wire bytes of the resources waiting. */
gsize msd_coalescing_queue_get_bytes(MsdCoalescingQueue *self);
/* Events merged into one waiting, since the queue was made. */
guint64 msd_coalescing_queue_get_n_coalesced(MsdCoalescingQueue *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsdCoalescingQueue, msd_coalescing_queue_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsdQueuedEvent, msd_queued_event_free)

G_END_DECLS
