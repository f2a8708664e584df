/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * The JSON tokenizer (util/msd-json-tokens.c) and its round trip through the project's JSON
 * writer (msd_json_canonicalize, model/msd-json-writer.c).
 *
 * Checked: a text is accepted or refused the same with whitespace added around it (RFC 8259);
 * the token index is consistent (spans inside the text, sizes and skips inside the index,
 * strings decode); the writer canonicalises exactly what the tokenizer accepts, into JSON that
 * json-glib and the tokenizer read back, and canonicalising that output again is a fixed
 * point (from the second pass on: see doc/reliability.md on negative zero).
 */

#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "fuzz-common.h"
#include "meshsync-error.h"
#include "model/msd-json-writer.h"
#include "util/msd-json-tokens.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_logs();
	return 0;
}

static gboolean
accepts(const gchar *text, gsize length)
{
	g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;

	return msd_json_tokens_parse(&tokens, text, length, NULL);
}

static void
check_index(const MsdJsonTokens *tokens, gsize length)
{
	g_autoptr(GString) scratch = g_string_new(NULL);

	FUZZ_CHECK(tokens->n_tokens >= 1);
	FUZZ_CHECK(tokens->tokens[0].next == tokens->n_tokens);
	for (gint i = 0; i < tokens->n_tokens; i++) {
		const MsdJsonToken *t = &tokens->tokens[i];
		gsize n;

		FUZZ_CHECK(t->start >= 0 && t->start <= t->end && (gsize)t->end <= length);
		FUZZ_CHECK(t->next > i && t->next <= tokens->n_tokens);
		switch (msd_json_tokens_type(tokens, i)) {
		case MSD_JSON_STRING: {
			g_autofree gchar *dup = msd_json_tokens_dup_string(tokens, i);
			const gchar *s = msd_json_tokens_string(tokens, i, scratch, &n);

			FUZZ_CHECK(dup != NULL && s != NULL);
			/* decoding never grows the text, and gives UTF-8 */
			FUZZ_CHECK(n <= (gsize)(t->end - t->start) * 3);
			FUZZ_CHECK(g_utf8_validate(s, (gssize)n, NULL) || memchr(s, 0, n) != NULL);
			break;
		}
		case MSD_JSON_OBJECT: {
			MsdJsonMembers members;

			msd_json_members_init_sorted(&members, tokens, i);
			FUZZ_CHECK(members.n <= t->size);
			for (gint k = 1; k < members.n; k++) {
				gsize a = members.m[k - 1].key_len;
				gsize b = members.m[k].key_len;
				gint c = memcmp(members.m[k - 1].key, members.m[k].key, MIN(a, b));

				FUZZ_CHECK(c < 0 || (c == 0 && a < b));
			}
			msd_json_members_clear(&members);
			break;
		}
		case MSD_JSON_ARRAY:
		case MSD_JSON_NUMBER:
		case MSD_JSON_TRUE:
		case MSD_JSON_FALSE:
		case MSD_JSON_NULL:
			break;
		default:
			FUZZ_CHECK(!"a token without a type");
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *out = NULL;
	g_autofree gchar *padded = NULL;
	const gchar *text = (const gchar *)data;
	gboolean ok;

	ok = msd_json_tokens_parse(&tokens, text, size, &error);
	FUZZ_CHECK(ok == (error == NULL));
	/* broken JSON, or JSON nested past our depth limit */
	if (!ok)
		FUZZ_CHECK(g_error_matches(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA) ||
		           g_error_matches(error, MESHSYNC_ERROR, MESHSYNC_ERROR_TOO_LARGE));

	/* whitespace around a value changes nothing */
	padded = g_malloc(size + 2);
	padded[0] = ' ';
	memcpy(padded + 1, text, size);
	padded[size + 1] = '\n';
	FUZZ_CHECK(accepts(padded, size + 2) == ok);
	FUZZ_CHECK(accepts(padded + 1, size + 1) == ok);
	FUZZ_CHECK(accepts(padded, size + 1) == ok);
	if (!ok)
		return 0;
	check_index(&tokens, size);

	out = msd_json_canonicalize(text, (gssize)size, &error);
	FUZZ_CHECK(out != NULL);
	{
		g_autoptr(JsonParser) parser = json_parser_new();
		g_autofree gchar *again = NULL;
		g_autofree gchar *third = NULL;

		FUZZ_CHECK(json_parser_load_from_data(parser, out, -1, NULL));
		FUZZ_CHECK(accepts(out, strlen(out)));
		again = msd_json_canonicalize(out, -1, NULL);
		FUZZ_CHECK(again != NULL);
		third = msd_json_canonicalize(again, -1, NULL);
		FUZZ_CHECK(third != NULL && strcmp(again, third) == 0);
	}
	return 0;
}
