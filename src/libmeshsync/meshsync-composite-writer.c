/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncOutput"

#include "config.h"

#include "meshsync-composite-writer.h"
#include "meshsync-error.h"

/**
 * MeshSyncCompositeWriter:
 *
 * Hands every event to several writers in the order they were added (`-output
 * broker,file`). Every writer gets every event even when an earlier one fails; the first
 * error is returned. It is writable when all its writers are.
 */

struct _MeshSyncCompositeWriter {
	GObject parent_instance;

	GPtrArray *writers; /* (owned) (element-type MeshSyncWriter) */
};

static void meshsync_composite_writer_iface_init(MeshSyncWriterInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(MeshSyncCompositeWriter,
                              meshsync_composite_writer,
                              G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(MESHSYNC_TYPE_WRITER,
                                                    meshsync_composite_writer_iface_init))

typedef gboolean (*MeshSyncWriterCall)(MeshSyncWriter *writer,
                                       MeshSyncResource *resource,
                                       MeshSyncEventType event_type,
                                       GError **error);

static gboolean
meshsync_composite_writer_call_write(MeshSyncWriter *writer,
                                     MeshSyncResource *resource,
                                     MeshSyncEventType event_type,
                                     GError **error)
{
	return meshsync_writer_write(writer, resource, event_type, error);
}

static gboolean
meshsync_composite_writer_call_flush(MeshSyncWriter *writer,
                                     MeshSyncResource *resource,
                                     MeshSyncEventType event_type,
                                     GError **error)
{
	return meshsync_writer_flush(writer, error);
}

static gboolean
meshsync_composite_writer_call_close(MeshSyncWriter *writer,
                                     MeshSyncResource *resource,
                                     MeshSyncEventType event_type,
                                     GError **error)
{
	return meshsync_writer_close(writer, error);
}

static gboolean
meshsync_composite_writer_each(MeshSyncCompositeWriter *self,
                               MeshSyncWriterCall call,
                               MeshSyncResource *resource,
                               MeshSyncEventType event_type,
                               GError **error)
{
	GError *first = NULL;

	for (guint i = 0; i < self->writers->len; i++) {
		GError *local_error = NULL;

		if (!call(g_ptr_array_index(self->writers, i), resource, event_type,
		          &local_error)) {
			/* A write error ends the run; it must not hide behind a transient one. */
			if (first == NULL ||
			    (g_error_matches(local_error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE) &&
			     !g_error_matches(first, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE))) {
				g_clear_error(&first);
				first = local_error;
			} else {
				g_error_free(local_error);
			}
		}
	}
	if (first != NULL) {
		g_propagate_error(error, first);
		return FALSE;
	}
	return TRUE;
}

static gboolean
meshsync_composite_writer_write(MeshSyncWriter *writer,
                                MeshSyncResource *resource,
                                MeshSyncEventType event_type,
                                GError **error)
{
	return meshsync_composite_writer_each(MESHSYNC_COMPOSITE_WRITER(writer),
	                                      meshsync_composite_writer_call_write, resource,
	                                      event_type, error);
}

static gboolean
meshsync_composite_writer_flush(MeshSyncWriter *writer, GError **error)
{
	return meshsync_composite_writer_each(MESHSYNC_COMPOSITE_WRITER(writer),
	                                      meshsync_composite_writer_call_flush, NULL, 0, error);
}

static gboolean
meshsync_composite_writer_close(MeshSyncWriter *writer, GError **error)
{
	return meshsync_composite_writer_each(MESHSYNC_COMPOSITE_WRITER(writer),
	                                      meshsync_composite_writer_call_close, NULL, 0, error);
}

static gboolean
meshsync_composite_writer_is_writable(MeshSyncWriter *writer)
{
	MeshSyncCompositeWriter *self = MESHSYNC_COMPOSITE_WRITER(writer);

	for (guint i = 0; i < self->writers->len; i++) {
		if (!meshsync_writer_is_writable(g_ptr_array_index(self->writers, i)))
			return FALSE;
	}
	return TRUE;
}

static void
meshsync_composite_writer_child_writable_cb(MeshSyncWriter *child, MeshSyncCompositeWriter *self)
{
	meshsync_writer_writable_changed(MESHSYNC_WRITER(self));
}

static void
meshsync_composite_writer_iface_init(MeshSyncWriterInterface *iface)
{
	iface->is_writable = meshsync_composite_writer_is_writable;
	iface->write = meshsync_composite_writer_write;
	iface->flush = meshsync_composite_writer_flush;
	iface->close = meshsync_composite_writer_close;
}

static void
meshsync_composite_writer_finalize(GObject *object)
{
	MeshSyncCompositeWriter *self = MESHSYNC_COMPOSITE_WRITER(object);

	g_ptr_array_unref(self->writers);
	G_OBJECT_CLASS(meshsync_composite_writer_parent_class)->finalize(object);
}

static void
meshsync_composite_writer_class_init(MeshSyncCompositeWriterClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = meshsync_composite_writer_finalize;
}

static void
meshsync_composite_writer_init(MeshSyncCompositeWriter *self)
{
	self->writers = g_ptr_array_new_with_free_func(g_object_unref);
}

/**
 * meshsync_composite_writer_new:
 *
 * Creates a writer that forwards to none yet; add writers with
 * [method@MeshSync.CompositeWriter.add].
 *
 * Returns: (transfer full): a new writer
 */
MeshSyncCompositeWriter *
meshsync_composite_writer_new(void)
{
	return g_object_new(MESHSYNC_TYPE_COMPOSITE_WRITER, NULL);
}

/**
 * meshsync_composite_writer_add:
 * @self: a #MeshSyncCompositeWriter
 * @writer: a writer to forward to, after those added before
 *
 * Adds a writer.
 */
void
meshsync_composite_writer_add(MeshSyncCompositeWriter *self, MeshSyncWriter *writer)
{
	g_return_if_fail(MESHSYNC_IS_COMPOSITE_WRITER(self));
	g_return_if_fail(MESHSYNC_IS_WRITER(writer));
	g_return_if_fail(writer != MESHSYNC_WRITER(self));

	g_ptr_array_add(self->writers, g_object_ref(writer));
	g_signal_connect_object(writer, "writable-changed",
	                        G_CALLBACK(meshsync_composite_writer_child_writable_cb), self, 0);
}

/**
 * meshsync_composite_writer_get_n_writers:
 * @self: a #MeshSyncCompositeWriter
 *
 * Counts the writers events are forwarded to.
 *
 * Returns: the count
 */
guint
meshsync_composite_writer_get_n_writers(MeshSyncCompositeWriter *self)
{
	g_return_val_if_fail(MESHSYNC_IS_COMPOSITE_WRITER(self), 0);
	return self->writers->len;
}
