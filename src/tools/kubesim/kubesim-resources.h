/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "kubesim-store.h"

G_BEGIN_DECLS

/* Registers the built-in types, then the objects every cluster has (default namespaces, the
 * MeshSync CustomResourceDefinition). */
void kubesim_resources_install(KubesimStore *store);

G_END_DECLS
