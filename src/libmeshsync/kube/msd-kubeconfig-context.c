/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncKube"

#include "config.h"

#include "meshsync-error.h"
#include "kube/msd-exec-plugin.h"
#include "kube/msd-kube-pem.h"
#include "kube/msd-kubeconfig-context.h"
#include "kube/msd-proxy-resolver.h"
#include "util/msd-i18n.h"

static gboolean
msd_kubeconfig_context_load_cluster(MsdKubeTarget *target,
                                    const MsdKubeconfigEntry *entry,
                                    GError **error)
{
	g_autoptr(GUri) uri = NULL;
	g_autoptr(GBytes) ca = NULL;
	g_autofree gchar *where = NULL;
	const gchar *scheme;

	if (!msd_kubeconfig_entry_get_string(entry, "server", &target->server, error))
		return FALSE;
	if (target->server == NULL) {
		g_autofree gchar *field = msd_kubeconfig_entry_field(entry, "server");
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG, _("%s: missing"),
		            field);
		return FALSE;
	}
	uri = g_uri_parse(target->server, G_URI_FLAGS_NONE, NULL);
	scheme = uri != NULL ? g_uri_get_scheme(uri) : NULL;
	if (uri == NULL || g_uri_get_host(uri) == NULL ||
	    (g_strcmp0(scheme, "https") != 0 && g_strcmp0(scheme, "http") != 0)) {
		g_autofree gchar *field = msd_kubeconfig_entry_field(entry, "server");
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: \"%s\" is not an http or https URL"), field, target->server);
		return FALSE;
	}
	if (!msd_kubeconfig_entry_get_string(entry, "tls-server-name", &target->tls_server_name,
	                                     error))
		return FALSE;
	if (!msd_kubeconfig_entry_get_boolean(entry, "insecure-skip-tls-verify",
	                                      &target->insecure_skip_tls_verify, error))
		return FALSE;
	if (!msd_kubeconfig_entry_get_boolean(entry, "disable-compression",
	                                      &target->disable_compression, error))
		return FALSE;
	if (!msd_kubeconfig_entry_get_string(entry, "proxy-url", &target->proxy_url, error))
		return FALSE;
	if (target->proxy_url != NULL && target->proxy_url[0] == '\0')
		g_clear_pointer(&target->proxy_url, g_free);
	if (target->proxy_url != NULL) {
		g_autofree gchar *field = msd_kubeconfig_entry_field(entry, "proxy-url");
		if (!msd_proxy_resolver_check_url(target->proxy_url, field, error))
			return FALSE;
	}
	if (!msd_kube_pem_read(entry, "certificate-authority", &ca, &where, error))
		return FALSE;
	if (ca != NULL) {
		if (!msd_kube_pem_validate_ca_bundle(ca, where, error))
			return FALSE;
		target->ca_pem = g_steal_pointer(&ca);
	}
	return TRUE;
}

static gboolean
msd_kubeconfig_context_load_user(MsdKubeTarget *target,
                                 const MsdKubeconfigEntry *entry,
                                 const MsdKubeconfigEntry *cluster,
                                 GError **error)
{
	g_autoptr(GBytes) cert = NULL;
	g_autoptr(GBytes) key = NULL;
	g_autoptr(GTlsCertificate) client_certificate = NULL;
	g_autoptr(MsdExecPlugin) exec = NULL;
	g_autofree gchar *cert_where = NULL;
	g_autofree gchar *key_where = NULL;
	g_autofree gchar *static_token = NULL;
	g_autofree gchar *token_file = NULL;
	g_autofree gchar *file_token = NULL;
	JsonNode *exec_node;

	if (msd_kubeconfig_entry_get_member(entry, "auth-provider") != NULL) {
		g_autofree gchar *field = msd_kubeconfig_entry_field(entry, "auth-provider");
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: not supported (kubectl removed auth providers; use an exec "
		              "credential plugin)"),
		            field);
		return FALSE;
	}
	if (!msd_kubeconfig_entry_get_string(entry, "token", &static_token, error))
		return FALSE;
	if (!msd_kubeconfig_entry_get_string(entry, "tokenFile", &token_file, error))
		return FALSE;
	if (token_file != NULL) {
		g_autoptr(GError) local_error = NULL;
		g_autofree gchar *contents = NULL;
		gchar *resolved = msd_kubeconfig_entry_resolve_path(entry, token_file);

		g_free(token_file);
		token_file = resolved;
		if (g_file_get_contents(token_file, &contents, NULL, &local_error))
			file_token = msd_credentials_trim_token(contents);
		/* as client-go: a static token stands in when the file cannot be read */
		if (file_token == NULL && static_token == NULL) {
			g_autofree gchar *field = msd_kubeconfig_entry_field(entry, "tokenFile");
			if (local_error != NULL)
				g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
				            "%s: %s", field, local_error->message);
			else
				g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
				            _("%s: %s is empty"), field, token_file);
			return FALSE;
		}
	}
	if (!msd_kube_pem_read(entry, "client-certificate", &cert, &cert_where, error))
		return FALSE;
	if (!msd_kube_pem_read(entry, "client-key", &key, &key_where, error))
		return FALSE;
	if ((cert == NULL) != (key == NULL)) {
		g_autofree gchar *field = msd_kubeconfig_entry_field(
		        entry, cert == NULL ? "client-certificate" : "client-key");
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: missing (a client certificate needs both certificate and key)"),
		            field);
		return FALSE;
	}
	if (cert != NULL) {
		client_certificate = msd_kube_pem_certificate_with_key(
		        g_bytes_get_data(cert, NULL), g_bytes_get_size(cert), cert_where,
		        g_bytes_get_data(key, NULL), g_bytes_get_size(key), key_where, error);
		if (client_certificate == NULL)
			return FALSE;
	}
	exec_node = msd_kubeconfig_entry_get_member(entry, "exec");
	if (exec_node != NULL) {
		exec = msd_exec_plugin_new_from_entry(entry, exec_node, error);
		if (exec == NULL)
			return FALSE;
		msd_exec_plugin_set_cluster(exec, cluster, target->server, target->tls_server_name,
		                            target->insecure_skip_tls_verify, target->ca_pem);
	}
	target->credentials =
	        msd_credentials_new(static_token, client_certificate, token_file, file_token, exec);
	return TRUE;
}

gboolean
msd_kubeconfig_context_resolve(MsdKubeconfigMerge *merge,
                               const gchar *context,
                               MsdKubeTarget *target,
                               GError **error)
{
	g_autofree gchar *origins = msd_kubeconfig_merge_describe(merge);
	g_autofree gchar *cluster_name = NULL;
	g_autofree gchar *user_name = NULL;
	const gchar *context_name = context;
	const MsdKubeconfigEntry *ctx;
	const MsdKubeconfigEntry *cluster;
	const MsdKubeconfigEntry *user = NULL;

	if (context_name == NULL || context_name[0] == '\0')
		context_name = msd_kubeconfig_merge_get_current_context(merge);
	if (context_name == NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: current-context is not set and no context was given"), origins);
		return FALSE;
	}
	ctx = msd_kubeconfig_merge_get_context(merge, context_name);
	if (ctx == NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: context \"%s\" not found"), origins, context_name);
		return FALSE;
	}
	if (!msd_kubeconfig_entry_get_string(ctx, "cluster", &cluster_name, error))
		return FALSE;
	if (cluster_name == NULL) {
		g_autofree gchar *field = msd_kubeconfig_entry_field(ctx, "cluster");
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG, _("%s: missing"),
		            field);
		return FALSE;
	}
	cluster = msd_kubeconfig_merge_get_cluster(merge, cluster_name);
	if (cluster == NULL) {
		g_autofree gchar *field = msd_kubeconfig_entry_field(ctx, "cluster");
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: cluster \"%s\" not found"), field, cluster_name);
		return FALSE;
	}
	if (!msd_kubeconfig_entry_get_string(ctx, "user", &user_name, error))
		return FALSE;
	if (user_name != NULL) {
		user = msd_kubeconfig_merge_get_user(merge, user_name);
		if (user == NULL) {
			g_autofree gchar *field = msd_kubeconfig_entry_field(ctx, "user");
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            _("%s: user \"%s\" not found"), field, user_name);
			return FALSE;
		}
	}

	target->context_name = g_strdup(context_name);
	target->cluster_name = g_steal_pointer(&cluster_name);
	target->user_name = g_steal_pointer(&user_name);
	target->source = g_strdup(msd_kubeconfig_merge_get_source(merge));
	if (!msd_kubeconfig_entry_get_string(ctx, "namespace", &target->namespace, error))
		return FALSE;
	if (target->namespace == NULL)
		target->namespace = g_strdup("default");
	if (!msd_kubeconfig_context_load_cluster(target, cluster, error))
		return FALSE;
	if (user != NULL)
		return msd_kubeconfig_context_load_user(target, user, cluster, error);
	/* requests then go out anonymous, and the client need not tell the cases apart */
	target->credentials = msd_credentials_new(NULL, NULL, NULL, NULL, NULL);
	return TRUE;
}
