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

/* Who sent a request, as the authenticator and the authorizer see it. */
typedef enum {
	USER_UNAUTHORIZED, /* a token that is not ours, or none where one is needed: 401 */
	USER_ANONYMOUS,    /* no token, on a path system:public-info-viewer may read */
	USER_ADMIN,
	USER_RESTRICTED,
} User;

static User
authenticate(KubesimServer *self, SoupServerMessage *msg, const gchar *path)
{
	const gchar *auth;
	g_autofree gchar *expected = NULL;

	auth = soup_message_headers_get_one(soup_server_message_get_request_headers(msg),
	                                    "Authorization");
	if (self->config.restricted_token != NULL && auth != NULL) {
		g_autofree gchar *restricted =
		        g_strdup_printf("Bearer %s", self->config.restricted_token);
		if (g_strcmp0(auth, restricted) == 0)
			return USER_RESTRICTED;
	}
	if (self->config.token == NULL)
		return USER_ADMIN;
	/* anonymous requests may read the version, as system:public-info-viewer allows */
	if (auth == NULL && (g_strcmp0(path, "/version") == 0 || g_strcmp0(path, "/healthz") == 0))
		return USER_ANONYMOUS;
	expected = g_strdup_printf("Bearer %s", self->config.token);
	return g_strcmp0(auth, expected) == 0 ? USER_ADMIN : USER_UNAUTHORIZED;
}

/* The attributes the authorizer sees, as the API server's RequestInfoFactory parses a path. */
typedef struct {
	gboolean resource_request;
	const gchar *verb;
	const gchar *group;
	const gchar *resource;
	const gchar *subresource;
	const gchar *namespace_;
	const gchar *name;
	gchar *selected_name; /* a fieldSelector metadata.name=X names the object */
} RequestInfo;

static void
request_info_parse(gchar **segs, GHashTable *query, const gchar *method, RequestInfo *info)
{
	guint n = g_strv_length(segs);
	guint i;
	gchar **parts;
	guint np;

	memset(info, 0, sizeof(*info));
	/* the API server splits the path with its slashes trimmed: /api/v1/ is /api/v1 */
	while (n > 0 && segs[n - 1][0] == '\0')
		n--;
	if (g_strcmp0(method, "POST") == 0)
		info->verb = "create";
	else if (g_strcmp0(method, "PUT") == 0)
		info->verb = "update";
	else if (g_strcmp0(method, "PATCH") == 0)
		info->verb = "patch";
	else if (g_strcmp0(method, "DELETE") == 0)
		info->verb = "delete";
	else
		info->verb = "get";
	if (n >= 3 && g_strcmp0(segs[0], "api") == 0) {
		info->group = "";
		i = 2;
	} else if (n >= 4 && g_strcmp0(segs[0], "apis") == 0) {
		info->group = segs[1];
		i = 3;
	} else {
		return; /* /api, /api/v1, /apis/<g>/<v>, /version...: non-resource URLs */
	}
	info->resource_request = TRUE;
	if (g_strcmp0(segs[i], "watch") == 0) {
		info->verb = "watch";
		i++;
	}
	parts = segs + i;
	np = n - i;
	if (np > 0 && g_strcmp0(parts[0], "namespaces") == 0 && np > 1) {
		info->namespace_ = parts[1];
		/* namespaces/<name>/status and /finalize are the namespace's own subresources */
		if (np > 2 && g_strcmp0(parts[2], "status") != 0 &&
		    g_strcmp0(parts[2], "finalize") != 0) {
			parts += 2;
			np -= 2;
		}
	}
	if (np >= 3)
		info->subresource = parts[2];
	if (np >= 2)
		info->name = parts[1];
	info->resource = np >= 1 ? parts[0] : ""; /* /api/v1/watch alone names none */
	if (info->name == NULL && g_strcmp0(info->verb, "get") == 0) {
		const gchar *fields = kubesim_query_get(query, "fieldSelector");

		info->verb = kubesim_query_bool(query, "watch", FALSE) ? "watch" : "list";
		if (fields != NULL) {
			g_auto(GStrv) terms = g_strsplit(fields, ",", -1);
			for (guint t = 0; terms[t] != NULL; t++) {
				const gchar *value = NULL;
				if (g_str_has_prefix(terms[t], "metadata.name=="))
					value = terms[t] + strlen("metadata.name==");
				else if (g_str_has_prefix(terms[t], "metadata.name="))
					value = terms[t] + strlen("metadata.name=");
				if (value != NULL && value[0] != '\0') {
					g_free(info->selected_name);
					info->selected_name = g_strdup(value);
					info->name = info->selected_name;
				}
			}
		}
	}
	if (info->name == NULL && g_strcmp0(info->verb, "delete") == 0)
		info->verb = "deletecollection";
}

/* What RBAC lets every authenticated user read (system:discovery, system:basic-user,
 * system:public-info-viewer): discovery, the version and the health checks. */
static gboolean
restricted_may_read(const gchar *path)
{
	static const gchar *const exact[] = {"/api",      "/apis",    "/version",
	                                     "/version/", "/healthz", "/livez",
	                                     "/readyz",   "/openapi", NULL};

	return g_strv_contains(exact, path) || g_str_has_prefix(path, "/api/") ||
	       g_str_has_prefix(path, "/apis/") || g_str_has_prefix(path, "/openapi/");
}

/* 403 as RBAC words it when no rule grants the request (authorizer.Forbidden). */
static void
respond_forbidden(SoupServerMessage *msg, const RequestInfo *info, const gchar *path)
{
	KubesimStatus *status;
	g_autofree gchar *why = NULL;
	g_autofree gchar *qualified = NULL;
	g_autofree gchar *resource = NULL;

	if (!info->resource_request) {
		why = g_strdup_printf("User \"restricted\" cannot %s path \"%s\"", info->verb,
		                      path);
		status = kubesim_status_new(403, "Forbidden", "forbidden: %s", why);
		status->details_always = TRUE;
	} else {
		resource = info->subresource != NULL
		                   ? g_strdup_printf("%s/%s", info->resource, info->subresource)
		                   : g_strdup(info->resource);
		if (info->namespace_ != NULL)
			why = g_strdup_printf(
			        "User \"restricted\" cannot %s resource \"%s\" in API "
			        "group \"%s\" in the namespace \"%s\"",
			        info->verb, resource, info->group, info->namespace_);
		else
			why = g_strdup_printf(
			        "User \"restricted\" cannot %s resource \"%s\" in API "
			        "group \"%s\" at the cluster scope",
			        info->verb, resource, info->group);
		qualified = info->group[0] != '\0'
		                    ? g_strdup_printf("%s.%s", info->resource, info->group)
		                    : g_strdup(info->resource);
		if (info->name != NULL)
			status = kubesim_status_new(403, "Forbidden", "%s \"%s\" is forbidden: %s",
			                            qualified, info->name, why);
		else
			status = kubesim_status_new(403, "Forbidden", "%s is forbidden: %s",
			                            qualified, why);
		kubesim_status_details(status, info->group, info->resource, info->name);
		status->details_always = TRUE;
	}
	/* responsewriters.Forbidden sets it, unlike the other errors */
	soup_message_headers_replace(soup_server_message_get_response_headers(msg),
	                             "X-Content-Type-Options", "nosniff");
	kubesim_respond_status(msg, status);
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

/* Whether @segs start with a group version some resource is served under. */
static gboolean
served_group_version(KubesimServer *self, gchar **segs)
{
	GPtrArray *resources = kubesim_store_get_resources(self->store);
	guint n = g_strv_length(segs);
	const gchar *group, *version;

	if (n >= 2 && g_strcmp0(segs[0], "api") == 0) {
		group = "";
		version = segs[1];
	} else if (n >= 3 && g_strcmp0(segs[0], "apis") == 0) {
		group = segs[1];
		version = segs[2];
	} else {
		return FALSE;
	}
	for (guint i = 0; i < resources->len; i++) {
		KubesimResource *res = g_ptr_array_index(resources, i);
		if (g_strcmp0(res->group, group) == 0 && g_strcmp0(res->version, version) == 0)
			return TRUE;
	}
	return FALSE;
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
		if (served_group_version(self, segs))
			/* the group version's own router: a Status, unlike unknown paths */
			kubesim_respond_status(
			        msg, kubesim_status_new_details(404, "NotFound",
			                                        "the server could not find the "
			                                        "requested resource"));
		else
			kubesim_respond_not_found_page(msg);
		return;
	}
	watch = req.legacy_watch || kubesim_query_bool(query, "watch", FALSE);
	if (req.group[0] == '\0' && g_strcmp0(req.resource->resource, "endpoints") == 0)
		/* the deprecation warning a 1.33+ server adds to every request for the type */
		soup_message_headers_append(
		        soup_server_message_get_response_headers(msg), "Warning",
		        "299 - \"v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 "
		        "EndpointSlice\"");
	kubesim_requests_record_resource(
	        self->requests, kubesim_requests_verb(method, req.name != NULL, watch), req.group,
	        req.resource->resource, req.subresource, req.name);
	req.form.kind = KUBESIM_FORM_OBJECT;
	req.form.version = NULL;
	if (g_strcmp0(method, "GET") == 0 && req.subresource == NULL) {
		/* the form of a read is chosen before it is served, so an Accept nothing can
		 * serve gets its 406 for an object that does not exist too */
		KubesimStatus *refused = kubesim_negotiate(msg, req.name == NULL, &req.form);
		if (refused != NULL) {
			kubesim_respond_status(msg, refused);
			return;
		}
	}
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
	SoupMessageHeaders *headers;
	g_autofree gchar *audit_id = NULL;
	gchar **pf;
	User user;

	g_debug("%s %s%s%s", soup_server_message_get_method(msg), path,
	        soup_server_message_get_uri(msg) != NULL &&
	                        g_uri_get_query(soup_server_message_get_uri(msg)) != NULL
	                ? "?"
	                : "",
	        soup_server_message_get_uri(msg) != NULL &&
	                        g_uri_get_query(soup_server_message_get_uri(msg)) != NULL
	                ? g_uri_get_query(soup_server_message_get_uri(msg))
	                : "");
	headers = soup_server_message_get_response_headers(msg);
	soup_message_headers_replace(headers, "Cache-Control", "no-cache, private");

	/* the admin endpoint bypasses auth and fault injection */
	if (g_str_has_prefix(path, "/kubesim/")) {
		kubesim_admin_handle(self, msg, path, query);
		return;
	}
	kubesim_requests_log(self->requests, msg);
	/* the audit filter names every request, refused ones too, before authentication */
	audit_id = g_uuid_string_random();
	soup_message_headers_replace(headers, "Audit-Id", audit_id);
	user = authenticate(self, msg, path);
	if (user == USER_UNAUTHORIZED) {
		kubesim_respond_status(msg,
		                       kubesim_status_new(401, "Unauthorized", "Unauthorized"));
		return;
	}
	/* API Priority and Fairness classifies every authenticated request, before it is
	 * authorized */
	pf = user == USER_RESTRICTED ? self->pf_restricted : self->pf_admin;
	soup_message_headers_replace(headers, "X-Kubernetes-Pf-Flowschema-Uid", pf[0]);
	soup_message_headers_replace(headers, "X-Kubernetes-Pf-Prioritylevel-Uid", pf[1]);
	if (user == USER_RESTRICTED) {
		/* RBAC grants that user discovery and nothing else: any resource request, and a
		 * path outside discovery, is refused before it is routed (even one that does not
		 * exist) */
		g_auto(GStrv) segs = g_strsplit(path[0] == '/' ? path + 1 : path, "/", -1);
		RequestInfo info;
		gboolean refused;

		request_info_parse(segs, query, soup_server_message_get_method(msg), &info);
		refused = info.resource_request || !restricted_may_read(path);
		if (refused)
			respond_forbidden(msg, &info, path);
		g_free(info.selected_name);
		if (refused)
			return;
	}
	if (self->fail_count > 0) {
		self->fail_count--;
		if (self->fail_code == 429) {
			soup_message_headers_replace(soup_server_message_get_response_headers(msg),
			                             "Retry-After", "1");
			kubesim_respond_http_error(msg, 429,
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
	self->config.restricted_token = g_strdup(config->restricted_token);
	for (guint i = 0; i < 2; i++) {
		self->pf_admin[i] = g_uuid_string_random();
		self->pf_restricted[i] = g_uuid_string_random();
	}
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
	g_free(self->config.restricted_token);
	for (guint i = 0; i < 2; i++) {
		g_free(self->pf_admin[i]);
		g_free(self->pf_restricted[i]);
	}
	g_free(self->workload.data);
	kubesim_faults_clear(&self->faults);
	g_free(self->expire_resource);
	g_clear_pointer(&self->snapshot, kubesim_snapshot_free);
	g_free(self);
}
