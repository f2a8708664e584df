/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "meshsync-health-server.h"
#include "health/msd-metrics.h"

G_BEGIN_DECLS

void meshsync_health_server_set_metrics(MeshSyncHealthServer *self, MsdMetrics *metrics);
MsdMetrics *meshsync_health_server_get_metrics(MeshSyncHealthServer *self);

G_END_DECLS
