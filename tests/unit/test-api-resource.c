/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include "meshsync-api-resource.h"

static const gchar *const pod_verbs[] = {"create", "get", "list", "watch", NULL};
static const gchar *const pod_subresources[] = {"log", "exec", "status", NULL};

static void
test_api_resource_core(void)
{
	g_autoptr(MeshSyncApiResource) res = NULL;

	res = meshsync_api_resource_new(NULL, "v1", "Pod", "pods", TRUE, pod_verbs,
	                                pod_subresources);
	g_assert_cmpstr(meshsync_api_resource_get_group(res), ==, "");
	g_assert_cmpstr(meshsync_api_resource_get_version(res), ==, "v1");
	g_assert_cmpstr(meshsync_api_resource_get_group_version(res), ==, "v1");
	g_assert_cmpstr(meshsync_api_resource_get_kind(res), ==, "Pod");
	g_assert_cmpstr(meshsync_api_resource_get_plural(res), ==, "pods");
	g_assert_true(meshsync_api_resource_get_namespaced(res));
	g_assert_cmpstrv(meshsync_api_resource_get_verbs(res), pod_verbs);
	g_assert_cmpstrv(meshsync_api_resource_get_subresources(res), pod_subresources);
	g_assert_true(meshsync_api_resource_has_verb(res, "watch"));
	g_assert_false(meshsync_api_resource_has_verb(res, "patch"));
	g_assert_true(meshsync_api_resource_get_watchable(res));
}

static void
test_api_resource_group_version(void)
{
	g_autoptr(MeshSyncApiResource) res = NULL;

	res = meshsync_api_resource_new("apps", "v1", "Deployment", "deployments", TRUE, pod_verbs,
	                                NULL);
	g_assert_cmpstr(meshsync_api_resource_get_group(res), ==, "apps");
	g_assert_cmpstr(meshsync_api_resource_get_group_version(res), ==, "apps/v1");
	/* a NULL list reads back as an empty one, never NULL */
	g_assert_nonnull(meshsync_api_resource_get_subresources(res));
	g_assert_null(meshsync_api_resource_get_subresources(res)[0]);
}

static void
test_api_resource_watchable(void)
{
	const gchar *const list_only[] = {"get", "list", NULL};
	const gchar *const create_only[] = {"create", NULL};
	g_autoptr(MeshSyncApiResource) listable = NULL;
	g_autoptr(MeshSyncApiResource) bindings = NULL;
	g_autoptr(MeshSyncApiResource) none = NULL;

	listable = meshsync_api_resource_new("", "v1", "Event", "events", TRUE, list_only, NULL);
	bindings =
	        meshsync_api_resource_new("", "v1", "Binding", "bindings", TRUE, create_only, NULL);
	none = meshsync_api_resource_new("", "v1", "Thing", "things", TRUE, NULL, NULL);
	g_assert_false(meshsync_api_resource_get_watchable(listable));
	g_assert_false(meshsync_api_resource_get_watchable(bindings));
	g_assert_false(meshsync_api_resource_get_watchable(none));
}

static void
test_api_resource_build_path(void)
{
	g_autoptr(MeshSyncApiResource) pods = NULL;
	g_autoptr(MeshSyncApiResource) deployments = NULL;
	g_autoptr(MeshSyncApiResource) namespaces = NULL;
	g_autofree gchar *all_pods = NULL;
	g_autofree gchar *ns_pods = NULL;
	g_autofree gchar *all_deployments = NULL;
	g_autofree gchar *ns_deployments = NULL;
	g_autofree gchar *cluster = NULL;
	g_autofree gchar *empty_ns = NULL;

	pods = meshsync_api_resource_new("", "v1", "Pod", "pods", TRUE, pod_verbs, NULL);
	deployments = meshsync_api_resource_new("apps", "v1", "Deployment", "deployments", TRUE,
	                                        pod_verbs, NULL);
	namespaces = meshsync_api_resource_new("", "v1", "Namespace", "namespaces", FALSE,
	                                       pod_verbs, NULL);

	all_pods = meshsync_api_resource_build_path(pods, NULL);
	g_assert_cmpstr(all_pods, ==, "/api/v1/pods");
	ns_pods = meshsync_api_resource_build_path(pods, "shop");
	g_assert_cmpstr(ns_pods, ==, "/api/v1/namespaces/shop/pods");
	all_deployments = meshsync_api_resource_build_path(deployments, NULL);
	g_assert_cmpstr(all_deployments, ==, "/apis/apps/v1/deployments");
	ns_deployments = meshsync_api_resource_build_path(deployments, "ns");
	g_assert_cmpstr(ns_deployments, ==, "/apis/apps/v1/namespaces/ns/deployments");
	/* a namespace means nothing to a cluster-scoped resource */
	cluster = meshsync_api_resource_build_path(namespaces, "shop");
	g_assert_cmpstr(cluster, ==, "/api/v1/namespaces");
	empty_ns = meshsync_api_resource_build_path(pods, "");
	g_assert_cmpstr(empty_ns, ==, "/api/v1/pods");
}

static void
test_api_resource_properties(void)
{
	g_autoptr(MeshSyncApiResource) res = NULL;
	g_autofree gchar *group_version = NULL;
	g_autofree gchar *kind = NULL;
	g_auto(GStrv) verbs = NULL;
	gboolean watchable = FALSE;
	gboolean namespaced = TRUE;

	res = g_object_new(MESHSYNC_TYPE_API_RESOURCE, "group", "batch", "version", "v1", "kind",
	                   "Job", "plural", "jobs", "verbs", pod_verbs, NULL);
	g_object_get(res, "group-version", &group_version, "kind", &kind, "verbs", &verbs,
	             "watchable", &watchable, "namespaced", &namespaced, NULL);
	g_assert_cmpstr(group_version, ==, "batch/v1");
	g_assert_cmpstr(kind, ==, "Job");
	g_assert_cmpstrv(verbs, pod_verbs);
	g_assert_true(watchable);
	g_assert_false(namespaced);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
	g_test_add_func("/api-resource/core", test_api_resource_core);
	g_test_add_func("/api-resource/group-version", test_api_resource_group_version);
	g_test_add_func("/api-resource/watchable", test_api_resource_watchable);
	g_test_add_func("/api-resource/build-path", test_api_resource_build_path);
	g_test_add_func("/api-resource/properties", test_api_resource_properties);
	return g_test_run();
}
