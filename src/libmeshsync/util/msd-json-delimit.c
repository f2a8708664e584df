/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSync"

#include "config.h"

#include <string.h>

#include "util/msd-json-delimit.h"

static gsize
skip_ws(const gchar *data, gsize length, gsize pos)
{
	while (pos < length &&
	       (data[pos] == ' ' || data[pos] == '\t' || data[pos] == '\n' || data[pos] == '\r'))
		pos++;
	return pos;
}

/* One past the closing quote of the string whose opening quote is at @pos, or -1. */
static gssize
string_end(const gchar *data, gsize length, gsize pos)
{
	gsize p = pos + 1;

	while (p < length) {
		const gchar *q = memchr(data + p, '"', length - p);
		gsize backslashes = 0;

		if (q == NULL)
			return -1;
		/* a quote ends the string unless an odd number of backslashes precedes it */
		for (const gchar *b = q; b > data + p && b[-1] == '\\'; b--)
			backslashes++;
		p = (gsize)(q - data) + 1;
		if ((backslashes & 1) == 0)
			return (gssize)p;
	}
	return -1;
}

gssize
msd_json_delimit_value_end(const gchar *data, gsize length, gsize pos)
{
	gsize p = skip_ws(data, length, pos);
	gsize depth = 0;

	if (p >= length)
		return -1;
	if (data[p] == '"')
		return string_end(data, length, p);
	if (data[p] != '{' && data[p] != '[') {
		/* a number or literal: up to the next delimiter */
		while (p < length && strchr(",]} \t\r\n", data[p]) == NULL)
			p++;
		return (gssize)p;
	}
	/* brackets are counted, not matched by kind: the tokenizer checks grammar later, and a
	 * mismatch only makes that check fail */
	while (p < length) {
		gchar c = data[p];

		if (c == '"') {
			gssize end = string_end(data, length, p);

			if (end < 0)
				return -1;
			p = (gsize)end;
			continue;
		}
		p++;
		if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (--depth == 0)
				return (gssize)p;
		}
	}
	return -1;
}

GArray *
msd_json_delimit_members(const gchar *data, gsize length, gsize pos)
{
	g_autoptr(GArray) members = g_array_new(FALSE, FALSE, sizeof(MsdJsonDelimitMember));
	gsize p = skip_ws(data, length, pos);

	if (p >= length || data[p] != '{')
		return NULL;
	p = skip_ws(data, length, p + 1);
	if (p < length && data[p] == '}')
		return g_steal_pointer(&members);
	while (p < length) {
		MsdJsonDelimitMember member;
		gssize end;

		if (data[p] != '"')
			return NULL;
		end = string_end(data, length, p);
		if (end < 0)
			return NULL;
		member.key_start = p + 1;
		member.key_end = (gsize)end - 1;
		p = skip_ws(data, length, (gsize)end);
		if (p >= length || data[p] != ':')
			return NULL;
		member.value_start = skip_ws(data, length, p + 1);
		end = msd_json_delimit_value_end(data, length, member.value_start);
		if (end < 0)
			return NULL;
		member.value_end = (gsize)end;
		g_array_append_val(members, member);
		p = skip_ws(data, length, (gsize)end);
		if (p < length && data[p] == '}')
			return g_steal_pointer(&members);
		if (p >= length || data[p] != ',')
			return NULL;
		p = skip_ws(data, length, p + 1);
	}
	return NULL;
}

GArray *
msd_json_delimit_elements(const gchar *data, gsize length, gsize pos)
{
	g_autoptr(GArray) elements = g_array_new(FALSE, FALSE, sizeof(MsdJsonDelimitSpan));
	gsize p = skip_ws(data, length, pos);

	if (p >= length || data[p] != '[')
		return NULL;
	p = skip_ws(data, length, p + 1);
	if (p < length && data[p] == ']')
		return g_steal_pointer(&elements);
	while (p < length) {
		MsdJsonDelimitSpan span;
		gssize end = msd_json_delimit_value_end(data, length, p);

		if (end < 0 || (gsize)end == p)
			return NULL;
		span.start = p;
		span.end = (gsize)end;
		g_array_append_val(elements, span);
		p = skip_ws(data, length, (gsize)end);
		if (p < length && data[p] == ']')
			return g_steal_pointer(&elements);
		if (p >= length || data[p] != ',')
			return NULL;
		p = skip_ws(data, length, p + 1);
	}
	return NULL;
}
