/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncEngine"

#include "config.h"

#include "broker/msd-envelope.h"
#include "engine/msd-infra-tier.h"
#include "meshsync-discovery-private.h"
#include "util/msd-log.h"

#define MSD_INFRA_CRD_NAME "customresourcedefinitions.v1.apiextensions.k8s.io"

/* One detected, non-delegated infrastructure: its own discovery (its CRDs may be newer than
 * the tier-1 run's) and then its run. */
typedef struct {
	MsdInfraTier *tier; /* (unowned) */
	const MsdInfraSignature *signature;
	GCancellable *cancellable;    /* (owned) */
	MeshSyncDiscovery *discovery; /* (owned) (nullable) */
	MsdRun *run;                  /* (owned) (nullable): once discovery answered */
} MsdInfraActive;

struct _MsdInfraTier {
	GObject parent_instance;

	MsdEngineContext *engine;     /* (owned) */
	MsdKubeClient *client;        /* (owned) */
	MeshSyncDiscovery *discovery; /* (owned): the tier-1 run's */
	MeshSyncWatchConfig *watch;   /* (owned) */
	MsdInformerEventFunc event_func;
	gpointer event_data;
	MsdInfraTierPublishFunc publish_func;
	gpointer publish_data;
	gchar *cluster_id; /* (owned) (nullable) */

	MsdInfraDetector *detector; /* (owned) */
	MsdInformer *crds;          /* (owned) (nullable): our own CRD watch, when neither the
	                             * tier-1 run nor the CRD follower reads them */
	MsdInformer *follower_crds; /* (owned) (nullable): the CRD follower's, whose events come
	                             * through msd_infra_tier_handle_event() */
	GStrv tier1_names;          /* (owned) (nullable): types the tier-1 run watches */
	GHashTable *active;         /* (owned): signature name → MsdInfraActive */
	GHashTable *owned;          /* (owned): the tier-3 runs' informers */
	GPtrArray *informers;       /* (owned): the same, for msd_infra_tier_get_informers() */
	gboolean crds_denied;       /* the server refused the CRD watch */
	gboolean evaluating;        /* the detector decides */
	gboolean idle;              /* nothing to detect for this output */
	gboolean stopped;
};

G_DEFINE_FINAL_TYPE(MsdInfraTier, msd_infra_tier, G_TYPE_OBJECT)

static void
msd_infra_active_free(MsdInfraActive *active)
{
	g_cancellable_cancel(active->cancellable);
	g_clear_object(&active->cancellable);
	if (active->run != NULL)
		msd_run_stop(active->run);
	g_clear_object(&active->run);
	g_clear_object(&active->discovery);
	g_free(active);
}

static void
msd_infra_tier_dispose(GObject *object)
{
	MsdInfraTier *self = MSD_INFRA_TIER(object);

	msd_infra_tier_stop(self);
	G_OBJECT_CLASS(msd_infra_tier_parent_class)->dispose(object);
}

static void
msd_infra_tier_finalize(GObject *object)
{
	MsdInfraTier *self = MSD_INFRA_TIER(object);

	g_hash_table_unref(self->active);
	g_hash_table_unref(self->owned);
	g_ptr_array_unref(self->informers);
	g_clear_object(&self->crds);
	g_clear_object(&self->follower_crds);
	g_clear_object(&self->detector);
	g_strfreev(self->tier1_names);
	g_free(self->cluster_id);
	g_clear_object(&self->watch);
	g_clear_object(&self->discovery);
	g_clear_object(&self->client);
	g_clear_object(&self->engine);
	G_OBJECT_CLASS(msd_infra_tier_parent_class)->finalize(object);
}

static void
msd_infra_tier_class_init(MsdInfraTierClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->dispose = msd_infra_tier_dispose;
	object_class->finalize = msd_infra_tier_finalize;
}

static void
msd_infra_tier_init(MsdInfraTier *self)
{
	self->active = g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
	                                     (GDestroyNotify)msd_infra_active_free);
	self->owned = g_hash_table_new_full(NULL, NULL, g_object_unref, NULL);
	self->informers = g_ptr_array_new();
}

static void
msd_infra_tier_append_string(GString *out, const gchar *text)
{
	g_string_append_c(out, '"');
	for (const gchar *p = text; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			g_string_append_c(out, '\\');
		if ((guchar)*p < 0x20)
			g_string_append_printf(out, "\\u%04x", (guint)(guchar)*p);
		else
			g_string_append_c(out, *p);
	}
	g_string_append_c(out, '"');
}

static void
msd_infra_tier_append_strv(GString *out, const gchar *const *items)
{
	g_string_append_c(out, '[');
	for (guint i = 0; items != NULL && items[i] != NULL; i++) {
		if (i > 0)
			g_string_append_c(out, ',');
		msd_infra_tier_append_string(out, items[i]);
	}
	g_string_append_c(out, ']');
}

/* The Object of an infra-detected envelope (doc/deviations.md describes it). */
static gchar *
msd_infra_tier_payload(MsdInfraTier *self, const MsdInfraSignature *signature, gboolean detected)
{
	GString *out = g_string_new("{\"name\":");
	g_auto(GStrv) crds = NULL;
	g_auto(GStrv) labels = NULL;
	guint n_workloads = 0;

	msd_infra_detector_dup_evidence(self->detector, signature->name, &crds, &labels,
	                                &n_workloads);
	msd_infra_tier_append_string(out, signature->name);
	g_string_append(out, ",\"clusterId\":");
	msd_infra_tier_append_string(out, self->cluster_id != NULL ? self->cluster_id : "");
	g_string_append_printf(out, ",\"detected\":%s,\"delegateToAdapter\":%s",
	                       detected ? "true" : "false",
	                       signature->delegate_to_adapter ? "true" : "false");
	g_string_append(out, ",\"evidence\":{\"crds\":");
	msd_infra_tier_append_strv(out, (const gchar *const *)crds);
	g_string_append(out, ",\"labels\":");
	msd_infra_tier_append_strv(out, (const gchar *const *)labels);
	g_string_append_printf(out, ",\"workloads\":%u},\"tier3ResourceKeys\":", n_workloads);
	msd_infra_tier_append_strv(out, signature->tier3_resource_keys);
	g_string_append_c(out, '}');
	return g_string_free(out, FALSE);
}

static void
msd_infra_tier_publish(MsdInfraTier *self, const MsdInfraSignature *signature, gboolean detected)
{
	g_autofree gchar *payload = NULL;
	g_autoptr(GBytes) envelope = NULL;

	/* one announcement per cluster: shard 0's, as it alone answers meshsync-meta */
	if (msd_engine_context_get_options(self->engine)->shard_total > 1 &&
	    msd_engine_context_get_options(self->engine)->shard_index != 0)
		return;
	if (self->publish_func == NULL) {
		g_info("%s is delegated to its adapter, but there is no broker to tell it on",
		       signature->name);
		return;
	}
	payload = msd_infra_tier_payload(self, signature, detected);
	envelope = msd_envelope_new_bytes("infra-detected", detected ? "ADDED" : "DELETED", payload,
	                                  -1);
	self->publish_func(envelope, self->publish_data);
}

static void
msd_infra_tier_informer_added(MsdRun *run, MsdInformer *informer, gpointer user_data)
{
	MsdInfraTier *self = user_data;

	g_hash_table_add(self->owned, g_object_ref(informer));
	g_ptr_array_add(self->informers, informer);
}

static void
msd_infra_tier_started_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GError) error = NULL;
	g_auto(GStrv) names = NULL;
	g_autofree gchar *list = NULL;

	if (!msd_run_start_informers_finish(MSD_RUN(source), result, &error))
		return;
	names = msd_run_dup_informer_names(MSD_RUN(source));
	if (names[0] == NULL)
		return;
	list = g_strjoinv(", ", names);
	g_info("tier 3 of %s synced: %s", (const gchar *)user_data, list);
}

static gboolean
msd_infra_tier_in_tier1(MsdInfraTier *self, const gchar *name)
{
	return self->tier1_names != NULL &&
	       g_strv_contains((const gchar *const *)self->tier1_names, name);
}

/* Watches each tier-3 type of @active that the tier-1 run does not: with a MeshSync
 * resource every CRD's type is watched in full already, and the live watch list may take a
 * type on or let it go while both run. A type handed over either way is not retracted: the
 * other tier lists it. */
static void
msd_infra_tier_sync_types(MsdInfraTier *self, MsdInfraActive *active, gboolean later)
{
	g_auto(GStrv) watched = msd_run_dup_informer_names(active->run);

	for (guint i = 0; active->signature->tier3_resource_keys[i] != NULL; i++) {
		const gchar *name = active->signature->tier3_resource_keys[i];
		gboolean in_tier1 = msd_infra_tier_in_tier1(self, name);
		gboolean in_tier3 = g_strv_contains((const gchar *const *)watched, name);
		g_autoptr(GPtrArray) removed = NULL;

		if (in_tier1 && in_tier3) {
			removed = msd_run_remove_type(active->run, name);
			for (guint j = 0; j < removed->len; j++) {
				g_ptr_array_remove(self->informers, g_ptr_array_index(removed, j));
				g_hash_table_remove(self->owned, g_ptr_array_index(removed, j));
			}
			g_info("%s: watched by tier 1 now, no longer by tier 3 of %s", name,
			       active->signature->name);
		} else if (in_tier1) {
			g_debug("%s: already watched by the tier-1 run", name);
		} else if (!in_tier3 && msd_run_add_type(active->run, name) > 0 && later) {
			g_info("%s: no longer watched by tier 1: tier 3 of %s takes it on", name,
			       active->signature->name);
		}
	}
}

static void
msd_infra_tier_discovered_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	MsdInfraActive *active = user_data;
	MsdInfraTier *self;
	const MsdEngineOptions *options;
	g_autoptr(GError) error = NULL;
	MeshSyncDiscovery *discovery;

	if (!meshsync_discovery_run_finish(MESHSYNC_DISCOVERY(source), result, &error) &&
	    g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
		return; /* stopped: @active is gone */
	self = active->tier;
	options = msd_engine_context_get_options(self->engine);
	discovery = error == NULL ? active->discovery : self->discovery;
	if (error != NULL)
		g_message("tier 3 of %s: discovery failed (%s): using the tier-1 run's",
		          active->signature->name, error->message);
	active->run = msd_run_new(self->engine, self->client, discovery, self->watch,
	                          self->event_func, self->event_data);
	msd_run_set_informer_func(active->run, msd_infra_tier_informer_added, self);
	msd_run_set_namespaces(active->run, (const gchar *const *)options->namespaces);
	msd_run_set_shard(active->run, options->shard_index, options->shard_total);
	msd_infra_tier_sync_types(self, active, FALSE);
	if (msd_run_get_informers(active->run)->len == 0)
		g_info("tier 3 of %s: every type is watched already", active->signature->name);
	msd_run_start_informers_async(active->run, active->cancellable, msd_infra_tier_started_cb,
	                              (gpointer)active->signature->name);
}

static void
msd_infra_tier_start_active(MsdInfraTier *self, const MsdInfraSignature *signature)
{
	MsdInfraActive *active = g_new0(MsdInfraActive, 1);

	active->tier = self;
	active->signature = signature;
	active->cancellable = g_cancellable_new();
	active->discovery = meshsync_discovery_new_for_client(self->client);
	g_hash_table_replace(self->active, (gpointer)signature->name, active);
	meshsync_discovery_run_async(active->discovery, active->cancellable,
	                             msd_infra_tier_discovered_cb, active);
}

/* Drops a tier-3 run; with @retract, its objects are told DELETED first: nothing follows them
 * any more, and a consumer would otherwise hold them for good. */
static void
msd_infra_tier_stop_active(MsdInfraTier *self, const gchar *name, gboolean retract)
{
	MsdInfraActive *active = g_hash_table_lookup(self->active, name);
	GPtrArray *informers;
	guint retracted = 0;

	if (active == NULL)
		return;
	informers = active->run != NULL ? msd_run_get_informers(active->run) : NULL;
	if (active->run != NULL)
		msd_run_stop(active->run);
	for (guint i = 0; informers != NULL && i < informers->len; i++) {
		MsdInformer *informer = g_ptr_array_index(informers, i);
		MeshSyncApiResource *resource = msd_informer_get_resource(informer);
		g_autoptr(GPtrArray) held =
		        retract ? msd_store_snapshot(msd_informer_get_store(informer)) : NULL;

		for (guint j = 0; held != NULL && j < held->len; j++) {
			MsdInformerEvent event = {
			        .type = MESHSYNC_EVENT_TYPE_DELETED,
			        .entry = g_ptr_array_index(held, j),
			        .doc = NULL,
			        .index = -1,
			        .kind = meshsync_api_resource_get_kind(resource),
			        .api_version = meshsync_api_resource_get_group_version(resource),
			};

			self->event_func(informer, &event, self->event_data);
			retracted++;
		}
		g_ptr_array_remove(self->informers, informer);
		g_hash_table_remove(self->owned, informer);
	}
	if (retracted > 0)
		g_info("tier 3 of %s stopped: %u objects retracted", name, retracted);
	g_hash_table_remove(self->active, name);
}

static void
msd_infra_tier_changed_cb(MsdInfraDetector *detector,
                          const MsdInfraSignature *signature,
                          gboolean detected,
                          MsdInfraTier *self)
{
	g_autofree gchar *evidence =
	        msd_infra_detector_describe_evidence(detector, signature->name);

	if (self->stopped)
		return;
	if (detected)
		g_info("infrastructure %s detected (%s): %s", signature->name, evidence,
		       signature->delegate_to_adapter ? "delegated to its adapter"
		                                      : "starting its tier-3 informers");
	else
		g_info("infrastructure %s is gone (%s left)%s", signature->name, evidence,
		       signature->delegate_to_adapter ? "" : ": stopping its tier-3 informers");
	if (signature->delegate_to_adapter)
		msd_infra_tier_publish(self, signature, detected);
	else if (detected)
		msd_infra_tier_start_active(self, signature);
	else
		msd_infra_tier_stop_active(self, signature->name, TRUE);
}

MsdInfraTier *
msd_infra_tier_new(MsdEngineContext *engine,
                   MsdKubeClient *client,
                   MeshSyncDiscovery *discovery,
                   MeshSyncWatchConfig *watch,
                   const gchar *const *enabled,
                   const gchar *const *disabled,
                   MsdInformerEventFunc event_func,
                   gpointer event_data)
{
	MsdInfraTier *self = g_object_new(MSD_TYPE_INFRA_TIER, NULL);

	self->engine = g_object_ref(engine);
	self->client = g_object_ref(client);
	self->discovery = g_object_ref(discovery);
	self->watch = g_object_ref(watch);
	self->event_func = event_func;
	self->event_data = event_data;
	self->detector = msd_infra_detector_new(enabled, disabled);
	g_signal_connect(self->detector, "changed", G_CALLBACK(msd_infra_tier_changed_cb), self);
	return self;
}

void
msd_infra_tier_set_publish_func(MsdInfraTier *self,
                                MsdInfraTierPublishFunc func,
                                gpointer user_data)
{
	g_return_if_fail(MSD_IS_INFRA_TIER(self));
	self->publish_func = func;
	self->publish_data = user_data;
}

void
msd_infra_tier_set_cluster_id(MsdInfraTier *self, const gchar *cluster_id)
{
	g_return_if_fail(MSD_IS_INFRA_TIER(self));
	g_free(self->cluster_id);
	self->cluster_id = g_strdup(cluster_id);
}

void
msd_infra_tier_handle_event(MsdInfraTier *self, const MsdInformerEvent *event)
{
	if (!self->stopped)
		msd_infra_detector_handle_event(self->detector, event);
}

static void
msd_infra_tier_crd_event_cb(MsdInformer *informer,
                            const MsdInformerEvent *event,
                            gpointer user_data)
{
	msd_infra_tier_handle_event(user_data, event);
}

/* Which kinds of evidence exist: CRDs from the tier-1 run or the tier's own watch, labels from
 * the tier-1 run's workloads. A shard's informers see only their share of both, and every
 * shard must come to the same decision: there the CRDs, read whole, decide alone. */
static void
msd_infra_tier_update_sources(MsdInfraTier *self)
{
	static const gchar *const workloads[] = {"deployments.v1.apps", "pods.v1.",
	                                         "statefulsets.v1.apps", "daemonsets.v1.apps",
	                                         NULL};
	gboolean sharded = msd_engine_context_get_options(self->engine)->shard_total > 1;
	gboolean crds = self->follower_crds != NULL || (self->crds != NULL && !self->crds_denied) ||
	                (!sharded && msd_infra_tier_in_tier1(self, MSD_INFRA_CRD_NAME));
	gboolean labels = FALSE;

	for (guint i = 0; workloads[i] != NULL && !sharded; i++)
		labels |= msd_infra_tier_in_tier1(self, workloads[i]);
	msd_infra_detector_set_sources(self->detector, crds, labels);
}

static void
msd_infra_tier_evaluate(MsdInfraTier *self)
{
	self->evaluating = TRUE;
	msd_infra_detector_evaluate(self->detector);
}

static void
msd_infra_tier_crds_settled_cb(MsdInformer *informer, MsdInfraTier *self)
{
	/* refused (403): no CRD evidence at all, rather than none found */
	self->crds_denied = !msd_informer_get_synced(informer);
	msd_infra_tier_update_sources(self);
	g_signal_handlers_disconnect_by_data(informer, self);
	if (!self->stopped)
		msd_infra_tier_evaluate(self);
}

/* Whether some candidate has a tier-3 type the output would publish: with
 * `-outputResources configmap` there is nothing deeper to look at, for a delegated adapter
 * either, and detection would only cost a CRD watch. */
static gboolean
msd_infra_tier_wanted(MsdInfraTier *self)
{
	guint n = 0;
	const MsdInfraSignature *all = msd_infra_signature_get_all(&n);

	for (guint i = 0; i < n; i++) {
		if (!msd_infra_detector_is_enabled(self->detector, all[i].name))
			continue;
		for (guint j = 0; all[i].tier3_resource_keys[j] != NULL; j++) {
			if (meshsync_watch_config_accepts_resource(self->watch,
			                                           all[i].tier3_resource_keys[j]))
				return TRUE;
		}
	}
	return FALSE;
}

static void
msd_infra_tier_drop_own_crds(MsdInfraTier *self)
{
	if (self->crds == NULL)
		return;
	g_signal_handlers_disconnect_by_data(self->crds, self);
	msd_informer_stop(self->crds);
	g_clear_object(&self->crds);
	self->crds_denied = FALSE;
}

static void
msd_infra_tier_follower_synced_cb(MsdInformer *informer, MsdInfraTier *self)
{
	g_signal_handlers_disconnect_by_data(informer, self);
	if (!self->stopped)
		msd_infra_tier_evaluate(self);
}

/* Reads the CRDs present from wherever they are watched already, or starts a watch of our own.
 * Returns whether the decision must wait for a list still under way. */
static gboolean
msd_infra_tier_read_crds(MsdInfraTier *self)
{
	gboolean sharded = msd_engine_context_get_options(self->engine)->shard_total > 1;
	MeshSyncApiResource *resource;

	if (self->follower_crds != NULL) {
		g_autoptr(GPtrArray) held =
		        msd_store_snapshot(msd_informer_get_store(self->follower_crds));

		/* once per run, and only names are read: no object is parsed */
		for (guint i = 0; i < held->len; i++) {
			MsdStoreEntry *entry = g_ptr_array_index(held, i);

			msd_infra_detector_observe(self->detector, entry->uid,
			                           "CustomResourceDefinition", entry->name, NULL);
		}
		if (msd_informer_get_synced(self->follower_crds))
			return FALSE;
		g_signal_connect(self->follower_crds, "synced",
		                 G_CALLBACK(msd_infra_tier_follower_synced_cb), self);
		g_signal_connect(self->follower_crds, "denied",
		                 G_CALLBACK(msd_infra_tier_follower_synced_cb), self);
		return TRUE;
	}
	if (!sharded && msd_infra_tier_in_tier1(self, MSD_INFRA_CRD_NAME))
		return FALSE;
	resource = meshsync_discovery_lookup(self->discovery, "apiextensions.k8s.io", "v1",
	                                     "customresourcedefinitions");
	if (resource == NULL)
		return FALSE;
	self->crds = msd_informer_new(self->engine, self->client, resource);
	msd_informer_set_event_func(self->crds, msd_infra_tier_crd_event_cb, self, NULL);
	g_signal_connect(self->crds, "synced", G_CALLBACK(msd_infra_tier_crds_settled_cb), self);
	g_signal_connect(self->crds, "denied", G_CALLBACK(msd_infra_tier_crds_settled_cb), self);
	msd_informer_start(self->crds);
	return TRUE;
}

void
msd_infra_tier_start(MsdInfraTier *self, MsdRun *run)
{
	gboolean wait;

	g_return_if_fail(MSD_IS_INFRA_TIER(self));
	g_return_if_fail(self->tier1_names == NULL);

	self->tier1_names = msd_run_dup_informer_names(run);
	if (!msd_infra_tier_wanted(self)) {
		g_debug("no tier-3 type passes the output filter: no infrastructure detection");
		self->idle = TRUE;
		return;
	}
	wait = msd_infra_tier_read_crds(self);
	msd_infra_tier_update_sources(self);
	if (!wait)
		msd_infra_tier_evaluate(self);
}

void
msd_infra_tier_set_crd_source(MsdInfraTier *self, MsdInformer *informer)
{
	g_return_if_fail(MSD_IS_INFRA_TIER(self));

	if (self->follower_crds == informer)
		return;
	if (self->follower_crds != NULL)
		g_signal_handlers_disconnect_by_data(self->follower_crds, self);
	g_set_object(&self->follower_crds, informer);
	/* before the start, the start reads them */
	if (self->stopped || self->idle || self->tier1_names == NULL)
		return;
	/* the CRDs are told again by the new source: no decision on half of them */
	msd_infra_detector_suspend(self->detector);
	self->evaluating = FALSE;
	msd_infra_detector_forget_crds(self->detector);
	msd_infra_tier_drop_own_crds(self);
	if (!msd_infra_tier_read_crds(self)) {
		msd_infra_tier_update_sources(self);
		msd_infra_tier_evaluate(self);
	} else {
		msd_infra_tier_update_sources(self);
	}
}

void
msd_infra_tier_set_policy(MsdInfraTier *self,
                          const gchar *const *enabled,
                          const gchar *const *disabled)
{
	g_return_if_fail(MSD_IS_INFRA_TIER(self));
	msd_infra_detector_set_policy(self->detector, enabled, disabled);
}

void
msd_infra_tier_tier1_changed(MsdInfraTier *self, MsdRun *run)
{
	GHashTableIter iter;
	gpointer active;

	g_return_if_fail(MSD_IS_INFRA_TIER(self));

	/* before the start, the start reads them */
	if (self->stopped || self->idle || self->tier1_names == NULL)
		return;
	g_strfreev(self->tier1_names);
	self->tier1_names = msd_run_dup_informer_names(run);
	msd_infra_tier_update_sources(self);
	g_hash_table_iter_init(&iter, self->active);
	while (g_hash_table_iter_next(&iter, NULL, &active)) {
		if (((MsdInfraActive *)active)->run != NULL)
			msd_infra_tier_sync_types(self, active, TRUE);
	}
	/* other evidence may decide otherwise */
	if (self->evaluating)
		msd_infra_tier_evaluate(self);
}

void
msd_infra_tier_stop(MsdInfraTier *self)
{
	GList *names;

	g_return_if_fail(MSD_IS_INFRA_TIER(self));

	if (self->stopped)
		return;
	self->stopped = TRUE;
	if (self->crds != NULL) {
		g_signal_handlers_disconnect_by_data(self->crds, self);
		msd_informer_stop(self->crds);
	}
	if (self->follower_crds != NULL)
		g_signal_handlers_disconnect_by_data(self->follower_crds, self);
	names = g_hash_table_get_keys(self->active);
	for (GList *l = names; l != NULL; l = l->next)
		msd_infra_tier_stop_active(self, l->data, FALSE);
	g_list_free(names);
}

GPtrArray *
msd_infra_tier_get_informers(MsdInfraTier *self)
{
	g_return_val_if_fail(MSD_IS_INFRA_TIER(self), NULL);
	return self->informers;
}

gboolean
msd_infra_tier_owns(MsdInfraTier *self, MsdInformer *informer)
{
	g_return_val_if_fail(MSD_IS_INFRA_TIER(self), FALSE);
	return g_hash_table_contains(self->owned, informer);
}

MsdInformer *
msd_infra_tier_get_crd_informer(MsdInfraTier *self)
{
	g_return_val_if_fail(MSD_IS_INFRA_TIER(self), NULL);
	return self->crds;
}

MsdInfraDetector *
msd_infra_tier_get_detector(MsdInfraTier *self)
{
	g_return_val_if_fail(MSD_IS_INFRA_TIER(self), NULL);
	return self->detector;
}
