/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#if !defined(__MESHSYNC_H_INSIDE__) && !defined(MESHSYNC_COMPILATION)
#error "Only <libmeshsync/meshsync.h> can be included directly."
#endif

#include <gio/gio.h>

#include "meshsync-handler.h"
#include "meshsync-version.h"

G_BEGIN_DECLS

MESHSYNC_AVAILABLE_IN_ALL
GPtrArray *meshsync_handler_dup_store(MeshSyncHandler *self);

G_END_DECLS
