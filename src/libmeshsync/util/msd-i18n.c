/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include "util/msd-i18n.h"

const gchar *
msd_i18n_gettext(const gchar *msgid)
{
	static gsize bound = 0;

	if (g_once_init_enter(&bound)) {
		bindtextdomain(GETTEXT_PACKAGE, msd_localedir());
		bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
		g_once_init_leave(&bound, 1);
	}
	return g_dgettext(GETTEXT_PACKAGE, msgid);
}
