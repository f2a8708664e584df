/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#if !defined(__MESHSYNC_H_INSIDE__) && !defined(MESHSYNC_COMPILATION)
#error "Only <libmeshsync/meshsync.h> can be included directly."
#endif

#include <gio/gio.h>

#include "meshsync-broker.h"
#include "meshsync-file-writer.h"
#include "meshsync-handler.h"
#include "meshsync-health-server.h"
#include "meshsync-kube-config.h"
#include "meshsync-session.h"
#include "meshsync-version.h"
#include "meshsync-watch-config.h"
#include "meshsync-writer.h"

G_BEGIN_DECLS

#define MESHSYNC_TYPE_SERVICE (meshsync_service_get_type())
MESHSYNC_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE(MeshSyncService, meshsync_service, MESHSYNC, SERVICE, GObject)

MESHSYNC_AVAILABLE_IN_ALL
MeshSyncService *meshsync_service_new(MeshSyncKubeConfig *config);

MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_set_watch_config(MeshSyncService *self, MeshSyncWatchConfig *watch_config);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_set_output_resources(MeshSyncService *self, const gchar *const *resources);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_set_output_namespaces(MeshSyncService *self, const gchar *const *namespaces);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_set_shard(MeshSyncService *self, guint index, guint total);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_set_reconcile_interval(MeshSyncService *self, guint milliseconds);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_set_store_compression(MeshSyncService *self, gboolean compressed);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_set_delivery_queue_size(MeshSyncService *self, guint events);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_set_namespaces(MeshSyncService *self, const gchar *const *namespaces);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_set_output_file(MeshSyncService *self, const gchar *path, gboolean extended);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_set_broker(MeshSyncService *self, MeshSyncBroker *broker);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_set_bus(MeshSyncService *self, MeshSyncBus *bus);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_handle_request(MeshSyncService *self, GBytes *envelope);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_set_content_dedup(MeshSyncService *self, gboolean content_dedup);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_add_writer(MeshSyncService *self, MeshSyncWriter *writer);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_set_health(MeshSyncService *self, const gchar *address, guint port);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_set_flush_timeout(MeshSyncService *self, guint milliseconds);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_set_strict_readiness(MeshSyncService *self, gboolean strict);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_service_get_strict_readiness(MeshSyncService *self);

MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_set_max_sessions(MeshSyncService *self, guint max_sessions);
MESHSYNC_AVAILABLE_IN_ALL
guint meshsync_service_get_max_sessions(MeshSyncService *self);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_set_exec_enabled(MeshSyncService *self, gboolean enabled);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_service_get_exec_enabled(MeshSyncService *self);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_set_exec_namespaces(MeshSyncService *self, const gchar *const *namespaces);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *const *meshsync_service_get_exec_namespaces(MeshSyncService *self);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_set_exec_idle_timeout(MeshSyncService *self, guint seconds);
MESHSYNC_AVAILABLE_IN_ALL
guint meshsync_service_get_exec_idle_timeout(MeshSyncService *self);
MESHSYNC_AVAILABLE_IN_ALL
GPtrArray *meshsync_service_dup_sessions(MeshSyncService *self);

MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_start_async(MeshSyncService *self,
                                  GCancellable *cancellable,
                                  GAsyncReadyCallback callback,
                                  gpointer user_data);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_service_start_finish(MeshSyncService *self, GAsyncResult *result, GError **error);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_service_stop_async(MeshSyncService *self,
                                 GCancellable *cancellable,
                                 GAsyncReadyCallback callback,
                                 gpointer user_data);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_service_stop_finish(MeshSyncService *self, GAsyncResult *result, GError **error);

MESHSYNC_AVAILABLE_IN_ALL
MeshSyncKubeConfig *meshsync_service_get_kube_config(MeshSyncService *self);
MESHSYNC_AVAILABLE_IN_ALL
MeshSyncHandler *meshsync_service_get_handler(MeshSyncService *self);
MESHSYNC_AVAILABLE_IN_ALL
MeshSyncBroker *meshsync_service_get_broker(MeshSyncService *self);
MESHSYNC_AVAILABLE_IN_ALL
MeshSyncFileWriter *meshsync_service_get_file_writer(MeshSyncService *self);
MESHSYNC_AVAILABLE_IN_ALL
MeshSyncHealthServer *meshsync_service_get_health_server(MeshSyncService *self);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_service_get_ready(MeshSyncService *self);

G_END_DECLS
