/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

#include "kube/msd-credentials.h"

G_BEGIN_DECLS

/*
 * What a configuration source (a kubeconfig context, the pod's service account) resolves to:
 * the API server, how to verify it and who to be. The loaders fill one, and MeshSyncKubeConfig
 * takes it over whole, so that a configuration is complete and checked before it exists.
 */
typedef struct {
	gchar *server;
	gchar *context_name; /* (nullable) */
	gchar *cluster_name; /* (nullable) */
	gchar *user_name;    /* (nullable) */
	gchar *namespace;
	gchar *tls_server_name; /* (nullable) */
	gchar *proxy_url;       /* (nullable): the cluster's proxy-url, checked */
	gboolean insecure_skip_tls_verify;
	gboolean disable_compression; /* the cluster's disable-compression */
	gboolean in_cluster;
	gchar *source;
	GBytes *ca_pem;              /* (nullable): validated PEM bundle; NULL = system trust */
	MsdCredentials *credentials; /* never NULL once loaded */
} MsdKubeTarget;

static inline void
msd_kube_target_clear(MsdKubeTarget *target)
{
	g_clear_pointer(&target->server, g_free);
	g_clear_pointer(&target->context_name, g_free);
	g_clear_pointer(&target->cluster_name, g_free);
	g_clear_pointer(&target->user_name, g_free);
	g_clear_pointer(&target->namespace, g_free);
	g_clear_pointer(&target->tls_server_name, g_free);
	g_clear_pointer(&target->proxy_url, g_free);
	g_clear_pointer(&target->source, g_free);
	g_clear_pointer(&target->ca_pem, g_bytes_unref);
	g_clear_object(&target->credentials);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(MsdKubeTarget, msd_kube_target_clear)

G_END_DECLS
