/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <glib/gstdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "meshsync-composite-writer.h"
#include "meshsync-error.h"
#include "meshsync-file-writer.h"
#include "meshsync-resource.h"
#include "output/msd-snapshot-scan.h"
#include "output/msd-snapshot-yaml.h"

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

/* A new directory for one test's files; the test stops here when none can be made. */
static gchar *
test_tmp_dir(void)
{
	g_autoptr(GError) error = NULL;
	gchar *dir = g_dir_make_tmp(NULL, &error);

	g_assert_no_error(error);
	return dir;
}

static void
test_file_writer_first_state_per_uid(void)
{
	g_autofree gchar *dir = test_tmp_dir();
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
	g_autofree gchar *dir = test_tmp_dir();
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

/* Bursts go through the writer's thread: the files hold exactly what rendering each event in
 * turn gives, in the order written, the snapshot the first state of each object and the
 * extended file every event. */
static void
test_file_writer_thread_order(void)
{
	g_autofree gchar *dir = test_tmp_dir();
	g_autofree gchar *path = g_build_filename(dir, "snap.yaml", NULL);
	g_autofree gchar *extended_path = g_build_filename(dir, "snap-extended.yaml", NULL);
	g_autoptr(MeshSyncFileWriter) writer = NULL;
	g_autoptr(GString) expected = g_string_new(NULL);
	g_autoptr(GString) expected_extended = g_string_new(NULL);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *text = NULL;
	g_autofree gchar *extended_text = NULL;
	const guint n = 1500;

	writer = meshsync_file_writer_new(path, TRUE, &error);
	g_assert_no_error(error);
	for (guint round = 0; round < 2; round++) {
		for (guint i = 0; i < n; i++) {
			g_autofree gchar *name = g_strdup_printf("web-%u", i);
			g_autofree gchar *uid = g_strdup_printf("u-%u", i);
			g_autofree gchar *rv = g_strdup_printf("%u", round + 1);
			MeshSyncEventType type = round == 0 ? MESHSYNC_EVENT_TYPE_ADDED
			                                    : MESHSYNC_EVENT_TYPE_MODIFIED;
			g_autoptr(MeshSyncResource) pod = make_pod(name, uid, rv, type);

			g_assert_true(msd_snapshot_yaml_append_record(expected_extended, pod, type,
			                                              NULL, &error));
			if (round == 0)
				g_assert_true(msd_snapshot_yaml_append_resource(expected, pod, NULL,
				                                                &error));
			g_assert_true(
			        meshsync_writer_write(MESHSYNC_WRITER(writer), pod, type, &error));
			g_assert_no_error(error);
		}
	}
	g_assert_cmpuint(meshsync_file_writer_get_n_documents(writer), ==, n);
	g_assert_true(meshsync_writer_flush(MESHSYNC_WRITER(writer), &error));
	g_assert_no_error(error);
	/* flush returns with everything taken in the files */
	text = read_file(path);
	extended_text = read_file(extended_path);
	g_assert_cmpuint(strlen(text), ==, expected->len);
	g_assert_true(memcmp(text, expected->str, expected->len) == 0);
	g_assert_cmpuint(strlen(extended_text), ==, expected_extended->len);
	g_assert_true(memcmp(extended_text, expected_extended->str, expected_extended->len) == 0);
	g_assert_true(meshsync_writer_close(MESHSYNC_WRITER(writer), &error));
	g_assert_no_error(error);
	g_unlink(path);
	g_unlink(extended_path);
	g_rmdir(dir);
}

static void
writable_changed_cb(MeshSyncWriter *writer, gpointer user_data)
{
	guint *count = user_data;

	(*count)++;
}

/* A writer whose thread is a full queue behind says it is not writable, then tells the
 * engine's context when it is again; nothing taken is lost. */
static void
test_file_writer_thread_backpressure(void)
{
	g_autofree gchar *dir = test_tmp_dir();
	g_autofree gchar *path = g_build_filename(dir, "snap.yaml", NULL);
	g_autoptr(MeshSyncFileWriter) writer = NULL;
	/* no uid: the snapshot takes every event of it */
	g_autoptr(MeshSyncResource) pod = make_pod("web-0", NULL, "1", 0);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *text = NULL;
	guint changed = 0;
	guint written = 0;

	writer = meshsync_file_writer_new(path, FALSE, &error);
	g_assert_no_error(error);
	g_signal_connect(writer, "writable-changed", G_CALLBACK(writable_changed_cb), &changed);
	/* a push costs far less than a document: the queue fills long before this bound */
	while (meshsync_writer_is_writable(MESHSYNC_WRITER(writer)) && written < 1000000) {
		g_assert_true(meshsync_writer_write(MESHSYNC_WRITER(writer), pod,
		                                    MESHSYNC_EVENT_TYPE_ADDED, &error));
		written++;
	}
	g_assert_false(meshsync_writer_is_writable(MESHSYNC_WRITER(writer)));
	while (changed == 0)
		g_main_context_iteration(NULL, TRUE);
	g_assert_true(meshsync_writer_is_writable(MESHSYNC_WRITER(writer)));
	g_assert_true(meshsync_writer_close(MESHSYNC_WRITER(writer), &error));
	g_assert_no_error(error);
	text = read_file(path);
	g_assert_cmpuint(count_documents(text), ==, written);
	g_unlink(path);
	g_rmdir(dir);
}

/* A write error met by the thread (the buffer drained there) comes back on the engine's
 * context and through the next calls, with the file's name and the system's reason. */
static void
test_file_writer_thread_disk_full(void)
{
	g_autoptr(MeshSyncFileWriter) writer = NULL;
	g_autoptr(MeshSyncResource) pod = make_pod("web-0", NULL, "1", 0);
	g_autoptr(GError) error = NULL;
	guint changed = 0;

	writer = meshsync_file_writer_new("/dev/full", FALSE, &error);
	g_assert_no_error(error);
	g_signal_connect(writer, "writable-changed", G_CALLBACK(writable_changed_cb), &changed);
	/* well past the 256 KB buffer, so the thread drains it and fails */
	for (guint i = 0; i < 4000 && error == NULL; i++) {
		if (!meshsync_writer_is_writable(MESHSYNC_WRITER(writer)))
			g_main_context_iteration(NULL, TRUE);
		else
			meshsync_writer_write(MESHSYNC_WRITER(writer), pod,
			                      MESHSYNC_EVENT_TYPE_ADDED, &error);
	}
	if (error == NULL)
		g_assert_false(meshsync_writer_flush(MESHSYNC_WRITER(writer), &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE);
	g_assert_nonnull(strstr(error->message, "/dev/full"));
	g_assert_nonnull(strstr(error->message, "No space left on device"));
	g_clear_error(&error);
	/* the engine hears of it on its own context too */
	while (changed == 0)
		g_main_context_iteration(NULL, TRUE);
	g_assert_false(meshsync_writer_write(MESHSYNC_WRITER(writer), pod,
	                                     MESHSYNC_EVENT_TYPE_ADDED, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE);
	g_clear_error(&error);
	g_assert_false(meshsync_writer_close(MESHSYNC_WRITER(writer), &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE);
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
	g_autofree gchar *dir = test_tmp_dir();
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
	g_autofree gchar *dir = test_tmp_dir();
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

/* Writes the ADDED event of each pod in @uids (named after its uid) to a writer on @path. */
static MeshSyncFileWriter *
write_pods(const gchar *path, gboolean extended, const gchar *const *uids)
{
	g_autoptr(MeshSyncFileWriter) writer = NULL;
	g_autoptr(GError) error = NULL;

	writer = meshsync_file_writer_new(path, extended, &error);
	g_assert_no_error(error);
	for (guint i = 0; uids[i] != NULL; i++) {
		g_autoptr(MeshSyncResource) pod =
		        make_pod(uids[i], uids[i], "1", MESHSYNC_EVENT_TYPE_ADDED);

		g_assert_true(meshsync_writer_write(MESHSYNC_WRITER(writer), pod,
		                                    MESHSYNC_EVENT_TYPE_ADDED, &error));
		g_assert_no_error(error);
	}
	g_assert_true(meshsync_writer_close(MESHSYNC_WRITER(writer), &error));
	g_assert_no_error(error);
	return g_steal_pointer(&writer);
}

static guint
count_occurrences(const gchar *text, const gchar *needle)
{
	guint n = 0;

	for (const gchar *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/* A second writer on the same file (a restarted run) writes only the objects the file does
 * not hold; uids that the YAML writer has to quote are read back as well. */
static void
test_file_writer_continues_existing(void)
{
	g_autofree gchar *dir = test_tmp_dir();
	g_autofree gchar *path = g_build_filename(dir, "snap.yaml", NULL);
	g_autofree gchar *extended_path = g_build_filename(dir, "snap-extended.yaml", NULL);
	const gchar *const first[] = {
	        "u-1", "12345", "true", "0x1F", "a: b", "it's", "#hash", "2025-06-01", NULL,
	};
	const gchar *const second[] = {
	        "u-1",  "12345", "u-new", "true",       "0x1F",
	        "a: b", "it's",  "#hash", "2025-06-01", NULL,
	};
	g_autoptr(MeshSyncFileWriter) a = NULL;
	g_autoptr(MeshSyncFileWriter) b = NULL;
	g_autofree gchar *text = NULL;
	g_autofree gchar *extended_text = NULL;

	a = write_pods(path, TRUE, first);
	g_assert_cmpuint(meshsync_file_writer_get_n_documents(a), ==, 8);
	b = write_pods(path, TRUE, second);
	g_assert_cmpuint(meshsync_file_writer_get_n_documents(b), ==, 1);

	text = read_file(path);
	g_assert_cmpuint(count_documents(text), ==, 9);
	g_assert_cmpuint(count_occurrences(text, "name: u-new\n"), ==, 1);
	g_assert_cmpuint(count_occurrences(text, "name: u-1\n"), ==, 1);
	/* the quoted ones really were quoted, so the scan read quoted values */
	g_assert_cmpuint(count_occurrences(text, "uid: \"12345\"\n"), ==, 1);
	g_assert_cmpuint(count_occurrences(text, "uid: '#hash'\n"), ==, 1);
	g_assert_cmpuint(count_occurrences(text, "uid: 'a: b'\n"), ==, 1);
	/* the new object comes after what the first run wrote */
	g_assert_true(g_str_has_suffix(text, "uid: u-new\nmodel: \"\"\npattern_resource: null\n"
	                                     "spec:\n  attribute: '{\"nodeName\":\"n1\"}'\n  id: "
	                                     "\"\"\n---\n"));

	/* the extended file keeps every event of both runs */
	extended_text = read_file(extended_path);
	g_assert_cmpuint(count_documents(extended_text), ==, 8 + 9);

	g_unlink(path);
	g_unlink(extended_path);
	g_rmdir(dir);
}

/* A run killed in the middle of a write leaves half a document: the next run drops it and
 * writes that object again, whole; the same for the extended file's last record. */
static void
test_file_writer_drops_partial_document(void)
{
	g_autofree gchar *dir = test_tmp_dir();
	g_autofree gchar *path = g_build_filename(dir, "snap.yaml", NULL);
	g_autofree gchar *extended_path = g_build_filename(dir, "snap-extended.yaml", NULL);
	const gchar *const uids[] = {"u-1", "u-2", "u-3", NULL};
	g_autoptr(MeshSyncFileWriter) a = NULL;
	g_autoptr(MeshSyncFileWriter) b = NULL;
	g_autofree gchar *whole = NULL;
	g_autofree gchar *whole_extended = NULL;
	g_autofree gchar *text = NULL;
	g_autofree gchar *extended_text = NULL;
	const gchar *last;
	gsize cut;

	a = write_pods(path, TRUE, uids);
	whole = read_file(path);
	whole_extended = read_file(extended_path);

	/* cut the snapshot inside u-3's document, after its uid line */
	last = strstr(whole, "uid: u-3\n");
	g_assert_nonnull(last);
	cut = (gsize)(last - whole) + strlen("uid: u-3\n") + 5;
	g_assert_true(g_file_set_contents(path, whole, (gssize)cut, NULL));
	/* and the extended file inside its last record's first line */
	last = g_strrstr(whole_extended, "---\nEventType: ");
	g_assert_nonnull(last);
	cut = (gsize)(last - whole_extended) + strlen("---\nEvent");
	g_assert_true(g_file_set_contents(extended_path, whole_extended, (gssize)cut, NULL));

	b = write_pods(path, TRUE, uids);
	g_assert_cmpuint(meshsync_file_writer_get_n_documents(b), ==, 1);
	text = read_file(path);
	g_assert_cmpstr(text, ==, whole);
	extended_text = read_file(extended_path);
	g_assert_cmpuint(count_documents(extended_text), ==, 2 + 3);
	g_assert_true(g_str_has_prefix(extended_text, "EventType: ADDED\n"));
	g_assert_cmpuint(count_occurrences(extended_text, "EventType: ADDED\n"), ==, 5);

	/* the whole file cut inside its first document */
	g_assert_true(g_file_set_contents(path, "apiVersion: v1\nclus", -1, NULL));
	g_clear_object(&b);
	b = write_pods(path, FALSE, uids);
	g_assert_cmpuint(meshsync_file_writer_get_n_documents(b), ==, 3);
	g_free(text);
	text = read_file(path);
	g_assert_true(g_str_has_prefix(text, "apiVersion: v1\ncluster_id: cluster-1\n"));
	g_assert_cmpuint(count_documents(text), ==, 3);

	g_unlink(path);
	g_unlink(extended_path);
	g_rmdir(dir);
}

/* A file that does not end with a whole document and whose end is not one of ours cut short
 * is not ours to change: the writer refuses it and leaves it as it was. */
static void
test_file_writer_refuses_foreign_tail(void)
{
	g_autofree gchar *dir = test_tmp_dir();
	g_autofree gchar *path = g_build_filename(dir, "notes.txt", NULL);
	g_autoptr(MeshSyncFileWriter) writer = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *text = NULL;

	g_assert_true(g_file_set_contents(path, "earlier: run\n---\nmy notes\n", -1, NULL));
	writer = meshsync_file_writer_new(path, FALSE, &error);
	g_assert_null(writer);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE);
	g_assert_nonnull(strstr(error->message, path));
	g_assert_nonnull(strstr(error->message, "does not end with a whole document"));
	text = read_file(path);
	g_assert_cmpstr(text, ==, "earlier: run\n---\nmy notes\n");
	g_unlink(path);
	g_rmdir(dir);
}

static guint
file_mode(const gchar *path)
{
	GStatBuf st;

	g_assert_cmpint(g_stat(path, &st), ==, 0);
	return st.st_mode & 07777;
}

/* The snapshot holds Secret data: both files are created 0600 whatever the umask lets
 * through; a file that exists keeps the mode it has. */
static void
test_file_writer_private_mode(void)
{
	g_autofree gchar *dir = test_tmp_dir();
	g_autofree gchar *path = g_build_filename(dir, "snap.yaml", NULL);
	g_autofree gchar *extended_path = g_build_filename(dir, "snap-extended.yaml", NULL);
	const gchar *const uids[] = {"u-1", NULL};
	const mode_t umasks[] = {0, 022, 0277};
	mode_t saved = umask(0);

	for (guint i = 0; i < G_N_ELEMENTS(umasks); i++) {
		g_autoptr(MeshSyncFileWriter) writer = NULL;

		umask(umasks[i]);
		writer = write_pods(path, TRUE, uids);
		g_assert_cmpuint(file_mode(path), ==, 0600);
		g_assert_cmpuint(file_mode(extended_path), ==, 0600);
		g_unlink(path);
		g_unlink(extended_path);
	}
	umask(saved);

	{
		g_autoptr(MeshSyncFileWriter) writer = NULL;

		g_assert_true(g_file_set_contents(path, "", 0, NULL));
		g_assert_cmpint(g_chmod(path, 0644), ==, 0);
		writer = write_pods(path, FALSE, uids);
		g_assert_cmpuint(file_mode(path), ==, 0644);
	}
	g_unlink(path);
	g_rmdir(dir);
}

static void
test_snapshot_scan_scalar(void)
{
	struct {
		const gchar *text;
		const gchar *value;
	} cases[] = {
	        {"3c22ee10-46e6-454a-8076-cba031fe3415", "3c22ee10-46e6-454a-8076-cba031fe3415"},
	        {"\"12345\"", "12345"},
	        {"\"\"", ""},
	        {"'it''s'", "it's"},
	        {"\"a\\\"b\\\\c\\u00e9\\x41\"", "a\"b\\c\xc3\xa9"
	                                        "A"},
	        {"\"unterminated", NULL},
	        {"'unterminated", NULL},
	        {"\"folded\\", NULL},
	        {"\"after\" x", NULL},
	        {"|-", NULL},
	        {">", NULL},
	        {"", NULL},
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree gchar *value =
		        msd_snapshot_scan_scalar(cases[i].text, strlen(cases[i].text));

		g_assert_cmpstr(value, ==, cases[i].value);
	}
}

/* The forward scan reads only the object's own uid: an owner's uid, a uid key elsewhere and a
 * document without its separator are not taken; it reads across its chunk size. */
static void
test_snapshot_scan_layout(void)
{
	g_autofree gchar *dir = test_tmp_dir();
	g_autofree gchar *path = g_build_filename(dir, "snap.yaml", NULL);
	g_autoptr(GString) text = g_string_new(NULL);
	g_autoptr(GHashTable) uids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *long_value = g_strnfill(200000, 'x');
	MsdSnapshotScan scan;
	gint fd;

	g_string_append(text, "apiVersion: v1\nmetadata:\n  name: a\n  ownerReferences:\n"
	                      "  - kind: ReplicaSet\n    uid: owner-1\n  uid: obj-1\n"
	                      "spec:\n  uid: not-metadata\n---\n");
	/* a line far longer than a chunk, then a document split across chunks */
	g_string_append_printf(text, "apiVersion: v1\nlong: %s\nmetadata:\n  uid: obj-2\n---\n",
	                       long_value);
	g_string_append(text, "apiVersion: v1\nmetadata:\n  uid: obj-3\n");
	g_assert_true(g_file_set_contents(path, text->str, (gssize)text->len, NULL));

	fd = g_open(path, O_RDONLY, 0);
	g_assert_cmpint(fd, >=, 0);
	g_assert_true(msd_snapshot_scan_uids(fd, path, "apiVersion:", uids, &scan, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(scan.n_documents, ==, 2);
	g_assert_cmpint(scan.size, ==, (goffset)text->len);
	g_assert_cmpint(scan.complete_end, ==,
	                (goffset)(strstr(text->str, "obj-2\n---\n") - text->str + 10));
	g_assert_true(scan.tail_ours);
	g_assert_cmpuint(g_hash_table_size(uids), ==, 2);
	g_assert_true(g_hash_table_contains(uids, "obj-1"));
	g_assert_true(g_hash_table_contains(uids, "obj-2"));

	/* the backward scan finds the same end, and the same across its chunk size */
	memset(&scan, 0xff, sizeof(scan));
	g_assert_true(msd_snapshot_scan_tail(fd, path, "apiVersion:", &scan, &error));
	g_assert_no_error(error);
	g_assert_cmpint(scan.complete_end, ==,
	                (goffset)(strstr(text->str, "obj-2\n---\n") - text->str + 10));
	g_assert_true(scan.tail_ours);
	close(fd);

	/* only the first document, whole, long: the backward scan goes back to the start */
	g_string_truncate(text, 0);
	g_string_append_printf(text, "EventType: ADDED\nObject: %s\n---\nEventType: MOD",
	                       long_value);
	g_assert_true(g_file_set_contents(path, text->str, (gssize)text->len, NULL));
	fd = g_open(path, O_RDONLY, 0);
	g_assert_true(msd_snapshot_scan_tail(fd, path, "EventType:", &scan, &error));
	g_assert_cmpint(scan.complete_end, ==, (goffset)text->len - 14);
	g_assert_true(scan.tail_ours);
	g_assert_true(msd_snapshot_scan_tail(fd, path, "apiVersion:", &scan, &error));
	g_assert_false(scan.tail_ours);
	close(fd);

	/* no separator at all */
	g_assert_true(g_file_set_contents(path, "---\nEventType: A", -1, NULL));
	fd = g_open(path, O_RDONLY, 0);
	g_assert_true(msd_snapshot_scan_tail(fd, path, "EventType:", &scan, &error));
	g_assert_cmpint(scan.complete_end, ==, 4);
	close(fd);
	g_assert_true(g_file_set_contents(path, "Event", -1, NULL));
	fd = g_open(path, O_RDONLY, 0);
	g_assert_true(msd_snapshot_scan_tail(fd, path, "EventType:", &scan, &error));
	g_assert_cmpint(scan.complete_end, ==, 0);
	g_assert_true(scan.tail_ours);
	close(fd);

	g_unlink(path);
	g_rmdir(dir);
}

static void
test_composite_writer(void)
{
	g_autofree gchar *dir = test_tmp_dir();
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
	g_test_add_func("/writers/file/thread-order", test_file_writer_thread_order);
	g_test_add_func("/writers/file/thread-backpressure", test_file_writer_thread_backpressure);
	g_test_add_func("/writers/file/thread-disk-full", test_file_writer_thread_disk_full);
	g_test_add_func("/writers/file/unwritable", test_file_writer_unwritable);
	g_test_add_func("/writers/file/default-names", test_file_writer_default_names);
	g_test_add_func("/writers/file/extended-names", test_file_writer_extended_names);
	g_test_add_func("/writers/file/continues-existing", test_file_writer_continues_existing);
	g_test_add_func("/writers/file/drops-partial-document",
	                test_file_writer_drops_partial_document);
	g_test_add_func("/writers/file/refuses-foreign-tail",
	                test_file_writer_refuses_foreign_tail);
	g_test_add_func("/writers/file/private-mode", test_file_writer_private_mode);
	g_test_add_func("/writers/snapshot-scan/scalar", test_snapshot_scan_scalar);
	g_test_add_func("/writers/snapshot-scan/layout", test_snapshot_scan_layout);
	g_test_add_func("/writers/composite", test_composite_writer);
	return g_test_run();
}
