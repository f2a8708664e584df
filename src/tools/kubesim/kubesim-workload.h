/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/*
 * Where the workload generator and the manifest loader hand each object: compact JSON bytes of
 * one complete object (apiVersion, kind, metadata with name and, when namespaced, namespace).
 * The server assigns uid, creationTimestamp and resourceVersion when the object has none.
 */
typedef void (*KubesimObjectSink)(GBytes *compact_json, gpointer user_data);

/*
 * Generates a realistic workload: @namespaces Namespaces, and spread over them Deployments,
 * their ReplicaSets and @pods Pods (two containers, env, volumes, ownerReferences, full status),
 * Services of every type, ConfigMaps and Secrets. Every object carries what a real API server
 * returns: managedFields of the managers that wrote it, last-applied-configuration on what
 * kubectl applied, conditions and container statuses with their times. The same @seed gives
 * the same objects. Objects are written straight into compact JSON text (no JSON trees), so
 * that 100,000 pods take seconds and little more memory than their bytes.
 */
void kubesim_workload_generate(
        guint namespaces, guint pods, guint32 seed, KubesimObjectSink sink, gpointer user_data);

/* What a workload pod is made from: its app (label, container, config and secret names),
 * image and port, and when a ReplicaSet owns it, that owner. */
typedef struct {
	const gchar *namespace_;
	const gchar *app;
	const gchar *image;
	guint port;
	const gchar *hash;    /* (nullable): pod-template-hash; with rs_name and rs_uid */
	const gchar *rs_name; /* (nullable) */
	const gchar *rs_uid;  /* (nullable) */
} KubesimPodTemplate;

/* A pod built for churn, with what the store needs to add it without reading it again. */
typedef struct {
	GBytes *json; /* compact JSON; metadata.resourceVersion is a placeholder */
	gchar uid[37];
	GString *labels; /* "k\0v\0...\0", as KubesimObject keeps them */
	gsize rv_off;    /* the placeholder value, quotes included */
	gsize rv_len;
} KubesimNewPod;

void kubesim_new_pod_clear(KubesimNewPod *pod);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(KubesimNewPod, kubesim_new_pod_clear)

/*
 * Builds one more Pod like those of kubesim_workload_generate(), for churn, created at
 * @created. @pending: it is scheduled and its containers are being created (phase Pending),
 * else it runs and is ready. Draws its uid and container IDs from @rand.
 */
void kubesim_workload_new_pod(const KubesimPodTemplate *tmpl,
                              const gchar *name,
                              gint64 created,
                              gboolean pending,
                              gboolean odd,
                              GRand *rand,
                              KubesimNewPod *out);

/* The imageID a kubelet reports for @image as its status names it: repository@sha256:digest. */
gchar *kubesim_workload_image_id(const gchar *image);

/*
 * Loads manifests: a YAML or JSON file (multi-document, and `kind: List` items are unpacked)
 * or every *.yaml, *.yml and *.json file of a directory in name order. Each object goes to
 * @sink as compact JSON. Errors name the file and line.
 */
gboolean kubesim_manifests_load(const gchar *path,
                                KubesimObjectSink sink,
                                gpointer user_data,
                                GError **error);

G_END_DECLS
