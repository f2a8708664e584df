/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * The watch stream as the informer reads it: bytes arrive in chunks of any size, the line
 * splitter cuts them into events, each event is tokenized, its type and object looked up, and
 * the object becomes a store entry that is upserted or deleted (msd-informer.c's
 * handle_line and handle_object_event, without the network).
 *
 * Checked: the splitter hands out exactly the non-empty lines of the input (a trailing CR
 * removed), however the input is chunked, and refuses exactly the lines longer than its
 * limit; every entry has a uid and compact JSON that tokenizes as an object; an upserted entry
 * can be looked up by uid, a deleted one cannot.
 *
 * Input: the first byte seeds the chunk sizes (0: cut just after every CR), the rest is the
 * stream.
 */

#include "config.h"

#include <string.h>

#include "fuzz-common.h"
#include "informer/msd-line-splitter.h"
#include "meshsync-error.h"
#include "informer/msd-store.h"
#include "util/msd-json-tokens.h"

#define FUZZ_MAX_LINE 4096

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_logs();
	return 0;
}

/* The next expected line of @data from @*pos: what a splitter must hand out. Returns FALSE at
 * the end of the complete lines (a last line without a newline is never handed out). */
static gboolean
expected_line(const gchar *data, gsize size, gsize *pos, const gchar **line, gsize *length)
{
	while (*pos < size) {
		const gchar *start = data + *pos;
		const gchar *nl = memchr(start, '\n', size - *pos);
		gsize n;

		if (nl == NULL)
			return FALSE;
		n = (gsize)(nl - start);
		*pos += n + 1;
		if (n > 0 && start[n - 1] == '\r')
			n--;
		if (n == 0)
			continue;
		*line = start;
		*length = n;
		return TRUE;
	}
	return FALSE;
}

static void
handle_event(MsdStore *store, MsdJsonTokens *tokens, const gchar *line, gsize length)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MsdStoreEntry) entry = NULL;
	g_autofree gchar *type = NULL;
	gint type_index;
	gint object;

	if (!msd_json_tokens_parse(tokens, line, length, &error) ||
	    tokens->tokens[0].type != MSD_JSON_OBJECT)
		return;
	type_index = msd_json_tokens_member(tokens, 0, "type");
	object = msd_json_tokens_member(tokens, 0, "object");
	if (msd_json_tokens_is_string(tokens, type_index))
		type = msd_json_tokens_dup_string(tokens, type_index);
	if (type == NULL || object < 0 || tokens->tokens[object].type != MSD_JSON_OBJECT)
		return;

	if (strcmp(type, "BOOKMARK") == 0) {
		gint metadata = msd_json_tokens_member(tokens, (guint)object, "metadata");
		g_autofree gchar *rv G_GNUC_UNUSED = msd_json_tokens_dup_string(
		        tokens, msd_json_tokens_member(tokens, metadata, "resourceVersion"));
		gint end = msd_json_tokens_path(tokens, metadata, "annotations",
		                                "k8s.io/initial-events-end", NULL);

		(void)msd_json_tokens_string_equals(tokens, end, "true");
		return;
	}
	if (strcmp(type, "ERROR") == 0) {
		g_autofree gchar *code G_GNUC_UNUSED = msd_json_tokens_dup_string(
		        tokens, msd_json_tokens_member(tokens, object, "code"));
		g_autofree gchar *message G_GNUC_UNUSED = msd_json_tokens_dup_string(
		        tokens, msd_json_tokens_member(tokens, object, "message"));
		return;
	}

	entry = msd_store_entry_new_from_tokens(tokens, (guint)object, "Pod", "v1", &error);
	if (entry == NULL) {
		FUZZ_CHECK(error != NULL);
		return;
	}
	FUZZ_CHECK(entry->uid != NULL && entry->name != NULL && entry->namespace_ != NULL &&
	           entry->resource_version != NULL);
	{
		g_auto(MsdJsonTokens) compact = MSD_JSON_TOKENS_INIT;
		g_autoptr(GBytes) copy = msd_store_entry_dup_object(entry);
		gsize n = 0;
		const gchar *bytes = g_bytes_get_data(copy, &n);

		FUZZ_CHECK(bytes != NULL && n > 0);
		FUZZ_CHECK(msd_json_tokens_parse(&compact, bytes, n, NULL));
		FUZZ_CHECK(compact.tokens[0].type == MSD_JSON_OBJECT);
	}
	if (strcmp(type, "DELETED") == 0) {
		g_autoptr(MsdStoreEntry) last G_GNUC_UNUSED = msd_store_delete(store, entry->uid);

		FUZZ_CHECK(msd_store_lookup(store, entry->uid) == NULL);
		return;
	}
	{
		/* the store compresses what it takes: every byte must come back */
		g_autoptr(GBytes) plain = msd_store_entry_dup_object(entry);

		if (msd_store_upsert(store, entry) != MSD_STORE_UNCHANGED) {
			g_autoptr(GBytes) back = msd_store_entry_dup_object(entry);

			FUZZ_CHECK(g_bytes_equal(back, plain));
		}
	}
	FUZZ_CHECK(msd_store_lookup(store, entry->uid) != NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(MsdLineSplitter) splitter = msd_line_splitter_new(FUZZ_MAX_LINE);
	g_autoptr(MsdStore) store = msd_store_new();
	g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;
	const gchar *stream = (const gchar *)data + 1;
	gsize stream_size;
	guint32 state;
	gsize fed = 0;
	gsize expected_pos = 0;
	gboolean failed = FALSE;

	if (size < 1)
		return 0;
	msd_store_set_compressed(store, TRUE);
	state = data[0] * 2654435761u + 1;
	stream_size = size - 1;

	while (fed < stream_size && !failed) {
		gsize chunk;
		const gchar *line;
		gsize length;

		/* chunk sizes from a tiny LCG: mostly 1 to 64 bytes, one in 16 up to 8 KiB, so that
		 * long lines arrive in pieces too */
		state = state * 1103515245u + 12345u;
		chunk = (state >> 16) % 16 == 0 ? 1 + (state >> 16) % 8192 : 1 + (state >> 16) % 64;
		if (data[0] == 0) {
			/* first byte 0: every chunk ends just after a CR, between it and its LF */
			const gchar *cr = memchr(stream + fed, '\r', stream_size - fed);

			chunk = cr != NULL ? (gsize)(cr - (stream + fed)) + 1 : stream_size - fed;
		}
		chunk = MIN(chunk, stream_size - fed);
		if ((state >> 8) & 1) {
			/* as a read that cannot wait hands its bytes over: into the splitter's own
			 * room, more of it asked for than the read fills */
			gchar *room = msd_line_splitter_reserve(splitter, chunk + (state >> 24));

			memcpy(room, stream + fed, chunk);
			msd_line_splitter_commit(splitter, chunk);
		} else {
			msd_line_splitter_push(splitter, stream + fed, chunk);
		}
		fed += chunk;

		for (;;) {
			g_autoptr(GError) error = NULL;
			const gchar *want = NULL;
			gsize want_length = 0;
			gboolean want_line;

			if (!msd_line_splitter_next(splitter, &line, &length, &error)) {
				if (error != NULL) {
					/* refused: the line being read is longer than the limit */
					gsize at = expected_pos;
					const gchar *nl;
					gsize line_length;

					FUZZ_CHECK(g_error_matches(error, MESHSYNC_ERROR,
					                           MESHSYNC_ERROR_TOO_LARGE));
					/* the first line not handed out yet: skip empty ones */
					while (at < stream_size &&
					       (stream[at] == '\n' ||
					        (stream[at] == '\r' && at + 1 < stream_size &&
					         stream[at + 1] == '\n')))
						at += stream[at] == '\n' ? 1 : 2;
					nl = memchr(stream + at, '\n', stream_size - at);
					line_length = nl != NULL ? (gsize)(nl - (stream + at))
					                         : stream_size - at;
					if (line_length > 0 && nl != NULL &&
					    stream[at + line_length - 1] == '\r')
						line_length--;
					FUZZ_CHECK(line_length > FUZZ_MAX_LINE);
					failed = TRUE;
				}
				break;
			}
			want_line = expected_line(stream, stream_size, &expected_pos, &want,
			                          &want_length);
			FUZZ_CHECK(want_line);
			FUZZ_CHECK(length == want_length && memcmp(line, want, length) == 0);
			FUZZ_CHECK(length <= FUZZ_MAX_LINE);
			handle_event(store, &tokens, line, length);
		}
	}
	if (!failed) {
		const gchar *want = NULL;
		gsize want_length = 0;

		/* every complete line was handed out */
		FUZZ_CHECK(!expected_line(stream, stream_size, &expected_pos, &want, &want_length));
	}
	return 0;
}
