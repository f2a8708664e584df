/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include <string.h>

#include "test-log-capture.h"

static GPtrArray *captured; /* (element-type utf8) */
static gchar *captured_domain;

static GLogWriterOutput
test_log_capture_writer(GLogLevelFlags level,
                        const GLogField *fields,
                        gsize n_fields,
                        gpointer user_data)
{
	const gchar *domain = NULL;
	const gchar *message = NULL;

	for (gsize i = 0; i < n_fields; i++) {
		if (g_strcmp0(fields[i].key, "GLIB_DOMAIN") == 0)
			domain = fields[i].value;
		else if (g_strcmp0(fields[i].key, "MESSAGE") == 0)
			message = fields[i].value;
	}
	/* what a person would read: expected remote trouble is a message or info line */
	if (g_strcmp0(domain, captured_domain) != 0 ||
	    !(level & (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO)))
		return g_log_writer_default(level, fields, n_fields, user_data);
	g_ptr_array_add(captured, g_strdup(message));
	g_test_message("%s: %s", domain, message);
	return G_LOG_WRITER_HANDLED;
}

void
test_log_capture_start(const gchar *domain)
{
	g_return_if_fail(captured == NULL);

	captured = g_ptr_array_new_with_free_func(g_free);
	captured_domain = g_strdup(domain);
	g_log_set_writer_func(test_log_capture_writer, NULL, NULL);
}

void
test_log_capture_clear(void)
{
	g_ptr_array_set_size(captured, 0);
}

guint
test_log_capture_count(const gchar *text)
{
	guint n = 0;

	for (guint i = 0; i < captured->len; i++) {
		if (strstr(g_ptr_array_index(captured, i), text) != NULL)
			n++;
	}
	return n;
}
