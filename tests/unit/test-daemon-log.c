/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <string.h>

#include <libmeshsync/meshsync.h>

#include "meshsyncd-log.h"

static void
test_parse(void)
{
	MeshsyncdLogFormat format = MESHSYNCD_LOG_FORMAT_JSON;
	MeshsyncdLogLevel level = MESHSYNCD_LOG_LEVEL_ERROR;
	g_autoptr(GError) error = NULL;

	g_assert_true(meshsyncd_log_parse_format(NULL, &format, &error));
	g_assert_cmpint(format, ==, MESHSYNCD_LOG_FORMAT_TEXT);
	g_assert_true(meshsyncd_log_parse_format("json", &format, &error));
	g_assert_cmpint(format, ==, MESHSYNCD_LOG_FORMAT_JSON);
	g_assert_false(meshsyncd_log_parse_format("logfmt", &format, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, "\"logfmt\""));
	g_clear_error(&error);

	g_assert_true(meshsyncd_log_parse_level(NULL, &level, &error));
	g_assert_cmpint(level, ==, MESHSYNCD_LOG_LEVEL_INFO);
	g_assert_true(meshsyncd_log_parse_level("Debug", &level, &error));
	g_assert_cmpint(level, ==, MESHSYNCD_LOG_LEVEL_DEBUG);
	g_assert_true(meshsyncd_log_parse_level("warning", &level, &error));
	g_assert_cmpint(level, ==, MESHSYNCD_LOG_LEVEL_WARNING);
	g_assert_false(meshsyncd_log_parse_level("trace", &level, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG);
}

/* The filter alone: the writer stays GLib's for the test's own output. */
static void
test_levels_and_domains(void)
{
	g_unsetenv("G_MESSAGES_DEBUG");

	meshsyncd_log_set_level(MESHSYNCD_LOG_LEVEL_INFO);
	g_assert_true(meshsyncd_log_wants(G_LOG_LEVEL_INFO, "MeshSyncInformer"));
	g_assert_true(meshsyncd_log_wants(G_LOG_LEVEL_MESSAGE, "MeshSyncEngine"));
	g_assert_false(meshsyncd_log_wants(G_LOG_LEVEL_DEBUG, "MeshSyncInformer"));
	/* another library's info is its own business; its messages and warnings are not */
	g_assert_false(meshsyncd_log_wants(G_LOG_LEVEL_INFO, "GLib-Net"));
	g_assert_true(meshsyncd_log_wants(G_LOG_LEVEL_MESSAGE, "GLib-Net"));
	g_assert_true(meshsyncd_log_wants(G_LOG_LEVEL_WARNING, "GLib-GIO"));
	g_assert_true(meshsyncd_log_wants(G_LOG_LEVEL_CRITICAL, NULL));

	meshsyncd_log_set_level(MESHSYNCD_LOG_LEVEL_DEBUG);
	g_assert_true(meshsyncd_log_wants(G_LOG_LEVEL_DEBUG, "MeshSyncInformer"));
	g_assert_true(meshsyncd_log_wants(G_LOG_LEVEL_DEBUG, "MsdAnything"));
	g_assert_false(meshsyncd_log_wants(G_LOG_LEVEL_DEBUG, "GLib-GIO"));
	g_assert_false(meshsyncd_log_wants(G_LOG_LEVEL_DEBUG, NULL));

	meshsyncd_log_set_level(MESHSYNCD_LOG_LEVEL_WARNING);
	g_assert_false(meshsyncd_log_wants(G_LOG_LEVEL_MESSAGE, "MeshSyncEngine"));
	g_assert_false(meshsyncd_log_wants(G_LOG_LEVEL_INFO, "MeshSyncEngine"));
	g_assert_true(meshsyncd_log_wants(G_LOG_LEVEL_WARNING, "MeshSyncEngine"));

	meshsyncd_log_set_level(MESHSYNCD_LOG_LEVEL_ERROR);
	g_assert_false(meshsyncd_log_wants(G_LOG_LEVEL_WARNING, "MeshSyncEngine"));
	g_assert_true(meshsyncd_log_wants(G_LOG_LEVEL_CRITICAL, "MeshSyncEngine"));

	/* G_MESSAGES_DEBUG keeps GLib's meaning, at any level */
	g_setenv("G_MESSAGES_DEBUG", "GLib-Net MeshSyncKube", TRUE);
	g_assert_true(meshsyncd_log_wants(G_LOG_LEVEL_DEBUG, "GLib-Net"));
	g_assert_true(meshsyncd_log_wants(G_LOG_LEVEL_DEBUG, "MeshSyncKube"));
	g_assert_false(meshsyncd_log_wants(G_LOG_LEVEL_DEBUG, "GLib-GIO"));
	g_unsetenv("G_MESSAGES_DEBUG");
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/daemon-log/parse", test_parse);
	g_test_add_func("/daemon-log/levels-and-domains", test_levels_and_domains);
	return g_test_run();
}
