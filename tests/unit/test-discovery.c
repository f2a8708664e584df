/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <libsoup/soup.h>

#include "meshsync-discovery.h"
#include "meshsync-error.h"
#include "test-tls-server.h"

typedef struct {
	MsdTestServer *server;
	MeshSyncKubeConfig *config;
	MeshSyncDiscovery *discovery;
} Fixture;

static void
fixture_set_up(Fixture *fixture, gconstpointer user_data)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *unavailable = msd_test_data_path("discovery", "unavailable.json", NULL);
	g_autofree gchar *body = NULL;

	fixture->server = msd_test_server_new(TRUE);
	msd_test_server_set_token(fixture->server, "discovery-token");
	msd_test_server_add_fixture(fixture->server, "/version", "version.json");
	msd_test_server_add_fixture(fixture->server, "/api", "api.json");
	msd_test_server_add_fixture(fixture->server, "/api/v1", "api-v1.json");
	msd_test_server_add_fixture(fixture->server, "/apis", "apis.json");
	msd_test_server_add_fixture(fixture->server, "/apis/apps/v1", "apps-v1.json");
	msd_test_server_add_fixture(fixture->server, "/apis/autoscaling/v2", "autoscaling-v2.json");
	msd_test_server_add_fixture(fixture->server, "/apis/autoscaling/v1", "autoscaling-v1.json");
	msd_test_server_add_fixture(fixture->server, "/apis/authentication.k8s.io/v1",
	                            "authentication-v1.json");
	/* a broken aggregated API, as metrics-server without endpoints answers */
	g_file_get_contents(unavailable, &body, NULL, &error);
	g_assert_no_error(error);
	msd_test_server_add(fixture->server, "/apis/metrics.k8s.io/v1beta1",
	                    SOUP_STATUS_SERVICE_UNAVAILABLE, body);

	fixture->config = msd_test_kubeconfig_new(msd_test_server_get_url(fixture->server),
	                                          "ca.pem", "discovery-token", NULL);
	fixture->discovery = meshsync_discovery_new(fixture->config, &error);
	g_assert_no_error(error);
}

static void
fixture_tear_down(Fixture *fixture, gconstpointer user_data)
{
	g_clear_object(&fixture->discovery);
	g_clear_object(&fixture->config);
	g_clear_pointer(&fixture->server, msd_test_server_free);
}

static gboolean
msd_test_run(MeshSyncDiscovery *discovery, GCancellable *cancellable, GError **error)
{
	MsdTestAsync async = {0};
	gboolean ok;

	meshsync_discovery_run_async(discovery, cancellable, msd_test_async_cb, &async);
	msd_test_wait_for(&async.done);
	ok = meshsync_discovery_run_finish(discovery, async.result, error);
	g_object_unref(async.result);
	return ok;
}

static void
msd_test_run_expecting_skip(Fixture *fixture)
{
	g_autoptr(GError) error = NULL;

	g_test_expect_message("MeshSyncDiscovery", G_LOG_LEVEL_MESSAGE,
	                      "*skipping /apis/metrics.k8s.io/v1beta1*503 Service Unavailable*");
	g_assert_true(msd_test_run(fixture->discovery, NULL, &error));
	g_assert_no_error(error);
	g_test_assert_expected_messages();
}

static void
test_discovery_table(Fixture *fixture, gconstpointer user_data)
{
	const gchar *expected[] = {
	        "v1 bindings Binding",
	        "v1 namespaces Namespace",
	        "v1 pods Pod",
	        "v1 services Service",
	        "apps/v1 deployments Deployment",
	        "apps/v1 statefulsets StatefulSet",
	        "autoscaling/v2 horizontalpodautoscalers HorizontalPodAutoscaler",
	        "autoscaling/v1 horizontalpodautoscalers HorizontalPodAutoscaler",
	        "authentication.k8s.io/v1 tokenreviews TokenReview",
	        NULL,
	};
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func(g_free);
	GPtrArray *resources;

	g_assert_cmpuint(meshsync_discovery_get_resources(fixture->discovery)->len, ==, 0);
	g_assert_null(meshsync_discovery_get_server_version(fixture->discovery));

	msd_test_run_expecting_skip(fixture);

	g_assert_cmpstr(meshsync_discovery_get_server_version(fixture->discovery), ==, "v1.32.0");
	resources = meshsync_discovery_get_resources(fixture->discovery);
	for (guint i = 0; i < resources->len; i++) {
		MeshSyncApiResource *res = g_ptr_array_index(resources, i);

		g_ptr_array_add(rows, g_strdup_printf("%s %s %s",
		                                      meshsync_api_resource_get_group_version(res),
		                                      meshsync_api_resource_get_plural(res),
		                                      meshsync_api_resource_get_kind(res)));
	}
	g_ptr_array_add(rows, NULL);
	/* core first, then the groups in the order of /apis; subresources are not rows and the
	 * failing metrics.k8s.io is absent */
	g_assert_cmpstrv((const gchar *const *)rows->pdata, expected);
	/* every request carried the token */
	g_assert_cmpuint(msd_test_server_get_hits(fixture->server, "/apis/apps/v1"), ==, 1);
	g_assert_cmpuint(msd_test_server_get_hits(fixture->server, "/apis/metrics.k8s.io/v1beta1"),
	                 ==, 1);
}

static void
test_discovery_resources(Fixture *fixture, gconstpointer user_data)
{
	const gchar *const pod_subresources[] = {"log", "exec", "status", "eviction", NULL};
	const gchar *const namespace_subresources[] = {"status", NULL};
	const gchar *const deployment_subresources[] = {"scale", "status", NULL};
	const gchar *const pod_verbs[] = {"create", "delete", "deletecollection",
	                                  "get",    "list",   "patch",
	                                  "update", "watch",  NULL};
	MeshSyncApiResource *pods;
	MeshSyncApiResource *namespaces;
	MeshSyncApiResource *deployments;
	MeshSyncApiResource *bindings;
	MeshSyncApiResource *tokenreviews;
	MeshSyncApiResource *services;

	msd_test_run_expecting_skip(fixture);

	pods = meshsync_discovery_lookup(fixture->discovery, "", "v1", "pods");
	g_assert_nonnull(pods);
	g_assert_cmpstr(meshsync_api_resource_get_kind(pods), ==, "Pod");
	g_assert_true(meshsync_api_resource_get_namespaced(pods));
	g_assert_true(meshsync_api_resource_get_watchable(pods));
	g_assert_cmpstrv(meshsync_api_resource_get_verbs(pods), pod_verbs);
	/* pods/log comes before pods in the fixture and still lands on it */
	g_assert_cmpstrv(meshsync_api_resource_get_subresources(pods), pod_subresources);

	namespaces = meshsync_discovery_lookup(fixture->discovery, NULL, NULL, "namespaces");
	g_assert_nonnull(namespaces);
	g_assert_false(meshsync_api_resource_get_namespaced(namespaces));
	g_assert_true(meshsync_api_resource_get_watchable(namespaces));
	g_assert_cmpstrv(meshsync_api_resource_get_subresources(namespaces),
	                 namespace_subresources);

	deployments = meshsync_discovery_lookup(fixture->discovery, "apps", NULL, "deployments");
	g_assert_nonnull(deployments);
	g_assert_cmpstr(meshsync_api_resource_get_group_version(deployments), ==, "apps/v1");
	g_assert_true(meshsync_api_resource_get_watchable(deployments));
	g_assert_cmpstrv(meshsync_api_resource_get_subresources(deployments),
	                 deployment_subresources);

	services = meshsync_discovery_lookup(fixture->discovery, "", NULL, "services");
	g_assert_nonnull(services);
	g_assert_cmpstr(meshsync_api_resource_get_subresources(services)[0], ==, NULL);

	/* create-only resources are in the table, but informers cannot follow them */
	bindings = meshsync_discovery_lookup(fixture->discovery, "", "v1", "bindings");
	g_assert_nonnull(bindings);
	g_assert_false(meshsync_api_resource_get_watchable(bindings));
	tokenreviews = meshsync_discovery_lookup(fixture->discovery, "authentication.k8s.io", NULL,
	                                         "tokenreviews");
	g_assert_nonnull(tokenreviews);
	g_assert_false(meshsync_api_resource_get_namespaced(tokenreviews));
	g_assert_false(meshsync_api_resource_get_watchable(tokenreviews));

	g_assert_null(meshsync_discovery_lookup(fixture->discovery, "", "v1", "pods/log"));
	g_assert_null(
	        meshsync_discovery_lookup(fixture->discovery, "metrics.k8s.io", NULL, "pods"));
	g_assert_null(meshsync_discovery_lookup(fixture->discovery, "apps", "v2", "deployments"));
}

static void
test_discovery_preferred_version(Fixture *fixture, gconstpointer user_data)
{
	MeshSyncApiResource *hpa;

	msd_test_run_expecting_skip(fixture);

	hpa = meshsync_discovery_lookup(fixture->discovery, "autoscaling", NULL,
	                                "horizontalpodautoscalers");
	g_assert_nonnull(hpa);
	g_assert_cmpstr(meshsync_api_resource_get_version(hpa), ==, "v2");
	hpa = meshsync_discovery_lookup(fixture->discovery, "autoscaling", "v1",
	                                "horizontalpodautoscalers");
	g_assert_nonnull(hpa);
	g_assert_cmpstr(meshsync_api_resource_get_version(hpa), ==, "v1");
}

/* A /version without gitVersion is named from major and minor; fields that are not strings
 * count as absent, without a GLib warning (fatal in the tests). */
static void
test_discovery_version_odd_fields(Fixture *fixture, gconstpointer user_data)
{
	msd_test_server_add(fixture->server, "/version", SOUP_STATUS_OK,
	                    "{\"major\":{\"x\":1},\"minor\":\"31\",\"gitVersion\":[]}");
	msd_test_run_expecting_skip(fixture);
	g_assert_cmpstr(meshsync_discovery_get_server_version(fixture->discovery), ==, "v0.31");
}

static void
test_discovery_version_fails(Fixture *fixture, gconstpointer user_data)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *expected = NULL;

	/* a first good run, then /version breaks: the run fails and the table stays */
	msd_test_run_expecting_skip(fixture);
	msd_test_server_add(fixture->server, "/version", SOUP_STATUS_INTERNAL_SERVER_ERROR,
	                    "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"etcd is "
	                    "down\",\"code\":500}");
	g_assert_false(msd_test_run(fixture->discovery, NULL, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_HTTP);
	expected = g_strdup_printf("GET %s/version: 500 Internal Server Error: etcd is down",
	                           msd_test_server_get_url(fixture->server));
	g_assert_cmpstr(error->message, ==, expected);
	g_assert_cmpuint(meshsync_discovery_get_resources(fixture->discovery)->len, ==, 9);
}

static void
test_discovery_api_fails(Fixture *fixture, gconstpointer user_data)
{
	g_autoptr(GError) error = NULL;

	msd_test_server_add(fixture->server, "/api", SOUP_STATUS_OK, "this is not JSON");
	g_assert_false(msd_test_run(fixture->discovery, NULL, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);
	g_assert_nonnull(strstr(error->message, "/api: "));
	g_assert_cmpuint(meshsync_discovery_get_resources(fixture->discovery)->len, ==, 0);
	g_assert_null(meshsync_discovery_get_server_version(fixture->discovery));
}

static void
test_discovery_unauthorized(Fixture *fixture, gconstpointer user_data)
{
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MeshSyncDiscovery) discovery = NULL;
	g_autoptr(GError) error = NULL;

	config = msd_test_kubeconfig_new(msd_test_server_get_url(fixture->server), "ca.pem",
	                                 "wrong-token", NULL);
	discovery = meshsync_discovery_new(config, &error);
	g_assert_no_error(error);
	g_assert_false(msd_test_run(discovery, NULL, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_UNAUTHORIZED);
	g_assert_nonnull(strstr(error->message, "401 Unauthorized"));
	/* the failure stopped the run before any group version was asked for */
	g_assert_cmpuint(msd_test_server_get_hits(fixture->server, "/apis/apps/v1"), ==, 0);
}

static void
test_discovery_cancelled(Fixture *fixture, gconstpointer user_data)
{
	g_autoptr(GCancellable) cancellable = g_cancellable_new();
	g_autoptr(GError) error = NULL;

	g_cancellable_cancel(cancellable);
	g_assert_false(msd_test_run(fixture->discovery, cancellable, &error));
	g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
	g_assert_cmpuint(meshsync_discovery_get_resources(fixture->discovery)->len, ==, 0);
}

static void
test_discovery_object_new(Fixture *fixture, gconstpointer user_data)
{
	g_autoptr(MeshSyncDiscovery) discovery = NULL;
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(GError) error = NULL;

	/* what bindings get from MeshSync.Discovery(config=...) */
	discovery = g_object_new(MESHSYNC_TYPE_DISCOVERY, "config", fixture->config, NULL);
	g_object_get(discovery, "config", &config, NULL);
	g_assert_true(config == fixture->config);
	g_test_expect_message("MeshSyncDiscovery", G_LOG_LEVEL_MESSAGE,
	                      "*skipping*metrics.k8s.io*");
	g_assert_true(msd_test_run(discovery, NULL, &error));
	g_assert_no_error(error);
	g_test_assert_expected_messages();
	g_assert_nonnull(meshsync_discovery_lookup(discovery, "apps", NULL, "deployments"));
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
#define ADD(path, func) g_test_add(path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
	ADD("/discovery/table", test_discovery_table);
	ADD("/discovery/resources", test_discovery_resources);
	ADD("/discovery/preferred-version", test_discovery_preferred_version);
	ADD("/discovery/version-fails", test_discovery_version_fails);
	ADD("/discovery/version-odd-fields", test_discovery_version_odd_fields);
	ADD("/discovery/api-fails", test_discovery_api_fails);
	ADD("/discovery/unauthorized", test_discovery_unauthorized);
	ADD("/discovery/cancelled", test_discovery_cancelled);
	ADD("/discovery/object-new", test_discovery_object_new);
#undef ADD
	return g_test_run();
}
