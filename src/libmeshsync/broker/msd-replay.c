/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncBroker"

#include "config.h"

#include <inttypes.h>
#include <nats/nats.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "broker/msd-replay-window.h"
#include "broker/msd-replay.h"
#include "meshsync-error.h"
#include "util/msd-i18n.h"

/*
 * What a confirmation proves. nats.c writes in order on one connection, and the server
 * answers a PING only after it has processed everything before it on that connection. So a
 * PONG for a PING written after message N means the server has N and every message before it,
 * provided they all went over the connection the PONG came back on. nats.c drops what its
 * write buffer held when a connection breaks, and fails a waiting flush (pending PONGs are
 * cleared) when it notices; a PING written while it reconnects only gets its PONG on the next
 * connection, after nats.c counted that reconnection. So the confirmation also compares
 * nats.c's reconnection count, read after the PONG, with the count read before this
 * connection's first send: equal means no other connection came in between, and the window
 * up to N can go. The loop's own epoch (bumped when it learns of a disconnection) rules out a
 * result from before a rewind.
 *
 * Order. While the loop knows the connection is up, messages go to nats.c in window order,
 * and no faster than the write buffer's marks allow. While it is down nothing goes to nats.c
 * (whose reconnect buffer would send its contents first on the next connection, ahead of the
 * re-send): new events wait in the window, after the ones to re-send. After a reconnection
 * the whole window goes again from its oldest message, then the newer ones: a consumer sees
 * an older version once more, then the newer ones again, never a gap.
 */

/* A confirmation at least this often while anything sent is unconfirmed... */
#define MSD_REPLAY_CONFIRM_INTERVAL_MS 200
/* ...and as soon as this many messages were sent since the last one started. */
#define MSD_REPLAY_CONFIRM_EVERY 1000
/* How long one PING waits for its PONG; a stale connection is noticed before this. */
#define MSD_REPLAY_CONFIRM_TIMEOUT_MS 10000
/* A window that held this much gives the heap back once it is small again. */
#define MSD_REPLAY_TRIM_AFTER (8 * 1024 * 1024)

typedef struct {
	GTask *task; /* (owned) */
	guint64 target;
	GSource *timeout; /* (owned) (nullable): until finished */
	MsdReplay *replay;
	GError *error; /* (owned) (nullable): the result, once finished */
} MsdReplayWaiter;

struct _MsdReplay {
	MsdNatsConnection *conn;             /* (owned): the connection below */
	GObject *owner;                      /* (unowned): who owns this */
	MsdNatsFullChangedFunc full_changed; /* tells the owner */
	GMainContext *context;               /* (owned): the connection's */
	MsdReplayWindow *window;
	gsize max_bytes;
	gboolean full;
	gboolean connected; /* the loop knows the connection is up: send */
	gboolean closed;
	guint64 epoch;           /* bumped at every disconnection and close */
	guint64 base_reconnects; /* nats.c's count before this connection's first send */
	guint64 resend_until;    /* messages up to this one were sent before */
	gboolean confirming;
	GSource *timer; /* (owned) (nullable): the next confirmation */
	guint64 sent_since_confirm;
	guint interval_ms;
	guint every;
	gsize peak_bytes; /* since the heap was last trimmed */
	GQueue waiters;   /* (element-type MsdReplayWaiter) */
	guint64 n_resent;
	guint64 n_confirmations;
};

typedef struct {
	natsConnection *nc; /* (unowned): held for the worker, see hold_connection() */
	guint64 seq;
	guint64 epoch;
	natsStatus status;
	guint64 reconnects;
	gchar *reason;
} MsdConfirmData;

static void msd_replay_schedule_confirm(MsdReplay *self);

static void
msd_confirm_data_free(gpointer data)
{
	MsdConfirmData *cd = data;

	g_free(cd->reason);
	g_free(cd);
}

MsdReplay *
msd_replay_new(MsdNatsConnection *conn,
               GObject *owner,
               MsdNatsFullChangedFunc full_changed,
               GMainContext *context)
{
	MsdReplay *self = g_new0(MsdReplay, 1);

	self->conn = g_object_ref(conn);
	self->owner = owner;
	self->full_changed = full_changed;
	self->context = g_main_context_ref(context);
	self->window = msd_replay_window_new();
	self->max_bytes = MSD_REPLAY_DEFAULT_MAX_BYTES;
	self->interval_ms = MSD_REPLAY_CONFIRM_INTERVAL_MS;
	self->every = MSD_REPLAY_CONFIRM_EVERY;
	g_queue_init(&self->waiters);
	return self;
}

static void
msd_replay_clear_timer(MsdReplay *self)
{
	if (self->timer == NULL)
		return;
	g_source_destroy(self->timer);
	g_clear_pointer(&self->timer, g_source_unref);
}

static gboolean
msd_replay_waiter_return_cb(gpointer data)
{
	MsdReplayWaiter *waiter = data;

	if (waiter->error != NULL)
		g_task_return_error(waiter->task, g_steal_pointer(&waiter->error));
	else
		g_task_return_boolean(waiter->task, TRUE);
	g_object_unref(waiter->task);
	g_free(waiter);
	return G_SOURCE_REMOVE;
}

/* Returns from an idle: the caller may be in the middle of closing the broker, and the
 * callback may drop the last reference to it. The task keeps the broker alive till then. */
static void
msd_replay_waiter_finish(MsdReplayWaiter *waiter, GError *error)
{
	g_autoptr(GSource) idle = g_idle_source_new();

	g_source_destroy(waiter->timeout);
	g_clear_pointer(&waiter->timeout, g_source_unref);
	waiter->error = error;
	g_source_set_static_name(idle, "meshsync-broker-confirmed");
	g_source_set_callback(idle, msd_replay_waiter_return_cb, waiter, NULL);
	g_source_attach(idle, waiter->replay->context);
}

static void
msd_replay_fail_waiters(MsdReplay *self, const gchar *why)
{
	MsdReplayWaiter *waiter;

	while ((waiter = g_queue_pop_head(&self->waiters)) != NULL)
		msd_replay_waiter_finish(
		        waiter,
		        g_error_new(MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		                    _("the broker at %s did not confirm what was published: %s"),
		                    msd_nats_connection_get_url(self->conn), why));
}

void
msd_replay_free(MsdReplay *self)
{
	if (self == NULL)
		return;
	/* A confirmation in flight holds the broker, which owns this: none is left. */
	g_assert(!self->confirming);
	msd_replay_clear_timer(self);
	msd_replay_fail_waiters(self, "it is gone");
	msd_replay_window_free(self->window);
	g_object_unref(self->conn);
	g_main_context_unref(self->context);
	g_free(self);
}

void
msd_replay_set_max_bytes(MsdReplay *self, gsize max_bytes)
{
	self->max_bytes = MAX(max_bytes, 1);
}

void
msd_replay_set_confirm_policy(MsdReplay *self, guint interval_ms, guint every)
{
	self->interval_ms = MAX(interval_ms, 1);
	self->every = MAX(every, 1);
}

/* Full at the bound, taking events again at half of it: a confirmation usually drops the
 * whole window at once, so the gap only matters while the broker is away. */
static void
msd_replay_update_full(MsdReplay *self)
{
	gsize bytes = msd_replay_window_get_bytes(self->window);
	gboolean full = self->full ? bytes > self->max_bytes / 2 : bytes >= self->max_bytes;

	self->peak_bytes = MAX(self->peak_bytes, bytes);
	if (full == self->full)
		return;
	self->full = full;
	if (full)
		g_info("broker at %s: %" G_GSIZE_FORMAT " bytes published and not confirmed, "
		       "holding events",
		       msd_nats_connection_get_url(self->conn), bytes);
	else
		g_info("broker at %s: confirmed, taking events again",
		       msd_nats_connection_get_url(self->conn));
	self->full_changed(self->owner);
}

static void
msd_replay_trim_heap(MsdReplay *self)
{
	/* Under churn the window is rarely empty: a confirmation only covers what was sent
	 * before its PING. Back to a few hundred milliseconds' worth is the end of the outage. */
	if (self->peak_bytes < MSD_REPLAY_TRIM_AFTER ||
	    msd_replay_window_get_bytes(self->window) > MSD_REPLAY_TRIM_AFTER / 8)
		return;
	self->peak_bytes = 0;
#ifdef __GLIBC__
	/* The window's chunks went back on their own; this returns what the held events, the
	 * reconnect buffer and the re-send left free in the heap. */
	malloc_trim(0);
#endif
}

/* Hands unsent messages to nats.c while the connection is up and its write buffer has room. */
static void
msd_replay_pump(MsdReplay *self)
{
	const gchar *subject;
	gconstpointer data;
	gsize len;

	while (self->connected && !msd_nats_connection_get_congested(self->conn) &&
	       msd_replay_window_peek_unsent(self->window, &subject, &data, &len)) {
		g_autoptr(GError) error = NULL;
		guint64 seq = msd_replay_window_get_last_sent(self->window) + 1;

		if (!msd_nats_connection_publish_unchecked(self->conn, subject, data, len,
		                                           &error)) {
			if (!g_error_matches(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA)) {
				/* the connection went away under us: the disconnection follows */
				g_debug("re-send held: %s", error->message);
				break;
			}
			/* a server with a smaller max_payload than the last one: this message
			 * can never go, and it must not hold up the others */
			g_message("%s; dropped", error->message);
		}
		msd_replay_window_mark_sent(self->window);
		if (seq <= self->resend_until)
			self->n_resent++;
		self->sent_since_confirm++;
	}
	msd_replay_schedule_confirm(self);
}

static void
msd_replay_confirm_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
	MsdConfirmData *cd = data;
	natsStatistics *stats = NULL;
	uint64_t reconnects = G_MAXUINT64;

	cd->status = natsConnection_FlushTimeout(cd->nc, MSD_REPLAY_CONFIRM_TIMEOUT_MS);
	if (cd->status != NATS_OK)
		cd->reason = g_strdup(natsStatus_GetText(cd->status));
	/* Read after the PONG: a connection made before it is counted by now. */
	if (natsStatistics_Create(&stats) == NATS_OK &&
	    natsConnection_GetStats(cd->nc, stats) == NATS_OK)
		natsStatistics_GetCounts(stats, NULL, NULL, NULL, NULL, &reconnects);
	natsStatistics_Destroy(stats);
	cd->reconnects = reconnects;
	nats_ReleaseThreadMemory();
	g_task_return_boolean(task, TRUE);
}

static void
msd_replay_complete_waiters(MsdReplay *self)
{
	guint64 confirmed = msd_replay_window_get_last_seq(self->window) -
	                    msd_replay_window_get_n_messages(self->window);
	GList *l = self->waiters.head;

	while (l != NULL) {
		GList *next = l->next;
		MsdReplayWaiter *waiter = l->data;

		if (waiter->target <= confirmed) {
			g_queue_delete_link(&self->waiters, l);
			msd_replay_waiter_finish(waiter, NULL);
		}
		l = next;
	}
}

static void
msd_replay_confirm_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
	MsdReplay *self = user_data;
	MsdConfirmData *cd = g_task_get_task_data(G_TASK(result));
	gboolean accepted;

	self->confirming = FALSE;
	msd_nats_connection_release(self->conn);
	if (self->closed)
		return;
	accepted = cd->status == NATS_OK && cd->epoch == self->epoch &&
	           cd->reconnects == self->base_reconnects;
	if (accepted) {
		msd_replay_window_confirm(self->window, cd->seq);
		self->n_confirmations++;
		msd_replay_complete_waiters(self);
		msd_replay_update_full(self);
		msd_replay_trim_heap(self);
	} else if (cd->status != NATS_OK) {
		g_debug("broker at %s: no confirmation for %" G_GUINT64_FORMAT " messages: %s",
		        msd_nats_connection_get_url(self->conn), cd->seq, cd->reason);
	} else {
		g_debug("broker at %s: a confirmation from another connection, ignored",
		        msd_nats_connection_get_url(self->conn));
	}
	/* after a failure, only the timer: a broken connection answers at once */
	if (!accepted)
		self->sent_since_confirm = 0;
	msd_replay_schedule_confirm(self);
}

static void
msd_replay_start_confirm(MsdReplay *self)
{
	g_autoptr(GTask) task = NULL;
	MsdConfirmData *cd;
	natsConnection *nc;

	msd_replay_clear_timer(self);
	nc = msd_nats_connection_hold(self->conn);
	if (nc == NULL)
		return;
	cd = g_new0(MsdConfirmData, 1);
	cd->nc = nc;
	cd->seq = msd_replay_window_get_last_sent(self->window);
	cd->epoch = self->epoch;
	self->confirming = TRUE;
	self->sent_since_confirm = 0;
	/* The task holds the broker, which owns this, until the result is back on the loop
	 * (through an idle GTask attaches to the broker's context). */
	task = g_task_new(self->owner, NULL, msd_replay_confirm_done, self);
	g_task_set_source_tag(task, msd_replay_start_confirm);
	g_task_set_task_data(task, cd, msd_confirm_data_free);
	g_task_run_in_thread(task, msd_replay_confirm_thread);
}

static gboolean
msd_replay_timer_cb(gpointer data)
{
	MsdReplay *self = data;

	g_clear_pointer(&self->timer, g_source_unref);
	if (!self->confirming && self->connected)
		msd_replay_start_confirm(self);
	return G_SOURCE_REMOVE;
}

static void
msd_replay_schedule_confirm(MsdReplay *self)
{
	guint64 sent = msd_replay_window_get_n_messages(self->window) -
	               msd_replay_window_get_n_unsent(self->window);

	if (self->confirming || !self->connected || sent == 0)
		return;
	if (self->sent_since_confirm >= self->every || self->waiters.length > 0) {
		msd_replay_start_confirm(self);
		return;
	}
	if (self->timer != NULL)
		return;
	self->timer = g_timeout_source_new(self->interval_ms);
	g_source_set_static_name(self->timer, "meshsync-broker-confirm");
	g_source_set_callback(self->timer, msd_replay_timer_cb, self, NULL);
	g_source_attach(self->timer, self->context);
}

void
msd_replay_publish(MsdReplay *self, const gchar *subject, const MsdReplayPart *parts, guint n_parts)
{
	msd_replay_window_append_parts(self->window, subject, parts, n_parts);
	msd_replay_pump(self);
	msd_replay_update_full(self);
}

/*
 * The connection is up (first connect or reconnection); @reconnects is nats.c's count, read
 * before anything of this connection was sent. Everything held goes again, oldest first.
 */
void
msd_replay_connected(MsdReplay *self, guint64 reconnects)
{
	guint64 again = msd_replay_window_rewind(self->window);

	self->resend_until =
	        MAX(self->resend_until, msd_replay_window_get_last_sent(self->window) + again);
	if (msd_replay_window_get_n_messages(self->window) > 0)
		g_info("broker at %s: sending the %" G_GUINT64_FORMAT
		       " events it has not confirmed, oldest first",
		       msd_nats_connection_get_url(self->conn),
		       msd_replay_window_get_n_messages(self->window));
	self->closed = FALSE;
	self->connected = TRUE;
	self->base_reconnects = reconnects;
	self->sent_since_confirm = 0;
	msd_replay_pump(self);
}

/* The connection broke: what was sent on it may be gone, so all of it is unsent again. */
void
msd_replay_disconnected(MsdReplay *self)
{
	guint64 sent = msd_replay_window_get_last_sent(self->window);

	self->epoch++;
	self->connected = FALSE;
	msd_replay_clear_timer(self);
	msd_replay_window_rewind(self->window);
	self->resend_until = MAX(self->resend_until, sent);
}

/* Closed for good: what the window holds is lost. */
void
msd_replay_closed(MsdReplay *self)
{
	guint64 lost = msd_replay_window_get_n_messages(self->window);

	self->epoch++;
	self->connected = FALSE;
	self->closed = TRUE;
	msd_replay_clear_timer(self);
	msd_replay_fail_waiters(self, "the connection is closed");
	if (lost > 0)
		g_info("broker at %s closed with %" G_GUINT64_FORMAT " messages not confirmed",
		       msd_nats_connection_get_url(self->conn), lost);
	msd_replay_window_clear(self->window);
	msd_replay_update_full(self);
}

/* The write buffer drained below its low mark. */
void
msd_replay_resume(MsdReplay *self)
{
	msd_replay_pump(self);
}

gboolean
msd_replay_is_full(MsdReplay *self)
{
	return self->full;
}

gboolean
msd_replay_is_empty(MsdReplay *self)
{
	return msd_replay_window_get_n_messages(self->window) == 0;
}

static gboolean
msd_replay_waiter_timeout_cb(gpointer data)
{
	MsdReplayWaiter *waiter = data;
	MsdReplay *self = waiter->replay;

	g_queue_remove(&self->waiters, waiter);
	msd_replay_waiter_finish(
	        waiter,
	        g_error_new(MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
	                    _("the broker at %s did not confirm %" PRIu64 " messages in time"),
	                    msd_nats_connection_get_url(self->conn),
	                    msd_replay_window_get_n_messages(self->window)));
	return G_SOURCE_REMOVE;
}

/* Completes @task (taking it) once everything published so far is confirmed, or with an error
 * after @timeout_ms or when the connection closes. */
void
msd_replay_wait(MsdReplay *self, GTask *task, guint timeout_ms)
{
	MsdReplayWaiter *waiter = g_new0(MsdReplayWaiter, 1);

	waiter->task = task;
	waiter->replay = self;
	waiter->target = msd_replay_window_get_last_seq(self->window);
	waiter->timeout = g_timeout_source_new(MAX(timeout_ms, 1));
	g_source_set_static_name(waiter->timeout, "meshsync-broker-confirm-wait");
	g_source_set_callback(waiter->timeout, msd_replay_waiter_timeout_cb, waiter, NULL);
	g_source_attach(waiter->timeout, self->context);
	g_queue_push_tail(&self->waiters, waiter);
	msd_replay_complete_waiters(self);
	msd_replay_schedule_confirm(self);
}

gsize
msd_replay_get_bytes(MsdReplay *self)
{
	return msd_replay_window_get_bytes(self->window);
}

gsize
msd_replay_get_unsent_bytes(MsdReplay *self)
{
	return msd_replay_window_get_unsent_bytes(self->window);
}

gsize
msd_replay_get_mapped_bytes(MsdReplay *self)
{
	return msd_replay_window_get_mapped_bytes(self->window);
}

guint64
msd_replay_get_n_messages(MsdReplay *self)
{
	return msd_replay_window_get_n_messages(self->window);
}

guint64
msd_replay_get_n_resent(MsdReplay *self)
{
	return self->n_resent;
}

guint64
msd_replay_get_n_confirmations(MsdReplay *self)
{
	return self->n_confirmations;
}
