/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>
#include <nats/nats.h>

#include "broker/msd-nats-connection.h"
#include "meshsync-event-type.h"
#include "meshsync-resource.h"

G_BEGIN_DECLS

/*
 * Resource events on JetStream: the stream MESHSYNC_EVENTS captures the core subject, so a
 * publish is stored and core subscribers see the same bytes. Every event is kept until its
 * PubAck arrived, sent again after a reconnection or when no ack came in time, and carries a
 * Nats-Msg-Id so that the stream stores a re-sent event once. It publishes and subscribes on
 * the MsdNatsConnection below it and tells its owner (the broker) when its "full" changed.
 * Loop thread only, except the stream set-up, which runs in a worker.
 */
typedef struct _MsdJetStream MsdJetStream;

#define MSD_JETSTREAM_STREAM            "MESHSYNC_EVENTS"
#define MSD_JETSTREAM_DEFAULT_MAX_BYTES ((guint64)256 * 1024 * 1024)
/* The last-state view: one subject per object, the stream keeps its last message. */
#define MSD_JETSTREAM_STATE_STREAM "MESHSYNC_STATE"
#define MSD_JETSTREAM_STATE_PREFIX "meshery.meshsync.state."

/* On @conn; @owner (unowned) gets @full_changed and is the source object of the worker
 * tasks, so that one in flight keeps it, and with it this, alive. */
MsdJetStream *msd_jetstream_new(MsdNatsConnection *conn,
                                GObject *owner,
                                MsdNatsFullChangedFunc full_changed,
                                GMainContext *context);
void msd_jetstream_free(MsdJetStream *self);
void msd_jetstream_set_stream_limits(MsdJetStream *self, guint replicas, guint64 max_bytes);
void msd_jetstream_set_ack_timeout(MsdJetStream *self, guint timeout_ms);
void msd_jetstream_set_state(MsdJetStream *self, gboolean enabled);

/* Ensures the stream on @nc (held for the worker by the caller) for @subject. Finishes with
 * TRUE and msd_jetstream_is_active() telling whether events go to JetStream (FALSE: the
 * server has none, warned once), or with an error for a conflicting stream or a failure. */
void msd_jetstream_ensure_async(MsdJetStream *self,
                                natsConnection *nc,
                                const gchar *subject,
                                GAsyncReadyCallback callback,
                                gpointer user_data);
gboolean msd_jetstream_ensure_finish(MsdJetStream *self, GAsyncResult *result, GError **error);

gboolean msd_jetstream_is_active(MsdJetStream *self);
gboolean msd_jetstream_is_state_active(MsdJetStream *self);

void msd_jetstream_publish(MsdJetStream *self,
                           const gchar *subject,
                           gconstpointer data,
                           gsize len,
                           const gchar *msg_id);

void msd_jetstream_connected(MsdJetStream *self);
void msd_jetstream_disconnected(MsdJetStream *self);
void msd_jetstream_closed(MsdJetStream *self);
void msd_jetstream_resume(MsdJetStream *self);

gboolean msd_jetstream_is_full(MsdJetStream *self);
gboolean msd_jetstream_is_empty(MsdJetStream *self);
void msd_jetstream_wait(MsdJetStream *self, GTask *task, guint timeout_ms);

guint64 msd_jetstream_get_n_pending(MsdJetStream *self);
guint64 msd_jetstream_get_n_acked(MsdJetStream *self);
guint64 msd_jetstream_get_n_duplicates(MsdJetStream *self);
guint64 msd_jetstream_get_n_resent(MsdJetStream *self);
/* Events the server refused for what they are (a stream limit, a bad subject): dropped. */
guint64 msd_jetstream_get_n_rejected(MsdJetStream *self);

/* Upstream's SetID value (base64 of cluster.kind.apiVersion.namespace.name), then
 * ".<resourceVersion>.<EVENT>": a re-sent event has the same id, a new version another. */
gchar *msd_jetstream_msg_id(MeshSyncResource *resource, MeshSyncEventType event_type);

/* `meshery.meshsync.state.<cluster>.<kind>.<namespace>.<name>`, each field encoded as session
 * subjects encode theirs, dots included (an empty namespace is a lone `%`). */
gchar *msd_jetstream_state_subject(MeshSyncResource *resource);

G_END_DECLS
