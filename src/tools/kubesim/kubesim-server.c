/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-server.h"

#include <string.h>

/* Requests held back by /kubesim/delay, dispatched when their timer fires. */
typedef struct {
	KubesimServer *self;
	SoupServerMessage *msg;
	gchar *path;
	GHashTable *query;
} Delayed;

static void
dispatch_api(KubesimServer *self, SoupServerMessage *msg, const gchar *path, GHashTable *query);

static gboolean
authorized(KubesimServer *self, SoupServerMessage *msg, const gchar *path)
{
	const gchar *auth;
	g_autofree gchar *expected = NULL;

	if (self->config.token == NULL)
		return TRUE;
	auth = soup_message_headers_get_one(soup_server_message_get_request_headers(msg),
	                                    "Authorization");
	/* anonymous requests may read the version, as system:public-info-viewer allows */
	if (auth == NULL && (g_strcmp0(path, "/version") == 0 || g_strcmp0(path, "/healthz") == 0))
		return TRUE;
	expected = g_strdup_printf("Bearer %s", self->config.token);
	return g_strcmp0(auth, expected) == 0;
}

/* Splits /api/v1/... and /apis/<g>/<v>/... into @req; FALSE for paths that name no resource. */
static gboolean
parse_resource_path(KubesimServer *self, gchar **segs, KubesimRequest *req, gboolean *is_gv_root)
{
	guint n = g_strv_length(segs);
	guint i;
	const gchar *resource;

	memset(req, 0, sizeof(*req));
	*is_gv_root = FALSE;
	if (n >= 2 && g_strcmp0(segs[0], "api") == 0) {
		req->group = "";
		req->version = segs[1];
		i = 2;
	} else if (n >= 3 && g_strcmp0(segs[0], "apis") == 0) {
		req->group = segs[1];
		req->version = segs[2];
		i = 3;
	} else {
		return FALSE;
	}
	if (i == n) {
		*is_gv_root = TRUE;
		return FALSE;
	}
	if (g_strcmp0(segs[i], "watch") == 0) {
		req->legacy_watch = TRUE;
		i++;
	}
	if (n - i >= 3 && g_strcmp0(segs[i], "namespaces") == 0) {
		req->namespace_ = segs[i + 1];
		i += 2;
	}
	resource = segs[i++];
	req->resource = kubesim_store_lookup(self->store, req->group, req->version, resource);
	if (req->resource == NULL)
		return FALSE;
	if (req->namespace_ != NULL && !req->resource->namespaced) {
		/* /api/v1/namespaces/<name>/<sub> is a subresource of a namespace */
		if (g_strcmp0(resource, "namespaces") != 0)
			return FALSE;
	}
	if (i < n)
		req->name = segs[i++];
	if (i < n)
		req->subresource = segs[i++];
	if (i < n)
		return FALSE;
	if (req->namespace_ != NULL && !req->resource->namespaced) {
		/* the namespace segment was the resource itself: namespaces/<name>/<sub> */
		req->subresource = req->name;
		req->name = req->namespace_;
		req->namespace_ = NULL;
	}
	if (req->subresource != NULL &&
	    (req->resource->subresources == NULL ||
	     !g_strv_contains((const gchar *const *)req->resource->subresources, req->subresource)))
		return FALSE;
	if (req->name != NULL && req->resource->namespaced && req->namespace_ == NULL)
		return FALSE;
	return TRUE;
}

/* Answers a list or watch as @fault says, or returns FALSE when @fault only changes the
 * usual response (the list or watch handler then applies it). */
static gboolean
respond_fault(KubesimServer *self,
              SoupServerMessage *msg,
              KubesimRequest *req,
              GHashTable *query,
              KubesimFault *fault,
              gboolean watch)
{
	g_debug("fault %u (%u of %u) answers %s on %s", fault->id, fault->consumed, fault->count,
	        watch ? "a watch" : "a list", req->resource->resource);
	switch (fault->kind) {
	case KUBESIM_FAULT_STATUS:
	case KUBESIM_FAULT_TOO_LARGE:
		kubesim_fault_respond_status(fault, msg, watch,
		                             kubesim_query_get(query, "resourceVersion"),
		                             kubesim_store_get_rv(self->store),
		                             kubesim_store_get_history_floor(self->store));
		return TRUE;
	case KUBESIM_FAULT_GARBAGE:
		kubesim_fault_respond_garbage(fault, msg, watch);
		return TRUE;
	case KUBESIM_FAULT_ENDLESS:
		kubesim_endless_list_start(self, msg, req, fault);
		return TRUE;
	case KUBESIM_FAULT_RESET:
		if (watch) {
			kubesim_fault_reset_watch(fault, msg);
			return TRUE;
		}
		return FALSE;
	default:
		return FALSE;
	}
}

static void
dispatch_api(KubesimServer *self, SoupServerMessage *msg, const gchar *path, GHashTable *query)
{
	const gchar *method = soup_server_message_get_method(msg);
	g_auto(GStrv) segs = NULL;
	KubesimRequest req;
	gboolean is_gv_root;
	gboolean watch;

	if (kubesim_discovery_handle(self, msg, path)) {
		kubesim_requests_record_path(self->requests,
		                             kubesim_requests_verb(method, TRUE, FALSE), path);
		return;
	}
	segs = g_strsplit(path[0] == '/' ? path + 1 : path, "/", -1);
	if (!parse_resource_path(self, segs, &req, &is_gv_root)) {
		kubesim_respond_not_found_page(msg);
		return;
	}
	watch = req.legacy_watch || kubesim_query_bool(query, "watch", FALSE);
	kubesim_requests_record_resource(
	        self->requests, kubesim_requests_verb(method, req.name != NULL, watch), req.group,
	        req.resource->resource, req.subresource, req.name);
	if (req.name == NULL && g_strcmp0(method, "GET") == 0) {
		g_autoptr(KubesimFault) fault = NULL;
		if (watch)
			self->watch_requests++;
		else
			self->list_requests++;
		fault = kubesim_faults_take(&self->faults,
		                            watch ? KUBESIM_FAULT_ON_WATCH : KUBESIM_FAULT_ON_LIST,
		                            path, req.resource);
		if (fault != NULL && respond_fault(self, msg, &req, query, fault, watch))
			return;
		if (watch)
			kubesim_watch_start(self, msg, &req, query, fault);
		else
			kubesim_list_handle(self, msg, &req, query, fault);
		return;
	}
	if (watch) {
		kubesim_respond_status(
		        msg, kubesim_status_new(405, "MethodNotAllowed",
		                                "the server does not allow this method on the "
		                                "requested resource"));
		return;
	}
	kubesim_crud_handle(self, msg, &req, query);
}

static gboolean
delayed_fire(gpointer data)
{
	Delayed *d = data;

	dispatch_api(d->self, d->msg, d->path, d->query);
	soup_server_message_unpause(d->msg);
	return G_SOURCE_REMOVE;
}

static void
delayed_free(gpointer data)
{
	Delayed *d = data;

	g_object_unref(d->msg);
	g_free(d->path);
	if (d->query != NULL)
		g_hash_table_unref(d->query);
	g_free(d);
}

static void
handle_request(SoupServer *server,
               SoupServerMessage *msg,
               const char *path,
               GHashTable *query,
               gpointer user_data)
{
	KubesimServer *self = user_data;

	g_debug("%s %s%s%s", soup_server_message_get_method(msg), path,
	        soup_server_message_get_uri(msg) != NULL &&
	                        g_uri_get_query(soup_server_message_get_uri(msg)) != NULL
	                ? "?"
	                : "",
	        soup_server_message_get_uri(msg) != NULL &&
	                        g_uri_get_query(soup_server_message_get_uri(msg)) != NULL
	                ? g_uri_get_query(soup_server_message_get_uri(msg))
	                : "");
	soup_message_headers_replace(soup_server_message_get_response_headers(msg), "Cache-Control",
	                             "no-cache, private");

	/* the admin endpoint bypasses auth and fault injection */
	if (g_str_has_prefix(path, "/kubesim/")) {
		kubesim_admin_handle(self, msg, path, query);
		return;
	}
	if (!authorized(self, msg, path)) {
		kubesim_respond_status(msg,
		                       kubesim_status_new(401, "Unauthorized", "Unauthorized"));
		return;
	}
	if (self->fail_count > 0) {
		self->fail_count--;
		if (self->fail_code == 429) {
			soup_message_headers_replace(soup_server_message_get_response_headers(msg),
			                             "Retry-After", "1");
			kubesim_respond_text(msg, 429,
			                     "Too many requests, please try again later.\n");
		} else {
			kubesim_respond_status(
			        msg, kubesim_status_new(self->fail_code, "InternalError",
			                                "Internal error occurred: injected by "
			                                "kubesim"));
		}
		return;
	}
	if (self->delay_ms > 0) {
		Delayed *d = g_new0(Delayed, 1);
		d->self = self;
		d->msg = g_object_ref(msg);
		d->path = g_strdup(path);
		d->query = query != NULL ? g_hash_table_ref(query) : NULL;
		soup_server_message_pause(msg);
		g_timeout_add_full(G_PRIORITY_DEFAULT, self->delay_ms, delayed_fire, d,
		                   delayed_free);
		return;
	}
	dispatch_api(self, msg, path, query);
}

typedef struct {
	KubesimServer *self;
	SoupServerMessage *msg;
	guint64 rv;
	gint64 deadline;
	KubesimRvWaitFunc func;
	gpointer data;
	GDestroyNotify destroy;
} RvWait;

/* How often a waiting read looks at the store again. */
#define RV_WAIT_POLL_MS 20

static gboolean
rv_wait_poll(gpointer user_data)
{
	RvWait *w = user_data;
	gboolean reached = kubesim_store_get_rv(w->self->store) >= w->rv;

	if (!reached && g_get_monotonic_time() < w->deadline)
		return G_SOURCE_CONTINUE;
	w->func(w->self, w->msg, reached, w->data);
	soup_server_message_unpause(w->msg);
	return G_SOURCE_REMOVE;
}

static void
rv_wait_free(gpointer user_data)
{
	RvWait *w = user_data;

	if (w->destroy != NULL)
		w->destroy(w->data);
	g_object_unref(w->msg);
	g_free(w);
}

void
kubesim_server_wait_for_rv(KubesimServer *self,
                           SoupServerMessage *msg,
                           guint64 rv,
                           KubesimRvWaitFunc func,
                           gpointer data,
                           GDestroyNotify destroy)
{
	RvWait *w;

	if (kubesim_store_get_rv(self->store) >= rv || self->config.rv_block_ms == 0) {
		func(self, msg, kubesim_store_get_rv(self->store) >= rv, data);
		if (destroy != NULL)
			destroy(data);
		return;
	}
	w = g_new0(RvWait, 1);
	w->self = self;
	w->msg = g_object_ref(msg);
	w->rv = rv;
	w->deadline = g_get_monotonic_time() + (gint64)self->config.rv_block_ms * 1000;
	w->func = func;
	w->data = data;
	w->destroy = destroy;
	soup_server_message_pause(msg);
	g_timeout_add_full(G_PRIORITY_DEFAULT, RV_WAIT_POLL_MS, rv_wait_poll, w, rv_wait_free);
}

/* Every store event goes to the watches, and pod events to the logs' followers. */
static void
dispatch_event(const KubesimEvent *event, gpointer user_data)
{
	KubesimServer *self = user_data;

	kubesim_watch_dispatch(event, self);
	if (event->resource->group[0] == '\0' && g_strcmp0(event->resource->resource, "pods") == 0)
		kubesim_logs_pod_event(self, event);
}

KubesimServer *
kubesim_server_new(const KubesimConfig *config,
                   const KubesimWorkload *workload,
                   KubesimStore *store)
{
	KubesimServer *self = g_new0(KubesimServer, 1);

	self->config = *config;
	self->config.token = g_strdup(config->token);
	self->workload = *workload;
	self->workload.data = g_strdup(workload->data);
	kubesim_faults_init(&self->faults);
	self->store = store;
	self->watches = g_ptr_array_new();
	self->list_snapshots = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL,
	                                             kubesim_list_snapshot_free);
	kubesim_store_set_listener(store, kubesim_watch_dispatch, self);
	self->logs = kubesim_logs_new();
	self->execs = g_ptr_array_new();
	self->requests = kubesim_requests_new();
	kubesim_store_set_listener(store, dispatch_event, self);
	return self;
}

void
kubesim_server_attach(KubesimServer *self, SoupServer *server)
{
	self->server = g_object_ref(server);
	soup_server_add_handler(server, NULL, handle_request, self, NULL);
}

void
kubesim_server_free(KubesimServer *self)
{
	kubesim_store_set_listener(self->store, NULL, NULL);
	kubesim_watch_free_all(self);
	g_ptr_array_unref(self->watches);
	g_hash_table_unref(self->list_snapshots);
	kubesim_exec_close_all(self);
	g_ptr_array_unref(self->execs);
	kubesim_logs_free(self->logs);
	kubesim_requests_free(self->requests);
	if (self->server != NULL) {
		soup_server_remove_handler(self->server, NULL);
		g_object_unref(self->server);
	}
	g_free(self->config.token);
	g_free(self->workload.data);
	kubesim_faults_clear(&self->faults);
	g_clear_pointer(&self->snapshot, kubesim_snapshot_free);
	g_free(self);
}
