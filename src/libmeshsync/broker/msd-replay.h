/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

#include "broker/msd-nats-connection.h"
#include "broker/msd-replay-window.h"

G_BEGIN_DECLS

/*
 * Resource events on core NATS without losses: every message published since the last
 * confirmation (a PING answered by a PONG) is kept, sent in order while the connection is up,
 * and sent again, oldest first, after every reconnection. It publishes on the MsdNatsConnection
 * below it and tells its owner (the broker) when its "full" changed; the broker tells it about
 * connects and disconnects. Loop thread only.
 */
typedef struct _MsdReplay MsdReplay;

/* 64 MiB of messages at most before the broker says it is not writable. */
#define MSD_REPLAY_DEFAULT_MAX_BYTES (64 * 1024 * 1024)

/* On @conn; @owner (unowned) gets @full_changed and is the source object of the worker
 * tasks, so that one in flight keeps it, and with it this, alive. */
MsdReplay *msd_replay_new(MsdNatsConnection *conn,
                          GObject *owner,
                          MsdNatsFullChangedFunc full_changed,
                          GMainContext *context);
void msd_replay_free(MsdReplay *self);
void msd_replay_set_max_bytes(MsdReplay *self, gsize max_bytes);
void msd_replay_set_confirm_policy(MsdReplay *self, guint interval_ms, guint every);

void msd_replay_publish(MsdReplay *self,
                        const gchar *subject,
                        const MsdReplayPart *parts,
                        guint n_parts);

void msd_replay_connected(MsdReplay *self, guint64 reconnects);
void msd_replay_disconnected(MsdReplay *self);
void msd_replay_closed(MsdReplay *self);
void msd_replay_resume(MsdReplay *self);

gboolean msd_replay_is_full(MsdReplay *self);
gboolean msd_replay_is_empty(MsdReplay *self);
void msd_replay_wait(MsdReplay *self, GTask *task, guint timeout_ms);

gsize msd_replay_get_bytes(MsdReplay *self);
gsize msd_replay_get_unsent_bytes(MsdReplay *self);
gsize msd_replay_get_mapped_bytes(MsdReplay *self);
guint64 msd_replay_get_n_messages(MsdReplay *self);
guint64 msd_replay_get_n_resent(MsdReplay *self);
guint64 msd_replay_get_n_confirmations(MsdReplay *self);

G_END_DECLS
