/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * The wire form of recently converted JSON values, by their raw bytes.
 *
 * A MODIFIED event rarely changes an object's spec (the kubelet and the controllers write
 * status), yet the wire form of the spec (Go's sorted, escaped-again re-serialization) is the
 * largest single cost of a conversion. This cache maps the exact raw bytes of a value to its
 * wire form, so that the next event of the same object copies it instead. It is keyed by
 * content, not by object: a hit needs the same bytes, compared in full, so a hit is never
 * wrong. Entries are dropped least recently used first once their bytes pass the budget.
 *
 * Not thread-safe: one cache per main-loop thread.
 */
typedef struct _MsdAttributeCache MsdAttributeCache;

typedef struct {
	guint64 hits;
	guint64 misses;
	guint64 evictions;
	guint n_entries;
	gsize bytes; /* raw and wire bytes held, with the entries' own size */
} MsdAttributeCacheStats;

/* Values shorter than this are converted again: hashing and a lookup cost about as much. */
#define MSD_ATTRIBUTE_CACHE_MIN_VALUE 256

MsdAttributeCache *msd_attribute_cache_new(gsize max_bytes);
void msd_attribute_cache_free(MsdAttributeCache *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsdAttributeCache, msd_attribute_cache_free)

/* Appends the wire form of @raw to @out and returns TRUE when it is held; FALSE (nothing
 * appended) otherwise. */
gboolean
msd_attribute_cache_lookup(MsdAttributeCache *self, const gchar *raw, gsize raw_len, GString *out);
/* Holds @wire as the wire form of @raw, dropping old entries past the budget. A value
 * bigger than the budget is not held. */
void msd_attribute_cache_insert(MsdAttributeCache *self,
                                const gchar *raw,
                                gsize raw_len,
                                const gchar *wire,
                                gsize wire_len);
/* All zero for a NULL @self (no cache). */
void msd_attribute_cache_get_stats(MsdAttributeCache *self, MsdAttributeCacheStats *stats);

G_END_DECLS
