/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "meshsync-writer.h"

G_BEGIN_DECLS

/* A writer that records what it is given ("<EVENT> <name>") and can be told to refuse. */
#define TEST_TYPE_WRITER (test_writer_get_type())
G_DECLARE_FINAL_TYPE(TestWriter, test_writer, TEST, WRITER, GObject)

struct _TestWriter {
	GObject parent_instance;

	GPtrArray *written;  /* (element-type utf8): "<type> <name>" */
	GPtrArray *uids;     /* (element-type utf8): the uid of each written event */
	GPtrArray *versions; /* (element-type utf8): the resourceVersion of each one */
	gboolean writable;
	gboolean disk_full;   /* every write fails with MESHSYNC_ERROR_WRITE */
	gboolean refuse_next; /* the next write is refused and the writer turns unwritable */
	guint attempts;
	guint flushes;
};

TestWriter *test_writer_new(void);
/* Changes writability and says so, as a broker does. */
void test_writer_set_writable(TestWriter *self, gboolean writable);

G_END_DECLS
