/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include "meshsync-error.h"
#include "util/msd-yaml.h"

static gchar *
node_to_json(JsonNode *node)
{
	return json_to_string(node, FALSE);
}

static void
test_yaml_scalars(void)
{
	const gchar *text = "s: hello\n"
	                    "q: \"123\"\n"
	                    "i: 42\n"
	                    "neg: -7\n"
	                    "hex: 0x1f\n"
	                    "f: 2.5\n"
	                    "t: true\n"
	                    "F: False\n"
	                    "n: null\n"
	                    "tilde: ~\n"
	                    "empty:\n"
	                    "ver: 1.2.3\n"
	                    "tagged: !!str 12\n";
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) doc = msd_yaml_parse_document(text, strlen(text), "t.yaml", &error);
	g_autofree gchar *json = NULL;

	g_assert_no_error(error);
	json = node_to_json(doc);
	g_assert_cmpstr(json, ==,
	                "{\"s\":\"hello\",\"q\":\"123\",\"i\":42,\"neg\":-7,\"hex\":31,\"f\":2.5,"
	                "\"t\":true,\"F\":false,\"n\":null,\"tilde\":null,\"empty\":null,"
	                "\"ver\":\"1.2.3\",\"tagged\":\"12\"}");
}

static void
test_yaml_nested(void)
{
	const gchar *text = "a:\n  - x: 1\n    y: [1, two]\n  - {k: v}\nb: {}\nc: []\n";
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) doc = msd_yaml_parse_document(text, strlen(text), "n.yaml", &error);
	g_autofree gchar *json = NULL;

	g_assert_no_error(error);
	json = node_to_json(doc);
	g_assert_cmpstr(json, ==,
	                "{\"a\":[{\"x\":1,\"y\":[1,\"two\"]},{\"k\":\"v\"}],\"b\":{},\"c\":[]}");
}

static void
test_yaml_json_input(void)
{
	const gchar *text = "{\"kind\": \"Pod\", \"spec\": {\"n\": [1, 2.5, \"\\u00e9\"]}}";
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) doc = msd_yaml_parse_document(text, strlen(text), "j.json", &error);
	g_autofree gchar *json = NULL;

	g_assert_no_error(error);
	json = node_to_json(doc);
	g_assert_cmpstr(json, ==, "{\"kind\":\"Pod\",\"spec\":{\"n\":[1,2.5,\"\xc3\xa9\"]}}");
}

static void
test_yaml_multi_document(void)
{
	const gchar *text = "---\na: 1\n---\n---\n~\n---\nb: 2\n...\n";
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) docs = msd_yaml_parse_documents(text, strlen(text), "m.yaml", &error);
	g_autofree gchar *second = NULL;

	g_assert_no_error(error);
	g_assert_nonnull(docs);
	/* The empty and the null-only documents are skipped. */
	g_assert_cmpuint(docs->len, ==, 2);
	second = node_to_json(g_ptr_array_index(docs, 1));
	g_assert_cmpstr(second, ==, "{\"b\":2}");
}

static void
test_yaml_error_has_position(void)
{
	const gchar *text = "a: 1\nb: [1, 2\nc: 3\n";
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) doc = msd_yaml_parse_document(text, strlen(text), "bad.yaml", &error);

	g_assert_null(doc);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);
	g_assert_true(g_str_has_prefix(error->message, "bad.yaml:"));
	/* The problem is reported on line 3 or 4, never on line 1. */
	g_assert_false(g_str_has_prefix(error->message, "bad.yaml:1:"));
}

static void
test_yaml_empty_stream(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) docs = msd_yaml_parse_documents("", 0, "e.yaml", &error);
	g_autoptr(JsonNode) doc = NULL;

	g_assert_no_error(error);
	g_assert_cmpuint(docs->len, ==, 0);
	doc = msd_yaml_parse_document("# only a comment\n", 17, "e.yaml", &error);
	g_assert_null(doc);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);
	g_assert_nonnull(strstr(error->message, "e.yaml: the document is empty"));
}

static void
test_yaml_alias_refused(void)
{
	const gchar *text = "a: &x 1\nb: *x\n";
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) doc = msd_yaml_parse_document(text, strlen(text), "alias.yaml", &error);

	g_assert_null(doc);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);
	g_assert_nonnull(strstr(error->message, "aliases are not supported"));
}

static void
test_yaml_depth_bounded(void)
{
	g_autoptr(GString) text = g_string_new(NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) doc = NULL;

	for (guint i = 0; i < 1000; i++)
		g_string_append_c(text, '[');
	doc = msd_yaml_parse_document(text->str, text->len, "deep.yaml", &error);
	g_assert_null(doc);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
	g_test_add_func("/yaml/scalars", test_yaml_scalars);
	g_test_add_func("/yaml/nested", test_yaml_nested);
	g_test_add_func("/yaml/json-input", test_yaml_json_input);
	g_test_add_func("/yaml/multi-document", test_yaml_multi_document);
	g_test_add_func("/yaml/error-has-position", test_yaml_error_has_position);
	g_test_add_func("/yaml/empty-stream", test_yaml_empty_stream);
	g_test_add_func("/yaml/alias-refused", test_yaml_alias_refused);
	g_test_add_func("/yaml/depth-bounded", test_yaml_depth_bounded);
	return g_test_run();
}
