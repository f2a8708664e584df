/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "meshsync-discovery.h"
#include "kube/msd-kube-client.h"

G_BEGIN_DECLS

/* A discovery that shares the engine's client (one HTTP session per API server). */
MeshSyncDiscovery *meshsync_discovery_new_for_client(MsdKubeClient *client);

G_END_DECLS
