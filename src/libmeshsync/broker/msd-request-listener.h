/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "broker/msd-session-relay.h"
#include "meshsync-broker.h"
#include "meshsync-handler.h"
#include "health/msd-metrics.h"

G_BEGIN_DECLS

/* Upstream's request subject and queue group: several replicas share the requests. */
#define MSD_SUBJECT_REQUEST       "meshery.meshsync.request"
#define MSD_REQUEST_QUEUE         "meshsync-request-stream"
#define MSD_SUBJECT_META          "meshsync-meta"
#define MSD_SUBJECT_ACTIVE_EXEC   "active_sessions.exec"
#define MSD_STORE_BATCH_SIZE      5
#define MSD_ACTIVE_EXEC_PERIOD_MS 10000

/* A request taken from its envelope. */
typedef struct {
	gchar *entity;     /* (not nullable) */
	JsonNode *payload; /* (nullable): absent payload */
} MsdRequest;

void msd_request_free(MsdRequest *request);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsdRequest, msd_request_free)

/* Reads an envelope as Go's encoding/json would: keys match case-insensitively, the last
 * matching key wins and unknown keys are ignored. A null or absent Request is an error, as
 * upstream logs it (ErrInvalidRequest). */
MsdRequest *msd_request_parse(const gchar *data, gsize length, GError **error);

/* The reply subject of an informer-store payload ({"Reply": "..."}, key in any case), or
 * NULL when there is none. */
gchar *msd_request_dup_reply(JsonNode *payload);

/* Splits @n items into batches of at most @size; returns the batch lengths. */
GArray *msd_request_split_batches(guint n, guint size);

#define MSD_TYPE_REQUEST_LISTENER (msd_request_listener_get_type())
G_DECLARE_FINAL_TYPE(MsdRequestListener, msd_request_listener, MSD, REQUEST_LISTENER, GObject)

/* Answers the requests for @handler's state on @broker; the version is what meshsync-meta
 * replies with. Requests are counted in the metrics registry of @handler's engine context,
 * when it has one. */
MsdRequestListener *
msd_request_listener_new(MeshSyncBus *bus, MeshSyncHandler *handler, const gchar *version);

/* One shard of @total (before starting): every shard then gets every request, answers
 * informer-store from its own objects and resyncs; only shard 0 answers the other entities. */
void msd_request_listener_set_shard(MsdRequestListener *self, guint index, guint total);

/* Declares the request counts at zero in @metrics, before any listener exists. */
void msd_request_listener_declare_metrics(MsdMetrics *metrics);

/* Hands log-stream and exec-request to @sessions, and lists them for active-exec. */
void msd_request_listener_set_sessions(MsdRequestListener *self, MsdSessionRelay *sessions);

/* How often the active-exec ticker publishes; for tests. */
void msd_request_listener_set_active_exec_period(MsdRequestListener *self, guint milliseconds);

gboolean msd_request_listener_start(MsdRequestListener *self, GError **error);

/* Unsubscribes, stops the ticker and cancels replies in progress. */
void msd_request_listener_stop(MsdRequestListener *self);

/* Whether the active-exec ticker runs (there is only ever one). */
gboolean msd_request_listener_get_active_exec_running(MsdRequestListener *self);

/* Handles one request as if it had arrived on the request subject. */
void msd_request_listener_handle(MsdRequestListener *self, GBytes *envelope);

/* Publishes every object the handler holds on @reply in batches; completes once the last
 * batch is handed to the broker (or with an error). Runs by itself for informer-store. */
void msd_request_listener_reply_store_async(MsdRequestListener *self,
                                            const gchar *reply,
                                            GCancellable *cancellable,
                                            GAsyncReadyCallback callback,
                                            gpointer user_data);
/* Returns the number of batches published, or -1 with @error set. */
gssize msd_request_listener_reply_store_finish(MsdRequestListener *self,
                                               GAsyncResult *result,
                                               GError **error);

G_END_DECLS
