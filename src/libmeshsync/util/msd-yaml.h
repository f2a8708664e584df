/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <json-glib/json-glib.h>
#include <yaml.h>

G_BEGIN_DECLS

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(yaml_parser_t, yaml_parser_delete)
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(yaml_event_t, yaml_event_delete)

/*
 * Parses every document of a YAML (or JSON, which is YAML) stream into JSON trees, so that the
 * rest of the code has one tree type. Plain scalars follow the YAML 1.2 core schema (null,
 * true/false, integers, floats); quoted scalars are strings. Anchors and aliases are refused.
 * Empty documents are skipped.
 *
 * @origin names the input in errors, which read "ORIGIN:LINE:COLUMN: problem".
 *
 * Returns: (element-type JsonNode) (transfer full): the documents, possibly none.
 */
GPtrArray *
msd_yaml_parse_documents(const gchar *data, gsize length, const gchar *origin, GError **error);

/* The same for exactly one document: an empty stream gives an error naming @origin. */
JsonNode *
msd_yaml_parse_document(const gchar *data, gsize length, const gchar *origin, GError **error);

G_END_DECLS
