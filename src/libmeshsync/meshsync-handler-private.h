/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "meshsync-discovery.h"
#include "meshsync-handler.h"
#include "health/msd-metrics.h"

G_BEGIN_DECLS

/* Where the handler counts what it does (events by kind and type, conversion errors) and
 * publishes its gauges (objects held, relists, watch restarts, initial sync seconds, ready).
 * The gauges are removed again when the handler goes away. */
void meshsync_handler_set_metrics(MeshSyncHandler *self, MsdMetrics *metrics);

/* Every object the current run's informers hold, as compact JSON (GBytes), informer by
 * informer; empty before the first run has registered informers. For informer-store
 * replies. */
GPtrArray *meshsync_handler_dup_objects(MeshSyncHandler *self);

/* The current run's discovery, for the daemon's D-Bus resource table: (transfer none),
 * %NULL between runs; its resources are empty until it has completed (server version set). */
MeshSyncDiscovery *meshsync_handler_get_discovery(MeshSyncHandler *self);

G_END_DECLS
