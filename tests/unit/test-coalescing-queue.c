/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include "engine/msd-coalescing-queue.h"
#include "meshsync-resource.h"

static MeshSyncResource *
make_object(const gchar *api_version,
            const gchar *kind,
            const gchar *namespace_, /* NULL: cluster-scoped */
            const gchar *name,
            const gchar *uid,
            guint version)
{
	g_autofree gchar *ns_member = namespace_ != NULL
	                                      ? g_strdup_printf("\"namespace\":\"%s\",", namespace_)
	                                      : g_strdup("");
	g_autofree gchar *json = g_strdup_printf(
	        "{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"metadata\":{\"name\":\"%s\",%s"
	        "\"uid\":\"%s\",\"resourceVersion\":\"%u\"}}",
	        api_version, kind, name, ns_member, uid, version);
	g_autoptr(GError) error = NULL;
	MeshSyncResource *resource =
	        meshsync_resource_new_from_json(json, -1, MESHSYNC_EVENT_TYPE_ADDED, "c", &error);

	g_assert_no_error(error);
	return resource;
}

static gboolean
push(MsdCoalescingQueue *queue, MeshSyncResource *resource, MeshSyncEventType type)
{
	g_autoptr(MeshSyncResource) owned = resource;

	return msd_coalescing_queue_push(queue, owned, type, 0, TRUE);
}

static MeshSyncResource *
pod(const gchar *name, const gchar *uid, guint version)
{
	return make_object("v1", "Pod", "shop", name, uid, version);
}

/* Pops the head and checks its type, name, uid and resourceVersion. */
static void
assert_pop(MsdCoalescingQueue *queue,
           MeshSyncEventType type,
           const gchar *name,
           const gchar *uid,
           const gchar *version)
{
	g_autoptr(MsdQueuedEvent) event = msd_coalescing_queue_pop_head(queue);

	g_assert_nonnull(event);
	g_assert_cmpstr(meshsync_event_type_to_string(event->event_type), ==,
	                meshsync_event_type_to_string(type));
	g_assert_cmpstr(meshsync_resource_get_name(event->resource), ==, name);
	g_assert_cmpstr(meshsync_resource_get_uid(event->resource), ==, uid);
	g_assert_cmpstr(meshsync_resource_get_resource_version(event->resource), ==, version);
}

/* fd2: three rapid writes of one object are one write carrying the last state. */
static void
test_queue_three_writes_one_event(void)
{
	g_autoptr(MsdCoalescingQueue) queue = msd_coalescing_queue_new();

	g_assert_false(push(queue, pod("a", "ua", 1), MESHSYNC_EVENT_TYPE_MODIFIED));
	g_assert_false(push(queue, pod("b", "ub", 2), MESHSYNC_EVENT_TYPE_ADDED));
	g_assert_true(push(queue, pod("a", "ua", 3), MESHSYNC_EVENT_TYPE_MODIFIED));
	g_assert_true(push(queue, pod("a", "ua", 4), MESHSYNC_EVENT_TYPE_MODIFIED));
	g_assert_cmpuint(msd_coalescing_queue_get_length(queue), ==, 2);
	g_assert_cmpuint(msd_coalescing_queue_get_n_keys(queue), ==, 2);
	g_assert_cmpuint(msd_coalescing_queue_get_n_coalesced(queue), ==, 2);
	/* the merged event keeps its place: a's last state goes out before b */
	assert_pop(queue, MESHSYNC_EVENT_TYPE_MODIFIED, "a", "ua", "4");
	assert_pop(queue, MESHSYNC_EVENT_TYPE_ADDED, "b", "ub", "2");
	g_assert_cmpuint(msd_coalescing_queue_get_n_keys(queue), ==, 0);
	g_assert_cmpuint(msd_coalescing_queue_get_bytes(queue), ==, 0);
	g_assert_null(msd_coalescing_queue_pop_head(queue));
}

/* fd2: ADDED then DELETED are both published, the DELETED with the state it was read with;
 * ADDED then MODIFIED go out as ADDED with the last state. */
static void
test_queue_added_then_deleted(void)
{
	g_autoptr(MsdCoalescingQueue) queue = msd_coalescing_queue_new();

	push(queue, pod("a", "ua", 1), MESHSYNC_EVENT_TYPE_ADDED);
	push(queue, pod("a", "ua", 2), MESHSYNC_EVENT_TYPE_MODIFIED);
	g_assert_false(push(queue, pod("a", "ua", 3), MESHSYNC_EVENT_TYPE_DELETED));
	/* nothing merges into a DELETED, not even another one */
	g_assert_false(push(queue, pod("a", "ua", 3), MESHSYNC_EVENT_TYPE_DELETED));
	g_assert_cmpuint(msd_coalescing_queue_get_length(queue), ==, 3);
	assert_pop(queue, MESHSYNC_EVENT_TYPE_ADDED, "a", "ua", "2");
	assert_pop(queue, MESHSYNC_EVENT_TYPE_DELETED, "a", "ua", "3");
	assert_pop(queue, MESHSYNC_EVENT_TYPE_DELETED, "a", "ua", "3");
}

/* An object deleted and made again under its name (a new uid): both incarnations go out, in
 * order, the second one's updates merged into its own ADDED only. */
static void
test_queue_deleted_then_recreated(void)
{
	g_autoptr(MsdCoalescingQueue) queue = msd_coalescing_queue_new();

	push(queue, pod("a", "u1", 1), MESHSYNC_EVENT_TYPE_MODIFIED);
	push(queue, pod("a", "u1", 2), MESHSYNC_EVENT_TYPE_DELETED);
	g_assert_false(push(queue, pod("a", "u2", 3), MESHSYNC_EVENT_TYPE_ADDED));
	g_assert_true(push(queue, pod("a", "u2", 4), MESHSYNC_EVENT_TYPE_MODIFIED));
	g_assert_false(push(queue, pod("a", "u2", 5), MESHSYNC_EVENT_TYPE_DELETED));
	g_assert_false(push(queue, pod("a", "u3", 6), MESHSYNC_EVENT_TYPE_ADDED));
	g_assert_cmpuint(msd_coalescing_queue_get_n_keys(queue), ==, 1);
	assert_pop(queue, MESHSYNC_EVENT_TYPE_MODIFIED, "a", "u1", "1");
	assert_pop(queue, MESHSYNC_EVENT_TYPE_DELETED, "a", "u1", "2");
	assert_pop(queue, MESHSYNC_EVENT_TYPE_ADDED, "a", "u2", "4");
	/* a's newest event still waits: it stays mergeable */
	g_assert_cmpuint(msd_coalescing_queue_get_n_keys(queue), ==, 1);
	assert_pop(queue, MESHSYNC_EVENT_TYPE_DELETED, "a", "u2", "5");
	g_assert_true(push(queue, pod("a", "u3", 7), MESHSYNC_EVENT_TYPE_MODIFIED));
	assert_pop(queue, MESHSYNC_EVENT_TYPE_ADDED, "a", "u3", "7");
	g_assert_cmpuint(msd_coalescing_queue_get_n_keys(queue), ==, 0);
}

/* An event the writer saw (refused, put back) is sealed: what follows waits behind it. */
static void
test_queue_sealed_head(void)
{
	g_autoptr(MsdCoalescingQueue) queue = msd_coalescing_queue_new();
	MsdQueuedEvent *head;

	push(queue, pod("a", "ua", 1), MESHSYNC_EVENT_TYPE_ADDED);
	head = msd_coalescing_queue_pop_head(queue);
	msd_coalescing_queue_push_head(queue, head);
	g_assert_true(head->sealed);
	g_assert_false(push(queue, pod("a", "ua", 2), MESHSYNC_EVENT_TYPE_MODIFIED));
	g_assert_true(push(queue, pod("a", "ua", 3), MESHSYNC_EVENT_TYPE_MODIFIED));
	assert_pop(queue, MESHSYNC_EVENT_TYPE_ADDED, "a", "ua", "1");
	assert_pop(queue, MESHSYNC_EVENT_TYPE_MODIFIED, "a", "ua", "3");
}

/* Events pushed without coalescing (the writer takes them as they come) are never merged
 * into, and cost nothing in the index or the bytes. */
static void
test_queue_not_coalescing(void)
{
	g_autoptr(MsdCoalescingQueue) queue = msd_coalescing_queue_new();
	g_autoptr(MeshSyncResource) first = pod("a", "ua", 1);

	g_assert_false(
	        msd_coalescing_queue_push(queue, first, MESHSYNC_EVENT_TYPE_ADDED, 0, FALSE));
	g_assert_cmpuint(msd_coalescing_queue_get_n_keys(queue), ==, 0);
	g_assert_cmpuint(msd_coalescing_queue_get_bytes(queue), ==, 0);
	g_assert_false(push(queue, pod("a", "ua", 2), MESHSYNC_EVENT_TYPE_MODIFIED));
	g_assert_cmpuint(msd_coalescing_queue_get_length(queue), ==, 2);
	g_assert_cmpuint(msd_coalescing_queue_get_bytes(queue), >, 0);
}

/* fd2: the key is stable for namespaced and cluster-scoped objects: the same object merges
 * whatever its version, different namespaces, kinds or API groups never do. */
static void
test_queue_keys(void)
{
	g_autoptr(MsdCoalescingQueue) queue = msd_coalescing_queue_new();

	/* namespaced: the namespace is part of the key */
	push(queue, make_object("v1", "ConfigMap", "shop", "x", "u1", 1),
	     MESHSYNC_EVENT_TYPE_ADDED);
	g_assert_false(push(queue, make_object("v1", "ConfigMap", "other", "x", "u2", 2),
	                    MESHSYNC_EVENT_TYPE_ADDED));
	g_assert_true(push(queue, make_object("v1", "ConfigMap", "shop", "x", "u1", 3),
	                   MESHSYNC_EVENT_TYPE_MODIFIED));
	/* cluster-scoped: no namespace, never confused with a namespaced one of its name */
	g_assert_false(push(queue, make_object("v1", "Namespace", NULL, "x", "u3", 4),
	                    MESHSYNC_EVENT_TYPE_ADDED));
	g_assert_true(push(queue, make_object("v1", "Namespace", NULL, "x", "u3", 5),
	                   MESHSYNC_EVENT_TYPE_MODIFIED));
	g_assert_false(
	        push(queue,
	             make_object("rbac.authorization.k8s.io/v1", "ClusterRole", NULL, "x", "u4", 6),
	             MESHSYNC_EVENT_TYPE_ADDED));
	/* the kind and the API group are part of it, the version is not */
	g_assert_false(push(queue, make_object("a.example.com/v1", "Widget", "shop", "x", "u5", 7),
	                    MESHSYNC_EVENT_TYPE_ADDED));
	g_assert_false(push(queue, make_object("b.example.com/v1", "Widget", "shop", "x", "u6", 8),
	                    MESHSYNC_EVENT_TYPE_ADDED));
	g_assert_true(push(queue,
	                   make_object("a.example.com/v1beta1", "Widget", "shop", "x", "u5", 9),
	                   MESHSYNC_EVENT_TYPE_MODIFIED));
	g_assert_false(push(queue, make_object("a.example.com/v1", "Gadget", "shop", "x", "u7", 10),
	                    MESHSYNC_EVENT_TYPE_ADDED));
	g_assert_cmpuint(msd_coalescing_queue_get_n_keys(queue), ==, 7);
	g_assert_cmpuint(msd_coalescing_queue_get_length(queue), ==, 7);
	g_assert_cmpuint(msd_coalescing_queue_get_n_coalesced(queue), ==, 3);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/coalescing-queue/three-writes-one-event",
	                test_queue_three_writes_one_event);
	g_test_add_func("/coalescing-queue/added-then-deleted", test_queue_added_then_deleted);
	g_test_add_func("/coalescing-queue/deleted-then-recreated",
	                test_queue_deleted_then_recreated);
	g_test_add_func("/coalescing-queue/sealed-head", test_queue_sealed_head);
	g_test_add_func("/coalescing-queue/not-coalescing", test_queue_not_coalescing);
	g_test_add_func("/coalescing-queue/keys", test_queue_keys);
	return g_test_run();
}
