/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <string.h>

#include "informer/msd-store-codec.h"
#include "informer/msd-store.h"
#include "test-random-object.h"

/* @object with metadata.uid and metadata.resourceVersion set (last in metadata: the last of
 * a repeated key is the one read), or @object itself when it has no metadata object. */
static gchar *
with_identity(const gchar *object, const gchar *uid, const gchar *rv)
{
	g_autofree gchar *members =
	        g_strdup_printf("\"uid\":\"%s\",\"resourceVersion\":\"%s\"", uid, rv);

	return test_metadata_insert(object, members, TRUE);
}

/* An object of one of a few shapes the informers store, different in each @i. */
static gchar *
object_json(const gchar *kind, guint i)
{
	if (g_str_equal(kind, "Pod"))
		return g_strdup_printf(
		        "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web-%u\","
		        "\"namespace\":\"ns-%u\",\"uid\":\"pod-%u\",\"resourceVersion\":\"%u\","
		        "\"labels\":{\"app\":\"web\",\"pod-template-hash\":\"%x\"}},\"spec\":{"
		        "\"containers\":[{\"name\":\"nginx\",\"image\":\"nginx:1.%u\",\"ports\":[{"
		        "\"containerPort\":80}],\"resources\":{\"limits\":{\"cpu\":\"%um\"}}}],"
		        "\"nodeName\":\"node-%u\"},\"status\":{\"phase\":\"Running\",\"podIP\":"
		        "\"10.%u.%u.%u\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}"
		        "}",
		        i, i % 7, i, i + 1, i * 2654435761u, i % 30, 100 + i % 900, i % 50, i % 256,
		        (i / 256) % 256, i % 251);
	if (g_str_equal(kind, "ConfigMap"))
		return g_strdup_printf(
		        "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"cm-"
		        "%u\","
		        "\"namespace\":\"ns-%u\",\"uid\":\"cm-%u\",\"resourceVersion\":\"%u\"},"
		        "\"data\":{\"app.properties\":\"threads=%u\\nname=cm-%u\\n\",\"n\":\"%u\"}"
		        "}",
		        i, i % 5, i, i + 1, i % 64, i, i * 7);
	if (g_str_equal(kind, "Namespace"))
		return g_strdup_printf(
		        "{\"kind\":\"Namespace\",\"apiVersion\":\"v1\",\"metadata\":{"
		        "\"name\":\"ns-%u\",\"uid\":\"ns-%u\",\"resourceVersion\":"
		        "\"%u\"},\"status\":{\"phase\":\"Active\"}}",
		        i, i, i + 1);
	/* a custom resource with a free-form spec */
	return g_strdup_printf("{\"kind\":\"%s\",\"apiVersion\":\"example.io/v1\",\"metadata\":{"
	                       "\"name\":\"x-%u\",\"uid\":\"x-%u\",\"resourceVersion\":\"%u\"},"
	                       "\"spec\":{\"replicas\":%u,\"text\":\"caf\\u00e9 %u \\\"q\\\"\"}}",
	                       kind, i, i, i + 1, i % 9, i * 31);
}

static MsdStoreEntry *
entry_new(const gchar *json)
{
	g_autoptr(GError) error = NULL;
	MsdStoreEntry *entry = msd_store_entry_new_from_json(json, strlen(json), &error);

	g_assert_no_error(error);
	g_assert_nonnull(entry);
	return entry;
}

/* Every stored object comes back byte for byte: checked against a plain twin of each. */
static void
assert_store_holds(MsdStore *store, GHashTable *plain_by_uid)
{
	g_autoptr(GPtrArray) held = msd_store_snapshot(store);
	guint64 bytes_held = 0;
	guint64 json_bytes = 0;

	g_assert_cmpuint(held->len, ==, g_hash_table_size(plain_by_uid));
	for (guint i = 0; i < held->len; i++) {
		MsdStoreEntry *entry = g_ptr_array_index(held, i);
		MsdStoreEntry *twin = g_hash_table_lookup(plain_by_uid, entry->uid);
		g_autoptr(GBytes) object = msd_store_entry_dup_object(entry);
		g_autoptr(GBytes) expected = msd_store_entry_dup_object(twin);

		g_assert_true(g_bytes_equal(object, expected));
		g_assert_cmpuint(entry->size, ==, g_bytes_get_size(expected));
		bytes_held += entry->held_size;
		json_bytes += entry->size;
	}
	g_assert_cmpuint(msd_store_get_bytes_held(store), ==, bytes_held);
	g_assert_cmpuint(msd_store_get_json_bytes(store), ==, json_bytes);
}

static void
store_one(MsdStore *store, GHashTable *plain_by_uid, const gchar *json)
{
	g_autoptr(MsdStoreEntry) entry = entry_new(json);
	MsdStoreEntry *twin = entry_new(json);

	g_hash_table_replace(plain_by_uid, twin->uid, twin);
	msd_store_upsert(store, entry);
}

static GHashTable *
plain_table_new(void)
{
	return g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
	                             (GDestroyNotify)msd_store_entry_unref);
}

/* Many kinds, each through a store of its own as the informers have: objects stored before
 * the dictionary exists, and after, all come back; the dictionary makes the store smaller. */
static void
test_codec_round_trip_kinds(void)
{
	static const gchar *const kinds[] = {"Pod", "ConfigMap", "Namespace", "Widget"};

	for (guint k = 0; k < G_N_ELEMENTS(kinds); k++) {
		g_autoptr(MsdStore) store = msd_store_new();
		g_autoptr(GHashTable) plain = plain_table_new();
		gboolean before = FALSE;
		gboolean after = FALSE;
		g_autoptr(GPtrArray) held = NULL;

		msd_store_set_compressed(store, TRUE);
		g_assert_true(msd_store_get_compressed(store));
		for (guint i = 0; i < 600; i++) {
			g_autofree gchar *json = object_json(kinds[k], i);

			store_one(store, plain, json);
		}
		g_assert_nonnull(msd_store_get_dict(store));
		g_assert_cmpuint(msd_store_dict_get_version(msd_store_get_dict(store)), ==, 1);
		assert_store_holds(store, plain);
		held = msd_store_snapshot(store);
		for (guint i = 0; i < held->len; i++) {
			MsdStoreEntry *entry = g_ptr_array_index(held, i);

			before |= entry->dict == NULL;
			after |= entry->dict != NULL;
		}
		g_assert_true(before && after);
		/* far smaller than the JSON: what the store is for */
		g_assert_cmpuint(msd_store_get_bytes_held(store) * 2, <,
		                 msd_store_get_json_bytes(store));
	}
}

/* The smallest object stays plain (zstd would make it bigger); a huge one, larger than any
 * training sample, goes through whole, whether it compresses well or hardly at all. */
static void
test_codec_tiny_and_huge(void)
{
	g_autoptr(MsdStore) store = msd_store_new();
	g_autoptr(GHashTable) plain = plain_table_new();
	const gchar *tiny = "{\"metadata\":{\"name\":\"a\"}}";
	g_autoptr(GString) repetitive =
	        g_string_new("{\"metadata\":{\"name\":\"big\"},\"data\":\"");
	g_autoptr(GString) noisy = g_string_new("{\"metadata\":{\"name\":\"noisy\"},\"data\":\"");
	g_autoptr(GRand) rand = g_rand_new_with_seed(test_random_seed(22));
	MsdStoreEntry *stored;

	for (guint i = 0; i < 4 * 1024 * 1024 / 8; i++)
		g_string_append(repetitive, "abcdefgh");
	g_string_append(repetitive, "\"}");
	for (guint i = 0; i < 2 * 1024 * 1024; i++)
		g_string_append_c(noisy, (gchar)('a' + g_rand_int_range(rand, 0, 26)));
	g_string_append(noisy, "\"}");

	msd_store_set_compressed(store, TRUE);
	store_one(store, plain, tiny);
	store_one(store, plain, repetitive->str);
	store_one(store, plain, noisy->str);
	assert_store_holds(store, plain);

	stored = msd_store_lookup_by_name(store, NULL, "a");
	g_assert_false(stored->compressed);
	stored = msd_store_lookup_by_name(store, NULL, "big");
	g_assert_true(stored->compressed);
	g_assert_cmpuint(stored->held_size, <, stored->size / 100);
	stored = msd_store_lookup_by_name(store, NULL, "noisy");
	g_assert_cmpuint(stored->size, ==, noisy->len);

	/* the codec alone: nothing to compress gives nothing */
	{
		MsdStoreCodec *codec = msd_store_codec_new();
		MsdStoreDict *dict = NULL;
		gsize frame_size = 0;

		g_assert_null(msd_store_codec_compress_frame(codec, (const guint8 *)"", 0, &dict,
		                                             &frame_size));
		g_assert_null(dict);
		msd_store_codec_free(codec);
	}
}

/* A retrain makes a new dictionary current; what was compressed with the old one (or with none)
 * stays readable, also once the store that trained them is gone. */
static void
test_codec_retrain_keeps_old_entries(void)
{
	g_autoptr(MsdStore) store = msd_store_new();
	g_autoptr(GHashTable) plain = plain_table_new();
	g_autoptr(GPtrArray) held = NULL;
	gboolean versions[3] = {FALSE, FALSE, FALSE};
	MsdStoreDict *first;

	msd_store_set_compressed(store, TRUE);
	for (guint i = 0; i < 200; i++) {
		g_autofree gchar *json = object_json("Pod", i);

		store_one(store, plain, json);
	}
	first = msd_store_dict_ref(msd_store_get_dict(store));
	g_assert_cmpuint(msd_store_dict_get_version(first), ==, 1);
	/* the codec's own second training comes further in */
	for (guint i = 200; i < 4200; i++) {
		g_autofree gchar *json = object_json("Pod", i);

		store_one(store, plain, json);
	}
	g_assert_cmpuint(msd_store_dict_get_version(msd_store_get_dict(store)), ==, 2);
	g_assert_true(msd_store_get_dict(store) != first);
	msd_store_dict_unref(first);
	assert_store_holds(store, plain);

	held = msd_store_snapshot(store);
	for (guint i = 0; i < held->len; i++) {
		MsdStoreEntry *entry = g_ptr_array_index(held, i);

		versions[entry->dict != NULL ? msd_store_dict_get_version(entry->dict) : 0] = TRUE;
	}
	g_assert_true(versions[0] && versions[1] && versions[2]);

	/* the entries hold their dictionaries: the store may go first */
	g_clear_object(&store);
	for (guint i = 0; i < held->len; i++) {
		MsdStoreEntry *entry = g_ptr_array_index(held, i);
		g_autoptr(GBytes) object = msd_store_entry_dup_object(entry);
		g_autoptr(GBytes) expected =
		        msd_store_entry_dup_object(g_hash_table_lookup(plain, entry->uid));

		g_assert_true(g_bytes_equal(object, expected));
	}
}

/* A type with fewer objects than the first training waits for trains when its list is
 * complete, on what it has, instead of holding its samples for objects that may never come. */
static void
test_codec_small_type_trains_at_list_end(void)
{
	g_autoptr(MsdStore) store = msd_store_new();
	g_autoptr(GHashTable) plain = plain_table_new();
	g_autoptr(GPtrArray) deleted = NULL;

	msd_store_set_compressed(store, TRUE);
	msd_store_begin_relist(store);
	for (guint i = 0; i < 60; i++) {
		g_autofree gchar *json = object_json("Pod", i);
		g_autoptr(MsdStoreEntry) entry = entry_new(json);
		MsdStoreEntry *displaced = NULL;

		g_hash_table_replace(plain, entry->uid, entry_new(json));
		msd_store_relist_upsert(store, entry, &displaced);
		g_assert_null(displaced);
	}
	g_assert_null(msd_store_get_dict(store));
	deleted = msd_store_end_relist(store);
	g_assert_cmpuint(deleted->len, ==, 0);
	g_assert_nonnull(msd_store_get_dict(store));
	g_assert_cmpuint(msd_store_dict_get_version(msd_store_get_dict(store)), ==, 1);
	/* what comes after is compressed with it */
	for (guint i = 60; i < 70; i++) {
		g_autofree gchar *json = object_json("Pod", i);

		store_one(store, plain, json);
	}
	g_assert_true(msd_store_lookup(store, "pod-65")->dict == msd_store_get_dict(store));
	assert_store_holds(store, plain);
}

/* Frames of one codec do not depend on what another codec (another dictionary, another level)
 * compressed on the same thread in between: a thread's zstd context keeps its set-up from
 * frame to frame, and must take each codec's own every time. */
static GBytes *
compress_bytes(MsdStoreCodec *codec, const gchar *json, MsdStoreDict **dict)
{
	gsize frame_size = 0;
	guint8 *frame = msd_store_codec_compress_frame(codec, (const guint8 *)json, strlen(json),
	                                               dict, &frame_size);

	g_assert_nonnull(frame);
	return g_bytes_new_take(frame, frame_size);
}

static void
test_codec_interleaved(void)
{
	MsdStoreCodec *pods = msd_store_codec_new();
	MsdStoreCodec *maps = msd_store_codec_new();
	MsdStoreCodec *fast = msd_store_codec_new();
	g_autofree gchar *probe = object_json("Pod", 100000);
	g_autoptr(GBytes) alone = NULL;
	g_autoptr(MsdStoreDict) alone_dict = NULL;

	msd_store_codec_set_level(fast, -5);
	/* both trained, each on its own kind */
	for (guint i = 0; i < 300; i++) {
		g_autofree gchar *pod = object_json("Pod", i);
		g_autofree gchar *map = object_json("ConfigMap", i);
		g_autoptr(MsdStoreDict) d1 = NULL;
		g_autoptr(MsdStoreDict) d2 = NULL;

		g_bytes_unref(compress_bytes(pods, pod, &d1));
		g_bytes_unref(compress_bytes(maps, map, &d2));
	}
	g_assert_nonnull(msd_store_codec_get_dict(pods));
	g_assert_nonnull(msd_store_codec_get_dict(maps));
	alone = compress_bytes(pods, probe, &alone_dict);

	for (guint i = 0; i < 3; i++) {
		g_autofree gchar *map = object_json("ConfigMap", 1000 + i);
		g_autoptr(MsdStoreDict) other_dict = NULL;
		g_autoptr(MsdStoreDict) fast_dict = NULL;
		g_autoptr(MsdStoreDict) dict = NULL;
		g_autoptr(GBytes) again = NULL;
		g_autoptr(GBytes) back = NULL;

		/* another dictionary, then another level without one, between the two */
		g_bytes_unref(compress_bytes(maps, map, &other_dict));
		g_bytes_unref(compress_bytes(fast, probe, &fast_dict));
		g_assert_nonnull(other_dict);
		g_assert_null(fast_dict);
		again = compress_bytes(pods, probe, &dict);
		g_assert_true(dict == alone_dict);
		g_assert_true(g_bytes_equal(again, alone));
		back = msd_store_codec_decompress(dict, g_bytes_get_data(again, NULL),
		                                  g_bytes_get_size(again), strlen(probe));
		g_assert_cmpmem(g_bytes_get_data(back, NULL), g_bytes_get_size(back), probe,
		                strlen(probe));
	}
	msd_store_codec_free(pods);
	msd_store_codec_free(maps);
	msd_store_codec_free(fast);
}

/* A training asked for with too few samples changes nothing. */
static void
test_codec_train_without_samples(void)
{
	MsdStoreCodec *codec = msd_store_codec_new();

	g_assert_false(msd_store_codec_train(codec));
	g_assert_null(msd_store_codec_get_dict(codec));
	msd_store_codec_free(codec);
}

/* Random objects (escapes, invalid UTF-8, odd whitespace, managedFields) upserted, replaced
 * and deleted at random in a compressing store: what it holds is always what was stored, and
 * its byte counts add up. */
static void
test_codec_random(void)
{
	g_autoptr(GRand) rand = g_rand_new_with_seed(test_random_seed(2222));
	g_autoptr(MsdStore) store = msd_store_new();
	g_autoptr(GHashTable) plain = plain_table_new();

	msd_store_set_compressed(store, TRUE);
	for (guint i = 0; i < 3000; i++) {
		g_autofree gchar *object = test_random_object(rand);
		g_autofree gchar *with_fields =
		        test_add_managed_fields(object, (gsize)g_rand_int_range(rand, 0, 2048));
		g_autofree gchar *uid = g_strdup_printf("u%d", g_rand_int_range(rand, 0, 400));
		g_autofree gchar *rv = g_strdup_printf("%u", i);
		g_autoptr(GError) error = NULL;
		g_autoptr(MsdStoreEntry) entry = NULL;
		g_autofree gchar *json = NULL;
		MsdStoreEntry *twin;

		if (g_rand_int_range(rand, 0, 10) == 0) {
			g_autoptr(MsdStoreEntry) gone = msd_store_delete(store, uid);

			if (gone != NULL) {
				g_autoptr(GBytes) last = msd_store_entry_dup_object(gone);
				g_autoptr(GBytes) expected =
				        msd_store_entry_dup_object(g_hash_table_lookup(plain, uid));

				g_assert_true(g_bytes_equal(last, expected));
			}
			g_hash_table_remove(plain, uid);
			continue;
		}
		/* the store keys by uid: give the random object one of a few, and a new version */
		json = with_identity(with_fields, uid, rv);
		entry = msd_store_entry_new_from_json(json, strlen(json), &error);
		if (entry == NULL)
			continue; /* no metadata.name: not storable, said by the store's tests */
		g_assert_cmpstr(entry->uid, ==, uid);
		g_assert_cmpstr(entry->resource_version, ==, rv);
		twin = msd_store_entry_new_from_json(json, strlen(json), NULL);
		/* a namesake under another uid is displaced by name in relists only; here the
		 * by-uid table is what is compared */
		g_hash_table_replace(plain, twin->uid, twin);
		msd_store_upsert(store, entry);
	}
	assert_store_holds(store, plain);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/store-codec/round-trip-kinds", test_codec_round_trip_kinds);
	g_test_add_func("/store-codec/tiny-and-huge", test_codec_tiny_and_huge);
	g_test_add_func("/store-codec/retrain-keeps-old-entries",
	                test_codec_retrain_keeps_old_entries);
	g_test_add_func("/store-codec/small-type-trains-at-list-end",
	                test_codec_small_type_trains_at_list_end);
	g_test_add_func("/store-codec/train-without-samples", test_codec_train_without_samples);
	g_test_add_func("/store-codec/interleaved", test_codec_interleaved);
	g_test_add_func("/store-codec/random", test_codec_random);
	return g_test_run();
}
