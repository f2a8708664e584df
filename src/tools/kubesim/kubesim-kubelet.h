/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "kubesim-store.h"
#include "util/msd-json-tokens.h"

G_BEGIN_DECLS

/* Splices for kubesim_store_modify() and the text they point into. */
typedef struct {
	GArray *splices; /* KubesimSplice, kept in offset order by kubesim_edits_sort() */
	GString *text;
	MsdJsonTokens tokens; /* reused from one pod to the next */
} KubesimEdits;

void kubesim_edits_init(KubesimEdits *edits);
void kubesim_edits_clear(KubesimEdits *edits);
void kubesim_edits_reset(KubesimEdits *edits);

/*
 * What churn's simulated kubelet does to a pod on its next status update, as splices into the
 * stored JSON (the status, and the time and fieldsV1 of the kubelet's managedFields entry):
 * - Pending (containers being created): it starts them; Running and Ready.
 * - Running and ready: the application container crashes (restartCount + 1, lastState
 *   terminated, state waiting in CrashLoopBackOff); the pod is no longer Ready.
 * - Running, that container waiting: it runs again under a new container ID; Ready.
 * Changed conditions and the entry get @now. FALSE when @pod is not shaped the way kubesim
 * generates pods (the caller then only bumps its resourceVersion).
 */
gboolean kubesim_kubelet_update(KubesimObject *pod, gint64 now, GRand *rand, KubesimEdits *edits);

G_END_DECLS
