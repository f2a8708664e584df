/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <string.h>

#include "model/msd-attribute-cache.h"

/* A value of @len bytes that differs from every other @seed. */
static gchar *
make_value(guint seed, gsize len)
{
	gchar *v = g_malloc(len + 1);

	for (gsize i = 0; i < len; i++)
		v[i] = (gchar)('a' + (seed * 7 + i) % 26);
	g_snprintf(v, len + 1, "{\"n\":%08u", seed);
	v[strlen(v)] = ',';
	v[len] = '\0';
	return v;
}

static gboolean
lookup(MsdAttributeCache *cache, const gchar *raw, GString *out)
{
	g_string_truncate(out, 0);
	return msd_attribute_cache_lookup(cache, raw, strlen(raw), out);
}

static void
test_hit_and_miss(void)
{
	g_autoptr(MsdAttributeCache) cache = msd_attribute_cache_new(1 << 20);
	g_autoptr(GString) out = g_string_new("prefix");
	g_autofree gchar *raw = make_value(1, 400);
	MsdAttributeCacheStats stats;

	g_assert_false(msd_attribute_cache_lookup(cache, raw, strlen(raw), out));
	g_assert_cmpstr(out->str, ==, "prefix");
	msd_attribute_cache_insert(cache, raw, strlen(raw), "WIRE", 4);
	/* appended after what the caller has */
	g_assert_true(msd_attribute_cache_lookup(cache, raw, strlen(raw), out));
	g_assert_cmpstr(out->str, ==, "prefixWIRE");
	/* the same bytes from another buffer */
	{
		g_autofree gchar *copy = g_strdup(raw);

		g_assert_true(lookup(cache, copy, out));
		g_assert_cmpstr(out->str, ==, "WIRE");
	}
	msd_attribute_cache_get_stats(cache, &stats);
	g_assert_cmpuint(stats.hits, ==, 2);
	g_assert_cmpuint(stats.misses, ==, 1);
	g_assert_cmpuint(stats.n_entries, ==, 1);
	g_assert_cmpuint(stats.bytes, >=, strlen(raw) + 4);
}

/* Equal length, one byte apart, anywhere: never the other's wire form. */
static void
test_whole_bytes_compared(void)
{
	g_autoptr(MsdAttributeCache) cache = msd_attribute_cache_new(1 << 20);
	g_autoptr(GString) out = g_string_new(NULL);
	g_autofree gchar *raw = make_value(2, 300);

	msd_attribute_cache_insert(cache, raw, strlen(raw), "A", 1);
	for (gsize i = 0; i < strlen(raw); i++) {
		g_autofree gchar *other = g_strdup(raw);

		other[i] = other[i] == 'x' ? 'y' : 'x';
		g_assert_false(lookup(cache, other, out));
	}
	/* a prefix is another value */
	g_assert_false(msd_attribute_cache_lookup(cache, raw, strlen(raw) - 1, out));
	g_assert_true(lookup(cache, raw, out));
	g_assert_cmpstr(out->str, ==, "A");
	/* a second insert of the same bytes keeps the first */
	msd_attribute_cache_insert(cache, raw, strlen(raw), "B", 1);
	g_assert_true(lookup(cache, raw, out));
	g_assert_cmpstr(out->str, ==, "A");
}

/* The bytes held stay within the budget; the least recently used go first. */
static void
test_budget_and_recency(void)
{
	const gsize budget = 64 * 1024;
	g_autoptr(MsdAttributeCache) cache = msd_attribute_cache_new(budget);
	g_autoptr(GString) out = g_string_new(NULL);
	g_autofree gchar *kept = make_value(0, 1000);
	MsdAttributeCacheStats stats;

	msd_attribute_cache_insert(cache, kept, strlen(kept), "kept", 4);
	for (guint seed = 1; seed <= 1000; seed++) {
		g_autofree gchar *raw = make_value(seed, 1000);
		g_autofree gchar *wire = g_strdup_printf("wire-%u", seed);

		msd_attribute_cache_insert(cache, raw, strlen(raw), wire, strlen(wire));
		/* used on every round: never the oldest */
		g_assert_true(lookup(cache, kept, out));
		g_assert_cmpstr(out->str, ==, "kept");
		msd_attribute_cache_get_stats(cache, &stats);
		g_assert_cmpuint(stats.bytes, <=, budget);
	}
	msd_attribute_cache_get_stats(cache, &stats);
	g_assert_cmpuint(stats.evictions, >, 900);
	g_assert_cmpuint(stats.n_entries + stats.evictions, ==, 1001);
	/* the newest are there, the first ones gone, each with its own wire form */
	{
		g_autofree gchar *newest = make_value(1000, 1000);
		g_autofree gchar *oldest = make_value(1, 1000);

		g_assert_true(lookup(cache, newest, out));
		g_assert_cmpstr(out->str, ==, "wire-1000");
		g_assert_false(lookup(cache, oldest, out));
	}
}

static void
test_oversize_not_held(void)
{
	g_autoptr(MsdAttributeCache) cache = msd_attribute_cache_new(4096);
	g_autoptr(GString) out = g_string_new(NULL);
	g_autofree gchar *small = make_value(1, 500);
	g_autofree gchar *big = make_value(2, 5000);
	MsdAttributeCacheStats stats;

	msd_attribute_cache_insert(cache, small, strlen(small), "s", 1);
	msd_attribute_cache_insert(cache, big, strlen(big), "b", 1);
	g_assert_false(lookup(cache, big, out));
	/* and it did not push out what fits */
	g_assert_true(lookup(cache, small, out));
	msd_attribute_cache_get_stats(cache, &stats);
	g_assert_cmpuint(stats.n_entries, ==, 1);
	g_assert_cmpuint(stats.evictions, ==, 0);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/attribute-cache/hit-and-miss", test_hit_and_miss);
	g_test_add_func("/attribute-cache/whole-bytes-compared", test_whole_bytes_compared);
	g_test_add_func("/attribute-cache/budget-and-recency", test_budget_and_recency);
	g_test_add_func("/attribute-cache/oversize-not-held", test_oversize_not_held);
	return g_test_run();
}
