/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * msd_json_tokens_parse() and msd_json_tokens_parse_skipping(): the tokenizing pass. The
 * accessors over its tokens (member lookup, decoding, sorted members) are in
 * msd-json-tokens.c.
 */

#define G_LOG_DOMAIN "MeshSync"

#include "config.h"

#include <math.h>
#include <string.h>

#include "meshsync-error.h"
#include "util/msd-bytes16.h"
#include "util/msd-json-tokens.h"
#include "util/msd-i18n.h"

static inline gboolean
is_ws(gchar c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static inline gboolean
is_digit(gchar c)
{
	return c >= '0' && c <= '9';
}

/* One past the last byte of the value's text. */
static inline gint32
tok_text_end(const MsdJsonToken *t)
{
	return t->type == MSD_JSON_STRING ? t->end + 1 : t->end;
}

/* Go's decoder rejects numbers that overflow a float64 (1e400): so do we, before any writer
 * has to format one. Only called for numbers with a fraction, an exponent or many digits. */
static gboolean
check_number_range(const gchar *p, gsize n)
{
	gchar buf[64];
	g_autofree gchar *heap = NULL;
	const gchar *text = buf;

	if (n < sizeof(buf)) {
		memcpy(buf, p, n);
		buf[n] = '\0';
	} else {
		heap = g_strndup(p, n);
		text = heap;
	}
	return isfinite(g_ascii_strtod(text, NULL));
}

/* Only on the error path: whether the whole text nests deeper than the limit, so that such a
 * document is reported as past a limit (TOO_LARGE) wherever else it is broken, and callers
 * that skip such documents keep doing so. */
static gboolean
check_depth(const gchar *js, gsize len)
{
	const gchar *p = js;
	const gchar *end = js + len;
	guint depth = 0;

	while (p < end) {
		switch (*p++) {
		case '"':
			/* a quote ends the string unless an odd number of backslashes precedes it
			 */
			for (;;) {
				const gchar *q = memchr(p, '"', (gsize)(end - p));
				const gchar *b;

				if (q == NULL)
					return TRUE;
				b = q;
				while (b > p && b[-1] == '\\')
					b--;
				p = q + 1;
				if (((q - b) & 1) == 0)
					break;
			}
			break;
		case '[':
		case '{':
			if (++depth > MSD_JSON_MAX_DEPTH)
				return FALSE;
			break;
		case ']':
		case '}':
			if (depth > 0)
				depth--;
			break;
		default:
			break;
		}
	}
	return TRUE;
}

/*
 * The tokenizer: one recursive-descent pass over the bytes that checks the whole RFC 8259
 * grammar and writes our tokens as it goes. It replaced jsmn plus a second, validating walk
 * over jsmn's tokens plus a pre-pass for the depth: three passes, and jsmn's parent links
 * made it touch the token array again at every closing bracket. On a 10 KB pod watch line it
 * is the difference between about 400,000 and 100,000 instructions.
 */

typedef enum {
	FAIL_NONE,
	FAIL_SYNTAX,
	FAIL_DEPTH,
} FailKind;

/* What an object's member is to the skip rule (MsdJsonSkip). */
typedef enum {
	ROLE_NONE,
	ROLE_SKIP_OBJECT, /* an object at the skip depth: look for its parent member */
	ROLE_SKIP_PARENT, /* the parent member's value: leave the named member untokenized */
} Role;

typedef struct {
	const gchar *js;
	const gchar *end;
	MsdJsonTokens *self;
	const MsdJsonSkip *skip; /* (nullable) */
	gsize parent_len;
	gsize member_len;
	const gchar *fail_at;
	FailKind fail;
	gboolean spaced;
	guint check_root; /* the level of the value being checked for a skip, or NO_CHECK_ROOT */
} Parser;

#define NO_CHECK_ROOT G_MAXUINT

static inline const gchar *
skip_ws_outside(const gchar *s, const gchar *end)
{
	while (s < end && is_ws(*s))
		s++;
	return s;
}

/* Whitespace inside the document's value: noted, so that callers know when the text is
 * already compact. */
static inline const gchar *
skip_ws_inside(Parser *p, const gchar *s)
{
	if (G_LIKELY(s >= p->end || !is_ws(*s)))
		return s;
	p->spaced = TRUE;
	return skip_ws_outside(s, p->end);
}

static inline const gchar *
fail(Parser *p, const gchar *at, FailKind kind)
{
	p->fail_at = at;
	p->fail = kind;
	return NULL;
}

static gint
push_token_slow(MsdJsonTokens *self)
{
	self->allocated = MAX(self->allocated * 2, 64);
	self->tokens = g_renew(MsdJsonToken, self->tokens, self->allocated);
	return self->n_tokens++;
}

static inline gint
push_token(MsdJsonTokens *self)
{
	if (G_UNLIKELY(self->n_tokens == self->allocated))
		return push_token_slow(self);
	return self->n_tokens++;
}

/* Bytes inside a string that need a look: the end, escapes, control bytes (not allowed raw),
 * non-ASCII (the text is then not "plain") and what Go's encoder escapes (not "verbatim"). */
static const guint8 string_special[256] = {
        [0x00 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1,          ['<'] = 1,
        ['>'] = 1,           ['&'] = 1, [0x80 ... 0xff] = 1,
};

static inline gboolean
is_hex(gchar c)
{
	return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/* The lanes of @x that scan_string() must look at; @flags adds what only matters to the
 * plain and verbatim flags (non-ASCII, < > &). */
static inline __attribute__((always_inline)) MsdBytes16
string_lanes(MsdBytes16 x, gboolean flags)
{
	if (!flags)
		return (MsdBytes16)((x < 0x20) | (x == '"') | (x == '\\'));
	/* below 0x20 or from 0x80 on: one subtraction that wraps and one comparison; '<' and
	 * '>' are the two bytes that give '>' when or-ed with 2 */
	return (MsdBytes16)(((MsdBytes16)(x - 0x20) >= 0x60) | (x == '"') | (x == '\\') |
	                    ((x | 2) == '>') | (x == '&'));
}

/* Scans the string whose text starts at @s (after the opening quote); returns its closing
 * quote, or NULL. With @flags, sets *@plain when the raw bytes are the decoded text, and
 * *@verbatim when Go would also write them back unchanged. */
static inline __attribute__((always_inline)) const gchar *
scan_string_impl(Parser *p, const gchar *s, guint8 *plain, guint8 *verbatim, gboolean flags)
{
	const gchar *end = p->end;
	guint8 is_plain = 1;
	guint8 is_verbatim = 1;

	for (;;) {
		guchar c;

		for (;;) {
			if (end - s >= 16) {
				MsdBytes16 x;
				guint lane;

				memcpy(&x, s, sizeof(x));
				lane = msd_bytes16_first_lane(string_lanes(x, flags));
				s += lane;
				if (lane < 16)
					break;
			} else {
				while (s < end && !string_special[(guchar)*s])
					s++;
				if (s == end)
					return fail(p, s, FAIL_SYNTAX);
				break;
			}
		}
		c = (guchar)*s;
		if (c == '"') {
			if (flags) {
				*plain = is_plain;
				*verbatim = is_plain & is_verbatim;
			}
			return s;
		}
		if (c < 0x20)
			return fail(p, s, FAIL_SYNTAX);
		if (c == '<' || c == '>' || c == '&') {
			is_verbatim = 0;
			s++;
			continue;
		}
		is_plain = 0;
		if (c >= 0x80) {
			s++;
			continue;
		}
		/* a backslash: one of the escapes RFC 8259 knows */
		if (end - s < 2)
			return fail(p, s, FAIL_SYNTAX);
		switch (s[1]) {
		case '"':
		case '\\':
		case '/':
		case 'b':
		case 'f':
		case 'n':
		case 'r':
		case 't':
			s += 2;
			break;
		case 'u':
			if (end - s < 6 || !is_hex(s[2]) || !is_hex(s[3]) || !is_hex(s[4]) ||
			    !is_hex(s[5]))
				return fail(p, s, FAIL_SYNTAX);
			s += 6;
			break;
		default:
			return fail(p, s, FAIL_SYNTAX);
		}
	}
}

static const gchar *
scan_string(Parser *p, const gchar *s, guint8 *plain, guint8 *verbatim)
{
	return scan_string_impl(p, s, plain, verbatim, TRUE);
}

/* For values checked but not tokenized: no flags to work out. */
static inline __attribute__((always_inline)) const gchar *
check_string(Parser *p, const gchar *s)
{
	return scan_string_impl(p, s, NULL, NULL, FALSE);
}

/* A number as RFC 8259 spells it, -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, within a
 * float64; returns the byte after it, or NULL. */
static const gchar *
scan_number(Parser *p, const gchar *s)
{
	const gchar *end = p->end;
	const gchar *q = s;
	gboolean plain_int = TRUE;

	if (q < end && *q == '-')
		q++;
	if (q >= end)
		return fail(p, q, FAIL_SYNTAX);
	if (*q == '0') {
		q++;
	} else if (*q >= '1' && *q <= '9') {
		q++;
		while (q < end && is_digit(*q))
			q++;
	} else {
		return fail(p, q, FAIL_SYNTAX);
	}
	if (q < end && *q == '.') {
		plain_int = FALSE;
		q++;
		if (q >= end || !is_digit(*q))
			return fail(p, q, FAIL_SYNTAX);
		while (q < end && is_digit(*q))
			q++;
	}
	if (q < end && (*q == 'e' || *q == 'E')) {
		plain_int = FALSE;
		q++;
		if (q < end && (*q == '+' || *q == '-'))
			q++;
		if (q >= end || !is_digit(*q))
			return fail(p, q, FAIL_SYNTAX);
		while (q < end && is_digit(*q))
			q++;
	}
	/* plain integers up to 18 digits cannot overflow: no conversion for them */
	if ((!plain_int || q - s > 18) && !check_number_range(s, (gsize)(q - s)))
		return fail(p, s, FAIL_SYNTAX);
	return q;
}

/* true, false or null at @s; the type, or 0. */
static inline MsdJsonType
scan_literal(Parser *p, const gchar *s, const gchar **after)
{
	gsize left = (gsize)(p->end - s);

	if (left >= 4 && memcmp(s, "true", 4) == 0) {
		*after = s + 4;
		return MSD_JSON_TRUE;
	}
	if (left >= 5 && memcmp(s, "false", 5) == 0) {
		*after = s + 5;
		return MSD_JSON_FALSE;
	}
	if (left >= 4 && memcmp(s, "null", 4) == 0) {
		*after = s + 4;
		return MSD_JSON_NULL;
	}
	return (MsdJsonType)0;
}

/* The token of an object or array starting at @s; its members' tokens follow it. */
static inline gint
open_container(Parser *p, const gchar *s, MsdJsonType type)
{
	gint index = push_token(p->self);
	MsdJsonToken *t = &p->self->tokens[index];

	t->type = type;
	t->plain = 0;
	t->verbatim = 0;
	t->opaque = 0;
	t->start = (gint32)(s - p->js);
	return index;
}

/* @s is one past the closing bracket of the container at @index, which has @size members. */
static inline void
close_container(Parser *p, gint index, const gchar *s, gint32 size)
{
	MsdJsonToken *t = &p->self->tokens[index];

	t->end = (gint32)(s - p->js);
	t->size = size;
	t->next = p->self->n_tokens;
}

static const gchar *check_value(Parser *p, const gchar *s, guint level);

/* The object or array at @s (its depth checked already), and everything in it. */
static const gchar *
check_container(Parser *p, const gchar *s, guint level)
{
	const gchar *end = p->end;
	gchar close = *s == '{' ? '}' : ']';

	s = skip_ws_inside(p, s + 1);
	if (s < end && *s == close)
		return s + 1;
	for (;;) {
		if (s >= end)
			return fail(p, s, FAIL_SYNTAX);
		if (close == '}') {
			if (*s != '"')
				return fail(p, s, FAIL_SYNTAX);
			s = check_string(p, s + 1);
			if (s == NULL)
				return NULL;
			s = skip_ws_inside(p, s + 1);
			if (s >= end || *s != ':')
				return fail(p, s, FAIL_SYNTAX);
			s = skip_ws_inside(p, s + 1);
			if (s >= end)
				return fail(p, s, FAIL_SYNTAX);
		}
		s = check_value(p, s, level + 1);
		if (s == NULL)
			return NULL;
		s = skip_ws_inside(p, s);
		if (s < end && *s == ',') {
			s = skip_ws_inside(p, s + 1);
			continue;
		}
		if (s < end && *s == close)
			return s + 1;
		return fail(p, s, FAIL_SYNTAX);
	}
}

/*
 * Skipped values met again. What a parse leaves out (MsdJsonSkip) is mostly managedFields,
 * and an entry's fieldsV1 repeats byte for byte across the objects one controller made from
 * one template (the replicas of a ReplicaSet, which a list gives one after another): checking
 * it again costs several times what comparing it does. So the containers CHECKED_DEPTH levels
 * under a skipped value (managedFields[i].fieldsV1) are kept once checked, a few at a time, in
 * the tokens, which the informer reuses from line to line. A hit needs the whole kept value
 * equal to the bytes at hand, at the same depth, so it is never wrong: a broken text either
 * differs from every kept value or starts with a whole valid one, which is then what
 * check_container() would have stepped over too.
 */
#define CHECKED_SLOTS     4
#define CHECKED_DEPTH     2
#define CHECKED_MIN_BYTES 256
#define CHECKED_MAX_BYTES (64 * 1024)

typedef struct {
	gchar *bytes; /* (owned) (nullable) */
	gsize length; /* 0: empty */
	gsize capacity;
	guint level;
	gboolean spaced; /* had whitespace between its tokens */
	guint64 used;
} CheckedSlot;

struct _MsdJsonChecked {
	CheckedSlot slots[CHECKED_SLOTS];
	guint64 clock;
};

void
msd_json_checked_free(MsdJsonChecked *self)
{
	if (self == NULL)
		return;
	for (guint i = 0; i < CHECKED_SLOTS; i++)
		g_free(self->slots[i].bytes);
	g_free(self);
}

static const gchar *
checked_lookup(Parser *p, const gchar *s, guint level)
{
	MsdJsonChecked *checked = p->self->checked;
	gsize left = (gsize)(p->end - s);

	if (checked == NULL || left < CHECKED_MIN_BYTES)
		return NULL;
	for (guint i = 0; i < CHECKED_SLOTS; i++) {
		CheckedSlot *slot = &checked->slots[i];
		gsize n = slot->length;

		/* different values of one kind share long prefixes: two bytes further in first */
		if (n == 0 || n > left || slot->level != level || slot->bytes[n - 1] != s[n - 1] ||
		    slot->bytes[n / 2] != s[n / 2] || memcmp(slot->bytes, s, n) != 0)
			continue;
		slot->used = ++checked->clock;
		if (slot->spaced)
			p->spaced = TRUE;
		return s + n;
	}
	return NULL;
}

static void
checked_insert(Parser *p, const gchar *start, const gchar *after, guint level, gboolean spaced)
{
	gsize n = (gsize)(after - start);
	MsdJsonChecked *checked;
	CheckedSlot *slot;

	if (n < CHECKED_MIN_BYTES || n > CHECKED_MAX_BYTES)
		return;
	if (p->self->checked == NULL)
		p->self->checked = g_new0(MsdJsonChecked, 1);
	checked = p->self->checked;
	slot = &checked->slots[0];
	for (guint i = 1; i < CHECKED_SLOTS; i++) {
		if (checked->slots[i].used < slot->used)
			slot = &checked->slots[i];
	}
	if (slot->capacity < n) {
		g_free(slot->bytes);
		slot->bytes = g_malloc(n);
		slot->capacity = n;
	}
	memcpy(slot->bytes, start, n);
	slot->length = n;
	slot->level = level;
	slot->spaced = spaced;
	slot->used = ++checked->clock;
}

static const gchar *
check_container_kept(Parser *p, const gchar *s, guint level)
{
	const gchar *after = checked_lookup(p, s, level);
	gboolean spaced = p->spaced;

	if (after != NULL)
		return after;
	p->spaced = FALSE;
	after = check_container(p, s, level);
	if (after != NULL)
		checked_insert(p, s, after, level, p->spaced);
	p->spaced = p->spaced || spaced;
	return after;
}

/* Checks the value at @s (not whitespace) and everything in it without writing tokens: for
 * a value the caller left out on purpose. Returns the byte after it, or NULL. */
static const gchar *
check_value(Parser *p, const gchar *s, guint level)
{
	switch (*s) {
	case '"':
		s = check_string(p, s + 1);
		return s != NULL ? s + 1 : NULL;
	case '{':
	case '[':
		break;
	case '-':
	case '0' ... '9':
		return scan_number(p, s);
	default: {
		const gchar *after;

		if (scan_literal(p, s, &after) == 0)
			return fail(p, s, FAIL_SYNTAX);
		return after;
	}
	}
	if (level >= MSD_JSON_MAX_DEPTH)
		return fail(p, s, FAIL_DEPTH);
	if (G_UNLIKELY(p->check_root != NO_CHECK_ROOT && level == p->check_root + CHECKED_DEPTH))
		return check_container_kept(p, s, level);
	return check_container(p, s, level);
}

static const gchar *parse_value(Parser *p, const gchar *s, guint level, Role role);

static inline gboolean
key_is(const Parser *p, const MsdJsonToken *key, const gchar *name, gsize len)
{
	return key->plain && (gsize)(key->end - key->start) == len &&
	       memcmp(p->js + key->start, name, len) == 0;
}

/* A string's token (a key, or a value: most values are strings, so objects and arrays make
 * them here rather than through parse_value()). */
static inline __attribute__((always_inline)) const gchar *
parse_string(Parser *p, const gchar *s)
{
	gint index = push_token(p->self);
	MsdJsonToken *t = &p->self->tokens[index];
	const gchar *q;

	t->type = MSD_JSON_STRING;
	t->opaque = 0;
	t->start = (gint32)(s + 1 - p->js);
	q = scan_string(p, s + 1, &t->plain, &t->verbatim);
	if (q == NULL)
		return NULL;
	t->end = (gint32)(q - p->js);
	t->size = 0;
	t->next = index + 1;
	return q + 1;
}

static const gchar *
parse_object(Parser *p, const gchar *s, guint level, Role role)
{
	const gchar *end = p->end;
	gint index = open_container(p, s, MSD_JSON_OBJECT);
	gint32 size = 0;

	s = skip_ws_inside(p, s + 1);
	if (s < end && *s == '}') {
		s++;
		goto done;
	}
	for (;;) {
		MsdJsonToken *key;
		gint key_index;
		const gchar *q;
		Role child = ROLE_NONE;

		if (s >= end || *s != '"')
			return fail(p, s, FAIL_SYNTAX);
		/* a key is a string token like a value's */
		key_index = p->self->n_tokens;
		q = parse_string(p, s);
		if (q == NULL)
			return NULL;
		key = &p->self->tokens[key_index];
		s = skip_ws_inside(p, q);
		if (s >= end || *s != ':')
			return fail(p, s, FAIL_SYNTAX);
		s = skip_ws_inside(p, s + 1);
		if (s >= end)
			return fail(p, s, FAIL_SYNTAX);
		if (G_UNLIKELY(role != ROLE_NONE)) {
			if (role == ROLE_SKIP_OBJECT &&
			    key_is(p, key, p->skip->parent, p->parent_len))
				child = ROLE_SKIP_PARENT;
			else if (role == ROLE_SKIP_PARENT && (*s == '[' || *s == '{') &&
			         key_is(p, key, p->skip->member, p->member_len)) {
				/* checked as JSON, kept as one opaque token */
				gint v = push_token(p->self);
				MsdJsonToken *t = &p->self->tokens[v];

				t->type = *s == '[' ? MSD_JSON_ARRAY : MSD_JSON_OBJECT;
				t->plain = 0;
				t->verbatim = 0;
				t->opaque = 1;
				t->start = (gint32)(s - p->js);
				t->size = 0;
				t->next = v + 1;
				p->check_root = level + 1;
				s = check_value(p, s, level + 1);
				p->check_root = NO_CHECK_ROOT;
				if (s == NULL)
					return NULL;
				p->self->tokens[v].end = (gint32)(s - p->js);
				goto member_done;
			}
		}
		if (*s == '"')
			s = parse_string(p, s);
		else
			s = parse_value(p, s, level + 1, child);
		if (s == NULL)
			return NULL;
	member_done:
		size++;
		s = skip_ws_inside(p, s);
		if (s < end && *s == ',') {
			s = skip_ws_inside(p, s + 1);
			continue;
		}
		if (s < end && *s == '}') {
			s++;
			break;
		}
		return fail(p, s, FAIL_SYNTAX);
	}
done:
	close_container(p, index, s, size);
	return s;
}

static const gchar *
parse_array(Parser *p, const gchar *s, guint level)
{
	const gchar *end = p->end;
	gint index = open_container(p, s, MSD_JSON_ARRAY);
	gint32 size = 0;

	s = skip_ws_inside(p, s + 1);
	if (s < end && *s == ']') {
		s++;
		goto done;
	}
	for (;;) {
		if (s >= end)
			return fail(p, s, FAIL_SYNTAX);
		if (*s == '"')
			s = parse_string(p, s);
		else
			s = parse_value(p, s, level + 1, ROLE_NONE);
		if (s == NULL)
			return NULL;
		size++;
		s = skip_ws_inside(p, s);
		if (s < end && *s == ',') {
			s = skip_ws_inside(p, s + 1);
			continue;
		}
		if (s < end && *s == ']') {
			s++;
			break;
		}
		return fail(p, s, FAIL_SYNTAX);
	}
done:
	close_container(p, index, s, size);
	return s;
}

/* The value at @s (not whitespace, not the end) at nesting @level: its tokens are appended.
 * Returns the byte after it, or NULL. */
static const gchar *
parse_value(Parser *p, const gchar *s, guint level, Role role)
{
	MsdJsonToken *t;
	gint index;

	switch (*s) {
	case '{':
		if (level >= MSD_JSON_MAX_DEPTH)
			return fail(p, s, FAIL_DEPTH);
		if (p->skip != NULL && role == ROLE_NONE && level == p->skip->depth)
			role = ROLE_SKIP_OBJECT;
		return parse_object(p, s, level, role);
	case '[':
		if (level >= MSD_JSON_MAX_DEPTH)
			return fail(p, s, FAIL_DEPTH);
		return parse_array(p, s, level);
	case '"':
		return parse_string(p, s);
	case '-':
	case '0' ... '9': {
		const gchar *q = scan_number(p, s);

		if (q == NULL)
			return NULL;
		index = push_token(p->self);
		t = &p->self->tokens[index];
		t->type = MSD_JSON_NUMBER;
		t->plain = 0;
		t->verbatim = 0;
		t->opaque = 0;
		t->start = (gint32)(s - p->js);
		t->end = (gint32)(q - p->js);
		t->size = 0;
		t->next = index + 1;
		return q;
	}
	default: {
		const gchar *q;
		MsdJsonType type = scan_literal(p, s, &q);

		if (type == 0)
			return fail(p, s, FAIL_SYNTAX);
		index = push_token(p->self);
		t = &p->self->tokens[index];
		t->type = type;
		t->plain = 0;
		t->verbatim = 0;
		t->opaque = 0;
		t->start = (gint32)(s - p->js);
		t->end = (gint32)(q - p->js);
		t->size = 0;
		t->next = index + 1;
		return q;
	}
	}
}

gboolean
msd_json_tokens_parse_skipping(MsdJsonTokens *self,
                               const gchar *data,
                               gsize length,
                               const MsdJsonSkip *skip,
                               GError **error)
{
	Parser p = {
	        .js = data,
	        .end = data + length,
	        .self = self,
	        .skip = skip,
	        .parent_len = skip != NULL ? strlen(skip->parent) : 0,
	        .member_len = skip != NULL ? strlen(skip->member) : 0,
	        .check_root = NO_CHECK_ROOT,
	};
	const gchar *s;

	g_return_val_if_fail(data != NULL || length == 0, FALSE);

	self->data = data;
	self->length = length;
	self->n_tokens = 0;
	self->compact = FALSE;
	/* offsets are gint32 */
	if (length > G_MAXINT32 / 2) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("malformed JSON (document too large: %zu bytes)"), length);
		return FALSE;
	}
	if (self->allocated == 0) {
		/* Kubernetes objects average one token per 12-20 bytes */
		self->allocated = (gint)MIN(length / 10 + 16, 1 << 16);
		self->tokens = g_new(MsdJsonToken, self->allocated);
	}
	s = skip_ws_outside(data, p.end);
	if (s == p.end) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("malformed JSON (no value in %zu bytes)"), length);
		return FALSE;
	}
	s = parse_value(&p, s, 0, ROLE_NONE);
	if (s != NULL) {
		s = skip_ws_outside(s, p.end);
		if (s != p.end) {
			self->n_tokens = 0;
			/* several values in a row are not one document */
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
			            _("malformed JSON (trailing data after byte %d of %zu)"),
			            tok_text_end(&self->tokens[0]), length);
			return FALSE;
		}
		self->compact = !p.spaced;
		return TRUE;
	}
	self->n_tokens = 0;
	if (p.fail == FAIL_DEPTH || !check_depth(data, length)) {
		/* a limit of ours, not broken JSON: callers may skip just this document */
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_TOO_LARGE,
		            _("JSON nested deeper than %d levels"), MSD_JSON_MAX_DEPTH);
		return FALSE;
	}
	g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
	            _("malformed JSON (%s at byte %zu of %zu)"),
	            p.fail_at >= p.end ? _("truncated document") : _("invalid character"),
	            (gsize)(p.fail_at - data), length);
	return FALSE;
}

gboolean
msd_json_tokens_parse(MsdJsonTokens *self, const gchar *data, gsize length, GError **error)
{
	return msd_json_tokens_parse_skipping(self, data, length, NULL, error);
}
