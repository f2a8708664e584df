/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#if !defined(__MESHSYNC_H_INSIDE__) && !defined(MESHSYNC_COMPILATION)
#error "Only <libmeshsync/meshsync.h> can be included directly."
#endif

#include <gio/gio.h>

#include "meshsync-bus.h"
#include "meshsync-version.h"

G_BEGIN_DECLS

/**
 * MeshSyncBrokerState:
 * @MESHSYNC_BROKER_STATE_DISCONNECTED: not connected yet
 * @MESHSYNC_BROKER_STATE_CONNECTING: waiting for the broker at start-up
 * @MESHSYNC_BROKER_STATE_CONNECTED: connected
 * @MESHSYNC_BROKER_STATE_RECONNECTING: the connection was lost; publishes are buffered
 * @MESHSYNC_BROKER_STATE_CLOSED: closed for good
 *
 * The state of the connection to the NATS broker.
 */
typedef enum /*< underscore_name=meshsync_broker_state >*/ {
	MESHSYNC_BROKER_STATE_DISCONNECTED,
	MESHSYNC_BROKER_STATE_CONNECTING,
	MESHSYNC_BROKER_STATE_CONNECTED,
	MESHSYNC_BROKER_STATE_RECONNECTING,
	MESHSYNC_BROKER_STATE_CLOSED,
} MeshSyncBrokerState;

#define MESHSYNC_TYPE_BROKER (meshsync_broker_get_type())
MESHSYNC_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE(MeshSyncBroker, meshsync_broker, MESHSYNC, BROKER, GObject)

/**
 * MeshSyncBrokerMessageFunc:
 * @broker: the broker
 * @subject: the subject the message arrived on
 * @reply: (nullable): the reply subject, if the sender gave one
 * @payload: the message body
 * @user_data: the data given to [method@MeshSync.Broker.subscribe]
 *
 * Receives a message, in the main context the broker was created in.
 */
typedef void (*MeshSyncBrokerMessageFunc)(MeshSyncBroker *broker,
                                          const gchar *subject,
                                          const gchar *reply,
                                          GBytes *payload,
                                          gpointer user_data);

MESHSYNC_AVAILABLE_IN_ALL
MeshSyncBroker *meshsync_broker_new(const gchar *url, GError **error);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_broker_set_token(MeshSyncBroker *self, const gchar *token);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_broker_set_credentials_file(MeshSyncBroker *self, const gchar *path);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_broker_set_tls(MeshSyncBroker *self,
                             const gchar *ca_file,
                             const gchar *certificate_file,
                             const gchar *key_file);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_broker_set_connect_timeout(MeshSyncBroker *self, guint seconds);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_broker_set_max_reconnects(MeshSyncBroker *self, gint max_reconnects);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_broker_set_jetstream(MeshSyncBroker *self, gboolean enabled);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_broker_set_jetstream_limits(MeshSyncBroker *self, guint replicas, guint64 max_bytes);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_broker_get_jetstream_active(MeshSyncBroker *self);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_broker_set_jetstream_state(MeshSyncBroker *self, gboolean enabled);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_broker_get_jetstream_state_active(MeshSyncBroker *self);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_broker_set_jetstream_ack_timeout(MeshSyncBroker *self, guint timeout_ms);

MESHSYNC_AVAILABLE_IN_ALL
void meshsync_broker_connect_async(MeshSyncBroker *self,
                                   GCancellable *cancellable,
                                   GAsyncReadyCallback callback,
                                   gpointer user_data);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_broker_connect_finish(MeshSyncBroker *self, GAsyncResult *result, GError **error);

MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_broker_publish(MeshSyncBroker *self,
                                 const gchar *subject,
                                 GBytes *payload,
                                 GError **error);
MESHSYNC_AVAILABLE_IN_ALL
guint meshsync_broker_subscribe(MeshSyncBroker *self,
                                const gchar *subject,
                                const gchar *queue_group,
                                MeshSyncBrokerMessageFunc func,
                                gpointer user_data,
                                GDestroyNotify destroy,
                                GError **error);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_broker_unsubscribe(MeshSyncBroker *self, guint subscription_id);

MESHSYNC_AVAILABLE_IN_ALL
void meshsync_broker_flush_async(MeshSyncBroker *self,
                                 guint timeout_ms,
                                 GCancellable *cancellable,
                                 GAsyncReadyCallback callback,
                                 gpointer user_data);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_broker_flush_finish(MeshSyncBroker *self, GAsyncResult *result, GError **error);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_broker_close(MeshSyncBroker *self);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_broker_close_async(MeshSyncBroker *self,
                                 GCancellable *cancellable,
                                 GAsyncReadyCallback callback,
                                 gpointer user_data);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_broker_close_finish(MeshSyncBroker *self, GAsyncResult *result, GError **error);

MESHSYNC_AVAILABLE_IN_ALL
MeshSyncBrokerState meshsync_broker_get_state(MeshSyncBroker *self);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_broker_get_writable(MeshSyncBroker *self);
MESHSYNC_AVAILABLE_IN_ALL
gint64 meshsync_broker_get_max_payload(MeshSyncBroker *self);
MESHSYNC_AVAILABLE_IN_ALL
guint64 meshsync_broker_get_buffered_bytes(MeshSyncBroker *self);
MESHSYNC_AVAILABLE_IN_ALL
guint64 meshsync_broker_get_reconnects(MeshSyncBroker *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_broker_get_url(MeshSyncBroker *self);

G_END_DECLS
