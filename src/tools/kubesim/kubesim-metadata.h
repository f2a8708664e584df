/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

#include "kubesim-store.h"

G_BEGIN_DECLS

/*
 * The metadata-only form of an object (meta.k8s.io PartialObjectMetadata of @version), as
 * the API server writes it: its metadata read into the typed ObjectMeta, so in that type's
 * member order, map keys sorted, without empty members, and without what the internal type keeps
 * elsewhere (a DaemonSet's deprecated.daemonset.template.generation annotation).
 */
void kubesim_metadata_append(GString *out,
                             const KubesimResource *res,
                             KubesimObject *obj,
                             const gchar *version);

/* A BOOKMARK's object in that form: only the resourceVersion (and the initial-events-end
 * annotation), whatever the kind. */
void kubesim_metadata_append_bookmark(GString *out,
                                      guint64 rv,
                                      gboolean initial_events_end,
                                      const gchar *version);

G_END_DECLS
