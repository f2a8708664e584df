/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * The main() a fuzz target gets when the build has no libFuzzer (-Dfuzzing=false, any
 * compiler): every file of the corpus directories (or single files) named on the command line
 * goes once through LLVMFuzzerTestOneInput(), in name order, so that the normal build and the
 * valgrind or sanitizer setups replay the checked-in corpora as regression tests.
 */

#include <glib.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz-common.h"

static guint replayed;

static void
replay_file(const gchar *path)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *data = NULL;
	gsize length = 0;

	if (!g_file_get_contents(path, &data, &length, &error)) {
		g_printerr("fuzz-replay: %s\n", error->message);
		exit(1);
	}
	/* a private copy of exactly the input's bytes, as libFuzzer gives: no terminating NUL
	 * to lean on, so reads past the end are caught by the sanitizers */
	{
		g_autofree guint8 *copy = g_memdup2(data, length);

		LLVMFuzzerTestOneInput(copy, length);
	}
	replayed++;
}

static gint
compare_paths(gconstpointer a, gconstpointer b)
{
	return g_strcmp0(*(const gchar *const *)a, *(const gchar *const *)b);
}

static void
replay_path(const gchar *path)
{
	g_autoptr(GPtrArray) names = NULL;
	g_autoptr(GDir) dir = NULL;
	g_autoptr(GError) error = NULL;
	const gchar *name;

	if (!g_file_test(path, G_FILE_TEST_IS_DIR)) {
		replay_file(path);
		return;
	}
	dir = g_dir_open(path, 0, &error);
	if (dir == NULL) {
		g_printerr("fuzz-replay: %s\n", error->message);
		exit(1);
	}
	names = g_ptr_array_new_with_free_func(g_free);
	while ((name = g_dir_read_name(dir)) != NULL)
		g_ptr_array_add(names, g_build_filename(path, name, NULL));
	g_ptr_array_sort(names, compare_paths);
	for (guint i = 0; i < names->len; i++)
		replay_file(g_ptr_array_index(names, i));
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		g_printerr("usage: %s CORPUS-DIR-OR-FILE...\n", argv[0]);
		return 2;
	}
	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++)
		replay_path(argv[i]);
	if (replayed == 0) {
		g_printerr("fuzz-replay: no inputs in the corpus\n");
		return 1;
	}
	g_print("%s: replayed %u inputs\n", argv[0], replayed);
	return 0;
}
