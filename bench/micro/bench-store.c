/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * What the compressed store costs and saves, per resource type: each FILE is a list as an API
 * server answers it (kubectl get -o json, or curl of a list URL); its items are cut into store
 * entries as the informer cuts them (managedFields out), then compressed in their order
 * through one codec, as one store would (so the dictionary is trained from the first objects,
 * and once more further in), then compressed again with the final dictionary and decompressed,
 * each timed per object, best of --rounds. Every decompressed object is checked byte for byte.
 * Without a dictionary (zstd alone, same level) is printed beside it for comparison.
 *
 * Usage: bench-store [--level L] [--rounds R] LIST.json...
 */

#include "config.h"

#include <string.h>
#include <gio/gio.h>
#include <zstd.h>

#include "informer/msd-store-codec.h"
#include "informer/msd-store.h"
#include "util/msd-json-tokens.h"

typedef struct {
	GPtrArray *entries; /* (element-type MsdStoreEntry) plain */
	gchar *kind;
} Items;

static gboolean
load(const gchar *path, Items *items, GError **error)
{
	g_autofree gchar *data = NULL;
	g_auto(MsdJsonTokens) doc = MSD_JSON_TOKENS_INIT;
	g_autofree gchar *list_kind = NULL;
	g_autofree gchar *api_version = NULL;
	gsize length = 0;
	gint array;

	if (!g_file_get_contents(path, &data, &length, error) ||
	    !msd_json_tokens_parse(&doc, data, length, error))
		return FALSE;
	list_kind = msd_json_tokens_dup_string(&doc, msd_json_tokens_member(&doc, 0, "kind"));
	api_version =
	        msd_json_tokens_dup_string(&doc, msd_json_tokens_member(&doc, 0, "apiVersion"));
	array = msd_json_tokens_member(&doc, 0, "items");
	if (list_kind == NULL || !g_str_has_suffix(list_kind, "List") || array < 0) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s: not a list", path);
		return FALSE;
	}
	items->kind = g_strndup(list_kind, strlen(list_kind) - 4);
	items->entries = g_ptr_array_new_with_free_func((GDestroyNotify)msd_store_entry_unref);
	for (gint i = array + 1, n = 0; n < msd_json_tokens_size(&doc, array);
	     i = msd_json_tokens_skip(&doc, i), n++) {
		MsdStoreEntry *entry = msd_store_entry_new_from_tokens(&doc, (guint)i, items->kind,
		                                                       api_version, error);

		if (entry == NULL)
			return FALSE;
		g_ptr_array_add(items->entries, entry);
	}
	return TRUE;
}

static const guint8 *
plain_data(MsdStoreEntry *entry)
{
	return g_bytes_get_data(entry->json, NULL);
}

/* One object through the codec as a store compresses it; the bench keeps the frame as bytes. */
static GBytes *
compress(MsdStoreCodec *codec, MsdStoreEntry *e, MsdStoreDict **used)
{
	gsize frame_size = 0;
	guint8 *frame =
	        msd_store_codec_compress_frame(codec, plain_data(e), e->size, used, &frame_size);

	return frame != NULL ? g_bytes_new_take(frame, frame_size) : NULL;
}

static void
measure(Items *items, gint level, gint rounds)
{
	GPtrArray *entries = items->entries;
	guint n = entries->len;
	g_autoptr(GPtrArray) frames = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
	g_autoptr(GPtrArray) dicts =
	        g_ptr_array_new_with_free_func((GDestroyNotify)msd_store_dict_unref);
	MsdStoreCodec *codec = msd_store_codec_new();
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	guint64 json = 0, held = 0, alone = 0;
	gint64 first, best_c = G_MAXINT64, best_d = G_MAXINT64;
	gsize bound = 0;
	g_autofree guint8 *scratch = NULL;
	MsdStoreDict *dict;

	if (n == 0) {
		msd_store_codec_free(codec);
		ZSTD_freeCCtx(cctx);
		return;
	}
	msd_store_codec_set_level(codec, level);
	for (guint i = 0; i < n; i++) {
		MsdStoreEntry *e = g_ptr_array_index(entries, i);

		json += e->size;
		bound = MAX(bound, ZSTD_compressBound(e->size));
	}
	scratch = g_malloc(bound);
	for (guint i = 0; i < n; i++) {
		MsdStoreEntry *e = g_ptr_array_index(entries, i);

		alone += ZSTD_compressCCtx(cctx, scratch, bound, plain_data(e), e->size, level);
	}

	/* as a store receives them: sampling and training included */
	first = g_get_monotonic_time();
	for (guint i = 0; i < n; i++) {
		MsdStoreEntry *e = g_ptr_array_index(entries, i);
		MsdStoreDict *used = NULL;
		GBytes *frame = compress(codec, e, &used);

		if (used != NULL)
			msd_store_dict_unref(used);
		g_clear_pointer(&frame, g_bytes_unref);
	}
	first = g_get_monotonic_time() - first;

	/* steady state: the last dictionary, every object */
	dict = msd_store_codec_get_dict(codec);
	for (gint r = 0; r < rounds; r++) {
		gint64 t = g_get_monotonic_time();

		g_ptr_array_set_size(frames, 0);
		g_ptr_array_set_size(dicts, 0);
		for (guint i = 0; i < n; i++) {
			MsdStoreEntry *e = g_ptr_array_index(entries, i);
			MsdStoreDict *used = NULL;
			GBytes *frame = compress(codec, e, &used);

			g_ptr_array_add(frames, frame);
			g_ptr_array_add(dicts, used);
		}
		best_c = MIN(best_c, g_get_monotonic_time() - t);
	}
	for (guint i = 0; i < n; i++) {
		GBytes *frame = g_ptr_array_index(frames, i);

		held += frame != NULL ? g_bytes_get_size(frame)
		                      : ((MsdStoreEntry *)g_ptr_array_index(entries, i))->size;
	}
	for (gint r = 0; r < rounds; r++) {
		gint64 t = g_get_monotonic_time();

		for (guint i = 0; i < n; i++) {
			MsdStoreEntry *e = g_ptr_array_index(entries, i);
			GBytes *frame = g_ptr_array_index(frames, i);
			g_autoptr(GBytes) back = NULL;
			gsize frame_size = 0;
			const guint8 *f;

			if (frame == NULL)
				continue;
			f = g_bytes_get_data(frame, &frame_size);
			back = msd_store_codec_decompress(g_ptr_array_index(dicts, i), f,
			                                  frame_size, e->size);
			if (r == 0 &&
			    memcmp(g_bytes_get_data(back, NULL), plain_data(e), e->size) != 0)
				g_error("%s %u: the object does not come back", items->kind, i);
		}
		best_d = MIN(best_d, g_get_monotonic_time() - t);
	}
	g_print("%-12s %7u %7.0f %6.2f %6.2f %6.1f %6.1f %6.2f %5u %7.1f\n", items->kind, n,
	        (gdouble)json / n, (gdouble)json / held, (gdouble)json / alone,
	        (gdouble)best_c * 1000 / n, (gdouble)best_d * 1000 / n, (gdouble)first / 1000,
	        dict != NULL ? msd_store_dict_get_version(dict) : 0,
	        dict != NULL ? (gdouble)msd_store_dict_get_size(dict) / 1024 : 0.0);
	msd_store_codec_free(codec);
	ZSTD_freeCCtx(cctx);
}

int
main(int argc, char **argv)
{
	gint level = 1;
	gint rounds = 3;
	g_autoptr(GOptionContext) context = g_option_context_new("LIST.json...");
	g_autoptr(GError) error = NULL;
	const GOptionEntry options[] = {
	        {"level", 0, 0, G_OPTION_ARG_INT, &level, "zstd level (default 1)", "L"},
	        {"rounds", 0, 0, G_OPTION_ARG_INT, &rounds, "rounds, best kept (default 3)", "R"},
	        {NULL},
	};

	g_option_context_add_main_entries(context, options, NULL);
	if (!g_option_context_parse(context, &argc, &argv, &error) || argc < 2) {
		g_printerr("%s\n", error != NULL ? error->message : "no list given");
		return 2;
	}
	g_print("level %d; ratio = JSON / what is held; times in ns per object, best of %d; first "
	        "pass in ms (training included); dict: last version, KiB with zstd's tables\n",
	        level, rounds);
	g_print("%-12s %7s %7s %6s %6s %6s %6s %6s %5s %7s\n", "kind", "objects", "bytes", "ratio",
	        "nodict", "comp", "decomp", "first", "dict", "dictKiB");
	for (gint i = 1; i < argc; i++) {
		Items items = {0};

		if (!load(argv[i], &items, &error)) {
			g_printerr("%s\n", error->message);
			return 1;
		}
		measure(&items, level, rounds);
		g_ptr_array_unref(items.entries);
		g_free(items.kind);
	}
	return 0;
}
