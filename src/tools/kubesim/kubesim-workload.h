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
 * Services of every type, ConfigMaps and Secrets. The same @seed gives the same objects.
 * Objects are written straight into compact JSON text (no JSON trees), so that 100,000 pods
 * take seconds and little more memory than their bytes.
 */
void kubesim_workload_generate(
        guint namespaces, guint pods, guint32 seed, KubesimObjectSink sink, gpointer user_data);

/*
 * Builds one more Pod like those of kubesim_workload_generate(), for churn: @index makes its
 * name unique. Returns compact JSON.
 */
GBytes *kubesim_workload_new_pod(const gchar *namespace_, guint64 index, GRand *rand);

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
