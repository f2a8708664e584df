/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Names @source and attaches it to @context; returns @source, the caller's reference kept. */
GSource *msd_source_attach_named(GSource *source,
                                 GMainContext *context,
                                 const gchar *name,
                                 GSourceFunc func,
                                 gpointer data,
                                 GDestroyNotify notify);

/* Destroys *@source (in whatever context it is attached to), drops the reference and sets
 * it to NULL; nothing when it is already NULL. Safe from the source's own callback. */
void msd_source_clear(GSource **source);

G_END_DECLS
