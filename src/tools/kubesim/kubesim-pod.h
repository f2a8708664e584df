/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "kubesim-store.h"

G_BEGIN_DECLS

/*
 * What pod logs and exec need to know of a pod, read from its stored JSON: its containers in
 * spec order and what the kubelet reported of each.
 */
typedef struct {
	gchar *name;
	gchar *image;
	gchar **env; /* "NAME=value" of its literal env entries, spec order */
	/* status.*ContainerStatuses; NULL and 0 when the pod reports none for it */
	gchar *state; /* "running", "waiting" or "terminated" */
	gchar *waiting_reason;
	gchar *container_id; /* of the running or terminated container */
	gint64 started_at;   /* µs since the epoch */
	gint64 finished_at;  /* of a terminated container */
	gchar *last_id;      /* lastState.terminated: the previous instance */
	gint64 last_started_at;
	gint64 last_finished_at;
	gint last_exit_code;
	gchar *last_reason;
	guint restart_count;
} KubesimContainer;

typedef struct {
	gchar *namespace_;
	gchar *name;
	gchar *uid;
	gchar *phase;
	gchar *hostname; /* spec.hostname, else the pod's name */
	gint64 created;  /* µs since the epoch */
	GPtrArray *containers;
	GPtrArray *init_containers;
	GPtrArray *ephemeral_containers;
} KubesimPod;

KubesimPod *kubesim_pod_new(KubesimObject *obj);
/* The pod @ns/@name of @store, or NULL and its 404 Status. */
KubesimPod *
kubesim_pod_lookup(KubesimStore *store, const gchar *ns, const gchar *name, KubesimStatus **status);
void kubesim_pod_free(KubesimPod *pod);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(KubesimPod, kubesim_pod_free)

/*
 * The container @name (any kind) or, when @name is NULL or empty, the only one; else NULL and
 * the 400 the API server gives ("a container name must be specified for pod X, choose one of:
 * [a b]", "container foo is not valid for pod X").
 */
KubesimContainer *
kubesim_pod_pick_container(KubesimPod *pod, const gchar *name, KubesimStatus **status);

/* The identity of the container's current instance: its container ID, or one made up from the
 * pod's uid when the pod reports no status for it. */
gchar *kubesim_container_current_id(KubesimPod *pod, KubesimContainer *c);

G_END_DECLS
