/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncBroker"

#include "config.h"

#include <string.h>

#include "broker/msd-session-subject.h"

static gboolean
msd_session_subject_needs_escape(guchar c, gboolean keep_dots)
{
	return c <= 0x20 || c == 0x7f || c == '*' || c == '>' || c == '%' ||
	       (c == '.' && !keep_dots);
}

void
msd_session_subject_append_token(GString *subject, const gchar *field, gboolean keep_dots)
{
	if (field == NULL || field[0] == '\0') {
		g_string_append_c(subject, '%');
		return;
	}
	for (const guchar *p = (const guchar *)field; *p != '\0'; p++) {
		if (msd_session_subject_needs_escape(*p, keep_dots))
			g_string_append_printf(subject, "%%%02X", *p);
		else
			g_string_append_c(subject, (gchar)*p);
	}
}

gchar *
msd_session_subject_decode_token(const gchar *token, gboolean keep_dots)
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
			if (msd_session_subject_needs_escape((guchar)*p, keep_dots))
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
		/* the pod is the second field */
		msd_session_subject_append_token(subject, fields[i], i == 1);
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

gboolean
msd_session_subject_parse(
        const gchar *session_id, gchar **ns, gchar **pod, gchar **container, gchar **id)
{
	g_auto(GStrv) tokens = NULL;
	g_autofree gchar *pod_token = NULL;
	g_autofree gchar *ns_out = NULL;
	g_autofree gchar *pod_out = NULL;
	g_autofree gchar *container_out = NULL;
	g_autofree gchar *id_out = NULL;
	guint n, tail;
	gboolean exec;

	g_return_val_if_fail(session_id != NULL, FALSE);

	tokens = g_strsplit(session_id, ".", -1);
	n = g_strv_length(tokens);
	if (n == 0)
		return FALSE;
	exec = g_str_equal(tokens[0], "exec");
	if (!exec && !g_str_equal(tokens[0], "logs"))
		return FALSE;
	/* after the pod: the container, and the request id of an exec */
	tail = exec ? 2 : 1;
	if (n < 3 + tail)
		return FALSE;
	pod_token = g_strjoinv(".", (gchar **)tokens + 2);
	/* g_strjoinv() took every token after the namespace; cut the tail off again */
	for (guint i = 0; i < tail; i++)
		*strrchr(pod_token, '.') = '\0';
	ns_out = msd_session_subject_decode_token(tokens[1], FALSE);
	pod_out = msd_session_subject_decode_token(pod_token, TRUE);
	container_out = msd_session_subject_decode_token(tokens[n - tail], FALSE);
	if (exec)
		id_out = msd_session_subject_decode_token(tokens[n - 1], FALSE);
	if (ns_out == NULL || pod_out == NULL || container_out == NULL || (exec && id_out == NULL))
		return FALSE;
	/* an empty pod is written "%": dots around it would be a malformed pod */
	if (pod_token[0] == '.' || g_str_has_suffix(pod_token, ".") ||
	    strstr(pod_token, "..") != NULL)
		return FALSE;
	if (ns != NULL)
		*ns = g_steal_pointer(&ns_out);
	if (pod != NULL)
		*pod = g_steal_pointer(&pod_out);
	if (container != NULL)
		*container = g_steal_pointer(&container_out);
	if (id != NULL)
		*id = g_steal_pointer(&id_out);
	return TRUE;
}
