/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * The messages published since the last confirmation, in publish order, each with a sequence
 * number (1, 2, 3, ... for the life of the window). A cursor splits them: the ones before it
 * were handed to the current connection, the ones from it on still have to be sent. Loop
 * thread only; no locking.
 */
typedef struct _MsdReplayWindow MsdReplayWindow;

MsdReplayWindow *msd_replay_window_new(void);
void msd_replay_window_free(MsdReplayWindow *self);

/* One piece of a message's bytes. */
typedef struct {
	gconstpointer data;
	gsize len;
} MsdReplayPart;

guint64 msd_replay_window_append(MsdReplayWindow *self,
                                 const gchar *subject,
                                 gconstpointer data,
                                 gsize len);
/* One message made of @n_parts pieces, copied once, straight into the window. */
guint64 msd_replay_window_append_parts(MsdReplayWindow *self,
                                       const gchar *subject,
                                       const MsdReplayPart *parts,
                                       guint n_parts);

gboolean msd_replay_window_peek_unsent(MsdReplayWindow *self,
                                       const gchar **subject,
                                       gconstpointer *data,
                                       gsize *len);
void msd_replay_window_mark_sent(MsdReplayWindow *self);
guint64 msd_replay_window_rewind(MsdReplayWindow *self);
void msd_replay_window_confirm(MsdReplayWindow *self, guint64 seq);
void msd_replay_window_clear(MsdReplayWindow *self);

guint64 msd_replay_window_get_last_sent(MsdReplayWindow *self);
guint64 msd_replay_window_get_last_seq(MsdReplayWindow *self);
guint64 msd_replay_window_get_n_messages(MsdReplayWindow *self);
guint64 msd_replay_window_get_n_unsent(MsdReplayWindow *self);
gsize msd_replay_window_get_bytes(MsdReplayWindow *self);
gsize msd_replay_window_get_unsent_bytes(MsdReplayWindow *self);
gsize msd_replay_window_get_mapped_bytes(MsdReplayWindow *self);

G_END_DECLS
