/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncBroker"

#include "config.h"

#include <errno.h>
#include <poll.h>

#include "broker/msd-nats-source.h"

/* natsSock is a plain descriptor on Unix; the library's own invalid marker is private. */
#define MSD_NATS_NO_SOCKET (-1)

/*
 * nats.c's event-loop hooks (attach, read, write, detach) are called from whatever thread
 * holds the connection at that moment: the thread in natsConnection_Connect, the library's
 * reconnect and timer threads (and the flusher, were SendAsap off), a publisher, or the loop
 * thread itself re-entering from inside ProcessReadEvent. Most of them hold the connection
 * mutex. So the hooks only flip atomic flags and wake the context; the poll record is
 * changed in prepare(), which GLib runs on the owner thread. Two exceptions:
 *
 * - read(false): 3.4.1 closes the socket right after the hook returns (upstream #814, fixed
 *   in 3.10), and GLib keeps polling a record whose mask is 0, so a stale record would spin
 *   on POLLNVAL or, worse, watch a reused fd number. The source is destroyed synchronously;
 *   g_source_destroy() takes the context lock and is safe from any thread.
 * - attach: every (re)connect gets a fresh GSource for the new socket, because fd numbers
 *   are reused across reconnects and an old record must never match the new socket.
 *
 * Lock order: connection mutex, then self->lock, then the context lock. Nothing here calls
 * into libnats while holding self->lock.
 */

typedef struct {
	GSource parent;
	MsdNatsLoop *loop; /* (owned) */
	gpointer fd_tag;
	GIOCondition applied;
} MsdNatsSource;

struct _MsdNatsLoop {
	gatomicrefcount ref;
	GMainContext *context; /* (owned) */
	GMutex lock;           /* protects nc, sock and source */
	natsConnection *nc;    /* (unowned): between attach and detach */
	natsSock sock;
	MsdNatsSource *source; /* (owned) (nullable): the poll record of the current socket */
	gint want_read;        /* atomic */
	gint want_write;       /* atomic */
	gint detached;         /* atomic */
	MsdNatsLoopFunc written_func; /* loop thread only */
	gpointer written_data;
	MsdNatsLoopFunc read_func; /* loop thread only */
	gpointer read_data;
};

MsdNatsLoop *
msd_nats_loop_new(GMainContext *context)
{
	MsdNatsLoop *self = g_new0(MsdNatsLoop, 1);

	g_atomic_ref_count_init(&self->ref);
	self->context = g_main_context_ref(context);
	g_mutex_init(&self->lock);
	self->sock = MSD_NATS_NO_SOCKET;
	return self;
}

MsdNatsLoop *
msd_nats_loop_ref(MsdNatsLoop *self)
{
	g_atomic_ref_count_inc(&self->ref);
	return self;
}

void
msd_nats_loop_unref(MsdNatsLoop *self)
{
	if (!g_atomic_ref_count_dec(&self->ref))
		return;
	/* A live source holds a reference, so none is left here. */
	g_assert(self->source == NULL);
	g_mutex_clear(&self->lock);
	g_main_context_unref(self->context);
	g_free(self);
}

static gboolean
msd_nats_source_prepare(GSource *source, gint *timeout)
{
	MsdNatsSource *src = (MsdNatsSource *)source;
	GIOCondition want = 0;

	if (g_atomic_int_get(&src->loop->want_read))
		want |= G_IO_IN;
	if (g_atomic_int_get(&src->loop->want_write))
		want |= G_IO_OUT;
	if (want != src->applied && !g_source_is_destroyed(source)) {
		g_source_modify_unix_fd(source, src->fd_tag, want);
		src->applied = want;
	}
	*timeout = -1;
	return FALSE;
}

static gboolean
msd_nats_source_dispatch(GSource *source, GSourceFunc callback, gpointer user_data)
{
	MsdNatsSource *src = (MsdNatsSource *)source;
	GIOCondition revents = g_source_query_unix_fd(source, src->fd_tag);
	natsConnection *nc = NULL;

	g_mutex_lock(&src->loop->lock);
	if (!g_atomic_int_get(&src->loop->detached) && src->loop->source == src)
		nc = src->loop->nc;
	g_mutex_unlock(&src->loop->lock);
	if (nc == NULL)
		return G_SOURCE_REMOVE;

	/* Errors and hang-ups go to the read side so the library notices and reconnects. */
	if (revents & (G_IO_IN | G_IO_HUP | G_IO_ERR | G_IO_NVAL)) {
		natsConnection_ProcessReadEvent(nc);
		if (src->loop->read_func != NULL)
			src->loop->read_func(src->loop->read_data);
	}
	/* The read may have detached or dropped this socket. */
	if ((revents & G_IO_OUT) && !g_source_is_destroyed(source)) {
		natsConnection_ProcessWriteEvent(nc);
		if (src->loop->written_func != NULL)
			src->loop->written_func(src->loop->written_data);
	}
	return g_source_is_destroyed(source) ? G_SOURCE_REMOVE : G_SOURCE_CONTINUE;
}

static void
msd_nats_source_finalize(GSource *source)
{
	msd_nats_loop_unref(((MsdNatsSource *)source)->loop);
}

static GSourceFuncs msd_nats_source_funcs = {
        .prepare = msd_nats_source_prepare,
        .dispatch = msd_nats_source_dispatch,
        .finalize = msd_nats_source_finalize,
};

/* Called with self->lock held. */
static void
msd_nats_loop_drop_source_locked(MsdNatsLoop *self)
{
	if (self->source == NULL)
		return;
	g_source_destroy((GSource *)self->source);
	g_source_unref((GSource *)self->source);
	self->source = NULL;
}

#if NATS_VERSION_NUMBER >= 0x030A00
typedef struct {
	natsSock sock;
} MsdNatsCloseEvent;

static gboolean
msd_nats_loop_close_socket_cb(gpointer user_data)
{
	MsdNatsCloseEvent *event = user_data;

	/* Since 3.10 the library leaves closing the socket to us, once polling stopped. */
	natsConnection_ProcessCloseEvent(&event->sock);
	return G_SOURCE_REMOVE;
}

static void
msd_nats_loop_schedule_close(MsdNatsLoop *self, natsSock sock)
{
	g_autoptr(GSource) idle = g_idle_source_new();
	MsdNatsCloseEvent *event = g_new0(MsdNatsCloseEvent, 1);

	event->sock = sock;
	g_source_set_callback(idle, msd_nats_loop_close_socket_cb, event, g_free);
	g_source_attach(idle, self->context);
}
#endif

#if NATS_VERSION_NUMBER >= 0x030B00
static gboolean
msd_nats_loop_detached_cb(gpointer user_data)
{
	/* Since 3.11 the library keeps the connection alive until we say we are done. */
	natsConnection_ProcessDetachedEvent(user_data);
	return G_SOURCE_REMOVE;
}

static void
msd_nats_loop_schedule_detached(MsdNatsLoop *self, natsConnection *nc)
{
	g_autoptr(GSource) idle = g_idle_source_new();

	/* A fresh idle: never from inside the ProcessReadEvent stack. */
	g_source_set_callback(idle, msd_nats_loop_detached_cb, nc, NULL);
	g_source_attach(idle, self->context);
}
#endif

/* The Connect caller's thread or the reconnect thread, with the connection mutex held. */
static natsStatus
msd_nats_loop_attach_cb(void **user_data, void *loop, natsConnection *nc, natsSock sock)
{
	MsdNatsLoop *self = loop;
	MsdNatsSource *src;

	if (*user_data == NULL)
		*user_data = msd_nats_loop_ref(self); /* dropped by detach */

	g_mutex_lock(&self->lock);
	msd_nats_loop_drop_source_locked(self);
	self->nc = nc;
	self->sock = sock;
	g_atomic_int_set(&self->detached, 0);
	g_atomic_int_set(&self->want_read, 1);
	src = (MsdNatsSource *)g_source_new(&msd_nats_source_funcs, sizeof(MsdNatsSource));
	g_source_set_static_name((GSource *)src, "meshsync-nats-socket");
	g_source_set_priority((GSource *)src, G_PRIORITY_DEFAULT);
	src->loop = msd_nats_loop_ref(self);
	src->applied = G_IO_IN;
	src->fd_tag = g_source_add_unix_fd((GSource *)src, sock, G_IO_IN);
	self->source = src;
	g_source_attach((GSource *)src, self->context);
	g_mutex_unlock(&self->lock);
	return NATS_OK;
}

/* Any thread, connection mutex held; 3.4.1 only ever removes read interest. */
static natsStatus
msd_nats_loop_read_cb(void *user_data, bool add)
{
	MsdNatsLoop *self = user_data;
#if NATS_VERSION_NUMBER >= 0x030A00
	natsSock sock;
#endif

	g_atomic_int_set(&self->want_read, add ? 1 : 0);
	if (add) {
		g_main_context_wakeup(self->context);
		return NATS_OK;
	}
	g_mutex_lock(&self->lock);
	msd_nats_loop_drop_source_locked(self);
#if NATS_VERSION_NUMBER >= 0x030A00
	sock = self->sock;
#endif
	self->sock = MSD_NATS_NO_SOCKET;
	g_mutex_unlock(&self->lock);
#if NATS_VERSION_NUMBER >= 0x030A00
	msd_nats_loop_schedule_close(self, sock);
#endif
	return NATS_OK;
}

/* Any thread, connection mutex held. With SendAsap every publish from the loop thread that
 * finds the write side idle comes here: that thread runs prepare() before it polls again, so
 * only another thread needs to wake it (an eventfd write per burst otherwise). */
static natsStatus
msd_nats_loop_write_cb(void *user_data, bool add)
{
	MsdNatsLoop *self = user_data;

	g_atomic_int_set(&self->want_write, add ? 1 : 0);
	if (!g_main_context_is_owner(self->context))
		g_main_context_wakeup(self->context);
	return NATS_OK;
}

/* Once per connection, on the closer's thread, the reconnect thread, or re-entrantly on the
 * loop thread; no connection mutex. */
static natsStatus
msd_nats_loop_detach_cb(void *user_data)
{
	MsdNatsLoop *self = user_data;
#if NATS_VERSION_NUMBER >= 0x030B00
	natsConnection *nc;
#endif

	g_atomic_int_set(&self->detached, 1);
	g_mutex_lock(&self->lock);
#if NATS_VERSION_NUMBER >= 0x030B00
	nc = self->nc;
#endif
	self->nc = NULL;
	self->sock = MSD_NATS_NO_SOCKET;
	msd_nats_loop_drop_source_locked(self);
	g_mutex_unlock(&self->lock);
#if NATS_VERSION_NUMBER >= 0x030B00
	msd_nats_loop_schedule_detached(self, nc);
#endif
	msd_nats_loop_unref(self);
	return NATS_OK;
}

natsStatus
msd_nats_loop_install(MsdNatsLoop *self, natsOptions *opts)
{
	return natsOptions_SetEventLoop(opts, self, msd_nats_loop_attach_cb, msd_nats_loop_read_cb,
	                                msd_nats_loop_write_cb, msd_nats_loop_detach_cb);
}

/*
 * For a synchronous drain on the loop thread: waits until the current socket takes more
 * bytes. FALSE when there is no socket (disconnected, closed) or the time ran out.
 */
gboolean
msd_nats_loop_wait_writable(MsdNatsLoop *self, gint timeout_ms)
{
	struct pollfd pfd = {.events = POLLOUT};
	gint rc;

	g_mutex_lock(&self->lock);
	pfd.fd = self->source != NULL ? self->sock : -1;
	g_mutex_unlock(&self->lock);
	if (pfd.fd < 0)
		return FALSE;
	do
		rc = poll(&pfd, 1, timeout_ms);
	while (rc < 0 && errno == EINTR);
	return rc > 0 && (pfd.revents & POLLOUT) != 0;
}

void
msd_nats_loop_set_written_func(MsdNatsLoop *self, MsdNatsLoopFunc func, gpointer user_data)
{
	/* dispatch reads these on the same thread: no lock needed */
	self->written_func = func;
	self->written_data = user_data;
}

void
msd_nats_loop_set_read_func(MsdNatsLoop *self, MsdNatsLoopFunc func, gpointer user_data)
{
	self->read_func = func;
	self->read_data = user_data;
}
