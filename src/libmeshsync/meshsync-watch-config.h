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

#define MESHSYNC_TYPE_WATCH_CONFIG (meshsync_watch_config_get_type())
MESHSYNC_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE(MeshSyncWatchConfig, meshsync_watch_config, MESHSYNC, WATCH_CONFIG, GObject)

/**
 * MeshSyncWatchStage:
 * @MESHSYNC_WATCH_STAGE_GLOBAL: registered first (namespaces, nodes, configmaps, ...)
 * @MESHSYNC_WATCH_STAGE_LOCAL: registered second (workloads, services, ...)
 *
 * The pipeline stage a watched resource belongs to. The stage decides only the order in which
 * informers are registered; every informer watches all namespaces.
 */
typedef enum /*< underscore_name=meshsync_watch_stage >*/ {
	MESHSYNC_WATCH_STAGE_GLOBAL,
	MESHSYNC_WATCH_STAGE_LOCAL,
} MeshSyncWatchStage;

/**
 * MeshSyncWatchDepth:
 * @MESHSYNC_WATCH_DEPTH_FULL: whole objects are listed, watched, held and published
 * @MESHSYNC_WATCH_DEPTH_SHALLOW: only the objects' metadata is listed, watched and held; they
 *   are published with an empty spec and status
 *
 * How much of a watched type's objects MeshSync reads, set per type by the `tier-config` of
 * the MeshSync resource's watch list (see doc/tiers.md).
 */
typedef enum /*< underscore_name=meshsync_watch_depth >*/ {
	MESHSYNC_WATCH_DEPTH_FULL,
	MESHSYNC_WATCH_DEPTH_SHALLOW,
} MeshSyncWatchDepth;

MESHSYNC_AVAILABLE_IN_ALL
MeshSyncWatchConfig *meshsync_watch_config_new_default(void);
MESHSYNC_AVAILABLE_IN_ALL
MeshSyncWatchConfig *meshsync_watch_config_new_builtin_table(void);
MESHSYNC_AVAILABLE_IN_ALL
MeshSyncWatchConfig *
meshsync_watch_config_new_from_resource(const gchar *json, gssize length, GError **error);
MESHSYNC_AVAILABLE_IN_ALL
MeshSyncWatchConfig *meshsync_watch_config_new_from_file(const gchar *path, GError **error);

MESHSYNC_AVAILABLE_IN_ALL
gchar **meshsync_watch_config_get_names(MeshSyncWatchConfig *self, MeshSyncWatchStage stage);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *const *meshsync_watch_config_get_events(MeshSyncWatchConfig *self, const gchar *name);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_watch_config_wants_event(MeshSyncWatchConfig *self,
                                           const gchar *name,
                                           const gchar *event_type);

MESHSYNC_AVAILABLE_IN_ALL
MeshSyncWatchDepth meshsync_watch_config_get_depth(MeshSyncWatchConfig *self, const gchar *name);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_watch_config_get_mode(MeshSyncWatchConfig *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *const *meshsync_watch_config_get_enabled_infra(MeshSyncWatchConfig *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *const *meshsync_watch_config_get_disabled_infra(MeshSyncWatchConfig *self);

MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_watch_config_add_crd(MeshSyncWatchConfig *self, const gchar *name);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_watch_config_remove_crd(MeshSyncWatchConfig *self, const gchar *name);

MESHSYNC_AVAILABLE_IN_ALL
void meshsync_watch_config_set_output_resources(MeshSyncWatchConfig *self,
                                                const gchar *const *resources);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_watch_config_set_output_namespaces(MeshSyncWatchConfig *self,
                                                 const gchar *const *namespaces);
MESHSYNC_AVAILABLE_IN_ALL
gchar **meshsync_watch_config_split_list(const gchar *list);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_watch_config_accepts_resource(MeshSyncWatchConfig *self, const gchar *name);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_watch_config_accepts_namespace(MeshSyncWatchConfig *self,
                                                 const gchar *namespace_);

MESHSYNC_AVAILABLE_IN_ALL
gboolean
meshsync_watch_name_parse(const gchar *name, gchar **resource, gchar **version, gchar **group);
MESHSYNC_AVAILABLE_IN_ALL
gchar *meshsync_pluralise(const gchar *word);

G_END_DECLS
