/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include "meshsync-error.h"
#include "test-writer-fake.h"

static void test_writer_iface_init(MeshSyncWriterInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(TestWriter,
                              test_writer,
                              G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(MESHSYNC_TYPE_WRITER, test_writer_iface_init))

static gboolean
test_writer_write(MeshSyncWriter *writer,
                  MeshSyncResource *resource,
                  MeshSyncEventType event_type,
                  GError **error)
{
	TestWriter *self = TEST_WRITER(writer);

	self->attempts++;
	if (self->disk_full) {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE,
		                    "test.yaml: No space left on device");
		return FALSE;
	}
	if (self->refuse_next) {
		self->refuse_next = FALSE;
		self->writable = FALSE;
	}
	if (!self->writable) {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		                    "the broker is away and its buffer is full");
		return FALSE;
	}
	g_ptr_array_add(self->written,
	                g_strdup_printf("%s %s", meshsync_event_type_to_string(event_type),
	                                meshsync_resource_get_name(resource)));
	g_ptr_array_add(self->uids, g_strdup(meshsync_resource_get_uid(resource)));
	g_ptr_array_add(self->versions, g_strdup(meshsync_resource_get_resource_version(resource)));
	return TRUE;
}

static gboolean
test_writer_flush(MeshSyncWriter *writer, GError **error)
{
	TEST_WRITER(writer)->flushes++;
	return TRUE;
}

static gboolean
test_writer_close(MeshSyncWriter *writer, GError **error)
{
	return TRUE;
}

static gboolean
test_writer_is_writable(MeshSyncWriter *writer)
{
	return TEST_WRITER(writer)->writable;
}

static void
test_writer_iface_init(MeshSyncWriterInterface *iface)
{
	iface->write = test_writer_write;
	iface->flush = test_writer_flush;
	iface->close = test_writer_close;
	iface->is_writable = test_writer_is_writable;
}

static void
test_writer_finalize(GObject *object)
{
	g_ptr_array_unref(TEST_WRITER(object)->written);
	g_ptr_array_unref(TEST_WRITER(object)->uids);
	g_ptr_array_unref(TEST_WRITER(object)->versions);
	G_OBJECT_CLASS(test_writer_parent_class)->finalize(object);
}

static void
test_writer_class_init(TestWriterClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = test_writer_finalize;
}

static void
test_writer_init(TestWriter *self)
{
	self->written = g_ptr_array_new_with_free_func(g_free);
	self->uids = g_ptr_array_new_with_free_func(g_free);
	self->versions = g_ptr_array_new_with_free_func(g_free);
	self->writable = TRUE;
}

void
test_writer_set_writable(TestWriter *self, gboolean writable)
{
	self->writable = writable;
	meshsync_writer_writable_changed(MESHSYNC_WRITER(self));
}

TestWriter *
test_writer_new(void)
{
	return g_object_new(TEST_TYPE_WRITER, NULL);
}
