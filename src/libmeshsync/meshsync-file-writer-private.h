/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "meshsync-file-writer.h"

G_BEGIN_DECLS

/* Whether the snapshot holds the object @uid already: a later event of it is not written to
 * the snapshot (the extended file, when there is one, still takes it). */
gboolean meshsync_file_writer_has_object(MeshSyncFileWriter *self, const gchar *uid);

G_END_DECLS
