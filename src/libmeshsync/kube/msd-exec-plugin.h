/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

#include "kube/msd-kubeconfig-merge.h"

G_BEGIN_DECLS

/*
 * An exec credential plugin (client.authentication.k8s.io/v1 or v1beta1) as a kubeconfig
 * user's "exec" mapping describes it, checked when the configuration is loaded, and one run of
 * it: the command with its args and env, KUBERNETES_EXEC_INFO describing the request (never
 * interactive: a daemon has no terminal), stopped when it takes longer than the timeout. The
 * ExecCredential it prints is checked and turned into a token and/or a client certificate.
 *
 * Messages start with the user's field ("FILE: users[NAME].exec"). Caching the result and
 * sharing a run among callers is the caller's business (MsdCredentials).
 */
#define MSD_TYPE_EXEC_PLUGIN (msd_exec_plugin_get_type())
G_DECLARE_FINAL_TYPE(MsdExecPlugin, msd_exec_plugin, MSD, EXEC_PLUGIN, GObject)

/* Reads @exec, the "exec" member of @user. */
MsdExecPlugin *
msd_exec_plugin_new_from_entry(const MsdKubeconfigEntry *user, JsonNode *exec, GError **error);

/* What a plugin that sets provideClusterInfo is told as spec.cluster: the loaded cluster and
 * its client.authentication.k8s.io/exec extension. Ignored by other plugins. */
void msd_exec_plugin_set_cluster(MsdExecPlugin *self,
                                 const MsdKubeconfigEntry *cluster,
                                 const gchar *server,
                                 const gchar *tls_server_name,
                                 gboolean insecure_skip_tls_verify,
                                 GBytes *ca_pem);

/* Runs the plugin once. There is no cancellable: a run is shared by every request waiting for
 * credentials, and one of them giving up must not fail the others. */
void msd_exec_plugin_run_async(MsdExecPlugin *self,
                               guint timeout_seconds,
                               GAsyncReadyCallback callback,
                               gpointer user_data);
/* On success *token and/or *certificate are set (either may be NULL, not both) and *expiry is
 * the expirationTimestamp in real-time microseconds, G_MAXINT64 when the plugin gave none. */
gboolean msd_exec_plugin_run_finish(MsdExecPlugin *self,
                                    GAsyncResult *result,
                                    gchar **token,
                                    GTlsCertificate **certificate,
                                    gint64 *expiry,
                                    GError **error);

G_END_DECLS
