/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * One file for one chain: discovery, cluster identity, watch configuration, CRD wait, pipeline
 * and the retries and resyncs around them each hand over to the next with the run's state (the
 * discovery, the cluster id, the gates, the counters); split, each step would need the others'
 * private fields.
 */

#define G_LOG_DOMAIN "MeshSyncEngine"

#include "config.h"

#include "engine/msd-crd-follower.h"
#include "engine/msd-engine-context.h"
#include "engine/msd-infra-tier.h"
#include "engine/msd-reconciler.h"
#include "engine/msd-run-setup.h"
#include "engine/msd-watch-list-follower.h"
#include "meshsync-discovery-private.h"
#include "meshsync-error.h"
#include "meshsync-pipeline-private.h"
#include "meshsync-watch-config-private.h"
#include "pipeline/msd-builtin-stages.h"
#include "util/msd-json-tokens.h"
#include "util/msd-i18n.h"
#include "util/msd-log.h"

#define MSD_RUN_SETUP_RESYNC_DELAY_MS 5000
#define MSD_RUN_SETUP_RETRY_MIN_MS    800
#define MSD_RUN_SETUP_RETRY_MAX_MS    30000
/* How long a run waits for /readyz before it syncs what a server serves all the same */
#define MSD_RUN_SETUP_READY_WAIT_US (120 * G_USEC_PER_SEC)
#define MSD_RUN_SETUP_READY_POLL_MS 1000

#define MSD_CR_PATH "/apis/meshery.io/v1alpha1/namespaces/meshery/meshsyncs/meshery-meshsync"
/* One consistent read answers both questions: kube-system's uid (which cluster is this?) and
 * the list's resourceVersion (how far has it got?). */
#define MSD_IDENTITY_PATH "/api/v1/namespaces?fieldSelector=metadata.name%3Dkube-system"

/* A watch resumed after a break asks whether the cluster is still the same; many resume
 * together after an API server restart, and one answer serves them all. */
#define MSD_RUN_SETUP_IDENTITY_INTERVAL_US (5 * G_USEC_PER_SEC)

struct _MsdRunSetup {
	GObject parent_instance;

	MsdEngineContext *engine; /* (owned) */
	MsdKubeClient *client;    /* (owned) */
	MsdInformerEventFunc event_func;
	gpointer event_data;

	/* the configuration is the engine context's options; this one may change at any time */
	guint resync_delay_ms;

	/* chosen once, kept across runs */
	MeshSyncWatchConfig *watch; /* (owned) (nullable): in force; one object for good, its
	                             * lists changed in place when the MeshSync resource changes */
	gboolean configured;
	gchar *cluster_id;                /* (owned) (nullable): known after the first run */
	MsdCrdFollower *crd_follower;     /* (owned) (nullable): when the MeshSync CR exists */
	MeshSyncWatchConfig *crds_before; /* (owned) (nullable): the configuration before a CRD
	                                   * follower started after the first run, until it has
	                                   * read the CRDs already there */
	MsdWatchListFollower *watch_list_follower; /* (owned) (nullable): the MeshSync resource,
	                                            * followed when its type is served */
	gboolean cr_present;       /* the configuration in force is the MeshSync resource's */
	guint watch_list_changes;  /* changes applied without a resync */
	MsdReconciler *reconciler; /* (owned) (nullable): with a reconcile interval */

	/* the current run */
	GCancellable *cancellable;    /* (owned) (nullable) */
	MeshSyncDiscovery *discovery; /* (owned) (nullable) */
	MsdRun *run;                  /* (owned) (nullable) */
	MeshSyncPipeline *pipeline;   /* (owned) (nullable) */
	MsdInfraTier *infra;          /* (owned) (nullable): the run's tier 3 */
	MsdInfraTierPublishFunc infra_publish;
	gpointer infra_publish_data;
	gboolean waiting_for_crds;
	gboolean ready;
	GPtrArray *last_complete; /* (owned) (nullable) (element-type GBytes): a torn-down
	                           * run's objects, until the next run is complete */
	GPtrArray *torn_down;     /* (owned) (nullable) (element-type MsdInformer): the informers
	                           * of runs torn down since the last complete one, whose objects
	                           * were published and may be gone by the next */
	gint64 run_started_us;
	gint64 not_ready_since_us; /* the first of the /readyz failures in a row, or 0 */
	gdouble initial_sync_seconds;

	gboolean started;
	gboolean stopped;
	GSource *retry_source; /* (owned) (nullable) */
	guint retry_ms;
	GSource *resync_source;   /* (owned) (nullable) */
	MsdInformerCounters past; /* of runs already torn down */

	/* the cluster's identity, checked on every relist and watch reconnect */
	GPtrArray *gated;              /* (owned) (element-type MsdInformer): waiting for a check */
	GCancellable *identity_cancel; /* (owned) (nullable): the check in flight */
	gint64 identity_checked_us;
	guint64 identity_seen_rv; /* the highest resourceVersion informers had when it was sent */
	guint identity_checks;
	GSource *identity_retry_source; /* (owned) (nullable): the check again, while the answer
	                                   could not tell */
	guint identity_retry_ms;
	gboolean identity_waiting; /* said once per wait that the gates stay closed */
	gboolean relisting_all;    /* the gates open by themselves at its end */
};

G_DEFINE_FINAL_TYPE(MsdRunSetup, msd_run_setup, G_TYPE_OBJECT)

enum {
	PROP_0,
	PROP_READY,
	PROP_CLUSTER_ID,
	N_PROPS,
};

static GParamSpec *props[N_PROPS];

enum {
	SIGNAL_PIPELINE_CREATED,
	SIGNAL_RUN_FAILED,
	SIGNAL_RUN_ENDED,
	SIGNAL_RECONCILED,
	SIGNAL_INFORMER_SYNCED,
	N_SIGNALS,
};

static guint signals[N_SIGNALS];

static void msd_run_setup_begin_run(MsdRunSetup *self);
static void msd_run_setup_add_counters(MsdInformerCounters *sum, const MsdInformerCounters *more);

static void
msd_run_setup_collect_object(MsdStoreEntry *entry, gpointer user_data)
{
	g_ptr_array_add(user_data, msd_store_entry_ref(entry));
}

/* The informers of the current run and of its tier-3 runs (transfer container, elements
 * referenced). */
static GPtrArray *
msd_run_setup_dup_informers(MsdRunSetup *self)
{
	GPtrArray *all = g_ptr_array_new_with_free_func(g_object_unref);
	GPtrArray *informers = self->run != NULL ? msd_run_get_informers(self->run) : NULL;

	for (guint i = 0; informers != NULL && i < informers->len; i++)
		g_ptr_array_add(all, g_object_ref(g_ptr_array_index(informers, i)));
	informers = self->infra != NULL ? msd_infra_tier_get_informers(self->infra) : NULL;
	for (guint i = 0; informers != NULL && i < informers->len; i++)
		g_ptr_array_add(all, g_object_ref(g_ptr_array_index(informers, i)));
	return all;
}

static GPtrArray *
msd_run_setup_collect_objects(MsdRunSetup *self)
{
	GPtrArray *objects = g_ptr_array_new_with_free_func((GDestroyNotify)msd_store_entry_unref);
	g_autoptr(GPtrArray) informers = msd_run_setup_dup_informers(self);

	for (guint i = 0; i < informers->len; i++)
		msd_store_foreach(msd_informer_get_store(g_ptr_array_index(informers, i)),
		                  msd_run_setup_collect_object, objects);
	return objects;
}

static void
msd_run_setup_set_ready(MsdRunSetup *self, gboolean ready)
{
	if (self->ready == ready)
		return;
	self->ready = ready;
	if (ready)
		g_clear_pointer(&self->last_complete, g_ptr_array_unref);
	if (self->reconciler != NULL)
		msd_reconciler_set_run(self->reconciler, ready ? self->run : NULL);
	g_object_notify_by_pspec(G_OBJECT(self), props[PROP_READY]);
}

/* Tears the current run down; @next_run: another follows, which answers informer-store from
 * this one's objects until it is complete (at the set-up's stop nothing asks any more). */
static void
msd_run_setup_end_run(MsdRunSetup *self, gboolean next_run)
{
	gboolean had_run = self->run != NULL;

	if (self->cancellable != NULL)
		g_cancellable_cancel(self->cancellable);
	g_clear_object(&self->cancellable);
	if (self->run != NULL) {
		g_autoptr(GPtrArray) informers = msd_run_setup_dup_informers(self);

		/* Until the next run is complete, informer-store is answered from this one, as
		 * upstream answers from its previous stores during a resync. The stored copies
		 * are shared, not copied; they cost memory only as long as both runs hold them. */
		if (self->ready && next_run) {
			g_clear_pointer(&self->last_complete, g_ptr_array_unref);
			self->last_complete = msd_run_setup_collect_objects(self);
		}
		if (self->torn_down == NULL)
			self->torn_down = g_ptr_array_new_with_free_func(g_object_unref);
		for (guint i = 0; i < informers->len; i++) {
			MsdInformerCounters counters;

			msd_informer_get_counters(g_ptr_array_index(informers, i), &counters);
			msd_run_setup_add_counters(&self->past, &counters);
			g_ptr_array_add(self->torn_down,
			                g_object_ref(g_ptr_array_index(informers, i)));
		}
		/* tier 3 stops with its run; what it published is retracted by the next run's
		 * msd_run_setup_retract_vanished() unless its tier 3 lists it again */
		if (self->infra != NULL) {
			MsdInformer *crds = msd_infra_tier_get_crd_informer(self->infra);

			if (crds != NULL) {
				MsdInformerCounters counters;

				msd_informer_get_counters(crds, &counters);
				msd_run_setup_add_counters(&self->past, &counters);
			}
			msd_infra_tier_stop(self->infra);
		}
		msd_run_stop(self->run);
	}
	g_clear_object(&self->infra);
	g_clear_object(&self->run);
	g_clear_object(&self->pipeline);
	g_clear_object(&self->discovery);
	g_ptr_array_set_size(self->gated, 0);
	g_clear_object(&self->identity_cancel);
	msd_source_clear(&self->identity_retry_source);
	self->identity_retry_ms = 0;
	self->identity_waiting = FALSE;
	msd_source_clear(&self->retry_source);
	self->waiting_for_crds = FALSE;
	msd_run_setup_set_ready(self, FALSE);
	if (had_run)
		g_signal_emit(self, signals[SIGNAL_RUN_ENDED], 0);
}

static gboolean
msd_run_setup_retry_cb(gpointer user_data)
{
	MsdRunSetup *self = user_data;

	msd_source_clear(&self->retry_source);
	msd_run_setup_begin_run(self);
	return G_SOURCE_REMOVE;
}

/* A run that could not get going (server unreachable, discovery failed) is tried again with
 * a growing delay; a daemon keeps trying rather than exiting. */
static void
msd_run_setup_retry_later(MsdRunSetup *self, const GError *error)
{
	const MsdEngineOptions *options = msd_engine_context_get_options(self->engine);
	guint retry_min_ms = MSD_RUN_SETUP_RETRY_MIN_MS;
	guint retry_max_ms = MSD_RUN_SETUP_RETRY_MAX_MS;
	guint delay;

	msd_run_setup_end_run(self, TRUE);
	if (options->retry_initial_ms != 0) {
		retry_min_ms = MAX(options->retry_initial_ms, 2);
		retry_max_ms = MAX(options->retry_max_ms, retry_min_ms);
	}
	self->retry_ms = self->retry_ms == 0 ? retry_min_ms : MIN(self->retry_ms * 2, retry_max_ms);
	/* jitter in [d/2, d] so that many instances do not retry in step */
	delay = self->retry_ms / 2 + (guint)g_random_int_range(0, (gint32)(self->retry_ms / 2) + 1);
	msd_log(G_LOG_LEVEL_INFO, NULL, NULL,
	        self->client != NULL ? msd_kube_client_get_server(self->client) : NULL,
	        "%s; retrying in %.1f s", error->message, delay / 1000.0);
	self->retry_source = msd_engine_context_add_timeout(self->engine, G_PRIORITY_DEFAULT, delay,
	                                                    "[meshsync] retry run",
	                                                    msd_run_setup_retry_cb, self, NULL);
	/* last: a handler may stop us */
	g_signal_emit(self, signals[SIGNAL_RUN_FAILED], 0, error);
}

static void
msd_run_setup_log_summary(MsdRunSetup *self)
{
	GPtrArray *informers = msd_run_get_informers(self->run);
	g_autoptr(GString) kinds = g_string_new(NULL);
	guint total = 0;
	guint64 held = 0;
	guint64 json = 0;

	for (guint i = 0; i < informers->len; i++) {
		MsdInformer *informer = g_ptr_array_index(informers, i);
		MsdStore *store = msd_informer_get_store(informer);
		guint size = msd_store_get_size(store);

		total += size;
		held += msd_store_get_bytes_held(store);
		json += msd_store_get_json_bytes(store);
		g_string_append_printf(
		        kinds, "%s%s %u", kinds->len > 0 ? ", " : "",
		        meshsync_api_resource_get_kind(msd_informer_get_resource(informer)), size);
	}
	g_info("initial sync complete: %u objects of %u resource types in %.2f s (%s)", total,
	       informers->len, self->initial_sync_seconds, kinds->str);
	/* what the stores take, for sizing a deployment: with compression on, next to the JSON */
	g_info("stores hold %" G_GUINT64_FORMAT " bytes for %" G_GUINT64_FORMAT
	       " bytes of JSON (store compression %s)",
	       held, json,
	       msd_engine_context_get_options(self->engine)->compress_store ? "zstd" : "none");
}

static gchar *
msd_run_setup_type_key(MsdInformer *informer)
{
	MeshSyncApiResource *resource = msd_informer_get_resource(informer);

	return g_strconcat(meshsync_api_resource_get_group_version(resource), "/",
	                   meshsync_api_resource_get_plural(resource), NULL);
}

/* A run torn down (a resync, a CRD removed, the server lost) published objects that the new
 * run, now complete, may no longer list: deleted while no watch was open, or of a type the
 * server stopped serving (a CRD's objects go with it, and its watch is closed before their
 * DELETED events are sent). The new run starts with empty stores and cannot know of them, so
 * they are retracted here, once each, as the informer that published them; otherwise the
 * consumer would hold them for good. */
static void
msd_run_setup_retract_vanished(MsdRunSetup *self)
{
	g_autoptr(GPtrArray) torn_down = g_steal_pointer(&self->torn_down);
	g_autoptr(GHashTable) stores = NULL;
	g_autoptr(GHashTable) retracted = NULL;
	GPtrArray *informers;
	guint count = 0;

	if (torn_down == NULL || self->run == NULL)
		return;
	stores = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	retracted = g_hash_table_new(g_str_hash, g_str_equal);
	informers = msd_run_get_informers(self->run);
	for (guint i = 0; i < informers->len; i++) {
		MsdInformer *informer = g_ptr_array_index(informers, i);

		g_hash_table_insert(stores, msd_run_setup_type_key(informer),
		                    msd_informer_get_store(informer));
	}
	for (guint i = 0; i < torn_down->len; i++) {
		MsdInformer *informer = g_ptr_array_index(torn_down, i);
		MeshSyncApiResource *resource = msd_informer_get_resource(informer);
		g_autofree gchar *key = msd_run_setup_type_key(informer);
		MsdStore *now = g_hash_table_lookup(stores, key);
		g_autoptr(GPtrArray) held = msd_store_snapshot(msd_informer_get_store(informer));

		for (guint j = 0; j < held->len; j++) {
			MsdStoreEntry *entry = g_ptr_array_index(held, j);
			MsdInformerEvent event = {
			        .type = MESHSYNC_EVENT_TYPE_DELETED,
			        .entry = entry,
			        .doc = NULL,
			        .index = -1,
			        .kind = meshsync_api_resource_get_kind(resource),
			        .api_version = meshsync_api_resource_get_group_version(resource),
			};

			if (now != NULL && msd_store_lookup(now, entry->uid) != NULL)
				continue;
			/* the same object held by two torn-down runs is retracted once */
			if (!g_hash_table_add(retracted, entry->uid))
				continue;
			self->event_func(informer, &event, self->event_data);
			count++;
		}
	}
	if (count > 0)
		g_message("%u objects published by a torn-down run are gone from the server: "
		          "retracted",
		          count);
}

static void
msd_run_setup_pipeline_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MsdRunSetup) self = user_data;
	g_autoptr(GError) error = NULL;

	if (!meshsync_pipeline_run_finish(MESHSYNC_PIPELINE(source), result, &error)) {
		if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ||
		    MESHSYNC_PIPELINE(source) != self->pipeline)
			return;
		g_prefix_error(&error, _("pipeline: "));
		msd_run_setup_retry_later(self, error);
		return;
	}
	if (MESHSYNC_PIPELINE(source) != self->pipeline)
		return;
	self->retry_ms = 0;
	self->initial_sync_seconds =
	        (gdouble)(g_get_monotonic_time() - self->run_started_us) / G_USEC_PER_SEC;
	msd_run_setup_log_summary(self);
	msd_run_setup_retract_vanished(self);
	msd_run_setup_set_ready(self, TRUE);
	/* tier 1 has its initial state: infrastructure detection starts */
	if (self->infra != NULL)
		msd_infra_tier_start(self->infra, self->run);
}

static void msd_run_setup_check_identity(MsdRunSetup *self);

static void
msd_run_setup_open_gates(MsdRunSetup *self)
{
	g_autoptr(GPtrArray) gated = g_steal_pointer(&self->gated);

	self->gated = g_ptr_array_new_with_free_func(g_object_unref);
	for (guint i = 0; gated != NULL && i < gated->len; i++)
		msd_informer_open_gate(g_ptr_array_index(gated, i));
}

/* Another cluster answers at the same URL (every uid new, kube-system's too): everything
 * held is retracted, with the cluster id it was published under, exactly once; then a fresh
 * run lists the new cluster under its own id. */
static void
msd_run_setup_cluster_replaced(MsdRunSetup *self, const gchar *uid)
{
	MsdRun *run = self->run;
	guint retracted = 0;

	g_message("the cluster at %s was replaced (kube-system uid %s, was %s): retracting every "
	          "object and listing again",
	          msd_kube_client_get_server(self->client), uid, self->cluster_id);
	if (run != NULL) {
		g_autoptr(GPtrArray) informers = msd_run_setup_dup_informers(self);

		if (self->infra != NULL)
			msd_infra_tier_stop(self->infra);
		msd_run_stop(run);
		for (guint i = 0; i < informers->len; i++) {
			MsdInformer *informer = g_ptr_array_index(informers, i);
			g_autoptr(GPtrArray) held =
			        msd_store_snapshot(msd_informer_get_store(informer));

			for (guint j = 0; j < held->len; j++) {
				MsdInformerEvent event = {
				        .type = MESHSYNC_EVENT_TYPE_DELETED,
				        .entry = g_ptr_array_index(held, j),
				        .doc = NULL,
				        .index = -1,
				        .kind = meshsync_api_resource_get_kind(
				                msd_informer_get_resource(informer)),
				        .api_version = meshsync_api_resource_get_group_version(
				                msd_informer_get_resource(informer)),
				};

				self->event_func(informer, &event, self->event_data);
				retracted++;
			}
		}
	}
	g_info("%u objects of the replaced cluster retracted", retracted);
	g_free(self->cluster_id);
	self->cluster_id = g_strdup(uid);
	g_object_notify_by_pspec(G_OBJECT(self), props[PROP_CLUSTER_ID]);
	msd_run_setup_end_run(self, FALSE);
	/* what the replaced cluster held was just retracted: nobody may be told it again */
	g_clear_pointer(&self->last_complete, g_ptr_array_unref);
	g_clear_pointer(&self->torn_down, g_ptr_array_unref);
	self->retry_ms = 0;
	msd_run_setup_begin_run(self);
}

static gboolean
msd_run_setup_parse_rv(const gchar *text, guint64 *value)
{
	return text != NULL && g_ascii_string_to_unsigned(text, 10, 0, G_MAXUINT64, value, NULL);
}

static void
msd_run_setup_relist_all(MsdRunSetup *self, MsdInformer *except)
{
	GPtrArray *informers = msd_run_get_informers(self->run);

	/* the gated ones list once their gate opens; the rest are sent through it, and the
	 * check that sent them is the one their gates wait for */
	self->relisting_all = TRUE;
	for (guint i = 0; i < informers->len; i++) {
		MsdInformer *informer = g_ptr_array_index(informers, i);

		if (informer != except)
			msd_informer_relist(informer);
	}
	self->relisting_all = FALSE;
	msd_run_setup_open_gates(self);
}

/* resourceVersions are opaque, but every API server backed by etcd hands out its revision,
 * which only grows: a cluster whose current version is behind one an informer already saw
 * went back in time (restored from a backup without a bump), and a watch resumed there would
 * wait quietly for versions that mean other changes now. Every type is listed again. */
static guint64
msd_run_setup_highest_seen(MsdRunSetup *self)
{
	GPtrArray *informers = msd_run_get_informers(self->run);
	guint64 seen = 0;

	for (guint i = 0; i < informers->len; i++) {
		const gchar *rv =
		        msd_informer_get_resource_version(g_ptr_array_index(informers, i));
		guint64 value;

		if (msd_run_setup_parse_rv(rv, &value))
			seen = MAX(seen, value);
	}
	return seen;
}

static gboolean
msd_run_setup_went_back(MsdRunSetup *self, const gchar *cluster_rv)
{
	guint64 now;

	/* compared with what was seen when the check was sent: events that arrived while it
	 * was in flight may carry versions newer than the answer's */
	if (self->run == NULL || self->identity_seen_rv == 0 ||
	    !msd_run_setup_parse_rv(cluster_rv, &now) || now >= self->identity_seen_rv)
		return FALSE;
	g_message("the cluster at %s is at resourceVersion %s, behind the %" G_GUINT64_FORMAT
	          " already seen: it went back in time (restored?); listing every type again",
	          msd_kube_client_get_server(self->client), cluster_rv, self->identity_seen_rv);
	msd_run_setup_relist_all(self, NULL);
	return TRUE;
}

static gboolean
msd_run_setup_identity_retry_cb(gpointer user_data)
{
	MsdRunSetup *self = user_data;

	msd_source_clear(&self->identity_retry_source);
	msd_run_setup_check_identity(self);
	return G_SOURCE_REMOVE;
}

/* Whether the gates stay closed after a check that named no cluster. A relist that went
 * ahead could land on another cluster before its kube-system exists (a replaced cluster's
 * API server answers seconds before its namespaces controller has made it) and publish that
 * cluster's objects under the old id for good. So, once an id is known, an answer without
 * kube-system, or no answer from a server that is coming back, is asked again until it names
 * a cluster. A server that refuses the question (401, 403) will never answer it: the relists
 * go on without it, as they did before there was an id. */
static gboolean
msd_run_setup_identity_must_wait(MsdRunSetup *self, gboolean answered, const GError *error)
{
	guint delay;

	if (self->cluster_id == NULL || self->cluster_id[0] == '\0')
		return FALSE;
	if (!answered && !g_error_matches(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION) &&
	    !g_error_matches(error, MESHSYNC_ERROR, MESHSYNC_ERROR_TLS) &&
	    !g_error_matches(error, MESHSYNC_ERROR, MESHSYNC_ERROR_TIMED_OUT) &&
	    !g_error_matches(error, MESHSYNC_ERROR, MESHSYNC_ERROR_HTTP))
		return FALSE;
	if (!self->identity_waiting)
		g_message("the cluster at %s %s%s: relists wait until it names itself (kube-system "
		          "uid, was %s), so that a replaced cluster is not taken for this one",
		          msd_kube_client_get_server(self->client),
		          answered ? "has no namespace kube-system"
		                   : "cannot say which cluster it is: ",
		          answered ? "" : error->message, self->cluster_id);
	self->identity_waiting = TRUE;
	msd_source_clear(&self->identity_retry_source);
	self->identity_retry_ms =
	        self->identity_retry_ms == 0 ? 250 : MIN(self->identity_retry_ms * 2, 5000);
	delay = self->identity_retry_ms / 2 +
	        (guint)g_random_int_range(0, (gint32)(self->identity_retry_ms / 2) + 1);
	self->identity_retry_source = msd_engine_context_add_timeout(
	        self->engine, G_PRIORITY_DEFAULT, delay, "[meshsync] check cluster identity",
	        msd_run_setup_identity_retry_cb, self, NULL);
	return TRUE;
}

static void
msd_run_setup_identity_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MsdRunSetup) self = user_data;
	g_autoptr(GError) error = NULL;
	g_autoptr(GBytes) body =
	        msd_kube_client_get_finish(MSD_KUBE_CLIENT(source), result, &error);
	g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;
	g_autofree gchar *uid = NULL;
	g_autofree gchar *cluster_rv = NULL;

	if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
		return;
	g_clear_object(&self->identity_cancel);
	self->identity_checks++;
	if (body != NULL) {
		gsize length = 0;
		const gchar *data = g_bytes_get_data(body, &length);

		if (msd_json_tokens_parse(&tokens, data, length, NULL)) {
			gint items = msd_json_tokens_member(&tokens, 0, "items");

			cluster_rv = msd_json_tokens_dup_string(
			        &tokens, msd_json_tokens_path(&tokens, 0, "metadata",
			                                      "resourceVersion", NULL));
			if (msd_json_tokens_size(&tokens, items) == 1)
				uid = msd_json_tokens_dup_string(
				        &tokens, msd_json_tokens_path(&tokens, items + 1,
				                                      "metadata", "uid", NULL));
		}
	}
	if (uid != NULL && self->cluster_id != NULL && self->cluster_id[0] != '\0' &&
	    g_strcmp0(uid, self->cluster_id) != 0) {
		msd_run_setup_cluster_replaced(self, uid);
		return;
	}
	if (uid == NULL && msd_run_setup_identity_must_wait(self, body != NULL, error))
		return;
	if (uid == NULL)
		g_debug("cluster identity not checked: %s",
		        error != NULL ? error->message : "kube-system has no metadata.uid");
	if (self->identity_waiting)
		g_message("the cluster at %s answers as itself again (kube-system uid %s): "
		          "listing again",
		          msd_kube_client_get_server(self->client), uid != NULL ? uid : "unknown");
	self->identity_waiting = FALSE;
	self->identity_retry_ms = 0;
	if (msd_run_setup_went_back(self, cluster_rv))
		return;
	msd_run_setup_open_gates(self);
}

static void
msd_run_setup_check_identity(MsdRunSetup *self)
{
	if (self->identity_cancel != NULL || self->cancellable == NULL)
		return;
	self->identity_checked_us = g_get_monotonic_time();
	self->identity_seen_rv = self->run != NULL ? msd_run_setup_highest_seen(self) : 0;
	self->identity_cancel = g_object_ref(self->cancellable);
	msd_kube_client_get_async(self->client, MSD_IDENTITY_PATH, self->identity_cancel,
	                          msd_run_setup_identity_cb, g_object_ref(self));
}

static void
msd_run_setup_gate_cb(MsdInformer *informer, gpointer user_data)
{
	MsdRunSetup *self = user_data;

	g_ptr_array_add(self->gated, g_object_ref(informer));
	if (!self->relisting_all)
		msd_run_setup_check_identity(self);
}

static void
msd_run_setup_watch_reopened_cb(MsdInformer *informer, MsdRunSetup *self)
{
	if (g_get_monotonic_time() - self->identity_checked_us < MSD_RUN_SETUP_IDENTITY_INTERVAL_US)
		return;
	msd_run_setup_check_identity(self);
}

/* A relist that lands before where its type was: the cluster went back in time (see
 * msd_run_setup_went_back()), and the other types must be listed again too. */
static void
msd_run_setup_listed_cb(MsdInformer *informer,
                        const gchar *previous,
                        const gchar *current,
                        MsdRunSetup *self)
{
	guint64 before;
	guint64 now;

	if (self->run == NULL || !msd_run_setup_parse_rv(previous, &before) ||
	    !msd_run_setup_parse_rv(current, &now) || now >= before)
		return;
	g_message("%s listed at resourceVersion %s, before the %s it had reached: the cluster "
	          "went back in time (restored?); listing every type again",
	          msd_informer_get_name(informer), current, previous);
	msd_run_setup_relist_all(self, informer);
}

static void
msd_run_setup_informer_synced_cb(MsdInformer *informer, MsdRunSetup *self)
{
	g_signal_emit(self, signals[SIGNAL_INFORMER_SYNCED], 0, informer);
}

static void
msd_run_setup_informer_added(MsdRun *run, MsdInformer *informer, gpointer user_data)
{
	MsdRunSetup *self = user_data;

	g_signal_connect_object(informer, "synced", G_CALLBACK(msd_run_setup_informer_synced_cb),
	                        self, 0);
	msd_informer_set_gate_func(informer, msd_run_setup_gate_cb, self);
	g_signal_connect_object(informer, "listed", G_CALLBACK(msd_run_setup_listed_cb), self, 0);
	g_signal_connect_object(informer, "watch-reopened",
	                        G_CALLBACK(msd_run_setup_watch_reopened_cb), self, 0);
}

/* Every event of the tier-1 run: seen by the infrastructure detector, then the consumer. */
static void
msd_run_setup_event_cb(MsdInformer *informer, const MsdInformerEvent *event, gpointer user_data)
{
	MsdRunSetup *self = user_data;

	if (self->infra != NULL)
		msd_infra_tier_handle_event(self->infra, event);
	self->event_func(informer, event, self->event_data);
}

static void
msd_run_setup_build_pipeline(MsdRunSetup *self)
{
	g_autoptr(MeshSyncStage) global = msd_register_stage_new(MESHSYNC_WATCH_STAGE_GLOBAL);
	g_autoptr(MeshSyncStage) local = msd_register_stage_new(MESHSYNC_WATCH_STAGE_LOCAL);
	g_autoptr(MeshSyncStage) start = msd_start_informers_stage_new();
	g_autoptr(MeshSyncPipeline) pipeline = meshsync_pipeline_new();
	const MsdEngineOptions *options = msd_engine_context_get_options(self->engine);
	const gchar *const *enabled;
	const gchar *const *disabled;

	self->run = msd_run_new(self->engine, self->client, self->discovery, self->watch,
	                        msd_run_setup_event_cb, self);
	/* EnabledInfra and DisabledInfra from the tier-config; an empty EnabledInfra is fd1's
	 * default, every known infrastructure */
	enabled = meshsync_watch_config_get_enabled_infra(self->watch);
	disabled = meshsync_watch_config_get_disabled_infra(self->watch);
	self->infra = msd_infra_tier_new(self->engine, self->client, self->discovery, self->watch,
	                                 enabled, disabled, self->event_func, self->event_data);
	msd_infra_tier_set_publish_func(self->infra, self->infra_publish, self->infra_publish_data);
	msd_infra_tier_set_cluster_id(self->infra, self->cluster_id);
	if (self->crd_follower != NULL)
		msd_infra_tier_set_crd_source(self->infra,
		                              msd_crd_follower_get_informer(self->crd_follower));
	msd_run_set_informer_func(self->run, msd_run_setup_informer_added, self);
	msd_run_set_namespaces(self->run, (const gchar *const *)options->namespaces);
	msd_run_set_shard(self->run, options->shard_index, options->shard_total);
	self->pipeline = g_object_ref(pipeline);
	meshsync_pipeline_set_run(pipeline, self->run);
	meshsync_pipeline_add_stage(pipeline, global);
	meshsync_pipeline_add_stage(pipeline, local);
	meshsync_pipeline_add_stage(pipeline, start);
	g_signal_emit(self, signals[SIGNAL_PIPELINE_CREATED], 0, pipeline);
	/* a handler of the signal may have stopped us or ended the run */
	if (self->stopped || self->pipeline != pipeline)
		return;
	meshsync_pipeline_run_async(pipeline, self->cancellable, msd_run_setup_pipeline_cb,
	                            g_object_ref(self));
}

/* A type that left the watch list: its informers stop and go with the run's stores, so the
 * store answers, the object count and the watched types no longer have it; what it published
 * is not retracted (the objects still exist). Their counters stay in the totals. */
static void
msd_run_setup_drop_type(MsdRunSetup *self, const gchar *name)
{
	g_autoptr(GPtrArray) removed = msd_run_remove_type(self->run, name);

	for (guint i = 0; i < removed->len; i++) {
		MsdInformer *informer = g_ptr_array_index(removed, i);
		MsdInformerCounters counters;

		msd_informer_get_counters(informer, &counters);
		msd_run_setup_add_counters(&self->past, &counters);
		g_ptr_array_remove(self->gated, informer);
		if (self->reconciler != NULL)
			msd_reconciler_forget_informer(self->reconciler, informer);
	}
}

static void
msd_run_setup_append_name(GString *list, const gchar *name)
{
	g_string_append_printf(list, "%s%s", list->len > 0 ? ", " : "", name);
}

/* Applies to the current run what changed in the configuration since @before, type by type:
 * no new discovery, and the types that did not change keep their informers and stores. */
static void
msd_run_setup_apply_watch_changes(MsdRunSetup *self, MeshSyncWatchConfig *before)
{
	g_autoptr(GPtrArray) changes = meshsync_watch_config_diff(before, self->watch);
	g_autoptr(GString) added = g_string_new(NULL);
	g_autoptr(GString) removed = g_string_new(NULL);
	g_autoptr(GString) replaced = g_string_new(NULL);
	g_autoptr(GString) events = g_string_new(NULL);

	if (changes->len == 0) {
		g_debug("watch configuration rewritten without a change to any type");
		return;
	}
	for (guint i = 0; i < changes->len; i++) {
		MeshSyncWatchChange *change = g_ptr_array_index(changes, i);

		switch (change->kind) {
		case MESHSYNC_WATCH_CHANGE_ADDED:
			if (self->run != NULL)
				msd_run_add_type(self->run, change->name);
			msd_run_setup_append_name(added, change->name);
			break;
		case MESHSYNC_WATCH_CHANGE_REMOVED:
			if (self->run != NULL)
				msd_run_setup_drop_type(self, change->name);
			msd_run_setup_append_name(removed, change->name);
			break;
		case MESHSYNC_WATCH_CHANGE_REPLACED:
			if (self->run != NULL) {
				msd_run_setup_drop_type(self, change->name);
				msd_run_add_type(self->run, change->name);
			}
			msd_run_setup_append_name(replaced, change->name);
			break;
		case MESHSYNC_WATCH_CHANGE_EVENTS:
			/* the handler reads the events from the configuration, changed in place */
			msd_run_setup_append_name(events, change->name);
			break;
		case MESHSYNC_WATCH_CHANGE_NONE:
		default:
			break;
		}
	}
	self->watch_list_changes++;
	if (self->infra != NULL && self->run != NULL)
		msd_infra_tier_tier1_changed(self->infra, self->run);
	g_info("watch list changed, applied without a resync: added [%s], removed [%s], "
	       "informer replaced [%s], events changed [%s]",
	       added->str, removed->str, replaced->str, events->str);
}

/* EnabledInfra and DisabledInfra of the tier-config, changed in a live watch list: the
 * detection takes them at once (an empty EnabledInfra is fd1's default, everything). */
static void
msd_run_setup_apply_infra_policy(MsdRunSetup *self, MeshSyncWatchConfig *before)
{
	const gchar *const *enabled = meshsync_watch_config_get_enabled_infra(self->watch);
	const gchar *const *disabled = meshsync_watch_config_get_disabled_infra(self->watch);

	if (g_strv_equal(enabled, meshsync_watch_config_get_enabled_infra(before)) &&
	    g_strv_equal(disabled, meshsync_watch_config_get_disabled_infra(before)))
		return;
	g_info("tier-config changed EnabledInfra or DisabledInfra: infrastructure detection "
	       "applies it without a resync");
	if (self->infra != NULL)
		msd_infra_tier_set_policy(self->infra, enabled, disabled);
}

static void msd_run_setup_follow_crds(MsdRunSetup *self);

/* The MeshSync resource appeared, went or got another watch list. Going is the same as
 * being absent at start: the default configuration, and no CRDs followed. */
static void
msd_run_setup_watch_list_changed_cb(MsdWatchListFollower *follower, MsdRunSetup *self)
{
	gboolean present = msd_watch_list_follower_get_present(follower);
	g_autoptr(MeshSyncWatchConfig) target = msd_watch_list_follower_dup_config(follower);
	g_autoptr(MeshSyncWatchConfig) before = NULL;

	/* until the first configuration is chosen, the read that chooses it is at least as new */
	if (!self->configured || self->watch == NULL)
		return;
	if (target == NULL)
		target = meshsync_watch_config_new_default();
	g_info("MeshSync resource meshery/meshery-meshsync %s",
	       !present           ? "deleted: back to the default watch configuration"
	       : self->cr_present ? "changed its watch list"
	                          : "created: its watch list replaces the default");
	before = meshsync_watch_config_copy(self->watch);
	meshsync_watch_config_replace_entries(self->watch, target, present && self->cr_present);
	if (!present && self->crd_follower != NULL) {
		if (self->infra != NULL)
			msd_infra_tier_set_crd_source(self->infra, NULL);
		msd_crd_follower_set_tap(self->crd_follower, NULL, NULL);
		g_signal_handlers_disconnect_by_data(self->crd_follower, self);
		msd_crd_follower_stop(self->crd_follower);
		g_clear_object(&self->crd_follower);
		g_clear_object(&self->crds_before);
		self->waiting_for_crds = FALSE;
	}
	self->cr_present = present;
	msd_run_setup_apply_watch_changes(self, before);
	msd_run_setup_apply_infra_policy(self, before);
	if (present && self->crd_follower == NULL && self->discovery != NULL) {
		/* the CRDs already there join when the follower has read them */
		self->crds_before = meshsync_watch_config_copy(self->watch);
		msd_run_setup_follow_crds(self);
	}
}

static void
msd_run_setup_follow_watch_list(MsdRunSetup *self)
{
	MeshSyncApiResource *meshsyncs;

	if (self->watch_list_follower != NULL)
		return;
	meshsyncs =
	        meshsync_discovery_lookup(self->discovery, "meshery.io", "v1alpha1", "meshsyncs");
	if (meshsyncs == NULL || !meshsync_api_resource_get_watchable(meshsyncs)) {
		g_debug("the server serves no meshsyncs.v1alpha1.meshery.io: nothing to follow");
		return;
	}
	self->watch_list_follower =
	        msd_watch_list_follower_new(self->engine, self->client, meshsyncs);
	g_signal_connect(self->watch_list_follower, "changed",
	                 G_CALLBACK(msd_run_setup_watch_list_changed_cb), self);
	msd_watch_list_follower_start(self->watch_list_follower);
}

static void
msd_run_setup_crds_synced_cb(MsdCrdFollower *follower, MsdRunSetup *self)
{
	g_autoptr(MeshSyncWatchConfig) before = g_steal_pointer(&self->crds_before);

	if (self->waiting_for_crds) {
		self->waiting_for_crds = FALSE;
		msd_run_setup_build_pipeline(self);
	} else if (before != NULL) {
		msd_run_setup_apply_watch_changes(self, before);
	}
}

static void
msd_run_setup_crds_changed_cb(MsdCrdFollower *follower, MsdRunSetup *self)
{
	msd_run_setup_request_resync(self);
}

static void
msd_run_setup_crd_tap_cb(MsdInformer *informer, const MsdInformerEvent *event, gpointer user_data)
{
	MsdRunSetup *self = user_data;

	if (self->infra != NULL)
		msd_infra_tier_handle_event(self->infra, event);
}

static void
msd_run_setup_follow_crds(MsdRunSetup *self)
{
	MeshSyncApiResource *crds = meshsync_discovery_lookup(
	        self->discovery, "apiextensions.k8s.io", NULL, "customresourcedefinitions");

	if (crds == NULL) {
		g_warning("the MeshSync resource exists but the server serves no "
		          "customresourcedefinitions: custom resources are not followed");
		return;
	}
	self->crd_follower = msd_crd_follower_new(self->engine, self->client, crds, self->watch);
	/* the infrastructure detection reads the CRDs from here, not from a second watch */
	msd_crd_follower_set_tap(self->crd_follower, msd_run_setup_crd_tap_cb, self);
	if (self->infra != NULL)
		msd_infra_tier_set_crd_source(self->infra,
		                              msd_crd_follower_get_informer(self->crd_follower));
	g_signal_connect(self->crd_follower, "synced", G_CALLBACK(msd_run_setup_crds_synced_cb),
	                 self);
	g_signal_connect(self->crd_follower, "changed", G_CALLBACK(msd_run_setup_crds_changed_cb),
	                 self);
	msd_crd_follower_start(self->crd_follower);
}

static void
msd_run_setup_configured(MsdRunSetup *self)
{
	if (!self->configured) {
		const MsdEngineOptions *options = msd_engine_context_get_options(self->engine);

		self->configured = TRUE;
		meshsync_watch_config_set_output_resources(
		        self->watch, (const gchar *const *)options->output_resources);
		meshsync_watch_config_set_output_namespaces(
		        self->watch, (const gchar *const *)options->output_namespaces);
		/* the resource came or went between the follower's list and the read that chose
		 * the configuration: the follower has the newer answer */
		if (self->watch_list_follower != NULL &&
		    msd_watch_list_follower_get_synced(self->watch_list_follower) &&
		    msd_watch_list_follower_get_present(self->watch_list_follower) !=
		            self->cr_present)
			msd_run_setup_watch_list_changed_cb(self->watch_list_follower, self);
	}
	if (self->crd_follower != NULL && !msd_crd_follower_get_synced(self->crd_follower)) {
		self->waiting_for_crds = TRUE;
		return;
	}
	msd_run_setup_build_pipeline(self);
}

static void
msd_run_setup_cr_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MsdRunSetup) self = user_data;
	g_autoptr(GError) error = NULL;
	g_autoptr(GBytes) body =
	        msd_kube_client_get_finish(MSD_KUBE_CLIENT(source), result, &error);

	if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
		return;
	if (body != NULL) {
		gsize length = 0;
		const gchar *data = g_bytes_get_data(body, &length);

		self->watch = meshsync_watch_config_new_from_resource(data, (gssize)length, &error);
		if (self->watch == NULL) {
			g_warning("%s; watching upstream's whole built-in table instead",
			          error->message);
			self->watch = meshsync_watch_config_new_builtin_table();
		} else {
			g_info("watch configuration from the MeshSync resource "
			       "meshery/meshery-meshsync");
		}
		self->cr_present = TRUE;
		msd_run_setup_follow_crds(self);
	} else {
		if (!g_error_matches(error, MESHSYNC_ERROR, MESHSYNC_ERROR_NOT_FOUND))
			g_message("cannot read the MeshSync resource (%s): using the default watch "
			          "configuration",
			          error->message);
		else
			g_info("no MeshSync resource: using the default watch configuration");
		self->watch = meshsync_watch_config_new_default();
	}
	msd_run_setup_configured(self);
}

static void
msd_run_setup_choose_watch_config(MsdRunSetup *self)
{
	if (msd_engine_context_get_options(self->engine)->watch == NULL)
		msd_run_setup_follow_watch_list(self);
	if (self->watch != NULL) {
		/* the resource appeared while no discovery could resolve the CRDs' type */
		if (self->cr_present && self->crd_follower == NULL)
			msd_run_setup_follow_crds(self);
		msd_run_setup_configured(self);
		return;
	}
	if (msd_engine_context_get_options(self->engine)->watch != NULL) {
		self->watch = g_object_ref(msd_engine_context_get_options(self->engine)->watch);
		msd_run_setup_configured(self);
		return;
	}
	msd_kube_client_get_async(self->client, MSD_CR_PATH, self->cancellable, msd_run_setup_cr_cb,
	                          g_object_ref(self));
}

static void
msd_run_setup_cluster_id_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MsdRunSetup) self = user_data;
	g_autoptr(GError) error = NULL;
	g_autoptr(GBytes) body =
	        msd_kube_client_get_finish(MSD_KUBE_CLIENT(source), result, &error);
	g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;

	if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
		return;
	if (body != NULL) {
		gsize length = 0;
		const gchar *data = g_bytes_get_data(body, &length);

		if (msd_json_tokens_parse(&tokens, data, length, &error))
			self->cluster_id = msd_json_tokens_dup_string(
			        &tokens, msd_json_tokens_path(&tokens, 0, "metadata", "uid", NULL));
	}
	if (self->cluster_id == NULL) {
		/* upstream publishes an empty cluster_id in this case too */
		g_message("cannot read the uid of namespace kube-system (%s): cluster_id will be "
		          "empty",
		          error != NULL ? error->message : "no metadata.uid");
		self->cluster_id = g_strdup("");
	}
	g_object_notify_by_pspec(G_OBJECT(self), props[PROP_CLUSTER_ID]);
	msd_run_setup_choose_watch_config(self);
}

static void
msd_run_setup_discovery_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MsdRunSetup) self = user_data;
	g_autoptr(GError) error = NULL;
	MeshSyncDiscovery *discovery = MESHSYNC_DISCOVERY(source);

	if (!meshsync_discovery_run_finish(discovery, result, &error)) {
		if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ||
		    discovery != self->discovery)
			return;
		g_prefix_error(&error, _("discovery failed: "));
		msd_run_setup_retry_later(self, error);
		return;
	}
	if (discovery != self->discovery)
		return;
	g_info("discovered %u resource types on Kubernetes %s at %s",
	       meshsync_discovery_get_resources(discovery)->len,
	       meshsync_discovery_get_server_version(discovery),
	       msd_kube_client_get_server(self->client));
	if (self->cluster_id == NULL) {
		msd_kube_client_get_async(self->client, "/api/v1/namespaces/kube-system",
		                          self->cancellable, msd_run_setup_cluster_id_cb,
		                          g_object_ref(self));
		return;
	}
	msd_run_setup_choose_watch_config(self);
}

/* Whether an answer of /readyz says the server is still starting (or stopping): a 5xx or a
 * 429. Anything else (401, 403, 404: the endpoint hidden or absent; a connection or TLS
 * failure, which discovery reports in its own words) leaves the question to discovery. */
static gboolean
msd_run_setup_not_ready(const GError *error)
{
	guint status = msd_kube_client_error_get_status(error);

	return status >= 500 || status == 429;
}

static void msd_run_setup_check_readiness(MsdRunSetup *self);

static gboolean
msd_run_setup_readiness_retry_cb(gpointer user_data)
{
	MsdRunSetup *self = user_data;

	msd_source_clear(&self->retry_source);
	msd_run_setup_check_readiness(self);
	return G_SOURCE_REMOVE;
}

static void
msd_run_setup_readiness_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MsdRunSetup) self = user_data;
	g_autoptr(GError) error = NULL;
	g_autoptr(GBytes) body =
	        msd_kube_client_get_finish(MSD_KUBE_CLIENT(source), result, &error);
	gint64 now = g_get_monotonic_time();
	const gchar *server = msd_kube_client_get_server(self->client);

	if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
		return;
	if (body == NULL && msd_run_setup_not_ready(error)) {
		if (self->not_ready_since_us == 0) {
			self->not_ready_since_us = now;
			g_message("the API server at %s is not ready yet (%s): waiting for it",
			          server, error->message);
		}
		if (now - self->not_ready_since_us < MSD_RUN_SETUP_READY_WAIT_US) {
			/* a starting server gets ready within seconds: asked every second, not on
			 * the growing delay of a server that cannot be reached */
			self->retry_source = msd_engine_context_add_timeout(
			        self->engine, G_PRIORITY_DEFAULT, MSD_RUN_SETUP_READY_POLL_MS,
			        "[meshsync] API server readiness", msd_run_setup_readiness_retry_cb,
			        self, NULL);
			return;
		}
		/* a check that never passes (a broken webhook's, an etcd member's) must not keep
		 * the cluster out of sight for good */
		g_message("the API server at %s still says it is not ready after %" G_GINT64_FORMAT
		          " s (%s): syncing what it serves",
		          server, (now - self->not_ready_since_us) / G_USEC_PER_SEC,
		          error->message);
	} else if (self->not_ready_since_us != 0) {
		g_info("the API server at %s is ready after %.1f s", server,
		       (gdouble)(now - self->not_ready_since_us) / G_USEC_PER_SEC);
	}
	self->not_ready_since_us = 0;
	self->discovery = meshsync_discovery_new_for_client(self->client);
	meshsync_discovery_run_async(self->discovery, self->cancellable, msd_run_setup_discovery_cb,
	                             g_object_ref(self));
}

static void
msd_run_setup_check_readiness(MsdRunSetup *self)
{
	msd_kube_client_get_async(self->client, "/readyz", self->cancellable,
	                          msd_run_setup_readiness_cb, g_object_ref(self));
}

/* A server that is still starting answers before all its APIs are installed: its discovery
 * lacks whole groups (RBAC, storage, networking) until its post-start hooks are done, and the
 * types it lacks would be skipped for the whole run. So a run begins once /readyz says so. */
static void
msd_run_setup_begin_run(MsdRunSetup *self)
{
	self->cancellable = g_cancellable_new();
	self->run_started_us = g_get_monotonic_time();
	msd_run_setup_check_readiness(self);
}

static gboolean
msd_run_setup_resync_cb(gpointer user_data)
{
	MsdRunSetup *self = user_data;

	msd_source_clear(&self->resync_source);
	g_info("resync: tearing the run down and listing again");
	msd_run_setup_end_run(self, TRUE);
	self->retry_ms = 0;
	msd_run_setup_begin_run(self);
	return G_SOURCE_REMOVE;
}

static void
msd_run_setup_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
	MsdRunSetup *self = MSD_RUN_SETUP(object);

	switch (prop_id) {
	case PROP_READY:
		g_value_set_boolean(value, self->ready);
		break;
	case PROP_CLUSTER_ID:
		g_value_set_string(value, self->cluster_id);
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
	}
}

static void
msd_run_setup_dispose(GObject *object)
{
	MsdRunSetup *self = MSD_RUN_SETUP(object);

	msd_run_setup_stop(self);
	G_OBJECT_CLASS(msd_run_setup_parent_class)->dispose(object);
}

static void
msd_run_setup_finalize(GObject *object)
{
	MsdRunSetup *self = MSD_RUN_SETUP(object);

	g_clear_object(&self->client);
	g_clear_object(&self->engine);
	g_clear_object(&self->watch);
	g_free(self->cluster_id);
	g_clear_pointer(&self->last_complete, g_ptr_array_unref);
	g_clear_pointer(&self->torn_down, g_ptr_array_unref);
	g_ptr_array_unref(self->gated);
	G_OBJECT_CLASS(msd_run_setup_parent_class)->finalize(object);
}

static void
msd_run_setup_class_init(MsdRunSetupClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->get_property = msd_run_setup_get_property;
	object_class->dispose = msd_run_setup_dispose;
	object_class->finalize = msd_run_setup_finalize;

	props[PROP_READY] = g_param_spec_boolean("ready", NULL, NULL, FALSE,
	                                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS |
	                                                 G_PARAM_EXPLICIT_NOTIFY);
	props[PROP_CLUSTER_ID] = g_param_spec_string("cluster-id", NULL, NULL, NULL,
	                                             G_PARAM_READABLE | G_PARAM_STATIC_STRINGS |
	                                                     G_PARAM_EXPLICIT_NOTIFY);
	g_object_class_install_properties(object_class, N_PROPS, props);

	signals[SIGNAL_PIPELINE_CREATED] =
	        g_signal_new("pipeline-created", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
	                     NULL, NULL, NULL, G_TYPE_NONE, 1, MESHSYNC_TYPE_PIPELINE);
	signals[SIGNAL_RUN_FAILED] =
	        g_signal_new("run-failed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
	                     NULL, NULL, G_TYPE_NONE, 1, G_TYPE_ERROR);
	signals[SIGNAL_RUN_ENDED] =
	        g_signal_new("run-ended", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
	                     NULL, NULL, G_TYPE_NONE, 0);
	/* A reconcile tick ended: (added, modified, deleted, listed, failed types). */
	signals[SIGNAL_RECONCILED] = g_signal_new(
	        "reconciled", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
	        G_TYPE_NONE, 5, G_TYPE_UINT, G_TYPE_UINT, G_TYPE_UINT, G_TYPE_UINT, G_TYPE_UINT);
	signals[SIGNAL_INFORMER_SYNCED] =
	        g_signal_new("informer-synced", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
	                     NULL, NULL, NULL, G_TYPE_NONE, 1, MSD_TYPE_INFORMER);
}

static void
msd_run_setup_tick_done_cb(MsdReconciler *reconciler,
                           guint added,
                           guint modified,
                           guint deleted,
                           guint listed,
                           guint failed,
                           MsdRunSetup *self)
{
	g_signal_emit(self, signals[SIGNAL_RECONCILED], 0, added, modified, deleted, listed,
	              failed);
}

static void
msd_run_setup_init(MsdRunSetup *self)
{
	self->resync_delay_ms = MSD_RUN_SETUP_RESYNC_DELAY_MS;
	self->gated = g_ptr_array_new_with_free_func(g_object_unref);
}

MsdRunSetup *
msd_run_setup_new(MsdEngineContext *engine,
                  MsdKubeClient *client,
                  MsdInformerEventFunc event_func,
                  gpointer event_data)
{
	MsdRunSetup *self;

	g_return_val_if_fail(MSD_IS_ENGINE_CONTEXT(engine), NULL);
	g_return_val_if_fail(MSD_IS_KUBE_CLIENT(client), NULL);

	self = g_object_new(MSD_TYPE_RUN_SETUP, NULL);
	self->engine = g_object_ref(engine);
	self->client = g_object_ref(client);
	self->event_func = event_func;
	self->event_data = event_data;
	return self;
}

void
msd_run_setup_set_resync_delay(MsdRunSetup *self, guint milliseconds)
{
	g_return_if_fail(MSD_IS_RUN_SETUP(self));
	self->resync_delay_ms = milliseconds;
}

void
msd_run_setup_start(MsdRunSetup *self)
{
	const MsdEngineOptions *options;

	g_return_if_fail(MSD_IS_RUN_SETUP(self));
	g_return_if_fail(!self->started);

	options = msd_engine_context_get_options(self->engine);
	self->started = TRUE;
	if (options->reconcile_interval_ms > 0) {
		self->reconciler = msd_reconciler_new(self->engine, options->reconcile_interval_ms);
		g_signal_connect(self->reconciler, "tick-done",
		                 G_CALLBACK(msd_run_setup_tick_done_cb), self);
	}
	msd_run_setup_begin_run(self);
}

void
msd_run_setup_stop(MsdRunSetup *self)
{
	g_return_if_fail(MSD_IS_RUN_SETUP(self));

	if (!self->started || self->stopped)
		return;
	self->stopped = TRUE;
	msd_source_clear(&self->resync_source);
	if (self->reconciler != NULL) {
		g_signal_handlers_disconnect_by_data(self->reconciler, self);
		msd_reconciler_stop(self->reconciler);
	}
	g_clear_object(&self->reconciler);
	msd_run_setup_end_run(self, FALSE);
	g_clear_pointer(&self->last_complete, g_ptr_array_unref);
	g_clear_pointer(&self->torn_down, g_ptr_array_unref);
	if (self->crd_follower != NULL) {
		msd_crd_follower_set_tap(self->crd_follower, NULL, NULL);
		g_signal_handlers_disconnect_by_data(self->crd_follower, self);
		msd_crd_follower_stop(self->crd_follower);
	}
	g_clear_object(&self->crd_follower);
	g_clear_object(&self->crds_before);
	if (self->watch_list_follower != NULL) {
		g_signal_handlers_disconnect_by_data(self->watch_list_follower, self);
		msd_watch_list_follower_stop(self->watch_list_follower);
	}
	g_clear_object(&self->watch_list_follower);
}

void
msd_run_setup_request_resync(MsdRunSetup *self)
{
	g_return_if_fail(MSD_IS_RUN_SETUP(self));

	if (!self->started || self->stopped)
		return;
	/* each request re-arms one timer: a burst of them costs one resync */
	msd_source_clear(&self->resync_source);
	self->resync_source = msd_engine_context_add_timeout(
	        self->engine, G_PRIORITY_DEFAULT, self->resync_delay_ms, "[meshsync] resync",
	        msd_run_setup_resync_cb, self, NULL);
}

MsdRun *
msd_run_setup_get_run(MsdRunSetup *self)
{
	g_return_val_if_fail(MSD_IS_RUN_SETUP(self), NULL);
	return self->run;
}

MeshSyncDiscovery *
msd_run_setup_get_discovery(MsdRunSetup *self)
{
	g_return_val_if_fail(MSD_IS_RUN_SETUP(self), NULL);
	return self->discovery;
}

MeshSyncWatchConfig *
msd_run_setup_get_watch_config(MsdRunSetup *self)
{
	g_return_val_if_fail(MSD_IS_RUN_SETUP(self), NULL);
	return self->watch;
}

const gchar *
msd_run_setup_get_cluster_id(MsdRunSetup *self)
{
	g_return_val_if_fail(MSD_IS_RUN_SETUP(self), NULL);
	return self->cluster_id;
}

gboolean
msd_run_setup_get_ready(MsdRunSetup *self)
{
	g_return_val_if_fail(MSD_IS_RUN_SETUP(self), FALSE);
	return self->ready;
}

gdouble
msd_run_setup_get_initial_sync_seconds(MsdRunSetup *self)
{
	g_return_val_if_fail(MSD_IS_RUN_SETUP(self), 0);
	return self->initial_sync_seconds;
}

static void
msd_run_setup_add_counters(MsdInformerCounters *sum, const MsdInformerCounters *more)
{
	sum->relists += more->relists;
	sum->watch_restarts += more->watch_restarts;
	sum->watch_silences += more->watch_silences;
	sum->events += more->events;
	sum->errors += more->errors;
	sum->skipped += more->skipped;
	sum->stream_bytes += more->stream_bytes;
	sum->copied += more->copied;
	sum->unchanged += more->unchanged;
}

void
msd_run_setup_get_counters(MsdRunSetup *self, MsdInformerCounters *counters)
{
	g_return_if_fail(MSD_IS_RUN_SETUP(self));
	g_return_if_fail(counters != NULL);

	*counters = self->past;
	counters->identity_checks = self->identity_checks;
	counters->watch_list_changes = self->watch_list_changes;
	if (self->run != NULL) {
		g_autoptr(GPtrArray) informers = msd_run_setup_dup_informers(self);
		MsdInformer *crds =
		        self->infra != NULL ? msd_infra_tier_get_crd_informer(self->infra) : NULL;

		/* the detection's own CRD watch is a watch like the others */
		if (crds != NULL)
			g_ptr_array_add(informers, g_object_ref(crds));
		for (guint i = 0; i < informers->len; i++) {
			MsdInformerCounters one;

			msd_informer_get_counters(g_ptr_array_index(informers, i), &one);
			msd_run_setup_add_counters(counters, &one);
		}
	}
}

guint
msd_run_setup_get_n_objects(MsdRunSetup *self)
{
	g_autoptr(GPtrArray) informers = NULL;
	guint total = 0;

	g_return_val_if_fail(MSD_IS_RUN_SETUP(self), 0);

	if (self->run == NULL)
		return 0;
	informers = msd_run_setup_dup_informers(self);
	for (guint i = 0; i < informers->len; i++)
		total +=
		        msd_store_get_size(msd_informer_get_store(g_ptr_array_index(informers, i)));
	return total;
}

/* The objects of the last complete initial state: the current run's once it is complete,
 * else those of the run a resync tore down; NULL when no run has completed yet (or the
 * cluster was replaced since). */
GPtrArray *
msd_run_setup_dup_complete_objects(MsdRunSetup *self)
{
	g_return_val_if_fail(MSD_IS_RUN_SETUP(self), NULL);

	if (self->ready && self->run != NULL)
		return msd_run_setup_collect_objects(self);
	if (self->last_complete != NULL)
		return g_ptr_array_ref(self->last_complete);
	return NULL;
}

void
msd_run_setup_set_infra_publish_func(MsdRunSetup *self,
                                     MsdInfraTierPublishFunc func,
                                     gpointer user_data)
{
	g_return_if_fail(MSD_IS_RUN_SETUP(self));
	self->infra_publish = func;
	self->infra_publish_data = user_data;
	if (self->infra != NULL)
		msd_infra_tier_set_publish_func(self->infra, func, user_data);
}

gboolean
msd_run_setup_is_tier3_informer(MsdRunSetup *self, MsdInformer *informer)
{
	g_return_val_if_fail(MSD_IS_RUN_SETUP(self), FALSE);
	return self->infra != NULL && msd_infra_tier_owns(self->infra, informer);
}
