/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * The length of the next chunk to hand out from @data (@len bytes): at most @max bytes, and
 * never ending inside a UTF-8 sequence that could still be completed. Bytes that can never
 * be valid UTF-8 count as one character each, so every byte is handed out eventually.
 *
 * When @final is FALSE more bytes may follow: a sequence cut short at the very end of @data
 * is held back (the result may be 0 then) so that its continuation joins it. When @final is
 * TRUE nothing follows and everything up to @max goes.
 *
 * @max must be at least 4 (the longest sequence), so a chunk always makes progress.
 */
gsize msd_utf8_chunk_length(const guint8 *data, gsize len, gsize max, gboolean final);

/*
 * Accumulates a byte stream and cuts it into chunks of at most @max bytes on character
 * boundaries: push what was read, then pop chunks until none is left.
 */
typedef struct {
	GByteArray *pending;
	gsize max;
} MsdUtf8Chunker;

void msd_utf8_chunker_init(MsdUtf8Chunker *self, gsize max);
void msd_utf8_chunker_clear(MsdUtf8Chunker *self);
void msd_utf8_chunker_push(MsdUtf8Chunker *self, const guint8 *data, gsize len);
/* The next chunk, or NULL when what is left waits for more input (or is empty). With @final
 * the held-back tail goes too. */
GBytes *msd_utf8_chunker_pop(MsdUtf8Chunker *self, gboolean final);
/* How many bytes are held. */
gsize msd_utf8_chunker_get_pending(MsdUtf8Chunker *self);

G_END_DECLS
