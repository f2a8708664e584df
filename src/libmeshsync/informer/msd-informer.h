/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

#include "engine/msd-engine-context.h"
#include "meshsync-api-resource.h"
#include "meshsync-event-type.h"
#include "kube/msd-kube-client.h"
#include "informer/msd-store.h"

G_BEGIN_DECLS

/*
 * One resource type's list + watch loop, after client-go's reflector: the initial state (a
 * streaming list where the server offers it, else a paginated list), then watches resumed from
 * the last resourceVersion, relists with reconciliation after an expiry or a broken stream,
 * and backoff on errors. Every change reaches the store first, then the event function (see
 * msd_informer_set_event_func()); updates whose resourceVersion equals the stored one are not
 * passed on. Signals:
 *
 *   synced (): once, when the initial state has been delivered.
 *   listed (previous resourceVersion, new one): a relist completed.
 *   watch-reopened (): a watch resumed at its resourceVersion after it broke or ended.
 *   denied (): once, when the server refuses the type (403/404) before it synced; the
 *     informer keeps retrying slowly.
 *
 * Signals are emitted in the thread-default main context the informer was started in.
 */
#define MSD_TYPE_INFORMER (msd_informer_get_type())
G_DECLARE_FINAL_TYPE(MsdInformer, msd_informer, MSD, INFORMER, GObject)

/* One change, valid for the duration of the call only. */
typedef struct {
	MeshSyncEventType type;
	/* the object's new state (for DELETED: its final state, from the server when it said so,
	 * else the last one stored) */
	MsdStoreEntry *entry;
	/* (nullable): the tokens @entry was cut from, with the object at token @index: the
	 * conversion reads them instead of parsing @entry again. NULL for objects found deleted
	 * by a relist, which only the store remembers. */
	const MsdJsonTokens *doc;
	gint index;
	/* (nullable): the tokens as the server sent them, with the object at @index: @doc, or for
	 * a shallow type the metadata-only object (its kind says PartialObjectMetadata, so the
	 * conversion never reads it, but its metadata is the object's) */
	const MsdJsonTokens *read;
	/* what the object is when it does not say (list items carry no kind and apiVersion) */
	const gchar *kind;
	const gchar *api_version;
	/* g_get_monotonic_time() when the watch line carrying the change was read, for the event
	 * latency; 0 for what a list brought (the initial state, a relist) */
	gint64 read_at;
} MsdInformerEvent;

typedef void (*MsdInformerEventFunc)(MsdInformer *informer,
                                     const MsdInformerEvent *event,
                                     gpointer user_data);

/* Asked before every relist (not before a run's first list): the informer waits until
 * msd_informer_open_gate() is called, or until it is stopped. */
typedef void (*MsdInformerGateFunc)(MsdInformer *informer, gpointer user_data);

typedef struct {
	guint64 relists;            /* lists (plain or streaming) started after the first one */
	guint64 watch_restarts;     /* watches reopened after one ended */
	guint64 watch_silences;     /* watches (or streaming lists) abandoned for silence */
	guint64 events;             /* changes passed on */
	guint64 errors;             /* failed requests, broken streams, ERROR events */
	guint64 skipped;            /* objects past a limit, left out */
	guint64 stream_bytes;       /* bytes of watch streams read (after any gzip is undone) */
	guint64 copied;             /* objects copied into store entries */
	guint64 unchanged;          /* objects at the stored resourceVersion: dropped uncopied */
	guint64 identity_checks;    /* kube-system uid reads: left at 0 by informers, summed by the
	                             * run setup that makes them */
	guint64 watch_list_changes; /* watch list changes applied to a run: 0 from informers, set
	                             * by the run setup that applies them */
} MsdInformerCounters;

MsdInformer *
msd_informer_new(MsdEngineContext *engine, MsdKubeClient *client, MeshSyncApiResource *resource);
MsdInformer *msd_informer_new_in_namespace(MsdEngineContext *engine,
                                           MsdKubeClient *client,
                                           MeshSyncApiResource *resource,
                                           const gchar *namespace_);
void msd_informer_set_event_func(MsdInformer *self,
                                 MsdInformerEventFunc func,
                                 gpointer user_data,
                                 GDestroyNotify destroy);

/* A shallow type (MESHSYNC_WATCH_DEPTH_SHALLOW): lists and watches ask the server for
 * metadata only (PartialObjectMetadata), and the store holds each object as its metadata with
 * an empty spec and status (msd_store_entry_new_metadata_from_tokens()), under the type's own
 * kind and apiVersion. Events then carry no tokens (@doc is NULL): the entry is the object.
 * Set before msd_informer_start(). */
void msd_informer_set_metadata_only(MsdInformer *self, gboolean metadata_only);
gboolean msd_informer_get_metadata_only(MsdInformer *self);

/* Starts listing; with the store kept from an earlier run, the first list reconciles it. */
void msd_informer_start(MsdInformer *self);
void msd_informer_set_gate_func(MsdInformer *self, MsdInformerGateFunc func, gpointer user_data);
/* Lets a relist waiting at the gate go on. */
void msd_informer_open_gate(MsdInformer *self);
/* Lists again from scratch now (through the gate), whatever the watch is doing. */
void msd_informer_relist(MsdInformer *self);
gboolean msd_informer_reconcile(MsdInformer *self);

/* Cancels everything in flight; no signal is emitted after it returns. Call it before
 * dropping the last reference: pending operations keep the informer alive. */
void msd_informer_stop(MsdInformer *self);

/* Stops reading the watch stream (and fetching list pages) until resumed: back-pressure. */
void msd_informer_pause(MsdInformer *self);
void msd_informer_resume(MsdInformer *self);
gboolean msd_informer_get_paused(MsdInformer *self);

gboolean msd_informer_get_synced(MsdInformer *self);
/* Seconds from msd_informer_start() to the initial state delivered; 0 before. */
gdouble msd_informer_get_sync_seconds(MsdInformer *self);
MsdStore *msd_informer_get_store(MsdInformer *self);
MeshSyncApiResource *msd_informer_get_resource(MsdInformer *self);
/* "pods.v1.", "deployments.v1.apps": how logs name the resource type. */
const gchar *msd_informer_get_name(MsdInformer *self);
const gchar *msd_informer_get_namespace(MsdInformer *self);
void msd_informer_set_shard(MsdInformer *self, guint index, guint total);
/* Objects the list that runs now (or ran last) brought so far. */
guint msd_informer_get_n_listed(MsdInformer *self);
/* (nullable): where the next watch resumes, the last resourceVersion seen */
const gchar *msd_informer_get_resource_version(MsdInformer *self);
void msd_informer_get_counters(MsdInformer *self, MsdInformerCounters *counters);

G_END_DECLS
