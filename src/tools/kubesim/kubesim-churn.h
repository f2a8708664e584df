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
 * generator's pod builder) and deletes, in batches on a 100 ms timer.
 */
KubesimChurn *kubesim_churn_new(KubesimStore *store, gdouble events_per_second, guint32 seed);
void kubesim_churn_free(KubesimChurn *churn);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(KubesimChurn, kubesim_churn_free)

G_END_DECLS
