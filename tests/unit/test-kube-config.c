/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "meshsync-error.h"
#include "meshsync-kube-config-private.h"

/* ---- helpers ---- */

static gchar *
fixture(const gchar *name)
{
	const gchar *data = g_getenv("MESHSYNC_TEST_DATA");

	g_assert_nonnull(data);
	return g_build_filename(data, "kubeconfig", name, NULL);
}

static MeshSyncKubeConfig *
load_fixture(const gchar *name, const gchar *context, GError **error)
{
	g_autofree gchar *path = fixture(name);

	return meshsync_kube_config_new_from_file(path, context, error);
}

static void
got_result_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	GAsyncResult **out = user_data;

	*out = g_object_ref(result);
}

static MeshSyncKubeCredentials *
get_credentials(MeshSyncKubeConfig *config, GError **error)
{
	g_autoptr(GAsyncResult) result = NULL;

	meshsync_kube_config_get_credentials_async(config, NULL, got_result_cb, &result);
	while (result == NULL)
		g_main_context_iteration(NULL, TRUE);
	return meshsync_kube_config_get_credentials_finish(config, result, error);
}

static gchar *
scratch_path(const gchar *name)
{
	/* G_TEST_OPTION_ISOLATE_DIRS gives every test its own empty home */
	return g_build_filename(g_get_home_dir(), name, NULL);
}

static void
write_file(const gchar *path, const gchar *contents)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *dir = g_path_get_dirname(path);

	g_assert_cmpint(g_mkdir_with_parents(dir, 0700), ==, 0);
	g_file_set_contents(path, contents, -1, &error);
	g_assert_no_error(error);
}

static gchar *
read_file(const gchar *path)
{
	g_autoptr(GError) error = NULL;
	gchar *contents = NULL;

	g_file_get_contents(path, &contents, NULL, &error);
	g_assert_no_error(error);
	return contents;
}

static guint
count_lines(const gchar *path)
{
	g_autofree gchar *contents = NULL;
	guint lines = 0;

	if (!g_file_get_contents(path, &contents, NULL, NULL))
		return 0;
	for (const gchar *p = contents; *p != '\0'; p++) {
		if (*p == '\n')
			lines++;
	}
	return lines;
}

static void
clear_cluster_env(void)
{
	g_unsetenv("KUBERNETES_SERVICE_HOST");
	g_unsetenv("KUBERNETES_SERVICE_PORT");
	g_unsetenv("POD_NAMESPACE");
	g_unsetenv("KUBECONFIG");
}

/* ---- good kubeconfigs ---- */

static void
test_token(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = load_fixture("token.yaml", NULL, &error);
	g_autoptr(MeshSyncKubeCredentials) credentials = NULL;
	g_autofree gchar *path = fixture("token.yaml");
	g_autofree gchar *server = NULL;
	g_autofree gchar *namespace = NULL;
	gboolean in_cluster = TRUE;
	GBytes *ca;

	g_assert_no_error(error);
	g_assert_nonnull(config);
	g_assert_cmpstr(meshsync_kube_config_get_server(config), ==, "https://127.0.0.1:6443");
	g_assert_cmpstr(meshsync_kube_config_get_context_name(config), ==, "sim");
	g_assert_cmpstr(meshsync_kube_config_get_cluster_name(config), ==, "sim");
	g_assert_cmpstr(meshsync_kube_config_get_user_name(config), ==, "sa");
	g_assert_cmpstr(meshsync_kube_config_get_namespace(config), ==, "shop");
	g_assert_cmpstr(meshsync_kube_config_get_tls_server_name(config), ==, "kubernetes");
	g_assert_false(meshsync_kube_config_get_insecure_skip_tls_verify(config));
	g_assert_false(meshsync_kube_config_get_in_cluster(config));
	g_assert_cmpstr(meshsync_kube_config_get_source(config), ==, path);

	/* the properties answer as the getters do */
	g_object_get(config, "server", &server, "namespace", &namespace, "in-cluster", &in_cluster,
	             NULL);
	g_assert_cmpstr(server, ==, "https://127.0.0.1:6443");
	g_assert_cmpstr(namespace, ==, "shop");
	g_assert_false(in_cluster);

	ca = meshsync_kube_config_get_ca_pem(config);
	g_assert_nonnull(ca);
	g_assert_nonnull(g_strstr_len(g_bytes_get_data(ca, NULL), g_bytes_get_size(ca),
	                              "-----BEGIN CERTIFICATE-----"));

	credentials = get_credentials(config, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(credentials->token, ==, "sim-token-1234");
	g_assert_null(credentials->client_certificate);
}

static void
test_context_override(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = load_fixture("token.yaml", "other", &error);

	g_assert_no_error(error);
	g_assert_cmpstr(meshsync_kube_config_get_context_name(config), ==, "other");
	/* the context sets no namespace */
	g_assert_cmpstr(meshsync_kube_config_get_namespace(config), ==, "default");
}

static void
test_client_cert_data(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = load_fixture("client-cert-data.yaml", NULL, &error);
	g_autoptr(MeshSyncKubeCredentials) credentials = NULL;
	g_autofree gchar *bundle_path = fixture("ca-bundle.crt");
	g_autofree gchar *bundle = read_file(bundle_path);
	GBytes *ca;

	g_assert_no_error(error);
	g_assert_cmpstr(meshsync_kube_config_get_server(config), ==,
	                "https://sim.example.test:8443");
	g_assert_cmpstr(meshsync_kube_config_get_namespace(config), ==, "default");
	g_assert_null(meshsync_kube_config_get_tls_server_name(config));

	/* the whole bundle is kept, not only its first certificate */
	ca = meshsync_kube_config_get_ca_pem(config);
	g_assert_nonnull(ca);
	g_assert_cmpmem(g_bytes_get_data(ca, NULL), g_bytes_get_size(ca), bundle, strlen(bundle));

	credentials = get_credentials(config, &error);
	g_assert_no_error(error);
	g_assert_null(credentials->token);
	g_assert_true(G_IS_TLS_CERTIFICATE(credentials->client_certificate));
}

static void
test_relative_paths(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = load_fixture("nested/relative.yaml", NULL, &error);
	g_autoptr(MeshSyncKubeCredentials) credentials = NULL;
	g_autofree gchar *bundle_path = fixture("ca-bundle.crt");
	g_autofree gchar *bundle = read_file(bundle_path);
	GBytes *ca;

	g_assert_no_error(error);
	g_assert_cmpstr(meshsync_kube_config_get_server(config), ==, "https://[::1]:6443");
	g_assert_cmpstr(meshsync_kube_config_get_namespace(config), ==, "files-ns");
	ca = meshsync_kube_config_get_ca_pem(config);
	g_assert_nonnull(ca);
	g_assert_cmpmem(g_bytes_get_data(ca, NULL), g_bytes_get_size(ca), bundle, strlen(bundle));

	credentials = get_credentials(config, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(credentials->token, ==, "file-token-5678");
	g_assert_true(G_IS_TLS_CERTIFICATE(credentials->client_certificate));
}

static void
test_json(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = load_fixture("config.json", NULL, &error);
	g_autoptr(MeshSyncKubeCredentials) credentials = NULL;

	g_assert_no_error(error);
	g_assert_cmpstr(meshsync_kube_config_get_server(config), ==, "http://127.0.0.1:8080");
	g_assert_cmpstr(meshsync_kube_config_get_user_name(config), ==, "json-user");
	g_assert_cmpstr(meshsync_kube_config_get_namespace(config), ==, "from-json");
	g_assert_true(meshsync_kube_config_get_insecure_skip_tls_verify(config));
	g_assert_null(meshsync_kube_config_get_ca_pem(config));

	credentials = get_credentials(config, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(credentials->token, ==, "json-token");
}

static void
test_data(void)
{
	static const gchar yaml[] = "current-context: c\n"
	                            "clusters: [{name: k, cluster: {server: 'https://k:6443'}}]\n"
	                            "contexts: [{name: c, context: {cluster: k}}]\n";
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MeshSyncKubeCredentials) credentials = NULL;

	config = meshsync_kube_config_new_from_data(yaml, -1, NULL, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(meshsync_kube_config_get_server(config), ==, "https://k:6443");
	g_assert_cmpstr(meshsync_kube_config_get_source(config), ==, "kubeconfig data");
	g_assert_null(meshsync_kube_config_get_user_name(config));

	/* no user: a request goes out without credentials */
	credentials = get_credentials(config, &error);
	g_assert_no_error(error);
	g_assert_null(credentials->token);
	g_assert_null(credentials->client_certificate);
}

/* ---- broken kubeconfigs ---- */

typedef struct {
	const gchar *file;
	const gchar *context;
	const gchar *message; /* a substring of the error */
} BrokenCase;

static const BrokenCase broken_cases[] = {
        {"broken-yaml.yaml", NULL, "broken-yaml.yaml:7:"},
        {"no-current-context.yaml", NULL, "no-current-context.yaml: current-context is not set"},
        {"token.yaml", "nope", "token.yaml: context \"nope\" not found"},
        {"broken.yaml", NULL, "broken.yaml: clusters[no-server].server: missing"},
        {"broken.yaml", "missing-cluster",
         "broken.yaml: contexts[missing-cluster].cluster: cluster \"nowhere\" not found"},
        {"broken.yaml", "missing-user",
         "broken.yaml: contexts[missing-user].user: user \"nobody\" not found"},
        {"broken.yaml", "missing-ca-file",
         "broken.yaml: clusters[missing-ca-file].certificate-authority: "},
        {"broken.yaml", "bad-ca-data",
         "broken.yaml: clusters[bad-ca-data].certificate-authority-data: not a PEM certificate"},
        {"broken.yaml", "bad-server", "broken.yaml: clusters[bad-server].server: \"not a url\""},
        {"broken.yaml", "bad-key-data",
         "broken.yaml: users[bad-key-data].client-key-data: not a PEM private key"},
        {"broken.yaml", "bad-cert-data",
         "broken.yaml: users[bad-cert-data].client-certificate-data: not a PEM certificate"},
        {"broken.yaml", "missing-key-file", "broken.yaml: users[missing-key-file].client-key: "},
        {"broken.yaml", "cert-without-key",
         "broken.yaml: users[cert-without-key].client-key: missing"},
        {"broken.yaml", "missing-token-file", "broken.yaml: users[missing-token-file].tokenFile: "},
        {"broken.yaml", "exec-no-interactive",
         "broken.yaml: users[exec-no-interactive].exec.interactiveMode: missing"},
        {"broken.yaml", "exec-old-api",
         "broken.yaml: users[exec-old-api].exec.apiVersion: "
         "\"client.authentication.k8s.io/v1alpha1\" is not supported"},
};

static void
test_broken(gconstpointer data)
{
	const BrokenCase *broken = data;
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = load_fixture(broken->file, broken->context, &error);

	g_assert_null(config);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG);
	g_test_message("error: %s", error->message);
	if (strstr(error->message, broken->message) == NULL)
		g_test_fail_printf("\"%s\" does not contain \"%s\"", error->message,
		                   broken->message);
	/* one line each */
	g_assert_null(strchr(error->message, '\n'));
}

static void
test_missing_file_names_it(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = load_fixture("no-such.yaml", NULL, &error);

	g_assert_null(config);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, "no-such.yaml"));
}

/* ---- merging ---- */

static void
test_merge(void)
{
	g_autofree gchar *missing = fixture("merge/does-not-exist.yaml");
	g_autofree gchar *a = fixture("merge/a.yaml");
	g_autofree gchar *b = fixture("merge/b.yaml");
	g_autofree gchar *c = fixture("merge/c.yaml");
	const gchar *paths[] = {missing, a, b, c, NULL};
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MeshSyncKubeConfig) other = NULL;
	g_autoptr(MeshSyncKubeCredentials) credentials = NULL;

	config = meshsync_kube_config_new_from_files(paths, NULL, &error);
	g_assert_no_error(error);
	/* current-context from b.yaml, the first that sets it (not c.yaml) */
	g_assert_cmpstr(meshsync_kube_config_get_context_name(config), ==, "ctx-b");
	/* context ctx-b from b.yaml, the first that defines it (not c.yaml's) */
	g_assert_cmpstr(meshsync_kube_config_get_namespace(config), ==, "ns-b");
	/* cluster "shared" and user "shared-user" from a.yaml, the first that defines them */
	g_assert_cmpstr(meshsync_kube_config_get_server(config), ==, "https://a.example.test:6443");
	credentials = get_credentials(config, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(credentials->token, ==, "shared-from-a");

	/* a context from c.yaml naming a cluster only b.yaml defines */
	other = meshsync_kube_config_new_from_files(paths, "ctx-c", &error);
	g_assert_no_error(error);
	g_assert_cmpstr(meshsync_kube_config_get_server(other), ==,
	                "https://only-b.example.test:6443");
	g_assert_cmpstr(meshsync_kube_config_get_user_name(other), ==, "user-a");
}

static void
test_merge_errors(void)
{
	g_autofree gchar *a = fixture("merge/a.yaml");
	g_autofree gchar *broken = fixture("broken-yaml.yaml");
	g_autofree gchar *missing = fixture("merge/does-not-exist.yaml");
	const gchar *with_broken[] = {a, broken, NULL};
	const gchar *all_missing[] = {missing, NULL};
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = NULL;

	/* a broken file is an error even when an earlier one would do */
	config = meshsync_kube_config_new_from_files(with_broken, "ctx-a", &error);
	g_assert_null(config);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, "broken-yaml.yaml:7:"));
	g_clear_error(&error);

	config = meshsync_kube_config_new_from_files(all_missing, NULL, &error);
	g_assert_null(config);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, "does-not-exist.yaml"));
}

/* ---- load() order ---- */

static gchar *
make_service_account_dir(const gchar *token, const gchar *namespace)
{
	g_autofree gchar *ca_fixture = fixture("ca.crt");
	g_autofree gchar *ca = read_file(ca_fixture);
	g_autofree gchar *dir = scratch_path("serviceaccount");
	g_autofree gchar *token_path = g_build_filename(dir, "token", NULL);
	g_autofree gchar *ca_path = g_build_filename(dir, "ca.crt", NULL);
	g_autofree gchar *namespace_path = g_build_filename(dir, "namespace", NULL);

	write_file(token_path, token);
	write_file(ca_path, ca);
	if (namespace != NULL)
		write_file(namespace_path, namespace);
	meshsync_kube_config_set_service_account_dir_for_testing(dir);
	return g_steal_pointer(&dir);
}

static void
test_load_order(void)
{
	g_autofree gchar *token_fixture = fixture("token.yaml");
	g_autofree gchar *json_fixture = fixture("config.json");
	g_autofree gchar *merge_b = fixture("merge/b.yaml");
	g_autofree gchar *home_config = scratch_path(".kube/config");
	g_autofree gchar *token_yaml = read_file(token_fixture);
	g_autofree gchar *sa_dir = NULL;
	g_autofree gchar *list = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = NULL;

	clear_cluster_env();

	/* nothing at all: one error listing what was tried */
	config = meshsync_kube_config_load(NULL, NULL, &error);
	g_assert_null(config);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, "in-cluster"));
	g_assert_nonnull(strstr(error->message, "KUBECONFIG (not set)"));
	g_assert_nonnull(strstr(error->message, home_config));
	g_clear_error(&error);

	/* ~/.kube/config */
	write_file(home_config, token_yaml);
	config = meshsync_kube_config_load(NULL, NULL, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(meshsync_kube_config_get_source(config), ==, home_config);
	g_clear_object(&config);

	/* KUBECONFIG of which no file exists is passed over */
	g_setenv("KUBECONFIG", "/nonexistent/meshsync-test/config", TRUE);
	config = meshsync_kube_config_load(NULL, NULL, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(meshsync_kube_config_get_source(config), ==, home_config);
	g_clear_object(&config);

	/* KUBECONFIG before ~/.kube/config, merged, with the context argument */
	list = g_strjoin(":", "/nonexistent/meshsync-test/config", merge_b, json_fixture, NULL);
	g_setenv("KUBECONFIG", list, TRUE);
	config = meshsync_kube_config_load(NULL, "json", &error);
	g_assert_no_error(error);
	g_assert_cmpstr(meshsync_kube_config_get_context_name(config), ==, "json");
	g_assert_cmpstr(meshsync_kube_config_get_server(config), ==, "http://127.0.0.1:8080");
	g_assert_nonnull(strstr(meshsync_kube_config_get_source(config), merge_b));
	g_clear_object(&config);

	/* in-cluster before KUBECONFIG */
	sa_dir = make_service_account_dir("sa-token\n", "team-a\n");
	g_setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", TRUE);
	g_setenv("KUBERNETES_SERVICE_PORT", "443", TRUE);
	config = meshsync_kube_config_load(NULL, NULL, &error);
	g_assert_no_error(error);
	g_assert_true(meshsync_kube_config_get_in_cluster(config));
	g_assert_cmpstr(meshsync_kube_config_get_source(config), ==, "in-cluster");
	g_clear_object(&config);

	/* the explicit file before everything */
	config = meshsync_kube_config_load(json_fixture, NULL, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(meshsync_kube_config_get_source(config), ==, json_fixture);
	g_assert_false(meshsync_kube_config_get_in_cluster(config));

	clear_cluster_env();
	meshsync_kube_config_set_service_account_dir_for_testing(NULL);
}

/* ---- in-cluster ---- */

static void
test_in_cluster(void)
{
	g_autofree gchar *sa_dir = make_service_account_dir("sa-token\n", "  team-a\n");
	g_autofree gchar *namespace_path = g_build_filename(sa_dir, "namespace", NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MeshSyncKubeCredentials) credentials = NULL;

	clear_cluster_env();
	g_setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", TRUE);
	g_setenv("KUBERNETES_SERVICE_PORT", "443", TRUE);
	config = meshsync_kube_config_new_in_cluster(&error);
	g_assert_no_error(error);
	g_assert_cmpstr(meshsync_kube_config_get_server(config), ==, "https://10.96.0.1:443");
	g_assert_cmpstr(meshsync_kube_config_get_namespace(config), ==, "team-a");
	g_assert_true(meshsync_kube_config_get_in_cluster(config));
	g_assert_cmpstr(meshsync_kube_config_get_source(config), ==, "in-cluster");
	g_assert_nonnull(meshsync_kube_config_get_ca_pem(config));
	credentials = get_credentials(config, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(credentials->token, ==, "sa-token");
	g_clear_object(&config);

	/* POD_NAMESPACE wins over the file; an IPv6 host is bracketed */
	g_setenv("POD_NAMESPACE", "from-env", TRUE);
	g_setenv("KUBERNETES_SERVICE_HOST", "fd00::1", TRUE);
	config = meshsync_kube_config_new_in_cluster(&error);
	g_assert_no_error(error);
	g_assert_cmpstr(meshsync_kube_config_get_server(config), ==, "https://[fd00::1]:443");
	g_assert_cmpstr(meshsync_kube_config_get_namespace(config), ==, "from-env");
	g_clear_object(&config);

	/* neither: default */
	g_unsetenv("POD_NAMESPACE");
	g_assert_cmpint(g_unlink(namespace_path), ==, 0);
	config = meshsync_kube_config_new_in_cluster(&error);
	g_assert_no_error(error);
	g_assert_cmpstr(meshsync_kube_config_get_namespace(config), ==, "default");
	g_clear_object(&config);

	/* an empty port means no cluster */
	g_setenv("KUBERNETES_SERVICE_PORT", "", TRUE);
	config = meshsync_kube_config_new_in_cluster(&error);
	g_assert_null(config);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, "not running in a cluster"));

	clear_cluster_env();
	meshsync_kube_config_set_service_account_dir_for_testing(NULL);
}

static void
test_in_cluster_missing_token(void)
{
	g_autofree gchar *sa_dir = make_service_account_dir("", NULL);
	g_autofree gchar *token_path = g_build_filename(sa_dir, "token", NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = NULL;

	clear_cluster_env();
	g_setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", TRUE);
	g_setenv("KUBERNETES_SERVICE_PORT", "443", TRUE);
	g_assert_cmpint(g_unlink(token_path), ==, 0);
	config = meshsync_kube_config_new_in_cluster(&error);
	g_assert_null(config);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, token_path));

	clear_cluster_env();
	meshsync_kube_config_set_service_account_dir_for_testing(NULL);
}

static void
test_token_rotation(void)
{
	g_autofree gchar *sa_dir = make_service_account_dir("first\n", "team-a");
	g_autofree gchar *token_path = g_build_filename(sa_dir, "token", NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	MeshSyncKubeCredentials *credentials;

	clear_cluster_env();
	g_setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", TRUE);
	g_setenv("KUBERNETES_SERVICE_PORT", "443", TRUE);
	config = meshsync_kube_config_new_in_cluster(&error);
	g_assert_no_error(error);

	/* with the default period a fresh token is trusted: a rewrite is not seen yet ... */
	write_file(token_path, "second\n");
	credentials = get_credentials(config, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(credentials->token, ==, "first");
	meshsync_kube_credentials_free(credentials);

	/* ... until a 401 invalidates it */
	meshsync_kube_config_invalidate_credentials(config);
	credentials = get_credentials(config, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(credentials->token, ==, "second");
	meshsync_kube_credentials_free(credentials);

	/* period 0: every request re-reads the file */
	meshsync_kube_config_set_token_file_period_for_testing(config, 0);
	write_file(token_path, "third\n");
	credentials = get_credentials(config, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(credentials->token, ==, "third");
	meshsync_kube_credentials_free(credentials);

	/* a failed read keeps the last good token */
	g_assert_cmpint(g_unlink(token_path), ==, 0);
	g_test_expect_message("MeshSyncKube", G_LOG_LEVEL_WARNING, "*cannot re-read the token*");
	credentials = get_credentials(config, &error);
	g_test_assert_expected_messages();
	g_assert_no_error(error);
	g_assert_cmpstr(credentials->token, ==, "third");
	meshsync_kube_credentials_free(credentials);

	/* and the next good read is picked up again */
	write_file(token_path, "fourth\n");
	credentials = get_credentials(config, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(credentials->token, ==, "fourth");
	meshsync_kube_credentials_free(credentials);

	clear_cluster_env();
	meshsync_kube_config_set_service_account_dir_for_testing(NULL);
}

/* ---- exec plugins ---- */

typedef struct {
	gchar *count_path;
	gchar *info_path;
} ExecFixture;

static void
exec_fixture_setup(ExecFixture *fx, gconstpointer data)
{
	g_assert_cmpint(g_mkdir_with_parents(g_get_home_dir(), 0700), ==, 0);
	fx->count_path = scratch_path("plugin-runs");
	fx->info_path = scratch_path("plugin-exec-info.json");
	g_setenv("MESHSYNC_TEST_EXEC_COUNT", fx->count_path, TRUE);
	g_setenv("MESHSYNC_TEST_EXEC_INFO", fx->info_path, TRUE);
	g_unsetenv("MESHSYNC_TEST_EXEC_EXPIRY");
	g_unsetenv("MESHSYNC_TEST_EXEC_FAIL");
	g_unsetenv("MESHSYNC_TEST_EXEC_HANG");
	g_unsetenv("PLUGIN_PREFIX");
}

static void
exec_fixture_teardown(ExecFixture *fx, gconstpointer data)
{
	g_unsetenv("MESHSYNC_TEST_EXEC_COUNT");
	g_unsetenv("MESHSYNC_TEST_EXEC_INFO");
	g_unsetenv("MESHSYNC_TEST_EXEC_EXPIRY");
	g_unsetenv("MESHSYNC_TEST_EXEC_FAIL");
	g_unsetenv("MESHSYNC_TEST_EXEC_HANG");
	g_free(fx->count_path);
	g_free(fx->info_path);
}

static gchar *
token_of(MeshSyncKubeConfig *config)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeCredentials) credentials = get_credentials(config, &error);

	g_assert_no_error(error);
	g_assert_nonnull(credentials);
	return g_strdup(credentials->token);
}

static void
test_exec_cached(ExecFixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = load_fixture("exec.yaml", NULL, &error);
	g_autofree gchar *first = NULL;
	g_autofree gchar *second = NULL;
	g_autofree gchar *third = NULL;

	g_assert_no_error(error);
	g_setenv("MESHSYNC_TEST_EXEC_EXPIRY", "2999-01-01T00:00:00Z", TRUE);

	/* args and env from the kubeconfig reach the plugin: "$PLUGIN_PREFIX-$2-$RUN" */
	first = token_of(config);
	g_assert_cmpstr(first, ==, "exec-plugin-1");
	g_assert_cmpuint(count_lines(fx->count_path), ==, 1);

	/* cached until the expiry */
	second = token_of(config);
	g_assert_cmpstr(second, ==, "exec-plugin-1");
	g_assert_cmpuint(count_lines(fx->count_path), ==, 1);

	/* a 401 drops the cache */
	meshsync_kube_config_invalidate_credentials(config);
	third = token_of(config);
	g_assert_cmpstr(third, ==, "exec-plugin-2");
	g_assert_cmpuint(count_lines(fx->count_path), ==, 2);
}

static void
test_exec_expired(ExecFixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = load_fixture("exec.yaml", NULL, &error);
	g_autofree gchar *first = NULL;
	g_autofree gchar *second = NULL;

	g_assert_no_error(error);
	g_setenv("MESHSYNC_TEST_EXEC_EXPIRY", "2000-01-01T00:00:00Z", TRUE);
	first = token_of(config);
	second = token_of(config);
	g_assert_cmpstr(first, ==, "exec-plugin-1");
	g_assert_cmpstr(second, ==, "exec-plugin-2");
	g_assert_cmpuint(count_lines(fx->count_path), ==, 2);
}

static void
test_exec_no_expiry(ExecFixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = load_fixture("exec.yaml", NULL, &error);
	g_autofree gchar *first = NULL;
	g_autofree gchar *second = NULL;

	g_assert_no_error(error);
	first = token_of(config);
	second = token_of(config);
	g_assert_cmpstr(first, ==, "exec-plugin-1");
	g_assert_cmpstr(second, ==, "exec-plugin-1");
	g_assert_cmpuint(count_lines(fx->count_path), ==, 1);
}

static void
test_exec_info(ExecFixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = load_fixture("exec.yaml", NULL, &error);
	g_autoptr(JsonParser) parser = json_parser_new();
	g_autofree gchar *token = NULL;
	g_autofree gchar *expected_ca = NULL;
	GBytes *ca;
	JsonObject *root;
	JsonObject *spec;
	JsonObject *cluster;

	g_assert_no_error(error);
	token = token_of(config);
	json_parser_load_from_file(parser, fx->info_path, &error);
	g_assert_no_error(error);
	root = json_node_get_object(json_parser_get_root(parser));
	g_assert_cmpstr(json_object_get_string_member(root, "kind"), ==, "ExecCredential");
	g_assert_cmpstr(json_object_get_string_member(root, "apiVersion"), ==,
	                "client.authentication.k8s.io/v1");
	spec = json_object_get_object_member(root, "spec");
	g_assert_false(json_object_get_boolean_member(spec, "interactive"));
	/* provideClusterInfo: true */
	cluster = json_object_get_object_member(spec, "cluster");
	g_assert_nonnull(cluster);
	g_assert_cmpstr(json_object_get_string_member(cluster, "server"), ==,
	                "https://127.0.0.1:6443");
	g_assert_cmpstr(json_object_get_string_member(cluster, "tls-server-name"), ==,
	                "kubernetes");
	ca = meshsync_kube_config_get_ca_pem(config);
	expected_ca = g_base64_encode(g_bytes_get_data(ca, NULL), g_bytes_get_size(ca));
	g_assert_cmpstr(json_object_get_string_member(cluster, "certificate-authority-data"), ==,
	                expected_ca);
}

static void
test_exec_v1beta1(ExecFixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = load_fixture("exec.yaml", "plugin-beta", &error);
	g_autoptr(JsonParser) parser = json_parser_new();
	g_autofree gchar *token = NULL;
	JsonObject *spec;

	/* v1beta1 needs no interactiveMode */
	g_assert_no_error(error);
	token = token_of(config);
	g_assert_cmpstr(token, ==, "none-beta-1");
	json_parser_load_from_file(parser, fx->info_path, &error);
	g_assert_no_error(error);
	spec = json_object_get_object_member(json_node_get_object(json_parser_get_root(parser)),
	                                     "spec");
	/* no provideClusterInfo, no cluster */
	g_assert_false(json_object_has_member(spec, "cluster"));
}

static void
test_exec_certificate(ExecFixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = load_fixture("exec.yaml", "plugin-cert", &error);
	g_autoptr(MeshSyncKubeCredentials) credentials = NULL;

	g_assert_no_error(error);
	credentials = get_credentials(config, &error);
	g_assert_no_error(error);
	g_assert_null(credentials->token);
	g_assert_true(G_IS_TLS_CERTIFICATE(credentials->client_certificate));
}

static void
test_exec_concurrent(ExecFixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = load_fixture("exec.yaml", NULL, &error);
	g_autoptr(GAsyncResult) first = NULL;
	g_autoptr(GAsyncResult) second = NULL;
	g_autoptr(MeshSyncKubeCredentials) one = NULL;
	g_autoptr(MeshSyncKubeCredentials) two = NULL;

	g_assert_no_error(error);
	meshsync_kube_config_get_credentials_async(config, NULL, got_result_cb, &first);
	meshsync_kube_config_get_credentials_async(config, NULL, got_result_cb, &second);
	while (first == NULL || second == NULL)
		g_main_context_iteration(NULL, TRUE);
	one = meshsync_kube_config_get_credentials_finish(config, first, &error);
	g_assert_no_error(error);
	two = meshsync_kube_config_get_credentials_finish(config, second, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(one->token, ==, "exec-plugin-1");
	g_assert_cmpstr(two->token, ==, "exec-plugin-1");
	g_assert_cmpuint(count_lines(fx->count_path), ==, 1);
}

static void
test_exec_missing_command(ExecFixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = load_fixture("exec.yaml", "plugin-missing", &error);
	g_autoptr(MeshSyncKubeCredentials) credentials = NULL;

	g_assert_no_error(error);
	credentials = get_credentials(config, &error);
	g_assert_null(credentials);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, "meshsync-test-no-such-plugin not found"));
	g_assert_nonnull(strstr(error->message, "install it with 'apt install "
	                                        "meshsync-test-plugin'"));
}

static void
test_exec_failure(ExecFixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = load_fixture("exec.yaml", NULL, &error);
	g_autoptr(MeshSyncKubeCredentials) credentials = NULL;
	g_autofree gchar *token = NULL;

	g_assert_no_error(error);
	g_setenv("MESHSYNC_TEST_EXEC_FAIL", "credentials expired, log in again", TRUE);
	credentials = get_credentials(config, &error);
	g_assert_null(credentials);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_FAILED);
	g_assert_nonnull(strstr(error->message, "exited with status 3"));
	g_assert_nonnull(strstr(error->message, "credentials expired, log in again"));
	g_clear_error(&error);

	/* a failure is not cached: the next request runs the plugin again */
	g_unsetenv("MESHSYNC_TEST_EXEC_FAIL");
	token = token_of(config);
	g_assert_cmpstr(token, ==, "exec-plugin-2");
}

static void
test_exec_hanging_plugin_stopped(ExecFixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = load_fixture("exec.yaml", NULL, &error);
	g_autoptr(MeshSyncKubeCredentials) credentials = NULL;
	g_autofree gchar *token = NULL;

	g_assert_no_error(error);
	meshsync_kube_config_set_exec_timeout_for_testing(config, 1);
	g_setenv("MESHSYNC_TEST_EXEC_HANG", "1", TRUE);
	credentials = get_credentials(config, &error);
	g_assert_null(credentials);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_FAILED);
	g_assert_nonnull(strstr(error->message, "gave no credentials within 1 s"));
	g_clear_error(&error);

	/* Nothing of the stopped run is kept: the next request runs the plugin again. */
	g_unsetenv("MESHSYNC_TEST_EXEC_HANG");
	token = token_of(config);
	g_assert_cmpstr(token, ==, "exec-plugin-2");
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

	g_test_add_func("/kube-config/token", test_token);
	g_test_add_func("/kube-config/context-override", test_context_override);
	g_test_add_func("/kube-config/client-cert-data", test_client_cert_data);
	g_test_add_func("/kube-config/relative-paths", test_relative_paths);
	g_test_add_func("/kube-config/json", test_json);
	g_test_add_func("/kube-config/data", test_data);
	for (guint i = 0; i < G_N_ELEMENTS(broken_cases); i++) {
		g_autofree gchar *name = g_strdup_printf(
		        "/kube-config/broken/%s/%s", broken_cases[i].file,
		        broken_cases[i].context != NULL ? broken_cases[i].context : "current");
		g_test_add_data_func(name, &broken_cases[i], test_broken);
	}
	g_test_add_func("/kube-config/broken/missing-file", test_missing_file_names_it);
	g_test_add_func("/kube-config/merge", test_merge);
	g_test_add_func("/kube-config/merge/errors", test_merge_errors);
	g_test_add_func("/kube-config/load-order", test_load_order);
	g_test_add_func("/kube-config/in-cluster", test_in_cluster);
	g_test_add_func("/kube-config/in-cluster/missing-token", test_in_cluster_missing_token);
	g_test_add_func("/kube-config/in-cluster/token-rotation", test_token_rotation);
#define EXEC_TEST(path, func)                                                              \
	g_test_add("/kube-config/exec/" path, ExecFixture, NULL, exec_fixture_setup, func, \
	           exec_fixture_teardown)
	EXEC_TEST("cached", test_exec_cached);
	EXEC_TEST("expired", test_exec_expired);
	EXEC_TEST("no-expiry", test_exec_no_expiry);
	EXEC_TEST("exec-info", test_exec_info);
	EXEC_TEST("v1beta1", test_exec_v1beta1);
	EXEC_TEST("certificate", test_exec_certificate);
	EXEC_TEST("concurrent", test_exec_concurrent);
	EXEC_TEST("missing-command", test_exec_missing_command);
	EXEC_TEST("failure", test_exec_failure);
	EXEC_TEST("hanging-plugin-stopped", test_exec_hanging_plugin_stopped);
#undef EXEC_TEST
	return g_test_run();
}
