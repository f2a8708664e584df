/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * The gzip decoder of watch and log streams (kube/msd-inflate-input-stream.c) on the bytes a
 * server sends with Content-Encoding: gzip.
 *
 * Checked: reading the decoded stream in small pieces gives exactly the bytes one large read
 * gives, and fails the same way; a failure is G_IO_ERROR_INVALID_DATA (corrupt) or
 * G_IO_ERROR_PARTIAL_INPUT (ended inside a gzip member), never anything else; nothing
 * crashes, whatever the input.
 *
 * Input: the first byte picks the small read size (1 to 256), the rest is the body.
 */

#include "config.h"

#include <string.h>

#include <gio/gio.h>

#include "fuzz-common.h"
#include "kube/msd-inflate-input-stream.h"

/* a gzip bomb is cut here: the property holds for any prefix */
#define MAX_OUTPUT (1024 * 1024)

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_logs();
	return 0;
}

/* Decodes @body reading @piece bytes at a time; returns the output and sets @error on a
 * failure. */
static GByteArray *
decode(GBytes *body, gsize piece, GError **error)
{
	g_autoptr(GInputStream) base = g_memory_input_stream_new_from_bytes(body);
	g_autoptr(GInputStream) stream = msd_inflate_input_stream_new(base);
	GByteArray *out = g_byte_array_new();
	guint8 buffer[4096];

	while (out->len < MAX_OUTPUT) {
		gssize n = g_pollable_input_stream_read_nonblocking(
		        G_POLLABLE_INPUT_STREAM(stream), buffer, MIN(piece, sizeof(buffer)), NULL,
		        error);

		if (n <= 0)
			break;
		g_byte_array_append(out, buffer, (guint)n);
	}
	if (out->len > MAX_OUTPUT)
		g_byte_array_set_size(out, MAX_OUTPUT);
	return out;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GByteArray) small = NULL;
	g_autoptr(GByteArray) large = NULL;
	g_autoptr(GError) small_error = NULL;
	g_autoptr(GError) large_error = NULL;
	gsize piece;

	if (size < 1)
		return 0;
	piece = (gsize)data[0] + 1;
	body = g_bytes_new(data + 1, size - 1);
	small = decode(body, piece, &small_error);
	large = decode(body, 4096, &large_error);

	/* a memory stream is always readable: WOULD_BLOCK never happens, a failure is final */
	if (small_error != NULL)
		g_assert_true(g_error_matches(small_error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA) ||
		              g_error_matches(small_error, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT));
	g_assert_true((small_error == NULL) == (large_error == NULL));
	if (small_error != NULL)
		g_assert_cmpint(small_error->code, ==, large_error->code);
	/* below the cap the two reads decode the same bytes */
	if (small->len < MAX_OUTPUT && large->len < MAX_OUTPUT) {
		g_assert_cmpuint(small->len, ==, large->len);
		/* an empty array has no data pointer at all */
		g_assert_true(small->len == 0 || memcmp(small->data, large->data, small->len) == 0);
	}
	return 0;
}
