/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#if !defined(__MESHSYNC_H_INSIDE__) && !defined(MESHSYNC_COMPILATION)
#error "Only <libmeshsync/meshsync.h> can be included directly."
#endif

#include <gio/gio.h>

#include "meshsync-version.h"

G_BEGIN_DECLS

#define MESHSYNC_TYPE_API_RESOURCE (meshsync_api_resource_get_type())
MESHSYNC_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE(MeshSyncApiResource, meshsync_api_resource, MESHSYNC, API_RESOURCE, GObject)

MESHSYNC_AVAILABLE_IN_ALL
MeshSyncApiResource *meshsync_api_resource_new(const gchar *group,
                                               const gchar *version,
                                               const gchar *kind,
                                               const gchar *plural,
                                               gboolean namespaced,
                                               const gchar *const *verbs,
                                               const gchar *const *subresources);

MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_api_resource_get_group(MeshSyncApiResource *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_api_resource_get_version(MeshSyncApiResource *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_api_resource_get_group_version(MeshSyncApiResource *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_api_resource_get_kind(MeshSyncApiResource *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_api_resource_get_plural(MeshSyncApiResource *self);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_api_resource_get_namespaced(MeshSyncApiResource *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *const *meshsync_api_resource_get_verbs(MeshSyncApiResource *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *const *meshsync_api_resource_get_subresources(MeshSyncApiResource *self);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_api_resource_has_verb(MeshSyncApiResource *self, const gchar *verb);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_api_resource_get_watchable(MeshSyncApiResource *self);
MESHSYNC_AVAILABLE_IN_ALL
gchar *meshsync_api_resource_build_path(MeshSyncApiResource *self, const gchar *namespace_);

G_END_DECLS
