/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * Reading ahead under TLS. GnuTLS reads each record in two reads of exactly its size, the
 * five-byte header and then the rest, and GIO's TLS connection passes each read to the
 * socket as it is: two recv(2) calls per record. An API server writes several records per
 * object (Go's HTTP server one per 4 KiB buffer and one per larger write, a chunked
 * encoder one for the chunk header too), so a 100,000-pod list cost 600,000 system calls.
 * Under the TLS connection this stream reads what the socket holds, up to 64 KiB at once,
 * and serves GnuTLS's small reads from that; the connection around it hands the socket's
 * output stream through untouched.
 */

#define G_LOG_DOMAIN "MeshSyncKube"

#include "config.h"

#include <string.h>

#include "kube/msd-read-ahead-stream.h"

#define MSD_READ_AHEAD_SIZE (64 * 1024)

struct _MsdReadAheadInputStream {
	GFilterInputStream parent_instance;

	guint8 *buffer; /* (owned) */
	gsize start;    /* the first byte not handed out yet */
	gsize end;      /* one past the last byte read */
	guint64 n_base_reads;
	guint64 n_reads;
};

static void msd_read_ahead_input_stream_pollable_init(GPollableInputStreamInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(MsdReadAheadInputStream,
                              msd_read_ahead_input_stream,
                              G_TYPE_FILTER_INPUT_STREAM,
                              G_IMPLEMENT_INTERFACE(G_TYPE_POLLABLE_INPUT_STREAM,
                                                    msd_read_ahead_input_stream_pollable_init))

static GInputStream *
msd_read_ahead_input_stream_base(MsdReadAheadInputStream *self)
{
	return g_filter_input_stream_get_base_stream(G_FILTER_INPUT_STREAM(self));
}

static gssize
msd_read_ahead_input_stream_read_internal(MsdReadAheadInputStream *self,
                                          guint8 *out,
                                          gsize count,
                                          gboolean blocking,
                                          GCancellable *cancellable,
                                          GError **error)
{
	GInputStream *base = msd_read_ahead_input_stream_base(self);
	gsize held = self->end - self->start;
	gssize n;

	self->n_reads++;
	if (count == 0)
		return 0;
	if (held == 0) {
		/* a large read gains nothing from the buffer: straight into the caller's */
		guint8 *into = count >= MSD_READ_AHEAD_SIZE ? out : self->buffer;
		gsize size = count >= MSD_READ_AHEAD_SIZE ? count : MSD_READ_AHEAD_SIZE;

		n = g_pollable_stream_read(base, into, size, blocking, cancellable, error);
		if (n <= 0)
			return n;
		self->n_base_reads++;
		if (into == out)
			return n;
		self->start = 0;
		self->end = (gsize)n;
		held = (gsize)n;
	}
	if (count > held)
		count = held;
	memcpy(out, self->buffer + self->start, count);
	self->start += count;
	return (gssize)count;
}

static gssize
msd_read_ahead_input_stream_read(
        GInputStream *stream, void *buffer, gsize count, GCancellable *cancellable, GError **error)
{
	return msd_read_ahead_input_stream_read_internal(MSD_READ_AHEAD_INPUT_STREAM(stream),
	                                                 buffer, count, TRUE, cancellable, error);
}

static gssize
msd_read_ahead_input_stream_read_nonblocking(GPollableInputStream *stream,
                                             void *buffer,
                                             gsize count,
                                             GError **error)
{
	return msd_read_ahead_input_stream_read_internal(MSD_READ_AHEAD_INPUT_STREAM(stream),
	                                                 buffer, count, FALSE, NULL, error);
}

static gboolean
msd_read_ahead_input_stream_can_poll(GPollableInputStream *stream)
{
	GInputStream *base = msd_read_ahead_input_stream_base(MSD_READ_AHEAD_INPUT_STREAM(stream));

	return G_IS_POLLABLE_INPUT_STREAM(base) &&
	       g_pollable_input_stream_can_poll(G_POLLABLE_INPUT_STREAM(base));
}

static gboolean
msd_read_ahead_input_stream_is_readable(GPollableInputStream *stream)
{
	MsdReadAheadInputStream *self = MSD_READ_AHEAD_INPUT_STREAM(stream);

	if (self->end > self->start)
		return TRUE;
	return g_pollable_input_stream_is_readable(
	        G_POLLABLE_INPUT_STREAM(msd_read_ahead_input_stream_base(self)));
}

/*
 * What the buffer holds, asked at every poll: a child of the source a reader waits on, beside
 * the socket's. Readers keep one source attached across many reads (GIO's TLS connection
 * decides its child source once, for as long as its wait lasts; libsoup's WebSocket input
 * source lives as long as the connection), so a source that decided once, when made, would
 * sleep on bytes read ahead already (made while the buffer was empty) or go on firing with
 * the buffer empty (made while it held bytes).
 */
typedef struct {
	GSource source;
	MsdReadAheadInputStream *stream; /* (owned) */
} MsdReadAheadBuffered;

static gboolean
msd_read_ahead_buffered_check(GSource *source)
{
	MsdReadAheadInputStream *stream = ((MsdReadAheadBuffered *)source)->stream;

	return stream->end > stream->start;
}

static gboolean
msd_read_ahead_buffered_prepare(GSource *source, gint *timeout)
{
	*timeout = -1;
	return msd_read_ahead_buffered_check(source);
}

/* a child's readiness dispatches its parent, the pollable source, which calls the reader */
static gboolean
msd_read_ahead_buffered_dispatch(GSource *source, GSourceFunc callback, gpointer user_data)
{
	return G_SOURCE_CONTINUE;
}

static void
msd_read_ahead_buffered_finalize(GSource *source)
{
	g_object_unref(((MsdReadAheadBuffered *)source)->stream);
}

static GSourceFuncs msd_read_ahead_buffered_funcs = {
        .prepare = msd_read_ahead_buffered_prepare,
        .check = msd_read_ahead_buffered_check,
        .dispatch = msd_read_ahead_buffered_dispatch,
        .finalize = msd_read_ahead_buffered_finalize,
};

static GSource *
msd_read_ahead_input_stream_create_source(GPollableInputStream *stream, GCancellable *cancellable)
{
	MsdReadAheadInputStream *self = MSD_READ_AHEAD_INPUT_STREAM(stream);
	g_autoptr(GSource) socket_source = g_pollable_input_stream_create_source(
	        G_POLLABLE_INPUT_STREAM(msd_read_ahead_input_stream_base(self)), NULL);
	g_autoptr(GSource) buffered =
	        g_source_new(&msd_read_ahead_buffered_funcs, sizeof(MsdReadAheadBuffered));
	GSource *source = g_pollable_source_new_full(stream, socket_source, cancellable);

	((MsdReadAheadBuffered *)buffered)->stream = g_object_ref(self);
	g_source_add_child_source(source, buffered);
	g_source_set_static_name(source, "[meshsync] read-ahead");
	return source;
}

static void
msd_read_ahead_input_stream_finalize(GObject *object)
{
	MsdReadAheadInputStream *self = MSD_READ_AHEAD_INPUT_STREAM(object);

	g_free(self->buffer);
	G_OBJECT_CLASS(msd_read_ahead_input_stream_parent_class)->finalize(object);
}

static void
msd_read_ahead_input_stream_class_init(MsdReadAheadInputStreamClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = msd_read_ahead_input_stream_finalize;
	G_INPUT_STREAM_CLASS(klass)->read_fn = msd_read_ahead_input_stream_read;
}

static void
msd_read_ahead_input_stream_pollable_init(GPollableInputStreamInterface *iface)
{
	iface->can_poll = msd_read_ahead_input_stream_can_poll;
	iface->is_readable = msd_read_ahead_input_stream_is_readable;
	iface->create_source = msd_read_ahead_input_stream_create_source;
	iface->read_nonblocking = msd_read_ahead_input_stream_read_nonblocking;
}

static void
msd_read_ahead_input_stream_init(MsdReadAheadInputStream *self)
{
	self->buffer = g_malloc(MSD_READ_AHEAD_SIZE);
}

/**
 * msd_read_ahead_input_stream_new:
 * @base: a stream to read ahead from, pollable for non-blocking use
 *
 * Returns: (transfer full): the stream; closing it closes @base
 */
GInputStream *
msd_read_ahead_input_stream_new(GInputStream *base)
{
	g_return_val_if_fail(G_IS_INPUT_STREAM(base), NULL);
	return g_object_new(MSD_TYPE_READ_AHEAD_INPUT_STREAM, "base-stream", base, NULL);
}

guint64
msd_read_ahead_input_stream_get_n_base_reads(MsdReadAheadInputStream *self)
{
	g_return_val_if_fail(MSD_IS_READ_AHEAD_INPUT_STREAM(self), 0);
	return self->n_base_reads;
}

guint64
msd_read_ahead_input_stream_get_n_reads(MsdReadAheadInputStream *self)
{
	g_return_val_if_fail(MSD_IS_READ_AHEAD_INPUT_STREAM(self), 0);
	return self->n_reads;
}

struct _MsdReadAheadConnection {
	GIOStream parent_instance;

	GIOStream *base;     /* (owned) */
	GInputStream *input; /* (owned) */
};

G_DEFINE_FINAL_TYPE(MsdReadAheadConnection, msd_read_ahead_connection, G_TYPE_IO_STREAM)

static GInputStream *
msd_read_ahead_connection_get_input_stream(GIOStream *stream)
{
	return MSD_READ_AHEAD_CONNECTION(stream)->input;
}

static GOutputStream *
msd_read_ahead_connection_get_output_stream(GIOStream *stream)
{
	return g_io_stream_get_output_stream(MSD_READ_AHEAD_CONNECTION(stream)->base);
}

static gboolean
msd_read_ahead_connection_close(GIOStream *stream, GCancellable *cancellable, GError **error)
{
	/* closing the base closes its streams and the socket; ours holds nothing else */
	return g_io_stream_close(MSD_READ_AHEAD_CONNECTION(stream)->base, cancellable, error);
}

static void
msd_read_ahead_connection_closed_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	GError *error = NULL;

	if (g_io_stream_close_finish(G_IO_STREAM(source), result, &error))
		g_task_return_boolean(task, TRUE);
	else
		g_task_return_error(task, error);
}

/* GIOStream's own close_async runs close_fn in a thread: the base's is asked instead */
static void
msd_read_ahead_connection_close_async(GIOStream *stream,
                                      int io_priority,
                                      GCancellable *cancellable,
                                      GAsyncReadyCallback callback,
                                      gpointer user_data)
{
	GTask *task = g_task_new(stream, cancellable, callback, user_data);

	g_task_set_source_tag(task, msd_read_ahead_connection_close_async);
	g_io_stream_close_async(MSD_READ_AHEAD_CONNECTION(stream)->base, io_priority, cancellable,
	                        msd_read_ahead_connection_closed_cb, task);
}

static gboolean
msd_read_ahead_connection_close_finish(GIOStream *stream, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, stream), FALSE);
	return g_task_propagate_boolean(G_TASK(result), error);
}

static void
msd_read_ahead_connection_finalize(GObject *object)
{
	MsdReadAheadConnection *self = MSD_READ_AHEAD_CONNECTION(object);

	g_clear_object(&self->input);
	g_clear_object(&self->base);
	G_OBJECT_CLASS(msd_read_ahead_connection_parent_class)->finalize(object);
}

static void
msd_read_ahead_connection_class_init(MsdReadAheadConnectionClass *klass)
{
	GIOStreamClass *stream_class = G_IO_STREAM_CLASS(klass);

	G_OBJECT_CLASS(klass)->finalize = msd_read_ahead_connection_finalize;
	stream_class->get_input_stream = msd_read_ahead_connection_get_input_stream;
	stream_class->get_output_stream = msd_read_ahead_connection_get_output_stream;
	stream_class->close_fn = msd_read_ahead_connection_close;
	stream_class->close_async = msd_read_ahead_connection_close_async;
	stream_class->close_finish = msd_read_ahead_connection_close_finish;
}

static void
msd_read_ahead_connection_init(MsdReadAheadConnection *self)
{
}

/**
 * msd_read_ahead_connection_new:
 * @base: a connection, typically a socket's
 *
 * Returns: (transfer full): @base with its input read ahead; closing it closes @base
 */
GIOStream *
msd_read_ahead_connection_new(GIOStream *base)
{
	MsdReadAheadConnection *self;

	g_return_val_if_fail(G_IS_IO_STREAM(base), NULL);
	self = g_object_new(MSD_TYPE_READ_AHEAD_CONNECTION, NULL);
	self->base = g_object_ref(base);
	self->input = msd_read_ahead_input_stream_new(g_io_stream_get_input_stream(base));
	/* the base's input is closed with the base */
	g_filter_input_stream_set_close_base_stream(G_FILTER_INPUT_STREAM(self->input), FALSE);
	return G_IO_STREAM(self);
}

GIOStream *
msd_read_ahead_connection_get_base(MsdReadAheadConnection *self)
{
	g_return_val_if_fail(MSD_IS_READ_AHEAD_CONNECTION(self), NULL);
	return self->base;
}
