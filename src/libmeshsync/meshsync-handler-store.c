/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSync"

#include "config.h"

#include "meshsync-handler-store.h"
#include "engine/msd-engine-context.h"
#include "meshsync-handler-private.h"
#include "meshsync-resource-private.h"
#include "meshsync-resource.h"
#include "meshsync-watch-config.h"

/* One stored object as the informer-store reply holds it: converted with the engine's state
 * as an ADDED resource of the handler's cluster, or NULL (said) when it cannot be read or its
 * namespace is left out. The request listener's reply and meshsync_handler_dup_store() both
 * answer through it, one object at a time, so that a compressed store's objects are never
 * all decompressed at once. */
MeshSyncResource *
meshsync_handler_store_resource(MeshSyncHandler *self, MsdStoreEntry *entry)
{
	MsdEngineContext *engine = meshsync_handler_get_engine_context(self);
	MeshSyncWatchConfig *watch = meshsync_handler_get_watch_config(self);
	const gchar *cluster_id = meshsync_handler_get_cluster_id(self);
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncResource) resource = NULL;
	g_autoptr(GBytes) object = NULL;
	gsize len = 0;
	const gchar *json;

	/* Upstream replies with objects outside -outputNamespaces; we do not. The entry knows
	 * its namespace: what is left out is neither decompressed nor converted. */
	if (watch != NULL && !meshsync_watch_config_accepts_namespace(watch, entry->namespace_))
		return NULL;
	object = msd_store_entry_dup_object(entry);
	json = g_bytes_get_data(object, &len);
	resource = meshsync_resource_new_from_json_full(
	        json, (gssize)len, MESHSYNC_EVENT_TYPE_ADDED, cluster_id != NULL ? cluster_id : "",
	        engine != NULL ? msd_engine_context_get_convert_state(engine) : NULL, &error);
	if (resource == NULL) {
		g_message("informer-store: an object is left out of the reply: %s", error->message);
		return NULL;
	}
	return g_steal_pointer(&resource);
}

/**
 * meshsync_handler_dup_store:
 * @self: a #MeshSyncHandler
 *
 * Every object the handler holds, converted as an `informer-store` request is answered over
 * NATS: as `ADDED` resources of the handler's cluster, without the objects of namespaces
 * the output namespaces leave out. During a resync it is the last complete store. For a
 * host that answers that request itself, such as the Go package of embedded mode, whose
 * broker is not NATS. The conversion runs in one go on the caller's thread.
 *
 * Returns: (transfer container) (element-type MeshSyncResource) (nullable): the
 *   resources, or %NULL before any run has synced
 */
GPtrArray *
meshsync_handler_dup_store(MeshSyncHandler *self)
{
	g_autoptr(GPtrArray) objects = NULL;
	g_autoptr(GPtrArray) resources = NULL;

	g_return_val_if_fail(MESHSYNC_IS_HANDLER(self), NULL);

	objects = meshsync_handler_dup_complete_objects(self);
	if (objects == NULL)
		return NULL;
	resources = g_ptr_array_new_full(objects->len, g_object_unref);
	for (guint i = 0; i < objects->len; i++) {
		MeshSyncResource *resource =
		        meshsync_handler_store_resource(self, g_ptr_array_index(objects, i));

		if (resource != NULL)
			g_ptr_array_add(resources, resource);
	}
	return g_steal_pointer(&resources);
}
