/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "kubesim-store.h"

G_BEGIN_DECLS

/* A parsed labelSelector and fieldSelector pair. */
typedef struct _KubesimSelector KubesimSelector;

/* NULL and a 400 Status in @status_out when either selector does not parse. */
KubesimSelector *kubesim_selector_new(const gchar *label_selector,
                                      const gchar *field_selector,
                                      KubesimStatus **status_out);
void kubesim_selector_free(KubesimSelector *sel);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(KubesimSelector, kubesim_selector_free)
gboolean kubesim_selector_is_empty(const KubesimSelector *sel);
gboolean kubesim_selector_matches(const KubesimSelector *sel, const KubesimObject *obj);

G_END_DECLS
