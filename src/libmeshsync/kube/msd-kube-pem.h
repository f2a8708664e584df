/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

#include "kube/msd-kubeconfig-merge.h"

G_BEGIN_DECLS

/*
 * Certificates and keys of a configuration, read and checked when it is loaded, so that a bad
 * file shows up as a message naming the field rather than as a failed TLS handshake later.
 * @where (a field such as "FILE: users[NAME].client-key") starts every message.
 */

/* Reads PEM from @field (a path, relative to the defining file) or @field-data (base64, which
 * wins when both are set). Returns FALSE on error; *pem stays NULL when neither is set, and
 * *where names the field the PEM came from. */
gboolean msd_kube_pem_read(const MsdKubeconfigEntry *entry,
                           const gchar *field,
                           GBytes **pem,
                           gchar **where,
                           GError **error);

/* Checks that @pem holds one or more certificates, each of which parses. */
gboolean msd_kube_pem_validate_ca_bundle(GBytes *pem, const gchar *where, GError **error);

/* Pairs a PEM certificate with its PEM private key. */
GTlsCertificate *msd_kube_pem_certificate_with_key(const gchar *cert_pem,
                                                   gsize cert_length,
                                                   const gchar *cert_where,
                                                   const gchar *key_pem,
                                                   gsize key_length,
                                                   const gchar *key_where,
                                                   GError **error);

G_END_DECLS
