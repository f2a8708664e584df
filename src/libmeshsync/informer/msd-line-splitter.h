/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * Splits a byte stream into newline-terminated lines, whatever the read boundaries: a watch
 * stream's chunks may carry several events or part of one. A line longer than the cap is
 * reported once (MESHSYNC_ERROR_TOO_LARGE) and dropped as it arrives, up to its newline,
 * rather than buffered without bound; the lines after it are split as usual.
 */
typedef struct _MsdLineSplitter MsdLineSplitter;

MsdLineSplitter *msd_line_splitter_new(gsize max_line);
void msd_line_splitter_free(MsdLineSplitter *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsdLineSplitter, msd_line_splitter_free)

/* Appends bytes read from the stream. Invalidates lines returned before. */
void msd_line_splitter_push(MsdLineSplitter *self, const gchar *data, gsize length);

/* msd_line_splitter_push() without a copy, for a read that cannot wait: room for @want bytes
 * at the end of the buffer, to read into at once and then hand over with
 * msd_line_splitter_commit() (0 when nothing came). Invalidates lines returned before; nothing
 * else may touch the splitter in between. */
gchar *msd_line_splitter_reserve(MsdLineSplitter *self, gsize want);
void msd_line_splitter_commit(MsdLineSplitter *self, gsize length);

/* Returns TRUE and the next complete line (without "\n" or "\r\n"; blank lines are skipped),
 * valid until the next push. FALSE with @error unset: no complete line yet. FALSE with @error
 * set: the pending line exceeds the cap (MESHSYNC_ERROR_TOO_LARGE); it is dropped. */
gboolean
msd_line_splitter_next(MsdLineSplitter *self, const gchar **line, gsize *length, GError **error);

/* Bytes of an unfinished line still buffered: at the end of a stream, a truncated event. */
gsize msd_line_splitter_get_pending(MsdLineSplitter *self);

/* Forgets everything buffered (a new stream starts). */
void msd_line_splitter_reset(MsdLineSplitter *self);

G_END_DECLS
