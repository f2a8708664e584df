/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * Real API server responses, recorded by tests/data/realkube/record, replayed through the
 * informer over real HTTP (libsoup's client against a plain socket server in this process),
 * with the reads cut every way: as the server flushed them, all at once, one byte at a time,
 * at every line end, inside the end bookmark, at random, with the informer paused and resumed
 * between reads and by its consumer in the middle of a read. The server writes one cut, then
 * waits until the informer has read what the cut decodes to: no sleeps, no timing.
 *
 * What is checked is what the cluster held: every object of the recording in the store with
 * its uid and resourceVersion, synced once, at the end bookmark's resourceVersion.
 */

#include <string.h>
#include <zlib.h>

#include <json-glib/json-glib.h>

#include "informer/msd-informer.h"
#include "informer/msd-informer-private.h"
#include "kube/msd-kube-client.h"
#include "meshsync-kube-config.h"
#include "test-kubesim.h"

/* One recorded HTTP response. */
typedef struct {
	gchar *server; /* the release that answered */
	guint status;
	gchar *content_type;
	gchar *content_encoding; /* (nullable) */
	GPtrArray *chunks;       /* GBytes, as they came off the wire */
	gboolean ended;          /* the response was complete (a watch stays open) */
	GBytes *wire;            /* the chunks joined */
	GBytes *body;            /* decoded */
} Recording;

static GBytes *gunzip_members(GBytes *wire);

static void
recording_free(Recording *rec)
{
	g_free(rec->server);
	g_free(rec->content_type);
	g_free(rec->content_encoding);
	g_ptr_array_unref(rec->chunks);
	g_bytes_unref(rec->wire);
	g_bytes_unref(rec->body);
	g_free(rec);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Recording, recording_free)

static Recording *
recording_load(const gchar *name)
{
	g_autofree gchar *file = g_strconcat(name, ".json", NULL);
	g_autofree gchar *path = g_test_build_filename(G_TEST_DIST, "data", "realkube", file, NULL);
	g_autoptr(JsonParser) parser = json_parser_new();
	g_autoptr(GError) error = NULL;
	g_autoptr(GByteArray) wire = g_byte_array_new();
	JsonObject *root;
	JsonObject *headers;
	JsonArray *chunks;
	Recording *rec = g_new0(Recording, 1);

	json_parser_load_from_file(parser, path, &error);
	g_assert_no_error(error);
	root = json_node_get_object(json_parser_get_root(parser));
	headers = json_object_get_object_member(root, "headers");
	rec->server = g_strdup(json_object_get_string_member(root, "server"));
	rec->status = (guint)json_object_get_int_member(root, "status");
	rec->ended = json_object_get_boolean_member(root, "ended");
	rec->content_type = g_strdup(json_object_get_string_member(headers, "content-type"));
	rec->content_encoding = g_strdup(
	        json_object_get_string_member_with_default(headers, "content-encoding", NULL));
	rec->chunks = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
	chunks = json_object_get_array_member(root, "chunks");
	for (guint i = 0; i < json_array_get_length(chunks); i++) {
		gsize size = 0;
		guchar *data = g_base64_decode(json_array_get_string_element(chunks, i), &size);

		g_byte_array_append(wire, data, (guint)size);
		g_ptr_array_add(rec->chunks, g_bytes_new_take(data, size));
	}
	rec->wire = g_byte_array_free_to_bytes(g_steal_pointer(&wire));
	rec->body = g_strcmp0(rec->content_encoding, "gzip") == 0 ? gunzip_members(rec->wire)
	                                                          : g_bytes_ref(rec->wire);
	g_assert_true(g_str_has_prefix(rec->server, "v1."));
	return rec;
}

/* Decodes a gzip stream incrementally, member after member, with zlib alone (not the code
 * under test): how many decoded bytes a prefix of the wire makes available. */
typedef struct {
	z_stream z;
	gboolean member_ended;
	guint64 decoded;
	GByteArray *out; /* (nullable): collects the output */
} Gunzip;

static void
gunzip_init(Gunzip *g, gboolean collect)
{
	memset(g, 0, sizeof(*g));
	g_assert_cmpint(inflateInit2(&g->z, 16 + MAX_WBITS), ==, Z_OK);
	g->out = collect ? g_byte_array_new() : NULL;
}

static void
gunzip_feed(Gunzip *g, const guint8 *data, gsize size)
{
	guint8 buffer[16384];

	g->z.next_in = (guint8 *)data;
	g->z.avail_in = (uInt)size;
	for (;;) {
		int ret;
		gsize produced;

		if (g->member_ended) {
			if (g->z.avail_in == 0)
				return;
			inflateReset(&g->z);
			g->member_ended = FALSE;
		}
		g->z.next_out = buffer;
		g->z.avail_out = sizeof(buffer);
		ret = inflate(&g->z, Z_NO_FLUSH);
		g_assert_true(ret == Z_OK || ret == Z_STREAM_END || ret == Z_BUF_ERROR);
		produced = sizeof(buffer) - g->z.avail_out;
		g->decoded += produced;
		if (g->out != NULL)
			g_byte_array_append(g->out, buffer, (guint)produced);
		if (ret == Z_STREAM_END)
			g->member_ended = TRUE;
		else if (g->z.avail_in == 0 && g->z.avail_out != 0)
			return;
		else if (ret == Z_BUF_ERROR)
			return;
	}
}

static void
gunzip_clear(Gunzip *g)
{
	inflateEnd(&g->z);
	if (g->out != NULL)
		g_byte_array_unref(g->out);
}

static GBytes *
gunzip_members(GBytes *wire)
{
	Gunzip g;
	gsize size = 0;
	const guint8 *data = g_bytes_get_data(wire, &size);
	GBytes *out;

	gunzip_init(&g, TRUE);
	gunzip_feed(&g, data, size);
	out = g_bytes_new(g.out->data, g.out->len);
	gunzip_clear(&g);
	return out;
}

/* What a recording says the cluster held: name -> "uid resourceVersion", and the end
 * bookmark's resourceVersion (a watch list) or the list's. */
typedef struct {
	GHashTable *objects;
	gchar *resource_version;
	gchar *continue_token;
} Truth;

static void
truth_clear(Truth *truth)
{
	g_clear_pointer(&truth->objects, g_hash_table_unref);
	g_clear_pointer(&truth->resource_version, g_free);
	g_clear_pointer(&truth->continue_token, g_free);
}

static void
truth_add(Truth *truth, JsonObject *object)
{
	JsonObject *metadata = json_object_get_object_member(object, "metadata");

	g_hash_table_insert(
	        truth->objects,
	        g_strdup_printf("%s/%s", json_object_get_string_member(metadata, "namespace"),
	                        json_object_get_string_member(metadata, "name")),
	        g_strdup_printf("%s %s", json_object_get_string_member(metadata, "uid"),
	                        json_object_get_string_member(metadata, "resourceVersion")));
}

/* Reads a watch list's lines (or a list page's items) with json-glib, adding to @truth. */
static void
truth_read(Truth *truth, Recording *rec)
{
	gsize size = 0;
	const gchar *data = g_bytes_get_data(rec->body, &size);
	g_autofree gchar *text = g_strndup(data, size);
	g_auto(GStrv) lines = NULL;

	if (truth->objects == NULL)
		truth->objects = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	if (!g_str_has_prefix(text, "{\"type\":")) {
		/* a list: one document */
		g_autoptr(JsonParser) parser = json_parser_new();
		g_autoptr(GError) error = NULL;
		JsonObject *root;
		JsonArray *items;

		json_parser_load_from_data(parser, text, -1, &error);
		g_assert_no_error(error);
		root = json_node_get_object(json_parser_get_root(parser));
		items = json_object_get_array_member(root, "items");
		for (guint i = 0; i < json_array_get_length(items); i++)
			truth_add(truth, json_array_get_object_element(items, i));
		g_free(truth->resource_version);
		truth->resource_version = g_strdup(json_object_get_string_member(
		        json_object_get_object_member(root, "metadata"), "resourceVersion"));
		g_free(truth->continue_token);
		truth->continue_token = g_strdup(json_object_get_string_member_with_default(
		        json_object_get_object_member(root, "metadata"), "continue", NULL));
		return;
	}
	lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i] != NULL; i++) {
		g_autoptr(JsonParser) parser = json_parser_new();
		g_autoptr(GError) error = NULL;
		JsonObject *event;
		JsonObject *object;
		const gchar *type;

		if (lines[i][0] == '\0')
			continue;
		json_parser_load_from_data(parser, lines[i], -1, &error);
		g_assert_no_error(error);
		event = json_node_get_object(json_parser_get_root(parser));
		type = json_object_get_string_member(event, "type");
		object = json_object_get_object_member(event, "object");
		if (g_strcmp0(type, "ADDED") == 0) {
			truth_add(truth, object);
		} else if (g_strcmp0(type, "BOOKMARK") == 0) {
			JsonObject *metadata = json_object_get_object_member(object, "metadata");

			g_free(truth->resource_version);
			truth->resource_version = g_strdup(
			        json_object_get_string_member(metadata, "resourceVersion"));
		}
	}
}

/* How the body of a streamed response is cut into writes. */
typedef enum {
	CUT_RECORDED, /* as the server flushed it */
	CUT_WHOLE,    /* everything in one write */
	CUT_BYTES,    /* one byte at a time */
	CUT_LINES,    /* after every newline (an uncompressed stream) */
	CUT_BOOKMARK, /* around and inside the end bookmark (an uncompressed stream) */
	CUT_RANDOM,   /* random sizes from a fixed seed */
} CutPlan;

/* How the informer is held back while the cuts arrive. */
typedef enum {
	PAUSE_NONE,
	PAUSE_BETWEEN,  /* paused before each write, resumed after it */
	PAUSE_CONSUMER, /* its consumer pauses it on every third event, in the event handler */
} PausePlan;

typedef struct {
	const gchar *recording;
	CutPlan cuts;
	PausePlan pause;
} StreamCase;

/* The cuts, as the lengths of the writes. */
static GArray *
plan_cuts(Recording *rec, CutPlan plan)
{
	GArray *lengths = g_array_new(FALSE, FALSE, sizeof(gsize));
	gsize size = 0;
	const gchar *wire = g_bytes_get_data(rec->wire, &size);
	gsize at = 0;

	switch (plan) {
	case CUT_RECORDED:
		for (guint i = 0; i < rec->chunks->len; i++) {
			gsize n = g_bytes_get_size(g_ptr_array_index(rec->chunks, i));

			g_array_append_val(lengths, n);
		}
		return lengths;
	case CUT_WHOLE:
		g_array_append_val(lengths, size);
		return lengths;
	case CUT_BYTES:
		for (gsize i = 0; i < size; i++) {
			gsize one = 1;

			g_array_append_val(lengths, one);
		}
		return lengths;
	case CUT_LINES:
		g_assert_null(rec->content_encoding);
		while (at < size) {
			const gchar *newline = memchr(wire + at, '\n', size - at);
			gsize n = newline != NULL ? (gsize)(newline - (wire + at)) + 1 : size - at;

			g_array_append_val(lengths, n);
			at += n;
		}
		return lengths;
	case CUT_BOOKMARK: {
		/* the last event and the bookmark's first byte together; then the bookmark cut in
		 * its middle and one byte before its newline */
		const gchar *bookmark = g_strrstr_len(wire, (gssize)size, "{\"type\":\"BOOKMARK\"");
		gsize start;
		gsize cuts[3];

		g_assert_null(rec->content_encoding);
		g_assert_nonnull(bookmark);
		start = (gsize)(bookmark - wire);
		cuts[0] = start + 1;
		cuts[1] = start + (size - start) / 2;
		cuts[2] = size - 1;
		for (guint i = 0; i < G_N_ELEMENTS(cuts); i++) {
			gsize n = cuts[i] - at;

			g_array_append_val(lengths, n);
			at = cuts[i];
		}
		{
			gsize rest = size - at;

			g_array_append_val(lengths, rest);
		}
		return lengths;
	}
	case CUT_RANDOM: {
		g_autoptr(GRand) rand = g_rand_new_with_seed(20261204);

		while (at < size) {
			gsize want = (gsize)g_rand_int_range(rand, 1, 4097);
			gsize n = MIN(want, size - at);

			g_array_append_val(lengths, n);
			at += n;
		}
		return lengths;
	}
	default:
		g_assert_not_reached();
	}
}

/* The replaying server and the informer it serves. */
typedef struct {
	GSocketService *service;
	guint16 port;
	MsdKubeClient *client;
	MsdInformer *informer;

	/* what is served */
	Recording *watch_list;     /* (nullable): a sendInitialEvents watch, served by the test */
	Recording *pages[2];       /* (nullable): a list, and its continuation */
	Recording *gone;           /* (nullable): the first plain watch gets this */
	Recording *bookmark;       /* (nullable): or this, held open after it */
	GSocketConnection *stream; /* (nullable): the held watch list, once asked */
	GPtrArray *held;           /* GSocketConnection: watches kept open without events */
	guint requests;
	guint watches;

	/* what the informer did */
	guint added;
	guint events;
	guint synced;
	guint pause_every;
} Replay;

typedef struct {
	Replay *replay;
	GSocketConnection *conn;
	GString *request;
	gchar buffer[4096];
} Incoming;

static void
write_all(GSocketConnection *conn, const void *data, gsize size)
{
	g_autoptr(GError) error = NULL;

	g_output_stream_write_all(g_io_stream_get_output_stream(G_IO_STREAM(conn)), data, size,
	                          NULL, NULL, &error);
	g_assert_no_error(error);
}

static void
write_head(GSocketConnection *conn, Recording *rec, gboolean close)
{
	g_autoptr(GString) head = g_string_new(NULL);

	g_string_append_printf(head, "HTTP/1.1 %u %s\r\n", rec->status,
	                       rec->status == 200 ? "OK" : "Status");
	g_string_append_printf(head, "Content-Type: %s\r\n", rec->content_type);
	if (rec->content_encoding != NULL)
		g_string_append_printf(head, "Content-Encoding: %s\r\nVary: Accept-Encoding\r\n",
		                       rec->content_encoding);
	g_string_append(head, "Cache-Control: no-cache, private\r\n");
	g_string_append(head, "Transfer-Encoding: chunked\r\n");
	if (close)
		g_string_append(head, "Connection: close\r\n");
	g_string_append(head, "\r\n");
	write_all(conn, head->str, head->len);
}

static void
write_chunk(GSocketConnection *conn, const void *data, gsize size)
{
	g_autofree gchar *size_line = g_strdup_printf("%zx\r\n", size);

	if (size == 0)
		return;
	write_all(conn, size_line, strlen(size_line));
	write_all(conn, data, size);
	write_all(conn, "\r\n", 2);
}

/* A complete response, as recorded, then the connection closed. */
static void
serve_whole(GSocketConnection *conn, Recording *rec)
{
	write_head(conn, rec, TRUE);
	for (guint i = 0; i < rec->chunks->len; i++) {
		GBytes *chunk = g_ptr_array_index(rec->chunks, i);

		write_chunk(conn, g_bytes_get_data(chunk, NULL), g_bytes_get_size(chunk));
	}
	write_all(conn, "0\r\n\r\n", 5);
	g_io_stream_close(G_IO_STREAM(conn), NULL, NULL);
}

/* A watch with nothing to say: the head, then the connection held open. */
static void
serve_quiet_watch(Replay *replay, GSocketConnection *conn)
{
	g_autoptr(GString) head = g_string_new("HTTP/1.1 200 OK\r\n"
	                                       "Content-Type: application/json\r\n"
	                                       "Transfer-Encoding: chunked\r\n\r\n");

	write_all(conn, head->str, head->len);
	g_ptr_array_add(replay->held, g_object_ref(conn));
}

static void
route(Replay *replay, GSocketConnection *conn, const gchar *request_line)
{
	replay->requests++;
	g_debug("replay: %s", request_line);
	if (strstr(request_line, "sendInitialEvents=true") != NULL) {
		g_assert_nonnull(replay->watch_list);
		g_assert_null(replay->stream);
		replay->stream = g_object_ref(conn);
	} else if (strstr(request_line, "watch=") != NULL) {
		if (replay->watches++ == 0 && replay->gone != NULL) {
			serve_whole(conn, replay->gone);
		} else if (replay->watches == 1 && replay->bookmark != NULL) {
			write_head(conn, replay->bookmark, FALSE);
			for (guint i = 0; i < replay->bookmark->chunks->len; i++) {
				GBytes *chunk = g_ptr_array_index(replay->bookmark->chunks, i);

				write_chunk(conn, g_bytes_get_data(chunk, NULL),
				            g_bytes_get_size(chunk));
			}
			g_ptr_array_add(replay->held, g_object_ref(conn));
		} else {
			serve_quiet_watch(replay, conn);
		}
	} else {
		gboolean next = strstr(request_line, "continue=") != NULL;

		g_assert_nonnull(replay->pages[next ? 1 : 0]);
		serve_whole(conn, replay->pages[next ? 1 : 0]);
	}
}

static void incoming_read_cb(GObject *source, GAsyncResult *result, gpointer user_data);

static void
incoming_read(Incoming *in)
{
	g_input_stream_read_async(g_io_stream_get_input_stream(G_IO_STREAM(in->conn)), in->buffer,
	                          sizeof(in->buffer), G_PRIORITY_DEFAULT, NULL, incoming_read_cb,
	                          in);
}

static void
incoming_free(Incoming *in)
{
	g_object_unref(in->conn);
	g_string_free(in->request, TRUE);
	g_free(in);
}

static void
incoming_read_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	Incoming *in = user_data;
	gssize n = g_input_stream_read_finish(G_INPUT_STREAM(source), result, NULL);

	if (n <= 0) {
		incoming_free(in);
		return;
	}
	g_string_append_len(in->request, in->buffer, n);
	if (strstr(in->request->str, "\r\n\r\n") == NULL) {
		incoming_read(in);
		return;
	}
	*strstr(in->request->str, "\r\n") = '\0';
	route(in->replay, in->conn, in->request->str);
	incoming_free(in);
}

static gboolean
incoming_cb(GSocketService *service, GSocketConnection *conn, GObject *source, gpointer data)
{
	Incoming *in = g_new0(Incoming, 1);

	in->replay = data;
	in->conn = g_object_ref(conn);
	in->request = g_string_new(NULL);
	incoming_read(in);
	return TRUE;
}

static void
event_cb(MsdInformer *informer, const MsdInformerEvent *event, gpointer user_data)
{
	Replay *replay = user_data;

	replay->events++;
	if (event->type == MESHSYNC_EVENT_TYPE_ADDED)
		replay->added++;
	/* back-pressure from the consumer, in the middle of whatever the informer read */
	if (replay->pause_every != 0 && replay->events % replay->pause_every == 0)
		msd_informer_pause(informer);
}

static void
synced_cb(MsdInformer *informer, gpointer user_data)
{
	((Replay *)user_data)->synced++;
}

static MeshSyncApiResource *
pods_resource(void)
{
	const gchar *verbs[] = {"list", "watch", "get", NULL};

	return meshsync_api_resource_new("", "v1", "Pod", "pods", TRUE, verbs, NULL);
}

static void
replay_start(Replay *replay)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *text = NULL;
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MeshSyncApiResource) pods = pods_resource();

	replay->held = g_ptr_array_new_with_free_func(g_object_unref);
	replay->service = g_socket_service_new();
	{
		g_autoptr(GInetAddress) loopback =
		        g_inet_address_new_loopback(G_SOCKET_FAMILY_IPV4);
		g_autoptr(GSocketAddress) address = g_inet_socket_address_new(loopback, 0);
		g_autoptr(GSocketAddress) bound = NULL;

		g_socket_listener_add_address(G_SOCKET_LISTENER(replay->service), address,
		                              G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL,
		                              &bound, &error);
		g_assert_no_error(error);
		replay->port = g_inet_socket_address_get_port(G_INET_SOCKET_ADDRESS(bound));
	}
	g_signal_connect(replay->service, "incoming", G_CALLBACK(incoming_cb), replay);
	g_socket_service_start(replay->service);

	text = g_strdup_printf("apiVersion: v1\nkind: Config\nclusters:\n- name: replay\n"
	                       "  cluster:\n    server: http://127.0.0.1:%u\nusers:\n"
	                       "- name: replay\n  user: {}\ncontexts:\n- name: replay\n"
	                       "  context:\n    cluster: replay\n    user: replay\n"
	                       "current-context: replay\n",
	                       replay->port);
	config = meshsync_kube_config_new_from_data(text, -1, NULL, &error);
	g_assert_no_error(error);
	replay->client = msd_kube_client_new(config, &error);
	g_assert_no_error(error);

	replay->informer = msd_informer_new(NULL, replay->client, pods);
	/* milliseconds: a relist after 410 must not wait for production delays */
	msd_informer_set_delays(replay->informer, 10, 40, 20);
	msd_informer_set_event_func(replay->informer, event_cb, replay, NULL);
	g_signal_connect(replay->informer, "synced", G_CALLBACK(synced_cb), replay);
}

static gboolean
pointer_cleared(gpointer user_data)
{
	return *(gpointer *)user_data == NULL;
}

static void
replay_stop(Replay *replay)
{
	MsdInformer *weak = replay->informer;

	msd_informer_stop(replay->informer);
	g_object_add_weak_pointer(G_OBJECT(weak), (gpointer *)&weak);
	g_clear_object(&replay->informer);
	wait_until(pointer_cleared, &weak, "the informer to be finalized");
	g_socket_service_stop(replay->service);
	g_socket_listener_close(G_SOCKET_LISTENER(replay->service));
	g_clear_object(&replay->service);
	g_clear_object(&replay->stream);
	g_ptr_array_unref(replay->held);
	g_clear_object(&replay->client);
	g_clear_pointer(&replay->watch_list, recording_free);
	g_clear_pointer(&replay->pages[0], recording_free);
	g_clear_pointer(&replay->pages[1], recording_free);
	g_clear_pointer(&replay->gone, recording_free);
	g_clear_pointer(&replay->bookmark, recording_free);
}

typedef struct {
	Replay *replay;
	guint64 bytes;
} BytesWait;

/* The informer has read @bytes of the stream; a consumer's pause is lifted meanwhile, as the
 * output recovering would. */
static gboolean
bytes_read(gpointer user_data)
{
	BytesWait *wait = user_data;
	MsdInformerCounters counters;

	if (msd_informer_get_paused(wait->replay->informer))
		msd_informer_resume(wait->replay->informer);
	msd_informer_get_counters(wait->replay->informer, &counters);
	g_assert_cmpuint(counters.stream_bytes, <=, wait->bytes);
	return counters.stream_bytes == wait->bytes;
}

static gboolean
stream_asked(gpointer user_data)
{
	return ((Replay *)user_data)->stream != NULL;
}

typedef struct {
	Replay *replay;
	guint objects;
} SyncWait;

static gboolean
synced_with(gpointer user_data)
{
	SyncWait *wait = user_data;
	Replay *replay = wait->replay;

	if (msd_informer_get_paused(replay->informer))
		msd_informer_resume(replay->informer);
	return replay->synced > 0 &&
	       msd_store_get_size(msd_informer_get_store(replay->informer)) == wait->objects;
}

static void
iterate_pending(void)
{
	while (g_main_context_pending(NULL))
		g_main_context_iteration(NULL, FALSE);
}

/* The store holds exactly @truth's objects, each with its uid and resourceVersion. */
static void
check_store(Replay *replay, Truth *truth)
{
	MsdStore *store = msd_informer_get_store(replay->informer);
	GHashTableIter iter;
	gpointer key;
	gpointer value;
	MsdInformerCounters counters;

	g_assert_cmpuint(g_hash_table_size(truth->objects), >, 0);
	g_assert_cmpuint(msd_store_get_size(store), ==, g_hash_table_size(truth->objects));
	g_hash_table_iter_init(&iter, truth->objects);
	while (g_hash_table_iter_next(&iter, &key, &value)) {
		g_auto(GStrv) name = g_strsplit(key, "/", 2);
		g_auto(GStrv) uid_rv = g_strsplit(value, " ", 2);
		MsdStoreEntry *entry = msd_store_lookup_by_name(store, name[0], name[1]);

		g_assert_nonnull(entry);
		g_assert_cmpstr(entry->uid, ==, uid_rv[0]);
		g_assert_cmpstr(entry->resource_version, ==, uid_rv[1]);
	}
	g_assert_cmpuint(replay->synced, ==, 1);
	g_assert_cmpuint(replay->added, ==, g_hash_table_size(truth->objects));
	g_assert_cmpstr(msd_informer_get_resource_version(replay->informer), ==,
	                truth->resource_version);
	msd_informer_get_counters(replay->informer, &counters);
	g_assert_cmpuint(counters.skipped, ==, 0);
}

/* A streaming list, cut and paused as @data says; the watch stays open after it, as a real
 * one does. */
static void
test_watch_list(gconstpointer data)
{
	const StreamCase *c = data;
	Replay replay = {0};
	Truth truth = {0};
	g_autoptr(GArray) lengths = NULL;
	const guint8 *wire;
	gsize offset = 0;
	Gunzip gunzip;
	gboolean gzip;
	MsdInformerCounters counters;

	replay_start(&replay);
	replay.watch_list = recording_load(c->recording);
	truth_read(&truth, replay.watch_list);
	gzip = g_strcmp0(replay.watch_list->content_encoding, "gzip") == 0;
	gunzip_init(&gunzip, FALSE);
	lengths = plan_cuts(replay.watch_list, c->cuts);
	wire = g_bytes_get_data(replay.watch_list->wire, NULL);
	if (c->pause == PAUSE_CONSUMER)
		replay.pause_every = 3;

	msd_informer_start(replay.informer);
	wait_until(stream_asked, &replay, "the streaming list request");
	write_head(replay.stream, replay.watch_list, FALSE);
	for (guint i = 0; i < lengths->len; i++) {
		gsize n = g_array_index(lengths, gsize, i);
		BytesWait wait = {&replay, 0};

		if (c->pause == PAUSE_BETWEEN)
			msd_informer_pause(replay.informer);
		write_chunk(replay.stream, wire + offset, n);
		if (gzip) {
			gunzip_feed(&gunzip, wire + offset, n);
			wait.bytes = gunzip.decoded;
		} else {
			wait.bytes = offset + n;
		}
		offset += n;
		if (c->pause == PAUSE_BETWEEN) {
			/* what arrived while paused must wait: nothing read past the lines held */
			iterate_pending();
			msd_informer_resume(replay.informer);
		}
		wait_until(bytes_read, &wait, "the informer to read what was written");
	}
	g_assert_cmpuint(offset, ==, g_bytes_get_size(replay.watch_list->wire));
	{
		SyncWait wait = {&replay, g_hash_table_size(truth.objects)};

		wait_until(synced_with, &wait, "the end bookmark");
	}
	check_store(&replay, &truth);
	msd_informer_get_counters(replay.informer, &counters);
	g_assert_cmpuint(counters.errors, ==, 0);
	g_assert_cmpuint(counters.relists, ==, 0);
	g_assert_cmpuint(counters.stream_bytes, ==, g_bytes_get_size(replay.watch_list->body));
	/* one request: the watch list itself, no fallback to a paginated list */
	g_assert_cmpuint(replay.requests, ==, 1);

	gunzip_clear(&gunzip);
	truth_clear(&truth);
	replay_stop(&replay);
}

/* Serves the recorded two-page list, and fills @truth with its objects at the list's
 * resourceVersion (the first page's). */
static void
replay_pages(Replay *replay, Truth *truth)
{
	Truth first = {0};

	replay->pages[0] = recording_load("list-pods-page1");
	replay->pages[1] = recording_load("list-pods-page2");
	truth_read(&first, replay->pages[0]);
	g_assert_nonnull(first.continue_token);
	truth_read(truth, replay->pages[0]);
	truth_read(truth, replay->pages[1]);
	g_assert_null(truth->continue_token);
	g_free(truth->resource_version);
	truth->resource_version = g_steal_pointer(&first.resource_version);
	truth_clear(&first);
	/* the size the recording's pages were asked with */
	msd_informer_set_watch_list(replay->informer, FALSE);
	msd_informer_set_page_size(replay->informer, 12);
}

/* A paginated list of two pages (continue), served as recorded, then a quiet watch. */
static void
test_paginated_list(void)
{
	Replay replay = {0};
	Truth truth = {0};
	SyncWait wait = {&replay, 0};

	replay_start(&replay);
	replay_pages(&replay, &truth);
	msd_informer_start(replay.informer);
	wait.objects = g_hash_table_size(truth.objects);
	wait_until(synced_with, &wait, "the paginated list");
	check_store(&replay, &truth);
	g_assert_cmpuint(replay.requests, >=, 2);
	truth_clear(&truth);
	replay_stop(&replay);
}

/* A list above 128 KiB, which the real server gzips when asked. */
static void
test_gzip_list(void)
{
	Replay replay = {0};
	Truth truth = {0};
	SyncWait wait = {&replay, 0};

	replay_start(&replay);
	replay.pages[0] = recording_load("list-pods-gzip");
	g_assert_cmpstr(replay.pages[0]->content_encoding, ==, "gzip");
	truth_read(&truth, replay.pages[0]);
	g_assert_null(truth.continue_token);
	msd_informer_set_watch_list(replay.informer, FALSE);
	msd_informer_start(replay.informer);
	wait.objects = g_hash_table_size(truth.objects);
	wait_until(synced_with, &wait, "the gzip list");
	check_store(&replay, &truth);
	truth_clear(&truth);
	replay_stop(&replay);
}

typedef struct {
	Replay *replay;
	guint watches;
} WatchesWait;

static gboolean
watches_asked(gpointer user_data)
{
	WatchesWait *wait = user_data;

	return wait->replay->watches >= wait->watches;
}

/* A watch from a compacted resourceVersion gets the real server's 410 ERROR event: the
 * informer lists again and watches on, nothing lost. */
static void
test_watch_gone(void)
{
	Replay replay = {0};
	Truth truth = {0};
	WatchesWait wait = {&replay, 2};
	MsdInformerCounters counters;

	replay_start(&replay);
	replay_pages(&replay, &truth);
	replay.gone = recording_load("watch-gone");
	msd_informer_start(replay.informer);
	wait_until(watches_asked, &wait, "a watch after the relist");
	msd_informer_get_counters(replay.informer, &counters);
	g_assert_cmpuint(counters.relists, ==, 1);
	g_assert_cmpuint(counters.errors, ==, 1);
	/* a relist that finds the same objects passes nothing on a second time */
	replay.synced = 1;
	check_store(&replay, &truth);
	truth_clear(&truth);
	replay_stop(&replay);
}

typedef struct {
	Replay *replay;
	const gchar *resource_version;
} VersionWait;

static gboolean
at_version(gpointer user_data)
{
	VersionWait *wait = user_data;

	return g_strcmp0(msd_informer_get_resource_version(wait->replay->informer),
	                 wait->resource_version) == 0;
}

/* The server's periodic bookmark on a plain watch (shaped as it sends it: the kind's empty
 * spec and status) moves the informer's resourceVersion on, and nothing else. */
static void
test_periodic_bookmark(void)
{
	Replay replay = {0};
	Truth truth = {0};
	Truth bookmark = {0};
	VersionWait wait = {&replay, NULL};
	MsdInformerCounters counters;

	replay_start(&replay);
	replay_pages(&replay, &truth);
	replay.bookmark = recording_load("watch-bookmark");
	g_assert_null(replay.bookmark->content_encoding);
	truth_read(&bookmark, replay.bookmark);
	g_assert_nonnull(bookmark.resource_version);
	g_assert_cmpstr(bookmark.resource_version, !=, truth.resource_version);
	msd_informer_start(replay.informer);
	wait.resource_version = bookmark.resource_version;
	wait_until(at_version, &wait, "the bookmark's resourceVersion");
	msd_informer_get_counters(replay.informer, &counters);
	g_assert_cmpuint(counters.errors, ==, 0);
	g_assert_cmpuint(counters.relists, ==, 0);
	g_assert_cmpuint(replay.events, ==, g_hash_table_size(truth.objects));
	g_free(truth.resource_version);
	truth.resource_version = g_strdup(bookmark.resource_version);
	check_store(&replay, &truth);
	truth_clear(&bookmark);
	truth_clear(&truth);
	replay_stop(&replay);
}

static const StreamCase stream_cases[] = {
        {"watch-list-pods-gzip", CUT_RECORDED, PAUSE_NONE},
        {"watch-list-pods-gzip", CUT_WHOLE, PAUSE_NONE},
        {"watch-list-pods-gzip", CUT_BYTES, PAUSE_NONE},
        {"watch-list-pods-gzip", CUT_RANDOM, PAUSE_NONE},
        {"watch-list-pods-gzip", CUT_RECORDED, PAUSE_BETWEEN},
        {"watch-list-pods-gzip", CUT_RANDOM, PAUSE_CONSUMER},
        {"watch-list-services-gzip", CUT_RECORDED, PAUSE_NONE},
        {"watch-list-services-gzip", CUT_WHOLE, PAUSE_CONSUMER},
        {"watch-list-services-gzip", CUT_BYTES, PAUSE_BETWEEN},
        {"watch-list-pods", CUT_RECORDED, PAUSE_NONE},
        {"watch-list-pods", CUT_WHOLE, PAUSE_NONE},
        {"watch-list-pods", CUT_WHOLE, PAUSE_CONSUMER},
        {"watch-list-pods", CUT_BYTES, PAUSE_NONE},
        {"watch-list-pods", CUT_LINES, PAUSE_NONE},
        {"watch-list-pods", CUT_LINES, PAUSE_BETWEEN},
        {"watch-list-pods", CUT_BOOKMARK, PAUSE_NONE},
        {"watch-list-pods", CUT_BOOKMARK, PAUSE_CONSUMER},
        {"watch-list-pods", CUT_RANDOM, PAUSE_BETWEEN},
};

static const gchar *
cut_name(CutPlan plan)
{
	const gchar *names[] = {"recorded", "whole", "bytes", "lines", "bookmark", "random"};

	return names[plan];
}

int
main(int argc, char **argv)
{
	const gchar *pauses[] = {"", "/paused-between", "/consumer-pauses"};

	g_test_init(&argc, &argv, NULL);
	for (guint i = 0; i < G_N_ELEMENTS(stream_cases); i++) {
		const StreamCase *c = &stream_cases[i];
		g_autofree gchar *path = g_strdup_printf("/replay/%s/%s%s", c->recording,
		                                         cut_name(c->cuts), pauses[c->pause]);

		g_test_add_data_func(path, c, test_watch_list);
	}
	g_test_add_func("/replay/list-pods/paginated", test_paginated_list);
	g_test_add_func("/replay/list-pods-gzip", test_gzip_list);
	g_test_add_func("/replay/watch-gone/relists", test_watch_gone);
	g_test_add_func("/replay/watch-bookmark/periodic", test_periodic_bookmark);
	return g_test_run();
}
