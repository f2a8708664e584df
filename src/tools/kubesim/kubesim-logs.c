/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-server.h"

#include <string.h>

#include "kubesim-pod.h"

/*
 * Pod logs, as the kubelet serves them through the API server. A container instance's output is
 * a few startup lines made up from its container ID (the same every time), then whatever
 * /kubesim/logs appended to it. Only appended lines are stored, per instance and capped, so
 * 100,000 pods cost nothing until a test writes to one.
 */

#define LOG_MAX_LINES     10000
#define LOG_MAX_BYTES     (1024 * 1024)
#define LOG_MAX_LINE      (64 * 1024)
#define FOLLOW_MAX_QUEUED (8 * 1024 * 1024)

typedef struct {
	gint64 time; /* µs since the epoch */
	gchar *text; /* without its newline */
} LogLine;

typedef struct _Follower Follower;

/* The appended output of one container instance, and who follows it. */
typedef struct {
	gchar *id; /* the container ID */
	gchar *uid;
	gchar *container;
	GQueue lines; /* LogLine */
	gsize bytes;
	GPtrArray *followers; /* Follower */
} ContainerLog;

struct _Follower {
	KubesimServer *server;
	ContainerLog *log;
	SoupServerMessage *msg;
	gboolean timestamps;
	gint64 limit; /* bytes still allowed; -1 without limitBytes */
	gsize queued;
	gulong finished_id;
	gulong wrote_id;
	GSource *hangup_source;
	gboolean io_running;
};

struct _KubesimLogs {
	GHashTable *by_id; /* container ID → ContainerLog */
	GHashTable *uids;  /* pod uid → number of ContainerLogs */
};

static void
log_line_free(gpointer data)
{
	LogLine *line = data;

	g_free(line->text);
	g_free(line);
}

static void follower_end(Follower *f);

static void
container_log_free(gpointer data)
{
	ContainerLog *log = data;

	while (log->followers->len > 0)
		follower_end(g_ptr_array_index(log->followers, log->followers->len - 1));
	g_ptr_array_unref(log->followers);
	g_queue_clear_full(&log->lines, log_line_free);
	g_free(log->id);
	g_free(log->uid);
	g_free(log->container);
	g_free(log);
}

KubesimLogs *
kubesim_logs_new(void)
{
	KubesimLogs *logs = g_new0(KubesimLogs, 1);

	logs->by_id = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, container_log_free);
	logs->uids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	return logs;
}

void
kubesim_logs_clear(KubesimLogs *logs)
{
	g_hash_table_remove_all(logs->by_id);
	g_hash_table_remove_all(logs->uids);
}

void
kubesim_logs_free(KubesimLogs *logs)
{
	if (logs == NULL)
		return;
	kubesim_logs_clear(logs);
	g_hash_table_unref(logs->by_id);
	g_hash_table_unref(logs->uids);
	g_free(logs);
}

static void
logs_remove(KubesimLogs *logs, ContainerLog *log)
{
	guint n = GPOINTER_TO_UINT(g_hash_table_lookup(logs->uids, log->uid));

	if (n <= 1)
		g_hash_table_remove(logs->uids, log->uid);
	else
		g_hash_table_insert(logs->uids, g_strdup(log->uid), GUINT_TO_POINTER(n - 1));
	g_hash_table_remove(logs->by_id, log->id);
}

static ContainerLog *
logs_get(KubesimLogs *logs, KubesimPod *pod, KubesimContainer *c, const gchar *id)
{
	ContainerLog *log = g_hash_table_lookup(logs->by_id, id);
	guint n;

	if (log != NULL)
		return log;
	log = g_new0(ContainerLog, 1);
	log->id = g_strdup(id);
	log->uid = g_strdup(pod->uid);
	log->container = g_strdup(c->name);
	g_queue_init(&log->lines);
	log->followers = g_ptr_array_new();
	g_hash_table_insert(logs->by_id, log->id, log);
	n = GPOINTER_TO_UINT(g_hash_table_lookup(logs->uids, pod->uid));
	g_hash_table_insert(logs->uids, g_strdup(pod->uid), GUINT_TO_POINTER(n + 1));
	return log;
}

/* ---- the made-up startup output ---- */

static void
add_line(GPtrArray *out, gint64 time, gchar *text)
{
	LogLine *line = g_new0(LogLine, 1);

	line->time = time;
	line->text = text;
	g_ptr_array_add(out, line);
}

static gchar *
format_time(gint64 us, gboolean go_log)
{
	g_autoptr(GDateTime) dt = g_date_time_new_from_unix_utc(us / G_USEC_PER_SEC);
	g_autofree gchar *base = NULL;

	if (dt == NULL)
		return g_strdup("1970-01-01T00:00:00.000000000Z");
	if (go_log) {
		base = g_date_time_format(dt, "%Y/%m/%d %H:%M:%S");
		return g_strdup(base);
	}
	base = g_date_time_format(dt, "%Y-%m-%dT%H:%M:%S");
	return g_strdup_printf("%s.%06" G_GINT64_FORMAT "000Z", base, us % G_USEC_PER_SEC);
}

/*
 * What a container of @image printed from @start on: a fluent-bit sidecar, an nginx, or a Go
 * service logging JSON. @crash: the instance ended at @end with @exit_code (its last line says
 * so). Drawn from @id, so that the same instance always says the same.
 */
static void
generate(GPtrArray *out,
         KubesimPod *pod,
         KubesimContainer *c,
         const gchar *id,
         gint64 start,
         gint64 end,
         gint exit_code)
{
	g_autoptr(GRand) rand = g_rand_new_with_seed(g_str_hash(id));
	const gchar *image = c->image != NULL ? c->image : "";
	gint64 t = start;
	guint i;

#define NEXT() (t += g_rand_int_range(rand, 200, 90000))
	if (strstr(image, "fluent-bit") != NULL) {
		static const gchar *const plugins[] = {"tail.0", "kubernetes.0", "forward.0"};
		add_line(out, t, g_strdup("Fluent Bit v3.0.7"));
		add_line(out, t, g_strdup("* Copyright (C) 2015-2024 The Fluent Bit Authors"));
		for (i = 0; i < G_N_ELEMENTS(plugins); i++) {
			g_autofree gchar *ts2 = format_time(NEXT(), TRUE);
			add_line(out, t,
			         g_strdup_printf("[%s] [ info] [input:%s] initializing", ts2,
			                         plugins[i]));
		}
		{
			g_autofree gchar *ts2 = format_time(NEXT(), TRUE);
			add_line(
			        out, t,
			        g_strdup_printf("[%s] [ info] [output:forward:forward.0] worker #0 "
			                        "started",
			                        ts2));
		}
		{
			g_autofree gchar *ts2 = format_time(NEXT(), TRUE);
			add_line(
			        out, t,
			        g_strdup_printf("[%s] [ info] [sp] stream processor started", ts2));
		}
	} else if (strstr(image, "nginx") != NULL) {
		static const gchar *const lines[] = {
		        "/docker-entrypoint.sh: /docker-entrypoint.d/ is not empty, will attempt "
		        "to "
		        "perform configuration",
		        "/docker-entrypoint.sh: Looking for shell scripts in /docker-entrypoint.d/",
		        "/docker-entrypoint.sh: Launching "
		        "/docker-entrypoint.d/10-listen-on-ipv6-by-default.sh",
		        "/docker-entrypoint.sh: Configuration complete; ready for start up",
		};
		for (i = 0; i < G_N_ELEMENTS(lines); i++)
			add_line(out, NEXT(), g_strdup(lines[i]));
		{
			g_autofree gchar *ts = format_time(NEXT(), TRUE);
			add_line(out, t,
			         g_strdup_printf(
			                 "%s [notice] 1#1: using the \"epoll\" event method", ts));
			add_line(out, t,
			         g_strdup_printf("%s [notice] 1#1: start worker processes", ts));
		}
	} else {
		static const gchar *const msgs[] = {
		        "\"msg\":\"loading configuration\",\"path\":\"/etc/app/config.yaml\"",
		        "\"msg\":\"connected to database\",\"pool\":10",
		        "\"msg\":\"registered metrics\",\"addr\":\":9090\"",
		        "\"msg\":\"listening\",\"addr\":\":8080\"",
		        "\"msg\":\"ready\"",
		};
		g_autofree gchar *ts = format_time(NEXT(), FALSE);
		add_line(
		        out, t,
		        g_strdup_printf("{\"level\":\"info\",\"ts\":\"%s\",\"msg\":\"starting %s\","
		                        "\"version\":\"1.%u.%u\",\"pod\":\"%s\"}",
		                        ts, c->name, g_rand_int_range(rand, 0, 30),
		                        g_rand_int_range(rand, 0, 10), pod->name));
		for (i = 0; i < G_N_ELEMENTS(msgs); i++) {
			g_autofree gchar *ts2 = format_time(NEXT(), FALSE);
			add_line(out, t,
			         g_strdup_printf("{\"level\":\"info\",\"ts\":\"%s\",%s}", ts2,
			                         msgs[i]));
		}
	}
#undef NEXT
	if (end != 0) {
		gint64 when = MAX(end - 1000, t);
		g_autofree gchar *ts = format_time(when, FALSE);
		add_line(out, when,
		         g_strdup_printf(
		                 "{\"level\":\"fatal\",\"ts\":\"%s\",\"msg\":\"unrecoverable "
		                 "error, exiting\",\"exitCode\":%d}",
		                 ts, exit_code));
	}
}

/* ---- options ---- */

typedef struct {
	gboolean follow;
	gboolean previous;
	gboolean timestamps;
	gint64 tail;  /* -1: all */
	gint64 since; /* µs since the epoch; 0: all */
	gint64 limit; /* -1: none */
} LogOptions;

/* An int64 parameter; FALSE with a 400 when it is not one. */
static gboolean
query_int(GHashTable *query, const gchar *key, gint64 *out, gboolean *set, KubesimStatus **status)
{
	const gchar *text = kubesim_query_get(query, key);
	gchar *end = NULL;

	*set = FALSE;
	if (text == NULL)
		return TRUE;
	*out = g_ascii_strtoll(text, &end, 10);
	if (text[0] == '\0' || end == NULL || *end != '\0') {
		*status = kubesim_status_new(400, "BadRequest",
		                             "strconv.ParseInt: parsing \"%s\": invalid syntax",
		                             text);
		return FALSE;
	}
	*set = TRUE;
	return TRUE;
}

static gboolean
parse_options(GHashTable *query, const gchar *pod, LogOptions *o, KubesimStatus **status)
{
	gint64 tail = 0, since = 0, limit = 0;
	gboolean tail_set, since_set, limit_set;
	const gchar *since_time = kubesim_query_get(query, "sinceTime");

	o->follow = kubesim_query_bool(query, "follow", FALSE);
	o->previous = kubesim_query_bool(query, "previous", FALSE);
	o->timestamps = kubesim_query_bool(query, "timestamps", FALSE);
	if (!query_int(query, "tailLines", &tail, &tail_set, status) ||
	    !query_int(query, "sinceSeconds", &since, &since_set, status) ||
	    !query_int(query, "limitBytes", &limit, &limit_set, status))
		return FALSE;
	/* ValidatePodLogOptions */
	if (tail_set && tail < 0) {
		*status = kubesim_status_invalid("", "PodLogOptions", pod,
		                                 "tailLines: Invalid value: %" G_GINT64_FORMAT
		                                 ": must be greater than or equal to 0",
		                                 tail);
		return FALSE;
	}
	if (limit_set && limit < 1) {
		*status = kubesim_status_invalid("", "PodLogOptions", pod,
		                                 "limitBytes: Invalid value: %" G_GINT64_FORMAT
		                                 ": must be greater than 0",
		                                 limit);
		return FALSE;
	}
	if (since_set && since_time != NULL) {
		*status = kubesim_status_invalid("", "PodLogOptions", pod,
		                                 "<nil>: Forbidden: at most one of `sinceTime` or "
		                                 "`sinceSeconds` may be specified");
		return FALSE;
	}
	if (since_set && since < 1) {
		*status = kubesim_status_invalid("", "PodLogOptions", pod,
		                                 "sinceSeconds: Invalid value: %" G_GINT64_FORMAT
		                                 ": must be greater than 0",
		                                 since);
		return FALSE;
	}
	o->tail = tail_set ? tail : -1;
	o->limit = limit_set ? limit : -1;
	o->since = 0;
	if (since_set)
		o->since = g_get_real_time() -
		           MIN(since, G_MAXINT64 / G_USEC_PER_SEC / 2) * G_USEC_PER_SEC;
	if (since_time != NULL) {
		g_autoptr(GDateTime) dt = g_date_time_new_from_iso8601(since_time, NULL);
		if (dt == NULL) {
			*status = kubesim_status_new(400, "BadRequest",
			                             "parsing time \"%s\" as "
			                             "\"2006-01-02T15:04:05Z07:00\": cannot parse",
			                             since_time);
			return FALSE;
		}
		o->since = g_date_time_to_unix(dt) * G_USEC_PER_SEC;
	}
	return TRUE;
}

/* Appends @line as the kubelet writes it; FALSE once limitBytes is used up. */
static gboolean
render_line(GString *out, const LogLine *line, gboolean timestamps, gint64 *limit)
{
	gsize start = out->len;

	if (timestamps) {
		g_autofree gchar *ts = format_time(line->time, FALSE);
		g_string_append(out, ts);
		g_string_append_c(out, ' ');
	}
	g_string_append(out, line->text);
	g_string_append_c(out, '\n');
	if (*limit < 0)
		return TRUE;
	if ((gint64)(out->len - start) >= *limit) {
		g_string_truncate(out, start + *limit);
		*limit = 0;
		return FALSE;
	}
	*limit -= out->len - start;
	return TRUE;
}

/* ---- followers ---- */

static void
follower_detach(Follower *f)
{
	if (f->hangup_source != NULL) {
		g_source_destroy(f->hangup_source);
		g_clear_pointer(&f->hangup_source, g_source_unref);
	}
	if (f->finished_id != 0)
		g_signal_handler_disconnect(f->msg, f->finished_id);
	if (f->wrote_id != 0)
		g_signal_handler_disconnect(f->msg, f->wrote_id);
	f->finished_id = f->wrote_id = 0;
	g_ptr_array_remove_fast(f->log->followers, f);
}

static void
follower_free(Follower *f)
{
	g_object_unref(f->msg);
	g_free(f);
}

/* Ends the stream (the last chunk), as when the container stops. */
static void
follower_end(Follower *f)
{
	follower_detach(f);
	soup_message_body_complete(soup_server_message_get_response_body(f->msg));
	if (f->io_running)
		soup_server_message_unpause(f->msg);
	follower_free(f);
}

static void
follower_on_finished(SoupServerMessage *msg, gpointer data)
{
	Follower *f = data;

	follower_detach(f);
	follower_free(f);
}

static void
follower_on_wrote(SoupServerMessage *msg, guint size, gpointer data)
{
	Follower *f = data;

	f->queued = size < f->queued ? f->queued - size : 0;
}

static gboolean
follower_on_hangup(GSocket *socket, GIOCondition condition, gpointer data)
{
	Follower *f = data;

	/* a log client sends nothing after its request: readable means it went away */
	g_clear_pointer(&f->hangup_source, g_source_unref);
	follower_end(f);
	return G_SOURCE_REMOVE;
}

/* Sends @text to @f; may end @f (limitBytes reached, or a client that stopped reading). */
static void
follower_send(Follower *f, GString *text, gboolean limit_reached)
{
	if (text->len > 0) {
		gsize len = text->len;
		soup_message_body_append(soup_server_message_get_response_body(f->msg),
		                         SOUP_MEMORY_COPY, text->str, len);
		f->queued += len;
		if (f->io_running)
			soup_server_message_unpause(f->msg);
	}
	if (limit_reached || f->queued > FOLLOW_MAX_QUEUED)
		follower_end(f);
}

static void
log_append(ContainerLog *log, const gchar *text, gsize len)
{
	LogLine *line = g_new0(LogLine, 1);

	len = MIN(len, LOG_MAX_LINE);
	line->time = g_get_real_time();
	line->text = g_strndup(text, len);
	g_queue_push_tail(&log->lines, line);
	log->bytes += len + 1;
	/* bounded: the oldest appended lines go first, as a rotated log file */
	while (log->lines.length > LOG_MAX_LINES || log->bytes > LOG_MAX_BYTES) {
		LogLine *old = g_queue_pop_head(&log->lines);
		log->bytes -= strlen(old->text) + 1;
		log_line_free(old);
	}
	for (guint i = log->followers->len; i-- > 0;) {
		Follower *f = g_ptr_array_index(log->followers, i);
		g_autoptr(GString) out = g_string_new(NULL);
		gboolean more = render_line(out, line, f->timestamps, &f->limit);
		follower_send(f, out, !more);
	}
}

/* ---- the API ---- */

typedef struct {
	gchar *id;
	gboolean live; /* running: a follower stays */
	gint64 start, end;
	gint exit_code;
} Instance;

/* Which instance of @c the request reads, or NULL and the kubelet's 400. */
static gboolean
pick_instance(KubesimPod *pod,
              KubesimContainer *c,
              gboolean previous,
              Instance *inst,
              KubesimStatus **status)
{
	memset(inst, 0, sizeof(*inst));
	if (previous) {
		if (c->last_id == NULL) {
			*status = kubesim_status_new(400, "BadRequest",
			                             "previous terminated container \"%s\" in pod "
			                             "\"%s\" not found",
			                             c->name, pod->name);
			return FALSE;
		}
		inst->id = g_strdup(c->last_id);
		inst->start = c->last_started_at;
		inst->end = MAX(c->last_finished_at, c->last_started_at + 1);
		inst->exit_code = c->last_exit_code;
		return TRUE;
	}
	if (c->state == NULL || g_strcmp0(c->state, "running") == 0) {
		inst->id = kubesim_container_current_id(pod, c);
		inst->live = TRUE;
		inst->start = c->started_at != 0 ? c->started_at : pod->created;
		return TRUE;
	}
	if (g_strcmp0(c->state, "terminated") == 0 && c->container_id != NULL) {
		inst->id = g_strdup(c->container_id);
		inst->start = c->started_at;
		inst->end = MAX(c->finished_at, c->started_at + 1);
		return TRUE;
	}
	if (c->last_id != NULL) {
		/* waiting to restart (CrashLoopBackOff): the last instance's output */
		inst->id = g_strdup(c->last_id);
		inst->start = c->last_started_at;
		inst->end = MAX(c->last_finished_at, c->last_started_at + 1);
		inst->exit_code = c->last_exit_code;
		return TRUE;
	}
	if (g_strcmp0(c->state, "terminated") == 0) {
		*status = kubesim_status_new(400, "BadRequest",
		                             "container \"%s\" in pod \"%s\" is terminated",
		                             c->name, pod->name);
		return FALSE;
	}
	if (g_strcmp0(c->waiting_reason, "ErrImagePull") == 0)
		*status = kubesim_status_new(400, "BadRequest",
		                             "container \"%s\" in pod \"%s\" is waiting to start: "
		                             "image can't be pulled",
		                             c->name, pod->name);
	else if (g_strcmp0(c->waiting_reason, "ImagePullBackOff") == 0)
		*status = kubesim_status_new(400, "BadRequest",
		                             "container \"%s\" in pod \"%s\" is waiting to start: "
		                             "trying and failing to pull image",
		                             c->name, pod->name);
	else
		*status = kubesim_status_new(
		        400, "BadRequest", "container \"%s\" in pod \"%s\" is waiting to start: %s",
		        c->name, pod->name, c->waiting_reason != NULL ? c->waiting_reason : "");
	return FALSE;
}

void
kubesim_logs_handle(KubesimServer *self,
                    SoupServerMessage *msg,
                    KubesimRequest *req,
                    GHashTable *query)
{
	KubesimStatus *status = NULL;
	g_autoptr(KubesimPod) pod = NULL;
	g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(log_line_free);
	g_autoptr(GString) out = g_string_new(NULL);
	SoupMessageHeaders *headers = soup_server_message_get_response_headers(msg);
	KubesimContainer *c;
	ContainerLog *log;
	LogOptions o;
	Instance inst;
	guint first = 0;
	gboolean more = TRUE;

	if (g_strcmp0(soup_server_message_get_method(msg), "GET") != 0) {
		kubesim_respond_status(msg, kubesim_status_new(405, "MethodNotAllowed",
		                                               "the server does not allow this "
		                                               "method on the requested resource"));
		return;
	}
	pod = kubesim_pod_lookup(self->store, req->namespace_, req->name, &status);
	if (pod == NULL || !parse_options(query, req->name, &o, &status)) {
		kubesim_respond_status(msg, status);
		return;
	}
	c = kubesim_pod_pick_container(pod, kubesim_query_get(query, "container"), &status);
	if (c == NULL || !pick_instance(pod, c, o.previous, &inst, &status)) {
		kubesim_respond_status(msg, status);
		return;
	}
	generate(lines, pod, c, inst.id, inst.start, inst.end, inst.exit_code);
	log = g_hash_table_lookup(self->logs->by_id, inst.id);
	for (GList *l = log != NULL ? log->lines.head : NULL; l != NULL; l = l->next) {
		LogLine *src = l->data, *copy = g_new0(LogLine, 1);
		copy->time = src->time;
		copy->text = g_strdup(src->text);
		g_ptr_array_add(lines, copy);
	}
	/* sinceSeconds first, then tailLines of what is left, as the kubelet reads */
	while (first < lines->len && ((LogLine *)g_ptr_array_index(lines, first))->time < o.since)
		first++;
	if (o.tail >= 0 && (gint64)(lines->len - first) > o.tail)
		first = lines->len - o.tail;
	for (guint i = first; more && i < lines->len; i++)
		more = render_line(out, g_ptr_array_index(lines, i), o.timestamps, &o.limit);

	soup_server_message_set_status(msg, 200, NULL);
	soup_message_headers_set_content_type(headers, "text/plain", NULL);
	if (!o.follow || !inst.live || !more) {
		soup_server_message_set_response(msg, "text/plain", SOUP_MEMORY_COPY, out->str,
		                                 out->len);
		g_free(inst.id);
		return;
	}

	/* follow: the body stays open while the instance runs */
	{
		Follower *f = g_new0(Follower, 1);
		GSocket *socket = soup_server_message_get_socket(msg);

		log = logs_get(self->logs, pod, c, inst.id);
		f->server = self;
		f->log = log;
		f->msg = g_object_ref(msg);
		f->timestamps = o.timestamps;
		f->limit = o.limit;
		soup_message_headers_set_encoding(headers, SOUP_ENCODING_CHUNKED);
		soup_message_body_set_accumulate(soup_server_message_get_response_body(msg), FALSE);
		g_ptr_array_add(log->followers, f);
		f->finished_id =
		        g_signal_connect(msg, "finished", G_CALLBACK(follower_on_finished), f);
		f->wrote_id =
		        g_signal_connect(msg, "wrote-body-data", G_CALLBACK(follower_on_wrote), f);
		if (out->len > 0) {
			soup_message_body_append(soup_server_message_get_response_body(msg),
			                         SOUP_MEMORY_COPY, out->str, out->len);
			f->queued = out->len;
		}
		if (socket != NULL) {
			f->hangup_source =
			        g_socket_create_source(socket, G_IO_IN | G_IO_HUP | G_IO_ERR, NULL);
			g_source_set_callback(f->hangup_source, G_SOURCE_FUNC(follower_on_hangup),
			                      f, NULL);
			g_source_attach(f->hangup_source, NULL);
		}
		f->io_running = TRUE;
	}
	g_free(inst.id);
}

/* Repeated query parameters, which libsoup's decoded table collapses: every value of @key. */
GPtrArray *
kubesim_query_get_all(SoupServerMessage *msg, const gchar *key)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
	const gchar *query = g_uri_get_query(soup_server_message_get_uri(msg));
	g_auto(GStrv) pairs = NULL;

	if (query == NULL)
		return out;
	pairs = g_strsplit(query, "&", -1);
	for (guint i = 0; pairs[i] != NULL; i++) {
		gchar *eq = strchr(pairs[i], '=');
		g_autofree gchar *name = NULL;
		g_autofree gchar *value = NULL;

		/* form encoding: '+' is a space, as Go's url.ParseQuery reads it */
		g_strdelimit(pairs[i], "+", ' ');
		name = g_uri_unescape_segment(pairs[i], eq, NULL);
		if (name == NULL || g_strcmp0(name, key) != 0)
			continue;
		value = g_uri_unescape_string(eq != NULL ? eq + 1 : "", NULL);
		if (value != NULL)
			g_ptr_array_add(out, g_steal_pointer(&value));
	}
	return out;
}

/* POST /kubesim/logs?namespace=&pod=&container=&line=...: the body's lines, then each line=. */
void
kubesim_logs_admin(KubesimServer *self, SoupServerMessage *msg, GHashTable *query)
{
	KubesimStatus *status = NULL;
	const gchar *ns = kubesim_query_get(query, "namespace");
	g_autoptr(KubesimPod) pod = NULL;
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GPtrArray) params = NULL;
	g_autofree gchar *id = NULL;
	KubesimContainer *c;
	ContainerLog *log;
	const gchar *data;
	gsize len, start = 0;
	guint appended = 0;

	if (g_strcmp0(soup_server_message_get_method(msg), "POST") != 0) {
		kubesim_respond_status(msg, kubesim_status_new(405, "MethodNotAllowed",
		                                               "/kubesim/logs takes POST"));
		return;
	}
	pod = kubesim_pod_lookup(self->store, ns != NULL && ns[0] != '\0' ? ns : "default",
	                         kubesim_query_get(query, "pod"), &status);
	if (pod == NULL) {
		kubesim_respond_status(msg, status);
		return;
	}
	c = kubesim_pod_pick_container(pod, kubesim_query_get(query, "container"), &status);
	if (c == NULL) {
		kubesim_respond_status(msg, status);
		return;
	}
	id = kubesim_container_current_id(pod, c);
	log = logs_get(self->logs, pod, c, id);
	body = kubesim_request_body(msg);
	data = g_bytes_get_data(body, &len);
	while (start < len) {
		const gchar *nl = memchr(data + start, '\n', len - start);
		gsize end = nl != NULL ? (gsize)(nl - data) : len;
		log_append(log, data + start, end - start);
		appended++;
		start = end + 1;
	}
	params = kubesim_query_get_all(msg, "line");
	for (guint i = 0; i < params->len; i++) {
		const gchar *line = g_ptr_array_index(params, i);
		log_append(log, line, strlen(line));
		appended++;
	}
	kubesim_respond_json_take(msg, 200,
	                          g_strdup_printf("{\"appended\":%u,\"followers\":%u}", appended,
	                                          log->followers->len));
}

/* GET /kubesim/logs?namespace=&pod=&container=: how many follow the container's output. */
void
kubesim_logs_admin_get(KubesimServer *self, SoupServerMessage *msg, GHashTable *query)
{
	KubesimStatus *status = NULL;
	const gchar *ns = kubesim_query_get(query, "namespace");
	g_autoptr(KubesimPod) pod =
	        kubesim_pod_lookup(self->store, ns != NULL && ns[0] != '\0' ? ns : "default",
	                           kubesim_query_get(query, "pod"), &status);
	g_autofree gchar *id = NULL;
	KubesimContainer *c;
	ContainerLog *log;

	if (pod == NULL) {
		kubesim_respond_status(msg, status);
		return;
	}
	c = kubesim_pod_pick_container(pod, kubesim_query_get(query, "container"), &status);
	if (c == NULL) {
		kubesim_respond_status(msg, status);
		return;
	}
	id = kubesim_container_current_id(pod, c);
	log = g_hash_table_lookup(self->logs->by_id, id);
	kubesim_respond_json_take(
	        msg, 200,
	        g_strdup_printf("{\"containerID\":\"%s\",\"lines\":%u,\"followers\":%u}", id,
	                        log != NULL ? log->lines.length : 0,
	                        log != NULL ? log->followers->len : 0));
}

/* A pod changed: followers of instances that stopped running end, forgotten instances go. */
void
kubesim_logs_pod_event(KubesimServer *self, const KubesimEvent *ev)
{
	KubesimLogs *logs = self->logs;
	g_autoptr(KubesimPod) pod = NULL;
	g_autoptr(GPtrArray) mine = NULL;
	GHashTableIter iter;
	gpointer value;

	if (logs == NULL || ev->object->uid == NULL ||
	    !g_hash_table_contains(logs->uids, ev->object->uid))
		return;
	mine = g_ptr_array_new();
	g_hash_table_iter_init(&iter, logs->by_id);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		ContainerLog *log = value;
		if (g_strcmp0(log->uid, ev->object->uid) == 0)
			g_ptr_array_add(mine, log);
	}
	if (ev->type != KUBESIM_EVENT_DELETED)
		pod = kubesim_pod_new(ev->object);
	for (guint i = 0; i < mine->len; i++) {
		ContainerLog *log = g_ptr_array_index(mine, i);
		g_autofree gchar *current = NULL;
		KubesimContainer *c = NULL;
		gboolean running;

		if (pod != NULL) {
			KubesimStatus *status = NULL;
			c = kubesim_pod_pick_container(pod, log->container, &status);
			g_clear_pointer(&status, kubesim_status_free);
		}
		if (c == NULL) {
			logs_remove(logs, log);
			continue;
		}
		current = kubesim_container_current_id(pod, c);
		running = c->state == NULL || g_strcmp0(c->state, "running") == 0;
		if (g_strcmp0(current, log->id) != 0 || !running) {
			while (log->followers->len > 0)
				follower_end(g_ptr_array_index(log->followers, 0));
		}
		if (g_strcmp0(current, log->id) != 0 && g_strcmp0(c->last_id, log->id) != 0)
			logs_remove(logs, log);
	}
}
