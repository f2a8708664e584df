/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "engine/msd-engine-context.h"
#include "health/msd-metrics.h"
#include "meshsync-broker.h"
#include "meshsync-kube-config.h"
#include "meshsync-session.h"

G_BEGIN_DECLS

#define MSD_SUBJECT_LOGS                 "meshery.meshsync.logs"
#define MSD_SESSION_DEFAULT_MAX          64
#define MSD_SESSION_DEFAULT_IDLE_SECONDS (30 * 60)

/*
 * The log and exec sessions of the broker, keyed by upstream's session ids: started and
 * stopped by `log-stream` and `exec-request` payloads, their output relayed in upstream's
 * envelopes (log chunks on meshery.meshsync.logs, exec output on the session subject, exec
 * input from input.<session id>), refusals and failures sent as `error` messages. Owned by
 * the service; every session ends with stop_all().
 */
#define MSD_TYPE_SESSION_RELAY (msd_session_relay_get_type())
G_DECLARE_FINAL_TYPE(MsdSessionRelay, msd_session_relay, MSD, SESSION_RELAY, GObject)

/* The sessions send through @engine's kube client (made from @config if the engine has none
 * yet); they are counted in @engine's metrics registry when it has one. */
MsdSessionRelay *
msd_session_relay_new(MeshSyncBus *bus, MsdEngineContext *engine, MeshSyncKubeConfig *config);

/* Declares the session counts at zero in @metrics, before any relay exists. */
void msd_session_relay_declare_metrics(MsdMetrics *metrics);
/* 0 max_sessions: no session at all. NULL exec_namespaces: every namespace. idle 0: never. */
void msd_session_relay_set_limits(MsdSessionRelay *self,
                                  guint max_sessions,
                                  gboolean exec_enabled,
                                  const gchar *const *exec_namespaces,
                                  guint exec_idle_seconds);

/* The Payload of a log-stream or exec-request request: an object of requests. */
void msd_session_relay_handle_logs(MsdSessionRelay *self, JsonNode *payload);
void msd_session_relay_handle_exec(MsdSessionRelay *self, JsonNode *payload);

/* The ids of every session (exec and log, as upstream lists them), as a JSON array. */
gchar *msd_session_relay_dup_active_json(MsdSessionRelay *self);
/* (element-type MeshSyncSession) (transfer container) */
GPtrArray *msd_session_relay_dup_sessions(MsdSessionRelay *self);

/* Ends every session and refuses new ones. */
void msd_session_relay_stop_all(MsdSessionRelay *self);

G_END_DECLS
