/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

#include "meshsync-resource.h"
#include "model/msd-model.h"
#include "model/msd-service-endpoint.h"
#include "util/msd-json-tokens.h"

G_BEGIN_DECLS

/*
 * Converts the object at token @index of @doc, a document the caller has tokenized already
 * (a watch line, a list page), without tokenizing it again.
 *
 * @default_kind and @default_api_version (nullable) apply only when the object has no `kind`
 * or `apiVersion` member, as list items do not; metadata.managedFields is never read.
 *
 * The result (wire bytes, every getter, the Service probe state) is byte for byte that of
 * meshsync_resource_new_from_json() on the store's copy of the object,
 * msd_store_entry_new_from_tokens(@doc, @index, @default_kind, @default_api_version).
 * @doc is read during the call only; the resource keeps nothing of it. @cache (nullable, see
 * msd-attribute-cache.h) spares converting a spec seen before; the thread that owns it only.
 * @state (nullable): the engine's conversion state (msd_model_convert_tokens()).
 *
 * Returns: (transfer full): a new resource, or %NULL with @error set when the token at
 *   @index is not a JSON object
 */
MeshSyncResource *meshsync_resource_new_from_tokens(const MsdJsonTokens *doc,
                                                    gint index,
                                                    const gchar *default_kind,
                                                    const gchar *default_api_version,
                                                    MeshSyncEventType event_type,
                                                    const gchar *cluster_id,
                                                    MsdAttributeCache *cache,
                                                    MsdConvertState *state,
                                                    GError **error);

/* meshsync_resource_new_from_json() with the engine's conversion state (nullable). */
MeshSyncResource *meshsync_resource_new_from_json_full(const gchar *json,
                                                       gssize length,
                                                       MeshSyncEventType event_type,
                                                       const gchar *cluster_id,
                                                       MsdConvertState *state,
                                                       GError **error);

/* The Service endpoint still waiting for its reachability probe, or NULL when the resource
 * is ready to be written (see msd-service-endpoint.h for the whole protocol). */
const MsdServiceEndpoint *meshsync_resource_get_pending_endpoint(MeshSyncResource *self);

/* Record the probe's outcome: fills component_metadata (or leaves it null when upstream would
 * publish none) and clears the pending endpoint. Only before the wire bytes are made
 * (meshsync_resource_get_wire_bytes()): completing after that is a programming error. */
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

/* The wire fields, for writers that render them in another form (the snapshot YAML). */
const MsdModel *meshsync_resource_get_model(MeshSyncResource *self);

G_END_DECLS
