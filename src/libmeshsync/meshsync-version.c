/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSync"

#include "config.h"

#include "meshsync-version.h"

/**
 * meshsync_get_version:
 *
 * Gets the version of the libmeshsync the program runs with, which may differ from
 * %MESHSYNC_VERSION_S, the one it was compiled against.
 *
 * Returns: the version, such as "0.1.0"
 */
const gchar *
meshsync_get_version(void)
{
	return MESHSYNC_VERSION_S;
}
