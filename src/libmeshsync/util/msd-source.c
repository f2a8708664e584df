/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSync"

#include "config.h"

#include "util/msd-source.h"

GSource *
msd_source_attach_named(GSource *source,
                        GMainContext *context,
                        const gchar *name,
                        GSourceFunc func,
                        gpointer data,
                        GDestroyNotify notify)
{
	g_source_set_callback(source, func, data, notify);
	g_source_set_static_name(source, name);
	g_source_attach(source, context);
	return source;
}

void
msd_source_clear(GSource **source)
{
	GSource *s = g_steal_pointer(source);

	if (s == NULL)
		return;
	g_source_destroy(s);
	g_source_unref(s);
}
