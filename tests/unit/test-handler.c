/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "meshsync-error.h"
#include "meshsync-handler-private.h"
#include "meshsync-kube-config.h"
#include "test-kubesim.h"
#include "test-log-capture.h"
#include "test-writer-fake.h"

#define PODS 30

static gboolean
warned(const gchar *text)
{
	return test_log_capture_count(text) > 0;
}

typedef struct {
	Sim sim;
	TestWriter *writer;
	MeshSyncHandler *handler;
	GPtrArray *run_failures; /* (element-type GError) */
	GPtrArray *failures;     /* (element-type GError) */
	guint ready_changes;
} Fixture;

static void
on_run_failed(MeshSyncHandler *handler, const GError *error, Fixture *fx)
{
	g_ptr_array_add(fx->run_failures, g_error_copy(error));
}

static void
on_failed(MeshSyncHandler *handler, const GError *error, Fixture *fx)
{
	g_ptr_array_add(fx->failures, g_error_copy(error));
}

static void
on_ready_changed(MeshSyncHandler *handler, gboolean ready, Fixture *fx)
{
	fx->ready_changes++;
}

static MeshSyncHandler *
new_handler(Fixture *fx, MeshSyncKubeConfig *config)
{
	MeshSyncHandler *handler = meshsync_handler_new(config, MESHSYNC_WRITER(fx->writer));

	meshsync_handler_set_output_resources(handler, (const gchar *const[]){"pod", NULL});
	meshsync_handler_set_resync_delay(handler, 10);
	meshsync_handler_set_retry_delays(handler, 10, 40);
	g_signal_connect(handler, "run-failed", G_CALLBACK(on_run_failed), fx);
	g_signal_connect(handler, "failed", G_CALLBACK(on_failed), fx);
	g_signal_connect(handler, "ready-changed", G_CALLBACK(on_ready_changed), fx);
	return handler;
}

static void
fixture_setup(Fixture *fx, gconstpointer data)
{
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(GError) error = NULL;

	memset(fx, 0, sizeof(*fx));
	test_log_capture_clear();
	sim_start(&fx->sim, PODS, 2);
	fx->writer = test_writer_new();
	fx->run_failures = g_ptr_array_new_with_free_func((GDestroyNotify)g_error_free);
	fx->failures = g_ptr_array_new_with_free_func((GDestroyNotify)g_error_free);
	config = meshsync_kube_config_new_from_file(fx->sim.kubeconfig, NULL, &error);
	g_assert_no_error(error);
	fx->handler = new_handler(fx, config);
}

static void
fixture_teardown(Fixture *fx, gconstpointer data)
{
	meshsync_handler_stop(fx->handler);
	g_clear_object(&fx->handler);
	g_clear_object(&fx->writer);
	g_ptr_array_unref(fx->run_failures);
	g_ptr_array_unref(fx->failures);
	sim_stop(&fx->sim);
}

static gboolean
is_ready(gpointer user_data)
{
	return meshsync_handler_get_ready(((Fixture *)user_data)->handler);
}

static gboolean
is_not_ready(gpointer user_data)
{
	return !meshsync_handler_get_ready(((Fixture *)user_data)->handler);
}

typedef struct {
	Fixture *fx;
	guint count;
} CountWait;

static gboolean
written_reached(gpointer user_data)
{
	CountWait *wait = user_data;

	return wait->fx->writer->written->len >= wait->count;
}

static gboolean
run_failures_reached(gpointer user_data)
{
	CountWait *wait = user_data;

	return wait->fx->run_failures->len >= wait->count;
}

static gboolean
failed_once(gpointer user_data)
{
	return ((Fixture *)user_data)->failures->len > 0;
}

/* The uids of the pods the simulator holds, read with json-glib (not the code under test). */
static GHashTable *
sim_pod_uids(Sim *sim)
{
	g_autoptr(GBytes) answer = NULL;
	g_autoptr(JsonParser) parser = json_parser_new();
	g_autoptr(GError) error = NULL;
	GHashTable *uids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
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

		g_hash_table_add(uids, g_strdup(json_object_get_string_member(metadata, "uid")));
	}
	return uids;
}

static void
assert_written_uids_equal(Fixture *fx, guint from, GHashTable *expected)
{
	g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);

	for (guint i = from; i < fx->writer->uids->len; i++) {
		const gchar *uid = g_ptr_array_index(fx->writer->uids, i);

		g_assert_true(
		        g_str_has_prefix(g_ptr_array_index(fx->writer->written, i), "ADDED "));
		g_assert_true(g_hash_table_contains(expected, uid));
		/* each object once */
		g_assert_true(g_hash_table_add(seen, (gpointer)uid));
	}
	g_assert_cmpuint(g_hash_table_size(seen), ==, g_hash_table_size(expected));
}

static void
test_handler_initial_sync(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GHashTable) pods = sim_pod_uids(&fx->sim);
	g_auto(GStrv) names = NULL;

	g_assert_true(meshsync_handler_start(fx->handler, &error));
	g_assert_no_error(error);
	wait_until(is_ready, fx, "the initial sync");
	assert_written_uids_equal(fx, 0, pods);
	g_assert_cmpuint(meshsync_handler_get_n_objects(fx->handler), ==, g_hash_table_size(pods));
	names = meshsync_handler_get_resource_names(fx->handler);
	g_assert_cmpstrv(names, ((const gchar *const[]){"pods.v1.", NULL}));
	g_assert_nonnull(meshsync_handler_get_cluster_id(fx->handler));
	g_assert_cmpstr(meshsync_handler_get_cluster_id(fx->handler), !=, "");
	g_assert_cmpuint(fx->ready_changes, ==, 1);
	g_assert_cmpuint(fx->run_failures->len, ==, 0);
}

static gboolean
refuse_all_cb(const gchar *uid, gpointer user_data)
{
	(*(guint *)user_data)++;
	return TRUE;
}

typedef struct {
	Fixture *fx;
	guint64 unconverted;
} ConversionWait;

static gboolean
unconverted_reached(gpointer user_data)
{
	ConversionWait *wait = user_data;
	guint64 unconverted = 0;

	meshsync_handler_get_conversions(wait->fx->handler, NULL, &unconverted);
	return unconverted >= wait->unconverted;
}

/* Events the namespace filter drops, and MODIFIED events the output would not write (file
 * mode's snapshot), are dropped before they are converted. */
static void
test_handler_drops_before_converting(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GBytes) answer = NULL;
	g_autoptr(JsonParser) parser = json_parser_new();
	g_autofree gchar *ns = NULL;
	g_autofree gchar *name = NULL;
	g_autofree gchar *changed = NULL;
	JsonArray *items;
	ConversionWait wait = {fx, 0};
	guint64 converted = 0;
	guint64 unconverted = 0;
	guint in_ns = 0;
	guint asked = 0;

	/* the namespace of the first pod, and how many pods it has (json-glib, not the code
	 * under test) */
	g_assert_cmpuint(sim_request(&fx->sim, "GET", "/api/v1/pods", NULL, &answer), ==, 200);
	json_parser_load_from_data(parser, g_bytes_get_data(answer, NULL),
	                           (gssize)g_bytes_get_size(answer), &error);
	g_assert_no_error(error);
	items = json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)),
	                                     "items");
	for (guint i = 0; i < json_array_get_length(items); i++) {
		JsonObject *metadata = json_object_get_object_member(
		        json_array_get_object_element(items, i), "metadata");
		const gchar *item_ns = json_object_get_string_member(metadata, "namespace");

		if (ns == NULL) {
			ns = g_strdup(item_ns);
			name = g_strdup(json_object_get_string_member(metadata, "name"));
		}
		if (g_strcmp0(item_ns, ns) == 0)
			in_ns++;
	}
	g_assert_cmpuint(in_ns, <, PODS);

	meshsync_handler_set_output_namespaces(fx->handler, (const gchar *const[]){ns, NULL});
	meshsync_handler_set_unwritten_func(fx->handler, refuse_all_cb, &asked);
	g_assert_true(meshsync_handler_start(fx->handler, &error));
	g_assert_no_error(error);
	wait_until(is_ready, fx, "the initial sync");
	meshsync_handler_get_conversions(fx->handler, &converted, &unconverted);
	g_assert_cmpuint(fx->writer->written->len, ==, in_ns);
	g_assert_cmpuint(converted, ==, in_ns);
	g_assert_cmpuint(unconverted, ==, PODS - in_ns);
	/* ADDED events are not asked about */
	g_assert_cmpuint(asked, ==, 0);

	changed = g_strdup_printf(
	        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
	        "\"namespace\":\"%s\",\"labels\":{\"test\":\"changed\"}},\"spec\":"
	        "{\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]}}",
	        name, ns);
	sim_admin(&fx->sim, "PUT", "objects", changed);
	wait.unconverted = unconverted + 1;
	wait_until(unconverted_reached, &wait, "the MODIFIED event dropped");
	g_assert_cmpuint(asked, ==, 1);
	meshsync_handler_get_conversions(fx->handler, &converted, NULL);
	g_assert_cmpuint(converted, ==, in_ns);
	g_assert_cmpuint(fx->writer->written->len, ==, in_ns);
}

/* Five pods made after the initial sync, late-0 to late-4. */
static void
create_late_pods(Fixture *fx)
{
	for (guint i = 0; i < 5; i++) {
		g_autofree gchar *pod =
		        g_strdup_printf("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
		                        "\"name\":\"late-%u\","
		                        "\"namespace\":\"ns-0\"},\"spec\":{\"containers\":[]}}",
		                        i);

		sim_admin(&fx->sim, "POST", "objects", pod);
	}
}

/* Their ADDED events were written in order, after the first @before writes. */
static void
assert_late_pods_written(Fixture *fx, guint before)
{
	for (guint i = 0; i < 5; i++) {
		g_autofree gchar *expected = g_strdup_printf("ADDED late-%u", i);

		g_assert_cmpstr(g_ptr_array_index(fx->writer->written, before + i), ==, expected);
	}
}

/* An output that falls behind holds the events, merged per object, while the informers keep
 * reading; nothing is lost, order is kept. */
static void
test_handler_back_pressure(Fixture *fx, gconstpointer data)
{
	MsdDelivery *delivery = meshsync_handler_get_delivery(fx->handler);
	g_autoptr(GError) error = NULL;
	CountWait wait = {fx, PODS + 5};
	guint before;

	g_assert_true(meshsync_handler_start(fx->handler, &error));
	wait_until(is_ready, fx, "the initial sync");
	before = fx->writer->written->len;
	test_writer_set_writable(fx->writer, FALSE);
	create_late_pods(fx);
	/* the new events find the writer unwritable: held, the informers not paused (the queue
	 * is far from full) */
	while (msd_delivery_get_length(delivery) < 5)
		g_main_context_iteration(NULL, TRUE);
	g_assert_false(msd_delivery_get_paused(delivery));
	g_assert_cmpuint(msd_delivery_get_n_waiting_keys(delivery), ==, 5);
	g_assert_cmpuint(fx->writer->written->len, ==, before);
	test_writer_set_writable(fx->writer, TRUE);
	wait_until(written_reached, &wait, "the five new pods");
	g_assert_false(msd_delivery_get_paused(delivery));
	assert_late_pods_written(fx, before);
}

/* The queue's size (meshsync_handler_set_delivery_queue_size()) is where the informers
 * pause: past it nothing is dropped, and they read again once the output took the events. */
static void
test_handler_queue_size(Fixture *fx, gconstpointer data)
{
	MsdDelivery *delivery = meshsync_handler_get_delivery(fx->handler);
	g_autoptr(GError) error = NULL;
	CountWait wait = {fx, PODS + 5};
	guint before;

	meshsync_handler_set_delivery_queue_size(fx->handler, 3);
	g_assert_true(meshsync_handler_start(fx->handler, &error));
	wait_until(is_ready, fx, "the initial sync");
	before = fx->writer->written->len;
	test_writer_set_writable(fx->writer, FALSE);
	create_late_pods(fx);
	while (!msd_delivery_get_paused(delivery))
		g_main_context_iteration(NULL, TRUE);
	g_assert_cmpuint(msd_delivery_get_length(delivery), >=, 3);
	g_assert_cmpuint(fx->writer->written->len, ==, before);
	test_writer_set_writable(fx->writer, TRUE);
	wait_until(written_reached, &wait, "the five new pods");
	g_assert_false(msd_delivery_get_paused(delivery));
	assert_late_pods_written(fx, before);
}

/* A resync tears the run down and lists everything again, as upstream: every object is
 * re-delivered as ADDED. */
static void
test_handler_resync(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GHashTable) pods = sim_pod_uids(&fx->sim);
	CountWait wait = {fx, 2 * PODS};

	g_assert_true(meshsync_handler_start(fx->handler, &error));
	wait_until(is_ready, fx, "the initial sync");
	meshsync_handler_resync(fx->handler);
	wait_until(is_not_ready, fx, "the run to be torn down");
	wait_until(is_ready, fx, "the second run's initial sync");
	wait_until(written_reached, &wait, "every pod again");
	assert_written_uids_equal(fx, PODS, pods);
	g_assert_cmpuint(fx->ready_changes, ==, 3);
}

/* A server that cannot be reached: each failed run is reported, and retried. */
static void
test_handler_run_failed(Fixture *fx, gconstpointer data)
{
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MeshSyncHandler) handler = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GSocket) socket = NULL;
	g_autoptr(GInetSocketAddress) bound = NULL;
	g_autoptr(GSocketAddress) any = NULL;
	g_autofree gchar *kubeconfig = NULL;
	CountWait wait = {fx, 2};
	guint16 port;

	/* a port nobody listens on: bound but never listening refuses connections */
	socket = g_socket_new(G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP,
	                      &error);
	g_assert_no_error(error);
	any = g_inet_socket_address_new_from_string("127.0.0.1", 0);
	g_assert_true(g_socket_bind(socket, any, FALSE, &error));
	bound = G_INET_SOCKET_ADDRESS(g_socket_get_local_address(socket, &error));
	port = g_inet_socket_address_get_port(bound);
	kubeconfig = g_strdup_printf(
	        "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: x\n"
	        "  cluster:\n    server: http://127.0.0.1:%u\ncontexts:\n- name: c\n"
	        "  context:\n    cluster: x\n    user: u\nusers:\n- name: u\n  user: {}\n",
	        port);
	config = meshsync_kube_config_new_from_data(kubeconfig, -1, NULL, &error);
	g_assert_no_error(error);
	handler = new_handler(fx, config);
	g_assert_true(meshsync_handler_start(handler, &error));
	wait_until(run_failures_reached, &wait, "two failed runs");
	meshsync_handler_stop(handler);
	g_assert_true(warned("discovery failed"));
	g_assert_error((GError *)g_ptr_array_index(fx->run_failures, 0), MESHSYNC_ERROR,
	               MESHSYNC_ERROR_CONNECTION);
	g_assert_nonnull(
	        strstr(((GError *)g_ptr_array_index(fx->run_failures, 0))->message, "127.0.0.1"));
	g_assert_false(meshsync_handler_get_ready(handler));
	g_assert_cmpuint(fx->failures->len, ==, 0);
}

/* A writer that reports a write error stops the handler and says why, once. */
static void
test_handler_writer_failure(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;

	fx->writer->disk_full = TRUE;
	g_assert_true(meshsync_handler_start(fx->handler, &error));
	wait_until(failed_once, fx, "the failure");
	g_assert_true(warned("No space left on device"));
	g_assert_cmpuint(fx->failures->len, ==, 1);
	g_assert_error((GError *)g_ptr_array_index(fx->failures, 0), MESHSYNC_ERROR,
	               MESHSYNC_ERROR_WRITE);
	/* stopped: nothing more is tried after the first refusal */
	g_assert_cmpuint(fx->writer->attempts, ==, 1);
	g_assert_false(meshsync_handler_get_ready(fx->handler));
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	/* the handler warns on purpose here; the warnings are checked, not fatal */
	g_log_set_always_fatal(G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
	test_log_capture_start("MeshSyncEngine");
	g_test_add("/handler/initial-sync", Fixture, NULL, fixture_setup, test_handler_initial_sync,
	           fixture_teardown);
	g_test_add("/handler/drops-before-converting", Fixture, NULL, fixture_setup,
	           test_handler_drops_before_converting, fixture_teardown);
	g_test_add("/handler/back-pressure", Fixture, NULL, fixture_setup,
	           test_handler_back_pressure, fixture_teardown);
	g_test_add("/handler/queue-size", Fixture, NULL, fixture_setup, test_handler_queue_size,
	           fixture_teardown);
	g_test_add("/handler/resync", Fixture, NULL, fixture_setup, test_handler_resync,
	           fixture_teardown);
	g_test_add("/handler/run-failed", Fixture, NULL, fixture_setup, test_handler_run_failed,
	           fixture_teardown);
	g_test_add("/handler/writer-failure", Fixture, NULL, fixture_setup,
	           test_handler_writer_failure, fixture_teardown);
	return g_test_run();
}
