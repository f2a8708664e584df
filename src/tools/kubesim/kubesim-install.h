/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "kubesim-store.h"

G_BEGIN_DECLS

/*
 * Simulated installations of the infrastructures meshsync detects (istio, linkerd,
 * prometheus-operator, grafana-operator): each one's namespace, CRDs, and control-plane
 * Deployments with one running Pod each, labelled and with the images a real installation
 * of that release has. What detection reads, not a working mesh.
 */

/* The names known, NULL-terminated. */
const gchar *const *kubesim_install_names(void);

/* Creates (or replaces) everything of installation @name; @n_objects (nullable) receives how
 * many objects were written. */
gboolean kubesim_install(KubesimStore *store, const gchar *name, guint *n_objects, GError **error);
/* Deletes it again, CRDs included (their objects go with them), namespace last. */
gboolean
kubesim_uninstall(KubesimStore *store, const gchar *name, guint *n_objects, GError **error);

G_END_DECLS
