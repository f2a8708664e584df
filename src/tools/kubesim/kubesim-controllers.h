/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "kubesim-store.h"

G_BEGIN_DECLS

/*
 * What the ReplicaSet and Deployment controllers write while churn changes pods: the status
 * counts of a ReplicaSet follow its pods (replicas, fullyLabeledReplicas, readyReplicas,
 * availableReplicas), and a Deployment's those of its ReplicaSets (replicas, updatedReplicas,
 * readyReplicas, availableReplicas, unavailableReplicas and its Available condition). Each
 * owner is written at most once per sync interval, as a controller's work queue coalesces the
 * changes of its pods, and only when its status changed. Owners are known by the ownerReferences
 * kubesim's generator and churn write.
 */
typedef struct _KubesimControllers KubesimControllers;

KubesimControllers *kubesim_controllers_new(KubesimStore *store);
void kubesim_controllers_free(KubesimControllers *ctrl);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(KubesimControllers, kubesim_controllers_free)

/* A pod changed: @before as it was (NULL: created), @after as it is (NULL: deleted). */
void kubesim_controllers_pod_changed(KubesimControllers *ctrl,
                                     KubesimObject *before,
                                     KubesimObject *after);

/* Writes the owners whose pods changed and that were not written in the last @interval
 * seconds; @now in unix seconds. */
void kubesim_controllers_sync(KubesimControllers *ctrl, gint64 now, gint64 interval);

G_END_DECLS
