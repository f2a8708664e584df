/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * One file for both kinds: they share the life cycle, the teardown and the output chunking,
 * and differ only in how the stream is opened and read (about 150 lines each).
 */

#define G_LOG_DOMAIN "MeshSyncSession"

#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>
#include <libsoup/soup.h>

#include "engine/msd-engine-context.h"
#include "kube/msd-exec-status.h"
#include "kube/msd-kube-client.h"
#include "meshsync-enum-types.h"
#include "meshsync-error.h"
#include "meshsync-session-private.h"
#include "meshsync-session.h"
#include "util/msd-json-object.h"
#include "util/msd-utf8-chunk.h"
#include "util/msd-i18n.h"

/**
 * MeshSyncSession:
 *
 * A live stream from a container: its log ([ctor@MeshSync.Session.new_log]) or a command
 * run in it with input and output ([ctor@MeshSync.Session.new_exec]).
 *
 * Logs are read from `GET .../pods/{name}/log`; exec uses the WebSocket protocol
 * `v5.channel.k8s.io` (`v4.channel.k8s.io` when the server offers no v5), as kubectl does
 * since 1.30. Output arrives with [signal@MeshSync.Session::output] in chunks of at most
 * [method@MeshSync.Session.set_chunk_size] bytes that never cut a UTF-8 character.
 *
 * A session ends once: when the stream ends, on an error (reported first with
 * [signal@MeshSync.Session::error]), after [method@MeshSync.Session.stop] or an idle
 * timeout; [signal@MeshSync.Session::closed] is emitted then, and the HTTP or WebSocket
 * stream, the timers and the buffers are released.
 *
 * From Python:
 *
 * ```python
 * session = MeshSync.Session.new_exec(config, "default", "web-0", "app", ["/bin/sh"])
 * session.connect("output", lambda s, data: print(data.get_data().decode(), end=""))
 * session.connect("closed", lambda s: loop.quit())
 * session.start()
 * session.write(b"echo hi\n")
 * ```
 *
 * Everything runs in the thread-default main context of the thread that starts it.
 */

#define MESHSYNC_SESSION_LOG_CHUNK  2000
#define MESHSYNC_SESSION_EXEC_CHUNK 1024
/* The Status on the error channel is small; anything longer is not one. */
#define MESHSYNC_SESSION_MAX_STATUS (64 * 1024)
/* Input written before the WebSocket is open waits, up to this much. */
#define MESHSYNC_SESSION_MAX_EARLY_INPUT (1024 * 1024)
/* libsoup answers pings by itself; ours keep NAT and proxies from dropping a quiet shell. */
#define MESHSYNC_SESSION_KEEPALIVE_SECONDS 30

#define MESHSYNC_EXEC_V5 "v5.channel.k8s.io"
#define MESHSYNC_EXEC_V4 "v4.channel.k8s.io"

enum {
	MESHSYNC_CHANNEL_STDIN = 0,
	MESHSYNC_CHANNEL_STDOUT = 1,
	MESHSYNC_CHANNEL_STDERR = 2,
	MESHSYNC_CHANNEL_ERROR = 3,
	MESHSYNC_CHANNEL_CLOSE = 255,
};

typedef struct {
	MeshSyncKubeConfig *config; /* (owned) */
	MsdKubeClient *client;      /* (owned) (nullable): made at start when none was given */
	MeshSyncSessionKind kind;
	gchar *id;
	gchar *namespace_;
	gchar *pod;
	gchar *container;
	GStrv command;
	gboolean follow;
	gboolean previous;
	gboolean timestamps;
	gboolean tty;
	gint64 tail_lines; /* -1: not sent */
	guint chunk_size;
	guint idle_timeout; /* seconds, 0: none */
	guint open_timeout; /* ms the pod lookup and the stream's opening may take together */

	MeshSyncSessionState state;
	gint exit_code;
	MsdEngineContext *engine;  /* (owned): where its timers run */
	GCancellable *cancellable; /* (owned) */
	MsdUtf8Chunker chunker;
	gint64 last_activity;
	GSource *idle_source; /* (owned) (nullable) */
	GSource *open_source; /* (owned) (nullable): the opening's deadline, while STARTING */

	/* log */
	GInputStream *log_stream; /* (owned) (nullable) */
	guint8 *read_buffer;

	/* exec */
	SoupWebsocketConnection *ws; /* (owned) (nullable) */
	gchar *protocol;
	gboolean offered_v4_only;
	GByteArray *status;      /* (owned): what the error channel carried */
	GByteArray *early_input; /* (owned) (nullable) */
	gboolean early_close_input;
	GError *ws_error; /* (owned) (nullable): the first error the connection reported */
} MeshSyncSessionPrivate;

G_DEFINE_TYPE_WITH_PRIVATE(MeshSyncSession, meshsync_session, G_TYPE_OBJECT)

#define GET_PRIVATE(o) ((MeshSyncSessionPrivate *)meshsync_session_get_instance_private(o))

enum {
	PROP_0,
	PROP_KUBE_CONFIG,
	PROP_KIND,
	PROP_ID,
	PROP_NAMESPACE,
	PROP_POD,
	PROP_CONTAINER,
	PROP_COMMAND,
	PROP_STATE,
	PROP_EXIT_CODE,
	N_PROPS,
};

static GParamSpec *props[N_PROPS];

enum {
	SIGNAL_OUTPUT,
	SIGNAL_ERROR,
	SIGNAL_CLOSED,
	N_SIGNALS,
};

static guint signals[N_SIGNALS];

static void
meshsync_session_set_state(MeshSyncSession *self, MeshSyncSessionState state)
{
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);

	if (priv->state == state)
		return;
	priv->state = state;
	if (state != MESHSYNC_SESSION_STATE_STARTING)
		msd_source_clear(&priv->open_source);
	g_object_notify_by_pspec(G_OBJECT(self), props[PROP_STATE]);
}

static void
meshsync_session_emit_chunks(MeshSyncSession *self, gboolean final)
{
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);
	GBytes *chunk;

	while ((chunk = msd_utf8_chunker_pop(&priv->chunker, final)) != NULL) {
		g_signal_emit(self, signals[SIGNAL_OUTPUT], 0, chunk);
		g_bytes_unref(chunk);
		/* a handler may have stopped the session */
		if (priv->state == MESHSYNC_SESSION_STATE_CLOSED)
			return;
	}
}

static gboolean
meshsync_session_unref_idle_cb(gpointer data)
{
	g_object_unref(data);
	return G_SOURCE_REMOVE;
}

static void
meshsync_session_release_ws(MeshSyncSession *self)
{
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);

	if (priv->ws == NULL)
		return;
	g_signal_handlers_disconnect_by_data(priv->ws, self);
	if (soup_websocket_connection_get_state(priv->ws) == SOUP_WEBSOCKET_STATE_OPEN)
		soup_websocket_connection_close(priv->ws, SOUP_WEBSOCKET_CLOSE_NORMAL, NULL);
	/* the session may end from inside one of the connection's own signals: let go of it
	 * once that emission is over */
	g_source_unref(msd_engine_context_add_idle(
	        priv->engine, G_PRIORITY_DEFAULT_IDLE, "[meshsync] release session connection",
	        meshsync_session_unref_idle_cb, g_steal_pointer(&priv->ws), NULL));
}

/* The one way a session ends: releases everything, then says so. Runs once. */
static void
meshsync_session_finish(MeshSyncSession *self, const GError *error)
{
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);
	g_autoptr(MeshSyncSession) keep = NULL;

	if (priv->state == MESHSYNC_SESSION_STATE_CLOSED)
		return;
	keep = g_object_ref(self);
	/* output already read is still handed out, whole characters first */
	if (priv->state == MESHSYNC_SESSION_STATE_RUNNING)
		meshsync_session_emit_chunks(self, TRUE);
	if (priv->state == MESHSYNC_SESSION_STATE_CLOSED)
		return;
	meshsync_session_set_state(self, MESHSYNC_SESSION_STATE_CLOSED);
	g_cancellable_cancel(priv->cancellable);
	msd_source_clear(&priv->idle_source);
	msd_source_clear(&priv->open_source);
	meshsync_session_release_ws(self);
	g_clear_object(&priv->log_stream);
	g_clear_pointer(&priv->read_buffer, g_free);
	g_clear_pointer(&priv->early_input, g_byte_array_unref);
	g_byte_array_set_size(priv->status, 0);
	g_byte_array_set_size(priv->chunker.pending, 0);
	g_clear_error(&priv->ws_error);
	/* the client's connections go with it, unless it is shared */
	g_clear_object(&priv->client);
	if (error != NULL) {
		g_debug("session %s: %s", priv->id != NULL ? priv->id : "", error->message);
		g_signal_emit(self, signals[SIGNAL_ERROR], 0, error);
	}
	g_signal_emit(self, signals[SIGNAL_CLOSED], 0);
}

static void
meshsync_session_finish_literal(MeshSyncSession *self, gint code, const gchar *message)
{
	g_autoptr(GError) error = g_error_new_literal(MESHSYNC_ERROR, code, message);

	meshsync_session_finish(self, error);
}

static gboolean
meshsync_session_idle_cb(gpointer data)
{
	MeshSyncSession *self = data;
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);
	gint64 idle_ms = (g_get_monotonic_time() - priv->last_activity) / 1000;
	gint64 limit_ms = (gint64)priv->idle_timeout * 1000;
	g_autofree gchar *message = NULL;

	msd_source_clear(&priv->idle_source);
	if (idle_ms < limit_ms) {
		priv->idle_source = msd_engine_context_add_timeout(
		        priv->engine, G_PRIORITY_DEFAULT, (guint)(limit_ms - idle_ms),
		        "[meshsync] session idle timeout", meshsync_session_idle_cb, self, NULL);
		return G_SOURCE_REMOVE;
	}
	message = g_strdup_printf("session %s closed: idle for %u s", priv->id, priv->idle_timeout);
	g_info("%s", message);
	meshsync_session_finish_literal(self, MESHSYNC_ERROR_TIMED_OUT, message);
	return G_SOURCE_REMOVE;
}

/* A server that takes the connection and never answers (or a connection pool that never
 * hands one out) would leave the session STARTING for as long as TCP holds: the opening has
 * a deadline of its own, whatever the client's I/O timeout. Runs from its own timer, never
 * from inside one of libsoup's emissions, so cancelling the request here is safe. */
static gboolean
meshsync_session_open_deadline_cb(gpointer data)
{
	MeshSyncSession *self = data;
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);
	g_autofree gchar *message = NULL;

	msd_source_clear(&priv->open_source);
	message = g_strdup_printf(_("pod %s/%s: the API server did not open the %s within %u ms"),
	                          priv->namespace_, priv->pod,
	                          priv->kind == MESHSYNC_SESSION_KIND_LOG ? _("log stream")
	                                                                  : _("exec stream"),
	                          priv->open_timeout);
	g_info("session %s: %s", priv->id, message);
	meshsync_session_finish_literal(self, MESHSYNC_ERROR_TIMED_OUT, message);
	return G_SOURCE_REMOVE;
}

static void
meshsync_session_touch(MeshSyncSession *self)
{
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);

	priv->last_activity = g_get_monotonic_time();
	if (priv->idle_timeout > 0 && priv->idle_source == NULL &&
	    priv->state != MESHSYNC_SESSION_STATE_CLOSED)
		priv->idle_source = msd_engine_context_add_timeout(
		        priv->engine, G_PRIORITY_DEFAULT,
		        (guint)MIN(priv->idle_timeout, G_MAXUINT / 1000) * 1000,
		        "[meshsync] session idle timeout", meshsync_session_idle_cb, self, NULL);
}

static void
meshsync_session_output(MeshSyncSession *self, const guint8 *data, gsize len)
{
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);

	if (len == 0)
		return;
	meshsync_session_touch(self);
	msd_utf8_chunker_push(&priv->chunker, data, len);
	meshsync_session_emit_chunks(self, FALSE);
}

static gchar *
meshsync_session_pod_path(MeshSyncSession *self, const gchar *sub)
{
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);
	g_autofree gchar *ns = g_uri_escape_string(priv->namespace_, NULL, TRUE);
	g_autofree gchar *pod = g_uri_escape_string(priv->pod, NULL, TRUE);

	return g_strdup_printf("/api/v1/namespaces/%s/pods/%s%s%s", ns, pod, sub != NULL ? "/" : "",
	                       sub != NULL ? sub : "");
}

static void
meshsync_session_query_add(GString *query, const gchar *name, const gchar *value)
{
	g_autofree gchar *escaped = g_uri_escape_string(value, NULL, TRUE);

	g_string_append_c(query, query->len == 0 ? '?' : '&');
	g_string_append_printf(query, "%s=%s", name, escaped);
}

/* ------------------------------------------------------------------------------------------
 * log
 */

static void meshsync_session_log_read(MeshSyncSession *self);

static void
meshsync_session_log_read_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MeshSyncSession) self = user_data;
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);
	g_autoptr(GError) error = NULL;
	gssize n = g_input_stream_read_finish(G_INPUT_STREAM(source), result, &error);

	if (priv->state == MESHSYNC_SESSION_STATE_CLOSED)
		return;
	if (n < 0) {
		g_prefix_error(&error, _("log stream of %s/%s: "), priv->namespace_, priv->pod);
		meshsync_session_finish(self, error);
		return;
	}
	if (n == 0) {
		g_debug("session %s: the log stream ended", priv->id);
		meshsync_session_finish(self, NULL);
		return;
	}
	meshsync_session_output(self, priv->read_buffer, (gsize)n);
	if (priv->state == MESHSYNC_SESSION_STATE_RUNNING)
		meshsync_session_log_read(self);
}

static void
meshsync_session_log_read(MeshSyncSession *self)
{
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);

	g_input_stream_read_async(priv->log_stream, priv->read_buffer, priv->chunk_size,
	                          G_PRIORITY_DEFAULT, priv->cancellable,
	                          meshsync_session_log_read_cb, g_object_ref(self));
}

static void
meshsync_session_log_opened_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MeshSyncSession) self = user_data;
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);
	g_autoptr(GError) error = NULL;
	g_autoptr(GInputStream) stream = NULL;

	stream = msd_kube_client_stream_finish(MSD_KUBE_CLIENT(source), result, &error);
	if (priv->state == MESHSYNC_SESSION_STATE_CLOSED)
		return;
	if (stream == NULL) {
		meshsync_session_finish(self, error);
		return;
	}
	priv->log_stream = g_steal_pointer(&stream);
	priv->read_buffer = g_malloc(priv->chunk_size);
	meshsync_session_set_state(self, MESHSYNC_SESSION_STATE_RUNNING);
	meshsync_session_log_read(self);
}

static void
meshsync_session_log_start(MeshSyncSession *self)
{
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);
	g_autofree gchar *base = meshsync_session_pod_path(self, "log");
	g_autoptr(GString) query = g_string_new(NULL);
	g_autofree gchar *path = NULL;

	if (priv->container != NULL && priv->container[0] != '\0')
		meshsync_session_query_add(query, "container", priv->container);
	if (priv->follow)
		meshsync_session_query_add(query, "follow", "true");
	if (priv->previous)
		meshsync_session_query_add(query, "previous", "true");
	if (priv->timestamps)
		meshsync_session_query_add(query, "timestamps", "true");
	if (priv->tail_lines >= 0) {
		g_autofree gchar *n = g_strdup_printf("%" G_GINT64_FORMAT, priv->tail_lines);

		meshsync_session_query_add(query, "tailLines", n);
	}
	path = g_strconcat(base, query->str, NULL);
	msd_kube_client_stream_full_async(priv->client, path, MSD_KUBE_REQUEST_ONE_SHOT,
	                                  priv->cancellable, meshsync_session_log_opened_cb,
	                                  g_object_ref(self));
}

/* ------------------------------------------------------------------------------------------
 * exec
 */

static gboolean
meshsync_session_ws_send(MeshSyncSession *self, guint8 channel, const guint8 *data, gsize len)
{
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);
	g_autofree guint8 *frame = NULL;

	if (priv->ws == NULL ||
	    soup_websocket_connection_get_state(priv->ws) != SOUP_WEBSOCKET_STATE_OPEN)
		return FALSE;
	frame = g_malloc(len + 1);
	frame[0] = channel;
	if (len > 0)
		memcpy(frame + 1, data, len);
	soup_websocket_connection_send_binary(priv->ws, frame, len + 1);
	return TRUE;
}

static void
meshsync_session_ws_message_cb(SoupWebsocketConnection *ws,
                               gint type,
                               GBytes *message,
                               MeshSyncSession *self)
{
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);
	gsize len = 0;
	const guint8 *data = g_bytes_get_data(message, &len);

	if (type != SOUP_WEBSOCKET_DATA_BINARY) {
		/* client-go refuses text frames too: the k8s channel protocols are binary */
		meshsync_session_finish_literal(self, MESHSYNC_ERROR_INVALID_DATA,
		                                "exec: the server sent a text frame");
		return;
	}
	if (len == 0)
		return;
	switch (data[0]) {
	case MESHSYNC_CHANNEL_STDOUT:
	case MESHSYNC_CHANNEL_STDERR:
		/* the first, empty message of each stream only says it is open */
		meshsync_session_output(self, data + 1, len - 1);
		break;
	case MESHSYNC_CHANNEL_ERROR:
		if (priv->status->len + len - 1 > MESHSYNC_SESSION_MAX_STATUS) {
			meshsync_session_finish_literal(self, MESHSYNC_ERROR_TOO_LARGE,
			                                "exec: the error channel exceeds 64 KiB");
			return;
		}
		g_byte_array_append(priv->status, data + 1, (guint)(len - 1));
		break;
	default:
		break;
	}
}

static void
meshsync_session_ws_error_cb(SoupWebsocketConnection *ws, GError *error, MeshSyncSession *self)
{
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);

	if (priv->ws_error == NULL)
		priv->ws_error = g_error_copy(error);
}

/* The server closes once the command has ended, after one Status on the error channel. */
static void
meshsync_session_ws_closed_cb(SoupWebsocketConnection *ws, MeshSyncSession *self)
{
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);
	g_autofree gchar *message = NULL;
	gushort code = soup_websocket_connection_get_close_code(ws);
	gint exit_code = -1;

	if (priv->status->len > 0) {
		gboolean ok = msd_exec_status_parse((const gchar *)priv->status->data,
		                                    priv->status->len, &exit_code, &message);

		priv->exit_code = exit_code;
		g_object_notify_by_pspec(G_OBJECT(self), props[PROP_EXIT_CODE]);
		if (ok) {
			meshsync_session_finish(self, NULL);
			return;
		}
		meshsync_session_finish_literal(self, MESHSYNC_ERROR_FAILED, message);
		return;
	}
	if (code == SOUP_WEBSOCKET_CLOSE_NORMAL || code == 0) {
		meshsync_session_finish(self, NULL);
		return;
	}
	message = g_strdup_printf("exec in %s/%s: the connection closed (%u%s%s)%s%s",
	                          priv->namespace_, priv->pod, code,
	                          soup_websocket_connection_get_close_data(ws) != NULL ? " " : "",
	                          soup_websocket_connection_get_close_data(ws) != NULL
	                                  ? soup_websocket_connection_get_close_data(ws)
	                                  : "",
	                          priv->ws_error != NULL ? ": " : "",
	                          priv->ws_error != NULL ? priv->ws_error->message : "");
	meshsync_session_finish_literal(self, MESHSYNC_ERROR_CONNECTION, message);
}

static void meshsync_session_exec_connect(MeshSyncSession *self);

static void
meshsync_session_exec_connected_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MeshSyncSession) self = user_data;
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);
	g_autoptr(GError) error = NULL;
	g_autoptr(SoupWebsocketConnection) ws = NULL;
	guint status;

	ws = msd_kube_client_websocket_finish(MSD_KUBE_CLIENT(source), result, &error);
	if (priv->state == MESHSYNC_SESSION_STATE_CLOSED)
		return;
	if (ws == NULL) {
		status = msd_kube_client_error_get_status(error);
		/* an older server may refuse what it does not know instead of choosing */
		if (!priv->offered_v4_only &&
		    (status == SOUP_STATUS_BAD_REQUEST ||
		     g_error_matches(error, MESHSYNC_ERROR, MESHSYNC_ERROR_NOT_SUPPORTED))) {
			g_debug("session %s: %s; trying %s alone", priv->id, error->message,
			        MESHSYNC_EXEC_V4);
			priv->offered_v4_only = TRUE;
			meshsync_session_exec_connect(self);
			return;
		}
		meshsync_session_finish(self, error);
		return;
	}
	priv->protocol = g_strdup(soup_websocket_connection_get_protocol(ws));
	if (g_strcmp0(priv->protocol, MESHSYNC_EXEC_V5) != 0 &&
	    g_strcmp0(priv->protocol, MESHSYNC_EXEC_V4) != 0) {
		g_autofree gchar *message = g_strdup_printf(
		        "exec in %s/%s: the server chose the WebSocket protocol \"%s\", which was "
		        "not offered",
		        priv->namespace_, priv->pod, priv->protocol != NULL ? priv->protocol : "");

		meshsync_session_finish_literal(self, MESHSYNC_ERROR_NOT_SUPPORTED, message);
		return;
	}
	priv->ws = g_steal_pointer(&ws);
	soup_websocket_connection_set_keepalive_interval(priv->ws,
	                                                 MESHSYNC_SESSION_KEEPALIVE_SECONDS);
	/* output is bounded by what the server sends per message; libsoup's 128 KiB default
	 * is kept */
	g_signal_connect(priv->ws, "message", G_CALLBACK(meshsync_session_ws_message_cb), self);
	g_signal_connect(priv->ws, "error", G_CALLBACK(meshsync_session_ws_error_cb), self);
	g_signal_connect(priv->ws, "closed", G_CALLBACK(meshsync_session_ws_closed_cb), self);
	meshsync_session_set_state(self, MESHSYNC_SESSION_STATE_RUNNING);
	g_debug("session %s: exec open (%s)", priv->id, priv->protocol);
	meshsync_session_touch(self);
	if (priv->early_input != NULL) {
		g_autoptr(GByteArray) early = g_steal_pointer(&priv->early_input);

		meshsync_session_ws_send(self, MESHSYNC_CHANNEL_STDIN, early->data, early->len);
	}
	if (priv->early_close_input)
		meshsync_session_close_input(self, NULL);
}

static void
meshsync_session_exec_connect(MeshSyncSession *self)
{
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);
	g_autofree gchar *base = meshsync_session_pod_path(self, "exec");
	g_autoptr(GString) query = g_string_new(NULL);
	g_autofree gchar *path = NULL;
	const gchar *both[] = {MESHSYNC_EXEC_V5, MESHSYNC_EXEC_V4, NULL};
	const gchar *v4[] = {MESHSYNC_EXEC_V4, NULL};

	for (guint i = 0; priv->command[i] != NULL; i++)
		meshsync_session_query_add(query, "command", priv->command[i]);
	if (priv->container != NULL && priv->container[0] != '\0')
		meshsync_session_query_add(query, "container", priv->container);
	meshsync_session_query_add(query, "stdin", "true");
	meshsync_session_query_add(query, "stdout", "true");
	/* with a TTY the server merges stderr into stdout */
	meshsync_session_query_add(query, "stderr", "true");
	if (priv->tty)
		meshsync_session_query_add(query, "tty", "true");
	path = g_strconcat(base, query->str, NULL);
	msd_kube_client_websocket_async(priv->client, path, priv->offered_v4_only ? v4 : both,
	                                priv->cancellable, meshsync_session_exec_connected_cb,
	                                g_object_ref(self));
}

static gboolean
meshsync_session_container_listed(JsonObject *spec, const gchar *member, const gchar *name)
{
	JsonArray *list;

	if (!json_object_has_member(spec, member) ||
	    !JSON_NODE_HOLDS_ARRAY(json_object_get_member(spec, member)))
		return FALSE;
	list = json_object_get_array_member(spec, member);
	for (guint i = 0; i < json_array_get_length(list); i++) {
		JsonNode *node = json_array_get_element(list, i);

		if (JSON_NODE_HOLDS_OBJECT(node) &&
		    g_strcmp0(msd_json_object_get_string(json_node_get_object(node), "name"),
		              name) == 0)
			return TRUE;
	}
	return FALSE;
}

static guint
meshsync_session_count_containers(JsonObject *spec)
{
	if (!json_object_has_member(spec, "containers") ||
	    !JSON_NODE_HOLDS_ARRAY(json_object_get_member(spec, "containers")))
		return 0;
	return json_array_get_length(json_object_get_array_member(spec, "containers"));
}

/* What kubectl checks before it upgrades: the WebSocket refusal carries no Status, so this
 * is where a missing pod or container gets its message. Returns NULL when the exec may go
 * ahead. */
static gchar *
meshsync_session_exec_check_pod(MeshSyncSession *self, GBytes *body)
{
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);
	g_autoptr(JsonParser) parser = json_parser_new_immutable();
	gsize len = 0;
	const gchar *data = g_bytes_get_data(body, &len);
	JsonNode *root;
	JsonObject *pod;
	JsonObject *spec;
	const gchar *phase = NULL;

	if (len > G_MAXSSIZE || !json_parser_load_from_data(parser, data, (gssize)len, NULL) ||
	    (root = json_parser_get_root(parser)) == NULL || !JSON_NODE_HOLDS_OBJECT(root))
		return g_strdup_printf("pod %s/%s: the server sent no object", priv->namespace_,
		                       priv->pod);
	pod = json_node_get_object(root);
	if (json_object_has_member(pod, "status") &&
	    JSON_NODE_HOLDS_OBJECT(json_object_get_member(pod, "status")))
		phase = msd_json_object_get_string(json_object_get_object_member(pod, "status"),
		                                   "phase");
	if (g_strcmp0(phase, "Succeeded") == 0 || g_strcmp0(phase, "Failed") == 0)
		return g_strdup_printf(
		        "cannot exec into a container in a completed pod; current phase is %s",
		        phase);
	if (!json_object_has_member(pod, "spec") ||
	    !JSON_NODE_HOLDS_OBJECT(json_object_get_member(pod, "spec")))
		return g_strdup_printf("pod %s/%s has no spec", priv->namespace_, priv->pod);
	spec = json_object_get_object_member(pod, "spec");
	if (priv->container == NULL || priv->container[0] == '\0') {
		if (meshsync_session_count_containers(spec) != 1)
			return g_strdup_printf("a container name must be specified for pod %s",
			                       priv->pod);
		return NULL;
	}
	if (!meshsync_session_container_listed(spec, "containers", priv->container) &&
	    !meshsync_session_container_listed(spec, "initContainers", priv->container) &&
	    !meshsync_session_container_listed(spec, "ephemeralContainers", priv->container))
		return g_strdup_printf("container %s is not valid for pod %s", priv->container,
		                       priv->pod);
	return NULL;
}

static void
meshsync_session_exec_pod_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MeshSyncSession) self = user_data;
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);
	g_autoptr(GError) error = NULL;
	g_autoptr(GBytes) body = NULL;
	g_autofree gchar *refusal = NULL;

	body = msd_kube_client_get_finish(MSD_KUBE_CLIENT(source), result, &error);
	if (priv->state == MESHSYNC_SESSION_STATE_CLOSED)
		return;
	if (body == NULL) {
		meshsync_session_finish(self, error);
		return;
	}
	refusal = meshsync_session_exec_check_pod(self, body);
	if (refusal != NULL) {
		meshsync_session_finish_literal(self, MESHSYNC_ERROR_NOT_FOUND, refusal);
		return;
	}
	meshsync_session_exec_connect(self);
}

static void
meshsync_session_exec_start(MeshSyncSession *self)
{
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);
	g_autofree gchar *path = meshsync_session_pod_path(self, NULL);

	/* one lookup per exec, in bursts: its connection is not pooled (msd-kube-client.h) */
	msd_kube_client_get_full_async(priv->client, path, MSD_KUBE_REQUEST_ONE_SHOT,
	                               priv->cancellable, meshsync_session_exec_pod_cb,
	                               g_object_ref(self));
}

/* ------------------------------------------------------------------------------------------ */

/**
 * meshsync_session_start:
 * @self: a #MeshSyncSession
 *
 * Opens the stream. Output and the end arrive as signals; a failure to open (a missing pod
 * or container, a refusal) is reported with [signal@MeshSync.Session::error] followed by
 * [signal@MeshSync.Session::closed], from the main loop. Starting twice does nothing.
 */
void
meshsync_session_start(MeshSyncSession *self)
{
	MeshSyncSessionPrivate *priv;
	g_autoptr(GError) error = NULL;

	g_return_if_fail(MESHSYNC_IS_SESSION(self));
	priv = GET_PRIVATE(self);
	if (priv->state != MESHSYNC_SESSION_STATE_NEW)
		return;
	meshsync_session_set_state(self, MESHSYNC_SESSION_STATE_STARTING);
	/* its timers go where its HTTP goes: the context of the thread that starts it (nothing
	 * is attached before) */
	g_clear_object(&priv->engine);
	priv->engine = msd_engine_context_new();
	if (priv->chunk_size == 0)
		priv->chunk_size = priv->kind == MESHSYNC_SESSION_KIND_LOG
		                           ? MESHSYNC_SESSION_LOG_CHUNK
		                           : MESHSYNC_SESSION_EXEC_CHUNK;
	msd_utf8_chunker_clear(&priv->chunker);
	msd_utf8_chunker_init(&priv->chunker, priv->chunk_size);
	if (priv->client == NULL) {
		priv->client = msd_kube_client_new(priv->config, &error);
		if (priv->client == NULL) {
			meshsync_session_finish(self, error);
			return;
		}
	}
	meshsync_session_touch(self);
	if (priv->open_timeout > 0)
		priv->open_source = msd_engine_context_add_timeout(
		        priv->engine, G_PRIORITY_DEFAULT, priv->open_timeout,
		        "[meshsync] session open deadline", meshsync_session_open_deadline_cb, self,
		        NULL);
	if (priv->kind == MESHSYNC_SESSION_KIND_LOG)
		meshsync_session_log_start(self);
	else
		meshsync_session_exec_start(self);
}

/**
 * meshsync_session_stop:
 * @self: a #MeshSyncSession
 *
 * Ends the session: closes the stream and emits [signal@MeshSync.Session::closed], unless
 * it has ended already.
 */
void
meshsync_session_stop(MeshSyncSession *self)
{
	g_return_if_fail(MESHSYNC_IS_SESSION(self));
	meshsync_session_finish(self, NULL);
}

/**
 * meshsync_session_write:
 * @self: a #MeshSyncSession
 * @data: (array length=length) (element-type guint8): bytes for the command's standard input
 * @length: the length of @data
 * @error: return location for a #GError
 *
 * Writes to the standard input of an exec session. Input written while the session is still
 * starting is sent once it runs (up to 1 MiB).
 *
 * Returns: %TRUE when the input was sent or queued
 */
gboolean
meshsync_session_write(MeshSyncSession *self, const guint8 *data, gsize length, GError **error)
{
	MeshSyncSessionPrivate *priv;

	g_return_val_if_fail(MESHSYNC_IS_SESSION(self), FALSE);
	g_return_val_if_fail(data != NULL || length == 0, FALSE);
	priv = GET_PRIVATE(self);
	if (priv->kind != MESHSYNC_SESSION_KIND_EXEC) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_NOT_SUPPORTED,
		            _("session %s: a log session takes no input"), priv->id);
		return FALSE;
	}
	if (priv->state == MESHSYNC_SESSION_STATE_NEW ||
	    priv->state == MESHSYNC_SESSION_STATE_STARTING) {
		if (priv->early_input == NULL)
			priv->early_input = g_byte_array_new();
		if (priv->early_input->len + length > MESHSYNC_SESSION_MAX_EARLY_INPUT) {
			g_set_error(
			        error, MESHSYNC_ERROR, MESHSYNC_ERROR_TOO_LARGE,
			        _("session %s: more than 1 MiB of input before the command runs"),
			        priv->id);
			return FALSE;
		}
		g_byte_array_append(priv->early_input, data, (guint)length);
		return TRUE;
	}
	if (priv->state != MESHSYNC_SESSION_STATE_RUNNING ||
	    !meshsync_session_ws_send(self, MESHSYNC_CHANNEL_STDIN, data, length)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		            _("session %s has ended"), priv->id);
		return FALSE;
	}
	meshsync_session_touch(self);
	return TRUE;
}

/**
 * meshsync_session_close_input:
 * @self: a #MeshSyncSession
 * @error: return location for a #GError
 *
 * Ends the standard input of an exec session (end of file for the command), which
 * `v5.channel.k8s.io` alone can say.
 *
 * Returns: %TRUE when it was sent (or will be once the session runs)
 */
gboolean
meshsync_session_close_input(MeshSyncSession *self, GError **error)
{
	MeshSyncSessionPrivate *priv;
	const guint8 stdin_channel = MESHSYNC_CHANNEL_STDIN;

	g_return_val_if_fail(MESHSYNC_IS_SESSION(self), FALSE);
	priv = GET_PRIVATE(self);
	if (priv->kind == MESHSYNC_SESSION_KIND_EXEC &&
	    (priv->state == MESHSYNC_SESSION_STATE_NEW ||
	     priv->state == MESHSYNC_SESSION_STATE_STARTING)) {
		priv->early_close_input = TRUE;
		return TRUE;
	}
	if (priv->kind != MESHSYNC_SESSION_KIND_EXEC ||
	    g_strcmp0(priv->protocol, MESHSYNC_EXEC_V5) != 0) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_NOT_SUPPORTED,
		            _("session %s: the input cannot be closed on its own (%s)"), priv->id,
		            priv->protocol != NULL ? priv->protocol : _("no exec stream"));
		return FALSE;
	}
	if (!meshsync_session_ws_send(self, MESHSYNC_CHANNEL_CLOSE, &stdin_channel, 1)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		            _("session %s has ended"), priv->id);
		return FALSE;
	}
	return TRUE;
}

/* ------------------------------------------------------------------------------------------
 * configuration
 */

#define MESHSYNC_SESSION_CHECK_NEW(self)                                                  \
	G_STMT_START                                                                      \
	{                                                                                 \
		g_return_if_fail(MESHSYNC_IS_SESSION(self));                              \
		g_return_if_fail(GET_PRIVATE(self)->state == MESHSYNC_SESSION_STATE_NEW); \
	}                                                                                 \
	G_STMT_END

/**
 * meshsync_session_set_follow:
 * @self: a #MeshSyncSession
 * @follow: whether the log stream stays open for new lines
 *
 * For log sessions, before starting: `follow` of the log request.
 */
void
meshsync_session_set_follow(MeshSyncSession *self, gboolean follow)
{
	MESHSYNC_SESSION_CHECK_NEW(self);
	GET_PRIVATE(self)->follow = follow;
}

/**
 * meshsync_session_set_previous:
 * @self: a #MeshSyncSession
 * @previous: whether to read the previous instance of the container
 *
 * For log sessions, before starting: `previous` of the log request.
 */
void
meshsync_session_set_previous(MeshSyncSession *self, gboolean previous)
{
	MESHSYNC_SESSION_CHECK_NEW(self);
	GET_PRIVATE(self)->previous = previous;
}

/**
 * meshsync_session_set_timestamps:
 * @self: a #MeshSyncSession
 * @timestamps: whether each line starts with its RFC 3339 time
 *
 * For log sessions, before starting: `timestamps` of the log request.
 */
void
meshsync_session_set_timestamps(MeshSyncSession *self, gboolean timestamps)
{
	MESHSYNC_SESSION_CHECK_NEW(self);
	GET_PRIVATE(self)->timestamps = timestamps;
}

/**
 * meshsync_session_set_tail_lines:
 * @self: a #MeshSyncSession
 * @tail_lines: how many lines of history to start with; negative for all of them
 *
 * For log sessions, before starting: `tailLines` of the log request (not sent when
 * negative).
 */
void
meshsync_session_set_tail_lines(MeshSyncSession *self, gint64 tail_lines)
{
	MESHSYNC_SESSION_CHECK_NEW(self);
	GET_PRIVATE(self)->tail_lines = tail_lines < 0 ? -1 : tail_lines;
}

/**
 * meshsync_session_set_tty:
 * @self: a #MeshSyncSession
 * @tty: whether the command runs on a terminal
 *
 * For exec sessions, before starting; %TRUE by default, as upstream runs its shells.
 */
void
meshsync_session_set_tty(MeshSyncSession *self, gboolean tty)
{
	MESHSYNC_SESSION_CHECK_NEW(self);
	GET_PRIVATE(self)->tty = tty;
}

/**
 * meshsync_session_set_chunk_size:
 * @self: a #MeshSyncSession
 * @bytes: the largest output chunk, at least 4 (0 for the default)
 *
 * Sets the largest [signal@MeshSync.Session::output] chunk, before starting: 2000 bytes for
 * logs and 1024 for exec by default, as upstream reads them.
 */
void
meshsync_session_set_chunk_size(MeshSyncSession *self, guint bytes)
{
	MESHSYNC_SESSION_CHECK_NEW(self);
	g_return_if_fail(bytes == 0 || bytes >= 4);
	GET_PRIVATE(self)->chunk_size = bytes;
}

/**
 * meshsync_session_set_idle_timeout:
 * @self: a #MeshSyncSession
 * @seconds: how long the session may go without input or output; 0 for ever
 *
 * Ends the session (with an error of code %MESHSYNC_ERROR_TIMED_OUT) once nothing went in
 * or out for @seconds.
 */
void
meshsync_session_set_idle_timeout(MeshSyncSession *self, guint seconds)
{
	MESHSYNC_SESSION_CHECK_NEW(self);
	GET_PRIVATE(self)->idle_timeout = seconds;
}

/**
 * meshsync_session_set_id:
 * @self: a #MeshSyncSession
 * @id: (nullable): the session's name
 *
 * Names the session (the broker uses upstream's session ids); by default it is
 * `logs.<namespace>.<pod>.<container>` or `exec.<namespace>.<pod>.<container>`.
 */
void
meshsync_session_set_id(MeshSyncSession *self, const gchar *id)
{
	MeshSyncSessionPrivate *priv;

	g_return_if_fail(MESHSYNC_IS_SESSION(self));
	priv = GET_PRIVATE(self);
	if (g_strcmp0(priv->id, id) == 0)
		return;
	g_free(priv->id);
	priv->id = g_strdup(id);
	g_object_notify_by_pspec(G_OBJECT(self), props[PROP_ID]);
}

void
meshsync_session_set_client(MeshSyncSession *self, MsdKubeClient *client)
{
	MESHSYNC_SESSION_CHECK_NEW(self);
	g_set_object(&GET_PRIVATE(self)->client, client);
}

void
meshsync_session_set_open_timeout(MeshSyncSession *self, guint milliseconds)
{
	MESHSYNC_SESSION_CHECK_NEW(self);
	GET_PRIVATE(self)->open_timeout = milliseconds;
}

/* ------------------------------------------------------------------------------------------
 * getters
 */

/**
 * meshsync_session_get_kind:
 * @self: a #MeshSyncSession
 *
 * Gets the session's kind.
 *
 * Returns: whether this is a log or an exec session
 */
MeshSyncSessionKind
meshsync_session_get_kind(MeshSyncSession *self)
{
	g_return_val_if_fail(MESHSYNC_IS_SESSION(self), MESHSYNC_SESSION_KIND_LOG);
	return GET_PRIVATE(self)->kind;
}

/**
 * meshsync_session_get_state:
 * @self: a #MeshSyncSession
 *
 * Gets the session's state.
 *
 * Returns: where the session is in its life
 */
MeshSyncSessionState
meshsync_session_get_state(MeshSyncSession *self)
{
	g_return_val_if_fail(MESHSYNC_IS_SESSION(self), MESHSYNC_SESSION_STATE_CLOSED);
	return GET_PRIVATE(self)->state;
}

/**
 * meshsync_session_get_id:
 * @self: a #MeshSyncSession
 *
 * Gets the session's id.
 *
 * Returns: the session's name
 */
const gchar *
meshsync_session_get_id(MeshSyncSession *self)
{
	g_return_val_if_fail(MESHSYNC_IS_SESSION(self), NULL);
	return GET_PRIVATE(self)->id;
}

/**
 * meshsync_session_get_namespace:
 * @self: a #MeshSyncSession
 *
 * Gets the namespace of the session's pod.
 *
 * Returns: the pod's namespace
 */
const gchar *
meshsync_session_get_namespace(MeshSyncSession *self)
{
	g_return_val_if_fail(MESHSYNC_IS_SESSION(self), NULL);
	return GET_PRIVATE(self)->namespace_;
}

/**
 * meshsync_session_get_pod:
 * @self: a #MeshSyncSession
 *
 * Gets the session's pod.
 *
 * Returns: the pod's name
 */
const gchar *
meshsync_session_get_pod(MeshSyncSession *self)
{
	g_return_val_if_fail(MESHSYNC_IS_SESSION(self), NULL);
	return GET_PRIVATE(self)->pod;
}

/**
 * meshsync_session_get_container:
 * @self: a #MeshSyncSession
 *
 * Gets the session's container.
 *
 * Returns: the container's name, "" for the pod's only container
 */
const gchar *
meshsync_session_get_container(MeshSyncSession *self)
{
	g_return_val_if_fail(MESHSYNC_IS_SESSION(self), NULL);
	return GET_PRIVATE(self)->container;
}

/**
 * meshsync_session_get_exit_code:
 * @self: a #MeshSyncSession
 *
 * Gets the exit status of an exec session's command.
 *
 * Returns: the exit status of an exec session's command once it ended, -1 before or when
 *   the server did not tell
 */
gint
meshsync_session_get_exit_code(MeshSyncSession *self)
{
	g_return_val_if_fail(MESHSYNC_IS_SESSION(self), -1);
	return GET_PRIVATE(self)->exit_code;
}

/**
 * meshsync_session_get_protocol:
 * @self: a #MeshSyncSession
 *
 * Gets the exec protocol the server chose.
 *
 * Returns: (nullable): the WebSocket subprotocol the server chose for an exec session
 */
const gchar *
meshsync_session_get_protocol(MeshSyncSession *self)
{
	g_return_val_if_fail(MESHSYNC_IS_SESSION(self), NULL);
	return GET_PRIVATE(self)->protocol;
}

/* ------------------------------------------------------------------------------------------
 * GObject
 */

static void
meshsync_session_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
	MeshSyncSessionPrivate *priv = GET_PRIVATE(MESHSYNC_SESSION(object));

	switch (prop_id) {
	case PROP_KUBE_CONFIG:
		g_value_set_object(value, priv->config);
		break;
	case PROP_KIND:
		g_value_set_enum(value, priv->kind);
		break;
	case PROP_ID:
		g_value_set_string(value, priv->id);
		break;
	case PROP_NAMESPACE:
		g_value_set_string(value, priv->namespace_);
		break;
	case PROP_POD:
		g_value_set_string(value, priv->pod);
		break;
	case PROP_CONTAINER:
		g_value_set_string(value, priv->container);
		break;
	case PROP_COMMAND:
		g_value_set_boxed(value, priv->command);
		break;
	case PROP_STATE:
		g_value_set_enum(value, priv->state);
		break;
	case PROP_EXIT_CODE:
		g_value_set_int(value, priv->exit_code);
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
	}
}

static void
meshsync_session_set_property(GObject *object,
                              guint prop_id,
                              const GValue *value,
                              GParamSpec *pspec)
{
	MeshSyncSession *self = MESHSYNC_SESSION(object);
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);

	switch (prop_id) {
	case PROP_KUBE_CONFIG:
		priv->config = g_value_dup_object(value);
		break;
	case PROP_KIND:
		priv->kind = g_value_get_enum(value);
		break;
	case PROP_ID:
		meshsync_session_set_id(self, g_value_get_string(value));
		break;
	case PROP_NAMESPACE:
		priv->namespace_ = g_value_dup_string(value);
		break;
	case PROP_POD:
		priv->pod = g_value_dup_string(value);
		break;
	case PROP_CONTAINER:
		priv->container = g_value_dup_string(value);
		break;
	case PROP_COMMAND:
		priv->command = g_value_dup_boxed(value);
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
	}
}

static void
meshsync_session_constructed(GObject *object)
{
	MeshSyncSession *self = MESHSYNC_SESSION(object);
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);

	G_OBJECT_CLASS(meshsync_session_parent_class)->constructed(object);
	if (priv->namespace_ == NULL)
		priv->namespace_ = g_strdup("default");
	if (priv->pod == NULL)
		priv->pod = g_strdup("");
	if (priv->container == NULL)
		priv->container = g_strdup("");
	if (priv->command == NULL || priv->command[0] == NULL) {
		g_strfreev(priv->command);
		priv->command = g_strsplit("/bin/sh", " ", -1);
	}
	if (priv->id == NULL)
		priv->id = g_strdup_printf(
		        "%s.%s.%s.%s", priv->kind == MESHSYNC_SESSION_KIND_LOG ? "logs" : "exec",
		        priv->namespace_, priv->pod, priv->container);
}

static void
meshsync_session_dispose(GObject *object)
{
	MeshSyncSession *self = MESHSYNC_SESSION(object);
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);

	/* every pending operation holds a reference, so only an open WebSocket (driven by
	 * signals) can be left here: close it without telling anyone */
	if (priv->state != MESHSYNC_SESSION_STATE_CLOSED) {
		priv->state = MESHSYNC_SESSION_STATE_CLOSED;
		g_cancellable_cancel(priv->cancellable);
		msd_source_clear(&priv->idle_source);
		msd_source_clear(&priv->open_source);
		meshsync_session_release_ws(self);
	}
	g_clear_object(&priv->log_stream);
	g_clear_object(&priv->client);
	G_OBJECT_CLASS(meshsync_session_parent_class)->dispose(object);
}

static void
meshsync_session_finalize(GObject *object)
{
	MeshSyncSessionPrivate *priv = GET_PRIVATE(MESHSYNC_SESSION(object));

	g_clear_object(&priv->config);
	g_clear_object(&priv->cancellable);
	g_clear_object(&priv->engine);
	g_free(priv->id);
	g_free(priv->namespace_);
	g_free(priv->pod);
	g_free(priv->container);
	g_strfreev(priv->command);
	g_free(priv->protocol);
	g_free(priv->read_buffer);
	g_byte_array_unref(priv->status);
	g_clear_pointer(&priv->early_input, g_byte_array_unref);
	g_clear_error(&priv->ws_error);
	msd_utf8_chunker_clear(&priv->chunker);
	G_OBJECT_CLASS(meshsync_session_parent_class)->finalize(object);
}

static void
meshsync_session_class_init(MeshSyncSessionClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->get_property = meshsync_session_get_property;
	object_class->set_property = meshsync_session_set_property;
	object_class->constructed = meshsync_session_constructed;
	object_class->dispose = meshsync_session_dispose;
	object_class->finalize = meshsync_session_finalize;

	/**
	 * MeshSyncSession:kube-config:
	 *
	 * The API server the pod lives on.
	 */
	props[PROP_KUBE_CONFIG] = g_param_spec_object(
	        "kube-config", NULL, NULL, MESHSYNC_TYPE_KUBE_CONFIG,
	        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
	/**
	 * MeshSyncSession:kind: (getter get_kind)
	 *
	 * Log or exec.
	 */
	props[PROP_KIND] = g_param_spec_enum(
	        "kind", NULL, NULL, MESHSYNC_TYPE_SESSION_KIND, MESHSYNC_SESSION_KIND_LOG,
	        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
	/**
	 * MeshSyncSession:id: (getter get_id) (setter set_id)
	 *
	 * The session's name.
	 */
	props[PROP_ID] = g_param_spec_string("id", NULL, NULL, NULL,
	                                     G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
	                                             G_PARAM_EXPLICIT_NOTIFY);
	/**
	 * MeshSyncSession:namespace: (getter get_namespace)
	 *
	 * The pod's namespace.
	 */
	props[PROP_NAMESPACE] = g_param_spec_string("namespace", NULL, NULL, NULL,
	                                            G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
	                                                    G_PARAM_STATIC_STRINGS);
	/**
	 * MeshSyncSession:pod: (getter get_pod)
	 *
	 * The pod's name.
	 */
	props[PROP_POD] = g_param_spec_string("pod", NULL, NULL, NULL,
	                                      G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
	                                              G_PARAM_STATIC_STRINGS);
	/**
	 * MeshSyncSession:container: (getter get_container)
	 *
	 * The container's name; empty for the pod's only container.
	 */
	props[PROP_CONTAINER] = g_param_spec_string("container", NULL, NULL, NULL,
	                                            G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
	                                                    G_PARAM_STATIC_STRINGS);
	/**
	 * MeshSyncSession:command:
	 *
	 * The command an exec session runs (`/bin/sh` by default).
	 */
	props[PROP_COMMAND] = g_param_spec_boxed("command", NULL, NULL, G_TYPE_STRV,
	                                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
	                                                 G_PARAM_STATIC_STRINGS);
	/**
	 * MeshSyncSession:state: (getter get_state)
	 *
	 * Where the session is in its life.
	 */
	props[PROP_STATE] = g_param_spec_enum(
	        "state", NULL, NULL, MESHSYNC_TYPE_SESSION_STATE, MESHSYNC_SESSION_STATE_NEW,
	        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
	/**
	 * MeshSyncSession:exit-code: (getter get_exit_code)
	 *
	 * The exec command's exit status once it ended, else -1.
	 */
	props[PROP_EXIT_CODE] = g_param_spec_int("exit-code", NULL, NULL, -1, G_MAXINT, -1,
	                                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS |
	                                                 G_PARAM_EXPLICIT_NOTIFY);
	g_object_class_install_properties(object_class, N_PROPS, props);

	/**
	 * MeshSyncSession::output:
	 * @self: the session
	 * @data: a chunk of the log or of the command's output
	 *
	 * Output, in chunks of at most the chunk size that never cut a UTF-8 character.
	 */
	signals[SIGNAL_OUTPUT] = g_signal_new("output", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
	                                      G_STRUCT_OFFSET(MeshSyncSessionClass, output), NULL,
	                                      NULL, NULL, G_TYPE_NONE, 1, G_TYPE_BYTES);
	/**
	 * MeshSyncSession::error:
	 * @self: the session
	 * @error: why the session ends
	 *
	 * The session could not open or failed; for exec, a command that exits with a status
	 * other than 0 ends with an error too (as client-go reports it).
	 * [signal@MeshSync.Session::closed] follows.
	 */
	signals[SIGNAL_ERROR] = g_signal_new("error", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
	                                     G_STRUCT_OFFSET(MeshSyncSessionClass, error), NULL,
	                                     NULL, NULL, G_TYPE_NONE, 1, G_TYPE_ERROR);
	/**
	 * MeshSyncSession::closed:
	 * @self: the session
	 *
	 * The session ended and released everything; emitted exactly once.
	 */
	signals[SIGNAL_CLOSED] = g_signal_new("closed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
	                                      G_STRUCT_OFFSET(MeshSyncSessionClass, closed), NULL,
	                                      NULL, NULL, G_TYPE_NONE, 0);
}

static void
meshsync_session_init(MeshSyncSession *self)
{
	MeshSyncSessionPrivate *priv = GET_PRIVATE(self);

	priv->tail_lines = -1;
	priv->tty = TRUE;
	priv->exit_code = -1;
	priv->open_timeout = MESHSYNC_SESSION_OPEN_TIMEOUT_MS;
	priv->cancellable = g_cancellable_new();
	/* replaced at start, by the context of the thread that starts it */
	priv->engine = msd_engine_context_new();
	priv->status = g_byte_array_new();
	msd_utf8_chunker_init(&priv->chunker, MESHSYNC_SESSION_EXEC_CHUNK);
}

/**
 * meshsync_session_new_log:
 * @config: the API server
 * @namespace_: the pod's namespace
 * @pod: the pod's name
 * @container: (nullable): the container, or %NULL for the pod's only one
 *
 * Creates a session that streams a container's log; set what to read, then
 * [method@MeshSync.Session.start].
 *
 * Returns: (transfer full): a new session
 */
MeshSyncSession *
meshsync_session_new_log(MeshSyncKubeConfig *config,
                         const gchar *namespace_,
                         const gchar *pod,
                         const gchar *container)
{
	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(config), NULL);
	return g_object_new(MESHSYNC_TYPE_SESSION, "kube-config", config, "kind",
	                    MESHSYNC_SESSION_KIND_LOG, "namespace", namespace_, "pod", pod,
	                    "container", container, NULL);
}

/**
 * meshsync_session_new_exec:
 * @config: the API server
 * @namespace_: the pod's namespace
 * @pod: the pod's name
 * @container: (nullable): the container, or %NULL for the pod's only one
 * @command: (array zero-terminated=1) (nullable): the command and its arguments; %NULL for
 *   `/bin/sh`
 *
 * Creates a session that runs @command in a container, on a terminal unless
 * [method@MeshSync.Session.set_tty] says otherwise.
 *
 * Returns: (transfer full): a new session
 */
MeshSyncSession *
meshsync_session_new_exec(MeshSyncKubeConfig *config,
                          const gchar *namespace_,
                          const gchar *pod,
                          const gchar *container,
                          const gchar *const *command)
{
	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(config), NULL);
	return g_object_new(MESHSYNC_TYPE_SESSION, "kube-config", config, "kind",
	                    MESHSYNC_SESSION_KIND_EXEC, "namespace", namespace_, "pod", pod,
	                    "container", container, "command", command, NULL);
}
