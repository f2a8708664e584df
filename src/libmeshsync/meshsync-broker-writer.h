/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#if !defined(__MESHSYNC_H_INSIDE__) && !defined(MESHSYNC_COMPILATION)
#error "Only <libmeshsync/meshsync.h> can be included directly."
#endif

#include <gio/gio.h>

#include "meshsync-broker.h"
#include "meshsync-version.h"
#include "meshsync-writer.h"

G_BEGIN_DECLS

/**
 * MESHSYNC_SUBJECT_CORE:
 *
 * The subject resource events are published on.
 */
#define MESHSYNC_SUBJECT_CORE "meshery.meshsync.core"

#define MESHSYNC_TYPE_BROKER_WRITER (meshsync_broker_writer_get_type())
MESHSYNC_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE(MeshSyncBrokerWriter, meshsync_broker_writer, MESHSYNC, BROKER_WRITER, GObject)

MESHSYNC_AVAILABLE_IN_ALL
MeshSyncBrokerWriter *meshsync_broker_writer_new(MeshSyncBroker *broker, const gchar *subject);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_broker_writer_set_content_dedup(MeshSyncBrokerWriter *self, gboolean enabled);
MESHSYNC_AVAILABLE_IN_ALL
guint64 meshsync_broker_writer_get_n_published(MeshSyncBrokerWriter *self);
MESHSYNC_AVAILABLE_IN_ALL
guint64 meshsync_broker_writer_get_n_oversize(MeshSyncBrokerWriter *self);
MESHSYNC_AVAILABLE_IN_ALL
guint64 meshsync_broker_writer_get_n_errors(MeshSyncBrokerWriter *self);

G_END_DECLS
