/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

#include "meshsync-kube-config.h"

G_BEGIN_DECLS

/*
 * A fake API server for the unit tests: a SoupServer on 127.0.0.1, port 0, plain HTTP or HTTPS
 * with the certificate of tests/data/tls/server.pem. It runs in the thread-default main
 * context of its creator, so a test drives it by iterating that context while it waits.
 * Unknown paths get a 404 Status.
 */
typedef struct _MsdTestServer MsdTestServer;

MsdTestServer *msd_test_server_new(gboolean tls);
void msd_test_server_free(MsdTestServer *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsdTestServer, msd_test_server_free)

/* "https://127.0.0.1:<port>" (or http), without a trailing slash */
const gchar *msd_test_server_get_url(MsdTestServer *self);

/* Requests without "Authorization: Bearer <token>" get a 401 Status. */
void msd_test_server_set_token(MsdTestServer *self, const gchar *token);

/* Answers compressed with gzip, with Content-Encoding: gzip. */
void msd_test_server_set_gzip(MsdTestServer *self, gboolean gzip);

/* Serves @body (JSON, or any text) with @status at @path (queries are ignored). */
void msd_test_server_add(MsdTestServer *self, const gchar *path, guint status, const gchar *body);

/* Serves the file @name of tests/data/discovery with 200 at @path. */
void msd_test_server_add_fixture(MsdTestServer *self, const gchar *path, const gchar *name);

/* How many requests reached @path, whatever their answer. */
guint msd_test_server_get_hits(MsdTestServer *self, const gchar *path);

/* A request header of the last request that reached the server, or NULL. */
const gchar *msd_test_server_get_last_header(MsdTestServer *self, const gchar *name);

/* Asks clients for a certificate, verified against tests/data/tls/ca.pem. */
void msd_test_server_request_client_certificate(MsdTestServer *self);

/* The client certificate of the last request, or NULL. */
GTlsCertificate *msd_test_server_get_last_peer_certificate(MsdTestServer *self);

/* A file below the MESHSYNC_TEST_DATA directory. */
gchar *msd_test_data_path(const gchar *first, ...) G_GNUC_NULL_TERMINATED;

/* Writes a kubeconfig for @server into a new temporary directory and loads it. @ca_name is a
 * file of tests/data/tls (NULL: no CA); @token may be NULL; @cluster_extra is added to the
 * cluster stanza verbatim, such as "tls-server-name: kubernetes" (NULL: nothing). */
MeshSyncKubeConfig *msd_test_kubeconfig_new(const gchar *server,
                                            const gchar *ca_name,
                                            const gchar *token,
                                            const gchar *cluster_extra);

/* The same with @user as the user stanza's content, such as "client-certificate: <path>"
 * lines joined with "\n    " (NULL: no credentials). */
MeshSyncKubeConfig *msd_test_kubeconfig_new_with_user(const gchar *server,
                                                      const gchar *ca_name,
                                                      const gchar *cluster_extra,
                                                      const gchar *user);

/* Iterates the thread-default main context until *@flag is TRUE. */
void msd_test_wait_for(gboolean *flag);

/* Keeps the result of an async call for the test to finish it; pair with msd_test_wait_for
 * (&async.done). */
typedef struct {
	gboolean done;
	GAsyncResult *result; /* (owned) */
} MsdTestAsync;

void msd_test_async_cb(GObject *source, GAsyncResult *result, gpointer user_data);

G_END_DECLS
