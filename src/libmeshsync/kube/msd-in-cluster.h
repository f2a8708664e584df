/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "kube/msd-kube-target.h"

G_BEGIN_DECLS

/*
 * The configuration of a process running in a pod, from its service account: the server from
 * KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, the token (re-read as the kubelet
 * rotates it), CA and namespace from the service-account directory; POD_NAMESPACE overrides
 * the namespace file.
 */
gboolean msd_in_cluster_load(MsdKubeTarget *target, GError **error);

/* For tests: where the service-account files live instead of
 * /var/run/secrets/kubernetes.io/serviceaccount; NULL restores it. */
void msd_in_cluster_set_service_account_dir(const gchar *dir);

G_END_DECLS
