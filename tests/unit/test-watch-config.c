/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "meshsync-enum-types.h"
#include "meshsync-error.h"
#include "meshsync-watch-config.h"
#include "meshsync-watch-config-private.h"

static const gchar *const default_events[] = {"ADDED", "MODIFIED", "DELETED", NULL};

static MeshSyncWatchConfig *
config_from_cr_lists(const gchar *whitelist, const gchar *blacklist, GError **error)
{
	g_autoptr(GString) json = g_string_new("{\"apiVersion\":\"meshery.io/v1alpha1\","
	                                       "\"kind\":\"MeshSync\",\"spec\":{\"watch-list\":"
	                                       "{\"data\":{");
	g_autofree gchar *white = whitelist != NULL ? g_strescape(whitelist, NULL) : NULL;
	g_autofree gchar *black = blacklist != NULL ? g_strescape(blacklist, NULL) : NULL;

	if (white != NULL)
		g_string_append_printf(json, "\"whitelist\":\"%s\"", white);
	if (black != NULL)
		g_string_append_printf(json, "%s\"blacklist\":\"%s\"", white != NULL ? "," : "",
		                       black);
	g_string_append(json, "}}}}");
	return meshsync_watch_config_new_from_resource(json->str, (gssize)json->len, error);
}

static void
test_watch_config_default(void)
{
	g_autoptr(MeshSyncWatchConfig) config = meshsync_watch_config_new_default();
	g_auto(GStrv) global = meshsync_watch_config_get_names(config, MESHSYNC_WATCH_STAGE_GLOBAL);
	g_auto(GStrv) local = meshsync_watch_config_get_names(config, MESHSYNC_WATCH_STAGE_LOCAL);
	const gchar *expected_global[] = {"namespaces.v1.",
	                                  "configmaps.v1.",
	                                  "nodes.v1.",
	                                  "secrets.v1.",
	                                  "persistentvolumes.v1.",
	                                  "persistentvolumeclaims.v1.",
	                                  NULL};
	const gchar *expected_local[] = {"replicasets.v1.apps",
	                                 "pods.v1.",
	                                 "services.v1.",
	                                 "deployments.v1.apps",
	                                 "statefulsets.v1.apps",
	                                 "daemonsets.v1.apps",
	                                 "ingresses.v1.networking.k8s.io",
	                                 "endpoints.v1.",
	                                 "endpointslices.v1.discovery.k8s.io",
	                                 "serviceaccounts.v1.",
	                                 "cronjobs.v1.batch",
	                                 "replicationcontrollers.v1.",
	                                 "storageclasses.v1.storage.k8s.io",
	                                 "clusterroles.v1.rbac.authorization.k8s.io",
	                                 "volumeattachments.v1.storage.k8s.io",
	                                 "apiservices.v1.apiregistration.k8s.io",
	                                 NULL};

	/* Upstream's 21 effective informers and ServiceAccounts, in table order, each with the
	 * default events. */
	g_assert_cmpstrv(global, expected_global);
	g_assert_cmpstrv(local, expected_local);
	for (guint i = 0; local[i] != NULL; i++)
		g_assert_cmpstrv(meshsync_watch_config_get_events(config, local[i]),
		                 default_events);
	g_assert_null(meshsync_watch_config_get_events(config,
	                                               "grafanas.v1beta1.grafana.integreatly.org"));
}

static void
test_watch_config_builtin_table(void)
{
	g_autoptr(MeshSyncWatchConfig) config = meshsync_watch_config_new_builtin_table();
	g_auto(GStrv) global = meshsync_watch_config_get_names(config, MESHSYNC_WATCH_STAGE_GLOBAL);
	g_auto(GStrv) local = meshsync_watch_config_get_names(config, MESHSYNC_WATCH_STAGE_LOCAL);

	g_assert_cmpuint(g_strv_length(global), ==, 6);
	g_assert_cmpuint(g_strv_length(local), ==, 65);
	for (guint i = 0; global[i] != NULL; i++)
		g_assert_cmpstrv(meshsync_watch_config_get_events(config, global[i]),
		                 default_events);
}

static void
test_watch_config_whitelist(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncWatchConfig) config = config_from_cr_lists(
	        "[{\"Resource\":\"namespaces.v1.\",\"Events\":[\"ADDED\",\"DELETE\"]},"
	        "{\"Resource\":\"replicasets.v1.apps\",\"Events\":[\"ADDED\",\"DELETE\"]},"
	        "{\"resource\":\"pods.v1.\",\"events\":[\"MODIFIED\"]}]",
	        NULL, &error);
	g_auto(GStrv) global = NULL;
	g_auto(GStrv) local = NULL;
	const gchar *expected_local[] = {"replicasets.v1.apps", "pods.v1.", NULL};
	const gchar *namespace_events[] = {"ADDED", "DELETE", NULL};
	const gchar *pod_events[] = {"MODIFIED", NULL};

	g_assert_no_error(error);
	global = meshsync_watch_config_get_names(config, MESHSYNC_WATCH_STAGE_GLOBAL);
	local = meshsync_watch_config_get_names(config, MESHSYNC_WATCH_STAGE_LOCAL);
	g_assert_cmpuint(g_strv_length(global), ==, 1);
	g_assert_cmpstr(global[0], ==, "namespaces.v1.");
	/* Table order, not whitelist order; events verbatim. */
	g_assert_cmpstrv(local, expected_local);
	g_assert_cmpstrv(meshsync_watch_config_get_events(config, "namespaces.v1."),
	                 namespace_events);
	g_assert_cmpstrv(meshsync_watch_config_get_events(config, "pods.v1."), pod_events);
	/* "DELETE" never matches a DELETED event, exactly as upstream. */
	g_assert_false(meshsync_watch_config_wants_event(config, "namespaces.v1.", "DELETED"));
	g_assert_true(meshsync_watch_config_wants_event(config, "pods.v1.", "MODIFIED"));
	g_assert_false(meshsync_watch_config_wants_event(config, "pods.v1.", "ADDED"));
	g_assert_false(meshsync_watch_config_wants_event(config, "services.v1.", "ADDED"));
}

static void
test_watch_config_blacklist(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncWatchConfig) config = config_from_cr_lists(
	        NULL, "[\"namespaces.v1.\",\"replicasets.v1.apps\",\"pods.v1.\"]", &error);
	g_auto(GStrv) global = NULL;
	g_auto(GStrv) local = NULL;

	g_assert_no_error(error);
	global = meshsync_watch_config_get_names(config, MESHSYNC_WATCH_STAGE_GLOBAL);
	local = meshsync_watch_config_get_names(config, MESHSYNC_WATCH_STAGE_LOCAL);
	g_assert_cmpuint(g_strv_length(global), ==, 5);
	g_assert_cmpuint(g_strv_length(local), ==, 63);
	g_assert_false(g_strv_contains((const gchar *const *)local, "pods.v1."));
	for (guint i = 0; local[i] != NULL; i++)
		g_assert_cmpstrv(meshsync_watch_config_get_events(config, local[i]),
		                 default_events);
}

static void
test_watch_config_serviceaccount_spelling(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncWatchConfig) white = config_from_cr_lists(
	        "[{\"Resource\":\"serviceaccount.v1.\",\"Events\":[\"ADDED\"]}]", NULL, &error);
	g_autoptr(MeshSyncWatchConfig) black = NULL;
	g_auto(GStrv) local = NULL;
	const gchar *expected_local[] = {"serviceaccounts.v1.", NULL};

	/* A watch list written for upstream names the entry by its singular spelling; it means
	 * the ServiceAccount entry, whichever list it is in. */
	g_assert_no_error(error);
	local = meshsync_watch_config_get_names(white, MESHSYNC_WATCH_STAGE_LOCAL);
	g_assert_cmpstrv(local, expected_local);
	g_clear_pointer(&local, g_strfreev);

	black = config_from_cr_lists(NULL, "[\"serviceaccount.v1.\"]", &error);
	g_assert_no_error(error);
	local = meshsync_watch_config_get_names(black, MESHSYNC_WATCH_STAGE_LOCAL);
	g_assert_false(g_strv_contains((const gchar *const *)local, "serviceaccounts.v1."));
	g_assert_false(g_strv_contains((const gchar *const *)local, "serviceaccount.v1."));
	g_assert_cmpuint(g_strv_length(local), ==, 64);
}

static void
test_watch_config_bad_entries_skipped(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncWatchConfig) config = NULL;
	g_auto(GStrv) local = NULL;
	const gchar *expected_local[] = {"pods.v1.", NULL};

	/* A non-object entry, an entry without a name and a name outside the table are each
	 * skipped with a warning; the good entry stays. Upstream would give up on the list. */
	g_test_expect_message("MeshSyncConfig", G_LOG_LEVEL_WARNING,
	                      "*whitelist[0] is not an object*");
	g_test_expect_message("MeshSyncConfig", G_LOG_LEVEL_WARNING,
	                      "*whitelist[1] has no Resource*");
	g_test_expect_message("MeshSyncConfig", G_LOG_LEVEL_WARNING,
	                      "*whitelist[2] names bogus.v1.example.com*");
	config = config_from_cr_lists("[42,{\"Events\":[\"ADDED\"]},"
	                              "{\"Resource\":\"bogus.v1.example.com\",\"Events\":[]},"
	                              "{\"Resource\":\"pods.v1.\",\"Events\":[\"ADDED\"]}]",
	                              NULL, &error);
	g_test_assert_expected_messages();
	g_assert_no_error(error);
	local = meshsync_watch_config_get_names(config, MESHSYNC_WATCH_STAGE_LOCAL);
	g_assert_cmpstrv(local, expected_local);
}

static void
test_watch_config_errors(void)
{
	struct {
		const gchar *whitelist;
		const gchar *blacklist;
		const gchar *message;
	} cases[] = {
	        {NULL, NULL, "both the whitelist and the blacklist are missing"},
	        {"[]", "[]", "both the whitelist and the blacklist are missing"},
	        {"[{\"Resource\":\"pods.v1.\"}]", "[\"nodes.v1.\"]", "not supported"},
	        {"[{\"Resource\":", NULL, "whitelist is not valid JSON"},
	        {"{}", NULL, "whitelist is not a JSON list"},
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(MeshSyncWatchConfig) config =
		        config_from_cr_lists(cases[i].whitelist, cases[i].blacklist, &error);

		g_test_message("case %u", i);
		g_assert_null(config);
		g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG);
		g_assert_nonnull(strstr(error->message, cases[i].message));
	}
}

static void
test_watch_config_resource_without_watch_list(void)
{
	const gchar *cases[] = {
	        "{\"kind\":\"MeshSync\"}",
	        "{\"kind\":\"MeshSync\",\"spec\":{}}",
	        "{\"kind\":\"MeshSync\",\"spec\":{\"watch-list\":{}}}",
	        "[1]",
	        "{not json",
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(MeshSyncWatchConfig) config =
		        meshsync_watch_config_new_from_resource(cases[i], -1, &error);

		g_assert_null(config);
		g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG);
	}
}

/* Any YAML may be in the file: a kind that is not a string is not the MeshSync resource, and
 * is no reason for a GLib warning (G_DEBUG=fatal-criticals makes one fatal here). */
static void
test_watch_config_kind_not_a_string(void)
{
	static const gchar *const texts[] = {
	        "kind: {a: 1}\nwhitelist:\n  - resource: pods.v1.\n",
	        "kind: [MeshSync]\nwhitelist:\n  - resource: pods.v1.\n",
	        "kind: 7\nwhitelist:\n  - resource: pods.v1.\n",
	};

	for (guint i = 0; i < G_N_ELEMENTS(texts); i++) {
		g_autoptr(GError) error = NULL;
		g_autofree gchar *path = NULL;
		g_autoptr(MeshSyncWatchConfig) config = NULL;
		gint fd = g_file_open_tmp("watch-config-XXXXXX.yaml", &path, &error);
		g_auto(GStrv) names = NULL;

		g_assert_no_error(error);
		close(fd);
		g_assert_true(g_file_set_contents(path, texts[i], -1, &error));
		config = meshsync_watch_config_new_from_file(path, &error);
		g_assert_no_error(error);
		/* read as the whitelist it also holds */
		names = meshsync_watch_config_get_names(config, MESHSYNC_WATCH_STAGE_LOCAL);
		g_assert_cmpstrv(names, ((const gchar *const[]){"pods.v1.", NULL}));
		g_unlink(path);
	}
}

static void
test_watch_config_files(void)
{
	const gchar *data = g_getenv("MESHSYNC_TEST_DATA");
	g_autofree gchar *white_path =
	        g_build_filename(data, "watch-config", "whitelist.yaml", NULL);
	g_autofree gchar *cr_path =
	        g_build_filename(data, "watch-config", "meshsync-cr.yaml", NULL);
	g_autofree gchar *broken_path = g_build_filename(data, "watch-config", "broken.yaml", NULL);
	g_autoptr(MeshSyncWatchConfig) white = NULL;
	g_autoptr(MeshSyncWatchConfig) cr = NULL;
	g_autoptr(MeshSyncWatchConfig) broken = NULL;
	g_autoptr(GError) error = NULL;
	g_auto(GStrv) global = NULL;
	g_auto(GStrv) local = NULL;
	const gchar *namespace_events[] = {"ADDED", "DELETED", NULL};

	g_test_expect_message("MeshSyncConfig", G_LOG_LEVEL_WARNING,
	                      "*not-a-table-entry.v1.*skipped*");
	white = meshsync_watch_config_new_from_file(white_path, &error);
	g_test_assert_expected_messages();
	g_assert_no_error(error);
	g_assert_cmpstrv(meshsync_watch_config_get_events(white, "namespaces.v1."),
	                 namespace_events);
	g_assert_cmpstrv(meshsync_watch_config_get_events(white, "pods.v1."), default_events);

	cr = meshsync_watch_config_new_from_file(cr_path, &error);
	g_assert_no_error(error);
	global = meshsync_watch_config_get_names(cr, MESHSYNC_WATCH_STAGE_GLOBAL);
	local = meshsync_watch_config_get_names(cr, MESHSYNC_WATCH_STAGE_LOCAL);
	g_assert_cmpuint(g_strv_length(global), ==, 4);
	g_assert_false(g_strv_contains((const gchar *const *)global, "secrets.v1."));
	g_assert_cmpuint(g_strv_length(local), ==, 65);

	broken = meshsync_watch_config_new_from_file(broken_path, &error);
	g_assert_null(broken);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);
	g_assert_nonnull(strstr(error->message, "broken.yaml:"));
}

static void
test_watch_config_crds(void)
{
	g_autoptr(MeshSyncWatchConfig) config = meshsync_watch_config_new_default();
	g_auto(GStrv) global = NULL;

	/* Added new: changed; added again: unchanged; deleted: changed; deleted absent:
	 * unchanged. Built-in entries cannot be removed as CRDs. */
	g_assert_true(meshsync_watch_config_add_crd(config, "certificates.v1.cert-manager.io"));
	g_assert_false(meshsync_watch_config_add_crd(config, "certificates.v1.cert-manager.io"));
	global = meshsync_watch_config_get_names(config, MESHSYNC_WATCH_STAGE_GLOBAL);
	g_assert_cmpuint(g_strv_length(global), ==, 7);
	g_assert_cmpstr(global[6], ==, "certificates.v1.cert-manager.io");
	g_assert_cmpstrv(
	        meshsync_watch_config_get_events(config, "certificates.v1.cert-manager.io"),
	        default_events);
	g_assert_true(meshsync_watch_config_remove_crd(config, "certificates.v1.cert-manager.io"));
	g_assert_false(meshsync_watch_config_remove_crd(config, "certificates.v1.cert-manager.io"));
	g_assert_false(meshsync_watch_config_remove_crd(config, "pods.v1."));
	g_assert_nonnull(meshsync_watch_config_get_events(config, "pods.v1."));
}

static void
test_watch_config_output_filters(void)
{
	g_autoptr(MeshSyncWatchConfig) config = meshsync_watch_config_new_default();
	g_auto(GStrv) resources = NULL;
	g_auto(GStrv) namespaces = NULL;
	const gchar *const only_a[] = {"a", NULL};
	const gchar *const none[] = {NULL};

	g_assert_true(meshsync_watch_config_accepts_resource(config, "pods.v1."));
	g_assert_true(meshsync_watch_config_accepts_namespace(config, NULL));

	resources = meshsync_watch_config_split_list("  Pod,replicaset,ingress  ");
	meshsync_watch_config_set_output_resources(config, (const gchar *const *)resources);
	g_assert_true(meshsync_watch_config_accepts_resource(config, "pods.v1."));
	g_assert_true(meshsync_watch_config_accepts_resource(config, "replicasets.v1.apps"));
	g_assert_true(
	        meshsync_watch_config_accepts_resource(config, "ingresses.v1.networking.k8s.io"));
	g_assert_false(meshsync_watch_config_accepts_resource(config, "services.v1."));

	/* Elements are not trimmed: " b" does not match "b"; a trailing comma admits the
	 * cluster scope. */
	namespaces = meshsync_watch_config_split_list("a, b,");
	meshsync_watch_config_set_output_namespaces(config, (const gchar *const *)namespaces);
	g_assert_true(meshsync_watch_config_accepts_namespace(config, "a"));
	g_assert_false(meshsync_watch_config_accepts_namespace(config, "b"));
	g_assert_true(meshsync_watch_config_accepts_namespace(config, " b"));
	g_assert_true(meshsync_watch_config_accepts_namespace(config, NULL));
	meshsync_watch_config_set_output_namespaces(config, only_a);
	g_assert_false(meshsync_watch_config_accepts_namespace(config, NULL));
	/* an empty flag is no list at all */
	g_assert_null(meshsync_watch_config_split_list("   "));
	meshsync_watch_config_set_output_namespaces(config, NULL);
	g_assert_true(meshsync_watch_config_accepts_namespace(config, "anything"));
	meshsync_watch_config_set_output_namespaces(config, none);
	g_assert_true(meshsync_watch_config_accepts_namespace(config, "anything"));
}

static void
test_watch_config_pluralise(void)
{
	const gchar *cases[][2] = {
	        {"pod", "pods"},
	        {"ingress", "ingresses"},
	        {"replicaset", "replicasets"},
	        {"configmap", "configmaps"},
	        {"job", "jobs"},
	        {"endpoint", "endpoints"},
	        {"cronjob", "cronjobs"},
	        {"customresourcedefinition", "customresourcedefinitions"},
	        {"storageclass", "storageclasses"},
	        {"clusterrole", "clusterroles"},
	        {"box", "boxes"},
	        {"buzz", "buzzes"},
	        {"church", "churches"},
	        {"bush", "bushes"},
	        {"cat", "cats"},
	        {"bus", "buses"},
	        {"fox", "foxes"},
	        {"quiz", "quizes"},
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree gchar *plural = meshsync_pluralise(cases[i][0]);

		g_assert_cmpstr(plural, ==, cases[i][1]);
	}
}

static void
test_watch_name_parse(void)
{
	g_autofree gchar *resource = NULL;
	g_autofree gchar *version = NULL;
	g_autofree gchar *group = NULL;
	g_autofree gchar *core_group = NULL;

	g_assert_true(meshsync_watch_name_parse("ingresses.v1.networking.k8s.io", &resource,
	                                        &version, &group));
	g_assert_cmpstr(resource, ==, "ingresses");
	g_assert_cmpstr(version, ==, "v1");
	g_assert_cmpstr(group, ==, "networking.k8s.io");
	g_assert_true(meshsync_watch_name_parse("pods.v1.", NULL, NULL, &core_group));
	g_assert_cmpstr(core_group, ==, "");
	g_assert_false(meshsync_watch_name_parse("service.apis", NULL, NULL, NULL));
	g_assert_false(meshsync_watch_name_parse("pods", NULL, NULL, NULL));
}

/* A resource with a blacklist and, unless NULL, @tiers as its tier-config string. */
static MeshSyncWatchConfig *
config_with_tiers(const gchar *tiers)
{
	g_autoptr(GString) json =
	        g_string_new("{\"apiVersion\":\"meshery.io/v1alpha1\","
	                     "\"kind\":\"MeshSync\",\"spec\":{\"watch-list\":"
	                     "{\"data\":{\"blacklist\":\"[\\\"secrets.v1.\\\"]\"");
	g_autofree gchar *escaped = tiers != NULL ? g_strescape(tiers, NULL) : NULL;
	g_autoptr(GError) error = NULL;
	MeshSyncWatchConfig *config;

	if (escaped != NULL)
		g_string_append_printf(json, ",\"tier-config\":\"%s\"", escaped);
	g_string_append(json, "}}}}");
	config = meshsync_watch_config_new_from_resource(json->str, (gssize)json->len, &error);
	g_assert_no_error(error);
	g_assert_nonnull(config);
	return config;
}

static void
assert_no_tiers(MeshSyncWatchConfig *config)
{
	g_auto(GStrv) global = meshsync_watch_config_get_names(config, MESHSYNC_WATCH_STAGE_GLOBAL);

	/* the blacklist still applies */
	g_assert_false(g_strv_contains((const gchar *const *)global, "secrets.v1."));
	g_assert_true(g_strv_contains((const gchar *const *)global, "configmaps.v1."));
	g_assert_cmpint(meshsync_watch_config_get_depth(config, "pods.v1."), ==,
	                MESHSYNC_WATCH_DEPTH_FULL);
	g_assert_cmpint(meshsync_watch_config_get_depth(config, "deployments.v1.apps"), ==,
	                MESHSYNC_WATCH_DEPTH_FULL);
	g_assert_null(meshsync_watch_config_get_mode(config));
	g_assert_cmpstrv(meshsync_watch_config_get_enabled_infra(config),
	                 ((const gchar *const[]){NULL}));
	g_assert_cmpstrv(meshsync_watch_config_get_disabled_infra(config),
	                 ((const gchar *const[]){NULL}));
}

static void
test_watch_config_tiers_absent(void)
{
	g_autoptr(MeshSyncWatchConfig) config = config_with_tiers(NULL);
	g_autoptr(MeshSyncWatchConfig) empty = config_with_tiers("");
	g_autoptr(MeshSyncWatchConfig) builtin = meshsync_watch_config_new_default();

	assert_no_tiers(config);
	assert_no_tiers(empty);
	g_assert_cmpint(meshsync_watch_config_get_depth(builtin, "pods.v1."), ==,
	                MESHSYNC_WATCH_DEPTH_FULL);
	g_assert_cmpstrv(meshsync_watch_config_get_enabled_infra(builtin),
	                 ((const gchar *const[]){NULL}));
}

static void
test_watch_config_tiers_present(void)
{
	g_autoptr(MeshSyncWatchConfig) config = config_with_tiers(
	        "{\"Mode\":\"tiered\",\"Depth\":\"shallow\","
	        "\"Full\":[\"deployments.v1.apps\",\"services.v1.\"],"
	        "\"EnabledInfra\":[\"istio\",\"linkerd\"],\"DisabledInfra\":[\"grafana-operator\"],"
	        "\"SomethingNew\":1}");
	g_autoptr(MeshSyncWatchConfig) overrides =
	        config_with_tiers("{\"Shallow\":[\"pods.v1.\",\"serviceaccount.v1.\"]}");

	g_assert_cmpint(meshsync_watch_config_get_depth(config, "pods.v1."), ==,
	                MESHSYNC_WATCH_DEPTH_SHALLOW);
	g_assert_cmpint(meshsync_watch_config_get_depth(config, "configmaps.v1."), ==,
	                MESHSYNC_WATCH_DEPTH_SHALLOW);
	/* a CustomResourceDefinition's type takes the default too */
	g_assert_cmpint(meshsync_watch_config_get_depth(config, "widgets.v1.example.com"), ==,
	                MESHSYNC_WATCH_DEPTH_SHALLOW);
	g_assert_cmpint(meshsync_watch_config_get_depth(config, "deployments.v1.apps"), ==,
	                MESHSYNC_WATCH_DEPTH_FULL);
	g_assert_cmpint(meshsync_watch_config_get_depth(config, "services.v1."), ==,
	                MESHSYNC_WATCH_DEPTH_FULL);
	g_assert_cmpstr(meshsync_watch_config_get_mode(config), ==, "tiered");
	g_assert_cmpstrv(meshsync_watch_config_get_enabled_infra(config),
	                 ((const gchar *const[]){"istio", "linkerd", NULL}));
	g_assert_cmpstrv(meshsync_watch_config_get_disabled_infra(config),
	                 ((const gchar *const[]){"grafana-operator", NULL}));

	/* full by default, the override list alone; upstream's singular spelling is the entry */
	g_assert_cmpint(meshsync_watch_config_get_depth(overrides, "pods.v1."), ==,
	                MESHSYNC_WATCH_DEPTH_SHALLOW);
	g_assert_cmpint(meshsync_watch_config_get_depth(overrides, "serviceaccounts.v1."), ==,
	                MESHSYNC_WATCH_DEPTH_SHALLOW);
	g_assert_cmpint(meshsync_watch_config_get_depth(overrides, "services.v1."), ==,
	                MESHSYNC_WATCH_DEPTH_FULL);
	g_assert_null(meshsync_watch_config_get_mode(overrides));
}

/* Go's decoder matches untagged fields in any case: fd1's writers may use either. */
static void
test_watch_config_tiers_case(void)
{
	g_autoptr(MeshSyncWatchConfig) lower = config_with_tiers(
	        "{\"depth\":\"shallow\",\"full\":[\"services.v1.\"],\"enabledinfra\":[\"istio\"]}");
	g_autoptr(MeshSyncWatchConfig) upper = config_with_tiers(
	        "{\"DEPTH\":\"SHALLOW\",\"SHALLOW\":[],\"disabledInfra\":[\"linkerd\"]}");

	g_assert_cmpint(meshsync_watch_config_get_depth(lower, "pods.v1."), ==,
	                MESHSYNC_WATCH_DEPTH_SHALLOW);
	g_assert_cmpint(meshsync_watch_config_get_depth(lower, "services.v1."), ==,
	                MESHSYNC_WATCH_DEPTH_FULL);
	g_assert_cmpstrv(meshsync_watch_config_get_enabled_infra(lower),
	                 ((const gchar *const[]){"istio", NULL}));
	g_assert_cmpint(meshsync_watch_config_get_depth(upper, "pods.v1."), ==,
	                MESHSYNC_WATCH_DEPTH_SHALLOW);
	g_assert_cmpstrv(meshsync_watch_config_get_disabled_infra(upper),
	                 ((const gchar *const[]){"linkerd", NULL}));
}

static void
test_watch_config_tiers_malformed(void)
{
	static const struct {
		const gchar *tiers;
		const gchar *fault;
	} cases[] = {
	        {"{\"Depth\":\"shallow\"", "*tier-config ignored*not valid JSON*"},
	        {"[\"shallow\"]", "*tier-config ignored*not a JSON object*"},
	        {"{\"Depth\":\"deep\"}", "*tier-config ignored*Depth \"deep\" is neither*"},
	        {"{\"Depth\":2}", "*tier-config ignored*Depth is not a string*"},
	        {"{\"Depth\":\"shallow\",\"Full\":\"services.v1.\"}",
	         "*tier-config ignored*Full is not a list of strings*"},
	        {"{\"Depth\":\"shallow\",\"Shallow\":[\"pods.v1.\",3]}",
	         "*tier-config ignored*Shallow[1] is not a string*"},
	        {"{\"Full\":[\"pods.v1.\"],\"Shallow\":[\"pods.v1.\"]}",
	         "*tier-config ignored*pods.v1. is listed both*"},
	        {"{\"Depth\":\"shallow\",\"EnabledInfra\":{\"istio\":true}}",
	         "*tier-config ignored*EnabledInfra is not a list*"},
	        {"{\"Depth\":\"shallow\",\"DisabledInfra\":[null]}",
	         "*tier-config ignored*DisabledInfra[0] is not a string*"},
	        {"{\"Depth\":\"shallow\",\"Mode\":[1]}", "*tier-config ignored*Mode is not*"},
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(MeshSyncWatchConfig) config = NULL;

		/* exactly one warning each: the expected one, and no other may come */
		g_test_expect_message("MeshSyncConfig", G_LOG_LEVEL_WARNING, cases[i].fault);
		config = config_with_tiers(cases[i].tiers);
		g_test_assert_expected_messages();
		assert_no_tiers(config);
	}
}

static void
test_watch_config_tiers_file(void)
{
	static const gchar *const texts[] = {
	        "blacklist: [secrets.v1.]\ntier-config:\n  depth: shallow\n"
	        "  full: [deployments.v1.apps]\n",
	        "blacklist: [secrets.v1.]\ntier-config: '{\"Depth\":\"shallow\","
	        "\"Full\":[\"deployments.v1.apps\"]}'\n",
	};

	for (guint i = 0; i < G_N_ELEMENTS(texts); i++) {
		g_autoptr(GError) error = NULL;
		g_autofree gchar *path = NULL;
		g_autoptr(MeshSyncWatchConfig) config = NULL;
		gint fd = g_file_open_tmp("watch-config-XXXXXX.yaml", &path, &error);

		g_assert_no_error(error);
		close(fd);
		g_assert_true(g_file_set_contents(path, texts[i], -1, &error));
		config = meshsync_watch_config_new_from_file(path, &error);
		g_assert_no_error(error);
		g_assert_cmpint(meshsync_watch_config_get_depth(config, "pods.v1."), ==,
		                MESHSYNC_WATCH_DEPTH_SHALLOW);
		g_assert_cmpint(meshsync_watch_config_get_depth(config, "deployments.v1.apps"), ==,
		                MESHSYNC_WATCH_DEPTH_FULL);
		g_unlink(path);
	}
}

static void
test_watch_config_depth_enum(void)
{
	GEnumClass *klass = g_type_class_ref(MESHSYNC_TYPE_WATCH_DEPTH);

	g_assert_cmpstr(g_enum_get_value(klass, MESHSYNC_WATCH_DEPTH_SHALLOW)->value_nick, ==,
	                "shallow");
	g_assert_cmpstr(g_enum_get_value(klass, MESHSYNC_WATCH_DEPTH_FULL)->value_nick, ==, "full");
	g_type_class_unref(klass);
}

static MeshSyncWatchChangeKind
change_of(GPtrArray *changes, const gchar *name)
{
	for (guint i = 0; i < changes->len; i++) {
		MeshSyncWatchChange *change = g_ptr_array_index(changes, i);

		if (g_strcmp0(change->name, name) == 0)
			return change->kind;
	}
	return MESHSYNC_WATCH_CHANGE_NONE;
}

static void
test_watch_settings_compare(void)
{
	static const gchar *const added_only[] = {"ADDED", NULL};
	static const gchar *const reordered[] = {"DELETED", "ADDED", "MODIFIED", NULL};
	MeshSyncWatchSettings off = {FALSE, NULL};
	MeshSyncWatchSettings all = {TRUE, default_events};
	MeshSyncWatchSettings same = {TRUE, reordered};
	MeshSyncWatchSettings fewer = {TRUE, added_only};

	g_assert_cmpint(meshsync_watch_settings_compare(&off, &off), ==,
	                MESHSYNC_WATCH_CHANGE_NONE);
	g_assert_cmpint(meshsync_watch_settings_compare(&off, &all), ==,
	                MESHSYNC_WATCH_CHANGE_ADDED);
	g_assert_cmpint(meshsync_watch_settings_compare(&all, &off), ==,
	                MESHSYNC_WATCH_CHANGE_REMOVED);
	/* the events are a set: listed in another order they are the same */
	g_assert_cmpint(meshsync_watch_settings_compare(&all, &same), ==,
	                MESHSYNC_WATCH_CHANGE_NONE);
	g_assert_cmpint(meshsync_watch_settings_compare(&all, &fewer), ==,
	                MESHSYNC_WATCH_CHANGE_EVENTS);
}

static void
test_watch_config_diff(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncWatchConfig) before =
	        config_from_cr_lists(NULL, "[\"secrets.v1.\", \"nodes.v1.\"]", &error);
	g_autoptr(MeshSyncWatchConfig) rewritten =
	        config_from_cr_lists(NULL, "[\"nodes.v1.\", \"secrets.v1.\"]", &error);
	g_autoptr(MeshSyncWatchConfig) after =
	        config_from_cr_lists(NULL, "[\"pods.v1.\", \"nodes.v1.\"]", &error);
	g_autoptr(GPtrArray) none = NULL;
	g_autoptr(GPtrArray) changes = NULL;
	g_autoptr(GPtrArray) events = NULL;
	g_autoptr(MeshSyncWatchConfig) white = config_from_cr_lists(
	        "[{\"Resource\": \"pods.v1.\", \"Events\": [\"ADDED\"]}]", NULL, &error);
	g_autoptr(MeshSyncWatchConfig) whiter = config_from_cr_lists(
	        "[{\"Resource\": \"pods.v1.\", \"Events\": [\"ADDED\", \"DELETED\"]}]", NULL,
	        &error);

	g_assert_no_error(error);
	/* the same lists in another order: nothing an informer depends on changed */
	none = meshsync_watch_config_diff(before, rewritten);
	g_assert_cmpuint(none->len, ==, 0);
	changes = meshsync_watch_config_diff(before, after);
	g_assert_cmpuint(changes->len, ==, 2);
	g_assert_cmpint(change_of(changes, "secrets.v1."), ==, MESHSYNC_WATCH_CHANGE_ADDED);
	g_assert_cmpint(change_of(changes, "pods.v1."), ==, MESHSYNC_WATCH_CHANGE_REMOVED);
	events = meshsync_watch_config_diff(white, whiter);
	g_assert_cmpuint(events->len, ==, 1);
	g_assert_cmpint(change_of(events, "pods.v1."), ==, MESHSYNC_WATCH_CHANGE_EVENTS);
}

static void
test_watch_config_replace_entries(void)
{
	static const gchar *const only_pods[] = {"pod", NULL};
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncWatchConfig) config = meshsync_watch_config_new_default();
	g_autoptr(MeshSyncWatchConfig) copy = NULL;
	g_autoptr(MeshSyncWatchConfig) target =
	        config_from_cr_lists(NULL, "[\"pods.v1.\"]", &error);
	g_autoptr(MeshSyncWatchConfig) fallback = meshsync_watch_config_new_default();
	g_autoptr(GPtrArray) changes = NULL;

	g_assert_no_error(error);
	meshsync_watch_config_set_output_resources(config, only_pods);
	g_assert_true(meshsync_watch_config_add_crd(config, "widgets.v1.example.com"));
	copy = meshsync_watch_config_copy(config);
	changes = meshsync_watch_config_diff(config, copy);
	g_assert_cmpuint(changes->len, ==, 0);
	g_assert_false(meshsync_watch_config_accepts_resource(copy, "services.v1."));

	/* the resource changed: its CRD types stay, the output filter too */
	meshsync_watch_config_replace_entries(config, target, TRUE);
	g_assert_null(meshsync_watch_config_get_events(config, "pods.v1."));
	g_assert_nonnull(meshsync_watch_config_get_events(config, "services.v1."));
	g_assert_nonnull(meshsync_watch_config_get_events(config, "widgets.v1.example.com"));
	g_assert_true(meshsync_watch_config_accepts_resource(config, "pods.v1."));
	g_assert_false(meshsync_watch_config_accepts_resource(config, "services.v1."));

	/* the resource went: the default again, without CRD types */
	meshsync_watch_config_replace_entries(config, fallback, FALSE);
	g_assert_null(meshsync_watch_config_get_events(config, "widgets.v1.example.com"));
	g_clear_pointer(&changes, g_ptr_array_unref);
	changes = meshsync_watch_config_diff(fallback, config);
	g_assert_cmpuint(changes->len, ==, 0);
}

/* A depth that changes replaces the type's informer (what it lists and holds differs); a copy
 * and a replaced configuration carry the tier-config along. */
static void
test_watch_config_tiers_diff(void)
{
	g_autoptr(MeshSyncWatchConfig) before = config_with_tiers(NULL);
	g_autoptr(MeshSyncWatchConfig) after =
	        config_with_tiers("{\"Shallow\":[\"pods.v1.\"],\"EnabledInfra\":[\"istio\"]}");
	g_autoptr(MeshSyncWatchConfig) copy = meshsync_watch_config_copy(after);
	g_autoptr(MeshSyncWatchConfig) followed = meshsync_watch_config_copy(before);
	g_autoptr(GPtrArray) changes = meshsync_watch_config_diff(before, after);
	g_autoptr(GPtrArray) none = meshsync_watch_config_diff(after, copy);

	g_assert_cmpuint(changes->len, ==, 1);
	g_assert_cmpint(change_of(changes, "pods.v1."), ==, MESHSYNC_WATCH_CHANGE_REPLACED);
	g_assert_cmpuint(none->len, ==, 0);
	g_assert_cmpint(meshsync_watch_config_get_depth(copy, "pods.v1."), ==,
	                MESHSYNC_WATCH_DEPTH_SHALLOW);
	g_assert_cmpstrv(meshsync_watch_config_get_enabled_infra(copy),
	                 ((const gchar *const[]){"istio", NULL}));

	meshsync_watch_config_replace_entries(followed, after, TRUE);
	g_assert_cmpint(meshsync_watch_config_get_depth(followed, "pods.v1."), ==,
	                MESHSYNC_WATCH_DEPTH_SHALLOW);
	meshsync_watch_config_replace_entries(followed, before, TRUE);
	g_assert_cmpint(meshsync_watch_config_get_depth(followed, "pods.v1."), ==,
	                MESHSYNC_WATCH_DEPTH_FULL);
	g_assert_cmpstrv(meshsync_watch_config_get_enabled_infra(followed),
	                 ((const gchar *const[]){NULL}));
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
	g_test_add_func("/watch-config/default", test_watch_config_default);
	g_test_add_func("/watch-config/builtin-table", test_watch_config_builtin_table);
	g_test_add_func("/watch-config/whitelist", test_watch_config_whitelist);
	g_test_add_func("/watch-config/blacklist", test_watch_config_blacklist);
	g_test_add_func("/watch-config/serviceaccount-spelling",
	                test_watch_config_serviceaccount_spelling);
	g_test_add_func("/watch-config/bad-entries-skipped", test_watch_config_bad_entries_skipped);
	g_test_add_func("/watch-config/errors", test_watch_config_errors);
	g_test_add_func("/watch-config/resource-without-watch-list",
	                test_watch_config_resource_without_watch_list);
	g_test_add_func("/watch-config/files", test_watch_config_files);
	g_test_add_func("/watch-config/kind-not-a-string", test_watch_config_kind_not_a_string);
	g_test_add_func("/watch-config/crds", test_watch_config_crds);
	g_test_add_func("/watch-config/output-filters", test_watch_config_output_filters);
	g_test_add_func("/watch-config/pluralise", test_watch_config_pluralise);
	g_test_add_func("/watch-config/name-parse", test_watch_name_parse);
	g_test_add_func("/watch-config/settings-compare", test_watch_settings_compare);
	g_test_add_func("/watch-config/diff", test_watch_config_diff);
	g_test_add_func("/watch-config/replace-entries", test_watch_config_replace_entries);
	g_test_add_func("/watch-config/tiers/absent", test_watch_config_tiers_absent);
	g_test_add_func("/watch-config/tiers/present", test_watch_config_tiers_present);
	g_test_add_func("/watch-config/tiers/case", test_watch_config_tiers_case);
	g_test_add_func("/watch-config/tiers/malformed", test_watch_config_tiers_malformed);
	g_test_add_func("/watch-config/tiers/file", test_watch_config_tiers_file);
	g_test_add_func("/watch-config/tiers/depth-enum", test_watch_config_depth_enum);
	g_test_add_func("/watch-config/tiers/diff", test_watch_config_tiers_diff);
	return g_test_run();
}
