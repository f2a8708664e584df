/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/*
 * Byte-level JSON helpers. Stored objects stay compact JSON text; these find members with a
 * tokenizer (no trees) and write JSON the way Go's encoder does, because json-glib 1.6's
 * generator can emit invalid JSON for some numbers and control characters.
 */

typedef struct {
	const gchar *js;
	gsize len;
	gpointer tokens; /* jsmntok_t array */
	gint n_tokens;
} KubesimJsonDoc;

/* Tokenizes @js; FALSE when it is not valid JSON. Tokens are freed by _clear. */
gboolean kubesim_json_doc_init(KubesimJsonDoc *doc, const gchar *js, gsize len);
void kubesim_json_doc_clear(KubesimJsonDoc *doc);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(KubesimJsonDoc, kubesim_json_doc_clear)

/* Index of the value of member @key of the object at token @obj, or -1. */
gint kubesim_json_member(const KubesimJsonDoc *doc, gint obj, const gchar *key);
/* Index of the value at a dotted @path ("metadata.labels") from the root, or -1. */
gint kubesim_json_path(const KubesimJsonDoc *doc, const gchar *path);
/* The index after token @tok and all its children. */
gint kubesim_json_skip(const KubesimJsonDoc *doc, gint tok);
gboolean kubesim_json_is_object(const KubesimJsonDoc *doc, gint tok);
gboolean kubesim_json_is_array(const KubesimJsonDoc *doc, gint tok);
gboolean kubesim_json_is_string(const KubesimJsonDoc *doc, gint tok);
gint kubesim_json_size(const KubesimJsonDoc *doc, gint tok);
/* The raw text of a token, quotes included for strings. */
void kubesim_json_raw(const KubesimJsonDoc *doc, gint tok, const gchar **start, gsize *len);
/* A string token unescaped, or the text of a primitive; NULL for objects and arrays. */
gchar *kubesim_json_string(const KubesimJsonDoc *doc, gint tok);

/* Appends @s as a JSON string literal with Go's escaping. */
void kubesim_json_append_string(GString *out, const gchar *s);
/* Appends @node as compact JSON (members in their order, Go-style strings and numbers). */
void kubesim_json_append_node(GString *out, JsonNode *node);
GBytes *kubesim_json_node_to_bytes(JsonNode *node);
/* Removes whitespace outside strings. */
GBytes *kubesim_json_compact(const gchar *js, gsize len);

/* Parses a JSON text into a tree (small documents only: request bodies); NULL on error. */
JsonNode *kubesim_json_parse(const gchar *js, gsize len, GError **error);

G_END_DECLS
