/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "fuzz-common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
fuzz_check_failed(const gchar *file, gint line, const gchar *what)
{
	fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
	abort();
}

static const gchar *allowed_critical;

void
fuzz_allow_critical(const gchar *substring)
{
	allowed_critical = substring;
}

static void
fuzz_log_handler(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data)
{
	if ((level & G_LOG_LEVEL_CRITICAL) && allowed_critical != NULL &&
	    strstr(message, allowed_critical) != NULL)
		return;
	if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL)) {
		fprintf(stderr, "%s: %s\n", domain != NULL ? domain : "", message);
		abort();
	}
	/* messages, warnings and debug output about rejected input: not a finding */
}

void
fuzz_quiet_logs(void)
{
	/* G_DEBUG=fatal-criticals (the tests' environment) would trap before the handler could
	 * let an allowed critical pass; the handler aborts on every other one */
	g_log_set_always_fatal(G_LOG_LEVEL_ERROR);
	g_log_set_default_handler(fuzz_log_handler, NULL);
}
