/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#if !defined(__MESHSYNC_H_INSIDE__) && !defined(MESHSYNC_COMPILATION)
#error "Only <libmeshsync/meshsync.h> can be included directly."
#endif

#include <glib.h>

#include "meshsync-version.h"

G_BEGIN_DECLS

/**
 * MeshSyncEventType:
 * @MESHSYNC_EVENT_TYPE_ADDED: the object was created, or listed (initial sync, store requests)
 * @MESHSYNC_EVENT_TYPE_MODIFIED: the object changed
 * @MESHSYNC_EVENT_TYPE_DELETED: the object was deleted
 *
 * What happened to an object. The names travel on the wire as `ADDED`, `MODIFIED` and
 * `DELETED`; see meshsync_event_type_to_string().
 */
typedef enum /*< underscore_name=meshsync_event_type >*/ {
	MESHSYNC_EVENT_TYPE_ADDED,
	MESHSYNC_EVENT_TYPE_MODIFIED,
	MESHSYNC_EVENT_TYPE_DELETED,
} MeshSyncEventType;

MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_event_type_to_string(MeshSyncEventType event_type);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_event_type_from_string(const gchar *str, MeshSyncEventType *event_type);

G_END_DECLS
