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

G_END_DECLS
