/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * Parses a duration as Go's time.ParseDuration does ("8s", "1m30s", "1.5h", "300ms", "-1ns",
 * "0"): an optional sign, then one or more decimal numbers each followed by a unit (ns, us,
 * µs, ms, s, m, h). Fails on anything else, including an empty string and overflow.
 */
gboolean meshsyncd_go_duration_parse(const gchar *text, gint64 *nanoseconds, GError **error);

G_END_DECLS
