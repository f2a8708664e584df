/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

#include "engine/msd-engine-options.h"
#include "health/msd-metrics.h"
#include "kube/msd-kube-client.h"
#include "model/msd-model.h"
#include "util/msd-source.h"

G_BEGIN_DECLS

/*
 * What one engine shares with every object it builds: the GMainContext it runs in, captured
 * once from the thread-default context of the thread that made it. Every timer and idle of
 * the engine is attached there through this object, never to the global default context, so
 * several engines run side by side, each on its own thread's loop.
 *
 * It also holds what the engine's event path would otherwise find in ambient state: the
 * options, fixed at start (msd-engine-options.h), and the converter's kept buffer with the
 * redaction switch. And the one kube client (one SoupSession, one connection pool) that the
 * engine's handler, discovery and sessions all send through; it lives as long as the context.
 *
 * A MeshSyncService makes one when it starts and hands it down; a handler (or a session) used
 * on its own makes its own from the thread-default context of the thread that starts it.
 */
#define MSD_TYPE_ENGINE_CONTEXT (msd_engine_context_get_type())
G_DECLARE_FINAL_TYPE(MsdEngineContext, msd_engine_context, MSD, ENGINE_CONTEXT, GObject)

MsdEngineContext *msd_engine_context_new(void);

/* (transfer none) */
GMainContext *msd_engine_context_get_main_context(MsdEngineContext *self);

/* The configuration, copied once (at the handler's start) and never changed after: a second
 * call is a programming error. Before it, the defaults. (transfer none) */
void msd_engine_context_set_options(MsdEngineContext *self, const MsdEngineOptions *options);
const MsdEngineOptions *msd_engine_context_get_options(MsdEngineContext *self);

/* The engine's kube client, made from @config by the first call; later calls return the same
 * client and must name the same configuration. NULL with @error set when @config is unusable
 * (nothing is kept then: a later call tries again). (transfer none) */
MsdKubeClient *msd_engine_context_get_kube_client(MsdEngineContext *self,
                                                  MeshSyncKubeConfig *config,
                                                  GError **error);

/* The engine's metrics registry, which a service that serves /metrics sets once, before it
 * builds the parts that count (request listener, session relay): they take it from here.
 * (transfer none) (nullable): NULL when nothing is exported. */
void msd_engine_context_set_metrics(MsdEngineContext *self, MsdMetrics *metrics);
MsdMetrics *msd_engine_context_get_metrics(MsdEngineContext *self);

/* The converter's state for the engine's events: its kept buffer, and whether Secrets are
 * redacted (the options' redact_secrets). (transfer none) */
MsdConvertState *msd_engine_context_get_convert_state(MsdEngineContext *self);

/* A timer (@interval_ms) or idle source named @name (a static string, as the
 * "[meshsync] ..." names the tests look for), attached to the engine's context. Returns
 * (transfer full) the source: keep it, and end it with msd_source_clear(). */
GSource *msd_engine_context_add_timeout(MsdEngineContext *self,
                                        gint priority,
                                        guint interval_ms,
                                        const gchar *name,
                                        GSourceFunc func,
                                        gpointer data,
                                        GDestroyNotify notify);
GSource *msd_engine_context_add_idle(MsdEngineContext *self,
                                     gint priority,
                                     const gchar *name,
                                     GSourceFunc func,
                                     gpointer data,
                                     GDestroyNotify notify);

G_END_DECLS
