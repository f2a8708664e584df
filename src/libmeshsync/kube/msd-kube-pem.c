/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncKube"

#include "config.h"

#include <string.h>

#include "meshsync-error.h"
#include "kube/msd-kube-pem.h"
#include "util/msd-i18n.h"

gboolean
msd_kube_pem_read(const MsdKubeconfigEntry *entry,
                  const gchar *field,
                  GBytes **pem,
                  gchar **where,
                  GError **error)
{
	g_autofree gchar *data_field = g_strconcat(field, "-data", NULL);
	g_autofree gchar *data = NULL;
	g_autofree gchar *path = NULL;

	*pem = NULL;
	*where = NULL;
	if (!msd_kubeconfig_entry_get_string(entry, data_field, &data, error))
		return FALSE;
	if (!msd_kubeconfig_entry_get_string(entry, field, &path, error))
		return FALSE;
	if (data != NULL) {
		gsize length = 0;
		guchar *decoded;

		if (path != NULL)
			g_debug("%s: %s[%s]: %s overrides %s", entry->origin, entry->section,
			        entry->name, data_field, field);
		decoded = g_base64_decode(data, &length);
		*pem = g_bytes_new_take(decoded, length);
		*where = msd_kubeconfig_entry_field(entry, data_field);
		return TRUE;
	}
	if (path != NULL) {
		g_autofree gchar *resolved = msd_kubeconfig_entry_resolve_path(entry, path);
		g_autoptr(GError) local_error = NULL;
		gchar *contents = NULL;
		gsize length = 0;

		*where = msd_kubeconfig_entry_field(entry, field);
		if (!g_file_get_contents(resolved, &contents, &length, &local_error)) {
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG, "%s: %s",
			            *where, local_error->message);
			g_clear_pointer(where, g_free);
			return FALSE;
		}
		*pem = g_bytes_new_take(contents, length);
	}
	return TRUE;
}

gboolean
msd_kube_pem_validate_ca_bundle(GBytes *pem, const gchar *where, GError **error)
{
	static const gchar begin[] = "-----BEGIN CERTIFICATE-----";
	static const gchar end[] = "-----END CERTIFICATE-----";
	g_autofree gchar *text = g_strndup(g_bytes_get_data(pem, NULL), g_bytes_get_size(pem));
	const gchar *cursor = text;
	guint count = 0;

	for (;;) {
		const gchar *start = strstr(cursor, begin);
		const gchar *stop;
		g_autoptr(GTlsCertificate) certificate = NULL;
		g_autoptr(GError) local_error = NULL;

		if (start == NULL)
			break;
		stop = strstr(start, end);
		if (stop == NULL) {
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            _("%s: certificate %u has no END line"), where, count + 1);
			return FALSE;
		}
		stop += strlen(end);
		certificate = g_tls_certificate_new_from_pem(start, stop - start, &local_error);
		if (certificate == NULL) {
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            _("%s: certificate %u is not a valid PEM certificate: %s"),
			            where, count + 1, local_error->message);
			return FALSE;
		}
		count++;
		cursor = stop;
	}
	if (count == 0) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: not a PEM certificate"), where);
		return FALSE;
	}
	return TRUE;
}

GTlsCertificate *
msd_kube_pem_certificate_with_key(const gchar *cert_pem,
                                  gsize cert_length,
                                  const gchar *cert_where,
                                  const gchar *key_pem,
                                  gsize key_length,
                                  const gchar *key_where,
                                  GError **error)
{
	g_autoptr(GTlsCertificate) alone = NULL;
	g_autoptr(GTlsCertificate) certificate = NULL;
	g_autoptr(GError) local_error = NULL;
	g_autoptr(GString) both = NULL;

	alone = g_tls_certificate_new_from_pem(cert_pem, cert_length, &local_error);
	if (alone == NULL ||
	    g_strstr_len(cert_pem, cert_length, "-----BEGIN CERTIFICATE-----") == NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: not a PEM certificate"), cert_where);
		return NULL;
	}
	/* without this check a key file holding no key would silently give a certificate
	 * without one, and the failure would only show in the TLS handshake */
	if (g_strstr_len(key_pem, key_length, "PRIVATE KEY-----") == NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: not a PEM private key"), key_where);
		return NULL;
	}
	both = g_string_new_len(cert_pem, cert_length);
	g_string_append_c(both, '\n');
	g_string_append_len(both, key_pem, key_length);
	g_clear_error(&local_error);
	certificate = g_tls_certificate_new_from_pem(both->str, both->len, &local_error);
	if (certificate == NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: not a PEM private key (%s)"), key_where, local_error->message);
		return NULL;
	}
	return g_steal_pointer(&certificate);
}
