/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#if !defined(__MESHSYNC_H_INSIDE__) && !defined(MESHSYNC_COMPILATION)
#error "Only <libmeshsync/meshsync.h> can be included directly."
#endif

#include <gio/gio.h>

#include "meshsync-api-resource.h"
#include "meshsync-kube-config.h"
#include "meshsync-version.h"

G_BEGIN_DECLS

#define MESHSYNC_TYPE_DISCOVERY (meshsync_discovery_get_type())
MESHSYNC_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE(MeshSyncDiscovery, meshsync_discovery, MESHSYNC, DISCOVERY, GObject)

MESHSYNC_AVAILABLE_IN_ALL
MeshSyncDiscovery *meshsync_discovery_new(MeshSyncKubeConfig *config, GError **error);

MESHSYNC_AVAILABLE_IN_ALL
void meshsync_discovery_run_async(MeshSyncDiscovery *self,
                                  GCancellable *cancellable,
                                  GAsyncReadyCallback callback,
                                  gpointer user_data);
MESHSYNC_AVAILABLE_IN_ALL
gboolean
meshsync_discovery_run_finish(MeshSyncDiscovery *self, GAsyncResult *result, GError **error);

MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_discovery_get_server_version(MeshSyncDiscovery *self);
MESHSYNC_AVAILABLE_IN_ALL
GPtrArray *meshsync_discovery_get_resources(MeshSyncDiscovery *self);
MESHSYNC_AVAILABLE_IN_ALL
MeshSyncApiResource *meshsync_discovery_lookup(MeshSyncDiscovery *self,
                                               const gchar *group,
                                               const gchar *version,
                                               const gchar *plural);

G_END_DECLS
