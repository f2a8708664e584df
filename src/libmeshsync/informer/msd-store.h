/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib-object.h>

#include "informer/msd-store-codec.h"
#include "util/msd-json-tokens.h"

G_BEGIN_DECLS

/*
 * One cached object: its compact JSON with metadata.managedFields cut out, and the few fields
 * the informer and the filters need without parsing again. Reference counted, so a snapshot
 * can outlive later changes to the store; a compressing store compresses an entry's JSON when
 * it takes the entry, before anyone else can see it, and nothing changes it after that. The
 * JSON is read with msd_store_entry_dup_object(), the one place that decompresses.
 */
typedef struct {
	GBytes *json;        /* (owned) (nullable): the JSON, unless @compressed */
	guint8 *frame;       /* (owned) (nullable): its zstd frame, when @compressed */
	gsize held_size;     /* what the entry holds of the object: @size, or the frame's */
	MsdStoreDict *dict;  /* (owned) (nullable): the dictionary @frame was compressed with */
	gsize size;          /* the JSON's length */
	gboolean compressed; /* @frame, not @json: read through msd_store_entry_dup_object() */
	/* the strings are in the entry's own allocation, after it: read-only */
	gchar *uid;        /* metadata.uid, or "<namespace>/<name>" without one */
	gchar *namespace_; /* "" for cluster-scoped objects */
	gchar *name;
	gchar *resource_version; /* opaque, compared for equality only */
	guint32 relist_mark;     /* the store's own: the relist that last saw this object */
} MsdStoreEntry;

/* Builds an entry from the object at token @index. When @kind and @api_version are given and
 * the object lacks those members (items of a list do), they are put in front, so that list
 * items and watch objects reach consumers in the same shape. */
MsdStoreEntry *msd_store_entry_new_from_tokens(const MsdJsonTokens *tokens,
                                               guint index,
                                               const gchar *kind,
                                               const gchar *api_version,
                                               GError **error);
/* Builds a shallow type's entry from the object at token @index, whole or metadata-only:
 * `{"kind":@kind,"apiVersion":@api_version,"metadata":{...},"spec":{},"status":{}}`, the
 * metadata without managedFields. */
MsdStoreEntry *msd_store_entry_new_metadata_from_tokens(const MsdJsonTokens *tokens,
                                                        guint index,
                                                        const gchar *kind,
                                                        const gchar *api_version,
                                                        GError **error);
MsdStoreEntry *msd_store_entry_new_from_json(const gchar *data, gsize length, GError **error);
MsdStoreEntry *msd_store_entry_ref(MsdStoreEntry *entry);
/* (transfer full): the compact JSON, decompressed when it is held compressed */
GBytes *msd_store_entry_dup_object(const MsdStoreEntry *entry);
void msd_store_entry_unref(MsdStoreEntry *entry);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsdStoreEntry, msd_store_entry_unref)

typedef enum {
	MSD_STORE_UNCHANGED, /* same resourceVersion as the stored copy: not an update */
	MSD_STORE_ADDED,
	MSD_STORE_MODIFIED,
} MsdStoreChange;

#define MSD_TYPE_STORE (msd_store_get_type())
G_DECLARE_FINAL_TYPE(MsdStore, msd_store, MSD, STORE, GObject)

MsdStore *msd_store_new(void);
/* Compress the objects stored from now on (zstd, with a dictionary trained from this store's
 * first objects). Objects stored before stay as they are. */
void msd_store_set_compressed(MsdStore *self, gboolean compressed);
gboolean msd_store_get_compressed(MsdStore *self);

/* Stores @entry (a reference is taken). On MSD_STORE_UNCHANGED the stored entry stays. */
MsdStoreChange msd_store_upsert(MsdStore *self, MsdStoreEntry *entry);

/* Removes the object with @uid; returns its last stored entry (transfer full), or NULL if it
 * was not stored. */
MsdStoreEntry *msd_store_delete(MsdStore *self, const gchar *uid);

/* Makes the store hold exactly @entries (a relist) and reports the difference: (element-type
 * MsdStoreEntry) arrays, each with its own references; @deleted holds the last known entries,
 * @added and @modified the new ones in the order of @entries. Any out parameter may be NULL. */
void msd_store_replace_all(MsdStore *self,
                           GPtrArray *entries,
                           GPtrArray **added,
                           GPtrArray **modified,
                           GPtrArray **deleted);

/*
 * A relist applied object by object, as its pages (or streaming-list events) arrive, so that
 * nothing waits for the whole list in memory: begin, then upsert every listed object with
 * msd_store_relist_upsert() (which marks it as seen), then end, which removes and returns every
 * stored object the list did not contain. An aborted relist (a failed page) removes nothing;
 * what it upserted stays, as it was reported.
 */
void msd_store_begin_relist(MsdStore *self);
/* msd_store_upsert() for a listed object. When another stored object (another uid) holds the
 * same namespace and name and the relist has not seen it, it was deleted and recreated while
 * nobody watched: it is removed and returned in @displaced (transfer full) so that its DELETED
 * reaches consumers, which key objects by name, before the new object's ADDED. */
MsdStoreChange
msd_store_relist_upsert(MsdStore *self, MsdStoreEntry *entry, MsdStoreEntry **displaced);
/* Whether @uid is stored at @resource_version already: an update that changes nothing, told
 * before the object is copied into an entry. @listed: the object comes from the relist, which
 * marks it as seen, as msd_store_relist_upsert() would. */
gboolean msd_store_check_unchanged(MsdStore *self,
                                   const gchar *uid,
                                   const gchar *resource_version,
                                   gboolean listed);
/* (transfer full) (element-type MsdStoreEntry): the objects the relist did not list, removed */
GPtrArray *msd_store_end_relist(MsdStore *self);
void msd_store_abort_relist(MsdStore *self);

/* (transfer none) (nullable) */
MsdStoreEntry *msd_store_lookup(MsdStore *self, const gchar *uid);
/* (transfer none) (nullable): @namespace_ is "" or NULL for cluster-scoped objects */
MsdStoreEntry *msd_store_lookup_by_name(MsdStore *self, const gchar *namespace_, const gchar *name);

guint msd_store_get_size(MsdStore *self);
/* What the stored objects take: their JSON, or their frames where compressed. */
guint64 msd_store_get_bytes_held(MsdStore *self);
/* The sum of the stored objects' JSON sizes, compressed or not. */
guint64 msd_store_get_json_bytes(MsdStore *self);
/* (transfer none) (nullable): the dictionary new objects are compressed with */
MsdStoreDict *msd_store_get_dict(MsdStore *self);

typedef void (*MsdStoreForeachFunc)(MsdStoreEntry *entry, gpointer user_data);
/* Calls @func for every entry in no particular order; @func must not change the store. */
void msd_store_foreach(MsdStore *self, MsdStoreForeachFunc func, gpointer user_data);
/* (transfer full) (element-type MsdStoreEntry): every entry, safe to keep while the store
 * changes. */
GPtrArray *msd_store_snapshot(MsdStore *self);

G_END_DECLS
