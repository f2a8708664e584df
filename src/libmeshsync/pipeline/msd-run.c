/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncEngine"

#include "config.h"

#include <string.h>

#include "meshsync-enum-types.h"
#include "meshsync-error.h"
#include "engine/msd-engine-context.h"
#include "pipeline/msd-run.h"
#include "util/msd-i18n.h"
#include "util/msd-log.h"

struct _MsdRun {
	GObject parent_instance;

	MsdEngineContext *engine;     /* (owned) */
	MsdKubeClient *client;        /* (owned) */
	MeshSyncDiscovery *discovery; /* (owned) */
	MeshSyncWatchConfig *config;  /* (owned) */
	GPtrArray *informers;         /* (owned) (element-type MsdInformer): registration order */
	GHashTable *settled;          /* (owned) (element-type MsdInformer): synced or refused */
	GTask *start_task;            /* (owned) (nullable): waiting for every informer to settle */
	gulong start_cancelled_id;    /* on the start task's cancellable */
	MsdInformerEventFunc event_func;
	gpointer event_data;
	MsdRunInformerFunc informer_func;
	gpointer informer_data;
	GStrv namespaces; /* (owned) (nullable): the scope; NULL for the whole cluster */
	guint shard_index;
	guint shard_total;
	gboolean started; /* informers registered from now on start at once */
	gboolean stopped;
	GSource *progress_source; /* (owned) (nullable): the progress lines' timer while the start
	                             waits */
};

/* A long initial list (a hundred thousand pods) says how far it got this often. */
#define MSD_RUN_PROGRESS_MS 5000

G_DEFINE_FINAL_TYPE(MsdRun, msd_run, G_TYPE_OBJECT)

static void
msd_run_dispose(GObject *object)
{
	MsdRun *self = MSD_RUN(object);

	msd_run_stop(self);
	G_OBJECT_CLASS(msd_run_parent_class)->dispose(object);
}

static void
msd_run_finalize(GObject *object)
{
	MsdRun *self = MSD_RUN(object);

	g_ptr_array_unref(self->informers);
	g_hash_table_unref(self->settled);
	g_clear_object(&self->client);
	g_clear_object(&self->engine);
	g_clear_object(&self->discovery);
	g_clear_object(&self->config);
	g_strfreev(self->namespaces);
	G_OBJECT_CLASS(msd_run_parent_class)->finalize(object);
}

static void
msd_run_class_init(MsdRunClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->dispose = msd_run_dispose;
	object_class->finalize = msd_run_finalize;
}

static void
msd_run_init(MsdRun *self)
{
	self->informers = g_ptr_array_new_with_free_func(g_object_unref);
	self->settled = g_hash_table_new(NULL, NULL);
}

MsdRun *
msd_run_new(MsdEngineContext *engine,
            MsdKubeClient *client,
            MeshSyncDiscovery *discovery,
            MeshSyncWatchConfig *config,
            MsdInformerEventFunc event_func,
            gpointer event_data)
{
	MsdRun *self = g_object_new(MSD_TYPE_RUN, NULL);

	self->engine = g_object_ref(engine);

	self->client = g_object_ref(client);
	self->discovery = g_object_ref(discovery);
	self->config = g_object_ref(config);
	self->event_func = event_func;
	self->event_data = event_data;
	return self;
}

/* A plain signal disconnect: unlike g_cancellable_disconnect() it is safe from inside the
 * "cancelled" handler itself. */
static void
msd_run_disconnect_start_cancellable(MsdRun *self, GTask *task)
{
	GCancellable *cancellable = g_task_get_cancellable(task);

	if (cancellable != NULL && self->start_cancelled_id != 0)
		g_signal_handler_disconnect(cancellable, self->start_cancelled_id);
	self->start_cancelled_id = 0;
}

static void
msd_run_complete_start_if_settled(MsdRun *self)
{
	g_autoptr(GTask) task = NULL;

	if (self->start_task == NULL || g_hash_table_size(self->settled) < self->informers->len)
		return;
	task = g_steal_pointer(&self->start_task);
	msd_source_clear(&self->progress_source);
	msd_run_disconnect_start_cancellable(self, task);
	g_task_return_boolean(task, TRUE);
}

/* 12500 as "12,500": a count read at a glance. */
static gchar *
msd_run_format_count(guint n)
{
	g_autofree gchar *digits = g_strdup_printf("%u", n);
	gsize len = strlen(digits);
	GString *out = g_string_sized_new(len + len / 3);

	for (gsize i = 0; i < len; i++) {
		if (i > 0 && (len - i) % 3 == 0)
			g_string_append_c(out, ',');
		g_string_append_c(out, digits[i]);
	}
	return g_string_free(out, FALSE);
}

gchar *
msd_run_describe_listing(MsdRun *self)
{
	GString *text = g_string_new(NULL);

	g_return_val_if_fail(MSD_IS_RUN(self), NULL);

	for (guint i = 0; i < self->informers->len; i++) {
		MsdInformer *informer = g_ptr_array_index(self->informers, i);
		g_autofree gchar *count = NULL;

		if (g_hash_table_contains(self->settled, informer))
			continue;
		count = msd_run_format_count(msd_informer_get_n_listed(informer));
		g_string_append_printf(text, "%s%s%s%s: %s", text->len > 0 ? ", " : "",
		                       msd_informer_get_name(informer),
		                       msd_informer_get_namespace(informer) != NULL ? " in " : "",
		                       msd_informer_get_namespace(informer) != NULL
		                               ? msd_informer_get_namespace(informer)
		                               : "",
		                       count);
	}
	return g_string_free(text, FALSE);
}

void
msd_run_count_types(MsdRun *self, guint *started, guint *synced)
{
	g_autoptr(GHashTable) all = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GHashTable) listing = g_hash_table_new(g_str_hash, g_str_equal);

	g_return_if_fail(MSD_IS_RUN(self));

	for (guint i = 0; i < self->informers->len; i++) {
		MsdInformer *informer = g_ptr_array_index(self->informers, i);
		const gchar *name = msd_informer_get_name(informer);

		g_hash_table_add(all, (gpointer)name);
		if (!g_hash_table_contains(self->settled, informer))
			g_hash_table_add(listing, (gpointer)name);
	}
	*started = g_hash_table_size(all);
	*synced = *started - g_hash_table_size(listing);
}

/* One line a type still listing: a collector can follow each on its own. */
static gboolean
msd_run_progress_cb(gpointer user_data)
{
	MsdRun *self = user_data;

	for (guint i = 0; i < self->informers->len; i++) {
		MsdInformer *informer = g_ptr_array_index(self->informers, i);
		const gchar *name = msd_informer_get_name(informer);
		const gchar *ns = msd_informer_get_namespace(informer);
		g_autofree gchar *count = NULL;

		if (g_hash_table_contains(self->settled, informer))
			continue;
		count = msd_run_format_count(msd_informer_get_n_listed(informer));
		msd_info_resource_in(name, ns, "listing %s%s%s: %s objects so far", name,
		                     ns != NULL ? " in " : "", ns != NULL ? ns : "", count);
	}
	return G_SOURCE_CONTINUE;
}

static void
msd_run_informer_settled_cb(MsdInformer *informer, MsdRun *self)
{
	const gchar *name = msd_informer_get_name(informer);
	const gchar *ns = msd_informer_get_namespace(informer);

	if (msd_informer_get_synced(informer) && ns != NULL)
		msd_info_resource_in(name, ns, "%s in %s: synced, %u objects", name, ns,
		                     msd_store_get_size(msd_informer_get_store(informer)));
	else if (msd_informer_get_synced(informer))
		msd_info_resource(name, "%s: synced, %u objects", name,
		                  msd_store_get_size(msd_informer_get_store(informer)));
	g_hash_table_add(self->settled, informer);
	msd_run_complete_start_if_settled(self);
}

static MeshSyncApiResource *
msd_run_resolve(MsdRun *self, const gchar *name)
{
	g_autofree gchar *plural = NULL;
	g_autofree gchar *version = NULL;
	g_autofree gchar *group = NULL;
	MeshSyncApiResource *resource;

	if (!meshsync_watch_name_parse(name, &plural, &version, &group)) {
		msd_log(G_LOG_LEVEL_MESSAGE, name, NULL, NULL,
		        "%s: not a <resource>.<version>.<group> name: skipped", name);
		return NULL;
	}
	resource = meshsync_discovery_lookup(self->discovery, group, version, plural);
	if (resource == NULL) {
		msd_log(G_LOG_LEVEL_MESSAGE, name, NULL, NULL,
		        "%s: the API server does not serve %s in %s%s%s: skipped", name, plural,
		        *group != '\0' ? group : "the core group", "/", version);
		return NULL;
	}
	if (!meshsync_api_resource_get_watchable(resource)) {
		msd_log(G_LOG_LEVEL_MESSAGE, name, NULL, NULL,
		        "%s: the API server does not allow list and watch on %s: skipped", name,
		        plural);
		return NULL;
	}
	return resource;
}

static void
msd_run_add_informer(MsdRun *self, const gchar *name, MsdInformer *informer)
{
	gboolean shallow =
	        meshsync_watch_config_get_depth(self->config, name) == MESHSYNC_WATCH_DEPTH_SHALLOW;

	msd_informer_set_metadata_only(informer, shallow);
	/* events go straight to the consumer; a stopped informer passes on nothing */
	msd_informer_set_event_func(informer, self->event_func, self->event_data, NULL);
	msd_informer_set_shard(informer, self->shard_index, self->shard_total);
	g_signal_connect_object(informer, "synced", G_CALLBACK(msd_run_informer_settled_cb), self,
	                        0);
	g_signal_connect_object(informer, "denied", G_CALLBACK(msd_run_informer_settled_cb), self,
	                        0);
	g_ptr_array_add(self->informers, informer);
	if (self->informer_func != NULL)
		self->informer_func(self, informer, self->informer_data);
	g_debug("%s%s%s: informer registered%s", name,
	        msd_informer_get_namespace(informer) != NULL ? " in " : "",
	        msd_informer_get_namespace(informer) != NULL ? msd_informer_get_namespace(informer)
	                                                     : "",
	        shallow ? " (shallow: metadata only)" : "");
}

/* One name of the configuration: an informer (or one per namespace of the scope) unless
 * it is filtered out, not served, or already watched. */
static void
msd_run_register_name(MsdRun *self, const gchar *name)
{
	MeshSyncApiResource *resource;

	if (!meshsync_watch_config_accepts_resource(self->config, name)) {
		g_debug("%s: not among the output resources: no informer", name);
		return;
	}
	resource = msd_run_resolve(self, name);
	if (resource == NULL)
		return;
	for (guint j = 0; j < self->informers->len; j++) {
		if (msd_informer_get_resource(g_ptr_array_index(self->informers, j)) == resource)
			return;
	}
	if (self->namespaces != NULL && meshsync_api_resource_get_namespaced(resource)) {
		/* one list and watch per namespace of the scope: a Role in each is enough,
		 * and nothing outside the scope is ever read or held */
		for (guint n = 0; self->namespaces[n] != NULL; n++)
			msd_run_add_informer(self, name,
			                     msd_informer_new_in_namespace(self->engine,
			                                                   self->client, resource,
			                                                   self->namespaces[n]));
	} else {
		msd_run_add_informer(self, name,
		                     msd_informer_new(self->engine, self->client, resource));
	}
}

void
msd_run_register_stage(MsdRun *self, MeshSyncWatchStage stage)
{
	g_auto(GStrv) names = NULL;

	g_return_if_fail(MSD_IS_RUN(self));

	names = meshsync_watch_config_get_names(self->config, stage);
	for (guint i = 0; names[i] != NULL; i++)
		msd_run_register_name(self, names[i]);
}

guint
msd_run_add_type(MsdRun *self, const gchar *name)
{
	guint before;

	g_return_val_if_fail(MSD_IS_RUN(self), 0);
	g_return_val_if_fail(name != NULL, 0);

	if (self->stopped)
		return 0;
	before = self->informers->len;
	msd_run_register_name(self, name);
	/* before the start, msd_run_start_informers_async() starts them with the rest */
	for (guint i = before; self->started && i < self->informers->len; i++)
		msd_informer_start(g_ptr_array_index(self->informers, i));
	return self->informers->len - before;
}

GPtrArray *
msd_run_remove_type(MsdRun *self, const gchar *name)
{
	GPtrArray *removed = g_ptr_array_new_with_free_func(g_object_unref);

	g_return_val_if_fail(MSD_IS_RUN(self), removed);
	g_return_val_if_fail(name != NULL, removed);

	for (guint i = self->informers->len; i-- > 0;) {
		MsdInformer *informer = g_ptr_array_index(self->informers, i);

		if (g_strcmp0(msd_informer_get_name(informer), name) != 0)
			continue;
		msd_informer_stop(informer);
		g_signal_handlers_disconnect_by_data(informer, self);
		g_hash_table_remove(self->settled, informer);
		g_ptr_array_insert(removed, 0, g_ptr_array_steal_index(self->informers, i));
	}
	/* the informers a start was still waiting for may all have been among them */
	if (removed->len > 0)
		msd_run_complete_start_if_settled(self);
	return removed;
}

/* Lists and watches each namespace of @namespaces only, for the namespaced types; NULL (the
 * default) watches the whole cluster. Cluster-scoped types are still watched cluster-wide; an
 * informer the server refuses (403) settles as denied and the run goes on without it. */
/* Each informer holds and passes on only shard @index of @total (msd-shard.h). */
void
msd_run_set_shard(MsdRun *self, guint index, guint total)
{
	g_return_if_fail(MSD_IS_RUN(self));
	g_return_if_fail(self->informers->len == 0);

	self->shard_index = index;
	self->shard_total = total;
}

void
msd_run_set_namespaces(MsdRun *self, const gchar *const *namespaces)
{
	g_return_if_fail(MSD_IS_RUN(self));
	g_return_if_fail(self->informers->len == 0);

	g_strfreev(self->namespaces);
	self->namespaces = namespaces != NULL && namespaces[0] != NULL
	                           ? g_strdupv((gchar **)namespaces)
	                           : NULL;
}

static void
msd_run_start_cancelled_cb(GCancellable *cancellable, MsdRun *self)
{
	msd_run_stop(self);
}

void
msd_run_start_informers_async(MsdRun *self,
                              GCancellable *cancellable,
                              GAsyncReadyCallback callback,
                              gpointer user_data)
{
	g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);

	g_return_if_fail(MSD_IS_RUN(self));
	g_return_if_fail(self->start_task == NULL);

	g_task_set_source_tag(task, msd_run_start_informers_async);
	if (self->stopped) {
		g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_CANCELLED,
		                        _("the run is stopped"));
		return;
	}
	self->start_task = g_steal_pointer(&task);
	self->started = TRUE;
	if (cancellable != NULL)
		self->start_cancelled_id = g_cancellable_connect(
		        cancellable, G_CALLBACK(msd_run_start_cancelled_cb), self, NULL);
	/* An already cancelled cancellable stops the run inside g_cancellable_connect(). */
	if (self->stopped)
		return;
	for (guint i = 0; i < self->informers->len; i++)
		msd_informer_start(g_ptr_array_index(self->informers, i));
	self->progress_source = msd_engine_context_add_timeout(
	        self->engine, G_PRIORITY_DEFAULT, MSD_RUN_PROGRESS_MS,
	        "[meshsync] listing progress", msd_run_progress_cb, self, NULL);
	msd_run_complete_start_if_settled(self);
}

gboolean
msd_run_start_informers_finish(MsdRun *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
	return g_task_propagate_boolean(G_TASK(result), error);
}

static gboolean
msd_run_return_cancelled_cb(gpointer user_data)
{
	g_autoptr(GTask) task = user_data;

	g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_CANCELLED, _("the run was stopped"));
	return G_SOURCE_REMOVE;
}

void
msd_run_stop(MsdRun *self)
{
	g_return_if_fail(MSD_IS_RUN(self));

	if (self->stopped)
		return;
	self->stopped = TRUE;
	msd_source_clear(&self->progress_source);
	for (guint i = 0; i < self->informers->len; i++)
		msd_informer_stop(g_ptr_array_index(self->informers, i));
	if (self->start_task != NULL) {
		GTask *task = g_steal_pointer(&self->start_task);
		GSource *idle = g_idle_source_new();

		/* Returned from an idle: the caller may be tearing the run down from within the
		 * task's own callback chain. */
		msd_run_disconnect_start_cancellable(self, task);
		g_source_set_callback(idle, msd_run_return_cancelled_cb, task, NULL);
		g_source_set_static_name(idle, "[meshsync] run stopped");
		g_source_attach(idle, g_task_get_context(task));
		g_source_unref(idle);
	}
}

void
msd_run_set_informer_func(MsdRun *self, MsdRunInformerFunc func, gpointer user_data)
{
	g_return_if_fail(MSD_IS_RUN(self));
	self->informer_func = func;
	self->informer_data = user_data;
}

void
msd_run_pause(MsdRun *self)
{
	for (guint i = 0; i < self->informers->len; i++)
		msd_informer_pause(g_ptr_array_index(self->informers, i));
}

void
msd_run_resume(MsdRun *self)
{
	/* Resuming delivers events synchronously, and a consumer may stop this run from its
	 * handler: keep the run and a stable list of informers alive until the loop ends. */
	g_autoptr(MsdRun) keep G_GNUC_UNUSED = g_object_ref(self);
	g_autoptr(GPtrArray) informers = g_ptr_array_new_full(self->informers->len, g_object_unref);

	for (guint i = 0; i < self->informers->len; i++)
		g_ptr_array_add(informers, g_object_ref(g_ptr_array_index(self->informers, i)));
	for (guint i = 0; i < informers->len && !self->stopped; i++)
		msd_informer_resume(g_ptr_array_index(informers, i));
}

GPtrArray *
msd_run_get_informers(MsdRun *self)
{
	return self->informers;
}

gchar **
msd_run_dup_informer_names(MsdRun *self)
{
	g_autoptr(GStrvBuilder) builder = g_strv_builder_new();
	g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);

	/* a type watched namespace by namespace is one name */
	for (guint i = 0; i < self->informers->len; i++) {
		const gchar *name = msd_informer_get_name(g_ptr_array_index(self->informers, i));

		if (g_hash_table_add(seen, (gpointer)name))
			g_strv_builder_add(builder, name);
	}
	return g_strv_builder_end(builder);
}
