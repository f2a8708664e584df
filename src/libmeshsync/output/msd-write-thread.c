/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncOutput"

#include "config.h"

#include "output/msd-write-thread.h"

struct _MsdWriteThread {
	GMutex lock;
	GCond work;      /* the thread waits for a batch or the end */
	GCond idle;      /* the loop waits for the thread to finish, or for room */
	GQueue items;    /* (owned): pushed, not taken yet */
	GQueue done;     /* (owned): processed by the thread, to be released by the loop */
	guint in_flight; /* taken by the thread, not processed yet: they count against the cap */
	guint capacity;
	guint batch;
	gboolean running;       /* the thread owns the processing until the queue is empty */
	gboolean stopping;      /* the thread ends once it is idle */
	gboolean want_room;     /* the loop found the queue full and waits to be told */
	GError *failure;        /* (owned) (nullable): the first error of func */
	GSource *notify_source; /* (owned) (nullable): attached to context, not dispatched yet */
	GThread *thread;        /* (owned) */

	MsdWriteThreadFunc func;
	GDestroyNotify item_free;
	GSourceFunc notify;
	gpointer user_data;
	GMainContext *context; /* (owned) */
};

static gboolean
msd_write_thread_notify_cb(gpointer user_data)
{
	MsdWriteThread *self = user_data;

	g_mutex_lock(&self->lock);
	g_clear_pointer(&self->notify_source, g_source_unref);
	g_mutex_unlock(&self->lock);
	self->notify(self->user_data);
	return G_SOURCE_REMOVE;
}

/* The loop learns of a failure or of room through its own context: nothing of the engine is
 * called from the thread. One pending notification covers any number of reasons. */
static void
msd_write_thread_schedule_notify_locked(MsdWriteThread *self)
{
	if (self->notify_source != NULL)
		return;
	self->notify_source = g_idle_source_new();
	g_source_set_name(self->notify_source, "[meshsync] snapshot writer thread");
	g_source_set_callback(self->notify_source, msd_write_thread_notify_cb, self, NULL);
	g_source_attach(self->notify_source, self->context);
}

/* Moves the items of @from to the end of @to, in constant time. */
static void
msd_write_thread_queue_append(GQueue *to, GQueue *from)
{
	if (from->head == NULL)
		return;
	if (to->tail == NULL) {
		*to = *from;
	} else {
		to->tail->next = from->head;
		from->head->prev = to->tail;
		to->tail = from->tail;
		to->length += from->length;
	}
	g_queue_init(from);
}

/* What the thread processed, for the loop to release: an item is memory the loop allocated,
 * and freeing it in the thread made both contend for the allocator's arena lock, item after
 * item (tens of thousands of futex waits on each side in a 100,000-pod snapshot). The list
 * is the one the loop pushed them with, so the thread allocates and frees no node either. */
static GQueue
msd_write_thread_take_done_locked(MsdWriteThread *self)
{
	GQueue done = self->done;

	g_queue_init(&self->done);
	return done;
}

static void
msd_write_thread_release_done(MsdWriteThread *self)
{
	GQueue done;

	g_mutex_lock(&self->lock);
	done = msd_write_thread_take_done_locked(self);
	g_mutex_unlock(&self->lock);
	g_queue_clear_full(&done, self->item_free);
}

/* Processes @batch in order, by whichever thread owns the processing now; the items stay in
 * @batch. After the first failure the rest is dropped: the output is incomplete from there
 * on, and writing later documents after a hole would hide it. TRUE when this batch failed. */
static gboolean
msd_write_thread_process(MsdWriteThread *self, GQueue *batch)
{
	gboolean failed;
	gboolean failed_here = FALSE;

	g_mutex_lock(&self->lock);
	failed = self->failure != NULL;
	g_mutex_unlock(&self->lock);
	for (GList *l = batch->head; l != NULL && !failed; l = l->next) {
		GError *error = NULL;

		if (!self->func(l->data, self->user_data, &error)) {
			g_mutex_lock(&self->lock);
			self->failure = error;
			g_mutex_unlock(&self->lock);
			failed = failed_here = TRUE;
		}
	}
	return failed_here;
}

static gpointer
msd_write_thread_run(gpointer data)
{
	MsdWriteThread *self = data;

	g_mutex_lock(&self->lock);
	for (;;) {
		GQueue batch = G_QUEUE_INIT;
		gboolean failed;

		while (!self->running && !self->stopping)
			g_cond_wait(&self->work, &self->lock);
		if (!self->running)
			break;
		if (self->items.length == 0) {
			self->running = FALSE;
			g_cond_broadcast(&self->idle);
			continue;
		}
		batch = self->items;
		g_queue_init(&self->items);
		self->in_flight = batch.length;
		g_mutex_unlock(&self->lock);

		failed = msd_write_thread_process(self, &batch);

		g_mutex_lock(&self->lock);
		self->in_flight = 0;
		msd_write_thread_queue_append(&self->done, &batch);
		if (failed || (self->want_room && self->items.length <= self->capacity / 2)) {
			self->want_room = FALSE;
			msd_write_thread_schedule_notify_locked(self);
		}
		/* room for a loop blocked in push(), or the end of a wait() */
		g_cond_broadcast(&self->idle);
	}
	g_mutex_unlock(&self->lock);
	return NULL;
}

/*
 * @capacity bounds the items pushed and not yet processed; the thread is started once
 * @batch of them wait. @func processes one item (in the thread, or in the loop during a
 * wait); @item_free releases it, processed or not.
 */
MsdWriteThread *
msd_write_thread_new(const gchar *name,
                     guint capacity,
                     guint batch,
                     MsdWriteThreadFunc func,
                     GDestroyNotify item_free,
                     GSourceFunc notify,
                     gpointer user_data,
                     GMainContext *context)
{
	MsdWriteThread *self = g_new0(MsdWriteThread, 1);

	g_return_val_if_fail(batch > 0 && batch <= capacity, NULL);

	g_mutex_init(&self->lock);
	g_cond_init(&self->work);
	g_cond_init(&self->idle);
	g_queue_init(&self->items);
	self->capacity = capacity;
	self->batch = batch;
	self->func = func;
	self->item_free = item_free;
	self->notify = notify;
	self->user_data = user_data;
	self->context = g_main_context_ref(context);
	self->thread = g_thread_new(name, msd_write_thread_run, self);
	return self;
}

/* Takes @item. Never called while full in the normal course (the engine asks
 * msd_write_thread_is_full() first); when it is (a stop delivering what is left), it waits
 * for room rather than grow. */
void
msd_write_thread_push(MsdWriteThread *self, gpointer item)
{
	GQueue done;

	g_mutex_lock(&self->lock);
	done = msd_write_thread_take_done_locked(self);
	while (self->failure == NULL && self->items.length + self->in_flight >= self->capacity) {
		self->running = TRUE;
		g_cond_signal(&self->work);
		g_cond_wait(&self->idle, &self->lock);
	}
	if (self->failure != NULL) {
		g_mutex_unlock(&self->lock);
		self->item_free(item);
		g_queue_clear_full(&done, self->item_free);
		return;
	}
	g_queue_push_tail(&self->items, item);
	if (!self->running && self->items.length >= self->batch) {
		self->running = TRUE;
		g_cond_signal(&self->work);
	}
	g_mutex_unlock(&self->lock);
	g_queue_clear_full(&done, self->item_free);
}

/* TRUE when no item can be pushed now; the loop is then notified once half the room is
 * free again. */
gboolean
msd_write_thread_is_full(MsdWriteThread *self)
{
	GQueue done;
	gboolean full;

	g_mutex_lock(&self->lock);
	done = msd_write_thread_take_done_locked(self);
	full = self->failure == NULL && self->items.length + self->in_flight >= self->capacity;
	if (full)
		self->want_room = TRUE;
	g_mutex_unlock(&self->lock);
	g_queue_clear_full(&done, self->item_free);
	return full;
}

/* Sets @error to the kept failure, if there is one. */
gboolean
msd_write_thread_has_failed(MsdWriteThread *self, GError **error)
{
	gboolean failed;

	g_mutex_lock(&self->lock);
	failed = self->failure != NULL;
	if (failed)
		g_propagate_error(error, g_error_copy(self->failure));
	g_mutex_unlock(&self->lock);
	return failed;
}

/*
 * Returns once every item pushed is processed: lets the thread finish its batch, then
 * processes what is left in the loop itself, as the thread is idle and stays so until the
 * next push. Afterwards the caller may touch what @func writes to, until it pushes again.
 */
gboolean
msd_write_thread_wait(MsdWriteThread *self, GError **error)
{
	GQueue rest = G_QUEUE_INIT;

	g_mutex_lock(&self->lock);
	while (self->running)
		g_cond_wait(&self->idle, &self->lock);
	rest = self->items;
	g_queue_init(&self->items);
	g_mutex_unlock(&self->lock);

	msd_write_thread_release_done(self);
	msd_write_thread_process(self, &rest);
	g_queue_clear_full(&rest, self->item_free);
	return !msd_write_thread_has_failed(self, error);
}

/* Ends the thread; items not processed yet are dropped (wait first to keep them). */
void
msd_write_thread_free(MsdWriteThread *self)
{
	g_mutex_lock(&self->lock);
	self->stopping = TRUE;
	g_cond_signal(&self->work);
	g_mutex_unlock(&self->lock);
	g_thread_join(self->thread);

	if (self->notify_source != NULL) {
		g_source_destroy(self->notify_source);
		g_source_unref(self->notify_source);
	}
	g_queue_clear_full(&self->items, self->item_free);
	g_queue_clear_full(&self->done, self->item_free);
	g_clear_error(&self->failure);
	g_main_context_unref(self->context);
	g_cond_clear(&self->idle);
	g_cond_clear(&self->work);
	g_mutex_clear(&self->lock);
	g_free(self);
}
