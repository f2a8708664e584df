/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncHealth"

#include "config.h"

#include "health/msd-engine-metrics.h"
#include "meshsync-broker-private.h"
#include "meshsync-handler-private.h"

/* The series that read the handler through a callback: removed when it is unbound. */
static const gchar *const msd_handler_series[] = {
        "meshsync_objects",
        "meshsync_relists_total",
        "meshsync_watch_restarts_total",
        "meshsync_ready",
        "meshsync_objects_skipped_total",
        "meshsync_watch_errors_total",
};

static const gchar *const msd_broker_series[] = {
        "meshsync_broker_buffered_bytes",
        "meshsync_broker_reconnects_total",
        "meshsync_broker_messages_published_total",
        "meshsync_broker_messages_oversize_total",
        "meshsync_broker_publish_errors_total",
        "meshsync_broker_window_bytes",
        "meshsync_broker_window_messages",
        "meshsync_broker_resent_messages_total",
        "meshsync_broker_confirmations_total",
};

#define MSD_ENGINE_METRICS_LATENCY "meshsync_event_latency_seconds"
#define MSD_ENGINE_METRICS_LATENCY_HELP                                                         \
	"Seconds from reading a watch event off the API server's stream to handing it to the "  \
	"output (published to the broker, written to the file)"
#define MSD_ENGINE_METRICS_SYNC "meshsync_initial_sync_seconds"
#define MSD_ENGINE_METRICS_SYNC_HELP                                                            \
	"Seconds from starting a resource type's informer to its complete initial state, by "   \
	"resource; one observation per type per run (and per namespace with --namespaces)"

/* 100 µs (a line parsed and published in one go) to 10 s (an output that held events back). */
static const gdouble msd_latency_bounds[] = {
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
        0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,     10,
};

/* A small type lists in milliseconds; tens of thousands of objects take minutes. */
static const gdouble msd_sync_bounds[] = {
        0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600,
};

static gdouble
msd_engine_metrics_objects(gpointer handler)
{
	return meshsync_handler_get_n_objects(handler);
}

static gdouble
msd_engine_metrics_relists(gpointer handler)
{
	MsdInformerCounters counters;

	meshsync_handler_get_counters(handler, &counters);
	return (gdouble)counters.relists;
}

static gdouble
msd_engine_metrics_restarts(gpointer handler)
{
	MsdInformerCounters counters;

	meshsync_handler_get_counters(handler, &counters);
	return (gdouble)counters.watch_restarts;
}

static gdouble
msd_engine_metrics_skipped(gpointer handler)
{
	MsdInformerCounters counters;

	meshsync_handler_get_counters(handler, &counters);
	return (gdouble)counters.skipped;
}

static gdouble
msd_engine_metrics_watch_errors(gpointer handler)
{
	MsdInformerCounters counters;

	meshsync_handler_get_counters(handler, &counters);
	return (gdouble)counters.errors;
}

static gdouble
msd_engine_metrics_ready(gpointer handler)
{
	return meshsync_handler_get_ready(handler) ? 1 : 0;
}

#define MSD_ENGINE_METRICS_EVENTS      "meshsync_events_total"
#define MSD_ENGINE_METRICS_EVENTS_HELP "Resource events handed to the output, by kind and type"
#define MSD_ENGINE_METRICS_N_TYPES     (MESHSYNC_EVENT_TYPE_DELETED + 1)

/* Events are counted here, per kind and type, and the registry reads each count through a
 * callback: adding to the registry's counter built and looked up its series key for every
 * event (1 µs under churn). The counts belong to the registry, so a handler bound later goes
 * on from them. */
typedef struct {
	GHashTable *by_kind; /* kind (owned) -> gdouble[MSD_ENGINE_METRICS_N_TYPES] (owned) */
} MsdEngineEventCounts;

static void
msd_engine_event_counts_free(gpointer data)
{
	MsdEngineEventCounts *counts = data;

	g_hash_table_unref(counts->by_kind);
	g_free(counts);
}

static gdouble
msd_engine_metrics_read_count(gpointer slot)
{
	return *(const gdouble *)slot;
}

static MsdEngineEventCounts *
msd_engine_event_counts_get(MsdMetrics *metrics)
{
	static GQuark quark;
	MsdEngineEventCounts *counts;

	if (G_UNLIKELY(quark == 0))
		quark = g_quark_from_static_string("msd-engine-event-counts");
	counts = g_object_get_qdata(G_OBJECT(metrics), quark);
	if (counts == NULL) {
		counts = g_new0(MsdEngineEventCounts, 1);
		counts->by_kind = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
		g_object_set_qdata_full(G_OBJECT(metrics), quark, counts,
		                        msd_engine_event_counts_free);
	}
	return counts;
}

static void
msd_engine_metrics_event_cb(MeshSyncHandler *handler,
                            MeshSyncResource *resource,
                            MeshSyncEventType type,
                            MsdMetrics *metrics)
{
	const gchar *kind = meshsync_resource_get_kind(resource);
	MsdEngineEventCounts *counts;
	gdouble *slots;

	if (kind == NULL || (guint)type >= MSD_ENGINE_METRICS_N_TYPES) {
		msd_metrics_counter_add(metrics, MSD_ENGINE_METRICS_EVENTS,
		                        MSD_ENGINE_METRICS_EVENTS_HELP, 1, "kind", kind, "type",
		                        meshsync_event_type_to_string(type), NULL);
		return;
	}
	counts = msd_engine_event_counts_get(metrics);
	slots = g_hash_table_lookup(counts->by_kind, kind);
	if (slots == NULL) {
		slots = g_new0(gdouble, MSD_ENGINE_METRICS_N_TYPES);
		g_hash_table_insert(counts->by_kind, g_strdup(kind), slots);
	}
	if (slots[type] == 0)
		msd_metrics_counter_set_func(
		        metrics, MSD_ENGINE_METRICS_EVENTS, MSD_ENGINE_METRICS_EVENTS_HELP,
		        msd_engine_metrics_read_count, &slots[type], NULL, "kind", kind, "type",
		        meshsync_event_type_to_string(type), NULL);
	slots[type] += 1;
}

#define MSD_ENGINE_METRICS_SYNCS      "meshsync_syncs_total"
#define MSD_ENGINE_METRICS_SYNCS_HELP "Initial syncs completed: the first, then one per resync"
#define MSD_ENGINE_METRICS_RUN_FAILURES "meshsync_run_failures_total"
#define MSD_ENGINE_METRICS_RUN_FAILURES_HELP                                                    \
	"Runs that failed before their initial sync and are tried again (API server "           \
	"unreachable, credentials or certificate refused)"

/* A counter rather than the gauge alone: a probe (or a test) that looks now and then cannot
 * tell from meshsync_ready whether a resync has come and gone since it last looked. */
static void
msd_engine_metrics_ready_cb(MeshSyncHandler *handler, gboolean ready, MsdMetrics *metrics)
{
	if (ready)
		msd_metrics_counter_add(metrics, MSD_ENGINE_METRICS_SYNCS,
		                        MSD_ENGINE_METRICS_SYNCS_HELP, 1, NULL);
}

static void
msd_engine_metrics_run_failed_cb(MeshSyncHandler *handler, const GError *error, MsdMetrics *metrics)
{
	msd_metrics_counter_add(metrics, MSD_ENGINE_METRICS_RUN_FAILURES,
	                        MSD_ENGINE_METRICS_RUN_FAILURES_HELP, 1, NULL);
}

static void
msd_engine_metrics_latency_cb(gint64 usec, gpointer histogram)
{
	msd_metrics_histogram_observe(histogram, (gdouble)usec / G_USEC_PER_SEC);
}

static void
msd_engine_metrics_informer_synced_cb(MsdInformer *informer, gpointer metrics)
{
	MsdMetricsHistogram *histogram = msd_metrics_histogram_ensure(
	        metrics, MSD_ENGINE_METRICS_SYNC, MSD_ENGINE_METRICS_SYNC_HELP, msd_sync_bounds,
	        G_N_ELEMENTS(msd_sync_bounds), "resource", msd_informer_get_name(informer), NULL);

	if (histogram != NULL)
		msd_metrics_histogram_observe(histogram, msd_informer_get_sync_seconds(informer));
}

void
msd_engine_metrics_bind_handler(MsdMetrics *metrics, MeshSyncHandler *handler)
{
	MsdMetricsHistogram *latency;

	g_return_if_fail(MSD_IS_METRICS(metrics));
	g_return_if_fail(MESHSYNC_IS_HANDLER(handler));

	msd_metrics_gauge_set_func(metrics, msd_handler_series[0],
	                           "Objects held by the informers of the current run",
	                           msd_engine_metrics_objects, handler, NULL, NULL);
	msd_metrics_counter_set_func(metrics, msd_handler_series[1],
	                             "Lists started again after a watch expired or broke",
	                             msd_engine_metrics_relists, handler, NULL, NULL);
	msd_metrics_counter_set_func(metrics, msd_handler_series[2],
	                             "Watches reopened after they ended",
	                             msd_engine_metrics_restarts, handler, NULL, NULL);
	msd_metrics_gauge_set_func(metrics, msd_handler_series[3],
	                           "1 once the current run has its complete initial state",
	                           msd_engine_metrics_ready, handler, NULL, NULL);
	msd_metrics_counter_set_func(
	        metrics, msd_handler_series[4],
	        "Objects left out because they exceed a limit: size, nesting depth, labels",
	        msd_engine_metrics_skipped, handler, NULL, NULL);
	msd_metrics_counter_set_func(
	        metrics, msd_handler_series[5],
	        "Failed list and watch requests, broken watch streams and watch ERROR events",
	        msd_engine_metrics_watch_errors, handler, NULL, NULL);
	/* counted by signal: present at zero before the first one */
	msd_metrics_counter_add(metrics, MSD_ENGINE_METRICS_SYNCS, MSD_ENGINE_METRICS_SYNCS_HELP, 0,
	                        NULL);
	msd_metrics_counter_add(metrics, MSD_ENGINE_METRICS_RUN_FAILURES,
	                        MSD_ENGINE_METRICS_RUN_FAILURES_HELP, 0, NULL);
	latency = msd_metrics_histogram_ensure(metrics, MSD_ENGINE_METRICS_LATENCY,
	                                       MSD_ENGINE_METRICS_LATENCY_HELP, msd_latency_bounds,
	                                       G_N_ELEMENTS(msd_latency_bounds), NULL);
	msd_delivery_set_latency_func(meshsync_handler_get_delivery(handler),
	                              msd_engine_metrics_latency_cb, latency);
	meshsync_handler_set_informer_synced_func(handler, msd_engine_metrics_informer_synced_cb,
	                                          metrics);
	g_signal_connect_object(handler, "resource-event", G_CALLBACK(msd_engine_metrics_event_cb),
	                        metrics, 0);
	g_signal_connect_object(handler, "ready-changed", G_CALLBACK(msd_engine_metrics_ready_cb),
	                        metrics, 0);
	g_signal_connect_object(handler, "run-failed", G_CALLBACK(msd_engine_metrics_run_failed_cb),
	                        metrics, 0);
}

void
msd_engine_metrics_unbind_handler(MsdMetrics *metrics, MeshSyncHandler *handler)
{
	g_return_if_fail(MSD_IS_METRICS(metrics));

	for (guint i = 0; i < G_N_ELEMENTS(msd_handler_series); i++)
		msd_metrics_remove(metrics, msd_handler_series[i], NULL);
	if (handler != NULL) {
		msd_delivery_set_latency_func(meshsync_handler_get_delivery(handler), NULL, NULL);
		meshsync_handler_set_informer_synced_func(handler, NULL, NULL);
		g_signal_handlers_disconnect_by_func(handler, msd_engine_metrics_event_cb, metrics);
		g_signal_handlers_disconnect_by_func(handler, msd_engine_metrics_ready_cb, metrics);
		g_signal_handlers_disconnect_by_func(handler, msd_engine_metrics_run_failed_cb,
		                                     metrics);
	}
}

static gdouble
msd_engine_metrics_buffered(gpointer broker)
{
	return (gdouble)meshsync_broker_get_buffered_bytes(broker);
}

static gdouble
msd_engine_metrics_reconnects(gpointer broker)
{
	return (gdouble)meshsync_broker_get_reconnects(broker);
}

static gdouble
msd_engine_metrics_window_bytes(gpointer broker)
{
	MeshSyncBrokerReplayStats stats;

	meshsync_broker_get_replay_stats(broker, &stats);
	return (gdouble)stats.bytes;
}

static gdouble
msd_engine_metrics_window_messages(gpointer broker)
{
	MeshSyncBrokerReplayStats stats;

	meshsync_broker_get_replay_stats(broker, &stats);
	return (gdouble)stats.messages;
}

static gdouble
msd_engine_metrics_resent(gpointer broker)
{
	MeshSyncBrokerReplayStats stats;

	meshsync_broker_get_replay_stats(broker, &stats);
	return (gdouble)stats.resent;
}

static gdouble
msd_engine_metrics_confirmations(gpointer broker)
{
	MeshSyncBrokerReplayStats stats;

	meshsync_broker_get_replay_stats(broker, &stats);
	return (gdouble)stats.confirmations;
}

static gdouble
msd_engine_metrics_published(gpointer writer)
{
	return (gdouble)meshsync_broker_writer_get_n_published(writer);
}

static gdouble
msd_engine_metrics_oversize(gpointer writer)
{
	return (gdouble)meshsync_broker_writer_get_n_oversize(writer);
}

static gdouble
msd_engine_metrics_publish_errors(gpointer writer)
{
	return (gdouble)meshsync_broker_writer_get_n_errors(writer);
}

void
msd_engine_metrics_bind_broker(MsdMetrics *metrics,
                               MeshSyncBroker *broker,
                               MeshSyncBrokerWriter *writer)
{
	g_return_if_fail(MSD_IS_METRICS(metrics));
	g_return_if_fail(MESHSYNC_IS_BROKER(broker));
	g_return_if_fail(MESHSYNC_IS_BROKER_WRITER(writer));

	msd_metrics_gauge_set_func(metrics, msd_broker_series[0],
	                           "Bytes published while the broker was away, not sent yet",
	                           msd_engine_metrics_buffered, broker, NULL, NULL);
	msd_metrics_counter_set_func(metrics, msd_broker_series[1], "Reconnections to the broker",
	                             msd_engine_metrics_reconnects, broker, NULL, NULL);
	msd_metrics_counter_set_func(metrics, msd_broker_series[2],
	                             "Resource events published on meshery.meshsync.core",
	                             msd_engine_metrics_published, writer, NULL, NULL);
	msd_metrics_counter_set_func(metrics, msd_broker_series[3],
	                             "Resource events too large for the broker, dropped",
	                             msd_engine_metrics_oversize, writer, NULL, NULL);
	msd_metrics_counter_set_func(metrics, msd_broker_series[4],
	                             "Resource events the broker refused",
	                             msd_engine_metrics_publish_errors, writer, NULL, NULL);
	msd_metrics_gauge_set_func(
	        metrics, msd_broker_series[5],
	        "Bytes of resource events published and not yet confirmed by the broker, kept to "
	        "be sent again after a reconnection (the replay window; 64 MiB at most before "
	        "events are held)",
	        msd_engine_metrics_window_bytes, broker, NULL, NULL);
	msd_metrics_gauge_set_func(metrics, msd_broker_series[6],
	                           "Resource events published and not yet confirmed by the broker",
	                           msd_engine_metrics_window_messages, broker, NULL, NULL);
	msd_metrics_counter_set_func(
	        metrics, msd_broker_series[7],
	        "Resource events sent again after a reconnection because the broker had not "
	        "confirmed them",
	        msd_engine_metrics_resent, broker, NULL, NULL);
	msd_metrics_counter_set_func(
	        metrics, msd_broker_series[8],
	        "Round trips (PING and PONG) that confirmed what was published before them",
	        msd_engine_metrics_confirmations, broker, NULL, NULL);
}

void
msd_engine_metrics_unbind_broker(MsdMetrics *metrics)
{
	g_return_if_fail(MSD_IS_METRICS(metrics));

	for (guint i = 0; i < G_N_ELEMENTS(msd_broker_series); i++)
		msd_metrics_remove(metrics, msd_broker_series[i], NULL);
}
