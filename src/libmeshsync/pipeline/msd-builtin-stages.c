/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncEngine"

#include "config.h"

#include "meshsync-error.h"
#include "meshsync-pipeline-private.h"
#include "pipeline/msd-builtin-stages.h"
#include "util/msd-i18n.h"

struct _MsdRegisterStage {
	MeshSyncStage parent_instance;

	MeshSyncWatchStage watch_stage;
};

G_DEFINE_FINAL_TYPE(MsdRegisterStage, msd_register_stage, MESHSYNC_TYPE_STAGE)

static MsdRun *
msd_builtin_stage_get_run(MeshSyncStage *stage, MeshSyncPipeline *pipeline, GError **error)
{
	MsdRun *run = meshsync_pipeline_get_run(pipeline);

	if (run == NULL)
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_NOT_SUPPORTED,
		            _("stage %s only runs inside a MeshSyncHandler's pipeline"),
		            meshsync_stage_get_name(stage));
	return run;
}

static gboolean
msd_register_stage_run(MeshSyncStage *stage, MeshSyncPipeline *pipeline, GError **error)
{
	MsdRegisterStage *self = MSD_REGISTER_STAGE(stage);
	MsdRun *run = msd_builtin_stage_get_run(stage, pipeline, error);

	if (run == NULL)
		return FALSE;
	msd_run_register_stage(run, self->watch_stage);
	return TRUE;
}

static void
msd_register_stage_class_init(MsdRegisterStageClass *klass)
{
	MESHSYNC_STAGE_CLASS(klass)->run = msd_register_stage_run;
}

static void
msd_register_stage_init(MsdRegisterStage *self)
{
}

MeshSyncStage *
msd_register_stage_new(MeshSyncWatchStage watch_stage)
{
	MsdRegisterStage *self =
	        g_object_new(MSD_TYPE_REGISTER_STAGE, "name",
	                     watch_stage == MESHSYNC_WATCH_STAGE_GLOBAL ? "global" : "local", NULL);

	self->watch_stage = watch_stage;
	return MESHSYNC_STAGE(self);
}

struct _MsdStartInformersStage {
	MeshSyncStage parent_instance;
};

G_DEFINE_FINAL_TYPE(MsdStartInformersStage, msd_start_informers_stage, MESHSYNC_TYPE_STAGE)

static void
msd_start_informers_stage_started_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	GError *error = NULL;

	if (!msd_run_start_informers_finish(MSD_RUN(source), result, &error))
		g_task_return_error(task, error);
	else
		g_task_return_boolean(task, TRUE);
}

static void
msd_start_informers_stage_run_async(MeshSyncStage *stage,
                                    MeshSyncPipeline *pipeline,
                                    GCancellable *cancellable,
                                    GAsyncReadyCallback callback,
                                    gpointer user_data)
{
	g_autoptr(GTask) task = g_task_new(stage, cancellable, callback, user_data);
	GError *error = NULL;
	MsdRun *run = msd_builtin_stage_get_run(stage, pipeline, &error);

	g_task_set_source_tag(task, msd_start_informers_stage_run_async);
	if (run == NULL) {
		g_task_return_error(task, error);
		return;
	}
	msd_run_start_informers_async(run, cancellable, msd_start_informers_stage_started_cb,
	                              g_steal_pointer(&task));
}

static void
msd_start_informers_stage_class_init(MsdStartInformersStageClass *klass)
{
	MESHSYNC_STAGE_CLASS(klass)->run_async = msd_start_informers_stage_run_async;
}

static void
msd_start_informers_stage_init(MsdStartInformersStage *self)
{
}

MeshSyncStage *
msd_start_informers_stage_new(void)
{
	return g_object_new(MSD_TYPE_START_INFORMERS_STAGE, "name", "start-informers", NULL);
}
