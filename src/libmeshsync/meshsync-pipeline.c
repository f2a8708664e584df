/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncEngine"

#include "config.h"

#include "meshsync-error.h"
#include "meshsync-pipeline-private.h"
#include "util/msd-i18n.h"

/**
 * MeshSyncPipeline:
 *
 * The start-up sequence of one run: an ordered list of [class@MeshSync.Stage]s run one
 * after another; the first stage that fails stops the pipeline (and the run is retried).
 *
 * The engine builds a new pipeline for every run, at start and at every resync, holding its
 * own three stages (register the global resource types, register the local ones, start the
 * informers and wait for their initial state), and offers it to programs through
 * [signal@MeshSync.Handler::pipeline-created] before it runs, so that they can append stages
 * of their own. No stage outlives the run it belongs to.
 *
 * A pipeline is not the event path: once its last stage has completed, resource events go
 * from the informers straight to the handler's delivery queue and its writer, without
 * passing through any stage. Stages run once per run, never once per event.
 */

struct _MeshSyncPipeline {
	GObject parent_instance;

	GPtrArray *stages; /* (owned) (element-type MeshSyncStage) */
	MsdRun *run;       /* (owned) (nullable) */
};

G_DEFINE_FINAL_TYPE(MeshSyncPipeline, meshsync_pipeline, G_TYPE_OBJECT)

typedef struct {
	guint next;
} MeshSyncPipelineRunData;

static void
meshsync_pipeline_finalize(GObject *object)
{
	MeshSyncPipeline *self = MESHSYNC_PIPELINE(object);

	g_ptr_array_unref(self->stages);
	g_clear_object(&self->run);
	G_OBJECT_CLASS(meshsync_pipeline_parent_class)->finalize(object);
}

static void
meshsync_pipeline_class_init(MeshSyncPipelineClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = meshsync_pipeline_finalize;
}

static void
meshsync_pipeline_init(MeshSyncPipeline *self)
{
	self->stages = g_ptr_array_new_with_free_func(g_object_unref);
}

/**
 * meshsync_pipeline_new:
 *
 * Creates an empty pipeline.
 *
 * Returns: (transfer full): a new pipeline
 */
MeshSyncPipeline *
meshsync_pipeline_new(void)
{
	return g_object_new(MESHSYNC_TYPE_PIPELINE, NULL);
}

/**
 * meshsync_pipeline_add_stage:
 * @self: a #MeshSyncPipeline
 * @stage: a stage to run after those added before
 *
 * Appends a stage.
 */
void
meshsync_pipeline_add_stage(MeshSyncPipeline *self, MeshSyncStage *stage)
{
	g_return_if_fail(MESHSYNC_IS_PIPELINE(self));
	g_return_if_fail(MESHSYNC_IS_STAGE(stage));

	g_ptr_array_add(self->stages, g_object_ref(stage));
}

/**
 * meshsync_pipeline_get_n_stages:
 * @self: a #MeshSyncPipeline
 *
 * Counts the stages.
 *
 * Returns: the number of stages
 */
guint
meshsync_pipeline_get_n_stages(MeshSyncPipeline *self)
{
	g_return_val_if_fail(MESHSYNC_IS_PIPELINE(self), 0);
	return self->stages->len;
}

/**
 * meshsync_pipeline_get_stage:
 * @self: a #MeshSyncPipeline
 * @index: a position, from 0
 *
 * Gets a stage.
 *
 * Returns: (transfer none): the stage at @index
 */
MeshSyncStage *
meshsync_pipeline_get_stage(MeshSyncPipeline *self, guint index)
{
	g_return_val_if_fail(MESHSYNC_IS_PIPELINE(self), NULL);
	g_return_val_if_fail(index < self->stages->len, NULL);
	return g_ptr_array_index(self->stages, index);
}

/**
 * meshsync_pipeline_get_resource_names:
 * @self: a #MeshSyncPipeline
 *
 * Lists the resource types whose informers the stages have registered so far, by their
 * watch names (`pods.v1.`), in registration order.
 *
 * Returns: (transfer full) (array zero-terminated=1): the names
 */
gchar **
meshsync_pipeline_get_resource_names(MeshSyncPipeline *self)
{
	g_return_val_if_fail(MESHSYNC_IS_PIPELINE(self), NULL);

	if (self->run == NULL)
		return g_new0(gchar *, 1);
	return msd_run_dup_informer_names(self->run);
}

void
meshsync_pipeline_set_run(MeshSyncPipeline *self, MsdRun *run)
{
	g_set_object(&self->run, run);
}

MsdRun *
meshsync_pipeline_get_run(MeshSyncPipeline *self)
{
	return self->run;
}

static void meshsync_pipeline_run_next(GTask *task);

static void
meshsync_pipeline_stage_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	MeshSyncStage *stage = MESHSYNC_STAGE(source);
	GError *error = NULL;

	if (!meshsync_stage_run_finish(stage, result, &error)) {
		g_prefix_error(&error, _("stage %s: "), meshsync_stage_get_name(stage));
		g_task_return_error(task, error);
		return;
	}
	g_debug("stage %s done", meshsync_stage_get_name(stage));
	meshsync_pipeline_run_next(g_steal_pointer(&task));
}

static void
meshsync_pipeline_run_next(GTask *task)
{
	MeshSyncPipeline *self = g_task_get_source_object(task);
	MeshSyncPipelineRunData *data = g_task_get_task_data(task);
	MeshSyncStage *stage;

	if (g_task_return_error_if_cancelled(task)) {
		g_object_unref(task);
		return;
	}
	if (data->next >= self->stages->len) {
		g_task_return_boolean(task, TRUE);
		g_object_unref(task);
		return;
	}
	stage = g_ptr_array_index(self->stages, data->next++);
	g_debug("stage %s starts", meshsync_stage_get_name(stage));
	meshsync_stage_run_async(stage, self, g_task_get_cancellable(task),
	                         meshsync_pipeline_stage_cb, task);
}

/**
 * meshsync_pipeline_run_async:
 * @self: a #MeshSyncPipeline
 * @cancellable: (nullable): stops the pipeline between and within stages
 * @callback: (scope async): called when every stage is done or one failed, in the caller's
 *   thread-default main context
 * @user_data: data for @callback
 *
 * Runs the stages in order.
 */
void
meshsync_pipeline_run_async(MeshSyncPipeline *self,
                            GCancellable *cancellable,
                            GAsyncReadyCallback callback,
                            gpointer user_data)
{
	GTask *task;

	g_return_if_fail(MESHSYNC_IS_PIPELINE(self));

	task = g_task_new(self, cancellable, callback, user_data);
	g_task_set_source_tag(task, meshsync_pipeline_run_async);
	g_task_set_task_data(task, g_new0(MeshSyncPipelineRunData, 1), g_free);
	meshsync_pipeline_run_next(task);
}

/**
 * meshsync_pipeline_run_finish:
 * @self: a #MeshSyncPipeline
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Finishes a run started with [method@MeshSync.Pipeline.run_async].
 *
 * Returns: %TRUE if every stage succeeded
 */
gboolean
meshsync_pipeline_run_finish(MeshSyncPipeline *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
	return g_task_propagate_boolean(G_TASK(result), error);
}
