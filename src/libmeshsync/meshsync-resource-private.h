/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

#include "meshsync-resource.h"
#include "model/msd-service-endpoint.h"

G_BEGIN_DECLS

/* The Service endpoint still waiting for its reachability probe, or NULL when the resource
 * is ready to be written (see msd-service-endpoint.h for the whole protocol). */
const MsdServiceEndpoint *meshsync_resource_get_pending_endpoint(MeshSyncResource *self);

/* Record the probe's outcome: fills component_metadata (or leaves it null when upstream would
 * publish none) and clears the pending endpoint. */
void meshsync_resource_complete_probe(MeshSyncResource *self, gboolean reachable);

/* Probe and complete in one go. Completes at once when nothing is pending. The callback runs in
 * the caller's thread-default main context; the resource is then ready to be written. */
void meshsync_resource_probe_async(MeshSyncResource *self,
                                   GCancellable *cancellable,
                                   GAsyncReadyCallback callback,
                                   gpointer user_data);
/* FALSE only when cancelled. */
gboolean
meshsync_resource_probe_finish(MeshSyncResource *self, GAsyncResult *result, GError **error);

/* The component_metadata JSON text, or NULL for null. */
const gchar *meshsync_resource_get_component_metadata(MeshSyncResource *self);

G_END_DECLS
