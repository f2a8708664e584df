/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * Against a real kube-apiserver (meshsync-realkube): an informer its consumer has paused
 * (back-pressure) must not hold up the other types, over HTTP/1.1 (a connection per watch, the
 * default) and over HTTP/2 (every watch on one connection, whose flow-control window a paused
 * stream could fill). The paused type's streaming list carries more than libsoup's 32 MiB
 * HTTP/2 windows, so a client that opened the window only as the application read would stall
 * every other stream behind it.
 *
 * Suite 'realkube': MESHSYNC_REALKUBE names the server binary (scripts/test builds it).
 */

#include <string.h>
#include <sys/prctl.h>
#include <signal.h>

#include <glib/gstdio.h>

#include "informer/msd-informer.h"
#include "informer/msd-informer-private.h"
#include "kube/msd-kube-client.h"
#include "meshsync-kube-config.h"
#include "test-kubesim.h"

/* incompressible (the server gzips streaming lists): 40 x 1 MiB of random base64 */
#define BIG_CONFIGMAPS 40
#define BIG_BYTES      (1024 * 1024)

typedef struct {
	GSubprocess *process;
	gchar *tmpdir;
	gchar *kubeconfig;
} Cluster;

static void
die_with_parent(gpointer user_data)
{
	prctl(PR_SET_PDEATHSIG, SIGTERM);
}

static void
run_kubectl(Cluster *cluster, const gchar *file)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GSubprocess) kubectl =
	        g_subprocess_new(G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error, "kubectl",
	                         "--kubeconfig", cluster->kubeconfig, "create", "-f", file, NULL);

	g_assert_no_error(error);
	g_subprocess_wait_check(kubectl, NULL, &error);
	g_assert_no_error(error);
}

/* A namespace "big" with BIG_CONFIGMAPS ConfigMaps of BIG_BYTES each. */
static void
seed_big_configmaps(Cluster *cluster)
{
	g_autoptr(GString) yaml = g_string_new("apiVersion: v1\nkind: Namespace\n"
	                                       "metadata:\n  name: big\n");
	g_autoptr(GRand) rand = g_rand_new_with_seed(18);
	g_autofree gchar *file = g_build_filename(cluster->tmpdir, "big.yaml", NULL);
	g_autoptr(GError) error = NULL;
	guint8 *raw = g_malloc(BIG_BYTES / 4 * 3);

	for (guint i = 0; i < BIG_CONFIGMAPS; i++) {
		g_autofree gchar *data = NULL;

		for (gsize j = 0; j < BIG_BYTES / 4 * 3; j++)
			raw[j] = (guint8)g_rand_int(rand);
		data = g_base64_encode(raw, BIG_BYTES / 4 * 3);
		g_string_append_printf(yaml,
		                       "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n"
		                       "  name: big-%02u\n  namespace: big\ndata:\n  blob: %s\n",
		                       i, data);
	}
	g_free(raw);
	g_file_set_contents(file, yaml->str, (gssize)yaml->len, &error);
	g_assert_no_error(error);
	run_kubectl(cluster, file);
	g_unlink(file);
}

/* as tests/lib/realkube.py and scripts/realkube find it */
static gchar *
realkube_binary(void)
{
	const gchar *named = g_getenv("MESHSYNC_REALKUBE");

	if (named == NULL || named[0] == '\0')
		named = g_getenv("MESHSYNC_REALKUBE_BIN");
	if (named != NULL && named[0] != '\0')
		return g_strdup(named);
	return g_build_filename(g_get_home_dir(), ".cache", "meshsync", "realkube",
	                        "meshsync-realkube", NULL);
}

static void
cluster_start(Cluster *cluster)
{
	g_autofree gchar *binary = realkube_binary();
	g_autoptr(GError) error = NULL;
	g_autoptr(GSubprocessLauncher) launcher = NULL;
	g_autoptr(GDataInputStream) out = NULL;
	g_autofree gchar *url = NULL;
	AsyncWait wait = {FALSE, NULL, NULL};

	/* the suite's binary comes from scripts/realkube: without it the test fails, never
	 * skips */
	if (!g_file_test(binary, G_FILE_TEST_IS_EXECUTABLE))
		g_error("no meshsync-realkube at %s: build it with scripts/realkube build", binary);
	cluster->tmpdir = g_dir_make_tmp("test-realkube-XXXXXX", &error);
	g_assert_no_error(error);
	cluster->kubeconfig = g_build_filename(cluster->tmpdir, "kubeconfig", NULL);
	launcher = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE);
	g_subprocess_launcher_set_child_setup(launcher, die_with_parent, NULL, NULL);
	cluster->process =
	        g_subprocess_launcher_spawn(launcher, &error, binary, "--port", "0",
	                                    "--write-kubeconfig", cluster->kubeconfig, NULL);
	g_assert_no_error(error);
	/* the URL is printed once /readyz is ok and the kubeconfig written */
	out = g_data_input_stream_new(g_subprocess_get_stdout_pipe(cluster->process));
	g_data_input_stream_read_line_async(out, G_PRIORITY_DEFAULT, NULL, async_wait_cb, &wait);
	wait_until(async_done, &wait, "the realkube URL");
	url = g_data_input_stream_read_line_finish(out, wait.result, NULL, &error);
	g_object_unref(wait.result);
	g_assert_no_error(error);
	g_assert_nonnull(url);
	g_assert_true(g_str_has_prefix(url, "https://"));
}

static void
cluster_stop(Cluster *cluster)
{
	g_autoptr(GError) error = NULL;

	g_subprocess_send_signal(cluster->process, SIGTERM);
	g_subprocess_wait(cluster->process, NULL, &error);
	g_assert_no_error(error);
	g_clear_object(&cluster->process);
	g_unlink(cluster->kubeconfig);
	g_rmdir(cluster->tmpdir);
	g_free(cluster->kubeconfig);
	g_free(cluster->tmpdir);
}

typedef struct {
	guint events;
	guint synced;
	gboolean pause_at_first;
} Counts;

static void
event_cb(MsdInformer *informer, const MsdInformerEvent *event, gpointer user_data)
{
	Counts *counts = user_data;

	counts->events++;
	if (counts->pause_at_first && counts->events == 1)
		msd_informer_pause(informer);
}

static void
synced_cb(MsdInformer *informer, gpointer user_data)
{
	((Counts *)user_data)->synced++;
}

static gboolean
counted(gpointer user_data)
{
	return *(guint *)user_data > 0;
}

static MsdInformer *
informer_new(MsdKubeClient *client, MeshSyncApiResource *resource, Counts *counts)
{
	MsdInformer *informer = msd_informer_new(NULL, client, resource);

	msd_informer_set_event_func(informer, event_cb, counts, NULL);
	g_signal_connect(informer, "synced", G_CALLBACK(synced_cb), counts);
	return informer;
}

static gboolean
pointer_cleared(gpointer user_data)
{
	return *(gpointer *)user_data == NULL;
}

static void
drop_informer(MsdInformer **informer)
{
	MsdInformer *weak = *informer;

	msd_informer_stop(weak);
	g_object_add_weak_pointer(G_OBJECT(weak), (gpointer *)&weak);
	g_clear_object(informer);
	wait_until(pointer_cleared, &weak, "the informer to be finalized");
}

static Cluster cluster;

static void
test_paused_type_holds_up_nothing(gconstpointer data)
{
	gboolean http2 = GPOINTER_TO_INT(data);
	const gchar *verbs[] = {"list", "watch", NULL};
	g_autoptr(MeshSyncApiResource) configmaps =
	        meshsync_api_resource_new("", "v1", "ConfigMap", "configmaps", TRUE, verbs, NULL);
	g_autoptr(MeshSyncApiResource) clusterroles =
	        meshsync_api_resource_new("rbac.authorization.k8s.io", "v1", "ClusterRole",
	                                  "clusterroles", FALSE, verbs, NULL);
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MsdKubeClient) client = NULL;
	g_autoptr(GError) error = NULL;
	MsdInformer *big;
	MsdInformer *roles;
	Counts big_counts = {0, 0, TRUE};
	Counts role_counts = {0, 0, FALSE};

	config = meshsync_kube_config_new_from_file(cluster.kubeconfig, NULL, &error);
	g_assert_no_error(error);
	meshsync_kube_config_set_http2(config, http2);
	client = msd_kube_client_new(config, &error);
	g_assert_no_error(error);
	big = informer_new(client, configmaps, &big_counts);
	roles = informer_new(client, clusterroles, &role_counts);

	/* the big type's consumer stops taking events at its first one */
	msd_informer_start(big);
	wait_until(counted, &big_counts.events, "the first ConfigMap");
	g_assert_true(msd_informer_get_paused(big));
	/* every other type still syncs, however much the paused one has in flight */
	msd_informer_start(roles);
	wait_until(counted, &role_counts.synced, "the ClusterRoles, while ConfigMaps are paused");
	g_assert_cmpuint(role_counts.events, >, 0);
	g_assert_true(msd_informer_get_paused(big));
	g_assert_cmpuint(big_counts.events, ==, 1);
	g_assert_cmpuint(big_counts.synced, ==, 0);
	/* and the paused one, resumed, loses nothing */
	big_counts.pause_at_first = FALSE;
	msd_informer_resume(big);
	wait_until(counted, &big_counts.synced, "the ConfigMaps after the resume");
	g_assert_cmpuint(msd_store_get_size(msd_informer_get_store(big)), >=, BIG_CONFIGMAPS);

	drop_informer(&big);
	drop_informer(&roles);
}

int
main(int argc, char **argv)
{
	int status;

	g_test_init(&argc, &argv, NULL);
	g_test_add_data_func("/realkube/backpressure/http1", GINT_TO_POINTER(FALSE),
	                     test_paused_type_holds_up_nothing);
	g_test_add_data_func("/realkube/backpressure/http2", GINT_TO_POINTER(TRUE),
	                     test_paused_type_holds_up_nothing);
	cluster_start(&cluster);
	seed_big_configmaps(&cluster);
	status = g_test_run();
	cluster_stop(&cluster);
	return status;
}
