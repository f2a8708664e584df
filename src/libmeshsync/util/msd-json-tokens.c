/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "meshsync-error.h"

/* The only translation unit that compiles jsmn's functions. */
#undef JSMN_HEADER
#define JSMN_PARENT_LINKS
#define JSMN_STRICT
#include <jsmn.h>

#include "msd-json-tokens.h"

/* Deep enough for any Kubernetes object; bounds recursion on hostile input. */
#define MSD_JSON_MAX_DEPTH 512

static gboolean
msd_json_tokens_primitive_valid(const gchar *p, gsize length)
{
	gsize i = 0;

	if (length == 4 && (memcmp(p, "true", 4) == 0 || memcmp(p, "null", 4) == 0))
		return TRUE;
	if (length == 5 && memcmp(p, "false", 5) == 0)
		return TRUE;
	/* A number as RFC 8259 spells it: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
	if (i < length && p[i] == '-')
		i++;
	if (i < length && p[i] == '0') {
		i++;
	} else if (i < length && p[i] >= '1' && p[i] <= '9') {
		while (i < length && g_ascii_isdigit(p[i]))
			i++;
	} else {
		return FALSE;
	}
	if (i < length && p[i] == '.') {
		if (++i >= length || !g_ascii_isdigit(p[i]))
			return FALSE;
		while (i < length && g_ascii_isdigit(p[i]))
			i++;
	}
	if (i < length && (p[i] == 'e' || p[i] == 'E')) {
		i++;
		if (i < length && (p[i] == '+' || p[i] == '-'))
			i++;
		if (i >= length || !g_ascii_isdigit(p[i]))
			return FALSE;
		while (i < length && g_ascii_isdigit(p[i]))
			i++;
	}
	return i == length;
}

/* jsmn tokenizes but does not validate: it takes {"a":} or a bare word. Checks the grammar of
 * the value at @index and returns the index after it, or 0 when it is invalid. */
static guint
msd_json_tokens_validate(const MsdJsonTokens *self, guint index, guint depth)
{
	const jsmntok_t *token;
	guint next = index + 1;

	if (index >= self->n_tokens || depth > MSD_JSON_MAX_DEPTH)
		return 0;
	token = &self->tokens[index];
	switch (token->type) {
	case JSMN_OBJECT:
		for (gint i = 0; i < token->size; i++) {
			if (next >= self->n_tokens || self->tokens[next].type != JSMN_STRING ||
			    self->tokens[next].size != 1)
				return 0;
			next = msd_json_tokens_validate(self, next + 1, depth + 1);
			if (next == 0)
				return 0;
		}
		return next;
	case JSMN_ARRAY:
		for (gint i = 0; i < token->size; i++) {
			next = msd_json_tokens_validate(self, next, depth + 1);
			if (next == 0)
				return 0;
		}
		return next;
	case JSMN_STRING:
		return token->size == 0 ? next : 0;
	case JSMN_PRIMITIVE:
		return msd_json_tokens_primitive_valid(self->data + token->start,
		                                       (gsize)(token->end - token->start))
		               ? next
		               : 0;
	case JSMN_UNDEFINED:
	default:
		return 0;
	}
}

gboolean
msd_json_tokens_parse(MsdJsonTokens *self, const gchar *data, gsize length, GError **error)
{
	jsmn_parser parser;
	gint rc;

	self->data = data;
	self->length = length;
	self->n_tokens = 0;
	if (self->allocated == 0) {
		/* Kubernetes objects average one token per 12-20 bytes. */
		self->allocated = MAX(64, length / 8);
		self->tokens = g_new(jsmntok_t, self->allocated);
	}

	jsmn_init(&parser);
	for (;;) {
		rc = jsmn_parse(&parser, data, length, self->tokens, self->allocated);
		if (rc != JSMN_ERROR_NOMEM)
			break;
		/* jsmn resumes where it stopped when given a larger array. */
		self->allocated *= 2;
		self->tokens = g_renew(jsmntok_t, self->tokens, self->allocated);
	}
	if (rc < 0 || rc == 0) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            "malformed JSON (%s at byte %u of %zu)",
		            rc == JSMN_ERROR_PART ? "truncated document"
		            : rc == 0             ? "no value"
		                                  : "invalid character",
		            parser.pos, length);
		return FALSE;
	}
	self->n_tokens = (guint)rc;
	/* jsmn accepts several top-level values in a row; a document is exactly one. */
	if (msd_json_tokens_skip(self, 0) != self->n_tokens) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            "malformed JSON (trailing data after byte %d of %zu)",
		            self->tokens[0].end, length);
		return FALSE;
	}
	if (msd_json_tokens_validate(self, 0, 0) != self->n_tokens) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            "malformed JSON (invalid structure or literal in %zu bytes)", length);
		return FALSE;
	}
	return TRUE;
}

void
msd_json_tokens_clear(MsdJsonTokens *self)
{
	g_clear_pointer(&self->tokens, g_free);
	self->allocated = 0;
	self->n_tokens = 0;
	self->data = NULL;
	self->length = 0;
}

guint
msd_json_tokens_skip(const MsdJsonTokens *self, guint index)
{
	gint end = self->tokens[index].end;
	guint next = index + 1;

	while (next < self->n_tokens && self->tokens[next].start < end)
		next++;
	return next;
}

gint
msd_json_tokens_member(const MsdJsonTokens *self, guint object, const gchar *key)
{
	gsize key_length = strlen(key);
	guint members;
	guint index;

	if (object >= self->n_tokens || self->tokens[object].type != JSMN_OBJECT)
		return -1;
	members = (guint)self->tokens[object].size;
	index = object + 1;
	for (guint i = 0; i < members; i++) {
		const jsmntok_t *name = &self->tokens[index];

		if ((gsize)(name->end - name->start) == key_length &&
		    memcmp(self->data + name->start, key, key_length) == 0)
			return (gint)index + 1;
		index = msd_json_tokens_skip(self, index + 1);
	}
	return -1;
}

gint
msd_json_tokens_path(const MsdJsonTokens *self, guint object, ...)
{
	va_list args;
	const gchar *key;
	gint index = (gint)object;

	va_start(args, object);
	while (index >= 0 && (key = va_arg(args, const gchar *)) != NULL)
		index = msd_json_tokens_member(self, (guint)index, key);
	va_end(args);
	return index;
}

gboolean
msd_json_tokens_is_string(const MsdJsonTokens *self, gint index)
{
	return index >= 0 && (guint)index < self->n_tokens &&
	       self->tokens[index].type == JSMN_STRING;
}

gboolean
msd_json_tokens_is_null(const MsdJsonTokens *self, gint index)
{
	return index >= 0 && (guint)index < self->n_tokens &&
	       self->tokens[index].type == JSMN_PRIMITIVE &&
	       self->data[self->tokens[index].start] == 'n';
}

const gchar *
msd_json_tokens_raw(const MsdJsonTokens *self, guint index, gsize *length)
{
	*length = (gsize)(self->tokens[index].end - self->tokens[index].start);
	return self->data + self->tokens[index].start;
}

const gchar *
msd_json_tokens_span(const MsdJsonTokens *self, guint index, gsize *length)
{
	gint start = self->tokens[index].start;
	gint end = self->tokens[index].end;

	if (self->tokens[index].type == JSMN_STRING) {
		start--;
		end++;
	}
	*length = (gsize)(end - start);
	return self->data + start;
}

static gint
msd_json_tokens_hex(gchar c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static gboolean
msd_json_tokens_read_u16(const gchar *p, const gchar *end, gunichar *value)
{
	gunichar v = 0;

	if (end - p < 4)
		return FALSE;
	for (guint i = 0; i < 4; i++) {
		gint digit = msd_json_tokens_hex(p[i]);

		if (digit < 0)
			return FALSE;
		v = (v << 4) | (gunichar)digit;
	}
	*value = v;
	return TRUE;
}

gchar *
msd_json_tokens_dup_string(const MsdJsonTokens *self, gint index)
{
	const gchar *p;
	const gchar *end;
	gsize length;
	GString *out;

	if (index < 0 || (guint)index >= self->n_tokens)
		return NULL;
	p = msd_json_tokens_raw(self, (guint)index, &length);
	end = p + length;
	if (self->tokens[index].type != JSMN_STRING || memchr(p, '\\', length) == NULL)
		return g_strndup(p, length);

	out = g_string_sized_new(length);
	while (p < end) {
		gunichar c;

		if (*p != '\\') {
			g_string_append_c(out, *p++);
			continue;
		}
		if (++p >= end)
			goto invalid;
		switch (*p++) {
		case '"':
			g_string_append_c(out, '"');
			break;
		case '\\':
			g_string_append_c(out, '\\');
			break;
		case '/':
			g_string_append_c(out, '/');
			break;
		case 'b':
			g_string_append_c(out, '\b');
			break;
		case 'f':
			g_string_append_c(out, '\f');
			break;
		case 'n':
			g_string_append_c(out, '\n');
			break;
		case 'r':
			g_string_append_c(out, '\r');
			break;
		case 't':
			g_string_append_c(out, '\t');
			break;
		case 'u':
			if (!msd_json_tokens_read_u16(p, end, &c))
				goto invalid;
			p += 4;
			if (c >= 0xD800 && c <= 0xDBFF) {
				gunichar low;

				if (end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
				    msd_json_tokens_read_u16(p + 2, end, &low) && low >= 0xDC00 &&
				    low <= 0xDFFF) {
					c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
					p += 6;
				} else {
					c = 0xFFFD;
				}
			} else if (c >= 0xDC00 && c <= 0xDFFF) {
				c = 0xFFFD;
			}
			g_string_append_unichar(out, c);
			break;
		default:
			goto invalid;
		}
	}
	return g_string_free(out, FALSE);

invalid:
	g_string_free(out, TRUE);
	return NULL;
}

gboolean
msd_json_tokens_string_equals(const MsdJsonTokens *self, gint index, const gchar *text)
{
	gsize length;
	const gchar *raw;

	if (!msd_json_tokens_is_string(self, index))
		return FALSE;
	raw = msd_json_tokens_raw(self, (guint)index, &length);
	return strlen(text) == length && memcmp(raw, text, length) == 0;
}
