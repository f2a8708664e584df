/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "health/msd-metrics.h"

G_BEGIN_DECLS

/*
 * The standard process_* metrics of Prometheus clients (resident and virtual memory, CPU
 * seconds, open and maximum file descriptors, start time), read from /proc/self when
 * /metrics is scraped. Nothing is registered where /proc/self/stat cannot be read.
 */
void msd_process_metrics_register(MsdMetrics *metrics);

G_END_DECLS
