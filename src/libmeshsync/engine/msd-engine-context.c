/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncEngine"

#include "config.h"

#include "engine/msd-engine-context.h"

struct _MsdEngineContext {
	GObject parent_instance;

	GMainContext *main_context; /* (owned) */
	MsdConvertState convert;    /* the converter's buffer and redaction, for every event */
	MsdEngineOptions *options;  /* (owned): the defaults until set, once, at start */
	gboolean options_set;
	MsdKubeClient *client; /* (owned) (nullable): made on first use */
	MsdMetrics *metrics;   /* (owned) (nullable): the registry, when the engine exports one */
};

G_DEFINE_FINAL_TYPE(MsdEngineContext, msd_engine_context, G_TYPE_OBJECT)

static void
msd_engine_context_finalize(GObject *object)
{
	MsdEngineContext *self = MSD_ENGINE_CONTEXT(object);

	/* the client's pending callbacks hold their own references: nothing runs on a freed
	 * context */
	g_clear_object(&self->client);
	g_clear_object(&self->metrics);
	g_main_context_unref(self->main_context);
	msd_convert_state_clear(&self->convert);
	msd_engine_options_free(self->options);
	G_OBJECT_CLASS(msd_engine_context_parent_class)->finalize(object);
}

static void
msd_engine_context_class_init(MsdEngineContextClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = msd_engine_context_finalize;
}

static void
msd_engine_context_init(MsdEngineContext *self)
{
	self->main_context = g_main_context_ref_thread_default();
	self->options = msd_engine_options_new();
	msd_convert_state_init(&self->convert, self->options->redact_secrets);
}

MsdEngineContext *
msd_engine_context_new(void)
{
	return g_object_new(MSD_TYPE_ENGINE_CONTEXT, NULL);
}

GMainContext *
msd_engine_context_get_main_context(MsdEngineContext *self)
{
	g_return_val_if_fail(MSD_IS_ENGINE_CONTEXT(self), NULL);

	return self->main_context;
}

GSource *
msd_engine_context_add_timeout(MsdEngineContext *self,
                               gint priority,
                               guint interval_ms,
                               const gchar *name,
                               GSourceFunc func,
                               gpointer data,
                               GDestroyNotify notify)
{
	GSource *source;

	g_return_val_if_fail(MSD_IS_ENGINE_CONTEXT(self), NULL);

	source = g_timeout_source_new(interval_ms);
	g_source_set_priority(source, priority);
	return msd_source_attach_named(source, self->main_context, name, func, data, notify);
}

GSource *
msd_engine_context_add_idle(MsdEngineContext *self,
                            gint priority,
                            const gchar *name,
                            GSourceFunc func,
                            gpointer data,
                            GDestroyNotify notify)
{
	GSource *source;

	g_return_val_if_fail(MSD_IS_ENGINE_CONTEXT(self), NULL);

	source = g_idle_source_new();
	g_source_set_priority(source, priority);
	return msd_source_attach_named(source, self->main_context, name, func, data, notify);
}

MsdKubeClient *
msd_engine_context_get_kube_client(MsdEngineContext *self,
                                   MeshSyncKubeConfig *config,
                                   GError **error)
{
	g_return_val_if_fail(MSD_IS_ENGINE_CONTEXT(self), NULL);
	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(config), NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	if (self->client == NULL)
		self->client = msd_kube_client_new(config, error);
	else
		g_return_val_if_fail(msd_kube_client_get_config(self->client) == config, NULL);
	return self->client;
}

MsdConvertState *
msd_engine_context_get_convert_state(MsdEngineContext *self)
{
	g_return_val_if_fail(MSD_IS_ENGINE_CONTEXT(self), NULL);

	return &self->convert;
}

void
msd_engine_context_set_options(MsdEngineContext *self, const MsdEngineOptions *options)
{
	g_return_if_fail(MSD_IS_ENGINE_CONTEXT(self));
	g_return_if_fail(options != NULL);
	g_return_if_fail(!self->options_set);

	msd_engine_options_free(self->options);
	self->options = msd_engine_options_copy(options);
	self->options_set = TRUE;
	self->convert.redact_secrets = self->options->redact_secrets;
}

const MsdEngineOptions *
msd_engine_context_get_options(MsdEngineContext *self)
{
	g_return_val_if_fail(MSD_IS_ENGINE_CONTEXT(self), NULL);

	return self->options;
}

void
msd_engine_context_set_metrics(MsdEngineContext *self, MsdMetrics *metrics)
{
	g_return_if_fail(MSD_IS_ENGINE_CONTEXT(self));
	g_return_if_fail(self->metrics == NULL);

	g_set_object(&self->metrics, metrics);
}

MsdMetrics *
msd_engine_context_get_metrics(MsdEngineContext *self)
{
	g_return_val_if_fail(MSD_IS_ENGINE_CONTEXT(self), NULL);
	return self->metrics;
}
