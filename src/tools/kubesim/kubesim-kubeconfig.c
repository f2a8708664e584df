/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-kubeconfig.h"

#include <string.h>

#include "meshsync-error.h"

/* YAML double-quoted scalar: JSON string escaping is valid YAML */
static void
append_quoted(GString *out, const gchar *s)
{
	const gchar *p;

	g_string_append_c(out, '"');
	for (p = s; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			g_string_append_c(out, '\\');
		g_string_append_c(out, *p);
	}
	g_string_append_c(out, '"');
}

gboolean
kubesim_kubeconfig_write(const gchar *path,
                         const gchar *url,
                         const gchar *ca_pem,
                         const gchar *token,
                         GError **error)
{
	g_autoptr(GString) out = g_string_new("apiVersion: v1\nkind: Config\npreferences: {}\n");
	g_autoptr(GError) error_local = NULL;

	g_string_append(out, "clusters:\n- name: kubesim\n  cluster:\n    server: ");
	append_quoted(out, url);
	g_string_append_c(out, '\n');
	if (ca_pem != NULL) {
		g_autofree gchar *b64 = g_base64_encode((const guchar *)ca_pem, strlen(ca_pem));
		g_string_append_printf(out, "    certificate-authority-data: %s\n", b64);
	}
	g_string_append(out, "users:\n- name: kubesim-user\n  user:");
	if (token != NULL) {
		g_string_append(out, "\n    token: ");
		append_quoted(out, token);
		g_string_append_c(out, '\n');
	} else {
		g_string_append(out, " {}\n");
	}
	g_string_append(out, "contexts:\n- name: kubesim\n  context:\n    cluster: kubesim\n"
	                     "    user: kubesim-user\n    namespace: default\n"
	                     "current-context: kubesim\n");
	if (!g_file_set_contents_full(path, out->str, out->len, G_FILE_SET_CONTENTS_CONSISTENT,
	                              0600, &error_local)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE,
		            "cannot write kubeconfig %s: %s", path, error_local->message);
		return FALSE;
	}
	return TRUE;
}
