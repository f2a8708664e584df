/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "engine/msd-delivery.h"
#include "engine/msd-engine-context.h"
#include "engine/msd-infra-tier.h"
#include "informer/msd-informer.h"
#include "meshsync-discovery.h"
#include "meshsync-handler.h"
#include "model/msd-attribute-cache.h"

G_BEGIN_DECLS

/* Every object of the last complete initial state, as store entries, informer by
 * informer: the current run's once it has synced, during a resync the previous run's; NULL
 * before any run has synced. For informer-store replies. */
GPtrArray *meshsync_handler_dup_complete_objects(MeshSyncHandler *self);

/* The current run's discovery, for the daemon's D-Bus resource table: (transfer none),
 * %NULL between runs; its resources are empty until it has completed (server version set). */
/* The informers' counters (relists, watch restarts, events, errors, objects skipped) over every
 * run so far. */
void meshsync_handler_get_counters(MeshSyncHandler *self, MsdInformerCounters *counters);

/* The conversion cache of watch events' specs (msd-attribute-cache.h): its counters, and its
 * budget (before start; 0 for none, which gives the same events, converted every time). */
void meshsync_handler_get_cache_stats(MeshSyncHandler *self, MsdAttributeCacheStats *stats);
void meshsync_handler_set_cache_bytes(MeshSyncHandler *self, gsize max_bytes);

/* For tests: how soon a failed run is tried again (doubling from @initial_ms to @max_ms). */
void meshsync_handler_set_retry_delays(MeshSyncHandler *self, guint initial_ms, guint max_ms);

/* The ordered hand-over to the writer: (transfer none). */
MsdDelivery *meshsync_handler_get_delivery(MeshSyncHandler *self);

/* The engine context everything of the handler runs in: by default one made from the
 * thread-default context at construction; a service hands its own in, before start. */
void meshsync_handler_set_engine_context(MeshSyncHandler *self, MsdEngineContext *engine);
/* (transfer none) */
MsdEngineContext *meshsync_handler_get_engine_context(MeshSyncHandler *self);
/* Replaces the configuration's draft (what the public setters write), before start: a
 * service hands its own over this way. */
void meshsync_handler_set_options(MeshSyncHandler *self, const MsdEngineOptions *options);

/* Where `infra-detected` envelopes of delegated infrastructures go (msd-infra-tier.h); a
 * service with a broker publishes them. */
void meshsync_handler_set_infra_publish_func(MeshSyncHandler *self,
                                             MsdInfraTierPublishFunc func,
                                             gpointer user_data);

/* Called each time an informer of a run has its initial state (every type of every run, a
 * resync's included), e.g. to record how long it took; NULL @func for none. */
typedef void (*MeshSyncHandlerInformerFunc)(MsdInformer *informer, gpointer user_data);
void meshsync_handler_set_informer_synced_func(MeshSyncHandler *self,
                                               MeshSyncHandlerInformerFunc func,
                                               gpointer user_data);
/* One stored object as the informer-store reply holds it, or NULL when it is unreadable
 * (said) or its namespace is left out. (transfer full) */
MeshSyncResource *meshsync_handler_store_resource(MeshSyncHandler *self, MsdStoreEntry *entry);
/* msd_run_describe_listing() of the current run; NULL before the first run exists. */

/* Asked before a MODIFIED event is converted: TRUE when the output would not write the object
 * @uid again (file mode's snapshot holds each object's first state), and the event is dropped
 * unconverted. The service sets it when that snapshot is the only output. */
typedef gboolean (*MeshSyncHandlerUnwrittenFunc)(const gchar *uid, gpointer user_data);
void meshsync_handler_set_unwritten_func(MeshSyncHandler *self,
                                         MeshSyncHandlerUnwrittenFunc func,
                                         gpointer user_data);
/* Events converted into resources, and events dropped: before conversion (namespace filter,
 * unwritten) or by it (an object it cannot read). */
void
meshsync_handler_get_conversions(MeshSyncHandler *self, guint64 *converted, guint64 *unconverted);

G_END_DECLS
