/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

#include "engine/msd-engine-context.h"
#include "meshsync-event-type.h"
#include "meshsync-resource.h"
#include "meshsync-writer.h"

G_BEGIN_DECLS

/*
 * The ordered hand-over of converted events to the writer. Events are delivered one at a time
 * in the order they were pushed:
 *
 *  - a Service waiting for its reachability probe holds every event behind it;
 *  - a writer that is not writable (a broker whose buffer is full) keeps the head event until
 *    it says "writable-changed"; a refused event is tried again, never dropped;
 *  - meanwhile events wait in a coalescing queue (msd-coalescing-queue.h): an update of an
 *    object already waiting replaces its state there, so an outage costs one write per
 *    object changed, not per event read, and the producer keeps reading;
 *  - the producer is asked to pause (property "paused") only once the queue holds the
 *    high-water mark of events or the bytes bound, and to resume at the low mark (and half
 *    the bytes): memory stays bounded and nothing is dropped;
 *  - what was written is flushed once the main loop goes idle, so a burst costs one flush;
 *  - a %MESHSYNC_ERROR_WRITE from the writer (a full disk) fails the delivery: "failed" is
 *    emitted once and nothing more reaches the writer.
 *
 * The announce function (if any) sees every event once, just before its first write attempt.
 * The latency function (if any) is told, for each event pushed with a read time, how long it
 * took from then until the writer took it: one clock read per such event, nothing allocated.
 */
#define MSD_TYPE_DELIVERY (msd_delivery_get_type())
G_DECLARE_FINAL_TYPE(MsdDelivery, msd_delivery, MSD, DELIVERY, GObject)

/* Events waiting (at most one that can still merge per object) before the producer pauses;
 * it resumes at an eighth of that. */
#define MSD_DELIVERY_MAX_WAITING 100000
/* The waiting resources' estimated wire bytes before the producer pauses: a bound on memory
 * when the objects that change are large, as at an initial sync into a slow broker. */
#define MSD_DELIVERY_MAX_WAITING_BYTES (32 * 1024 * 1024)

typedef void (*MsdDeliveryAnnounceFunc)(MeshSyncResource *resource,
                                        MeshSyncEventType event_type,
                                        gpointer user_data);
/* @usec: from the event's read time to its write, in microseconds */
typedef void (*MsdDeliveryLatencyFunc)(gint64 usec, gpointer user_data);

/* NULL @engine: one of its own, from the thread-default context. */
MsdDelivery *msd_delivery_new(MsdEngineContext *engine, MeshSyncWriter *writer);
/* Before anything was delivered. */
void msd_delivery_set_engine_context(MsdDelivery *self, MsdEngineContext *engine);
void
msd_delivery_set_announce_func(MsdDelivery *self, MsdDeliveryAnnounceFunc func, gpointer user_data);
/* NULL @func: no latency is measured. */
void
msd_delivery_set_latency_func(MsdDelivery *self, MsdDeliveryLatencyFunc func, gpointer user_data);
/* The queue lengths that pause and resume the producer (MSD_DELIVERY_MAX_WAITING). */
void msd_delivery_set_watermarks(MsdDelivery *self, guint high, guint low);
/* The waiting bytes that pause the producer (MSD_DELIVERY_MAX_WAITING_BYTES). */
void msd_delivery_set_max_bytes(MsdDelivery *self, gsize max_bytes);

/* Queues @resource (a reference is taken) and delivers what can be delivered now. */
void msd_delivery_push(MsdDelivery *self, MeshSyncResource *resource, MeshSyncEventType type);
/* The same, for an event read at @read_at (g_get_monotonic_time()), whose latency is
 * reported once written; 0 measures nothing. */
void msd_delivery_push_timed(MsdDelivery *self,
                             MeshSyncResource *resource,
                             MeshSyncEventType type,
                             gint64 read_at);

/* Delivers everything still queued at once: a probe still running counts as failed, and a
 * writer that still cannot take an event reports it as not written. Afterwards events are
 * handed over as they come and nothing is flushed in the background. */
void msd_delivery_drain(MsdDelivery *self);

/* Events waiting. */
guint msd_delivery_get_length(MsdDelivery *self);
/* Objects with an event waiting that a newer one can still merge into. */
guint msd_delivery_get_n_waiting_keys(MsdDelivery *self);
/* Events merged into one already waiting, since the delivery was made. */
guint64 msd_delivery_get_n_coalesced(MsdDelivery *self);
gboolean msd_delivery_get_paused(MsdDelivery *self);
gboolean msd_delivery_get_failed(MsdDelivery *self);
guint64 msd_delivery_get_n_delivered(MsdDelivery *self);
/* Events dropped because the writer would not take them (not a write error), when draining. */
guint64 msd_delivery_get_n_not_written(MsdDelivery *self);

G_END_DECLS
