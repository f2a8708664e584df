/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * A bounded hand-off from the engine's loop to one worker thread that processes items in the
 * order they were pushed. The loop pushes owned items; the thread is started on a batch, so a
 * lone item (the steady state) costs no thread switch: whatever is still queued when the loop
 * waits (msd_write_thread_wait()) is processed by the loop itself, while the thread is idle.
 * At no time do both threads process items, so @func needs no lock of its own.
 *
 * Items are released (@item_free) by the loop, at its next call, never by the thread: they
 * are the loop's allocations, and the allocator makes a thread that frees another's memory
 * wait for that thread's arena lock. Pushed items not yet released number at most twice the
 * capacity.
 *
 * The first error of @func is kept: the items after it are dropped unprocessed, and every
 * later wait returns a copy of it. @notify runs in @context (the engine's), never in the
 * thread: after a failure, and when a full queue has room again.
 */
typedef gboolean (*MsdWriteThreadFunc)(gpointer item, gpointer user_data, GError **error);

typedef struct _MsdWriteThread MsdWriteThread;

MsdWriteThread *msd_write_thread_new(const gchar *name,
                                     guint capacity,
                                     guint batch,
                                     MsdWriteThreadFunc func,
                                     GDestroyNotify item_free,
                                     GSourceFunc notify,
                                     gpointer user_data,
                                     GMainContext *context);
void msd_write_thread_push(MsdWriteThread *self, gpointer item);
gboolean msd_write_thread_is_full(MsdWriteThread *self);
gboolean msd_write_thread_wait(MsdWriteThread *self, GError **error);
gboolean msd_write_thread_has_failed(MsdWriteThread *self, GError **error);
void msd_write_thread_free(MsdWriteThread *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsdWriteThread, msd_write_thread_free)

G_END_DECLS
