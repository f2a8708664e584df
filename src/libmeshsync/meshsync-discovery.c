/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncDiscovery"

#include "config.h"

#include <json-glib/json-glib.h>

#include "meshsync-discovery.h"
#include "meshsync-error.h"
#include "meshsync-discovery-private.h"
#include "kube/msd-kube-client.h"
#include "util/msd-json-object.h"
#include "util/msd-i18n.h"

/**
 * MeshSyncDiscovery:
 *
 * Finds out which resource types an API server serves.
 *
 * A run reads `/version`, `/api` and `/apis`, then every group version they list
 * (`/api/v1`, `/apis/apps/v1`, ...) concurrently, and builds a table of
 * [class@MeshSync.ApiResource]s from the answers. Subresource entries such as `pods/log` are
 * folded into their parent resource. A group version that fails, typically a broken
 * aggregated API answering 503, is logged and left out; a failing `/version`, `/api` or
 * `/apis` fails the run and keeps the previous table.
 *
 * Discovery uses the legacy documents, which every server since Kubernetes 1.0 serves.
 */
struct _MeshSyncDiscovery {
	GObject parent_instance;

	MeshSyncKubeConfig *config; /* (owned) */
	MsdKubeClient *client;      /* (owned) (nullable): made on first use */
	gchar *server_version;      /* (owned) (nullable): until the first successful run */
	GPtrArray *resources;       /* (owned) (element-type MeshSyncApiResource) */
	GHashTable *by_name;        /* (owned): "group/version/plural" -> borrowed resource */
	GHashTable *preferred;      /* (owned): group -> preferred version */
};

G_DEFINE_FINAL_TYPE(MeshSyncDiscovery, meshsync_discovery, G_TYPE_OBJECT)

enum {
	PROP_0,
	PROP_CONFIG,
	PROP_SERVER_VERSION,
	N_PROPS
};

static GParamSpec *props[N_PROPS];

/* One group version of a run: filled in by its fetch, NULL resources if that failed. */
typedef struct {
	gchar *group;         /* (owned): "" for the core group */
	gchar *version;       /* (owned) */
	GPtrArray *resources; /* (owned) (nullable) (element-type MeshSyncApiResource) */
} MsdDiscoverySlot;

typedef struct {
	GCancellable *cancellable; /* (owned): cancelled by the caller's or on a fatal error */
	GCancellable *outer;       /* (owned) (nullable): the caller's */
	gulong outer_id;
	guint pending;
	GError *error; /* (owned) (nullable): the first fatal error */
	gchar *server_version;
	GPtrArray *core_slots;  /* (owned) (element-type MsdDiscoverySlot) */
	GPtrArray *group_slots; /* (owned) (element-type MsdDiscoverySlot) */
	GHashTable *preferred;  /* (owned): group -> version */
} MsdDiscoveryRun;

typedef struct {
	GTask *task;            /* (owned) */
	MsdDiscoverySlot *slot; /* (unowned): lives in the run */
} MsdDiscoveryFetch;

static void
msd_discovery_slot_free(MsdDiscoverySlot *slot)
{
	g_free(slot->group);
	g_free(slot->version);
	g_clear_pointer(&slot->resources, g_ptr_array_unref);
	g_free(slot);
}

static void
msd_discovery_run_free(MsdDiscoveryRun *run)
{
	if (run->outer != NULL)
		g_cancellable_disconnect(run->outer, run->outer_id);
	g_clear_object(&run->outer);
	g_clear_object(&run->cancellable);
	g_clear_error(&run->error);
	g_free(run->server_version);
	g_ptr_array_unref(run->core_slots);
	g_ptr_array_unref(run->group_slots);
	g_hash_table_unref(run->preferred);
	g_free(run);
}

static void
meshsync_discovery_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
	MeshSyncDiscovery *self = MESHSYNC_DISCOVERY(object);

	switch (prop_id) {
	case PROP_CONFIG:
		g_value_set_object(value, self->config);
		break;
	case PROP_SERVER_VERSION:
		g_value_set_string(value, self->server_version);
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
	}
}

static void
meshsync_discovery_set_property(GObject *object,
                                guint prop_id,
                                const GValue *value,
                                GParamSpec *pspec)
{
	MeshSyncDiscovery *self = MESHSYNC_DISCOVERY(object);

	switch (prop_id) {
	case PROP_CONFIG:
		g_set_object(&self->config, g_value_get_object(value));
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
	}
}

static void
meshsync_discovery_dispose(GObject *object)
{
	MeshSyncDiscovery *self = MESHSYNC_DISCOVERY(object);

	g_clear_object(&self->client);
	g_clear_object(&self->config);

	G_OBJECT_CLASS(meshsync_discovery_parent_class)->dispose(object);
}

static void
meshsync_discovery_finalize(GObject *object)
{
	MeshSyncDiscovery *self = MESHSYNC_DISCOVERY(object);

	g_free(self->server_version);
	g_hash_table_unref(self->by_name);
	g_hash_table_unref(self->preferred);
	g_ptr_array_unref(self->resources);

	G_OBJECT_CLASS(meshsync_discovery_parent_class)->finalize(object);
}

static void
meshsync_discovery_class_init(MeshSyncDiscoveryClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->get_property = meshsync_discovery_get_property;
	object_class->set_property = meshsync_discovery_set_property;
	object_class->dispose = meshsync_discovery_dispose;
	object_class->finalize = meshsync_discovery_finalize;

	/**
	 * MeshSyncDiscovery:config:
	 *
	 * The configuration naming the API server and the credentials to use.
	 */
	props[PROP_CONFIG] = g_param_spec_object("config", NULL, NULL, MESHSYNC_TYPE_KUBE_CONFIG,
	                                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
	                                                 G_PARAM_STATIC_STRINGS);

	/**
	 * MeshSyncDiscovery:server-version: (getter get_server_version)
	 *
	 * The server's `gitVersion` from `/version`, such as `v1.32.0`; %NULL until a run has
	 * succeeded.
	 */
	props[PROP_SERVER_VERSION] = g_param_spec_string("server-version", NULL, NULL, NULL,
	                                                 G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

	g_object_class_install_properties(object_class, N_PROPS, props);
}

static void
meshsync_discovery_init(MeshSyncDiscovery *self)
{
	self->resources = g_ptr_array_new_with_free_func(g_object_unref);
	self->by_name = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	self->preferred = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
}

/**
 * meshsync_discovery_new:
 * @config: the configuration of the API server
 * @error: return location for a #GError
 *
 * Creates a discovery for the API server named by @config.
 *
 * Nothing is sent until [method@MeshSync.Discovery.run_async] is called. This fails with
 * %MESHSYNC_ERROR_INVALID_CONFIG when the server URL or the CA bundle of @config is
 * unusable.
 *
 * Returns: (transfer full): a new #MeshSyncDiscovery, or %NULL with @error set
 */
MeshSyncDiscovery *
meshsync_discovery_new(MeshSyncKubeConfig *config, GError **error)
{
	g_autoptr(MeshSyncDiscovery) self = NULL;

	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(config), NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	self = g_object_new(MESHSYNC_TYPE_DISCOVERY, "config", config, NULL);
	self->client = msd_kube_client_new(config, error);
	if (self->client == NULL)
		return NULL;
	return g_steal_pointer(&self);
}

static gchar *
msd_discovery_key(const gchar *group, const gchar *version, const gchar *plural)
{
	return g_strdup_printf("%s/%s/%s", group, version, plural);
}

/* Finishes a GET of @path and parses its body into @parser; the object is owned by @parser. */
static JsonObject *
msd_discovery_get_object_finish(MeshSyncDiscovery *self,
                                GObject *source,
                                GAsyncResult *result,
                                const gchar *path,
                                JsonParser *parser,
                                GError **error)
{
	g_autoptr(GError) error_local = NULL;
	g_autoptr(GBytes) body = NULL;
	const gchar *data;
	gsize size = 0;
	JsonNode *root;

	body = msd_kube_client_get_finish(MSD_KUBE_CLIENT(source), result, error);
	if (body == NULL)
		return NULL;
	data = g_bytes_get_data(body, &size);
	if (!json_parser_load_from_data(parser, data != NULL ? data : "", (gssize)size,
	                                &error_local)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("GET %s%s: invalid JSON: %s"),
		            msd_kube_client_get_server(self->client), path, error_local->message);
		return NULL;
	}
	root = json_parser_get_root(parser);
	if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("GET %s%s: the answer is not a JSON object"),
		            msd_kube_client_get_server(self->client), path);
		return NULL;
	}
	return json_node_get_object(root);
}

/* Returns the member as an array, or NULL if it is absent or of another type. */
static JsonArray *
msd_discovery_get_array(JsonObject *obj, const gchar *member)
{
	JsonNode *node = json_object_get_member(obj, member);

	if (node == NULL || !JSON_NODE_HOLDS_ARRAY(node))
		return NULL;
	return json_node_get_array(node);
}

static const gchar *
msd_discovery_get_string(JsonObject *obj, const gchar *member)
{
	JsonNode *node = json_object_get_member(obj, member);

	if (node == NULL || json_node_get_value_type(node) != G_TYPE_STRING)
		return NULL;
	return json_node_get_string(node);
}

static GStrv
msd_discovery_get_strv(JsonObject *obj, const gchar *member)
{
	JsonArray *array = msd_discovery_get_array(obj, member);
	GPtrArray *strv = g_ptr_array_new();

	for (guint i = 0; array != NULL && i < json_array_get_length(array); i++) {
		JsonNode *node = json_array_get_element(array, i);

		if (json_node_get_value_type(node) == G_TYPE_STRING)
			g_ptr_array_add(strv, g_strdup(json_node_get_string(node)));
	}
	g_ptr_array_add(strv, NULL);
	return (GStrv)g_ptr_array_free(strv, FALSE);
}

/* An APIResourceList: top-level entries become resources, "<plural>/<sub>" entries add
 * <sub> to their parent wherever they appear in the list. */
static GPtrArray *
msd_discovery_parse_resource_list(JsonObject *doc, const gchar *group, const gchar *version)
{
	g_autoptr(GHashTable) subs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
	                                                   (GDestroyNotify)g_ptr_array_unref);
	GPtrArray *resources = g_ptr_array_new_with_free_func(g_object_unref);
	JsonArray *entries = msd_discovery_get_array(doc, "resources");
	guint n = entries != NULL ? json_array_get_length(entries) : 0;

	for (guint i = 0; i < n; i++) {
		JsonNode *node = json_array_get_element(entries, i);
		const gchar *name;
		const gchar *slash;
		GPtrArray *list;

		if (!JSON_NODE_HOLDS_OBJECT(node))
			continue;
		name = msd_discovery_get_string(json_node_get_object(node), "name");
		if (name == NULL || (slash = strchr(name, '/')) == NULL)
			continue;
		{
			g_autofree gchar *parent = g_strndup(name, slash - name);

			list = g_hash_table_lookup(subs, parent);
			if (list == NULL) {
				list = g_ptr_array_new_with_free_func(g_free);
				g_hash_table_insert(subs, g_steal_pointer(&parent), list);
			}
		}
		g_ptr_array_add(list, g_strdup(slash + 1));
	}

	for (guint i = 0; i < n; i++) {
		JsonNode *node = json_array_get_element(entries, i);
		JsonObject *entry;
		const gchar *name;
		const gchar *kind;
		g_auto(GStrv) verbs = NULL;
		g_autoptr(GPtrArray) sub_strv = g_ptr_array_new();
		GPtrArray *sub_list;

		if (!JSON_NODE_HOLDS_OBJECT(node))
			continue;
		entry = json_node_get_object(node);
		name = msd_discovery_get_string(entry, "name");
		kind = msd_discovery_get_string(entry, "kind");
		if (name == NULL || name[0] == '\0' || strchr(name, '/') != NULL)
			continue;
		verbs = msd_discovery_get_strv(entry, "verbs");
		sub_list = g_hash_table_lookup(subs, name);
		for (guint j = 0; sub_list != NULL && j < sub_list->len; j++)
			g_ptr_array_add(sub_strv, g_ptr_array_index(sub_list, j));
		g_ptr_array_add(sub_strv, NULL);
		g_ptr_array_add(resources,
		                meshsync_api_resource_new(
		                        group, version, kind != NULL ? kind : "", name,
		                        msd_json_object_get_boolean(entry, "namespaced", FALSE),
		                        (const gchar *const *)verbs,
		                        (const gchar *const *)sub_strv->pdata));
	}
	return resources;
}

static void
msd_discovery_run_fail(MsdDiscoveryRun *run, GError *error)
{
	if (run->error == NULL) {
		run->error = error;
		/* nothing else is worth waiting for */
		g_cancellable_cancel(run->cancellable);
	} else {
		g_error_free(error);
	}
}

static void
msd_discovery_run_done(GTask *task)
{
	MeshSyncDiscovery *self = g_task_get_source_object(task);
	MsdDiscoveryRun *run = g_task_get_task_data(task);
	g_autoptr(GPtrArray) slots = NULL;

	g_assert(run->pending > 0);
	if (--run->pending > 0)
		return;

	if (g_task_return_error_if_cancelled(task))
		return;
	if (run->error != NULL) {
		g_task_return_error(task, g_steal_pointer(&run->error));
		return;
	}

	g_ptr_array_set_size(self->resources, 0);
	g_hash_table_remove_all(self->by_name);
	slots = g_ptr_array_new();
	g_ptr_array_extend(slots, run->core_slots, NULL, NULL);
	g_ptr_array_extend(slots, run->group_slots, NULL, NULL);
	for (guint i = 0; i < slots->len; i++) {
		MsdDiscoverySlot *slot = g_ptr_array_index(slots, i);

		for (guint j = 0; slot->resources != NULL && j < slot->resources->len; j++) {
			MeshSyncApiResource *res = g_ptr_array_index(slot->resources, j);

			g_hash_table_replace(
			        self->by_name,
			        msd_discovery_key(slot->group, slot->version,
			                          meshsync_api_resource_get_plural(res)),
			        res);
			g_ptr_array_add(self->resources, g_object_ref(res));
		}
	}
	g_hash_table_unref(self->preferred);
	self->preferred = g_hash_table_ref(run->preferred);
	if (g_strcmp0(self->server_version, run->server_version) != 0) {
		g_free(self->server_version);
		self->server_version = g_steal_pointer(&run->server_version);
		g_object_notify_by_pspec(G_OBJECT(self), props[PROP_SERVER_VERSION]);
	}
	g_debug("discovery of %s: %u resource types", msd_kube_client_get_server(self->client),
	        self->resources->len);
	g_task_return_boolean(task, TRUE);
}

static void
msd_discovery_group_version_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	MsdDiscoveryFetch *fetch = user_data;
	g_autoptr(GTask) task = g_steal_pointer(&fetch->task);
	MsdDiscoverySlot *slot = fetch->slot;
	MeshSyncDiscovery *self = g_task_get_source_object(task);
	g_autoptr(JsonParser) parser = json_parser_new();
	g_autoptr(GError) error = NULL;
	g_autofree gchar *path = NULL;
	JsonObject *doc;

	g_free(fetch);
	if (slot->group[0] == '\0')
		path = g_strdup_printf("/api/%s", slot->version);
	else
		path = g_strdup_printf("/apis/%s/%s", slot->group, slot->version);

	doc = msd_discovery_get_object_finish(self, source, result, path, parser, &error);
	if (doc != NULL) {
		slot->resources =
		        msd_discovery_parse_resource_list(doc, slot->group, slot->version);
	} else if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
		/* one broken aggregated API must not hide the rest of the cluster */
		g_message("discovery: skipping %s: %s", path, error->message);
	}
	msd_discovery_run_done(task);
}

static void
msd_discovery_fetch_group_version(GTask *task,
                                  GPtrArray *slots,
                                  const gchar *group,
                                  const gchar *version)
{
	MeshSyncDiscovery *self = g_task_get_source_object(task);
	MsdDiscoveryRun *run = g_task_get_task_data(task);
	MsdDiscoverySlot *slot = g_new0(MsdDiscoverySlot, 1);
	MsdDiscoveryFetch *fetch = g_new0(MsdDiscoveryFetch, 1);
	g_autofree gchar *path = NULL;

	slot->group = g_strdup(group);
	slot->version = g_strdup(version);
	g_ptr_array_add(slots, slot);
	fetch->task = g_object_ref(task);
	fetch->slot = slot;
	if (group[0] == '\0')
		path = g_strdup_printf("/api/%s", version);
	else
		path = g_strdup_printf("/apis/%s/%s", group, version);
	run->pending++;
	msd_kube_client_get_async(self->client, path, run->cancellable,
	                          msd_discovery_group_version_cb, fetch);
}

/* The top-level GETs of a run: a failure fails the run, and the request is done with. */
static JsonObject *
msd_discovery_run_get_object_finish(
        GTask *task, GObject *source, GAsyncResult *result, const gchar *path, JsonParser *parser)
{
	MsdDiscoveryRun *run = g_task_get_task_data(task);
	g_autoptr(GError) error = NULL;
	JsonObject *doc;

	doc = msd_discovery_get_object_finish(g_task_get_source_object(task), source, result, path,
	                                      parser, &error);
	if (doc == NULL) {
		msd_discovery_run_fail(run, g_steal_pointer(&error));
		msd_discovery_run_done(task);
	}
	return doc;
}

static void
msd_discovery_version_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	MsdDiscoveryRun *run = g_task_get_task_data(task);
	g_autoptr(JsonParser) parser = json_parser_new();
	JsonObject *doc;
	const gchar *git;

	doc = msd_discovery_run_get_object_finish(task, source, result, "/version", parser);
	if (doc == NULL)
		return;
	git = msd_discovery_get_string(doc, "gitVersion");
	if (git != NULL && git[0] != '\0') {
		run->server_version = g_strdup(git);
	} else {
		/* the server's answer: "major" may be anything, and json-glib's getter with a
		 * default warns on a non-value */
		const gchar *major = msd_discovery_get_string(doc, "major");
		const gchar *minor = msd_discovery_get_string(doc, "minor");

		run->server_version = g_strdup_printf("v%s.%s", major != NULL ? major : "0",
		                                      minor != NULL ? minor : "0");
	}
	msd_discovery_run_done(task);
}

static void
msd_discovery_api_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	MsdDiscoveryRun *run = g_task_get_task_data(task);
	g_autoptr(JsonParser) parser = json_parser_new();
	g_auto(GStrv) versions = NULL;
	JsonObject *doc = NULL;

	doc = msd_discovery_run_get_object_finish(task, source, result, "/api", parser);
	if (doc == NULL)
		return;
	versions = msd_discovery_get_strv(doc, "versions");
	if (versions[0] != NULL)
		g_hash_table_replace(run->preferred, g_strdup(""), g_strdup(versions[0]));
	for (guint i = 0; versions[i] != NULL && run->error == NULL; i++)
		msd_discovery_fetch_group_version(task, run->core_slots, "", versions[i]);
	msd_discovery_run_done(task);
}

static void
msd_discovery_apis_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	MsdDiscoveryRun *run = g_task_get_task_data(task);
	g_autoptr(JsonParser) parser = json_parser_new();
	JsonObject *doc = NULL;
	JsonArray *groups;

	doc = msd_discovery_run_get_object_finish(task, source, result, "/apis", parser);
	if (doc == NULL)
		return;
	groups = msd_discovery_get_array(doc, "groups");
	for (guint i = 0; groups != NULL && i < json_array_get_length(groups); i++) {
		JsonNode *node = json_array_get_element(groups, i);
		JsonObject *group;
		JsonNode *preferred;
		JsonArray *versions;
		const gchar *name;

		if (!JSON_NODE_HOLDS_OBJECT(node))
			continue;
		group = json_node_get_object(node);
		name = msd_discovery_get_string(group, "name");
		if (name == NULL || name[0] == '\0')
			continue;
		versions = msd_discovery_get_array(group, "versions");
		for (guint j = 0; versions != NULL && j < json_array_get_length(versions); j++) {
			JsonNode *vnode = json_array_get_element(versions, j);
			const gchar *version;

			if (!JSON_NODE_HOLDS_OBJECT(vnode))
				continue;
			version = msd_discovery_get_string(json_node_get_object(vnode), "version");
			if (version == NULL || version[0] == '\0' || run->error != NULL)
				continue;
			if (!g_hash_table_contains(run->preferred, name))
				g_hash_table_insert(run->preferred, g_strdup(name),
				                    g_strdup(version));
			msd_discovery_fetch_group_version(task, run->group_slots, name, version);
		}
		preferred = json_object_get_member(group, "preferredVersion");
		if (preferred != NULL && JSON_NODE_HOLDS_OBJECT(preferred)) {
			const gchar *version = msd_discovery_get_string(
			        json_node_get_object(preferred), "version");

			if (version != NULL && version[0] != '\0')
				g_hash_table_replace(run->preferred, g_strdup(name),
				                     g_strdup(version));
		}
	}
	msd_discovery_run_done(task);
}

static void
msd_discovery_outer_cancelled_cb(GCancellable *outer, gpointer user_data)
{
	g_cancellable_cancel(G_CANCELLABLE(user_data));
}

/**
 * meshsync_discovery_run_async:
 * @self: a #MeshSyncDiscovery
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the run is over
 * @user_data: data for @callback
 *
 * Discovers the resource types the server offers.
 *
 * The requests run concurrently; @callback is called in the thread-default main context of
 * the caller once all of them are over. On success the table of
 * [method@MeshSync.Discovery.get_resources] is replaced; on failure the previous one stays.
 */
void
meshsync_discovery_run_async(MeshSyncDiscovery *self,
                             GCancellable *cancellable,
                             GAsyncReadyCallback callback,
                             gpointer user_data)
{
	g_autoptr(GTask) task = NULL;
	g_autoptr(GError) error = NULL;
	MsdDiscoveryRun *run;

	g_return_if_fail(MESHSYNC_IS_DISCOVERY(self));
	g_return_if_fail(cancellable == NULL || G_IS_CANCELLABLE(cancellable));

	task = g_task_new(self, cancellable, callback, user_data);
	g_task_set_source_tag(task, meshsync_discovery_run_async);

	/* made with g_object_new() (as bindings may do) rather than meshsync_discovery_new() */
	if (self->client == NULL) {
		if (self->config == NULL) {
			g_task_return_new_error(task, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			                        _("discovery: no kubeconfig given"));
			return;
		}
		self->client = msd_kube_client_new(self->config, &error);
		if (self->client == NULL) {
			g_task_return_error(task, g_steal_pointer(&error));
			return;
		}
	}

	run = g_new0(MsdDiscoveryRun, 1);
	run->cancellable = g_cancellable_new();
	run->core_slots = g_ptr_array_new_with_free_func((GDestroyNotify)msd_discovery_slot_free);
	run->group_slots = g_ptr_array_new_with_free_func((GDestroyNotify)msd_discovery_slot_free);
	run->preferred = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	g_task_set_task_data(task, run, (GDestroyNotify)msd_discovery_run_free);
	if (cancellable != NULL) {
		run->outer = g_object_ref(cancellable);
		run->outer_id = g_cancellable_connect(
		        cancellable, G_CALLBACK(msd_discovery_outer_cancelled_cb),
		        g_object_ref(run->cancellable), g_object_unref);
	}

	run->pending = 3;
	msd_kube_client_get_async(self->client, "/version", run->cancellable,
	                          msd_discovery_version_cb, g_object_ref(task));
	msd_kube_client_get_async(self->client, "/api", run->cancellable, msd_discovery_api_cb,
	                          g_object_ref(task));
	msd_kube_client_get_async(self->client, "/apis", run->cancellable, msd_discovery_apis_cb,
	                          g_object_ref(task));
}

/**
 * meshsync_discovery_run_finish:
 * @self: a #MeshSyncDiscovery
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Finishes a run started with [method@MeshSync.Discovery.run_async].
 *
 * The error names the failing URL: %MESHSYNC_ERROR_UNAUTHORIZED, %MESHSYNC_ERROR_TLS,
 * %MESHSYNC_ERROR_CONNECTION and the other codes of [error@MeshSync.Error].
 *
 * Returns: %TRUE if the table was built
 */
gboolean
meshsync_discovery_run_finish(MeshSyncDiscovery *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
	g_return_val_if_fail(g_task_get_source_tag(G_TASK(result)) == meshsync_discovery_run_async,
	                     FALSE);
	return g_task_propagate_boolean(G_TASK(result), error);
}

/**
 * meshsync_discovery_get_server_version: (get-property server-version)
 * @self: a #MeshSyncDiscovery
 *
 * Gets the server's version.
 *
 * This is the `gitVersion` of `/version` as of the last successful run.
 *
 * Returns: (nullable): the version, such as `v1.32.0`, or %NULL before the first run
 */
const gchar *
meshsync_discovery_get_server_version(MeshSyncDiscovery *self)
{
	g_return_val_if_fail(MESHSYNC_IS_DISCOVERY(self), NULL);
	return self->server_version;
}

/**
 * meshsync_discovery_get_resources:
 * @self: a #MeshSyncDiscovery
 *
 * Gets the table of resource types.
 *
 * The core group comes first, then the named groups in the order of `/apis`; within a group
 * version, the server's order is kept. Every version of a group is listed. The table is
 * empty before the first successful run.
 *
 * Returns: (transfer none) (element-type MeshSyncApiResource): the resource types
 */
GPtrArray *
meshsync_discovery_get_resources(MeshSyncDiscovery *self)
{
	g_return_val_if_fail(MESHSYNC_IS_DISCOVERY(self), NULL);
	return self->resources;
}

/**
 * meshsync_discovery_lookup:
 * @self: a #MeshSyncDiscovery
 * @group: (nullable): the API group, `NULL` or `""` for the core group
 * @version: (nullable): the version, or %NULL for the group's preferred version
 * @plural: the plural resource name, such as `deployments`
 *
 * Finds a resource type in the table.
 *
 * Without a @version the group's preferred version is tried first, then the group's other
 * versions in the server's order, so that a resource that only exists in an older version
 * is still found.
 *
 * Returns: (transfer none) (nullable): the resource type, or %NULL if the server has none
 */
MeshSyncApiResource *
meshsync_discovery_lookup(MeshSyncDiscovery *self,
                          const gchar *group,
                          const gchar *version,
                          const gchar *plural)
{
	g_autofree gchar *key = NULL;
	MeshSyncApiResource *res;
	const gchar *preferred;

	g_return_val_if_fail(MESHSYNC_IS_DISCOVERY(self), NULL);
	g_return_val_if_fail(plural != NULL, NULL);

	if (group == NULL)
		group = "";
	if (version != NULL) {
		key = msd_discovery_key(group, version, plural);
		return g_hash_table_lookup(self->by_name, key);
	}
	preferred = g_hash_table_lookup(self->preferred, group);
	if (preferred != NULL) {
		key = msd_discovery_key(group, preferred, plural);
		res = g_hash_table_lookup(self->by_name, key);
		if (res != NULL)
			return res;
	}
	for (guint i = 0; i < self->resources->len; i++) {
		res = g_ptr_array_index(self->resources, i);
		if (g_strcmp0(meshsync_api_resource_get_group(res), group) == 0 &&
		    g_strcmp0(meshsync_api_resource_get_plural(res), plural) == 0)
			return res;
	}
	return NULL;
}

MeshSyncDiscovery *
meshsync_discovery_new_for_client(MsdKubeClient *client)
{
	MeshSyncDiscovery *self = g_object_new(MESHSYNC_TYPE_DISCOVERY, "config",
	                                       msd_kube_client_get_config(client), NULL);

	self->client = g_object_ref(client);
	return self;
}
