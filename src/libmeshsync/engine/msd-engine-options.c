/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncEngine"

#include "config.h"

#include "engine/msd-delivery.h"
#include "engine/msd-engine-options.h"
#include "model/msd-secret-redact.h"

MsdEngineOptions *
msd_engine_options_new(void)
{
	MsdEngineOptions *self = g_new0(MsdEngineOptions, 1);

	/* read once, here: the event path never looks at the environment. The store is
	 * compressed unless told otherwise: it costs no more CPU per steady-state event than
	 * the measurement's noise, for a fifth of the memory (doc/performance.md, "The
	 * compressed store"). */
	self->redact_secrets = msd_secret_redact_enabled();
	self->compress_store = g_strcmp0(g_getenv("MESHSYNC_STORE_COMPRESSION"), "none") != 0;
	self->delivery_queue_size = MSD_DELIVERY_MAX_WAITING;
	return self;
}

MsdEngineOptions *
msd_engine_options_copy(const MsdEngineOptions *self)
{
	MsdEngineOptions *copy;

	g_return_val_if_fail(self != NULL, NULL);

	copy = g_memdup2(self, sizeof(*self));
	if (self->watch != NULL)
		g_object_ref(self->watch);
	copy->output_resources = g_strdupv(self->output_resources);
	copy->output_namespaces = g_strdupv(self->output_namespaces);
	copy->namespaces = g_strdupv(self->namespaces);
	return copy;
}

void
msd_engine_options_free(MsdEngineOptions *self)
{
	if (self == NULL)
		return;
	g_clear_object(&self->watch);
	g_strfreev(self->output_resources);
	g_strfreev(self->output_namespaces);
	g_strfreev(self->namespaces);
	g_free(self);
}

void
msd_engine_options_set_strv(GStrv *field, const gchar *const *value)
{
	g_strfreev(*field);
	*field = g_strdupv((gchar **)value);
}

void
msd_engine_options_set_namespaces(MsdEngineOptions *self, const gchar *const *namespaces)
{
	g_strfreev(self->namespaces);
	self->namespaces = namespaces != NULL && namespaces[0] != NULL
	                           ? g_strdupv((gchar **)namespaces)
	                           : NULL;
}

void
msd_engine_options_set_shard(MsdEngineOptions *self, guint index, guint total)
{
	self->shard_index = total > 1 ? index : 0;
	self->shard_total = total;
}
