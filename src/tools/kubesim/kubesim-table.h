/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "kubesim-store.h"

G_BEGIN_DECLS

/*
 * meta.k8s.io/v1 Table output, which kubectl get asks for: pods get kubectl's columns, other
 * kinds NAME and AGE. Rows carry the object as PartialObjectMetadata (default), the whole
 * object ("Object") or nothing ("None"), as includeObject says.
 */
void kubesim_table_begin(GString *out,
                         KubesimResource *res,
                         guint64 rv,
                         const gchar *continue_token,
                         gboolean with_columns);
void kubesim_table_append_row(GString *out,
                              KubesimResource *res,
                              KubesimObject *obj,
                              const gchar *include_object,
                              gboolean first_row);
void kubesim_table_end(GString *out);

/* kubectl's short human durations: 45s, 3m12s, 5h, 2d... */
gchar *kubesim_human_duration(gint64 seconds);

G_END_DECLS
