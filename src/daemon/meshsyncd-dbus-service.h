/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <libmeshsync/meshsync.h>

G_BEGIN_DECLS

#define MESHSYNCD_DBUS_SERVICE_NAME "io.meshery.MeshSync1"
#define MESHSYNCD_DBUS_SERVICE_PATH "/io/meshery/MeshSync1"

#define MESHSYNCD_TYPE_DBUS_SERVICE (meshsyncd_dbus_service_get_type())
G_DECLARE_FINAL_TYPE(MeshsyncdDBusService, meshsyncd_dbus_service, MESHSYNCD, DBUS_SERVICE, GObject)

/*
 * Publishes @handler on @bus_type as io.meshery.MeshSync1 once started. @server is the API
 * server URL shown as the Server property. Signals and callbacks come in the thread-default
 * main context of the caller of meshsyncd_dbus_service_start().
 */
MeshsyncdDBusService *
meshsyncd_dbus_service_new(MeshSyncHandler *handler, const gchar *server, GBusType bus_type);

/* Exports the object and asks for the name. "name-lost" is emitted when the bus cannot be
 * reached, the name is taken, or it is lost later; the service stays idle afterwards. */
void meshsyncd_dbus_service_start(MeshsyncdDBusService *self);

/* Publishes @service's log and exec sessions as the Sessions property. */
void meshsyncd_dbus_service_set_service(MeshsyncdDBusService *self, MeshSyncService *service);

gboolean meshsyncd_dbus_service_get_name_owned(MeshsyncdDBusService *self);

/* The --dbus values: "session", "system"; FALSE with @error for anything else. */
gboolean meshsyncd_dbus_service_parse_bus(const gchar *text, GBusType *bus_type, GError **error);

G_END_DECLS
