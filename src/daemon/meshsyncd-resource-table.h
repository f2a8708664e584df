/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <libmeshsync/meshsync.h>

G_BEGIN_DECLS

/*
 * Renders the discovered resource types as an aligned text table, one row per type sorted by
 * group then plural name, in the spirit of `kubectl api-resources`.
 *
 * Returns: (transfer full): the table, ending with a newline.
 */
gchar *meshsyncd_resource_table_render(GPtrArray *resources);

G_END_DECLS
