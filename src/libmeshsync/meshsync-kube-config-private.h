/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "meshsync-kube-config.h"

G_BEGIN_DECLS

/*
 * What a request needs to authenticate itself, resolved from the kubeconfig user (static
 * token, tokenFile, client certificate files or data, exec plugin) or the in-cluster service
 * account. Immutable once returned.
 */
typedef struct {
	gchar *token;                        /* (owned) (nullable): bearer token */
	GTlsCertificate *client_certificate; /* (owned) (nullable): certificate with its key */
} MeshSyncKubeCredentials;

void meshsync_kube_credentials_free(MeshSyncKubeCredentials *credentials);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MeshSyncKubeCredentials, meshsync_kube_credentials_free)

/* The CA bundle (PEM) from certificate-authority(-data) or the service-account ca.crt;
 * NULL means the system trust store. Read and validated when the config is loaded.
 * Returns: (transfer none) (nullable): owned by the config, valid as long as it lives. */
GBytes *meshsync_kube_config_get_ca_pem(MeshSyncKubeConfig *self);

/* The cluster's proxy-url, checked when the config is loaded; it overrides HTTPS_PROXY,
 * HTTP_PROXY and NO_PROXY as in client-go.
 * Returns: (transfer none) (nullable): NULL when the cluster names none. */
const gchar *meshsync_kube_config_get_proxy_url(MeshSyncKubeConfig *self);

/* Resolves the credentials for the next request. Cheap when cached: tokenFile and the
 * in-cluster token are re-read at most once a minute (the last good token is kept when a
 * read fails); an exec plugin runs asynchronously and its result is cached until its
 * expirationTimestamp. The callback runs in the caller's thread-default main context. */
void meshsync_kube_config_get_credentials_async(MeshSyncKubeConfig *self,
                                                GCancellable *cancellable,
                                                GAsyncReadyCallback callback,
                                                gpointer user_data);
MeshSyncKubeCredentials *meshsync_kube_config_get_credentials_finish(MeshSyncKubeConfig *self,
                                                                     GAsyncResult *result,
                                                                     GError **error);

/* Drops cached exec-plugin and token-file credentials, so that the next request resolves them
 * again; called after a 401, as client-go does. */
void meshsync_kube_config_invalidate_credentials(MeshSyncKubeConfig *self);

/* Test hook: where the in-cluster service-account files live (default
 * /var/run/secrets/kubernetes.io/serviceaccount) and how long a token file is trusted. */
void meshsync_kube_config_set_service_account_dir_for_testing(const gchar *dir);
void meshsync_kube_config_set_token_file_period_for_testing(MeshSyncKubeConfig *self,
                                                            guint seconds);
/* Test hook: how long a credential plugin may run before it is stopped (default 60 s). */
void meshsync_kube_config_set_exec_timeout_for_testing(MeshSyncKubeConfig *self, guint seconds);

G_END_DECLS
