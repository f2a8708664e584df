/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#if !defined(__MESHSYNC_H_INSIDE__) && !defined(MESHSYNC_COMPILATION)
#error "Only <libmeshsync/meshsync.h> can be included directly."
#endif

#include <gio/gio.h>

#include "meshsync-kube-config.h"
#include "meshsync-version.h"

G_BEGIN_DECLS

/**
 * MeshSyncSessionKind:
 * @MESHSYNC_SESSION_KIND_LOG: a container's log stream
 * @MESHSYNC_SESSION_KIND_EXEC: a command run in a container, with its input and output
 *
 * What a [class@MeshSync.Session] relays.
 */
typedef enum /*< underscore_name=meshsync_session_kind >*/ {
	MESHSYNC_SESSION_KIND_LOG,
	MESHSYNC_SESSION_KIND_EXEC,
} MeshSyncSessionKind;

/**
 * MeshSyncSessionState:
 * @MESHSYNC_SESSION_STATE_NEW: not started
 * @MESHSYNC_SESSION_STATE_STARTING: waiting for the API server
 * @MESHSYNC_SESSION_STATE_RUNNING: the stream is open
 * @MESHSYNC_SESSION_STATE_CLOSED: ended; everything is released
 *
 * The life of a [class@MeshSync.Session]; it only ever moves forward.
 */
typedef enum /*< underscore_name=meshsync_session_state >*/ {
	MESHSYNC_SESSION_STATE_NEW,
	MESHSYNC_SESSION_STATE_STARTING,
	MESHSYNC_SESSION_STATE_RUNNING,
	MESHSYNC_SESSION_STATE_CLOSED,
} MeshSyncSessionState;

#define MESHSYNC_TYPE_SESSION (meshsync_session_get_type())
MESHSYNC_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE(MeshSyncSession, meshsync_session, MESHSYNC, SESSION, GObject)

/**
 * MeshSyncSessionClass:
 * @parent_class: the parent class
 * @output: the class handler of [signal@MeshSync.Session::output]
 * @error: the class handler of [signal@MeshSync.Session::error]
 * @closed: the class handler of [signal@MeshSync.Session::closed]
 *
 * The class of sessions; subclasses may handle the signals in their class.
 */
struct _MeshSyncSessionClass {
	GObjectClass parent_class;

	void (*output)(MeshSyncSession *self, GBytes *data);
	void (*error)(MeshSyncSession *self, const GError *error);
	void (*closed)(MeshSyncSession *self);

	/*< private >*/
	gpointer padding[12];
};

MESHSYNC_AVAILABLE_IN_ALL
MeshSyncSession *meshsync_session_new_log(MeshSyncKubeConfig *config,
                                          const gchar *namespace_,
                                          const gchar *pod,
                                          const gchar *container);
MESHSYNC_AVAILABLE_IN_ALL
MeshSyncSession *meshsync_session_new_exec(MeshSyncKubeConfig *config,
                                           const gchar *namespace_,
                                           const gchar *pod,
                                           const gchar *container,
                                           const gchar *const *command);

MESHSYNC_AVAILABLE_IN_ALL
void meshsync_session_set_follow(MeshSyncSession *self, gboolean follow);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_session_set_previous(MeshSyncSession *self, gboolean previous);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_session_set_timestamps(MeshSyncSession *self, gboolean timestamps);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_session_set_tail_lines(MeshSyncSession *self, gint64 tail_lines);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_session_set_tty(MeshSyncSession *self, gboolean tty);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_session_set_chunk_size(MeshSyncSession *self, guint bytes);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_session_set_idle_timeout(MeshSyncSession *self, guint seconds);

MESHSYNC_AVAILABLE_IN_ALL
void meshsync_session_start(MeshSyncSession *self);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_session_stop(MeshSyncSession *self);
MESHSYNC_AVAILABLE_IN_ALL
gboolean
meshsync_session_write(MeshSyncSession *self, const guint8 *data, gsize length, GError **error);
MESHSYNC_AVAILABLE_IN_ALL
gboolean meshsync_session_close_input(MeshSyncSession *self, GError **error);

MESHSYNC_AVAILABLE_IN_ALL
MeshSyncSessionKind meshsync_session_get_kind(MeshSyncSession *self);
MESHSYNC_AVAILABLE_IN_ALL
MeshSyncSessionState meshsync_session_get_state(MeshSyncSession *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_session_get_id(MeshSyncSession *self);
MESHSYNC_AVAILABLE_IN_ALL
void meshsync_session_set_id(MeshSyncSession *self, const gchar *id);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_session_get_namespace(MeshSyncSession *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_session_get_pod(MeshSyncSession *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_session_get_container(MeshSyncSession *self);
MESHSYNC_AVAILABLE_IN_ALL
gint meshsync_session_get_exit_code(MeshSyncSession *self);
MESHSYNC_AVAILABLE_IN_ALL
const gchar *meshsync_session_get_protocol(MeshSyncSession *self);

G_END_DECLS
