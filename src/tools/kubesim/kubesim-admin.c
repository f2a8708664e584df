/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-server.h"

#include <string.h>

#include "kubesim-json.h"

static void
respond_ok(SoupServerMessage *msg)
{
	kubesim_respond_json(msg, 200, "{\"ok\":true}");
}

static void
admin_objects(KubesimServer *self, SoupServerMessage *msg, const gchar *method, GHashTable *query)
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
		soup_message_body_append_bytes(soup_server_message_get_response_body(msg),
		                               obj->json);
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
		soup_message_body_append_bytes(soup_server_message_get_response_body(msg),
		                               obj->json);
		return;
	}
	kubesim_respond_status(msg, kubesim_status_new(405, "MethodNotAllowed",
	                                               "/kubesim/objects takes POST, PUT or "
	                                               "DELETE"));
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
		        g_strdup_printf("{\"objects\":%u,\"watches\":%u,\"resourceVersion\":"
		                        "\"%" G_GUINT64_FORMAT "\"}",
		                        kubesim_store_count_objects(self->store),
		                        self->watches->len, kubesim_store_get_rv(self->store)));
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
		self->expire_next_watch = TRUE;
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
	} else {
		kubesim_respond_not_found_page(msg);
	}
}
