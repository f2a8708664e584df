/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Records the warning, message and info lines of one log domain through a log writer (the
 * library's structured messages never reach log handlers, and GLib 2.74's
 * g_test_expect_message() does not see them); everything else goes to GLib's default
 * writer. Call test_log_capture_start() once, before g_test_run(). */
void test_log_capture_start(const gchar *domain);
void test_log_capture_clear(void);
/* How many recorded lines contain @text. */
guint test_log_capture_count(const gchar *text);

G_END_DECLS
