/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/*
 * Makes a throw-away CA and a server certificate it signs, valid for 127.0.0.1, ::1 and
 * localhost. Returns the server certificate with its key; @ca_pem_out gets the CA certificate
 * (PEM) for kubeconfigs.
 */
GTlsCertificate *kubesim_tls_generate(gchar **ca_pem_out, GError **error);

G_END_DECLS
