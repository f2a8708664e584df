/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

#include "engine/msd-engine-context.h"
#include "engine/msd-infra-tier.h"

#include "informer/msd-informer.h"
#include "kube/msd-kube-client.h"
#include "meshsync-discovery.h"
#include "meshsync-pipeline.h"
#include "meshsync-watch-config.h"
#include "pipeline/msd-run.h"

G_BEGIN_DECLS

/*
 * The set-up chain of a sync, and its retries and resyncs. Each run goes:
 *
 *   discovery -> cluster id (the kube-system uid, read once) -> watch configuration (chosen
 *   once: the program's, else the MeshSync custom resource with its CRD follower, else the
 *   default) -> the CRDs present at start -> a fresh MsdRun and MeshSyncPipeline (register
 *   global types, register local types, start informers) -> ready.
 *
 * A run that fails on the way (server unreachable, discovery refused) is torn down and tried
 * again after a growing, jittered delay; "run-failed" reports each failure. A resync, asked for
 * or caused by a CRD added or removed later, waits for a quiet period, tears the run down and
 * starts the chain again from discovery with the same watch configuration.
 *
 * Signals: "pipeline-created" (MeshSyncPipeline *): a run built its pipeline, before it
 * starts; "run-failed" (GError *): a run could not get going and will be retried;
 * "run-ended" (): the run was torn down (its informers are gone); "informer-synced"
 * (MsdInformer *): one informer of the run has its initial state. Property "ready": the current
 * run has its complete initial state. Property "cluster-id".
 */
#define MSD_TYPE_RUN_SETUP (msd_run_setup_get_type())
G_DECLARE_FINAL_TYPE(MsdRunSetup, msd_run_setup, MSD, RUN_SETUP, GObject)

MsdRunSetup *msd_run_setup_new(MsdEngineContext *engine,
                               MsdKubeClient *client,
                               MsdInformerEventFunc event_func,
                               gpointer event_data);

/* Its configuration (watch config, filters, scope, shard, reconcile interval, retry delays) is
 * @engine's options, fixed before the start. The quiet period of a resync may change at any
 * time. */
void msd_run_setup_set_resync_delay(MsdRunSetup *self, guint milliseconds);

void msd_run_setup_start(MsdRunSetup *self);
void msd_run_setup_stop(MsdRunSetup *self);
void msd_run_setup_request_resync(MsdRunSetup *self);

/* The current run, if its pipeline exists: (transfer none) (nullable). */
MsdRun *msd_run_setup_get_run(MsdRunSetup *self);
/* The current run's discovery: (transfer none) (nullable). */
MeshSyncDiscovery *msd_run_setup_get_discovery(MsdRunSetup *self);
MeshSyncWatchConfig *msd_run_setup_get_watch_config(MsdRunSetup *self);
const gchar *msd_run_setup_get_cluster_id(MsdRunSetup *self);
gboolean msd_run_setup_get_ready(MsdRunSetup *self);
gdouble msd_run_setup_get_initial_sync_seconds(MsdRunSetup *self);
/* The informers' counters summed over every run so far, the current one included. */
void msd_run_setup_get_counters(MsdRunSetup *self, MsdInformerCounters *counters);
/* Objects the current run's informers hold. */
guint msd_run_setup_get_n_objects(MsdRunSetup *self);
GPtrArray *msd_run_setup_dup_complete_objects(MsdRunSetup *self);

/* Where `infra-detected` envelopes go (the broker's publish); NULL: they are only logged. */
void msd_run_setup_set_infra_publish_func(MsdRunSetup *self,
                                          MsdInfraTierPublishFunc func,
                                          gpointer user_data);
/* Whether @informer belongs to a tier-3 run (its type is in no watch configuration). */
gboolean msd_run_setup_is_tier3_informer(MsdRunSetup *self, MsdInformer *informer);

G_END_DECLS
