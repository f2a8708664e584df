/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <string.h>

#include "meshsync-error.h"
#include "util/msd-json-tokens.h"

static const gchar *pod = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
                          "\"metadata\":{\"name\":\"web-0\",\"labels\":{\"a\":\"x\\\"y\"},"
                          "\"managedFields\":[{\"f\":[1,2,{\"g\":null}]}],\"uid\":\"u-1\"},"
                          "\"spec\":null,\"status\":{\"phase\":\"Running\"}}";

static void
test_json_tokens_members_and_paths(void)
{
	g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *name = NULL;
	gint uid;
	gint phase;
	gsize length;
	const gchar *raw;

	g_assert_true(msd_json_tokens_parse(&tokens, pod, strlen(pod), &error));
	g_assert_no_error(error);

	/* uid comes after the nested managedFields: skipping must step over the whole subtree. */
	uid = msd_json_tokens_path(&tokens, 0, "metadata", "uid", NULL);
	g_assert_true(msd_json_tokens_string_equals(&tokens, uid, "u-1"));
	name = msd_json_tokens_dup_string(
	        &tokens, msd_json_tokens_path(&tokens, 0, "metadata", "name", NULL));
	g_assert_cmpstr(name, ==, "web-0");

	phase = msd_json_tokens_path(&tokens, 0, "status", "phase", NULL);
	raw = msd_json_tokens_span(&tokens, (guint)phase, &length);
	g_assert_cmpmem(raw, length, "\"Running\"", 9);

	g_assert_true(msd_json_tokens_is_null(&tokens, msd_json_tokens_member(&tokens, 0, "spec")));
	g_assert_cmpint(msd_json_tokens_member(&tokens, 0, "missing"), ==, -1);
	g_assert_cmpint(msd_json_tokens_path(&tokens, 0, "spec", "containers", NULL), ==, -1);
	g_assert_cmpuint(msd_json_tokens_skip(&tokens, 0), ==, tokens.n_tokens);
}

static void
test_json_tokens_unescape(void)
{
	const gchar *text = "[\"x\\\"y\", \"\\u00e9\\n\\ud83d\\ude00\", \"\\ud800x\"]";
	g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;
	g_autofree gchar *quoted = NULL;
	g_autofree gchar *unicode = NULL;
	g_autofree gchar *lone = NULL;

	g_assert_true(msd_json_tokens_parse(&tokens, text, strlen(text), NULL));
	quoted = msd_json_tokens_dup_string(&tokens, 1);
	unicode = msd_json_tokens_dup_string(&tokens, 2);
	lone = msd_json_tokens_dup_string(&tokens, 3);
	g_assert_cmpstr(quoted, ==, "x\"y");
	g_assert_cmpstr(unicode, ==, "\xc3\xa9\n\xf0\x9f\x98\x80");
	/* A lone surrogate cannot be UTF-8: it becomes U+FFFD, as Go decodes it. */
	g_assert_cmpstr(lone, ==, "\xef\xbf\xbdx");
}

static void
test_json_tokens_malformed(void)
{
	const gchar *cases[] = {"",     "{",     "{\"a\":}", "{\"a\" 1}",
	                        "[1,2", "{} {}", "{a:1}",    "\"open"};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;
		g_autoptr(GError) error = NULL;

		g_test_message("case %u: %s", i, cases[i]);
		g_assert_false(msd_json_tokens_parse(&tokens, cases[i], strlen(cases[i]), &error));
		g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);
		g_assert_nonnull(strstr(error->message, "malformed JSON"));
	}
}

/* RFC 8259: a text is one value with optional whitespace around it, so a bare number or
 * literal is accepted or rejected the same way whether or not whitespace follows it. Strict
 * jsmn saw "4" as truncated and "4 " as valid: the JSON writer's fuzz case canonicalised the
 * accepted "4 " to the rejected "4". */
static void
test_json_tokens_top_level_primitives(void)
{
	static const struct {
		const gchar *text;
		MsdJsonType type;
	} good[] = {
	        {"4", MSD_JSON_NUMBER},      {"-0", MSD_JSON_NUMBER},
	        {"1.5e-7", MSD_JSON_NUMBER}, {"123456789", MSD_JSON_NUMBER},
	        {"true", MSD_JSON_TRUE},     {"false", MSD_JSON_FALSE},
	        {"null", MSD_JSON_NULL},     {"\"s\"", MSD_JSON_STRING},
	        {"[]", MSD_JSON_ARRAY},      {"{}", MSD_JSON_OBJECT},
	};
	static const gchar *const bad[] = {
	        "4 4", "tru", "nul", "-", "1.",  "01",    "1e",  "+1",       "1e400",
	        "4,",  "4]",  "4}",  "x", "\"x", "4\x01", "NaN", "Infinity", "1 2 3",
	};
	static const gchar *const blanks[] = {"", " ", "\t", "\n", "\r\n ", " \t"};

	for (guint i = 0; i < G_N_ELEMENTS(good); i++) {
		for (guint before = 0; before < G_N_ELEMENTS(blanks); before++) {
			for (guint after = 0; after < G_N_ELEMENTS(blanks); after++) {
				g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;
				g_autoptr(GError) error = NULL;
				g_autofree gchar *text = g_strconcat(blanks[before], good[i].text,
				                                     blanks[after], NULL);
				gsize length;
				const gchar *span;

				g_assert_true(
				        msd_json_tokens_parse(&tokens, text, strlen(text), &error));
				g_assert_no_error(error);
				g_assert_cmpint(tokens.n_tokens, >=, 1);
				g_assert_cmpint(msd_json_tokens_type(&tokens, 0), ==, good[i].type);
				span = msd_json_tokens_span(&tokens, 0, &length);
				g_assert_cmpmem(span, length, good[i].text, strlen(good[i].text));
			}
		}
	}
	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		for (guint after = 0; after < G_N_ELEMENTS(blanks); after++) {
			g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;
			g_autoptr(GError) error = NULL;
			g_autofree gchar *text = g_strconcat(bad[i], blanks[after], NULL);

			g_test_message("rejects '%s'", text);
			g_assert_false(msd_json_tokens_parse(&tokens, text, strlen(text), &error));
			g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);
		}
	}
}

static void
test_json_tokens_grows_and_reuses(void)
{
	g_autoptr(GString) big = g_string_new("[");
	g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;

	for (guint i = 0; i < 5000; i++)
		g_string_append_printf(big, "%s{\"i\":%u}", i == 0 ? "" : ",", i);
	g_string_append_c(big, ']');
	g_assert_true(msd_json_tokens_parse(&tokens, big->str, big->len, NULL));
	g_assert_cmpuint(tokens.n_tokens, ==, 1 + 5000 * 3);
	g_assert_cmpint(tokens.tokens[0].size, ==, 5000);

	/* The same array serves a second, small document. */
	g_assert_true(msd_json_tokens_parse(&tokens, pod, strlen(pod), NULL));
	g_assert_cmpint(tokens.tokens[0].type, ==, MSD_JSON_OBJECT);
}

/* The informer's watch lines: metadata.managedFields of the object is checked, not tokenized. */
static void
test_json_tokens_skipping(void)
{
	static const MsdJsonSkip skip = {1, "metadata", "managedFields"};
	g_autofree gchar *line = g_strdup_printf("{\"type\":\"MODIFIED\",\"object\":%s}", pod);
	g_auto(MsdJsonTokens) full = MSD_JSON_TOKENS_INIT;
	g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;
	gint managed;
	gint uid;
	const gchar *broken[] = {
	        /* broken inside the skipped value: still rejected */
	        "{\"object\":{\"metadata\":{\"managedFields\":[{\"f\":[1,2,]}]}}}",
	        "{\"object\":{\"metadata\":{\"managedFields\":[{\"f\" 1}]}}}",
	        "{\"object\":{\"metadata\":{\"managedFields\":[\"\x01\"]}}}",
	        "{\"object\":{\"metadata\":{\"managedFields\":[01]}}}",
	        "{\"object\":{\"metadata\":{\"managedFields\":[tru]}}}",
	        "{\"object\":{\"metadata\":{\"managedFields\":[\"\\x\"]}}}",
	        "{\"object\":{\"metadata\":{\"managedFields\":[{}}}}",
	};

	g_assert_true(msd_json_tokens_parse(&full, line, strlen(line), NULL));
	g_assert_true(msd_json_tokens_parse_skipping(&tokens, line, strlen(line), &skip, NULL));
	managed = msd_json_tokens_path(&tokens, 0, "object", "metadata", "managedFields", NULL);
	g_assert_cmpint(msd_json_tokens_type(&tokens, managed), ==, MSD_JSON_ARRAY);
	g_assert_true(tokens.tokens[managed].opaque);
	g_assert_cmpint(msd_json_tokens_size(&tokens, managed), ==, 0);
	g_assert_cmpint(msd_json_tokens_skip(&tokens, managed), ==, managed + 1);
	/* one token instead of the nine of [{"f":[1,2,{"g":null}]}] */
	g_assert_cmpint(tokens.n_tokens, ==, full.n_tokens - 8);
	{
		gsize a_len;
		gsize b_len;
		const gchar *a = msd_json_tokens_span(&tokens, managed, &a_len);
		const gchar *b = msd_json_tokens_span(
		        &full,
		        msd_json_tokens_path(&full, 0, "object", "metadata", "managedFields", NULL),
		        &b_len);

		g_assert_cmpmem(a, a_len, b, b_len);
	}
	uid = msd_json_tokens_path(&tokens, 0, "object", "metadata", "uid", NULL);
	g_assert_true(msd_json_tokens_string_equals(&tokens, uid, "u-1"));
	g_assert_true(msd_json_tokens_string_equals(
	        &tokens, msd_json_tokens_path(&tokens, 0, "object", "status", "phase", NULL),
	        "Running"));

	/* at another depth, nothing is skipped */
	g_assert_true(msd_json_tokens_parse_skipping(&tokens, pod, strlen(pod), &skip, NULL));
	g_assert_cmpint(tokens.n_tokens, ==, full.n_tokens - 4);
	g_assert_false(
	        tokens.tokens[msd_json_tokens_path(&tokens, 0, "metadata", "managedFields", NULL)]
	                .opaque);

	for (guint i = 0; i < G_N_ELEMENTS(broken); i++) {
		g_autoptr(GError) error = NULL;

		g_test_message("case %u: %s", i, broken[i]);
		g_assert_false(msd_json_tokens_parse_skipping(&tokens, broken[i], strlen(broken[i]),
		                                              &skip, &error));
		g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);
	}
}

/* A watch line whose one managedFields entry has @fields as fieldsV1 and @time as its time. */
static gchar *
kept_line(const gchar *time, const gchar *fields)
{
	return g_strdup_printf("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p\","
	                       "\"managedFields\":[{\"manager\":\"kubelet\",\"time\":\"%s\","
	                       "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":%s}],\"uid\":\"u\"},"
	                       "\"spec\":{}}}",
	                       time, fields);
}

static gchar *
kept_fields(guint members, const gchar *space)
{
	GString *fields = g_string_new("{\"f:spec\":{");

	for (guint i = 0; i < members; i++)
		g_string_append_printf(fields, "%s\"f:field-%u\":%s{}", i > 0 ? "," : "", i, space);
	g_string_append(fields, "}}");
	return g_string_free(fields, FALSE);
}

/* Parses @line with @warm (which has seen other lines) and with new tokens: the same answer,
 * tokens or error, either way. */
static gboolean
parse_both_ways(MsdJsonTokens *warm, const gchar *line, gsize length)
{
	static const MsdJsonSkip skip = {1, "metadata", "managedFields"};
	g_auto(MsdJsonTokens) cold = MSD_JSON_TOKENS_INIT;
	g_autoptr(GError) warm_error = NULL;
	g_autoptr(GError) cold_error = NULL;
	gboolean warm_ok = msd_json_tokens_parse_skipping(warm, line, length, &skip, &warm_error);
	gboolean cold_ok = msd_json_tokens_parse_skipping(&cold, line, length, &skip, &cold_error);

	g_assert_cmpint(warm_ok, ==, cold_ok);
	if (!cold_ok) {
		g_assert_cmpint(warm_error->code, ==, cold_error->code);
		g_assert_cmpstr(warm_error->message, ==, cold_error->message);
		return FALSE;
	}
	g_assert_cmpint(warm->n_tokens, ==, cold.n_tokens);
	g_assert_cmpmem(warm->tokens, sizeof(MsdJsonToken) * (gsize)warm->n_tokens, cold.tokens,
	                sizeof(MsdJsonToken) * (gsize)cold.n_tokens);
	g_assert_cmpint(warm->compact, ==, cold.compact);
	return TRUE;
}

/* managedFields[i].fieldsV1 met again (the replicas of one template) is recognized rather than
 * checked again; whatever the bytes, a parse gives what a parse with new tokens gives. */
static void
test_json_tokens_skipping_kept(void)
{
	g_autofree gchar *fields = kept_fields(40, "");
	g_autofree gchar *spaced = kept_fields(40, " ");
	g_autofree gchar *first = kept_line("2026-01-01T00:00:00Z", fields);
	g_autofree gchar *second = kept_line("2026-01-01T00:00:01Z", fields);
	g_autofree gchar *loose = kept_line("2026-01-01T00:00:02Z", spaced);
	g_auto(MsdJsonTokens) warm = MSD_JSON_TOKENS_INIT;
	g_autoptr(GRand) rand = g_rand_new_with_seed(25);
	gsize length = strlen(second);
	gsize start = (gsize)(strstr(second, "\"fieldsV1\":") - second) + strlen("\"fieldsV1\":");
	guint rejected = 0;

	g_assert_true(parse_both_ways(&warm, first, strlen(first)));
	g_assert_nonnull(warm.checked);
	g_assert_true(parse_both_ways(&warm, second, length));
	/* whitespace inside a kept value still makes the text not compact */
	g_assert_true(parse_both_ways(&warm, loose, strlen(loose)));
	g_assert_false(warm.compact);
	g_assert_true(parse_both_ways(&warm, loose, strlen(loose)));
	g_assert_false(warm.compact);
	g_assert_true(parse_both_ways(&warm, second, length));
	g_assert_true(warm.compact);

	/* cut short anywhere, or one byte of the kept value changed, after it was kept */
	for (gsize cut = start; cut < length; cut += 7)
		g_assert_false(parse_both_ways(&warm, second, cut));
	for (guint i = 0; i < 2000; i++) {
		g_autofree gchar *mutated = g_strdup(second);
		static const gchar bytes[] = "{}[]\":,\\ tf0-\x01a";
		gsize at = start + (gsize)g_rand_int_range(rand, 0, (gint32)strlen(fields));

		mutated[at] = bytes[g_rand_int_range(rand, 0, sizeof(bytes) - 1)];
		if (!parse_both_ways(&warm, mutated, length))
			rejected++;
		/* and the original, kept again or still kept */
		g_assert_true(parse_both_ways(&warm, second, length));
	}
	g_assert_cmpuint(rejected, >, 0);
}

/* The depth limit is a limit (TOO_LARGE) whether or not the text is also broken elsewhere. */
static void
test_json_tokens_depth(void)
{
	g_autoptr(GString) ok = g_string_new(NULL);
	g_autoptr(GString) deep = g_string_new(NULL);
	g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;

	for (guint i = 0; i < MSD_JSON_MAX_DEPTH; i++)
		g_string_append_c(ok, '[');
	for (guint i = 0; i < MSD_JSON_MAX_DEPTH; i++)
		g_string_append_c(ok, ']');
	g_assert_true(msd_json_tokens_parse(&tokens, ok->str, ok->len, NULL));
	g_assert_cmpint(tokens.n_tokens, ==, MSD_JSON_MAX_DEPTH);

	for (guint i = 0; i <= MSD_JSON_MAX_DEPTH; i++)
		g_string_append_c(deep, '[');
	for (guint broken = 0; broken < 2; broken++) {
		g_autoptr(GError) error = NULL;

		if (broken)
			g_string_prepend(deep, "{\"a\" 1,\"b\":");
		g_assert_false(msd_json_tokens_parse(&tokens, deep->str, deep->len, &error));
		g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_TOO_LARGE);
	}
}

/* Whether there is whitespace between the tokens: the store copies compact text as it is. */
static void
test_json_tokens_compact(void)
{
	static const struct {
		const gchar *text;
		gboolean compact;
	} cases[] = {
	        {"{\"a\":[1,{\"b\":\"x y\"}]}", TRUE},
	        {" {\"a\":\" \"}\n", TRUE},
	        {"{\"a\": 1}", FALSE},
	        {"{\"a\":[1 ]}", FALSE},
	        {"[\n]", FALSE},
	        {"\"\\n\"", TRUE},
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;

		g_test_message("case %u: %s", i, cases[i].text);
		g_assert_true(
		        msd_json_tokens_parse(&tokens, cases[i].text, strlen(cases[i].text), NULL));
		g_assert_cmpint(tokens.compact, ==, cases[i].compact);
	}
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
	g_test_add_func("/json-tokens/members-and-paths", test_json_tokens_members_and_paths);
	g_test_add_func("/json-tokens/unescape", test_json_tokens_unescape);
	g_test_add_func("/json-tokens/malformed", test_json_tokens_malformed);
	g_test_add_func("/json-tokens/top-level-primitives", test_json_tokens_top_level_primitives);
	g_test_add_func("/json-tokens/grows-and-reuses", test_json_tokens_grows_and_reuses);
	g_test_add_func("/json-tokens/skipping", test_json_tokens_skipping);
	g_test_add_func("/json-tokens/skipping-kept", test_json_tokens_skipping_kept);
	g_test_add_func("/json-tokens/depth", test_json_tokens_depth);
	g_test_add_func("/json-tokens/compact", test_json_tokens_compact);
	return g_test_run();
}
