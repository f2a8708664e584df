/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#if !defined(__MESHSYNC_H_INSIDE__) && !defined(MESHSYNC_COMPILATION)
#error "Only <libmeshsync/meshsync.h> can be included directly."
#endif

#include <gio/gio.h>

#include "meshsync-event-type.h"
#include "meshsync-version.h"

G_BEGIN_DECLS

#define MESHSYNC_TYPE_RESOURCE (meshsync_resource_get_type())
MESHSYNC_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE(MeshSyncResource, meshsync_resource, MESHSYNC, RESOURCE, GObject)

MESHSYNC_AVAILABLE_IN_ALL
MeshSyncResource *meshsync_resource_new_from_json(const gchar *json,
                                                  gssize length,
                                                  MeshSyncEventType event_type,
                                                  const gchar *cluster_id,
                                                  GError **error);

MESHSYNC_AVAILABLE_IN_ALL
gchar *meshsync_resource_to_json(MeshSyncResource *self);
MESHSYNC_AVAILABLE_IN_ALL
GBytes *meshsync_resource_get_wire_bytes(MeshSyncResource *self);

MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_resource_get_api_version(MeshSyncResource *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_resource_get_kind(MeshSyncResource *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_resource_get_name(MeshSyncResource *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_resource_get_namespace(MeshSyncResource *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_resource_get_uid(MeshSyncResource *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_resource_get_resource_version(MeshSyncResource *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_resource_get_cluster_id(MeshSyncResource *self);
MESHSYNC_AVAILABLE_IN_ALL
MeshSyncEventType meshsync_resource_get_event_type(MeshSyncResource *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_resource_get_label(MeshSyncResource *self, const gchar *key);

G_END_DECLS
