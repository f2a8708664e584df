/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncOutput"

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
 *
 * An output that can fall behind (a broker whose connection is down and whose buffer is
 * full) answers %FALSE from [method@MeshSync.Writer.is_writable]; the engine then stops
 * reading from the API server, holding events back instead of dropping them, until the
 * writer emits [signal@MeshSync.Writer::writable-changed] and is writable again.
 */

enum {
	SIGNAL_WRITABLE_CHANGED,
	N_SIGNALS,
};

static guint signals[N_SIGNALS];

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

static gboolean
meshsync_writer_real_is_writable(MeshSyncWriter *self)
{
	return TRUE;
}

static void
meshsync_writer_default_init(MeshSyncWriterInterface *iface)
{
	iface->flush = meshsync_writer_real_flush;
	iface->close = meshsync_writer_real_close;
	iface->is_writable = meshsync_writer_real_is_writable;

	/**
	 * MeshSyncWriter::writable-changed:
	 * @self: the writer
	 *
	 * Emitted by a writer when [method@MeshSync.Writer.is_writable] may have changed.
	 */
	signals[SIGNAL_WRITABLE_CHANGED] =
	        g_signal_new("writable-changed", G_TYPE_FROM_INTERFACE(iface), G_SIGNAL_RUN_LAST, 0,
	                     NULL, NULL, NULL, G_TYPE_NONE, 0);
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

/**
 * meshsync_writer_is_writable:
 * @self: a #MeshSyncWriter
 *
 * Tells whether the output takes events now. The default implementation always does.
 *
 * Returns: %TRUE if [method@MeshSync.Writer.write] may be called
 */
gboolean
meshsync_writer_is_writable(MeshSyncWriter *self)
{
	g_return_val_if_fail(MESHSYNC_IS_WRITER(self), FALSE);

	return MESHSYNC_WRITER_GET_IFACE(self)->is_writable(self);
}

/**
 * meshsync_writer_writable_changed:
 * @self: a #MeshSyncWriter
 *
 * Emits [signal@MeshSync.Writer::writable-changed]; for implementations of the interface.
 */
void
meshsync_writer_writable_changed(MeshSyncWriter *self)
{
	g_return_if_fail(MESHSYNC_IS_WRITER(self));

	g_signal_emit(self, signals[SIGNAL_WRITABLE_CHANGED], 0);
}
