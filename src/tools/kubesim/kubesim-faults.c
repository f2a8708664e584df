/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-faults.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "kubesim-json.h"
#include "kubesim-server.h"

/* What kubesim will build for one request, whatever is asked: the faults test clients'
 * limits, they must not take kubesim's memory with them. */
#define MAX_HUGE_BYTES        (G_GUINT64_CONSTANT(64) << 30)
#define MAX_GARBAGE_BYTES     (G_GUINT64_CONSTANT(1) << 30)
#define MAX_DEPTH             10000000u
#define MAX_LABELS            2000000u
#define DEFAULT_DEPTH         1000u
#define DEFAULT_LABELS        100000u
#define DEFAULT_GARBAGE_BYTES (64 * 1024)
#define PAD_CHUNK             (1024 * 1024)

static const struct {
	KubesimFaultKind kind;
	const gchar *name;
} kind_names[] = {
        {KUBESIM_FAULT_STATUS, "status"},   {KUBESIM_FAULT_TOO_LARGE, "too-large"},
        {KUBESIM_FAULT_RESET, "reset"},     {KUBESIM_FAULT_TRUNCATED, "truncated"},
        {KUBESIM_FAULT_GARBAGE, "garbage"}, {KUBESIM_FAULT_ENDLESS, "endless"},
        {KUBESIM_FAULT_DEEP, "deep"},       {KUBESIM_FAULT_HUGE, "huge"},
        {KUBESIM_FAULT_LABELS, "labels"},
};

static const gchar *
kind_name(KubesimFaultKind kind)
{
	guint i;

	for (i = 0; i < G_N_ELEMENTS(kind_names); i++) {
		if (kind_names[i].kind == kind)
			return kind_names[i].name;
	}
	return "status";
}

KubesimFault *
kubesim_fault_ref(KubesimFault *fault)
{
	g_atomic_int_inc(&fault->ref_count);
	return fault;
}

void
kubesim_fault_unref(KubesimFault *fault)
{
	if (fault == NULL || !g_atomic_int_dec_and_test(&fault->ref_count))
		return;
	g_free(fault->path);
	g_free(fault->resource);
	g_free(fault->reason);
	g_free(fault->message);
	g_free(fault);
}

void
kubesim_faults_init(KubesimFaults *faults)
{
	faults->all = g_ptr_array_new_with_free_func((GDestroyNotify)kubesim_fault_unref);
	faults->next_id = 1;
}

void
kubesim_faults_clear(KubesimFaults *faults)
{
	g_clear_pointer(&faults->all, g_ptr_array_unref);
}

/* A decimal query parameter; @fallback when absent, FALSE when it is not a number. */
static gboolean
query_uint(GHashTable *query, const gchar *key, guint64 fallback, guint64 max, guint64 *out)
{
	const gchar *text = kubesim_query_get(query, key);
	gchar *end = NULL;

	if (text == NULL || text[0] == '\0') {
		*out = fallback;
		return TRUE;
	}
	errno = 0;
	*out = g_ascii_strtoull(text, &end, 10);
	return errno == 0 && end != NULL && *end == '\0' && *out <= max;
}

static KubesimStatus *
bad_request(const gchar *message)
{
	return kubesim_status_new(400, "BadRequest", "%s", message);
}

KubesimFault *
kubesim_faults_arm(KubesimFaults *faults, GHashTable *query, KubesimStatus **status_out)
{
	g_autoptr(KubesimFault) fault = g_new0(KubesimFault, 1);
	const gchar *on = kubesim_query_get(query, "on");
	const gchar *kind = kubesim_query_get(query, "fault");
	guint64 v;
	guint i;

	fault->ref_count = 1;
	fault->kind = KUBESIM_FAULT_STATUS;
	if (kind != NULL) {
		for (i = 0; i < G_N_ELEMENTS(kind_names); i++) {
			if (g_strcmp0(kind, kind_names[i].name) == 0)
				break;
		}
		if (i == G_N_ELEMENTS(kind_names)) {
			*status_out =
			        bad_request("fault must be status, too-large, reset, truncated, "
			                    "garbage, endless, deep, huge or labels");
			return NULL;
		}
		fault->kind = kind_names[i].kind;
	}
	if (g_strcmp0(on, "list") == 0)
		fault->on = KUBESIM_FAULT_ON_LIST;
	else if (g_strcmp0(on, "watch") == 0)
		fault->on = KUBESIM_FAULT_ON_WATCH;
	else if (g_strcmp0(on, "both") == 0)
		fault->on = KUBESIM_FAULT_ON_LIST | KUBESIM_FAULT_ON_WATCH;
	else {
		*status_out = bad_request("on must be list, watch or both");
		return NULL;
	}
	if ((fault->kind == KUBESIM_FAULT_TRUNCATED || fault->kind == KUBESIM_FAULT_ENDLESS) &&
	    fault->on != KUBESIM_FAULT_ON_LIST) {
		*status_out = bad_request("truncated and endless faults are for lists (on=list)");
		return NULL;
	}
	if (!query_uint(query, "count", 1, G_MAXUINT, &v) || v == 0) {
		*status_out = bad_request("count must be a positive number");
		return NULL;
	}
	fault->count = v;
	fault->path = g_strdup(kubesim_query_get(query, "path"));
	fault->resource = g_strdup(kubesim_query_get(query, "resource"));
	if (!query_uint(query, "code", 500, 599, &v) || v < 400) {
		*status_out = bad_request("code must be an HTTP error status (400-599)");
		return NULL;
	}
	fault->code = v;
	fault->reason = g_strdup(kubesim_query_get(query, "reason"));
	fault->message = g_strdup(kubesim_query_get(query, "message"));
	if (!query_uint(query, "retry-after", fault->code == 429 ? 1 : 0, 3600, &v)) {
		*status_out = bad_request("retry-after must be a number of seconds");
		return NULL;
	}
	fault->retry_after = v;
	switch (fault->kind) {
	case KUBESIM_FAULT_HUGE:
		if (!query_uint(query, "bytes", 150 * 1000 * 1000, MAX_HUGE_BYTES, &fault->bytes)) {
			*status_out = bad_request("bytes must be a size up to 64 GiB");
			return NULL;
		}
		break;
	case KUBESIM_FAULT_GARBAGE:
		if (!query_uint(query, "bytes", DEFAULT_GARBAGE_BYTES, MAX_GARBAGE_BYTES,
		                &fault->bytes)) {
			*status_out = bad_request("bytes must be a size up to 1 GiB");
			return NULL;
		}
		break;
	default:
		if (!query_uint(query, "at", G_MAXUINT64, G_MAXUINT64, &fault->bytes)) {
			*status_out = bad_request("at must be a byte offset");
			return NULL;
		}
		break;
	}
	if (!query_uint(query, "depth", DEFAULT_DEPTH, MAX_DEPTH, &v) || v < 3) {
		*status_out = bad_request("depth must be a number from 3 to 10000000");
		return NULL;
	}
	fault->depth = v;
	if (!query_uint(query, "labels", DEFAULT_LABELS, MAX_LABELS, &v)) {
		*status_out = bad_request("labels must be a number up to 2000000");
		return NULL;
	}
	fault->labels = v;
	{
		const gchar *rate = kubesim_query_get(query, "rate");
		fault->rate = rate != NULL ? g_ascii_strtod(rate, NULL) : 0;
		if (fault->rate < 0 || fault->rate > 1e7) {
			*status_out =
			        bad_request("rate must be items per second (0: as fast as the "
			                    "client reads)");
			return NULL;
		}
	}
	fault->id = faults->next_id++;
	g_ptr_array_add(faults->all, kubesim_fault_ref(fault));
	return g_steal_pointer(&fault);
}

gboolean
kubesim_faults_forget(KubesimFaults *faults, guint id)
{
	guint i;

	if (id == 0) {
		g_ptr_array_set_size(faults->all, 0);
		return TRUE;
	}
	for (i = 0; i < faults->all->len; i++) {
		KubesimFault *fault = g_ptr_array_index(faults->all, i);
		if (fault->id == id) {
			g_ptr_array_remove_index(faults->all, i);
			return TRUE;
		}
	}
	return FALSE;
}

guint
kubesim_faults_count_armed(KubesimFaults *faults)
{
	guint i, n = 0;

	for (i = 0; i < faults->all->len; i++) {
		KubesimFault *fault = g_ptr_array_index(faults->all, i);
		if (fault->consumed < fault->count)
			n++;
	}
	return n;
}

gchar *
kubesim_faults_to_json(KubesimFaults *faults)
{
	GString *out = g_string_new("{\"faults\":[");
	guint i;

	for (i = 0; i < faults->all->len; i++) {
		KubesimFault *fault = g_ptr_array_index(faults->all, i);
		const gchar *on = fault->on == KUBESIM_FAULT_ON_LIST    ? "list"
		                  : fault->on == KUBESIM_FAULT_ON_WATCH ? "watch"
		                                                        : "both";
		if (i > 0)
			g_string_append_c(out, ',');
		g_string_append_printf(out, "{\"id\":%u,\"fault\":\"%s\",\"on\":\"%s\"", fault->id,
		                       kind_name(fault->kind), on);
		if (fault->kind == KUBESIM_FAULT_STATUS)
			g_string_append_printf(out, ",\"code\":%u", fault->code);
		if (fault->path != NULL) {
			g_string_append(out, ",\"path\":");
			msd_json_string_append(out, fault->path, -1, MSD_JSON_STRING_GO);
		}
		if (fault->resource != NULL) {
			g_string_append(out, ",\"resource\":");
			msd_json_string_append(out, fault->resource, -1, MSD_JSON_STRING_GO);
		}
		g_string_append_printf(out, ",\"count\":%u,\"consumed\":%u,\"remaining\":%u}",
		                       fault->count, fault->consumed,
		                       fault->count - fault->consumed);
	}
	g_string_append(out, "]}");
	return g_string_free(out, FALSE);
}

static gboolean
resource_matches(const gchar *want, KubesimResource *res)
{
	g_autofree gchar *qualified = NULL;

	if (want == NULL)
		return TRUE;
	if (res->group[0] == '\0')
		return g_strcmp0(want, res->resource) == 0;
	qualified = g_strdup_printf("%s.%s", res->resource, res->group);
	return g_strcmp0(want, qualified) == 0;
}

KubesimFault *
kubesim_faults_take(KubesimFaults *faults,
                    KubesimFaultOn on,
                    const gchar *path,
                    KubesimResource *res)
{
	guint i;

	for (i = 0; i < faults->all->len; i++) {
		KubesimFault *fault = g_ptr_array_index(faults->all, i);
		if (fault->consumed >= fault->count || (fault->on & on) == 0)
			continue;
		if (fault->path != NULL && g_strcmp0(fault->path, path) != 0)
			continue;
		if (!resource_matches(fault->resource, res))
			continue;
		fault->consumed++;
		return kubesim_fault_ref(fault);
	}
	return NULL;
}

gboolean
kubesim_fault_injects_object(const KubesimFault *fault)
{
	return fault != NULL &&
	       (fault->kind == KUBESIM_FAULT_DEEP || fault->kind == KUBESIM_FAULT_HUGE ||
	        fault->kind == KUBESIM_FAULT_LABELS);
}

/* One MiB of padding, shared by every huge object. */
static GBytes *
pad_chunk(void)
{
	static GBytes *chunk;

	if (g_once_init_enter(&chunk)) {
		gchar *x = g_malloc(PAD_CHUNK);
		memset(x, 'x', PAD_CHUNK);
		g_once_init_leave(&chunk, g_bytes_new_take(x, PAD_CHUNK));
	}
	return chunk;
}

static gsize
append_take(SoupMessageBody *body, GString *s)
{
	gsize len = s->len;

	soup_message_body_append(body, SOUP_MEMORY_TAKE, g_string_free(s, FALSE), len);
	return len;
}

gsize
kubesim_fault_append_object(const KubesimFault *fault,
                            SoupMessageBody *body,
                            KubesimResource *res,
                            const gchar *ns,
                            guint64 rv,
                            gboolean typed_item)
{
	GString *head = g_string_new("{");
	g_autofree gchar *uid = g_uuid_string_random();
	g_autofree gchar *now = kubesim_now_rfc3339();
	gsize total = 0;
	guint i;

	if (!typed_item) {
		g_string_append(head, "\"kind\":");
		msd_json_string_append(head, res->kind, -1, MSD_JSON_STRING_GO);
		g_string_append(head, ",\"apiVersion\":");
		msd_json_string_append(head, res->api_version, -1, MSD_JSON_STRING_GO);
		g_string_append_c(head, ',');
	}
	g_string_append_printf(head, "\"metadata\":{\"name\":\"kubesim-%s-%u\"",
	                       kind_name(fault->kind), fault->id);
	if (res->namespaced) {
		g_string_append(head, ",\"namespace\":");
		msd_json_string_append(head, ns != NULL ? ns : "default", -1, MSD_JSON_STRING_GO);
	}
	g_string_append_printf(head,
	                       ",\"uid\":\"%s\",\"resourceVersion\":\"%" G_GUINT64_FORMAT
	                       "\",\"creationTimestamp\":\"%s\"",
	                       uid, rv, now);
	switch (fault->kind) {
	case KUBESIM_FAULT_DEEP: {
		/* the object, spec and nested make three levels; arrays make the rest */
		guint levels = fault->depth - 3;
		g_string_append(head, "},\"spec\":{\"nested\":[");
		total += append_take(body, head);
		head = g_string_sized_new(2 * (gsize)levels + 8);
		for (i = 0; i < levels; i++)
			g_string_append_c(head, '[');
		for (i = 0; i < levels; i++)
			g_string_append_c(head, ']');
		g_string_append(head, "]}}");
		total += append_take(body, head);
		break;
	}
	case KUBESIM_FAULT_HUGE: {
		GBytes *chunk = pad_chunk();
		guint64 pad;
		static const gchar tail[] = "\"}}}";
		g_string_append(head, ",\"annotations\":{\"kubesim.meshery.io/padding\":\"");
		pad = fault->bytes > head->len + sizeof tail - 1
		              ? fault->bytes - head->len - (sizeof tail - 1)
		              : 0;
		total += append_take(body, head);
		for (; pad >= PAD_CHUNK; pad -= PAD_CHUNK) {
			soup_message_body_append_bytes(body, chunk);
			total += PAD_CHUNK;
		}
		if (pad > 0) {
			g_autoptr(GBytes) rest = g_bytes_new_from_bytes(chunk, 0, pad);
			soup_message_body_append_bytes(body, rest);
			total += pad;
		}
		soup_message_body_append(body, SOUP_MEMORY_STATIC, tail, sizeof tail - 1);
		total += sizeof tail - 1;
		break;
	}
	case KUBESIM_FAULT_LABELS:
	default:
		g_string_append(head, ",\"labels\":{");
		for (i = 0; i < fault->labels; i++) {
			if (i > 0)
				g_string_append_c(head, ',');
			g_string_append_printf(head, "\"kubesim.meshery.io/label-%07u\":\"v%u\"", i,
			                       i);
		}
		g_string_append(head, "}}}");
		total += append_take(body, head);
		break;
	}
	return total;
}

static const gchar *
default_reason(guint code)
{
	switch (code) {
	case 400:
		return "BadRequest";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "NotFound";
	case 409:
		return "Conflict";
	case 410:
		return "Expired";
	case 422:
		return "Invalid";
	case 503:
		return "ServiceUnavailable";
	case 504:
		return "Timeout";
	default:
		return code >= 500 ? "InternalError" : "BadRequest";
	}
}

void
kubesim_fault_respond_status(const KubesimFault *fault,
                             SoupServerMessage *msg,
                             gboolean watch,
                             const gchar *rv,
                             guint64 current_rv,
                             guint64 history_floor)
{
	SoupMessageHeaders *headers = soup_server_message_get_response_headers(msg);
	KubesimStatus *status;
	g_autofree gchar *message = NULL;

	if (fault->retry_after > 0) {
		g_autofree gchar *value = g_strdup_printf("%u", fault->retry_after);
		soup_message_headers_replace(headers, "Retry-After", value);
	}
	if (fault->kind == KUBESIM_FAULT_TOO_LARGE) {
		guint64 wanted = rv != NULL ? g_ascii_strtoull(rv, NULL, 10) : 0;
		status = kubesim_status_new_too_large_rv(MAX(wanted, current_rv + 1), current_rv,
		                                         fault->retry_after > 0 ? fault->retry_after
		                                                                : 1);
		kubesim_respond_status(msg, status);
		return;
	}
	if (fault->code == 429 && fault->message == NULL) {
		/* API Priority and Fairness answers in plain text */
		kubesim_respond_http_error(msg, 429,
		                           "Too many requests, please try again later.\n");
		return;
	}
	if (fault->code == 502 && fault->message == NULL) {
		/* nothing in Kubernetes sends 502: a proxy in front of it does */
		kubesim_respond_text(msg, 502, "502 Bad Gateway\n");
		return;
	}
	if (fault->message != NULL)
		message = g_strdup(fault->message);
	else if (fault->code == 410 && watch)
		message = g_strdup_printf("too old resource version: %s (%" G_GUINT64_FORMAT ")",
		                          rv != NULL ? rv : "", history_floor + 1);
	else if (fault->code == 410)
		message = g_strdup("The resourceVersion for the provided list is too old.");
	else if (fault->code == 503)
		message = g_strdup("the server is currently unable to handle the request");
	else if (fault->code == 504)
		message = g_strdup("Timeout: request did not complete within requested timeout - "
		                   "context deadline exceeded");
	else
		message = g_strdup("Internal error occurred: injected by kubesim");
	status = kubesim_status_new(
	        fault->code, fault->reason != NULL ? fault->reason : default_reason(fault->code),
	        "%s", message);
	status->retry_after = fault->retry_after;
	kubesim_respond_status(msg, status);
}

void
kubesim_fault_respond_garbage(const KubesimFault *fault, SoupServerMessage *msg, gboolean watch)
{
	/* not JSON from the first byte on, and every byte value appears: NUL, newlines, quotes
	 * and bytes that are not UTF-8 */
	static const gchar start[] = "\x00\xff{\"type\":\"ADDED\",\"object\":\x01\n\"";
	SoupMessageHeaders *headers = soup_server_message_get_response_headers(msg);
	GRand *rand = g_rand_new_with_seed(fault->id * 7919u + fault->consumed);
	gsize len = MAX(fault->bytes, sizeof start - 1);
	guchar *data = g_malloc(len);
	gsize i;

	memcpy(data, start, sizeof start - 1);
	for (i = sizeof start - 1; i < len; i++)
		data[i] = (guchar)g_rand_int_range(rand, 0, 256);
	g_rand_free(rand);
	soup_server_message_set_status(msg, 200, NULL);
	soup_message_headers_set_content_type(headers, "application/json", NULL);
	if (watch)
		soup_message_headers_set_encoding(headers, SOUP_ENCODING_CHUNKED);
	soup_message_body_append(soup_server_message_get_response_body(msg), SOUP_MEMORY_TAKE, data,
	                         len);
	if (watch)
		soup_message_body_complete(soup_server_message_get_response_body(msg));
}

/* A connection reset once @want bytes of the body are written. */
typedef struct {
	SoupServerMessage *msg;
	guint64 want;
	guint64 written;
	gulong wrote_id;
	gulong headers_id;
	gboolean done;
} Reset;

static void
reset_free(Reset *r)
{
	g_object_unref(r->msg);
	g_free(r);
}

static gboolean
reset_now(gpointer data)
{
	Reset *r = data;
	GSocket *socket = soup_server_message_get_socket(r->msg);

	if (r->wrote_id != 0)
		g_signal_handler_disconnect(r->msg, r->wrote_id);
	if (r->headers_id != 0)
		g_signal_handler_disconnect(r->msg, r->headers_id);
	if (socket != NULL && !g_socket_is_closed(socket)) {
		/* a zero linger time makes close() send RST instead of FIN */
		struct linger linger = {1, 0};
		if (setsockopt(g_socket_get_fd(socket), SOL_SOCKET, SO_LINGER, &linger,
		               sizeof linger) != 0)
			g_warning("cannot set SO_LINGER for a reset: %s", g_strerror(errno));
		g_socket_close(socket, NULL);
	}
	/* libsoup finds the socket closed on its next write, and finishes the message */
	soup_message_body_complete(soup_server_message_get_response_body(r->msg));
	soup_server_message_unpause(r->msg);
	reset_free(r);
	return G_SOURCE_REMOVE;
}

static void
reset_check(Reset *r)
{
	if (!r->done && r->written >= r->want) {
		r->done = TRUE;
		g_idle_add(reset_now, r);
	}
}

static void
on_reset_wrote_headers(SoupServerMessage *msg, gpointer data)
{
	reset_check(data);
}

static void
on_reset_wrote_body_data(SoupServerMessage *msg, guint size, gpointer data)
{
	Reset *r = data;

	r->written += size;
	reset_check(r);
}

/* Chunked, so that nothing tells the client how long the body should have been. */
static void
reset_after(SoupServerMessage *msg, GBytes *part)
{
	Reset *r = g_new0(Reset, 1);
	SoupMessageBody *body = soup_server_message_get_response_body(msg);

	r->msg = g_object_ref(msg);
	r->want = part != NULL ? g_bytes_get_size(part) : 0;
	soup_message_headers_set_encoding(soup_server_message_get_response_headers(msg),
	                                  SOUP_ENCODING_CHUNKED);
	soup_message_body_set_accumulate(body, FALSE);
	if (part != NULL && g_bytes_get_size(part) > 0)
		soup_message_body_append_bytes(body, part);
	r->headers_id =
	        g_signal_connect(msg, "wrote-headers", G_CALLBACK(on_reset_wrote_headers), r);
	if (r->want > 0)
		r->wrote_id = g_signal_connect(msg, "wrote-body-data",
		                               G_CALLBACK(on_reset_wrote_body_data), r);
}

void
kubesim_fault_reset_watch(const KubesimFault *fault, SoupServerMessage *msg)
{
	soup_server_message_set_status(msg, 200, NULL);
	soup_message_headers_set_content_type(soup_server_message_get_response_headers(msg),
	                                      "application/json", NULL);
	reset_after(msg, NULL);
}

void
kubesim_fault_finish_list(const KubesimFault *fault, SoupServerMessage *msg)
{
	SoupMessageBody *body = soup_server_message_get_response_body(msg);
	g_autoptr(GBytes) whole = NULL;
	g_autoptr(GBytes) part = NULL;
	gsize len, cut;

	if (fault == NULL ||
	    (fault->kind != KUBESIM_FAULT_RESET && fault->kind != KUBESIM_FAULT_TRUNCATED))
		return;
	whole = soup_message_body_flatten(body);
	len = g_bytes_get_size(whole);
	cut = fault->bytes == G_MAXUINT64 ? len / 2 : (gsize)MIN(fault->bytes, len);
	/* a cut at the very end would be no fault */
	if (cut == len && len > 0)
		cut = len - 1;
	part = g_bytes_new_from_bytes(whole, 0, cut);
	soup_message_body_truncate(body);
	if (fault->kind == KUBESIM_FAULT_RESET) {
		reset_after(msg, part);
		return;
	}
	soup_message_body_append_bytes(body, part);
}
