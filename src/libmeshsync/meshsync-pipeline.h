/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#if !defined(__MESHSYNC_H_INSIDE__) && !defined(MESHSYNC_COMPILATION)
#error "Only <libmeshsync/meshsync.h> can be included directly."
#endif

#include <gio/gio.h>

#include "meshsync-stage.h"
#include "meshsync-version.h"

G_BEGIN_DECLS

#define MESHSYNC_TYPE_PIPELINE (meshsync_pipeline_get_type())
MESHSYNC_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE(MeshSyncPipeline, meshsync_pipeline, MESHSYNC, PIPELINE, GObject)

MESHSYNC_AVAILABLE_IN_ALL
MeshSyncPipeline *meshsync_pipeline_new(void);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_pipeline_add_stage(MeshSyncPipeline *self, MeshSyncStage *stage);
MESHSYNC_AVAILABLE_IN_ALL
guint meshsync_pipeline_get_n_stages(MeshSyncPipeline *self);
MESHSYNC_AVAILABLE_IN_ALL
MeshSyncStage *meshsync_pipeline_get_stage(MeshSyncPipeline *self, guint index);
MESHSYNC_AVAILABLE_IN_ALL
gchar **meshsync_pipeline_get_resource_names(MeshSyncPipeline *self);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_pipeline_run_async(MeshSyncPipeline *self,
                                 GCancellable *cancellable,
                                 GAsyncReadyCallback callback,
                                 gpointer user_data);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_pipeline_run_finish(MeshSyncPipeline *self, GAsyncResult *result, GError **error);

G_END_DECLS
