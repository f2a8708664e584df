/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "meshsync-pipeline.h"
#include "pipeline/msd-run.h"

G_BEGIN_DECLS

/* The run a pipeline belongs to: the engine's own stages register and start its informers.
 * A pipeline made by a program alone has none, and the built-in stages then fail. */
void meshsync_pipeline_set_run(MeshSyncPipeline *self, MsdRun *run);
MsdRun *meshsync_pipeline_get_run(MeshSyncPipeline *self);

G_END_DECLS
