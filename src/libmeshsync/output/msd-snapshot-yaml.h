/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

#include "meshsync-resource.h"
#include "output/msd-snapshot-emitter.h"

G_BEGIN_DECLS

/*
 * Converts one resource in its JSON wire shape into the YAML document upstream's snapshot
 * holds (sigs.k8s.io/yaml over go-yaml v2): mapping keys in go-yaml v2's sort order, block
 * style, strings quoted exactly where a plain scalar would read back as another type (null,
 * booleans, numbers, timestamps), multi-line strings as literal blocks, 80-column folding.
 * Appends the document and the "---\n" that follows every document to @out.
 */
gboolean msd_snapshot_yaml_append(GString *out, const gchar *json, gsize length, GError **error);

/* The same document written through libyaml's emitter, whose output the block writer that
 * msd_snapshot_yaml_append() uses reproduces: for tests that compare the two. */
gboolean
msd_snapshot_yaml_append_reference(GString *out, const gchar *json, gsize length, GError **error);

/* The document of @resource, byte for byte what msd_snapshot_yaml_append() makes of its wire
 * JSON, made from the resource's fields without writing or reading any JSON. @buffers
 * (nullable): the caller's, kept from one document to the next. */
gboolean msd_snapshot_yaml_append_resource(GString *out,
                                           MeshSyncResource *resource,
                                           MsdSnapshotBuffers *buffers,
                                           GError **error);

/* The extended file's record of one event, {"EventType": ..., "Object": <resource>}, as
 * msd_snapshot_yaml_append() makes it of that JSON. */
gboolean msd_snapshot_yaml_append_record(GString *out,
                                         MeshSyncResource *resource,
                                         MeshSyncEventType event_type,
                                         MsdSnapshotBuffers *buffers,
                                         GError **error);

/* go-yaml v2's key order: runes compared one by one; a non-letter sorts before a letter, and
 * runs of digits compare by their value. Exposed for tests. */
gint msd_snapshot_yaml_compare_keys(const gchar *a, const gchar *b);

/* Whether go-yaml v2 would read @text, written as a plain scalar, as something other than a
 * string (and so quotes it). Exposed for tests. */
gboolean msd_snapshot_yaml_plain_retypes(const gchar *text);

G_END_DECLS
