/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-server.h"

#include <string.h>

#include "kubesim-json.h"
#include "kubesim-managed.h"
#include "kubesim-metadata.h"
#include "kubesim-table.h"

static void
respond_object(SoupServerMessage *msg,
               guint code,
               KubesimResource *res,
               KubesimObject *obj,
               GHashTable *query)
{
	g_autoptr(GBytes) json = NULL;
	SoupMessageBody *body;

	if (kubesim_wants_table(msg)) {
		GString *out = g_string_new(NULL);
		kubesim_table_begin(out, res, obj->rv, NULL, TRUE);
		kubesim_table_append_row(out, res, obj, kubesim_query_get(query, "includeObject"),
		                         TRUE);
		kubesim_table_end(out);
		kubesim_respond_json_take(msg, code, g_string_free(out, FALSE));
		return;
	}
	soup_server_message_set_status(msg, code, NULL);
	soup_message_headers_set_content_type(soup_server_message_get_response_headers(msg),
	                                      "application/json", NULL);
	body = soup_server_message_get_response_body(msg);
	json = kubesim_object_get_json(obj);
	soup_message_body_append_bytes(body, json);
	soup_message_body_append(body, SOUP_MEMORY_STATIC, "\n", 1);
	kubesim_maybe_gzip(msg);
}

/* RFC 7386: objects merge member by member, null deletes, anything else replaces. */
static JsonNode *
merge_patch(JsonNode *target, JsonNode *patch)
{
	JsonObject *result, *p;
	JsonObjectIter iter;
	const gchar *name;
	JsonNode *value;

	if (!JSON_NODE_HOLDS_OBJECT(patch))
		return json_node_copy(patch);
	if (target == NULL || !JSON_NODE_HOLDS_OBJECT(target)) {
		result = json_object_new();
	} else {
		JsonNode *copy = json_node_copy(target);
		result = json_object_ref(json_node_get_object(copy));
		json_node_unref(copy);
	}
	p = json_node_get_object(patch);
	json_object_iter_init_ordered(&iter, p);
	while (json_object_iter_next_ordered(&iter, &name, &value)) {
		if (JSON_NODE_HOLDS_NULL(value)) {
			json_object_remove_member(result, name);
		} else {
			JsonNode *merged = merge_patch(json_object_get_member(result, name), value);
			json_object_set_member(result, name, merged);
		}
	}
	{
		JsonNode *node = json_node_new(JSON_NODE_OBJECT);
		json_node_take_object(node, result);
		return node;
	}
}

/* Checks kind, apiVersion, name and namespace of a body against the URL; fills the gaps. */
static GBytes *
prepare_body(KubesimServer *self,
             SoupServerMessage *msg,
             KubesimRequest *req,
             KubesimStatus **status_out)
{
	KubesimResource *res = req->resource;
	g_autoptr(GBytes) raw = kubesim_request_body(msg);
	g_autoptr(GBytes) compact = kubesim_body_to_json(raw, FALSE, status_out);
	g_autoptr(JsonNode) root = NULL;
	JsonObject *obj, *meta;
	const gchar *kind, *api_version, *ns, *name;

	if (compact == NULL)
		return NULL;
	root = kubesim_json_parse(g_bytes_get_data(compact, NULL), g_bytes_get_size(compact), NULL);
	obj = json_node_get_object(root);
	kind = json_object_get_string_member_with_default(obj, "kind", NULL);
	api_version = json_object_get_string_member_with_default(obj, "apiVersion", NULL);
	if ((kind != NULL && g_strcmp0(kind, res->kind) != 0) ||
	    (api_version != NULL && g_strcmp0(api_version, res->api_version) != 0)) {
		*status_out =
		        kubesim_status_new(400, "BadRequest",
		                           "the API version in the data (%s) does not match "
		                           "the expected API version (%s) or kind %s is not %s",
		                           api_version != NULL ? api_version : "", res->api_version,
		                           kind != NULL ? kind : "", res->kind);
		return NULL;
	}
	json_object_set_string_member(obj, "kind", res->kind);
	json_object_set_string_member(obj, "apiVersion", res->api_version);
	if (!json_object_has_member(obj, "metadata") ||
	    !JSON_NODE_HOLDS_OBJECT(json_object_get_member(obj, "metadata")))
		json_object_set_object_member(obj, "metadata", json_object_new());
	meta = json_object_get_object_member(obj, "metadata");
	ns = json_object_get_string_member_with_default(meta, "namespace", NULL);
	if (res->namespaced) {
		if (ns != NULL && ns[0] != '\0' && req->namespace_ != NULL &&
		    g_strcmp0(ns, req->namespace_) != 0) {
			*status_out =
			        kubesim_status_new(400, "BadRequest",
			                           "the namespace of the provided object does "
			                           "not match the namespace sent on the "
			                           "request");
			return NULL;
		}
		if (req->namespace_ != NULL)
			json_object_set_string_member(meta, "namespace", req->namespace_);
	}
	name = json_object_get_string_member_with_default(meta, "name", NULL);
	if (req->name != NULL) {
		if (name != NULL && name[0] != '\0' && g_strcmp0(name, req->name) != 0) {
			*status_out = kubesim_status_new(400, "BadRequest",
			                                 "the name of the object (%s) does not "
			                                 "match the name on the URL (%s)",
			                                 name, req->name);
			return NULL;
		}
		json_object_set_string_member(meta, "name", req->name);
	}
	return kubesim_json_node_to_bytes(root);
}

static void
handle_patch(KubesimServer *self,
             SoupServerMessage *msg,
             KubesimRequest *req,
             KubesimObject *old,
             GHashTable *query)
{
	const gchar *content_type = soup_message_headers_get_content_type(
	        soup_server_message_get_request_headers(msg), NULL);
	g_autoptr(GBytes) raw = kubesim_request_body(msg);
	g_autoptr(JsonNode) patch = NULL;
	g_autoptr(JsonNode) target = NULL;
	g_autoptr(JsonNode) merged = NULL;
	g_autoptr(GBytes) json = NULL;
	g_autoptr(GBytes) old_json = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(KubesimObject) obj = NULL;
	KubesimStatus *status = NULL;
	JsonObject *meta;

	if (g_strcmp0(content_type, "application/merge-patch+json") != 0 &&
	    g_strcmp0(content_type, "application/strategic-merge-patch+json") != 0) {
		kubesim_respond_status(msg, kubesim_status_new(415, "UnsupportedMediaType",
		                                               "the body of the request was in an "
		                                               "unknown format - accepted media "
		                                               "types include: "
		                                               "application/merge-patch+json, "
		                                               "application/"
		                                               "strategic-merge-patch+json"));
		return;
	}
	patch = kubesim_json_parse(g_bytes_get_data(raw, NULL), g_bytes_get_size(raw), &error);
	if (patch == NULL || !JSON_NODE_HOLDS_OBJECT(patch)) {
		kubesim_respond_status(msg, kubesim_status_new(400, "BadRequest",
		                                               "the patch is not a JSON object"));
		return;
	}
	old_json = kubesim_object_get_json(old);
	target = kubesim_json_parse(g_bytes_get_data(old_json, NULL), g_bytes_get_size(old_json),
	                            NULL);
	merged = merge_patch(target, patch);
	/* a patch cannot move or rename the object */
	meta = json_object_get_object_member(json_node_get_object(merged), "metadata");
	if (meta == NULL) {
		json_object_set_object_member(json_node_get_object(merged), "metadata",
		                              json_object_new());
		meta = json_object_get_object_member(json_node_get_object(merged), "metadata");
	}
	json_object_set_string_member(meta, "name", old->name);
	if (old->namespace_ != NULL)
		json_object_set_string_member(meta, "namespace", old->namespace_);
	json = kubesim_json_node_to_bytes(merged);
	obj = kubesim_store_update(self->store, req->resource, json, TRUE, &status);
	if (obj == NULL) {
		kubesim_respond_status(msg, status);
		return;
	}
	respond_object(msg, 200, req->resource, obj, query);
}

/* Answers with @obj, or with @status (taken) when the store refused the change. */
static void
respond_result(SoupServerMessage *msg,
               guint code,
               KubesimResource *res,
               KubesimObject *obj,
               KubesimStatus *status,
               GHashTable *query)
{
	if (obj == NULL)
		kubesim_respond_status(msg, status);
	else
		respond_object(msg, code, res, obj, query);
}

static void
respond_method_not_allowed(SoupServerMessage *msg)
{
	kubesim_respond_status(msg, kubesim_status_new(405, "MethodNotAllowed",
	                                               "the server does not allow this method on "
	                                               "the requested resource"));
}

static void
crud_handle(KubesimServer *self, SoupServerMessage *msg, KubesimRequest *req, GHashTable *query);

void
kubesim_crud_handle(KubesimServer *self,
                    SoupServerMessage *msg,
                    KubesimRequest *req,
                    GHashTable *query)
{
	g_autofree gchar *manager = kubesim_managed_fields_manager(
	        kubesim_query_get(query, "fieldManager"),
	        soup_message_headers_get_one(soup_server_message_get_request_headers(msg),
	                                     "User-Agent"));
	const gchar *dry_run = kubesim_query_get(query, "dryRun");

	/* "All" is the only value the API server takes (kubectl --dry-run=server sends it) */
	if (dry_run != NULL && g_strcmp0(dry_run, "All") != 0) {
		kubesim_respond_status(msg, kubesim_status_new(400, "BadRequest",
		                                               "dryRun: Unsupported value: \"%s\": "
		                                               "supported values: \"All\"",
		                                               dry_run));
		return;
	}
	/* the writes of this request are its manager's, in managedFields */
	kubesim_store_set_field_manager(self->store, manager, req->subresource);
	kubesim_store_set_dry_run(self->store, dry_run != NULL);
	crud_handle(self, msg, req, query);
	kubesim_store_set_dry_run(self->store, FALSE);
	kubesim_store_set_field_manager(self->store, NULL, NULL);
}

static void
crud_handle(KubesimServer *self, SoupServerMessage *msg, KubesimRequest *req, GHashTable *query)
{
	const gchar *method = soup_server_message_get_method(msg);
	KubesimResource *res = req->resource;
	KubesimStatus *status = NULL;
	KubesimObject *existing;

	if (g_strcmp0(req->subresource, "log") == 0) {
		kubesim_logs_handle(self, msg, req, query);
		return;
	}
	if (g_strcmp0(req->subresource, "exec") == 0) {
		kubesim_exec_handle(self, msg, req, query);
		return;
	}
	if (g_strcmp0(req->subresource, "attach") == 0 ||
	    g_strcmp0(req->subresource, "portforward") == 0) {
		kubesim_respond_status(msg, kubesim_status_new(501, "NotImplemented",
		                                               "pods/%s is not implemented yet by "
		                                               "kubesim",
		                                               req->subresource));
		return;
	}
	if (req->name == NULL) {
		if (g_strcmp0(method, "POST") == 0) {
			g_autoptr(GBytes) json = prepare_body(self, msg, req, &status);
			g_autoptr(KubesimObject) obj = NULL;
			if (json != NULL)
				obj = kubesim_store_create(self->store, res, json, &status);
			respond_result(msg, 201, res, obj, status, query);
			return;
		}
		respond_method_not_allowed(msg);
		return;
	}

	existing = kubesim_resource_get(res, req->namespace_, req->name);
	if (g_strcmp0(method, "GET") == 0) {
		if (existing == NULL) {
			kubesim_respond_status(msg, kubesim_status_not_found(
			                                    res->group, res->resource, req->name));
			return;
		}
		status = kubesim_form_check(&req->form, res, FALSE);
		if (status != NULL) {
			kubesim_respond_status(msg, status);
			return;
		}
		if (req->form.kind == KUBESIM_FORM_METADATA) {
			GString *out = g_string_new(NULL);
			kubesim_metadata_append(out, res, existing, req->form.version);
			kubesim_respond_json_take(msg, 200, g_string_free(out, FALSE));
			kubesim_maybe_gzip(msg);
			return;
		}
		respond_object(msg, 200, res, existing, query);
		return;
	}
	if (g_strcmp0(method, "PUT") == 0) {
		g_autoptr(GBytes) json = prepare_body(self, msg, req, &status);
		g_autoptr(KubesimObject) obj = NULL;
		if (json != NULL)
			obj = kubesim_store_update(self->store, res, json, TRUE, &status);
		respond_result(msg, 200, res, obj, status, query);
		return;
	}
	if (g_strcmp0(method, "PATCH") == 0) {
		g_autoptr(KubesimObject) old =
		        existing != NULL ? kubesim_object_ref(existing) : NULL;
		if (old == NULL) {
			kubesim_respond_status(msg, kubesim_status_not_found(
			                                    res->group, res->resource, req->name));
			return;
		}
		handle_patch(self, msg, req, old, query);
		return;
	}
	if (g_strcmp0(method, "DELETE") == 0 && req->subresource == NULL &&
	    kubesim_query_get(query, "dryRun") != NULL) {
		/* what would go, and it stays */
		if (existing == NULL)
			kubesim_respond_status(msg, kubesim_status_not_found(
			                                    res->group, res->resource, req->name));
		else
			respond_object(msg, 200, res, existing, query);
		return;
	}
	if (g_strcmp0(method, "DELETE") == 0 && req->subresource == NULL) {
		g_autoptr(KubesimObject) obj =
		        kubesim_store_delete(self->store, res, req->namespace_, req->name, &status);
		respond_result(msg, 200, res, obj, status, query);
		return;
	}
	respond_method_not_allowed(msg);
}
