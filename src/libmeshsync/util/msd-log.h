/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * g_log_structured() with the fields a log collector filters on: MESHSYNC_RESOURCE (a
 * <resource>.<version>.<group> name), MESHSYNC_NAMESPACE and MESHSYNC_URL, each left out when
 * NULL, and CODE_FILE, CODE_LINE and CODE_FUNC of the caller. The host's writer decides where
 * they go (the daemon's JSON lines and the journal keep them; GLib's text writer shows the
 * message alone).
 *
 * GLib 2.74's g_test_expect_message() sees only g_log() messages, so a warning that a unit
 * test expects stays a plain g_warning().
 */
#define msd_log(level, resource, ns, url, ...)                                            \
	msd_log_fields(G_LOG_DOMAIN, (level), __FILE__, G_STRINGIFY(__LINE__), G_STRFUNC, \
	               (resource), (ns), (url), __VA_ARGS__)

#define msd_info_resource(resource, ...) \
	msd_log(G_LOG_LEVEL_INFO, (resource), NULL, NULL, __VA_ARGS__)
#define msd_info_resource_in(resource, ns, ...) \
	msd_log(G_LOG_LEVEL_INFO, (resource), (ns), NULL, __VA_ARGS__)
#define msd_debug_resource(resource, ...) \
	msd_log(G_LOG_LEVEL_DEBUG, (resource), NULL, NULL, __VA_ARGS__)
#define msd_warning_resource(resource, ...) \
	msd_log(G_LOG_LEVEL_WARNING, (resource), NULL, NULL, __VA_ARGS__)
#define msd_info_url(url, ...) msd_log(G_LOG_LEVEL_INFO, NULL, NULL, (url), __VA_ARGS__)

void msd_log_fields(const gchar *domain,
                    GLogLevelFlags level,
                    const gchar *file,
                    const gchar *line,
                    const gchar *func,
                    const gchar *resource,
                    const gchar *ns,
                    const gchar *url,
                    const gchar *format,
                    ...) G_GNUC_PRINTF(9, 10);

G_END_DECLS
