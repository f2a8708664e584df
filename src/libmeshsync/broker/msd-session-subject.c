/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncBroker"

#include "config.h"

#include "broker/msd-session-subject.h"

static gboolean
msd_session_subject_needs_escape(guchar c)
{
	return c <= 0x20 || c == 0x7f || c == '.' || c == '*' || c == '>' || c == '%';
}

void
msd_session_subject_append_token(GString *subject, const gchar *field)
{
	if (field == NULL || field[0] == '\0') {
		g_string_append_c(subject, '%');
		return;
	}
	for (const guchar *p = (const guchar *)field; *p != '\0'; p++) {
		if (msd_session_subject_needs_escape(*p))
			g_string_append_printf(subject, "%%%02X", *p);
		else
			g_string_append_c(subject, (gchar)*p);
	}
}

gchar *
msd_session_subject_decode_token(const gchar *token)
{
	g_autoptr(GString) out = NULL;

	g_return_val_if_fail(token != NULL, NULL);

	if (g_str_equal(token, "%"))
		return g_strdup("");
	if (token[0] == '\0')
		return NULL;
	out = g_string_new(NULL);
	for (const gchar *p = token; *p != '\0'; p++) {
		gint hi, lo;

		if (*p != '%') {
			if (msd_session_subject_needs_escape((guchar)*p))
				return NULL;
			g_string_append_c(out, *p);
			continue;
		}
		hi = g_ascii_xdigit_value(p[1]);
		lo = hi < 0 ? -1 : g_ascii_xdigit_value(p[2]);
		if (hi < 0 || lo < 0 || hi * 16 + lo == 0)
			return NULL;
		g_string_append_c(out, (gchar)(hi * 16 + lo));
		p += 2;
	}
	return g_string_free(g_steal_pointer(&out), FALSE);
}

static gchar *
msd_session_subject_build(const gchar *kind, const gchar *const *fields, guint n)
{
	GString *subject = g_string_new(kind);

	for (guint i = 0; i < n; i++) {
		g_string_append_c(subject, '.');
		msd_session_subject_append_token(subject, fields[i]);
	}
	return g_string_free(subject, FALSE);
}

gchar *
msd_session_subject_exec(const gchar *ns, const gchar *pod, const gchar *container, const gchar *id)
{
	const gchar *fields[] = {ns, pod, container, id};

	return msd_session_subject_build("exec", fields, G_N_ELEMENTS(fields));
}

gchar *
msd_session_subject_logs(const gchar *ns, const gchar *pod, const gchar *container)
{
	const gchar *fields[] = {ns, pod, container};

	return msd_session_subject_build("logs", fields, G_N_ELEMENTS(fields));
}
