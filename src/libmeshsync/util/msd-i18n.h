/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>
#include <glib/gi18n-lib.h>

G_BEGIN_DECLS

/*
 * Where the translations are: $MESHSYNC_LOCALEDIR when set and not empty (the build tree's
 * po/ directory, for the tests and `meson devenv`), else the installed locale directory. The
 * programs bind their text domain here too, so they and the library read the same catalogue.
 */
static inline const gchar *
msd_i18n_localedir(void)
{
	const gchar *dir = g_getenv("MESHSYNC_LOCALEDIR");

	return dir != NULL && *dir != '\0' ? dir : LOCALEDIR;
}

/*
 * dgettext() in the "meshsync" domain, bound on first use: a program that loads the library
 * (Python through GObject introspection, say) never binds the library's domain itself, and
 * GError messages are UTF-8 whatever the locale's character set.
 */
const gchar *msd_i18n_gettext(const gchar *msgid) G_GNUC_FORMAT(1);

G_END_DECLS

/* gi18n-lib.h's _() without the binding; every library string goes through the helper. */
#undef _
#define _(String) msd_i18n_gettext(String)
