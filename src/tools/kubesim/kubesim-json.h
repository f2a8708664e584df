/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <json-glib/json-glib.h>

#include "util/msd-json-string.h"
#include "util/msd-json-tokens.h"

G_BEGIN_DECLS

/*
 * JSON helpers of the simulator. Stored objects stay compact JSON text and are read with the
 * project's tokenizer (msd-json-tokens.h); strings are written with its string writer
 * (msd-json-string.h), in Go's mode wherever the simulator answers as the API server would.
 * Trees are written by our own writer because json-glib 1.6's generator can emit invalid JSON
 * for some numbers and control characters.
 */

/* Appends @node as compact JSON (members in their order, strings escaped as @mode says,
 * doubles in their shortest round-trip form). FALSE when the tree holds a value JSON cannot
 * represent (infinity, NaN), which is written as null. */
gboolean kubesim_json_append_node(GString *out, JsonNode *node, MsdJsonStringMode mode);
GBytes *kubesim_json_node_to_bytes(JsonNode *node);
/* Removes whitespace outside strings. */
GBytes *kubesim_json_compact(const gchar *js, gsize len);
/* Compact JSON indented as Go's json.MarshalIndent(v, "", "  ") writes it: a member or
 * element a line, "key": value, empty objects and arrays left as {} and []. */
gchar *kubesim_json_indent(const gchar *compact);

/* Parses a JSON text into a tree (small documents only: request bodies); NULL on error. */
JsonNode *kubesim_json_parse(const gchar *js, gsize len, GError **error);

G_END_DECLS
