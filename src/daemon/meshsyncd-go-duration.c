/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncDaemon"

#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "meshsync-error.h"
#include "meshsyncd-go-duration.h"

typedef struct {
	const gchar *name;
	gint64 nanoseconds;
} MsdDurationUnit;

/* Longer names first, so that "ms" is not read as "m" followed by garbage. */
static const MsdDurationUnit units[] = {
        {"ns", 1},
        {"us", 1000},
        {"\xc2\xb5s", 1000}, /* U+00B5 micro sign */
        {"\xce\xbcs", 1000}, /* U+03BC Greek mu */
        {"ms", 1000000},
        {"s", G_GINT64_CONSTANT(1000000000)},
        {"m", G_GINT64_CONSTANT(60000000000)},
        {"h", G_GINT64_CONSTANT(3600000000000)},
};

static gboolean
meshsyncd_go_duration_fail(const gchar *text, GError **error)
{
	g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
	            _("invalid duration \"%s\" (examples: 8s, 1m30s, 300ms)"), text);
	return FALSE;
}

gboolean
meshsyncd_go_duration_parse(const gchar *text, gint64 *nanoseconds, GError **error)
{
	const gchar *p = text;
	gboolean negative = FALSE;
	gdouble total = 0;

	if (*p == '-' || *p == '+') {
		negative = *p == '-';
		p++;
	}
	if (strcmp(p, "0") == 0) {
		*nanoseconds = 0;
		return TRUE;
	}
	if (*p == '\0')
		return meshsyncd_go_duration_fail(text, error);

	while (*p != '\0') {
		gdouble value = 0;
		gdouble scale = 1;
		gboolean digits = FALSE;
		const MsdDurationUnit *unit = NULL;
		gsize best = 0;

		while (g_ascii_isdigit(*p)) {
			value = value * 10 + (*p++ - '0');
			digits = TRUE;
		}
		if (*p == '.') {
			p++;
			while (g_ascii_isdigit(*p)) {
				scale /= 10;
				value += (*p++ - '0') * scale;
				digits = TRUE;
			}
		}
		if (!digits)
			return meshsyncd_go_duration_fail(text, error);
		for (guint i = 0; i < G_N_ELEMENTS(units); i++) {
			gsize length = strlen(units[i].name);

			if (length > best && strncmp(p, units[i].name, length) == 0) {
				unit = &units[i];
				best = length;
			}
		}
		if (unit == NULL)
			return meshsyncd_go_duration_fail(text, error);
		p += best;
		total += value * (gdouble)unit->nanoseconds;
		if (total > (gdouble)G_MAXINT64)
			return meshsyncd_go_duration_fail(text, error);
	}
	*nanoseconds = negative ? -(gint64)total : (gint64)total;
	return TRUE;
}
