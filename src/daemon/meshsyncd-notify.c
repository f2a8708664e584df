/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncNotify"

#include "config.h"

#include <gio/gunixsocketaddress.h>
#include <unistd.h>

#include "meshsyncd-notify.h"

/* How often the status line follows the initial sync: often enough for `systemctl status`,
 * rare enough that a sync of many thousand objects costs the manager nothing. */
#define MESHSYNCD_NOTIFY_PROGRESS_MS 1000

/* A datagram to a manager that does not read is dropped after this long: the daemon must not
 * hang on its status line. */
#define MESHSYNCD_NOTIFY_SEND_TIMEOUT_S 5

/* How long READY=1 of broker mode waits for the server to confirm the daemon's
 * subscriptions; a server that does not answer in time gets READY=1 all the same (the
 * connection is up) and the status line tells the broker's state. */
#define MESHSYNCD_NOTIFY_CONFIRM_MS 5000

struct _MeshsyncdNotify {
	GObject parent_instance;

	GSocket *socket;         /* (owned) (nullable): NULL when nobody listens */
	GSocketAddress *address; /* (owned) (nullable) */
	guint64 watchdog_usec;
	guint watchdog_timer;

	MeshSyncService *service; /* (owned) (nullable) */
	MeshSyncHandler *handler; /* (owned) (nullable): once started */
	GCancellable *confirm;    /* (owned) (nullable): while the subscriptions are confirmed */
	guint progress_timer;
	gchar *status; /* (owned) (nullable): the last status line sent */
	gboolean started;
	gboolean ready_sent;
	gboolean synced_once;
	gboolean stopping;
};

G_DEFINE_FINAL_TYPE(MeshsyncdNotify, meshsyncd_notify, G_TYPE_OBJECT)

static void
meshsyncd_notify_send(MeshsyncdNotify *self, const gchar *message)
{
	g_autoptr(GError) error = NULL;

	if (self->socket == NULL)
		return;
	if (g_socket_send_to(self->socket, self->address, message, strlen(message), NULL, &error) <
	    0)
		g_warning("cannot notify the service manager: %s", error->message);
}

/* One datagram: the manager applies READY=1 and the status line together. */
static void
meshsyncd_notify_send_status(MeshsyncdNotify *self, const gchar *prefix, const gchar *status)
{
	g_autofree gchar *message = NULL;

	if (prefix == NULL && g_strcmp0(status, self->status) == 0)
		return;
	g_free(self->status);
	self->status = g_strdup(status);
	/* the protocol is line-based: a newline in a message would start another assignment */
	g_strdelimit(self->status, "\n", ' ');
	message = g_strdup_printf("%s%sSTATUS=%s", prefix != NULL ? prefix : "",
	                          prefix != NULL ? "\n" : "", self->status);
	meshsyncd_notify_send(self, message);
}

static gboolean
meshsyncd_notify_watchdog_cb(gpointer user_data)
{
	meshsyncd_notify_send(MESHSYNCD_NOTIFY(user_data), "WATCHDOG=1");
	return G_SOURCE_CONTINUE;
}

/* Where the events go, for the status line: "publishing to nats://..., writing x.yaml". */
static gchar *
meshsyncd_notify_describe_outputs(MeshsyncdNotify *self)
{
	MeshSyncBroker *broker = meshsync_service_get_broker(self->service);
	MeshSyncFileWriter *file = meshsync_service_get_file_writer(self->service);
	g_autoptr(GString) text = g_string_new(NULL);

	if (broker != NULL)
		g_string_append_printf(text, "publishing to %s", meshsync_broker_get_url(broker));
	if (file != NULL)
		g_string_append_printf(text, "%swriting %s", text->len > 0 ? ", " : "",
		                       meshsync_file_writer_get_path(file));
	return g_string_free(g_steal_pointer(&text), FALSE);
}

static guint
meshsyncd_notify_count_types(MeshsyncdNotify *self)
{
	g_auto(GStrv) names = meshsync_handler_get_resource_names(self->handler);

	return g_strv_length(names);
}

/* The broker's trouble comes first: while it is away nothing reaches the consumers. */
static gchar *
meshsyncd_notify_describe(MeshsyncdNotify *self)
{
	MeshSyncBroker *broker = meshsync_service_get_broker(self->service);
	MeshSyncBrokerState state = broker != NULL ? meshsync_broker_get_state(broker)
	                                           : MESHSYNC_BROKER_STATE_CONNECTED;
	g_autofree gchar *outputs = NULL;
	guint n_objects;

	if (state == MESHSYNC_BROKER_STATE_CONNECTING || (broker != NULL && !self->started))
		return g_strdup_printf("connecting to the broker at %s",
		                       meshsync_broker_get_url(broker));
	if (self->handler == NULL)
		return g_strdup("starting");
	n_objects = meshsync_handler_get_n_objects(self->handler);
	if (state != MESHSYNC_BROKER_STATE_CONNECTED)
		return g_strdup_printf(
		        "broker connection lost, reconnecting to %s; %u objects held",
		        meshsync_broker_get_url(broker), n_objects);
	if (!meshsync_service_get_ready(self->service)) {
		const gchar *what = self->synced_once ? "resync" : "initial sync";

		/* the numbers of the library's own progress lines */
		g_autofree gchar *listing = meshsync_handler_describe_listing(self->handler);

		if (listing == NULL || *listing == '\0')
			return g_strdup_printf("%s: discovering the API server's resources", what);
		return g_strdup_printf("%s: listing %s; %u objects", what, listing, n_objects);
	}
	outputs = meshsyncd_notify_describe_outputs(self);
	return g_strdup_printf("synced %u types, %u objects; %s",
	                       meshsyncd_notify_count_types(self), n_objects, outputs);
}

static void
meshsyncd_notify_update(MeshsyncdNotify *self)
{
	g_autofree gchar *status = NULL;

	if (self->socket == NULL || self->stopping)
		return;
	status = meshsyncd_notify_describe(self);
	meshsyncd_notify_send_status(self, NULL, status);
}

static gboolean
meshsyncd_notify_progress_cb(gpointer user_data)
{
	meshsyncd_notify_update(MESHSYNCD_NOTIFY(user_data));
	return G_SOURCE_CONTINUE;
}

/* Progress is followed only while a sync runs. */
static void
meshsyncd_notify_follow_progress(MeshsyncdNotify *self, gboolean follow)
{
	if (self->handler == NULL)
		return;
	if (follow && self->progress_timer == 0) {
		self->progress_timer = g_timeout_add(MESHSYNCD_NOTIFY_PROGRESS_MS,
		                                     meshsyncd_notify_progress_cb, self);
	} else if (!follow && self->progress_timer != 0) {
		g_clear_handle_id(&self->progress_timer, g_source_remove);
	}
}

static void
meshsyncd_notify_send_ready(MeshsyncdNotify *self)
{
	g_autofree gchar *status = meshsyncd_notify_describe(self);

	self->ready_sent = TRUE;
	meshsyncd_notify_send_status(self, "READY=1", status);
}

/* Without a broker the consumers read the snapshot: ready means the initial state is in it. */
static void
meshsyncd_notify_ready_cb(MeshSyncService *service, GParamSpec *pspec, MeshsyncdNotify *self)
{
	gboolean ready = meshsync_service_get_ready(service);
	g_autofree gchar *status = NULL;

	if (self->stopping)
		return;
	meshsyncd_notify_follow_progress(self, !ready);
	if (!ready) {
		meshsyncd_notify_update(self);
		return;
	}
	self->synced_once = TRUE;
	if (!self->ready_sent && meshsync_service_get_broker(service) == NULL) {
		meshsyncd_notify_send_ready(self);
		return;
	}
	status = meshsyncd_notify_describe(self);
	meshsyncd_notify_send_status(self, NULL, status);
}

static void
meshsyncd_notify_broker_state_cb(MeshSyncBroker *broker, GParamSpec *pspec, MeshsyncdNotify *self)
{
	meshsyncd_notify_update(self);
}

void
meshsyncd_notify_watch_service(MeshsyncdNotify *self, MeshSyncService *service)
{
	MeshSyncBroker *broker;

	g_return_if_fail(MESHSYNCD_IS_NOTIFY(self));
	g_return_if_fail(MESHSYNC_IS_SERVICE(service));
	g_return_if_fail(self->service == NULL);

	if (self->socket == NULL)
		return;
	self->service = g_object_ref(service);
	g_signal_connect(service, "notify::ready", G_CALLBACK(meshsyncd_notify_ready_cb), self);
	broker = meshsync_service_get_broker(service);
	if (broker != NULL)
		g_signal_connect(broker, "notify::state",
		                 G_CALLBACK(meshsyncd_notify_broker_state_cb), self);
	meshsyncd_notify_update(self);
}

static void
meshsyncd_notify_confirmed_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MeshsyncdNotify) self = user_data;
	g_autoptr(GError) error = NULL;

	if (!meshsync_broker_flush_finish(MESHSYNC_BROKER(source), result, &error)) {
		if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
			return;
		g_message("the broker did not confirm the subscriptions: %s", error->message);
	}
	g_clear_object(&self->confirm);
	if (!self->stopping && !self->ready_sent)
		meshsyncd_notify_send_ready(self);
}

void
meshsyncd_notify_started(MeshsyncdNotify *self)
{
	MeshSyncBroker *broker;
	g_autofree gchar *status = NULL;

	g_return_if_fail(MESHSYNCD_IS_NOTIFY(self));

	if (self->service == NULL || self->started)
		return;
	self->started = TRUE;
	self->handler = g_object_ref(meshsync_service_get_handler(self->service));
	if (meshsync_service_get_ready(self->service))
		self->synced_once = TRUE;
	else
		meshsyncd_notify_follow_progress(self, TRUE);
	/* Broker mode is ready for its consumers once the server holds the request
	 * subscription (a PING answered after it): a request sent from then on is answered,
	 * and events arrive as the informers list. */
	broker = meshsync_service_get_broker(self->service);
	if (broker != NULL) {
		self->confirm = g_cancellable_new();
		meshsync_broker_flush_async(broker, MESHSYNCD_NOTIFY_CONFIRM_MS, self->confirm,
		                            meshsyncd_notify_confirmed_cb, g_object_ref(self));
	} else if (meshsync_service_get_ready(self->service)) {
		meshsyncd_notify_send_ready(self);
		return;
	}
	status = meshsyncd_notify_describe(self);
	meshsyncd_notify_send_status(self, NULL, status);
}

void
meshsyncd_notify_failed(MeshsyncdNotify *self, const gchar *reason)
{
	g_return_if_fail(MESHSYNCD_IS_NOTIFY(self));

	if (self->socket == NULL || self->stopping)
		return;
	meshsyncd_notify_send_status(self, NULL, reason);
}

void
meshsyncd_notify_stopping(MeshsyncdNotify *self)
{
	g_return_if_fail(MESHSYNCD_IS_NOTIFY(self));

	if (self->socket == NULL || self->stopping)
		return;
	g_cancellable_cancel(self->confirm);
	g_clear_object(&self->confirm);
	meshsyncd_notify_follow_progress(self, FALSE);
	meshsyncd_notify_send_status(
	        self, "STOPPING=1",
	        self->service != NULL && meshsync_service_get_broker(self->service) != NULL
	                ? "stopping: writing out what was received and flushing the broker"
	                : "stopping: writing out what was received");
	self->stopping = TRUE;
}

gboolean
meshsyncd_notify_get_enabled(MeshsyncdNotify *self)
{
	g_return_val_if_fail(MESHSYNCD_IS_NOTIFY(self), FALSE);
	return self->socket != NULL;
}

guint64
meshsyncd_notify_get_watchdog_usec(MeshsyncdNotify *self)
{
	g_return_val_if_fail(MESHSYNCD_IS_NOTIFY(self), 0);
	return self->watchdog_usec;
}

/* NOTIFY_SOCKET as the manager spells it: an absolute path, or '@' and an abstract name. */
static GSocketAddress *
meshsyncd_notify_parse_address(const gchar *text)
{
	if (text[0] == '/')
		return g_unix_socket_address_new(text);
	if (text[0] == '@' && text[1] != '\0')
		return g_unix_socket_address_new_with_type(text + 1, -1,
		                                           G_UNIX_SOCKET_ADDRESS_ABSTRACT);
	return NULL;
}

/* WATCHDOG_PID tells which process of the service the interval is for: not ours, no pings. */
static guint64
meshsyncd_notify_parse_watchdog(void)
{
	const gchar *usec = g_getenv("WATCHDOG_USEC");
	const gchar *pid = g_getenv("WATCHDOG_PID");
	guint64 value = 0;
	guint64 owner = 0;

	if (usec == NULL || !g_ascii_string_to_unsigned(usec, 10, 1, G_MAXUINT64, &value, NULL))
		return 0;
	if (pid != NULL && (!g_ascii_string_to_unsigned(pid, 10, 1, G_MAXUINT64, &owner, NULL) ||
	                    owner != (guint64)getpid()))
		return 0;
	return value;
}

static void
meshsyncd_notify_dispose(GObject *object)
{
	MeshsyncdNotify *self = MESHSYNCD_NOTIFY(object);

	g_clear_handle_id(&self->watchdog_timer, g_source_remove);
	g_clear_handle_id(&self->progress_timer, g_source_remove);
	g_clear_object(&self->handler);
	g_clear_object(&self->confirm);
	if (self->service != NULL) {
		MeshSyncBroker *broker = meshsync_service_get_broker(self->service);

		if (broker != NULL)
			g_signal_handlers_disconnect_by_data(broker, self);
		g_signal_handlers_disconnect_by_data(self->service, self);
	}
	g_clear_object(&self->service);
	G_OBJECT_CLASS(meshsyncd_notify_parent_class)->dispose(object);
}

static void
meshsyncd_notify_finalize(GObject *object)
{
	MeshsyncdNotify *self = MESHSYNCD_NOTIFY(object);

	g_clear_object(&self->socket);
	g_clear_object(&self->address);
	g_free(self->status);
	G_OBJECT_CLASS(meshsyncd_notify_parent_class)->finalize(object);
}

static void
meshsyncd_notify_class_init(MeshsyncdNotifyClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->dispose = meshsyncd_notify_dispose;
	object_class->finalize = meshsyncd_notify_finalize;
}

static void
meshsyncd_notify_init(MeshsyncdNotify *self)
{
}

MeshsyncdNotify *
meshsyncd_notify_new(void)
{
	g_autoptr(MeshsyncdNotify) self = g_object_new(MESHSYNCD_TYPE_NOTIFY, NULL);
	g_autoptr(GError) error = NULL;
	const gchar *text = g_getenv("NOTIFY_SOCKET");

	if (text == NULL || *text == '\0')
		return g_steal_pointer(&self);
	self->address = meshsyncd_notify_parse_address(text);
	if (self->address == NULL) {
		g_warning("NOTIFY_SOCKET=%s is not an AF_UNIX address: not notifying the service "
		          "manager",
		          text);
		return g_steal_pointer(&self);
	}
	self->socket = g_socket_new(G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_DATAGRAM,
	                            G_SOCKET_PROTOCOL_DEFAULT, &error);
	if (self->socket == NULL) {
		g_warning("cannot notify the service manager at %s: %s", text, error->message);
		g_clear_object(&self->address);
		return g_steal_pointer(&self);
	}
	g_socket_set_timeout(self->socket, MESHSYNCD_NOTIFY_SEND_TIMEOUT_S);
	self->watchdog_usec = meshsyncd_notify_parse_watchdog();
	if (self->watchdog_usec > 0) {
		guint interval_ms = (guint)MAX(MIN(self->watchdog_usec / 2000, G_MAXUINT), 1);

		g_debug("watchdog: pinging every %u ms", interval_ms);
		self->watchdog_timer =
		        g_timeout_add(interval_ms, meshsyncd_notify_watchdog_cb, self);
	}
	return g_steal_pointer(&self);
}
