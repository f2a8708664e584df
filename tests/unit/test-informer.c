/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <json-glib/json-glib.h>
#include <libsoup/soup.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>

#include "meshsync-error.h"
#include "informer/msd-informer-private.h"
#include "informer/msd-line-splitter.h"
#include "test-kubesim.h"
#include "test-log-capture.h"

#define SEEDED_PODS 200

/* ---- the newline splitter, without a network ---- */

/* Each splitter test runs twice: with bytes pushed (a copy), and read straight into the room
 * msd_line_splitter_reserve() gives, as a read that cannot wait does (more room asked for than
 * filled). */
static gboolean feed_by_reserve;

static void feed(MsdLineSplitter *splitter, const gchar *data, gsize length);
static void
feed(MsdLineSplitter *splitter, const gchar *data, gsize length)
{
	gchar *room;

	if (!feed_by_reserve) {
		msd_line_splitter_push(splitter, data, length);
		return;
	}
	room = msd_line_splitter_reserve(splitter, length + 64);
	memcpy(room, data, length);
	msd_line_splitter_commit(splitter, length);
	/* a read that brought nothing hands nothing over */
	msd_line_splitter_reserve(splitter, 16);
	msd_line_splitter_commit(splitter, 0);
}

static void
test_line_splitter_reads(void)
{
	g_autoptr(MsdLineSplitter) splitter = msd_line_splitter_new(1024);
	const gchar *stream = "{\"a\":1}\n{\"b\":\n2}\r\n\n{\"c\":3}\n{\"partial\"";
	g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(g_free);
	const gchar *line;
	gsize length;

	/* every split point, including inside "\r\n" and inside a line */
	for (gsize cut = 0; cut <= strlen(stream); cut++) {
		g_autoptr(GError) error = NULL;

		msd_line_splitter_reset(splitter);
		g_ptr_array_set_size(lines, 0);
		feed(splitter, stream, cut);
		while (msd_line_splitter_next(splitter, &line, &length, &error))
			g_ptr_array_add(lines, g_strndup(line, length));
		g_assert_no_error(error);
		feed(splitter, stream + cut, strlen(stream) - cut);
		while (msd_line_splitter_next(splitter, &line, &length, &error))
			g_ptr_array_add(lines, g_strndup(line, length));
		g_assert_no_error(error);

		g_assert_cmpuint(lines->len, ==, 4);
		g_assert_cmpstr(g_ptr_array_index(lines, 0), ==, "{\"a\":1}");
		g_assert_cmpstr(g_ptr_array_index(lines, 1), ==, "{\"b\":");
		g_assert_cmpstr(g_ptr_array_index(lines, 2), ==, "2}");
		g_assert_cmpstr(g_ptr_array_index(lines, 3), ==, "{\"c\":3}");
		/* the unfinished last line stays buffered */
		g_assert_cmpuint(msd_line_splitter_get_pending(splitter), ==,
		                 strlen("{\"partial\""));
	}
}

static void
test_line_splitter_byte_by_byte(void)
{
	g_autoptr(MsdLineSplitter) splitter = msd_line_splitter_new(1024);
	const gchar *stream = "first line\nsecond\r\nthird\n";
	g_autoptr(GString) joined = g_string_new(NULL);
	const gchar *line;
	gsize length;

	for (const gchar *p = stream; *p != '\0'; p++) {
		feed(splitter, p, 1);
		while (msd_line_splitter_next(splitter, &line, &length, NULL)) {
			g_string_append_len(joined, line, (gssize)length);
			g_string_append_c(joined, '|');
		}
	}
	g_assert_cmpstr(joined->str, ==, "first line|second|third|");
	g_assert_cmpuint(msd_line_splitter_get_pending(splitter), ==, 0);
}

static void
test_line_splitter_overlong(void)
{
	g_autoptr(MsdLineSplitter) splitter = msd_line_splitter_new(8);
	g_autoptr(GError) error = NULL;
	const gchar *line;
	gsize length;

	feed(splitter, "12345678\n", 9);
	g_assert_true(msd_line_splitter_next(splitter, &line, &length, &error));
	g_assert_cmpmem(line, length, "12345678", 8);
	/* a line that has not ended yet but is already too long fails before it ends */
	feed(splitter, "123456789", 9);
	g_assert_false(msd_line_splitter_next(splitter, &line, &length, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_TOO_LARGE);
	g_clear_error(&error);
	/* the rest of it is dropped, reported once; the line after it comes through */
	feed(splitter, "0123456789", 10);
	g_assert_false(msd_line_splitter_next(splitter, &line, &length, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(msd_line_splitter_get_pending(splitter), ==, 1);
	feed(splitter, "tail\nnext\n", 10);
	g_assert_true(msd_line_splitter_next(splitter, &line, &length, &error));
	g_assert_cmpmem(line, length, "next", 4);
	g_assert_false(msd_line_splitter_next(splitter, &line, &length, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(msd_line_splitter_get_pending(splitter), ==, 0);
}

/* A line exactly at the limit, ended by CRLF, is accepted however the stream is cut, also
 * between its CR and its LF: the CR is not part of the line (found by fuzz-watch's model of
 * the splitter). */
static void
test_line_splitter_crlf_at_limit(void)
{
	const gchar *stream = "12345678\r\n123456789\r\n";

	for (gsize cut = 0; cut <= 10; cut++) {
		g_autoptr(MsdLineSplitter) splitter = msd_line_splitter_new(8);
		g_autoptr(GError) error = NULL;
		const gchar *line = NULL;
		gsize length = 0;
		gboolean got;

		g_test_message("cut at %" G_GSIZE_FORMAT, cut);
		feed(splitter, stream, cut);
		got = msd_line_splitter_next(splitter, &line, &length, &error);
		g_assert_no_error(error);
		if (!got) {
			feed(splitter, stream + cut, 10 - cut);
			got = msd_line_splitter_next(splitter, &line, &length, &error);
			g_assert_no_error(error);
		}
		g_assert_true(got);
		g_assert_cmpmem(line, length, "12345678", 8);
		/* nine bytes before the CR: too long, whether the CR is already there or not */
		feed(splitter, stream + 10, 10);
		g_assert_false(msd_line_splitter_next(splitter, &line, &length, &error));
		g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_TOO_LARGE);
	}
}

/* ---- against meshsync-kubesim ---- */

/* What a test saw from one informer. */
typedef struct {
	GPtrArray *types;   /* guint per event */
	GPtrArray *uids;    /* (element-type utf8) */
	GPtrArray *names;   /* (element-type utf8) "<namespace>/<name>" */
	GPtrArray *objects; /* (element-type GBytes) */
	guint synced;
	guint stop_after; /* stop the informer from the handler at this event count (0: never) */
	MsdInformer *informer; /* (unowned) */
} Recorder;

static void
recorder_init(Recorder *rec, MsdInformer *informer)
{
	memset(rec, 0, sizeof(*rec));
	rec->types = g_ptr_array_new();
	rec->uids = g_ptr_array_new_with_free_func(g_free);
	rec->names = g_ptr_array_new_with_free_func(g_free);
	rec->objects = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
	rec->informer = informer;
}

static void
recorder_clear(Recorder *rec)
{
	g_ptr_array_unref(rec->types);
	g_ptr_array_unref(rec->uids);
	g_ptr_array_unref(rec->names);
	g_ptr_array_unref(rec->objects);
}

static void
event_cb(MsdInformer *informer, const MsdInformerEvent *event, gpointer user_data)
{
	Recorder *rec = user_data;
	g_autoptr(MsdStoreEntry) entry = NULL;
	MeshSyncEventType type = event->type;
	g_autoptr(GBytes) object = msd_store_entry_dup_object(event->entry);
	gsize size = 0;
	const gchar *data = g_bytes_get_data(object, &size);

	entry = msd_store_entry_new_from_json(data, size, NULL);
	g_assert_nonnull(entry);
	g_assert_cmpstr(entry->uid, ==, event->entry->uid);
	g_assert_cmpstr(event->kind, ==, "Pod");
	g_assert_cmpstr(event->api_version, ==, "v1");
	if (event->doc != NULL) {
		/* the tokens handed over are the ones the entry was cut from, still alive */
		g_autoptr(MsdStoreEntry) again = msd_store_entry_new_from_tokens(
		        event->doc, (guint)event->index, event->kind, event->api_version, NULL);
		g_autoptr(GBytes) copied = NULL;

		g_assert_nonnull(again);
		copied = msd_store_entry_dup_object(again);
		g_assert_true(g_bytes_equal(copied, object));
	} else {
		/* only relists find deletions without the server's final state */
		g_assert_cmpint(type, ==, MESHSYNC_EVENT_TYPE_DELETED);
	}
	g_assert_cmpint(type, >=, MESHSYNC_EVENT_TYPE_ADDED);
	g_assert_cmpint(type, <=, MESHSYNC_EVENT_TYPE_DELETED);
	/* the emitted bytes are the store's: no managedFields, kind always present */
	g_assert_null(g_strstr_len(data, (gssize)size, "\"managedFields\""));
	g_assert_nonnull(g_strstr_len(data, (gssize)size, "\"kind\":\"Pod\""));
	g_ptr_array_add(rec->types, GUINT_TO_POINTER(type));
	g_ptr_array_add(rec->uids, g_strdup(entry->uid));
	g_ptr_array_add(rec->names, g_strdup_printf("%s/%s", entry->namespace_, entry->name));
	g_ptr_array_add(rec->objects, g_bytes_ref(object));
	if (rec->stop_after != 0 && rec->types->len == rec->stop_after)
		msd_informer_stop(rec->informer);
}

static void
synced_cb(MsdInformer *informer, gpointer user_data)
{
	Recorder *rec = user_data;

	rec->synced++;
}

static guint
recorder_count(Recorder *rec, MeshSyncEventType type, const gchar *name)
{
	guint n = 0;

	for (guint i = 0; i < rec->types->len; i++) {
		if (GPOINTER_TO_UINT(g_ptr_array_index(rec->types, i)) == type &&
		    (name == NULL || g_strcmp0(g_ptr_array_index(rec->names, i), name) == 0))
			n++;
	}
	return n;
}

static guint
warnings_containing(const gchar *text)
{
	return test_log_capture_count(text);
}

typedef struct {
	Sim *sim;
	gint64 watches;
} WatchWait;

static gboolean
watches_open(gpointer user_data)
{
	WatchWait *wait = user_data;

	return sim_stat(wait->sim, "watches") >= wait->watches;
}

static gboolean
watches_exactly(gpointer user_data)
{
	WatchWait *wait = user_data;

	return sim_stat(wait->sim, "watches") == wait->watches;
}

static void
wait_for_watches(Sim *sim, gint64 count)
{
	WatchWait wait = {sim, count};

	wait_until(watches_open, &wait, "open watches");
}

/* The names of all pods the simulator holds, listed with json-glib (not the code under test). */
static GHashTable *
sim_pod_names(Sim *sim)
{
	g_autoptr(GBytes) answer = NULL;
	g_autoptr(JsonParser) parser = json_parser_new();
	g_autoptr(GError) error = NULL;
	GHashTable *names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	JsonArray *items;

	g_assert_cmpuint(sim_request(sim, "GET", "/api/v1/pods", NULL, &answer), ==, 200);
	json_parser_load_from_data(parser, g_bytes_get_data(answer, NULL),
	                           (gssize)g_bytes_get_size(answer), &error);
	g_assert_no_error(error);
	items = json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)),
	                                     "items");
	for (guint i = 0; i < json_array_get_length(items); i++) {
		JsonObject *metadata = json_object_get_object_member(
		        json_array_get_object_element(items, i), "metadata");

		g_hash_table_add(
		        names, g_strdup_printf("%s/%s",
		                               json_object_get_string_member(metadata, "namespace"),
		                               json_object_get_string_member(metadata, "name")));
	}
	return names;
}

static MeshSyncApiResource *
pods_resource(void)
{
	const gchar *verbs[] = {"list", "watch", "get", NULL};

	return meshsync_api_resource_new("", "v1", "Pod", "pods", TRUE, verbs, NULL);
}

typedef struct {
	Sim sim;
	MsdInformer *informer;
	Recorder rec;
} Fixture;

static void
fixture_setup(Fixture *fx, gconstpointer data)
{
	g_autoptr(MeshSyncApiResource) pods = pods_resource();

	sim_start(&fx->sim, SEEDED_PODS, 3);
	fx->informer = msd_informer_new(NULL, fx->sim.client, pods);
	/* milliseconds, not seconds: tests must not wait for production delays */
	msd_informer_set_delays(fx->informer, 10, 40, 20);
	recorder_init(&fx->rec, fx->informer);
	msd_informer_set_event_func(fx->informer, event_cb, &fx->rec, NULL);
	g_signal_connect(fx->informer, "synced", G_CALLBACK(synced_cb), &fx->rec);
	test_log_capture_clear();
}

static gboolean
pointer_cleared(gpointer user_data)
{
	return *(gpointer *)user_data == NULL;
}

/* Stops and drops @informer, then waits until it is finalized: every request it had in flight
 * must end after stop, or the references they hold would keep it (and its store) alive. */
static void
stop_and_finalize(MsdInformer **informer)
{
	MsdInformer *weak = *informer;

	msd_informer_stop(weak);
	g_object_add_weak_pointer(G_OBJECT(weak), (gpointer *)&weak);
	g_clear_object(informer);
	wait_until(pointer_cleared, &weak, "the informer to be finalized");
}

static void
fixture_teardown(Fixture *fx, gconstpointer data)
{
	stop_and_finalize(&fx->informer);
	recorder_clear(&fx->rec);
	sim_stop(&fx->sim);
}

static gboolean
is_synced(gpointer user_data)
{
	return ((Fixture *)user_data)->rec.synced > 0;
}

typedef struct {
	Recorder *rec;
	MeshSyncEventType type;
	const gchar *name;
} EventWait;

static gboolean
event_seen(gpointer user_data)
{
	EventWait *wait = user_data;

	return recorder_count(wait->rec, wait->type, wait->name) > 0;
}

static void
wait_for_event(Fixture *fx, MeshSyncEventType type, const gchar *name)
{
	EventWait wait = {&fx->rec, type, name};
	g_autofree gchar *what =
	        g_strdup_printf("%s of %s", meshsync_event_type_to_string(type), name);

	wait_until(event_seen, &wait, what);
}

/* Every seeded pod arrives once as ADDED before "synced", and the store holds them all. */
static void
check_initial_sync(Fixture *fx, GHashTable *expected)
{
	g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);

	msd_informer_start(fx->informer);
	wait_until(is_synced, fx, "synced");
	g_assert_cmpuint(fx->rec.synced, ==, 1);
	g_assert_true(msd_informer_get_synced(fx->informer));
	g_assert_cmpuint(g_hash_table_size(expected), >=, SEEDED_PODS);
	g_assert_cmpuint(fx->rec.types->len, ==, g_hash_table_size(expected));
	for (guint i = 0; i < fx->rec.types->len; i++) {
		const gchar *name = g_ptr_array_index(fx->rec.names, i);

		g_assert_cmpuint(GPOINTER_TO_UINT(g_ptr_array_index(fx->rec.types, i)), ==,
		                 MESHSYNC_EVENT_TYPE_ADDED);
		g_assert_true(g_hash_table_contains(expected, name));
		g_assert_true(g_hash_table_add(seen, (gpointer)name));
	}
	g_assert_cmpuint(msd_store_get_size(msd_informer_get_store(fx->informer)), ==,
	                 g_hash_table_size(expected));
	g_assert_cmpuint(msd_store_get_bytes_held(msd_informer_get_store(fx->informer)), >, 0);
}

static void
test_initial_sync_streaming(Fixture *fx, gconstpointer data)
{
	g_autoptr(GHashTable) expected = sim_pod_names(&fx->sim);
	MsdInformerCounters counters;

	check_initial_sync(fx, expected);
	msd_informer_get_counters(fx->informer, &counters);
	g_assert_cmpuint(counters.relists, ==, 0);
	g_assert_cmpuint(counters.errors, ==, 0);
	g_assert_cmpuint(counters.events, ==, fx->rec.types->len);
}

static void
test_initial_sync_paginated(Fixture *fx, gconstpointer data)
{
	/* 200 pods in pages of 37: several continue tokens, the last page short */
	g_autoptr(GHashTable) expected = sim_pod_names(&fx->sim);

	msd_informer_set_watch_list(fx->informer, FALSE);
	msd_informer_set_page_size(fx->informer, 37);
	check_initial_sync(fx, expected);
}

static gchar *
pod_json(const gchar *namespace_, const gchar *name, const gchar *label)
{
	return g_strdup_printf(
	        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
	        "\"namespace\":\"%s\",\"labels\":{\"test\":\"%s\"}},\"spec\":{\"containers\":"
	        "[{\"name\":\"c\",\"image\":\"nginx\"}]}}",
	        name, namespace_, label);
}

/* A namespace the simulator has, taken from a stored pod. */
static gchar *
some_namespace(Fixture *fx)
{
	g_autoptr(GPtrArray) entries = msd_store_snapshot(msd_informer_get_store(fx->informer));

	g_assert_cmpuint(entries->len, >, 0);
	return g_strdup(((MsdStoreEntry *)g_ptr_array_index(entries, 0))->namespace_);
}

static void
delete_pod(Fixture *fx, const gchar *namespace_, const gchar *name)
{
	g_autofree gchar *action = g_strdup_printf(
	        "objects?apiVersion=v1&kind=Pod&namespace=%s&name=%s", namespace_, name);

	sim_admin(&fx->sim, "DELETE", action, NULL);
}

static void
test_watch_events(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *ns = NULL;
	g_autofree gchar *key = NULL;
	g_autofree gchar *created = NULL;
	g_autofree gchar *replaced = NULL;
	g_autoptr(GBytes) object = NULL;
	MsdStoreEntry *entry;

	msd_informer_start(fx->informer);
	wait_until(is_synced, fx, "synced");
	ns = some_namespace(fx);
	key = g_strdup_printf("%s/watched", ns);
	created = pod_json(ns, "watched", "one");
	replaced = pod_json(ns, "watched", "two");

	sim_admin(&fx->sim, "POST", "objects", created);
	wait_for_event(fx, MESHSYNC_EVENT_TYPE_ADDED, key);
	sim_admin(&fx->sim, "PUT", "objects", replaced);
	wait_for_event(fx, MESHSYNC_EVENT_TYPE_MODIFIED, key);
	entry = msd_store_lookup_by_name(msd_informer_get_store(fx->informer), ns, "watched");
	g_assert_nonnull(entry);
	object = msd_store_entry_dup_object(entry);
	g_assert_nonnull(g_strstr_len(g_bytes_get_data(object, NULL),
	                              (gssize)g_bytes_get_size(object), "\"test\":\"two\""));
	delete_pod(fx, ns, "watched");
	wait_for_event(fx, MESHSYNC_EVENT_TYPE_DELETED, key);
	g_assert_null(
	        msd_store_lookup_by_name(msd_informer_get_store(fx->informer), ns, "watched"));

	g_assert_cmpuint(recorder_count(&fx->rec, MESHSYNC_EVENT_TYPE_ADDED, key), ==, 1);
	g_assert_cmpuint(recorder_count(&fx->rec, MESHSYNC_EVENT_TYPE_MODIFIED, key), ==, 1);
	g_assert_cmpuint(recorder_count(&fx->rec, MESHSYNC_EVENT_TYPE_DELETED, key), ==, 1);
}

typedef struct {
	MsdInformer *informer;
	guint64 watch_restarts;
} RestartWait;

static gboolean
watch_restarted(gpointer user_data)
{
	RestartWait *wait = user_data;
	MsdInformerCounters counters;

	msd_informer_get_counters(wait->informer, &counters);
	return counters.watch_restarts >= wait->watch_restarts;
}

static void
test_close_watches(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *ns = NULL;
	g_autofree gchar *key = NULL;
	g_autofree gchar *created = NULL;
	RestartWait wait = {fx->informer, 1};
	MsdInformerCounters counters;

	msd_informer_start(fx->informer);
	wait_until(is_synced, fx, "synced");
	wait_for_watches(&fx->sim, 1);
	ns = some_namespace(fx);
	key = g_strdup_printf("%s/after-close", ns);

	sim_admin(&fx->sim, "POST", "close-watches", NULL);
	wait_until(watch_restarted, &wait, "the watch to reopen");
	wait_for_watches(&fx->sim, 1);
	created = pod_json(ns, "after-close", "x");
	sim_admin(&fx->sim, "POST", "objects", created);
	wait_for_event(fx, MESHSYNC_EVENT_TYPE_ADDED, key);

	/* resumed from the last resourceVersion: no relist, nothing replayed */
	msd_informer_get_counters(fx->informer, &counters);
	g_assert_cmpuint(counters.relists, ==, 0);
	g_assert_cmpuint(fx->rec.types->len, ==, SEEDED_PODS + 1);
}

typedef struct {
	Recorder *rec;
	guint count;
} CountWait;

static gboolean
events_reached(gpointer user_data)
{
	CountWait *wait = user_data;

	return wait->rec->types->len >= wait->count;
}

/* Changes made while no watch is open reach us only through the relist after the 410. */
static void
test_expired_watch_relists(Fixture *fx, gconstpointer data)
{
	g_autoptr(GPtrArray) entries = NULL;
	g_autoptr(GBytes) gone_bytes = NULL;
	g_autofree gchar *gone_key = NULL;
	g_autofree gchar *changed_key = NULL;
	g_autofree gchar *new_key = NULL;
	g_autofree gchar *changed = NULL;
	g_autofree gchar *created = NULL;
	MsdStoreEntry *gone;
	MsdStoreEntry *keep;
	MsdInformerCounters counters;
	CountWait wait = {&fx->rec, 0};
	guint before;
	guint64 copied;
	guint64 unchanged;

	msd_informer_start(fx->informer);
	wait_until(is_synced, fx, "synced");
	wait_for_watches(&fx->sim, 1);
	entries = msd_store_snapshot(msd_informer_get_store(fx->informer));
	gone = g_ptr_array_index(entries, 0);
	keep = g_ptr_array_index(entries, 1);
	gone_bytes = msd_store_entry_dup_object(gone);
	gone_key = g_strdup_printf("%s/%s", gone->namespace_, gone->name);
	changed_key = g_strdup_printf("%s/%s", keep->namespace_, keep->name);
	new_key = g_strdup_printf("%s/born-in-the-gap", keep->namespace_);
	changed = pod_json(keep->namespace_, keep->name, "changed-in-the-gap");
	created = pod_json(keep->namespace_, "born-in-the-gap", "new");

	/* while paused nothing is read, so the end of the stream is only noticed on resume,
	 * after the changes below */
	msd_informer_pause(fx->informer);
	sim_admin(&fx->sim, "POST", "expire-next-watch", NULL);
	sim_admin(&fx->sim, "POST", "close-watches", NULL);
	delete_pod(fx, gone->namespace_, gone->name);
	sim_admin(&fx->sim, "PUT", "objects", changed);
	sim_admin(&fx->sim, "POST", "objects", created);
	before = fx->rec.types->len;
	msd_informer_get_counters(fx->informer, &counters);
	copied = counters.copied;
	unchanged = counters.unchanged;
	msd_informer_resume(fx->informer);

	wait.count = before + 3;
	wait_until(events_reached, &wait, "the relist's three changes");
	/* the reconciliation is emitted in one go: nothing else came with it */
	g_assert_cmpuint(fx->rec.types->len, ==, before + 3);
	g_assert_cmpuint(recorder_count(&fx->rec, MESHSYNC_EVENT_TYPE_DELETED, gone_key), ==, 1);
	g_assert_cmpuint(recorder_count(&fx->rec, MESHSYNC_EVENT_TYPE_MODIFIED, changed_key), ==,
	                 1);
	g_assert_cmpuint(recorder_count(&fx->rec, MESHSYNC_EVENT_TYPE_ADDED, new_key), ==, 1);
	/* the deletion carries the last state we knew */
	for (guint i = before; i < fx->rec.types->len; i++) {
		if (GPOINTER_TO_UINT(g_ptr_array_index(fx->rec.types, i)) ==
		    MESHSYNC_EVENT_TYPE_DELETED)
			g_assert_true(
			        g_bytes_equal(g_ptr_array_index(fx->rec.objects, i), gone_bytes));
	}
	msd_informer_get_counters(fx->informer, &counters);
	g_assert_cmpuint(counters.relists, ==, 1);
	g_assert_cmpuint(msd_store_get_size(msd_informer_get_store(fx->informer)), ==, SEEDED_PODS);
	/* only the changed and the new object were copied: the unchanged rest was told from its
	 * uid and resourceVersion */
	g_assert_cmpuint(counters.copied - copied, ==, 2);
	g_assert_cmpuint(counters.unchanged - unchanged, ==, SEEDED_PODS - 2);
}

static gboolean
relisted(gpointer user_data)
{
	MsdInformerCounters counters;

	msd_informer_get_counters(user_data, &counters);
	return counters.relists >= 1;
}

static void
test_malformed_line_relists(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *ns = NULL;
	g_autofree gchar *key = NULL;
	g_autofree gchar *created = NULL;
	MsdInformerCounters counters;
	guint before;

	msd_informer_start(fx->informer);
	wait_until(is_synced, fx, "synced");
	wait_for_watches(&fx->sim, 1);
	before = fx->rec.types->len;

	sim_admin(&fx->sim, "POST", "malformed-watch-line", NULL);
	/* the relist reopens a watch once it has reconciled */
	ns = some_namespace(fx);
	key = g_strdup_printf("%s/after-garbage", ns);
	wait_until(relisted, fx->informer, "a relist");
	msd_informer_get_counters(fx->informer, &counters);
	g_assert_cmpuint(counters.relists, ==, 1);
	g_assert_cmpuint(warnings_containing("pods.v1."), >=, 1);
	/* the abandoned stream's connection is closed, not left open next to the new watch */
	{
		WatchWait one = {&fx->sim, 1};

		wait_until(watches_exactly, &one, "exactly one open watch");
	}

	created = pod_json(ns, "after-garbage", "x");
	sim_admin(&fx->sim, "POST", "objects", created);
	wait_for_event(fx, MESHSYNC_EVENT_TYPE_ADDED, key);
	/* the relist found nothing new: the only event since is the pod created after it */
	g_assert_cmpuint(fx->rec.types->len, ==, before + 1);
}

static void
test_backoff_then_success(Fixture *fx, gconstpointer data)
{
	g_autoptr(GHashTable) expected = sim_pod_names(&fx->sim);
	MsdInformerCounters counters;

	/* the first three API requests fail, whatever they are */
	sim_admin(&fx->sim, "POST", "fail?code=500&count=3", NULL);
	check_initial_sync(fx, expected);
	msd_informer_get_counters(fx->informer, &counters);
	g_assert_cmpuint(counters.errors, ==, 3);
}

typedef struct {
	MsdInformer *informer;
	guint64 errors;
} ErrorWait;

static gboolean
errors_reached(gpointer user_data)
{
	ErrorWait *wait = user_data;
	MsdInformerCounters counters;

	msd_informer_get_counters(wait->informer, &counters);
	return counters.errors >= wait->errors;
}

static void
test_unknown_resource(Fixture *fx, gconstpointer data)
{
	const gchar *verbs[] = {"list", "watch", NULL};
	g_autoptr(MeshSyncApiResource) widgets = meshsync_api_resource_new(
	        "example.invalid", "v1", "Widget", "widgets", TRUE, verbs, NULL);
	MsdInformer *informer = msd_informer_new(NULL, fx->sim.client, widgets);
	ErrorWait wait = {informer, 6};

	msd_informer_set_delays(informer, 10, 40, 5);
	msd_informer_set_event_func(informer, event_cb, &fx->rec, NULL);
	g_signal_connect(informer, "synced", G_CALLBACK(synced_cb), &fx->rec);
	/* the pods informer carries on next to it */
	msd_informer_start(informer);
	msd_informer_start(fx->informer);
	wait_until(errors_reached, &wait, "repeated 404s");
	wait_until(is_synced, fx, "the other informer to sync");

	g_assert_false(msd_informer_get_synced(informer));
	g_assert_cmpuint(msd_store_get_size(msd_informer_get_store(informer)), ==, 0);
	stop_and_finalize(&informer);
	/* logged once, however often it was retried */
	g_assert_cmpuint(warnings_containing("widgets.v1.example.invalid"), ==, 1);
	g_assert_cmpuint(fx->rec.synced, ==, 1);
}

static void
test_stop_from_handler(Fixture *fx, gconstpointer data)
{
	g_autofree gchar *ns = NULL;
	g_autofree gchar *created = NULL;
	CountWait wait = {&fx->rec, 5};

	fx->rec.stop_after = 5;
	msd_informer_start(fx->informer);
	wait_until(events_reached, &wait, "five events");
	/* stopped inside the initial burst: nothing after, not even "synced" */
	ns = some_namespace(fx);
	created = pod_json(ns, "after-stop", "x");
	sim_admin(&fx->sim, "POST", "objects", created);
	sim_admin(&fx->sim, "POST", "close-watches", NULL);
	g_assert_cmpuint(fx->rec.types->len, ==, 5);
	g_assert_cmpuint(fx->rec.synced, ==, 0);
	g_assert_false(msd_informer_get_synced(fx->informer));
}

static void
run_pushed(gconstpointer func)
{
	feed_by_reserve = FALSE;
	(*(const GTestFunc *)func)();
}

static void
run_read_into(gconstpointer func)
{
	feed_by_reserve = TRUE;
	(*(const GTestFunc *)func)();
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	/* the informer logs warnings on purpose here; they are checked, not fatal */
	g_log_set_always_fatal(G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
	test_log_capture_start("MeshSyncInformer");

	for (gint by_reserve = 0; by_reserve <= 1; by_reserve++) {
		static const struct {
			const gchar *name;
			GTestFunc func;
		} splitter_tests[] = {
		        {"reads", test_line_splitter_reads},
		        {"byte-by-byte", test_line_splitter_byte_by_byte},
		        {"crlf-at-limit", test_line_splitter_crlf_at_limit},
		        {"overlong", test_line_splitter_overlong},
		};

		for (gsize i = 0; i < G_N_ELEMENTS(splitter_tests); i++) {
			g_autofree gchar *path = g_strdup_printf(
			        "/informer/line-splitter/%s/%s",
			        by_reserve ? "read-into" : "pushed", splitter_tests[i].name);

			g_test_add_data_func(path, &splitter_tests[i].func,
			                     by_reserve ? run_read_into : run_pushed);
		}
	}
#define ADD(path, func) g_test_add(path, Fixture, NULL, fixture_setup, func, fixture_teardown)
	ADD("/informer/initial-sync/streaming", test_initial_sync_streaming);
	ADD("/informer/initial-sync/paginated", test_initial_sync_paginated);
	ADD("/informer/watch/create-replace-delete", test_watch_events);
	ADD("/informer/watch/close-watches", test_close_watches);
	ADD("/informer/watch/expired-relists", test_expired_watch_relists);
	ADD("/informer/watch/malformed-line", test_malformed_line_relists);
	ADD("/informer/errors/backoff-then-success", test_backoff_then_success);
	ADD("/informer/errors/unknown-resource", test_unknown_resource);
	ADD("/informer/stop-from-handler", test_stop_from_handler);
#undef ADD
	return g_test_run();
}
