/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#if !defined(__MESHSYNC_H_INSIDE__) && !defined(MESHSYNC_COMPILATION)
#error "Only <libmeshsync/meshsync.h> can be included directly."
#endif

#include <gio/gio.h>

#include "meshsync-version.h"

G_BEGIN_DECLS

typedef struct _MeshSyncPipeline MeshSyncPipeline;

#define MESHSYNC_TYPE_STAGE (meshsync_stage_get_type())
MESHSYNC_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE(MeshSyncStage, meshsync_stage, MESHSYNC, STAGE, GObject)

/**
 * MeshSyncStageClass:
 * @parent_class: the parent class
 * @run: does the stage's work synchronously; the default @run_async calls it. Python and Vala
 *   stages usually implement only this (`do_run`)
 * @run_async: starts the stage's work; the default calls @run
 * @run_finish: finishes what @run_async started
 *
 * The virtual methods of a [class@MeshSync.Stage].
 */
struct _MeshSyncStageClass {
	GObjectClass parent_class;

	gboolean (*run)(MeshSyncStage *self, MeshSyncPipeline *pipeline, GError **error);
	void (*run_async)(MeshSyncStage *self,
	                  MeshSyncPipeline *pipeline,
	                  GCancellable *cancellable,
	                  GAsyncReadyCallback callback,
	                  gpointer user_data);
	gboolean (*run_finish)(MeshSyncStage *self, GAsyncResult *result, GError **error);

	/*< private >*/
	gpointer padding[8];
};

MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_stage_get_name(MeshSyncStage *self);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_stage_run_async(MeshSyncStage *self,
                              MeshSyncPipeline *pipeline,
                              GCancellable *cancellable,
                              GAsyncReadyCallback callback,
                              gpointer user_data);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_stage_run_finish(MeshSyncStage *self, GAsyncResult *result, GError **error);

G_END_DECLS
