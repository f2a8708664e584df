/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncBroker"

#include "config.h"

#include "broker/msd-envelope.h"
#include "broker/msd-request-listener.h"

#include "meshsync-error.h"
#include "meshsync-handler-private.h"
#include "meshsync-resource.h"
#include "meshsync-version.h"
#include "meshsync-watch-config.h"
#include "util/msd-json-string.h"
#include "meshsync-resource-private.h"
#include "util/msd-json-object.h"
#include "util/msd-i18n.h"

/* Work done per main-loop dispatch while answering informer-store, so that a large store
 * never holds the loop (informer events and health probes keep being served meanwhile):
 * a round of 64 batches (320 objects) is converted in one dispatch and published in one. */
#define MSD_REPLY_ROUND_BATCHES 64
#define MSD_REPLY_PUBLISH_CHUNK 64

#define MSD_REQUESTS_METRIC "meshsync_requests_total"
#define MSD_REQUESTS_HELP   "Requests received on meshery.meshsync.request, by entity"

struct _MsdRequestListener {
	GObject parent_instance;

	MeshSyncBus *bus;          /* (owned) */
	MeshSyncBroker *broker;    /* (nullable): the bus, when it is NATS */
	MeshSyncHandler *handler;  /* (owned) */
	MsdMetrics *metrics;       /* (owned) (nullable) */
	MsdSessionRelay *sessions; /* (owned) (nullable): log and exec sessions */
	gchar *version;
	guint subscription;
	GSource *active_exec_source; /* (owned) (nullable) */
	guint active_exec_period_ms;
	GCancellable *cancellable; /* (owned): replies in progress */
	guint shard_index;
	guint shard_total;
};

G_DEFINE_FINAL_TYPE(MsdRequestListener, msd_request_listener, G_TYPE_OBJECT)

void
msd_request_free(MsdRequest *request)
{
	if (request == NULL)
		return;
	g_free(request->entity);
	g_clear_pointer(&request->payload, json_node_unref);
	g_free(request);
}

MsdRequest *
msd_request_parse(const gchar *data, gsize length, GError **error)
{
	g_autoptr(JsonParser) parser = json_parser_new_immutable();
	g_autoptr(GError) local_error = NULL;
	g_autoptr(MsdRequest) request = NULL;
	JsonNode *root;
	JsonNode *node;
	JsonNode *entity;
	JsonObject *object;

	if (length > G_MAXSSIZE ||
	    !json_parser_load_from_data(parser, data, (gssize)length, &local_error)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("request is not JSON: %s"),
		            local_error != NULL ? local_error->message : "too large");
		return NULL;
	}
	root = json_parser_get_root(parser);
	if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root)) {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		                    _("request envelope is not a JSON object"));
		return NULL;
	}
	node = msd_json_object_get_member_folded(json_node_get_object(root), "Request");
	if (node == NULL || JSON_NODE_HOLDS_NULL(node)) {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		                    _("request envelope has no Request"));
		return NULL;
	}
	if (!JSON_NODE_HOLDS_OBJECT(node)) {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		                    _("Request of the envelope is not an object"));
		return NULL;
	}
	object = json_node_get_object(node);
	entity = msd_json_object_get_member_folded(object, "Entity");
	request = g_new0(MsdRequest, 1);
	if (entity == NULL || JSON_NODE_HOLDS_NULL(entity)) {
		request->entity = g_strdup("");
	} else if (JSON_NODE_HOLDS_VALUE(entity) &&
	           json_node_get_value_type(entity) == G_TYPE_STRING) {
		request->entity = g_strdup(json_node_get_string(entity));
	} else {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		                    _("Entity of the request is not a string"));
		return NULL;
	}
	node = msd_json_object_get_member_folded(object, "Payload");
	if (node != NULL)
		request->payload = json_node_ref(node);
	return g_steal_pointer(&request);
}

gchar *
msd_request_dup_reply(JsonNode *payload)
{
	JsonNode *reply;

	if (payload == NULL || !JSON_NODE_HOLDS_OBJECT(payload))
		return NULL;
	reply = msd_json_object_get_member_folded(json_node_get_object(payload), "Reply");
	if (reply == NULL || !JSON_NODE_HOLDS_VALUE(reply) ||
	    json_node_get_value_type(reply) != G_TYPE_STRING)
		return NULL;
	if (*json_node_get_string(reply) == '\0')
		return NULL;
	return g_strdup(json_node_get_string(reply));
}

GArray *
msd_request_split_batches(guint n, guint size)
{
	GArray *batches = g_array_new(FALSE, FALSE, sizeof(guint));

	g_return_val_if_fail(size > 0, batches);
	for (guint done = 0; done < n;) {
		guint len = MIN(size, n - done);

		g_array_append_val(batches, len);
		done += len;
	}
	return batches;
}

/* ------------------------------------------------------------------------------------------
 * informer-store
 *
 * The reply goes out one round at a time: convert enough objects for
 * MSD_REPLY_ROUND_BATCHES batches, probe those, publish them, drop them, go on. The store's
 * own compact JSON is shared with the informers, so what a request holds at any moment is
 * one round of models, not the whole store as models.
 */

typedef struct {
	gchar *reply;
	MsdRequestListener *listener; /* (owned) */
	GPtrArray *objects;           /* (owned): MsdStoreEntry, the stores' own */
	guint next_object;
	GPtrArray *resources; /* (owned): this round's, converted, filtered, probed */
	GArray *batches;      /* (owned) (nullable): this round's batch lengths, once probed */
	guint next;
	guint next_batch;
	guint probes_pending;
	guint n_batches;
	/* While the broker cannot take messages: */
	GTask *waiting; /* (owned) (nullable): keeps the task alive */
	gulong writable_handler;
	gulong cancel_handler;
} MsdReplyJob;

static void
msd_reply_job_free(gpointer data)
{
	MsdReplyJob *job = data;

	g_free(job->reply);
	g_clear_pointer(&job->objects, g_ptr_array_unref);
	g_clear_pointer(&job->resources, g_ptr_array_unref);
	g_clear_pointer(&job->batches, g_array_unref);
	g_clear_object(&job->listener);
	g_free(job);
}

static gboolean msd_request_listener_store_convert_step(gpointer data);
static gboolean msd_request_listener_store_publish_step(gpointer data);

static void
msd_request_listener_store_schedule(GTask *task, GSourceFunc step)
{
	g_autoptr(GSource) idle = g_idle_source_new();

	g_source_set_priority(idle, G_PRIORITY_DEFAULT_IDLE);
	g_source_set_callback(idle, step, g_object_ref(task), g_object_unref);
	g_source_set_static_name(idle, "[meshsync] informer-store reply");
	g_source_attach(idle, g_task_get_context(task));
}

static void
msd_request_listener_store_probe_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	MsdReplyJob *job = g_task_get_task_data(task);
	MeshSyncResource *resource = MESHSYNC_RESOURCE(source);

	/* A cancelled probe leaves the resource pending; the reply is abandoned anyway. */
	if (!meshsync_resource_probe_finish(resource, result, NULL) &&
	    meshsync_resource_get_pending_endpoint(resource) != NULL)
		meshsync_resource_complete_probe(resource, FALSE);
	if (--job->probes_pending == 0)
		msd_request_listener_store_schedule(task, msd_request_listener_store_publish_step);
}

static void
msd_request_listener_store_start_probes(GTask *task)
{
	MsdReplyJob *job = g_task_get_task_data(task);

	/* The probes of a round are independent: run them together, publish once all are back. */
	job->probes_pending = 1;
	for (guint i = 0; i < job->resources->len; i++) {
		MeshSyncResource *resource = g_ptr_array_index(job->resources, i);

		if (meshsync_resource_get_pending_endpoint(resource) == NULL)
			continue;
		job->probes_pending++;
		meshsync_resource_probe_async(resource, g_task_get_cancellable(task),
		                              msd_request_listener_store_probe_cb,
		                              g_object_ref(task));
	}
	if (--job->probes_pending == 0)
		msd_request_listener_store_schedule(task, msd_request_listener_store_publish_step);
}

/* Converts the next round: objects until it holds MSD_REPLY_ROUND_BATCHES full batches or
 * the store is done. Rounds are whole batches, so the reply splits as if it had been
 * converted in one go. */
static gboolean
msd_request_listener_store_convert_step(gpointer data)
{
	GTask *task = data;
	MsdReplyJob *job = g_task_get_task_data(task);
	MeshSyncHandler *handler;
	guint round = MSD_REPLY_ROUND_BATCHES * MSD_STORE_BATCH_SIZE;

	if (g_task_return_error_if_cancelled(task))
		return G_SOURCE_REMOVE;
	handler = job->listener->handler;
	for (; job->next_object < job->objects->len && job->resources->len < round;
	     job->next_object++) {
		MeshSyncResource *resource = meshsync_handler_store_resource(
		        handler, g_ptr_array_index(job->objects, job->next_object));

		if (resource != NULL)
			g_ptr_array_add(job->resources, resource);
	}
	if (job->objects->len == job->next_object)
		g_clear_pointer(&job->objects, g_ptr_array_unref);
	g_clear_pointer(&job->batches, g_array_unref);
	job->batches = msd_request_split_batches(job->resources->len, MSD_STORE_BATCH_SIZE);
	job->next = 0;
	job->next_batch = 0;
	msd_request_listener_store_start_probes(task);
	return G_SOURCE_REMOVE;
}

static void
msd_request_listener_store_resume(GTask *task)
{
	MsdReplyJob *job = g_task_get_task_data(task);

	if (job->waiting == NULL)
		return;
	msd_request_listener_store_schedule(task, msd_request_listener_store_publish_step);
	/* The idle source holds the task now. */
	g_clear_object(&job->waiting);
}

static void
msd_request_listener_store_writable_cb(GObject *broker, GParamSpec *pspec, gpointer data)
{
	if (!meshsync_broker_get_writable(MESHSYNC_BROKER(broker)) &&
	    meshsync_broker_get_state(MESHSYNC_BROKER(broker)) != MESHSYNC_BROKER_STATE_CLOSED)
		return;
	msd_request_listener_store_resume(data);
}

static void
msd_request_listener_store_cancelled_cb(GCancellable *cancellable, gpointer data)
{
	msd_request_listener_store_resume(data);
}

static void
msd_request_listener_store_wait_writable(GTask *task)
{
	MsdReplyJob *job = g_task_get_task_data(task);
	GCancellable *cancellable = g_task_get_cancellable(task);

	job->waiting = g_object_ref(task);
	job->writable_handler =
	        g_signal_connect(job->listener->broker, "notify::writable",
	                         G_CALLBACK(msd_request_listener_store_writable_cb), task);
	if (cancellable != NULL)
		job->cancel_handler = g_cancellable_connect(
		        cancellable, G_CALLBACK(msd_request_listener_store_cancelled_cb), task,
		        NULL);
}

/* Not from inside the cancelled callback: g_cancellable_disconnect() would deadlock there. */
static void
msd_request_listener_store_stop_waiting(GTask *task)
{
	MsdReplyJob *job = g_task_get_task_data(task);

	g_clear_signal_handler(&job->writable_handler, job->listener->broker);
	if (job->cancel_handler != 0) {
		g_cancellable_disconnect(g_task_get_cancellable(task), job->cancel_handler);
		job->cancel_handler = 0;
	}
}

static gboolean
msd_request_listener_store_publish_step(gpointer data)
{
	GTask *task = data;
	MsdReplyJob *job = g_task_get_task_data(task);
	MeshSyncBroker *broker = job->listener->broker;
	MeshSyncBus *bus = job->listener->bus;
	g_autoptr(GString) envelope = g_string_sized_new(16384);

	msd_request_listener_store_stop_waiting(task);
	if (g_task_return_error_if_cancelled(task))
		return G_SOURCE_REMOVE;
	for (guint n = 0; n < MSD_REPLY_PUBLISH_CHUNK && job->next_batch < job->batches->len; n++) {
		guint end = job->next + g_array_index(job->batches, guint, job->next_batch);
		g_autoptr(GBytes) payload = NULL;
		g_autoptr(GError) error = NULL;

		/* The reconnect buffer is full: wait until the broker takes messages again. */
		if (broker != NULL && !meshsync_broker_get_writable(broker) &&
		    meshsync_broker_get_state(broker) != MESHSYNC_BROKER_STATE_CLOSED) {
			msd_request_listener_store_wait_writable(task);
			return G_SOURCE_REMOVE;
		}
		g_string_truncate(envelope, 0);
		msd_envelope_append_head(envelope, "", "");
		g_string_append_c(envelope, '[');
		for (guint i = job->next; i < end; i++) {
			g_autofree gchar *json =
			        meshsync_resource_to_json(g_ptr_array_index(job->resources, i));

			if (i > job->next)
				g_string_append_c(envelope, ',');
			g_string_append(envelope, json);
		}
		g_string_append_c(envelope, ']');
		msd_envelope_append_tail(envelope);
		payload = g_bytes_new(envelope->str, envelope->len);
		if (!meshsync_bus_publish(bus, job->reply, payload, &error)) {
			g_task_return_error(task, g_steal_pointer(&error));
			return G_SOURCE_REMOVE;
		}
		job->n_batches++;
		job->next_batch++;
		job->next = end;
	}
	if (job->next_batch < job->batches->len)
		return G_SOURCE_CONTINUE;
	/* This round is out: its models go before the next round is made. */
	g_ptr_array_set_size(job->resources, 0);
	if (job->objects != NULL) {
		msd_request_listener_store_schedule(task, msd_request_listener_store_convert_step);
		return G_SOURCE_REMOVE;
	}
	g_task_return_int(task, job->n_batches);
	return G_SOURCE_REMOVE;
}

void
msd_request_listener_reply_store_async(MsdRequestListener *self,
                                       const gchar *reply,
                                       GCancellable *cancellable,
                                       GAsyncReadyCallback callback,
                                       gpointer user_data)
{
	g_autoptr(GTask) task = NULL;
	GPtrArray *objects;
	MsdReplyJob *job;

	g_return_if_fail(MSD_IS_REQUEST_LISTENER(self));
	g_return_if_fail(reply != NULL);

	task = g_task_new(self, cancellable, callback, user_data);
	g_task_set_source_tag(task, msd_request_listener_reply_store_async);
	g_task_set_name(task, "[meshsync] informer-store reply");
	/* Upstream sends nothing before its pipeline has first synced, and nothing for an
	 * empty store: the requester sees no batch at all. During a resync it answers from the
	 * stores of the run before, and so do we. */
	objects = meshsync_handler_dup_complete_objects(self->handler);
	if (objects == NULL) {
		g_debug("informer-store: not synced yet, no reply on %s", reply);
		g_task_return_int(task, 0);
		return;
	}
	job = g_new0(MsdReplyJob, 1);
	job->reply = g_strdup(reply);
	job->listener = g_object_ref(self);
	job->objects = objects;
	job->resources = g_ptr_array_new_with_free_func(g_object_unref);
	g_task_set_task_data(task, job, msd_reply_job_free);
	msd_request_listener_store_schedule(task, msd_request_listener_store_convert_step);
}

gssize
msd_request_listener_reply_store_finish(MsdRequestListener *self,
                                        GAsyncResult *result,
                                        GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), -1);

	return g_task_propagate_int(G_TASK(result), error);
}

static void
msd_request_listener_store_done_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *reply = user_data;
	gssize n;

	n = msd_request_listener_reply_store_finish(MSD_REQUEST_LISTENER(source), result, &error);
	if (n < 0) {
		if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
			g_message("informer-store reply on %s: %s", reply, error->message);
		return;
	}
	g_debug("informer-store: %" G_GSSIZE_FORMAT " batches published on %s", n, reply);
}

/* ------------------------------------------------------------------------------------------
 * meshsync-meta, active-exec
 */

static void
msd_request_listener_publish_envelope(MsdRequestListener *self,
                                      const gchar *subject,
                                      const gchar *object_type,
                                      const gchar *object_json)
{
	g_autoptr(GBytes) payload = msd_envelope_new_bytes(object_type, "", object_json, -1);
	g_autoptr(GError) error = NULL;

	if (!meshsync_bus_publish(self->bus, subject, payload, &error))
		g_info("%s", error->message);
}

static void
msd_request_listener_publish_meta(MsdRequestListener *self)
{
	g_autoptr(GString) version = g_string_new(NULL);

	msd_json_string_append(version, self->version, -1, MSD_JSON_STRING_GO);
	msd_request_listener_publish_envelope(self, MSD_SUBJECT_META, "", version->str);
}

/* Every session, exec and log alike, as upstream lists them. */
static gboolean
msd_request_listener_active_exec_cb(gpointer data)
{
	MsdRequestListener *self = data;
	g_autofree gchar *list = self->sessions != NULL
	                                 ? msd_session_relay_dup_active_json(self->sessions)
	                                 : g_strdup("[]");

	msd_request_listener_publish_envelope(self, MSD_SUBJECT_ACTIVE_EXEC, "active-exec", list);
	return G_SOURCE_CONTINUE;
}

static void
msd_request_listener_start_active_exec(MsdRequestListener *self)
{
	/* Upstream starts another ticker per request; one is all a listener needs. */
	if (self->active_exec_source != NULL) {
		g_debug("active-exec: the ticker already runs");
		return;
	}
	g_info("active-exec: publishing the active sessions on %s every %u ms",
	       MSD_SUBJECT_ACTIVE_EXEC, self->active_exec_period_ms);
	/* The requester gets the list at once rather than one period later. */
	msd_request_listener_active_exec_cb(self);
	self->active_exec_source = msd_engine_context_add_timeout(
	        meshsync_handler_get_engine_context(self->handler), G_PRIORITY_DEFAULT,
	        self->active_exec_period_ms, "[meshsync] active-exec ticker",
	        msd_request_listener_active_exec_cb, self, NULL);
}

/* ------------------------------------------------------------------------------------------ */

static const gchar *const msd_known_entities[] = {
        "informer-store", "resync-discovery", "meshsync-meta",
        "active-exec",    "log-stream",       "exec-request",
};

static void
msd_request_listener_count(MsdRequestListener *self, const gchar *entity)
{
	const gchar *label = "other";

	if (self->metrics == NULL)
		return;
	/* Unknown entities share one label: a sender must not grow the registry at will. */
	for (guint i = 0; i < G_N_ELEMENTS(msd_known_entities); i++) {
		if (g_str_equal(entity, msd_known_entities[i]))
			label = msd_known_entities[i];
	}
	msd_metrics_counter_add(self->metrics, MSD_REQUESTS_METRIC, MSD_REQUESTS_HELP, 1, "entity",
	                        label, NULL);
}

void
msd_request_listener_handle(MsdRequestListener *self, GBytes *envelope)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MsdRequest) request = NULL;
	gsize len = 0;
	const gchar *data;

	g_return_if_fail(MSD_IS_REQUEST_LISTENER(self));

	data = g_bytes_get_data(envelope, &len);
	request = msd_request_parse(data != NULL ? data : "", len, &error);
	if (request == NULL) {
		g_message("ignoring a message on %s: %s", MSD_SUBJECT_REQUEST, error->message);
		if (self->metrics != NULL)
			msd_metrics_counter_add(self->metrics, MSD_REQUESTS_METRIC,
			                        MSD_REQUESTS_HELP, 1, "entity", "invalid", NULL);
		return;
	}
	msd_request_listener_count(self, request->entity);
	/* Sharded, every replica gets every request (no queue group): each answers
	 * informer-store from its own shard and resyncs; one, shard 0, answers the rest, so a
	 * version or a session is not answered three times. */
	if (self->shard_total > 1 && self->shard_index != 0 &&
	    !g_str_equal(request->entity, "informer-store") &&
	    !g_str_equal(request->entity, "resync-discovery")) {
		g_debug("%s request: answered by shard 0", request->entity);
		return;
	}
	if (g_str_equal(request->entity, "informer-store")) {
		g_autofree gchar *reply = msd_request_dup_reply(request->payload);

		if (reply == NULL) {
			g_message("ignoring an informer-store request without a Reply subject");
			return;
		}
		msd_request_listener_reply_store_async(self, reply, self->cancellable,
		                                       msd_request_listener_store_done_cb,
		                                       g_strdup(reply));
	} else if (g_str_equal(request->entity, "resync-discovery")) {
		g_info("resync requested over the broker");
		meshsync_handler_resync(self->handler);
	} else if (g_str_equal(request->entity, "meshsync-meta")) {
		msd_request_listener_publish_meta(self);
	} else if (g_str_equal(request->entity, "active-exec")) {
		msd_request_listener_start_active_exec(self);
	} else if (g_str_equal(request->entity, "log-stream") ||
	           g_str_equal(request->entity, "exec-request")) {
		if (self->sessions == NULL) {
			g_debug("%s request: no sessions here", request->entity);
			return;
		}
		if (g_str_equal(request->entity, "log-stream"))
			msd_session_relay_handle_logs(self->sessions, request->payload);
		else
			msd_session_relay_handle_exec(self->sessions, request->payload);
	} else {
		g_debug("ignoring a request for unknown entity \"%s\"", request->entity);
	}
}

static void
msd_request_listener_message_cb(MeshSyncBus *bus,
                                const gchar *subject,
                                const gchar *reply,
                                GBytes *payload,
                                gpointer user_data)
{
	msd_request_listener_handle(MSD_REQUEST_LISTENER(user_data), payload);
}

void
msd_request_listener_set_shard(MsdRequestListener *self, guint index, guint total)
{
	g_return_if_fail(MSD_IS_REQUEST_LISTENER(self));
	g_return_if_fail(self->subscription == 0);

	self->shard_index = index;
	self->shard_total = total;
}

gboolean
msd_request_listener_start(MsdRequestListener *self, GError **error)
{
	g_return_val_if_fail(MSD_IS_REQUEST_LISTENER(self), FALSE);

	if (self->subscription != 0)
		return TRUE;
	self->subscription = meshsync_bus_subscribe(
	        self->bus, MSD_SUBJECT_REQUEST, self->shard_total > 1 ? NULL : MSD_REQUEST_QUEUE,
	        msd_request_listener_message_cb, self, NULL, error);
	return self->subscription != 0;
}

void
msd_request_listener_stop(MsdRequestListener *self)
{
	g_return_if_fail(MSD_IS_REQUEST_LISTENER(self));

	if (self->subscription != 0) {
		meshsync_bus_unsubscribe(self->bus, self->subscription);
		self->subscription = 0;
	}
	msd_source_clear(&self->active_exec_source);
	g_cancellable_cancel(self->cancellable);
}

gboolean
msd_request_listener_get_active_exec_running(MsdRequestListener *self)
{
	g_return_val_if_fail(MSD_IS_REQUEST_LISTENER(self), FALSE);

	return self->active_exec_source != NULL;
}

static void
msd_request_listener_set_metrics(MsdRequestListener *self, MsdMetrics *metrics)
{
	g_return_if_fail(MSD_IS_REQUEST_LISTENER(self));

	g_set_object(&self->metrics, metrics);
	if (metrics != NULL)
		msd_request_listener_declare_metrics(metrics);
}

/* Every label the count can take, at zero: a rate over a series that appears with its first
 * request would miss that request. */
void
msd_request_listener_declare_metrics(MsdMetrics *metrics)
{
	g_return_if_fail(MSD_IS_METRICS(metrics));

	for (guint i = 0; i < G_N_ELEMENTS(msd_known_entities); i++)
		msd_metrics_counter_add(metrics, MSD_REQUESTS_METRIC, MSD_REQUESTS_HELP, 0,
		                        "entity", msd_known_entities[i], NULL);
	msd_metrics_counter_add(metrics, MSD_REQUESTS_METRIC, MSD_REQUESTS_HELP, 0, "entity",
	                        "other", NULL);
	msd_metrics_counter_add(metrics, MSD_REQUESTS_METRIC, MSD_REQUESTS_HELP, 0, "entity",
	                        "invalid", NULL);
}

void
msd_request_listener_set_sessions(MsdRequestListener *self, MsdSessionRelay *sessions)
{
	g_return_if_fail(MSD_IS_REQUEST_LISTENER(self));

	g_set_object(&self->sessions, sessions);
}

void
msd_request_listener_set_active_exec_period(MsdRequestListener *self, guint milliseconds)
{
	g_return_if_fail(MSD_IS_REQUEST_LISTENER(self));
	g_return_if_fail(milliseconds > 0);

	self->active_exec_period_ms = milliseconds;
}

static void
msd_request_listener_dispose(GObject *object)
{
	MsdRequestListener *self = MSD_REQUEST_LISTENER(object);

	if (self->bus != NULL)
		msd_request_listener_stop(self);
	G_OBJECT_CLASS(msd_request_listener_parent_class)->dispose(object);
}

static void
msd_request_listener_finalize(GObject *object)
{
	MsdRequestListener *self = MSD_REQUEST_LISTENER(object);

	/* Released here, not in dispose: a reply still unwinding after stop() reaches the broker
	 * and the handler through its job until the job lets go of the listener. */
	g_clear_object(&self->bus);
	self->broker = NULL;
	g_clear_object(&self->handler);
	g_clear_object(&self->metrics);
	g_clear_object(&self->sessions);
	g_free(self->version);
	g_clear_object(&self->cancellable);
	G_OBJECT_CLASS(msd_request_listener_parent_class)->finalize(object);
}

static void
msd_request_listener_class_init(MsdRequestListenerClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->dispose = msd_request_listener_dispose;
	object_class->finalize = msd_request_listener_finalize;
}

static void
msd_request_listener_init(MsdRequestListener *self)
{
	self->active_exec_period_ms = MSD_ACTIVE_EXEC_PERIOD_MS;
	self->cancellable = g_cancellable_new();
}

MsdRequestListener *
msd_request_listener_new(MeshSyncBus *bus, MeshSyncHandler *handler, const gchar *version)
{
	MsdRequestListener *self;

	g_return_val_if_fail(MESHSYNC_IS_BUS(bus), NULL);
	g_return_val_if_fail(MESHSYNC_IS_HANDLER(handler), NULL);

	self = g_object_new(MSD_TYPE_REQUEST_LISTENER, NULL);
	self->bus = g_object_ref(bus);
	/* only NATS says when it cannot take more; another bus takes what it is given */
	self->broker = MESHSYNC_IS_BROKER(bus) ? MESHSYNC_BROKER(bus) : NULL;
	self->handler = g_object_ref(handler);
	self->version = g_strdup(version != NULL ? version : meshsync_get_version());
	/* requests are counted by entity in the engine's registry, when it exports one */
	msd_request_listener_set_metrics(
	        self, msd_engine_context_get_metrics(meshsync_handler_get_engine_context(handler)));
	return self;
}
