/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

#include "engine/msd-engine-context.h"
#include "informer/msd-informer.h"
#include "kube/msd-kube-client.h"
#include "meshsync-api-resource.h"
#include "meshsync-watch-config.h"
#include "util/msd-json-tokens.h"

G_BEGIN_DECLS

/*
 * Follows the CustomResourceDefinitions, as upstream does while the MeshSync custom resource
 * exists: every CRD added or removed adds or removes its `<plural>.<first version>.<group>`
 * entry in the watch configuration. "synced" is emitted once the CRDs present at start are in
 * (they join the first run); a later addition or removal emits "changed", which asks for a
 * resync. MODIFIED events change nothing, as upstream.
 */
#define MSD_TYPE_CRD_FOLLOWER (msd_crd_follower_get_type())
G_DECLARE_FINAL_TYPE(MsdCrdFollower, msd_crd_follower, MSD, CRD_FOLLOWER, GObject)

MsdCrdFollower *msd_crd_follower_new(MsdEngineContext *engine,
                                     MsdKubeClient *client,
                                     MeshSyncApiResource *crds,
                                     MeshSyncWatchConfig *watch);
void msd_crd_follower_start(MsdCrdFollower *self);
void msd_crd_follower_stop(MsdCrdFollower *self);
/* Whether the CRDs present at start were read (or the server refused to list them). */
gboolean msd_crd_follower_get_synced(MsdCrdFollower *self);

/* Every event of the CRD watch is handed to @func first (the infrastructure detection reads
 * the CRDs from here rather than watching them a second time). */
void msd_crd_follower_set_tap(MsdCrdFollower *self, MsdInformerEventFunc func, gpointer user_data);
/* (transfer none): the CRD informer, whose store holds the CRDs present */
MsdInformer *msd_crd_follower_get_informer(MsdCrdFollower *self);

/* The watch-configuration name of the CRD at token @index of @doc (upstream's rule: the first
 * entry of spec.versions), or NULL when it lacks spec.group or spec.names.plural. */
gchar *msd_crd_follower_name_for(const MsdJsonTokens *doc, gint index);

G_END_DECLS
