/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/* The bus side logs as its own subsystem: G_MESSAGES_DEBUG=MeshSyncDBus selects it. */
#define G_LOG_DOMAIN "MeshSyncDBus"

#include "config.h"

#include <glib/gi18n.h>

#include "msd-dbus-generated.h"
#include "meshsyncd-dbus-service.h"

/* Objects changes with every event; besides the event-driven refresh, this catches objects
 * the output filters hide (no resource-event) without waking an idle daemon often. */
#define MESHSYNCD_DBUS_SERVICE_REFRESH_S 5

struct _MeshsyncdDBusService {
	GObject parent_instance;

	MeshSyncHandler *handler;  /* (owned) */
	MeshSyncService *service;  /* (owned) (nullable): its sessions */
	MsdDBusManager *skeleton;  /* (owned): composition, the generated type stays private */
	MeshSyncDiscovery *table;  /* (owned) (nullable): the last completed discovery */
	GDBusConnection *exported; /* (owned) (nullable): where the skeleton is exported */
	gchar *server;             /* (owned) */
	GBusType bus_type;
	guint owner_id;
	guint refresh_idle;
	guint refresh_timer;
	gboolean name_owned;
	gboolean lost;
};

enum {
	SIGNAL_NAME_LOST,
	N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE(MeshsyncdDBusService, meshsyncd_dbus_service, G_TYPE_OBJECT)

static const gchar *
meshsyncd_dbus_service_bus_text(GBusType bus_type)
{
	return bus_type == G_BUS_TYPE_SYSTEM ? "system" : "session";
}

static gint
meshsyncd_dbus_service_session_compare(gconstpointer a, gconstpointer b)
{
	MeshSyncSession *left = *(MeshSyncSession *const *)a;
	MeshSyncSession *right = *(MeshSyncSession *const *)b;

	return g_strcmp0(meshsync_session_get_id(left), meshsync_session_get_id(right));
}

static void
meshsyncd_dbus_service_refresh_sessions(MeshsyncdDBusService *self)
{
	g_autoptr(GPtrArray) sessions = NULL;
	g_auto(GVariantBuilder) builder = G_VARIANT_BUILDER_INIT(G_VARIANT_TYPE("a(sssss)"));

	if (self->service != NULL) {
		sessions = meshsync_service_dup_sessions(self->service);
		g_ptr_array_sort(sessions, meshsyncd_dbus_service_session_compare);
		for (guint i = 0; i < sessions->len; i++) {
			MeshSyncSession *session = g_ptr_array_index(sessions, i);

			g_variant_builder_add(&builder, "(sssss)", meshsync_session_get_id(session),
			                      meshsync_session_get_kind(session) ==
			                                      MESHSYNC_SESSION_KIND_LOG
			                              ? "log"
			                              : "exec",
			                      meshsync_session_get_namespace(session),
			                      meshsync_session_get_pod(session),
			                      meshsync_session_get_container(session));
		}
	}
	msd_dbus_manager_set_sessions(self->skeleton, g_variant_builder_end(&builder));
}

/* Copies the handler's state to the skeleton; the skeleton only announces values that
 * differ, and batches them into one PropertiesChanged per main-loop iteration. */
static void
meshsyncd_dbus_service_refresh(MeshsyncdDBusService *self)
{
	MeshSyncDiscovery *discovery = meshsync_handler_get_discovery(self->handler);
	const gchar *cluster_id = meshsync_handler_get_cluster_id(self->handler);

	/* A resync drops the handler's discovery: keep answering with the last complete one. */
	if (discovery != NULL && meshsync_discovery_get_server_version(discovery) != NULL)
		g_set_object(&self->table, discovery);
	msd_dbus_manager_set_server_version(
	        self->skeleton,
	        self->table != NULL ? meshsync_discovery_get_server_version(self->table) : "");
	msd_dbus_manager_set_cluster_id(self->skeleton, cluster_id != NULL ? cluster_id : "");
	msd_dbus_manager_set_objects(self->skeleton, meshsync_handler_get_n_objects(self->handler));
	msd_dbus_manager_set_ready(self->skeleton, meshsync_handler_get_ready(self->handler));
}

static gboolean
meshsyncd_dbus_service_refresh_idle_cb(gpointer user_data)
{
	MeshsyncdDBusService *self = user_data;

	self->refresh_idle = 0;
	meshsyncd_dbus_service_refresh(self);
	return G_SOURCE_REMOVE;
}

static gboolean
meshsyncd_dbus_service_refresh_timer_cb(gpointer user_data)
{
	meshsyncd_dbus_service_refresh(user_data);
	return G_SOURCE_CONTINUE;
}

/* Events come in bursts of thousands during a list: count once after the burst. */
static void
meshsyncd_dbus_service_resource_event_cb(MeshSyncHandler *handler,
                                         MeshSyncResource *resource,
                                         MeshSyncEventType event_type,
                                         MeshsyncdDBusService *self)
{
	if (self->refresh_idle != 0)
		return;
	self->refresh_idle =
	        g_idle_add_full(G_PRIORITY_LOW, meshsyncd_dbus_service_refresh_idle_cb, self, NULL);
	g_source_set_static_name(g_main_context_find_source_by_id(NULL, self->refresh_idle),
	                         "[meshsync] D-Bus properties");
}

static void
meshsyncd_dbus_service_state_cb(MeshsyncdDBusService *self)
{
	meshsyncd_dbus_service_refresh(self);
}

static gboolean
meshsyncd_dbus_service_handle_list_resources(MsdDBusManager *skeleton,
                                             GDBusMethodInvocation *invocation,
                                             MeshsyncdDBusService *self)
{
	GVariantBuilder builder;
	GPtrArray *resources;

	meshsyncd_dbus_service_refresh(self);
	if (self->table == NULL) {
		g_dbus_method_invocation_return_error_literal(
		        invocation, MESHSYNC_ERROR, MESHSYNC_ERROR_NOT_FOUND,
		        _("No resource table yet: discovery of the API server has not completed"));
		return G_DBUS_METHOD_INVOCATION_HANDLED;
	}
	resources = meshsync_discovery_get_resources(self->table);
	g_variant_builder_init(&builder, G_VARIANT_TYPE("a(ssssbb)"));
	for (guint i = 0; i < resources->len; i++) {
		MeshSyncApiResource *resource = g_ptr_array_index(resources, i);

		g_variant_builder_add(&builder, "(ssssbb)",
		                      meshsync_api_resource_get_group(resource),
		                      meshsync_api_resource_get_version(resource),
		                      meshsync_api_resource_get_kind(resource),
		                      meshsync_api_resource_get_plural(resource),
		                      meshsync_api_resource_get_namespaced(resource),
		                      meshsync_api_resource_get_watchable(resource));
	}
	msd_dbus_manager_complete_list_resources(skeleton, invocation,
	                                         g_variant_builder_end(&builder));
	return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
meshsyncd_dbus_service_handle_resync(MsdDBusManager *skeleton,
                                     GDBusMethodInvocation *invocation,
                                     MeshsyncdDBusService *self)
{
	/* Who asked is worth a line: a resync relists the whole cluster. */
	g_message("resync requested over D-Bus by %s",
	          g_dbus_method_invocation_get_sender(invocation));
	meshsync_handler_resync(self->handler);
	msd_dbus_manager_complete_resync(skeleton, invocation);
	return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static void
meshsyncd_dbus_service_lose(MeshsyncdDBusService *self, const gchar *reason)
{
	if (self->lost)
		return;
	self->lost = TRUE;
	self->name_owned = FALSE;
	g_signal_emit(self, signals[SIGNAL_NAME_LOST], 0, reason);
}

static void
meshsyncd_dbus_service_bus_acquired_cb(GDBusConnection *connection,
                                       const gchar *name,
                                       gpointer user_data)
{
	MeshsyncdDBusService *self = user_data;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *reason = NULL;

	/* Exported before the name is requested, so a client that sees the name finds the
	 * object. */
	if (!g_dbus_interface_skeleton_export(G_DBUS_INTERFACE_SKELETON(self->skeleton), connection,
	                                      MESHSYNCD_DBUS_SERVICE_PATH, &error)) {
		reason = g_strdup_printf(
		        "cannot export %s on the %s bus: %s", MESHSYNCD_DBUS_SERVICE_PATH,
		        meshsyncd_dbus_service_bus_text(self->bus_type), error->message);
		meshsyncd_dbus_service_lose(self, reason);
		return;
	}
	g_set_object(&self->exported, connection);
}

static void
meshsyncd_dbus_service_name_acquired_cb(GDBusConnection *connection,
                                        const gchar *name,
                                        gpointer user_data)
{
	MeshsyncdDBusService *self = user_data;

	self->name_owned = TRUE;
	g_message("meshsync: D-Bus name %s owned on the %s bus", name,
	          meshsyncd_dbus_service_bus_text(self->bus_type));
}

static void
meshsyncd_dbus_service_name_lost_cb(GDBusConnection *connection,
                                    const gchar *name,
                                    gpointer user_data)
{
	MeshsyncdDBusService *self = user_data;
	g_autofree gchar *reason = NULL;

	if (connection == NULL)
		reason = g_strdup_printf("cannot connect to the D-Bus %s bus",
		                         meshsyncd_dbus_service_bus_text(self->bus_type));
	else if (self->name_owned)
		reason = g_strdup_printf("lost the D-Bus name %s on the %s bus", name,
		                         meshsyncd_dbus_service_bus_text(self->bus_type));
	else
		reason = g_strdup_printf("cannot own the D-Bus name %s on the %s bus: another "
		                         "process has it, or the bus policy does not allow it",
		                         name, meshsyncd_dbus_service_bus_text(self->bus_type));
	meshsyncd_dbus_service_lose(self, reason);
}

static void
meshsyncd_dbus_service_dispose(GObject *object)
{
	MeshsyncdDBusService *self = MESHSYNCD_DBUS_SERVICE(object);

	g_clear_handle_id(&self->owner_id, g_bus_unown_name);
	if (self->service != NULL)
		g_signal_handlers_disconnect_by_data(self->service, self);
	g_clear_object(&self->service);
	g_clear_handle_id(&self->refresh_idle, g_source_remove);
	g_clear_handle_id(&self->refresh_timer, g_source_remove);
	if (self->exported != NULL)
		g_dbus_interface_skeleton_unexport_from_connection(
		        G_DBUS_INTERFACE_SKELETON(self->skeleton), self->exported);
	g_clear_object(&self->exported);
	if (self->handler != NULL)
		g_signal_handlers_disconnect_by_data(self->handler, self);
	if (self->skeleton != NULL)
		g_signal_handlers_disconnect_by_data(self->skeleton, self);
	g_clear_object(&self->handler);
	g_clear_object(&self->skeleton);
	g_clear_object(&self->table);
	G_OBJECT_CLASS(meshsyncd_dbus_service_parent_class)->dispose(object);
}

static void
meshsyncd_dbus_service_finalize(GObject *object)
{
	MeshsyncdDBusService *self = MESHSYNCD_DBUS_SERVICE(object);

	g_free(self->server);
	G_OBJECT_CLASS(meshsyncd_dbus_service_parent_class)->finalize(object);
}

static void
meshsyncd_dbus_service_class_init(MeshsyncdDBusServiceClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->dispose = meshsyncd_dbus_service_dispose;
	object_class->finalize = meshsyncd_dbus_service_finalize;

	/* ::name-lost (reason: utf8): the service cannot go on; it stays idle afterwards. */
	signals[SIGNAL_NAME_LOST] =
	        g_signal_new("name-lost", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
	                     NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void
meshsyncd_dbus_service_init(MeshsyncdDBusService *self)
{
	self->skeleton = msd_dbus_manager_skeleton_new();
}

MeshsyncdDBusService *
meshsyncd_dbus_service_new(MeshSyncHandler *handler, const gchar *server, GBusType bus_type)
{
	MeshsyncdDBusService *self;

	g_return_val_if_fail(MESHSYNC_IS_HANDLER(handler), NULL);
	g_return_val_if_fail(bus_type == G_BUS_TYPE_SESSION || bus_type == G_BUS_TYPE_SYSTEM, NULL);

	self = g_object_new(MESHSYNCD_TYPE_DBUS_SERVICE, NULL);
	self->handler = g_object_ref(handler);
	self->server = g_strdup(server != NULL ? server : "");
	self->bus_type = bus_type;
	msd_dbus_manager_set_version(self->skeleton, meshsync_get_version());
	msd_dbus_manager_set_server(self->skeleton, self->server);
	meshsyncd_dbus_service_refresh(self);
	meshsyncd_dbus_service_refresh_sessions(self);

	g_signal_connect_swapped(handler, "ready-changed",
	                         G_CALLBACK(meshsyncd_dbus_service_state_cb), self);
	g_signal_connect_swapped(handler, "notify::cluster-id",
	                         G_CALLBACK(meshsyncd_dbus_service_state_cb), self);
	/* A run builds its pipeline right after its discovery: the server version and the
	 * resource table are new then. */
	g_signal_connect_swapped(handler, "pipeline-created",
	                         G_CALLBACK(meshsyncd_dbus_service_state_cb), self);
	g_signal_connect(handler, "resource-event",
	                 G_CALLBACK(meshsyncd_dbus_service_resource_event_cb), self);
	g_signal_connect(self->skeleton, "handle-list-resources",
	                 G_CALLBACK(meshsyncd_dbus_service_handle_list_resources), self);
	g_signal_connect(self->skeleton, "handle-resync",
	                 G_CALLBACK(meshsyncd_dbus_service_handle_resync), self);
	return self;
}

void
meshsyncd_dbus_service_start(MeshsyncdDBusService *self)
{
	g_return_if_fail(MESHSYNCD_IS_DBUS_SERVICE(self));
	g_return_if_fail(self->owner_id == 0 && !self->lost);

	self->refresh_timer = g_timeout_add_seconds(MESHSYNCD_DBUS_SERVICE_REFRESH_S,
	                                            meshsyncd_dbus_service_refresh_timer_cb, self);
	/* No replacement: a second daemon must fail clearly, not take over a running one. */
	self->owner_id = g_bus_own_name(
	        self->bus_type, MESHSYNCD_DBUS_SERVICE_NAME, G_BUS_NAME_OWNER_FLAGS_DO_NOT_QUEUE,
	        meshsyncd_dbus_service_bus_acquired_cb, meshsyncd_dbus_service_name_acquired_cb,
	        meshsyncd_dbus_service_name_lost_cb, self, NULL);
}

gboolean
meshsyncd_dbus_service_get_name_owned(MeshsyncdDBusService *self)
{
	g_return_val_if_fail(MESHSYNCD_IS_DBUS_SERVICE(self), FALSE);
	return self->name_owned;
}

gboolean
meshsyncd_dbus_service_parse_bus(const gchar *text, GBusType *bus_type, GError **error)
{
	if (g_strcmp0(text, "session") == 0) {
		*bus_type = G_BUS_TYPE_SESSION;
		return TRUE;
	}
	if (g_strcmp0(text, "system") == 0) {
		*bus_type = G_BUS_TYPE_SYSTEM;
		return TRUE;
	}
	g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
	            _("--dbus must be session or system, not \"%s\""), text);
	return FALSE;
}

void
meshsyncd_dbus_service_set_service(MeshsyncdDBusService *self, MeshSyncService *service)
{
	g_return_if_fail(MESHSYNCD_IS_DBUS_SERVICE(self));
	g_return_if_fail(MESHSYNC_IS_SERVICE(service));

	if (self->service != NULL)
		g_signal_handlers_disconnect_by_data(self->service, self);
	g_set_object(&self->service, service);
	g_signal_connect_swapped(service, "sessions-changed",
	                         G_CALLBACK(meshsyncd_dbus_service_refresh_sessions), self);
	meshsyncd_dbus_service_refresh_sessions(self);
}
