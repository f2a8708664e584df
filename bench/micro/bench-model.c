/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * Per-event cost of the model and the writers, stage by stage, on one realistic watch line
 * (bench/data/pod-watch-line.json: a pod with 2 KB of managedFields and a last-applied
 * annotation). Each stage is a function of its own, called once per event, so that
 * `valgrind --tool=callgrind` gives its instructions per event as the function's inclusive
 * cost divided by its calls (bench/model-per-event does that); run alone, the program prints
 * the best time per event of --rounds rounds of --events events.
 *
 * The old path is what one event cost before the one-pass work: tokenize the line, make the
 * store copy, convert that copy from its JSON (a second tokenization), write the wire JSON,
 * copy it into a fresh envelope; the snapshot YAML parsed that JSON once more. The new path
 * converts from the line's tokens, keeps the wire bytes, builds the envelope in one reused
 * buffer and writes the YAML from the model. Built with -DBENCH_OLD_ONLY it uses only the
 * interfaces that existed before, so the same file measures an older tree.
 */

#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "informer/msd-store.h"
#include "meshsync-resource-private.h"
#include "meshsync-resource.h"
#include "output/msd-snapshot-yaml.h"
#include "util/msd-json-tokens.h"

#define KIND        "Pod"
#define API_VERSION "v1"
#define CLUSTER_ID  "0b3e2c1d-aaaa-4bbb-8ccc-0123456789ab"

#define NOINLINE __attribute__((noinline))

typedef struct {
	const gchar *line;
	gsize line_len;
	MsdJsonTokens doc; /* the line's tokens, reused from line to line like the informer's */
	gint object;
	MsdStoreEntry *entry; /* the store copy of the line's object */
	GString *envelope;    /* the broker writer's reused buffer */
	GString *yaml;        /* the file writer's buffer */
#ifndef BENCH_OLD_ONLY
	MsdAttributeCache *cache; /* holds the line's spec: every conversion through it hits */
	MsdConvertState convert;  /* the engine's kept arena buffer, as the handler passes it */
#endif
	gsize sink; /* keeps results observable */
} Bench;

/* ------------------------------------------------------------------------------------------
 * Stages shared by both paths.
 */

NOINLINE static void
bench_stage_tokenize_line(Bench *b)
{
#ifndef BENCH_OLD_ONLY
	/* as the informer does: managedFields checked but not tokenized */
	static const MsdJsonSkip skip = {1, "metadata", "managedFields"};

	if (!msd_json_tokens_parse_skipping(&b->doc, b->line, b->line_len, &skip, NULL))
#else
	if (!msd_json_tokens_parse(&b->doc, b->line, b->line_len, NULL))
#endif
		g_error("the watch line does not tokenize");
	b->object = msd_json_tokens_member(&b->doc, 0, "object");
}

NOINLINE static void
bench_stage_store_copy(Bench *b)
{
	MsdStoreEntry *entry =
	        msd_store_entry_new_from_tokens(&b->doc, (guint)b->object, KIND, API_VERSION, NULL);

	b->sink += entry->size;
	msd_store_entry_unref(entry);
}

/* ------------------------------------------------------------------------------------------
 * The old path.
 */

NOINLINE static MeshSyncResource *
bench_stage_old_convert(Bench *b)
{
	gsize len = 0;
	const gchar *copy = g_bytes_get_data(b->entry->json, &len);

	return meshsync_resource_new_from_json(copy, (gssize)len, MESHSYNC_EVENT_TYPE_MODIFIED,
	                                       CLUSTER_ID, NULL);
}

NOINLINE static gchar *
bench_stage_old_wire(MeshSyncResource *res)
{
	return meshsync_resource_to_json(res);
}

NOINLINE static void
bench_stage_old_envelope(Bench *b, const gchar *json)
{
	gsize json_len = strlen(json);
	GString *envelope = g_string_sized_new(json_len + 96);
	GBytes *payload;

	g_string_append(envelope, "{\"ObjectType\":\"meshsync-data\",\"EventType\":\"");
	g_string_append(envelope, "MODIFIED");
	g_string_append(envelope, "\",\"Request\":null,\"Object\":");
	g_string_append_len(envelope, json, (gssize)json_len);
	g_string_append_c(envelope, '}');
	payload = g_string_free_to_bytes(envelope);
	b->sink += g_bytes_get_size(payload);
	g_bytes_unref(payload);
}

NOINLINE static void
bench_stage_old_yaml(Bench *b, MeshSyncResource *res)
{
	gchar *json = meshsync_resource_to_json(res);

	g_string_truncate(b->yaml, 0);
	if (!msd_snapshot_yaml_append(b->yaml, json, strlen(json), NULL))
		g_error("no YAML");
	g_free(json);
}

/* ------------------------------------------------------------------------------------------
 * The new path.
 */

#ifndef BENCH_OLD_ONLY
NOINLINE static MeshSyncResource *
bench_stage_convert_tokens(Bench *b)
{
	return meshsync_resource_new_from_tokens(&b->doc, b->object, KIND, API_VERSION,
	                                         MESHSYNC_EVENT_TYPE_MODIFIED, CLUSTER_ID, NULL,
	                                         &b->convert, NULL);
}

/* A MODIFIED event whose spec the cache holds from the object's previous event. */
NOINLINE static MeshSyncResource *
bench_stage_convert_cached(Bench *b)
{
	return meshsync_resource_new_from_tokens(&b->doc, b->object, KIND, API_VERSION,
	                                         MESHSYNC_EVENT_TYPE_MODIFIED, CLUSTER_ID, b->cache,
	                                         &b->convert, NULL);
}

NOINLINE static GBytes *
bench_stage_wire_bytes(MeshSyncResource *res)
{
	return meshsync_resource_get_wire_bytes(res);
}

/* What MeshSyncBrokerWriter does with them, into its reused buffer. */
NOINLINE static void
bench_stage_envelope(Bench *b, GBytes *wire)
{
	gsize len = 0;
	const gchar *json = g_bytes_get_data(wire, &len);

	g_string_truncate(b->envelope, 0);
	g_string_append_len(b->envelope, "{\"ObjectType\":\"meshsync-data\",\"EventType\":\"", 44);
	g_string_append(b->envelope, "MODIFIED");
	g_string_append_len(b->envelope, "\",\"Request\":null,\"Object\":", 26);
	g_string_append_len(b->envelope, json, (gssize)len);
	g_string_append_c(b->envelope, '}');
	b->sink += b->envelope->len;
}

NOINLINE static void
bench_stage_yaml(Bench *b, MeshSyncResource *res)
{
	g_string_truncate(b->yaml, 0);
	if (!msd_snapshot_yaml_append_resource(b->yaml, res, NULL, NULL))
		g_error("no YAML");
}
#endif

/* ------------------------------------------------------------------------------------------ */

static gint64
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (gint64)ts.tv_sec * G_GINT64_CONSTANT(1000000000) + ts.tv_nsec;
}

typedef enum {
	STAGE_TOKENIZE,
	STAGE_STORE,
	STAGE_OLD_CONVERT,
	STAGE_OLD_WIRE,
	STAGE_OLD_ENVELOPE,
	STAGE_OLD_YAML,
	STAGE_CONVERT,
	STAGE_CONVERT_CACHED,
	STAGE_WIRE,
	STAGE_ENVELOPE,
	STAGE_YAML,
	N_STAGES
} Stage;

static const gchar *const stage_names[N_STAGES] = {
        "tokenize line",
        "store copy",
        "old: convert from store copy",
        "old: wire JSON",
        "old: envelope",
        "old: YAML via wire JSON",
        "convert from tokens",
        "convert, spec cached",
        "wire bytes",
        "envelope",
        "YAML from fields",
};

/* One round of @n events through @stage; returns the nanoseconds spent in the stage. Work a
 * stage needs first (a resource to serialize) is done outside the timed part. */
static gint64
run_round(Bench *b, Stage stage, guint n)
{
	g_autoptr(GPtrArray) resources = g_ptr_array_new_with_free_func(g_object_unref);
	g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free);
	gint64 start;
	gint64 spent;

	/* inputs */
	for (guint i = 0; i < n; i++) {
		switch (stage) {
		case STAGE_OLD_WIRE:
		case STAGE_OLD_YAML:
			g_ptr_array_add(resources, bench_stage_old_convert(b));
			break;
		case STAGE_OLD_ENVELOPE: {
			g_autoptr(MeshSyncResource) res = bench_stage_old_convert(b);

			g_ptr_array_add(texts, bench_stage_old_wire(res));
			break;
		}
#ifndef BENCH_OLD_ONLY
		case STAGE_WIRE:
		case STAGE_YAML:
			g_ptr_array_add(resources, bench_stage_convert_tokens(b));
			break;
		case STAGE_ENVELOPE: {
			MeshSyncResource *res = bench_stage_convert_tokens(b);

			meshsync_resource_get_wire_bytes(res);
			g_ptr_array_add(resources, res);
			break;
		}
#endif
		default:
			break;
		}
	}

	start = now_ns();
	for (guint i = 0; i < n; i++) {
		switch (stage) {
		case STAGE_TOKENIZE:
			bench_stage_tokenize_line(b);
			break;
		case STAGE_STORE:
			bench_stage_store_copy(b);
			break;
		case STAGE_OLD_CONVERT:
			g_object_unref(bench_stage_old_convert(b));
			break;
		case STAGE_OLD_WIRE:
			g_free(bench_stage_old_wire(g_ptr_array_index(resources, i)));
			break;
		case STAGE_OLD_ENVELOPE:
			bench_stage_old_envelope(b, g_ptr_array_index(texts, i));
			break;
		case STAGE_OLD_YAML:
			bench_stage_old_yaml(b, g_ptr_array_index(resources, i));
			break;
#ifndef BENCH_OLD_ONLY
		case STAGE_CONVERT:
			g_object_unref(bench_stage_convert_tokens(b));
			break;
		case STAGE_CONVERT_CACHED:
			g_object_unref(bench_stage_convert_cached(b));
			break;
		case STAGE_WIRE:
			b->sink += g_bytes_get_size(
			        bench_stage_wire_bytes(g_ptr_array_index(resources, i)));
			break;
		case STAGE_ENVELOPE:
			bench_stage_envelope(b, meshsync_resource_get_wire_bytes(
			                                g_ptr_array_index(resources, i)));
			break;
		case STAGE_YAML:
			bench_stage_yaml(b, g_ptr_array_index(resources, i));
			break;
#endif
		default:
			return -1;
		}
	}
	spent = now_ns() - start;
	/* freeing the resources is part of the event's life too, but not of one stage */
	return spent;
}

int
main(int argc, char **argv)
{
	g_autofree gchar *data = NULL;
	g_autofree gchar *contents = NULL;
	gint events = 2000;
	gint rounds = 7;
	g_autoptr(GOptionContext) context = NULL;
	g_autoptr(GError) error = NULL;
	GOptionEntry entries[] = {
	        {"data", 0, 0, G_OPTION_ARG_FILENAME, &data, "The watch line (one JSON line)",
	         "FILE"},
	        {"events", 0, 0, G_OPTION_ARG_INT, &events, "Events per round (2000)", "N"},
	        {"rounds", 0, 0, G_OPTION_ARG_INT, &rounds, "Rounds; the best counts (7)", "N"},
	        G_OPTION_ENTRY_NULL,
	};
	Bench b = {0};
	gdouble old_total = 0;
	gdouble new_total = 0;

	context = g_option_context_new("- per-event cost of the model and writers");
	g_option_context_add_main_entries(context, entries, NULL);
	if (!g_option_context_parse(context, &argc, &argv, &error)) {
		g_printerr("%s\n", error->message);
		return 2;
	}
	if (data == NULL)
		data = g_build_filename(
		        g_getenv("MESON_SOURCE_ROOT") != NULL ? g_getenv("MESON_SOURCE_ROOT") : ".",
		        "bench", "data", "pod-watch-line.json", NULL);
	if (!g_file_get_contents(data, &contents, &b.line_len, &error)) {
		g_printerr("%s\n", error->message);
		return 2;
	}
	b.line = contents;
	msd_json_tokens_init(&b.doc);
	b.envelope = g_string_sized_new(16 * 1024);
#ifndef BENCH_OLD_ONLY
	b.cache = msd_attribute_cache_new(1 << 20);
	msd_convert_state_init(&b.convert, FALSE);
#endif
	b.yaml = g_string_sized_new(64 * 1024);
	bench_stage_tokenize_line(&b);
	if (b.object < 0) {
		g_printerr("%s: not a watch line\n", data);
		return 2;
	}
	b.entry = msd_store_entry_new_from_tokens(&b.doc, (guint)b.object, KIND, API_VERSION, NULL);
	if (b.entry == NULL) {
		g_printerr("%s: the object has no name\n", data);
		return 2;
	}

	g_print("watch line %" G_GSIZE_FORMAT " bytes, store copy %" G_GSIZE_FORMAT
	        " bytes; %d rounds of %d events, best round\n",
	        b.line_len, b.entry->size, rounds, events);
	for (guint s = 0; s < N_STAGES; s++) {
		gint64 best = G_MAXINT64;

		for (gint r = 0; r < rounds; r++) {
			gint64 spent = run_round(&b, s, (guint)events);

			if (spent < 0)
				break;
			best = MIN(best, spent);
		}
		if (best == G_MAXINT64)
			continue;
		g_print("%-30s %8.2f us\n", stage_names[s], (gdouble)best / events / 1000.0);
		if (s <= STAGE_STORE || (s >= STAGE_OLD_CONVERT && s <= STAGE_OLD_ENVELOPE))
			old_total += (gdouble)best / events / 1000.0;
		if (s <= STAGE_STORE || s == STAGE_CONVERT || s == STAGE_WIRE ||
		    s == STAGE_ENVELOPE)
			new_total += (gdouble)best / events / 1000.0;
	}
	g_print("%-30s %8.2f us\n", "old path (broker)", old_total);
#ifndef BENCH_OLD_ONLY
	g_print("%-30s %8.2f us\n", "new path (broker)", new_total);
#endif
	msd_store_entry_unref(b.entry);
#ifndef BENCH_OLD_ONLY
	msd_attribute_cache_free(b.cache);
	msd_convert_state_clear(&b.convert);
#endif
	msd_json_tokens_clear(&b.doc);
	g_string_free(b.envelope, TRUE);
	g_string_free(b.yaml, TRUE);
	return b.sink == 0;
}
