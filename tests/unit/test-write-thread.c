/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include "meshsync-error.h"
#include "output/msd-write-thread.h"

#define CAPACITY 16
#define BATCH    4

typedef struct {
	GThread *loop;     /* the thread that pushes */
	GArray *processed; /* (element-type guint): items in the order processed */
	guint by_worker;   /* items processed by the writer's thread */
	guint fail_at;     /* the item whose processing fails, or G_MAXUINT */
	gint alive;        /* pushed and not released */
	gint max_alive;
	gboolean freed_elsewhere; /* an item released by another thread than the loop */
} Fixture;

typedef struct {
	Fixture *fixture;
	guint number;
} Item;

static gboolean
process_cb(gpointer data, gpointer user_data, GError **error)
{
	Item *item = data;
	Fixture *f = user_data;

	if (g_thread_self() != f->loop)
		f->by_worker++;
	if (item->number == f->fail_at) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE, "item %u failed",
		            item->number);
		return FALSE;
	}
	g_array_append_val(f->processed, item->number);
	return TRUE;
}

static void
item_free(gpointer data)
{
	Item *item = data;
	Fixture *f = item->fixture;

	if (g_thread_self() != f->loop)
		f->freed_elsewhere = TRUE;
	f->alive--;
	g_free(item);
}

static gboolean
notify_cb(gpointer user_data)
{
	return G_SOURCE_REMOVE;
}

static void
fixture_init(Fixture *f, guint fail_at)
{
	f->loop = g_thread_self();
	f->processed = g_array_new(FALSE, FALSE, sizeof(guint));
	f->fail_at = fail_at;
}

static void
push_items(Fixture *f, MsdWriteThread *thread, guint n)
{
	for (guint i = 0; i < n; i++) {
		Item *item = g_new0(Item, 1);

		item->fixture = f;
		item->number = i;
		f->alive++;
		msd_write_thread_push(thread, item);
		f->max_alive = MAX(f->max_alive, f->alive);
	}
}

/* Every item is processed once, in order, and released by the loop, however the work was
 * split between the two threads; what waits for release stays bounded. */
static void
test_write_thread_order_and_release(void)
{
	g_autoptr(GMainContext) context = g_main_context_new();
	Fixture f = {0};
	MsdWriteThread *thread;
	guint n = 20000;

	fixture_init(&f, G_MAXUINT);
	thread = msd_write_thread_new("test-writer", CAPACITY, BATCH, process_cb, item_free,
	                              notify_cb, &f, context);
	push_items(&f, thread, n);
	g_assert_true(msd_write_thread_wait(thread, NULL));
	g_assert_cmpuint(f.processed->len, ==, n);
	for (guint i = 0; i < n; i++)
		g_assert_cmpuint(g_array_index(f.processed, guint, i), ==, i);
	/* the thread took batches (more than a few items), and released none of them */
	g_assert_cmpuint(f.by_worker, >, 0);
	g_assert_false(f.freed_elsewhere);
	g_assert_cmpint(f.alive, ==, 0);
	g_assert_cmpint(f.max_alive, <=, 2 * CAPACITY + 1);
	msd_write_thread_free(thread);
	g_array_unref(f.processed);
}

/* After a failure the items behind it are dropped, yet every one is released, by the loop. */
static void
test_write_thread_failure(void)
{
	g_autoptr(GMainContext) context = g_main_context_new();
	g_autoptr(GError) error = NULL;
	Fixture f = {0};
	MsdWriteThread *thread;

	fixture_init(&f, 1000);
	thread = msd_write_thread_new("test-writer", CAPACITY, BATCH, process_cb, item_free,
	                              notify_cb, &f, context);
	push_items(&f, thread, 3000);
	g_assert_false(msd_write_thread_wait(thread, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE);
	g_assert_cmpuint(f.processed->len, ==, 1000);
	g_assert_cmpuint(g_array_index(f.processed, guint, 999), ==, 999);
	g_assert_false(f.freed_elsewhere);
	g_assert_cmpint(f.alive, ==, 0);
	msd_write_thread_free(thread);
	g_array_unref(f.processed);
}

/* Items still queued when the writer is freed are released with it. */
static void
test_write_thread_free_releases(void)
{
	g_autoptr(GMainContext) context = g_main_context_new();
	Fixture f = {0};
	MsdWriteThread *thread;

	fixture_init(&f, G_MAXUINT);
	thread = msd_write_thread_new("test-writer", CAPACITY, BATCH, process_cb, item_free,
	                              notify_cb, &f, context);
	push_items(&f, thread, 100);
	msd_write_thread_free(thread);
	g_assert_cmpint(f.alive, ==, 0);
	g_assert_false(f.freed_elsewhere);
	g_array_unref(f.processed);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/write-thread/order-and-release", test_write_thread_order_and_release);
	g_test_add_func("/write-thread/failure", test_write_thread_failure);
	g_test_add_func("/write-thread/free-releases", test_write_thread_free_releases);
	return g_test_run();
}
