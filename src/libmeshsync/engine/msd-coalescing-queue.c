/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <string.h>

#include "engine/msd-coalescing-queue.h"
#include "meshsync-resource-private.h"

struct _MsdCoalescingQueue {
	GQueue events;     /* (element-type MsdQueuedEvent) (owned) */
	GHashTable *index; /* (element-type MsdQueuedEvent): the set of indexed events */
	gsize bytes;
	guint64 n_coalesced;
};

/*
 * The key of an event is its object's API group, kind, namespace and name: what the
 * informers' stores know an object by, so the events merged here are exactly those the
 * store saw as one object's history. The uid is left out on purpose: it tells two
 * incarnations of a name apart, which the queue gets from the events' order instead (the
 * DELETED of the first is the last event indexed for the name, and nothing merges into a
 * DELETED, so the second one's ADDED queues behind it); and an object read without a uid
 * still has a key. The group, not the whole apiVersion: an object's version does not make
 * it another object, but two kinds of the same name in different groups are different ones.
 */
static gsize
msd_api_group_length(const gchar *api_version)
{
	const gchar *slash = api_version != NULL ? strchr(api_version, '/') : NULL;

	return slash != NULL ? (gsize)(slash - api_version) : 0;
}

static guint
msd_str_hash_mix(guint hash, const gchar *s, gsize length)
{
	for (gsize i = 0; i < length; i++)
		hash = (hash << 5) + hash + (guchar)s[i];
	/* a separator, so that ("ab", "c") and ("a", "bc") hash apart */
	return (hash << 5) + hash + 0xff;
}

static guint
msd_queued_event_hash(gconstpointer data)
{
	const MsdQueuedEvent *event = data;
	MeshSyncResource *resource = event->resource;
	const gchar *api_version = meshsync_resource_get_api_version(resource);
	const gchar *kind = meshsync_resource_get_kind(resource);
	const gchar *namespace_ = meshsync_resource_get_namespace(resource);
	const gchar *name = meshsync_resource_get_name(resource);
	guint hash = 5381;

	hash = msd_str_hash_mix(hash, name != NULL ? name : "", name != NULL ? strlen(name) : 0);
	hash = msd_str_hash_mix(hash, namespace_ != NULL ? namespace_ : "",
	                        namespace_ != NULL ? strlen(namespace_) : 0);
	hash = msd_str_hash_mix(hash, kind != NULL ? kind : "", kind != NULL ? strlen(kind) : 0);
	return msd_str_hash_mix(hash, api_version != NULL ? api_version : "",
	                        msd_api_group_length(api_version));
}

/* NULL and "" are the same: a cluster-scoped object has no namespace either way. */
static gboolean
msd_str_equal0(const gchar *a, const gchar *b)
{
	return g_strcmp0(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

static gboolean
msd_queued_event_equal(gconstpointer data_a, gconstpointer data_b)
{
	MeshSyncResource *a = ((const MsdQueuedEvent *)data_a)->resource;
	MeshSyncResource *b = ((const MsdQueuedEvent *)data_b)->resource;
	const gchar *version_a = meshsync_resource_get_api_version(a);
	const gchar *version_b = meshsync_resource_get_api_version(b);
	gsize group_a = msd_api_group_length(version_a);

	return msd_str_equal0(meshsync_resource_get_name(a), meshsync_resource_get_name(b)) &&
	       msd_str_equal0(meshsync_resource_get_namespace(a),
	                      meshsync_resource_get_namespace(b)) &&
	       msd_str_equal0(meshsync_resource_get_kind(a), meshsync_resource_get_kind(b)) &&
	       group_a == msd_api_group_length(version_b) &&
	       (group_a == 0 || memcmp(version_a, version_b, group_a) == 0);
}

static gsize
msd_resource_size(MeshSyncResource *resource)
{
	return msd_model_wire_size_hint(meshsync_resource_get_model(resource));
}

MsdCoalescingQueue *
msd_coalescing_queue_new(void)
{
	MsdCoalescingQueue *self = g_new0(MsdCoalescingQueue, 1);

	g_queue_init(&self->events);
	self->index = g_hash_table_new(msd_queued_event_hash, msd_queued_event_equal);
	return self;
}

void
msd_queued_event_free(MsdQueuedEvent *event)
{
	g_object_unref(event->resource);
	g_free(event);
}

void
msd_coalescing_queue_free(MsdCoalescingQueue *self)
{
	if (self == NULL)
		return;
	g_hash_table_unref(self->index);
	g_queue_clear_full(&self->events, (GDestroyNotify)msd_queued_event_free);
	g_free(self);
}

gboolean
msd_coalescing_queue_push(MsdCoalescingQueue *self,
                          MeshSyncResource *resource,
                          MeshSyncEventType event_type,
                          gint64 read_at,
                          gboolean coalesce)
{
	MsdQueuedEvent *event;

	g_return_val_if_fail(self != NULL, FALSE);
	g_return_val_if_fail(MESHSYNC_IS_RESOURCE(resource), FALSE);

	if (coalesce) {
		MsdQueuedEvent probe = {.resource = resource};
		MsdQueuedEvent *waiting = g_hash_table_lookup(self->index, &probe);

		if (waiting != NULL && !waiting->sealed &&
		    waiting->event_type != MESHSYNC_EVENT_TYPE_DELETED &&
		    event_type != MESHSYNC_EVENT_TYPE_DELETED) {
			gsize size = msd_resource_size(resource);

			/* same key, so the index's hash of the event stays right */
			g_set_object(&waiting->resource, resource);
			self->bytes = self->bytes - waiting->size + size;
			waiting->size = size;
			self->n_coalesced++;
			return TRUE;
		}
	}

	event = g_new0(MsdQueuedEvent, 1);
	event->resource = g_object_ref(resource);
	event->event_type = event_type;
	event->read_at = read_at;
	g_queue_push_tail(&self->events, event);
	if (coalesce) {
		MsdQueuedEvent *previous = g_hash_table_lookup(self->index, event);

		/* the newest event of a key is the only one anything may merge into */
		if (previous != NULL)
			previous->indexed = FALSE;
		g_hash_table_add(self->index, event);
		event->indexed = TRUE;
		/* counted only for events that wait: one going straight out costs nothing */
		event->size = msd_resource_size(resource);
		self->bytes += event->size;
	}
	return FALSE;
}

MsdQueuedEvent *
msd_coalescing_queue_peek_head(MsdCoalescingQueue *self)
{
	g_return_val_if_fail(self != NULL, NULL);
	return g_queue_peek_head(&self->events);
}

MsdQueuedEvent *
msd_coalescing_queue_pop_head(MsdCoalescingQueue *self)
{
	MsdQueuedEvent *event;

	g_return_val_if_fail(self != NULL, NULL);

	event = g_queue_pop_head(&self->events);
	if (event == NULL)
		return NULL;
	if (event->indexed) {
		g_hash_table_remove(self->index, event);
		event->indexed = FALSE;
	}
	self->bytes -= event->size;
	return event;
}

void
msd_coalescing_queue_push_head(MsdCoalescingQueue *self, MsdQueuedEvent *event)
{
	g_return_if_fail(self != NULL);
	g_return_if_fail(event != NULL && !event->indexed);

	event->sealed = TRUE;
	self->bytes += event->size;
	g_queue_push_head(&self->events, event);
}

guint
msd_coalescing_queue_get_length(MsdCoalescingQueue *self)
{
	g_return_val_if_fail(self != NULL, 0);
	return self->events.length;
}

guint
msd_coalescing_queue_get_n_keys(MsdCoalescingQueue *self)
{
	g_return_val_if_fail(self != NULL, 0);
	return g_hash_table_size(self->index);
}

gsize
msd_coalescing_queue_get_bytes(MsdCoalescingQueue *self)
{
	g_return_val_if_fail(self != NULL, 0);
	return self->bytes;
}

guint64
msd_coalescing_queue_get_n_coalesced(MsdCoalescingQueue *self)
{
	g_return_val_if_fail(self != NULL, 0);
	return self->n_coalesced;
}
