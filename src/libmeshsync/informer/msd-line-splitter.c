/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncInformer"

#include "config.h"

#include <string.h>

#include "meshsync-error.h"
#include "informer/msd-line-splitter.h"
#include "util/msd-i18n.h"

struct _MsdLineSplitter {
	GByteArray *buffer; /* (owned) */
	gsize consumed;     /* bytes at the front already handed out as lines */
	gsize scanned;      /* bytes after @consumed known to hold no newline */
	gsize max_line;
	gboolean discarding; /* inside a line past the cap: dropped up to its newline */
	gsize reserved_at;   /* where the room msd_line_splitter_reserve() gave starts */
};

MsdLineSplitter *
msd_line_splitter_new(gsize max_line)
{
	MsdLineSplitter *self = g_new0(MsdLineSplitter, 1);

	self->buffer = g_byte_array_new();
	self->max_line = max_line;
	return self;
}

void
msd_line_splitter_free(MsdLineSplitter *self)
{
	if (self == NULL)
		return;
	g_byte_array_unref(self->buffer);
	g_free(self);
}

gchar *
msd_line_splitter_reserve(MsdLineSplitter *self, gsize want)
{
	/* drop handed-out lines before growing, so that the buffer holds at most one partial
	 * line plus what is read */
	if (self->consumed > 0) {
		g_byte_array_remove_range(self->buffer, 0, (guint)self->consumed);
		self->consumed = 0;
	}
	self->reserved_at = self->buffer->len;
	g_byte_array_set_size(self->buffer, (guint)(self->reserved_at + want));
	return (gchar *)self->buffer->data + self->reserved_at;
}

void
msd_line_splitter_commit(MsdLineSplitter *self, gsize length)
{
	gchar *data = (gchar *)self->buffer->data + self->reserved_at;

	g_byte_array_set_size(self->buffer, (guint)(self->reserved_at + length));
	if (self->discarding) {
		/* nothing of an oversized line is kept (the buffer holds at most this read of
		 * it): memory stays at the cap */
		const gchar *newline = memchr(data, '\n', length);

		if (newline == NULL) {
			g_byte_array_set_size(self->buffer, (guint)self->reserved_at);
			return;
		}
		self->discarding = FALSE;
		g_byte_array_remove_range(self->buffer, (guint)self->reserved_at,
		                          (guint)(newline + 1 - data));
	}
}

void
msd_line_splitter_push(MsdLineSplitter *self, const gchar *data, gsize length)
{
	if (length == 0)
		return;
	memcpy(msd_line_splitter_reserve(self, length), data, length);
	msd_line_splitter_commit(self, length);
}

gboolean
msd_line_splitter_next(MsdLineSplitter *self, const gchar **line, gsize *length, GError **error)
{
	for (;;) {
		const gchar *start = (const gchar *)self->buffer->data + self->consumed;
		gsize available = self->buffer->len - self->consumed;
		const gchar *newline;
		gsize line_length;

		newline = available > self->scanned
		                  ? memchr(start + self->scanned, '\n', available - self->scanned)
		                  : NULL;
		if (newline == NULL) {
			gsize partial = available;

			self->scanned = available;
			/* a CR at the end may be the first half of the CRLF that ends the line: it
			 * does not count, as it does not once the LF is here */
			if (partial > 0 && start[partial - 1] == '\r')
				partial--;
			if (partial > self->max_line) {
				g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_TOO_LARGE,
				            _("watch event longer than %zu bytes"), self->max_line);
				/* reported once; the rest of it is dropped as it comes */
				g_byte_array_set_size(self->buffer, 0);
				self->consumed = 0;
				self->scanned = 0;
				self->discarding = TRUE;
				return FALSE;
			}
			return FALSE;
		}
		line_length = (gsize)(newline - start);
		self->consumed += line_length + 1;
		self->scanned = 0;
		if (line_length > 0 && start[line_length - 1] == '\r')
			line_length--;
		if (line_length > self->max_line) {
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_TOO_LARGE,
			            _("watch event longer than %zu bytes"), self->max_line);
			return FALSE;
		}
		if (line_length == 0)
			continue;
		*line = start;
		*length = line_length;
		return TRUE;
	}
}

gsize
msd_line_splitter_get_pending(MsdLineSplitter *self)
{
	/* a stream that ends inside a dropped line ended inside an event too */
	if (self->discarding)
		return 1;
	return self->buffer->len - self->consumed;
}

void
msd_line_splitter_reset(MsdLineSplitter *self)
{
	g_byte_array_set_size(self->buffer, 0);
	self->consumed = 0;
	self->scanned = 0;
	self->discarding = FALSE;
}
