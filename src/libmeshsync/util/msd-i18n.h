/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>
#include <glib/gi18n-lib.h>

#include "util/msd-localedir.h"

G_BEGIN_DECLS

/*
 * dgettext() in the "meshsync" domain, bound on first use: a program that loads the library
 * (Python through GObject introspection, say) never binds the library's domain itself, and
 * GError messages are UTF-8 whatever the locale's character set.
 */
const gchar *msd_i18n_gettext(const gchar *msgid) G_GNUC_FORMAT(1);

G_END_DECLS

/* gi18n-lib.h's _() plus the binding: every library string goes through the helper. */
#undef _
#define _(String) msd_i18n_gettext(String)
