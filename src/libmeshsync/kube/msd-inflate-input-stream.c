/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncKube"

#include "config.h"

#include <zlib.h>

#include "kube/msd-inflate-input-stream.h"
#include "util/msd-i18n.h"

/* compressed bytes read from the base at once: a TLS record is at most 16 KiB */
#define MSD_INFLATE_INPUT_SIZE (32 * 1024)

struct _MsdInflateInputStream {
	GFilterInputStream parent_instance;

	z_stream z;
	guint8 *input; /* (owned): what z.next_in points into */
	/* the last inflate() filled the caller's buffer: zlib may hold more output */
	gboolean output_pending;
	/* between two gzip members: the next byte starts a new one (or the stream ends) */
	gboolean member_ended;
	gboolean finished;
	gchar *corrupt; /* (owned) (nullable): zlib's complaint, reported after what came before */
};

static void msd_inflate_input_stream_pollable_init(GPollableInputStreamInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(MsdInflateInputStream,
                              msd_inflate_input_stream,
                              G_TYPE_FILTER_INPUT_STREAM,
                              G_IMPLEMENT_INTERFACE(G_TYPE_POLLABLE_INPUT_STREAM,
                                                    msd_inflate_input_stream_pollable_init))

static GInputStream *
msd_inflate_input_stream_base(MsdInflateInputStream *self)
{
	return g_filter_input_stream_get_base_stream(G_FILTER_INPUT_STREAM(self));
}

/* Inflates what is buffered into @buffer. Returns the bytes produced (0: zlib needs input),
 * or -1 with @error set. */
static gssize
msd_inflate_input_stream_drain(MsdInflateInputStream *self,
                               guint8 *buffer,
                               gsize count,
                               GError **error)
{
	for (;;) {
		gsize produced;
		int ret;

		if (self->corrupt != NULL) {
			g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
			            _("gzip-encoded body is corrupt: %s"), self->corrupt);
			return -1;
		}
		if (self->member_ended) {
			/* another member follows the one that ended */
			if (self->z.avail_in == 0)
				return 0;
			inflateReset(&self->z);
			self->member_ended = FALSE;
		}
		if (self->z.avail_in == 0 && !self->output_pending)
			return 0;
		self->z.next_out = buffer;
		self->z.avail_out = (uInt)MIN(count, G_MAXUINT32);
		ret = inflate(&self->z, Z_NO_FLUSH);
		produced = (gsize)(self->z.next_out - buffer);
		self->output_pending = self->z.avail_out == 0;
		switch (ret) {
		case Z_STREAM_END:
			self->member_ended = TRUE;
			self->output_pending = FALSE;
			break;
		case Z_OK:
			break;
		case Z_BUF_ERROR:
			/* no progress was possible: nothing held back, more input needed */
			self->output_pending = FALSE;
			break;
		default:
			/* what decoded before the damage is handed out first */
			self->corrupt = g_strdup(self->z.msg != NULL ? self->z.msg : zError(ret));
			self->output_pending = FALSE;
			if (produced > 0)
				return (gssize)produced;
			g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
			            _("gzip-encoded body is corrupt: %s"), self->corrupt);
			return -1;
		}
		if (produced > 0)
			return (gssize)produced;
		/* a header or an empty block was consumed without output: go on */
	}
}

static gssize
msd_inflate_input_stream_read_internal(MsdInflateInputStream *self,
                                       void *buffer,
                                       gsize count,
                                       gboolean blocking,
                                       GCancellable *cancellable,
                                       GError **error)
{
	if (count == 0)
		return 0;
	for (;;) {
		gssize n;

		if (self->finished)
			return 0;
		n = msd_inflate_input_stream_drain(self, buffer, count, error);
		if (n != 0)
			return n;
		/* zlib holds nothing more: only now may the network be waited for */
		n = g_pollable_stream_read(msd_inflate_input_stream_base(self), self->input,
		                           MSD_INFLATE_INPUT_SIZE, blocking, cancellable, error);
		if (n < 0)
			return -1;
		if (n == 0) {
			if (!self->member_ended && self->z.total_in > 0) {
				g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT,
				                    _("gzip-encoded body ended inside a member"));
				return -1;
			}
			self->finished = TRUE;
			return 0;
		}
		self->z.next_in = self->input;
		self->z.avail_in = (uInt)n;
	}
}

static gssize
msd_inflate_input_stream_read(
        GInputStream *stream, void *buffer, gsize count, GCancellable *cancellable, GError **error)
{
	return msd_inflate_input_stream_read_internal(MSD_INFLATE_INPUT_STREAM(stream), buffer,
	                                              count, TRUE, cancellable, error);
}

static gssize
msd_inflate_input_stream_read_nonblocking(GPollableInputStream *stream,
                                          void *buffer,
                                          gsize count,
                                          GError **error)
{
	return msd_inflate_input_stream_read_internal(MSD_INFLATE_INPUT_STREAM(stream), buffer,
	                                              count, FALSE, NULL, error);
}

static gboolean
msd_inflate_input_stream_can_poll(GPollableInputStream *stream)
{
	GInputStream *base = msd_inflate_input_stream_base(MSD_INFLATE_INPUT_STREAM(stream));

	return G_IS_POLLABLE_INPUT_STREAM(base) &&
	       g_pollable_input_stream_can_poll(G_POLLABLE_INPUT_STREAM(base));
}

static gboolean
msd_inflate_input_stream_is_readable(GPollableInputStream *stream)
{
	MsdInflateInputStream *self = MSD_INFLATE_INPUT_STREAM(stream);

	if (self->finished || self->output_pending || self->z.avail_in > 0 || self->corrupt != NULL)
		return TRUE;
	return g_pollable_input_stream_is_readable(
	        G_POLLABLE_INPUT_STREAM(msd_inflate_input_stream_base(self)));
}

static GSource *
msd_inflate_input_stream_create_source(GPollableInputStream *stream, GCancellable *cancellable)
{
	MsdInflateInputStream *self = MSD_INFLATE_INPUT_STREAM(stream);
	g_autoptr(GSource) base_source = NULL;
	GSource *source;

	/* what zlib or the input buffer hold is ready now, whatever the socket says */
	if (self->finished || self->output_pending || self->z.avail_in > 0 || self->corrupt != NULL)
		base_source = g_timeout_source_new(0);
	else
		base_source = g_pollable_input_stream_create_source(
		        G_POLLABLE_INPUT_STREAM(msd_inflate_input_stream_base(self)), NULL);
	source = g_pollable_source_new_full(stream, base_source, cancellable);
	g_source_set_static_name(source, "[meshsync] gzip body");
	return source;
}

static void
msd_inflate_input_stream_finalize(GObject *object)
{
	MsdInflateInputStream *self = MSD_INFLATE_INPUT_STREAM(object);

	inflateEnd(&self->z);
	g_free(self->input);
	g_free(self->corrupt);
	G_OBJECT_CLASS(msd_inflate_input_stream_parent_class)->finalize(object);
}

static void
msd_inflate_input_stream_class_init(MsdInflateInputStreamClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);
	GInputStreamClass *stream_class = G_INPUT_STREAM_CLASS(klass);

	object_class->finalize = msd_inflate_input_stream_finalize;
	stream_class->read_fn = msd_inflate_input_stream_read;
}

static void
msd_inflate_input_stream_pollable_init(GPollableInputStreamInterface *iface)
{
	iface->can_poll = msd_inflate_input_stream_can_poll;
	iface->is_readable = msd_inflate_input_stream_is_readable;
	iface->create_source = msd_inflate_input_stream_create_source;
	iface->read_nonblocking = msd_inflate_input_stream_read_nonblocking;
}

static void
msd_inflate_input_stream_init(MsdInflateInputStream *self)
{
	self->input = g_malloc(MSD_INFLATE_INPUT_SIZE);
	/* 16 + window bits: a gzip wrapper, as Content-Encoding: gzip promises */
	if (inflateInit2(&self->z, 16 + MAX_WBITS) != Z_OK)
		g_error("zlib: out of memory");
}

/**
 * msd_inflate_input_stream_new:
 * @base: the gzip-encoded body
 *
 * Returns: (transfer full): a stream of the decoded body; closing it closes @base
 */
GInputStream *
msd_inflate_input_stream_new(GInputStream *base)
{
	g_return_val_if_fail(G_IS_INPUT_STREAM(base), NULL);
	return g_object_new(MSD_TYPE_INFLATE_INPUT_STREAM, "base-stream", base, NULL);
}
