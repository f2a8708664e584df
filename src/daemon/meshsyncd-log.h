/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
	MESHSYNCD_LOG_FORMAT_TEXT,
	MESHSYNCD_LOG_FORMAT_JSON,
} MeshsyncdLogFormat;

/* The most detailed level printed; each includes the ones before it. */
typedef enum {
	MESHSYNCD_LOG_LEVEL_ERROR,
	MESHSYNCD_LOG_LEVEL_WARNING,
	MESHSYNCD_LOG_LEVEL_INFO,
	MESHSYNCD_LOG_LEVEL_DEBUG,
} MeshsyncdLogLevel;

/* --log-format: text or json (NULL: text). */
gboolean meshsyncd_log_parse_format(const gchar *text, MeshsyncdLogFormat *format, GError **error);

/* --log-level: error, warning, info or debug (NULL: info). */
gboolean meshsyncd_log_parse_level(const gchar *text, MeshsyncdLogLevel *level, GError **error);

/*
 * Installs the daemon's log writer for the rest of the process. Everything goes to stderr, so
 * that stdout carries only what was asked for (--list-resources, --version): as JSON lines,
 * as GLib's text lines, or to the journal when stderr is connected to it and @format is text.
 *
 * @level applies to the project's own domains (MeshSync*, Msd*). Other libraries' domains
 * (GLib-Net, GSocketClient, ...) print errors and warnings as @level allows, and their info and
 * debug lines only when G_MESSAGES_DEBUG names them, as GLib's own writer does: --verbose
 * debugs meshsync, not the network stack under it.
 */
void meshsyncd_log_install(MeshsyncdLogFormat format, MeshsyncdLogLevel level);

/* Changes the level of an installed writer, or of the filter alone; for tests. */
void meshsyncd_log_set_level(MeshsyncdLogLevel level);

/* Whether the writer prints a message of @log_level from @domain; for the writer and tests. */
gboolean meshsyncd_log_wants(GLogLevelFlags log_level, const gchar *domain);

G_END_DECLS
