/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * A validated token index over one JSON text, built with jsmn (the only file that includes
 * jsmn.h is msd-json-scan.c, so the token layout below is ours, not jsmn's).
 *
 * jsmn alone accepts a lot that is not JSON (missing commas, bare words, raw control bytes);
 * msd_json_doc_parse() checks the bytes between tokens and every primitive, so a parsed doc
 * is always RFC 8259 JSON and the writers never need to fail.
 */

typedef enum {
	MSD_JSON_OBJECT = 1,
	MSD_JSON_ARRAY,
	MSD_JSON_STRING,
	MSD_JSON_NUMBER,
	MSD_JSON_TRUE,
	MSD_JSON_FALSE,
	MSD_JSON_NULL,
} MsdJsonType;

typedef struct {
	guint8 type;  /* MsdJsonType */
	guint8 plain; /* strings: no escapes, ASCII only, so the raw bytes are the decoded text */
	gint32 start; /* strings: first byte after the opening quote */
	gint32 end;   /* strings: the closing quote */
	gint32 size;  /* objects: members; arrays: elements */
	gint32 next;  /* index of the first token after this value (a key's value is key + 1) */
} MsdJsonTok;

typedef struct {
	const gchar *js; /* (unowned) */
	gsize len;
	MsdJsonTok *tok; /* (owned) */
	gint n_tok;
	gint cap_tok;
	gpointer raw; /* (owned): jsmn's own token array, kept for reuse */
	gint cap_raw;
} MsdJsonDoc;

/* Deepest nesting accepted: far beyond any Kubernetes object, small enough for recursion. */
#define MSD_JSON_MAX_DEPTH 512

void msd_json_doc_init(MsdJsonDoc *doc);
void msd_json_doc_clear(MsdJsonDoc *doc);
gboolean msd_json_doc_parse(MsdJsonDoc *doc, const gchar *js, gsize len, GError **error);

/* Index of the value of member @key (exact, decoded comparison) in object @obj, or -1. When the
 * key occurs more than once the last one wins, as when Go decodes into a map. */
gint msd_json_doc_member(const MsdJsonDoc *doc, gint obj, const gchar *key);

/* Decoded text of string token @idx: a pointer into the document when the token is plain,
 * else written to @scratch (reset first). Invalid UTF-8 and lone surrogates become U+FFFD,
 * as Go's decoder does. */
const gchar *msd_json_doc_string(const MsdJsonDoc *doc, gint idx, GString *scratch, gsize *len);

/* Decode the escape at @p (a backslash; @n bytes available): stores the code point and returns
 * the bytes consumed, 12 for a surrogate pair. Lone surrogates give U+FFFD, as in Go. */
gint msd_json_decode_escape(const gchar *p, gsize n, gunichar *cp);

/* Append the decoded text of string token @idx to @out. */
void msd_json_doc_append_decoded(const MsdJsonDoc *doc, gint idx, GString *out);

typedef struct {
	const gchar *key; /* decoded key (borrowed from the doc or from @owned) */
	gsize key_len;
	gint key_tok;
	gint value_tok;
	gchar *owned; /* (owned) (nullable) */
} MsdJsonMember;

/* The members of object @obj sorted by decoded key (byte order), duplicates resolved as Go's
 * map decoding does (last wins). Free with msd_json_members_free(). */
MsdJsonMember *msd_json_doc_sorted_members(const MsdJsonDoc *doc, gint obj, gint *n_members);
void msd_json_members_free(MsdJsonMember *members, gint n_members);

G_END_DECLS
