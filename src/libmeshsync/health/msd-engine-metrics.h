/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "health/msd-metrics.h"
#include "meshsync-broker-writer.h"
#include "meshsync-broker.h"
#include "meshsync-handler.h"

G_BEGIN_DECLS

/*
 * Binds what the engine knows to metrics from outside the engine: gauges and counters read
 * the handler, broker and broker writer when /metrics is scraped, resource events are counted
 * by kind and type as the handler announces them, and histograms take each event's latency
 * from the delivery and each type's initial sync time. Unbinding removes the series that read
 * those objects, so a metrics registry never reads an object that is gone; what was counted
 * into the registry (syncs, run failures, events, histograms) stays.
 */
/* Every series the engine feeds (with @broker, the broker's too), at zero, before anything is
 * bound: a scrape during start-up (waiting for the broker) sees them all. */
void msd_engine_metrics_declare(MsdMetrics *metrics, gboolean broker);

void msd_engine_metrics_bind_handler(MsdMetrics *metrics, MeshSyncHandler *handler);
void msd_engine_metrics_unbind_handler(MsdMetrics *metrics, MeshSyncHandler *handler);

void msd_engine_metrics_bind_broker(MsdMetrics *metrics,
                                    MeshSyncBroker *broker,
                                    MeshSyncBrokerWriter *writer);
void msd_engine_metrics_unbind_broker(MsdMetrics *metrics);

G_END_DECLS
