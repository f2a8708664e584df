/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <string.h>

#include "test-random-object.h"
#include "util/msd-json-tokens.h"

#define PICK(rand, array) ((array)[g_rand_int_range((rand), 0, G_N_ELEMENTS(array))])

guint32
test_random_seed(guint32 fallback)
{
	const gchar *env = g_getenv("MESHSYNC_TEST_SEED");
	guint32 seed = fallback;

	if (env != NULL && *env != '\0')
		seed = (guint32)g_ascii_strtoull(env, NULL, 10);
	g_test_message("random seed %u (MESHSYNC_TEST_SEED=%u repeats this run)", seed, seed);
	return seed;
}

/* Raw JSON string bodies (already escaped where needed): every way a text can reach the
 * decoder, including what Go replaces (invalid UTF-8, lone surrogates). */
static const gchar *const string_pieces[] = {
        "nginx",
        "web-0",
        " ",
        "a b",
        "\\\"",
        "\\\\",
        "\\n",
        "\\t",
        "\\u0000",
        "\\u00e9",
        "\\ud83d\\ude00",
        "\\ud800",
        "\\udc00x",
        "caf\xc3\xa9",
        "\xff",
        "\xc3",
        "\xed\xa0\x80",
        "<",
        ">",
        "&",
        "\xe2\x80\xa8",
        "\\u2029",
        "/",
        "\\/",
        "42",
        "true",
        "null",
        "2025-05-01",
        ": ",
        "- ",
        "#",
        "{\\\"a\\\":1}",
        "~",
        "1:20",
        "0x1F",
        "\xf0\x9f\x98\x80",
        "'",
        "yes",
        "\\r\\n",
        "\\u001f",
        "\\u007f",
        "\x7f",
};

static const gchar *const numbers[] = {
        "0",
        "-0",
        "12",
        "-7",
        "1.5",
        "1e3",
        "1E-7",
        "0.1",
        "1e21",
        "123e-20",
        "3.0",
        "123456789012345678",
        "1234567890123456789",
        "12345678901234567890",
        "-9223372036854775808",
        "9223372036854775807",
        "9223372036854775808",
        "2147483648",
        "80",
        "31000",
        "-1e-400",
};

static const gchar *const whitespace[] = {"", "", "", " ", "\n  ", "\t", "\r\n"};

static void
append_ws(GRand *rand, GString *out)
{
	g_string_append(out, PICK(rand, whitespace));
}

static void
append_string(GRand *rand, GString *out)
{
	gint n = g_rand_int_range(rand, 0, 5);

	g_string_append_c(out, '"');
	for (gint i = 0; i < n; i++)
		g_string_append(out, PICK(rand, string_pieces));
	g_string_append_c(out, '"');
}

static void append_value(GRand *rand, GString *out, guint depth);

static void
append_member(GRand *rand, GString *out, const gchar *key, gboolean first)
{
	if (!first)
		g_string_append_c(out, ',');
	append_ws(rand, out);
	g_string_append_printf(out, "\"%s\"", key);
	append_ws(rand, out);
	g_string_append_c(out, ':');
	append_ws(rand, out);
}

static const gchar *const plain_keys[] = {
        "a",     "b",  "B",  "containers", "image",     "name", "x<y", "\\u00e9", "caf\xc3\xa9",
        "k\xff", "id", "Id", "attribute",  "a\\u0000b", "2",    "10",  "_z",      "",
};

static void
append_object(GRand *rand, GString *out, guint depth, const gchar *const *keys, guint n_keys)
{
	gint n = g_rand_int_range(rand, 0, 6);

	g_string_append_c(out, '{');
	for (gint i = 0; i < n; i++) {
		append_member(rand, out, keys[g_rand_int_range(rand, 0, (gint32)n_keys)], i == 0);
		append_value(rand, out, depth + 1);
	}
	append_ws(rand, out);
	g_string_append_c(out, '}');
}

static void
append_value(GRand *rand, GString *out, guint depth)
{
	gint choice = g_rand_int_range(rand, 0, depth >= 3 ? 6 : 9);

	switch (choice) {
	case 0:
	case 1:
	case 2:
		append_string(rand, out);
		break;
	case 3:
		g_string_append(out, PICK(rand, numbers));
		break;
	case 4:
		g_string_append(out, g_rand_boolean(rand) ? "true" : "false");
		break;
	case 5:
		g_string_append(out, "null");
		break;
	case 6:
	case 7:
		append_object(rand, out, depth, plain_keys, G_N_ELEMENTS(plain_keys));
		break;
	default: {
		gint n = g_rand_int_range(rand, 0, 4);

		g_string_append_c(out, '[');
		for (gint i = 0; i < n; i++) {
			if (i > 0)
				g_string_append_c(out, ',');
			append_ws(rand, out);
			append_value(rand, out, depth + 1);
		}
		g_string_append_c(out, ']');
		break;
	}
	}
}

static const gchar *const uuids[] = {
        "\"0b3e2c1d-aaaa-4bbb-8ccc-0123456789ab\"",
        "\"0B3E2C1DAAAA4BBB8CCC0123456789AB\"",
        "\"{0b3e2c1d-aaaa-4bbb-8ccc-0123456789ab}\"",
        "\"urn:uuid:0b3e2c1d-aaaa-4bbb-8ccc-0123456789ab\"",
        "\"not-a-uuid\"",
        "7",
};

static void
append_key_values(GRand *rand, GString *out)
{
	static const gchar *const keys[] = {
	        "app",
	        "tier",
	        "design.meshery.io/id",
	        "a\\\"b",
	        "x&y",
	        "caf\xc3\xa9",
	        "k\xff",
	        "kubectl.kubernetes.io/last-applied-configuration",
	        "",
	};
	gint n = g_rand_int_range(rand, 0, 5);

	g_string_append_c(out, '{');
	for (gint i = 0; i < n; i++) {
		const gchar *key = PICK(rand, keys);

		append_member(rand, out, key, i == 0);
		if (strcmp(key, "design.meshery.io/id") == 0)
			g_string_append(out, PICK(rand, uuids));
		else if (g_rand_int_range(rand, 0, 6) == 0)
			append_value(rand, out, 2);
		else
			append_string(rand, out);
	}
	g_string_append_c(out, '}');
}

static void
append_metadata(GRand *rand, GString *out)
{
	static const gchar *const keys[] = {
	        "name",
	        "name",
	        "NAME",
	        "namespace",
	        "uid",
	        "uid",
	        "resourceVersion",
	        "generation",
	        "Generation",
	        "deletionGracePeriodSeconds",
	        "labels",
	        "labels",
	        "Labels",
	        "annotations",
	        "finalizers",
	        "ownerReferences",
	        "managedFields",
	        "creationTimestamp",
	        "deletionTimestamp",
	        "generateName",
	        "selfLink",
	        "clusterName",
	        "cluster_id",
	        "id",
	        "na\\u006de",
	};
	gint n = g_rand_int_range(rand, 1, 9);
	gint i = 0;

	g_string_append_c(out, '{');
	/* mostly with a name, or the store has nothing to compare against */
	if (g_rand_int_range(rand, 0, 8) != 0) {
		append_member(rand, out, "name", TRUE);
		g_string_append(out, g_rand_boolean(rand) ? "\"web-0\"" : "\"caf\\u00e9 \xff\"");
		i++;
	}
	for (; i < n; i++) {
		const gchar *key = PICK(rand, keys);

		append_member(rand, out, key, i == 0);
		if (g_str_equal(key, "labels") || g_str_equal(key, "Labels") ||
		    g_str_equal(key, "annotations"))
			append_key_values(rand, out);
		else if (g_str_has_prefix(key, "generation") || g_str_has_prefix(key, "Gener") ||
		         g_str_has_prefix(key, "deletionGrace"))
			g_string_append(out, g_rand_int_range(rand, 0, 4) == 0
			                             ? "null"
			                             : PICK(rand, numbers));
		else if (g_rand_int_range(rand, 0, 5) == 0)
			append_value(rand, out, 1);
		else
			append_string(rand, out);
	}
	append_ws(rand, out);
	g_string_append_c(out, '}');
}

/* A Service's spec or status, with the fields the endpoint reads in every type. */
static void
append_service_part(GRand *rand, GString *out, gboolean spec)
{
	static const gchar *const ips[] = {
	        "\"10.96.0.1\"", "\"203.0.113.10\"", "\"<pending>\"", "\"\"", "null", "5"};
	static const gchar *const hosts[] = {"\"a.example.com\"", "\"\"", "null"};

	if (spec) {
		g_string_append_printf(out, "{\"clusterIP\":%s,\"ports\":[", PICK(rand, ips));
		for (gint i = g_rand_int_range(rand, 0, 3); i > 0; i--)
			g_string_append_printf(out, "{\"port\":%s,\"nodePort\":%s}%s",
			                       PICK(rand, numbers), PICK(rand, numbers),
			                       i > 1 ? "," : "");
		g_string_append(out, "]}");
		return;
	}
	g_string_append_printf(out,
	                       "{\"loadBalancer\":{\"ingress\":[{\"ip\":%s,\"hostname\":%s}]}}",
	                       PICK(rand, ips), PICK(rand, hosts));
}

gchar *
test_random_object(GRand *rand)
{
	static const gchar *const keys[] = {
	        "apiVersion", "apiVersion",  "kind",       "kind",
	        "Kind",       "KIND",        "ki\\u006ed", "\xe2\x84\xaaind",
	        "apiversion", "APIVERSION",  "metadata",   "metadata",
	        "metadata",   "Metadata",    "spec",       "spec",
	        "Spec",       "\xc5\xbfpec", "status",     "STATUS",
	        "data",       "binaryData",  "stringData", "type",
	        "Type",       "immutable",   "id",         "ID",
	        "model",      "other",       "x<y",
	};
	static const gchar *const kinds[] = {"\"Pod\"",           "\"Service\"", "\"Secret\"",
	                                     "\"ConfigMap\"",     "\"X\"",       "\"Pod\\u0000\"",
	                                     "\"Serv\\u0069ce\"", "3",           "null"};
	GString *out = g_string_new(NULL);
	gint n = g_rand_int_range(rand, 1, 12);
	gboolean service = FALSE;

	gint i = 0;

	append_ws(rand, out);
	g_string_append_c(out, '{');
	if (g_rand_int_range(rand, 0, 8) != 0) {
		append_member(rand, out, "metadata", TRUE);
		append_metadata(rand, out);
		i++;
	}
	for (; i < n; i++) {
		const gchar *key = PICK(rand, keys);
		gboolean kindish = g_str_has_prefix(key, "k") || g_str_has_prefix(key, "K") ||
		                   g_str_has_prefix(key, "\xe2");

		append_member(rand, out, key, i == 0);
		if (kindish && !g_str_has_prefix(key, "ki\\")) {
			const gchar *kind = PICK(rand, kinds);

			service = service || strstr(kind, "Serv") != NULL;
			g_string_append(out, kind);
		} else if (g_str_equal(key, "metadata") || g_str_equal(key, "Metadata")) {
			if (g_rand_int_range(rand, 0, 12) == 0)
				append_value(rand, out, 2);
			else
				append_metadata(rand, out);
		} else if ((g_str_equal(key, "spec") || g_str_equal(key, "status")) && service &&
		           g_rand_boolean(rand)) {
			append_service_part(rand, out, g_str_equal(key, "spec"));
		} else if (g_str_has_suffix(key, "ata") && g_rand_boolean(rand)) {
			append_key_values(rand, out);
		} else {
			append_value(rand, out, 0);
		}
	}
	append_ws(rand, out);
	g_string_append_c(out, '}');
	append_ws(rand, out);
	return g_string_free(out, FALSE);
}

const gchar *
test_random_default(GRand *rand)
{
	static const gchar *const defaults[] = {
	        NULL, NULL,     "Pod",  "Service",     "Secret",   "v1",        "apps/v1",
	        "",   "Ki\"nd", "a\\b", "caf\xc3\xa9", "\xff\xfe", "tab\there", "x<y&z",
	};

	return PICK(rand, defaults);
}

gchar *
test_cut_member(const gchar *object, const gchar *key)
{
	g_auto(MsdJsonTokens) doc = MSD_JSON_TOKENS_INIT;
	GString *out;
	gint j;
	gboolean first = TRUE;

	g_assert_true(msd_json_tokens_parse(&doc, object, strlen(object), NULL));
	g_assert_true(msd_json_tokens_is_object(&doc, 0));
	out = g_string_new("{");
	j = 1;
	for (gint k = 0; k < doc.tokens[0].size; k++) {
		gint value = j + 1;
		gsize len = 0;
		const gchar *span;
		const gchar *start = doc.data + doc.tokens[j].start - 1;

		if (!msd_json_tokens_string_equals(&doc, j, key)) {
			span = msd_json_tokens_span(&doc, value, &len);
			if (!first)
				g_string_append_c(out, ',');
			g_string_append_len(out, start, span + len - start);
			first = FALSE;
		}
		j = msd_json_tokens_skip(&doc, value);
	}
	g_string_append_c(out, '}');
	return g_string_free(out, FALSE);
}

gchar *
test_metadata_insert(const gchar *object, const gchar *members, gboolean last)
{
	g_auto(MsdJsonTokens) doc = MSD_JSON_TOKENS_INIT;
	GString *out;
	gint meta;
	gsize at;

	g_assert_true(msd_json_tokens_parse(&doc, object, strlen(object), NULL));
	meta = msd_json_tokens_member(&doc, 0, "metadata");
	if (!msd_json_tokens_is_object(&doc, meta))
		return g_strdup(object);
	/* after the opening brace, or before the closing one */
	at = last ? (gsize)doc.tokens[meta].end - 1 : (gsize)doc.tokens[meta].start + 1;
	out = g_string_new_len(object, (gssize)at);
	if (last && doc.tokens[meta].size > 0)
		g_string_append_c(out, ',');
	g_string_append(out, members);
	if (!last && doc.tokens[meta].size > 0)
		g_string_append_c(out, ',');
	g_string_append(out, object + at);
	return g_string_free(out, FALSE);
}

gchar *
test_add_managed_fields(const gchar *object, gsize size)
{
	g_autoptr(GString) fields = g_string_new("\"managedFields\": [");

	for (guint i = 0; fields->len < size || i == 0; i++) {
		if (i > 0)
			g_string_append_c(fields, ',');
		g_string_append_printf(
		        fields,
		        "{\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":"
		        "{\"f:status\":{\"f:conditions\":{\"k:{\\\"type\\\":\\\"Ready%u\\\"}\":"
		        "{\".\":{},\"f:lastTransitionTime\":{},\"f:status\":{}}}}},"
		        "\"manager\":\"kubelet\",\"operation\":\"Update\","
		        "\"time\":\"2025-05-01T10:00:%02uZ\"}",
		        i, i % 60);
	}
	g_string_append_c(fields, ']');
	return test_metadata_insert(object, fields->str, FALSE);
}
