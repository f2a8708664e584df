/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

#include "engine/msd-engine-context.h"
#include "kube/msd-kube-client.h"
#include "meshsync-api-resource.h"
#include "meshsync-watch-config.h"

G_BEGIN_DECLS

/*
 * Follows the MeshSync resource (meshery/meshery-meshsync) with a list and watch of its
 * namespace, reconnecting as every informer does. "changed" is emitted when the resource
 * appears, goes, or its spec.watch-list is written with other content: a rewrite with the
 * same watch list (an annotation, a status, the same data again) emits nothing.
 */
#define MSD_TYPE_WATCH_LIST_FOLLOWER (msd_watch_list_follower_get_type())
G_DECLARE_FINAL_TYPE(
        MsdWatchListFollower, msd_watch_list_follower, MSD, WATCH_LIST_FOLLOWER, GObject)

MsdWatchListFollower *msd_watch_list_follower_new(MsdEngineContext *engine,
                                                  MsdKubeClient *client,
                                                  MeshSyncApiResource *meshsyncs);
void msd_watch_list_follower_start(MsdWatchListFollower *self);
void msd_watch_list_follower_stop(MsdWatchListFollower *self);

/* The configuration the resource asks for now: its watch list, upstream's whole built-in
 * table when that list cannot be used (said once per content), or NULL while the resource
 * does not exist. */
MeshSyncWatchConfig *msd_watch_list_follower_dup_config(MsdWatchListFollower *self);
gboolean msd_watch_list_follower_get_present(MsdWatchListFollower *self);
/* Whether the first list is in: before it, "not present" means "not known yet". */
gboolean msd_watch_list_follower_get_synced(MsdWatchListFollower *self);

G_END_DECLS
