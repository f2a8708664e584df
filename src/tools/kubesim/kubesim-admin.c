/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-server.h"

#include <string.h>

#include "kubesim-install.h"
#include "kubesim-json.h"
#include "kubesim-managed.h"

static void
respond_ok(SoupServerMessage *msg)
{
	kubesim_respond_json(msg, 200, "{\"ok\":true}");
}

static void admin_objects_write(KubesimServer *self,
                                SoupServerMessage *msg,
                                const gchar *method,
                                GHashTable *query);

/* ?silent=true: the write changes the store without any watch event, so that only a list
 * shows it (as when a watch cache missed an event). */
static void
admin_objects(KubesimServer *self, SoupServerMessage *msg, const gchar *method, GHashTable *query)
{
	gboolean silent = kubesim_query_bool(query, "silent", FALSE);
	g_autofree gchar *manager = kubesim_managed_fields_manager(
	        kubesim_query_get(query, "fieldManager"),
	        soup_message_headers_get_one(soup_server_message_get_request_headers(msg),
	                                     "User-Agent"));

	kubesim_store_set_silent(self->store, silent);
	kubesim_store_set_field_manager(self->store, manager, NULL);
	admin_objects_write(self, msg, method, query);
	kubesim_store_set_field_manager(self->store, NULL, NULL);
	kubesim_store_set_silent(self->store, FALSE);
}

static void
admin_objects_write(KubesimServer *self,
                    SoupServerMessage *msg,
                    const gchar *method,
                    GHashTable *query)
{
	KubesimStatus *status = NULL;
	KubesimResource *res;

	if (g_strcmp0(method, "DELETE") == 0) {
		const gchar *api_version = kubesim_query_get(query, "apiVersion");
		const gchar *kind = kubesim_query_get(query, "kind");
		const gchar *ns = kubesim_query_get(query, "namespace");
		const gchar *name = kubesim_query_get(query, "name");
		g_autoptr(KubesimObject) obj = NULL;
		if (api_version == NULL || kind == NULL || name == NULL) {
			kubesim_respond_status(msg, kubesim_status_new(400, "BadRequest",
			                                               "apiVersion, kind and name "
			                                               "are required"));
			return;
		}
		res = kubesim_store_lookup_kind(self->store, api_version, kind);
		if (res == NULL) {
			kubesim_respond_status(msg, kubesim_status_new(404, "NotFound",
			                                               "no resource serves kind %s "
			                                               "in %s",
			                                               kind, api_version));
			return;
		}
		if (ns != NULL && ns[0] == '\0')
			ns = NULL;
		obj = kubesim_store_delete(self->store, res, res->namespaced ? ns : NULL, name,
		                           &status);
		if (obj == NULL) {
			kubesim_respond_status(msg, status);
			return;
		}
		soup_server_message_set_status(msg, 200, NULL);
		soup_message_headers_set_content_type(soup_server_message_get_response_headers(msg),
		                                      "application/json", NULL);
		{
			g_autoptr(GBytes) obj_json = kubesim_object_get_json(obj);
			soup_message_body_append_bytes(soup_server_message_get_response_body(msg),
			                               obj_json);
		}
		return;
	}
	if (g_strcmp0(method, "POST") == 0 || g_strcmp0(method, "PUT") == 0) {
		g_autoptr(GBytes) raw = kubesim_request_body(msg);
		g_autoptr(GBytes) json = kubesim_body_to_json(raw, TRUE, &status);
		g_autoptr(KubesimObject) obj = NULL;
		if (json == NULL) {
			kubesim_respond_status(msg, status);
			return;
		}
		res = kubesim_store_resource_for(self->store, json, &status);
		if (res == NULL) {
			kubesim_respond_status(msg, status);
			return;
		}
		if (g_strcmp0(method, "POST") == 0)
			obj = kubesim_store_create(self->store, res, json, &status);
		else
			obj = kubesim_store_update(self->store, res, json, FALSE, &status);
		if (obj == NULL) {
			kubesim_respond_status(msg, status);
			return;
		}
		soup_server_message_set_status(msg, g_strcmp0(method, "POST") == 0 ? 201 : 200,
		                               NULL);
		soup_message_headers_set_content_type(soup_server_message_get_response_headers(msg),
		                                      "application/json", NULL);
		{
			g_autoptr(GBytes) obj_json = kubesim_object_get_json(obj);
			soup_message_body_append_bytes(soup_server_message_get_response_body(msg),
			                               obj_json);
		}
		return;
	}
	kubesim_respond_status(msg, kubesim_status_new(405, "MethodNotAllowed",
	                                               "/kubesim/objects takes POST, PUT or "
	                                               "DELETE"));
}

/* A decimal parameter; @fallback when absent; FALSE (and a 400) when it is not a number. */
static gboolean
admin_uint(SoupServerMessage *msg,
           GHashTable *query,
           const gchar *key,
           guint64 fallback,
           guint64 max,
           guint64 *out)
{
	const gchar *text = kubesim_query_get(query, key);
	gchar *end = NULL;

	*out = fallback;
	if (text == NULL || text[0] == '\0')
		return TRUE;
	*out = g_ascii_strtoull(text, &end, 10);
	if (end != NULL && *end == '\0' && *out <= max)
		return TRUE;
	kubesim_respond_status(msg, kubesim_status_new(400, "BadRequest",
	                                               "%s must be a number up to "
	                                               "%" G_GUINT64_FORMAT,
	                                               key, max));
	return FALSE;
}

static void
admin_faults(KubesimServer *self, SoupServerMessage *msg, const gchar *method, GHashTable *query)
{
	KubesimStatus *status = NULL;

	if (g_strcmp0(method, "GET") == 0) {
		kubesim_respond_json_take(msg, 200, kubesim_faults_to_json(&self->faults));
	} else if (g_strcmp0(method, "POST") == 0) {
		g_autoptr(KubesimFault) fault = kubesim_faults_arm(&self->faults, query, &status);
		if (fault == NULL) {
			kubesim_respond_status(msg, status);
			return;
		}
		kubesim_respond_json_take(msg, 200, g_strdup_printf("{\"id\":%u}", fault->id));
	} else if (g_strcmp0(method, "DELETE") == 0) {
		guint64 id;
		if (!admin_uint(msg, query, "id", 0, G_MAXUINT, &id))
			return;
		if (!kubesim_faults_forget(&self->faults, id)) {
			kubesim_respond_status(
			        msg, kubesim_status_new(404, "NotFound",
			                                "no fault %" G_GUINT64_FORMAT, id));
			return;
		}
		respond_ok(msg);
	} else {
		kubesim_respond_status(msg, kubesim_status_new(405, "MethodNotAllowed",
		                                               "/kubesim/faults takes GET, POST or "
		                                               "DELETE"));
	}
}

/* GET: the requests counted so far; DELETE: start counting again. */
static void
admin_requests(KubesimServer *self, SoupServerMessage *msg, const gchar *method)
{
	if (g_strcmp0(method, "GET") == 0) {
		kubesim_respond_json_take(msg, 200, kubesim_requests_to_json(self->requests));
	} else if (g_strcmp0(method, "DELETE") == 0) {
		kubesim_requests_reset(self->requests);
		respond_ok(msg);
	} else {
		kubesim_respond_status(msg, kubesim_status_new(405, "MethodNotAllowed",
		                                               "/kubesim/requests takes GET or "
		                                               "DELETE"));
	}
}

static void
respond_replaced(KubesimServer *self, SoupServerMessage *msg, guint64 before)
{
	kubesim_respond_json_take(
	        msg, 200,
	        g_strdup_printf("{\"resourceVersion\":\"%" G_GUINT64_FORMAT
	                        "\",\"previousResourceVersion\":\"%" G_GUINT64_FORMAT
	                        "\",\"objects\":%u}",
	                        kubesim_store_get_rv(self->store), before,
	                        kubesim_store_count_objects(self->store)));
}

/* ?seed=&pods=&namespaces=&data=&rv=: what the replacing cluster holds; by default the same
 * workload drawn from the next seed, so every uid is new, and a counter from 0. */
static void
admin_replace(KubesimServer *self, SoupServerMessage *msg, GHashTable *query)
{
	KubesimWorkload workload = self->workload;
	const gchar *data = kubesim_query_get(query, "data");
	guint64 before = kubesim_store_get_rv(self->store);
	guint64 seed, pods, namespaces, rv;
	g_autoptr(GError) error = NULL;

	if (!admin_uint(msg, query, "seed", (guint64)self->workload.seed + 1, G_MAXUINT32, &seed) ||
	    !admin_uint(msg, query, "pods", self->workload.pods, 10000000, &pods) ||
	    !admin_uint(msg, query, "namespaces", self->workload.namespaces, 100000, &namespaces) ||
	    !admin_uint(msg, query, "rv", 0, G_MAXUINT64 / 2, &rv))
		return;
	workload.seed = seed;
	workload.pods = pods;
	workload.namespaces = namespaces;
	/* data= (empty) loads no manifests */
	if (data != NULL)
		workload.data = data[0] != '\0' ? (gchar *)data : NULL;
	if (!kubesim_cluster_replace(self, &workload, rv, &error)) {
		kubesim_respond_status(
		        msg, kubesim_status_new(500, "InternalError", "%s", error->message));
		return;
	}
	/* kube-system=0: the new server answers before its system namespaces controller has
	 * made kube-system, as a real one does for its first seconds; a client creates it */
	if (g_strcmp0(kubesim_query_get(query, "kube-system"), "0") == 0) {
		KubesimResource *ns_resource =
		        kubesim_store_lookup(self->store, "", "v1", "namespaces");
		g_autoptr(KubesimObject) gone = NULL;

		kubesim_store_set_silent(self->store, TRUE);
		gone = kubesim_store_delete(self->store, ns_resource, NULL, "kube-system", NULL);
		kubesim_store_set_silent(self->store, FALSE);
	}
	respond_replaced(self, msg, before);
}

/* ?bump=N: as etcdutl snapshot restore --bump-revision N --mark-compacted */
static void
admin_restore(KubesimServer *self, SoupServerMessage *msg, GHashTable *query)
{
	guint64 before = kubesim_store_get_rv(self->store);
	guint64 bump;

	if (!admin_uint(msg, query, "bump", 0, G_MAXUINT64 / 4, &bump))
		return;
	if (self->snapshot == NULL) {
		kubesim_respond_status(msg, kubesim_status_new(409, "Conflict",
		                                               "no snapshot to restore: POST "
		                                               "/kubesim/snapshot first"));
		return;
	}
	kubesim_cluster_restore(self, bump);
	respond_replaced(self, msg, before);
}

/* ?rv-block-timeout=SECONDS */
static void
admin_settings(KubesimServer *self, SoupServerMessage *msg, GHashTable *query)
{
	const gchar *block = kubesim_query_get(query, "rv-block-timeout");

	if (block != NULL) {
		gchar *end = NULL;
		gdouble seconds = g_ascii_strtod(block, &end);
		if (end == NULL || *end != '\0' || seconds < 0 || seconds > 3600) {
			kubesim_respond_status(msg, kubesim_status_new(400, "BadRequest",
			                                               "rv-block-timeout must be "
			                                               "seconds (0 to 3600)"));
			return;
		}
		self->config.rv_block_ms = (guint)(seconds * 1000 + 0.5);
	}
	kubesim_respond_json_take(
	        msg, 200, g_strdup_printf("{\"rvBlockTimeoutMs\":%u}", self->config.rv_block_ms));
}

static gboolean
collect_object(gpointer key, gpointer value, gpointer data)
{
	g_ptr_array_add(data, kubesim_object_ref(value));
	return FALSE;
}

/*
 * ?apiVersion=&kind=[&namespace=]&rounds=N: N rounds, each writing every object of the kind
 * (in the namespace) once, unchanged but for a new resourceVersion: N times as many MODIFIED
 * events as objects, in one request, for a burst no client could make through the API as
 * fast. Rounds interleave the objects, as a busy cluster's updates do.
 */
static void
admin_touch(KubesimServer *self, SoupServerMessage *msg, GHashTable *query)
{
	const gchar *api_version = kubesim_query_get(query, "apiVersion");
	const gchar *kind = kubesim_query_get(query, "kind");
	const gchar *ns = kubesim_query_get(query, "namespace");
	g_autofree gchar *prefix = ns != NULL && ns[0] != '\0' ? g_strdup_printf("%s/", ns) : NULL;
	KubesimResource *res;
	guint64 rounds, events = 0;

	if (api_version == NULL || kind == NULL) {
		kubesim_respond_status(msg, kubesim_status_new(400, "BadRequest",
		                                               "apiVersion and kind are required"));
		return;
	}
	if (!admin_uint(msg, query, "rounds", 1, 1000000, &rounds))
		return;
	res = kubesim_store_lookup_kind(self->store, api_version, kind);
	if (res == NULL) {
		kubesim_respond_status(msg, kubesim_status_new(404, "NotFound",
		                                               "no resource serves kind %s in %s",
		                                               kind, api_version));
		return;
	}
	for (guint64 r = 0; r < rounds; r++) {
		/* the objects of this round: each touch replaces its object in the tree */
		g_autoptr(GPtrArray) objs =
		        g_ptr_array_new_with_free_func((GDestroyNotify)kubesim_object_unref);

		g_tree_foreach(res->objects, collect_object, objs);
		for (guint i = 0; i < objs->len; i++) {
			KubesimObject *obj = g_ptr_array_index(objs, i);

			if (prefix != NULL && !g_str_has_prefix(obj->key, prefix))
				continue;
			kubesim_object_unref(kubesim_store_touch(self->store, res, obj));
			events++;
		}
	}
	kubesim_respond_json_take(msg, 200,
	                          g_strdup_printf("{\"events\":%" G_GUINT64_FORMAT
	                                          ",\"resourceVersion\":\"%" G_GUINT64_FORMAT "\"}",
	                                          events, kubesim_store_get_rv(self->store)));
}

/* POST installs, DELETE uninstalls ?name= (kubesim-install.h), as `helm install` and
 * `helm uninstall` would, through the watches. */
static void
admin_install(KubesimServer *self, SoupServerMessage *msg, const gchar *method, GHashTable *query)
{
	const gchar *name = kubesim_query_get(query, "name");
	g_autoptr(GError) error = NULL;
	gboolean install = g_strcmp0(method, "POST") == 0;
	guint n = 0;

	if (!install && g_strcmp0(method, "DELETE") != 0) {
		kubesim_respond_status(msg, kubesim_status_new(405, "MethodNotAllowed",
		                                               "/kubesim/install takes POST or "
		                                               "DELETE"));
		return;
	}
	if (name == NULL) {
		kubesim_respond_status(msg,
		                       kubesim_status_new(400, "BadRequest", "name is required"));
		return;
	}
	if (install ? !kubesim_install(self->store, name, &n, &error)
	            : !kubesim_uninstall(self->store, name, &n, &error)) {
		kubesim_respond_status(msg,
		                       kubesim_status_new(400, "BadRequest", "%s", error->message));
		return;
	}
	kubesim_respond_json_take(msg, 200, g_strdup_printf("{\"objects\":%u}", n));
}

void
kubesim_admin_handle(KubesimServer *self,
                     SoupServerMessage *msg,
                     const gchar *path,
                     GHashTable *query)
{
	const gchar *method = soup_server_message_get_method(msg);
	const gchar *action = path + strlen("/kubesim/");

	if (g_strcmp0(action, "objects") == 0) {
		admin_objects(self, msg, method, query);
		return;
	}
	if (g_strcmp0(action, "stats") == 0 && g_strcmp0(method, "GET") == 0) {
		kubesim_respond_json_take(
		        msg, 200,
		        g_strdup_printf(
		                "{\"objects\":%u,\"watches\":%u,\"resourceVersion\":"
		                "\"%" G_GUINT64_FORMAT "\",\"historyFloor\":\"%" G_GUINT64_FORMAT
		                "\",\"listRequests\":%" G_GUINT64_FORMAT
		                ",\"watchRequests\":%" G_GUINT64_FORMAT
		                ",\"faultsArmed\":%u,\"replaced\":%" G_GUINT64_FORMAT
		                ",\"execs\":%u,\"execsV5\":%" G_GUINT64_FORMAT
		                ",\"execsV4\":%" G_GUINT64_FORMAT "}",
		                kubesim_store_count_objects(self->store), self->watches->len,
		                kubesim_store_get_rv(self->store),
		                kubesim_store_get_history_floor(self->store), self->list_requests,
		                self->watch_requests, kubesim_faults_count_armed(&self->faults),
		                self->replaced, self->execs->len, self->execs_v5, self->execs_v4));
		return;
	}
	if (g_strcmp0(action, "faults") == 0) {
		admin_faults(self, msg, method, query);
		return;
	}
	if (g_strcmp0(action, "install") == 0) {
		admin_install(self, msg, method, query);
		return;
	}
	if (g_strcmp0(action, "requests") == 0) {
		admin_requests(self, msg, method);
		return;
	}
	if (g_strcmp0(action, "logs") == 0) {
		if (g_strcmp0(method, "GET") == 0)
			kubesim_logs_admin_get(self, msg, query);
		else
			kubesim_logs_admin(self, msg, query);
		return;
	}
	if (g_strcmp0(method, "POST") != 0) {
		kubesim_respond_not_found_page(msg);
		return;
	}
	if (g_strcmp0(action, "close-watches") == 0) {
		kubesim_watch_close_all(self);
		respond_ok(msg);
	} else if (g_strcmp0(action, "expire-next-watch") == 0) {
		/* ?resource=: a client may watch other types too (its own configuration, say) */
		self->expire_next_watch = TRUE;
		g_free(self->expire_resource);
		self->expire_resource = g_strdup(kubesim_query_get(query, "resource"));
		respond_ok(msg);
	} else if (g_strcmp0(action, "compact") == 0) {
		kubesim_store_compact(self->store);
		respond_ok(msg);
	} else if (g_strcmp0(action, "fail") == 0) {
		const gchar *code = kubesim_query_get(query, "code");
		const gchar *count = kubesim_query_get(query, "count");
		guint64 c = code != NULL ? g_ascii_strtoull(code, NULL, 10) : 500;
		if (c < 400 || c > 599) {
			kubesim_respond_status(msg,
			                       kubesim_status_new(400, "BadRequest",
			                                          "code must be an HTTP error "
			                                          "status, such as 500 or 429"));
			return;
		}
		self->fail_code = c;
		self->fail_count = count != NULL ? g_ascii_strtoull(count, NULL, 10) : 1;
		respond_ok(msg);
	} else if (g_strcmp0(action, "delay") == 0) {
		const gchar *ms = kubesim_query_get(query, "ms");
		self->delay_ms = ms != NULL ? g_ascii_strtoull(ms, NULL, 10) : 0;
		respond_ok(msg);
	} else if (g_strcmp0(action, "malformed-watch-line") == 0) {
		kubesim_watch_send_malformed(self);
		respond_ok(msg);
	} else if (g_strcmp0(action, "replace") == 0) {
		admin_replace(self, msg, query);
	} else if (g_strcmp0(action, "snapshot") == 0) {
		g_clear_pointer(&self->snapshot, kubesim_snapshot_free);
		self->snapshot = kubesim_store_snapshot(self->store);
		kubesim_respond_json_take(
		        msg, 200,
		        g_strdup_printf("{\"resourceVersion\":\"%" G_GUINT64_FORMAT
		                        "\",\"objects\":%u}",
		                        kubesim_snapshot_get_rv(self->snapshot),
		                        kubesim_snapshot_count_objects(self->snapshot)));
	} else if (g_strcmp0(action, "restore") == 0) {
		admin_restore(self, msg, query);
	} else if (g_strcmp0(action, "settings") == 0) {
		admin_settings(self, msg, query);
	} else if (g_strcmp0(action, "touch") == 0) {
		admin_touch(self, msg, query);
	} else {
		kubesim_respond_not_found_page(msg);
	}
}
