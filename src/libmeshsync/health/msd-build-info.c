/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncHealth"

#include "config.h"

#include <libsoup/soup.h>
#include <nats/nats.h>

#include "health/msd-build-info.h"
#include "meshsync-version.h"

void
msd_build_info_register(MsdMetrics *metrics)
{
	g_autofree gchar *glib = NULL;
	g_autofree gchar *libsoup = NULL;

	g_return_if_fail(MSD_IS_METRICS(metrics));

	glib = g_strdup_printf("%u.%u.%u", glib_major_version, glib_minor_version,
	                       glib_micro_version);
	libsoup = g_strdup_printf("%u.%u.%u", soup_get_major_version(), soup_get_minor_version(),
	                          soup_get_micro_version());
	msd_metrics_gauge_set(metrics, "meshsync_build_info",
	                      "Always 1; the labels name the meshsync version and the versions of "
	                      "the libraries it runs with",
	                      1, "version", meshsync_get_version(), "nats_c", nats_GetVersion(),
	                      "glib", glib, "libsoup", libsoup, NULL);
}
