/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncKube"

#include "config.h"

#include <string.h>

#include "meshsync-error.h"
#include "meshsync-kube-config-private.h"
#include "kube/msd-in-cluster.h"
#include "kube/msd-kube-target.h"
#include "kube/msd-kubeconfig-context.h"
#include "kube/msd-kubeconfig-merge.h"
#include "util/msd-i18n.h"

/**
 * MeshSyncKubeConfig:
 *
 * Where the Kubernetes API server is and how to talk to it.
 *
 * A configuration comes from kubeconfig files (merged the way `kubectl` merges the
 * `KUBECONFIG` list), from kubeconfig text, or from the service account of the pod the
 * process runs in. Everything that can be checked is checked when the configuration is
 * loaded: the selected context, its cluster and user, the CA bundle and the client
 * certificate and key. A configuration is immutable once loaded.
 */

/* The loaders in kube/ fill a whole target before the object exists, so a configuration is
 * never seen half-checked; the credentials it owns are the only part that changes later. */
struct _MeshSyncKubeConfig {
	GObject parent_instance;

	MsdKubeTarget target;
	gboolean http2;
};

G_DEFINE_FINAL_TYPE(MeshSyncKubeConfig, meshsync_kube_config, G_TYPE_OBJECT)

enum {
	PROP_0,
	PROP_SERVER,
	PROP_CONTEXT_NAME,
	PROP_CLUSTER_NAME,
	PROP_USER_NAME,
	PROP_NAMESPACE,
	PROP_TLS_SERVER_NAME,
	PROP_DISABLE_COMPRESSION,
	PROP_INSECURE_SKIP_TLS_VERIFY,
	PROP_IN_CLUSTER,
	PROP_SOURCE,
	PROP_HTTP2,
	N_PROPS
};

static GParamSpec *properties[N_PROPS];

/**
 * meshsync_kube_credentials_free: (skip)
 * @credentials: (nullable): credentials to free
 *
 * Frees credentials returned by meshsync_kube_config_get_credentials_finish().
 */
void
meshsync_kube_credentials_free(MeshSyncKubeCredentials *credentials)
{
	if (credentials == NULL)
		return;
	g_free(credentials->token);
	g_clear_object(&credentials->client_certificate);
	g_free(credentials);
}

/* Takes every member of @target over, leaving it empty. */
static MeshSyncKubeConfig *
meshsync_kube_config_new_take(MsdKubeTarget *target)
{
	MeshSyncKubeConfig *self = g_object_new(MESHSYNC_TYPE_KUBE_CONFIG, NULL);

	self->target = *target;
	memset(target, 0, sizeof(*target));
	return self;
}

static MeshSyncKubeConfig *
meshsync_kube_config_new_from_merge(MsdKubeconfigMerge *merge, const gchar *context, GError **error)
{
	g_auto(MsdKubeTarget) target = {0};

	if (!msd_kubeconfig_context_resolve(merge, context, &target, error))
		return NULL;
	return meshsync_kube_config_new_take(&target);
}

static MeshSyncKubeConfig *
meshsync_kube_config_new_from_paths(const gchar *const *paths,
                                    gboolean missing_ok,
                                    const gchar *context,
                                    GError **error)
{
	g_autoptr(MsdKubeconfigMerge) merge =
	        msd_kubeconfig_merge_new_from_files(paths, missing_ok, error);

	if (merge == NULL)
		return NULL;
	return meshsync_kube_config_new_from_merge(merge, context, error);
}

/* ---- GObject ---- */

static void
meshsync_kube_config_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
	MeshSyncKubeConfig *self = MESHSYNC_KUBE_CONFIG(object);

	switch (prop_id) {
	case PROP_SERVER:
		g_value_set_string(value, self->target.server);
		break;
	case PROP_CONTEXT_NAME:
		g_value_set_string(value, self->target.context_name);
		break;
	case PROP_CLUSTER_NAME:
		g_value_set_string(value, self->target.cluster_name);
		break;
	case PROP_USER_NAME:
		g_value_set_string(value, self->target.user_name);
		break;
	case PROP_NAMESPACE:
		g_value_set_string(value, self->target.namespace);
		break;
	case PROP_TLS_SERVER_NAME:
		g_value_set_string(value, self->target.tls_server_name);
		break;
	case PROP_DISABLE_COMPRESSION:
		g_value_set_boolean(value, self->target.disable_compression);
		break;
	case PROP_INSECURE_SKIP_TLS_VERIFY:
		g_value_set_boolean(value, self->target.insecure_skip_tls_verify);
		break;
	case PROP_IN_CLUSTER:
		g_value_set_boolean(value, self->target.in_cluster);
		break;
	case PROP_SOURCE:
		g_value_set_string(value, self->target.source);
		break;
	case PROP_HTTP2:
		g_value_set_boolean(value, self->http2);
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
		break;
	}
}

static void
meshsync_kube_config_set_property(GObject *object,
                                  guint prop_id,
                                  const GValue *value,
                                  GParamSpec *pspec)
{
	MeshSyncKubeConfig *self = MESHSYNC_KUBE_CONFIG(object);

	switch (prop_id) {
	case PROP_HTTP2:
		meshsync_kube_config_set_http2(self, g_value_get_boolean(value));
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
		break;
	}
}

static void
meshsync_kube_config_finalize(GObject *object)
{
	MeshSyncKubeConfig *self = MESHSYNC_KUBE_CONFIG(object);

	msd_kube_target_clear(&self->target);

	G_OBJECT_CLASS(meshsync_kube_config_parent_class)->finalize(object);
}

static void
meshsync_kube_config_class_init(MeshSyncKubeConfigClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->get_property = meshsync_kube_config_get_property;
	object_class->set_property = meshsync_kube_config_set_property;
	object_class->finalize = meshsync_kube_config_finalize;

	/**
	 * MeshSyncKubeConfig:server: (getter get_server)
	 *
	 * The URL of the API server, such as `https://127.0.0.1:6443`.
	 */
	properties[PROP_SERVER] = g_param_spec_string("server", NULL, NULL, NULL,
	                                              G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

	/**
	 * MeshSyncKubeConfig:context-name: (getter get_context_name)
	 *
	 * The kubeconfig context in use, or %NULL in a cluster.
	 */
	properties[PROP_CONTEXT_NAME] = g_param_spec_string(
	        "context-name", NULL, NULL, NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

	/**
	 * MeshSyncKubeConfig:cluster-name: (getter get_cluster_name)
	 *
	 * The kubeconfig cluster the context names, or %NULL in a cluster.
	 */
	properties[PROP_CLUSTER_NAME] = g_param_spec_string(
	        "cluster-name", NULL, NULL, NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

	/**
	 * MeshSyncKubeConfig:user-name: (getter get_user_name)
	 *
	 * The kubeconfig user the context names, or %NULL when it names none or in a cluster.
	 */
	properties[PROP_USER_NAME] = g_param_spec_string("user-name", NULL, NULL, NULL,
	                                                 G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

	/**
	 * MeshSyncKubeConfig:namespace: (getter get_namespace)
	 *
	 * The default namespace: the context's, the pod's in a cluster, else `default`.
	 */
	properties[PROP_NAMESPACE] = g_param_spec_string("namespace", NULL, NULL, NULL,
	                                                 G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

	/**
	 * MeshSyncKubeConfig:tls-server-name: (getter get_tls_server_name)
	 *
	 * The name to verify the server certificate against instead of the URL's host.
	 */
	properties[PROP_TLS_SERVER_NAME] = g_param_spec_string(
	        "tls-server-name", NULL, NULL, NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

	/**
	 * MeshSyncKubeConfig:disable-compression: (getter get_disable_compression)
	 *
	 * Whether answers are asked for uncompressed (the cluster's `disable-compression`):
	 * gzip saves bandwidth on slow links and costs CPU on both ends of a fast one.
	 */
	properties[PROP_DISABLE_COMPRESSION] =
	        g_param_spec_boolean("disable-compression", NULL, NULL, FALSE,
	                             G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

	/**
	 * MeshSyncKubeConfig:insecure-skip-tls-verify: (getter get_insecure_skip_tls_verify)
	 *
	 * Whether the server certificate is accepted without verification.
	 */
	properties[PROP_INSECURE_SKIP_TLS_VERIFY] =
	        g_param_spec_boolean("insecure-skip-tls-verify", NULL, NULL, FALSE,
	                             G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

	/**
	 * MeshSyncKubeConfig:in-cluster: (getter get_in_cluster)
	 *
	 * Whether the configuration comes from the pod's service account.
	 */
	properties[PROP_IN_CLUSTER] = g_param_spec_boolean(
	        "in-cluster", NULL, NULL, FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

	/**
	 * MeshSyncKubeConfig:source: (getter get_source)
	 *
	 * Where the configuration was read from: the kubeconfig paths separated by `:`,
	 * `kubeconfig data`, or `in-cluster`.
	 */
	properties[PROP_SOURCE] = g_param_spec_string("source", NULL, NULL, NULL,
	                                              G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

	/**
	 * MeshSyncKubeConfig:http2: (getter get_http2) (setter set_http2)
	 *
	 * Whether HTTP/2 may be negotiated with a TLS API server. Off by default: over HTTP/1.1
	 * every watch has its own connection, and a watch whose consumer is behind holds the
	 * server back through TCP; libsoup's HTTP/2 instead buffers a paused stream in memory
	 * without bound. HTTP/2 saves connections and some CPU (doc/performance.md).
	 */
	properties[PROP_HTTP2] = g_param_spec_boolean("http2", NULL, NULL, FALSE,
	                                              G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY |
	                                                      G_PARAM_STATIC_STRINGS);

	g_object_class_install_properties(object_class, N_PROPS, properties);
}

static void
meshsync_kube_config_init(MeshSyncKubeConfig *self)
{
}

/* ---- constructors ---- */

/**
 * meshsync_kube_config_new_from_files:
 * @paths: (array zero-terminated=1): kubeconfig files, merged in this order
 * @context: (nullable): the context to use instead of `current-context`
 * @error: return location for a #GError
 *
 * Loads and merges several kubeconfig files.
 *
 * The files are merged as `kubectl` merges the `KUBECONFIG` list: for clusters, contexts
 * and users the first file that defines a name wins, and `current-context` comes from the
 * first file that sets it. Files that do not exist are skipped; a file that cannot be read
 * or parsed is an error. Relative paths in a file resolve against that file's directory.
 *
 * Returns: (transfer full): the configuration, or %NULL with @error set
 *   (%MESHSYNC_ERROR_INVALID_CONFIG, naming the file and field)
 */
MeshSyncKubeConfig *
meshsync_kube_config_new_from_files(const gchar *const *paths, const gchar *context, GError **error)
{
	g_return_val_if_fail(paths != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	return meshsync_kube_config_new_from_paths(paths, TRUE, context, error);
}

/**
 * meshsync_kube_config_new_from_file:
 * @path: a kubeconfig file (YAML or JSON)
 * @context: (nullable): the context to use instead of `current-context`
 * @error: return location for a #GError
 *
 * Loads one kubeconfig file.
 *
 * The selected context, its cluster and its user are validated, and the CA bundle and
 * client certificate and key are read now. Relative paths resolve against the directory
 * of @path.
 *
 * Returns: (transfer full): the configuration, or %NULL with @error set
 *   (%MESHSYNC_ERROR_INVALID_CONFIG, naming the file and field)
 */
MeshSyncKubeConfig *
meshsync_kube_config_new_from_file(const gchar *path, const gchar *context, GError **error)
{
	const gchar *paths[] = {path, NULL};

	g_return_val_if_fail(path != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	return meshsync_kube_config_new_from_paths(paths, FALSE, context, error);
}

/**
 * meshsync_kube_config_new_from_data:
 * @data: (array length=length) (element-type guint8): kubeconfig text (YAML or JSON)
 * @length: the length of @data in bytes, or -1 if it is nul-terminated (bindings pass it
 *   for you: `KubeConfig.new_from_data(text.encode(), None)` in Python)
 * @context: (nullable): the context to use instead of `current-context`
 * @error: return location for a #GError
 *
 * Loads a kubeconfig from memory.
 *
 * Relative paths in it resolve against the current directory. Errors name the input
 * `kubeconfig data`.
 *
 * Returns: (transfer full): the configuration, or %NULL with @error set
 */
MeshSyncKubeConfig *
meshsync_kube_config_new_from_data(const gchar *data,
                                   gssize length,
                                   const gchar *context,
                                   GError **error)
{
	g_autoptr(MsdKubeconfigMerge) merge = NULL;

	g_return_val_if_fail(data != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	if (length < 0)
		length = strlen(data);
	merge = msd_kubeconfig_merge_new_from_data(data, length, error);
	if (merge == NULL)
		return NULL;
	return meshsync_kube_config_new_from_merge(merge, context, error);
}

/**
 * meshsync_kube_config_new_in_cluster:
 * @error: return location for a #GError
 *
 * Configures access from inside a pod, with its service account.
 *
 * The server comes from `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT`; the
 * token, CA and namespace from the files in
 * `/var/run/secrets/kubernetes.io/serviceaccount`. The namespace is `POD_NAMESPACE` when
 * set, else the namespace file, else `default`. The token file is re-read once a minute,
 * because the kubelet rotates it.
 *
 * Returns: (transfer full): the configuration, or %NULL with @error set when the process
 *   does not run in a cluster or the service-account files are unusable
 */
MeshSyncKubeConfig *
meshsync_kube_config_new_in_cluster(GError **error)
{
	g_auto(MsdKubeTarget) target = {0};

	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	if (!msd_in_cluster_load(&target, error))
		return NULL;
	return meshsync_kube_config_new_take(&target);
}

static gboolean
meshsync_kube_config_any_file_exists(const gchar *const *paths)
{
	for (guint i = 0; paths[i] != NULL; i++) {
		if (paths[i][0] != '\0' && g_file_test(paths[i], G_FILE_TEST_EXISTS))
			return TRUE;
	}
	return FALSE;
}

/**
 * meshsync_kube_config_load:
 * @kubeconfig: (nullable): an explicit kubeconfig file, or %NULL
 * @context: (nullable): the context to use instead of `current-context`
 * @error: return location for a #GError
 *
 * Finds and loads the configuration the way upstream MeshSync does.
 *
 * The order is: @kubeconfig when given; else the in-cluster service account when
 * `KUBERNETES_SERVICE_HOST` is set; else the `:`-separated `KUBECONFIG` list, merged; else
 * `~/.kube/config`. A `KUBECONFIG` list of which no file exists is passed over.
 *
 * Returns: (transfer full): the configuration, or %NULL with @error set; when nothing is
 *   found the message lists what was tried
 */
MeshSyncKubeConfig *
meshsync_kube_config_load(const gchar *kubeconfig, const gchar *context, GError **error)
{
	g_autofree gchar *home_config = NULL;
	g_autofree gchar *kubeconfig_tried = NULL;
	const gchar *host = g_getenv("KUBERNETES_SERVICE_HOST");
	const gchar *list = g_getenv("KUBECONFIG");

	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	if (kubeconfig != NULL && kubeconfig[0] != '\0')
		return meshsync_kube_config_new_from_file(kubeconfig, context, error);
	if (host != NULL && host[0] != '\0')
		return meshsync_kube_config_new_in_cluster(error);
	if (list != NULL && list[0] != '\0') {
		g_auto(GStrv) paths = g_strsplit(list, G_SEARCHPATH_SEPARATOR_S, -1);

		if (meshsync_kube_config_any_file_exists((const gchar *const *)paths))
			return meshsync_kube_config_new_from_files((const gchar *const *)paths,
			                                           context, error);
		kubeconfig_tried = g_strdup_printf("KUBECONFIG=%s (no such file)", list);
	} else {
		kubeconfig_tried = g_strdup("KUBECONFIG (not set)");
	}
	home_config = g_build_filename(g_get_home_dir(), ".kube", "config", NULL);
	if (g_file_test(home_config, G_FILE_TEST_EXISTS))
		return meshsync_kube_config_new_from_file(home_config, context, error);
	g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
	            _("no Kubernetes configuration found: tried no explicit kubeconfig, in-cluster "
	              "(KUBERNETES_SERVICE_HOST not set), %s, %s (no such file)"),
	            kubeconfig_tried, home_config);
	return NULL;
}

/* ---- getters ---- */

/**
 * meshsync_kube_config_get_server: (get-property server)
 * @self: a #MeshSyncKubeConfig
 *
 * Gets the URL of the API server.
 *
 * Returns: (transfer none): the server URL, such as `https://127.0.0.1:6443`
 */
const gchar *
meshsync_kube_config_get_server(MeshSyncKubeConfig *self)
{
	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(self), NULL);
	return self->target.server;
}

/**
 * meshsync_kube_config_get_context_name: (get-property context-name)
 * @self: a #MeshSyncKubeConfig
 *
 * Gets the name of the kubeconfig context in use.
 *
 * Returns: (transfer none) (nullable): the context name, or %NULL in a cluster
 */
const gchar *
meshsync_kube_config_get_context_name(MeshSyncKubeConfig *self)
{
	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(self), NULL);
	return self->target.context_name;
}

/**
 * meshsync_kube_config_get_cluster_name: (get-property cluster-name)
 * @self: a #MeshSyncKubeConfig
 *
 * Gets the name of the kubeconfig cluster the context names.
 *
 * Returns: (transfer none) (nullable): the cluster name, or %NULL in a cluster
 */
const gchar *
meshsync_kube_config_get_cluster_name(MeshSyncKubeConfig *self)
{
	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(self), NULL);
	return self->target.cluster_name;
}

/**
 * meshsync_kube_config_get_user_name: (get-property user-name)
 * @self: a #MeshSyncKubeConfig
 *
 * Gets the name of the kubeconfig user the context names.
 *
 * Returns: (transfer none) (nullable): the user name, or %NULL when the context names no
 *   user or in a cluster
 */
const gchar *
meshsync_kube_config_get_user_name(MeshSyncKubeConfig *self)
{
	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(self), NULL);
	return self->target.user_name;
}

/**
 * meshsync_kube_config_get_namespace: (get-property namespace)
 * @self: a #MeshSyncKubeConfig
 *
 * Gets the default namespace.
 *
 * This is the context's namespace, or the pod's in a cluster, else `default`.
 *
 * Returns: (transfer none): the namespace
 */
const gchar *
meshsync_kube_config_get_namespace(MeshSyncKubeConfig *self)
{
	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(self), NULL);
	return self->target.namespace;
}

/**
 * meshsync_kube_config_get_tls_server_name: (get-property tls-server-name)
 * @self: a #MeshSyncKubeConfig
 *
 * Gets the name the server certificate is verified against.
 *
 * Returns: (transfer none) (nullable): the cluster's `tls-server-name`, or %NULL to verify
 *   against the host of the server URL
 */
const gchar *
meshsync_kube_config_get_tls_server_name(MeshSyncKubeConfig *self)
{
	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(self), NULL);
	return self->target.tls_server_name;
}

/**
 * meshsync_kube_config_get_disable_compression: (get-property disable-compression)
 * @self: a #MeshSyncKubeConfig
 *
 * Gets whether answers are asked for without gzip, as the cluster's `disable-compression`
 * says (client-go's `DisableCompression`).
 *
 * Returns: %TRUE when the server is asked not to compress
 */
gboolean
meshsync_kube_config_get_disable_compression(MeshSyncKubeConfig *self)
{
	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(self), FALSE);
	return self->target.disable_compression;
}

/**
 * meshsync_kube_config_get_insecure_skip_tls_verify: (get-property insecure-skip-tls-verify)
 * @self: a #MeshSyncKubeConfig
 *
 * Gets whether the server certificate is accepted without verification.
 *
 * Returns: %TRUE when the cluster sets `insecure-skip-tls-verify`
 */
gboolean
meshsync_kube_config_get_insecure_skip_tls_verify(MeshSyncKubeConfig *self)
{
	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(self), FALSE);
	return self->target.insecure_skip_tls_verify;
}

/**
 * meshsync_kube_config_get_in_cluster: (get-property in-cluster)
 * @self: a #MeshSyncKubeConfig
 *
 * Gets whether the configuration comes from the pod's service account.
 *
 * Returns: %TRUE for an in-cluster configuration
 */
gboolean
meshsync_kube_config_get_in_cluster(MeshSyncKubeConfig *self)
{
	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(self), FALSE);
	return self->target.in_cluster;
}

/**
 * meshsync_kube_config_get_source: (get-property source)
 * @self: a #MeshSyncKubeConfig
 *
 * Gets where the configuration was read from.
 *
 * Returns: (transfer none): the kubeconfig paths separated by `:`, `kubeconfig data`, or
 *   `in-cluster`
 */
const gchar *
meshsync_kube_config_get_source(MeshSyncKubeConfig *self)
{
	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(self), NULL);
	return self->target.source;
}

/* ---- private API: CA, credentials ---- */

GBytes *
meshsync_kube_config_get_ca_pem(MeshSyncKubeConfig *self)
{
	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(self), NULL);
	return self->target.ca_pem;
}

const gchar *
meshsync_kube_config_get_proxy_url(MeshSyncKubeConfig *self)
{
	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(self), NULL);
	return self->target.proxy_url;
}

void
meshsync_kube_config_set_service_account_dir_for_testing(const gchar *dir)
{
	msd_in_cluster_set_service_account_dir(dir);
}

void
meshsync_kube_config_set_exec_timeout_for_testing(MeshSyncKubeConfig *self, guint seconds)
{
	g_return_if_fail(MESHSYNC_IS_KUBE_CONFIG(self));
	msd_credentials_set_exec_timeout(self->target.credentials, seconds);
}

void
meshsync_kube_config_set_token_file_period_for_testing(MeshSyncKubeConfig *self, guint seconds)
{
	g_return_if_fail(MESHSYNC_IS_KUBE_CONFIG(self));
	msd_credentials_set_token_file_period(self->target.credentials, seconds);
}

/**
 * meshsync_kube_config_get_credentials_async: (skip)
 * @self: a #MeshSyncKubeConfig
 * @cancellable: (nullable): a #GCancellable
 * @callback: called in the caller's thread-default main context when done
 * @user_data: data for @callback
 *
 * Resolves the credentials for the next request, running the exec plugin or re-reading
 * the token file when the cached value is stale.
 */
void
meshsync_kube_config_get_credentials_async(MeshSyncKubeConfig *self,
                                           GCancellable *cancellable,
                                           GAsyncReadyCallback callback,
                                           gpointer user_data)
{
	g_autoptr(GTask) task = NULL;

	g_return_if_fail(MESHSYNC_IS_KUBE_CONFIG(self));
	g_return_if_fail(cancellable == NULL || G_IS_CANCELLABLE(cancellable));

	task = g_task_new(self, cancellable, callback, user_data);
	g_task_set_source_tag(task, meshsync_kube_config_get_credentials_async);
	msd_credentials_resolve(self->target.credentials, g_steal_pointer(&task));
}

/**
 * meshsync_kube_config_get_credentials_finish: (skip)
 * @self: a #MeshSyncKubeConfig
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes meshsync_kube_config_get_credentials_async().
 *
 * Returns: (transfer full): the credentials, or %NULL with @error set
 */
MeshSyncKubeCredentials *
meshsync_kube_config_get_credentials_finish(MeshSyncKubeConfig *self,
                                            GAsyncResult *result,
                                            GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), NULL);
	g_return_val_if_fail(g_task_get_source_tag(G_TASK(result)) ==
	                             meshsync_kube_config_get_credentials_async,
	                     NULL);
	return g_task_propagate_pointer(G_TASK(result), error);
}

void
meshsync_kube_config_invalidate_credentials(MeshSyncKubeConfig *self)
{
	g_return_if_fail(MESHSYNC_IS_KUBE_CONFIG(self));
	msd_credentials_invalidate(self->target.credentials);
}

/**
 * meshsync_kube_config_get_http2: (get-property http2)
 * @self: a #MeshSyncKubeConfig
 *
 * Gets whether HTTP/2 may be negotiated with the API server.
 *
 * Returns: %TRUE when HTTP/2 is offered during the TLS handshake
 */
gboolean
meshsync_kube_config_get_http2(MeshSyncKubeConfig *self)
{
	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(self), FALSE);
	return self->http2;
}

/**
 * meshsync_kube_config_set_http2: (set-property http2)
 * @self: a #MeshSyncKubeConfig
 * @http2: whether to offer HTTP/2
 *
 * Sets whether HTTP/2 may be negotiated with a TLS API server; clients made from @self
 * afterwards follow it. Plain-HTTP servers are always spoken to over HTTP/1.1.
 */
void
meshsync_kube_config_set_http2(MeshSyncKubeConfig *self, gboolean http2)
{
	g_return_if_fail(MESHSYNC_IS_KUBE_CONFIG(self));

	http2 = !!http2;
	if (self->http2 == http2)
		return;
	self->http2 = http2;
	g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_HTTP2]);
}
