/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncHealth"

#include "config.h"

#include "health/msd-engine-metrics.h"
#include "meshsync-broker-private.h"
#include "meshsync-handler-private.h"

static const gchar *const msd_handler_gauges[] = {
        "meshsync_objects", "meshsync_relists",         "meshsync_watch_restarts",
        "meshsync_ready",   "meshsync_objects_skipped",
};

static const gchar *const msd_broker_series[] = {
        "meshsync_broker_buffered_bytes",      "meshsync_broker_reconnects",
        "meshsync_broker_messages_published",  "meshsync_broker_messages_oversize",
        "meshsync_broker_publish_errors",      "meshsync_broker_window_bytes",
        "meshsync_broker_window_messages",     "meshsync_broker_resent_messages_total",
        "meshsync_broker_confirmations_total",
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

/* A counter rather than the gauge alone: a probe (or a test) that looks now and then cannot
 * tell from meshsync_ready whether a resync has come and gone since it last looked. */
static void
msd_engine_metrics_ready_cb(MeshSyncHandler *handler, gboolean ready, MsdMetrics *metrics)
{
	if (ready)
		msd_metrics_counter_add(metrics, "meshsync_syncs_total",
		                        "Initial syncs completed: the first, then one per resync",
		                        1, NULL);
}

static void
msd_engine_metrics_run_failed_cb(MeshSyncHandler *handler, const GError *error, MsdMetrics *metrics)
{
	msd_metrics_counter_add(metrics, "meshsync_run_failures_total",
	                        "Runs that failed before their initial sync and are tried again "
	                        "(API server unreachable, credentials or certificate refused)",
	                        1, NULL);
}

#define MSD_ENGINE_METRICS_DRIFT "meshsync_reconcile_drift_total"
#define MSD_ENGINE_METRICS_DRIFT_HELP                                                         \
	"Objects a reconcile tick found drifted from what the watches said, by the event it " \
	"passed on"

static void
msd_engine_metrics_reconciled_cb(MeshSyncHandler *handler,
                                 guint added,
                                 guint modified,
                                 guint deleted,
                                 guint listed,
                                 guint failed,
                                 MsdMetrics *metrics)
{
	msd_metrics_counter_add(metrics, "meshsync_reconcile_ticks_total",
	                        "Reconcile ticks completed", 1, NULL);
	msd_metrics_counter_add(metrics, MSD_ENGINE_METRICS_DRIFT, MSD_ENGINE_METRICS_DRIFT_HELP,
	                        added, "type", "ADDED", NULL);
	msd_metrics_counter_add(metrics, MSD_ENGINE_METRICS_DRIFT, MSD_ENGINE_METRICS_DRIFT_HELP,
	                        modified, "type", "MODIFIED", NULL);
	msd_metrics_counter_add(metrics, MSD_ENGINE_METRICS_DRIFT, MSD_ENGINE_METRICS_DRIFT_HELP,
	                        deleted, "type", "DELETED", NULL);
	msd_metrics_counter_add(metrics, "meshsync_reconcile_list_failures_total",
	                        "Resource types a reconcile tick could not list (nothing deleted)",
	                        failed, NULL);
}

void
msd_engine_metrics_bind_handler(MsdMetrics *metrics, MeshSyncHandler *handler)
{
	g_return_if_fail(MSD_IS_METRICS(metrics));
	g_return_if_fail(MESHSYNC_IS_HANDLER(handler));

	msd_metrics_gauge_set_func(metrics, msd_handler_gauges[0],
	                           "Objects held by the informers of the current run",
	                           msd_engine_metrics_objects, handler, NULL, NULL);
	msd_metrics_gauge_set_func(
	        metrics, msd_handler_gauges[1],
	        "Lists started again after a watch expired or broke (cumulative)",
	        msd_engine_metrics_relists, handler, NULL, NULL);
	msd_metrics_gauge_set_func(metrics, msd_handler_gauges[2],
	                           "Watches reopened after they ended (cumulative)",
	                           msd_engine_metrics_restarts, handler, NULL, NULL);
	msd_metrics_gauge_set_func(metrics, msd_handler_gauges[3],
	                           "1 once the current run has its complete initial state",
	                           msd_engine_metrics_ready, handler, NULL, NULL);
	msd_metrics_gauge_set_func(
	        metrics, msd_handler_gauges[4],
	        "Objects left out because they exceed a limit: size, nesting depth, labels "
	        "(cumulative)",
	        msd_engine_metrics_skipped, handler, NULL, NULL);
	g_signal_connect_object(handler, "resource-event", G_CALLBACK(msd_engine_metrics_event_cb),
	                        metrics, 0);
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

	for (guint i = 0; i < G_N_ELEMENTS(msd_handler_gauges); i++)
		msd_metrics_remove(metrics, msd_handler_gauges[i], NULL);
	if (handler != NULL) {
		g_signal_handlers_disconnect_by_func(handler, msd_engine_metrics_event_cb, metrics);
		g_signal_handlers_disconnect_by_func(handler, msd_engine_metrics_ready_cb, metrics);
		g_signal_handlers_disconnect_by_func(handler, msd_engine_metrics_run_failed_cb,
		                                     metrics);
		g_signal_handlers_disconnect_by_func(handler, msd_engine_metrics_reconciled_cb,
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
	msd_metrics_gauge_set_func(metrics, msd_broker_series[1],
	                           "Reconnections to the broker (cumulative)",
	                           msd_engine_metrics_reconnects, broker, NULL, NULL);
	msd_metrics_gauge_set_func(
	        metrics, msd_broker_series[2],
	        "Resource events published on meshery.meshsync.core (cumulative)",
	        msd_engine_metrics_published, writer, NULL, NULL);
	msd_metrics_gauge_set_func(metrics, msd_broker_series[3],
	                           "Resource events too large for the broker, dropped (cumulative)",
	                           msd_engine_metrics_oversize, writer, NULL, NULL);
	msd_metrics_gauge_set_func(metrics, msd_broker_series[4],
	                           "Resource events the broker refused (cumulative)",
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
