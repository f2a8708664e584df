/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Whether a run's failure ends a one-shot run (a snapshot someone waits for): credentials,
 * certificates and configuration refused at once, a server that refuses or drops connections
 * once it has done so for 10 s in a row. @unreachable_since_us holds the start of that row
 * (0: none); the caller sets it back to 0 when a run gets going. A long-running daemon
 * retries all of these instead. */
gboolean meshsyncd_one_shot_error_is_lasting(const GError *error, gint64 *unreachable_since_us);

G_END_DECLS
