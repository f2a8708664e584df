/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSync"

#include "config.h"

#include <string.h>

#include "util/msd-utf8-chunk.h"

/* The length a lead byte announces, or 0 for a byte that starts no sequence. */
static guint
msd_utf8_lead_length(guint8 c)
{
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return 2;
	if (c >= 0xe0 && c <= 0xef)
		return 3;
	if (c >= 0xf0 && c <= 0xf4)
		return 4;
	return 0;
}

gsize
msd_utf8_chunk_length(const guint8 *data, gsize len, gsize max, gboolean final)
{
	gsize n;

	g_return_val_if_fail(max >= 4, MIN(len, max));

	n = MIN(len, max);
	if (n == 0 || (final && n == len))
		return n;
	/* Only the last three bytes can belong to a sequence that crosses the cut: find the
	 * lead byte among them and see whether its sequence reaches past the cut. */
	for (gsize back = 1; back <= 3 && back <= n; back++) {
		guint8 c = data[n - back];
		guint want;

		if ((c & 0xc0) == 0x80)
			continue; /* a continuation byte: the lead is further back */
		want = msd_utf8_lead_length(c);
		if (want <= back)
			return n; /* complete (or not a lead byte at all): cut here */
		/* The bytes already there must be a valid prefix, or the lead is invalid on its
		 * own and goes as one byte. */
		for (gsize i = n - back + 1; i < n; i++) {
			if ((data[i] & 0xc0) != 0x80)
				return n;
		}
		return n - back;
	}
	return n;
}

void
msd_utf8_chunker_init(MsdUtf8Chunker *self, gsize max)
{
	self->pending = g_byte_array_new();
	self->max = MAX(max, 4);
}

void
msd_utf8_chunker_clear(MsdUtf8Chunker *self)
{
	g_clear_pointer(&self->pending, g_byte_array_unref);
}

void
msd_utf8_chunker_push(MsdUtf8Chunker *self, const guint8 *data, gsize len)
{
	g_return_if_fail(len <= G_MAXUINT);
	g_byte_array_append(self->pending, data, (guint)len);
}

GBytes *
msd_utf8_chunker_pop(MsdUtf8Chunker *self, gboolean final)
{
	gsize n;
	GBytes *chunk;

	if (self->pending->len == 0)
		return NULL;
	/* With more than a chunk buffered the cut is never at the end of the data, so the
	 * tail is only held back while it is the end of what has arrived. */
	n = msd_utf8_chunk_length(self->pending->data, self->pending->len, self->max,
	                          final || self->pending->len > self->max);
	if (n == 0)
		return NULL;
	chunk = g_bytes_new(self->pending->data, n);
	g_byte_array_remove_range(self->pending, 0, (guint)n);
	return chunk;
}

gsize
msd_utf8_chunker_get_pending(MsdUtf8Chunker *self)
{
	return self->pending->len;
}
