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

/* The GnuTLS priorities that make the server choose as Go's crypto/tls does by default on
 * hardware with AES: TLS 1.2 and 1.3, AEAD ciphers only, AES-128-GCM first, the server's
 * order over the client's. */
#define KUBESIM_TLS_PRIORITY                                                                      \
	"NORMAL:%SERVER_PRECEDENCE:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-GCM:" \
	"+AES-256-GCM:+CHACHA20-POLY1305"

G_END_DECLS
