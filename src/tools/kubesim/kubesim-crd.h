/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "kubesim-store.h"

G_BEGIN_DECLS

/* Serves the versions a new CustomResourceDefinition declares. */
void kubesim_crd_register(KubesimStore *store, KubesimObject *crd);
/* Stops serving them and drops their objects. */
void kubesim_crd_unregister(KubesimStore *store, KubesimObject *crd);

G_END_DECLS
