/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

#include "engine/msd-engine-context.h"
#include "pipeline/msd-run.h"

G_BEGIN_DECLS

/*
 * Periodic reconciliation (upstream's fd5 design): every interval (jittered by up to a tenth
 * either way), each informer of the current run lists its type afresh, one type after
 * another, and the store's diff passes on exactly one ADDED, MODIFIED or DELETED per object
 * that drifted from what the watches said (a DELETED with the last stored state), nothing for
 * the others. A failed list gives that type up for the tick and never deletes. After each
 * tick: one summary line and "tick-done" (added, modified, deleted, listed, failed types).
 */
#define MSD_TYPE_RECONCILER (msd_reconciler_get_type())
G_DECLARE_FINAL_TYPE(MsdReconciler, msd_reconciler, MSD, RECONCILER, GObject)

MsdReconciler *msd_reconciler_new(MsdEngineContext *engine, guint interval_ms);
/* The run whose informers are reconciled, once its initial sync is complete; NULL between
 * runs (a tick in progress is abandoned). */
void msd_reconciler_set_run(MsdReconciler *self, MsdRun *run);
/* @informer left the run (its type left the watch list): a tick listing it goes on with the
 * next type. */
void msd_reconciler_forget_informer(MsdReconciler *self, MsdInformer *informer);
void msd_reconciler_stop(MsdReconciler *self);

G_END_DECLS
