/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSync"

#include "config.h"

#include "meshsync-build-version.h"
#include "meshsync-version.h"

/**
 * meshsync_get_version:
 *
 * Gets the version of the libmeshsync the program runs with: the one every consumer is
 * told (`meshsync --version`, the `meshsync-meta` reply, the `meshsync_build_info` metric,
 * the D-Bus property). It names the build, not only the release it starts from, and may
 * differ from %MESHSYNC_VERSION_S, the API version the program was compiled against.
 *
 * Returns: the version, such as "v0.1.0-412-gb4d06c3" (a build from a commit after the
 *   0.1.0 release) or "v0.1.0" (a release, or a build outside a git checkout)
 */
const gchar *
meshsync_get_version(void)
{
	return MESHSYNC_BUILD_VERSION;
}
