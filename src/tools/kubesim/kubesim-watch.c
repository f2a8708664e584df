/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * One file for one stream: the initial state, the backlog of events that arrive meanwhile, live
 * events, bookmarks and the deadline all write to the same connection and must keep its order.
 */

#include "kubesim-server.h"

#include <string.h>

#include "kubesim-json.h"
#include "kubesim-metadata.h"
#include "kubesim-selector.h"
#include "kubesim-table.h"

/*
 * Every event goes out as its own chunk, as the real API server flushes its watch stream after
 * each event it has encoded: a client's reads then end anywhere between events, and the
 * initial-events-end bookmark follows the last initial event closely (often in the same read).
 * At most this much of the current state is queued ahead of the client: the rest waits until
 * libsoup has written what was queued.
 */
#define WATCH_QUEUE_BYTES (4 * 1024 * 1024)
/* the most of a burst of live events held back for one chunk */
#define WATCH_BURST_BYTES (64 * 1024)

/* An event that arrived while the current state was still being sent: it follows that state. */
typedef struct {
	const gchar *type; /* static; NULL for a raw line */
	KubesimObject *object;
	gchar *line;
} WatchBacklogItem;

/* One open watch stream: a chunked 200 response that grows as events arrive. */
typedef struct {
	KubesimServer *server;
	SoupServerMessage *msg;
	KubesimResource *resource;
	gchar *namespace_;
	KubesimSelector *selector;
	gboolean table;
	KubesimForm form; /* the metadata-only forms, as the Accept header chose */
	guint refused_id; /* an object the form cannot carry ends the watch from here */
	gchar *include_object;
	gboolean table_columns_sent;
	gboolean bookmarks;
	guint64 last_rv;
	guint64 start_rv; /* events up to this one are not the watch's (a watch from a given rv) */
	guint timeout_id;
	guint bookmark_id;
	guint deadline_bookmark_id;
	KubesimGzip *gzip; /* (nullable): a gzipped streaming list: one gzip member per flush */
	gulong finished_id;
	gulong wrote_id;
	GSource *hangup_source;
	gboolean io_running; /* the handler returned: appended chunks need an unpause */
	gboolean attached;   /* in server->watches, getting live events */
	gboolean done;
	GString *out; /* events not yet handed to libsoup */
	gsize queued; /* bytes handed to libsoup and not yet written */
	/* the current state, while it is being sent: objects as of the start of the watch */
	GPtrArray *initial; /* KubesimObject, NULL once sent */
	guint initial_next;
	gboolean initial_events; /* a watch-list: the state ends at initial_rv (and a bookmark) */
	guint64 initial_rv;      /* the store's rv at the start of the watch */
	GQueue backlog;          /* WatchBacklogItem */
	gboolean end_pending;    /* ended while the state was being sent: end after it */
} KubesimWatch;

/* Stops the timers and live events; what is queued still goes out. */
static void
watch_detach(KubesimWatch *w)
{
	g_clear_handle_id(&w->timeout_id, g_source_remove);
	g_clear_handle_id(&w->bookmark_id, g_source_remove);
	g_clear_handle_id(&w->deadline_bookmark_id, g_source_remove);
	g_clear_handle_id(&w->refused_id, g_source_remove);
	if (w->hangup_source != NULL) {
		g_source_destroy(w->hangup_source);
		g_clear_pointer(&w->hangup_source, g_source_unref);
	}
	if (w->attached) {
		w->attached = FALSE;
		g_ptr_array_remove_fast(w->server->watches, w);
	}
}

static void
watch_disconnect(KubesimWatch *w)
{
	if (w->finished_id != 0) {
		g_signal_handler_disconnect(w->msg, w->finished_id);
		w->finished_id = 0;
	}
	if (w->wrote_id != 0) {
		g_signal_handler_disconnect(w->msg, w->wrote_id);
		w->wrote_id = 0;
	}
}

static void
backlog_item_free(gpointer data)
{
	WatchBacklogItem *item = data;

	g_clear_pointer(&item->object, kubesim_object_unref);
	g_free(item->line);
	g_free(item);
}

static void
watch_free(KubesimWatch *w)
{
	g_object_unref(w->msg);
	kubesim_resource_unref(w->resource);
	g_free(w->namespace_);
	kubesim_selector_free(w->selector);
	g_free(w->include_object);
	g_clear_pointer(&w->initial, g_ptr_array_unref);
	g_queue_clear_full(&w->backlog, backlog_item_free);
	kubesim_gzip_free(w->gzip);
	if (w->out != NULL)
		g_string_free(w->out, TRUE);
	g_free(w);
}

/* The buffer events are written into; it goes to libsoup as one chunk on watch_flush(). */
static GString *
watch_out(KubesimWatch *w)
{
	if (w->out == NULL)
		w->out = g_string_sized_new(4096);
	return w->out;
}

/* Hands what was written since the last flush to libsoup, as one chunk: in a gzipped stream a
 * whole gzip member of its own, as the API server closes its gzip writer at every flush of a
 * streaming list (a decoder that stops after the first member sees nothing more). */
static void
watch_flush(KubesimWatch *w)
{
	SoupMessageBody *body = soup_server_message_get_response_body(w->msg);
	gsize len;

	if (w->out == NULL || w->out->len == 0)
		return;
	if (w->gzip != NULL) {
		g_autoptr(GBytes) member =
		        kubesim_gzip_write(w->gzip, w->out->str, w->out->len, TRUE);

		g_string_free(w->out, TRUE);
		len = g_bytes_get_size(member);
		soup_message_body_append_bytes(body, member);
	} else {
		len = w->out->len;
		soup_message_body_append(body, SOUP_MEMORY_TAKE, g_string_free(w->out, FALSE), len);
	}
	w->out = NULL;
	w->queued += len;
	if (w->io_running)
		soup_server_message_unpause(w->msg);
}

static void
watch_write(KubesimWatch *w, const gchar *line)
{
	g_string_append(watch_out(w), line);
	watch_flush(w);
}

/* Ends the stream cleanly (the terminating chunk) and forgets the watch. */
static void
watch_end(KubesimWatch *w)
{
	if (w->done)
		return;
	watch_detach(w);
	if (w->initial != NULL) {
		/* the current state is still going out: it and what followed it come first */
		w->end_pending = TRUE;
		return;
	}
	w->done = TRUE;
	watch_disconnect(w);
	watch_flush(w);
	soup_message_body_complete(soup_server_message_get_response_body(w->msg));
	if (w->io_running)
		soup_server_message_unpause(w->msg);
	watch_free(w);
}

static void
on_finished(SoupServerMessage *msg, gpointer user_data)
{
	KubesimWatch *w = user_data;

	/* the client went away, or the response ended: nothing more may be written */
	g_debug("watch on %s closed", w->resource->resource);
	w->done = TRUE;
	watch_detach(w);
	watch_disconnect(w);
	watch_free(w);
}

static gboolean
on_refused(gpointer data)
{
	KubesimWatch *w = data;

	w->refused_id = 0;
	g_clear_pointer(&w->initial, g_ptr_array_unref);
	g_queue_clear_full(&w->backlog, backlog_item_free);
	watch_end(w);
	return G_SOURCE_REMOVE;
}

/*
 * Whether the watch writes nothing for an event: under PartialObjectMetadataList, which no
 * single object converts to, the API server logs the failed conversion and ends the stream
 * cleanly at the first object or bookmark, having written nothing of it.
 */
static gboolean
watch_refuses(KubesimWatch *w)
{
	if (w->form.kind != KUBESIM_FORM_METADATA_LIST)
		return FALSE;
	if (w->refused_id == 0 && !w->done)
		w->refused_id = g_idle_add(on_refused, w);
	return TRUE;
}

static void
render_object_event(KubesimWatch *w, const gchar *type, KubesimObject *obj)
{
	GString *out;

	if (watch_refuses(w))
		return;
	out = watch_out(w);
	g_string_append(out, "{\"type\":\"");
	g_string_append(out, type);
	g_string_append(out, "\",\"object\":");
	if (w->table) {
		kubesim_table_begin(out, w->resource, obj->rv, NULL, !w->table_columns_sent);
		kubesim_table_append_row(out, w->resource, obj, w->include_object, TRUE);
		kubesim_table_end(out);
		w->table_columns_sent = TRUE;
	} else if (w->form.kind == KUBESIM_FORM_METADATA) {
		kubesim_metadata_append(out, w->resource, obj, w->form.version);
	} else {
		kubesim_object_append_json(obj, out);
	}
	g_string_append(out, "}\n");
	if (obj->rv > w->last_rv)
		w->last_rv = obj->rv;
}

/*
 * What a kind's JSON always writes after its metadata, even for an empty object (fields
 * without omitempty, structs): a 1.37 server's bookmarks are the kind's empty object with
 * only the resourceVersion (and the initial-events-end annotation) set, so they carry these.
 */
static const struct {
	const gchar *kind;
	const gchar *rest;
} empty_bodies[] = {
        {"Namespace", ",\"spec\":{},\"status\":{}"},
        {"Pod", ",\"spec\":{\"containers\":null},\"status\":{}"},
        {"Service", ",\"spec\":{},\"status\":{\"loadBalancer\":{}}"},
        {"Node", ",\"spec\":{},\"status\":{\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":0}},"
                 "\"nodeInfo\":{\"machineID\":\"\",\"systemUUID\":\"\",\"bootID\":\"\","
                 "\"kernelVersion\":\"\",\"osImage\":\"\",\"containerRuntimeVersion\":\"\","
                 "\"kubeletVersion\":\"\",\"kubeProxyVersion\":\"\",\"operatingSystem\":\"\","
                 "\"architecture\":\"\"}}"},
        {"PersistentVolume", ",\"spec\":{},\"status\":{}"},
        {"PersistentVolumeClaim", ",\"spec\":{\"resources\":{}},\"status\":{}"},
        {"Event", ",\"involvedObject\":{},\"source\":{},\"firstTimestamp\":null,"
                  "\"lastTimestamp\":null,\"eventTime\":null,\"reportingComponent\":\"\","
                  "\"reportingInstance\":\"\""},
        {"ReplicationController", ",\"spec\":{},\"status\":{\"replicas\":0}"},
        {"Deployment", ",\"spec\":{\"replicas\":0,\"selector\":null,\"template\":{\"metadata\":{},"
                       "\"spec\":{\"containers\":null}},\"strategy\":{}},\"status\":{}"},
        {"ReplicaSet", ",\"spec\":{\"replicas\":0,\"selector\":null,\"template\":{\"metadata\":{},"
                       "\"spec\":{\"containers\":null}}},\"status\":{\"replicas\":0}"},
        {"StatefulSet",
         ",\"spec\":{\"replicas\":0,\"selector\":null,\"template\":{\"metadata\":{},"
         "\"spec\":{\"containers\":null}},\"serviceName\":\"\",\"updateStrategy\":{}},"
         "\"status\":{\"replicas\":0,\"availableReplicas\":0}"},
        {"DaemonSet", ",\"spec\":{\"selector\":null,\"template\":{\"metadata\":{},\"spec\":{"
                      "\"containers\":null}},\"updateStrategy\":{}},\"status\":{"
                      "\"currentNumberScheduled\":0,\"numberMisscheduled\":0,"
                      "\"desiredNumberScheduled\":0,\"numberReady\":0}"},
        {"Job", ",\"spec\":{\"template\":{\"metadata\":{},\"spec\":{\"containers\":null}}},"
                "\"status\":{}"},
        {"CronJob",
         ",\"spec\":{\"schedule\":\"\",\"jobTemplate\":{\"metadata\":{},\"spec\":{"
         "\"template\":{\"metadata\":{},\"spec\":{\"containers\":null}}}}},\"status\":{}"},
        {"Ingress", ",\"spec\":{},\"status\":{\"loadBalancer\":{}}"},
        {"EndpointSlice", ",\"addressType\":\"\",\"endpoints\":null,\"ports\":null"},
        {"StorageClass", ",\"provisioner\":\"\""},
        {"VolumeAttachment", ",\"spec\":{\"attacher\":\"\",\"source\":{},\"nodeName\":\"\"},"
                             "\"status\":{\"attached\":false}"},
        {"ClusterRole", ",\"rules\":null"},
        {"Role", ",\"rules\":null"},
        {"ClusterRoleBinding", ",\"roleRef\":{\"apiGroup\":\"\",\"kind\":\"\",\"name\":\"\"}"},
        {"RoleBinding", ",\"roleRef\":{\"apiGroup\":\"\",\"kind\":\"\",\"name\":\"\"}"},
        {"APIService",
         ",\"spec\":{\"groupPriorityMinimum\":0,\"versionPriority\":0},\"status\":{}"},
        {"CustomResourceDefinition",
         ",\"spec\":{\"group\":\"\",\"names\":{\"plural\":\"\",\"kind\":\"\"},\"scope\":\"\","
         "\"versions\":null},\"status\":{\"conditions\":null,\"acceptedNames\":{"
         "\"plural\":\"\",\"kind\":\"\"},\"storedVersions\":null}"},
};

static const gchar *
empty_body(const KubesimResource *res)
{
	for (guint i = 0; i < G_N_ELEMENTS(empty_bodies); i++) {
		if (g_strcmp0(empty_bodies[i].kind, res->kind) == 0)
			return empty_bodies[i].rest;
	}
	return ""; /* ConfigMap, Secret, Endpoints, ServiceAccount: nothing beyond metadata */
}

/*
 * A BOOKMARK as a 1.37 server writes it: the kind's empty object with only
 * metadata.resourceVersion, and at the end of a streaming list's initial events the
 * k8s.io/initial-events-end annotation (no creationTimestamp, no list blueprint). A custom
 * resource's is unstructured, its keys sorted.
 */
static void
render_bookmark(KubesimWatch *w, guint64 rv, gboolean initial_events_end)
{
	GString *line = watch_out(w);
	static const gchar end_annotation[] =
	        "\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}";

	if (watch_refuses(w))
		return;
	if (w->form.kind == KUBESIM_FORM_METADATA) {
		g_string_append(line, "{\"type\":\"BOOKMARK\",\"object\":");
		kubesim_metadata_append_bookmark(line, rv, initial_events_end, w->form.version);
		g_string_append(line, "}\n");
		w->last_rv = MAX(w->last_rv, rv);
		return;
	}
	g_string_append(line, "{\"type\":\"BOOKMARK\",\"object\":{");
	if (w->resource->crd_name != NULL) {
		g_string_append(line, "\"apiVersion\":");
		msd_json_string_append(line, w->resource->api_version, -1, MSD_JSON_STRING_GO);
		g_string_append(line, ",\"kind\":");
		msd_json_string_append(line, w->resource->kind, -1, MSD_JSON_STRING_GO);
		g_string_append(line, ",\"metadata\":{");
		if (initial_events_end)
			g_string_append_printf(line, "%s,", end_annotation);
		g_string_append_printf(line, "\"resourceVersion\":\"%" G_GUINT64_FORMAT "\"}}}\n",
		                       rv);
	} else {
		g_string_append(line, "\"kind\":");
		msd_json_string_append(line, w->resource->kind, -1, MSD_JSON_STRING_GO);
		g_string_append(line, ",\"apiVersion\":");
		msd_json_string_append(line, w->resource->api_version, -1, MSD_JSON_STRING_GO);
		g_string_append_printf(
		        line, ",\"metadata\":{\"resourceVersion\":\"%" G_GUINT64_FORMAT "\"", rv);
		/* apps/v1's conversion writes a DaemonSet's templateGeneration as an annotation,
		 * into every DaemonSet it encodes, an empty one too */
		if (g_strcmp0(w->resource->kind, "DaemonSet") == 0)
			g_string_append_printf(line,
			                       ",\"annotations\":{\"deprecated.daemonset.template."
			                       "generation\":\"0\"%s}",
			                       initial_events_end
			                               ? ",\"k8s.io/initial-events-end\":\"true\""
			                               : "");
		else if (initial_events_end)
			g_string_append_printf(line, ",%s", end_annotation);
		g_string_append_printf(line, "}%s}}\n", empty_body(w->resource));
	}
	w->last_rv = MAX(w->last_rv, rv);
}

static void
send_error(KubesimWatch *w, KubesimStatus *status)
{
	g_autofree gchar *json = kubesim_status_to_json(status);
	g_autofree gchar *line = g_strdup_printf("{\"type\":\"ERROR\",\"object\":%s}\n", json);

	watch_write(w, line);
	kubesim_status_free(status);
}

/* The current state is out: the bookmark, then the events that arrived meanwhile. */
static void
initial_finish(KubesimWatch *w)
{
	WatchBacklogItem *item;

	g_clear_pointer(&w->initial, g_ptr_array_unref);
	if (w->initial_events && w->bookmarks)
		render_bookmark(w, w->initial_rv, TRUE);
	else if (w->initial_events)
		w->last_rv = w->initial_rv;
	while ((item = g_queue_pop_head(&w->backlog)) != NULL) {
		if (item->object != NULL)
			render_object_event(w, item->type, item->object);
		else
			g_string_append(watch_out(w), item->line);
		backlog_item_free(item);
	}
}

/*
 * Sends more of the current state, one chunk per event, until WATCH_QUEUE_BYTES are
 * queued ahead of the client; on_wrote_body_data() calls it again as libsoup writes them.
 * May free @w (a watch ended while its state was going out).
 */
static void
watch_fill(KubesimWatch *w)
{
	while (w->initial != NULL && w->queued < WATCH_QUEUE_BYTES) {
		if (w->initial_next < w->initial->len) {
			render_object_event(w, "ADDED",
			                    g_ptr_array_index(w->initial, w->initial_next++));
			watch_flush(w);
		} else {
			initial_finish(w);
		}
	}
	watch_flush(w);
	if (w->initial == NULL && w->end_pending)
		watch_end(w);
}

static void
on_wrote_body_data(SoupServerMessage *msg, guint size, gpointer user_data)
{
	KubesimWatch *w = user_data;

	w->queued = size < w->queued ? w->queued - size : 0;
	if (w->initial != NULL && w->queued <= WATCH_QUEUE_BYTES / 2)
		watch_fill(w);
}

static gboolean
on_flush_idle(gpointer data)
{
	KubesimServer *self = data;
	guint i;

	self->flush_id = 0;
	for (i = 0; i < self->watches->len; i++)
		watch_flush(g_ptr_array_index(self->watches, i));
	return G_SOURCE_REMOVE;
}

/*
 * Live events written in one turn of the main loop (a churn tick, a burst of writes) go to
 * libsoup together, as one chunk per watch, once that turn is over: the real server flushes
 * only when no further event is queued for the watcher, so a burst shares its chunks.
 */
static void
send_object_event(KubesimWatch *w, const gchar *type, KubesimObject *obj)
{
	render_object_event(w, type, obj);
	if (w->out == NULL)
		return; /* refused: nothing was written */
	if (w->out->len >= WATCH_BURST_BYTES)
		watch_flush(w);
	else if (w->server->flush_id == 0)
		w->server->flush_id =
		        g_idle_add_full(G_PRIORITY_DEFAULT, on_flush_idle, w->server, NULL);
}

/* A live event: it goes out now, or after the current state while that is being sent. */
static void
send_live_event(KubesimWatch *w, const gchar *type, KubesimObject *obj, const gchar *line)
{
	WatchBacklogItem *item;

	if (w->initial == NULL) {
		if (obj != NULL)
			send_object_event(w, type, obj);
		else
			watch_write(w, line);
		return;
	}
	item = g_new0(WatchBacklogItem, 1);
	item->type = type;
	item->object = obj != NULL ? kubesim_object_ref(obj) : NULL;
	item->line = g_strdup(line);
	g_queue_push_tail(&w->backlog, item);
}

static gboolean
watch_matches(KubesimWatch *w, KubesimResource *res, KubesimObject *obj)
{
	if (res != w->resource)
		return FALSE;
	if (w->namespace_ != NULL && g_strcmp0(obj->namespace_, w->namespace_) != 0)
		return FALSE;
	return kubesim_selector_matches(w->selector, obj);
}

static void
replay_event(const KubesimEvent *ev, gpointer data)
{
	KubesimWatch *w = data;

	if (watch_matches(w, ev->resource, ev->object)) {
		render_object_event(w, kubesim_event_type_to_string(ev->type), ev->object);
		watch_flush(w);
	}
}

static gboolean
collect_current_state(gpointer key, gpointer value, gpointer data)
{
	KubesimWatch *w = data;
	KubesimObject *obj = value;

	if (w->namespace_ != NULL && g_strcmp0(obj->namespace_, w->namespace_) != 0)
		return FALSE;
	if (kubesim_selector_matches(w->selector, obj))
		g_ptr_array_add(w->initial, kubesim_object_ref(obj));
	return FALSE;
}

void
kubesim_watch_dispatch(const KubesimEvent *ev, gpointer user_data)
{
	KubesimServer *self = user_data;
	guint i;

	/* backwards: watch_end() takes only @w out, moving the last (already seen) into its place
	 */
	for (i = self->watches->len; i-- > 0;) {
		KubesimWatch *w = g_ptr_array_index(self->watches, i);
		if (w->resource->removed) {
			watch_end(w);
			continue;
		}
		/* a watch from a version the store had not reached sees only what passes it */
		if (ev->object->rv > w->start_rv && watch_matches(w, ev->resource, ev->object))
			send_live_event(w, kubesim_event_type_to_string(ev->type), ev->object,
			                NULL);
	}
}

static gboolean
on_timeout(gpointer data)
{
	KubesimWatch *w = data;

	w->timeout_id = 0;
	watch_end(w);
	return G_SOURCE_REMOVE;
}

static void
send_periodic_bookmark(KubesimWatch *w)
{
	guint64 rv = kubesim_store_get_rv(w->server->store);

	/* never a bookmark at the rv the client already has, nor inside the current state */
	if (w->initial == NULL && rv > w->last_rv) {
		render_bookmark(w, rv, FALSE);
		watch_flush(w);
	}
}

static gboolean
on_bookmark_tick(gpointer data)
{
	send_periodic_bookmark(data);
	return G_SOURCE_CONTINUE;
}

/* The watch cache's bookmark 2 s before the watch's deadline, so that the client resumes from
 * as recent a resourceVersion as possible when the server ends the watch. */
static gboolean
on_deadline_bookmark(gpointer data)
{
	KubesimWatch *w = data;

	w->deadline_bookmark_id = 0;
	send_periodic_bookmark(w);
	return G_SOURCE_REMOVE;
}

/*
 * libsoup notices a vanished client only when a write fails, and a quiet watch writes nothing;
 * the client never sends anything on a watch connection, so readability means it hung up
 * (EOF, or a TLS close_notify before it).
 */
static gboolean
on_hangup(GSocket *socket, GIOCondition condition, gpointer data)
{
	KubesimWatch *w = data;

	g_debug("watch on %s: the client hung up", w->resource->resource);
	g_clear_pointer(&w->hangup_source, g_source_unref);
	watch_end(w);
	return G_SOURCE_REMOVE;
}

/* A watch-list waiting for the store to reach its resourceVersion. */
typedef struct {
	KubesimResource *resource;
	gchar *namespace_;
	KubesimSelector *selector;
	GHashTable *query;
	KubesimFault *fault;
	KubesimForm form;
	guint64 wanted_rv;
} PendingWatch;

static void watch_begin(KubesimServer *self,
                        SoupServerMessage *msg,
                        KubesimResource *resource,
                        const gchar *namespace_,
                        KubesimSelector *selector,
                        GHashTable *query,
                        KubesimFault *fault,
                        const KubesimForm *form,
                        KubesimStatus *error);

static void
pending_watch_ready(KubesimServer *self, SoupServerMessage *msg, gboolean reached, gpointer data)
{
	PendingWatch *p = data;

	if (p->resource->removed) {
		kubesim_respond_not_found_page(msg);
		return;
	}
	/* the cacher's error after its wait goes in the stream, as every error after the
	 * request was accepted */
	watch_begin(self, msg, p->resource, p->namespace_, g_steal_pointer(&p->selector), p->query,
	            p->fault, &p->form,
	            reached ? NULL
	                    : kubesim_status_new_too_large_rv(
	                              p->wanted_rv, kubesim_store_get_rv(self->store), 1));
}

static void
pending_watch_free(gpointer data)
{
	PendingWatch *p = data;

	kubesim_resource_unref(p->resource);
	g_free(p->namespace_);
	g_clear_pointer(&p->selector, kubesim_selector_free);
	if (p->query != NULL)
		g_hash_table_unref(p->query);
	g_clear_pointer(&p->fault, kubesim_fault_unref);
	g_free(p);
}

void
kubesim_watch_start(KubesimServer *self,
                    SoupServerMessage *msg,
                    KubesimRequest *req,
                    GHashTable *query,
                    KubesimFault *fault)
{
	const gchar *rv_text = kubesim_query_get(query, "resourceVersion");
	const gchar *rvm = kubesim_query_get(query, "resourceVersionMatch");
	gboolean initial_events = kubesim_query_bool(query, "sendInitialEvents", FALSE);
	g_autoptr(KubesimSelector) selector = NULL;
	KubesimStatus *status = NULL;
	guint64 wanted;

	if (rvm != NULL && rvm[0] == '\0')
		rvm = NULL;
	if (initial_events && g_strcmp0(rvm, "NotOlderThan") != 0) {
		kubesim_respond_status(msg, kubesim_status_new_invalid_list_options(
		                                    "resourceVersionMatch",
		                                    "Forbidden: sendInitialEvents requires "
		                                    "setting resourceVersionMatch to "
		                                    "NotOlderThan"));
		return;
	}
	if (!initial_events && rvm != NULL) {
		kubesim_respond_status(msg, kubesim_status_new_invalid_list_options(
		                                    "resourceVersionMatch",
		                                    "Forbidden: resourceVersionMatch is "
		                                    "forbidden for watch unless "
		                                    "sendInitialEvents is provided"));
		return;
	}
	selector = kubesim_selector_new(kubesim_query_get(query, "labelSelector"),
	                                kubesim_query_get(query, "fieldSelector"), &status);
	if (selector == NULL) {
		kubesim_respond_status(msg, status);
		return;
	}
	/*
	 * Only a watch-list waits for the store to reach its resourceVersion (and then fails
	 * with 504). A plain watch from a version the store has not reached is accepted at
	 * once and stays quiet until events pass that version, as the watch cache does.
	 */
	wanted = rv_text != NULL ? g_ascii_strtoull(rv_text, NULL, 10) : 0;
	if (initial_events && wanted > kubesim_store_get_rv(self->store)) {
		PendingWatch *p = g_new0(PendingWatch, 1);
		p->resource = kubesim_resource_ref(req->resource);
		p->namespace_ = g_strdup(req->namespace_);
		p->selector = g_steal_pointer(&selector);
		p->query = query != NULL ? g_hash_table_ref(query) : NULL;
		p->fault = fault != NULL ? kubesim_fault_ref(fault) : NULL;
		p->form = req->form;
		p->wanted_rv = wanted;
		kubesim_server_wait_for_rv(self, msg, wanted, pending_watch_ready, p,
		                           pending_watch_free);
		return;
	}
	watch_begin(self, msg, req->resource, req->namespace_, g_steal_pointer(&selector), query,
	            fault, &req->form, NULL);
}

/*
 * Whether a watch is a streaming list: asked for (sendInitialEvents=true), or defaulted, as a
 * 1.37 server (WatchList on) defaults a watch from no resourceVersion or "0" that says neither
 * sendInitialEvents nor resourceVersionMatch: its initial events then end with the
 * initial-events-end bookmark when it allows bookmarks, and it is gzipped as one.
 */
static gboolean
sends_initial_events(GHashTable *query)
{
	const gchar *rv = kubesim_query_get(query, "resourceVersion");
	const gchar *rvm = kubesim_query_get(query, "resourceVersionMatch");

	if (kubesim_query_get(query, "sendInitialEvents") != NULL)
		return kubesim_query_bool(query, "sendInitialEvents", FALSE);
	if (rvm != NULL && rvm[0] != '\0')
		return FALSE;
	return rv == NULL || rv[0] == '\0' || g_strcmp0(rv, "0") == 0;
}

/* Starts the stream; takes @selector and @error (an ERROR event that ends it at once). */
static void
watch_begin(KubesimServer *self,
            SoupServerMessage *msg,
            KubesimResource *resource,
            const gchar *namespace_,
            KubesimSelector *selector,
            GHashTable *query,
            KubesimFault *fault,
            const KubesimForm *form,
            KubesimStatus *error)
{
	const gchar *rv_text = kubesim_query_get(query, "resourceVersion");
	const gchar *timeout_text = kubesim_query_get(query, "timeoutSeconds");
	gboolean initial_events = sends_initial_events(query);
	SoupMessageHeaders *headers = soup_server_message_get_response_headers(msg);
	KubesimWatch *w;
	guint64 floor = kubesim_store_get_history_floor(self->store);
	guint timeout;

	w = g_new0(KubesimWatch, 1);
	w->server = self;
	w->msg = g_object_ref(msg);
	w->resource = kubesim_resource_ref(resource);
	w->namespace_ = resource->namespaced ? g_strdup(namespace_) : NULL;
	w->selector = selector;
	w->table = kubesim_wants_table(msg);
	w->form = *form;
	w->include_object = g_strdup(kubesim_query_get(query, "includeObject"));
	w->bookmarks = kubesim_query_bool(query, "allowWatchBookmarks", FALSE);

	soup_server_message_set_status(msg, 200, NULL);
	soup_message_headers_set_content_type(headers, "application/json", NULL);
	/* WatchListCompression: a streaming list that ends with its bookmark is gzipped when the
	 * client accepts it, whatever its size (other watches never are). Not under a fault that
	 * injects an object: that object is written around the stream's buffer. */
	if (initial_events && w->bookmarks && kubesim_accepts_gzip(msg) &&
	    !kubesim_fault_injects_object(fault)) {
		w->gzip = kubesim_gzip_new();
		soup_message_headers_replace(headers, "Content-Encoding", "gzip");
		soup_message_headers_replace(headers, "Vary", "Accept-Encoding");
	}
	soup_message_headers_set_encoding(headers, SOUP_ENCODING_CHUNKED);
	/* written chunks are dropped: the stream is never held whole */
	soup_message_body_set_accumulate(soup_server_message_get_response_body(msg), FALSE);
	g_ptr_array_add(self->watches, w);
	w->attached = TRUE;
	w->finished_id = g_signal_connect(msg, "finished", G_CALLBACK(on_finished), w);
	w->wrote_id = g_signal_connect(msg, "wrote-body-data", G_CALLBACK(on_wrote_body_data), w);

	if (error != NULL) {
		send_error(w, error);
		watch_end(w);
		return;
	}
	if (kubesim_fault_injects_object(fault)) {
		/* a hostile object first, as an ADDED event, then the stream as usual */
		SoupMessageBody *body = soup_server_message_get_response_body(msg);
		static const gchar open[] = "{\"type\":\"ADDED\",\"object\":";
		soup_message_body_append(body, SOUP_MEMORY_STATIC, open, sizeof open - 1);
		w->queued += sizeof open - 1;
		w->queued += kubesim_fault_append_object(fault, body, resource, namespace_,
		                                         kubesim_store_get_rv(self->store), FALSE);
		soup_message_body_append(body, SOUP_MEMORY_STATIC, "}\n", 2);
		w->queued += 2;
	}
	if (self->expire_next_watch &&
	    (self->expire_resource == NULL ||
	     g_strcmp0(self->expire_resource, resource->resource) == 0)) {
		self->expire_next_watch = FALSE;
		send_error(w, kubesim_status_new(410, "Expired",
		                                 "too old resource version: %s (%" G_GUINT64_FORMAT
		                                 ")",
		                                 rv_text != NULL ? rv_text : "",
		                                 kubesim_store_get_rv(self->store)));
		watch_end(w);
		return;
	}
	if (initial_events || rv_text == NULL || rv_text[0] == '\0' ||
	    g_strcmp0(rv_text, "0") == 0) {
		/* the objects as of now; their events go out as the client reads them */
		w->initial = g_ptr_array_new_full(g_tree_nnodes(w->resource->objects),
		                                  (GDestroyNotify)kubesim_object_unref);
		g_tree_foreach(w->resource->objects, collect_current_state, w);
		w->initial_events = initial_events;
		w->initial_rv = kubesim_store_get_rv(self->store);
		watch_fill(w);
	} else {
		guint64 rv = g_ascii_strtoull(rv_text, NULL, 10);
		if (rv < floor) {
			send_error(w,
			           kubesim_status_new(410, "Expired",
			                              "too old resource version: %" G_GUINT64_FORMAT
			                              " (%" G_GUINT64_FORMAT ")",
			                              rv, floor));
			watch_end(w);
			return;
		}
		w->last_rv = rv;
		w->start_rv = rv;
		kubesim_store_replay(self->store, rv, replay_event, w);
		watch_flush(w);
	}

	if (timeout_text != NULL && g_ascii_strtoull(timeout_text, NULL, 10) > 0)
		timeout = g_ascii_strtoull(timeout_text, NULL, 10);
	else
		timeout = g_random_int_range(1800, 3600);
	w->timeout_id = g_timeout_add_seconds(timeout, on_timeout, w);
	if (w->bookmarks)
		w->bookmark_id = g_timeout_add_seconds(MAX(self->config.bookmark_interval, 1),
		                                       on_bookmark_tick, w);
	if (w->bookmarks && timeout > 2)
		w->deadline_bookmark_id =
		        g_timeout_add((timeout - 2) * 1000, on_deadline_bookmark, w);
	{
		GSocket *socket = soup_server_message_get_socket(msg);
		if (socket != NULL) {
			w->hangup_source =
			        g_socket_create_source(socket, G_IO_IN | G_IO_HUP | G_IO_ERR, NULL);
			g_source_set_callback(w->hangup_source, G_SOURCE_FUNC(on_hangup), w, NULL);
			g_source_attach(w->hangup_source, NULL);
		}
	}
	w->io_running = TRUE;
}

void
kubesim_watch_close_all(KubesimServer *self)
{
	while (self->watches->len > 0)
		watch_end(g_ptr_array_index(self->watches, self->watches->len - 1));
}

void
kubesim_watch_send_malformed(KubesimServer *self)
{
	guint i;

	for (i = 0; i < self->watches->len; i++)
		send_live_event(g_ptr_array_index(self->watches, i), NULL, NULL,
		                "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\n");
}

void
kubesim_watch_free_all(KubesimServer *self)
{
	kubesim_watch_close_all(self);
	g_clear_handle_id(&self->flush_id, g_source_remove);
}
