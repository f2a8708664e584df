/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "meshsync-watch-config.h"

G_BEGIN_DECLS

/*
 * What a watch list change means for the informers of a run, type by type. The comparison
 * lives in one function, meshsync_watch_settings_compare(): a setting that needs a new
 * informer (a list depth, say) is added there and nowhere else.
 */

/* What an informer of one type depends on; @watched FALSE leaves the rest unset. */
typedef struct {
	gboolean watched;
	const gchar *const *events; /* (nullable): published event types */
	MeshSyncWatchDepth depth;   /* what the informer lists and watches (doc/tiers.md) */
} MeshSyncWatchSettings;

typedef enum {
	MESHSYNC_WATCH_CHANGE_NONE,
	MESHSYNC_WATCH_CHANGE_ADDED,    /* newly watched: an informer is started */
	MESHSYNC_WATCH_CHANGE_REMOVED,  /* no longer watched: its informers are dropped */
	MESHSYNC_WATCH_CHANGE_REPLACED, /* watched both ways, but the informer itself differs */
	MESHSYNC_WATCH_CHANGE_EVENTS,   /* only what is published differs: the informer stays */
} MeshSyncWatchChangeKind;

typedef struct {
	gchar *name;
	MeshSyncWatchChangeKind kind;
} MeshSyncWatchChange;

void meshsync_watch_config_get_settings(MeshSyncWatchConfig *self,
                                        const gchar *name,
                                        MeshSyncWatchSettings *settings);
MeshSyncWatchChangeKind meshsync_watch_settings_compare(const MeshSyncWatchSettings *before,
                                                        const MeshSyncWatchSettings *after);

/* Every type whose settings differ between @before and @after, in @after's registration
 * order, then the types only @before watched. Empty when nothing an informer depends on
 * changed. */
GPtrArray *meshsync_watch_config_diff(MeshSyncWatchConfig *before, MeshSyncWatchConfig *after);
void meshsync_watch_change_free(MeshSyncWatchChange *change);

/* A deep copy, output filters included. */
MeshSyncWatchConfig *meshsync_watch_config_copy(MeshSyncWatchConfig *self);

/* Makes @self watch what @source watches, at @source's depths (its tier-config), keeping
 * @self's output filters and, with @keep_crds, the custom resource types added by
 * meshsync_watch_config_add_crd(): the object stays the one everybody holds, only its lists
 * change. */
void meshsync_watch_config_replace_entries(MeshSyncWatchConfig *self,
                                           MeshSyncWatchConfig *source,
                                           gboolean keep_crds);

G_END_DECLS
