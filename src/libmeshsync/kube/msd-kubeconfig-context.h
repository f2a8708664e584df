/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "kube/msd-kube-target.h"
#include "kube/msd-kubeconfig-merge.h"

G_BEGIN_DECLS

/*
 * Resolves one context of merged kubeconfig files (@context, else current-context) into
 * @target: the context's namespace, its cluster (server URL, TLS settings, CA bundle) and its
 * user (token, tokenFile, client certificate and key, exec plugin). Everything that can be
 * checked before the first request is checked here, and every message names the file and the
 * field. auth-provider users are refused, as kubectl no longer supports them.
 */
gboolean msd_kubeconfig_context_resolve(MsdKubeconfigMerge *merge,
                                        const gchar *context,
                                        MsdKubeTarget *target,
                                        GError **error);

G_END_DECLS
