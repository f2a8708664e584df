/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * Where the translations are: $MESHSYNC_LOCALEDIR when set and not empty (the build tree's
 * po/ directory, for the tests and `meson devenv`), else the installed locale directory. The
 * programs bind their text domain here as the library does, so all read the same catalogue.
 * Inline, so the programs that link only the shared library can use it too.
 */
static inline const gchar *
msd_localedir(void)
{
	const gchar *dir = g_getenv("MESHSYNC_LOCALEDIR");

	return dir != NULL && *dir != '\0' ? dir : LOCALEDIR;
}

G_END_DECLS
