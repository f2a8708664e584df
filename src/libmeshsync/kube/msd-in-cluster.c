/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncKube"

#include "config.h"

#include <string.h>

#include "meshsync-error.h"
#include "kube/msd-in-cluster.h"
#include "kube/msd-kube-pem.h"
#include "util/msd-i18n.h"

#define MSD_IN_CLUSTER_SERVICE_ACCOUNT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

static gchar *msd_in_cluster_service_account_dir = NULL;

void
msd_in_cluster_set_service_account_dir(const gchar *dir)
{
	g_free(msd_in_cluster_service_account_dir);
	msd_in_cluster_service_account_dir = g_strdup(dir);
}

gboolean
msd_in_cluster_load(MsdKubeTarget *target, GError **error)
{
	g_autoptr(GError) local_error = NULL;
	g_autofree gchar *contents = NULL;
	g_autofree gchar *token_path = NULL;
	g_autofree gchar *token = NULL;
	g_autofree gchar *ca_path = NULL;
	g_autofree gchar *namespace_path = NULL;
	const gchar *host = g_getenv("KUBERNETES_SERVICE_HOST");
	const gchar *port = g_getenv("KUBERNETES_SERVICE_PORT");
	const gchar *dir = msd_in_cluster_service_account_dir != NULL
	                           ? msd_in_cluster_service_account_dir
	                           : MSD_IN_CLUSTER_SERVICE_ACCOUNT_DIR;
	const gchar *pod_namespace = g_getenv("POD_NAMESPACE");
	gsize length = 0;

	if (host == NULL || host[0] == '\0' || port == NULL || port[0] == '\0') {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		                    _("not running in a cluster: KUBERNETES_SERVICE_HOST and "
		                      "KUBERNETES_SERVICE_PORT must both be set"));
		return FALSE;
	}

	target->in_cluster = TRUE;
	target->source = g_strdup("in-cluster");
	if (strchr(host, ':') != NULL)
		target->server = g_strdup_printf("https://[%s]:%s", host, port);
	else
		target->server = g_strdup_printf("https://%s:%s", host, port);

	token_path = g_build_filename(dir, "token", NULL);
	if (g_file_get_contents(token_path, &contents, NULL, &local_error))
		token = msd_credentials_trim_token(contents);
	if (token == NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: cannot read the service-account token%s%s"), token_path,
		            local_error != NULL ? ": " : _(" (empty file)"),
		            local_error != NULL ? local_error->message : "");
		return FALSE;
	}
	/* the kubelet rotates the projected token, so it is re-read like a tokenFile */
	target->credentials = msd_credentials_new(NULL, NULL, token_path, token, NULL);
	g_clear_pointer(&contents, g_free);
	g_clear_error(&local_error);

	ca_path = g_build_filename(dir, "ca.crt", NULL);
	if (g_file_get_contents(ca_path, &contents, &length, &local_error)) {
		g_autoptr(GBytes) ca = g_bytes_new_take(g_steal_pointer(&contents), length);
		if (!msd_kube_pem_validate_ca_bundle(ca, ca_path, error))
			return FALSE;
		target->ca_pem = g_steal_pointer(&ca);
	} else {
		/* client-go also carries on with the system trust store here */
		g_warning("%s: cannot read the service-account CA, using the system trust store: "
		          "%s",
		          ca_path, local_error->message);
	}
	g_clear_error(&local_error);

	if (pod_namespace != NULL && pod_namespace[0] != '\0') {
		target->namespace = g_strdup(pod_namespace);
	} else {
		namespace_path = g_build_filename(dir, "namespace", NULL);
		if (g_file_get_contents(namespace_path, &contents, NULL, NULL)) {
			g_strstrip(contents);
			if (contents[0] != '\0')
				target->namespace = g_steal_pointer(&contents);
		}
		if (target->namespace == NULL)
			target->namespace = g_strdup("default");
	}
	return TRUE;
}
