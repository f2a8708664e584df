/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>
#include <libsoup/soup.h>

#include "meshsync-kube-config.h"

G_BEGIN_DECLS

/*
 * The private HTTP client of one API server: one SoupSession, TLS verification on by default
 * (CA from the config), client certificates and bearer tokens from the config's credentials,
 * a "meshsync/<version>" user agent, gzip accepted. Every failure is a MESHSYNC_ERROR with one
 * line naming the URL and, for an API error, the Status message.
 *
 * All calls and callbacks belong to the thread-default main context the client was created in.
 */
#define MSD_TYPE_KUBE_CLIENT (msd_kube_client_get_type())
G_DECLARE_FINAL_TYPE(MsdKubeClient, msd_kube_client, MSD, KUBE_CLIENT, GObject)

MsdKubeClient *msd_kube_client_new(MeshSyncKubeConfig *config, GError **error);

MeshSyncKubeConfig *msd_kube_client_get_config(MsdKubeClient *self);
const gchar *msd_kube_client_get_server(MsdKubeClient *self);
/* The largest body msd_kube_client_get_async() reads (256 MiB by default); beyond it the call
 * fails with MESHSYNC_ERROR_TOO_LARGE naming the URL. For tests and tuning. */
void msd_kube_client_set_max_body(MsdKubeClient *self, gsize bytes);

/* A connection of this client was found black-holed (a watch that went silent): for the next
 * minute every request goes on a new connection, none on a pooled one that may be too. */
void msd_kube_client_distrust_pool(MsdKubeClient *self);

/* MSD_KUBE_REQUEST_ONE_SHOT: the request says "Connection: close", so its connection ends
 * with its answer instead of waiting in the pool. For requests that come in bursts and are
 * not followed by others (a session's pod lookup or log stream): the pool keeps libsoup's
 * 60 s idle timeout for the informers' lists. A shorter idle timeout is what made libsoup
 * 3.2 free a connection a message was still reading from (doc/reliability.md finding 26). */
/* MSD_KUBE_REQUEST_METADATA: the answer is asked for as metadata only, what client-go's
 * metadata informer asks for: a PartialObjectMetadataList for a GET, a PartialObjectMetadata
 * per event for a stream (a watch, the streaming list's included), plain JSON as the
 * fallback a server without the conversion answers with. */
/* MSD_KUBE_REQUEST_NEW_CONNECTION: sent on a connection of its own, not one from the pool: after
 * a silent connection, the idle ones opened beside it may be black-holed as well. */
typedef enum {
	MSD_KUBE_REQUEST_DEFAULT = 0,
	MSD_KUBE_REQUEST_ONE_SHOT = 1 << 0,
	MSD_KUBE_REQUEST_METADATA = 1 << 1,
	MSD_KUBE_REQUEST_NEW_CONNECTION = 1 << 2,
} MsdKubeRequestFlags;

#define MSD_KUBE_ACCEPT_METADATA_LIST \
	"application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
#define MSD_KUBE_ACCEPT_METADATA \
	"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

/* GET @path_and_query (such as "/api/v1/pods?limit=500") and read the whole 2xx body. */
void msd_kube_client_get_async(MsdKubeClient *self,
                               const gchar *path_and_query,
                               GCancellable *cancellable,
                               GAsyncReadyCallback callback,
                               gpointer user_data);
void msd_kube_client_get_full_async(MsdKubeClient *self,
                                    const gchar *path_and_query,
                                    MsdKubeRequestFlags flags,
                                    GCancellable *cancellable,
                                    GAsyncReadyCallback callback,
                                    gpointer user_data);
GBytes *msd_kube_client_get_finish(MsdKubeClient *self, GAsyncResult *result, GError **error);

/* GET @path_and_query and hand over the body stream once a 2xx status has arrived: for watches
 * and log follows. A non-2xx status is read in full and turned into an error. */
void msd_kube_client_stream_async(MsdKubeClient *self,
                                  const gchar *path_and_query,
                                  GCancellable *cancellable,
                                  GAsyncReadyCallback callback,
                                  gpointer user_data);
void msd_kube_client_stream_full_async(MsdKubeClient *self,
                                       const gchar *path_and_query,
                                       MsdKubeRequestFlags flags,
                                       GCancellable *cancellable,
                                       GAsyncReadyCallback callback,
                                       gpointer user_data);
GInputStream *
msd_kube_client_stream_finish(MsdKubeClient *self, GAsyncResult *result, GError **error);

/* Opens a WebSocket on @path_and_query (GET with Upgrade) offering @protocols, with the same
 * credentials and TLS checks as every other request: for exec. A refused upgrade (any answer
 * but 101) is an error with its HTTP status; the body of that answer is not available. */
void msd_kube_client_websocket_async(MsdKubeClient *self,
                                     const gchar *path_and_query,
                                     const gchar *const *protocols,
                                     GCancellable *cancellable,
                                     GAsyncReadyCallback callback,
                                     gpointer user_data);
SoupWebsocketConnection *
msd_kube_client_websocket_finish(MsdKubeClient *self, GAsyncResult *result, GError **error);

/* Turns a non-2xx answer into a MESHSYNC_ERROR: 401, 403, 404, 410 get their own codes, other
 * statuses MESHSYNC_ERROR_HTTP; the message carries the Status body's message when there is
 * one. Shared with the tests so they can check the wording. */
GError *msd_kube_client_error_from_status(const gchar *url, guint status, GBytes *body);

/* The HTTP status of an error from msd_kube_client_error_from_status() (whatever its code:
 * MESHSYNC_ERROR_HTTP, _UNAUTHORIZED, _FORBIDDEN, _NOT_FOUND, _GONE), or 0 for any other error
 * (transport, TLS, cancellation, another domain). Callers use it to tell a refusal (4xx) from
 * a passing server failure (5xx). The status is carried in the error's message, in a form
 * written and read only by the client. */
guint msd_kube_client_error_get_status(const GError *error);

/* A Retry-After beyond this is not believed: the informer's own backoff cap takes over. */
#define MSD_KUBE_CLIENT_MAX_RETRY_AFTER 600

/* The Retry-After (delay-seconds) of a 429 or 503 answer, 0 when it had none. */
guint msd_kube_client_error_get_retry_after(const GError *error);

G_END_DECLS
