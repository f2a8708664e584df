/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "kube/msd-kube-client.h"
#include "meshsync-session.h"

G_BEGIN_DECLS

/* Shares @client (one HTTP session for every session of a service) instead of making one
 * at start. Before starting. */
void meshsync_session_set_client(MeshSyncSession *self, MsdKubeClient *client);

/* How long the opening (an exec's pod lookup and WebSocket upgrade, a log's request) may take
 * before the session ends with MESHSYNC_ERROR_TIMED_OUT naming the pod; 0: no deadline. On a
 * shared client a request can wait behind others, or on a server that never answers, far
 * longer than the client's I/O timeout would notice. Generous by default: a burst of 25 execs
 * under valgrind on a loaded 2-core machine took over 30 s for its last openings. Before
 * starting. */
#define MESHSYNC_SESSION_OPEN_TIMEOUT_MS (120 * 1000)
void meshsync_session_set_open_timeout(MeshSyncSession *self, guint milliseconds);

G_END_DECLS
