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

/**
 * MESHSYNC_HEALTH_PORT:
 *
 * The port upstream MeshSync serves `/healthz` and `/readyz` on.
 */
#define MESHSYNC_HEALTH_PORT 11000

#define MESHSYNC_TYPE_HEALTH_SERVER (meshsync_health_server_get_type())
MESHSYNC_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE(MeshSyncHealthServer, meshsync_health_server, MESHSYNC, HEALTH_SERVER, GObject)

MESHSYNC_AVAILABLE_IN_ALL
MeshSyncHealthServer *meshsync_health_server_new(void);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_health_server_listen(MeshSyncHealthServer *self,
                                       const gchar *address,
                                       guint port,
                                       GError **error);
MESHSYNC_AVAILABLE_IN_ALL
guint meshsync_health_server_get_port(MeshSyncHealthServer *self);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_health_server_set_check(MeshSyncHealthServer *self,
                                      const gchar *name,
                                      gboolean ok,
                                      const gchar *reason);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_health_server_get_ready(MeshSyncHealthServer *self);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_health_server_set_latch(MeshSyncHealthServer *self, gboolean latch);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_health_server_get_latch(MeshSyncHealthServer *self);

G_END_DECLS
