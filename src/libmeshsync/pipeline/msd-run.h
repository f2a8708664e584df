/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

#include "meshsync-discovery.h"
#include "meshsync-watch-config.h"
#include "informer/msd-informer.h"
#include "kube/msd-kube-client.h"

G_BEGIN_DECLS

/*
 * One run of the sync pipeline: the informers registered from one discovery, started
 * together, torn down together; a type the watch list gains or loses meanwhile joins or
 * leaves alone (msd_run_add_type(), msd_run_remove_type()). The handler makes a new run at start
 * and at every resync. Every informer hands its changes to the event function given at
 * construction, in the order it produces them; nothing is passed on after msd_run_stop(). The
 * function's data must outlive the run.
 */
#define MSD_TYPE_RUN (msd_run_get_type())
G_DECLARE_FINAL_TYPE(MsdRun, msd_run, MSD, RUN, GObject)

MsdRun *msd_run_new(MsdEngineContext *engine,
                    MsdKubeClient *client,
                    MeshSyncDiscovery *discovery,
                    MeshSyncWatchConfig *config,
                    MsdInformerEventFunc event_func,
                    gpointer event_data);

/* Registers an informer for every name of @stage that passes the resource filter and that
 * the server serves as a watchable type; the others are skipped with a warning naming them. */
void msd_run_register_stage(MsdRun *self, MeshSyncWatchStage stage);

/* A type the watch list gained while the run goes on: its informers (one per namespace of
 * the scope), resolved in the run's discovery (no new discovery: a type it does not know is
 * skipped with a message), started at once if the run has started. Returns how many were
 * added: 0 for a filtered, unknown or already watched type. */
guint msd_run_add_type(MsdRun *self, const gchar *name);
/* A type the watch list lost: its informers are stopped and dropped, and their objects leave
 * the run's stores without any event (they still exist; the run only stops watching them).
 * Returns (transfer full) (element-type MsdInformer) the informers removed, possibly none. */
GPtrArray *msd_run_remove_type(MsdRun *self, const gchar *name);

/* Starts every registered informer and completes once each has delivered its initial state
 * or was refused by the server (403/404, retried in the background). */
void msd_run_start_informers_async(MsdRun *self,
                                   GCancellable *cancellable,
                                   GAsyncReadyCallback callback,
                                   gpointer user_data);
gboolean msd_run_start_informers_finish(MsdRun *self, GAsyncResult *result, GError **error);

/* Called for every informer the run registers, before it starts: how the set-up chain watches
 * the informers' relists and reconnects. */
typedef void (*MsdRunInformerFunc)(MsdRun *run, MsdInformer *informer, gpointer user_data);
void msd_run_set_informer_func(MsdRun *self, MsdRunInformerFunc func, gpointer user_data);
void msd_run_set_namespaces(MsdRun *self, const gchar *const *namespaces);
void msd_run_set_shard(MsdRun *self, guint index, guint total);

void msd_run_stop(MsdRun *self);

/* The types still in their initial list, with the objects each brought so far:
 * "pods.v1.: 12,500, services.v1.: 40"; empty once every type settled. */
gchar *msd_run_describe_listing(MsdRun *self);
/* Resource types with an informer so far, and those of them whose every informer (one per
 * watched namespace) has its initial state. */
void msd_run_count_types(MsdRun *self, guint *started, guint *synced);

void msd_run_pause(MsdRun *self);
void msd_run_resume(MsdRun *self);

GPtrArray *msd_run_get_informers(MsdRun *self);
gchar **msd_run_dup_informer_names(MsdRun *self);

G_END_DECLS
