/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSync"

#include "config.h"

#include "msd-log.h"

static const gchar *const msd_log_priorities[] = {
        "3", /* error */
        "4", /* critical */
        "4", /* warning */
        "5", /* message */
        "6", /* info */
        "7", /* debug */
};

static const gchar *
msd_log_priority(GLogLevelFlags level)
{
	for (guint i = 0; i < G_N_ELEMENTS(msd_log_priorities); i++) {
		if (level & (G_LOG_LEVEL_ERROR << i))
			return msd_log_priorities[i];
	}
	return "5";
}

void
msd_log_fields(const gchar *domain,
               GLogLevelFlags level,
               const gchar *file,
               const gchar *line,
               const gchar *func,
               const gchar *resource,
               const gchar *ns,
               const gchar *url,
               const gchar *format,
               ...)
{
	g_autofree gchar *message = NULL;
	GLogField fields[9];
	gsize n = 0;
	va_list args;

	va_start(args, format);
	message = g_strdup_vprintf(format, args);
	va_end(args);
	fields[n++] = (GLogField){"MESSAGE", message, -1};
	fields[n++] = (GLogField){"PRIORITY", msd_log_priority(level), -1};
	fields[n++] = (GLogField){"GLIB_DOMAIN", domain, -1};
	fields[n++] = (GLogField){"CODE_FILE", file, -1};
	fields[n++] = (GLogField){"CODE_LINE", line, -1};
	fields[n++] = (GLogField){"CODE_FUNC", func, -1};
	if (resource != NULL)
		fields[n++] = (GLogField){"MESHSYNC_RESOURCE", resource, -1};
	if (ns != NULL && *ns != '\0')
		fields[n++] = (GLogField){"MESHSYNC_NAMESPACE", ns, -1};
	if (url != NULL)
		fields[n++] = (GLogField){"MESHSYNC_URL", url, -1};
	g_log_structured_array(level, fields, n);
}
