/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <string.h>

#include "engine/msd-delivery.h"
#include "meshsync-error.h"
#include "meshsync-resource.h"
#include "test-writer-fake.h"

static MeshSyncResource *
make_pod(guint i)
{
	g_autofree gchar *json = g_strdup_printf(
	        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p%u\","
	        "\"namespace\":\"shop\",\"uid\":\"u%u\",\"resourceVersion\":\"%u\"}}",
	        i, i, i + 1);
	g_autoptr(GError) error = NULL;
	MeshSyncResource *resource =
	        meshsync_resource_new_from_json(json, -1, MESHSYNC_EVENT_TYPE_ADDED, "c", &error);

	g_assert_no_error(error);
	return resource;
}

static void
push_pods(MsdDelivery *delivery, guint first, guint n)
{
	for (guint i = first; i < first + n; i++) {
		g_autoptr(MeshSyncResource) pod = make_pod(i);

		msd_delivery_push(delivery, pod, MESHSYNC_EVENT_TYPE_ADDED);
	}
}

static void
iterate(void)
{
	while (g_main_context_iteration(NULL, FALSE))
		;
}

typedef struct {
	guint n;
	gint64 min_usec;
} Latencies;

static void
record_latency(gint64 usec, gpointer user_data)
{
	Latencies *latencies = user_data;

	if (latencies->n == 0 || usec < latencies->min_usec)
		latencies->min_usec = usec;
	latencies->n++;
}

typedef struct {
	guint announced;
	MsdDelivery *stop_on; /* drain the delivery from inside the announcement */
	guint stop_at;
} Announced;

static void
count_announce(MeshSyncResource *resource, MeshSyncEventType type, gpointer user_data)
{
	Announced *announced = user_data;

	announced->announced++;
	if (announced->stop_on != NULL && announced->announced == announced->stop_at)
		msd_delivery_drain(announced->stop_on);
}

static void
assert_written_in_order(TestWriter *writer, guint n)
{
	g_assert_cmpuint(writer->written->len, ==, n);
	for (guint i = 0; i < n; i++) {
		g_autofree gchar *expected = g_strdup_printf("ADDED p%u", i);

		g_assert_cmpstr(g_ptr_array_index(writer->written, i), ==, expected);
	}
}

static void
test_delivery_in_order_one_flush(void)
{
	g_autoptr(TestWriter) writer = g_object_new(TEST_TYPE_WRITER, NULL);
	g_autoptr(MsdDelivery) delivery = msd_delivery_new(NULL, MESHSYNC_WRITER(writer));
	Announced announced = {0};

	msd_delivery_set_announce_func(delivery, count_announce, &announced);
	push_pods(delivery, 0, 100);
	assert_written_in_order(writer, 100);
	g_assert_cmpuint(announced.announced, ==, 100);
	g_assert_cmpuint(msd_delivery_get_length(delivery), ==, 0);
	/* a burst costs one flush, once the loop is idle */
	g_assert_cmpuint(writer->flushes, ==, 0);
	iterate();
	g_assert_cmpuint(writer->flushes, ==, 1);
	g_assert_cmpuint(msd_delivery_get_n_delivered(delivery), ==, 100);
}

static void
count_notify(GObject *object, GParamSpec *pspec, gpointer user_data)
{
	(*(guint *)user_data)++;
}

static void
test_delivery_held_while_not_writable(void)
{
	g_autoptr(TestWriter) writer = g_object_new(TEST_TYPE_WRITER, NULL);
	g_autoptr(MsdDelivery) delivery = msd_delivery_new(NULL, MESHSYNC_WRITER(writer));
	Announced announced = {0};
	guint paused_changes = 0;

	msd_delivery_set_announce_func(delivery, count_announce, &announced);
	g_signal_connect(delivery, "notify::paused", G_CALLBACK(count_notify), &paused_changes);
	push_pods(delivery, 0, 3);
	writer->writable = FALSE;
	push_pods(delivery, 3, 5);
	/* not writable: held without a write attempt; the producer keeps reading, the queue
	 * being far from full */
	g_assert_cmpuint(writer->written->len, ==, 3);
	g_assert_cmpuint(writer->attempts, ==, 3);
	g_assert_cmpuint(msd_delivery_get_length(delivery), ==, 5);
	g_assert_cmpuint(msd_delivery_get_n_waiting_keys(delivery), ==, 5);
	g_assert_false(msd_delivery_get_paused(delivery));
	g_assert_cmpuint(announced.announced, ==, 3);

	test_writer_set_writable(writer, TRUE);
	assert_written_in_order(writer, 8);
	g_assert_cmpuint(announced.announced, ==, 8);
	g_assert_cmpuint(msd_delivery_get_n_waiting_keys(delivery), ==, 0);
	g_assert_cmpuint(paused_changes, ==, 0);
}

/* A writer that turns unwritable as it refuses (a broker whose buffer just filled up): the
 * refused event is kept, announced once, and written first once the writer recovers. */
static void
test_delivery_refused_event_retried(void)
{
	g_autoptr(TestWriter) writer = g_object_new(TEST_TYPE_WRITER, NULL);
	g_autoptr(MsdDelivery) delivery = msd_delivery_new(NULL, MESHSYNC_WRITER(writer));
	Announced announced = {0};

	msd_delivery_set_announce_func(delivery, count_announce, &announced);
	push_pods(delivery, 0, 2);
	writer->refuse_next = TRUE;
	push_pods(delivery, 2, 3);
	g_assert_cmpuint(writer->written->len, ==, 2);
	g_assert_cmpuint(msd_delivery_get_length(delivery), ==, 3);
	g_assert_false(msd_delivery_get_paused(delivery));
	g_assert_cmpuint(announced.announced, ==, 3);
	test_writer_set_writable(writer, TRUE);
	assert_written_in_order(writer, 5);
	g_assert_cmpuint(announced.announced, ==, 5);
	g_assert_cmpuint(writer->attempts, ==, 6);
}

static void
test_delivery_watermarks(void)
{
	g_autoptr(TestWriter) writer = g_object_new(TEST_TYPE_WRITER, NULL);
	g_autoptr(MsdDelivery) delivery = msd_delivery_new(NULL, MESHSYNC_WRITER(writer));

	msd_delivery_set_watermarks(delivery, 10, 2);
	writer->writable = FALSE;
	push_pods(delivery, 0, 9);
	g_assert_false(msd_delivery_get_paused(delivery));
	push_pods(delivery, 9, 1);
	g_assert_true(msd_delivery_get_paused(delivery));
	g_assert_cmpuint(msd_delivery_get_length(delivery), ==, 10);
	/* the producer keeps what it already read: nothing is dropped past the mark */
	push_pods(delivery, 10, 19);
	g_assert_cmpuint(msd_delivery_get_length(delivery), ==, 29);
	test_writer_set_writable(writer, TRUE);
	assert_written_in_order(writer, 29);
	g_assert_false(msd_delivery_get_paused(delivery));
}

static MeshSyncResource *
make_version(guint i, const gchar *uid, guint version)
{
	g_autofree gchar *json = g_strdup_printf(
	        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p%u\","
	        "\"namespace\":\"shop\",\"uid\":\"%s\",\"resourceVersion\":\"%u\"}}",
	        i, uid, version);
	g_autoptr(GError) error = NULL;
	MeshSyncResource *resource =
	        meshsync_resource_new_from_json(json, -1, MESHSYNC_EVENT_TYPE_ADDED, "c", &error);

	g_assert_no_error(error);
	return resource;
}

static void
push_version(
        MsdDelivery *delivery, guint i, const gchar *uid, guint version, MeshSyncEventType type)
{
	g_autoptr(MeshSyncResource) pod = make_version(i, uid, version);

	msd_delivery_push(delivery, pod, type);
}

static void
assert_written(
        TestWriter *writer, guint index, const gchar *what, const gchar *uid, const gchar *version)
{
	g_assert_cmpuint(writer->written->len, >, index);
	g_assert_cmpstr(g_ptr_array_index(writer->written, index), ==, what);
	g_assert_cmpstr(g_ptr_array_index(writer->uids, index), ==, uid);
	g_assert_cmpstr(g_ptr_array_index(writer->versions, index), ==, version);
}

/* fd2: three rapid writes of one object while the writer is away are one write carrying the
 * last state; the latency is the first one's, read before the others. */
static void
test_delivery_coalesced_while_not_writable(void)
{
	g_autoptr(TestWriter) writer = g_object_new(TEST_TYPE_WRITER, NULL);
	g_autoptr(MsdDelivery) delivery = msd_delivery_new(NULL, MESHSYNC_WRITER(writer));
	Announced announced = {0};
	Latencies latencies = {0};
	g_autoptr(MeshSyncResource) first = make_version(0, "u0", 1);

	msd_delivery_set_announce_func(delivery, count_announce, &announced);
	msd_delivery_set_latency_func(delivery, record_latency, &latencies);
	writer->writable = FALSE;
	msd_delivery_push_timed(delivery, first, MESHSYNC_EVENT_TYPE_MODIFIED,
	                        g_get_monotonic_time() - 5000);
	push_version(delivery, 0, "u0", 2, MESHSYNC_EVENT_TYPE_MODIFIED);
	push_version(delivery, 0, "u0", 3, MESHSYNC_EVENT_TYPE_MODIFIED);
	g_assert_cmpuint(msd_delivery_get_length(delivery), ==, 1);
	g_assert_cmpuint(msd_delivery_get_n_waiting_keys(delivery), ==, 1);
	g_assert_cmpuint(msd_delivery_get_n_coalesced(delivery), ==, 2);
	g_assert_false(msd_delivery_get_paused(delivery));
	test_writer_set_writable(writer, TRUE);
	g_assert_cmpuint(writer->written->len, ==, 1);
	assert_written(writer, 0, "MODIFIED p0", "u0", "3");
	g_assert_cmpuint(announced.announced, ==, 1);
	g_assert_cmpuint(latencies.n, ==, 1);
	g_assert_cmpint(latencies.min_usec, >=, 5000);
	/* the writer back: events go through one by one again, nothing merged */
	push_version(delivery, 0, "u0", 4, MESHSYNC_EVENT_TYPE_MODIFIED);
	push_version(delivery, 0, "u0", 5, MESHSYNC_EVENT_TYPE_MODIFIED);
	g_assert_cmpuint(writer->written->len, ==, 3);
	g_assert_cmpuint(msd_delivery_get_n_coalesced(delivery), ==, 2);
	iterate();
}

/* fd2: ADDED then DELETED both go out, the DELETED with its own state; an object deleted
 * and made again goes out as both incarnations, in order. */
static void
test_delivery_added_deleted_recreated(void)
{
	g_autoptr(TestWriter) writer = g_object_new(TEST_TYPE_WRITER, NULL);
	g_autoptr(MsdDelivery) delivery = msd_delivery_new(NULL, MESHSYNC_WRITER(writer));

	writer->writable = FALSE;
	push_version(delivery, 0, "u0", 1, MESHSYNC_EVENT_TYPE_ADDED);
	push_version(delivery, 0, "u0", 2, MESHSYNC_EVENT_TYPE_MODIFIED);
	push_version(delivery, 1, "u1", 3, MESHSYNC_EVENT_TYPE_ADDED);
	push_version(delivery, 0, "u0", 4, MESHSYNC_EVENT_TYPE_DELETED);
	push_version(delivery, 0, "u0b", 5, MESHSYNC_EVENT_TYPE_ADDED);
	push_version(delivery, 0, "u0b", 6, MESHSYNC_EVENT_TYPE_MODIFIED);
	push_version(delivery, 1, "u1", 7, MESHSYNC_EVENT_TYPE_DELETED);
	g_assert_cmpuint(msd_delivery_get_length(delivery), ==, 5);
	test_writer_set_writable(writer, TRUE);
	g_assert_cmpuint(writer->written->len, ==, 5);
	assert_written(writer, 0, "ADDED p0", "u0", "2");
	assert_written(writer, 1, "ADDED p1", "u1", "3");
	assert_written(writer, 2, "DELETED p0", "u0", "4");
	assert_written(writer, 3, "ADDED p0", "u0b", "6");
	assert_written(writer, 4, "DELETED p1", "u1", "7");
	iterate();
}

/* fd2's overflow, done better: a full queue pauses the producer and keeps everything it is
 * still given; no DELETED (nor anything else) is lost, and merging goes on past the bound. */
static void
test_delivery_full_pauses_never_drops(void)
{
	g_autoptr(TestWriter) writer = g_object_new(TEST_TYPE_WRITER, NULL);
	g_autoptr(MsdDelivery) delivery = msd_delivery_new(NULL, MESHSYNC_WRITER(writer));

	msd_delivery_set_watermarks(delivery, 4, 1);
	writer->writable = FALSE;
	for (guint i = 0; i < 4; i++)
		push_version(delivery, i, "u", 1, MESHSYNC_EVENT_TYPE_ADDED);
	g_assert_true(msd_delivery_get_paused(delivery));
	/* what the producer had read already still comes: merged where it can be, kept where
	 * it cannot */
	push_version(delivery, 0, "u", 2, MESHSYNC_EVENT_TYPE_MODIFIED);
	g_assert_cmpuint(msd_delivery_get_length(delivery), ==, 4);
	for (guint i = 0; i < 4; i++)
		push_version(delivery, i, "u", 3, MESHSYNC_EVENT_TYPE_DELETED);
	push_version(delivery, 4, "u", 3, MESHSYNC_EVENT_TYPE_ADDED);
	g_assert_cmpuint(msd_delivery_get_length(delivery), ==, 9);
	test_writer_set_writable(writer, TRUE);
	g_assert_false(msd_delivery_get_paused(delivery));
	g_assert_cmpuint(writer->written->len, ==, 9);
	assert_written(writer, 0, "ADDED p0", "u", "2");
	for (guint i = 0; i < 4; i++) {
		g_autofree gchar *deleted = g_strdup_printf("DELETED p%u", i);

		assert_written(writer, 4 + i, deleted, "u", "3");
	}
	g_assert_cmpuint(msd_delivery_get_n_not_written(delivery), ==, 0);
	iterate();
}

/* The bytes bound pauses the producer too: large objects stop the reads before the count
 * of events would. */
static void
test_delivery_bytes_bound(void)
{
	g_autoptr(TestWriter) writer = g_object_new(TEST_TYPE_WRITER, NULL);
	g_autoptr(MsdDelivery) delivery = msd_delivery_new(NULL, MESHSYNC_WRITER(writer));

	msd_delivery_set_max_bytes(delivery, 1);
	writer->writable = FALSE;
	push_pods(delivery, 0, 1);
	g_assert_true(msd_delivery_get_paused(delivery));
	test_writer_set_writable(writer, TRUE);
	g_assert_false(msd_delivery_get_paused(delivery));
	assert_written_in_order(writer, 1);
}

/* fd2: a write the writer refused is tried again, not dropped, and nothing merges into it
 * (it was announced as it was): the object's next update waits behind it. */
static void
test_delivery_refused_not_merged(void)
{
	g_autoptr(TestWriter) writer = g_object_new(TEST_TYPE_WRITER, NULL);
	g_autoptr(MsdDelivery) delivery = msd_delivery_new(NULL, MESHSYNC_WRITER(writer));
	Announced announced = {0};

	msd_delivery_set_announce_func(delivery, count_announce, &announced);
	writer->refuse_next = TRUE;
	push_version(delivery, 0, "u0", 1, MESHSYNC_EVENT_TYPE_ADDED);
	push_version(delivery, 0, "u0", 2, MESHSYNC_EVENT_TYPE_MODIFIED);
	push_version(delivery, 0, "u0", 3, MESHSYNC_EVENT_TYPE_MODIFIED);
	g_assert_cmpuint(msd_delivery_get_length(delivery), ==, 2);
	g_assert_cmpuint(announced.announced, ==, 1);
	test_writer_set_writable(writer, TRUE);
	g_assert_cmpuint(writer->written->len, ==, 2);
	assert_written(writer, 0, "ADDED p0", "u0", "1");
	assert_written(writer, 1, "MODIFIED p0", "u0", "3");
	g_assert_cmpuint(announced.announced, ==, 2);
	iterate();
}

static void
count_failed(MsdDelivery *delivery, const GError *error, gpointer user_data)
{
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE);
	(*(guint *)user_data)++;
}

static void
test_delivery_write_error_fails_once(void)
{
	g_autoptr(TestWriter) writer = g_object_new(TEST_TYPE_WRITER, NULL);
	g_autoptr(MsdDelivery) delivery = msd_delivery_new(NULL, MESHSYNC_WRITER(writer));
	guint failed = 0;

	g_signal_connect(delivery, "failed", G_CALLBACK(count_failed), &failed);
	push_pods(delivery, 0, 2);
	writer->disk_full = TRUE;
	push_pods(delivery, 2, 10);
	/* reported from the loop, not from inside the push that found it */
	g_assert_cmpuint(failed, ==, 0);
	g_assert_true(msd_delivery_get_failed(delivery));
	iterate();
	g_assert_cmpuint(failed, ==, 1);
	/* nothing more reaches the writer after the first write error */
	g_assert_cmpuint(writer->attempts, ==, 3);
	g_assert_cmpuint(writer->written->len, ==, 2);
	g_assert_cmpuint(writer->flushes, ==, 0);
}

static void
test_delivery_drain(void)
{
	g_autoptr(TestWriter) writer = g_object_new(TEST_TYPE_WRITER, NULL);
	g_autoptr(MsdDelivery) delivery = msd_delivery_new(NULL, MESHSYNC_WRITER(writer));

	writer->writable = FALSE;
	push_pods(delivery, 0, 4);
	g_assert_cmpuint(msd_delivery_get_length(delivery), ==, 4);
	/* stopping: the writer gets its last chance for each event, then the queue is empty; an
	 * output that is away is routine, not a warning (fatal in a host program running with
	 * G_DEBUG=fatal-warnings, as this test does) */
	g_test_expect_message("MeshSyncEngine", G_LOG_LEVEL_MESSAGE,
	                      "*ADDED Pod shop/p0 not written*");
	g_test_expect_message("MeshSyncEngine", G_LOG_LEVEL_MESSAGE,
	                      "*ADDED Pod shop/p1 not written*");
	g_test_expect_message("MeshSyncEngine", G_LOG_LEVEL_MESSAGE,
	                      "*ADDED Pod shop/p2 not written*");
	g_test_expect_message("MeshSyncEngine", G_LOG_LEVEL_MESSAGE,
	                      "*ADDED Pod shop/p3 not written*");
	msd_delivery_drain(delivery);
	g_test_assert_expected_messages();
	g_assert_cmpuint(msd_delivery_get_length(delivery), ==, 0);
	g_assert_cmpuint(msd_delivery_get_n_not_written(delivery), ==, 4);
	g_assert_false(msd_delivery_get_paused(delivery));
	/* after a drain events go straight through, and nothing flushes in the background */
	writer->writable = TRUE;
	push_pods(delivery, 4, 1);
	g_assert_cmpuint(writer->written->len, ==, 1);
	iterate();
	g_assert_cmpuint(writer->flushes, ==, 0);
}

static void
test_delivery_drain_from_announcement(void)
{
	g_autoptr(TestWriter) writer = g_object_new(TEST_TYPE_WRITER, NULL);
	g_autoptr(MsdDelivery) delivery = msd_delivery_new(NULL, MESHSYNC_WRITER(writer));
	Announced announced = {0};

	/* a program that stops the handler from its resource-event handler */
	announced.stop_on = delivery;
	announced.stop_at = 3;
	msd_delivery_set_announce_func(delivery, count_announce, &announced);
	writer->writable = FALSE;
	push_pods(delivery, 0, 5);
	writer->writable = TRUE;
	meshsync_writer_writable_changed(MESHSYNC_WRITER(writer));
	/* every event written once, in order, whatever the reentrancy */
	assert_written_in_order(writer, 5);
	g_assert_cmpuint(announced.announced, ==, 5);
	g_assert_cmpuint(msd_delivery_get_length(delivery), ==, 0);
}

static void
test_delivery_without_writer(void)
{
	g_autoptr(MsdDelivery) delivery = msd_delivery_new(NULL, NULL);
	Announced announced = {0};

	msd_delivery_set_announce_func(delivery, count_announce, &announced);
	push_pods(delivery, 0, 7);
	g_assert_cmpuint(announced.announced, ==, 7);
	g_assert_cmpuint(msd_delivery_get_length(delivery), ==, 0);
}

/* One latency per timed event, taken when the writer takes it (so a held event's includes
 * the wait); untimed events and events no writer took report none. */
static void
test_delivery_latency(void)
{
	g_autoptr(TestWriter) writer = g_object_new(TEST_TYPE_WRITER, NULL);
	g_autoptr(MsdDelivery) delivery = msd_delivery_new(NULL, MESHSYNC_WRITER(writer));
	g_autoptr(MsdDelivery) nowhere = msd_delivery_new(NULL, NULL);
	g_autoptr(MeshSyncResource) first = make_pod(0);
	g_autoptr(MeshSyncResource) second = make_pod(1);
	g_autoptr(MeshSyncResource) untimed = make_pod(2);
	Latencies latencies = {0};
	Latencies none = {0};
	gint64 read_at = g_get_monotonic_time() - 5000;

	msd_delivery_set_latency_func(delivery, record_latency, &latencies);
	msd_delivery_push_timed(delivery, first, MESHSYNC_EVENT_TYPE_ADDED, read_at);
	g_assert_cmpuint(latencies.n, ==, 1);
	g_assert_cmpint(latencies.min_usec, >=, 5000);

	writer->writable = FALSE;
	msd_delivery_push_timed(delivery, second, MESHSYNC_EVENT_TYPE_ADDED, read_at);
	msd_delivery_push(delivery, untimed, MESHSYNC_EVENT_TYPE_ADDED);
	g_assert_cmpuint(latencies.n, ==, 1);
	test_writer_set_writable(writer, TRUE);
	g_assert_cmpuint(writer->written->len, ==, 3);
	g_assert_cmpuint(latencies.n, ==, 2);
	g_assert_cmpint(latencies.min_usec, >=, 5000);

	msd_delivery_set_latency_func(delivery, NULL, NULL);
	msd_delivery_push_timed(delivery, untimed, MESHSYNC_EVENT_TYPE_MODIFIED, read_at);
	g_assert_cmpuint(latencies.n, ==, 2);

	msd_delivery_set_latency_func(nowhere, record_latency, &none);
	msd_delivery_push_timed(nowhere, first, MESHSYNC_EVENT_TYPE_ADDED, read_at);
	g_assert_cmpuint(none.n, ==, 0);
	iterate();
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/delivery/in-order-one-flush", test_delivery_in_order_one_flush);
	g_test_add_func("/delivery/held-while-not-writable", test_delivery_held_while_not_writable);
	g_test_add_func("/delivery/refused-event-retried", test_delivery_refused_event_retried);
	g_test_add_func("/delivery/watermarks", test_delivery_watermarks);
	g_test_add_func("/delivery/write-error-fails-once", test_delivery_write_error_fails_once);
	g_test_add_func("/delivery/drain", test_delivery_drain);
	g_test_add_func("/delivery/drain-from-announcement", test_delivery_drain_from_announcement);
	g_test_add_func("/delivery/without-writer", test_delivery_without_writer);
	g_test_add_func("/delivery/latency", test_delivery_latency);
	g_test_add_func("/delivery/coalesced-while-not-writable",
	                test_delivery_coalesced_while_not_writable);
	g_test_add_func("/delivery/added-deleted-recreated", test_delivery_added_deleted_recreated);
	g_test_add_func("/delivery/full-pauses-never-drops", test_delivery_full_pauses_never_drops);
	g_test_add_func("/delivery/bytes-bound", test_delivery_bytes_bound);
	g_test_add_func("/delivery/refused-not-merged", test_delivery_refused_not_merged);
	return g_test_run();
}
