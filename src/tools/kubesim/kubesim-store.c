/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * The simulated etcd and watch cache: resources and their objects, the resourceVersion
 * counter, the event history watches resume from, and the snapshots a restore goes back to.
 * One file because every write path (API writes, loads, churn's splices and additions,
 * deletions with their cascades, silent writes) must keep the same three things in step: the
 * objects' trees, the counter and the history.
 */

#include "kubesim-store.h"

#include <string.h>

#include "kubesim-crd.h"
#include "kubesim-json.h"
#include "kubesim-managed.h"
#include "kubesim-object-json.h"

struct _KubesimStore {
	GPtrArray *resources; /* KubesimResource, registration order */
	GHashTable *by_gvr;   /* "g/v/resource" → KubesimResource (borrowed) */
	GHashTable *by_kind;  /* "apiVersion/Kind" → KubesimResource (borrowed) */
	GQueue history;       /* KubesimEvent, oldest first */
	guint history_max;
	guint64 history_floor;
	guint64 rv;
	gboolean silent;  /* writes make no events */
	gboolean dry_run; /* writes are answered, not made */
	guint epoch;      /* resets so far */
	gchar *manager;   /* (nullable): whose writes these are, for managedFields */
	gchar *manager_subresource;
	KubesimEventFunc listener;
	gpointer listener_data;
};

static gchar *gvr_key(const gchar *group, const gchar *version, const gchar *resource);
static void event_free(KubesimEvent *ev);

/* What the store reads from an object's JSON on every write. */
typedef struct {
	gchar *api_version;
	gchar *kind;
	gchar *name;
	gchar *generate_name;
	gchar *namespace_;
	gchar *uid;
	gchar *rv;
	gchar *creation;
	gint64 generation;
	gboolean has_spec;
	gboolean has_managed_fields;
	guint64 spec_hash; /* to see whether an update changed the spec */
	GString *labels;
} ObjectInfo;

static void
object_info_clear(ObjectInfo *info)
{
	g_free(info->api_version);
	g_free(info->kind);
	g_free(info->name);
	g_free(info->generate_name);
	g_free(info->namespace_);
	g_free(info->uid);
	g_free(info->rv);
	g_free(info->creation);
	if (info->labels != NULL)
		g_string_free(info->labels, TRUE);
	memset(info, 0, sizeof(*info));
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(ObjectInfo, object_info_clear)

/* Reads what the store needs from an object already tokenized in @doc. */
static gboolean
object_info_read(const MsdJsonTokens *doc, ObjectInfo *info)
{
	gint meta, tok;

	memset(info, 0, sizeof(*info));
	if (!msd_json_tokens_is_object(doc, 0))
		return FALSE;
	info->api_version =
	        msd_json_tokens_dup_string(doc, msd_json_tokens_member(doc, 0, "apiVersion"));
	info->kind = msd_json_tokens_dup_string(doc, msd_json_tokens_member(doc, 0, "kind"));
	tok = msd_json_tokens_member(doc, 0, "spec");
	if (tok >= 0) {
		const gchar *raw;
		gsize raw_len, k;
		raw = msd_json_tokens_span(doc, tok, &raw_len);
		info->has_spec = TRUE;
		/* FNV-1a */
		info->spec_hash = 0xcbf29ce484222325ULL;
		for (k = 0; k < raw_len; k++)
			info->spec_hash = (info->spec_hash ^ (guchar)raw[k]) * 0x100000001b3ULL;
	}
	meta = msd_json_tokens_member(doc, 0, "metadata");
	if (!msd_json_tokens_is_object(doc, meta))
		return TRUE;
	info->has_managed_fields = msd_json_tokens_member(doc, meta, "managedFields") >= 0;
	info->name = msd_json_tokens_dup_string(doc, msd_json_tokens_member(doc, meta, "name"));
	info->generate_name =
	        msd_json_tokens_dup_string(doc, msd_json_tokens_member(doc, meta, "generateName"));
	info->namespace_ =
	        msd_json_tokens_dup_string(doc, msd_json_tokens_member(doc, meta, "namespace"));
	info->uid = msd_json_tokens_dup_string(doc, msd_json_tokens_member(doc, meta, "uid"));
	info->rv = msd_json_tokens_dup_string(doc,
	                                      msd_json_tokens_member(doc, meta, "resourceVersion"));
	info->creation = msd_json_tokens_dup_string(
	        doc, msd_json_tokens_member(doc, meta, "creationTimestamp"));
	{
		g_autofree gchar *gen = msd_json_tokens_dup_string(
		        doc, msd_json_tokens_member(doc, meta, "generation"));
		info->generation = gen != NULL ? g_ascii_strtoll(gen, NULL, 10) : 0;
	}
	tok = msd_json_tokens_member(doc, meta, "labels");
	if (msd_json_tokens_is_object(doc, tok) && msd_json_tokens_size(doc, tok) > 0) {
		gint i, n = msd_json_tokens_size(doc, tok);
		gint k = tok + 1;
		info->labels = g_string_new(NULL);
		for (i = 0; i < n; i++) {
			g_autofree gchar *key = msd_json_tokens_dup_string(doc, k);
			g_autofree gchar *value = msd_json_tokens_dup_string(doc, k + 1);
			g_string_append_len(info->labels, key, strlen(key) + 1);
			g_string_append_len(info->labels, value != NULL ? value : "",
			                    (value != NULL ? strlen(value) : 0) + 1);
			k = msd_json_tokens_skip(doc, k + 1);
		}
		g_string_append_c(info->labels, '\0');
	}
	/* empty strings mean absent, as in Go */
	if (info->namespace_ != NULL && info->namespace_[0] == '\0')
		g_clear_pointer(&info->namespace_, g_free);
	if (info->name != NULL && info->name[0] == '\0')
		g_clear_pointer(&info->name, g_free);
	if (info->uid != NULL && info->uid[0] == '\0')
		g_clear_pointer(&info->uid, g_free);
	if (info->creation != NULL && info->creation[0] == '\0')
		g_clear_pointer(&info->creation, g_free);
	return TRUE;
}

static gboolean
object_info_parse(GBytes *json, ObjectInfo *info)
{
	g_auto(MsdJsonTokens) doc = MSD_JSON_TOKENS_INIT;
	gsize len;
	const gchar *js = g_bytes_get_data(json, &len);

	memset(info, 0, sizeof(*info));
	if (!msd_json_tokens_parse(&doc, js, len, NULL))
		return FALSE;
	return object_info_read(&doc, info);
}

static gchar *
json_quote(const gchar *s)
{
	GString *out = g_string_new(NULL);

	msd_json_string_append(out, s, -1, MSD_JSON_STRING_GO);
	return g_string_free(out, FALSE);
}

gchar *
kubesim_now_rfc3339(void)
{
	g_autoptr(GDateTime) now = g_date_time_new_now_utc();

	return g_date_time_format(now, "%Y-%m-%dT%H:%M:%SZ");
}

/* objects */

static void
object_clear(gpointer data)
{
	KubesimObject *obj = data;

	g_free(obj->key);
	g_free(obj->namespace_);
	g_free(obj->name);
	g_free(obj->uid);
	g_free(obj->labels);
	g_bytes_unref(obj->stored);
	if (obj->dict != NULL)
		kubesim_pack_dict_unref(obj->dict);
}

/* Objects smaller than this stay plain, and none smaller than a kilobyte makes a resource's
 * dictionary: too little of the kind's shape is in it. */
#define PACK_MIN_SIZE      128
#define PACK_DICT_MIN_SIZE 1024

/* Keeps @json as @obj's JSON, packed when packing is on and it pays. */
static void
object_set_json(KubesimResource *res, KubesimObject *obj, GBytes *json)
{
	obj->json_len = g_bytes_get_size(json);
	if (kubesim_pack_get_enabled() && obj->json_len >= PACK_MIN_SIZE) {
		if (res->pack_dict == NULL && obj->json_len >= PACK_DICT_MIN_SIZE)
			res->pack_dict = kubesim_pack_dict_new(json);
		if (res->pack_dict != NULL) {
			GBytes *packed = kubesim_pack(res->pack_dict, json);
			if (packed != NULL) {
				obj->stored = packed;
				obj->dict = kubesim_pack_dict_ref(res->pack_dict);
				return;
			}
		}
	}
	obj->stored = g_bytes_ref(json);
}

GBytes *
kubesim_object_get_json(const KubesimObject *obj)
{
	if (obj->dict == NULL)
		return g_bytes_ref(obj->stored);
	return kubesim_unpack(obj->dict, obj->stored, obj->json_len);
}

void
kubesim_object_append_json(const KubesimObject *obj, GString *out)
{
	if (obj->dict == NULL)
		g_string_append_len(out, g_bytes_get_data(obj->stored, NULL), obj->json_len);
	else
		kubesim_unpack_append(obj->dict, obj->stored, obj->json_len, out);
}

GBytes *
kubesim_object_item_bytes(KubesimObject *obj)
{
	g_autoptr(GBytes) json = kubesim_object_get_json(obj);

	if (obj->item_off == 0)
		return g_steal_pointer(&json);
	return g_bytes_new_from_bytes(json, obj->item_off, obj->json_len - obj->item_off);
}

KubesimObject *
kubesim_object_ref(KubesimObject *obj)
{
	return g_rc_box_acquire(obj);
}

void
kubesim_object_unref(KubesimObject *obj)
{
	g_rc_box_release_full(obj, object_clear);
}

const gchar *
kubesim_object_label(const KubesimObject *obj, const gchar *key)
{
	const gchar *p = obj->labels;

	if (p == NULL)
		return NULL;
	while (*p != '\0') {
		const gchar *value = p + strlen(p) + 1;
		if (strcmp(p, key) == 0)
			return value;
		p = value + strlen(value) + 1;
	}
	return NULL;
}

/* resources */

static void
resource_clear(gpointer data)
{
	KubesimResource *res = data;

	g_free(res->group);
	g_free(res->version);
	g_free(res->api_version);
	g_free(res->resource);
	g_free(res->singular);
	g_free(res->kind);
	g_free(res->list_kind);
	g_strfreev(res->short_names);
	g_strfreev(res->categories);
	g_strfreev(res->subresources);
	g_free(res->crd_name);
	g_tree_unref(res->objects);
	if (res->pack_dict != NULL)
		kubesim_pack_dict_unref(res->pack_dict);
}

KubesimResource *
kubesim_resource_ref(KubesimResource *res)
{
	return g_rc_box_acquire(res);
}

void
kubesim_resource_unref(KubesimResource *res)
{
	g_rc_box_release_full(res, resource_clear);
}

gchar *
kubesim_resource_key(KubesimResource *res, const gchar *ns, const gchar *name)
{
	if (res->namespaced)
		return g_strdup_printf("%s/%s", ns != NULL ? ns : "", name);
	return g_strdup(name);
}

KubesimObject *
kubesim_resource_get(KubesimResource *res, const gchar *ns, const gchar *name)
{
	g_autofree gchar *key = kubesim_resource_key(res, ns, name);

	return g_tree_lookup(res->objects, key);
}

static gint
key_compare(gconstpointer a, gconstpointer b, gpointer user_data)
{
	return strcmp(a, b);
}

/* store */

const gchar *
kubesim_event_type_to_string(KubesimEventType type)
{
	switch (type) {
	case KUBESIM_EVENT_ADDED:
		return "ADDED";
	case KUBESIM_EVENT_MODIFIED:
		return "MODIFIED";
	case KUBESIM_EVENT_DELETED:
	default:
		return "DELETED";
	}
}

static void
event_free(KubesimEvent *ev)
{
	kubesim_resource_unref(ev->resource);
	kubesim_object_unref(ev->object);
	g_free(ev);
}

KubesimStore *
kubesim_store_new(guint history_max)
{
	KubesimStore *store = g_new0(KubesimStore, 1);

	store->resources = g_ptr_array_new_with_free_func((GDestroyNotify)kubesim_resource_unref);
	store->by_gvr = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	store->by_kind = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_queue_init(&store->history);
	store->history_max = MAX(history_max, 1);
	return store;
}

void
kubesim_store_free(KubesimStore *store)
{
	g_queue_clear_full(&store->history, (GDestroyNotify)event_free);
	g_free(store->manager);
	g_free(store->manager_subresource);
	g_hash_table_unref(store->by_gvr);
	g_hash_table_unref(store->by_kind);
	g_ptr_array_unref(store->resources);
	g_free(store);
}

void
kubesim_store_set_listener(KubesimStore *store, KubesimEventFunc func, gpointer user_data)
{
	store->listener = func;
	store->listener_data = user_data;
}

guint64
kubesim_store_get_rv(KubesimStore *store)
{
	return store->rv;
}

guint64
kubesim_store_get_history_floor(KubesimStore *store)
{
	return store->history_floor;
}

void
kubesim_store_compact(KubesimStore *store)
{
	g_queue_clear_full(&store->history, (GDestroyNotify)event_free);
	store->history_floor = store->rv;
}

void
kubesim_store_set_silent(KubesimStore *store, gboolean silent)
{
	store->silent = silent;
}

void
kubesim_store_set_dry_run(KubesimStore *store, gboolean dry_run)
{
	store->dry_run = dry_run;
}

void
kubesim_store_set_field_manager(KubesimStore *store, const gchar *manager, const gchar *subresource)
{
	g_free(store->manager);
	g_free(store->manager_subresource);
	store->manager = g_strdup(manager);
	store->manager_subresource = g_strdup(subresource);
}

static void
unregister_resource(KubesimStore *store, KubesimResource *res)
{
	g_autofree gchar *gvr = gvr_key(res->group, res->version, res->resource);
	g_autofree gchar *kind = g_strdup_printf("%s/%s", res->api_version, res->kind);

	if (g_hash_table_lookup(store->by_gvr, gvr) == res)
		g_hash_table_remove(store->by_gvr, gvr);
	if (g_hash_table_lookup(store->by_kind, kind) == res)
		g_hash_table_remove(store->by_kind, kind);
	res->removed = TRUE;
	g_ptr_array_remove(store->resources, res);
}

void
kubesim_store_reset(KubesimStore *store, guint64 rv)
{
	guint i = 0;

	while (i < store->resources->len) {
		KubesimResource *res = g_ptr_array_index(store->resources, i);
		g_tree_remove_all(res->objects);
		if (res->crd_name != NULL)
			unregister_resource(store, res);
		else
			i++;
	}
	g_queue_clear_full(&store->history, (GDestroyNotify)event_free);
	store->rv = rv;
	store->history_floor = rv;
	store->epoch++;
}

guint
kubesim_store_get_epoch(KubesimStore *store)
{
	return store->epoch;
}

typedef struct {
	gchar *gvr;
	GPtrArray *objects; /* KubesimObject */
} SnapshotEntry;

struct _KubesimSnapshot {
	guint64 rv;
	GPtrArray *entries; /* SnapshotEntry, the resources in registration order */
};

static void
snapshot_entry_free(gpointer data)
{
	SnapshotEntry *entry = data;

	g_free(entry->gvr);
	g_ptr_array_unref(entry->objects);
	g_free(entry);
}

static gboolean collect_object(gpointer key, gpointer value, gpointer data);

KubesimSnapshot *
kubesim_store_snapshot(KubesimStore *store)
{
	KubesimSnapshot *snapshot = g_new0(KubesimSnapshot, 1);
	guint i;

	snapshot->rv = store->rv;
	snapshot->entries = g_ptr_array_new_with_free_func(snapshot_entry_free);
	for (i = 0; i < store->resources->len; i++) {
		KubesimResource *res = g_ptr_array_index(store->resources, i);
		SnapshotEntry *entry = g_new0(SnapshotEntry, 1);
		entry->gvr = gvr_key(res->group, res->version, res->resource);
		entry->objects = g_ptr_array_new_full(g_tree_nnodes(res->objects),
		                                      (GDestroyNotify)kubesim_object_unref);
		g_tree_foreach(res->objects, collect_object, entry->objects);
		g_ptr_array_add(snapshot->entries, entry);
	}
	return snapshot;
}

void
kubesim_snapshot_free(KubesimSnapshot *snapshot)
{
	g_ptr_array_unref(snapshot->entries);
	g_free(snapshot);
}

guint64
kubesim_snapshot_get_rv(KubesimSnapshot *snapshot)
{
	return snapshot->rv;
}

guint
kubesim_snapshot_count_objects(KubesimSnapshot *snapshot)
{
	guint i, n = 0;

	for (i = 0; i < snapshot->entries->len; i++)
		n += ((SnapshotEntry *)g_ptr_array_index(snapshot->entries, i))->objects->len;
	return n;
}

static void
restore_entry(KubesimStore *store, SnapshotEntry *entry, gboolean crds)
{
	KubesimResource *res = g_hash_table_lookup(store->by_gvr, entry->gvr);
	guint i;

	/* a resource of a CRD the snapshot does not have is not served, and its objects go */
	if (res == NULL)
		return;
	for (i = 0; i < entry->objects->len; i++) {
		KubesimObject *obj = g_ptr_array_index(entry->objects, i);
		g_tree_replace(res->objects, obj->key, kubesim_object_ref(obj));
		if (crds)
			kubesim_crd_register(store, obj);
	}
}

void
kubesim_store_restore(KubesimStore *store, KubesimSnapshot *snapshot, guint64 bump)
{
	g_autofree gchar *crds = gvr_key("apiextensions.k8s.io", "v1", "customresourcedefinitions");
	guint i;

	kubesim_store_reset(store, snapshot->rv + bump);
	/* the CRDs first: they make the resources their objects belong to */
	for (i = 0; i < snapshot->entries->len; i++) {
		SnapshotEntry *entry = g_ptr_array_index(snapshot->entries, i);
		if (g_strcmp0(entry->gvr, crds) == 0)
			restore_entry(store, entry, TRUE);
	}
	for (i = 0; i < snapshot->entries->len; i++) {
		SnapshotEntry *entry = g_ptr_array_index(snapshot->entries, i);
		if (g_strcmp0(entry->gvr, crds) != 0)
			restore_entry(store, entry, FALSE);
	}
}

guint
kubesim_store_count_objects(KubesimStore *store)
{
	guint i, n = 0;

	for (i = 0; i < store->resources->len; i++) {
		KubesimResource *res = g_ptr_array_index(store->resources, i);
		n += g_tree_nnodes(res->objects);
	}
	return n;
}

void
kubesim_store_replay(KubesimStore *store, guint64 rv, KubesimEventFunc func, gpointer data)
{
	GList *l;

	/* walk back to the first event newer than @rv, then forward */
	for (l = store->history.tail; l != NULL && ((KubesimEvent *)l->data)->object->rv > rv;
	     l = l->prev)
		;
	l = l != NULL ? l->next : store->history.head;
	for (; l != NULL; l = l->next)
		func(l->data, data);
}

static gchar *
gvr_key(const gchar *group, const gchar *version, const gchar *resource)
{
	return g_strdup_printf("%s/%s/%s", group, version, resource);
}

KubesimResource *
kubesim_store_add_resource(KubesimStore *store, KubesimResource *res)
{
	KubesimResource *copy = g_rc_box_new0(KubesimResource);

	*copy = *res;
	copy->group = g_strdup(res->group != NULL ? res->group : "");
	copy->version = g_strdup(res->version);
	copy->api_version = copy->group[0] != '\0'
	                            ? g_strdup_printf("%s/%s", copy->group, copy->version)
	                            : g_strdup(copy->version);
	copy->resource = g_strdup(res->resource);
	copy->singular = g_strdup(res->singular);
	copy->kind = g_strdup(res->kind);
	copy->list_kind = res->list_kind != NULL ? g_strdup(res->list_kind)
	                                         : g_strdup_printf("%sList", res->kind);
	copy->short_names = g_strdupv(res->short_names);
	copy->categories = g_strdupv(res->categories);
	copy->subresources = g_strdupv(res->subresources);
	copy->crd_name = g_strdup(res->crd_name);
	copy->removed = FALSE;
	copy->pack_dict = NULL;
	copy->objects =
	        g_tree_new_full(key_compare, NULL, NULL, (GDestroyNotify)kubesim_object_unref);
	g_ptr_array_add(store->resources, copy);
	g_hash_table_replace(store->by_gvr, gvr_key(copy->group, copy->version, copy->resource),
	                     copy);
	g_hash_table_replace(store->by_kind,
	                     g_strdup_printf("%s/%s", copy->api_version, copy->kind), copy);
	return copy;
}

GPtrArray *
kubesim_store_get_resources(KubesimStore *store)
{
	return store->resources;
}

KubesimResource *
kubesim_store_lookup(KubesimStore *store,
                     const gchar *group,
                     const gchar *version,
                     const gchar *resource)
{
	g_autofree gchar *key = gvr_key(group, version, resource);

	return g_hash_table_lookup(store->by_gvr, key);
}

KubesimResource *
kubesim_store_lookup_kind(KubesimStore *store, const gchar *api_version, const gchar *kind)
{
	g_autofree gchar *key = g_strdup_printf("%s/%s", api_version, kind);

	return g_hash_table_lookup(store->by_kind, key);
}

static void
emit(KubesimStore *store, KubesimEventType type, KubesimResource *res, KubesimObject *obj);

static gboolean
collect_object(gpointer key, gpointer value, gpointer data)
{
	g_ptr_array_add(data, kubesim_object_ref(value));
	return FALSE;
}

void
kubesim_store_remove_resource(KubesimStore *store, KubesimResource *res)
{
	g_autoptr(GPtrArray) objs =
	        g_ptr_array_new_with_free_func((GDestroyNotify)kubesim_object_unref);
	guint i;

	g_tree_foreach(res->objects, collect_object, objs);
	for (i = 0; i < objs->len; i++) {
		KubesimObject *obj = g_ptr_array_index(objs, i);
		g_autoptr(KubesimObject) gone G_GNUC_UNUSED =
		        kubesim_store_delete(store, res, obj->namespace_, obj->name, NULL);
	}
	unregister_resource(store, res);
}

static void
emit(KubesimStore *store, KubesimEventType type, KubesimResource *res, KubesimObject *obj)
{
	KubesimEvent *ev;

	if (store->silent)
		return;
	ev = g_new0(KubesimEvent, 1);
	ev->type = type;
	ev->resource = kubesim_resource_ref(res);
	ev->object = kubesim_object_ref(obj);
	g_queue_push_tail(&store->history, ev);
	while (store->history.length > store->history_max) {
		KubesimEvent *old = g_queue_pop_head(&store->history);
		store->history_floor = old->object->rv;
		event_free(old);
	}
	if (store->listener != NULL)
		store->listener(ev, store->listener_data);
}

static KubesimResource *
resource_for_info(KubesimStore *store, ObjectInfo *info, KubesimStatus **status_out)
{
	KubesimResource *res;

	if (info->api_version == NULL || info->kind == NULL) {
		*status_out = kubesim_status_new(400, "BadRequest",
		                                 "the object has no apiVersion or kind");
		return NULL;
	}
	res = kubesim_store_lookup_kind(store, info->api_version, info->kind);
	if (res == NULL) {
		*status_out = kubesim_status_new(404, "NotFound",
		                                 "the server could not find the requested resource "
		                                 "(kind %s in %s)",
		                                 info->kind, info->api_version);
		return NULL;
	}
	return res;
}

KubesimResource *
kubesim_store_resource_for(KubesimStore *store, GBytes *json, KubesimStatus **status_out)
{
	g_auto(ObjectInfo) info = {0};

	if (!object_info_parse(json, &info)) {
		*status_out =
		        kubesim_status_new(400, "BadRequest", "the object is not a JSON object");
		return NULL;
	}
	return resource_for_info(store, &info, status_out);
}

/* Core-group kinds keep no metadata.generation (pods only from 1.33 on), but for
 * ReplicationControllers; every other group's kinds, custom resources included, do. */
static gboolean
resource_has_generation(KubesimResource *res)
{
	return res->group[0] != '\0' || g_strcmp0(res->resource, "replicationcontrollers") == 0;
}

static KubesimObject *
make_object(KubesimResource *res,
            GBytes *json,
            ObjectInfo *info,
            guint64 rv,
            gsize rv_off,
            gsize rv_len)
{
	KubesimObject *obj = g_rc_box_new0(KubesimObject);

	obj->namespace_ = res->namespaced ? g_strdup(info->namespace_) : NULL;
	obj->name = g_strdup(info->name);
	obj->key = kubesim_resource_key(res, obj->namespace_, obj->name);
	obj->uid = g_strdup(info->uid);
	obj->rv = rv;
	if (info->labels != NULL)
		obj->labels = g_memdup2(info->labels->str, info->labels->len + 1);
	object_set_json(res, obj, json);
	obj->rv_off = rv_off;
	obj->rv_len = rv_len;
	if (res->crd_name == NULL)
		obj->item_off = kubesim_object_json_item_offset(g_bytes_get_data(json, NULL),
		                                                g_bytes_get_size(json));
	return obj;
}

typedef enum {
	WRITE_CREATE,
	WRITE_UPDATE,
	WRITE_UPSERT,
	WRITE_LOAD, /* an upsert of JSON known to be compact already */
} WriteMode;

static gchar *
random_suffix(void)
{
	static const gchar alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
	gchar s[6];
	guint i;

	for (i = 0; i < 5; i++)
		s[i] = alphabet[g_random_int_range(0, sizeof(alphabet) - 1)];
	s[5] = '\0';
	return g_strdup(s);
}

static KubesimObject *
store_write(KubesimStore *store,
            KubesimResource *res,
            GBytes *json_in,
            WriteMode mode,
            gboolean check_rv,
            KubesimStatus **status_out)
{
	g_autoptr(GBytes) json = NULL;
	g_autoptr(GBytes) out = NULL;
	g_autoptr(GBytes) old_json = NULL;
	g_auto(ObjectInfo) info = {0};
	g_auto(ObjectInfo) old_info = {0};
	KubesimObject *old = NULL;
	KubesimObject *obj;
	KubesimMetaEdit edits[7] = {{0}};
	guint n_edits = 0, i;
	gboolean created;
	gint64 generation = 0;
	guint64 rv = 0;
	gsize rv_off, rv_len;
	/* one tokenization serves both reading the object and rewriting its metadata */
	g_auto(MsdJsonTokens) doc = MSD_JSON_TOKENS_INIT;

	json = mode == WRITE_LOAD ? g_bytes_ref(json_in)
	                          : kubesim_json_compact(g_bytes_get_data(json_in, NULL),
	                                                 g_bytes_get_size(json_in));
	if (!msd_json_tokens_parse(&doc, g_bytes_get_data(json, NULL), g_bytes_get_size(json),
	                           NULL) ||
	    !object_info_read(&doc, &info)) {
		if (res == NULL)
			*status_out = kubesim_status_new(400, "BadRequest",
			                                 "the object is not a JSON object");
		else
			*status_out = kubesim_status_invalid(res->group, res->resource, "",
			                                     "the body is not a JSON object");
		return NULL;
	}
	if (res == NULL) {
		res = resource_for_info(store, &info, status_out);
		if (res == NULL)
			return NULL;
	}
	if (info.name == NULL && info.generate_name != NULL && mode != WRITE_UPDATE) {
		g_autofree gchar *suffix = random_suffix();
		info.name = g_strconcat(info.generate_name, suffix, NULL);
		edits[n_edits].key = "name";
		edits[n_edits++].value = json_quote(info.name);
	}
	if (info.name == NULL) {
		*status_out = kubesim_status_invalid(res->group, res->kind, "",
		                                     "metadata.name: Required value: name or "
		                                     "generateName is required");
		(*status_out)->cause_field = g_strdup("metadata.name");
		return NULL;
	}
	if (res->namespaced && info.namespace_ == NULL) {
		info.namespace_ = g_strdup("default");
		edits[n_edits].key = "namespace";
		edits[n_edits++].value = json_quote(info.namespace_);
	} else if (!res->namespaced && info.namespace_ != NULL) {
		edits[n_edits].key = "namespace";
		edits[n_edits++].value = NULL;
	}
	old = kubesim_resource_get(res, info.namespace_, info.name);
	if (mode == WRITE_CREATE && old != NULL) {
		*status_out = kubesim_status_new(409, "AlreadyExists",
		                                 "%s%s%s \"%s\" already exists", res->resource,
		                                 res->group[0] ? "." : "", res->group, info.name);
		kubesim_status_details(*status_out, res->group, res->resource, info.name);
		return NULL;
	}
	if (mode == WRITE_UPDATE && old == NULL) {
		*status_out = kubesim_status_not_found(res->group, res->resource, info.name);
		return NULL;
	}
	if (mode == WRITE_UPDATE && check_rv && info.rv != NULL && info.rv[0] != '\0' &&
	    g_ascii_strtoull(info.rv, NULL, 10) != old->rv) {
		*status_out = kubesim_status_new(
		        409, "Conflict",
		        "Operation cannot be fulfilled on %s%s%s \"%s\": the object has been "
		        "modified; please apply your changes to the latest version and try again",
		        res->resource, res->group[0] ? "." : "", res->group, info.name);
		kubesim_status_details(*status_out, res->group, res->resource, info.name);
		return NULL;
	}
	created = old == NULL;
	if (old != NULL) {
		old_json = kubesim_object_get_json(old);
		object_info_parse(old_json, &old_info);
	}
	if (store->manager != NULL && (mode != WRITE_LOAD || !info.has_managed_fields)) {
		/* the server records who wrote what; the rest of the write reads the result */
		KubesimManagedWrite write = {
		        .manager = store->manager,
		        .subresource = store->manager_subresource,
		        .api_version = res->api_version,
		        .typed = res->crd_name == NULL,
		        .status_ignored =
		                store->manager_subresource == NULL && res->subresources != NULL &&
		                g_strv_contains((const gchar *const *)res->subresources, "status"),
		        .time = g_get_real_time() / G_USEC_PER_SEC,
		};
		g_autoptr(GBytes) managed = kubesim_managed_fields_apply(json, old_json, &write);
		if (managed != NULL) {
			g_bytes_unref(json);
			json = g_steal_pointer(&managed);
			if (!msd_json_tokens_parse(&doc, g_bytes_get_data(json, NULL),
			                           g_bytes_get_size(json), NULL)) {
				*status_out =
				        kubesim_status_invalid(res->group, res->kind, info.name,
				                               "the body is not a JSON object");
				return NULL;
			}
		}
	}

	/* identity and creation time survive updates; loaders may bring their own */
	if (!created && old_info.uid != NULL) {
		edits[n_edits].key = "uid";
		edits[n_edits++].value = json_quote(old_info.uid);
		g_free(info.uid);
		info.uid = g_strdup(old_info.uid);
	} else if (info.uid == NULL) {
		info.uid = g_uuid_string_random();
		edits[n_edits].key = "uid";
		edits[n_edits++].value = json_quote(info.uid);
	}
	if (!store->dry_run) {
		rv = ++store->rv;
		edits[n_edits].key = "resourceVersion";
		edits[n_edits++].value = g_strdup_printf("\"%" G_GUINT64_FORMAT "\"", rv);
	} else if (old != NULL) {
		rv = old->rv;
		edits[n_edits].key = "resourceVersion";
		edits[n_edits++].value = g_strdup_printf("\"%" G_GUINT64_FORMAT "\"", rv);
	}
	if (!created && old_info.creation != NULL) {
		edits[n_edits].key = "creationTimestamp";
		edits[n_edits++].value = json_quote(old_info.creation);
	} else if (info.creation == NULL) {
		g_autofree gchar *now = kubesim_now_rfc3339();
		edits[n_edits].key = "creationTimestamp";
		edits[n_edits++].value = json_quote(now);
	}
	/* generation counts spec changes, for the kinds that keep one */
	if (info.has_spec && resource_has_generation(res)) {
		if (created)
			generation = info.generation > 0 ? info.generation : 1;
		else if (old_info.spec_hash != info.spec_hash)
			generation = MAX(old_info.generation, 1) + 1;
		else
			generation = MAX(old_info.generation, 1);
		edits[n_edits].key = "generation";
		edits[n_edits++].value = g_strdup_printf("%" G_GINT64_FORMAT, generation);
	}
	out = kubesim_object_json_rewrite_doc(&doc, res->crd_name == NULL, edits, n_edits, &rv_off,
	                                      &rv_len);
	for (i = 0; i < n_edits; i++)
		g_free(edits[i].value);
	if (out == NULL) {
		*status_out = kubesim_status_invalid(res->group, res->kind, info.name,
		                                     "the body is not a JSON object");
		return NULL;
	}
	obj = make_object(res, out, &info, rv, rv_off, rv_len);
	if (store->dry_run)
		return obj;
	g_tree_replace(res->objects, obj->key, obj);
	if (created && res->crd_name == NULL &&
	    g_strcmp0(res->resource, "customresourcedefinitions") == 0)
		kubesim_crd_register(store, obj);
	emit(store, created ? KUBESIM_EVENT_ADDED : KUBESIM_EVENT_MODIFIED, res, obj);
	return kubesim_object_ref(obj);
}

KubesimObject *
kubesim_store_create(KubesimStore *store,
                     KubesimResource *res,
                     GBytes *json,
                     KubesimStatus **status_out)
{
	return store_write(store, res, json, WRITE_CREATE, FALSE, status_out);
}

KubesimObject *
kubesim_store_update(KubesimStore *store,
                     KubesimResource *res,
                     GBytes *json,
                     gboolean check_rv,
                     KubesimStatus **status_out)
{
	return store_write(store, res, json, WRITE_UPDATE, check_rv, status_out);
}

KubesimObject *
kubesim_store_upsert(KubesimStore *store,
                     KubesimResource *res,
                     GBytes *json,
                     KubesimStatus **status_out)
{
	return store_write(store, res, json, WRITE_UPSERT, FALSE, status_out);
}

KubesimObject *
kubesim_store_load(KubesimStore *store, GBytes *json, KubesimStatus **status_out)
{
	return store_write(store, NULL, json, WRITE_LOAD, FALSE, status_out);
}

/*
 * A copy of @obj at the store's next resourceVersion: the same JSON but for @splices and that
 * value, which is spliced in where it is known to be, as kubesim_object_json_rewrite() would write
 * it. Everything is copied once, in offset order.
 */
static KubesimObject *
object_new_version(KubesimStore *store,
                   KubesimResource *res,
                   KubesimObject *obj,
                   const KubesimSplice *splices,
                   guint n_splices,
                   const gchar *text)
{
	KubesimObject *copy = g_rc_box_new0(KubesimObject);
	gchar value[32];
	gsize value_len, len, total, pos = 0, o = 0;
	g_autoptr(GBytes) json = kubesim_object_get_json(obj);
	g_autoptr(GBytes) made = NULL;
	const gchar *js = g_bytes_get_data(json, &len);
	gboolean rv_pending = obj->rv_len > 0;
	gchar *data;
	guint i = 0;

	store->rv++;
	value_len = g_snprintf(value, sizeof(value), "\"%" G_GUINT64_FORMAT "\"", store->rv);
	total = len;
	for (i = 0; i < n_splices; i++)
		total = total - splices[i].length + splices[i].text_len;
	if (rv_pending)
		total = total - obj->rv_len + value_len;
	data = g_malloc(total + 1);
	i = 0;
	for (;;) {
		gsize next = i < n_splices ? splices[i].offset : len;
		if (rv_pending && obj->rv_off <= next) {
			memcpy(data + o, js + pos, obj->rv_off - pos);
			o += obj->rv_off - pos;
			copy->rv_off = o;
			copy->rv_len = value_len;
			memcpy(data + o, value, value_len);
			o += value_len;
			pos = obj->rv_off + obj->rv_len;
			rv_pending = FALSE;
		} else if (i < n_splices) {
			memcpy(data + o, js + pos, next - pos);
			o += next - pos;
			memcpy(data + o, text + splices[i].text_off, splices[i].text_len);
			o += splices[i].text_len;
			pos = next + splices[i].length;
			i++;
		} else {
			break;
		}
	}
	memcpy(data + o, js + pos, len - pos);
	o += len - pos;
	g_assert(o == total);
	data[o] = '\0';
	made = g_bytes_new_take(data, o);
	if (obj->rv_len == 0) {
		KubesimMetaEdit edit = {"resourceVersion", value, FALSE};
		GBytes *spliced = made;
		made = kubesim_object_json_rewrite(spliced, obj->item_off > 0, &edit, 1,
		                                   &copy->rv_off, &copy->rv_len);
		g_bytes_unref(spliced);
	}
	if (obj->item_off > 0)
		copy->item_off = kubesim_object_json_item_offset(g_bytes_get_data(made, NULL),
		                                                 g_bytes_get_size(made));
	object_set_json(res, copy, made);
	copy->key = g_strdup(obj->key);
	copy->namespace_ = g_strdup(obj->namespace_);
	copy->name = g_strdup(obj->name);
	copy->uid = g_strdup(obj->uid);
	copy->rv = store->rv;
	if (obj->labels != NULL) {
		const gchar *p = obj->labels;
		while (*p != '\0')
			p += strlen(p) + 1, p += strlen(p) + 1;
		copy->labels = g_memdup2(obj->labels, p - obj->labels + 1);
	}
	return copy;
}

KubesimObject *
kubesim_store_add(KubesimStore *store,
                  KubesimResource *res,
                  GBytes *json,
                  const gchar *ns,
                  const gchar *name,
                  const gchar *uid,
                  const gchar *labels,
                  gsize labels_len,
                  gsize rv_off,
                  gsize rv_len)
{
	KubesimObject *obj;
	g_autofree gchar *key = kubesim_resource_key(res, ns, name);
	gchar value[32];
	gsize value_len, len;
	const gchar *js = g_bytes_get_data(json, &len);
	gchar *data;

	g_return_val_if_fail(rv_off + rv_len <= len, NULL);
	/* a CRD must go through store_write(), which registers its resource */
	g_return_val_if_fail(g_strcmp0(res->resource, "customresourcedefinitions") != 0, NULL);
	if (g_tree_lookup(res->objects, key) != NULL)
		return NULL;
	store->rv++;
	value_len = g_snprintf(value, sizeof(value), "\"%" G_GUINT64_FORMAT "\"", store->rv);
	data = g_malloc(len - rv_len + value_len + 1);
	memcpy(data, js, rv_off);
	memcpy(data + rv_off, value, value_len);
	memcpy(data + rv_off + value_len, js + rv_off + rv_len, len - rv_off - rv_len);
	data[len - rv_len + value_len] = '\0';

	obj = g_rc_box_new0(KubesimObject);
	obj->namespace_ = res->namespaced ? g_strdup(ns) : NULL;
	obj->name = g_strdup(name);
	obj->key = g_steal_pointer(&key);
	obj->uid = g_strdup(uid);
	obj->rv = store->rv;
	if (labels != NULL && labels_len > 0) {
		obj->labels = g_malloc(labels_len + 1);
		memcpy(obj->labels, labels, labels_len);
		obj->labels[labels_len] = '\0';
	}
	obj->rv_off = rv_off;
	obj->rv_len = value_len;
	if (res->crd_name == NULL)
		obj->item_off = kubesim_object_json_item_offset(data, len - rv_len + value_len);
	{
		g_autoptr(GBytes) made = g_bytes_new_take(data, len - rv_len + value_len);
		object_set_json(res, obj, made);
	}
	g_tree_replace(res->objects, obj->key, obj);
	emit(store, KUBESIM_EVENT_ADDED, res, obj);
	return kubesim_object_ref(obj);
}

static gboolean
splices_valid(KubesimObject *obj, const KubesimSplice *splices, guint n_splices)
{
	gsize len = obj->json_len;
	gsize end = 0;
	guint i;

	for (i = 0; i < n_splices; i++) {
		const KubesimSplice *sp = &splices[i];
		if (sp->offset < end || sp->offset + sp->length > len)
			return FALSE;
		/* the resourceVersion is the store's to write */
		if (obj->rv_len > 0 && sp->offset < obj->rv_off + obj->rv_len &&
		    sp->offset + sp->length > obj->rv_off)
			return FALSE;
		end = sp->offset + sp->length;
	}
	return TRUE;
}

KubesimObject *
kubesim_store_modify(KubesimStore *store,
                     KubesimResource *res,
                     KubesimObject *obj,
                     const KubesimSplice *splices,
                     guint n_splices,
                     const gchar *text)
{
	KubesimObject *copy;

	g_return_val_if_fail(splices_valid(obj, splices, n_splices), NULL);
	copy = object_new_version(store, res, obj, splices, n_splices, text);
	g_tree_replace(res->objects, copy->key, copy);
	emit(store, KUBESIM_EVENT_MODIFIED, res, copy);
	return kubesim_object_ref(copy);
}

KubesimObject *
kubesim_store_touch(KubesimStore *store, KubesimResource *res, KubesimObject *obj)
{
	return kubesim_store_modify(store, res, obj, NULL, 0, NULL);
}

static gpointer
copy_resource_ref(gconstpointer src, gpointer data)
{
	return kubesim_resource_ref((KubesimResource *)src);
}

static void
delete_namespace_contents(KubesimStore *store, const gchar *ns)
{
	g_autoptr(GPtrArray) resources =
	        g_ptr_array_copy(store->resources, copy_resource_ref, NULL);
	g_autofree gchar *prefix = g_strdup_printf("%s/", ns);
	gsize prefix_len = strlen(prefix);
	guint i, j;

	g_ptr_array_set_free_func(resources, (GDestroyNotify)kubesim_resource_unref);
	for (i = 0; i < resources->len; i++) {
		KubesimResource *res = g_ptr_array_index(resources, i);
		g_autoptr(GPtrArray) objs = NULL;
		GTreeNode *node;
		if (!res->namespaced)
			continue;
		objs = g_ptr_array_new_with_free_func((GDestroyNotify)kubesim_object_unref);
		for (node = g_tree_lower_bound(res->objects, prefix); node != NULL;
		     node = g_tree_node_next(node)) {
			KubesimObject *obj = g_tree_node_value(node);
			if (strncmp(obj->key, prefix, prefix_len) != 0)
				break;
			g_ptr_array_add(objs, kubesim_object_ref(obj));
		}
		for (j = 0; j < objs->len; j++) {
			KubesimObject *obj = g_ptr_array_index(objs, j);
			g_autoptr(KubesimObject) gone G_GNUC_UNUSED =
			        kubesim_store_delete(store, res, obj->namespace_, obj->name, NULL);
		}
	}
}

KubesimObject *
kubesim_store_delete(KubesimStore *store,
                     KubesimResource *res,
                     const gchar *ns,
                     const gchar *name,
                     KubesimStatus **status_out)
{
	g_autoptr(KubesimResource) res_ref G_GNUC_UNUSED = kubesim_resource_ref(res);
	KubesimObject *old = kubesim_resource_get(res, ns, name);
	KubesimObject *last;

	if (old == NULL) {
		if (status_out != NULL)
			*status_out = kubesim_status_not_found(res->group, res->resource, name);
		return NULL;
	}
	last = object_new_version(store, res, old, NULL, 0, NULL);
	g_tree_remove(res->objects, last->key);
	emit(store, KUBESIM_EVENT_DELETED, res, last);
	if (res->crd_name == NULL && g_strcmp0(res->resource, "customresourcedefinitions") == 0)
		kubesim_crd_unregister(store, last);
	if (res->crd_name == NULL && g_strcmp0(res->resource, "namespaces") == 0 &&
	    res->group[0] == '\0')
		delete_namespace_contents(store, last->name);
	return last;
}
