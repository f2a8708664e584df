/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include <json-glib/json-glib.h>
#include <string.h>

#include "meshsync-error.h"
#include "model/msd-json-writer.h"

static gchar *
canon(const gchar *js, gssize len, GError **error)
{
	return msd_json_canonicalize(js, len, error);
}

static void
assert_canon(const gchar *in, const gchar *expected)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *out = canon(in, -1, &error);

	g_assert_no_error(error);
	g_assert_cmpstr(out, ==, expected);
}

static void
test_string_escaping(void)
{
	static const struct {
		const gchar *in;
		const gchar *out;
	} cases[] = {
	        {"plain", "\"plain\""},
	        {"a\"b", "\"a\\\"b\""},
	        {"back\\slash", "\"back\\\\slash\""},
	        {"nl\ncr\rtab\t", "\"nl\\ncr\\rtab\\t\""},
	        {"bs\bff\f", "\"bs\\bff\\f\""},
	        {"\x01\x1f", "\"\\u0001\\u001f\""},
	        {"<a href='x'>&amp;</a>",
	         "\"\\u003ca href='x'\\u003e\\u0026amp;\\u003c/a\\u003e\""},
	        {"line\xe2\x80\xa8para\xe2\x80\xa9", "\"line\\u2028para\\u2029\""},
	        {"caf\xc3\xa9 \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xf0\x9f\x98\x80\""},
	        {"bad\xff\xfe", "\"bad\\ufffd\\ufffd\""},
	        {"trunc\xe2\x82", "\"trunc\\ufffd\\ufffd\""},
	        {"surrogate\xed\xa0\x80", "\"surrogate\\ufffd\\ufffd\\ufffd\""},
	        {"overlong\xc0\xaf", "\"overlong\\ufffd\\ufffd\""},
	        {"del\x7f/slash", "\"del\x7f/slash\""},
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GString) out = g_string_new(NULL);

		msd_json_append_string(out, cases[i].in, -1);
		g_assert_cmpstr(out->str, ==, cases[i].out);
	}
}

static void
test_string_embedded_nul(void)
{
	g_autoptr(GString) out = g_string_new(NULL);

	msd_json_append_string(out, "a\0b", 3);
	g_assert_cmpstr(out->str, ==, "\"a\\u0000b\"");
}

static void
test_escaped_form(void)
{
	g_autoptr(GString) out = g_string_new(NULL);

	/* the text between the quotes of the Go serialization */
	msd_json_append_escaped(out, "{\"a\":\"<b>\"}\n", -1);
	g_assert_cmpstr(out->str, ==, "{\\\"a\\\":\\\"\\u003cb\\u003e\\\"}\\n");
}

static void
test_reencode_strings(void)
{
	/* escapes in the input are decoded, then encoded the Go way */
	assert_canon("[\"\\u00e9\\u00E9\"]", "[\"\xc3\xa9\xc3\xa9\"]");
	assert_canon("[\"\\ud83d\\ude00\"]", "[\"\xf0\x9f\x98\x80\"]");
	assert_canon("[\"\\/\\\"\\\\\"]", "[\"/\\\"\\\\\"]");
	assert_canon("[\"\\u0000\\u001F\\u0008\"]", "[\"\\u0000\\u001f\\b\"]");
	assert_canon("[\"\\u003C\\u2028\xe2\x80\xa9\"]", "[\"\\u003c\\u2028\\u2029\"]");
	assert_canon("[\"<&>\"]", "[\"\\u003c\\u0026\\u003e\"]");
	/* Go's decoder makes U+FFFD of lone surrogates and invalid bytes; the encoder then
	 * writes that character as it is */
	assert_canon("[\"\\ud800x\"]", "[\"\xef\xbf\xbdx\"]");
	assert_canon("[\"\\udc00\\ud800\\u0041\"]", "[\"\xef\xbf\xbd\xef\xbf\xbd"
	                                            "A\"]");
	assert_canon("[\"a\xff"
	             "b\"]",
	             "[\"a\xef\xbf\xbd"
	             "b\"]");
	assert_canon("[\"\xf0\x9f\x98\x80\"]", "[\"\xf0\x9f\x98\x80\"]");
}

static void
test_key_sorting(void)
{
	assert_canon("{\"b\":1,\"a\":2,\"C\":3,\"aa\":4,\"\":5}",
	             "{\"\":5,\"C\":3,\"a\":2,\"aa\":4,\"b\":1}");
	/* at every level, inside arrays too */
	assert_canon("{\"z\":{\"y\":[{\"q\":1,\"p\":2}],\"x\":null},\"a\":true}",
	             "{\"a\":true,\"z\":{\"x\":null,\"y\":[{\"p\":2,\"q\":1}]}}");
	/* duplicates: the last one wins, as decoding into a Go map does */
	assert_canon("{\"k\":1,\"j\":0,\"k\":2}", "{\"j\":0,\"k\":2}");
	/* keys compare by decoded text: "\u0062" is "b" and collides with it */
	assert_canon("{\"\\u0062\":1,\"a\":2,\"b\":3}", "{\"a\":2,\"b\":3}");
	/* byte order, not code point collation: "é" (0xc3...) after "z" */
	assert_canon("{\"\xc3\xa9\":1,\"z\":2,\"Z\":3}", "{\"Z\":3,\"z\":2,\"\xc3\xa9\":1}");
	/* keys are escaped like values */
	assert_canon("{\"<k>\":1}", "{\"\\u003ck\\u003e\":1}");
}

static void
test_numbers(void)
{
	static const struct {
		const gchar *in;
		const gchar *out;
	} cases[] = {
	        {"0", "0"},
	        {"-0", "0"},
	        {"-0.0", "-0"},
	        {"7", "7"},
	        {"-42", "-42"},
	        {"100.0", "100"},
	        {"1E2", "100"},
	        {"0.1", "0.1"},
	        {"2.5e-3", "0.0025"},
	        {"0.000001", "0.000001"},
	        {"1e-7", "1e-7"},
	        {"1.5e-10", "1.5e-10"},
	        {"1e20", "100000000000000000000"},
	        {"1e21", "1e+21"},
	        {"123456789e15", "1.23456789e+23"},
	        {"100000000000000000000000", "1e+23"},
	        {"123456789012345678", "123456789012345678"},
	        {"9223372036854775807", "9223372036854775807"},
	        {"-9223372036854775808", "-9223372036854775808"},
	        {"9223372036854775808", "9223372036854776000"},
	        {"12345678901234567890123", "1.2345678901234568e+22"},
	        {"0.30000000000000004", "0.30000000000000004"},
	        {"3.141592653589793238462643", "3.141592653589793"},
	        {"5e-324", "5e-324"},
	        {"1.7976931348623157e308", "1.7976931348623157e+308"},
	        {"-1.25E+3", "-1250"},
	        {"9007199254740993.0", "9007199254740992"},
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree gchar *in = g_strdup_printf("[%s]", cases[i].in);
		g_autofree gchar *want = g_strdup_printf("[%s]", cases[i].out);

		assert_canon(in, want);
	}
}

static void
test_literals_and_nesting(void)
{
	assert_canon(" { \"a\" : [ true , false , null , [ ] , { } , \"\" ] } \n",
	             "{\"a\":[true,false,null,[],{},\"\"]}");
	assert_canon("[[[[[1]]]]]", "[[[[[1]]]]]");
	assert_canon("{\"a\":{\"b\":{\"c\":{}}}}", "{\"a\":{\"b\":{\"c\":{}}}}");
}

static void
test_raw_spans(void)
{
	static const gchar *js =
	        "{\"s\":\"a\\\"b&\\u00e9\",\"n\":1.0,\"z\":null,\"o\":{\"y\":1,\"x\":2}}";
	MsdJsonTokens doc;
	g_autoptr(GString) out = g_string_new(NULL);

	msd_json_tokens_init(&doc);
	g_assert_true(msd_json_tokens_parse(&doc, js, strlen(js), NULL));
	msd_json_write_raw(out, &doc, msd_json_tokens_member(&doc, 0, "s"));
	g_assert_cmpstr(out->str, ==, "a\\\"b\\u0026\xc3\xa9");
	g_string_truncate(out, 0);
	msd_json_write_raw(out, &doc, msd_json_tokens_member(&doc, 0, "n"));
	g_assert_cmpstr(out->str, ==, "1");
	g_string_truncate(out, 0);
	msd_json_write_raw(out, &doc, msd_json_tokens_member(&doc, 0, "z"));
	g_assert_cmpstr(out->str, ==, "");
	msd_json_write_raw(out, &doc, msd_json_tokens_member(&doc, 0, "o"));
	g_assert_cmpstr(out->str, ==, "{\"x\":2,\"y\":1}");
	g_assert_cmpint(msd_json_tokens_member(&doc, 0, "missing"), ==, -1);
	msd_json_tokens_clear(&doc);
}

static const gchar *malformed[] = {
        "",
        "   ",
        "{",
        "}",
        "{\"a\":1,}",
        "{,\"a\":1}",
        "{\"a\" 1}",
        "{\"a\":}",
        "{\"a\"}",
        "{\"a\":1 \"b\":2}",
        "{\"a\":1,,\"b\":2}",
        "{\"a\":1:2}",
        "{\"a\":\"b\":\"c\"}",
        "[1 2]",
        "[1,]",
        "[,1]",
        "[\"a\":1]",
        "{\"a\":01}",
        "{\"a\":1.}",
        "{\"a\":.5}",
        "{\"a\":-}",
        "{\"a\":1e}",
        "{\"a\":+1}",
        "{\"a\":tru}",
        "{\"a\":nul}",
        "{\"a\":truex}",
        "{\"a\":\"\x01\"}",
        "{\"a\":\"tab\there\"}",
        "{\"a\":\"\\q\"}",
        "{\"a\":\"\\u12\"}",
        "{\"a\":1}}",
        "{\"a\":1} x",
        "{} {}",
        "{\"a\":[1}",
        "{\"a\":1]",
        "\"unterminated",
        "[1e400]",
        "[-1e999]",
        "{1:2}",
        "{\"a\":'x'}",
};

static void
test_malformed(void)
{
	for (guint i = 0; i < G_N_ELEMENTS(malformed); i++) {
		g_autoptr(GError) error = NULL;
		g_autofree gchar *out = canon(malformed[i], -1, &error);

		if (out != NULL)
			g_test_fail_printf("accepted malformed input %u: %s -> %s", i, malformed[i],
			                   out);
		g_assert_null(out);
		g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);
	}
}

static void
test_embedded_nul_rejected(void)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *out = canon("{\"a\":\"x\0y\"}", 11, &error);

	g_assert_null(out);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);
}

static void
test_depth_limit(void)
{
	g_autoptr(GString) deep = g_string_new(NULL);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *out = NULL;
	g_autofree gchar *ok = NULL;

	for (guint i = 0; i < 100000; i++)
		g_string_append_c(deep, '[');
	for (guint i = 0; i < 100000; i++)
		g_string_append_c(deep, ']');
	out = canon(deep->str, (gssize)deep->len, &error);
	g_assert_null(out);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);

	g_string_truncate(deep, 0);
	for (guint i = 0; i < 100; i++)
		g_string_append_c(deep, '[');
	for (guint i = 0; i < 100; i++)
		g_string_append_c(deep, ']');
	ok = canon(deep->str, (gssize)deep->len, NULL);
	g_assert_cmpstr(ok, ==, deep->str);
}

static const gchar fuzz_seed[] =
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-0\",\"labels\":"
        "{\"app\":\"web\",\"tier\":\"<front&end>\"},\"annotations\":{\"note\":\"line\\nbreak "
        "\\u2028 \\ud83d\\ude00 caf\xc3\xa9\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
        "\"image\":\"nginx:1.25\",\"ports\":[{\"containerPort\":80}],\"resources\":{\"limits\":"
        "{\"cpu\":0.5,\"memory\":1e9}}}],\"priority\":-0,\"x\":[true,false,null,1.5e-7]}}";

/* The mutation loop draws from its own generator with a fixed seed, so that a failure is the
 * same on every run; MESHSYNC_TEST_SEED picks another one (printed either way). */
#define FUZZ_DEFAULT_SEED 20240611u

static guint32
fuzz_seed_value(void)
{
	const gchar *env = g_getenv("MESHSYNC_TEST_SEED");

	if (env != NULL && *env != '\0')
		return (guint32)g_ascii_strtoull(env, NULL, 0);
	return FUZZ_DEFAULT_SEED;
}

static void
test_fuzz_mutations(void)
{
	static const gchar alphabet[] = "{}[]\":,\\ \t\nantrufl0123456789.eE+-u\x01\xff\xc3";
	gsize seed_len = strlen(fuzz_seed);
	guint rejected = 0, accepted = 0;
	guint32 seed = fuzz_seed_value();
	g_autoptr(GRand) rand = g_rand_new_with_seed(seed);

	g_test_message("mutation seed %u (MESHSYNC_TEST_SEED=%u to repeat)", seed, seed);

	for (guint iter = 0; iter < 20000; iter++) {
		g_autoptr(GString) doc = g_string_new_len(fuzz_seed, (gssize)seed_len);
		g_autoptr(GError) error = NULL;
		g_autofree gchar *out = NULL;
		guint n_mut = (guint)g_rand_int_range(rand, 1, 5);

		for (guint m = 0; m < n_mut && doc->len > 0; m++) {
			gsize pos = (gsize)g_rand_int_range(rand, 0, (gint32)doc->len);
			gchar c = alphabet[g_rand_int_range(rand, 0, sizeof(alphabet) - 1)];

			switch (g_rand_int_range(rand, 0, 5)) {
			case 0:
				doc->str[pos] = c;
				break;
			case 1:
				g_string_insert_c(doc, (gssize)pos, c);
				break;
			case 2:
				g_string_erase(doc, (gssize)pos, 1);
				break;
			case 3:
				g_string_truncate(doc, pos);
				break;
			default:
				doc->str[pos] ^= (gchar)(1 << g_rand_int_range(rand, 0, 8));
				break;
			}
		}
		out = canon(doc->str, (gssize)doc->len, &error);
		if (out == NULL) {
			g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);
			rejected++;
		} else {
			g_autoptr(JsonParser) parser = json_parser_new();
			g_autoptr(GError) perr = NULL;
			g_autofree gchar *again = NULL;

			if (!json_parser_load_from_data(parser, out, -1, &perr))
				g_test_fail_printf("output is not JSON (%s): %s", perr->message,
				                   out);
			/* the canonical form is a fixed point */
			again = canon(out, -1, NULL);
			g_assert_cmpstr(again, ==, out);
			accepted++;
		}
	}
	/* both outcomes must actually be exercised for the loop to test anything */
	g_assert_cmpuint(rejected, >, 100);
	g_assert_cmpuint(accepted, >, 100);
}

static void
test_fuzz_accepts_what_json_glib_accepts(void)
{
	/* the seed itself: canonical output parses and is stable */
	g_autoptr(GError) error = NULL;
	g_autofree gchar *out = canon(fuzz_seed, -1, &error);

	g_assert_no_error(error);
	g_assert_cmpstr(
	        out, ==,
	        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"annotations\":"
	        "{\"note\":\"line\\nbreak \\u2028 \xf0\x9f\x98\x80 caf\xc3\xa9\"},\"labels\":"
	        "{\"app\":\"web\",\"tier\":\"\\u003cfront\\u0026end\\u003e\"},\"name\":"
	        "\"web-0\"},\"spec\":{\"containers\":[{\"image\":\"nginx:1.25\",\"name\":"
	        "\"c\",\"ports\":[{\"containerPort\":80}],\"resources\":{\"limits\":{\"cpu\":"
	        "0.5,\"memory\":1000000000}}}],\"priority\":0,\"x\":[true,false,null,"
	        "1.5e-7]}}");
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);

	g_test_add_func("/json-writer/string/escaping", test_string_escaping);
	g_test_add_func("/json-writer/string/embedded-nul", test_string_embedded_nul);
	g_test_add_func("/json-writer/string/escaped-form", test_escaped_form);
	g_test_add_func("/json-writer/string/reencode", test_reencode_strings);
	g_test_add_func("/json-writer/object/key-sorting", test_key_sorting);
	g_test_add_func("/json-writer/numbers", test_numbers);
	g_test_add_func("/json-writer/nesting", test_literals_and_nesting);
	g_test_add_func("/json-writer/raw-spans", test_raw_spans);
	g_test_add_func("/json-writer/malformed", test_malformed);
	g_test_add_func("/json-writer/malformed/embedded-nul", test_embedded_nul_rejected);
	g_test_add_func("/json-writer/malformed/depth", test_depth_limit);
	g_test_add_func("/json-writer/fuzz/seed", test_fuzz_accepts_what_json_glib_accepts);
	g_test_add_func("/json-writer/fuzz/mutations", test_fuzz_mutations);

	return g_test_run();
}
