/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSync"

#include "config.h"

#include "meshsync-error.h"

static const GDBusErrorEntry meshsync_error_entries[] = {
        {MESHSYNC_ERROR_FAILED, "io.meshery.MeshSync1.Error.Failed"},
        {MESHSYNC_ERROR_INVALID_CONFIG, "io.meshery.MeshSync1.Error.InvalidConfig"},
        {MESHSYNC_ERROR_NOT_FOUND, "io.meshery.MeshSync1.Error.NotFound"},
        {MESHSYNC_ERROR_CONNECTION, "io.meshery.MeshSync1.Error.Connection"},
        {MESHSYNC_ERROR_TLS, "io.meshery.MeshSync1.Error.Tls"},
        {MESHSYNC_ERROR_UNAUTHORIZED, "io.meshery.MeshSync1.Error.Unauthorized"},
        {MESHSYNC_ERROR_FORBIDDEN, "io.meshery.MeshSync1.Error.Forbidden"},
        {MESHSYNC_ERROR_GONE, "io.meshery.MeshSync1.Error.Gone"},
        {MESHSYNC_ERROR_HTTP, "io.meshery.MeshSync1.Error.Http"},
        {MESHSYNC_ERROR_INVALID_DATA, "io.meshery.MeshSync1.Error.InvalidData"},
        {MESHSYNC_ERROR_NOT_SUPPORTED, "io.meshery.MeshSync1.Error.NotSupported"},
        {MESHSYNC_ERROR_WRITE, "io.meshery.MeshSync1.Error.Write"},
        {MESHSYNC_ERROR_TOO_LARGE, "io.meshery.MeshSync1.Error.TooLarge"},
        {MESHSYNC_ERROR_TIMED_OUT, "io.meshery.MeshSync1.Error.TimedOut"},
        {MESHSYNC_ERROR_REFUSED, "io.meshery.MeshSync1.Error.Refused"},
};

G_STATIC_ASSERT(G_N_ELEMENTS(meshsync_error_entries) == MESHSYNC_ERROR_REFUSED + 1);

/**
 * meshsync_error_quark:
 *
 * Gets the libmeshsync error domain, registered with D-Bus so that the codes survive a
 * round trip over the bus.
 *
 * Returns: the error quark
 */
GQuark
meshsync_error_quark(void)
{
	static gsize quark = 0;

	g_dbus_error_register_error_domain("meshsync-error-quark", &quark, meshsync_error_entries,
	                                   G_N_ELEMENTS(meshsync_error_entries));
	return (GQuark)quark;
}
