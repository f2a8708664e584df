/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-server.h"

#include <string.h>

#include "kubesim-json.h"
#include "kubesim-pod.h"
#include "kubesim-shell.h"
#include "util/msd-json-string.h"

/*
 * Exec over a WebSocket, as the API server's stream translator (v5.channel.k8s.io, what
 * kubectl asks for) and the kubelet (v4.channel.k8s.io, python's) speak it: binary messages
 * whose first byte is the channel. The command runs in kubesim-shell.c, never as a process.
 */

enum {
	CHANNEL_STDIN = 0,
	CHANNEL_STDOUT = 1,
	CHANNEL_STDERR = 2,
	CHANNEL_ERROR = 3,
	CHANNEL_RESIZE = 4,
	CHANNEL_CLOSE = 255,
};

#define PROTOCOL_V5 "v5.channel.k8s.io"
#define PROTOCOL_V4 "v4.channel.k8s.io"

typedef struct {
	KubesimServer *server;
	SoupWebsocketConnection *conn;
	KubesimShell *shell;
	gchar **argv;
	gboolean v5;
	gboolean want_stdin, want_stdout, want_stderr, tty;
	gulong message_id;
	gulong closed_id;
	gboolean closed;
	guint free_id;
} KubesimExec;

/* What the request asked for, kept on the message until the 101 is written. */
typedef struct {
	KubesimServer *server;
	gchar **argv;
	gboolean v5;
	gboolean want_stdin, want_stdout, want_stderr, tty;
	gchar *hostname;
	gchar *namespace_;
	gchar **env;
} ExecRequest;

static void
exec_request_free(gpointer data)
{
	ExecRequest *r = data;

	g_strfreev(r->argv);
	g_free(r->hostname);
	g_free(r->namespace_);
	g_strfreev(r->env);
	g_free(r);
}

static void
exec_free(KubesimExec *e)
{
	g_clear_handle_id(&e->free_id, g_source_remove);
	if (e->message_id != 0)
		g_signal_handler_disconnect(e->conn, e->message_id);
	if (e->closed_id != 0)
		g_signal_handler_disconnect(e->conn, e->closed_id);
	g_ptr_array_remove_fast(e->server->execs, e);
	kubesim_shell_free(e->shell);
	g_object_unref(e->conn);
	g_strfreev(e->argv);
	g_free(e);
}

static void
exec_send(KubesimExec *e, guint8 channel, const gchar *data, gsize len)
{
	g_autofree guint8 *frame = NULL;

	if (e->closed || soup_websocket_connection_get_state(e->conn) != SOUP_WEBSOCKET_STATE_OPEN)
		return;
	frame = g_malloc(len + 1);
	frame[0] = channel;
	if (len > 0)
		memcpy(frame + 1, data, len);
	soup_websocket_connection_send_binary(e->conn, frame, len + 1);
}

static void
on_shell_output(gint stream, const gchar *data, gsize len, gpointer user_data)
{
	KubesimExec *e = user_data;

	/* a terminal has one output: stderr goes where stdout goes */
	if (stream == 2 && !e->tty) {
		if (e->want_stderr)
			exec_send(e, CHANNEL_STDERR, data, len);
		return;
	}
	if (e->want_stdout)
		exec_send(e, CHANNEL_STDOUT, data, len);
}

/* Go's %v of the command: [sh -c exit 3] */
static gchar *
command_text(gchar **argv)
{
	g_autofree gchar *joined = g_strjoinv(" ", argv);

	return g_strdup_printf("[%s]", joined);
}

static void
on_shell_exited(gint code, const gchar *error, gpointer user_data)
{
	KubesimExec *e = user_data;
	g_autoptr(GString) status = g_string_new("{\"metadata\":{},\"status\":");

	/* exactly one Status on the error channel, then a normal close */
	if (error != NULL) {
		g_autofree gchar *message = g_strdup_printf(
		        "Internal error occurred: error executing command in container: failed to "
		        "exec in container: %s",
		        error);
		g_string_append(status, "\"Failure\",\"message\":");
		msd_json_string_append(status, message, -1, MSD_JSON_STRING_GO);
		g_string_append(status, ",\"reason\":\"InternalError\",\"details\":{\"causes\":[{"
		                        "\"message\":");
		msd_json_string_append(status, error, -1, MSD_JSON_STRING_GO);
		g_string_append(status, "}]},\"code\":500}");
	} else if (code == 0) {
		g_string_append(status, "\"Success\"}");
	} else {
		g_autofree gchar *cmd = command_text(e->argv);
		g_autofree gchar *message =
		        g_strdup_printf("command terminated with non-zero exit code: error "
		                        "executing command %s, exit code %d",
		                        cmd, code);
		g_string_append(status, "\"Failure\",\"message\":");
		msd_json_string_append(status, message, -1, MSD_JSON_STRING_GO);
		g_string_append_printf(status,
		                       ",\"reason\":\"NonZeroExitCode\",\"details\":{\"causes\":[{"
		                       "\"reason\":\"ExitCode\",\"message\":\"%d\"}]}}",
		                       code);
	}
	g_debug("exec %s ended: %s", e->argv[0], status->str);
	exec_send(e, CHANNEL_ERROR, status->str, status->len);
	if (!e->closed && soup_websocket_connection_get_state(e->conn) == SOUP_WEBSOCKET_STATE_OPEN)
		soup_websocket_connection_close(e->conn, SOUP_WEBSOCKET_CLOSE_NORMAL, NULL);
}

/* {"Width":120,"Height":40}, possibly several, each with a newline */
static void
handle_resize(KubesimExec *e, const gchar *data, gsize len)
{
	g_autoptr(JsonNode) root = NULL;
	g_auto(GStrv) docs = NULL;
	g_autofree gchar *text = g_strndup(data, len);

	docs = g_strsplit(text, "\n", -1);
	for (guint i = 0; docs[i] != NULL; i++) {
		JsonObject *obj;
		if (g_strstrip(docs[i])[0] == '\0')
			continue;
		g_clear_pointer(&root, json_node_unref);
		root = kubesim_json_parse(docs[i], strlen(docs[i]), NULL);
		if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root))
			continue;
		obj = json_node_get_object(root);
		kubesim_shell_resize(
		        e->shell,
		        (guint)CLAMP(json_object_get_int_member_with_default(obj, "Width", 0), 0,
		                     65535),
		        (guint)CLAMP(json_object_get_int_member_with_default(obj, "Height", 0), 0,
		                     65535));
	}
}

static void
on_message(SoupWebsocketConnection *conn, gint type, GBytes *message, gpointer user_data)
{
	KubesimExec *e = user_data;
	gsize len;
	const guint8 *data = g_bytes_get_data(message, &len);

	/* the channel protocols are binary; a text message carries no channel */
	if (type != SOUP_WEBSOCKET_DATA_BINARY || len == 0)
		return;
	switch (data[0]) {
	case CHANNEL_STDIN:
		if (e->want_stdin)
			kubesim_shell_feed(e->shell, (const gchar *)data + 1, len - 1);
		break;
	case CHANNEL_RESIZE:
		handle_resize(e, (const gchar *)data + 1, len - 1);
		break;
	case CHANNEL_CLOSE:
		/* v5: the client half-closed a stream; only stdin is the client's to close */
		if (e->v5 && len >= 2 && data[1] == CHANNEL_STDIN)
			kubesim_shell_close_stdin(e->shell);
		break;
	default:
		break;
	}
}

static gboolean
exec_free_idle(gpointer data)
{
	KubesimExec *e = data;

	e->free_id = 0;
	exec_free(e);
	return G_SOURCE_REMOVE;
}

static void
on_closed(SoupWebsocketConnection *conn, gpointer user_data)
{
	KubesimExec *e = user_data;

	/* freed from the main loop: this may come from inside a send */
	e->closed = TRUE;
	if (e->free_id == 0)
		e->free_id = g_idle_add(exec_free_idle, e);
}

static void
on_wrote_informational(SoupServerMessage *msg, gpointer user_data)
{
	ExecRequest *r = g_object_get_data(G_OBJECT(msg), "kubesim-exec");
	SoupMessageHeaders *req_headers = soup_server_message_get_request_headers(msg);
	SoupMessageHeaders *resp_headers = soup_server_message_get_response_headers(msg);
	KubesimShellContext context = {0};
	g_autoptr(GIOStream) stream = NULL;
	KubesimExec *e;
	guint8 first;

	if (r == NULL || soup_server_message_get_status(msg) != SOUP_STATUS_SWITCHING_PROTOCOLS)
		return;
	g_signal_handlers_disconnect_by_func(msg, on_wrote_informational, user_data);
	stream = soup_server_message_steal_connection(msg);
	e = g_new0(KubesimExec, 1);
	e->server = r->server;
	e->argv = g_strdupv(r->argv);
	e->v5 = r->v5;
	e->want_stdin = r->want_stdin;
	e->want_stdout = r->want_stdout;
	e->want_stderr = r->want_stderr;
	e->tty = r->tty;
	e->conn = soup_websocket_connection_new(
	        stream, soup_server_message_get_uri(msg), SOUP_WEBSOCKET_CONNECTION_SERVER,
	        soup_message_headers_get_one(req_headers, "Origin"),
	        soup_message_headers_get_one(resp_headers, "Sec-WebSocket-Protocol"), NULL);
	/* a real server idles out after hours; pings from the client are answered by libsoup */
	soup_websocket_connection_set_keepalive_interval(e->conn, 0);
	g_ptr_array_add(e->server->execs, e);
	if (e->v5)
		e->server->execs_v5++;
	else
		e->server->execs_v4++;
	g_debug("exec %s over %s", e->argv[0], e->v5 ? PROTOCOL_V5 : PROTOCOL_V4);
	e->message_id = g_signal_connect(e->conn, "message", G_CALLBACK(on_message), e);
	e->closed_id = g_signal_connect(e->conn, "closed", G_CALLBACK(on_closed), e);

	/* as the API server opens: one empty message on the lowest output channel */
	first = e->want_stdout ? CHANNEL_STDOUT
	                       : (e->want_stderr && !e->tty ? CHANNEL_STDERR : CHANNEL_ERROR);
	exec_send(e, first, NULL, 0);

	context.hostname = r->hostname;
	context.namespace_ = r->namespace_;
	context.env = (const gchar *const *)r->env;
	context.tty = r->tty;
	e->shell = kubesim_shell_new((const gchar *const *)e->argv, &context, on_shell_output,
	                             on_shell_exited, e);
	if (!e->want_stdin)
		kubesim_shell_close_stdin(e->shell);
	kubesim_shell_start(e->shell);
	g_object_set_data(G_OBJECT(msg), "kubesim-exec", NULL);
}

/* Whether a comma-separated header holds @token (case-insensitive). */
static gboolean
header_has_token(SoupMessageHeaders *headers, const gchar *name, const gchar *token)
{
	const gchar *value = soup_message_headers_get_list(headers, name);
	g_auto(GStrv) parts = NULL;

	if (value == NULL)
		return FALSE;
	parts = g_strsplit(value, ",", -1);
	for (guint i = 0; parts[i] != NULL; i++)
		if (g_ascii_strcasecmp(g_strstrip(parts[i]), token) == 0)
			return TRUE;
	return FALSE;
}

void
kubesim_exec_handle(KubesimServer *self,
                    SoupServerMessage *msg,
                    KubesimRequest *req,
                    GHashTable *query)
{
	SoupMessageHeaders *headers = soup_server_message_get_request_headers(msg);
	const gchar *method = soup_server_message_get_method(msg);
	const gchar *upgrade = soup_message_headers_get_one(headers, "Upgrade");
	KubesimStatus *status = NULL;
	g_autoptr(KubesimPod) pod = NULL;
	g_autoptr(GPtrArray) commands = NULL;
	KubesimContainer *c;
	ExecRequest *r;
	gchar *protocols[2] = {NULL, NULL};

	if (g_strcmp0(method, "GET") != 0 && g_strcmp0(method, "POST") != 0) {
		kubesim_respond_status(msg, kubesim_status_new(405, "MethodNotAllowed",
		                                               "the server does not allow this "
		                                               "method on the requested resource"));
		return;
	}
	/* the API server's checks come before any upgrade: kubectl shows these */
	pod = kubesim_pod_lookup(self->store, req->namespace_, req->name, &status);
	if (pod == NULL) {
		kubesim_respond_status(msg, status);
		return;
	}
	c = kubesim_pod_pick_container(pod, kubesim_query_get(query, "container"), &status);
	if (c == NULL) {
		kubesim_respond_status(msg, status);
		return;
	}
	if (g_strcmp0(pod->phase, "Succeeded") == 0 || g_strcmp0(pod->phase, "Failed") == 0) {
		kubesim_respond_status(msg, kubesim_status_new(400, "BadRequest",
		                                               "cannot exec into a container in a "
		                                               "completed pod; current phase is %s",
		                                               pod->phase));
		return;
	}
	commands = kubesim_query_get_all(msg, "command");
	if (commands->len == 0) {
		kubesim_respond_status(msg, kubesim_status_new(400, "BadRequest",
		                                               "you must specify at least 1 "
		                                               "command"));
		return;
	}
	if (!kubesim_query_bool(query, "stdin", FALSE) &&
	    !kubesim_query_bool(query, "stdout", FALSE) &&
	    !kubesim_query_bool(query, "stderr", FALSE)) {
		kubesim_respond_status(msg, kubesim_status_new(400, "BadRequest",
		                                               "you must specify at least one of "
		                                               "stdin, stdout, stderr"));
		return;
	}
	if (c->state != NULL && g_strcmp0(c->state, "running") != 0) {
		kubesim_respond_status(msg, kubesim_status_new(400, "BadRequest",
		                                               "unable to upgrade connection: "
		                                               "container not found (\"%s\")",
		                                               c->name));
		return;
	}
	if (upgrade == NULL || !header_has_token(headers, "Connection", "upgrade")) {
		kubesim_respond_status(
		        msg, kubesim_status_new(400, "BadRequest", "Upgrade request required"));
		return;
	}
	if (g_ascii_strcasecmp(upgrade, "websocket") != 0) {
		/* kubectl falls back to SPDY only after a failed WebSocket upgrade: never hang */
		kubesim_respond_status(msg,
		                       kubesim_status_new(400, "BadRequest",
		                                          "kubesim serves exec over WebSockets "
		                                          "(%s, %s) only, not %s",
		                                          PROTOCOL_V5, PROTOCOL_V4, upgrade));
		return;
	}
	/* the best of what the client offers; the kubelet refuses the rest with a bare 403 */
	if (header_has_token(headers, "Sec-WebSocket-Protocol", PROTOCOL_V5))
		protocols[0] = (gchar *)PROTOCOL_V5;
	else if (header_has_token(headers, "Sec-WebSocket-Protocol", PROTOCOL_V4))
		protocols[0] = (gchar *)PROTOCOL_V4;
	if (protocols[0] == NULL) {
		g_debug("exec: no protocol we speak in %s",
		        soup_message_headers_get_list(headers, "Sec-WebSocket-Protocol"));
		soup_server_message_set_status(msg, SOUP_STATUS_FORBIDDEN, NULL);
		return;
	}
	if (!soup_websocket_server_process_handshake(msg, NULL, protocols, NULL, NULL))
		return; /* libsoup answered the bad handshake */

	r = g_new0(ExecRequest, 1);
	r->server = self;
	g_ptr_array_add(commands, NULL);
	r->argv = (gchar **)g_ptr_array_steal(commands, NULL);
	r->v5 = protocols[0] == (gchar *)PROTOCOL_V5;
	r->want_stdin = kubesim_query_bool(query, "stdin", FALSE);
	r->want_stdout = kubesim_query_bool(query, "stdout", FALSE);
	r->want_stderr = kubesim_query_bool(query, "stderr", FALSE);
	r->tty = kubesim_query_bool(query, "tty", FALSE);
	r->hostname = g_strdup(pod->hostname);
	r->namespace_ = g_strdup(pod->namespace_);
	r->env = g_strdupv(c->env);
	g_object_set_data_full(G_OBJECT(msg), "kubesim-exec", r, exec_request_free);
	g_signal_connect(msg, "wrote-informational", G_CALLBACK(on_wrote_informational), NULL);
}

void
kubesim_exec_close_all(KubesimServer *self)
{
	/* a restarted server drops its connections: no Status, no closing handshake */
	while (self->execs->len > 0) {
		KubesimExec *e = g_ptr_array_index(self->execs, self->execs->len - 1);
		e->closed = TRUE;
		g_signal_handler_disconnect(e->conn, e->closed_id);
		e->closed_id = 0;
		if (soup_websocket_connection_get_state(e->conn) == SOUP_WEBSOCKET_STATE_OPEN)
			soup_websocket_connection_close(e->conn, SOUP_WEBSOCKET_CLOSE_GOING_AWAY,
			                                NULL);
		exec_free(e);
	}
}
