/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* The proxy protocol of a direct connection read ahead (msd-read-ahead-stream.h). */
#define MSD_READ_AHEAD_PROTOCOL "meshsync-read-ahead"

#define MSD_TYPE_READ_AHEAD_PROXY (msd_read_ahead_proxy_get_type())
G_DECLARE_FINAL_TYPE(MsdReadAheadProxy, msd_read_ahead_proxy, MSD, READ_AHEAD_PROXY, GObject)

/* Makes #MsdReadAheadProxy GIO's proxy for MSD_READ_AHEAD_PROTOCOL. Idempotent. */
void msd_read_ahead_proxy_register(void);
/* Whether reading ahead is on: unless MESHSYNC_READ_AHEAD=0. */
gboolean msd_read_ahead_enabled(void);
/* The "proxy" URI a resolver answers for a direct connection to @host:@port read ahead. */
gchar *msd_read_ahead_proxy_uri(const gchar *host, gint port);
gboolean msd_read_ahead_proxy_uri_is(const gchar *proxy_uri);
/* @message (a GIO connection error) worded as for a direct connection when GIO worded it as
 * for a proxy server; NULL when it was not. */
gchar *msd_read_ahead_direct_message(const gchar *message);

G_END_DECLS
