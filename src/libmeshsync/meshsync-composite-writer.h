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

#define MESHSYNC_TYPE_COMPOSITE_WRITER (meshsync_composite_writer_get_type())
MESHSYNC_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE(
        MeshSyncCompositeWriter, meshsync_composite_writer, MESHSYNC, COMPOSITE_WRITER, GObject)

MESHSYNC_AVAILABLE_IN_ALL
MeshSyncCompositeWriter *meshsync_composite_writer_new(void);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_composite_writer_add(MeshSyncCompositeWriter *self, MeshSyncWriter *writer);
MESHSYNC_AVAILABLE_IN_ALL
guint meshsync_composite_writer_get_n_writers(MeshSyncCompositeWriter *self);

G_END_DECLS
