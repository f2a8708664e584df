/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

#define JSMN_HEADER
#define JSMN_PARENT_LINKS
#define JSMN_STRICT
#include <jsmn.h>

G_BEGIN_DECLS

/*
 * One tokenized JSON document: jsmn tokens (byte spans with parent links) over bytes the
 * caller keeps alive. This is the hot path's only JSON parser: no trees, no copies.
 */
typedef struct {
	const gchar *data; /* (unowned): the bytes the tokens point into */
	gsize length;
	jsmntok_t *tokens; /* (owned) */
	guint n_tokens;
	guint allocated;
} MsdJsonTokens;

#define MSD_JSON_TOKENS_INIT        \
	{                           \
		NULL, 0, NULL, 0, 0 \
	}

/* Tokenizes @data; reuses the token array of a previous call. A document that is not exactly
 * one valid JSON value gives MESHSYNC_ERROR_INVALID_DATA. */
gboolean
msd_json_tokens_parse(MsdJsonTokens *self, const gchar *data, gsize length, GError **error);
void msd_json_tokens_clear(MsdJsonTokens *self);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(MsdJsonTokens, msd_json_tokens_clear)

/* Index of the first token after the value at @index and everything inside it. */
guint msd_json_tokens_skip(const MsdJsonTokens *self, guint index);

/* Index of the value of member @key of the object at @object, or -1. Keys are compared as raw
 * bytes, which is exact for the escape-free keys Kubernetes uses. */
gint msd_json_tokens_member(const MsdJsonTokens *self, guint object, const gchar *key);

/* Follows a dot-free path of member names from @object, e.g. ("metadata", "uid", NULL). */
gint msd_json_tokens_path(const MsdJsonTokens *self, guint object, ...) G_GNUC_NULL_TERMINATED;

gboolean msd_json_tokens_is_string(const MsdJsonTokens *self, gint index);
gboolean msd_json_tokens_is_null(const MsdJsonTokens *self, gint index);

/* The raw bytes of the token (for strings: between the quotes, still escaped). */
const gchar *msd_json_tokens_raw(const MsdJsonTokens *self, guint index, gsize *length);

/* The raw span of the token including the quotes of a string: the exact JSON text. */
const gchar *msd_json_tokens_span(const MsdJsonTokens *self, guint index, gsize *length);

/* The decoded value of a string token (escapes resolved; invalid escapes give NULL), or a copy
 * of a primitive's text. */
gchar *msd_json_tokens_dup_string(const MsdJsonTokens *self, gint index);

/* Whether the raw (escaped) bytes of string token @index equal @text. */
gboolean msd_json_tokens_string_equals(const MsdJsonTokens *self, gint index, const gchar *text);

G_END_DECLS
