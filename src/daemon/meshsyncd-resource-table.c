/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncDaemon"

#include "config.h"

#include "meshsyncd-resource-table.h"

enum {
	COLUMN_NAME,
	COLUMN_API_VERSION,
	COLUMN_NAMESPACED,
	COLUMN_KIND,
	COLUMN_WATCHABLE,
	N_COLUMNS
};

static const gchar *const column_titles[N_COLUMNS] = {
        "NAME", "APIVERSION", "NAMESPACED", "KIND", "WATCHABLE",
};

static gint
meshsyncd_resource_table_compare(gconstpointer a, gconstpointer b)
{
	MeshSyncApiResource *left = *(MeshSyncApiResource **)a;
	MeshSyncApiResource *right = *(MeshSyncApiResource **)b;
	gint by_group = g_strcmp0(meshsync_api_resource_get_group(left),
	                          meshsync_api_resource_get_group(right));

	if (by_group != 0)
		return by_group;
	return g_strcmp0(meshsync_api_resource_get_plural(left),
	                 meshsync_api_resource_get_plural(right));
}

static void
meshsyncd_resource_table_cells(MeshSyncApiResource *resource, const gchar *cells[N_COLUMNS])
{
	cells[COLUMN_NAME] = meshsync_api_resource_get_plural(resource);
	cells[COLUMN_API_VERSION] = meshsync_api_resource_get_group_version(resource);
	cells[COLUMN_NAMESPACED] =
	        meshsync_api_resource_get_namespaced(resource) ? "true" : "false";
	cells[COLUMN_KIND] = meshsync_api_resource_get_kind(resource);
	cells[COLUMN_WATCHABLE] = meshsync_api_resource_get_watchable(resource) ? "true" : "false";
}

static void
meshsyncd_resource_table_append_row(GString *out,
                                    const gchar *const cells[N_COLUMNS],
                                    const gsize *widths)
{
	for (guint c = 0; c < N_COLUMNS; c++) {
		if (c + 1 == N_COLUMNS) {
			g_string_append(out, cells[c]);
			break;
		}
		g_string_append_printf(out, "%-*s   ", (gint)widths[c], cells[c]);
	}
	g_string_append_c(out, '\n');
}

gchar *
meshsyncd_resource_table_render(GPtrArray *resources)
{
	g_autoptr(GPtrArray) sorted = g_ptr_array_new_full(resources->len, g_object_unref);
	GString *out = g_string_new(NULL);
	gsize widths[N_COLUMNS];

	for (guint i = 0; i < resources->len; i++)
		g_ptr_array_add(sorted, g_object_ref(g_ptr_array_index(resources, i)));
	g_ptr_array_sort(sorted, meshsyncd_resource_table_compare);

	for (guint c = 0; c < N_COLUMNS; c++)
		widths[c] = strlen(column_titles[c]);
	for (guint i = 0; i < sorted->len; i++) {
		const gchar *cells[N_COLUMNS];

		meshsyncd_resource_table_cells(g_ptr_array_index(sorted, i), cells);
		for (guint c = 0; c < N_COLUMNS; c++)
			widths[c] = MAX(widths[c], strlen(cells[c]));
	}

	meshsyncd_resource_table_append_row(out, column_titles, widths);
	for (guint i = 0; i < sorted->len; i++) {
		const gchar *cells[N_COLUMNS];

		meshsyncd_resource_table_cells(g_ptr_array_index(sorted, i), cells);
		meshsyncd_resource_table_append_row(out, cells, widths);
	}
	return g_string_free(out, FALSE);
}
