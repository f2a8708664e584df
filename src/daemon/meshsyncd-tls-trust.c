/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncDaemon"

#include "config.h"

#include "meshsync-kube-config-private.h"
#include "meshsyncd-tls-trust.h"

struct _MeshsyncdNoTrust {
	GTlsDatabase parent_instance;
};

G_DEFINE_FINAL_TYPE(MeshsyncdNoTrust, meshsyncd_no_trust, G_TYPE_TLS_DATABASE)

static GTlsCertificateFlags
meshsyncd_no_trust_verify_chain(GTlsDatabase *database,
                                GTlsCertificate *chain,
                                const gchar *purpose,
                                GSocketConnectable *identity,
                                GTlsInteraction *interaction,
                                GTlsDatabaseVerifyFlags flags,
                                GCancellable *cancellable,
                                GError **error)
{
	return G_TLS_CERTIFICATE_UNKNOWN_CA;
}

static void
meshsyncd_no_trust_class_init(MeshsyncdNoTrustClass *klass)
{
	G_TLS_DATABASE_CLASS(klass)->verify_chain = meshsyncd_no_trust_verify_chain;
}

static void
meshsyncd_no_trust_init(MeshsyncdNoTrust *self)
{
}

gboolean
meshsyncd_tls_trust_cluster_only(MeshSyncKubeConfig *config)
{
	g_autoptr(GTlsDatabase) none = NULL;

	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(config), FALSE);

	if (meshsync_kube_config_get_ca_pem(config) == NULL &&
	    !meshsync_kube_config_get_insecure_skip_tls_verify(config))
		return FALSE;
	none = g_object_new(MESHSYNCD_TYPE_NO_TRUST, NULL);
	g_tls_backend_set_default_database(g_tls_backend_get_default(), none);
	g_debug("the kubeconfig names the cluster's CA or skips verification: no other "
	        "trust for this process");
	return TRUE;
}
