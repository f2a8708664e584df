/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <json-glib/json-glib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>

#include "meshsync-kube-config.h"
#include "test-kubesim.h"

static gboolean timed_out;

static gboolean
timeout_cb(gpointer user_data)
{
	timed_out = TRUE;
	return G_SOURCE_REMOVE;
}

/* Iterates the main loop until @condition holds; fails the test after TIMEOUT_SECONDS. */
void
wait_until(Condition condition, gpointer user_data, const gchar *what)
{
	guint id;

	timed_out = FALSE;
	id = g_timeout_add_seconds(TIMEOUT_SECONDS, timeout_cb, NULL);
	while (!condition(user_data) && !timed_out)
		g_main_context_iteration(NULL, TRUE);
	if (timed_out)
		g_error("timed out waiting for %s", what);
	g_source_remove(id);
}

void
async_wait_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	AsyncWait *wait = user_data;

	wait->done = TRUE;
	wait->result = g_object_ref(result);
}

gboolean
async_done(gpointer user_data)
{
	return ((AsyncWait *)user_data)->done;
}

static void
die_with_parent(gpointer user_data)
{
	prctl(PR_SET_PDEATHSIG, SIGTERM);
}

void
sim_start(Sim *sim, guint pods, guint namespaces)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GDataInputStream) out = NULL;
	g_autoptr(GSubprocessLauncher) launcher = NULL;
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autofree gchar *kubeconfig = NULL;
	g_autofree gchar *pods_text = g_strdup_printf("%u", pods);
	g_autofree gchar *namespaces_text = g_strdup_printf("%u", namespaces);
	const gchar *kubesim = g_getenv("MESHSYNC_KUBESIM");
	AsyncWait wait = {FALSE, NULL, NULL};

	g_assert_nonnull(kubesim);
	memset(sim, 0, sizeof(*sim));
	sim->tmpdir = g_dir_make_tmp("test-kubesim-XXXXXX", &error);
	g_assert_no_error(error);
	kubeconfig = g_build_filename(sim->tmpdir, "kubeconfig", NULL);
	sim->kubeconfig = g_strdup(kubeconfig);
	launcher = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE);
	/* a failed assertion aborts this process: the simulator must not outlive it */
	g_subprocess_launcher_set_child_setup(launcher, die_with_parent, NULL, NULL);
	sim->process = g_subprocess_launcher_spawn(
	        launcher, &error, kubesim, "--port", "0", "--address", "127.0.0.1", "--pods",
	        pods_text, "--namespaces", namespaces_text, "--write-kubeconfig", kubeconfig, NULL);
	g_assert_no_error(error);

	/* the URL is the first line of stdout, printed once the server listens */
	out = g_data_input_stream_new(g_subprocess_get_stdout_pipe(sim->process));
	g_data_input_stream_read_line_async(out, G_PRIORITY_DEFAULT, NULL, async_wait_cb, &wait);
	wait_until(async_done, &wait, "the kubesim URL");
	sim->url = g_data_input_stream_read_line_finish(out, wait.result, NULL, &error);
	g_object_unref(wait.result);
	g_assert_no_error(error);
	g_assert_nonnull(sim->url);
	g_assert_true(g_str_has_prefix(sim->url, "http"));

	config = meshsync_kube_config_new_from_file(kubeconfig, NULL, &error);
	g_assert_no_error(error);
	sim->client = msd_kube_client_new(config, &error);
	g_assert_no_error(error);
	sim->session = soup_session_new();
}

void
sim_stop(Sim *sim)
{
	g_autoptr(GFile) dir = g_file_new_for_path(sim->tmpdir);
	g_autoptr(GFileEnumerator) children = NULL;
	GFileInfo *info;

	g_subprocess_force_exit(sim->process);
	g_subprocess_wait(sim->process, NULL, NULL);
	g_clear_object(&sim->process);
	g_clear_object(&sim->client);
	g_clear_object(&sim->session);
	children = g_file_enumerate_children(dir, G_FILE_ATTRIBUTE_STANDARD_NAME,
	                                     G_FILE_QUERY_INFO_NOFOLLOW_SYMLINKS, NULL, NULL);
	while (children != NULL &&
	       (info = g_file_enumerator_next_file(children, NULL, NULL)) != NULL) {
		g_autoptr(GFile) child = g_file_get_child(dir, g_file_info_get_name(info));

		g_file_delete(child, NULL, NULL);
		g_object_unref(info);
	}
	g_file_delete(dir, NULL, NULL);
	g_free(sim->tmpdir);
	g_free(sim->kubeconfig);
	g_free(sim->url);
}

/* Calls the simulator's admin API (or any path); returns the status and the body. */
guint
sim_request(Sim *sim, const gchar *method, const gchar *path, const gchar *body, GBytes **answer)
{
	g_autofree gchar *url = g_strconcat(sim->url, path, NULL);
	g_autoptr(SoupMessage) msg = soup_message_new(method, url);
	g_autoptr(GBytes) bytes = NULL;
	g_autoptr(GError) error = NULL;
	AsyncWait wait = {FALSE, NULL, NULL};

	g_assert_nonnull(msg);
	if (body != NULL) {
		g_autoptr(GBytes) request = g_bytes_new(body, strlen(body));

		soup_message_set_request_body_from_bytes(msg, "application/json", request);
	}
	soup_session_send_and_read_async(sim->session, msg, G_PRIORITY_DEFAULT, NULL, async_wait_cb,
	                                 &wait);
	wait_until(async_done, &wait, path);
	bytes = soup_session_send_and_read_finish(sim->session, wait.result, &error);
	g_object_unref(wait.result);
	g_assert_no_error(error);
	if (answer != NULL)
		*answer = g_steal_pointer(&bytes);
	return soup_message_get_status(msg);
}

void
sim_admin(Sim *sim, const gchar *method, const gchar *action, const gchar *body)
{
	g_autofree gchar *path = g_strconcat("/kubesim/", action, NULL);
	g_autoptr(GBytes) answer = NULL;
	guint status = sim_request(sim, method, path, body, &answer);

	if (status < 200 || status >= 300)
		g_error("admin %s %s: %u %.*s", method, action, status,
		        (int)g_bytes_get_size(answer),
		        (const gchar *)g_bytes_get_data(answer, NULL));
}

gint64
sim_stat(Sim *sim, const gchar *member)
{
	g_autoptr(GBytes) answer = NULL;
	g_autoptr(JsonParser) parser = json_parser_new();
	g_autoptr(GError) error = NULL;

	g_assert_cmpuint(sim_request(sim, "GET", "/kubesim/stats", NULL, &answer), ==, 200);
	json_parser_load_from_data(parser, g_bytes_get_data(answer, NULL),
	                           (gssize)g_bytes_get_size(answer), &error);
	g_assert_no_error(error);
	return json_object_get_int_member(json_node_get_object(json_parser_get_root(parser)),
	                                  member);
}
