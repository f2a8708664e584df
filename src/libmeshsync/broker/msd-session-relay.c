/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * One file: the relay's request handling, its limits and counters and each session's
 * forwarding share the relay's table of open sessions and its one kube client; the session
 * itself (meshsync-session.c) and the subjects (msd-session-subject.c) stand alone.
 */

#define G_LOG_DOMAIN "MeshSyncBroker"

#include "config.h"

#include <string.h>

#include "broker/msd-envelope.h"
#include "broker/msd-session-relay.h"
#include "broker/msd-session-subject.h"
#include "kube/msd-kube-client.h"
#include "meshsync-error.h"
#include "meshsync-session-private.h"
#include "util/msd-json-string.h"
#include "util/msd-json-object.h"
#include "util/msd-i18n.h"

#define MSD_SESSIONS_REFUSED_METRIC "meshsync_sessions_refused_total"
#define MSD_SESSIONS_REFUSED_HELP   "Log and exec session requests refused, by kind and reason"
#define MSD_SESSIONS_STARTED_METRIC "meshsync_sessions_started_total"
#define MSD_SESSIONS_STARTED_HELP   "Log and exec sessions started, by kind"
#define MSD_SESSIONS_FAILED_METRIC  "meshsync_sessions_failed_total"
#define MSD_SESSIONS_FAILED_HELP    "Log and exec sessions that ended with an error, by kind"
#define MSD_SESSIONS_DROPPED_METRIC "meshsync_session_messages_dropped_total"
#define MSD_SESSIONS_DROPPED_HELP   "Session messages the broker did not take"
#define MSD_SESSIONS_ACTIVE_METRIC  "meshsync_sessions_active"
#define MSD_SESSIONS_ACTIVE_HELP    "Log and exec sessions open now, by kind"

struct _MsdSessionRelay {
	GObject parent_instance;

	MeshSyncBus *bus;           /* (owned) */
	MeshSyncKubeConfig *config; /* (owned) */
	MsdEngineContext *engine;   /* (owned): whose kube client the sessions use */
	MsdKubeClient *client; /* (owned) (nullable): the engine's, taken at the first session */
	MsdMetrics *metrics;   /* (owned) (nullable) */
	GHashTable *entries;   /* session id → MsdRelayEntry */
	guint max_sessions;
	gboolean exec_enabled;
	GStrv exec_namespaces; /* (nullable) */
	guint exec_idle_seconds;
	gboolean stopped;
	gboolean publish_failing;
};

G_DEFINE_FINAL_TYPE(MsdSessionRelay, msd_session_relay, G_TYPE_OBJECT)

enum {
	SIGNAL_CHANGED,
	N_SIGNALS,
};

static guint signals[N_SIGNALS];

typedef struct {
	MsdSessionRelay *relay;   /* (unowned): the relay owns the entry */
	MeshSyncSession *session; /* (owned) */
	gchar *id;
	gchar *request_id;
	guint input_subscription;
} MsdRelayEntry;

/* One request of a payload, with Go's decoding: any case of the key, the last one wins. */
typedef struct {
	gchar *id;
	gchar *name;
	gchar *namespace_;
	gchar *container;
	gboolean follow;
	gboolean previous;
	gboolean stop;
	gint64 tail_lines;
} MsdSessionRequest;

static void
msd_session_request_clear(MsdSessionRequest *req)
{
	g_free(req->id);
	g_free(req->name);
	g_free(req->namespace_);
	g_free(req->container);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(MsdSessionRequest, msd_session_request_clear)

static void
msd_relay_entry_free(gpointer data)
{
	MsdRelayEntry *entry = data;

	if (entry->input_subscription != 0)
		meshsync_bus_unsubscribe(entry->relay->bus, entry->input_subscription);
	g_signal_handlers_disconnect_by_data(entry->session, entry);
	/* a session still running when its entry goes (dispose) is ended quietly */
	meshsync_session_stop(entry->session);
	g_object_unref(entry->session);
	g_free(entry->id);
	g_free(entry->request_id);
	g_free(entry);
}

static const gchar *
msd_kind_label(MeshSyncSessionKind kind)
{
	return kind == MESHSYNC_SESSION_KIND_LOG ? "log" : "exec";
}

/* ------------------------------------------------------------------------------------------
 * publishing
 */

static void
msd_session_relay_publish(MsdSessionRelay *self, const gchar *subject, GString *envelope)
{
	g_autoptr(GBytes) payload = g_bytes_new(envelope->str, envelope->len);
	g_autoptr(GError) error = NULL;

	if (meshsync_bus_publish(self->bus, subject, payload, &error)) {
		self->publish_failing = FALSE;
		return;
	}
	/* a stream goes on while the broker is away: say so once per outage, not per chunk */
	if (!self->publish_failing)
		g_message("%s (further session output is dropped until the broker takes it)",
		          error->message);
	else
		g_debug("%s", error->message);
	self->publish_failing = TRUE;
	if (self->metrics != NULL)
		msd_metrics_counter_add(self->metrics, MSD_SESSIONS_DROPPED_METRIC,
		                        MSD_SESSIONS_DROPPED_HELP, 1, NULL);
}

static void
msd_append_go_string(GString *out, const gchar *data, gsize len)
{
	msd_json_string_append(out, data, (gssize)len, MSD_JSON_STRING_GO);
}

/* Upstream's LogObject: every key omitempty. */
static void
msd_session_relay_publish_log(MsdSessionRelay *self,
                              const gchar *object_type,
                              const gchar *event_type,
                              const gchar *request_id,
                              const gchar *data,
                              gsize len,
                              const gchar *pod,
                              const gchar *container)
{
	g_autoptr(GString) env = g_string_sized_new(len + 256);
	const gchar *keys[] = {"id", "data", "primary", "secondary"};
	const gchar *values[] = {request_id, data, pod, container};
	gsize lens[] = {0, len, 0, 0};
	gboolean first = TRUE;

	msd_envelope_append_head(env, object_type, event_type);
	g_string_append_c(env, '{');
	for (guint i = 0; i < G_N_ELEMENTS(keys); i++) {
		gsize n = values[i] == NULL ? 0 : (i == 1 ? lens[i] : strlen(values[i]));

		if (n == 0)
			continue;
		if (!first)
			g_string_append_c(env, ',');
		first = FALSE;
		g_string_append_printf(env, "\"%s\":", keys[i]);
		msd_append_go_string(env, values[i], n);
	}
	g_string_append_c(env, '}');
	msd_envelope_append_tail(env);
	msd_session_relay_publish(self, MSD_SUBJECT_LOGS, env);
}

static void
msd_session_relay_publish_exec(MsdSessionRelay *self,
                               const gchar *subject,
                               const gchar *object_type,
                               const gchar *data,
                               gsize len)
{
	g_autoptr(GString) env = g_string_sized_new(len + 96);

	msd_envelope_append_head(env, object_type, "");
	msd_append_go_string(env, data, len);
	msd_envelope_append_tail(env);
	msd_session_relay_publish(self, subject, env);
}

static void
msd_session_relay_publish_active(MsdSessionRelay *self)
{
	g_autofree gchar *list = msd_session_relay_dup_active_json(self);
	g_autoptr(GString) env = g_string_new(NULL);

	msd_envelope_append_head(env, "active-exec", "");
	g_string_append(env, list);
	msd_envelope_append_tail(env);
	msd_session_relay_publish(self, "active_sessions.exec", env);
}

/* ------------------------------------------------------------------------------------------
 * metrics
 */

static void
msd_session_relay_count(MsdSessionRelay *self,
                        const gchar *metric,
                        const gchar *help,
                        MeshSyncSessionKind kind,
                        const gchar *reason)
{
	if (self->metrics == NULL)
		return;
	if (reason != NULL)
		msd_metrics_counter_add(self->metrics, metric, help, 1, "kind",
		                        msd_kind_label(kind), "reason", reason, NULL);
	else
		msd_metrics_counter_add(self->metrics, metric, help, 1, "kind",
		                        msd_kind_label(kind), NULL);
}

/* Why a session request is refused, and whether a log session can be (exec-disabled and
 * namespace refuse exec sessions only). */
static const struct {
	const gchar *reason;
	gboolean log;
} msd_refusal_reasons[] = {
        {"stopping", TRUE}, {"exec-disabled", FALSE}, {"namespace", FALSE},
        {"limit", TRUE},    {"config", TRUE},         {"invalid", TRUE},
};

/* Every series the counts can take, at zero, so that they are there from the start. */
void
msd_session_relay_declare_metrics(MsdMetrics *metrics)
{
	static const MeshSyncSessionKind kinds[] = {MESHSYNC_SESSION_KIND_LOG,
	                                            MESHSYNC_SESSION_KIND_EXEC};

	msd_metrics_counter_add(metrics, MSD_SESSIONS_DROPPED_METRIC, MSD_SESSIONS_DROPPED_HELP, 0,
	                        NULL);
	for (guint k = 0; k < G_N_ELEMENTS(kinds); k++) {
		const gchar *kind = msd_kind_label(kinds[k]);

		msd_metrics_counter_add(metrics, MSD_SESSIONS_STARTED_METRIC,
		                        MSD_SESSIONS_STARTED_HELP, 0, "kind", kind, NULL);
		msd_metrics_counter_add(metrics, MSD_SESSIONS_FAILED_METRIC,
		                        MSD_SESSIONS_FAILED_HELP, 0, "kind", kind, NULL);
		for (guint r = 0; r < G_N_ELEMENTS(msd_refusal_reasons); r++) {
			if (kinds[k] == MESHSYNC_SESSION_KIND_LOG && !msd_refusal_reasons[r].log)
				continue;
			msd_metrics_counter_add(metrics, MSD_SESSIONS_REFUSED_METRIC,
			                        MSD_SESSIONS_REFUSED_HELP, 0, "kind", kind,
			                        "reason", msd_refusal_reasons[r].reason, NULL);
		}
	}
}

static gdouble
msd_session_relay_count_kind(MsdSessionRelay *self, MeshSyncSessionKind kind)
{
	GHashTableIter iter;
	gpointer value;
	guint n = 0;

	g_hash_table_iter_init(&iter, self->entries);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		MsdRelayEntry *entry = value;

		if (meshsync_session_get_kind(entry->session) == kind)
			n++;
	}
	return n;
}

static gdouble
msd_session_relay_active_logs(gpointer data)
{
	return msd_session_relay_count_kind(data, MESHSYNC_SESSION_KIND_LOG);
}

static gdouble
msd_session_relay_active_exec(gpointer data)
{
	return msd_session_relay_count_kind(data, MESHSYNC_SESSION_KIND_EXEC);
}

static void
msd_session_relay_set_metrics(MsdSessionRelay *self, MsdMetrics *metrics)
{
	g_return_if_fail(MSD_IS_SESSION_RELAY(self));

	if (self->metrics != NULL) {
		msd_metrics_remove(self->metrics, MSD_SESSIONS_ACTIVE_METRIC, "kind", "log", NULL);
		msd_metrics_remove(self->metrics, MSD_SESSIONS_ACTIVE_METRIC, "kind", "exec", NULL);
	}
	g_set_object(&self->metrics, metrics);
	if (metrics == NULL)
		return;
	msd_metrics_gauge_set_func(metrics, MSD_SESSIONS_ACTIVE_METRIC, MSD_SESSIONS_ACTIVE_HELP,
	                           msd_session_relay_active_logs, self, NULL, "kind", "log", NULL);
	msd_metrics_gauge_set_func(metrics, MSD_SESSIONS_ACTIVE_METRIC, MSD_SESSIONS_ACTIVE_HELP,
	                           msd_session_relay_active_exec, self, NULL, "kind", "exec", NULL);
	msd_session_relay_declare_metrics(metrics);
}

/* ------------------------------------------------------------------------------------------
 * session events
 */

static void
msd_relay_entry_output_cb(MeshSyncSession *session, GBytes *data, MsdRelayEntry *entry)
{
	gsize len = 0;
	const gchar *bytes = g_bytes_get_data(data, &len);

	if (meshsync_session_get_kind(session) == MESHSYNC_SESSION_KIND_LOG)
		msd_session_relay_publish_log(
		        entry->relay, "log-stream", "ADDED", entry->request_id, bytes, len,
		        meshsync_session_get_pod(session), meshsync_session_get_container(session));
	else
		msd_session_relay_publish_exec(entry->relay, entry->id, "exec-output", bytes, len);
}

static void
msd_relay_entry_error_cb(MeshSyncSession *session, const GError *error, MsdRelayEntry *entry)
{
	MeshSyncSessionKind kind = meshsync_session_get_kind(session);

	g_message("%s session %s: %s", msd_kind_label(kind), entry->id, error->message);
	msd_session_relay_count(entry->relay, MSD_SESSIONS_FAILED_METRIC, MSD_SESSIONS_FAILED_HELP,
	                        kind, NULL);
	/* upstream stays silent about a log that cannot be opened; the viewer is told here */
	if (kind == MESHSYNC_SESSION_KIND_LOG)
		msd_session_relay_publish_log(entry->relay, "error", "ERROR", entry->request_id,
		                              error->message, strlen(error->message),
		                              meshsync_session_get_pod(session),
		                              meshsync_session_get_container(session));
	else
		msd_session_relay_publish_exec(entry->relay, entry->id, "error", error->message,
		                               strlen(error->message));
}

static void
msd_relay_entry_closed_cb(MeshSyncSession *session, MsdRelayEntry *entry)
{
	MsdSessionRelay *self = entry->relay;

	g_debug("session %s closed", entry->id);
	/* frees the entry: the session keeps itself alive while it emits */
	g_hash_table_remove(self->entries, entry->id);
	g_signal_emit(self, signals[SIGNAL_CHANGED], 0);
}

static void msd_relay_entry_input_cb(MeshSyncBus *bus,
                                     const gchar *subject,
                                     const gchar *reply,
                                     GBytes *payload,
                                     gpointer user_data);

/* ------------------------------------------------------------------------------------------
 * requests
 */

static gboolean
msd_read_string(JsonObject *object, const gchar *name, gchar **out, GError **error)
{
	JsonNode *node = msd_json_object_get_member_folded(object, name);

	if (node == NULL || JSON_NODE_HOLDS_NULL(node))
		return TRUE;
	if (!JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_STRING) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("\"%s\" is not a string"), name);
		return FALSE;
	}
	g_free(*out);
	*out = g_strdup(json_node_get_string(node));
	return TRUE;
}

static gboolean
msd_read_bool(JsonObject *object, const gchar *name, gboolean *out, GError **error)
{
	JsonNode *node = msd_json_object_get_member_folded(object, name);

	if (node == NULL || JSON_NODE_HOLDS_NULL(node))
		return TRUE;
	if (!JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_BOOLEAN) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("\"%s\" is not a boolean"), name);
		return FALSE;
	}
	*out = json_node_get_boolean(node);
	return TRUE;
}

static gboolean
msd_read_int(JsonObject *object, const gchar *name, gint64 *out, GError **error)
{
	JsonNode *node = msd_json_object_get_member_folded(object, name);

	if (node == NULL || JSON_NODE_HOLDS_NULL(node))
		return TRUE;
	if (!JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_INT64) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("\"%s\" is not an integer"), name);
		return FALSE;
	}
	*out = json_node_get_int(node);
	return TRUE;
}

static gboolean
msd_session_request_read(JsonNode *node, MsdSessionRequest *req, GError **error)
{
	JsonObject *object;

	if (!JSON_NODE_HOLDS_OBJECT(node)) {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		                    _("the request is not an object"));
		return FALSE;
	}
	object = json_node_get_object(node);
	return msd_read_string(object, "id", &req->id, error) &&
	       msd_read_string(object, "name", &req->name, error) &&
	       msd_read_string(object, "namespace", &req->namespace_, error) &&
	       msd_read_string(object, "container", &req->container, error) &&
	       msd_read_bool(object, "follow", &req->follow, error) &&
	       msd_read_bool(object, "previous", &req->previous, error) &&
	       msd_read_bool(object, "stop", &req->stop, error) &&
	       msd_read_int(object, "taillines", &req->tail_lines, error);
}

static MsdKubeClient *
msd_session_relay_get_client(MsdSessionRelay *self, GError **error)
{
	MsdKubeClient *client;

	if (self->client != NULL)
		return self->client;
	/* the engine's own client: sessions share its connection pool with the informers */
	client = msd_engine_context_get_kube_client(self->engine, self->config, error);
	if (client == NULL)
		return NULL;
	/* sessions come in bursts (a dashboard opening many shells); their requests do not
	 * keep their connections (MSD_KUBE_REQUEST_ONE_SHOT), so the pool's idle timeout stays
	 * libsoup's own: a 5 s one let libsoup 3.2 free a connection a message was still
	 * reading from (doc/reliability.md finding 26) */
	self->client = g_object_ref(client);
	return self->client;
}

/* Refuses a request: logged, counted, and told to the requester on its subject. */
static void
msd_session_relay_refuse(MsdSessionRelay *self,
                         MeshSyncSessionKind kind,
                         const gchar *id,
                         const MsdSessionRequest *req,
                         const gchar *reason,
                         const gchar *message)
{
	g_message("%s session %s refused: %s", msd_kind_label(kind), id, message);
	msd_session_relay_count(self, MSD_SESSIONS_REFUSED_METRIC, MSD_SESSIONS_REFUSED_HELP, kind,
	                        reason);
	if (kind == MESHSYNC_SESSION_KIND_LOG)
		msd_session_relay_publish_log(self, "error", "ERROR", req->id, message,
		                              strlen(message), req->name, req->container);
	else
		msd_session_relay_publish_exec(self, id, "error", message, strlen(message));
}

static gboolean
msd_session_relay_exec_allowed(MsdSessionRelay *self, const gchar *ns)
{
	if (self->exec_namespaces == NULL)
		return TRUE;
	return g_strv_contains((const gchar *const *)self->exec_namespaces, ns != NULL ? ns : "");
}

/* What both kinds check before a session exists; returns FALSE after refusing. */
static gboolean
msd_session_relay_admit(MsdSessionRelay *self,
                        MeshSyncSessionKind kind,
                        const gchar *id,
                        const MsdSessionRequest *req)
{
	g_autofree gchar *message = NULL;

	if (self->stopped) {
		msd_session_relay_refuse(self, kind, id, req, "stopping",
		                         _("meshsync is stopping"));
		return FALSE;
	}
	if (kind == MESHSYNC_SESSION_KIND_EXEC && !self->exec_enabled) {
		msd_session_relay_refuse(self, kind, id, req, "exec-disabled",
		                         _("exec sessions are disabled on this meshsync"));
		return FALSE;
	}
	if (kind == MESHSYNC_SESSION_KIND_EXEC &&
	    !msd_session_relay_exec_allowed(self, req->namespace_)) {
		message = g_strdup_printf(_("exec sessions are not allowed in namespace \"%s\""),
		                          req->namespace_ != NULL ? req->namespace_ : "");
		msd_session_relay_refuse(self, kind, id, req, "namespace", message);
		return FALSE;
	}
	if (g_hash_table_size(self->entries) >= self->max_sessions) {
		message = g_strdup_printf(_("too many sessions: the limit of %u is reached"),
		                          self->max_sessions);
		msd_session_relay_refuse(self, kind, id, req, "limit", message);
		return FALSE;
	}
	return TRUE;
}

static void
msd_session_relay_open(MsdSessionRelay *self,
                       MeshSyncSessionKind kind,
                       gchar *id,
                       const MsdSessionRequest *req)
{
	g_autoptr(GError) error = NULL;
	MsdKubeClient *client;
	MsdRelayEntry *entry;

	client = msd_session_relay_get_client(self, &error);
	if (client == NULL) {
		msd_session_relay_refuse(self, kind, id, req, "config", error->message);
		return;
	}
	entry = g_new0(MsdRelayEntry, 1);
	entry->relay = self;
	entry->id = g_strdup(id);
	entry->request_id = g_strdup(req->id);
	if (kind == MESHSYNC_SESSION_KIND_LOG) {
		entry->session = meshsync_session_new_log(self->config, req->namespace_, req->name,
		                                          req->container);
		meshsync_session_set_follow(entry->session, req->follow);
		meshsync_session_set_previous(entry->session, req->previous);
		/* upstream always sends these two: timestamps on, tailLines as given (0: none) */
		meshsync_session_set_timestamps(entry->session, TRUE);
		meshsync_session_set_tail_lines(entry->session, MAX(req->tail_lines, 0));
	} else {
		entry->session = meshsync_session_new_exec(self->config, req->namespace_, req->name,
		                                           req->container, NULL);
		meshsync_session_set_idle_timeout(entry->session, self->exec_idle_seconds);
	}
	meshsync_session_set_id(entry->session, id);
	meshsync_session_set_client(entry->session, client);
	g_signal_connect(entry->session, "output", G_CALLBACK(msd_relay_entry_output_cb), entry);
	g_signal_connect(entry->session, "error", G_CALLBACK(msd_relay_entry_error_cb), entry);
	g_signal_connect(entry->session, "closed", G_CALLBACK(msd_relay_entry_closed_cb), entry);
	g_hash_table_insert(self->entries, entry->id, entry);
	g_signal_emit(self, signals[SIGNAL_CHANGED], 0);

	if (kind == MESHSYNC_SESSION_KIND_EXEC) {
		g_autofree gchar *input = g_strconcat("input.", id, NULL);
		g_autofree gchar *queue = g_uuid_string_random();

		/* a fresh queue group per session, as upstream: replicas never share an input */
		entry->input_subscription = meshsync_bus_subscribe(
		        self->bus, input, queue, msd_relay_entry_input_cb, entry, NULL, &error);
		if (entry->input_subscription == 0) {
			msd_session_relay_publish_exec(self, id, "error", error->message,
			                               strlen(error->message));
			g_hash_table_remove(self->entries, id);
			g_signal_emit(self, signals[SIGNAL_CHANGED], 0);
			return;
		}
		msd_session_relay_publish_active(self);
	}
	g_info("%s session %s started", msd_kind_label(kind), id);
	msd_session_relay_count(self, MSD_SESSIONS_STARTED_METRIC, MSD_SESSIONS_STARTED_HELP, kind,
	                        NULL);
	meshsync_session_start(entry->session);
}

static void
msd_session_relay_handle_one(MsdSessionRelay *self, MeshSyncSessionKind kind, JsonNode *node)
{
	g_auto(MsdSessionRequest) req = {0};
	g_autoptr(GError) error = NULL;
	g_autofree gchar *id = NULL;
	MsdRelayEntry *entry;

	if (!msd_session_request_read(node, &req, &error)) {
		g_message("ignoring a %s request: %s", msd_kind_label(kind), error->message);
		msd_session_relay_count(self, MSD_SESSIONS_REFUSED_METRIC,
		                        MSD_SESSIONS_REFUSED_HELP, kind, "invalid");
		return;
	}
	id = kind == MESHSYNC_SESSION_KIND_LOG
	             ? msd_session_subject_logs(req.namespace_, req.name, req.container)
	             : msd_session_subject_exec(req.namespace_, req.name, req.container, req.id);
	entry = g_hash_table_lookup(self->entries, id);
	if (req.stop) {
		if (entry != NULL) {
			g_info("%s session %s: stop requested", msd_kind_label(kind), id);
			meshsync_session_stop(entry->session);
		}
		return;
	}
	if (entry != NULL) {
		/* a second viewer of the same container shares the stream */
		g_debug("%s session %s runs already", msd_kind_label(kind), id);
		return;
	}
	if (!msd_session_relay_admit(self, kind, id, &req))
		return;
	msd_session_relay_open(self, kind, id, &req);
}

static void
msd_session_relay_handle(MsdSessionRelay *self, MeshSyncSessionKind kind, JsonNode *payload)
{
	JsonObject *requests;
	g_autoptr(GList) members = NULL;

	if (payload == NULL || !JSON_NODE_HOLDS_OBJECT(payload)) {
		g_message("ignoring a %s request whose payload is not an object",
		          msd_kind_label(kind));
		msd_session_relay_count(self, MSD_SESSIONS_REFUSED_METRIC,
		                        MSD_SESSIONS_REFUSED_HELP, kind, "invalid");
		return;
	}
	requests = json_node_get_object(payload);
	members = json_object_get_members(requests);
	for (GList *l = members; l != NULL; l = l->next)
		msd_session_relay_handle_one(self, kind, json_object_get_member(requests, l->data));
}

void
msd_session_relay_handle_logs(MsdSessionRelay *self, JsonNode *payload)
{
	g_return_if_fail(MSD_IS_SESSION_RELAY(self));
	msd_session_relay_handle(self, MESHSYNC_SESSION_KIND_LOG, payload);
}

void
msd_session_relay_handle_exec(MsdSessionRelay *self, JsonNode *payload)
{
	g_return_if_fail(MSD_IS_SESSION_RELAY(self));
	msd_session_relay_handle(self, MESHSYNC_SESSION_KIND_EXEC, payload);
}

/* Upstream reads the envelope of each input message and writes a string Object, plus a
 * newline, to the shell; anything else is ignored. */
static void
msd_relay_entry_input_cb(MeshSyncBus *bus,
                         const gchar *subject,
                         const gchar *reply,
                         GBytes *payload,
                         gpointer user_data)
{
	MsdRelayEntry *entry = user_data;
	g_autoptr(JsonParser) parser = json_parser_new_immutable();
	g_autoptr(GError) error = NULL;
	g_autoptr(GString) line = NULL;
	gsize len = 0;
	const gchar *data = g_bytes_get_data(payload, &len);
	JsonNode *root;
	JsonNode *type;
	JsonNode *object;

	if (data == NULL || len > G_MAXSSIZE ||
	    !json_parser_load_from_data(parser, data, (gssize)len, NULL) ||
	    (root = json_parser_get_root(parser)) == NULL || !JSON_NODE_HOLDS_OBJECT(root)) {
		g_message("session %s: ignoring input that is not an envelope", entry->id);
		return;
	}
	type = msd_json_object_get_member_folded(json_node_get_object(root), "ObjectType");
	object = msd_json_object_get_member_folded(json_node_get_object(root), "Object");
	if (type == NULL || !JSON_NODE_HOLDS_VALUE(type) ||
	    json_node_get_value_type(type) != G_TYPE_STRING ||
	    !g_str_equal(json_node_get_string(type), "exec-input") || object == NULL ||
	    !JSON_NODE_HOLDS_VALUE(object) || json_node_get_value_type(object) != G_TYPE_STRING) {
		g_debug("session %s: ignoring a message that is no exec-input string", entry->id);
		return;
	}
	line = g_string_new(json_node_get_string(object));
	g_string_append_c(line, '\n');
	if (!meshsync_session_write(entry->session, (const guint8 *)line->str, line->len, &error))
		g_message("%s", error->message);
}

/* ------------------------------------------------------------------------------------------ */

gchar *
msd_session_relay_dup_active_json(MsdSessionRelay *self)
{
	g_autoptr(GString) out = g_string_new("[");
	g_autoptr(GList) ids = NULL;

	g_return_val_if_fail(MSD_IS_SESSION_RELAY(self), g_strdup("[]"));

	ids = g_list_sort(g_hash_table_get_keys(self->entries), (GCompareFunc)g_strcmp0);
	for (GList *l = ids; l != NULL; l = l->next) {
		if (l != ids)
			g_string_append_c(out, ',');
		msd_json_string_append(out, l->data, -1, MSD_JSON_STRING_GO);
	}
	g_string_append_c(out, ']');
	return g_string_free(g_steal_pointer(&out), FALSE);
}

GPtrArray *
msd_session_relay_dup_sessions(MsdSessionRelay *self)
{
	GPtrArray *sessions = g_ptr_array_new_with_free_func(g_object_unref);
	GHashTableIter iter;
	gpointer value;

	g_return_val_if_fail(MSD_IS_SESSION_RELAY(self), sessions);

	g_hash_table_iter_init(&iter, self->entries);
	while (g_hash_table_iter_next(&iter, NULL, &value))
		g_ptr_array_add(sessions, g_object_ref(((MsdRelayEntry *)value)->session));
	return sessions;
}

void
msd_session_relay_stop_all(MsdSessionRelay *self)
{
	g_autoptr(GPtrArray) sessions = NULL;

	g_return_if_fail(MSD_IS_SESSION_RELAY(self));

	self->stopped = TRUE;
	sessions = msd_session_relay_dup_sessions(self);
	if (sessions->len > 0)
		g_info("stopping %u sessions", sessions->len);
	for (guint i = 0; i < sessions->len; i++)
		meshsync_session_stop(g_ptr_array_index(sessions, i));
	if (g_hash_table_size(self->entries) > 0) {
		g_hash_table_remove_all(self->entries);
		g_signal_emit(self, signals[SIGNAL_CHANGED], 0);
	}
}

void
msd_session_relay_set_limits(MsdSessionRelay *self,
                             guint max_sessions,
                             gboolean exec_enabled,
                             const gchar *const *exec_namespaces,
                             guint exec_idle_seconds)
{
	g_return_if_fail(MSD_IS_SESSION_RELAY(self));

	self->max_sessions = max_sessions;
	self->exec_enabled = exec_enabled;
	g_strfreev(self->exec_namespaces);
	self->exec_namespaces = exec_namespaces != NULL && exec_namespaces[0] != NULL
	                                ? g_strdupv((gchar **)exec_namespaces)
	                                : NULL;
	self->exec_idle_seconds = exec_idle_seconds;
}

static void
msd_session_relay_dispose(GObject *object)
{
	MsdSessionRelay *self = MSD_SESSION_RELAY(object);

	if (self->entries != NULL)
		msd_session_relay_stop_all(self);
	msd_session_relay_set_metrics(self, NULL);
	G_OBJECT_CLASS(msd_session_relay_parent_class)->dispose(object);
}

static void
msd_session_relay_finalize(GObject *object)
{
	MsdSessionRelay *self = MSD_SESSION_RELAY(object);

	g_hash_table_unref(self->entries);
	g_clear_object(&self->client);
	g_clear_object(&self->engine);
	g_clear_object(&self->bus);
	g_clear_object(&self->config);
	g_strfreev(self->exec_namespaces);
	G_OBJECT_CLASS(msd_session_relay_parent_class)->finalize(object);
}

static void
msd_session_relay_class_init(MsdSessionRelayClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->dispose = msd_session_relay_dispose;
	object_class->finalize = msd_session_relay_finalize;

	/* ::changed: a session was added or removed. */
	signals[SIGNAL_CHANGED] =
	        g_signal_new("changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
	                     NULL, G_TYPE_NONE, 0);
}

static void
msd_session_relay_init(MsdSessionRelay *self)
{
	self->entries = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, msd_relay_entry_free);
	self->max_sessions = MSD_SESSION_DEFAULT_MAX;
	self->exec_enabled = TRUE;
	self->exec_idle_seconds = MSD_SESSION_DEFAULT_IDLE_SECONDS;
}

MsdSessionRelay *
msd_session_relay_new(MeshSyncBus *bus, MsdEngineContext *engine, MeshSyncKubeConfig *config)
{
	MsdSessionRelay *self;

	g_return_val_if_fail(MESHSYNC_IS_BUS(bus), NULL);
	g_return_val_if_fail(MSD_IS_ENGINE_CONTEXT(engine), NULL);
	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(config), NULL);

	self = g_object_new(MSD_TYPE_SESSION_RELAY, NULL);
	self->bus = g_object_ref(bus);
	self->engine = g_object_ref(engine);
	self->config = g_object_ref(config);
	msd_session_relay_set_metrics(self, msd_engine_context_get_metrics(engine));
	return self;
}
