/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <libmeshsync/meshsync.h>

G_BEGIN_DECLS

#define MESHSYNCD_TYPE_NOTIFY (meshsyncd_notify_get_type())
G_DECLARE_FINAL_TYPE(MeshsyncdNotify, meshsyncd_notify, MESHSYNCD, NOTIFY, GObject)

/*
 * The service manager's notification protocol (sd_notify(3)): READY=1, STATUS=, STOPPING=1
 * and WATCHDOG=1 datagrams to the AF_UNIX socket named by NOTIFY_SOCKET (a path, or an
 * abstract address spelt with a leading '@'). Without NOTIFY_SOCKET every call does nothing,
 * so the daemon runs the same by hand, under Type=notify and in a container.
 *
 * WATCHDOG_USEC (for this process when WATCHDOG_PID names it or is unset) starts pings at
 * half that interval from the thread-default main context: a loop that stops turning stops
 * the pings, and the service manager restarts the daemon.
 */
MeshsyncdNotify *meshsyncd_notify_new(void);

/* Whether the service manager listens: NOTIFY_SOCKET was set and usable. */
gboolean meshsyncd_notify_get_enabled(MeshsyncdNotify *self);

/* The watchdog interval asked for, in microseconds; 0 when there is none. */
guint64 meshsyncd_notify_get_watchdog_usec(MeshsyncdNotify *self);

/*
 * Follows @service from before its start: STATUS= lines for the broker connection and the
 * initial sync's progress, and READY=1 once the service is up for its consumers: connected
 * to the broker in broker mode (after meshsyncd_notify_started()), otherwise once the
 * initial sync is complete.
 */
void meshsyncd_notify_watch_service(MeshsyncdNotify *self, MeshSyncService *service);

/* The start of the watched service completed (the broker, if any, is connected). */
void meshsyncd_notify_started(MeshsyncdNotify *self);

/* The daemon cannot go on: @reason becomes the status line. */
void meshsyncd_notify_failed(MeshsyncdNotify *self, const gchar *reason);

/* STOPPING=1 with a status line: the daemon is shutting down. */
void meshsyncd_notify_stopping(MeshsyncdNotify *self);

G_END_DECLS
