/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define MSD_TYPE_PROXY_RESOLVER (msd_proxy_resolver_get_type())
G_DECLARE_FINAL_TYPE(MsdProxyResolver, msd_proxy_resolver, MSD, PROXY_RESOLVER, GObject)

gchar *msd_proxy_resolver_redact(const gchar *url);
gboolean msd_proxy_resolver_check_url(const gchar *url, const gchar *field, GError **error);
MsdProxyResolver *msd_proxy_resolver_new_fixed(const gchar *url);
MsdProxyResolver *msd_proxy_resolver_new_direct(void);
void msd_proxy_resolver_set_read_ahead(MsdProxyResolver *self, gboolean read_ahead);
MsdProxyResolver *msd_proxy_resolver_new_from_env(const gchar *https_proxy,
                                                  const gchar *http_proxy,
                                                  const gchar *no_proxy);
gboolean msd_proxy_resolver_bypasses(MsdProxyResolver *self, const gchar *host, guint16 port);

G_END_DECLS
