/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * A list response that never ends, for clients' bounds on what they read: the usual list head,
 * then items without end, copies of the resource's own objects under new names and uids. It
 * is written as the client reads it (at most ENDLESS_QUEUE_BYTES ahead), or at a given rate,
 * so kubesim's memory stays bounded however long the client keeps reading, and it stops when
 * the client goes away.
 */

#include "kubesim-server.h"

#include <string.h>

#include "kubesim-json.h"

#define ENDLESS_QUEUE_BYTES (4 * 1024 * 1024)
#define ENDLESS_CHUNK_BYTES (256 * 1024)
#define ENDLESS_TEMPLATES   16
#define ENDLESS_TICK_MS     100

/* An object to copy: where its name ends and where its uid is, in its JSON. */
typedef struct {
	GBytes *json;
	gsize start;     /* where its item form starts after the "{" (its item_off) */
	gsize name_end;  /* the closing quote of metadata.name */
	gsize uid_start; /* metadata.uid, between the quotes; uid_len 0 when it has none */
	gsize uid_len;
} Template;

typedef struct {
	SoupServerMessage *msg;
	GArray *templates; /* Template */
	guint64 sent;      /* items written */
	guint fault_id;
	gdouble per_tick; /* 0: as fast as the client reads */
	gdouble carry;
	guint64 queued; /* bytes handed to libsoup and not yet written */
	guint tick_id;
	gulong wrote_id;
	gulong finished_id;
	gboolean io_running;
} Endless;

static void
template_clear(gpointer data)
{
	Template *t = data;

	g_bytes_unref(t->json);
}

static gboolean
template_init(Template *t, GBytes *json, gsize start)
{
	g_auto(MsdJsonTokens) doc = MSD_JSON_TOKENS_INIT;
	gsize len;
	const gchar *js = g_bytes_get_data(json, &len);
	gint name, uid;

	if (!msd_json_tokens_parse(&doc, js, len, NULL))
		return FALSE;
	name = msd_json_tokens_path(&doc, 0, "metadata", "name", NULL);
	uid = msd_json_tokens_path(&doc, 0, "metadata", "uid", NULL);
	if (!msd_json_tokens_is_string(&doc, name))
		return FALSE;
	t->json = g_bytes_ref(json);
	t->start = start;
	t->name_end = doc.tokens[name].end;
	t->uid_start = t->uid_len = 0;
	if (msd_json_tokens_is_string(&doc, uid) && uid > name) {
		t->uid_start = doc.tokens[uid].start;
		t->uid_len = doc.tokens[uid].end - doc.tokens[uid].start;
	}
	return TRUE;
}

/* Item @n: the template with "-endless-<n>" after its name and a uid of its own. */
static void
append_item(Endless *e, GString *out)
{
	const Template *t = &g_array_index(e->templates, Template, e->sent % e->templates->len);
	gsize len;
	const gchar *js = g_bytes_get_data(t->json, &len);

	if (e->sent > 0)
		g_string_append_c(out, ',');
	if (t->start > 0) {
		g_string_append_c(out, '{');
		g_string_append_len(out, js + t->start, t->name_end - t->start);
	} else {
		g_string_append_len(out, js, t->name_end);
	}
	g_string_append_printf(out, "-endless-%" G_GUINT64_FORMAT, e->sent);
	if (t->uid_len > 0) {
		g_string_append_len(out, js + t->name_end, t->uid_start - t->name_end);
		g_string_append_printf(out, "00000000-%04x-4000-8000-%012" G_GINT64_MODIFIER "x",
		                       e->fault_id & 0xffff,
		                       e->sent & G_GUINT64_CONSTANT(0xffffffffffff));
		g_string_append_len(out, js + t->uid_start + t->uid_len,
		                    len - t->uid_start - t->uid_len);
	} else {
		g_string_append_len(out, js + t->name_end, len - t->name_end);
	}
	e->sent++;
}

static void
endless_write(Endless *e, guint64 items)
{
	GString *out = g_string_sized_new(ENDLESS_CHUNK_BYTES + 64 * 1024);
	gsize len;

	while (items-- > 0 && e->queued + out->len < ENDLESS_QUEUE_BYTES) {
		append_item(e, out);
		if (out->len >= ENDLESS_CHUNK_BYTES)
			break;
	}
	len = out->len;
	if (len == 0) {
		g_string_free(out, TRUE);
		return;
	}
	soup_message_body_append(soup_server_message_get_response_body(e->msg), SOUP_MEMORY_TAKE,
	                         g_string_free(out, FALSE), len);
	e->queued += len;
	if (e->io_running)
		soup_server_message_unpause(e->msg);
}

/* As fast as the client reads: keeps ENDLESS_QUEUE_BYTES queued. */
static void
endless_fill(Endless *e)
{
	while (e->queued < ENDLESS_QUEUE_BYTES - ENDLESS_CHUNK_BYTES) {
		guint64 before = e->queued;
		endless_write(e, G_MAXUINT64);
		if (e->queued == before)
			break;
	}
}

static void
on_wrote_body_data(SoupServerMessage *msg, guint size, gpointer data)
{
	Endless *e = data;

	e->queued = size < e->queued ? e->queued - size : 0;
	if (e->per_tick == 0 && e->queued <= ENDLESS_QUEUE_BYTES / 2)
		endless_fill(e);
}

static gboolean
on_tick(gpointer data)
{
	Endless *e = data;
	guint64 n;

	e->carry += e->per_tick;
	n = (guint64)e->carry;
	e->carry -= (gdouble)n;
	/* a client slower than the rate gets what fits in the queue; the rest is not owed */
	if (n > 0)
		endless_write(e, n);
	if (e->queued >= ENDLESS_QUEUE_BYTES)
		e->carry = 0;
	return G_SOURCE_CONTINUE;
}

static void
on_finished(SoupServerMessage *msg, gpointer data)
{
	Endless *e = data;

	g_debug("endless list ended by the client after %" G_GUINT64_FORMAT " items", e->sent);
	g_clear_handle_id(&e->tick_id, g_source_remove);
	g_signal_handler_disconnect(msg, e->wrote_id);
	g_signal_handler_disconnect(msg, e->finished_id);
	g_array_unref(e->templates);
	g_object_unref(e->msg);
	g_free(e);
}

void
kubesim_endless_list_start(KubesimServer *self,
                           SoupServerMessage *msg,
                           KubesimRequest *req,
                           const KubesimFault *fault)
{
	KubesimResource *res = req->resource;
	SoupMessageHeaders *headers = soup_server_message_get_response_headers(msg);
	Endless *e = g_new0(Endless, 1);
	g_autofree gchar *prefix = NULL;
	GString *head = g_string_new(NULL);
	GTreeNode *node;
	gsize head_len;

	e->msg = g_object_ref(msg);
	e->fault_id = fault->id;
	e->per_tick = fault->rate * ENDLESS_TICK_MS / 1000.0;
	e->templates = g_array_new(FALSE, TRUE, sizeof(Template));
	g_array_set_clear_func(e->templates, template_clear);
	if (req->namespace_ != NULL && res->namespaced)
		prefix = g_strdup_printf("%s/", req->namespace_);
	node = prefix != NULL ? g_tree_lower_bound(res->objects, prefix)
	                      : g_tree_node_first(res->objects);
	for (; node != NULL && e->templates->len < ENDLESS_TEMPLATES;
	     node = g_tree_node_next(node)) {
		KubesimObject *obj = g_tree_node_value(node);
		g_autoptr(GBytes) json = NULL;
		Template t = {0};
		if (prefix != NULL && !g_str_has_prefix(obj->key, prefix))
			break;
		json = kubesim_object_get_json(obj);
		if (template_init(&t, json, obj->item_off))
			g_array_append_val(e->templates, t);
	}
	if (e->templates->len == 0) {
		/* an empty resource: a bare object of its kind */
		GString *json = g_string_new("{");
		g_autoptr(GBytes) bytes = NULL;
		Template t = {0};
		if (res->crd_name != NULL) {
			g_string_append(json, "\"apiVersion\":");
			msd_json_string_append(json, res->api_version, -1, MSD_JSON_STRING_GO);
			g_string_append(json, ",\"kind\":");
			msd_json_string_append(json, res->kind, -1, MSD_JSON_STRING_GO);
			g_string_append_c(json, ',');
		}
		g_string_append(json, "\"metadata\":{\"name\":\"kubesim\"");
		if (res->namespaced) {
			g_string_append(json, ",\"namespace\":");
			msd_json_string_append(
			        json, req->namespace_ != NULL ? req->namespace_ : "default", -1,
			        MSD_JSON_STRING_GO);
		}
		g_string_append_printf(json,
		                       ",\"uid\":\"00000000-0000-4000-8000-000000000000\","
		                       "\"resourceVersion\":\"%" G_GUINT64_FORMAT "\"}}",
		                       kubesim_store_get_rv(self->store));
		bytes = g_string_free_to_bytes(json);
		if (template_init(&t, bytes, 0))
			g_array_append_val(e->templates, t);
	}

	soup_server_message_set_status(msg, 200, NULL);
	soup_message_headers_set_content_type(headers, "application/json", NULL);
	soup_message_headers_set_encoding(headers, SOUP_ENCODING_CHUNKED);
	soup_message_body_set_accumulate(soup_server_message_get_response_body(msg), FALSE);
	g_string_append(head, "{\"kind\":");
	msd_json_string_append(head, res->list_kind, -1, MSD_JSON_STRING_GO);
	g_string_append(head, ",\"apiVersion\":");
	msd_json_string_append(head, res->api_version, -1, MSD_JSON_STRING_GO);
	g_string_append_printf(
	        head, ",\"metadata\":{\"resourceVersion\":\"%" G_GUINT64_FORMAT "\"},\"items\":[",
	        kubesim_store_get_rv(self->store));
	head_len = head->len;
	soup_message_body_append(soup_server_message_get_response_body(msg), SOUP_MEMORY_TAKE,
	                         g_string_free(head, FALSE), head_len);
	e->queued = head_len;
	e->wrote_id = g_signal_connect(msg, "wrote-body-data", G_CALLBACK(on_wrote_body_data), e);
	e->finished_id = g_signal_connect(msg, "finished", G_CALLBACK(on_finished), e);
	if (e->per_tick > 0)
		e->tick_id = g_timeout_add(ENDLESS_TICK_MS, on_tick, e);
	else
		endless_fill(e);
	e->io_running = TRUE;
}
