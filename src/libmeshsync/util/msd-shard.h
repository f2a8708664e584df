/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The shard an object belongs to among @total: FNV-1a (64 bits) of its uid, modulo @total,
 * as kube-state-metrics shards. A uid never changes, so an object stays with one shard for
 * its whole life, whatever happens to it. */
static inline guint
msd_shard_of(const gchar *uid, gsize length, guint total)
{
	guint64 hash = G_GUINT64_CONSTANT(14695981039346656037);

	for (gsize i = 0; i < length; i++) {
		hash ^= (guchar)uid[i];
		hash *= G_GUINT64_CONSTANT(1099511628211);
	}
	return total > 1 ? (guint)(hash % total) : 0;
}

G_END_DECLS
