/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "meshsync-broker.h"

G_BEGIN_DECLS

void meshsync_broker_set_reconnect_buffer_size(MeshSyncBroker *self, gsize bytes);

/* The write-buffer marks of the writable property (4 MiB and 1 MiB by default). */
void meshsync_broker_set_write_buffer_marks(MeshSyncBroker *self, gsize high, gsize low);

/* Whether meshsync_broker_publish() takes @subject. */
gboolean meshsync_broker_subject_is_valid(const gchar *subject);

/* meshsync_broker_publish() for a caller that checked the subject with
 * meshsync_broker_subject_is_valid() and the size against meshsync_broker_get_max_payload()
 * itself: neither is checked again. Connection errors are reported as publish reports them. */
gboolean meshsync_broker_publish_unchecked(MeshSyncBroker *self,
                                           const gchar *subject,
                                           gconstpointer data,
                                           gsize length,
                                           GError **error);
gboolean meshsync_broker_drain_output(MeshSyncBroker *self, guint timeout_ms, GError **error);

G_END_DECLS
