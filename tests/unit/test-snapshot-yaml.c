/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <string.h>

#include "meshsync-error.h"
#include "output/msd-snapshot-yaml.h"

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
	const gchar *plain[] = {"v1",      "2f0c", "1.2.3", "nginx", "2025-05-01T10:00:00",
	                        "0x",      "1e",   "+",     "-",     "1:70",
	                        "Running", "a b",  NULL};

	for (guint i = 0; retyped[i] != NULL; i++) {
		g_test_message("retyped: %s", retyped[i]);
		g_assert_true(msd_snapshot_yaml_plain_retypes(retyped[i]));
	}
	for (guint i = 0; plain[i] != NULL; i++) {
		g_test_message("plain: %s", plain[i]);
		g_assert_false(msd_snapshot_yaml_plain_retypes(plain[i]));
	}
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
	g_test_add_func("/snapshot-yaml/document", test_snapshot_yaml_document);
	g_test_add_func("/snapshot-yaml/scalars", test_snapshot_yaml_scalars);
	g_test_add_func("/snapshot-yaml/malformed", test_snapshot_yaml_malformed);
	g_test_add_func("/snapshot-yaml/key-order", test_snapshot_yaml_key_order);
	g_test_add_func("/snapshot-yaml/retyping", test_snapshot_yaml_retyping);
	return g_test_run();
}
