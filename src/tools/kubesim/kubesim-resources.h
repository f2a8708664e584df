/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "kubesim-store.h"

G_BEGIN_DECLS

/* Registers the built-in types. */
void kubesim_resources_install(KubesimStore *store);
/* Creates the objects every cluster has: the default namespaces (with new uids each time) and
 * the MeshSync CustomResourceDefinition. */
void kubesim_resources_install_objects(KubesimStore *store);

G_END_DECLS
