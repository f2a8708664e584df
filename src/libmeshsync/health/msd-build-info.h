/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "health/msd-metrics.h"

G_BEGIN_DECLS

/*
 * meshsync_build_info{version,nats_c,glib,libsoup} 1: which meshsync and which libraries
 * answer this scrape, the versions of the libraries loaded at run time rather than those
 * built against, so a dashboard can tell builds apart across a fleet.
 */
void msd_build_info_register(MsdMetrics *metrics);

G_END_DECLS
