/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncModel"

#include "config.h"

#include <string.h>

#include "model/msd-attribute-cache.h"

/* What the table compares: an entry's first member, or a lookup's probe. */
typedef struct {
	guint64 hash;
	gsize raw_len;
	const gchar *raw;
} Key;

/* One value in one block: the key, then raw bytes and wire bytes. */
typedef struct {
	Key key; /* first: the table's key is the entry itself */
	gsize wire_len;
	GList link; /* in the recency queue, newest at the head */
	gchar bytes[];
} Entry;

struct _MsdAttributeCache {
	GHashTable *entries; /* Entry* as its own Key* */
	GQueue recency;
	gsize max_bytes;
	gsize bytes;
	guint64 hits;
	guint64 misses;
	guint64 evictions;
};

/* Four independent lanes of 8 bytes, multiply and fold, so that the multiplications overlap:
 * not cryptographic, only spread for the table (the full comparison decides equality). A
 * pod's spec is about 3 KB, hashed on every watch event that carries one. */
static inline guint64
mix(guint64 h, guint64 w)
{
	h = (h ^ w) * G_GUINT64_CONSTANT(0xff51afd7ed558ccd);
	return h ^ (h >> 32);
}

static guint64
hash_bytes(const gchar *p, gsize n)
{
	guint64 a = G_GUINT64_CONSTANT(0x9e3779b97f4a7c15) ^ n;
	guint64 b = G_GUINT64_CONSTANT(0xc2b2ae3d27d4eb4f);
	guint64 c = G_GUINT64_CONSTANT(0x165667b19e3779f9);
	guint64 d = G_GUINT64_CONSTANT(0x27d4eb2f165667c5);
	gsize i = 0;
	guint64 w[4];

	for (; i + 32 <= n; i += 32) {
		memcpy(w, p + i, 32);
		a = mix(a, w[0]);
		b = mix(b, w[1]);
		c = mix(c, w[2]);
		d = mix(d, w[3]);
	}
	for (; i + 8 <= n; i += 8) {
		memcpy(w, p + i, 8);
		a = mix(a, w[0]);
	}
	if (i < n) {
		w[0] = 0;
		memcpy(w, p + i, n - i);
		b = mix(b, w[0]);
	}
	a = mix(a, b);
	c = mix(c, d);
	a = mix(a, c);
	return a ^ (a >> 29);
}

static guint
key_hash(gconstpointer k)
{
	return (guint)((const Key *)k)->hash;
}

static gboolean
key_equal(gconstpointer a, gconstpointer b)
{
	const Key *x = a;
	const Key *y = b;

	return x->hash == y->hash && x->raw_len == y->raw_len &&
	       memcmp(x->raw, y->raw, x->raw_len) == 0;
}

static gsize
entry_size(gsize raw_len, gsize wire_len)
{
	return sizeof(Entry) + raw_len + wire_len;
}

MsdAttributeCache *
msd_attribute_cache_new(gsize max_bytes)
{
	MsdAttributeCache *self = g_new0(MsdAttributeCache, 1);

	self->entries = g_hash_table_new_full(key_hash, key_equal, g_free, NULL);
	g_queue_init(&self->recency);
	self->max_bytes = max_bytes;
	return self;
}

void
msd_attribute_cache_free(MsdAttributeCache *self)
{
	if (self == NULL)
		return;
	g_hash_table_destroy(self->entries);
	g_free(self);
}

gboolean
msd_attribute_cache_lookup(MsdAttributeCache *self, const gchar *raw, gsize raw_len, GString *out)
{
	Key probe = {hash_bytes(raw, raw_len), raw_len, raw};
	Entry *e = g_hash_table_lookup(self->entries, &probe);

	if (e == NULL) {
		self->misses++;
		return FALSE;
	}
	g_queue_unlink(&self->recency, &e->link);
	g_queue_push_head_link(&self->recency, &e->link);
	g_string_append_len(out, e->bytes + e->key.raw_len, (gssize)e->wire_len);
	self->hits++;
	return TRUE;
}

static void
evict_oldest(MsdAttributeCache *self)
{
	GList *link = g_queue_pop_tail_link(&self->recency);
	Entry *e = link->data;

	self->bytes -= entry_size(e->key.raw_len, e->wire_len);
	self->evictions++;
	g_hash_table_remove(self->entries, e); /* frees it */
}

void
msd_attribute_cache_insert(
        MsdAttributeCache *self, const gchar *raw, gsize raw_len, const gchar *wire, gsize wire_len)
{
	gsize size = entry_size(raw_len, wire_len);
	Key probe = {hash_bytes(raw, raw_len), raw_len, raw};
	Entry *e;

	if (size > self->max_bytes || g_hash_table_contains(self->entries, &probe))
		return;
	while (self->bytes + size > self->max_bytes && self->recency.length > 0)
		evict_oldest(self);
	e = g_malloc(size);
	memcpy(e->bytes, raw, raw_len);
	memcpy(e->bytes + raw_len, wire, wire_len);
	e->key = (Key){probe.hash, raw_len, e->bytes};
	e->wire_len = wire_len;
	e->link = (GList){e, NULL, NULL};
	g_hash_table_add(self->entries, e);
	g_queue_push_head_link(&self->recency, &e->link);
	self->bytes += size;
}

void
msd_attribute_cache_get_stats(MsdAttributeCache *self, MsdAttributeCacheStats *stats)
{
	if (self == NULL) {
		memset(stats, 0, sizeof(*stats));
		return;
	}
	stats->hits = self->hits;
	stats->misses = self->misses;
	stats->evictions = self->evictions;
	stats->n_entries = g_hash_table_size(self->entries);
	stats->bytes = self->bytes;
}
