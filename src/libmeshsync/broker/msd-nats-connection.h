/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>
#include <nats/nats.h>

#include "meshsync-broker.h"
#include "broker/msd-nats-link.h"

G_BEGIN_DECLS

/*
 * One NATS connection as the loop sees it: the natsOptions of a connect and the connect
 * attempt, the natsConnection once connected, the link that brings nats.c's callbacks to the
 * loop, the source that drives its socket, the write-buffer marks, the holds of worker threads,
 * publishing, subscriptions, flush and drain. The broker keeps the settings, decides when to
 * try again, keeps the state and the writable property, and sits above this with the replay
 * window and JetStream; what changes here reaches it through MsdNatsConnectionOwnerFuncs.
 * Loop thread only, except the nats.c callbacks the link takes.
 */

#define MSD_TYPE_NATS_CONNECTION (msd_nats_connection_get_type())
G_DECLARE_FINAL_TYPE(MsdNatsConnection, msd_nats_connection, MSD, NATS_CONNECTION, GObject)

typedef struct {
	/* a link event other than a message: disconnected, reconnected, closed, error */
	void (*event)(gpointer owner, MsdNatsLinkEvent *event);
	/* the write buffer passed the high mark, or drained below the low one */
	void (*congestion_changed)(gpointer owner, gboolean congested);
	/* a publish found nats.c's reconnect buffer full */
	void (*reconnect_buffer_full)(gpointer owner);
	/* the source pushed the write buffer into the socket */
	void (*written)(gpointer owner);
} MsdNatsConnectionOwnerFuncs;

/* How a layer on this connection (the replay window, JetStream) tells its owner that it became
 * full or stopped being full, so that the owner recomputes what it reports as writable. */
typedef void (*MsdNatsFullChangedFunc)(GObject *owner);

/* Messages of a subscription, on the loop. */
typedef void (*MsdNatsConnectionMessageFunc)(const gchar *subject,
                                             const gchar *reply,
                                             GBytes *payload,
                                             gpointer user_data);

MsdNatsConnection *msd_nats_connection_new(GMainContext *context,
                                           const gchar *url,
                                           const MsdNatsConnectionOwnerFuncs *funcs,
                                           gpointer owner);
/* The owner is going away: nothing reaches it any more. */
void msd_nats_connection_detach(MsdNatsConnection *self);

/* What a connect is made with; the owner keeps these settings and decides on the retries. */
typedef struct {
	const gchar *const *servers;
	const gchar *user;             /* (nullable) */
	const gchar *password;         /* (nullable) */
	const gchar *token;            /* (nullable) */
	const gchar *credentials_file; /* (nullable) */
	gboolean tls;
	const gchar *tls_ca;          /* (nullable) */
	const gchar *tls_certificate; /* (nullable) */
	const gchar *tls_key;         /* (nullable) */
	gint64 attempt_timeout_ms;    /* one connect attempt, handshake included */
	gint max_reconnects;
	gint64 reconnect_wait_ms;
	gsize reconnect_buffer_size; /* 0: nats.c's default */
	gint64 ping_interval_ms;
	gint max_pings_out;
} MsdNatsSettings;

/* The natsOptions of one connect from @settings, with the link's callbacks and the source
 * hooked in; NULL and %MESHSYNC_ERROR_INVALID_CONFIG when nats.c refuses one of them. */
natsOptions *msd_nats_connection_build_options(MsdNatsConnection *self,
                                               const MsdNatsSettings *settings,
                                               GError **error);
/* One connect attempt with @opts (kept by the caller until the callback ran) in a worker
 * thread, which it blocks on TCP and the handshake. The callback runs on the loop, with @self
 * as the source object. */
void msd_nats_connection_connect_async(MsdNatsConnection *self,
                                       natsOptions *opts,
                                       GAsyncReadyCallback callback,
                                       gpointer user_data);
/* TRUE when the attempt connected: the natsConnection is attached if @attach (the owner still
 * wants it), destroyed otherwise, and @reconnects is nats.c's count so far. FALSE with @status
 * and @reason (transfer full), nats.c's status and text, when it did not. */
gboolean msd_nats_connection_connect_finish(MsdNatsConnection *self,
                                            GAsyncResult *result,
                                            gboolean attach,
                                            guint64 *reconnects,
                                            natsStatus *status,
                                            gchar **reason);
gboolean msd_nats_connection_is_attached(MsdNatsConnection *self);
/* The URL without its credentials, for messages. */
const gchar *msd_nats_connection_get_url(MsdNatsConnection *self);
/* The broker's state, which decides what publishing may do. */
void msd_nats_connection_set_state(MsdNatsConnection *self, MeshSyncBrokerState state);
void msd_nats_connection_reconnected(MsdNatsConnection *self, gint64 max_payload);
/* Closes the natsConnection, drops the subscriptions and destroys it once no worker holds it. */
void msd_nats_connection_close(MsdNatsConnection *self);

void msd_nats_connection_set_marks(MsdNatsConnection *self, gsize high, gsize low);
gboolean msd_nats_connection_get_congested(MsdNatsConnection *self);
/* What waited for the socket went with it: no congestion, without telling the owner. */
void msd_nats_connection_clear_congested(MsdNatsConnection *self);
gint64 msd_nats_connection_get_max_payload(MsdNatsConnection *self);
guint64 msd_nats_connection_get_buffered(MsdNatsConnection *self);
gboolean msd_nats_connection_has_output(MsdNatsConnection *self);
gboolean
msd_nats_connection_drain_output(MsdNatsConnection *self, guint timeout_ms, GError **error);
/* Waits in a worker thread until the server answered a PING sent after everything published
 * so far, within @timeout_ms; the callback runs on the loop. */
void msd_nats_connection_flush_async(MsdNatsConnection *self,
                                     guint timeout_ms,
                                     GAsyncReadyCallback callback,
                                     gpointer user_data);
gboolean
msd_nats_connection_flush_finish(MsdNatsConnection *self, GAsyncResult *result, GError **error);

gboolean msd_nats_connection_publish_unchecked(MsdNatsConnection *self,
                                               const gchar *subject,
                                               gconstpointer data,
                                               gsize len,
                                               GError **error);
gboolean msd_nats_connection_publish_with_id(MsdNatsConnection *self,
                                             const gchar *subject,
                                             const gchar *reply,
                                             const gchar *msg_id,
                                             gconstpointer data,
                                             gsize len,
                                             GError **error);
guint msd_nats_connection_subscribe(MsdNatsConnection *self,
                                    const gchar *subject,
                                    const gchar *queue_group,
                                    MsdNatsConnectionMessageFunc func,
                                    gpointer user_data,
                                    GDestroyNotify destroy,
                                    GError **error);
/* A synchronous subscription that the loop drains after each read of the socket, without
 * nats.c's delivery thread: for many small messages the loop itself is waiting for (JetStream
 * acks). A no-responders status reaches @func with a NULL subject and an empty payload. The
 * payload is nats.c's message, valid for the call only: @func must not keep a reference. */
guint msd_nats_connection_subscribe_polled(MsdNatsConnection *self,
                                           const gchar *subject,
                                           MsdNatsConnectionMessageFunc func,
                                           gpointer user_data,
                                           GDestroyNotify destroy,
                                           GError **error);
/* Drains the polled subscriptions soon (in an idle), whether or not the socket was read. */
void msd_nats_connection_poll(MsdNatsConnection *self);
void msd_nats_connection_unsubscribe(MsdNatsConnection *self, guint id);

/* A worker thread's hold on the natsConnection (NULL: none), and its release. */
natsConnection *msd_nats_connection_hold(MsdNatsConnection *self);
void msd_nats_connection_release(MsdNatsConnection *self);

/* nats.c's last error for @status, cleaned of its source places. */
gchar *msd_nats_connection_last_error(natsStatus status);
/* nats.c's error text without the "(conn.c:2088)" places of its sources, which say nothing to
 * the person reading the message. */
gchar *msd_nats_connection_clean_error_text(const gchar *text);

G_END_DECLS
