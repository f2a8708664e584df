/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

#include "util/msd-json-tokens.h"

G_BEGIN_DECLS

/*
 * Output JSON in the byte form Go's encoding/json gives a decoded unstructured Kubernetes
 * object (map[string]interface{}): compact, object keys sorted bytewise and unique,
 * `<` `>` `&` U+2028 U+2029 and control characters escaped, numbers as Go prints the int64 or
 * float64 that Kubernetes' decoder made of them.
 */

/* A JSON string literal of arbitrary bytes, as Go's encoder writes a string (invalid UTF-8
 * bytes become the six characters \ufffd). @len may be -1 for a NUL-terminated string. */
void msd_json_append_string(GString *out, const gchar *s, gssize len);

/* The same without the surrounding quotes. */
void msd_json_append_escaped(GString *out, const gchar *s, gssize len);

/* A JSON number in Go's form; @text must be a valid JSON number whose value fits a float64
 * (msd_json_tokens_parse() guarantees both). */
void msd_json_append_number(GString *out, const gchar *text, gsize len);

/* Go's formatting of a float64 in encoding/json ('f' form, 'e' form below 1e-6 and from 1e21). */
void msd_json_append_double(GString *out, gdouble v);

/* The canonical serialization of the value at token @idx and everything under it. */
void msd_json_write_value(GString *out, const MsdJsonTokens *doc, gint idx);

/*
 * What upstream's byte scanner returns for a value of the canonical serialization: the
 * characters between the quotes for a string (still escaped: `a"b` gives `a\"b`), nothing for
 * null, the canonical text for anything else.
 */
void msd_json_write_raw(GString *out, const MsdJsonTokens *doc, gint idx);

/* msd_json_write_raw() as it reads between the quotes of a JSON string (what
 * msd_json_append_escaped() would make of it), in one pass: how the wire carries it. */
void msd_json_write_raw_nested(GString *out, const MsdJsonTokens *doc, gint idx);

/* The body of string token @idx as msd_json_write_raw() writes it: also what
 * msd_json_append_escaped() makes of the decoded string. */
void msd_json_write_string_body(GString *out, const MsdJsonTokens *doc, gint idx);

/* The members of an object sorted by decoded key (byte order, then length), duplicates
 * resolved as Go's map decoding does (the last wins), without allocating for objects of up to
 * MSD_JSON_MEMBERS_LOCAL members: this runs for every object of every event. Clear with
 * msd_json_members_clear(). */
#define MSD_JSON_MEMBERS_LOCAL 16

typedef struct {
	MsdJsonMember *m; /* sorted members: @local or a heap array */
	gint n;
	MsdJsonMember local[MSD_JSON_MEMBERS_LOCAL];
} MsdJsonMembers;

void msd_json_members_init_sorted(MsdJsonMembers *members, const MsdJsonTokens *doc, gint object);
void msd_json_members_clear(MsdJsonMembers *members);

/* Parse @js and return its canonical serialization. */
gchar *msd_json_canonicalize(const gchar *js, gssize len, GError **error);

G_END_DECLS
