/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncEngine"

#include "config.h"

#include "engine/msd-reconciler.h"
#include "informer/msd-informer.h"

struct _MsdReconciler {
	GObject parent_instance;

	MsdEngineContext *engine; /* (owned) */
	guint interval_ms;
	GSource *timer_source; /* (owned) (nullable) */
	MsdRun *run;           /* (owned) (nullable) */

	/* the tick in progress */
	gboolean ticking;
	guint next;             /* index of the informer to reconcile next */
	MsdInformer *current;   /* (owned) (nullable): the one listing now */
	gulong current_handler; /* its "reconciled" handler */
	guint added, modified, deleted, listed, failed;
	gint64 started_us;
};

G_DEFINE_FINAL_TYPE(MsdReconciler, msd_reconciler, G_TYPE_OBJECT)

enum {
	SIGNAL_TICK_DONE,
	N_SIGNALS,
};

static guint signals[N_SIGNALS];

static void msd_reconciler_step(MsdReconciler *self);
static void msd_reconciler_schedule(MsdReconciler *self);

/* Ticks of many replicas (or of a restarted one) should not line up on the API server. */
static guint
msd_reconciler_jittered(MsdReconciler *self)
{
	guint spread = self->interval_ms / 10;

	return self->interval_ms - spread + (guint)g_random_int_range(0, (gint32)(2 * spread) + 1);
}

static gboolean
msd_reconciler_timer_cb(gpointer user_data)
{
	MsdReconciler *self = user_data;

	msd_source_clear(&self->timer_source);
	msd_reconciler_schedule(self);
	if (self->ticking || self->run == NULL) {
		g_debug("reconcile tick skipped: %s",
		        self->ticking ? "the last one is still listing" : "no synced run");
		return G_SOURCE_REMOVE;
	}
	self->ticking = TRUE;
	self->next = 0;
	self->added = self->modified = self->deleted = self->listed = self->failed = 0;
	self->started_us = g_get_monotonic_time();
	msd_reconciler_step(self);
	return G_SOURCE_REMOVE;
}

static void
msd_reconciler_schedule(MsdReconciler *self)
{
	if (self->interval_ms == 0 || self->timer_source != NULL)
		return;
	self->timer_source = msd_engine_context_add_timeout(
	        self->engine, G_PRIORITY_DEFAULT, msd_reconciler_jittered(self),
	        "[meshsync] reconcile tick", msd_reconciler_timer_cb, self, NULL);
}

static void
msd_reconciler_release_current(MsdReconciler *self)
{
	if (self->current != NULL) {
		g_clear_signal_handler(&self->current_handler, self->current);
		g_clear_object(&self->current);
	}
}

static void
msd_reconciler_finish_tick(MsdReconciler *self)
{
	guint drifted = self->added + self->modified + self->deleted;

	self->ticking = FALSE;
	g_info("reconcile tick: %u drifted (%u adds, %u updates, %u deletes) out of %u "
	       "listed%s in %.2f s",
	       drifted, self->added, self->modified, self->deleted, self->listed,
	       self->failed > 0 ? ", some types not listed" : "",
	       (gdouble)(g_get_monotonic_time() - self->started_us) / G_USEC_PER_SEC);
	g_signal_emit(self, signals[SIGNAL_TICK_DONE], 0, self->added, self->modified,
	              self->deleted, self->listed, self->failed);
}

static void
msd_reconciler_reconciled_cb(MsdInformer *informer,
                             gboolean completed,
                             guint added,
                             guint modified,
                             guint deleted,
                             guint held,
                             MsdReconciler *self)
{
	if (completed) {
		self->added += added;
		self->modified += modified;
		self->deleted += deleted;
		self->listed += held;
	} else {
		self->failed++;
	}
	msd_reconciler_release_current(self);
	msd_reconciler_step(self);
}

/* One type after another: a tick costs the API server one list at a time. */
static void
msd_reconciler_step(MsdReconciler *self)
{
	GPtrArray *informers = msd_run_get_informers(self->run);

	while (self->next < informers->len) {
		MsdInformer *informer = g_ptr_array_index(informers, self->next++);

		self->current = g_object_ref(informer);
		self->current_handler = g_signal_connect(
		        informer, "reconciled", G_CALLBACK(msd_reconciler_reconciled_cb), self);
		if (msd_informer_reconcile(informer))
			return;
		/* not in a steady state (refused, relisting already): nothing to compare now */
		msd_reconciler_release_current(self);
	}
	msd_reconciler_finish_tick(self);
}

void
msd_reconciler_set_run(MsdReconciler *self, MsdRun *run)
{
	g_return_if_fail(MSD_IS_RECONCILER(self));

	if (self->run == run)
		return;
	/* a tick of the old run is abandoned: its informers are gone or going */
	msd_reconciler_release_current(self);
	self->ticking = FALSE;
	g_set_object(&self->run, run);
	msd_reconciler_schedule(self);
}

void
msd_reconciler_forget_informer(MsdReconciler *self, MsdInformer *informer)
{
	g_return_if_fail(MSD_IS_RECONCILER(self));

	/* a stopped informer never says "reconciled": the tick would wait for it for good */
	if (self->current != informer)
		return;
	msd_reconciler_release_current(self);
	msd_reconciler_step(self);
}

void
msd_reconciler_stop(MsdReconciler *self)
{
	g_return_if_fail(MSD_IS_RECONCILER(self));

	msd_source_clear(&self->timer_source);
	msd_reconciler_release_current(self);
	self->ticking = FALSE;
	g_clear_object(&self->run);
	self->interval_ms = 0;
}

static void
msd_reconciler_dispose(GObject *object)
{
	msd_reconciler_stop(MSD_RECONCILER(object));
	G_OBJECT_CLASS(msd_reconciler_parent_class)->dispose(object);
}

static void
msd_reconciler_finalize(GObject *object)
{
	g_clear_object(&MSD_RECONCILER(object)->engine);
	G_OBJECT_CLASS(msd_reconciler_parent_class)->finalize(object);
}

static void
msd_reconciler_class_init(MsdReconcilerClass *klass)
{
	G_OBJECT_CLASS(klass)->dispose = msd_reconciler_dispose;
	G_OBJECT_CLASS(klass)->finalize = msd_reconciler_finalize;

	/* (added, modified, deleted, listed, failed): the drift a tick found, the objects its
	 * lists held and the types whose list failed */
	signals[SIGNAL_TICK_DONE] = g_signal_new(
	        "tick-done", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
	        G_TYPE_NONE, 5, G_TYPE_UINT, G_TYPE_UINT, G_TYPE_UINT, G_TYPE_UINT, G_TYPE_UINT);
}

static void
msd_reconciler_init(MsdReconciler *self)
{
}

MsdReconciler *
msd_reconciler_new(MsdEngineContext *engine, guint interval_ms)
{
	MsdReconciler *self = g_object_new(MSD_TYPE_RECONCILER, NULL);

	self->engine = g_object_ref(engine);
	self->interval_ms = interval_ms;
	return self;
}
