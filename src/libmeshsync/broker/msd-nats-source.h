/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>
#include <nats/nats.h>

G_BEGIN_DECLS

/* Drives one nats.c connection from a GMainContext instead of its read thread. */
typedef struct _MsdNatsLoop MsdNatsLoop;

MsdNatsLoop *msd_nats_loop_new(GMainContext *context);
MsdNatsLoop *msd_nats_loop_ref(MsdNatsLoop *self);
void msd_nats_loop_unref(MsdNatsLoop *self);
natsStatus msd_nats_loop_install(MsdNatsLoop *self, natsOptions *opts);
gboolean msd_nats_loop_wait_writable(MsdNatsLoop *self, gint timeout_ms);

/* A hook the loop thread calls after it served the socket, outside any nats.c lock. */
typedef void (*MsdNatsLoopFunc)(gpointer user_data);

/* Called each time the loop has pushed the write buffer into the socket: the moment the
 * buffer can have shrunk. Set, or clear with NULL; call on the loop thread. */
void msd_nats_loop_set_written_func(MsdNatsLoop *self, MsdNatsLoopFunc func, gpointer user_data);

/* Called on the loop thread each time the loop has processed what the socket had to read,
 * outside any nats.c lock: the moment a synchronous subscription can have messages. Set, or
 * clear with NULL; call on the loop thread. */
void msd_nats_loop_set_read_func(MsdNatsLoop *self, MsdNatsLoopFunc func, gpointer user_data);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsdNatsLoop, msd_nats_loop_unref)

G_END_DECLS
