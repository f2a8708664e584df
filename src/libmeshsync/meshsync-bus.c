/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncBroker"

#include "config.h"

#include "meshsync-bus.h"

/**
 * MeshSyncBus:
 *
 * Subjects to publish on and subscribe to, carrying upstream's NATS envelopes: what the
 * request answers and the log and exec sessions of a [class@MeshSync.Service] need of a
 * broker. [class@MeshSync.Broker] is one (NATS); a host that embeds the engine and has a
 * broker of its own (Meshery Server's in-process channel broker) implements it to receive
 * the sessions' output and hand them their input.
 *
 * Messages of a subscription are delivered on the main context of the service that
 * subscribed, one at a time, in the order they arrived.
 */

G_DEFINE_INTERFACE(MeshSyncBus, meshsync_bus, G_TYPE_OBJECT)

static void
meshsync_bus_default_init(MeshSyncBusInterface *iface)
{
	(void)iface;
}

/**
 * meshsync_bus_publish:
 * @self: a #MeshSyncBus
 * @subject: the subject
 * @payload: the message body
 * @error: return location for a #GError
 *
 * Sends @payload on @subject. It does not wait for a receiver: a %TRUE means the bus took
 * the message.
 *
 * Returns: %TRUE if the bus took the message
 */
gboolean
meshsync_bus_publish(MeshSyncBus *self, const gchar *subject, GBytes *payload, GError **error)
{
	MeshSyncBusInterface *iface;

	g_return_val_if_fail(MESHSYNC_IS_BUS(self), FALSE);
	g_return_val_if_fail(subject != NULL, FALSE);
	g_return_val_if_fail(payload != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	iface = MESHSYNC_BUS_GET_IFACE(self);
	g_return_val_if_fail(iface->publish != NULL, FALSE);
	return iface->publish(self, subject, payload, error);
}

/**
 * meshsync_bus_subscribe:
 * @self: a #MeshSyncBus
 * @subject: the subject
 * @queue_group: (nullable): a queue group: each message goes to one member only
 * @func: (scope notified) (closure user_data) (destroy destroy): called for each message
 * @user_data: data for @func
 * @destroy: (nullable): frees @user_data once the subscription is gone
 * @error: return location for a #GError
 *
 * Subscribes to @subject. A failed subscription calls neither @func nor @destroy.
 *
 * Returns: an id for [method@MeshSync.Bus.unsubscribe], or 0 on error
 */
guint
meshsync_bus_subscribe(MeshSyncBus *self,
                       const gchar *subject,
                       const gchar *queue_group,
                       MeshSyncBusMessageFunc func,
                       gpointer user_data,
                       GDestroyNotify destroy,
                       GError **error)
{
	MeshSyncBusInterface *iface;

	g_return_val_if_fail(MESHSYNC_IS_BUS(self), 0);
	g_return_val_if_fail(subject != NULL, 0);
	g_return_val_if_fail(func != NULL, 0);
	g_return_val_if_fail(error == NULL || *error == NULL, 0);

	iface = MESHSYNC_BUS_GET_IFACE(self);
	g_return_val_if_fail(iface->subscribe != NULL, 0);
	return iface->subscribe(self, subject, queue_group, func, user_data, destroy, error);
}

/**
 * meshsync_bus_unsubscribe:
 * @self: a #MeshSyncBus
 * @subscription_id: an id from [method@MeshSync.Bus.subscribe]
 *
 * Ends a subscription: its function is not called again, and its data is freed.
 */
void
meshsync_bus_unsubscribe(MeshSyncBus *self, guint subscription_id)
{
	MeshSyncBusInterface *iface;

	g_return_if_fail(MESHSYNC_IS_BUS(self));

	iface = MESHSYNC_BUS_GET_IFACE(self);
	g_return_if_fail(iface->unsubscribe != NULL);
	iface->unsubscribe(self, subscription_id);
}
