/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncEngine"

#include "config.h"

#include "meshsync-error.h"
#include "meshsync-pipeline.h"
#include "meshsync-stage.h"
#include "util/msd-i18n.h"

/**
 * MeshSyncStage:
 *
 * One step of a [class@MeshSync.Pipeline]. The engine's own stages register the informers
 * of the global resource types, then those of the local ones, then start every informer
 * and wait for the initial state. Programs may add stages of their own, in C by overriding
 * @run_async, in Python or Vala by overriding @run.
 */

typedef struct {
	gchar *name;
} MeshSyncStagePrivate;

G_DEFINE_TYPE_WITH_PRIVATE(MeshSyncStage, meshsync_stage, G_TYPE_OBJECT)

enum {
	PROP_0,
	PROP_NAME,
	N_PROPS,
};

static GParamSpec *properties[N_PROPS];

static gboolean
meshsync_stage_real_run(MeshSyncStage *self, MeshSyncPipeline *pipeline, GError **error)
{
	g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_NOT_SUPPORTED,
	            _("stage %s implements neither run nor run_async"),
	            meshsync_stage_get_name(self));
	return FALSE;
}

static void
meshsync_stage_real_run_async(MeshSyncStage *self,
                              MeshSyncPipeline *pipeline,
                              GCancellable *cancellable,
                              GAsyncReadyCallback callback,
                              gpointer user_data)
{
	g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);
	GError *error = NULL;

	g_task_set_source_tag(task, meshsync_stage_real_run_async);
	if (MESHSYNC_STAGE_GET_CLASS(self)->run(self, pipeline, &error))
		g_task_return_boolean(task, TRUE);
	else
		g_task_return_error(task, error);
}

static gboolean
meshsync_stage_real_run_finish(MeshSyncStage *self, GAsyncResult *result, GError **error)
{
	return g_task_propagate_boolean(G_TASK(result), error);
}

static void
meshsync_stage_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
	MeshSyncStagePrivate *priv = meshsync_stage_get_instance_private(MESHSYNC_STAGE(object));

	switch (prop_id) {
	case PROP_NAME:
		g_value_set_string(value, priv->name);
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
	}
}

static void
meshsync_stage_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
	MeshSyncStagePrivate *priv = meshsync_stage_get_instance_private(MESHSYNC_STAGE(object));

	switch (prop_id) {
	case PROP_NAME:
		g_free(priv->name);
		priv->name = g_value_dup_string(value);
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
	}
}

static void
meshsync_stage_finalize(GObject *object)
{
	MeshSyncStagePrivate *priv = meshsync_stage_get_instance_private(MESHSYNC_STAGE(object));

	g_free(priv->name);
	G_OBJECT_CLASS(meshsync_stage_parent_class)->finalize(object);
}

static void
meshsync_stage_class_init(MeshSyncStageClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->get_property = meshsync_stage_get_property;
	object_class->set_property = meshsync_stage_set_property;
	object_class->finalize = meshsync_stage_finalize;
	klass->run = meshsync_stage_real_run;
	klass->run_async = meshsync_stage_real_run_async;
	klass->run_finish = meshsync_stage_real_run_finish;

	/**
	 * MeshSyncStage:name: (getter get_name)
	 *
	 * The stage's name, used in logs.
	 */
	properties[PROP_NAME] = g_param_spec_string("name", NULL, NULL, "stage",
	                                            G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
	                                                    G_PARAM_STATIC_STRINGS);
	g_object_class_install_properties(object_class, N_PROPS, properties);
}

static void
meshsync_stage_init(MeshSyncStage *self)
{
}

/**
 * meshsync_stage_get_name: (get-property name)
 * @self: a #MeshSyncStage
 *
 * Gets the stage's name.
 *
 * Returns: the name
 */
const gchar *
meshsync_stage_get_name(MeshSyncStage *self)
{
	MeshSyncStagePrivate *priv;

	g_return_val_if_fail(MESHSYNC_IS_STAGE(self), NULL);
	priv = meshsync_stage_get_instance_private(self);
	return priv->name;
}

/**
 * meshsync_stage_run_async:
 * @self: a #MeshSyncStage
 * @pipeline: the pipeline that runs the stage
 * @cancellable: (nullable): cancels the stage when the run is torn down
 * @callback: (scope async): called when the stage is done, in the caller's thread-default
 *   main context
 * @user_data: data for @callback
 *
 * Runs the stage.
 */
void
meshsync_stage_run_async(MeshSyncStage *self,
                         MeshSyncPipeline *pipeline,
                         GCancellable *cancellable,
                         GAsyncReadyCallback callback,
                         gpointer user_data)
{
	g_return_if_fail(MESHSYNC_IS_STAGE(self));
	g_return_if_fail(MESHSYNC_IS_PIPELINE(pipeline));

	MESHSYNC_STAGE_GET_CLASS(self)->run_async(self, pipeline, cancellable, callback, user_data);
}

/**
 * meshsync_stage_run_finish:
 * @self: a #MeshSyncStage
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Finishes a stage started with [method@MeshSync.Stage.run_async].
 *
 * Returns: %TRUE if the stage succeeded; an error stops the pipeline
 */
gboolean
meshsync_stage_run_finish(MeshSyncStage *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(MESHSYNC_IS_STAGE(self), FALSE);

	return MESHSYNC_STAGE_GET_CLASS(self)->run_finish(self, result, error);
}
