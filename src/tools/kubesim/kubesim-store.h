/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

#include "kubesim-pack.h"
#include "kubesim-status.h"

G_BEGIN_DECLS

/* One stored object: immutable once made, shared by the store and the event history. */
typedef struct {
	gchar *key; /* "ns/name", or "name" when cluster-scoped: the list order */
	gchar *namespace_;
	gchar *name;
	gchar *uid;
	guint64 rv;
	gchar *labels; /* "k\0v\0k\0v\0\0", NULL when none */
	/* The compact JSON of the whole object, @json_len bytes, packed with @dict when that is
	 * set (see kubesim-pack.h): read it with kubesim_object_get_json(). */
	GBytes *stored;
	KubesimPackDict *dict;
	gsize json_len;
	/* where the value of metadata.resourceVersion is in @json (quotes included); 0 if unknown
	 */
	gsize rv_off, rv_len;
	/* An item of a built-in type's list is "{" and @json from here on: it leaves out kind and
	 * apiVersion, as a real server's typed lists do. 0: the whole object (custom resources). */
	gsize item_off;
} KubesimObject;

KubesimObject *kubesim_object_ref(KubesimObject *obj);
/* The compact JSON of the whole object (unpacked, a NUL after it). */
GBytes *kubesim_object_get_json(const KubesimObject *obj);
/* The same JSON, appended to @out. */
void kubesim_object_append_json(const KubesimObject *obj, GString *out);
/* The object as an item of its list: with or without kind and apiVersion (see item_off). */
GBytes *kubesim_object_item_bytes(KubesimObject *obj);
void kubesim_object_unref(KubesimObject *obj);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(KubesimObject, kubesim_object_unref)
/* The value of label @key, or NULL. */
const gchar *kubesim_object_label(const KubesimObject *obj, const gchar *key);

/* A served resource (one group/version/plural) and its objects. */
typedef struct {
	gchar *group; /* "" for the core group */
	gchar *version;
	gchar *api_version; /* "v1" or "group/version" */
	gchar *resource;
	gchar *singular;
	gchar *kind;
	gchar *list_kind;
	gboolean namespaced;
	gchar **short_names;
	gchar **categories;
	gchar **subresources;       /* "status", "log", "exec", ... */
	gchar *crd_name;            /* the CRD that defines it, NULL for built-in types */
	gboolean removed;           /* its CRD was deleted: watches end */
	GTree *objects;             /* key → KubesimObject */
	KubesimPackDict *pack_dict; /* (nullable): what its objects are packed with from now on */
} KubesimResource;

KubesimResource *kubesim_resource_ref(KubesimResource *res);
void kubesim_resource_unref(KubesimResource *res);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(KubesimResource, kubesim_resource_unref)
KubesimObject *kubesim_resource_get(KubesimResource *res, const gchar *ns, const gchar *name);
gchar *kubesim_resource_key(KubesimResource *res, const gchar *ns, const gchar *name);

typedef enum {
	KUBESIM_EVENT_ADDED,
	KUBESIM_EVENT_MODIFIED,
	KUBESIM_EVENT_DELETED,
} KubesimEventType;

const gchar *kubesim_event_type_to_string(KubesimEventType type);

typedef struct {
	KubesimEventType type;
	KubesimResource *resource;
	KubesimObject *object; /* for DELETED: the last state, with the deletion's rv */
} KubesimEvent;

typedef void (*KubesimEventFunc)(const KubesimEvent *event, gpointer user_data);

typedef struct _KubesimStore KubesimStore;

KubesimStore *kubesim_store_new(guint history_max);
void kubesim_store_free(KubesimStore *store);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(KubesimStore, kubesim_store_free)

void kubesim_store_set_listener(KubesimStore *store, KubesimEventFunc func, gpointer user_data);
guint64 kubesim_store_get_rv(KubesimStore *store);
/* Events with rv ≤ this were dropped from the history: watches from older rvs get 410. */
guint64 kubesim_store_get_history_floor(KubesimStore *store);
/* Makes every rv so far unavailable to watches, as after a compaction. */
void kubesim_store_compact(KubesimStore *store);
guint kubesim_store_count_objects(KubesimStore *store);

/* While silent, writes change the store without events: no open watch hears of them and no
 * later watch replays them; only a list shows them. */
void kubesim_store_set_silent(KubesimStore *store, gboolean silent);

/*
 * The manager of the writes that follow, until set again (NULL: none), as the API server
 * records it in metadata.managedFields (see kubesim-managed.h): creates and updates get its
 * Update entry; loads only when the object brings no managedFields of its own. @subresource:
 * (nullable) "status" for writes to /status.
 */
void kubesim_store_set_field_manager(KubesimStore *store,
                                     const gchar *manager,
                                     const gchar *subresource);

/*
 * While set, creates and updates are checked and answered as usual but change nothing: no
 * object, resourceVersion, event or CRD registration comes of them (dryRun=All). A dry-run
 * create answers without a resourceVersion, a dry-run update with the stored one, as the API
 * server does.
 */
void kubesim_store_set_dry_run(KubesimStore *store, gboolean dry_run);

/*
 * Empties the store as a new etcd would be: every object goes without an event, the resources
 * CustomResourceDefinitions made are no longer served, the history is forgotten, and the
 * resourceVersion counter restarts at @rv (the next write gets @rv + 1). The built-in
 * resources stay registered.
 */
void kubesim_store_reset(KubesimStore *store, guint64 rv);

/* How many times the store was reset (replaced or restored): what others know of its objects
 * is stale when this changed. */
guint kubesim_store_get_epoch(KubesimStore *store);

/* The objects of every resource as of now and the counter, as in an etcd backup: references
 * only, but every object changed afterwards stays in memory while the snapshot lives. */
typedef struct _KubesimSnapshot KubesimSnapshot;
KubesimSnapshot *kubesim_store_snapshot(KubesimStore *store);
void kubesim_snapshot_free(KubesimSnapshot *snapshot);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(KubesimSnapshot, kubesim_snapshot_free)
guint64 kubesim_snapshot_get_rv(KubesimSnapshot *snapshot);
guint kubesim_snapshot_count_objects(KubesimSnapshot *snapshot);
/*
 * Puts the store back as @snapshot has it, as an etcd restored from that backup: the same
 * objects with their uids and resourceVersions, the custom resources their CRDs serve, the
 * counter where it was plus @bump (etcdutl's --bump-revision), and no history, so that every
 * resourceVersion up to the counter gets 410 from a watch.
 */
void kubesim_store_restore(KubesimStore *store, KubesimSnapshot *snapshot, guint64 bump);
/* Calls @func for every event newer than @rv still in the history, oldest first. */
void kubesim_store_replay(KubesimStore *store, guint64 rv, KubesimEventFunc func, gpointer data);

/* Registers a resource (built-in or from a CRD); returns the store's reference. */
KubesimResource *kubesim_store_add_resource(KubesimStore *store, KubesimResource *res);
/* Takes a resource out of service: its objects go (with DELETED events) and lookups fail. */
void kubesim_store_remove_resource(KubesimStore *store, KubesimResource *res);
GPtrArray *kubesim_store_get_resources(KubesimStore *store);
KubesimResource *kubesim_store_lookup(KubesimStore *store,
                                      const gchar *group,
                                      const gchar *version,
                                      const gchar *resource);
KubesimResource *
kubesim_store_lookup_kind(KubesimStore *store, const gchar *api_version, const gchar *kind);

/*
 * Writes. @json is one complete object (any JSON formatting). The store assigns uid,
 * creationTimestamp, generation and a new resourceVersion. A non-NULL @status_out says why a
 * write was refused (404, 409, 422, ...) and the return value is then NULL.
 */
KubesimObject *kubesim_store_create(KubesimStore *store,
                                    KubesimResource *res,
                                    GBytes *json,
                                    KubesimStatus **status_out);
/* @check_rv: a resourceVersion in @json that differs from the stored one gives 409 Conflict. */
KubesimObject *kubesim_store_update(KubesimStore *store,
                                    KubesimResource *res,
                                    GBytes *json,
                                    gboolean check_rv,
                                    KubesimStatus **status_out);
/* Creates, or replaces without any check: for manifests and the workload generator. */
KubesimObject *kubesim_store_upsert(KubesimStore *store,
                                    KubesimResource *res,
                                    GBytes *json,
                                    KubesimStatus **status_out);
KubesimObject *kubesim_store_delete(KubesimStore *store,
                                    KubesimResource *res,
                                    const gchar *ns,
                                    const gchar *name,
                                    KubesimStatus **status_out);
/* Creates or replaces an object of whatever resource its apiVersion and kind name: for loaders,
 * which thus have it read once. @json must be compact JSON (what the workload generator and
 * the manifest loader hand their sink). */
KubesimObject *kubesim_store_load(KubesimStore *store, GBytes *json, KubesimStatus **status_out);

/*
 * Adds an object its caller built and so knows the identity of, without reading its JSON:
 * @json is compact and complete (uid, creationTimestamp, ...) but for the value of
 * metadata.resourceVersion, a placeholder of @rv_len bytes (quotes included) at @rv_off.
 * @labels: "k\0v\0...", @labels_len bytes, as the JSON has them. An ADDED event, or NULL
 * when an object of that name exists.
 */
KubesimObject *kubesim_store_add(KubesimStore *store,
                                 KubesimResource *res,
                                 GBytes *json,
                                 const gchar *ns,
                                 const gchar *name,
                                 const gchar *uid,
                                 const gchar *labels,
                                 gsize labels_len,
                                 gsize rv_off,
                                 gsize rv_len);

/* Replaces @length bytes at @offset of a stored object's JSON with @text_len bytes at @text_off
 * of a text the caller keeps. */
typedef struct {
	gsize offset;
	gsize length;
	gsize text_off;
	gsize text_len;
} KubesimSplice;

/*
 * Stores a new version of @obj (a MODIFIED event): its JSON with @splices applied and a new
 * resourceVersion, in one copy and without parsing it again, which is what lets churn change
 * status at tens of thousands of events per second. @splices are in offset order, do not
 * overlap and leave metadata.resourceVersion, namespace, name, uid and labels alone; the
 * result must still be valid JSON.
 */
KubesimObject *kubesim_store_modify(KubesimStore *store,
                                    KubesimResource *res,
                                    KubesimObject *obj,
                                    const KubesimSplice *splices,
                                    guint n_splices,
                                    const gchar *text);
/* Re-stores @obj unchanged but for a new resourceVersion (a MODIFIED event). */
KubesimObject *kubesim_store_touch(KubesimStore *store, KubesimResource *res, KubesimObject *obj);

/* Finds the resource from the apiVersion and kind of @json. */
KubesimResource *
kubesim_store_resource_for(KubesimStore *store, GBytes *json, KubesimStatus **status_out);

/* RFC 3339 UTC timestamp of now, as Kubernetes writes it. */
gchar *kubesim_now_rfc3339(void);

G_END_DECLS
