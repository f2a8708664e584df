/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * Reads the metav1.Status an exec stream ends with (WebSocket channel 3, v4 and later):
 * returns TRUE for "Success" (*exit_code 0), FALSE otherwise with *message set to the
 * Status message and *exit_code to the command's exit status when the Status carries one
 * (reason NonZeroExitCode, cause ExitCode), else -1. A body that is no Status is a failure
 * whose message quotes its start.
 */
gboolean msd_exec_status_parse(const gchar *data, gsize len, gint *exit_code, gchar **message);

G_END_DECLS
