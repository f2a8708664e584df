/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

#include "engine/msd-engine-context.h"
#include "engine/msd-infra-detector.h"
#include "kube/msd-kube-client.h"
#include "meshsync-discovery.h"
#include "meshsync-watch-config.h"
#include "pipeline/msd-run.h"

G_BEGIN_DECLS

/*
 * Tier 3 of one run: watches the tier-1 run's events through an MsdInfraDetector and, for each
 * detected and enabled infrastructure, either starts a run of its own with the signature's
 * tier-3 types (events to the same consumer) or, when the signature is delegated to an
 * adapter, hands an `infra-detected` envelope to the publish function and starts nothing.
 *
 * A tier-3 run is stopped alone when its infrastructure is no longer detected, and its objects
 * are retracted (DELETED to the consumer): nothing follows them any more. msd_infra_tier_stop()
 * (shutdown, resync) stops every tier-3 run without retracting, as the tier-1 run is stopped.
 *
 * When the tier-1 run watches no CustomResourceDefinitions, the tier watches them itself
 * (names only matter), so that CRD evidence exists in every configuration. When the output
 * filter passes no tier-3 type of any candidate, the tier does nothing at all.
 */
#define MSD_TYPE_INFRA_TIER (msd_infra_tier_get_type())
G_DECLARE_FINAL_TYPE(MsdInfraTier, msd_infra_tier, MSD, INFRA_TIER, GObject)

/* @payload is the whole envelope, to be published on MSD_SUBJECT_INFRA_DETECTED. */
typedef void (*MsdInfraTierPublishFunc)(GBytes *envelope, gpointer user_data);

#define MSD_SUBJECT_INFRA_DETECTED "meshery.meshsync.infra-detected"

/* @enabled, @disabled: fd1's EnabledInfra and DisabledInfra (NULL: the defaults of
 * msd_infra_detector_new()). @watch gives the output filters the tier-3 types obey too. */
MsdInfraTier *msd_infra_tier_new(MsdEngineContext *engine,
                                 MsdKubeClient *client,
                                 MeshSyncDiscovery *discovery,
                                 MeshSyncWatchConfig *watch,
                                 const gchar *const *enabled,
                                 const gchar *const *disabled,
                                 MsdInformerEventFunc event_func,
                                 gpointer event_data);
void msd_infra_tier_set_publish_func(MsdInfraTier *self,
                                     MsdInfraTierPublishFunc func,
                                     gpointer user_data);
void msd_infra_tier_set_cluster_id(MsdInfraTier *self, const gchar *cluster_id);

/* Every event of the tier-1 run, before the consumer sees it. */
void msd_infra_tier_handle_event(MsdInfraTier *self, const MsdInformerEvent *event);
/* The tier-1 run @run has its initial state: detection starts. */
void msd_infra_tier_start(MsdInfraTier *self, MsdRun *run);
/* Where the CRDs are watched already (the CRD follower's informer, whose events the caller
 * hands to msd_infra_tier_handle_event()); NULL: nowhere, the tier watches them itself. May
 * change at any time. */
void msd_infra_tier_set_crd_source(MsdInfraTier *self, MsdInformer *informer);
/* The tier-1 run @run gained or lost types (the live watch list): the evidence it gives and
 * the tier-3 types it leaves are read again. */
void msd_infra_tier_tier1_changed(MsdInfraTier *self, MsdRun *run);
/* EnabledInfra and DisabledInfra (NULL: fd1's defaults) changed in a live watch list: an
 * infrastructure now disabled stops its tier 3 (or is announced gone), one now enabled starts
 * it if detected. */
void msd_infra_tier_set_policy(MsdInfraTier *self,
                               const gchar *const *enabled,
                               const gchar *const *disabled);
void msd_infra_tier_stop(MsdInfraTier *self);

/* The informers of the tier-3 runs now (transfer none), for counters and snapshots. */
GPtrArray *msd_infra_tier_get_informers(MsdInfraTier *self);
gboolean msd_infra_tier_owns(MsdInfraTier *self, MsdInformer *informer);
MsdInfraDetector *msd_infra_tier_get_detector(MsdInfraTier *self);
/* (nullable): the tier's own CRD informer, for the counters only (CRDs are not published) */
MsdInformer *msd_infra_tier_get_crd_informer(MsdInfraTier *self);

G_END_DECLS
