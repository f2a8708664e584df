/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#if !defined(__MESHSYNC_H_INSIDE__) && !defined(MESHSYNC_COMPILATION)
#error "Only <libmeshsync/meshsync.h> can be included directly."
#endif

#include <gio/gio.h>

#include "meshsync-event-type.h"
#include "meshsync-resource.h"
#include "meshsync-version.h"

G_BEGIN_DECLS

#define MESHSYNC_TYPE_WRITER (meshsync_writer_get_type())
MESHSYNC_AVAILABLE_IN_ALL
G_DECLARE_INTERFACE(MeshSyncWriter, meshsync_writer, MESHSYNC, WRITER, GObject)

/**
 * MeshSyncWriterInterface:
 * @g_iface: the parent interface
 * @write: hands one resource event to the output; see [method@MeshSync.Writer.write]
 * @flush: makes everything written so far durable; see [method@MeshSync.Writer.flush]
 * @close: flushes and releases the output; see [method@MeshSync.Writer.close]
 * @is_writable: whether the output takes events now; see [method@MeshSync.Writer.is_writable]
 *
 * The virtual methods of a [iface@MeshSync.Writer]. Python and Vala classes implement them
 * as `do_write`, `do_flush` and `do_close`.
 */
struct _MeshSyncWriterInterface {
	GTypeInterface g_iface;

	gboolean (*write)(MeshSyncWriter *self,
	                  MeshSyncResource *resource,
	                  MeshSyncEventType event_type,
	                  GError **error);
	gboolean (*flush)(MeshSyncWriter *self, GError **error);
	gboolean (*close)(MeshSyncWriter *self, GError **error);
	gboolean (*is_writable)(MeshSyncWriter *self);
};

MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_writer_write(MeshSyncWriter *self,
                               MeshSyncResource *resource,
                               MeshSyncEventType event_type,
                               GError **error);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_writer_flush(MeshSyncWriter *self, GError **error);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_writer_close(MeshSyncWriter *self, GError **error);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_writer_is_writable(MeshSyncWriter *self);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_writer_writable_changed(MeshSyncWriter *self);

G_END_DECLS
