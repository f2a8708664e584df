/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <libsoup/soup.h>

#include "kubesim-faults.h"
#include "kubesim-negotiate.h"
#include "kubesim-requests.h"
#include "kubesim-store.h"

G_BEGIN_DECLS

typedef struct {
	guint history;           /* events a watch can resume from */
	guint page_token_ttl;    /* seconds */
	guint bookmark_interval; /* seconds between periodic BOOKMARKs */
	guint rv_block_ms;       /* how long a read ahead of the store waits before 504 */
	gchar *token;            /* required bearer token, or NULL */
	/* (nullable): the bearer token of user "restricted": authenticated, with no RBAC grant,
	 * as realkube's --restricted-token (discovery only; every resource request gets 403) */
	gchar *restricted_token;
} KubesimConfig;

/* What the cluster holds at start, and what /kubesim/replace makes it hold. */
typedef struct {
	guint namespaces; /* 0 with 0 pods: no generated workload */
	guint pods;
	guint32 seed;
	gchar *data; /* (nullable): manifests to load */
} KubesimWorkload;

/* Loads @workload into an empty store: the objects every cluster has, the generated workload,
 * then the manifests; what was loaded becomes the starting state, with no history
 * (kubesim-cluster.c). Counts the objects loaded and refused. */
gboolean kubesim_workload_load(KubesimStore *store,
                               const KubesimWorkload *workload,
                               guint *loaded,
                               guint *refused,
                               GError **error);

/* Pod logs (kubesim-logs.c): the output of container instances and who follows it. */
typedef struct _KubesimLogs KubesimLogs;
KubesimLogs *kubesim_logs_new(void);
/* Ends every follower and forgets every appended line. */
void kubesim_logs_clear(KubesimLogs *logs);
void kubesim_logs_free(KubesimLogs *logs);

/* The state every request handler shares. */
typedef struct {
	KubesimConfig config;
	KubesimStore *store;
	SoupServer *server;
	GPtrArray *watches; /* KubesimWatch, open streams */
	guint flush_id;     /* idle that hands the live events written so far to libsoup */
	/* fault injection from the admin endpoint */
	guint fail_code;
	guint fail_count;
	guint delay_ms;
	gboolean expire_next_watch;
	gchar *expire_resource; /* (nullable): only a watch of this resource is expired */
	KubesimFaults faults;   /* for the next list and watch requests */
	guint64 list_requests;
	guint64 watch_requests;
	KubesimWorkload workload;  /* what the cluster was last loaded with */
	KubesimSnapshot *snapshot; /* (nullable): for /kubesim/restore */
	guint64 replaced;          /* times the whole state was replaced or restored */
	/* paginated lists in progress: what their later pages give, as of the first page's
	 * resourceVersion (etcd serves those pages from that revision) */
	GHashTable *list_snapshots; /* id -> KubesimListSnapshot (kubesim-list.c) */
	guint64 list_snapshot_next;
	KubesimLogs *logs;
	GPtrArray *execs; /* KubesimExec, open exec sessions */
	guint64 execs_v5; /* exec sessions upgraded, by protocol */
	guint64 execs_v4;
	KubesimRequests *requests; /* what clients asked, by verb and resource */
	/* the uids API Priority and Fairness names in its response headers: the flow schema and
	 * priority level a request was classified into (exempt for the admin, global-default
	 * for the restricted user), fixed for the server's life as a cluster's objects are */
	gchar *pf_admin[2];
	gchar *pf_restricted[2];
} KubesimServer;

/* Forgets every paginated list in progress (kubesim-list.c): their continue tokens expire. */
void kubesim_list_snapshots_clear(KubesimServer *self);
void kubesim_list_snapshot_free(gpointer snapshot);

/* A parsed API path: /api/v1/..., /apis/<g>/<v>/... */
typedef struct {
	const gchar *group;
	const gchar *version;
	const gchar *namespace_; /* NULL when not in the path */
	KubesimResource *resource;
	const gchar *name;
	const gchar *subresource;
	gboolean legacy_watch; /* /api/v1/watch/... */
	KubesimForm form;      /* what a read answers with, as its Accept header chose */
} KubesimRequest;

KubesimServer *kubesim_server_new(const KubesimConfig *config,
                                  const KubesimWorkload *workload,
                                  KubesimStore *store);
void kubesim_server_free(KubesimServer *self);
/* Routes every request of @server (API, discovery, admin) to @self. */
void kubesim_server_attach(KubesimServer *self, SoupServer *server);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(KubesimServer, kubesim_server_free)

/*
 * A read at a resourceVersion the store has not reached waits, as the watch cache does, up to
 * config.rv_block_ms: @func runs once the store reaches @rv (@reached TRUE) or when that time
 * is up (FALSE), at once when it need not wait. @msg is paused meanwhile and unpaused after
 * @func; @destroy frees @data after @func.
 */
typedef void (*KubesimRvWaitFunc)(KubesimServer *self,
                                  SoupServerMessage *msg,
                                  gboolean reached,
                                  gpointer data);
void kubesim_server_wait_for_rv(KubesimServer *self,
                                SoupServerMessage *msg,
                                guint64 rv,
                                KubesimRvWaitFunc func,
                                gpointer data,
                                GDestroyNotify destroy);

/* HTTP helpers (kubesim-http.c) */
void kubesim_respond_json(SoupServerMessage *msg, guint code, const gchar *json);
void kubesim_respond_json_take(SoupServerMessage *msg, guint code, gchar *json);
/* Answers with a Status body and takes @status. */
void kubesim_respond_status(SoupServerMessage *msg, KubesimStatus *status);
void kubesim_respond_text(SoupServerMessage *msg, guint code, const gchar *text);
/* A plain-text error as Go's http.Error writes it (X-Content-Type-Options: nosniff). */
void kubesim_respond_http_error(SoupServerMessage *msg, guint code, const gchar *text);
void kubesim_respond_not_found_page(SoupServerMessage *msg);
/* Whether answers may be gzipped at all (--no-compression turns it off). */
void kubesim_set_compression(gboolean enabled);
/* Whether the request's Accept-Encoding lets the API server gzip its answer. */
gboolean kubesim_accepts_gzip(SoupServerMessage *msg);
/* The API server gzips complete answers larger than this when the client accepts gzip. */
#define KUBESIM_GZIP_THRESHOLD (128 * 1024)
/* Gzips the response body written so far (one gzip member), with Content-Encoding and
 * Vary, when it is larger than KUBESIM_GZIP_THRESHOLD and the client accepts gzip. */
void kubesim_maybe_gzip(SoupServerMessage *msg);
/* A gzip stream written piece by piece; each member ends where a write says @finish (what
 * the API server's watch writer does at every flush of a streaming list). */
typedef struct _KubesimGzip KubesimGzip;
KubesimGzip *kubesim_gzip_new(void);
void kubesim_gzip_free(KubesimGzip *gz);
GBytes *kubesim_gzip_write(KubesimGzip *gz, const void *data, gsize len, gboolean finish);
/* Go's strconv.ParseBool; absent or unparsable values give @fallback. */
gboolean kubesim_query_bool(GHashTable *query, const gchar *key, gboolean fallback);
const gchar *kubesim_query_get(GHashTable *query, const gchar *key);
/* Every value of a repeated query parameter (libsoup's table keeps only the last). */
GPtrArray *kubesim_query_get_all(SoupServerMessage *msg, const gchar *key);
/* Whether the Accept header asks for a meta.k8s.io Table. */
gboolean kubesim_wants_table(SoupServerMessage *msg);
/* Whether the Accept header asks for aggregated discovery (apidiscovery.k8s.io/v2). */
gboolean kubesim_wants_aggregated(SoupServerMessage *msg);
/* The request body as bytes (possibly empty). */
GBytes *kubesim_request_body(SoupServerMessage *msg);

/* Discovery (kubesim-discovery.c): /version, /api, /apis and group versions. */
gboolean kubesim_discovery_handle(KubesimServer *self, SoupServerMessage *msg, const gchar *path);

/* List, get, create, update, patch, delete (kubesim-list.c, kubesim-crud.c). */
/* @fault: (nullable): an armed fault that changes this response (kubesim-faults.h) */
void kubesim_list_handle(KubesimServer *self,
                         SoupServerMessage *msg,
                         KubesimRequest *req,
                         GHashTable *query,
                         KubesimFault *fault);
/* A list whose items never end, for an ENDLESS fault (kubesim-endless.c). */
void kubesim_endless_list_start(KubesimServer *self,
                                SoupServerMessage *msg,
                                KubesimRequest *req,
                                const KubesimFault *fault);
void kubesim_crud_handle(KubesimServer *self,
                         SoupServerMessage *msg,
                         KubesimRequest *req,
                         GHashTable *query);

/* Watches (kubesim-watch.c). */
void kubesim_watch_start(KubesimServer *self,
                         SoupServerMessage *msg,
                         KubesimRequest *req,
                         GHashTable *query,
                         KubesimFault *fault);
void kubesim_watch_dispatch(const KubesimEvent *event, gpointer user_data);
void kubesim_watch_close_all(KubesimServer *self);
void kubesim_watch_send_malformed(KubesimServer *self);
void kubesim_watch_free_all(KubesimServer *self);

/*
 * Replaces the whole state, as an API server restarted against another etcd
 * (kubesim-cluster.c): open watches end, every object goes without events, @workload is
 * loaded under new uids with the resourceVersion counter restarting at @rv, and the history
 * starts empty there.
 */
gboolean kubesim_cluster_replace(KubesimServer *self,
                                 const KubesimWorkload *workload,
                                 guint64 rv,
                                 GError **error);
/* Puts back the last snapshot, as an etcd restored from a backup (see kubesim_store_restore). */
void kubesim_cluster_restore(KubesimServer *self, guint64 bump);

/* The admin endpoint /kubesim/ (kubesim-admin.c). */
void kubesim_admin_handle(KubesimServer *self,
                          SoupServerMessage *msg,
                          const gchar *path,
                          GHashTable *query);

/* GET .../pods/{name}/log (kubesim-logs.c). */
void kubesim_logs_handle(KubesimServer *self,
                         SoupServerMessage *msg,
                         KubesimRequest *req,
                         GHashTable *query);
/* POST /kubesim/logs appends lines to a container's output; GET tells its followers. */
void kubesim_logs_admin(KubesimServer *self, SoupServerMessage *msg, GHashTable *query);
void kubesim_logs_admin_get(KubesimServer *self, SoupServerMessage *msg, GHashTable *query);
/* Followers of container instances that stopped end; a deleted pod's output goes. */
void kubesim_logs_pod_event(KubesimServer *self, const KubesimEvent *ev);

/* GET .../pods/{name}/exec over a WebSocket (kubesim-exec.c). */
void kubesim_exec_handle(KubesimServer *self,
                         SoupServerMessage *msg,
                         KubesimRequest *req,
                         GHashTable *query);
/* Ends every exec session, as a restarted server drops its connections. */
void kubesim_exec_close_all(KubesimServer *self);

/* Parses a request body or manifest (JSON, or YAML when @yaml_ok) into compact JSON. */
GBytes *kubesim_body_to_json(GBytes *body, gboolean yaml_ok, KubesimStatus **status_out);

G_END_DECLS
