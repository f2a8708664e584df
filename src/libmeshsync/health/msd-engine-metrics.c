/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncHealth"

#include "config.h"

#include "engine/msd-delivery.h"
#include "health/msd-engine-metrics.h"
#include "meshsync-broker-private.h"
#include "meshsync-handler-private.h"

/* One series read from an engine object through a callback at scrape time. */
typedef struct {
	const gchar *name;
	const gchar *help;
	gboolean counter;
	MsdMetricsGaugeFunc read;
	gboolean from_writer; /* a broker series read from the broker writer, not the broker */
} MsdEngineSeries;

static gdouble
msd_engine_metrics_objects(gpointer handler)
{
	return meshsync_handler_get_n_objects(handler);
}

static gdouble
msd_engine_metrics_waiting_keys(gpointer handler)
{
	return msd_delivery_get_n_waiting_keys(meshsync_handler_get_delivery(handler));
}

static gdouble
msd_engine_metrics_waiting_events(gpointer handler)
{
	return msd_delivery_get_length(meshsync_handler_get_delivery(handler));
}

static gdouble
msd_engine_metrics_coalesced(gpointer handler)
{
	return (gdouble)msd_delivery_get_n_coalesced(meshsync_handler_get_delivery(handler));
}

static gdouble
msd_engine_metrics_ready(gpointer handler)
{
	return meshsync_handler_get_ready(handler) ? 1 : 0;
}

#define MSD_ENGINE_METRICS_COUNTER_READER(func, field)             \
	static gdouble func(gpointer handler)                      \
	{                                                          \
		MsdInformerCounters counters;                      \
                                                                   \
		meshsync_handler_get_counters(handler, &counters); \
		return (gdouble)counters.field;                    \
	}

MSD_ENGINE_METRICS_COUNTER_READER(msd_engine_metrics_relists, relists)
MSD_ENGINE_METRICS_COUNTER_READER(msd_engine_metrics_restarts, watch_restarts)
MSD_ENGINE_METRICS_COUNTER_READER(msd_engine_metrics_silences, watch_silences)
MSD_ENGINE_METRICS_COUNTER_READER(msd_engine_metrics_skipped, skipped)
MSD_ENGINE_METRICS_COUNTER_READER(msd_engine_metrics_watch_errors, errors)
MSD_ENGINE_METRICS_COUNTER_READER(msd_engine_metrics_identity_checks, identity_checks)
MSD_ENGINE_METRICS_COUNTER_READER(msd_engine_metrics_watch_list_changes, watch_list_changes)

#define MSD_ENGINE_METRICS_CACHE_READER(func, field)               \
	static gdouble func(gpointer handler)                      \
	{                                                          \
		MsdAttributeCacheStats stats;                      \
                                                                   \
		meshsync_handler_get_cache_stats(handler, &stats); \
		return (gdouble)stats.field;                       \
	}

MSD_ENGINE_METRICS_CACHE_READER(msd_engine_metrics_cache_hits, hits)
MSD_ENGINE_METRICS_CACHE_READER(msd_engine_metrics_cache_misses, misses)
MSD_ENGINE_METRICS_CACHE_READER(msd_engine_metrics_cache_bytes, bytes)

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

#define MSD_ENGINE_METRICS_REPLAY_READER(func, field)             \
	static gdouble func(gpointer broker)                      \
	{                                                         \
		MeshSyncBrokerReplayStats stats;                  \
                                                                  \
		meshsync_broker_get_replay_stats(broker, &stats); \
		return (gdouble)stats.field;                      \
	}

MSD_ENGINE_METRICS_REPLAY_READER(msd_engine_metrics_window_bytes, bytes)
MSD_ENGINE_METRICS_REPLAY_READER(msd_engine_metrics_window_messages, messages)
MSD_ENGINE_METRICS_REPLAY_READER(msd_engine_metrics_resent, resent)
MSD_ENGINE_METRICS_REPLAY_READER(msd_engine_metrics_confirmations, confirmations)

#define MSD_ENGINE_METRICS_JETSTREAM_READER(func, field)             \
	static gdouble func(gpointer broker)                         \
	{                                                            \
		MeshSyncBrokerJetStreamStats stats;                  \
                                                                     \
		meshsync_broker_get_jetstream_stats(broker, &stats); \
		return (gdouble)stats.field;                         \
	}

MSD_ENGINE_METRICS_JETSTREAM_READER(msd_engine_metrics_js_pending, pending)
MSD_ENGINE_METRICS_JETSTREAM_READER(msd_engine_metrics_js_acked, acked)
MSD_ENGINE_METRICS_JETSTREAM_READER(msd_engine_metrics_js_duplicates, duplicates)
MSD_ENGINE_METRICS_JETSTREAM_READER(msd_engine_metrics_js_resent, resent)
MSD_ENGINE_METRICS_JETSTREAM_READER(msd_engine_metrics_js_rejected, rejected)

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

/* Read from the handler: removed when it is unbound. */
static const MsdEngineSeries msd_handler_series[] = {
        {"meshsync_objects", "Objects held by the informers of the current run", FALSE,
         msd_engine_metrics_objects},
        {"meshsync_ready", "1 once the current run has its complete initial state", FALSE,
         msd_engine_metrics_ready},
        {"meshsync_relists_total", "Lists started again after a watch expired or broke", TRUE,
         msd_engine_metrics_relists},
        {"meshsync_watch_restarts_total", "Watches reopened after they ended", TRUE,
         msd_engine_metrics_restarts},
        {"meshsync_watch_silences_total",
         "Watches abandoned after receiving nothing for 30 s, then resumed", TRUE,
         msd_engine_metrics_silences},
        {"meshsync_objects_skipped_total",
         "Objects left out because they exceed a limit: size, nesting depth, labels", TRUE,
         msd_engine_metrics_skipped},
        {"meshsync_watch_errors_total",
         "Failed list and watch requests, broken watch streams and watch ERROR events", TRUE,
         msd_engine_metrics_watch_errors},
        {"meshsync_cluster_identity_checks_total",
         "Reads of namespace kube-system's uid, made on relists and watch reconnections to tell "
         "a restarted API server from another cluster at the same URL",
         TRUE, msd_engine_metrics_identity_checks},
        {"meshsync_watch_list_changes_total",
         "Changes of the MeshSync resource's watch list applied to the running informers "
         "without a resync",
         TRUE, msd_engine_metrics_watch_list_changes},
        {"meshsync_conversion_cache_hits_total",
         "Watch events whose spec was converted before, its wire form copied from the cache", TRUE,
         msd_engine_metrics_cache_hits},
        {"meshsync_conversion_cache_misses_total",
         "Watch events whose spec was converted and put in the cache", TRUE,
         msd_engine_metrics_cache_misses},
        {"meshsync_conversion_cache_bytes",
         "Bytes held by the conversion cache of specs (32 MiB at most)", FALSE,
         msd_engine_metrics_cache_bytes},
        {"meshsync_delivery_queue_objects",
         "Objects with an event waiting for the output that a newer event of the object would "
         "replace (the coalescing queue's keys)",
         FALSE, msd_engine_metrics_waiting_keys},
        {"meshsync_delivery_queue_events",
         "Events waiting for the output (100,000 at most before the informers pause)", FALSE,
         msd_engine_metrics_waiting_events},
        {"meshsync_delivery_coalesced_total",
         "Events merged into an event of the same object waiting for the output, which then "
         "carries the newer state",
         TRUE, msd_engine_metrics_coalesced},
};

/* Read from the broker and its writer: removed when they are unbound. */
static const MsdEngineSeries msd_broker_series[] = {
        {"meshsync_broker_buffered_bytes",
         "Bytes published while the broker was away, not sent yet", FALSE,
         msd_engine_metrics_buffered},
        {"meshsync_broker_window_bytes",
         "Bytes of resource events published and not yet confirmed by the broker, kept to be "
         "sent again after a reconnection (the replay window; 64 MiB at most before events "
         "are held)",
         FALSE, msd_engine_metrics_window_bytes},
        {"meshsync_broker_window_messages",
         "Resource events published and not yet confirmed by the broker", FALSE,
         msd_engine_metrics_window_messages},
        {"meshsync_broker_reconnects_total", "Reconnections to the broker", TRUE,
         msd_engine_metrics_reconnects},
        {"meshsync_broker_resent_messages_total",
         "Resource events sent again after a reconnection because the broker had not "
         "confirmed them",
         TRUE, msd_engine_metrics_resent},
        {"meshsync_broker_confirmations_total",
         "Round trips (PING and PONG) that confirmed what was published before them", TRUE,
         msd_engine_metrics_confirmations},
        {"meshsync_broker_messages_published_total",
         "Resource events published on meshery.meshsync.core", TRUE, msd_engine_metrics_published,
         TRUE},
        {"meshsync_broker_messages_oversize_total",
         "Resource events too large for the broker, dropped", TRUE, msd_engine_metrics_oversize,
         TRUE},
        {"meshsync_broker_publish_errors_total", "Resource events the broker refused", TRUE,
         msd_engine_metrics_publish_errors, TRUE},
        {"meshsync_jetstream_pending_messages",
         "Resource events published to JetStream (--jetstream) and not acknowledged yet", FALSE,
         msd_engine_metrics_js_pending},
        {"meshsync_jetstream_acked_total", "Resource events JetStream acknowledged", TRUE,
         msd_engine_metrics_js_acked},
        {"meshsync_jetstream_duplicates_total",
         "Acknowledgements of events JetStream already held (the same Nats-Msg-Id)", TRUE,
         msd_engine_metrics_js_duplicates},
        {"meshsync_jetstream_resent_total",
         "Resource events sent to JetStream again (a reconnection, or an acknowledgement "
         "overdue)",
         TRUE, msd_engine_metrics_js_resent},
        {"meshsync_jetstream_rejected_total",
         "Resource events JetStream refused for good (a stream limit, a subject it does not "
         "take) and dropped",
         TRUE, msd_engine_metrics_js_rejected},
};

#define MSD_ENGINE_METRICS_SYNCS        "meshsync_syncs_total"
#define MSD_ENGINE_METRICS_SYNCS_HELP   "Initial syncs completed: the first, then one per resync"
#define MSD_ENGINE_METRICS_RUN_FAILURES "meshsync_run_failures_total"
#define MSD_ENGINE_METRICS_RUN_FAILURES_HELP                                          \
	"Runs that failed before their initial sync and are tried again (API server " \
	"unreachable, credentials or certificate refused)"
#define MSD_ENGINE_METRICS_LATENCY "meshsync_event_latency_seconds"
#define MSD_ENGINE_METRICS_LATENCY_HELP                                                        \
	"Seconds from reading a watch event off the API server's stream to handing it to the " \
	"output (published to the broker, written to the file)"
#define MSD_ENGINE_METRICS_SYNC "meshsync_initial_sync_seconds"
#define MSD_ENGINE_METRICS_SYNC_HELP                                                          \
	"Seconds from starting a resource type's informer to its complete initial state, by " \
	"resource; one observation per type per run (and per namespace with --namespaces)"

/* 100 µs (a line parsed and published in one go) to 10 s (an output that held events back). */
static const gdouble msd_latency_bounds[] = {
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
        0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10,
};

/* A small type lists in milliseconds; tens of thousands of objects take minutes. */
static const gdouble msd_sync_bounds[] = {
        0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600,
};

/* Each series at zero, until an object to read it from is bound. */
static void
msd_engine_metrics_declare_series(MsdMetrics *metrics, const MsdEngineSeries *series, guint n)
{
	for (guint i = 0; i < n; i++) {
		if (msd_metrics_lookup(metrics, series[i].name, NULL, NULL))
			continue;
		if (series[i].counter)
			msd_metrics_counter_add(metrics, series[i].name, series[i].help, 0, NULL);
		else
			msd_metrics_gauge_set(metrics, series[i].name, series[i].help, 0, NULL);
	}
}

static void
msd_engine_metrics_bind_series(MsdMetrics *metrics,
                               const MsdEngineSeries *series,
                               guint n,
                               gpointer object,
                               gpointer writer)
{
	for (guint i = 0; i < n; i++) {
		gpointer from = series[i].from_writer ? writer : object;

		/* the zero declared earlier goes: a callback and a value cannot share a series */
		msd_metrics_remove(metrics, series[i].name, NULL);
		if (series[i].counter)
			msd_metrics_counter_set_func(metrics, series[i].name, series[i].help,
			                             series[i].read, from, NULL, NULL);
		else
			msd_metrics_gauge_set_func(metrics, series[i].name, series[i].help,
			                           series[i].read, from, NULL, NULL);
	}
}

static void
msd_engine_metrics_unbind_series(MsdMetrics *metrics, const MsdEngineSeries *series, guint n)
{
	for (guint i = 0; i < n; i++)
		msd_metrics_remove(metrics, series[i].name, NULL);
}

#define MSD_ENGINE_METRICS_DRIFT "meshsync_reconcile_drift_total"
#define MSD_ENGINE_METRICS_DRIFT_HELP                                                         \
	"Objects a reconcile tick found drifted from what the watches said, by the event it " \
	"passed on"
/* The seam a dropping queue would count in: this one pauses the informers instead, so it
 * stays 0, and says so to dashboards that look for it. */
#define MSD_ENGINE_METRICS_DROPS "meshsync_delivery_drops_total"
#define MSD_ENGINE_METRICS_DROPS_HELP                                                            \
	"Events dropped because the delivery queue was full (always 0: a full queue pauses the " \
	"informers instead)"
#define MSD_ENGINE_METRICS_TICKS         "meshsync_reconcile_ticks_total"
#define MSD_ENGINE_METRICS_TICKS_HELP    "Reconcile ticks completed"
#define MSD_ENGINE_METRICS_LIST_FAILURES "meshsync_reconcile_list_failures_total"
#define MSD_ENGINE_METRICS_LIST_FAILURES_HELP \
	"Resource types a reconcile tick could not list (nothing deleted)"

void
msd_engine_metrics_declare(MsdMetrics *metrics, gboolean broker)
{
	g_return_if_fail(MSD_IS_METRICS(metrics));

	msd_engine_metrics_declare_series(metrics, msd_handler_series,
	                                  G_N_ELEMENTS(msd_handler_series));
	if (broker)
		msd_engine_metrics_declare_series(metrics, msd_broker_series,
		                                  G_N_ELEMENTS(msd_broker_series));
	msd_metrics_counter_add(metrics, MSD_ENGINE_METRICS_SYNCS, MSD_ENGINE_METRICS_SYNCS_HELP, 0,
	                        NULL);
	msd_metrics_counter_add(metrics, MSD_ENGINE_METRICS_RUN_FAILURES,
	                        MSD_ENGINE_METRICS_RUN_FAILURES_HELP, 0, NULL);
	msd_metrics_counter_add(metrics, MSD_ENGINE_METRICS_TICKS, MSD_ENGINE_METRICS_TICKS_HELP, 0,
	                        NULL);
	msd_metrics_counter_add(metrics, MSD_ENGINE_METRICS_DROPS, MSD_ENGINE_METRICS_DROPS_HELP, 0,
	                        "reason", "queue_full", NULL);
	msd_metrics_counter_add(metrics, MSD_ENGINE_METRICS_LIST_FAILURES,
	                        MSD_ENGINE_METRICS_LIST_FAILURES_HELP, 0, NULL);
	for (guint i = 0; i < 3; i++)
		msd_metrics_counter_add(metrics, MSD_ENGINE_METRICS_DRIFT,
		                        MSD_ENGINE_METRICS_DRIFT_HELP, 0, "type",
		                        meshsync_event_type_to_string((MeshSyncEventType)i), NULL);
	msd_metrics_histogram_ensure(metrics, MSD_ENGINE_METRICS_LATENCY,
	                             MSD_ENGINE_METRICS_LATENCY_HELP, msd_latency_bounds,
	                             G_N_ELEMENTS(msd_latency_bounds), NULL);
}

#define MSD_ENGINE_METRICS_EVENTS      "meshsync_events_total"
#define MSD_ENGINE_METRICS_EVENTS_HELP "Resource events handed to the output, by kind and type"
#define MSD_ENGINE_METRICS_N_TYPES     (MESHSYNC_EVENT_TYPE_DELETED + 1)

/* Events are counted per kind and type in the registry's own counters, through slots kept
 * by kind for as long as the handler is bound: building and looking up the series key for
 * every event cost 1 µs under churn. The counts are the registry's, so a handler bound later
 * goes on from them. */
typedef struct {
	MsdMetrics *metrics; /* (owned) */
	GHashTable *by_kind; /* kind (owned) -> gdouble *[MSD_ENGINE_METRICS_N_TYPES] (owned) */
} MsdEngineEventCounter;

static void
msd_engine_event_counter_free(gpointer data, GClosure *closure)
{
	MsdEngineEventCounter *counter = data;

	g_hash_table_unref(counter->by_kind);
	g_object_unref(counter->metrics);
	g_free(counter);
}

static void
msd_engine_metrics_event_cb(MeshSyncHandler *handler,
                            MeshSyncResource *resource,
                            MeshSyncEventType type,
                            MsdEngineEventCounter *counter)
{
	const gchar *kind = meshsync_resource_get_kind(resource);
	gdouble **slots;

	if (kind == NULL || (guint)type >= MSD_ENGINE_METRICS_N_TYPES) {
		msd_metrics_counter_add(counter->metrics, MSD_ENGINE_METRICS_EVENTS,
		                        MSD_ENGINE_METRICS_EVENTS_HELP, 1, "kind", kind, "type",
		                        meshsync_event_type_to_string(type), NULL);
		return;
	}
	slots = g_hash_table_lookup(counter->by_kind, kind);
	if (slots == NULL) {
		slots = g_new0(gdouble *, MSD_ENGINE_METRICS_N_TYPES);
		g_hash_table_insert(counter->by_kind, g_strdup(kind), slots);
	}
	if (slots[type] == NULL)
		slots[type] = msd_metrics_counter_slot(
		        counter->metrics, MSD_ENGINE_METRICS_EVENTS, MSD_ENGINE_METRICS_EVENTS_HELP,
		        "kind", kind, "type", meshsync_event_type_to_string(type), NULL);
	if (slots[type] != NULL)
		*slots[type] += 1;
}

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

static void
msd_engine_metrics_reconciled_cb(MeshSyncHandler *handler,
                                 guint added,
                                 guint modified,
                                 guint deleted,
                                 guint listed,
                                 guint failed,
                                 MsdMetrics *metrics)
{
	msd_metrics_counter_add(metrics, MSD_ENGINE_METRICS_TICKS, MSD_ENGINE_METRICS_TICKS_HELP, 1,
	                        NULL);
	msd_metrics_counter_add(metrics, MSD_ENGINE_METRICS_DRIFT, MSD_ENGINE_METRICS_DRIFT_HELP,
	                        added, "type", "ADDED", NULL);
	msd_metrics_counter_add(metrics, MSD_ENGINE_METRICS_DRIFT, MSD_ENGINE_METRICS_DRIFT_HELP,
	                        modified, "type", "MODIFIED", NULL);
	msd_metrics_counter_add(metrics, MSD_ENGINE_METRICS_DRIFT, MSD_ENGINE_METRICS_DRIFT_HELP,
	                        deleted, "type", "DELETED", NULL);
	msd_metrics_counter_add(metrics, MSD_ENGINE_METRICS_LIST_FAILURES,
	                        MSD_ENGINE_METRICS_LIST_FAILURES_HELP, failed, NULL);
}

void
msd_engine_metrics_bind_handler(MsdMetrics *metrics, MeshSyncHandler *handler)
{
	MsdEngineEventCounter *counter;
	MsdMetricsHistogram *latency;

	g_return_if_fail(MSD_IS_METRICS(metrics));
	g_return_if_fail(MESHSYNC_IS_HANDLER(handler));

	msd_engine_metrics_declare(metrics, FALSE);
	msd_engine_metrics_bind_series(metrics, msd_handler_series,
	                               G_N_ELEMENTS(msd_handler_series), handler, NULL);
	latency = msd_metrics_histogram_ensure(metrics, MSD_ENGINE_METRICS_LATENCY,
	                                       MSD_ENGINE_METRICS_LATENCY_HELP, msd_latency_bounds,
	                                       G_N_ELEMENTS(msd_latency_bounds), NULL);
	msd_delivery_set_latency_func(meshsync_handler_get_delivery(handler),
	                              msd_engine_metrics_latency_cb, latency);
	meshsync_handler_set_informer_synced_func(handler, msd_engine_metrics_informer_synced_cb,
	                                          metrics);
	counter = g_new0(MsdEngineEventCounter, 1);
	counter->metrics = g_object_ref(metrics);
	counter->by_kind = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	g_signal_connect_data(handler, "resource-event", G_CALLBACK(msd_engine_metrics_event_cb),
	                      counter, msd_engine_event_counter_free, 0);
	g_signal_connect_object(handler, "ready-changed", G_CALLBACK(msd_engine_metrics_ready_cb),
	                        metrics, 0);
	g_signal_connect_object(handler, "run-failed", G_CALLBACK(msd_engine_metrics_run_failed_cb),
	                        metrics, 0);
	g_signal_connect_object(handler, "reconciled", G_CALLBACK(msd_engine_metrics_reconciled_cb),
	                        metrics, 0);
}

void
msd_engine_metrics_unbind_handler(MsdMetrics *metrics, MeshSyncHandler *handler)
{
	g_return_if_fail(MSD_IS_METRICS(metrics));

	msd_engine_metrics_unbind_series(metrics, msd_handler_series,
	                                 G_N_ELEMENTS(msd_handler_series));
	if (handler != NULL) {
		msd_delivery_set_latency_func(meshsync_handler_get_delivery(handler), NULL, NULL);
		meshsync_handler_set_informer_synced_func(handler, NULL, NULL);
		g_signal_handlers_disconnect_matched(handler, G_SIGNAL_MATCH_FUNC, 0, 0, NULL,
		                                     msd_engine_metrics_event_cb, NULL);
		g_signal_handlers_disconnect_by_func(handler, msd_engine_metrics_ready_cb, metrics);
		g_signal_handlers_disconnect_by_func(handler, msd_engine_metrics_run_failed_cb,
		                                     metrics);
		g_signal_handlers_disconnect_by_func(handler, msd_engine_metrics_reconciled_cb,
		                                     metrics);
	}
}

void
msd_engine_metrics_bind_broker(MsdMetrics *metrics,
                               MeshSyncBroker *broker,
                               MeshSyncBrokerWriter *writer)
{
	g_return_if_fail(MSD_IS_METRICS(metrics));
	g_return_if_fail(MESHSYNC_IS_BROKER(broker));
	g_return_if_fail(MESHSYNC_IS_BROKER_WRITER(writer));

	msd_engine_metrics_bind_series(metrics, msd_broker_series, G_N_ELEMENTS(msd_broker_series),
	                               broker, writer);
}

void
msd_engine_metrics_unbind_broker(MsdMetrics *metrics)
{
	g_return_if_fail(MSD_IS_METRICS(metrics));

	msd_engine_metrics_unbind_series(metrics, msd_broker_series,
	                                 G_N_ELEMENTS(msd_broker_series));
}
