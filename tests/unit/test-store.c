/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <string.h>

#include "meshsync-error.h"
#include "informer/msd-store.h"

static MsdStoreEntry *
entry_new(const gchar *json)
{
	g_autoptr(GError) error = NULL;
	MsdStoreEntry *entry = msd_store_entry_new_from_json(json, strlen(json), &error);

	g_assert_no_error(error);
	g_assert_nonnull(entry);
	return entry;
}

/* An object of nothing but its identity. */
static MsdStoreEntry *
named_entry(const gchar *namespace_, const gchar *name, const gchar *uid, const gchar *rv)
{
	g_autofree gchar *json = g_strdup_printf(
	        "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"%s\","
	        "\"resourceVersion\":\"%s\"}}",
	        name, namespace_, uid, rv);

	return entry_new(json);
}

static void
assert_bytes(GBytes *bytes, const gchar *expected)
{
	gsize size = 0;
	const gchar *data = g_bytes_get_data(bytes, &size);

	g_assert_cmpmem(data, size, expected, strlen(expected));
}

static void
assert_entry(const MsdStoreEntry *entry, const gchar *expected)
{
	g_autoptr(GBytes) object = msd_store_entry_dup_object(entry);

	assert_bytes(object, expected);
}

/* Wherever managedFields sits among the metadata members, exactly it and one comma go. */
static void
test_store_managed_fields_removed(void)
{
	const struct {
		const gchar *input;
		const gchar *expected;
	} cases[] = {
	        /* between two members */
	        {"{\"metadata\":{\"name\":\"a\",\"managedFields\":[{\"manager\":\"kubectl\","
	         "\"fieldsV1\":{\"f:spec\":{}}}],\"uid\":\"u1\"},\"spec\":{}}",
	         "{\"metadata\":{\"name\":\"a\",\"uid\":\"u1\"},\"spec\":{}}"},
	        /* first member */
	        {"{\"metadata\":{\"managedFields\":[],\"name\":\"a\",\"uid\":\"u1\"}}",
	         "{\"metadata\":{\"name\":\"a\",\"uid\":\"u1\"}}"},
	        /* last member */
	        {"{\"metadata\":{\"name\":\"a\",\"uid\":\"u1\",\"managedFields\":[{\"a\":\"]}\"}]}"
	         "}",
	         "{\"metadata\":{\"name\":\"a\",\"uid\":\"u1\"}}"},
	        /* a managedFields outside metadata is data, not bookkeeping: it stays */
	        {"{\"spec\":{\"managedFields\":1},\"metadata\":{\"name\":\"a\"}}",
	         "{\"spec\":{\"managedFields\":1},\"metadata\":{\"name\":\"a\"}}"},
	        /* pretty-printed input comes out compact; spaces inside strings stay */
	        {"{\n  \"metadata\": {\n    \"name\": \"a b\",\n    \"managedFields\": [ 1, 2 ] ,\n"
	         "    \"uid\": \"u1\"\n  },\n  \"data\": { \"k\": \"x \\\" y\" }\n}\n",
	         "{\"metadata\":{\"name\":\"a b\",\"uid\":\"u1\"},\"data\":{\"k\":\"x \\\" y\"}}"},
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(MsdStoreEntry) entry = entry_new(cases[i].input);

		g_test_message("case %u", i);
		assert_entry(entry, cases[i].expected);
	}
}

static void
test_store_object_without_name(void)
{
	g_autoptr(MsdStoreEntry) entry = NULL;
	g_autoptr(GError) error = NULL;
	const gchar *json = "{\"metadata\":{\"managedFields\":[{}]}}";

	/* without a name the object cannot be stored at all */
	entry = msd_store_entry_new_from_json(json, strlen(json), &error);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);
	g_assert_null(entry);
}

static void
test_store_entry_fields(void)
{
	g_autoptr(MsdStoreEntry) pod = entry_new("{\"metadata\":{\"name\":\"web-0\",\"namespace\":"
	                                         "\"shop\",\"uid\":\"u-7\",\"resourceVersion\":"
	                                         "\"42\"}}");
	g_autoptr(MsdStoreEntry) node = entry_new("{\"metadata\":{\"name\":\"n1\"}}");

	g_assert_cmpstr(pod->uid, ==, "u-7");
	g_assert_cmpstr(pod->namespace_, ==, "shop");
	g_assert_cmpstr(pod->name, ==, "web-0");
	g_assert_cmpstr(pod->resource_version, ==, "42");
	/* a cluster-scoped object without uid is keyed by its name */
	g_assert_cmpstr(node->namespace_, ==, "");
	g_assert_cmpstr(node->uid, ==, "/n1");
	g_assert_cmpstr(node->resource_version, ==, "");
}

/* The identity strings as the server meant them: escapes decoded, a number's text kept. */
static void
test_store_entry_fields_decoded(void)
{
	g_autoptr(MsdStoreEntry) pod =
	        entry_new("{\"metadata\":{\"name\":\"w\\u0065b\",\"namespace\":\"s\\/p\",\"uid\":"
	                  "\"\",\"resourceVersion\":7}}");

	g_assert_cmpstr(pod->name, ==, "web");
	g_assert_cmpstr(pod->namespace_, ==, "s/p");
	g_assert_cmpstr(pod->resource_version, ==, "7");
	/* an empty uid is none: the object is keyed by namespace and name */
	g_assert_cmpstr(pod->uid, ==, "s/p/web");
}

/* An object deleted and created again under its name, its events seen out of order: the
 * name leads to the entry stored under it last, and to nothing once that one is deleted. */
static void
test_store_namesake(void)
{
	g_autoptr(MsdStore) store = msd_store_new();
	g_autoptr(MsdStoreEntry) old = named_entry("ns", "a", "u1", "1");
	g_autoptr(MsdStoreEntry) old_v2 = named_entry("ns", "a", "u1", "3");
	g_autoptr(MsdStoreEntry) new = named_entry("ns", "a", "u2", "2");
	g_autoptr(MsdStoreEntry) gone = NULL;
	g_autoptr(MsdStoreEntry) displaced = NULL;
	g_autoptr(GPtrArray) deleted = NULL;

	msd_store_upsert(store, old);
	/* the new object's ADDED comes before the old one's DELETED */
	msd_store_upsert(store, new);
	g_assert_true(msd_store_lookup_by_name(store, "ns", "a") == new);
	/* the old one's last update does not take the name back from the new one */
	msd_store_upsert(store, old_v2);
	g_assert_true(msd_store_lookup_by_name(store, "ns", "a") == old_v2);
	gone = msd_store_delete(store, "u1");
	g_assert_true(gone == old_v2);
	/* the name was the old one's last: gone with it, the new one is reached by uid */
	g_assert_null(msd_store_lookup_by_name(store, "ns", "a"));
	g_assert_true(msd_store_lookup(store, "u2") == new);
	g_clear_pointer(&gone, msd_store_entry_unref);

	/* a relist that finds the name under another uid displaces the holder */
	msd_store_upsert(store, old);
	g_assert_true(msd_store_lookup_by_name(store, "ns", "a") == old);
	msd_store_begin_relist(store);
	g_assert_cmpint(msd_store_relist_upsert(store, new, &displaced), ==, MSD_STORE_UNCHANGED);
	g_assert_null(displaced);
	{
		g_autoptr(MsdStoreEntry) newer = named_entry("ns", "b", "u3", "4");
		g_autoptr(MsdStoreEntry) namesake = named_entry("ns", "a", "u4", "5");

		g_assert_cmpint(msd_store_relist_upsert(store, newer, &displaced), ==,
		                MSD_STORE_ADDED);
		g_assert_null(displaced);
		/* "a" is held by u1 (not listed yet by this relist): u4 displaces it */
		g_assert_cmpint(msd_store_relist_upsert(store, namesake, &displaced), ==,
		                MSD_STORE_ADDED);
		g_assert_nonnull(displaced);
		g_assert_cmpstr(displaced->uid, ==, "u1");
		g_assert_true(msd_store_lookup_by_name(store, "ns", "a") == namesake);
		deleted = msd_store_end_relist(store);
		/* u2 was listed (unchanged), u3 and u4 added: nothing else is left over */
		g_assert_cmpuint(deleted->len, ==, 0);
		g_assert_cmpuint(msd_store_get_size(store), ==, 3);
		g_assert_true(msd_store_lookup_by_name(store, "ns", "b") == newer);
	}
}

/* List items carry no kind or apiVersion; the informer puts them back in. */
static void
test_store_entry_kind_injected(void)
{
	const gchar *item = "{\"metadata\":{\"name\":\"a\",\"managedFields\":[]},\"spec\":{}}";
	const gchar *full =
	        "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"a\"}}";
	g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;
	g_autoptr(MsdStoreEntry) injected = NULL;
	g_autoptr(MsdStoreEntry) kept = NULL;

	g_assert_true(msd_json_tokens_parse(&tokens, item, strlen(item), NULL));
	injected = msd_store_entry_new_from_tokens(&tokens, 0, "Deployment", "apps/v1", NULL);
	assert_entry(injected, "{\"kind\":\"Deployment\",\"apiVersion\":\"apps/v1\","
	                       "\"metadata\":{\"name\":\"a\"},\"spec\":{}}");

	g_assert_true(msd_json_tokens_parse(&tokens, full, strlen(full), NULL));
	kept = msd_store_entry_new_from_tokens(&tokens, 0, "Other", "x/v9", NULL);
	assert_entry(kept, full);
}

static void
test_store_upsert(void)
{
	g_autoptr(MsdStore) store = msd_store_new();
	g_autoptr(MsdStoreEntry) v1 = entry_new("{\"metadata\":{\"name\":\"a\",\"namespace\":"
	                                        "\"ns\",\"uid\":\"u\",\"resourceVersion\":"
	                                        "\"10\"},\"spec\":1}");
	g_autoptr(MsdStoreEntry) v1_again = entry_new("{\"metadata\":{\"name\":\"a\",\"namespace\":"
	                                              "\"ns\",\"uid\":\"u\",\"resourceVersion\":"
	                                              "\"10\"},\"spec\":2}");
	/* resourceVersions are opaque: "9" after "10" is still a change */
	g_autoptr(MsdStoreEntry) v2 = entry_new("{\"metadata\":{\"name\":\"a\",\"namespace\":"
	                                        "\"ns\",\"uid\":\"u\",\"resourceVersion\":"
	                                        "\"9\"},\"spec\":3}");

	g_assert_cmpint(msd_store_upsert(store, v1), ==, MSD_STORE_ADDED);
	g_assert_cmpuint(msd_store_get_size(store), ==, 1);
	g_assert_cmpint(msd_store_upsert(store, v1_again), ==, MSD_STORE_UNCHANGED);
	/* an unchanged update keeps the stored bytes */
	g_assert_true(msd_store_lookup(store, "u") == v1);
	g_assert_cmpint(msd_store_upsert(store, v2), ==, MSD_STORE_MODIFIED);
	g_assert_true(msd_store_lookup(store, "u") == v2);
	g_assert_true(msd_store_lookup_by_name(store, "ns", "a") == v2);
	g_assert_null(msd_store_lookup_by_name(store, "other", "a"));
	g_assert_cmpuint(msd_store_get_size(store), ==, 1);
}

static void
test_store_delete(void)
{
	g_autoptr(MsdStore) store = msd_store_new();
	const gchar *json = "{\"metadata\":{\"name\":\"a\",\"uid\":\"u\",\"resourceVersion\":\"1\","
	                    "\"managedFields\":[]},\"status\":{\"phase\":\"Running\"}}";
	g_autoptr(MsdStoreEntry) entry = entry_new(json);
	g_autoptr(MsdStoreEntry) last = NULL;
	g_autoptr(MsdStoreEntry) again = NULL;

	msd_store_upsert(store, entry);
	last = msd_store_delete(store, "u");
	assert_entry(last, "{\"metadata\":{\"name\":\"a\",\"uid\":\"u\",\"resourceVersion\":\"1\"},"
	                   "\"status\":{\"phase\":\"Running\"}}");
	g_assert_cmpuint(msd_store_get_size(store), ==, 0);
	g_assert_null(msd_store_lookup_by_name(store, NULL, "a"));
	g_assert_cmpuint(msd_store_get_bytes_held(store), ==, 0);
	again = msd_store_delete(store, "u");
	g_assert_null(again);
}

static MsdStoreEntry *
entry_with(const gchar *uid, const gchar *rv, const gchar *payload)
{
	g_autofree gchar *json = g_strdup_printf(
	        "{\"metadata\":{\"name\":\"n-%s\",\"namespace\":\"ns\",\"uid\":\"%s\","
	        "\"resourceVersion\":\"%s\"},\"data\":\"%s\"}",
	        uid, uid, rv, payload);

	return entry_new(json);
}

static gboolean
contains_uid(GPtrArray *entries, const gchar *uid)
{
	for (guint i = 0; i < entries->len; i++) {
		MsdStoreEntry *entry = g_ptr_array_index(entries, i);

		if (g_strcmp0(entry->uid, uid) == 0)
			return TRUE;
	}
	return FALSE;
}

static void
test_store_replace_all(void)
{
	g_autoptr(MsdStore) store = msd_store_new();
	g_autoptr(GPtrArray) relist =
	        g_ptr_array_new_with_free_func((GDestroyNotify)msd_store_entry_unref);
	g_autoptr(GPtrArray) added = NULL;
	g_autoptr(GPtrArray) modified = NULL;
	g_autoptr(GPtrArray) deleted = NULL;
	g_autoptr(MsdStoreEntry) keep = entry_with("keep", "1", "old");
	g_autoptr(MsdStoreEntry) change = entry_with("change", "1", "old");
	g_autoptr(MsdStoreEntry) gone = entry_with("gone", "1", "last-known");

	msd_store_upsert(store, keep);
	msd_store_upsert(store, change);
	msd_store_upsert(store, gone);

	g_ptr_array_add(relist, entry_with("keep", "1", "same-rv"));
	g_ptr_array_add(relist, entry_with("change", "2", "new"));
	g_ptr_array_add(relist, entry_with("new", "3", "new"));
	msd_store_replace_all(store, relist, &added, &modified, &deleted);

	g_assert_cmpuint(added->len, ==, 1);
	g_assert_true(contains_uid(added, "new"));
	g_assert_cmpuint(modified->len, ==, 1);
	g_assert_true(contains_uid(modified, "change"));
	g_assert_cmpuint(deleted->len, ==, 1);
	g_assert_true(contains_uid(deleted, "gone"));
	/* a deletion seen only through a relist still reports the last known state */
	assert_entry(g_ptr_array_index(deleted, 0),
	             "{\"metadata\":{\"name\":\"n-gone\",\"namespace\":\"ns\",\"uid\":\"gone\","
	             "\"resourceVersion\":\"1\"},\"data\":\"last-known\"}");

	g_assert_cmpuint(msd_store_get_size(store), ==, 3);
	g_assert_null(msd_store_lookup(store, "gone"));
	g_assert_null(msd_store_lookup_by_name(store, "ns", "n-gone"));
	/* same resourceVersion: the stored copy stays */
	g_assert_true(msd_store_lookup(store, "keep") == keep);
	g_assert_nonnull(msd_store_lookup_by_name(store, "ns", "n-new"));
}

/* An unchanged object told before it is copied: in a relist it counts as seen, so that the
 * end of the relist keeps it. */
static void
test_store_check_unchanged(void)
{
	g_autoptr(MsdStore) store = msd_store_new();
	g_autoptr(MsdStoreEntry) keep = entry_with("keep", "1", "old");
	g_autoptr(MsdStoreEntry) gone = entry_with("gone", "1", "old");
	g_autoptr(GPtrArray) deleted = NULL;

	msd_store_upsert(store, keep);
	msd_store_upsert(store, gone);
	g_assert_true(msd_store_check_unchanged(store, "keep", "1", FALSE));
	g_assert_false(msd_store_check_unchanged(store, "keep", "2", FALSE));
	g_assert_false(msd_store_check_unchanged(store, "other", "1", FALSE));

	msd_store_begin_relist(store);
	g_assert_true(msd_store_check_unchanged(store, "keep", "1", TRUE));
	deleted = msd_store_end_relist(store);
	g_assert_cmpuint(deleted->len, ==, 1);
	g_assert_true(contains_uid(deleted, "gone"));
	g_assert_true(msd_store_lookup(store, "keep") == keep);
}

static void
sum_sizes(MsdStoreEntry *entry, gpointer user_data)
{
	guint64 *total = user_data;

	*total += entry->held_size;
}

static void
test_store_bytes_held(void)
{
	g_autoptr(MsdStore) store = msd_store_new();
	g_autoptr(MsdStoreEntry) a = entry_with("a", "1", "xxxxxxxxxx");
	g_autoptr(MsdStoreEntry) b = entry_with("b", "1", "y");
	g_autoptr(MsdStoreEntry) a2 = entry_with("a", "2", "z");
	g_autoptr(GPtrArray) snapshot = NULL;
	g_autoptr(GPtrArray) empty = g_ptr_array_new();
	g_autoptr(MsdStoreEntry) removed = NULL;
	guint64 total = 0;

	g_assert_cmpuint(msd_store_get_bytes_held(store), ==, 0);
	msd_store_upsert(store, a);
	msd_store_upsert(store, b);
	g_assert_cmpuint(msd_store_get_bytes_held(store), ==, a->held_size + b->held_size);
	msd_store_upsert(store, a2);
	g_assert_cmpuint(msd_store_get_bytes_held(store), ==, a2->held_size + b->held_size);
	msd_store_foreach(store, sum_sizes, &total);
	g_assert_cmpuint(total, ==, msd_store_get_bytes_held(store));

	/* a snapshot keeps its entries while the store moves on */
	snapshot = msd_store_snapshot(store);
	removed = msd_store_delete(store, "b");
	g_assert_cmpuint(msd_store_get_bytes_held(store), ==, a2->held_size);
	g_assert_cmpuint(snapshot->len, ==, 2);
	g_assert_true(contains_uid(snapshot, "b"));

	msd_store_replace_all(store, empty, NULL, NULL, NULL);
	g_assert_cmpuint(msd_store_get_bytes_held(store), ==, 0);
	g_assert_cmpuint(msd_store_get_size(store), ==, 0);
}

/* A shallow type's entry: the type's kind and apiVersion, the metadata without
 * managedFields, an empty spec and status, whatever the server sent besides. */
static void
test_store_entry_metadata_only(void)
{
	const gchar *const inputs[] = {
	        /* what a metadata-only answer holds */
	        "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\","
	        "\"metadata\":{\"name\":\"web-0\",\"namespace\":\"shop\",\"uid\":\"u-7\","
	        "\"resourceVersion\":\"42\",\"managedFields\":[{\"manager\":\"k\"}],"
	        "\"labels\":{\"app\":\"web\"}}}",
	        /* a whole object from a server that ignored the Accept, pretty-printed */
	        "{\n \"metadata\": {\"name\": \"web-0\", \"namespace\": \"shop\", \"uid\": "
	        "\"u-7\",\n"
	        "  \"resourceVersion\": \"42\", \"labels\": {\"app\": \"web\"}},\n"
	        " \"spec\": {\"containers\": [{\"image\": \"nginx\"}]}, \"status\": {\"phase\": "
	        "\"Running\"}, \"data\": {\"k\": \"v\"}\n}",
	};
	const gchar *expected = "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":"
	                        "\"web-0\",\"namespace\":\"shop\",\"uid\":\"u-7\","
	                        "\"resourceVersion\":\"42\",\"labels\":{\"app\":\"web\"}},"
	                        "\"spec\":{},\"status\":{}}";

	for (guint i = 0; i < G_N_ELEMENTS(inputs); i++) {
		g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;
		g_autoptr(GError) error = NULL;
		g_autoptr(MsdStoreEntry) entry = NULL;

		g_assert_true(msd_json_tokens_parse(&tokens, inputs[i], strlen(inputs[i]), &error));
		entry = msd_store_entry_new_metadata_from_tokens(&tokens, 0, "Pod", "v1", &error);
		g_assert_no_error(error);
		assert_entry(entry, expected);
		g_assert_cmpuint(entry->size, ==, strlen(expected));
		g_assert_cmpstr(entry->uid, ==, "u-7");
		g_assert_cmpstr(entry->namespace_, ==, "shop");
		g_assert_cmpstr(entry->name, ==, "web-0");
		g_assert_cmpstr(entry->resource_version, ==, "42");
	}
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/store/managed-fields-removed", test_store_managed_fields_removed);
	g_test_add_func("/store/object-without-name", test_store_object_without_name);
	g_test_add_func("/store/entry-fields", test_store_entry_fields);
	g_test_add_func("/store/entry-fields-decoded", test_store_entry_fields_decoded);
	g_test_add_func("/store/namesake", test_store_namesake);
	g_test_add_func("/store/kind-injected", test_store_entry_kind_injected);
	g_test_add_func("/store/metadata-only", test_store_entry_metadata_only);
	g_test_add_func("/store/upsert", test_store_upsert);
	g_test_add_func("/store/delete", test_store_delete);
	g_test_add_func("/store/replace-all", test_store_replace_all);
	g_test_add_func("/store/check-unchanged", test_store_check_unchanged);
	g_test_add_func("/store/bytes-held", test_store_bytes_held);
	return g_test_run();
}
