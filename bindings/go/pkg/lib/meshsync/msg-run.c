/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "msg-run.h"

#include <stdlib.h>

#include "_cgo_export.h"

/* The writer that hands every event to Go: the resource's own wire bytes (upstream's
 * KubernetesResource JSON, made once per event and shared with the other writers) and the
 * event type. Go copies the bytes and queues them; nothing Go does runs long on this
 * thread. It is writable while Go's queue is below its high-water mark, so the engine holds
 * events (as it does for a slow NATS server) instead of growing the queue without bound. */
#define MSG_TYPE_WRITER (msg_writer_get_type())
G_DECLARE_FINAL_TYPE(MsgWriter, msg_writer, MSG, WRITER, GObject)

struct _MsgWriter {
	GObject parent_instance;
	uintptr_t handle;
};

static void msg_writer_iface_init(MeshSyncWriterInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(MsgWriter,
                              msg_writer,
                              G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(MESHSYNC_TYPE_WRITER, msg_writer_iface_init))

static gboolean
msg_writer_write(MeshSyncWriter *writer,
                 MeshSyncResource *resource,
                 MeshSyncEventType event_type,
                 GError **error)
{
	MsgWriter *self = MSG_WRITER(writer);
	GBytes *wire = meshsync_resource_get_wire_bytes(resource);
	gsize length = 0;
	const gchar *data = g_bytes_get_data(wire, &length);

	(void)error;
	msgDeliver(self->handle, (int)event_type, (char *)data, length);
	return TRUE;
}

static gboolean
msg_writer_flush(MeshSyncWriter *writer, GError **error)
{
	(void)writer;
	(void)error;
	return TRUE;
}

static gboolean
msg_writer_is_writable(MeshSyncWriter *writer)
{
	return msgWritable(MSG_WRITER(writer)->handle) != 0;
}

static void
msg_writer_iface_init(MeshSyncWriterInterface *iface)
{
	iface->write = msg_writer_write;
	iface->flush = msg_writer_flush;
	iface->close = msg_writer_flush;
	iface->is_writable = msg_writer_is_writable;
}

static void
msg_writer_class_init(MsgWriterClass *klass)
{
	(void)klass;
}

static void
msg_writer_init(MsgWriter *self)
{
	(void)self;
}


/* The host's broker handler as the engine's MeshSyncBus: what the sessions publish goes to
 * Go, which queues it for the handler; a subscription is one on the handler, whose
 * messages Go hands back here as envelopes, delivered on the run's context. */
#define MSG_TYPE_BUS (msg_bus_get_type())
G_DECLARE_FINAL_TYPE(MsgBus, msg_bus, MSG, BUS, GObject)

typedef struct {
	MeshSyncBusMessageFunc func;
	gpointer user_data;
	GDestroyNotify destroy;
} MsgBusSubscription;

struct _MsgBus {
	GObject parent_instance;
	uintptr_t handle;
	GHashTable *subscriptions; /* id → MsgBusSubscription, on the run's thread only */
	guint next_id;
};

static void msg_bus_iface_init(MeshSyncBusInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(MsgBus,
                              msg_bus,
                              G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(MESHSYNC_TYPE_BUS, msg_bus_iface_init))

static void
msg_bus_subscription_free(gpointer data)
{
	MsgBusSubscription *sub = data;

	if (sub->destroy != NULL)
		sub->destroy(sub->user_data);
	g_free(sub);
}

static gboolean
msg_bus_publish(MeshSyncBus *bus, const gchar *subject, GBytes *payload, GError **error)
{
	gsize length = 0;
	const gchar *data = g_bytes_get_data(payload, &length);

	if (msgBusPublish(MSG_BUS(bus)->handle, (char *)subject, (char *)data, length) == 0) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE,
		            "the broker handler is not taking messages on %s", subject);
		return FALSE;
	}
	return TRUE;
}

static guint
msg_bus_subscribe(MeshSyncBus *bus,
                  const gchar *subject,
                  const gchar *queue_group,
                  MeshSyncBusMessageFunc func,
                  gpointer user_data,
                  GDestroyNotify destroy,
                  GError **error)
{
	MsgBus *self = MSG_BUS(bus);
	MsgBusSubscription *sub;
	char *failure;
	guint id = ++self->next_id;

	failure = msgBusSubscribe(self->handle, id, (char *)subject,
	                          (char *)(queue_group != NULL ? queue_group : ""));
	if (failure != NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_FAILED, "subscribing to %s: %s",
		            subject, failure);
		free(failure);
		return 0;
	}
	sub = g_new0(MsgBusSubscription, 1);
	sub->func = func;
	sub->user_data = user_data;
	sub->destroy = destroy;
	g_hash_table_insert(self->subscriptions, GUINT_TO_POINTER(id), sub);
	return id;
}

static void
msg_bus_unsubscribe(MeshSyncBus *bus, guint subscription_id)
{
	MsgBus *self = MSG_BUS(bus);

	if (g_hash_table_remove(self->subscriptions, GUINT_TO_POINTER(subscription_id)))
		msgBusUnsubscribe(self->handle, subscription_id);
}

static void
msg_bus_iface_init(MeshSyncBusInterface *iface)
{
	iface->publish = msg_bus_publish;
	iface->subscribe = msg_bus_subscribe;
	iface->unsubscribe = msg_bus_unsubscribe;
}

static void
msg_bus_finalize(GObject *object)
{
	MsgBus *self = MSG_BUS(object);

	g_hash_table_unref(self->subscriptions);
	G_OBJECT_CLASS(msg_bus_parent_class)->finalize(object);
}

static void
msg_bus_class_init(MsgBusClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = msg_bus_finalize;
}

static void
msg_bus_init(MsgBus *self)
{
	self->subscriptions =
	        g_hash_table_new_full(NULL, NULL, NULL, msg_bus_subscription_free);
}

/* A message of a subscription, on the run's thread. The id is looked up again: the
 * subscription may have ended while the message was on its way. */
static void
msg_bus_deliver(MsgBus *self, guint id, const gchar *subject, GBytes *payload)
{
	MsgBusSubscription *sub = g_hash_table_lookup(self->subscriptions, GUINT_TO_POINTER(id));

	if (sub != NULL)
		sub->func(MESHSYNC_BUS(self), subject, NULL, payload, sub->user_data);
}

struct _MsgRun {
	uintptr_t handle;
	gboolean log_debug; /* debug lines go to Go's logger too */

	/* configuration, set before msg_run_execute() */
	GBytes *kubeconfig;
	gboolean file_output;
	gchar *file_path;
	gboolean file_extended;
	gchar *broker_url;
	gboolean events_to_go;
	GPtrArray *output_namespaces;
	GPtrArray *output_resources;

	/* owned by the run's thread while it executes */
	GMainContext *context;
	GMainLoop *loop;
	MeshSyncService *service;
	MsgWriter *writer;
	MsgBus *bus;
	GCancellable *cancellable;
	gboolean started;
	gboolean stopping;
	GError *error;

	/* shared with the threads that stop it */
	GMutex lock;
	gboolean stop_requested;
	gboolean running;
};

/* The run whose thread this is, for the log writer: set while msg_run_execute() runs. */
static GPrivate msg_thread_run;

/* The engine's lines go to the Go logger of the run whose thread emits them, so a host with
 * several clusters reads each cluster's lines in its own logger; Go only queues the line
 * here. Lines of other threads (GLib's worker pool, nats.c's) and of a program that is not a
 * run's keep GLib's default writer. */
static GLogWriterOutput
msg_log_writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer data)
{
	MsgRun *run = g_private_get(&msg_thread_run);
	const gchar *message = NULL;
	gint severity;

	if (run == NULL)
		return g_log_writer_default(level, fields, n_fields, data);
	for (gsize i = 0; i < n_fields; i++) {
		if (g_strcmp0(fields[i].key, "MESSAGE") == 0 && fields[i].length < 0)
			message = fields[i].value;
	}
	if (message == NULL)
		return G_LOG_WRITER_UNHANDLED;
	if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL))
		severity = MSG_LOG_ERROR;
	else if (level & G_LOG_LEVEL_WARNING)
		severity = MSG_LOG_WARNING;
	else if (level & (G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO))
		severity = MSG_LOG_INFO;
	else if (run->log_debug)
		severity = MSG_LOG_DEBUG;
	else
		return G_LOG_WRITER_HANDLED;
	msgLog(run->handle, severity, (char *)message);
	return G_LOG_WRITER_HANDLED;
}

static gpointer
msg_install_log_writer(gpointer data)
{
	(void)data;
	g_log_set_writer_func(msg_log_writer, NULL, NULL);
	return NULL;
}

MsgRun *
msg_run_new(uintptr_t handle)
{
	static GOnce writer_once = G_ONCE_INIT;
	MsgRun *run = g_new0(MsgRun, 1);

	g_once(&writer_once, msg_install_log_writer, NULL);

	run->handle = handle;
	run->output_namespaces = g_ptr_array_new_with_free_func(g_free);
	run->output_resources = g_ptr_array_new_with_free_func(g_free);
	g_mutex_init(&run->lock);
	return run;
}

void
msg_run_free(MsgRun *run)
{
	g_clear_pointer(&run->kubeconfig, g_bytes_unref);
	g_free(run->file_path);
	g_free(run->broker_url);
	g_ptr_array_unref(run->output_namespaces);
	g_ptr_array_unref(run->output_resources);
	g_clear_error(&run->error);
	g_mutex_clear(&run->lock);
	g_free(run);
}

void
msg_run_set_log_debug(MsgRun *run, gboolean debug)
{
	run->log_debug = debug;
}

void
msg_run_set_kubeconfig(MsgRun *run, const char *data, size_t length)
{
	g_clear_pointer(&run->kubeconfig, g_bytes_unref);
	run->kubeconfig = g_bytes_new(data, length);
}

void
msg_run_set_file(MsgRun *run, const char *path, gboolean extended)
{
	run->file_output = TRUE;
	g_free(run->file_path);
	run->file_path = g_strdup(path);
	run->file_extended = extended;
}

void
msg_run_set_broker_url(MsgRun *run, const char *url)
{
	g_free(run->broker_url);
	run->broker_url = g_strdup(url);
}

void
msg_run_set_events_to_go(MsgRun *run)
{
	run->events_to_go = TRUE;
}

void
msg_run_add_output_namespace(MsgRun *run, const char *name_space)
{
	g_ptr_array_add(run->output_namespaces, g_strdup(name_space));
}

void
msg_run_add_output_resource(MsgRun *run, const char *resource)
{
	g_ptr_array_add(run->output_resources, g_strdup(resource));
}

static void
msg_run_stopped_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	MsgRun *run = user_data;
	g_autoptr(GError) error = NULL;

	if (!meshsync_service_stop_finish(MESHSYNC_SERVICE(source), result, &error) &&
	    run->error == NULL)
		run->error = g_steal_pointer(&error);
	g_main_loop_quit(run->loop);
}

/* On the run's thread: a stop before the start finished cancels the start; after it, the
 * service is stopped (its flush included) and the loop ends when that is done. */
static gboolean
msg_run_stop_cb(gpointer user_data)
{
	MsgRun *run = user_data;

	if (run->stopping)
		return G_SOURCE_REMOVE;
	run->stopping = TRUE;
	if (!run->started) {
		g_cancellable_cancel(run->cancellable);
		return G_SOURCE_REMOVE;
	}
	meshsync_service_stop_async(run->service, NULL, msg_run_stopped_cb, run);
	return G_SOURCE_REMOVE;
}

static void
msg_run_started_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	MsgRun *run = user_data;
	g_autoptr(GError) error = NULL;

	if (!meshsync_service_start_finish(MESHSYNC_SERVICE(source), result, &error)) {
		/* a start cancelled by a stop is a normal end, as upstream's Run returns nil */
		if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
			run->error = g_steal_pointer(&error);
		meshsync_service_stop_async(run->service, NULL, msg_run_stopped_cb, run);
		return;
	}
	run->started = TRUE;
	if (run->stopping) {
		run->stopping = FALSE;
		msg_run_stop_cb(run);
	}
}

static void
msg_run_ready_cb(GObject *service, GParamSpec *pspec, gpointer user_data)
{
	MsgRun *run = user_data;

	(void)pspec;
	if (meshsync_service_get_ready(MESHSYNC_SERVICE(service)))
		msgReady(run->handle);
}

static gchar **
msg_run_strv(GPtrArray *array)
{
	gchar **strv = g_new0(gchar *, array->len + 1);

	for (guint i = 0; i < array->len; i++)
		strv[i] = g_strdup(g_ptr_array_index(array, i));
	return strv;
}

static MeshSyncService *
msg_run_build(MsgRun *run, GError **error)
{
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MeshSyncService) service = NULL;

	if (run->kubeconfig != NULL) {
		gsize length = 0;
		const gchar *data = g_bytes_get_data(run->kubeconfig, &length);

		config = meshsync_kube_config_new_from_data(data, (gssize)length, NULL, error);
	} else {
		config = meshsync_kube_config_load(NULL, NULL, error);
	}
	if (config == NULL)
		return NULL;
	service = meshsync_service_new(config);
	if (run->file_output)
		meshsync_service_set_output_file(service, run->file_path, run->file_extended);
	if (run->broker_url != NULL) {
		g_autoptr(MeshSyncBroker) broker = meshsync_broker_new(run->broker_url, error);

		if (broker == NULL)
			return NULL;
		meshsync_service_set_broker(service, broker);
	}
	if (run->events_to_go) {
		run->writer = g_object_new(MSG_TYPE_WRITER, NULL);
		run->writer->handle = run->handle;
		meshsync_service_add_writer(service, MESHSYNC_WRITER(run->writer));
		run->bus = g_object_new(MSG_TYPE_BUS, NULL);
		run->bus->handle = run->handle;
		meshsync_service_set_bus(service, MESHSYNC_BUS(run->bus));
	}
	if (run->output_namespaces->len > 0) {
		g_auto(GStrv) names = msg_run_strv(run->output_namespaces);

		meshsync_service_set_output_namespaces(service, (const gchar *const *)names);
	}
	if (run->output_resources->len > 0) {
		g_auto(GStrv) names = msg_run_strv(run->output_resources);

		meshsync_service_set_output_resources(service, (const gchar *const *)names);
	}
	g_signal_connect(service, "notify::ready", G_CALLBACK(msg_run_ready_cb), run);
	return g_steal_pointer(&service);
}

/* Runs on the calling thread until stopped or failed; returns the error's message (to be
 * freed with g_free) or NULL. */
char *
msg_run_execute(MsgRun *run)
{
	g_autoptr(GError) error = NULL;
	char *message = NULL;
	gboolean stop_now;

	g_private_set(&msg_thread_run, run);
	run->context = g_main_context_new();
	g_main_context_push_thread_default(run->context);
	run->service = msg_run_build(run, &error);
	if (run->service != NULL) {
		run->loop = g_main_loop_new(run->context, FALSE);
		run->cancellable = g_cancellable_new();
		meshsync_service_start_async(run->service, run->cancellable, msg_run_started_cb,
		                             run);
		g_mutex_lock(&run->lock);
		run->running = TRUE;
		stop_now = run->stop_requested;
		g_mutex_unlock(&run->lock);
		if (stop_now)
			msg_run_stop_cb(run);
		g_main_loop_run(run->loop);
		g_mutex_lock(&run->lock);
		run->running = FALSE;
		g_mutex_unlock(&run->lock);
		if (run->error != NULL)
			error = g_steal_pointer(&run->error);
	}
	/* a stop or a writable notice queued while the loop ended finds nothing to do */
	run->stopping = TRUE;

	g_clear_object(&run->service);
	g_clear_object(&run->writer);
	g_clear_object(&run->bus);
	g_clear_object(&run->cancellable);
	g_clear_pointer(&run->loop, g_main_loop_unref);
	/* what the objects left behind (idle callbacks of their teardown) runs now, on the
	 * thread they belong to, before the context goes */
	while (g_main_context_iteration(run->context, FALSE))
		;
	g_main_context_pop_thread_default(run->context);
	g_clear_pointer(&run->context, g_main_context_unref);
	g_private_set(&msg_thread_run, NULL);
	if (error != NULL)
		message = g_strdup(error->message);
	return message;
}

/* Any thread. */
void
msg_run_stop(MsgRun *run)
{
	g_mutex_lock(&run->lock);
	run->stop_requested = TRUE;
	if (run->running)
		g_main_context_invoke(run->context, msg_run_stop_cb, run);
	g_mutex_unlock(&run->lock);
}

static gboolean
msg_run_writable_cb(gpointer user_data)
{
	MsgRun *run = user_data;

	if (run->writer != NULL && !run->stopping)
		meshsync_writer_writable_changed(MESHSYNC_WRITER(run->writer));
	return G_SOURCE_REMOVE;
}

/* Any thread: Go's queue drained below its low-water mark. */
void
msg_run_writable_changed(MsgRun *run)
{
	g_mutex_lock(&run->lock);
	if (run->running)
		g_main_context_invoke(run->context, msg_run_writable_cb, run);
	g_mutex_unlock(&run->lock);
}

static gboolean
msg_run_resync_cb(gpointer user_data)
{
	MsgRun *run = user_data;

	if (run->started && !run->stopping)
		meshsync_handler_resync(meshsync_service_get_handler(run->service));
	return G_SOURCE_REMOVE;
}

/* Any thread: a resync-discovery request. */
void
msg_run_resync(MsgRun *run)
{
	g_mutex_lock(&run->lock);
	if (run->running)
		g_main_context_invoke(run->context, msg_run_resync_cb, run);
	g_mutex_unlock(&run->lock);
}

typedef struct {
	MsgRun *run;
	GMutex lock;
	GCond cond;
	gboolean done;
	GPtrArray *store; /* (element-type GBytes) */
} MsgStoreCall;

static gboolean
msg_run_store_cb(gpointer user_data)
{
	MsgStoreCall *call = user_data;
	MsgRun *run = call->run;
	g_autoptr(GPtrArray) store = NULL;
	g_autoptr(GPtrArray) wire = NULL;

	if (run->started && !run->stopping)
		store = meshsync_handler_dup_store(meshsync_service_get_handler(run->service));
	/* The resources stay on this thread; their bytes, immutable and atomically counted,
	 * are what crosses to the caller's. */
	if (store != NULL) {
		wire = g_ptr_array_new_full(store->len, (GDestroyNotify)g_bytes_unref);
		for (guint i = 0; i < store->len; i++)
			g_ptr_array_add(wire, g_bytes_ref(meshsync_resource_get_wire_bytes(
			                              g_ptr_array_index(store, i))));
	}
	g_mutex_lock(&call->lock);
	call->store = g_steal_pointer(&wire);
	call->done = TRUE;
	g_cond_signal(&call->cond);
	g_mutex_unlock(&call->lock);
	return G_SOURCE_REMOVE;
}

/* Any thread but the run's: the wire bytes of every object the run holds (an informer-store
 * request), or NULL when it holds none or is not running. Waits for the run's thread, which
 * answers even while it ends (it dispatches what is pending before its context goes). */
GPtrArray *
msg_run_dup_store(MsgRun *run)
{
	MsgStoreCall call = {.run = run};
	gboolean running;

	g_mutex_init(&call.lock);
	g_cond_init(&call.cond);
	g_mutex_lock(&run->lock);
	running = run->running;
	if (running)
		g_main_context_invoke(run->context, msg_run_store_cb, &call);
	g_mutex_unlock(&run->lock);
	if (running) {
		g_mutex_lock(&call.lock);
		while (!call.done)
			g_cond_wait(&call.cond, &call.lock);
		g_mutex_unlock(&call.lock);
	}
	g_mutex_clear(&call.lock);
	g_cond_clear(&call.cond);
	return call.store;
}

typedef struct {
	MsgRun *run;
	guint id; /* 0: a request */
	gchar *subject;
	GBytes *payload;
} MsgInbound;

static void
msg_inbound_free(gpointer data)
{
	MsgInbound *inbound = data;

	g_free(inbound->subject);
	g_bytes_unref(inbound->payload);
	g_free(inbound);
}

static gboolean
msg_run_inbound_cb(gpointer data)
{
	MsgInbound *inbound = data;
	MsgRun *run = inbound->run;

	if (!run->started || run->stopping || run->bus == NULL)
		return G_SOURCE_REMOVE;
	if (inbound->id == 0)
		meshsync_service_handle_request(run->service, inbound->payload);
	else
		msg_bus_deliver(run->bus, inbound->id, inbound->subject, inbound->payload);
	return G_SOURCE_REMOVE;
}

static void
msg_run_inbound(MsgRun *run, guint id, const char *subject, const char *data, size_t length)
{
	MsgInbound *inbound = g_new0(MsgInbound, 1);

	inbound->run = run;
	inbound->id = id;
	inbound->subject = g_strdup(subject);
	inbound->payload = g_bytes_new(data, length);
	g_mutex_lock(&run->lock);
	if (run->running)
		g_main_context_invoke_full(run->context, G_PRIORITY_DEFAULT, msg_run_inbound_cb,
		                           g_steal_pointer(&inbound), msg_inbound_free);
	g_mutex_unlock(&run->lock);
	if (inbound != NULL)
		msg_inbound_free(inbound);
}

/* Any thread: a request envelope (log-stream, exec-request, active-exec) for the engine. */
void
msg_run_request(MsgRun *run, const char *data, size_t length)
{
	msg_run_inbound(run, 0, NULL, data, length);
}

/* Any thread: a message of the bus subscription @id, as an envelope. */
void
msg_run_bus_deliver(MsgRun *run, unsigned int id, const char *subject, const char *data, size_t length)
{
	msg_run_inbound(run, id, subject, data, length);
}
