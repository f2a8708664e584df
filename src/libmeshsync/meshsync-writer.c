/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include "meshsync-writer.h"

/**
 * MeshSyncWriter:
 *
 * Where resource events go: a YAML snapshot ([class@MeshSync.FileWriter]), NATS, several
 * outputs at once ([class@MeshSync.CompositeWriter]), or any object that implements this
 * interface, in C, Python or Vala.
 *
 * A writer is called on the engine's main context, one event at a time, in the order the
 * events happened for each resource type. An error from [method@MeshSync.Writer.write] means
 * the event was not taken: the engine logs it and, for outputs that must be complete (the
 * snapshot file), ends the run.
 */

G_DEFINE_INTERFACE(MeshSyncWriter, meshsync_writer, G_TYPE_OBJECT)

static gboolean
meshsync_writer_real_flush(MeshSyncWriter *self, GError **error)
{
	return TRUE;
}

static gboolean
meshsync_writer_real_close(MeshSyncWriter *self, GError **error)
{
	return meshsync_writer_flush(self, error);
}

static void
meshsync_writer_default_init(MeshSyncWriterInterface *iface)
{
	iface->flush = meshsync_writer_real_flush;
	iface->close = meshsync_writer_real_close;
}

/**
 * meshsync_writer_write:
 * @self: a #MeshSyncWriter
 * @resource: the resource in its canonical shape
 * @event_type: what happened to it
 * @error: return location for a #GError
 *
 * Hands one event to the output.
 *
 * Returns: %TRUE if the output took the event
 */
gboolean
meshsync_writer_write(MeshSyncWriter *self,
                      MeshSyncResource *resource,
                      MeshSyncEventType event_type,
                      GError **error)
{
	MeshSyncWriterInterface *iface;

	g_return_val_if_fail(MESHSYNC_IS_WRITER(self), FALSE);
	g_return_val_if_fail(MESHSYNC_IS_RESOURCE(resource), FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	iface = MESHSYNC_WRITER_GET_IFACE(self);
	g_return_val_if_fail(iface->write != NULL, FALSE);
	return iface->write(self, resource, event_type, error);
}

/**
 * meshsync_writer_flush:
 * @self: a #MeshSyncWriter
 * @error: return location for a #GError
 *
 * Makes everything written so far durable: buffered bytes reach the file, pending messages
 * reach the broker. The default implementation does nothing.
 *
 * Returns: %TRUE on success
 */
gboolean
meshsync_writer_flush(MeshSyncWriter *self, GError **error)
{
	g_return_val_if_fail(MESHSYNC_IS_WRITER(self), FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	return MESHSYNC_WRITER_GET_IFACE(self)->flush(self, error);
}

/**
 * meshsync_writer_close:
 * @self: a #MeshSyncWriter
 * @error: return location for a #GError
 *
 * Flushes the output and releases it; nothing may be written afterwards. The default
 * implementation flushes.
 *
 * Returns: %TRUE on success
 */
gboolean
meshsync_writer_close(MeshSyncWriter *self, GError **error)
{
	g_return_val_if_fail(MESHSYNC_IS_WRITER(self), FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	return MESHSYNC_WRITER_GET_IFACE(self)->close(self, error);
}
