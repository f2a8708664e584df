/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <string.h>

#include <glib.h>

G_BEGIN_DECLS

/* Sixteen bytes at a time with the compiler's portable vector extension (SSE2 on x86-64,
 * NEON on arm64): the JSON the hot path reads and writes is mostly long runs of plain ASCII. */
typedef guint8 MsdBytes16 __attribute__((vector_size(16)));

/* The index of the first byte of a 16-byte mask whose lane is set, or 16. */
static inline guint
msd_bytes16_first_lane(MsdBytes16 mask)
{
	guint64 half[2];

	memcpy(half, &mask, sizeof(half));
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
	if (half[0] != 0)
		return (guint)__builtin_ctzll(half[0]) / 8;
	if (half[1] != 0)
		return 8 + (guint)__builtin_ctzll(half[1]) / 8;
#else
	if (half[0] != 0)
		return (guint)__builtin_clzll(half[0]) / 8;
	if (half[1] != 0)
		return 8 + (guint)__builtin_clzll(half[1]) / 8;
#endif
	return 16;
}

G_END_DECLS
