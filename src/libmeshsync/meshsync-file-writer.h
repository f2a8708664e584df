/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#if !defined(__MESHSYNC_H_INSIDE__) && !defined(MESHSYNC_COMPILATION)
#error "Only <libmeshsync/meshsync.h> can be included directly."
#endif

#include <gio/gio.h>

#include "meshsync-version.h"
#include "meshsync-writer.h"

G_BEGIN_DECLS

#define MESHSYNC_TYPE_FILE_WRITER (meshsync_file_writer_get_type())
MESHSYNC_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE(MeshSyncFileWriter, meshsync_file_writer, MESHSYNC, FILE_WRITER, GObject)

MESHSYNC_AVAILABLE_IN_ALL
MeshSyncFileWriter *meshsync_file_writer_new(const gchar *path, gboolean extended, GError **error);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_file_writer_get_path(MeshSyncFileWriter *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_file_writer_get_extended_path(MeshSyncFileWriter *self);
MESHSYNC_AVAILABLE_IN_ALL
guint meshsync_file_writer_get_n_documents(MeshSyncFileWriter *self);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_file_writer_remove_if_unused(MeshSyncFileWriter *self);
MESHSYNC_AVAILABLE_IN_ALL
gchar *meshsync_file_writer_make_default_path(const gchar *directory, GError **error);

G_END_DECLS
