/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define MSD_TYPE_HTTPS_PROXY (msd_https_proxy_get_type())
G_DECLARE_FINAL_TYPE(MsdHttpsProxy, msd_https_proxy, MSD, HTTPS_PROXY, GObject)

void msd_https_proxy_register(void);
void msd_https_proxy_trust(const gchar *proxy_uri,
                           const gchar *host,
                           guint16 port,
                           GList *ca_certificates,
                           gboolean insecure);

G_END_DECLS
