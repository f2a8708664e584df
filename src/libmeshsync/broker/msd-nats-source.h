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

G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsdNatsLoop, msd_nats_loop_unref)

G_END_DECLS
