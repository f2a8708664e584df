/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <libsoup/soup.h>

#include "kubesim-store.h"

G_BEGIN_DECLS

typedef struct {
	guint history;           /* events a watch can resume from */
	guint page_token_ttl;    /* seconds */
	guint bookmark_interval; /* seconds between periodic BOOKMARKs */
	gchar *token;            /* required bearer token, or NULL */
} KubesimConfig;

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
} KubesimServer;

/* A parsed API path: /api/v1/..., /apis/<g>/<v>/... */
typedef struct {
	const gchar *group;
	const gchar *version;
	const gchar *namespace_; /* NULL when not in the path */
	KubesimResource *resource;
	const gchar *name;
	const gchar *subresource;
	gboolean legacy_watch; /* /api/v1/watch/... */
} KubesimRequest;

KubesimServer *kubesim_server_new(const KubesimConfig *config, KubesimStore *store);
void kubesim_server_free(KubesimServer *self);
/* Routes every request of @server (API, discovery, admin) to @self. */
void kubesim_server_attach(KubesimServer *self, SoupServer *server);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(KubesimServer, kubesim_server_free)

/* HTTP helpers (kubesim-http.c) */
void kubesim_respond_json(SoupServerMessage *msg, guint code, const gchar *json);
void kubesim_respond_json_take(SoupServerMessage *msg, guint code, gchar *json);
/* Answers with a Status body and takes @status. */
void kubesim_respond_status(SoupServerMessage *msg, KubesimStatus *status);
void kubesim_respond_text(SoupServerMessage *msg, guint code, const gchar *text);
void kubesim_respond_not_found_page(SoupServerMessage *msg);
/* Go's strconv.ParseBool; absent or unparsable values give @fallback. */
gboolean kubesim_query_bool(GHashTable *query, const gchar *key, gboolean fallback);
const gchar *kubesim_query_get(GHashTable *query, const gchar *key);
/* Whether the Accept header asks for a meta.k8s.io Table. */
gboolean kubesim_wants_table(SoupServerMessage *msg);
/* Whether the Accept header asks for aggregated discovery (apidiscovery.k8s.io/v2). */
gboolean kubesim_wants_aggregated(SoupServerMessage *msg);
/* The request body as bytes (possibly empty). */
GBytes *kubesim_request_body(SoupServerMessage *msg);

/* Discovery (kubesim-discovery.c): /version, /api, /apis and group versions. */
gboolean kubesim_discovery_handle(KubesimServer *self, SoupServerMessage *msg, const gchar *path);

/* List, get, create, update, patch, delete (kubesim-list.c, kubesim-crud.c). */
void kubesim_list_handle(KubesimServer *self,
                         SoupServerMessage *msg,
                         KubesimRequest *req,
                         GHashTable *query);
void kubesim_crud_handle(KubesimServer *self,
                         SoupServerMessage *msg,
                         KubesimRequest *req,
                         GHashTable *query);

/* Watches (kubesim-watch.c). */
void kubesim_watch_start(KubesimServer *self,
                         SoupServerMessage *msg,
                         KubesimRequest *req,
                         GHashTable *query);
void kubesim_watch_dispatch(const KubesimEvent *event, gpointer user_data);
void kubesim_watch_close_all(KubesimServer *self);
void kubesim_watch_send_malformed(KubesimServer *self);
void kubesim_watch_free_all(KubesimServer *self);

/* The admin endpoint /kubesim/ (kubesim-admin.c). */
void kubesim_admin_handle(KubesimServer *self,
                          SoupServerMessage *msg,
                          const gchar *path,
                          GHashTable *query);

/* Parses a request body or manifest (JSON, or YAML when @yaml_ok) into compact JSON. */
GBytes *kubesim_body_to_json(GBytes *body, gboolean yaml_ok, KubesimStatus **status_out);

G_END_DECLS
