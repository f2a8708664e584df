/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncEngine"

#include "config.h"

#include "engine/msd-coalescing-queue.h"
#include "engine/msd-delivery.h"
#include "engine/msd-engine-context.h"
#include "meshsync-error.h"
#include "meshsync-resource-private.h"

struct _MsdDelivery {
	GObject parent_instance;

	MeshSyncWriter *writer; /* (owned) (nullable): NULL only announces */
	gulong writable_id;
	MsdDeliveryAnnounceFunc announce;
	gpointer announce_data;
	MsdDeliveryLatencyFunc latency;
	gpointer latency_data;

	MsdCoalescingQueue *pending;     /* (owned) */
	GCancellable *probe_cancellable; /* (owned) */
	gboolean probing;
	gboolean paused;
	gboolean failed;
	gboolean drained;
	guint delivering;         /* an event is out of the queue, being written */
	GError *failure;          /* (owned) (nullable): reported from an idle */
	MsdEngineContext *engine; /* (owned) */
	GSource *failed_source;   /* (owned) (nullable) */
	GSource *flush_source;    /* (owned) (nullable) */
	guint high_water;
	guint low_water;
	gsize max_bytes;
	guint64 n_delivered;
	guint64 n_not_written; /* events the writer refused, other than by a write error */
};

G_DEFINE_FINAL_TYPE(MsdDelivery, msd_delivery, G_TYPE_OBJECT)

enum {
	PROP_0,
	PROP_PAUSED,
	N_PROPS,
};

static GParamSpec *props[N_PROPS];

enum {
	SIGNAL_FAILED,
	N_SIGNALS,
};

static guint signals[N_SIGNALS];

static void msd_delivery_process(MsdDelivery *self);

static void
msd_delivery_set_paused(MsdDelivery *self, gboolean paused)
{
	if (self->paused == paused)
		return;
	self->paused = paused;
	g_debug("%u events waiting to be written: producer %s",
	        msd_coalescing_queue_get_length(self->pending), paused ? "paused" : "resumed");
	g_object_notify_by_pspec(G_OBJECT(self), props[PROP_PAUSED]);
}

static gboolean
msd_delivery_failed_cb(gpointer user_data)
{
	MsdDelivery *self = user_data;

	msd_source_clear(&self->failed_source);
	g_signal_emit(self, signals[SIGNAL_FAILED], 0, self->failure);
	return G_SOURCE_REMOVE;
}

/* Reported from an idle: whoever listens stops everything, which must not happen inside the
 * delivery's own loop (or the informer's that is feeding it). */
static void
msd_delivery_fail(MsdDelivery *self, const GError *error)
{
	if (self->failed)
		return;
	self->failed = TRUE;
	self->failure = g_error_copy(error);
	msd_source_clear(&self->flush_source);
	self->failed_source = msd_engine_context_add_idle(self->engine, G_PRIORITY_HIGH,
	                                                  "[meshsync] output failed",
	                                                  msd_delivery_failed_cb, self, NULL);
}

static gboolean
msd_delivery_flush_cb(gpointer user_data)
{
	MsdDelivery *self = user_data;
	g_autoptr(GError) error = NULL;

	msd_source_clear(&self->flush_source);
	if (self->writer == NULL || self->failed)
		return G_SOURCE_REMOVE;
	if (!meshsync_writer_flush(self->writer, &error)) {
		if (g_error_matches(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE))
			msd_delivery_fail(self, error);
		else
			g_message("flushing the output: %s", error->message);
	}
	return G_SOURCE_REMOVE;
}

/* Writers buffer; what was written reaches its destination once the loop has nothing more
 * urgent to do, so a burst of events costs one flush and a quiet period leaves nothing
 * behind in a buffer. */
static void
msd_delivery_schedule_flush(MsdDelivery *self)
{
	if (self->flush_source != NULL || self->writer == NULL || self->drained || self->failed)
		return;
	self->flush_source =
	        msd_engine_context_add_idle(self->engine, G_PRIORITY_LOW, "[meshsync] flush output",
	                                    msd_delivery_flush_cb, self, NULL);
}

static gboolean
msd_delivery_writer_ready(MsdDelivery *self)
{
	return self->writer == NULL || self->failed || meshsync_writer_is_writable(self->writer);
}

/* Hands one event to the writer. FALSE when the writer could not take it because it is not
 * writable: the event stays queued and is tried again once the writer says it is writable. */
static gboolean
msd_delivery_deliver(MsdDelivery *self, MsdQueuedEvent *event)
{
	MeshSyncResource *resource = event->resource;
	g_autoptr(GError) error = NULL;

	if (!event->announced) {
		event->announced = TRUE;
		/* what is announced is what is written: nothing merges into it any more */
		event->sealed = TRUE;
		if (self->announce != NULL)
			self->announce(resource, event->event_type, self->announce_data);
	}
	if (self->writer == NULL || self->failed)
		return TRUE;
	if (meshsync_writer_write(self->writer, resource, event->event_type, &error)) {
		self->n_delivered++;
		if (event->read_at != 0 && self->latency != NULL)
			self->latency(g_get_monotonic_time() - event->read_at, self->latency_data);
		msd_delivery_schedule_flush(self);
		return TRUE;
	}
	if (g_error_matches(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE)) {
		/* an output that cannot take events (disk full) would silently lose every later
		 * one: stop here and let the program say so */
		msd_delivery_fail(self, error);
		return TRUE;
	}
	if (!self->drained && !meshsync_writer_is_writable(self->writer))
		return FALSE;
	/* an output away when the run stops (a broker outage): the event is lost to it, and
	 * says so, but nothing is wrong with the program */
	self->n_not_written++;
	g_message("%s %s %s/%s not written: %s", meshsync_event_type_to_string(event->event_type),
	          meshsync_resource_get_kind(resource),
	          meshsync_resource_get_namespace(resource) != NULL
	                  ? meshsync_resource_get_namespace(resource)
	                  : "",
	          meshsync_resource_get_name(resource), error->message);
	return TRUE;
}

static void msd_delivery_finish_drain(MsdDelivery *self);

/* Writes @event, which is out of the queue while it is written so that whatever the
 * announcement or the writer triggers (a stop that drains the queue) cannot free it, and
 * nothing behind it overtakes it. @borrowed: @event is the caller's (on its stack), not the
 * queue's. FALSE: the writer cannot take it now; it is back at the head (a copy, if borrowed). */
static gboolean
msd_delivery_deliver_out(MsdDelivery *self, MsdQueuedEvent *event, gboolean borrowed)
{
	gboolean taken;

	self->delivering++;
	taken = msd_delivery_deliver(self, event);
	self->delivering--;
	if (!taken) {
		if (borrowed) {
			event = g_memdup2(event, sizeof(*event));
			g_object_ref(event->resource);
		}
		msd_coalescing_queue_push_head(self->pending, event);
	} else if (!borrowed) {
		msd_queued_event_free(event);
	}
	if (self->drained && self->delivering == 0)
		msd_delivery_finish_drain(self);
	return taken;
}

static gboolean
msd_delivery_deliver_head(MsdDelivery *self)
{
	return msd_delivery_deliver_out(self, msd_coalescing_queue_pop_head(self->pending), FALSE);
}

static void
msd_delivery_probe_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MsdDelivery) self = user_data;
	MsdQueuedEvent *head;
	g_autoptr(GError) error = NULL;

	if (!meshsync_resource_probe_finish(MESHSYNC_RESOURCE(source), result, &error) &&
	    g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
		return; /* drained meanwhile: the event went out already */
	self->probing = FALSE;
	head = msd_coalescing_queue_peek_head(self->pending);
	if (head == NULL || G_OBJECT(head->resource) != source)
		return;
	/* held at the head when not taken: process() pauses until the writer recovers */
	msd_delivery_deliver_head(self);
	msd_delivery_process(self);
}

/*
 * The producer is paused only once the queue is full: while the writer cannot take events,
 * the informers keep reading and updates of an object already waiting merge into it, so
 * what waits is bounded by the objects that changed, not by the events read. The bound on
 * events (each an object's merged state, or a DELETED and what follows it) and on their
 * bytes keeps memory bounded when more objects change than it holds; past it the informers
 * stop reading, as they did at the first unwritable write before there was a coalescing
 * queue, and nothing is dropped.
 */
static void
msd_delivery_update_paused(MsdDelivery *self)
{
	guint length = msd_coalescing_queue_get_length(self->pending);
	gsize bytes = msd_coalescing_queue_get_bytes(self->pending);

	if (length >= self->high_water || bytes >= self->max_bytes)
		msd_delivery_set_paused(self, TRUE);
	else if (self->paused && length <= self->low_water && bytes <= self->max_bytes / 2)
		msd_delivery_set_paused(self, FALSE);
}

static void
msd_delivery_process(MsdDelivery *self)
{
	MsdQueuedEvent *head;

	if (self->drained)
		return;
	while (!self->probing && (head = msd_coalescing_queue_peek_head(self->pending)) != NULL) {
		if (!msd_delivery_writer_ready(self))
			break;
		if (meshsync_resource_get_pending_endpoint(head->resource) != NULL) {
			/* keep the order: later events wait until this Service is probed, and
			 * the probed resource is the one written */
			self->probing = TRUE;
			head->sealed = TRUE;
			meshsync_resource_probe_async(head->resource, self->probe_cancellable,
			                              msd_delivery_probe_cb, g_object_ref(self));
			break;
		}
		if (!msd_delivery_deliver_head(self))
			break;
	}
	if (!self->drained)
		msd_delivery_update_paused(self);
}

static void
msd_delivery_writable_changed_cb(MeshSyncWriter *writer, MsdDelivery *self)
{
	msd_delivery_process(self);
}

void
msd_delivery_push(MsdDelivery *self, MeshSyncResource *resource, MeshSyncEventType type)
{
	msd_delivery_push_timed(self, resource, type, 0);
}

void
msd_delivery_push_timed(MsdDelivery *self,
                        MeshSyncResource *resource,
                        MeshSyncEventType type,
                        gint64 read_at)
{
	gboolean held;

	g_return_if_fail(MSD_IS_DELIVERY(self));
	g_return_if_fail(MESHSYNC_IS_RESOURCE(resource));

	if (self->drained) {
		MsdQueuedEvent event = {
		        .resource = resource, .event_type = type, .read_at = read_at};

		if (meshsync_resource_get_pending_endpoint(resource) != NULL)
			meshsync_resource_complete_probe(resource, FALSE);
		msd_delivery_deliver(self, &event);
		return;
	}
	/* Only an event that has to wait is indexed for merging: while the writer takes events
	 * as they come, each goes straight through without a hash. */
	held = self->probing || !msd_delivery_writer_ready(self) ||
	       msd_coalescing_queue_get_length(self->pending) > 0;
	if (!held && meshsync_resource_get_pending_endpoint(resource) == NULL) {
		/* nothing queued to overtake and the writer ready: it goes out as the head would,
		 * from the stack, without a queue entry, a list node and a reference made and
		 * dropped for it */
		MsdQueuedEvent event = {
		        .resource = resource, .event_type = type, .read_at = read_at};

		msd_delivery_deliver_out(self, &event, TRUE);
		if (!self->drained)
			msd_delivery_update_paused(self);
		return;
	}
	if (msd_coalescing_queue_push(self->pending, resource, type, read_at, held)) {
		/* merged: the queue did not grow, only its bytes may have */
		msd_delivery_update_paused(self);
		return;
	}
	msd_delivery_process(self);
}

static void
msd_delivery_finish_drain(MsdDelivery *self)
{
	MsdQueuedEvent *head;

	/* nothing received is dropped: a Service still waiting for its probe is written as if
	 * the probe had failed */
	while ((head = msd_coalescing_queue_pop_head(self->pending)) != NULL) {
		if (meshsync_resource_get_pending_endpoint(head->resource) != NULL)
			meshsync_resource_complete_probe(head->resource, FALSE);
		msd_delivery_deliver(self, head);
		msd_queued_event_free(head);
	}
	msd_delivery_set_paused(self, FALSE);
}

void
msd_delivery_drain(MsdDelivery *self)
{
	g_return_if_fail(MSD_IS_DELIVERY(self));

	if (self->drained)
		return;
	self->drained = TRUE;
	g_cancellable_cancel(self->probe_cancellable);
	msd_source_clear(&self->flush_source);
	self->probing = FALSE;
	/* called while an event is being written (from its announcement): the rest follows
	 * once that one is done, so the order holds */
	if (self->delivering == 0)
		msd_delivery_finish_drain(self);
}

static void
msd_delivery_dispose(GObject *object)
{
	MsdDelivery *self = MSD_DELIVERY(object);

	g_cancellable_cancel(self->probe_cancellable);
	msd_source_clear(&self->flush_source);
	msd_source_clear(&self->failed_source);
	if (self->writer != NULL)
		g_clear_signal_handler(&self->writable_id, self->writer);
	G_OBJECT_CLASS(msd_delivery_parent_class)->dispose(object);
}

static void
msd_delivery_finalize(GObject *object)
{
	MsdDelivery *self = MSD_DELIVERY(object);

	g_clear_pointer(&self->pending, msd_coalescing_queue_free);
	g_clear_object(&self->writer);
	g_clear_object(&self->probe_cancellable);
	g_clear_object(&self->engine);
	g_clear_error(&self->failure);
	G_OBJECT_CLASS(msd_delivery_parent_class)->finalize(object);
}

static void
msd_delivery_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
	MsdDelivery *self = MSD_DELIVERY(object);

	switch (prop_id) {
	case PROP_PAUSED:
		g_value_set_boolean(value, self->paused);
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
	}
}

static void
msd_delivery_class_init(MsdDeliveryClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->dispose = msd_delivery_dispose;
	object_class->finalize = msd_delivery_finalize;
	object_class->get_property = msd_delivery_get_property;

	/* Whether the producer should stop reading until the queue drains. */
	props[PROP_PAUSED] = g_param_spec_boolean("paused", NULL, NULL, FALSE,
	                                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS |
	                                                  G_PARAM_EXPLICIT_NOTIFY);
	g_object_class_install_properties(object_class, N_PROPS, props);

	/* The writer reported MESHSYNC_ERROR_WRITE; nothing more is written. */
	signals[SIGNAL_FAILED] = g_signal_new("failed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
	                                      0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_ERROR);
}

static void
msd_delivery_init(MsdDelivery *self)
{
	self->pending = msd_coalescing_queue_new();
	self->probe_cancellable = g_cancellable_new();
	self->high_water = MSD_DELIVERY_MAX_WAITING;
	self->low_water = MSD_DELIVERY_MAX_WAITING / 8;
	self->max_bytes = MSD_DELIVERY_MAX_WAITING_BYTES;
}

void
msd_delivery_set_engine_context(MsdDelivery *self, MsdEngineContext *engine)
{
	g_return_if_fail(MSD_IS_DELIVERY(self));
	g_return_if_fail(MSD_IS_ENGINE_CONTEXT(engine));
	/* sources already attached would stay in the old context */
	g_return_if_fail(self->flush_source == NULL && self->failed_source == NULL);

	g_set_object(&self->engine, engine);
}

MsdDelivery *
msd_delivery_new(MsdEngineContext *engine, MeshSyncWriter *writer)
{
	MsdDelivery *self;

	g_return_val_if_fail(engine == NULL || MSD_IS_ENGINE_CONTEXT(engine), NULL);
	g_return_val_if_fail(writer == NULL || MESHSYNC_IS_WRITER(writer), NULL);

	self = g_object_new(MSD_TYPE_DELIVERY, NULL);
	self->engine = engine != NULL ? g_object_ref(engine) : msd_engine_context_new();
	if (writer != NULL) {
		self->writer = g_object_ref(writer);
		self->writable_id =
		        g_signal_connect(writer, "writable-changed",
		                         G_CALLBACK(msd_delivery_writable_changed_cb), self);
	}
	return self;
}

void
msd_delivery_set_announce_func(MsdDelivery *self, MsdDeliveryAnnounceFunc func, gpointer user_data)
{
	g_return_if_fail(MSD_IS_DELIVERY(self));
	self->announce = func;
	self->announce_data = user_data;
}

void
msd_delivery_set_latency_func(MsdDelivery *self, MsdDeliveryLatencyFunc func, gpointer user_data)
{
	g_return_if_fail(MSD_IS_DELIVERY(self));
	self->latency = func;
	self->latency_data = func != NULL ? user_data : NULL;
}

void
msd_delivery_set_watermarks(MsdDelivery *self, guint high, guint low)
{
	g_return_if_fail(MSD_IS_DELIVERY(self));
	g_return_if_fail(low < high);
	self->high_water = high;
	self->low_water = low;
}

void
msd_delivery_set_max_bytes(MsdDelivery *self, gsize max_bytes)
{
	g_return_if_fail(MSD_IS_DELIVERY(self));
	g_return_if_fail(max_bytes > 0);
	self->max_bytes = max_bytes;
}

guint
msd_delivery_get_length(MsdDelivery *self)
{
	g_return_val_if_fail(MSD_IS_DELIVERY(self), 0);
	return msd_coalescing_queue_get_length(self->pending);
}

guint
msd_delivery_get_n_waiting_keys(MsdDelivery *self)
{
	g_return_val_if_fail(MSD_IS_DELIVERY(self), 0);
	return msd_coalescing_queue_get_n_keys(self->pending);
}

guint64
msd_delivery_get_n_coalesced(MsdDelivery *self)
{
	g_return_val_if_fail(MSD_IS_DELIVERY(self), 0);
	return msd_coalescing_queue_get_n_coalesced(self->pending);
}

gboolean
msd_delivery_get_paused(MsdDelivery *self)
{
	g_return_val_if_fail(MSD_IS_DELIVERY(self), FALSE);
	return self->paused;
}

gboolean
msd_delivery_get_failed(MsdDelivery *self)
{
	g_return_val_if_fail(MSD_IS_DELIVERY(self), FALSE);
	return self->failed;
}

guint64
msd_delivery_get_n_delivered(MsdDelivery *self)
{
	g_return_val_if_fail(MSD_IS_DELIVERY(self), 0);
	return self->n_delivered;
}

guint64
msd_delivery_get_n_not_written(MsdDelivery *self)
{
	g_return_val_if_fail(MSD_IS_DELIVERY(self), 0);
	return self->n_not_written;
}
