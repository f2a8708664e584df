/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * Two services in one process, each on a thread of its own with its own GMainContext pushed as
 * that thread's default, against two simulators: each writes exactly its own cluster's pods,
 * each keeps its timers in its own context, and the global default context holds no source of
 * either. While the engines run, this thread does not iterate the default context, so anything
 * attached there by mistake would still be there when it looks.
 */

#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "engine/msd-engine-context.h"
#include "meshsync-kube-config.h"
#include "meshsync-service.h"
#include "test-kubesim.h"
#include "test-writer-fake.h"

/* One timer each engine keeps for its whole run: where it is attached tells where the engine
 * runs. */
#define RECONCILE_MS (3600u * 1000u)
#define TICK         "[meshsync] reconcile tick"

typedef struct {
	GMutex lock;
	GCond cond;
	guint arrived; /* engines waiting for the look at the default context */
	gboolean looked;
} Rendezvous;

typedef struct {
	const gchar *name;
	gchar *kubeconfig; /* (owned) */
	Rendezvous *rendezvous;

	/* what the engine thread found, read by the main thread after joining it */
	gboolean started;
	gboolean ready;
	gboolean stopped;
	gboolean timed_out;
	gboolean own_tick; /* TICK is attached to its own context */
	GPtrArray *uids;   /* (owned) (element-type utf8): what its writer was given */
	gchar *error;      /* (owned) (nullable) */
} Engine;

/* Whether a source named @name (or, for NULL, any "[meshsync] ..." source) is attached to
 * @context. Ids are handed out per context in increasing order, so a fresh source's id bounds
 * those of every source still attached. From the thread that runs @context, or while nobody
 * does. */
static gboolean
context_has_source(GMainContext *context, const gchar *name)
{
	GSource *probe = g_idle_source_new();
	guint last = g_source_attach(probe, context);

	g_source_destroy(probe);
	g_source_unref(probe);
	for (guint id = 1; id < last; id++) {
		GSource *source = g_main_context_find_source_by_id(context, id);
		const gchar *found = source != NULL ? g_source_get_name(source) : NULL;

		if (found == NULL)
			continue;
		if (name != NULL ? strcmp(found, name) == 0 : g_str_has_prefix(found, "[meshsync]"))
			return TRUE;
	}
	return FALSE;
}

static void
started_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	Engine *e = user_data;
	g_autoptr(GError) error = NULL;

	e->started = meshsync_service_start_finish(MESHSYNC_SERVICE(source), result, &error);
	if (error != NULL)
		e->error = g_strdup(error->message);
}

static void
stopped_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	Engine *e = user_data;
	g_autoptr(GError) error = NULL;

	e->stopped = meshsync_service_stop_finish(MESHSYNC_SERVICE(source), result, &error);
	if (error != NULL && e->error == NULL)
		e->error = g_strdup(error->message);
}

static gboolean
engine_timeout_cb(gpointer user_data)
{
	((Engine *)user_data)->timed_out = TRUE;
	return G_SOURCE_REMOVE;
}

static void
rendezvous_arrive(Rendezvous *r)
{
	g_mutex_lock(&r->lock);
	r->arrived++;
	g_cond_broadcast(&r->cond);
	while (!r->looked)
		g_cond_wait(&r->cond, &r->lock);
	g_mutex_unlock(&r->lock);
}

static gpointer
engine_thread(gpointer data)
{
	Engine *e = data;
	GMainContext *context = g_main_context_new();
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MeshSyncService) service = NULL;
	g_autoptr(TestWriter) writer = test_writer_new();
	static const gchar *const pods[] = {"pod", NULL};
	GSource *timeout = g_timeout_source_new_seconds(TIMEOUT_SECONDS);

	g_main_context_push_thread_default(context);
	g_source_set_callback(timeout, engine_timeout_cb, e, NULL);
	g_source_attach(timeout, context);

	config = meshsync_kube_config_new_from_file(e->kubeconfig, NULL, &error);
	if (config == NULL) {
		e->error = g_strdup(error->message);
		rendezvous_arrive(e->rendezvous);
		goto out;
	}
	service = meshsync_service_new(config);
	meshsync_service_add_writer(service, MESHSYNC_WRITER(writer));
	meshsync_service_set_output_resources(service, pods);
	meshsync_service_set_reconcile_interval(service, RECONCILE_MS);
	meshsync_service_start_async(service, NULL, started_cb, e);
	while (!(e->started && meshsync_service_get_ready(service)) && e->error == NULL &&
	       !e->timed_out)
		g_main_context_iteration(context, TRUE);
	e->ready = meshsync_service_get_ready(service);
	e->own_tick = context_has_source(context, TICK);

	rendezvous_arrive(e->rendezvous);

	meshsync_service_stop_async(service, NULL, stopped_cb, e);
	while (!e->stopped && e->error == NULL && !e->timed_out)
		g_main_context_iteration(context, TRUE);
	for (guint i = 0; i < writer->uids->len; i++)
		g_ptr_array_add(e->uids, g_strdup(g_ptr_array_index(writer->uids, i)));
out:
	g_clear_object(&service);
	g_source_destroy(timeout);
	g_source_unref(timeout);
	g_main_context_pop_thread_default(context);
	g_main_context_unref(context);
	return NULL;
}

/* The uids of every pod the simulator holds. */
static GHashTable *
sim_pod_uids(Sim *sim)
{
	g_autoptr(GBytes) body = NULL;
	g_autoptr(JsonParser) parser = json_parser_new();
	g_autoptr(GError) error = NULL;
	GHashTable *uids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	JsonArray *items;
	gsize len = 0;
	const gchar *text;

	g_assert_cmpuint(sim_request(sim, "GET", "/api/v1/pods", NULL, &body), ==, 200);
	text = g_bytes_get_data(body, &len);
	json_parser_load_from_data(parser, text, (gssize)len, &error);
	g_assert_no_error(error);
	items = json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)),
	                                     "items");
	for (guint i = 0; i < json_array_get_length(items); i++) {
		JsonObject *meta = json_object_get_object_member(
		        json_array_get_object_element(items, i), "metadata");

		g_hash_table_add(uids, g_strdup(json_object_get_string_member(meta, "uid")));
	}
	return uids;
}

static void
assert_own_objects(Engine *e, GHashTable *own, GHashTable *other)
{
	g_autoptr(GHashTable) written = g_hash_table_new(g_str_hash, g_str_equal);
	GHashTableIter iter;
	gpointer uid;

	if (e->error != NULL)
		g_error("engine %s: %s", e->name, e->error);
	g_assert_false(e->timed_out);
	g_assert_true(e->started);
	g_assert_true(e->ready);
	g_assert_true(e->stopped);
	g_assert_true(e->own_tick);
	for (guint i = 0; i < e->uids->len; i++) {
		g_assert_false(g_hash_table_contains(other, g_ptr_array_index(e->uids, i)));
		g_hash_table_add(written, g_ptr_array_index(e->uids, i));
	}
	/* each pod once, as the initial state: exactly the cluster's own */
	g_assert_cmpuint(e->uids->len, ==, g_hash_table_size(own));
	g_hash_table_iter_init(&iter, own);
	while (g_hash_table_iter_next(&iter, &uid, NULL))
		g_assert_true(g_hash_table_contains(written, uid));
}

static void
test_two_engines_two_threads(void)
{
	Sim sims[2];
	Engine engines[2] = {{.name = "a"}, {.name = "b"}};
	GThread *threads[2];
	g_autoptr(GHashTable) uids_a = NULL;
	g_autoptr(GHashTable) uids_b = NULL;
	Rendezvous r = {0};
	gboolean default_has_source;

	/* the simulators are started and asked from this thread, on the default context, before
	 * the engines run */
	sim_start(&sims[0], 7, 1);
	sim_start(&sims[1], 12, 3);
	uids_a = sim_pod_uids(&sims[0]);
	uids_b = sim_pod_uids(&sims[1]);
	g_assert_cmpuint(g_hash_table_size(uids_a), ==, 7);
	g_assert_cmpuint(g_hash_table_size(uids_b), ==, 12);

	g_mutex_init(&r.lock);
	g_cond_init(&r.cond);
	for (guint i = 0; i < 2; i++) {
		engines[i].kubeconfig = g_strdup(sims[i].kubeconfig);
		engines[i].rendezvous = &r;
		engines[i].uids = g_ptr_array_new_with_free_func(g_free);
		threads[i] = g_thread_new(engines[i].name, engine_thread, &engines[i]);
	}

	/* both engines synced and running: nobody iterates the default context now */
	g_mutex_lock(&r.lock);
	while (r.arrived < 2)
		g_cond_wait(&r.cond, &r.lock);
	default_has_source = context_has_source(g_main_context_default(), NULL);
	r.looked = TRUE;
	g_cond_broadcast(&r.cond);
	g_mutex_unlock(&r.lock);

	for (guint i = 0; i < 2; i++)
		g_thread_join(threads[i]);

	g_assert_false(default_has_source);
	assert_own_objects(&engines[0], uids_a, uids_b);
	assert_own_objects(&engines[1], uids_b, uids_a);

	for (guint i = 0; i < 2; i++) {
		g_free(engines[i].kubeconfig);
		g_ptr_array_unref(engines[i].uids);
		g_free(engines[i].error);
		sim_stop(&sims[i]);
	}
	g_mutex_clear(&r.lock);
	g_cond_clear(&r.cond);
}

/* The engine keeps its own copy of the options, set once: a draft changed later (or a second
 * hand-over) does not reach the running engine. */
static void
test_options_fixed_at_start(void)
{
	g_autoptr(MsdEngineContext) engine = msd_engine_context_new();
	g_autoptr(MsdEngineOptions) draft = msd_engine_options_new();
	static const gchar *const scope[] = {"a", "b", NULL};
	static const gchar *const none[] = {NULL};
	const MsdEngineOptions *options;

	/* before the hand-over: the defaults */
	options = msd_engine_context_get_options(engine);
	g_assert_cmpuint(options->reconcile_interval_ms, ==, 0);
	g_assert_null(options->namespaces);

	msd_engine_options_set_namespaces(draft, scope);
	msd_engine_options_set_shard(draft, 1, 3);
	draft->reconcile_interval_ms = 5000;
	draft->redact_secrets = TRUE;
	msd_engine_context_set_options(engine, draft);

	/* the draft goes on changing: the engine's copy does not */
	msd_engine_options_set_namespaces(draft, none);
	msd_engine_options_set_shard(draft, 5, 1);
	draft->reconcile_interval_ms = 1;
	options = msd_engine_context_get_options(engine);
	g_assert_cmpstrv(options->namespaces, scope);
	g_assert_cmpuint(options->shard_index, ==, 1);
	g_assert_cmpuint(options->shard_total, ==, 3);
	g_assert_cmpuint(options->reconcile_interval_ms, ==, 5000);
	g_assert_true(msd_engine_context_get_convert_state(engine)->redact_secrets);
	/* normalised on the way in: no scope is the whole cluster, one shard is none */
	g_assert_null(draft->namespaces);
	g_assert_cmpuint(draft->shard_index, ==, 0);

	g_test_expect_message("MeshSyncEngine", G_LOG_LEVEL_CRITICAL, "*!self->options_set*");
	msd_engine_context_set_options(engine, draft);
	g_test_assert_expected_messages();
	g_assert_cmpuint(msd_engine_context_get_options(engine)->reconcile_interval_ms, ==, 5000);
}

/* The context makes its kube client once, hands the same one to every caller, and lets it go
 * with itself. */
static void
test_kube_client_owned(void)
{
	const gchar *yaml = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
	                    "    server: http://127.0.0.1:1\ncontexts:\n- name: x\n  context:\n"
	                    "    cluster: c\n    user: u\nusers:\n- name: u\n  user: {}\n"
	                    "current-context: x\n";
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MsdEngineContext) engine = msd_engine_context_new();
	MsdKubeClient *client;
	gpointer watched;

	config = meshsync_kube_config_new_from_data(yaml, -1, NULL, &error);
	g_assert_no_error(error);
	client = msd_engine_context_get_kube_client(engine, config, &error);
	g_assert_no_error(error);
	g_assert_nonnull(client);
	g_assert_true(msd_engine_context_get_kube_client(engine, config, NULL) == client);
	g_assert_true(msd_kube_client_get_config(client) == config);

	watched = client;
	g_object_add_weak_pointer(G_OBJECT(client), &watched);
	g_clear_object(&engine);
	g_assert_null(watched);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/engine-context/options-fixed-at-start", test_options_fixed_at_start);
	g_test_add_func("/engine-context/kube-client-owned", test_kube_client_owned);
	g_test_add_func("/engine-context/two-engines-two-threads", test_two_engines_two_threads);
	return g_test_run();
}
