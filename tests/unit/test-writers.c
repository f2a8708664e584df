/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "meshsync-composite-writer.h"
#include "meshsync-error.h"
#include "meshsync-file-writer.h"
#include "meshsync-resource.h"

static MeshSyncResource *
make_pod(const gchar *name, const gchar *uid, const gchar *rv, MeshSyncEventType event_type)
{
	g_autofree gchar *json = NULL;
	g_autoptr(GError) error = NULL;
	MeshSyncResource *resource;

	if (uid != NULL)
		json = g_strdup_printf(
		        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
		        "{\"name\":\"%s\",\"namespace\":\"shop\",\"uid\":\"%s\","
		        "\"resourceVersion\":\"%s\"},\"spec\":{\"nodeName\":\"n1\"}}",
		        name, uid, rv);
	else
		json = g_strdup_printf("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
		                       "{\"name\":\"%s\",\"resourceVersion\":\"%s\"}}",
		                       name, rv);
	resource = meshsync_resource_new_from_json(json, -1, event_type, "cluster-1", &error);
	g_assert_no_error(error);
	return resource;
}

static guint
count_documents(const gchar *text)
{
	guint n = 0;

	for (const gchar *p = text; (p = strstr(p, "---\n")) != NULL; p += 4)
		n++;
	return n;
}

static gchar *
read_file(const gchar *path)
{
	g_autofree gchar *contents = NULL;
	g_autoptr(GError) error = NULL;

	g_assert_true(g_file_get_contents(path, &contents, NULL, &error));
	g_assert_no_error(error);
	return g_steal_pointer(&contents);
}

static void
test_file_writer_first_state_per_uid(void)
{
	g_autofree gchar *dir = g_dir_make_tmp("writer-XXXXXX", NULL);
	g_autofree gchar *path = g_build_filename(dir, "snap.yaml", NULL);
	g_autofree gchar *extended_path = g_build_filename(dir, "snap-extended.yaml", NULL);
	g_autoptr(MeshSyncFileWriter) writer = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *main_text = NULL;
	g_autofree gchar *extended_text = NULL;
	struct {
		const gchar *name;
		const gchar *uid;
		const gchar *rv;
		MeshSyncEventType type;
	} events[] = {
	        {"web-0", "u-1", "10", MESHSYNC_EVENT_TYPE_ADDED},
	        {"web-0", "u-1", "11", MESHSYNC_EVENT_TYPE_MODIFIED},
	        {"web-1", "u-2", "12", MESHSYNC_EVENT_TYPE_ADDED},
	        {"loose", NULL, "13", MESHSYNC_EVENT_TYPE_ADDED},
	        {"loose", NULL, "14", MESHSYNC_EVENT_TYPE_MODIFIED},
	        {"web-0", "u-1", "15", MESHSYNC_EVENT_TYPE_DELETED},
	};

	writer = meshsync_file_writer_new(path, TRUE, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(meshsync_file_writer_get_path(writer), ==, path);
	g_assert_cmpstr(meshsync_file_writer_get_extended_path(writer), ==, extended_path);
	for (guint i = 0; i < G_N_ELEMENTS(events); i++) {
		g_autoptr(MeshSyncResource) pod =
		        make_pod(events[i].name, events[i].uid, events[i].rv, events[i].type);

		g_assert_true(meshsync_writer_write(MESHSYNC_WRITER(writer), pod, events[i].type,
		                                    &error));
		g_assert_no_error(error);
	}
	g_assert_true(meshsync_writer_close(MESHSYNC_WRITER(writer), &error));
	g_assert_no_error(error);

	/* u-1 once (its first state), u-2 once, both uid-less events. */
	main_text = read_file(path);
	g_assert_cmpuint(count_documents(main_text), ==, 4);
	g_assert_cmpuint(meshsync_file_writer_get_n_documents(writer), ==, 4);
	g_assert_nonnull(strstr(main_text, "resourceVersion: \"10\""));
	g_assert_null(strstr(main_text, "resourceVersion: \"11\""));
	g_assert_null(strstr(main_text, "resourceVersion: \"15\""));
	g_assert_nonnull(strstr(main_text, "resourceVersion: \"14\""));
	g_assert_null(strstr(main_text, "EventType"));

	/* The extended file has every event with its type. */
	extended_text = read_file(extended_path);
	g_assert_cmpuint(count_documents(extended_text), ==, G_N_ELEMENTS(events));
	g_assert_nonnull(strstr(extended_text, "EventType: MODIFIED\nObject:\n"));
	g_assert_nonnull(strstr(extended_text, "EventType: DELETED\n"));

	/* Writing after close is an error, not a silent drop. */
	{
		g_autoptr(MeshSyncResource) late = make_pod("late", "u-9", "20", 0);

		g_assert_false(meshsync_writer_write(MESHSYNC_WRITER(writer), late,
		                                     MESHSYNC_EVENT_TYPE_ADDED, &error));
		g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE);
	}
	g_unlink(path);
	g_unlink(extended_path);
	g_rmdir(dir);
}

static void
test_file_writer_appends(void)
{
	g_autofree gchar *dir = g_dir_make_tmp("writer-XXXXXX", NULL);
	g_autofree gchar *path = g_build_filename(dir, "snap.yaml", NULL);
	g_autoptr(MeshSyncFileWriter) writer = NULL;
	g_autoptr(MeshSyncResource) pod = make_pod("web-0", "u-1", "1", 0);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *text = NULL;

	g_assert_true(g_file_set_contents(path, "earlier: run\n---\n", -1, NULL));
	writer = meshsync_file_writer_new(path, FALSE, &error);
	g_assert_no_error(error);
	g_assert_null(meshsync_file_writer_get_extended_path(writer));
	g_assert_true(meshsync_writer_write(MESHSYNC_WRITER(writer), pod, MESHSYNC_EVENT_TYPE_ADDED,
	                                    &error));
	g_assert_true(meshsync_writer_flush(MESHSYNC_WRITER(writer), &error));
	g_assert_no_error(error);
	text = read_file(path);
	g_assert_true(g_str_has_prefix(text, "earlier: run\n---\napiVersion: v1\n"));
	g_assert_true(meshsync_writer_close(MESHSYNC_WRITER(writer), &error));
	g_unlink(path);
	g_rmdir(dir);
}

static void
test_file_writer_disk_full(void)
{
	g_autoptr(MeshSyncFileWriter) writer = NULL;
	g_autoptr(MeshSyncResource) pod = make_pod("web-0", "u-1", "1", 0);
	g_autoptr(GError) error = NULL;
	g_autoptr(GError) again = NULL;

	/* /dev/full accepts the open and fails every write with ENOSPC. */
	writer = meshsync_file_writer_new("/dev/full", FALSE, &error);
	g_assert_no_error(error);
	g_assert_true(meshsync_writer_write(MESHSYNC_WRITER(writer), pod, MESHSYNC_EVENT_TYPE_ADDED,
	                                    &error));
	g_assert_false(meshsync_writer_flush(MESHSYNC_WRITER(writer), &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE);
	g_assert_nonnull(strstr(error->message, "/dev/full"));
	g_assert_nonnull(strstr(error->message, "No space left on device"));

	/* Every later call reports the same failure. */
	g_assert_false(meshsync_writer_write(MESHSYNC_WRITER(writer), pod,
	                                     MESHSYNC_EVENT_TYPE_ADDED, &again));
	g_assert_error(again, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE);
	g_clear_error(&again);
	g_assert_false(meshsync_writer_close(MESHSYNC_WRITER(writer), &again));
	g_assert_error(again, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE);
}

static void
test_file_writer_unwritable(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncFileWriter) writer =
	        meshsync_file_writer_new("/nonexistent-dir/snap.yaml", FALSE, &error);

	g_assert_null(writer);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE);
	g_assert_nonnull(strstr(error->message, "/nonexistent-dir/snap.yaml"));
}

static void
test_file_writer_default_names(void)
{
	g_autofree gchar *dir = g_dir_make_tmp("writer-XXXXXX", NULL);
	g_autoptr(GDateTime) now = g_date_time_new_now_local();
	g_autofree gchar *date = g_date_time_format(now, "%Y%m%d");
	g_autofree gchar *first = NULL;
	g_autofree gchar *second = NULL;
	g_autofree gchar *expected_first = NULL;
	g_autofree gchar *expected_second = NULL;
	g_autofree gchar *name = NULL;

	name = g_strdup_printf("meshery-cluster-snapshot-%s-00.yaml", date);
	expected_first = g_build_filename(dir, name, NULL);
	g_free(name);
	name = g_strdup_printf("meshery-cluster-snapshot-%s-01.yaml", date);
	expected_second = g_build_filename(dir, name, NULL);

	first = meshsync_file_writer_make_default_path(dir, NULL);
	g_assert_cmpstr(first, ==, expected_first);
	g_assert_true(g_file_set_contents(first, "", 0, NULL));
	second = meshsync_file_writer_make_default_path(dir, NULL);
	g_assert_cmpstr(second, ==, expected_second);
	g_unlink(first);
	g_rmdir(dir);
}

static void
test_file_writer_extended_names(void)
{
	g_autofree gchar *dir = g_dir_make_tmp("writer-XXXXXX", NULL);
	g_autofree gchar *plain = g_build_filename(dir, "out", NULL);
	g_autofree gchar *plain_extended = g_build_filename(dir, "out-extended.yaml", NULL);
	g_autofree gchar *yml = g_build_filename(dir, "snap.yml", NULL);
	g_autofree gchar *yml_extended = g_build_filename(dir, "snap-extended.yml", NULL);
	g_autoptr(MeshSyncFileWriter) a = meshsync_file_writer_new(plain, TRUE, NULL);
	g_autoptr(MeshSyncFileWriter) b = meshsync_file_writer_new(yml, TRUE, NULL);

	g_assert_cmpstr(meshsync_file_writer_get_extended_path(a), ==, plain_extended);
	g_assert_cmpstr(meshsync_file_writer_get_extended_path(b), ==, yml_extended);
	g_assert_true(meshsync_writer_close(MESHSYNC_WRITER(a), NULL));
	g_assert_true(meshsync_writer_close(MESHSYNC_WRITER(b), NULL));
	g_unlink(plain);
	g_unlink(plain_extended);
	g_unlink(yml);
	g_unlink(yml_extended);
	g_rmdir(dir);
}

static void
test_composite_writer(void)
{
	g_autofree gchar *dir = g_dir_make_tmp("writer-XXXXXX", NULL);
	g_autofree gchar *path = g_build_filename(dir, "snap.yaml", NULL);
	g_autoptr(MeshSyncCompositeWriter) composite = meshsync_composite_writer_new();
	g_autoptr(MeshSyncFileWriter) full = meshsync_file_writer_new("/dev/full", FALSE, NULL);
	g_autoptr(MeshSyncFileWriter) good = meshsync_file_writer_new(path, FALSE, NULL);
	g_autoptr(MeshSyncResource) pod = make_pod("web-0", "u-1", "1", 0);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *text = NULL;

	meshsync_composite_writer_add(composite, MESHSYNC_WRITER(full));
	meshsync_composite_writer_add(composite, MESHSYNC_WRITER(good));
	g_assert_cmpuint(meshsync_composite_writer_get_n_writers(composite), ==, 2);
	g_assert_true(meshsync_writer_write(MESHSYNC_WRITER(composite), pod,
	                                    MESHSYNC_EVENT_TYPE_ADDED, &error));

	/* The failing writer does not keep the event from the other one. */
	g_assert_false(meshsync_writer_flush(MESHSYNC_WRITER(composite), &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE);
	text = read_file(path);
	g_assert_cmpuint(count_documents(text), ==, 1);
	g_clear_error(&error);
	g_assert_false(meshsync_writer_close(MESHSYNC_WRITER(composite), &error));
	g_unlink(path);
	g_rmdir(dir);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
	g_test_add_func("/writers/file/first-state-per-uid", test_file_writer_first_state_per_uid);
	g_test_add_func("/writers/file/appends", test_file_writer_appends);
	g_test_add_func("/writers/file/disk-full", test_file_writer_disk_full);
	g_test_add_func("/writers/file/unwritable", test_file_writer_unwritable);
	g_test_add_func("/writers/file/default-names", test_file_writer_default_names);
	g_test_add_func("/writers/file/extended-names", test_file_writer_extended_names);
	g_test_add_func("/writers/composite", test_composite_writer);
	return g_test_run();
}
