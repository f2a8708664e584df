/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <string.h>

#include "meshsync-error.h"
#include "meshsync-resource-private.h"
#include "output/msd-snapshot-yaml.h"
#include "test-random-object.h"

static void
test_snapshot_yaml_document(void)
{
	const gchar *json =
	        "{\"id\":\"\",\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"model\":\"\","
	        "\"metadata\":{\"id\":\"\",\"name\":\"web-0\",\"namespace\":\"shop\",\"uid\":"
	        "\"2f0c\","
	        "\"resourceVersion\":\"4711\",\"generation\":3,"
	        "\"creationTimestamp\":\"2025-05-01T10:00:00Z\","
	        "\"labels\":[{\"id\":\"\",\"unique_id\":\"\",\"kind\":\"label\",\"key\":\"app\","
	        "\"value\":\"nginx\"}],"
	        "\"ownerReferences\":\"[{\\\"kind\\\":\\\"ReplicaSet\\\"}]\",\"cluster_id\":\"\"},"
	        "\"spec\":{\"id\":\"\",\"attribute\":\"{\\\"containers\\\":[]}\"},"
	        "\"cluster_id\":\"abc\",\"pattern_resource\":null,\"component_metadata\":null}";
	const gchar *expected = "apiVersion: v1\n"
	                        "cluster_id: abc\n"
	                        "component_metadata: null\n"
	                        "id: \"\"\n"
	                        "kind: Pod\n"
	                        "metadata:\n"
	                        "  cluster_id: \"\"\n"
	                        "  creationTimestamp: \"2025-05-01T10:00:00Z\"\n"
	                        "  generation: 3\n"
	                        "  id: \"\"\n"
	                        "  labels:\n"
	                        "  - id: \"\"\n"
	                        "    key: app\n"
	                        "    kind: label\n"
	                        "    unique_id: \"\"\n"
	                        "    value: nginx\n"
	                        "  name: web-0\n"
	                        "  namespace: shop\n"
	                        "  ownerReferences: '[{\"kind\":\"ReplicaSet\"}]'\n"
	                        "  resourceVersion: \"4711\"\n"
	                        "  uid: 2f0c\n"
	                        "model: \"\"\n"
	                        "pattern_resource: null\n"
	                        "spec:\n"
	                        "  attribute: '{\"containers\":[]}'\n"
	                        "  id: \"\"\n"
	                        "---\n";
	g_autoptr(GString) out = g_string_new(NULL);
	g_autoptr(GError) error = NULL;

	g_assert_true(msd_snapshot_yaml_append(out, json, strlen(json), &error));
	g_assert_no_error(error);
	g_assert_cmpstr(out->str, ==, expected);

	/* A second document follows the separator of the first. */
	g_assert_true(msd_snapshot_yaml_append(out, "{\"a\":1}", 7, &error));
	g_assert_true(g_str_has_suffix(out->str, "  id: \"\"\n---\na: 1\n---\n"));
}

static void
test_snapshot_yaml_scalars(void)
{
	const gchar *json = "{\"multi\":\"line one\\nline two\",\"empty_list\":[],\"empty_map\":{},"
	                    "\"flag\":true,\"word\":\"yes\",\"quote\":\"it's\",\"colon\":\"a: b\","
	                    "\"unicode\":\"caf\\u00e9\"}";
	const gchar *expected = "colon: 'a: b'\n"
	                        "empty_list: []\n"
	                        "empty_map: {}\n"
	                        "flag: true\n"
	                        "multi: |-\n"
	                        "  line one\n"
	                        "  line two\n"
	                        "quote: it's\n"
	                        "unicode: caf\xc3\xa9\n"
	                        "word: \"yes\"\n"
	                        "---\n";
	g_autoptr(GString) out = g_string_new(NULL);
	g_autoptr(GError) error = NULL;

	g_assert_true(msd_snapshot_yaml_append(out, json, strlen(json), &error));
	g_assert_no_error(error);
	g_assert_cmpstr(out->str, ==, expected);
}

static void
test_snapshot_yaml_malformed(void)
{
	g_autoptr(GString) out = g_string_new("kept\n");
	g_autoptr(GError) error = NULL;

	g_assert_false(msd_snapshot_yaml_append(out, "{\"a\":", 5, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);
	/* Nothing of a failed document is left behind. */
	g_assert_cmpstr(out->str, ==, "kept\n");
}

static void
test_snapshot_yaml_key_order(void)
{
	/* A non-letter sorts before a letter; letters by code point; digit runs by value. */
	g_assert_cmpint(msd_snapshot_yaml_compare_keys("cluster_id", "clusterName"), <, 0);
	g_assert_cmpint(msd_snapshot_yaml_compare_keys("cluster_id", "component_metadata"), <, 0);
	g_assert_cmpint(msd_snapshot_yaml_compare_keys("Zebra", "apple"), <, 0);
	g_assert_cmpint(msd_snapshot_yaml_compare_keys("a2", "a10"), <, 0);
	g_assert_cmpint(msd_snapshot_yaml_compare_keys("a10", "a2"), >, 0);
	g_assert_cmpint(msd_snapshot_yaml_compare_keys("a", "ab"), <, 0);
	g_assert_cmpint(msd_snapshot_yaml_compare_keys("id", "id"), ==, 0);
	g_assert_cmpint(msd_snapshot_yaml_compare_keys("apiVersion", "binaryData"), <, 0);
}

static void
test_snapshot_yaml_retyping(void)
{
	/* "09" is no integer for Go (a bad octal), but it matches the YAML float form. */
	const gchar *retyped[] = {"",
	                          "~",
	                          "null",
	                          "true",
	                          "False",
	                          "yes",
	                          "on",
	                          "N",
	                          "4711",
	                          "-12",
	                          "1_000",
	                          "0x1F",
	                          "0o17",
	                          "017",
	                          "0b101",
	                          "1e3",
	                          ".5",
	                          "1.",
	                          "-.inf",
	                          ".NaN",
	                          "1:20",
	                          "2025-05-01",
	                          "2025-05-01T10:00:00Z",
	                          "2025-5-1t1:2:3.5+02:00",
	                          "2025-05-01 10:00:00",
	                          "<<",
	                          "09",
	                          NULL};
	const gchar *plain[] = {"v1",      "2f0c", "1.2.3",  "nginx",    "2025-05-01T10:00:00",
	                        "0x",      "1e",   "+",      "-",        "1:70",
	                        "Running", "a b",  "falsey", "Nullable", "-.infinity",
	                        NULL};

	for (guint i = 0; retyped[i] != NULL; i++) {
		g_test_message("retyped: %s", retyped[i]);
		g_assert_true(msd_snapshot_yaml_plain_retypes(retyped[i]));
	}
	for (guint i = 0; plain[i] != NULL; i++) {
		g_test_message("plain: %s", plain[i]);
		g_assert_false(msd_snapshot_yaml_plain_retypes(plain[i]));
	}
}

/* ------------------------------------------------------------------------------------------
 * The document made from a resource's fields is byte for byte the one made from its wire
 * JSON, and so is the extended record.
 */

static void
assert_same_text(const gchar *what, const GString *direct, const GString *via_json)
{
	if (!g_string_equal(direct, via_json)) {
		gsize i = 0;

		while (i < direct->len && i < via_json->len && direct->str[i] == via_json->str[i])
			i++;
		g_test_message("%s: first difference at byte %" G_GSIZE_FORMAT
		               ":\n from fields: %.120s\n from JSON:   %.120s",
		               what, i, direct->str + i, via_json->str + i);
	}
	g_assert_cmpstr(direct->str, ==, via_json->str);
}

/* Kept from one checked resource to the next, as the snapshot writer keeps them: what one
 * document left in them (a longer key, a deeper nesting, a document that needed libyaml)
 * must not change the next. */
static MsdSnapshotBuffers *shared_buffers;

static void
check_resource_yaml(MeshSyncResource *resource)
{
	static const MeshSyncEventType events[] = {MESHSYNC_EVENT_TYPE_ADDED,
	                                           MESHSYNC_EVENT_TYPE_MODIFIED,
	                                           MESHSYNC_EVENT_TYPE_DELETED};
	g_autoptr(GString) direct = g_string_new("earlier document\n---\n");
	g_autoptr(GString) via_json = g_string_new("earlier document\n---\n");
	g_autoptr(GError) error = NULL;
	g_autofree gchar *json = NULL;

	/* from the fields first: the YAML must not need the wire bytes */
	g_assert_true(msd_snapshot_yaml_append_resource(direct, resource, NULL, &error));
	g_assert_no_error(error);
	json = meshsync_resource_to_json(resource);
	g_assert_true(msd_snapshot_yaml_append(via_json, json, strlen(json), &error));
	g_assert_no_error(error);
	assert_same_text("document", direct, via_json);
	if (shared_buffers == NULL)
		shared_buffers = msd_snapshot_buffers_new();
	g_string_truncate(direct, 0);
	g_string_append(direct, "earlier document\n---\n");
	g_assert_true(msd_snapshot_yaml_append_resource(direct, resource, shared_buffers, &error));
	g_assert_no_error(error);
	assert_same_text("document with kept buffers", direct, via_json);

	for (guint i = 0; i < G_N_ELEMENTS(events); i++) {
		g_autofree gchar *record =
		        g_strdup_printf("{\"EventType\":\"%s\",\"Object\":%s}",
		                        meshsync_event_type_to_string(events[i]), json);

		g_string_truncate(direct, 0);
		g_string_truncate(via_json, 0);
		g_assert_true(
		        msd_snapshot_yaml_append_record(direct, resource, events[i], NULL, &error));
		g_assert_no_error(error);
		g_assert_true(msd_snapshot_yaml_append(via_json, record, strlen(record), &error));
		g_assert_no_error(error);
		assert_same_text("record", direct, via_json);
		g_string_truncate(direct, 0);
		g_assert_true(msd_snapshot_yaml_append_record(direct, resource, events[i],
		                                              shared_buffers, &error));
		g_assert_no_error(error);
		assert_same_text("record with kept buffers", direct, via_json);
	}
}

/* @json converted for @event, with its probe (if any) completed as @reachable. */
static void
check_json_yaml(const gchar *json, gsize len, MeshSyncEventType event, gboolean reachable)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncResource) resource = meshsync_resource_new_from_json(
	        json, (gssize)len, event, "cluster-\xff\x01", &error);

	if (resource == NULL) {
		g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);
		return;
	}
	if (meshsync_resource_get_pending_endpoint(resource) != NULL)
		meshsync_resource_complete_probe(resource, reachable);
	check_resource_yaml(resource);
}

static void
test_snapshot_yaml_from_fields_fixtures(void)
{
	g_autofree gchar *dir = g_test_build_filename(G_TEST_DIST, "data", "model", NULL);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const gchar *name;
	guint fixtures = 0;

	g_assert_nonnull(d);
	while ((name = g_dir_read_name(d)) != NULL) {
		g_autofree gchar *path = NULL;
		g_autofree gchar *json = NULL;
		gsize len = 0;

		if (!g_str_has_suffix(name, ".json") || g_str_has_suffix(name, ".expected.json"))
			continue;
		fixtures++;
		path = g_build_filename(dir, name, NULL);
		g_assert_true(g_file_get_contents(path, &json, &len, NULL));
		for (guint redact = 0; redact < 2; redact++) {
			if (redact)
				g_setenv("MESHSYNC_REDACT_SECRETS", "true", TRUE);
			else
				g_unsetenv("MESHSYNC_REDACT_SECRETS");
			g_test_message("%s, redact=%u", name, redact);
			check_json_yaml(json, len, MESHSYNC_EVENT_TYPE_ADDED, TRUE);
			check_json_yaml(json, len, MESHSYNC_EVENT_TYPE_MODIFIED, FALSE);
			check_json_yaml(json, len, MESHSYNC_EVENT_TYPE_DELETED, TRUE);
		}
	}
	g_unsetenv("MESHSYNC_REDACT_SECRETS");
	g_assert_cmpuint(fixtures, >=, 14);
}

static void
test_snapshot_yaml_from_fields_odd(void)
{
	static const gchar *const objects[] = {
	        /* strings every style: empty, retyping, multi-line, long (folded), quotes */
	        "{\"kind\":\"true\",\"apiVersion\":\"\",\"metadata\":{\"name\":\"2025-05-01\","
	        "\"namespace\":\"a\\nb\",\"uid\":\"0x1F\",\"resourceVersion\":\"4711\","
	        "\"generateName\":\"- x\",\"selfLink\":\"#c\",\"clusterName\":\"'q'\","
	        "\"generation\":-3,\"deletionGracePeriodSeconds\":0,"
	        "\"creationTimestamp\":\"2025-05-01T10:00:00Z\",\"finalizers\":[\"a\",\"b\"],"
	        "\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs\"}]},"
	        "\"spec\":{\"text\":\"line one\\nline two\\n\",\"long\":\"aaaa bbbb cccc dddd eeee "
	        "ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo pppp qqqq rrrr ssss tttt\"}}",
	        /* invalid UTF-8, NUL, U+2028, escapes in every field the wire holds as text */
	        "{\"kind\":\"K\\u0000x\",\"metadata\":{\"name\":\"caf\\u00e9 \xff\xfe\","
	        "\"labels\":{\"a\\\"b\":\"<&>\\u2028\",\"k\xff\":\"v\\u0000w\",\"\":\"\"},"
	        "\"annotations\":{\"x\":\"{\\\"y\\\":1}\\n\"}},\"status\":{\"z\":\"\\ud800\"},"
	        "\"data\":{\"b\":\"\xc3\"},\"type\":\"\\t\"}",
	        /* what the wire leaves out: no spec, null status, empty strings */
	        "{\"metadata\":{},\"status\":null,\"immutable\":true,\"binaryData\":{}}",
	        /* the pattern_resource label, valid and not */
	        "{\"metadata\":{\"labels\":{\"design.meshery.io/id\":"
	        "\"{0B3E2C1D-AAAA-4BBB-8CCC-0123456789AB}\"}}}",
	        "{\"metadata\":{\"labels\":{\"design.meshery.io/id\":\"nope\"}}}",
	        /* a Service: metadata known at once, and after a probe either way */
	        "{\"kind\":\"Service\",\"metadata\":{\"name\":\"s\"},\"spec\":{\"clusterIP\":"
	        "\"10.0.0.1\",\"ports\":[{\"port\":80,\"nodePort\":30080}]}}",
	        "{\"kind\":\"Service\",\"metadata\":{\"name\":\"lb\"},\"spec\":{\"clusterIP\":"
	        "\"10.0.0.1\",\"ports\":[{\"port\":80}]},\"status\":{\"loadBalancer\":"
	        "{\"ingress\":[{\"hostname\":\"a.example.com\"}]}}}",
	};

	for (guint i = 0; i < G_N_ELEMENTS(objects); i++) {
		g_test_message("object %u", i);
		check_json_yaml(objects[i], strlen(objects[i]), MESHSYNC_EVENT_TYPE_ADDED, TRUE);
		check_json_yaml(objects[i], strlen(objects[i]), MESHSYNC_EVENT_TYPE_ADDED, FALSE);
	}
}

static void
test_snapshot_yaml_from_fields_random(void)
{
	g_autoptr(GRand) rand = g_rand_new_with_seed(test_random_seed(20261130));
	guint rounds = g_test_thorough() ? 20000 : 1500;

	for (guint i = 0; i < rounds; i++) {
		g_autofree gchar *object = test_random_object(rand);

		check_json_yaml(object, strlen(object), g_rand_int_range(rand, 0, 3),
		                g_rand_boolean(rand));
	}
}

/* The block writer against libyaml's emitter, on the same JSON. */
static void
check_same_as_libyaml(const gchar *json, gsize len)
{
	g_autoptr(GString) block = g_string_new("earlier\n---\n");
	g_autoptr(GString) reference = g_string_new("earlier\n---\n");
	g_autoptr(GError) block_error = NULL;
	g_autoptr(GError) reference_error = NULL;
	gboolean block_ok = msd_snapshot_yaml_append(block, json, len, &block_error);
	gboolean reference_ok =
	        msd_snapshot_yaml_append_reference(reference, json, len, &reference_error);

	g_assert_cmpint(block_ok, ==, reference_ok);
	if (!block_ok)
		g_assert_cmpstr(block_error->message, ==, reference_error->message);
	assert_same_text("block writer", block, reference);
}

/* A string drawn from what decides a scalar's style and folding. */
static void
append_random_string(GRand *rand, GString *json)
{
	static const gchar *const pieces[] = {
	        " ",      "  ",         "\\n",
	        "\\n\\n", ":",          ": ",
	        "#",      " #",         "-",
	        "- ",     "?",          "? ",
	        "'",      "\\\"",       "\\\\",
	        "|",      ">",          "{",
	        "}",      "[",          "]",
	        ",",      "&",          "*",
	        "!",      "%",          "@",
	        "`",      "---",        "...",
	        "a",      "word",       "1",
	        "0x1F",   "yes",        "null",
	        "~",      "2025-05-01", "caf\\u00e9",
	        "\\t",    "\\u0001",    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	};
	guint n = (guint)g_rand_int_range(rand, 0, g_rand_boolean(rand) ? 6 : 90);

	g_string_append_c(json, '"');
	for (guint i = 0; i < n; i++) {
		/* mostly letters, so that lines grow past the width between the pieces */
		if (g_rand_int_range(rand, 0, 3) == 0)
			g_string_append(json,
			                pieces[g_rand_int_range(rand, 0, G_N_ELEMENTS(pieces))]);
		else
			g_string_append_c(json, (gchar)g_rand_int_range(rand, 'a', 'z' + 1));
	}
	g_string_append_c(json, '"');
}

static void
append_random_value(GRand *rand, GString *json, guint depth)
{
	gint pick = g_rand_int_range(rand, 0, depth > 4 ? 3 : 7);

	switch (pick) {
	case 0:
	case 1:
		append_random_string(rand, json);
		break;
	case 2:
		g_string_append(json, g_rand_boolean(rand) ? "12" : "null");
		break;
	case 3:
	case 4: {
		guint n = (guint)g_rand_int_range(rand, 0, 5);

		g_string_append_c(json, '{');
		for (guint i = 0; i < n; i++) {
			if (i > 0)
				g_string_append_c(json, ',');
			append_random_string(rand, json);
			g_string_append_c(json, ':');
			append_random_value(rand, json, depth + 1);
		}
		g_string_append_c(json, '}');
		break;
	}
	default: {
		guint n = (guint)g_rand_int_range(rand, 0, 4);

		g_string_append_c(json, '[');
		for (guint i = 0; i < n; i++) {
			if (i > 0)
				g_string_append_c(json, ',');
			append_random_value(rand, json, depth + 1);
		}
		g_string_append_c(json, ']');
		break;
	}
	}
}

static void
test_snapshot_yaml_block_writer(void)
{
	static const gchar *const documents[] = {
	        "{}",
	        "[]",
	        "{\"a\":{}}",
	        "{\"a\":[]}",
	        "[[],{},[1,[2,[3]]]]",
	        "\"root\"",
	        "12",
	        "{\"k\":\"x\\n\\n\"}",
	        "{\"k\":\"\\n\"}",
	        "{\"k\":\" lead\\nx\"}",
	        "{\"k\":\"trail \\nx\"}",
	        "{\"k\":\"a\\n b\"}",
	        "{\"k\":\"\\tx\"}",
	        "{\"caf\\u00e9\":\"th\\u00e9\"}",
	        "{\"a\\nb\":1}",
	        /* a key longer than 128 bytes, in two literals */
	        ("{\"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
	         "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\":1}"),
	        "{\"a\":[{\"b\":[{\"c\":\"d\"}],\"e\":[[\"f\"]]}]}",
	};
	g_autoptr(GRand) rand = g_rand_new_with_seed(test_random_seed(20261202));
	guint rounds = g_test_thorough() ? 50000 : 4000;
	g_autofree gchar *dir = g_test_build_filename(G_TEST_DIST, "data", "model", NULL);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const gchar *name;

	for (guint i = 0; i < G_N_ELEMENTS(documents); i++)
		check_same_as_libyaml(documents[i], strlen(documents[i]));

	/* the wire JSON of the fixtures, as the snapshot writes it */
	g_assert_nonnull(d);
	while ((name = g_dir_read_name(d)) != NULL) {
		g_autofree gchar *path = NULL;
		g_autofree gchar *json = NULL;
		g_autoptr(MeshSyncResource) resource = NULL;
		g_autofree gchar *wire = NULL;
		gsize len = 0;

		if (!g_str_has_suffix(name, ".json") || g_str_has_suffix(name, ".expected.json"))
			continue;
		path = g_build_filename(dir, name, NULL);
		g_assert_true(g_file_get_contents(path, &json, &len, NULL));
		check_same_as_libyaml(json, len);
		resource = meshsync_resource_new_from_json(json, (gssize)len,
		                                           MESHSYNC_EVENT_TYPE_ADDED, "c", NULL);
		g_assert_nonnull(resource);
		wire = meshsync_resource_to_json(resource);
		check_same_as_libyaml(wire, strlen(wire));
	}

	for (guint i = 0; i < rounds; i++) {
		g_autoptr(GString) json = g_string_new(NULL);
		g_autofree gchar *object = test_random_object(rand);
		g_autoptr(MeshSyncResource) resource = meshsync_resource_new_from_json(
		        object, -1, MESHSYNC_EVENT_TYPE_ADDED, "c", NULL);

		append_random_value(rand, json, 0);
		check_same_as_libyaml(json->str, json->len);
		if (resource != NULL) {
			g_autofree gchar *wire = meshsync_resource_to_json(resource);

			check_same_as_libyaml(wire, strlen(wire));
		}
	}
}

int
main(int argc, char **argv)
{
	gint status;

	g_test_init(&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
	g_test_add_func("/snapshot-yaml/document", test_snapshot_yaml_document);
	g_test_add_func("/snapshot-yaml/scalars", test_snapshot_yaml_scalars);
	g_test_add_func("/snapshot-yaml/malformed", test_snapshot_yaml_malformed);
	g_test_add_func("/snapshot-yaml/key-order", test_snapshot_yaml_key_order);
	g_test_add_func("/snapshot-yaml/retyping", test_snapshot_yaml_retyping);
	g_test_add_func("/snapshot-yaml/from-fields/fixtures",
	                test_snapshot_yaml_from_fields_fixtures);
	g_test_add_func("/snapshot-yaml/from-fields/odd", test_snapshot_yaml_from_fields_odd);
	g_test_add_func("/snapshot-yaml/from-fields/random", test_snapshot_yaml_from_fields_random);
	g_test_add_func("/snapshot-yaml/block-writer", test_snapshot_yaml_block_writer);
	status = g_test_run();
	g_clear_pointer(&shared_buffers, msd_snapshot_buffers_free);
	return status;
}
