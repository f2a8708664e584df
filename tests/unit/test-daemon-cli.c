/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include "meshsync-error.h"
#include "meshsyncd-go-duration.h"
#include "meshsyncd-go-flags.h"
#include "meshsyncd-resource-table.h"

static void
assert_normalized(const gchar *const *input, const gchar *const *expected)
{
	g_auto(GStrv) output =
	        meshsyncd_go_flags_normalize(g_strv_length((GStrv)input), (GStrv)input);

	g_assert_cmpstrv(output, expected);
}

static void
test_go_flags_single_dash(void)
{
	const gchar *input[] = {"meshsync", "-output", "file", "-stopAfter=8s", "-v", NULL};
	const gchar *expected[] = {"meshsync", "--output", "file", "--stopAfter=8s", "-v", NULL};

	assert_normalized(input, expected);
}

static void
test_go_flags_gnu_untouched(void)
{
	const gchar *input[] = {"meshsync", "--output=file", "--outputFile", "x.yaml", NULL};
	const gchar *expected[] = {"meshsync", "--output=file", "--outputFile", "x.yaml", NULL};

	assert_normalized(input, expected);
}

static void
test_go_flags_values_and_rest(void)
{
	/* A negative number or a lone dash is a value; nothing after "--" is rewritten. */
	const gchar *input[] = {"meshsync", "-stopAfter", "-1", "-", "--", "-output", NULL};
	const gchar *expected[] = {"meshsync", "--stopAfter", "-1", "-", "--", "-output", NULL};

	assert_normalized(input, expected);
}

static void
test_resource_table_sorted_and_aligned(void)
{
	const gchar *list_watch[] = {"get", "list", "watch", NULL};
	const gchar *get_only[] = {"get", "create", NULL};
	g_autoptr(GPtrArray) resources = g_ptr_array_new_with_free_func(g_object_unref);
	g_autofree gchar *table = NULL;
	g_auto(GStrv) lines = NULL;

	g_ptr_array_add(resources,
	                meshsync_api_resource_new("apps", "v1", "Deployment", "deployments", TRUE,
	                                          list_watch, NULL));
	g_ptr_array_add(resources,
	                meshsync_api_resource_new("", "v1", "Pod", "pods", TRUE, list_watch, NULL));
	g_ptr_array_add(resources,
	                meshsync_api_resource_new("authentication.k8s.io", "v1", "TokenReview",
	                                          "tokenreviews", FALSE, get_only, NULL));
	table = meshsyncd_resource_table_render(resources);
	lines = g_strsplit(table, "\n", -1);

	g_assert_cmpuint(g_strv_length(lines), ==, 5); /* header, three rows, trailing "" */
	g_assert_true(g_str_has_prefix(lines[0], "NAME "));
	/* The core group ("") sorts first, then the named groups. */
	g_assert_true(g_str_has_prefix(lines[1], "pods "));
	g_assert_true(g_str_has_prefix(lines[2], "deployments "));
	g_assert_true(g_str_has_prefix(lines[3], "tokenreviews "));
	g_assert_nonnull(strstr(lines[2], "apps/v1"));
	g_assert_true(g_str_has_suffix(lines[1], "true"));
	g_assert_true(g_str_has_suffix(lines[3], "false"));
	/* Columns line up: APIVERSION starts at the same offset in every line. */
	g_assert_cmpint(strstr(lines[0], "APIVERSION") - lines[0], ==,
	                strstr(lines[1], "v1") - lines[1]);
	g_assert_cmpint(strstr(lines[3], "authentication.k8s.io/v1") - lines[3], ==,
	                strstr(lines[1], "v1") - lines[1]);
	g_assert_cmpstr(lines[4], ==, "");
}

static void
test_go_duration_valid(void)
{
	const struct {
		const gchar *text;
		gint64 nanoseconds;
	} cases[] = {
	        {"0", 0},
	        {"8s", G_GINT64_CONSTANT(8000000000)},
	        {"1m30s", G_GINT64_CONSTANT(90000000000)},
	        {"1.5h", G_GINT64_CONSTANT(5400000000000)},
	        {"300ms", 300000000},
	        {"2us", 2000},
	        {"2\xc2\xb5s", 2000},
	        {"-1ns", -1},
	        {"+5s", G_GINT64_CONSTANT(5000000000)},
	        {"1h2m3s4ms5us6ns", G_GINT64_CONSTANT(3723004005006)},
	        {".5s", 500000000},
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		gint64 value = 42;

		g_test_message("%s", cases[i].text);
		g_assert_true(meshsyncd_go_duration_parse(cases[i].text, &value, &error));
		g_assert_no_error(error);
		g_assert_cmpint(value, ==, cases[i].nanoseconds);
	}
}

static void
test_go_duration_invalid(void)
{
	const gchar *cases[] = {"",     "-",   "8",   "s",    "1x",
	                        "1.s.", "5 s", "10d", "1e3s", "9999999999999999999h"};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		gint64 value = 0;

		g_test_message("%s", cases[i]);
		g_assert_false(meshsyncd_go_duration_parse(cases[i], &value, &error));
		g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG);
		g_assert_nonnull(strstr(error->message, "invalid duration"));
	}
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
	g_test_add_func("/daemon/go-flags/single-dash", test_go_flags_single_dash);
	g_test_add_func("/daemon/go-flags/gnu-untouched", test_go_flags_gnu_untouched);
	g_test_add_func("/daemon/go-flags/values-and-rest", test_go_flags_values_and_rest);
	g_test_add_func("/daemon/go-duration/valid", test_go_duration_valid);
	g_test_add_func("/daemon/go-duration/invalid", test_go_duration_invalid);
	g_test_add_func("/daemon/resource-table/sorted-and-aligned",
	                test_resource_table_sorted_and_aligned);
	return g_test_run();
}
