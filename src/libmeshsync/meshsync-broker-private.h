/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <nats/nats.h>

#include "meshsync-broker.h"
#include "broker/msd-replay-window.h"

G_BEGIN_DECLS

void meshsync_broker_set_reconnect_buffer_size(MeshSyncBroker *self, gsize bytes);

/* The write-buffer marks of the writable property (4 MiB and 1 MiB by default). */
void meshsync_broker_set_write_buffer_marks(MeshSyncBroker *self, gsize high, gsize low);

/* How often an idle connection is pinged, and how many unanswered pings make it stale
 * (1 s and 3 by default); takes effect at the next connect. */
void meshsync_broker_set_ping(MeshSyncBroker *self, guint interval_ms, guint max_outstanding);

/* The bound of the replay window (64 MiB by default), and how often it is confirmed: every
 * @interval_ms while something is unconfirmed, and after @every messages. */
void meshsync_broker_set_replay_window(MeshSyncBroker *self, gsize max_bytes);
void meshsync_broker_set_confirm_policy(MeshSyncBroker *self, guint interval_ms, guint every);

/* What the replay window holds, and what it did so far. */
typedef struct {
	guint64 bytes;
	guint64 messages;
	guint64 unsent_bytes;
	guint64 mapped_bytes;
	guint64 resent;
	guint64 confirmations;
} MeshSyncBrokerReplayStats;

void meshsync_broker_get_replay_stats(MeshSyncBroker *self, MeshSyncBrokerReplayStats *stats);

/* Whether meshsync_broker_publish() takes @subject. */
gboolean meshsync_broker_subject_is_valid(const gchar *subject);

/* Publishes a resource event through the replay window: kept until the broker confirmed it,
 * sent again after a reconnection. The caller checked the subject with
 * meshsync_broker_subject_is_valid() and the size against meshsync_broker_get_max_payload(),
 * neither is checked again; fails only before the first connect and after close. The message is the
 * @n_parts pieces one after the other, copied once, into the window. */
gboolean meshsync_broker_publish_event(MeshSyncBroker *self,
                                       const gchar *subject,
                                       const MsdReplayPart *parts,
                                       guint n_parts,
                                       GError **error);
/* meshsync_broker_publish_event() on JetStream, with the event's Nats-Msg-Id: kept until its
 * PubAck. The caller picks this path (the broker writer does); it fails with
 * %MESHSYNC_ERROR_NOT_SUPPORTED when the stream of @subject is not in use: the last-state
 * stream for meshery.meshsync.state.*, the event stream otherwise. */
gboolean meshsync_broker_publish_event_jetstream(MeshSyncBroker *self,
                                                 const gchar *subject,
                                                 const MsdReplayPart *parts,
                                                 guint n_parts,
                                                 const gchar *msg_id,
                                                 GError **error);

typedef struct {
	guint64 pending;
	guint64 acked;
	guint64 duplicates;
	guint64 resent;
	guint64 rejected;
} MeshSyncBrokerJetStreamStats;

void meshsync_broker_get_jetstream_stats(MeshSyncBroker *self, MeshSyncBrokerJetStreamStats *stats);

gboolean meshsync_broker_drain_output(MeshSyncBroker *self, guint timeout_ms, GError **error);

G_END_DECLS
