/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "kubesim-store.h"

G_BEGIN_DECLS

typedef struct _KubesimChurn KubesimChurn;

/*
 * Keeps changing pods at @events_per_second: modifies, creates (through the workload
 * generator's pod builder) and deletes, in batches on a 100 ms timer. @controllers: the
 * ReplicaSets and Deployments owning the pods follow them, once a second at most each (see
 * kubesim-controllers.h); their events come on top of @events_per_second.
 */
KubesimChurn *kubesim_churn_new(KubesimStore *store,
                                gdouble events_per_second,
                                guint32 seed,
                                gboolean controllers);
void kubesim_churn_free(KubesimChurn *churn);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(KubesimChurn, kubesim_churn_free)

G_END_DECLS
