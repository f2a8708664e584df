/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "meshsync-broker.h"

G_BEGIN_DECLS

void meshsync_broker_set_reconnect_buffer_size(MeshSyncBroker *self, gsize bytes);
gboolean meshsync_broker_drain_output(MeshSyncBroker *self, guint timeout_ms, GError **error);

G_END_DECLS
