/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* What the command line asked for; strings are borrowed from the caller. */
typedef struct {
	const gchar *kubeconfig;
	const gchar *context;
	const gchar *output;
	const gchar *output_file;
	const gchar *output_namespaces;
	const gchar *output_resources;
	const gchar *watch_config;
	gboolean output_extended;
	gboolean stop_after_sync; /* stop once the initial sync is complete */
	gint64 stop_after_ns;     /* negative: run until a signal */
} MsdDaemonOptions;

/*
 * Runs the sync until SIGINT, SIGTERM or the stop-after time, on the default main context.
 * Returns the process exit status: 0 after a normal stop, 1 when the configuration is
 * unusable or the output cannot be written (the message is on stderr).
 */
gint msd_daemon_run(const MsdDaemonOptions *options);

G_END_DECLS
