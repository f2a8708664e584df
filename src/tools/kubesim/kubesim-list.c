/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-server.h"

#include <string.h>

#include "kubesim-json.h"
#include "kubesim-metadata.h"
#include "kubesim-selector.h"
#include "kubesim-table.h"

typedef struct {
	guint64 rv;
	gint64 issued;    /* unix seconds of the first page */
	gchar *start;     /* first key of the next page */
	guint64 served;   /* items the pages before gave */
	guint64 snapshot; /* the list's KubesimListSnapshot */
} ContinueToken;

/*
 * What the pages after the first give: every object the list matched, as of the first page.
 * An API server reads later pages from etcd at the first page's revision, so objects created,
 * changed or deleted meanwhile show as they were then (a client watching from that
 * resourceVersion then sees every change once, in order). Objects are immutable here (a change
 * stores a copy), so holding references is that revision.
 */
typedef struct {
	guint64 id;
	gint64 created;     /* monotonic µs, for the expiry */
	GPtrArray *objects; /* KubesimObject: the matches not served yet, by key */
} KubesimListSnapshot;

/* Lists left unfinished hold their objects until their continue tokens expire; past this many
 * the oldest is dropped (its next page answers 410, as after a compaction). */
#define LIST_SNAPSHOTS_MAX 64

void
kubesim_list_snapshot_free(gpointer data)
{
	KubesimListSnapshot *snap = data;

	g_ptr_array_unref(snap->objects);
	g_free(snap);
}

void
kubesim_list_snapshots_clear(KubesimServer *self)
{
	g_hash_table_remove_all(self->list_snapshots);
}

static void
list_snapshots_expire(KubesimServer *self)
{
	gint64 now = g_get_monotonic_time();
	gint64 ttl = (gint64)self->config.page_token_ttl * G_USEC_PER_SEC;
	GHashTableIter iter;
	gpointer value;
	KubesimListSnapshot *oldest = NULL;

	g_hash_table_iter_init(&iter, self->list_snapshots);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		KubesimListSnapshot *snap = value;

		if (now - snap->created > ttl) {
			g_hash_table_iter_remove(&iter);
			continue;
		}
		if (oldest == NULL || snap->id < oldest->id)
			oldest = snap;
	}
	if (oldest != NULL && g_hash_table_size(self->list_snapshots) >= LIST_SNAPSHOTS_MAX)
		g_hash_table_remove(self->list_snapshots, &oldest->id);
}

static KubesimListSnapshot *
list_snapshot_new(KubesimServer *self)
{
	KubesimListSnapshot *snap = g_new0(KubesimListSnapshot, 1);

	list_snapshots_expire(self);
	snap->id = ++self->list_snapshot_next;
	snap->created = g_get_monotonic_time();
	snap->objects = g_ptr_array_new_with_free_func((GDestroyNotify)kubesim_object_unref);
	g_hash_table_insert(self->list_snapshots, &snap->id, snap);
	return snap;
}

static void
continue_token_clear(ContinueToken *token)
{
	g_free(token->start);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(ContinueToken, continue_token_clear)

static gchar *
continue_token_encode(const ContinueToken *token)
{
	GString *json = g_string_new(NULL);
	g_autofree gchar *b64 = NULL;
	gchar *p;

	g_string_append_printf(json,
	                       "{\"v\":\"meta.k8s.io/v1\",\"rv\":%" G_GUINT64_FORMAT
	                       ",\"issued\":%" G_GINT64_FORMAT ",\"n\":%" G_GUINT64_FORMAT
	                       ",\"s\":%" G_GUINT64_FORMAT ",\"start\":",
	                       token->rv, token->issued, token->served, token->snapshot);
	msd_json_string_append(json, token->start, -1, MSD_JSON_STRING_GO);
	g_string_append_c(json, '}');
	b64 = g_base64_encode((const guchar *)json->str, json->len);
	g_string_free(json, TRUE);
	/* base64url without padding, as the apiserver writes it */
	for (p = b64; *p != '\0'; p++) {
		if (*p == '+')
			*p = '-';
		else if (*p == '/')
			*p = '_';
		else if (*p == '=')
			*p = '\0';
	}
	return g_steal_pointer(&b64);
}

static gboolean
continue_token_decode(const gchar *text, ContinueToken *token)
{
	g_autoptr(GString) b64 = g_string_new(text);
	g_autofree guchar *raw = NULL;
	g_autoptr(JsonNode) root = NULL;
	JsonObject *obj;
	gsize len, i;

	memset(token, 0, sizeof(*token));
	for (i = 0; i < b64->len; i++) {
		if (b64->str[i] == '-')
			b64->str[i] = '+';
		else if (b64->str[i] == '_')
			b64->str[i] = '/';
	}
	while (b64->len % 4 != 0)
		g_string_append_c(b64, '=');
	raw = g_base64_decode(b64->str, &len);
	if (raw == NULL || len == 0)
		return FALSE;
	root = kubesim_json_parse((const gchar *)raw, len, NULL);
	if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root))
		return FALSE;
	obj = json_node_get_object(root);
	if (!json_object_has_member(obj, "rv") || !json_object_has_member(obj, "start"))
		return FALSE;
	token->rv = json_object_get_int_member_with_default(obj, "rv", 0);
	token->issued = json_object_get_int_member_with_default(obj, "issued", 0);
	token->served = json_object_get_int_member_with_default(obj, "n", 0);
	token->snapshot = json_object_get_int_member_with_default(obj, "s", 0);
	token->start = g_strdup(json_object_get_string_member_with_default(obj, "start", ""));
	return TRUE;
}

/* A continue token past its time, past a compaction, or of a list this server forgot. */
static void
respond_continue_expired(SoupServerMessage *msg)
{
	kubesim_respond_status(
	        msg, kubesim_status_new(410, "Expired",
	                                "The provided continue parameter is too old to display "
	                                "a consistent list result. You can start a new list "
	                                "without the continue parameter."));
}

/* A list waiting for the store to reach its resourceVersion. */
typedef struct {
	KubesimRequest req;
	GHashTable *query;
	guint64 wanted_rv;
	gchar *ns;
	KubesimFault *fault;
} PendingList;

static void serve_list(KubesimServer *self,
                       SoupServerMessage *msg,
                       KubesimRequest *req,
                       GHashTable *query,
                       KubesimFault *fault);

static void
pending_list_ready(KubesimServer *self, SoupServerMessage *msg, gboolean reached, gpointer data)
{
	PendingList *p = data;

	if (p->req.resource->removed)
		kubesim_respond_not_found_page(msg);
	else if (reached)
		serve_list(self, msg, &p->req, p->query, p->fault);
	else
		kubesim_respond_status(
		        msg, kubesim_status_new_too_large_rv(p->wanted_rv,
		                                             kubesim_store_get_rv(self->store), 1));
}

static void
pending_list_free(gpointer data)
{
	PendingList *p = data;

	kubesim_resource_unref(p->req.resource);
	if (p->query != NULL)
		g_hash_table_unref(p->query);
	g_free(p->ns);
	g_clear_pointer(&p->fault, kubesim_fault_unref);
	g_free(p);
}

void
kubesim_list_handle(KubesimServer *self,
                    SoupServerMessage *msg,
                    KubesimRequest *req,
                    GHashTable *query,
                    KubesimFault *fault)
{
	const gchar *rv = kubesim_query_get(query, "resourceVersion");
	const gchar *rvm = kubesim_query_get(query, "resourceVersionMatch");
	const gchar *cont = kubesim_query_get(query, "continue");
	guint64 current = kubesim_store_get_rv(self->store);
	guint64 wanted;

	if (rv != NULL && rv[0] == '\0')
		rv = NULL;
	if (rvm != NULL && rvm[0] == '\0')
		rvm = NULL;
	if (cont != NULL && cont[0] == '\0')
		cont = NULL;
	if (kubesim_query_get(query, "sendInitialEvents") != NULL) {
		kubesim_respond_status(msg, kubesim_status_new_invalid_list_options(
		                                    "sendInitialEvents",
		                                    "Forbidden: sendInitialEvents is "
		                                    "forbidden for list"));
		return;
	}
	if (rvm != NULL && g_strcmp0(rvm, "Exact") != 0 && g_strcmp0(rvm, "NotOlderThan") != 0) {
		kubesim_respond_status(msg, kubesim_status_new_invalid_list_options(
		                                    "resourceVersionMatch",
		                                    "Unsupported value: must be Exact or "
		                                    "NotOlderThan"));
		return;
	}
	if (rvm != NULL && rv == NULL) {
		kubesim_respond_status(msg, kubesim_status_new_invalid_list_options(
		                                    "resourceVersionMatch",
		                                    "Forbidden: resourceVersionMatch is "
		                                    "forbidden unless resourceVersion is "
		                                    "provided"));
		return;
	}
	if (rvm != NULL && cont != NULL) {
		kubesim_respond_status(msg, kubesim_status_new_invalid_list_options(
		                                    "resourceVersionMatch",
		                                    "Forbidden: resourceVersionMatch is "
		                                    "forbidden when continue is provided"));
		return;
	}
	if (g_strcmp0(rvm, "Exact") == 0 && g_strcmp0(rv, "0") == 0) {
		kubesim_respond_status(msg, kubesim_status_new_invalid_list_options(
		                                    "resourceVersionMatch",
		                                    "Forbidden: resourceVersionMatch \"exact\" "
		                                    "is forbidden for resourceVersion \"0\""));
		return;
	}
	if (cont != NULL && rv != NULL && g_strcmp0(rv, "0") != 0) {
		kubesim_respond_status(msg, kubesim_status_new(400, "BadRequest",
		                                               "specifying resource version is "
		                                               "not allowed when using continue"));
		return;
	}
	if (rv == NULL || g_strcmp0(rv, "0") == 0 || cont != NULL) {
		serve_list(self, msg, req, query, fault);
		return;
	}
	wanted = g_ascii_strtoull(rv, NULL, 10);
	{
		const gchar *limit_text = kubesim_query_get(query, "limit");
		gboolean limited = limit_text != NULL && g_ascii_strtoll(limit_text, NULL, 10) > 0;
		/* with a limit, or asked for, the read goes to etcd at exactly that revision */
		gboolean exact = g_strcmp0(rvm, "Exact") == 0 || (rvm == NULL && limited);
		/* no snapshots are kept: an exact read is served from the present if nothing
		 * it needs was compacted away */
		if (exact && wanted < kubesim_store_get_history_floor(self->store)) {
			kubesim_respond_status(msg,
			                       kubesim_status_new(410, "Expired",
			                                          "The resourceVersion for the "
			                                          "provided list is too old."));
			return;
		}
		if (wanted > current && exact) {
			/* what etcd's error becomes up to 1.33 (later servers answer 504) */
			kubesim_respond_status(msg, kubesim_status_new(500, NULL,
			                                               "etcdserver: mvcc: required "
			                                               "revision is a future "
			                                               "revision"));
			return;
		}
		if (wanted > current && limited) {
			/* etcd checks NotOlderThan at once, without waiting */
			kubesim_respond_status(msg,
			                       kubesim_status_new_too_large_rv(wanted, current, 0));
			return;
		}
	}
	if (wanted > current) {
		/* the watch cache waits for its resourceVersion to catch up, then gives 504 */
		PendingList *p = g_new0(PendingList, 1);
		p->req = *req;
		p->ns = g_strdup(req->namespace_);
		p->req.namespace_ = p->ns;
		p->req.name = NULL;
		p->req.subresource = NULL;
		p->req.group = NULL;
		p->req.version = NULL;
		kubesim_resource_ref(p->req.resource);
		p->query = query != NULL ? g_hash_table_ref(query) : NULL;
		p->wanted_rv = wanted;
		p->fault = fault != NULL ? kubesim_fault_ref(fault) : NULL;
		kubesim_server_wait_for_rv(self, msg, wanted, pending_list_ready, p,
		                           pending_list_free);
		return;
	}
	serve_list(self, msg, req, query, fault);
}

/* Body pieces of a metadata-only list handed to libsoup at about this size: a list of many
 * objects is never held as one string. */
#define METADATA_LIST_PIECE (64 * 1024)

/* A PartialObjectMetadataList: the list's metadata as for the full list, every item in the
 * metadata-only form (@remaining < 0: no remainingItemCount). */
static void
respond_metadata_list(SoupServerMessage *msg,
                      KubesimRequest *req,
                      guint64 list_rv,
                      const gchar *next_token,
                      gint64 remaining,
                      GPtrArray *items)
{
	SoupMessageBody *body = soup_server_message_get_response_body(msg);
	GString *out = g_string_new(NULL);

	g_string_append_printf(out,
	                       "{\"kind\":\"PartialObjectMetadataList\",\"apiVersion\":\"meta.k8s."
	                       "io/%s\",\"metadata\":{\"resourceVersion\":\"%" G_GUINT64_FORMAT
	                       "\"",
	                       req->form.version, list_rv);
	if (next_token != NULL) {
		g_string_append(out, ",\"continue\":");
		msd_json_string_append(out, next_token, -1, MSD_JSON_STRING_GO);
		if (remaining >= 0)
			g_string_append_printf(out, ",\"remainingItemCount\":%" G_GINT64_FORMAT,
			                       remaining);
	}
	/* the converted list is built item by item: none leaves its items nil */
	g_string_append(out, items->len > 0 ? "},\"items\":[" : "},\"items\":null");
	for (guint i = 0; i < items->len; i++) {
		if (i > 0)
			g_string_append_c(out, ',');
		kubesim_metadata_append(out, req->resource, g_ptr_array_index(items, i),
		                        req->form.version);
		if (out->len >= METADATA_LIST_PIECE) {
			gsize len = out->len;
			soup_message_body_append(body, SOUP_MEMORY_TAKE, g_string_free(out, FALSE),
			                         len);
			out = g_string_new(NULL);
		}
	}
	g_string_append(out, items->len > 0 ? "]}\n" : "}\n");
	{
		gsize len = out->len;
		soup_message_body_append(body, SOUP_MEMORY_TAKE, g_string_free(out, FALSE), len);
	}
}

static void
serve_list(KubesimServer *self,
           SoupServerMessage *msg,
           KubesimRequest *req,
           GHashTable *query,
           KubesimFault *fault)
{
	KubesimResource *res = req->resource;
	const gchar *rv = kubesim_query_get(query, "resourceVersion");
	const gchar *cont = kubesim_query_get(query, "continue");
	const gchar *limit_text = kubesim_query_get(query, "limit");
	const gchar *include_object = kubesim_query_get(query, "includeObject");
	g_autoptr(KubesimSelector) sel = NULL;
	g_auto(ContinueToken) token = {0};
	KubesimStatus *status = NULL;
	g_autofree gchar *prefix = NULL;
	g_autofree gchar *next_token = NULL;
	g_autoptr(GPtrArray) items = g_ptr_array_new();
	KubesimListSnapshot *snap = NULL;
	gsize prefix_len = 0;
	gint64 limit = 0;
	gint64 remaining = 0;
	guint64 list_rv;
	gint64 issued;
	GTreeNode *node;
	gboolean table = kubesim_wants_table(msg);
	SoupMessageBody *body;
	guint i, inject_at;

	sel = kubesim_selector_new(kubesim_query_get(query, "labelSelector"),
	                           kubesim_query_get(query, "fieldSelector"), &status);
	if (sel == NULL) {
		kubesim_respond_status(msg, status);
		return;
	}
	if (cont != NULL && cont[0] != '\0') {
		if (!continue_token_decode(cont, &token)) {
			kubesim_respond_status(msg,
			                       kubesim_status_new(400, "BadRequest",
			                                          "continue key is not valid: "
			                                          "not a token of this server"));
			return;
		}
		if (g_get_real_time() / G_USEC_PER_SEC - token.issued >
		            self->config.page_token_ttl ||
		    token.rv < kubesim_store_get_history_floor(self->store)) {
			respond_continue_expired(msg);
			return;
		}
		if (token.rv > kubesim_store_get_rv(self->store)) {
			/* the store was replaced by one that has not come this far (etcd's error)
			 */
			kubesim_respond_status(msg, kubesim_status_new(500, NULL,
			                                               "etcdserver: mvcc: required "
			                                               "revision is a future "
			                                               "revision"));
			return;
		}
		list_rv = token.rv;
		issued = token.issued;
	} else {
		list_rv = kubesim_store_get_rv(self->store);
		issued = g_get_real_time() / G_USEC_PER_SEC;
	}
	/* RV=0 means "any": the apiserver ignores limit then */
	if (limit_text != NULL && g_strcmp0(rv, "0") != 0)
		limit = g_ascii_strtoll(limit_text, NULL, 10);
	if (req->namespace_ != NULL && res->namespaced) {
		prefix = g_strdup_printf("%s/", req->namespace_);
		prefix_len = strlen(prefix);
	}
	if (cont != NULL && cont[0] != '\0') {
		/* a later page: from the list's own snapshot, as of its first page */
		KubesimListSnapshot *later =
		        g_hash_table_lookup(self->list_snapshots, &token.snapshot);
		guint64 at = token.served;
		guint64 end;

		if (later == NULL || at > later->objects->len) {
			respond_continue_expired(msg);
			return;
		}
		end = limit > 0 ? MIN(at + (guint64)limit, later->objects->len)
		                : later->objects->len;
		for (guint64 k = at; k < end; k++)
			g_ptr_array_add(items, g_ptr_array_index(later->objects, k));
		if (end < later->objects->len) {
			ContinueToken next = {list_rv, issued, NULL, end, later->id};
			KubesimObject *last = g_ptr_array_index(items, items->len - 1);

			next.start = g_strconcat(last->key, "\001", NULL);
			next_token = continue_token_encode(&next);
			g_free(next.start);
			remaining = (gint64)(later->objects->len - end);
		}
		/* the items stay referenced by the snapshot until the answer is written */
		g_ptr_array_set_free_func(items, (GDestroyNotify)kubesim_object_unref);
		for (guint k = 0; k < items->len; k++)
			kubesim_object_ref(g_ptr_array_index(items, k));
		if (next_token == NULL)
			g_hash_table_remove(self->list_snapshots, &token.snapshot);
		goto respond;
	}
	if (prefix != NULL)
		node = g_tree_lower_bound(res->objects, prefix);
	else
		node = g_tree_node_first(res->objects);
	for (; node != NULL; node = g_tree_node_next(node)) {
		KubesimObject *obj = g_tree_node_value(node);
		if (prefix != NULL && strncmp(obj->key, prefix, prefix_len) != 0)
			break;
		if (!kubesim_selector_matches(sel, obj))
			continue;
		if (limit > 0 && items->len >= (guint)limit) {
			/* the first page is full: what follows it is kept as it is now */
			if (snap == NULL)
				snap = list_snapshot_new(self);
			g_ptr_array_add(snap->objects, kubesim_object_ref(obj));
			continue;
		}
		g_ptr_array_add(items, obj);
	}
	if (snap != NULL) {
		ContinueToken next = {list_rv, issued, NULL, 0, snap->id};
		KubesimObject *last = g_ptr_array_index(items, items->len - 1);

		next.start = g_strconcat(last->key, "\001", NULL);
		next_token = continue_token_encode(&next);
		g_free(next.start);
		remaining = (gint64)snap->objects->len;
	}

respond:
	status = kubesim_form_check(&req->form, res, TRUE);
	if (status != NULL) {
		kubesim_respond_status(msg, status);
		return;
	}
	soup_server_message_set_status(msg, 200, NULL);
	soup_message_headers_set_content_type(soup_server_message_get_response_headers(msg),
	                                      "application/json", NULL);
	body = soup_server_message_get_response_body(msg);
	if (table) {
		GString *out = g_string_new(NULL);
		kubesim_table_begin(out, res, list_rv, next_token, TRUE);
		for (i = 0; i < items->len; i++)
			kubesim_table_append_row(out, res, g_ptr_array_index(items, i),
			                         include_object, i == 0);
		kubesim_table_end(out);
		g_string_append_c(out, '\n');
		soup_message_body_append(body, SOUP_MEMORY_TAKE, out->str, out->len);
		g_string_free(out, FALSE);
		if (fault == NULL)
			kubesim_maybe_gzip(msg);
		kubesim_fault_finish_list(fault, msg);
		return;
	}
	if (req->form.kind == KUBESIM_FORM_METADATA_LIST) {
		respond_metadata_list(msg, req, list_rv, next_token,
		                      kubesim_selector_is_empty(sel) ? remaining : -1, items);
		if (fault == NULL)
			kubesim_maybe_gzip(msg);
		kubesim_fault_finish_list(fault, msg);
		soup_message_body_set_accumulate(body, FALSE);
		return;
	}
	{
		GString *head = g_string_new(NULL);
		g_string_append_printf(head, "{\"kind\":");
		msd_json_string_append(head, res->list_kind, -1, MSD_JSON_STRING_GO);
		g_string_append(head, ",\"apiVersion\":");
		msd_json_string_append(head, res->api_version, -1, MSD_JSON_STRING_GO);
		g_string_append_printf(
		        head, ",\"metadata\":{\"resourceVersion\":\"%" G_GUINT64_FORMAT "\"",
		        list_rv);
		if (next_token != NULL) {
			g_string_append(head, ",\"continue\":");
			msd_json_string_append(head, next_token, -1, MSD_JSON_STRING_GO);
			if (kubesim_selector_is_empty(sel))
				g_string_append_printf(head,
				                       ",\"remainingItemCount\":%" G_GINT64_FORMAT,
				                       remaining);
		}
		g_string_append(head, "},\"items\":[");
		soup_message_body_append(body, SOUP_MEMORY_TAKE, head->str, head->len);
		g_string_free(head, FALSE);
	}
	/* items go out as the stored JSON, unpacked once and not copied again; a built-in type's
	 * leave out kind and apiVersion (custom resources, unstructured on a real server, keep
	 * them) */
	inject_at = kubesim_fault_injects_object(fault) ? items->len / 2 : G_MAXUINT;
	for (i = 0; i <= items->len; i++) {
		g_autoptr(GBytes) item = NULL;
		KubesimObject *obj;
		if (i == inject_at) {
			if (i > 0)
				soup_message_body_append(body, SOUP_MEMORY_STATIC, ",", 1);
			kubesim_fault_append_object(fault, body, res, req->namespace_, list_rv,
			                            res->crd_name == NULL);
			if (i < items->len)
				soup_message_body_append(body, SOUP_MEMORY_STATIC, ",", 1);
		} else if (i > 0 && i < items->len) {
			soup_message_body_append(body, SOUP_MEMORY_STATIC, ",", 1);
		}
		if (i == items->len)
			break;
		obj = g_ptr_array_index(items, i);
		item = kubesim_object_item_bytes(obj);
		if (obj->item_off > 0)
			soup_message_body_append(body, SOUP_MEMORY_STATIC, "{", 1);
		soup_message_body_append_bytes(body, item);
	}
	/* Go's JSON encoder ends the list with a newline */
	soup_message_body_append(body, SOUP_MEMORY_STATIC, "]}\n", 3);
	/* a fault that cuts or resets the list cuts it as written, uncompressed */
	if (fault == NULL)
		kubesim_maybe_gzip(msg);
	kubesim_fault_finish_list(fault, msg);
	/* libsoup looks for the next chunk to write from the first one it still holds: a body
	 * that keeps what it wrote makes a list of N items cost N² */
	soup_message_body_set_accumulate(body, FALSE);
}
