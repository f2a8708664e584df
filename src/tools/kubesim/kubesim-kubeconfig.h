/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/*
 * Writes a kubeconfig for @url: one cluster (with the CA when @ca_pem is set), one user (with
 * @token when set), one context, current. Written to a temporary file and renamed, so readers
 * never see half of it.
 */
gboolean kubesim_kubeconfig_write(const gchar *path,
                                  const gchar *url,
                                  const gchar *ca_pem,
                                  const gchar *token,
                                  GError **error);

G_END_DECLS
