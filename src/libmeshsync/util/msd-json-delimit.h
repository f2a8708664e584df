/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * A structural scanner for JSON text that cannot or need not be tokenized whole: it finds where
 * values begin and end (strings and their escapes, brackets) without building tokens and without
 * any depth limit, in constant memory. It checks structure only, not grammar: whatever it
 * delimits must still go through msd_json_tokens_parse() before anything reads it. Used to
 * salvage the objects of a list page that one hostile object made unparsable.
 */

/* The end (one past the last byte) of the value starting at @pos (after whitespace), or -1 when
 * the text ends first or a bracket does not match. */
gssize msd_json_delimit_value_end(const gchar *data, gsize length, gsize pos);

typedef struct {
	gsize key_start; /* the key's text, between its quotes, still escaped */
	gsize key_end;
	gsize value_start; /* the value's bytes */
	gsize value_end;
} MsdJsonDelimitMember;

/* The members of the object starting at @pos, in order; NULL when it is not a well-delimited
 * object. (element-type MsdJsonDelimitMember) */
GArray *msd_json_delimit_members(const gchar *data, gsize length, gsize pos);

typedef struct {
	gsize start;
	gsize end;
} MsdJsonDelimitSpan;

/* The elements of the array starting at @pos; NULL when it is not a well-delimited array.
 * (element-type MsdJsonDelimitSpan) */
GArray *msd_json_delimit_elements(const gchar *data, gsize length, gsize pos);

G_END_DECLS
