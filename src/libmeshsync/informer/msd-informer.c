/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * One file for one state machine: list (streaming or paginated), watch, relist and backoff
 * share the informer's state (resourceVersion, the open stream, the relist in progress) and
 * hand over to each other at every step; split apart, each half would need the other's
 * private fields. The parts that stand alone live beside it: the store (msd-store.c) and the
 * line splitter (msd-line-splitter.c).
 */

#define G_LOG_DOMAIN "MeshSyncInformer"

#include "config.h"

#include <string.h>

#include "meshsync-enum-types.h"
#include "meshsync-error.h"
#include "informer/msd-informer-private.h"
#include "util/msd-json-tokens.h"
#include "informer/msd-line-splitter.h"
#include "util/msd-json-delimit.h"
#include "util/msd-i18n.h"
#include "util/msd-shard.h"
#include "util/msd-silence.h"
#include "util/msd-log.h"

/* Every line of an informer carries its type and namespace for collectors. */
#define msd_informer_log(self, level, ...) \
	msd_log((level), (self)->name, (self)->namespace_, NULL, __VA_ARGS__)

/* client-go's defaults: pages of 500, backoff 0.8 s doubling to 30 s; a type we may not list
 * is asked again rarely rather than hammered. A streaming list (sendInitialEvents) asks the
 * server to end it after 5 to 10 minutes, as client-go's watches do, since its initial events
 * alone may take minutes. */
#define MSD_INFORMER_PAGE_SIZE         500
#define MSD_INFORMER_BACKOFF_INITIAL   800
#define MSD_INFORMER_BACKOFF_MAX       30000
#define MSD_INFORMER_DENIED_RETRY      60000
#define MSD_INFORMER_WATCH_TIMEOUT_MIN 300
#define MSD_INFORMER_WATCH_TIMEOUT_MAX 600
/* A watch resumed from a resourceVersion asks the server to end it after 15 to 25 s, well
 * inside the silence bound below: a healthy connection then never stays silent for the bound,
 * even on a type that never changes, and the real API server sends a BOOKMARK 2 s before the
 * end it was asked for, so the resourceVersion stays fresh. The ended watch leaves its
 * connection in the pool and the next one reuses it: one request per type every 20 s or so,
 * served from the server's watch cache, no new connection, no TLS handshake. Spread over
 * 10 s so that the types do not come back in step. */
#define MSD_INFORMER_RESUMED_TIMEOUT_MIN 15
#define MSD_INFORMER_RESUMED_TIMEOUT_MAX 25
/* Limits on what one object may be: far beyond anything etcd stores (1.5 MiB per object by
 * default, 256 KiB of labels and annotations together), small enough that a hostile server
 * cannot make us hold much. An object past one is skipped and reported; its neighbours are
 * kept. A watch line holds one object plus its envelope. */
#define MSD_INFORMER_MAX_OBJECT (8 * 1024 * 1024)
#define MSD_INFORMER_MAX_LABELS 4096
#define MSD_INFORMER_MAX_LINE   (MSD_INFORMER_MAX_OBJECT + 64 * 1024)
#define MSD_INFORMER_READ_SIZE  (64 * 1024)
/* Reads that need no wait, handled in one main-loop turn before an async read */
#define MSD_INFORMER_READS_PER_TURN 16
/* A watch that ends this soon without a single event is a failure (client-go's
 * VeryShortWatchError), not a normal end: reopening it at once would spin. */
#define MSD_INFORMER_SHORT_WATCH_USEC G_USEC_PER_SEC
/* A connection that a NAT gateway or a firewall forgot drops our packets without a FIN or a
 * RST: the watch on it goes silent, not closed, and only the I/O timeout (minutes) would end
 * it. HTTP/1.1 has no ping, so silence itself is the signal: past this bound without a byte
 * the watch is abandoned and resumed at its resourceVersion, on a new connection. The real API
 * server sends a BOOKMARK to an idle watch only about once a minute (doc/durability.md),
 * longer than the 45 s a black hole may blind a type for; the short server-side end of
 * resumed watches (above) is what makes silence meaningful. Checked every few seconds rather
 * than re-armed per read, which would cost a source per read of a busy stream. */
#define MSD_INFORMER_SILENCE_USEC     (30 * G_USEC_PER_SEC)
#define MSD_INFORMER_SILENCE_CHECK_MS 3000

#define MSD_INFORMER_INITIAL_EVENTS_END "k8s.io/initial-events-end"

enum {
	SIGNAL_LISTED,
	SIGNAL_WATCH_REOPENED,
	SIGNAL_SYNCED,
	SIGNAL_DENIED,
	SIGNAL_RECONCILED,
	N_SIGNALS,
};

static guint signals[N_SIGNALS];

typedef enum {
	MSD_INFORMER_NEXT_LIST,
	MSD_INFORMER_NEXT_WATCH,
} MsdInformerNext;

struct _MsdInformer {
	GObject parent_instance;

	MsdEngineContext *engine;      /* (owned) */
	MsdKubeClient *client;         /* (owned) */
	MeshSyncApiResource *resource; /* (owned) */
	MsdStore *store;               /* (owned) */
	gchar *name;                   /* (owned): "pods.v1." */
	gchar *path;                   /* (owned): the collection, all namespaces or one */
	gchar *namespace_;             /* (owned) (nullable): NULL for all namespaces */

	/* one run, from start to stop */
	gboolean running;
	gboolean synced;
	gboolean paused;
	GCancellable *cancellable; /* (owned) (nullable): cancelled by stop */
	gchar *resource_version;   /* (owned) (nullable): where the next watch resumes */
	guint lists_started;
	guint n_listed;        /* objects the current list brought so far, for progress lines */
	GSource *timer_source; /* (owned) (nullable): the next list or watch, after a delay */
	guint backoff_ms;      /* the current backoff step; 0 after a success */
	gboolean denied_logged;
	gboolean watch_list_supported;
	gboolean metadata_only; /* a shallow type: metadata read, held and passed on */

	MsdInformerEventFunc event_func;
	gpointer event_data;
	GDestroyNotify event_destroy;
	MsdInformerGateFunc gate_func;
	gpointer gate_data;
	gboolean gated;     /* a relist waits for msd_informer_open_gate() */
	gchar *previous_rv; /* (owned) (nullable): where the type was before this relist */

	/* a reconciliation list in progress (msd_informer_reconcile) */
	gboolean reconciling;
	gchar *reconcile_rv;      /* (owned) (nullable): where the watch was, to go back to */
	guint reconcile_drift[3]; /* by MeshSyncEventType */

	/* a paginated list in progress */
	gboolean listing;
	gchar *list_rv;          /* (owned) (nullable) */
	gchar *pending_continue; /* (owned) (nullable): the next page, held while paused */

	/* the open watch */
	guint watch_id;                  /* tells a stale read's callback from the current one */
	GCancellable *watch_cancellable; /* (owned) (nullable) */
	GInputStream *stream;            /* (owned) (nullable) */
	MsdLineSplitter *splitter;       /* (owned) */
	gchar *read_buffer;              /* (owned) */
	gboolean reading;
	gboolean eof_pending;
	gboolean initial_events;   /* a streaming list before its end bookmark */
	gboolean watch_reopening;  /* a watch resumed at an old resourceVersion, not after a list */
	GSource *resume_source;    /* (owned) (nullable): reading again after a pause */
	GSource *silence_source;   /* (owned) (nullable): checks that the open watch still talks */
	gint64 heard_at;           /* monotonic µs: the watch's last bytes, or its headers */
	gint64 silence_checked_at; /* monotonic µs: the silence bound's last check */
	gboolean silence_resume;   /* the next watch follows a silent one: on a new connection */
	gboolean long_watch;       /* the open watch is a streaming list: the server ends it late */
	guint64 tail_from;         /* watch_events when the streaming list's initial events ended */
	guint64 watch_events;
	gint64 watch_started;
	gint64 line_read_at; /* monotonic µs: when the watch line being handled was read */
	MsdJsonTokens tokens;

	/* sharding: only objects whose uid hashes to shard_index of shard_total are held */
	guint shard_index;
	guint shard_total;
	gint64 started_at;    /* monotonic µs: msd_informer_start() */
	gdouble sync_seconds; /* from start to synced; 0 before */

	/* knobs */
	guint page_size;
	guint backoff_initial_ms;
	guint backoff_max_ms;
	guint denied_retry_ms;
	gsize max_line;
	gsize max_object;

	MsdInformerCounters counters;
};

G_DEFINE_FINAL_TYPE(MsdInformer, msd_informer, G_TYPE_OBJECT)

/* What an asynchronous call needs to know on return: whether it still belongs to the current
 * run (and watch), since stop and relists abandon calls in flight. */
typedef struct {
	MsdInformer *self;         /* (owned) */
	GCancellable *cancellable; /* (owned) */
	guint watch_id;
	MsdInformerNext next;  /* for a retry timer: what to do when it fires */
	gboolean continuation; /* for a list page: whether it continues an earlier page */
} MsdInformerOp;

static MsdInformerOp *
msd_informer_op_new(MsdInformer *self)
{
	MsdInformerOp *op = g_new0(MsdInformerOp, 1);

	op->self = g_object_ref(self);
	op->cancellable = g_object_ref(self->cancellable);
	op->watch_id = self->watch_id;
	return op;
}

static void
msd_informer_op_free(MsdInformerOp *op)
{
	g_object_unref(op->self);
	g_object_unref(op->cancellable);
	g_free(op);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsdInformerOp, msd_informer_op_free)

static gboolean
msd_informer_op_is_current(MsdInformerOp *op)
{
	MsdInformer *self = op->self;

	return self->running && op->cancellable == self->cancellable &&
	       !g_cancellable_is_cancelled(op->cancellable);
}

/* Nothing reads inside metadata.managedFields (the store cuts it, the model drops it): the
 * tokenizer checks it and gives it one token, for an object alone, the items of a list page
 * and the object of a watch line. */
static const MsdJsonSkip msd_informer_skip_item = {0, "metadata", "managedFields"};
static const MsdJsonSkip msd_informer_skip_page = {2, "metadata", "managedFields"};
static const MsdJsonSkip msd_informer_skip_line = {1, "metadata", "managedFields"};

static void msd_informer_list(MsdInformer *self);
static void msd_informer_fetch_page(MsdInformer *self, const gchar *continue_token);
static void msd_informer_watch(MsdInformer *self, gboolean initial);
static void msd_informer_pump(MsdInformer *self);

static MsdKubeRequestFlags
msd_informer_request_flags(MsdInformer *self)
{
	return self->metadata_only ? MSD_KUBE_REQUEST_METADATA : MSD_KUBE_REQUEST_DEFAULT;
}

/* Hands one change to the consumer while @doc (the watch line or list page it came from) is
 * still alive, so that the conversion reads the same tokens instead of parsing again.
 * @read_at is when its watch line was read, 0 for what a list brought. */
static void
msd_informer_emit(MsdInformer *self,
                  MeshSyncEventType type,
                  MsdStoreEntry *entry,
                  const MsdJsonTokens *doc,
                  gint index,
                  gint64 read_at)
{
	MsdInformerEvent event = {
	        .type = type,
	        .entry = entry,
	        /* a metadata-only object says PartialObjectMetadata: the entry says what it is */
	        .doc = self->metadata_only ? NULL : doc,
	        .index = index,
	        .read = doc,
	        .kind = meshsync_api_resource_get_kind(self->resource),
	        .api_version = meshsync_api_resource_get_group_version(self->resource),
	        .read_at = read_at,
	};

	self->counters.events++;
	if (self->reconciling)
		self->reconcile_drift[type]++;
	if (self->event_func != NULL)
		self->event_func(self, &event, self->event_data);
}

static void
msd_informer_close_watch(MsdInformer *self)
{
	/* cancelling a read in flight makes libsoup drop the connection rather than reuse it */
	if (self->watch_cancellable != NULL)
		g_cancellable_cancel(self->watch_cancellable);
	g_clear_object(&self->watch_cancellable);
	g_clear_object(&self->stream);
	msd_source_clear(&self->resume_source);
	msd_source_clear(&self->silence_source);
	msd_line_splitter_reset(self->splitter);
	self->watch_id++;
	self->reading = FALSE;
	self->eof_pending = FALSE;
	self->initial_events = FALSE;
}

static void
msd_informer_clear_list(MsdInformer *self)
{
	self->listing = FALSE;
	g_clear_pointer(&self->list_rv, g_free);
	g_clear_pointer(&self->pending_continue, g_free);
}

static void
msd_informer_set_resource_version(MsdInformer *self, const gchar *resource_version)
{
	if (resource_version == NULL || resource_version[0] == '\0')
		return;
	g_free(self->resource_version);
	self->resource_version = g_strdup(resource_version);
}

static gboolean
msd_informer_timer_cb(gpointer user_data)
{
	MsdInformerOp *op = user_data;
	MsdInformer *self = op->self;
	/* op stays alive until this returns: the source holds its callback data while it runs */
	msd_source_clear(&self->timer_source);
	if (!msd_informer_op_is_current(op))
		return G_SOURCE_REMOVE;
	if (op->next == MSD_INFORMER_NEXT_WATCH) {
		self->counters.watch_restarts++;
		self->watch_reopening = TRUE;
		msd_informer_watch(self, FALSE);
	} else {
		msd_informer_list(self);
	}
	return G_SOURCE_REMOVE;
}

static void
msd_informer_schedule(MsdInformer *self, MsdInformerNext next, guint delay_ms)
{
	MsdInformerOp *op = msd_informer_op_new(self);

	op->next = next;
	msd_source_clear(&self->timer_source);
	self->timer_source = msd_engine_context_add_timeout(
	        self->engine, G_PRIORITY_DEFAULT, delay_ms,
	        "[meshsync] informer next list or watch", msd_informer_timer_cb, op,
	        (GDestroyNotify)msd_informer_op_free);
}

/* Exponential backoff with jitter: the step doubles from the initial delay up to the cap, and
 * the delay is drawn uniformly from [step/2, step], so informers failing together spread out
 * while the cap stays an upper bound. */
static guint
msd_informer_next_backoff(MsdInformer *self)
{
	guint low;

	if (self->backoff_ms == 0)
		self->backoff_ms = self->backoff_initial_ms;
	else
		self->backoff_ms = MIN(self->backoff_ms * 2, self->backoff_max_ms);
	self->backoff_ms = MAX(self->backoff_ms, 1);
	low = self->backoff_ms / 2;
	return low + (guint)g_random_int_range(0, (gint32)(self->backoff_ms - low) + 1);
}

static void
msd_informer_backoff(MsdInformer *self, MsdInformerNext next)
{
	guint delay = msd_informer_next_backoff(self);

	msd_informer_log(self, G_LOG_LEVEL_DEBUG, "%s: retrying the %s in %u ms", self->name,
	                 next == MSD_INFORMER_NEXT_LIST ? "list" : "watch", delay);
	msd_informer_schedule(self, next, delay);
}

/* A request failed: 403/404 mean this type cannot be listed by us (or does not exist any
 * more), which a retry every few seconds would not fix; everything else backs off. */
/* A reconciliation's list failed: the tick is given up for this type and the watch goes on
 * from where it was, so a failed LIST never deletes anything. Returns FALSE when there was
 * no reconciliation to give up, or the watch cannot resume and a real relist is needed. */
static gboolean
msd_informer_abort_reconcile(MsdInformer *self, const GError *error)
{
	if (!self->reconciling)
		return FALSE;
	self->reconciling = FALSE;
	if (self->reconcile_rv == NULL ||
	    g_error_matches(error, MESHSYNC_ERROR, MESHSYNC_ERROR_GONE))
		return FALSE;
	g_info("%s: reconciliation list failed (%s): watching on from resourceVersion %s",
	       self->name, error->message, self->reconcile_rv);
	msd_informer_clear_list(self);
	g_free(self->resource_version);
	self->resource_version = g_steal_pointer(&self->reconcile_rv);
	msd_informer_schedule(self, MSD_INFORMER_NEXT_WATCH, 0);
	g_signal_emit(self, signals[SIGNAL_RECONCILED], 0, FALSE, 0u, 0u, 0u, 0u);
	return TRUE;
}

static void
msd_informer_fail(MsdInformer *self, const GError *error, MsdInformerNext next)
{
	self->counters.errors++;
	if (next == MSD_INFORMER_NEXT_LIST && msd_informer_abort_reconcile(self, error))
		return;
	if (g_error_matches(error, MESHSYNC_ERROR, MESHSYNC_ERROR_FORBIDDEN) ||
	    g_error_matches(error, MESHSYNC_ERROR, MESHSYNC_ERROR_NOT_FOUND)) {
		gboolean first = !self->denied_logged;

		if (first)
			msd_informer_log(
			        self, G_LOG_LEVEL_MESSAGE,
			        "%s: %s; retrying every %u s while other resources carry on",
			        self->name, error->message, self->denied_retry_ms / 1000);
		else
			msd_informer_log(self, G_LOG_LEVEL_DEBUG, "%s: still refused: %s",
			                 self->name, error->message);
		self->denied_logged = TRUE;
		msd_informer_schedule(self, MSD_INFORMER_NEXT_LIST, self->denied_retry_ms);
		/* Emitted last: a handler may stop the informer. */
		if (first && !self->synced)
			g_signal_emit(self, signals[SIGNAL_DENIED], 0);
		return;
	}
	msd_informer_log(self, G_LOG_LEVEL_INFO, "%s: %s", self->name, error->message);
	{
		/* never sooner than a Retry-After asked */
		guint delay = MAX(msd_informer_next_backoff(self),
		                  msd_kube_client_error_get_retry_after(error) * 1000);

		msd_informer_log(self, G_LOG_LEVEL_DEBUG, "%s: retrying the %s in %u ms",
		                 self->name, next == MSD_INFORMER_NEXT_LIST ? "list" : "watch",
		                 delay);
		msd_informer_schedule(self, next, delay);
	}
}

/* The list is complete: whatever the store holds that it did not contain was deleted while
 * nobody watched, and goes out as DELETED with its last known state. */
static void
msd_informer_finish_list(MsdInformer *self, const gchar *resource_version)
{
	g_autoptr(GPtrArray) deleted = msd_store_end_relist(self->store);

	msd_informer_set_resource_version(self, resource_version);
	self->backoff_ms = 0;
	self->denied_logged = FALSE;
	msd_informer_log(self, G_LOG_LEVEL_DEBUG,
	                 "%s: list complete at resourceVersion %s: %u held, %u deleted", self->name,
	                 resource_version != NULL ? resource_version : "",
	                 msd_store_get_size(self->store), deleted->len);
	for (guint i = 0; i < deleted->len && self->running; i++) {
		MsdStoreEntry *entry = g_ptr_array_index(deleted, i);

		g_debug("%s: %s/%s (uid %s, resourceVersion %s) is gone from the list", self->name,
		        entry->namespace_ != NULL ? entry->namespace_ : "", entry->name, entry->uid,
		        entry->resource_version);
		msd_informer_emit(self, MESHSYNC_EVENT_TYPE_DELETED, entry, NULL, -1, 0);
	}
	if (self->running && self->lists_started > 1)
		g_signal_emit(self, signals[SIGNAL_LISTED], 0, self->previous_rv,
		              self->resource_version);
	if (self->running && self->reconciling) {
		self->reconciling = FALSE;
		g_clear_pointer(&self->reconcile_rv, g_free);
		g_signal_emit(self, signals[SIGNAL_RECONCILED], 0, TRUE,
		              self->reconcile_drift[MESHSYNC_EVENT_TYPE_ADDED],
		              self->reconcile_drift[MESHSYNC_EVENT_TYPE_MODIFIED],
		              self->reconcile_drift[MESHSYNC_EVENT_TYPE_DELETED],
		              msd_store_get_size(self->store));
	}
	if (self->running && !self->synced) {
		self->synced = TRUE;
		self->sync_seconds =
		        (gdouble)(g_get_monotonic_time() - self->started_at) / G_USEC_PER_SEC;
		g_signal_emit(self, signals[SIGNAL_SYNCED], 0);
	}
}

/* One listed object (a list item or a streaming list's event), applied at once: the store
 * tells whether it is new or changed, and a namesake with another uid is reported deleted
 * first. Nothing of the list is held back until it ends, so memory follows one page. */
static void
msd_informer_apply_listed(MsdInformer *self, MsdStoreEntry *entry, gint index)
{
	g_autoptr(MsdStoreEntry) displaced = NULL;
	MsdStoreChange change = msd_store_relist_upsert(self->store, entry, &displaced);

	self->n_listed++;
	if (displaced != NULL)
		msd_informer_emit(self, MESHSYNC_EVENT_TYPE_DELETED, displaced, NULL, -1, 0);
	if (!self->running)
		return;
	if (change == MSD_STORE_ADDED)
		msd_informer_emit(self, MESHSYNC_EVENT_TYPE_ADDED, entry, &self->tokens, index, 0);
	else if (change == MSD_STORE_MODIFIED)
		msd_informer_emit(self, MESHSYNC_EVENT_TYPE_MODIFIED, entry, &self->tokens, index,
		                  0);
}

/* An object past a limit: skipped, counted and said, with whatever names it. */
static void
msd_informer_skip(MsdInformer *self, const gchar *what, const GError *error)
{
	self->counters.skipped++;
	msd_informer_log(self, G_LOG_LEVEL_MESSAGE, "%s: %s skipped: %s", self->name, what,
	                 error->message);
}

/* Whether the object at @index of @doc is within the limits on size and labels. */
static gboolean
msd_informer_check_limits(MsdInformer *self, const MsdJsonTokens *doc, gint index, GError **error)
{
	gsize length = 0;
	gint metadata = msd_json_tokens_member(doc, index, "metadata");

	msd_json_tokens_span(doc, index, &length);
	if (length > self->max_object) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_TOO_LARGE,
		            _("%zu bytes exceed the limit of %zu per object"), length,
		            self->max_object);
		return FALSE;
	}
	if (msd_json_tokens_size(doc, msd_json_tokens_member(doc, metadata, "labels")) >
	            MSD_INFORMER_MAX_LABELS ||
	    msd_json_tokens_size(doc, msd_json_tokens_member(doc, metadata, "annotations")) >
	            MSD_INFORMER_MAX_LABELS) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_TOO_LARGE,
		            _("more than %d labels or annotations"), MSD_INFORMER_MAX_LABELS);
		return FALSE;
	}
	return TRUE;
}

/* "namespace/name" of the object at @index, for messages: what can be read of it. */
static gchar *
msd_informer_describe(const MsdJsonTokens *doc, gint index)
{
	gint metadata = msd_json_tokens_member(doc, index, "metadata");
	g_autofree gchar *name =
	        msd_json_tokens_dup_string(doc, msd_json_tokens_member(doc, metadata, "name"));
	g_autofree gchar *namespace_ =
	        msd_json_tokens_dup_string(doc, msd_json_tokens_member(doc, metadata, "namespace"));

	return g_strdup_printf("object %s%s%s", namespace_ != NULL ? namespace_ : "",
	                       namespace_ != NULL ? "/" : "", name != NULL ? name : "(unnamed)");
}

/* Whether the object at @index belongs to this informer's shard. Objects of other shards are
 * neither held nor passed on: memory and work follow the shard. Read before anything is
 * copied; an object without a uid stays with shard 0. */
static gboolean
msd_informer_owns(MsdInformer *self, const MsdJsonTokens *doc, gint index)
{
	gint uid;
	const gchar *raw;
	gsize length = 0;

	if (self->shard_total <= 1)
		return TRUE;
	uid = msd_json_tokens_path(doc, index, "metadata", "uid", NULL);
	raw = uid >= 0 ? msd_json_tokens_raw(doc, uid, &length) : NULL;
	if (raw == NULL)
		return self->shard_index == 0;
	/* uids are plain ASCII: the raw bytes are the text */
	return msd_shard_of(raw, length, self->shard_total) == self->shard_index;
}

/* Whether the object at @index is stored at its resourceVersion already, told from its uid
 * and resourceVersion before it is copied: a relist or a reconcile lists the whole type, and
 * most of it has not changed. Sets @resource_version (nullable) to the object's. An object
 * without a uid goes the long way (its entry makes one up). */
static gboolean
msd_informer_unchanged(MsdInformer *self,
                       const MsdJsonTokens *doc,
                       gint index,
                       gboolean listed,
                       gchar **resource_version)
{
	gint metadata = msd_json_tokens_member(doc, index, "metadata");
	gint uid_index;
	g_autofree gchar *uid_copy = NULL;
	const gchar *uid = NULL;
	const gchar *raw = NULL;
	gchar uid_text[64];
	gsize uid_length = 0;

	*resource_version = msd_json_tokens_dup_string(
	        doc, msd_json_tokens_member(doc, metadata, "resourceVersion"));
	if (*resource_version == NULL)
		return FALSE;
	uid_index = msd_json_tokens_member(doc, metadata, "uid");
	if (msd_json_tokens_is_string(doc, uid_index) && doc->tokens[uid_index].plain)
		raw = msd_json_tokens_raw(doc, uid_index, &uid_length);
	if (raw != NULL && uid_length < sizeof(uid_text)) {
		/* a uid is 36 plain bytes: looked up from the stack, not a copy on the heap */
		memcpy(uid_text, raw, uid_length);
		uid_text[uid_length] = '\0';
		uid = uid_text;
	} else {
		uid = uid_copy = msd_json_tokens_dup_string(doc, uid_index);
	}
	if (uid == NULL || uid[0] == '\0' ||
	    !msd_store_check_unchanged(self->store, uid, *resource_version, listed))
		return FALSE;
	self->counters.unchanged++;
	return TRUE;
}

/* The object at @index copied into a store entry. */
static MsdStoreEntry *
msd_informer_copy(MsdInformer *self, const MsdJsonTokens *doc, gint index, GError **error)
{
	MsdStoreEntry *entry;

	if (self->metadata_only)
		entry = msd_store_entry_new_metadata_from_tokens(
		        doc, (guint)index, meshsync_api_resource_get_kind(self->resource),
		        meshsync_api_resource_get_group_version(self->resource), error);
	else
		entry = msd_store_entry_new_from_tokens(
		        doc, (guint)index, meshsync_api_resource_get_kind(self->resource),
		        meshsync_api_resource_get_group_version(self->resource), error);

	if (entry != NULL)
		self->counters.copied++;
	return entry;
}

/* One listed object, checked against the limits first. */
static void
msd_informer_list_item(MsdInformer *self, const MsdJsonTokens *doc, gint index, gint position)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MsdStoreEntry) entry = NULL;
	g_autofree gchar *resource_version = NULL;

	if (!msd_informer_owns(self, doc, index))
		return;

	if (!msd_informer_check_limits(self, doc, index, &error)) {
		g_autofree gchar *what = msd_informer_describe(doc, index);

		msd_informer_skip(self, what, error);
		return;
	}
	if (msd_informer_unchanged(self, doc, index, TRUE, &resource_version)) {
		self->n_listed++;
		return;
	}
	entry = msd_informer_copy(self, doc, index, &error);
	/* one unusable item must not keep the rest of the type from syncing */
	if (entry == NULL) {
		msd_informer_log(self, G_LOG_LEVEL_MESSAGE, "%s: skipping list item %d: %s",
		                 self->name, position, error->message);
		return;
	}
	msd_informer_apply_listed(self, entry, index);
}

/* A page one object made unparsable (nested too deep): its items are delimited without
 * tokenizing and read one by one, so that only the culprit is lost. */
static gboolean
msd_informer_salvage_page(
        MsdInformer *self, const gchar *data, gsize size, gchar **continue_token, GError **error)
{
	g_autoptr(GArray) members = msd_json_delimit_members(data, size, 0);
	g_autoptr(GArray) elements = NULL;
	g_auto(MsdJsonTokens) meta = MSD_JSON_TOKENS_INIT;

	if (members == NULL) {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		                    _("list answer is not a well-formed JSON object"));
		return FALSE;
	}
	for (guint i = 0; i < members->len; i++) {
		MsdJsonDelimitMember *m = &g_array_index(members, MsdJsonDelimitMember, i);
		gsize key_length = m->key_end - m->key_start;

		if (key_length == 8 && memcmp(data + m->key_start, "metadata", 8) == 0 &&
		    msd_json_tokens_parse(&meta, data + m->value_start,
		                          m->value_end - m->value_start, NULL)) {
			if (self->list_rv == NULL)
				self->list_rv = msd_json_tokens_dup_string(
				        &meta, msd_json_tokens_member(&meta, 0, "resourceVersion"));
			g_free(*continue_token);
			*continue_token = msd_json_tokens_dup_string(
			        &meta, msd_json_tokens_member(&meta, 0, "continue"));
		} else if (key_length == 5 && memcmp(data + m->key_start, "items", 5) == 0) {
			g_clear_pointer(&elements, g_array_unref);
			elements = msd_json_delimit_elements(data, size, m->value_start);
		}
	}
	if (elements == NULL) {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		                    _("list answer has no well-formed items array"));
		return FALSE;
	}
	for (guint i = 0; i < elements->len && self->running; i++) {
		MsdJsonDelimitSpan *span = &g_array_index(elements, MsdJsonDelimitSpan, i);
		g_autoptr(GError) error_local = NULL;

		if (!msd_json_tokens_parse_skipping(&self->tokens, data + span->start,
		                                    span->end - span->start,
		                                    &msd_informer_skip_item, &error_local)) {
			g_autofree gchar *what = g_strdup_printf("list item %u", i);

			msd_informer_skip(self, what, error_local);
			continue;
		}
		msd_informer_list_item(self, &self->tokens, 0, (gint)i);
	}
	return TRUE;
}

/* Collects the items of one list page: each item's bytes are copied out of the page by their
 * token span, so the page is freed as soon as it has been read. */
static gboolean
msd_informer_parse_page(MsdInformer *self, GBytes *body, gchar **continue_token, GError **error)
{
	const gchar *data;
	gsize size = 0;
	gint items;
	guint index;
	gint count;

	data = g_bytes_get_data(body, &size);
	if (!msd_json_tokens_parse_skipping(&self->tokens, data, size, &msd_informer_skip_page,
	                                    error)) {
		if (!g_error_matches(*error, MESHSYNC_ERROR, MESHSYNC_ERROR_TOO_LARGE))
			return FALSE;
		g_clear_error(error);
		return msd_informer_salvage_page(self, data, size, continue_token, error);
	}
	if (self->tokens.tokens[0].type != MSD_JSON_OBJECT) {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		                    _("list answer is not a JSON object"));
		return FALSE;
	}
	if (self->list_rv == NULL)
		self->list_rv = msd_json_tokens_dup_string(
		        &self->tokens, msd_json_tokens_path(&self->tokens, 0, "metadata",
		                                            "resourceVersion", NULL));
	*continue_token = msd_json_tokens_dup_string(
	        &self->tokens,
	        msd_json_tokens_path(&self->tokens, 0, "metadata", "continue", NULL));

	items = msd_json_tokens_member(&self->tokens, 0, "items");
	if (items < 0 || msd_json_tokens_is_null(&self->tokens, items))
		return TRUE;
	if (self->tokens.tokens[items].type != MSD_JSON_ARRAY) {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		                    _("list answer has no items array"));
		return FALSE;
	}
	count = self->tokens.tokens[items].size;
	index = (guint)items + 1;
	for (gint i = 0; i < count && self->running; i++) {
		msd_informer_list_item(self, &self->tokens, (gint)index, i);
		index = msd_json_tokens_skip(&self->tokens, index);
	}
	return TRUE;
}

static void
msd_informer_page_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MsdInformerOp) op = user_data;
	MsdInformer *self = op->self;
	g_autoptr(GBytes) body = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *continue_token = NULL;

	body = msd_kube_client_get_finish(MSD_KUBE_CLIENT(source), result, &error);
	if (!msd_informer_op_is_current(op))
		return;
	if (body == NULL) {
		/* an expired continue token: start over, as client-go's pager does */
		if (op->continuation &&
		    g_error_matches(error, MESHSYNC_ERROR, MESHSYNC_ERROR_GONE)) {
			msd_informer_log(self, G_LOG_LEVEL_INFO,
			                 "%s: list continuation expired, listing again",
			                 self->name);
			msd_informer_clear_list(self);
			msd_informer_list(self);
			return;
		}
		msd_informer_clear_list(self);
		msd_informer_fail(self, error, MSD_INFORMER_NEXT_LIST);
		return;
	}
	if (!msd_informer_parse_page(self, body, &continue_token, &error)) {
		msd_informer_log(self, G_LOG_LEVEL_MESSAGE, "%s: unreadable list page: %s",
		                 self->name, error->message);
		msd_informer_clear_list(self);
		msd_informer_fail(self, error, MSD_INFORMER_NEXT_LIST);
		return;
	}
	g_clear_pointer(&body, g_bytes_unref);
	/* the consumer may have stopped us while the page's objects went out */
	if (!msd_informer_op_is_current(op))
		return;
	if (continue_token != NULL && continue_token[0] != '\0') {
		if (self->paused)
			self->pending_continue = g_steal_pointer(&continue_token);
		else
			msd_informer_fetch_page(self, continue_token);
		return;
	}
	{
		g_autofree gchar *list_rv = g_steal_pointer(&self->list_rv);

		msd_informer_clear_list(self);
		msd_informer_finish_list(self, list_rv);
	}
	if (self->running)
		msd_informer_watch(self, FALSE);
}

static void
msd_informer_fetch_page(MsdInformer *self, const gchar *continue_token)
{
	g_autoptr(GString) query = g_string_new(self->path);
	MsdInformerOp *op = msd_informer_op_new(self);

	/* no resourceVersion: a consistent read of the current state, which every server
	 * serves with pagination (and continue tokens forbid one anyway) */
	g_string_append_printf(query, "?limit=%u", self->page_size);
	if (continue_token != NULL) {
		g_string_append(query, "&continue=");
		g_string_append_uri_escaped(query, continue_token, NULL, FALSE);
	}
	op->continuation = continue_token != NULL;
	msd_kube_client_get_full_async(self->client, query->str, msd_informer_request_flags(self),
	                               self->cancellable, msd_informer_page_cb, op);
}

static void msd_informer_list_now(MsdInformer *self);

/* Every list but a run's first goes through the gate when there is one: something broke, and
 * the cluster behind the URL may not be the one we knew (a restored or replaced API server). */
static void
msd_informer_list(MsdInformer *self)
{
	g_free(self->previous_rv);
	self->previous_rv = g_strdup(self->resource_version);
	if (self->lists_started > 0 && self->gate_func != NULL) {
		msd_informer_close_watch(self);
		msd_informer_clear_list(self);
		self->gated = TRUE;
		self->gate_func(self, self->gate_data);
		return;
	}
	msd_informer_list_now(self);
}

void
msd_informer_open_gate(MsdInformer *self)
{
	g_return_if_fail(MSD_IS_INFORMER(self));

	if (!self->gated || !self->running)
		return;
	self->gated = FALSE;
	msd_informer_list_now(self);
}

/* One reconciliation: a fresh LIST (no resourceVersion: a consistent read), diffed with the
 * store as any relist is: one ADDED, MODIFIED or DELETED per object that drifted, nothing for
 * the others. The watch is closed meanwhile and resumes at the list's resourceVersion, so
 * nothing is missed. Emits "reconciled" at the end. Returns FALSE (and does nothing) when the
 * informer is not in a steady state: stopped, not synced yet, or already relisting. */
gboolean
msd_informer_reconcile(MsdInformer *self)
{
	g_return_val_if_fail(MSD_IS_INFORMER(self), FALSE);

	if (!self->running || !self->synced || self->listing || self->gated || self->reconciling ||
	    self->resource_version == NULL)
		return FALSE;
	self->reconciling = TRUE;
	memset(self->reconcile_drift, 0, sizeof(self->reconcile_drift));
	g_free(self->reconcile_rv);
	self->reconcile_rv = g_strdup(self->resource_version);
	msd_informer_relist(self);
	return TRUE;
}

void
msd_informer_relist(MsdInformer *self)
{
	g_return_if_fail(MSD_IS_INFORMER(self));

	if (!self->running)
		return;
	/* from scratch: no resourceVersion kept, as after a 410 */
	g_clear_pointer(&self->resource_version, g_free);
	if (self->gated)
		return;
	msd_source_clear(&self->timer_source);
	msd_informer_list(self);
}

static void
msd_informer_list_now(MsdInformer *self)
{
	if (self->lists_started++ > 0)
		self->counters.relists++;
	msd_informer_close_watch(self);
	msd_informer_clear_list(self);
	/* every attempt starts a fresh relist: what an abandoned attempt saw proves nothing */
	msd_store_begin_relist(self->store);
	self->n_listed = 0;
	if (self->watch_list_supported) {
		msd_informer_watch(self, TRUE);
		return;
	}
	self->listing = TRUE;
	msd_informer_fetch_page(self, NULL);
}

static void
msd_informer_fall_back_to_list(MsdInformer *self)
{
	msd_informer_close_watch(self);
	msd_store_begin_relist(self->store);
	self->n_listed = 0;
	self->listing = TRUE;
	msd_informer_fetch_page(self, NULL);
}

/* The stream can no longer be trusted (an ERROR event, a malformed or truncated line): only
 * a relist can tell what was missed. */
static void
msd_informer_abandon_watch(MsdInformer *self)
{
	self->counters.errors++;
	msd_informer_close_watch(self);
	msd_informer_backoff(self, MSD_INFORMER_NEXT_LIST);
}

static void
msd_informer_finish_initial_events(MsdInformer *self, const gchar *resource_version)
{
	self->initial_events = FALSE;
	self->tail_from = self->watch_events;
	msd_informer_finish_list(self, resource_version);
}

static void
msd_informer_handle_object_event(MsdInformer *self, const gchar *type, gint object)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MsdStoreEntry) entry = NULL;
	g_autofree gchar *resource_version = NULL;
	gboolean deleted = strcmp(type, "DELETED") == 0;

	if (!msd_informer_check_limits(self, &self->tokens, object, &error)) {
		g_autofree gchar *what = msd_informer_describe(&self->tokens, object);

		/* the stream is fine: only this object is left out */
		self->watch_events++;
		msd_informer_skip(self, what, error);
		return;
	}
	if (!msd_informer_owns(self, &self->tokens, object)) {
		/* another shard's: only where the watch has got to matters here */
		g_autofree gchar *rv = msd_json_tokens_dup_string(
		        &self->tokens, msd_json_tokens_path(&self->tokens, object, "metadata",
		                                            "resourceVersion", NULL));

		self->watch_events++;
		if (rv != NULL)
			msd_informer_set_resource_version(self, rv);
		return;
	}
	if (!deleted && msd_informer_unchanged(self, &self->tokens, object, self->initial_events,
	                                       &resource_version)) {
		self->watch_events++;
		msd_informer_set_resource_version(self, resource_version);
		if (self->initial_events)
			self->n_listed++;
		else
			g_debug("%s: skipping %s event: resourceVersion %s unchanged", self->name,
			        type, resource_version);
		return;
	}
	entry = msd_informer_copy(self, &self->tokens, object, &error);
	if (entry == NULL) {
		msd_informer_log(self, G_LOG_LEVEL_MESSAGE,
		                 "%s: malformed %s watch event (%s); relisting", self->name, type,
		                 error->message);
		msd_informer_abandon_watch(self);
		return;
	}
	self->watch_events++;
	msd_informer_set_resource_version(self, entry->resource_version);

	if (deleted) {
		/* held, not read: the object's bytes outlive the emit that may still point in */
		g_autoptr(MsdStoreEntry) last G_GNUC_UNUSED =
		        msd_store_delete(self->store, entry->uid);

		msd_informer_emit(self, MESHSYNC_EVENT_TYPE_DELETED, entry, &self->tokens, object,
		                  self->line_read_at);
		return;
	}
	if (self->initial_events) {
		/* a streaming list: reconciled object by object, like the items of a list */
		msd_informer_apply_listed(self, entry, object);
		return;
	}
	switch (msd_store_upsert(self->store, entry)) {
	case MSD_STORE_ADDED:
		msd_informer_emit(self, MESHSYNC_EVENT_TYPE_ADDED, entry, &self->tokens, object,
		                  self->line_read_at);
		break;
	case MSD_STORE_MODIFIED:
		msd_informer_emit(self, MESHSYNC_EVENT_TYPE_MODIFIED, entry, &self->tokens, object,
		                  self->line_read_at);
		break;
	case MSD_STORE_UNCHANGED:
	default:
		g_debug("%s: skipping update of %s/%s: resourceVersion %s unchanged", self->name,
		        entry->namespace_, entry->name, entry->resource_version);
		break;
	}
}

static void
msd_informer_handle_error_event(MsdInformer *self, gint object)
{
	g_autofree gchar *code = msd_json_tokens_dup_string(
	        &self->tokens, msd_json_tokens_member(&self->tokens, (guint)object, "code"));
	g_autofree gchar *message = msd_json_tokens_dup_string(
	        &self->tokens, msd_json_tokens_member(&self->tokens, (guint)object, "message"));

	if (g_strcmp0(code, "410") == 0) {
		/* the resourceVersion fell out of the server's history: relist from scratch */
		msd_informer_log(self, G_LOG_LEVEL_INFO, "%s: watch expired (%s); relisting",
		                 self->name, message != NULL ? message : "410 Gone");
		g_clear_pointer(&self->resource_version, g_free);
	} else {
		msd_informer_log(self, G_LOG_LEVEL_MESSAGE,
		                 "%s: watch ERROR event %s: %s; relisting", self->name,
		                 code != NULL ? code : "without code",
		                 message != NULL ? message : "no message");
	}
	msd_informer_abandon_watch(self);
}

/* Handles one line of the watch stream. */
static void
msd_informer_handle_line(MsdInformer *self, const gchar *line, gsize length)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *type = NULL;
	gint type_index;
	gint object;

	/* the one clock read per event on this side of the event latency histogram */
	self->line_read_at = g_get_monotonic_time();
	if (!msd_json_tokens_parse_skipping(&self->tokens, line, length, &msd_informer_skip_line,
	                                    &error) &&
	    g_error_matches(error, MESHSYNC_ERROR, MESHSYNC_ERROR_TOO_LARGE)) {
		/* well delimited but past a limit (nested too deep): this event alone is lost */
		self->watch_events++;
		msd_informer_skip(self, "a watch event", error);
		return;
	}
	if (error != NULL || self->tokens.tokens[0].type != MSD_JSON_OBJECT) {
		msd_informer_log(
		        self, G_LOG_LEVEL_MESSAGE,
		        "%s: malformed watch line of %" G_GSIZE_FORMAT " bytes (%s); relisting",
		        self->name, length, error != NULL ? error->message : "not an object");
		msd_informer_abandon_watch(self);
		return;
	}
	type_index = msd_json_tokens_member(&self->tokens, 0, "type");
	object = msd_json_tokens_member(&self->tokens, 0, "object");
	if (msd_json_tokens_is_string(&self->tokens, type_index))
		type = msd_json_tokens_dup_string(&self->tokens, type_index);
	if (type == NULL || object < 0 || self->tokens.tokens[object].type != MSD_JSON_OBJECT) {
		msd_informer_log(self, G_LOG_LEVEL_MESSAGE,
		                 "%s: watch event without type or object; relisting", self->name);
		msd_informer_abandon_watch(self);
		return;
	}

	if (strcmp(type, "ADDED") == 0 || strcmp(type, "MODIFIED") == 0 ||
	    strcmp(type, "DELETED") == 0) {
		msd_informer_handle_object_event(self, type, object);
	} else if (strcmp(type, "BOOKMARK") == 0) {
		gint metadata = msd_json_tokens_member(&self->tokens, (guint)object, "metadata");
		g_autofree gchar *rv = msd_json_tokens_dup_string(
		        &self->tokens,
		        msd_json_tokens_member(&self->tokens, (guint)metadata, "resourceVersion"));
		gint end = msd_json_tokens_path(&self->tokens, (guint)metadata, "annotations",
		                                MSD_INFORMER_INITIAL_EVENTS_END, NULL);

		self->watch_events++;
		if (self->initial_events &&
		    msd_json_tokens_string_equals(&self->tokens, end, "true"))
			msd_informer_finish_initial_events(self, rv);
		else
			msd_informer_set_resource_version(self, rv);
	} else if (strcmp(type, "ERROR") == 0) {
		msd_informer_handle_error_event(self, object);
	} else {
		msd_informer_log(self, G_LOG_LEVEL_MESSAGE,
		                 "%s: unknown watch event type \"%s\"; relisting", self->name,
		                 type);
		msd_informer_abandon_watch(self);
	}
}

static void
msd_informer_watch_ended(MsdInformer *self)
{
	gint64 lasted = g_get_monotonic_time() - self->watch_started;

	if (msd_line_splitter_get_pending(self->splitter) > 0) {
		msd_informer_log(self, G_LOG_LEVEL_MESSAGE,
		                 "%s: watch stream ended inside an event; relisting", self->name);
		msd_informer_abandon_watch(self);
		return;
	}
	if (self->initial_events) {
		msd_informer_log(
		        self, G_LOG_LEVEL_INFO,
		        "%s: streaming list ended without its end bookmark; using paginated lists",
		        self->name);
		/* a server that ignores sendInitialEvents would make every relist hang */
		self->watch_list_supported = FALSE;
		msd_informer_fall_back_to_list(self);
		return;
	}
	msd_informer_close_watch(self);
	if (self->watch_events == 0 && lasted < MSD_INFORMER_SHORT_WATCH_USEC) {
		self->counters.errors++;
		msd_informer_log(self, G_LOG_LEVEL_DEBUG, "%s: watch closed at once without events",
		                 self->name);
		msd_informer_backoff(self, MSD_INFORMER_NEXT_WATCH);
		return;
	}
	/* the server's timeout or a closed connection: resume where we are, as the reflector does
	 */
	msd_informer_log(self, G_LOG_LEVEL_DEBUG, "%s: watch ended, resuming at resourceVersion %s",
	                 self->name, self->resource_version != NULL ? self->resource_version : "");
	self->backoff_ms = 0;
	self->counters.watch_restarts++;
	self->watch_reopening = TRUE;
	msd_informer_watch(self, FALSE);
}

/* Counts @n bytes just read. */
static void
msd_informer_heard(MsdInformer *self, gsize n)
{
	self->counters.stream_bytes += n;
	self->heard_at = g_get_monotonic_time();
}

/* Hands @n bytes just read into the read buffer to the line splitter. */
static void
msd_informer_push(MsdInformer *self, gsize n)
{
	msd_informer_heard(self, n);
	msd_line_splitter_push(self->splitter, self->read_buffer, n);
}

static void
msd_informer_read_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MsdInformerOp) op = user_data;
	MsdInformer *self = op->self;
	g_autoptr(GError) error = NULL;
	gssize n;

	n = g_input_stream_read_finish(G_INPUT_STREAM(source), result, &error);
	if (!msd_informer_op_is_current(op) || op->watch_id != self->watch_id)
		return;
	self->reading = FALSE;
	if (n < 0) {
		self->counters.errors++;
		msd_informer_log(self, G_LOG_LEVEL_INFO, "%s: watch stream broke: %s; resuming",
		                 self->name, error->message);
		msd_informer_close_watch(self);
		msd_informer_backoff(self, MSD_INFORMER_NEXT_WATCH);
		return;
	}
	if (n == 0)
		self->eof_pending = TRUE;
	else
		msd_informer_push(self, (gsize)n);
	msd_informer_pump(self);
}

/* Reads what the stream holds already, without waiting: TRUE when bytes (or the end) came.
 * An async read costs a task, an idle source and a main-loop turn with its poll(); a TLS
 * stream gives at most one 16 KB record per read, under two pod events. */
static gboolean
msd_informer_read_now(MsdInformer *self)
{
	GPollableInputStream *pollable;
	gchar *buffer;
	gssize n;

	if (!G_IS_POLLABLE_INPUT_STREAM(self->stream))
		return FALSE;
	pollable = G_POLLABLE_INPUT_STREAM(self->stream);
	if (!g_pollable_input_stream_can_poll(pollable))
		return FALSE;
	/* Straight into the line splitter: a read that cannot wait needs no buffer of its own,
	 * and the bytes are copied once fewer. No cancellable: such a read has nothing to
	 * cancel (a closed watch is not read again), and GIO would make it the thread's current
	 * one (a list node) at each layer of the stream, for every read. Would block, or
	 * failed: the async read waits, or reports the failure. */
	buffer = msd_line_splitter_reserve(self->splitter, MSD_INFORMER_READ_SIZE);
	n = g_pollable_input_stream_read_nonblocking(pollable, buffer, MSD_INFORMER_READ_SIZE, NULL,
	                                             NULL);
	msd_line_splitter_commit(self->splitter, n > 0 ? (gsize)n : 0);
	if (n < 0)
		return FALSE;
	if (n == 0)
		self->eof_pending = TRUE;
	else
		msd_informer_heard(self, (gsize)n);
	return TRUE;
}

/* Handles the buffered lines, then reads more, unless paused: back-pressure reaches the
 * server through the TCP window. */
static void
msd_informer_pump(MsdInformer *self)
{
	guint watch_id = self->watch_id;
	const gchar *line;
	gsize length;
	guint reads = 0;

	for (;;) {
		while (self->running && !self->paused && self->watch_id == watch_id &&
		       self->stream != NULL) {
			g_autoptr(GError) error = NULL;

			if (!msd_line_splitter_next(self->splitter, &line, &length, &error)) {
				if (g_error_matches(error, MESHSYNC_ERROR,
				                    MESHSYNC_ERROR_TOO_LARGE)) {
					/* one object left out; the stream goes on */
					self->watch_events++;
					msd_informer_skip(self, "a watch event", error);
					continue;
				}
				if (error != NULL) {
					msd_informer_log(self, G_LOG_LEVEL_MESSAGE,
					                 "%s: %s; relisting", self->name,
					                 error->message);
					msd_informer_abandon_watch(self);
					return;
				}
				break;
			}
			msd_informer_handle_line(self, line, length);
		}
		if (!self->running || self->paused || self->watch_id != watch_id ||
		    self->stream == NULL || self->reading)
			return;
		if (self->eof_pending) {
			msd_informer_watch_ended(self);
			return;
		}
		/* a bounded number per turn, so that other sources (the broker's socket, other
		 * informers) get their turn during a long stream */
		if (reads >= MSD_INFORMER_READS_PER_TURN || !msd_informer_read_now(self))
			break;
		reads++;
	}
	self->reading = TRUE;
	g_input_stream_read_async(self->stream, self->read_buffer, MSD_INFORMER_READ_SIZE,
	                          G_PRIORITY_DEFAULT, self->watch_cancellable, msd_informer_read_cb,
	                          msd_informer_op_new(self));
}

static gboolean
msd_informer_silence_cb(gpointer user_data)
{
	MsdInformerOp *op = user_data;
	MsdInformer *self = op->self;
	gint64 now = g_get_monotonic_time();

	if (!msd_informer_op_is_current(op) || op->watch_id != self->watch_id)
		return G_SOURCE_REMOVE;
	/* paused, we do not read: the server's silence cannot be told from our own; before the
	 * answer's headers, the kube client bounds the wait (a new connection's own bound
	 * first, which a loaded process may need) */
	if (self->paused || self->stream == NULL)
		self->heard_at = now;
	if (msd_silence_check(&self->heard_at, &self->silence_checked_at, now,
	                      MSD_INFORMER_SILENCE_CHECK_MS * 1000) <= MSD_INFORMER_SILENCE_USEC)
		return G_SOURCE_CONTINUE;
	/* op stays alive until this returns: the source holds its callback data while it runs */
	msd_source_clear(&self->silence_source);
	if (self->long_watch && !self->initial_events && self->watch_events == self->tail_from) {
		/* a streaming list's tail on a quiet type: the server would end it only minutes
		 * later, so silence says little; it goes on as a short resumed watch (a pooled
		 * connection that was lost all the same leaves its headers missing: see above) */
		msd_informer_log(self, G_LOG_LEVEL_DEBUG,
		                 "%s: streaming list quiet since its initial events; resuming at "
		                 "resourceVersion %s",
		                 self->name,
		                 self->resource_version != NULL ? self->resource_version : "");
		msd_informer_close_watch(self);
		self->counters.watch_restarts++;
		self->watch_reopening = TRUE;
		msd_informer_watch(self, FALSE);
		return G_SOURCE_REMOVE;
	}
	self->counters.watch_silences++;
	/* the pooled connections opened beside this one are suspect too */
	msd_kube_client_distrust_pool(self->client);
	if (self->initial_events) {
		msd_informer_log(self, G_LOG_LEVEL_MESSAGE,
		                 "%s: streaming list silent for %" G_GINT64_FORMAT " s; relisting",
		                 self->name, (now - self->heard_at) / G_USEC_PER_SEC);
		msd_informer_abandon_watch(self);
		return G_SOURCE_REMOVE;
	}
	/* a short watch was asked to end well before the bound: its connection is lost. A
	 * streaming list's tail that had events may only have gone quiet after a burst (the real
	 * server bookmarks such a long watch about once a minute): said as such. Either way it
	 * resumes on a new connection. */
	msd_informer_log(self, self->long_watch ? G_LOG_LEVEL_INFO : G_LOG_LEVEL_MESSAGE,
	                 "%s: watch silent for %" G_GINT64_FORMAT
	                 " s%s; resuming at resourceVersion %s on a new connection",
	                 self->name, (now - self->heard_at) / G_USEC_PER_SEC,
	                 self->long_watch ? " after its streaming list's last event (quiet, or "
	                                    "its connection lost)"
	                                  : "",
	                 self->resource_version != NULL ? self->resource_version : "");
	msd_informer_close_watch(self);
	self->counters.watch_restarts++;
	self->watch_reopening = TRUE;
	self->silence_resume = TRUE;
	msd_informer_watch(self, FALSE);
	return G_SOURCE_REMOVE;
}

static void
msd_informer_watch_open_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MsdInformerOp) op = user_data;
	MsdInformer *self = op->self;
	g_autoptr(GInputStream) stream = NULL;
	g_autoptr(GError) error = NULL;

	stream = msd_kube_client_stream_finish(MSD_KUBE_CLIENT(source), result, &error);
	if (!msd_informer_op_is_current(op) || op->watch_id != self->watch_id)
		return;
	if (stream == NULL) {
		if (self->initial_events) {
			gboolean answered = error->domain == MESHSYNC_ERROR &&
			                    error->code != MESHSYNC_ERROR_CONNECTION &&
			                    error->code != MESHSYNC_ERROR_TLS &&
			                    error->code != MESHSYNC_ERROR_FORBIDDEN &&
			                    error->code != MESHSYNC_ERROR_NOT_FOUND;

			/* refused: a paginated list serves this cycle. A 4xx (WatchList off, an
			 * older server) will not change while we run, so stop asking; a 5xx or an
			 * unreadable answer may pass, so the next relist asks again. 403/404 and an
			 * unreachable server would fail the list the same way, so they take the
			 * error path directly. */
			if (answered) {
				guint status = msd_kube_client_error_get_status(error);

				if (status >= 400 && status < 500) {
					msd_informer_log(
					        self, G_LOG_LEVEL_DEBUG,
					        "%s: streaming list refused (%s); using paginated "
					        "lists "
					        "from now on",
					        self->name, error->message);
					self->watch_list_supported = FALSE;
				} else {
					msd_informer_log(self, G_LOG_LEVEL_DEBUG,
					                 "%s: streaming list refused (%s); using a "
					                 "paginated list",
					                 self->name, error->message);
				}
				self->counters.errors++;
				msd_informer_fall_back_to_list(self);
				return;
			}
			msd_informer_close_watch(self);
			msd_informer_fail(self, error, MSD_INFORMER_NEXT_LIST);
			return;
		}
		msd_informer_close_watch(self);
		/* 410: our resourceVersion fell out of the server's history; 504 "Too large
		 * resource version": the server never got that far (a restored or replaced
		 * cluster). client-go relists from scratch on both. */
		if (g_error_matches(error, MESHSYNC_ERROR, MESHSYNC_ERROR_GONE) ||
		    (msd_kube_client_error_get_status(error) == 504 &&
		     strstr(error->message, "Too large resource version") != NULL)) {
			msd_informer_log(self, G_LOG_LEVEL_INFO, "%s: %s; relisting", self->name,
			                 error->message);
			g_clear_pointer(&self->resource_version, g_free);
			self->counters.errors++;
			msd_informer_backoff(self, MSD_INFORMER_NEXT_LIST);
			return;
		}
		/* too many requests (API Priority and Fairness): our resourceVersion is fine, so
		 * the watch is retried, not the list, no sooner than the server asked; a relist
		 * would be the heavier request it is shedding (client-go does the same) */
		if (msd_kube_client_error_get_status(error) == 429) {
			guint delay = msd_informer_next_backoff(self);

			self->counters.errors++;
			delay = MAX(delay, msd_kube_client_error_get_retry_after(error) * 1000);
			msd_informer_log(self, G_LOG_LEVEL_INFO, "%s: %s; watching again in %u ms",
			                 self->name, error->message, delay);
			msd_informer_schedule(self, MSD_INFORMER_NEXT_WATCH, delay);
			return;
		}
		/* the server is unreachable: try the same resourceVersion again; a refusal
		 * with any other status may mean our resourceVersion is unusable: relist */
		msd_informer_fail(self, error,
		                  error->domain == MESHSYNC_ERROR &&
		                                  (error->code == MESHSYNC_ERROR_CONNECTION ||
		                                   error->code == MESHSYNC_ERROR_TLS)
		                          ? MSD_INFORMER_NEXT_WATCH
		                          : MSD_INFORMER_NEXT_LIST);
		return;
	}
	self->stream = g_steal_pointer(&stream);
	self->watch_started = g_get_monotonic_time();
	self->heard_at = self->watch_started;
	if (self->watch_reopening) {
		self->watch_reopening = FALSE;
		g_signal_emit(self, signals[SIGNAL_WATCH_REOPENED], 0);
		if (!msd_informer_op_is_current(op) || op->watch_id != self->watch_id)
			return;
	}
	msd_informer_pump(self);
}

static void
msd_informer_watch(MsdInformer *self, gboolean initial)
{
	g_autoptr(GString) query = g_string_new(self->path);
	gint timeout = initial ? g_random_int_range(MSD_INFORMER_WATCH_TIMEOUT_MIN,
	                                            MSD_INFORMER_WATCH_TIMEOUT_MAX + 1)
	                       : g_random_int_range(MSD_INFORMER_RESUMED_TIMEOUT_MIN,
	                                            MSD_INFORMER_RESUMED_TIMEOUT_MAX + 1);

	msd_informer_close_watch(self);
	self->watch_cancellable = g_cancellable_new();
	self->watch_events = 0;
	self->long_watch = initial;
	if (initial) {
		self->initial_events = TRUE;
		g_string_append_printf(query,
		                       "?watch=1&sendInitialEvents=true"
		                       "&resourceVersionMatch=NotOlderThan&resourceVersion="
		                       "&allowWatchBookmarks=true&timeoutSeconds=%d",
		                       timeout);
	} else {
		g_string_append(query, "?watch=true&allowWatchBookmarks=true&resourceVersion=");
		if (self->resource_version != NULL)
			g_string_append_uri_escaped(query, self->resource_version, NULL, FALSE);
		g_string_append_printf(query, "&timeoutSeconds=%d", timeout);
	}
	msd_informer_log(self, G_LOG_LEVEL_DEBUG, "%s: %s", self->name, query->str);
	msd_kube_client_stream_full_async(
	        self->client, query->str,
	        msd_informer_request_flags(self) |
	                (self->silence_resume ? MSD_KUBE_REQUEST_NEW_CONNECTION : 0),
	        self->watch_cancellable, msd_informer_watch_open_cb, msd_informer_op_new(self));
	self->silence_resume = FALSE;
	/* the body's silence is bounded here; the headers' wait is the kube client's (a request
	 * written on a pooled connection black-holed meanwhile gets no answer at all) */
	self->heard_at = g_get_monotonic_time();
	self->silence_checked_at = self->heard_at;
	self->silence_source = msd_engine_context_add_timeout(
	        self->engine, G_PRIORITY_DEFAULT, MSD_INFORMER_SILENCE_CHECK_MS,
	        "[meshsync] informer watch silence", msd_informer_silence_cb,
	        msd_informer_op_new(self), (GDestroyNotify)msd_informer_op_free);
}

static void
msd_informer_dispose(GObject *object)
{
	MsdInformer *self = MSD_INFORMER(object);

	msd_informer_stop(self);
	G_OBJECT_CLASS(msd_informer_parent_class)->dispose(object);
}

static void
msd_informer_finalize(GObject *object)
{
	MsdInformer *self = MSD_INFORMER(object);

	g_clear_object(&self->client);
	g_clear_object(&self->engine);
	g_clear_object(&self->resource);
	g_clear_object(&self->store);
	g_clear_object(&self->cancellable);
	if (self->event_destroy != NULL)
		self->event_destroy(self->event_data);
	g_free(self->name);
	g_free(self->path);
	g_free(self->namespace_);
	g_free(self->resource_version);
	g_free(self->previous_rv);
	g_free(self->reconcile_rv);
	msd_line_splitter_free(self->splitter);
	g_free(self->read_buffer);
	msd_json_tokens_clear(&self->tokens);
	G_OBJECT_CLASS(msd_informer_parent_class)->finalize(object);
}

static void
msd_informer_class_init(MsdInformerClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->dispose = msd_informer_dispose;
	object_class->finalize = msd_informer_finalize;

	/* A relist (not a run's first list) completed: (previous resourceVersion, new one), both
	 * nullable. A new one lower than the previous says the cluster went back in time. */
	signals[SIGNAL_LISTED] =
	        g_signal_new("listed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
	                     NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_STRING);
	/* A watch resumed at its old resourceVersion after it broke or ended. */
	signals[SIGNAL_WATCH_REOPENED] =
	        g_signal_new("watch-reopened", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
	                     NULL, NULL, G_TYPE_NONE, 0);
	signals[SIGNAL_SYNCED] = g_signal_new("synced", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
	                                      0, NULL, NULL, NULL, G_TYPE_NONE, 0);
	/* The server refused the type (403/404) before the initial state arrived: whoever waits
	 * for "synced" should not wait for this one; it keeps retrying in the background. */
	signals[SIGNAL_DENIED] = g_signal_new("denied", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
	                                      0, NULL, NULL, NULL, G_TYPE_NONE, 0);
	/* A reconciliation ended: (completed, added, modified, deleted, held); completed FALSE
	 * when its list failed and the watch went on instead (all counts 0). */
	signals[SIGNAL_RECONCILED] = g_signal_new(
	        "reconciled", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
	        G_TYPE_NONE, 5, G_TYPE_BOOLEAN, G_TYPE_UINT, G_TYPE_UINT, G_TYPE_UINT, G_TYPE_UINT);
}

static void
msd_informer_init(MsdInformer *self)
{
	self->store = msd_store_new();
	self->page_size = MSD_INFORMER_PAGE_SIZE;
	self->backoff_initial_ms = MSD_INFORMER_BACKOFF_INITIAL;
	self->backoff_max_ms = MSD_INFORMER_BACKOFF_MAX;
	self->denied_retry_ms = MSD_INFORMER_DENIED_RETRY;
	self->max_line = MSD_INFORMER_MAX_LINE;
	self->max_object = MSD_INFORMER_MAX_OBJECT;
	self->watch_list_supported = TRUE;
	self->splitter = msd_line_splitter_new(self->max_line);
	self->read_buffer = g_malloc(MSD_INFORMER_READ_SIZE);
}

/**
 * msd_informer_new:
 * @engine: (nullable): where its timers run; %NULL for the thread-default context
 * @client: the API server's client
 * @resource: the resource type to list and watch, across all namespaces
 *
 * Returns: (transfer full): a new, stopped informer with an empty store
 */
MsdInformer *
msd_informer_new(MsdEngineContext *engine, MsdKubeClient *client, MeshSyncApiResource *resource)
{
	return msd_informer_new_in_namespace(engine, client, resource, NULL);
}

/**
 * msd_informer_new_in_namespace:
 * @engine: (nullable): where its timers run; %NULL for the thread-default context
 * @client: the API server's client
 * @resource: the resource type to list and watch
 * @namespace_: (nullable): the one namespace to list and watch, for a namespaced type; %NULL
 *   for all of them
 *
 * Returns: (transfer full): a new, stopped informer with an empty store
 */
MsdInformer *
msd_informer_new_in_namespace(MsdEngineContext *engine,
                              MsdKubeClient *client,
                              MeshSyncApiResource *resource,
                              const gchar *namespace_)
{
	MsdInformer *self;

	g_return_val_if_fail(engine == NULL || MSD_IS_ENGINE_CONTEXT(engine), NULL);
	g_return_val_if_fail(MSD_IS_KUBE_CLIENT(client), NULL);
	g_return_val_if_fail(MESHSYNC_IS_API_RESOURCE(resource), NULL);
	g_return_val_if_fail(namespace_ == NULL || meshsync_api_resource_get_namespaced(resource),
	                     NULL);

	self = g_object_new(MSD_TYPE_INFORMER, NULL);
	self->engine = engine != NULL ? g_object_ref(engine) : msd_engine_context_new();
	msd_store_set_compressed(self->store,
	                         msd_engine_context_get_options(self->engine)->compress_store);
	self->client = g_object_ref(client);
	self->resource = g_object_ref(resource);
	self->name = g_strdup_printf("%s.%s.%s", meshsync_api_resource_get_plural(resource),
	                             meshsync_api_resource_get_version(resource),
	                             meshsync_api_resource_get_group(resource));
	self->namespace_ = g_strdup(namespace_);
	self->path = meshsync_api_resource_build_path(resource, namespace_);
	return self;
}

/**
 * msd_informer_start:
 * @self: a #MsdInformer
 *
 * Starts the list + watch loop in the thread-default main context. A store kept from an
 * earlier run is reconciled by the first list.
 */
void
msd_informer_start(MsdInformer *self)
{
	g_return_if_fail(MSD_IS_INFORMER(self));

	if (self->running)
		return;
	self->running = TRUE;
	self->started_at = g_get_monotonic_time();
	g_clear_object(&self->cancellable);
	self->cancellable = g_cancellable_new();
	self->backoff_ms = 0;
	msd_informer_list(self);
}

/**
 * msd_informer_stop:
 * @self: a #MsdInformer
 *
 * Cancels every request in flight and every retry. No signal is emitted after it returns,
 * even when called from a signal handler in the middle of a relist.
 */
void
msd_informer_stop(MsdInformer *self)
{
	g_return_if_fail(MSD_IS_INFORMER(self));

	if (!self->running)
		return;
	self->running = FALSE;
	self->paused = FALSE;
	self->gated = FALSE;
	if (self->cancellable != NULL)
		g_cancellable_cancel(self->cancellable);
	msd_source_clear(&self->timer_source);
	msd_informer_close_watch(self);
	msd_informer_clear_list(self);
	msd_store_abort_relist(self->store);
}

void
msd_informer_pause(MsdInformer *self)
{
	g_return_if_fail(MSD_IS_INFORMER(self));
	self->paused = TRUE;
}

static gboolean
msd_informer_resume_cb(gpointer user_data)
{
	MsdInformer *self = user_data;

	msd_source_clear(&self->resume_source);
	msd_informer_pump(self);
	return G_SOURCE_REMOVE;
}

void
msd_informer_resume(MsdInformer *self)
{
	g_autofree gchar *continue_token = NULL;

	g_return_if_fail(MSD_IS_INFORMER(self));

	if (!self->paused)
		return;
	self->paused = FALSE;
	if (!self->running)
		return;
	continue_token = g_steal_pointer(&self->pending_continue);
	if (continue_token != NULL) {
		msd_informer_fetch_page(self, continue_token);
		return;
	}
	/* from an idle, never inside the caller: resuming comes from the consumer's own event
	 * handling, and reading the next line there would reuse the tokens it is reading */
	if (self->stream != NULL && self->resume_source == NULL)
		self->resume_source = msd_engine_context_add_idle(
		        self->engine, G_PRIORITY_DEFAULT_IDLE, "[meshsync] informer resume",
		        msd_informer_resume_cb, self, NULL);
}

/**
 * msd_informer_set_event_func:
 * @self: a #MsdInformer
 * @func: (nullable): called for every change
 * @user_data: for @func
 * @destroy: (nullable): frees @user_data with the informer or the next call
 *
 * Sets who gets the changes. A direct call rather than a signal: it runs for every event.
 */
void
msd_informer_set_event_func(MsdInformer *self,
                            MsdInformerEventFunc func,
                            gpointer user_data,
                            GDestroyNotify destroy)
{
	g_return_if_fail(MSD_IS_INFORMER(self));

	if (self->event_destroy != NULL)
		self->event_destroy(self->event_data);
	self->event_func = func;
	self->event_data = user_data;
	self->event_destroy = destroy;
}

gboolean
msd_informer_get_paused(MsdInformer *self)
{
	g_return_val_if_fail(MSD_IS_INFORMER(self), FALSE);
	return self->paused;
}

gboolean
msd_informer_get_synced(MsdInformer *self)
{
	g_return_val_if_fail(MSD_IS_INFORMER(self), FALSE);
	return self->synced;
}

gdouble
msd_informer_get_sync_seconds(MsdInformer *self)
{
	g_return_val_if_fail(MSD_IS_INFORMER(self), 0);
	return self->sync_seconds;
}

/**
 * msd_informer_get_store:
 * @self: a #MsdInformer
 *
 * Returns: (transfer none): the informer's store
 */
MsdStore *
msd_informer_get_store(MsdInformer *self)
{
	g_return_val_if_fail(MSD_IS_INFORMER(self), NULL);
	return self->store;
}

/**
 * msd_informer_get_resource:
 * @self: a #MsdInformer
 *
 * Returns: (transfer none): the resource type
 */
MeshSyncApiResource *
msd_informer_get_resource(MsdInformer *self)
{
	g_return_val_if_fail(MSD_IS_INFORMER(self), NULL);
	return self->resource;
}

const gchar *
msd_informer_get_name(MsdInformer *self)
{
	g_return_val_if_fail(MSD_IS_INFORMER(self), NULL);
	return self->name;
}

/* Holds and passes on only the objects of shard @index of @total (see msd-shard.h); total 0
 * or 1: every object. Call it before starting. */
void
msd_informer_set_shard(MsdInformer *self, guint index, guint total)
{
	g_return_if_fail(MSD_IS_INFORMER(self));
	g_return_if_fail(total <= 1 || index < total);
	g_return_if_fail(!self->running);

	self->shard_index = total > 1 ? index : 0;
	self->shard_total = total;
}

/* The one namespace it lists and watches, or NULL for all of them. */
guint
msd_informer_get_n_listed(MsdInformer *self)
{
	g_return_val_if_fail(MSD_IS_INFORMER(self), 0);

	return self->n_listed;
}

const gchar *
msd_informer_get_namespace(MsdInformer *self)
{
	g_return_val_if_fail(MSD_IS_INFORMER(self), NULL);
	return self->namespace_;
}

void
msd_informer_get_counters(MsdInformer *self, MsdInformerCounters *counters)
{
	g_return_if_fail(MSD_IS_INFORMER(self));
	g_return_if_fail(counters != NULL);
	*counters = self->counters;
}

void
msd_informer_set_delays(MsdInformer *self, guint initial_ms, guint max_ms, guint denied_retry_ms)
{
	g_return_if_fail(MSD_IS_INFORMER(self));
	self->backoff_initial_ms = MAX(initial_ms, 1);
	self->backoff_max_ms = MAX(max_ms, self->backoff_initial_ms);
	self->denied_retry_ms = denied_retry_ms;
}

void
msd_informer_set_page_size(MsdInformer *self, guint page_size)
{
	g_return_if_fail(MSD_IS_INFORMER(self));
	self->page_size = MAX(page_size, 1);
}

void
msd_informer_set_watch_list(MsdInformer *self, gboolean enabled)
{
	g_return_if_fail(MSD_IS_INFORMER(self));
	self->watch_list_supported = enabled;
}

void
msd_informer_set_max_line(MsdInformer *self, gsize max_line)
{
	g_return_if_fail(MSD_IS_INFORMER(self));
	self->max_line = max_line;
	msd_line_splitter_free(self->splitter);
	self->splitter = msd_line_splitter_new(max_line);
}

void
msd_informer_set_max_object(MsdInformer *self, gsize max_object)
{
	g_return_if_fail(MSD_IS_INFORMER(self));
	self->max_object = max_object;
}

void
msd_informer_set_gate_func(MsdInformer *self, MsdInformerGateFunc func, gpointer user_data)
{
	g_return_if_fail(MSD_IS_INFORMER(self));
	self->gate_func = func;
	self->gate_data = user_data;
}

const gchar *
msd_informer_get_resource_version(MsdInformer *self)
{
	g_return_val_if_fail(MSD_IS_INFORMER(self), NULL);
	return self->resource_version;
}

/* Before start: list, watch and hold the objects' metadata only (a shallow type). */
void
msd_informer_set_metadata_only(MsdInformer *self, gboolean metadata_only)
{
	g_return_if_fail(MSD_IS_INFORMER(self));
	g_return_if_fail(!self->running);

	self->metadata_only = metadata_only;
}

gboolean
msd_informer_get_metadata_only(MsdInformer *self)
{
	g_return_val_if_fail(MSD_IS_INFORMER(self), FALSE);

	return self->metadata_only;
}
