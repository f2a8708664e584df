/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * What tokenizing a streaming list's lines costs, as the informer does it: each FILE is a list
 * as an API server answers it (kubectl get -o json, or curl of a list URL); each of its items
 * becomes an initial event's line ({"type":"ADDED","object":...}) in the list's order, and
 * every line is tokenized with metadata.managedFields checked but left untokenized, through
 * one reused MsdJsonTokens. Printed per line, best of --rounds: with the managedFields values
 * the tokens keep from line to line, and with none kept (dropped before each line).
 *
 * Usage: bench-tokenize [--rounds R] LIST.json...
 */

#include "config.h"

#include <string.h>
#include <gio/gio.h>

#include "util/msd-json-tokens.h"

static gboolean
load(const gchar *path, GPtrArray *lines, GError **error)
{
	g_autofree gchar *data = NULL;
	g_auto(MsdJsonTokens) doc = MSD_JSON_TOKENS_INIT;
	gsize length = 0;
	gint array;

	if (!g_file_get_contents(path, &data, &length, error) ||
	    !msd_json_tokens_parse(&doc, data, length, error))
		return FALSE;
	array = msd_json_tokens_member(&doc, 0, "items");
	if (array < 0 || msd_json_tokens_type(&doc, array) != MSD_JSON_ARRAY) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s: not a list", path);
		return FALSE;
	}
	for (gint i = array + 1, n = 0; n < msd_json_tokens_size(&doc, array);
	     i = msd_json_tokens_skip(&doc, i), n++) {
		gsize span_length = 0;
		const gchar *span = msd_json_tokens_span(&doc, (guint)i, &span_length);

		g_ptr_array_add(lines, g_strdup_printf("{\"type\":\"ADDED\",\"object\":%.*s}",
		                                       (gint)span_length, span));
	}
	return TRUE;
}

/* Microseconds per line for one pass over @lines. */
static gdouble
pass(GPtrArray *lines, MsdJsonTokens *tokens, gboolean keep)
{
	static const MsdJsonSkip skip = {1, "metadata", "managedFields"};
	gint64 start = g_get_monotonic_time();

	for (guint i = 0; i < lines->len; i++) {
		const gchar *line = g_ptr_array_index(lines, i);

		if (!keep)
			g_clear_pointer(&tokens->checked, msd_json_checked_free);
		if (!msd_json_tokens_parse_skipping(tokens, line, strlen(line), &skip, NULL))
			g_error("line %u does not tokenize", i);
	}
	return (gdouble)(g_get_monotonic_time() - start) / MAX(lines->len, 1);
}

int
main(int argc, char **argv)
{
	g_autoptr(GOptionContext) context = g_option_context_new("LIST.json...");
	g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GError) error = NULL;
	gint rounds = 5;
	GOptionEntry entries[] = {
	        {"rounds", 0, 0, G_OPTION_ARG_INT, &rounds, "passes; the best is printed", "R"},
	        G_OPTION_ENTRY_NULL,
	};
	gdouble best[2] = {G_MAXDOUBLE, G_MAXDOUBLE};

	g_option_context_add_main_entries(context, entries, NULL);
	if (!g_option_context_parse(context, &argc, &argv, &error) || argc < 2) {
		g_printerr("%s\n",
		           error != NULL ? error->message : "usage: bench-tokenize LIST.json...");
		return 2;
	}
	for (gint i = 1; i < argc; i++) {
		if (!load(argv[i], lines, &error)) {
			g_printerr("%s\n", error->message);
			return 1;
		}
	}
	for (gint r = 0; r < MAX(rounds, 1); r++) {
		for (guint keep = 0; keep < 2; keep++) {
			g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;

			best[keep] = MIN(best[keep], pass(lines, &tokens, keep));
		}
	}
	g_print("%u lines; microseconds per line, best of %d\n", lines->len, MAX(rounds, 1));
	g_print("managedFields values kept from line to line: %.2f\n", best[1]);
	g_print("none kept:                                   %.2f\n", best[0]);
	return 0;
}
