/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A BROKER_URL taken apart: nats.c gets the servers without credentials (it neither
 * percent-decodes them nor should they reach a log line), the credentials go to its options. */
typedef struct {
	gchar **servers; /* (array zero-terminated=1): "nats://host:port" or "tls://host:port" */
	gchar *display;  /* the servers joined by commas, for messages */
	gchar *user;     /* (nullable) */
	gchar *password; /* (nullable) */
	gchar *token;    /* (nullable) */
	gboolean tls;    /* some server asked for tls:// */
} MsdBrokerUrl;

MsdBrokerUrl *msd_broker_url_parse(const gchar *url, GError **error);
void msd_broker_url_free(MsdBrokerUrl *url);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsdBrokerUrl, msd_broker_url_free)

G_END_DECLS
