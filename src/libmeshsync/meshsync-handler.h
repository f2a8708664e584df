/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#if !defined(__MESHSYNC_H_INSIDE__) && !defined(MESHSYNC_COMPILATION)
#error "Only <libmeshsync/meshsync.h> can be included directly."
#endif

#include <gio/gio.h>

#include "meshsync-discovery.h"
#include "meshsync-kube-config.h"
#include "meshsync-version.h"
#include "meshsync-watch-config.h"
#include "meshsync-writer.h"

G_BEGIN_DECLS

#define MESHSYNC_TYPE_HANDLER (meshsync_handler_get_type())
MESHSYNC_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE(MeshSyncHandler, meshsync_handler, MESHSYNC, HANDLER, GObject)

MESHSYNC_AVAILABLE_IN_ALL
MeshSyncHandler *meshsync_handler_new(MeshSyncKubeConfig *config, MeshSyncWriter *writer);

MESHSYNC_AVAILABLE_IN_ALL
void meshsync_handler_set_watch_config(MeshSyncHandler *self, MeshSyncWatchConfig *watch_config);
MESHSYNC_AVAILABLE_IN_ALL
MeshSyncWatchConfig *meshsync_handler_get_watch_config(MeshSyncHandler *self);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_handler_set_output_resources(MeshSyncHandler *self, const gchar *const *resources);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_handler_set_output_namespaces(MeshSyncHandler *self, const gchar *const *namespaces);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_handler_set_shard(MeshSyncHandler *self, guint index, guint total);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_handler_set_reconcile_interval(MeshSyncHandler *self, guint milliseconds);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_handler_set_store_compression(MeshSyncHandler *self, gboolean compressed);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_handler_set_delivery_queue_size(MeshSyncHandler *self, guint events);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_handler_set_namespaces(MeshSyncHandler *self, const gchar *const *namespaces);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_handler_set_resync_delay(MeshSyncHandler *self, guint milliseconds);

MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_handler_start(MeshSyncHandler *self, GError **error);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_handler_stop(MeshSyncHandler *self);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_handler_resync(MeshSyncHandler *self);

MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_handler_get_ready(MeshSyncHandler *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_handler_get_cluster_id(MeshSyncHandler *self);
MESHSYNC_AVAILABLE_IN_ALL
guint meshsync_handler_get_n_objects(MeshSyncHandler *self);
MESHSYNC_AVAILABLE_IN_ALL
gdouble meshsync_handler_get_initial_sync_seconds(MeshSyncHandler *self);
MESHSYNC_AVAILABLE_IN_ALL
gchar **meshsync_handler_get_resource_names(MeshSyncHandler *self);
MESHSYNC_AVAILABLE_IN_ALL
MeshSyncDiscovery *meshsync_handler_get_discovery(MeshSyncHandler *self);
MESHSYNC_AVAILABLE_IN_ALL
gchar *meshsync_handler_describe_listing(MeshSyncHandler *self);
MESHSYNC_AVAILABLE_IN_ALL
guint meshsync_handler_get_n_synced_types(MeshSyncHandler *self);

G_END_DECLS
