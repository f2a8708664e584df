/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncDaemon"

#include "config.h"

#include <string.h>

#include "meshsyncd-go-flags.h"

static gboolean
meshsyncd_go_flags_is_single_dash_word(const gchar *arg)
{
	/* "-v" stays a short option; "-5" and "-" are values, not flags. */
	return arg[0] == '-' && arg[1] != '-' && arg[1] != '\0' && g_ascii_isalpha(arg[1]) &&
	       arg[2] != '\0' && arg[2] != '=';
}

gchar **
meshsyncd_go_flags_normalize(gint argc, gchar **argv)
{
	g_autoptr(GStrvBuilder) builder = g_strv_builder_new();
	gboolean rest = FALSE;

	for (gint i = 0; i < argc; i++) {
		const gchar *arg = argv[i];

		if (i == 0 || rest) {
			g_strv_builder_add(builder, arg);
			continue;
		}
		if (g_strcmp0(arg, "--") == 0)
			rest = TRUE;
		if (!rest && meshsyncd_go_flags_is_single_dash_word(arg)) {
			g_autofree gchar *gnu = g_strconcat("-", arg, NULL);
			g_strv_builder_add(builder, gnu);
			continue;
		}
		g_strv_builder_add(builder, arg);
	}
	return g_strv_builder_end(builder);
}
