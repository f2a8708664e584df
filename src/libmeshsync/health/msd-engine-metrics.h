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
 * Binds what the engine knows to metrics from outside the engine: the gauges read the
 * handler, broker and broker writer when /metrics is scraped, and resource events are counted
 * by kind and type as the handler announces them. Unbinding removes the series again, so a
 * metrics registry never reads an object that is gone.
 */
void msd_engine_metrics_bind_handler(MsdMetrics *metrics, MeshSyncHandler *handler);
void msd_engine_metrics_unbind_handler(MsdMetrics *metrics, MeshSyncHandler *handler);

void msd_engine_metrics_bind_broker(MsdMetrics *metrics,
                                    MeshSyncBroker *broker,
                                    MeshSyncBrokerWriter *writer);
void msd_engine_metrics_unbind_broker(MsdMetrics *metrics);

G_END_DECLS
