/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * Upstream meshsync parses its command line with Go's flag package, which takes `-name`,
 * `-name=value`, `--name` and `--name=value` alike. GOptionContext only knows GNU long
 * options, so a single-dash word longer than one letter is rewritten to its double-dash form
 * before parsing; arguments after a lone "--" are left alone.
 *
 * Returns: (transfer full): a new NULL-terminated argument vector.
 */
gchar **meshsyncd_go_flags_normalize(gint argc, gchar **argv);

G_END_DECLS
