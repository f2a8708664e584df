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

#define MESHSYNC_TYPE_KUBE_CONFIG (meshsync_kube_config_get_type())
MESHSYNC_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE(MeshSyncKubeConfig, meshsync_kube_config, MESHSYNC, KUBE_CONFIG, GObject)

MESHSYNC_AVAILABLE_IN_ALL
MeshSyncKubeConfig *
meshsync_kube_config_load(const gchar *kubeconfig, const gchar *context, GError **error);
MESHSYNC_AVAILABLE_IN_ALL
MeshSyncKubeConfig *
meshsync_kube_config_new_from_file(const gchar *path, const gchar *context, GError **error);
MESHSYNC_AVAILABLE_IN_ALL
MeshSyncKubeConfig *meshsync_kube_config_new_from_files(const gchar *const *paths,
                                                        const gchar *context,
                                                        GError **error);
MESHSYNC_AVAILABLE_IN_ALL
MeshSyncKubeConfig *meshsync_kube_config_new_from_data(const gchar *data,
                                                       gssize length,
                                                       const gchar *context,
                                                       GError **error);
MESHSYNC_AVAILABLE_IN_ALL
MeshSyncKubeConfig *meshsync_kube_config_new_in_cluster(GError **error);

MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_kube_config_get_server(MeshSyncKubeConfig *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_kube_config_get_context_name(MeshSyncKubeConfig *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_kube_config_get_cluster_name(MeshSyncKubeConfig *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_kube_config_get_user_name(MeshSyncKubeConfig *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_kube_config_get_namespace(MeshSyncKubeConfig *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_kube_config_get_tls_server_name(MeshSyncKubeConfig *self);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_kube_config_get_disable_compression(MeshSyncKubeConfig *self);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_kube_config_get_insecure_skip_tls_verify(MeshSyncKubeConfig *self);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_kube_config_get_http2(MeshSyncKubeConfig *self);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_kube_config_set_http2(MeshSyncKubeConfig *self, gboolean http2);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_kube_config_get_in_cluster(MeshSyncKubeConfig *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_kube_config_get_source(MeshSyncKubeConfig *self);

G_END_DECLS
