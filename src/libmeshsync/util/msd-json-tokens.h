/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>
#include <string.h>

G_BEGIN_DECLS

/*
 * The project's one JSON tokenizer: a validated token index over one JSON text. Tokens are byte
 * spans into bytes the caller keeps alive: no trees, no copies, which is what lets the informer
 * and the model run at hundreds of MB/s.
 *
 * msd_json_tokens_parse() checks the whole RFC 8259 grammar in the same pass that writes the
 * tokens: the bytes between tokens, every literal and number (including its float64 range),
 * string contents and escapes, and the nesting depth, so a parsed document is always JSON and
 * writers never need to fail. (It used to be jsmn followed by a validating walk over jsmn's
 * tokens; one pass of our own costs a quarter of that on a pod.)
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
	guint8 verbatim; /* strings: plain and without < > &, so Go's encoder writes the raw
	                  * bytes back unchanged, inside a JSON string too */
	guint8 opaque;   /* objects and arrays left untokenized on request (MsdJsonSkip): their
	                  * span is checked JSON, size is 0 and nothing inside has a token */
	gint32 start;    /* strings: first byte after the opening quote */
	gint32 end;      /* strings: the closing quote; others: one past the last byte */
	gint32 size;     /* objects: members; arrays: elements */
	gint32 next;     /* index of the first token after this value (a key's value is key + 1) */
} MsdJsonToken;

/* Skipped values checked lately (msd_json_tokens_parse_skipping()), kept to be recognized. */
typedef struct _MsdJsonChecked MsdJsonChecked;
void msd_json_checked_free(MsdJsonChecked *self);

typedef struct {
	const gchar *data; /* (unowned): the bytes the tokens point into */
	gsize length;
	MsdJsonToken *tokens; /* (owned) */
	gint n_tokens;
	gint allocated;
	gboolean compact; /* no whitespace between the tokens of the value (only around it) */
	MsdJsonChecked *checked; /* (owned) (nullable) */
} MsdJsonTokens;

#define MSD_JSON_TOKENS_INIT                 \
	{                                    \
		NULL, 0, NULL, 0, 0, 0, NULL \
	}

/* Deepest nesting accepted: far beyond any Kubernetes object, small enough for recursion. */
#define MSD_JSON_MAX_DEPTH 512

void msd_json_tokens_init(MsdJsonTokens *self);
void msd_json_tokens_clear(MsdJsonTokens *self);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(MsdJsonTokens, msd_json_tokens_clear)

/* Tokenizes @data, reusing the arrays of a previous call. A text that is not exactly one valid
 * JSON value gives MESHSYNC_ERROR_INVALID_DATA ("malformed JSON (...)"). */
gboolean
msd_json_tokens_parse(MsdJsonTokens *self, const gchar *data, gsize length, GError **error);

/* A value the caller never reads inside: the member @member of the member @parent of every
 * object at nesting @depth (the document's own value is at depth 0), when it is an object or
 * an array. E.g. {1, "metadata", "managedFields"} for the objects of watch lines. Keys match
 * as raw bytes; a key spelled with escapes is tokenized as usual. */
typedef struct {
	guint depth;
	const gchar *parent;
	const gchar *member;
} MsdJsonSkip;

/* Like msd_json_tokens_parse(), but the values @skip names are checked as JSON and get one
 * token each, marked opaque, with nothing under it: on a pod, managedFields are 40 % of the
 * bytes and more of the tokens. */
gboolean msd_json_tokens_parse_skipping(MsdJsonTokens *self,
                                        const gchar *data,
                                        gsize length,
                                        const MsdJsonSkip *skip,
                                        GError **error);

/* The type of token @index, or 0 when @index is -1 or out of range. */
static inline MsdJsonType
msd_json_tokens_type(const MsdJsonTokens *self, gint index)
{
	if (index < 0 || index >= self->n_tokens)
		return (MsdJsonType)0;
	return (MsdJsonType)self->tokens[index].type;
}

static inline gboolean
msd_json_tokens_is_object(const MsdJsonTokens *self, gint index)
{
	return msd_json_tokens_type(self, index) == MSD_JSON_OBJECT;
}

static inline gboolean
msd_json_tokens_is_array(const MsdJsonTokens *self, gint index)
{
	return msd_json_tokens_type(self, index) == MSD_JSON_ARRAY;
}

static inline gboolean
msd_json_tokens_is_string(const MsdJsonTokens *self, gint index)
{
	return msd_json_tokens_type(self, index) == MSD_JSON_STRING;
}

static inline gboolean
msd_json_tokens_is_null(const MsdJsonTokens *self, gint index)
{
	return msd_json_tokens_type(self, index) == MSD_JSON_NULL;
}

/* Members of an object or elements of an array; 0 for anything else or -1. */
static inline gint
msd_json_tokens_size(const MsdJsonTokens *self, gint index)
{
	MsdJsonType type = msd_json_tokens_type(self, index);

	return type == MSD_JSON_OBJECT || type == MSD_JSON_ARRAY ? self->tokens[index].size : 0;
}

/* Index of the first token after the value at @index and everything inside it. */
static inline gint
msd_json_tokens_skip(const MsdJsonTokens *self, gint index)
{
	return self->tokens[index].next;
}

/* Index of the value of member @key (exact, decoded comparison) of object @object, or -1 (also
 * when @object is -1 or not an object). When the key occurs more than once the last one wins,
 * as when Go decodes into a map. */
gint
msd_json_tokens_member_len(const MsdJsonTokens *self, gint object, const gchar *key, gsize key_len);

/* Inline for the length: callers name their keys with literals, whose strlen() the compiler
 * works out. */
static inline gint
msd_json_tokens_member(const MsdJsonTokens *self, gint object, const gchar *key)
{
	return msd_json_tokens_member_len(self, object, key, strlen(key));
}

/* Follows member names from @object, e.g. (0, "metadata", "uid", NULL); -1 when one is absent. */
gint msd_json_tokens_path(const MsdJsonTokens *self, gint object, ...) G_GNUC_NULL_TERMINATED;

/* The raw bytes of the token (for strings: between the quotes, still escaped). */
const gchar *msd_json_tokens_raw(const MsdJsonTokens *self, gint index, gsize *length);

/* The raw span of the token including the quotes of a string: the exact JSON text. */
const gchar *msd_json_tokens_span(const MsdJsonTokens *self, gint index, gsize *length);

/* Decoded text of string token @index: a pointer into the document when the token is plain,
 * else written to @scratch (reset first). Invalid UTF-8 and lone surrogates become U+FFFD,
 * as Go's decoder does. */
const gchar *
msd_json_tokens_string(const MsdJsonTokens *self, gint index, GString *scratch, gsize *length);

/* Appends the decoded text of string token @index to @out. */
void msd_json_tokens_append_decoded(const MsdJsonTokens *self, gint index, GString *out);

/* A newly allocated copy of the decoded string at @index, or of a number's or literal's text;
 * NULL for objects, arrays and -1. */
gchar *msd_json_tokens_dup_string(const MsdJsonTokens *self, gint index);

/* Whether @index is a string whose decoded text is @text. */
gboolean msd_json_tokens_string_equals(const MsdJsonTokens *self, gint index, const gchar *text);

/* Decodes the escape at @p (a backslash; @n bytes available): stores the code point and returns
 * the bytes consumed, 12 for a surrogate pair. Lone surrogates give U+FFFD, as in Go. Only for
 * escapes inside a parsed document, which the tokenizer has checked. */
gint msd_json_decode_escape(const gchar *p, gsize n, gunichar *cp);

typedef struct {
	const gchar *key; /* decoded key (borrowed from the document or from @owned) */
	gsize key_len;
	gint key_tok;
	gint value_tok;
	gchar *owned; /* (owned) (nullable) */
} MsdJsonMember;

G_END_DECLS
