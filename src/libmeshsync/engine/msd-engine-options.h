/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

#include "meshsync-watch-config.h"

G_BEGIN_DECLS

/*
 * What one engine is configured with, in one place: a service or a handler fills a draft
 * through its setters before start; at start the handler hands a copy to its engine context,
 * which keeps it unchanged for the engine's life and lends it to everything below (set-up
 * chain, runs, reconciler, converter). A new option is a field here, a default in
 * msd_engine_options_new() and the public setter that writes it.
 */
typedef struct {
	MeshSyncWatchConfig *watch; /* (owned) (nullable): the program's; NULL reads the MeshSync
	                             * custom resource (or, without one, the default set) */
	GStrv output_resources;     /* (owned) (nullable): informers limited to these */
	GStrv output_namespaces;    /* (owned) (nullable): events limited to these */
	GStrv namespaces;           /* (owned) (nullable): the watch scope; NULL is the cluster */
	guint shard_index;
	guint shard_total;           /* 0 or 1: not sharded */
	guint reconcile_interval_ms; /* 0: no reconciliation */
	guint retry_initial_ms;      /* 0: the set-up chain's own retry delays */
	guint retry_max_ms;
	gboolean redact_secrets;   /* MESHSYNC_REDACT_SECRETS when the draft was made */
	guint delivery_queue_size; /* events waiting for the output before the informers pause */
	gboolean compress_store;   /* stores hold objects zstd-compressed: the setters, else
	                            * unless MESHSYNC_STORE_COMPRESSION=none when the draft was
	                            * made */
} MsdEngineOptions;

MsdEngineOptions *msd_engine_options_new(void);
MsdEngineOptions *msd_engine_options_copy(const MsdEngineOptions *self);
void msd_engine_options_free(MsdEngineOptions *self);

/* Setters of a draft, for the fields whose value is normalised. */
void msd_engine_options_set_strv(GStrv *field, const gchar *const *value);
/* NULL or an empty list: the whole cluster */
void msd_engine_options_set_namespaces(MsdEngineOptions *self, const gchar *const *namespaces);
void msd_engine_options_set_shard(MsdEngineOptions *self, guint index, guint total);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsdEngineOptions, msd_engine_options_free)

G_END_DECLS
