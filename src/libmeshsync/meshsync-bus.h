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

#define MESHSYNC_TYPE_BUS (meshsync_bus_get_type())
MESHSYNC_AVAILABLE_IN_ALL
G_DECLARE_INTERFACE(MeshSyncBus, meshsync_bus, MESHSYNC, BUS, GObject)

/**
 * MeshSyncBusMessageFunc:
 * @bus: the bus
 * @subject: the subject the message arrived on
 * @reply: (nullable): the reply subject, if the sender gave one
 * @payload: the message body: an envelope as upstream's NATS messages carry it
 * @user_data: the data given to [method@MeshSync.Bus.subscribe]
 *
 * Receives one message of a subscription, on the main context the bus delivers in.
 */
typedef void (*MeshSyncBusMessageFunc)(MeshSyncBus *bus,
                                       const gchar *subject,
                                       const gchar *reply,
                                       GBytes *payload,
                                       gpointer user_data);

/**
 * MeshSyncBusInterface:
 * @g_iface: the parent interface
 * @publish: sends one message; see [method@MeshSync.Bus.publish]
 * @subscribe: starts a subscription; see [method@MeshSync.Bus.subscribe]
 * @unsubscribe: ends one; see [method@MeshSync.Bus.unsubscribe]
 *
 * The virtual methods of a [iface@MeshSync.Bus].
 */
struct _MeshSyncBusInterface {
	GTypeInterface g_iface;

	gboolean (*publish)(MeshSyncBus *self,
	                    const gchar *subject,
	                    GBytes *payload,
	                    GError **error);
	guint (*subscribe)(MeshSyncBus *self,
	                   const gchar *subject,
	                   const gchar *queue_group,
	                   MeshSyncBusMessageFunc func,
	                   gpointer user_data,
	                   GDestroyNotify destroy,
	                   GError **error);
	void (*unsubscribe)(MeshSyncBus *self, guint subscription_id);
};

MESHSYNC_AVAILABLE_IN_ALL
gboolean
meshsync_bus_publish(MeshSyncBus *self, const gchar *subject, GBytes *payload, GError **error);
MESHSYNC_AVAILABLE_IN_ALL
guint meshsync_bus_subscribe(MeshSyncBus *self,
                             const gchar *subject,
                             const gchar *queue_group,
                             MeshSyncBusMessageFunc func,
                             gpointer user_data,
                             GDestroyNotify destroy,
                             GError **error);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_bus_unsubscribe(MeshSyncBus *self, guint subscription_id);

G_END_DECLS
