/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncKube"

#include "config.h"

#include <string.h>

#include "meshsync-error.h"
#include "kube/msd-exec-plugin.h"
#include "kube/msd-kube-pem.h"
#include "util/msd-json-object.h"
#include "util/msd-i18n.h"
#include "util/msd-source.h"

#define MSD_EXEC_API_V1      "client.authentication.k8s.io/v1"
#define MSD_EXEC_API_V1BETA1 "client.authentication.k8s.io/v1beta1"

struct _MsdExecPlugin {
	GObject parent_instance;

	gchar *api_version;
	gchar *command;
	GStrv args;     /* (nullable) */
	GPtrArray *env; /* (element-type utf8): name, value, name, value... */
	gchar *interactive_mode;
	gboolean provide_cluster_info;
	gchar *install_hint; /* (nullable) */
	gchar *where;        /* "FILE: users[NAME].exec", for messages */

	/* spec.cluster, for provideClusterInfo */
	gchar *server;
	gchar *tls_server_name; /* (nullable) */
	gboolean insecure_skip_tls_verify;
	GBytes *ca_pem;           /* (nullable) */
	JsonNode *cluster_config; /* (nullable): the cluster's client.authentication.k8s.io/exec
	                             extension, passed to the plugin as spec.cluster.config */
};

G_DEFINE_FINAL_TYPE(MsdExecPlugin, msd_exec_plugin, G_TYPE_OBJECT)

/* What one successful run gave. */
typedef struct {
	gchar *token;                 /* (nullable) */
	GTlsCertificate *certificate; /* (nullable) */
	gint64 expiry;
} MsdExecResult;

/* One run in progress: the task data. */
typedef struct {
	GSubprocess *process;    /* (owned) */
	GSource *timeout_source; /* (owned) (nullable) */
	guint timeout_seconds;
	gboolean timed_out;
} MsdExecRun;

static void
msd_exec_result_free(MsdExecResult *result)
{
	g_free(result->token);
	g_clear_object(&result->certificate);
	g_free(result);
}

static void
msd_exec_run_free(MsdExecRun *run)
{
	msd_source_clear(&run->timeout_source);
	g_clear_object(&run->process);
	g_free(run);
}

static void
msd_exec_plugin_finalize(GObject *object)
{
	MsdExecPlugin *self = MSD_EXEC_PLUGIN(object);

	g_free(self->api_version);
	g_free(self->command);
	g_strfreev(self->args);
	g_clear_pointer(&self->env, g_ptr_array_unref);
	g_free(self->interactive_mode);
	g_free(self->install_hint);
	g_free(self->where);
	g_free(self->server);
	g_free(self->tls_server_name);
	g_clear_pointer(&self->ca_pem, g_bytes_unref);
	g_clear_pointer(&self->cluster_config, json_node_unref);

	G_OBJECT_CLASS(msd_exec_plugin_parent_class)->finalize(object);
}

static void
msd_exec_plugin_class_init(MsdExecPluginClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = msd_exec_plugin_finalize;
}

static void
msd_exec_plugin_init(MsdExecPlugin *self)
{
	self->env = g_ptr_array_new_with_free_func(g_free);
}

/* ---- the exec mapping ---- */

static gboolean
msd_exec_plugin_read_args(MsdExecPlugin *self,
                          const MsdKubeconfigEntry *sub,
                          JsonNode *args,
                          GError **error)
{
	g_autoptr(GStrvBuilder) builder = g_strv_builder_new();
	JsonArray *array;

	if (!JSON_NODE_HOLDS_ARRAY(args)) {
		g_autofree gchar *field = msd_kubeconfig_entry_field(sub, "args");
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: not a list"), field);
		return FALSE;
	}
	array = json_node_get_array(args);
	for (guint i = 0; i < json_array_get_length(array); i++) {
		JsonNode *arg = json_array_get_element(array, i);
		if (!JSON_NODE_HOLDS_VALUE(arg) || json_node_get_value_type(arg) != G_TYPE_STRING) {
			g_autofree gchar *field = msd_kubeconfig_entry_field(sub, "args");
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            _("%s[%u]: not a string"), field, i);
			return FALSE;
		}
		g_strv_builder_add(builder, json_node_get_string(arg));
	}
	self->args = g_strv_builder_end(builder);
	return TRUE;
}

static gboolean
msd_exec_plugin_read_env(MsdExecPlugin *self,
                         const MsdKubeconfigEntry *sub,
                         JsonNode *env,
                         GError **error)
{
	JsonArray *array = JSON_NODE_HOLDS_ARRAY(env) ? json_node_get_array(env) : NULL;

	for (guint i = 0; array != NULL && i < json_array_get_length(array); i++) {
		JsonNode *item = json_array_get_element(array, i);
		MsdKubeconfigEntry var = *sub;
		g_autofree gchar *name = NULL;
		g_autofree gchar *value = NULL;

		var.body = item;
		if (!JSON_NODE_HOLDS_OBJECT(item) ||
		    !msd_kubeconfig_entry_get_string(&var, "name", &name, NULL) ||
		    !msd_kubeconfig_entry_get_string(&var, "value", &value, NULL) || name == NULL) {
			g_autofree gchar *field = msd_kubeconfig_entry_field(sub, "env");
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            _("%s[%u]: not a mapping with name and value"), field, i);
			return FALSE;
		}
		g_ptr_array_add(self->env, g_steal_pointer(&name));
		g_ptr_array_add(self->env, value != NULL ? g_steal_pointer(&value) : g_strdup(""));
	}
	if (array == NULL) {
		g_autofree gchar *field = msd_kubeconfig_entry_field(sub, "env");
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: not a list"), field);
		return FALSE;
	}
	return TRUE;
}

static gboolean
msd_exec_plugin_read_interactive_mode(MsdExecPlugin *self,
                                      const MsdKubeconfigEntry *sub,
                                      GError **error)
{
	if (!msd_kubeconfig_entry_get_string(sub, "interactiveMode", &self->interactive_mode,
	                                     error))
		return FALSE;
	if (self->interactive_mode == NULL) {
		if (g_strcmp0(self->api_version, MSD_EXEC_API_V1) == 0) {
			g_autofree gchar *field =
			        msd_kubeconfig_entry_field(sub, "interactiveMode");
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            _("%s: missing, %s requires Never, IfAvailable or Always"),
			            field, MSD_EXEC_API_V1);
			return FALSE;
		}
		self->interactive_mode = g_strdup("IfAvailable");
	}
	if (g_strcmp0(self->interactive_mode, "Never") != 0 &&
	    g_strcmp0(self->interactive_mode, "IfAvailable") != 0 &&
	    g_strcmp0(self->interactive_mode, "Always") != 0) {
		g_autofree gchar *field = msd_kubeconfig_entry_field(sub, "interactiveMode");
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: \"%s\" is not Never, IfAvailable or Always"), field,
		            self->interactive_mode);
		return FALSE;
	}
	return TRUE;
}

MsdExecPlugin *
msd_exec_plugin_new_from_entry(const MsdKubeconfigEntry *user, JsonNode *exec, GError **error)
{
	g_autoptr(MsdExecPlugin) self = g_object_new(MSD_TYPE_EXEC_PLUGIN, NULL);
	MsdKubeconfigEntry sub = *user;
	JsonNode *args;
	JsonNode *env;

	self->where = msd_kubeconfig_entry_field(user, "exec");
	if (!JSON_NODE_HOLDS_OBJECT(exec)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: not a mapping"), self->where);
		return NULL;
	}
	/* read the exec mapping with the same helpers; field names come out as
	 * users[NAME].exec.FIELD */
	sub.body = exec;
	sub.prefix = "exec";
	if (!msd_kubeconfig_entry_get_string(&sub, "apiVersion", &self->api_version, error))
		return NULL;
	if (g_strcmp0(self->api_version, MSD_EXEC_API_V1) != 0 &&
	    g_strcmp0(self->api_version, MSD_EXEC_API_V1BETA1) != 0) {
		g_autofree gchar *field = msd_kubeconfig_entry_field(&sub, "apiVersion");
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: \"%s\" is not supported (use %s or %s)"), field,
		            self->api_version != NULL ? self->api_version : "", MSD_EXEC_API_V1,
		            MSD_EXEC_API_V1BETA1);
		return NULL;
	}
	if (!msd_kubeconfig_entry_get_string(&sub, "command", &self->command, error))
		return NULL;
	if (self->command == NULL) {
		g_autofree gchar *field = msd_kubeconfig_entry_field(&sub, "command");
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG, _("%s: missing"),
		            field);
		return NULL;
	}
	/* as client-go: a command with a slash is a path relative to the kubeconfig; a bare
	 * name is looked up in PATH */
	if (strchr(self->command, '/') != NULL && !g_path_is_absolute(self->command)) {
		gchar *resolved = msd_kubeconfig_entry_resolve_path(user, self->command);
		g_free(self->command);
		self->command = resolved;
	}
	args = json_object_get_member(json_node_get_object(exec), "args");
	if (args != NULL && !JSON_NODE_HOLDS_NULL(args) &&
	    !msd_exec_plugin_read_args(self, &sub, args, error))
		return NULL;
	env = json_object_get_member(json_node_get_object(exec), "env");
	if (env != NULL && !JSON_NODE_HOLDS_NULL(env) &&
	    !msd_exec_plugin_read_env(self, &sub, env, error))
		return NULL;
	if (!msd_exec_plugin_read_interactive_mode(self, &sub, error))
		return NULL;
	if (!msd_kubeconfig_entry_get_boolean(&sub, "provideClusterInfo",
	                                      &self->provide_cluster_info, error))
		return NULL;
	if (!msd_kubeconfig_entry_get_string(&sub, "installHint", &self->install_hint, error))
		return NULL;
	return g_steal_pointer(&self);
}

static JsonNode *
msd_exec_plugin_cluster_config(const MsdKubeconfigEntry *cluster)
{
	JsonNode *extensions = msd_kubeconfig_entry_get_member(cluster, "extensions");
	JsonArray *array;

	if (extensions == NULL || !JSON_NODE_HOLDS_ARRAY(extensions))
		return NULL;
	array = json_node_get_array(extensions);
	for (guint i = 0; i < json_array_get_length(array); i++) {
		JsonNode *item = json_array_get_element(array, i);
		JsonObject *object;

		if (!JSON_NODE_HOLDS_OBJECT(item))
			continue;
		object = json_node_get_object(item);
		if (g_strcmp0(msd_json_object_get_string(object, "name"),
		              "client.authentication.k8s.io/exec") == 0 &&
		    json_object_has_member(object, "extension"))
			return json_node_copy(json_object_get_member(object, "extension"));
	}
	return NULL;
}

void
msd_exec_plugin_set_cluster(MsdExecPlugin *self,
                            const MsdKubeconfigEntry *cluster,
                            const gchar *server,
                            const gchar *tls_server_name,
                            gboolean insecure_skip_tls_verify,
                            GBytes *ca_pem)
{
	g_return_if_fail(MSD_IS_EXEC_PLUGIN(self));

	if (!self->provide_cluster_info)
		return;
	g_free(self->server);
	self->server = g_strdup(server);
	g_free(self->tls_server_name);
	self->tls_server_name = g_strdup(tls_server_name);
	self->insecure_skip_tls_verify = insecure_skip_tls_verify;
	g_clear_pointer(&self->ca_pem, g_bytes_unref);
	self->ca_pem = ca_pem != NULL ? g_bytes_ref(ca_pem) : NULL;
	g_clear_pointer(&self->cluster_config, json_node_unref);
	self->cluster_config = msd_exec_plugin_cluster_config(cluster);
}

/* ---- one run ---- */

static gchar *
msd_exec_plugin_info(MsdExecPlugin *self)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autoptr(JsonGenerator) generator = json_generator_new();
	g_autoptr(JsonNode) root = NULL;

	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "kind");
	json_builder_add_string_value(builder, "ExecCredential");
	json_builder_set_member_name(builder, "apiVersion");
	json_builder_add_string_value(builder, self->api_version);
	json_builder_set_member_name(builder, "spec");
	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "interactive");
	/* a daemon has no terminal to ask on */
	json_builder_add_boolean_value(builder, FALSE);
	if (self->provide_cluster_info) {
		json_builder_set_member_name(builder, "cluster");
		json_builder_begin_object(builder);
		json_builder_set_member_name(builder, "server");
		json_builder_add_string_value(builder, self->server);
		if (self->tls_server_name != NULL) {
			json_builder_set_member_name(builder, "tls-server-name");
			json_builder_add_string_value(builder, self->tls_server_name);
		}
		if (self->insecure_skip_tls_verify) {
			json_builder_set_member_name(builder, "insecure-skip-tls-verify");
			json_builder_add_boolean_value(builder, TRUE);
		}
		if (self->ca_pem != NULL) {
			g_autofree gchar *encoded =
			        g_base64_encode(g_bytes_get_data(self->ca_pem, NULL),
			                        g_bytes_get_size(self->ca_pem));
			json_builder_set_member_name(builder, "certificate-authority-data");
			json_builder_add_string_value(builder, encoded);
		}
		if (self->cluster_config != NULL) {
			json_builder_set_member_name(builder, "config");
			json_builder_add_value(builder, json_node_copy(self->cluster_config));
		}
		json_builder_end_object(builder);
	}
	json_builder_end_object(builder);
	json_builder_end_object(builder);
	root = json_builder_get_root(builder);
	json_generator_set_root(generator, root);
	return json_generator_to_data(generator, NULL);
}

/* Parses the plugin's ExecCredential. */
static MsdExecResult *
msd_exec_plugin_parse(MsdExecPlugin *self, const gchar *output, GError **error)
{
	g_autoptr(JsonParser) parser = json_parser_new();
	g_autoptr(GError) local_error = NULL;
	g_autoptr(GTlsCertificate) certificate = NULL;
	MsdExecResult *result;
	JsonObject *root;
	JsonObject *status;
	JsonNode *status_node;
	const gchar *api_version;
	const gchar *value;
	const gchar *cert;
	const gchar *key;
	const gchar *token;
	gint64 expiry = G_MAXINT64;
	const gchar *where = self->where;

	if (!json_parser_load_from_data(parser, output, -1, &local_error)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("%s: plugin output is not JSON: %s"), where, local_error->message);
		return NULL;
	}
	if (!JSON_NODE_HOLDS_OBJECT(json_parser_get_root(parser))) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("%s: plugin output is not an ExecCredential"), where);
		return NULL;
	}
	root = json_node_get_object(json_parser_get_root(parser));
	api_version = (msd_json_object_get_string(root, "apiVersion") != NULL
	                       ? msd_json_object_get_string(root, "apiVersion")
	                       : "");
	if (g_strcmp0(api_version, self->api_version) != 0) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("%s: plugin returned apiVersion \"%s\", configured for \"%s\""),
		            where, api_version, self->api_version);
		return NULL;
	}
	status_node = json_object_get_member(root, "status");
	status = status_node != NULL && JSON_NODE_HOLDS_OBJECT(status_node)
	                 ? json_node_get_object(status_node)
	                 : NULL;
	if (status == NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("%s: plugin output has no status"), where);
		return NULL;
	}
	token = msd_json_object_get_string(status, "token");
	cert = msd_json_object_get_string(status, "clientCertificateData");
	key = msd_json_object_get_string(status, "clientKeyData");
	if ((cert == NULL || cert[0] == '\0') != (key == NULL || key[0] == '\0')) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("%s: plugin returned %s without %s"), where,
		            cert != NULL ? "clientCertificateData" : "clientKeyData",
		            cert != NULL ? "clientKeyData" : "clientCertificateData");
		return NULL;
	}
	if ((token == NULL || token[0] == '\0') && cert == NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("%s: plugin returned neither a token nor a certificate and key"),
		            where);
		return NULL;
	}
	if (cert != NULL && cert[0] != '\0') {
		g_autofree gchar *cert_where =
		        g_strdup_printf("%s: status.clientCertificateData", where);
		g_autofree gchar *key_where = g_strdup_printf("%s: status.clientKeyData", where);

		certificate = msd_kube_pem_certificate_with_key(cert, strlen(cert), cert_where, key,
		                                                strlen(key), key_where, error);
		if (certificate == NULL)
			return NULL;
	}
	value = msd_json_object_get_string(status, "expirationTimestamp");
	if (value != NULL && value[0] != '\0') {
		g_autoptr(GDateTime) when = g_date_time_new_from_iso8601(value, NULL);

		if (when == NULL) {
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
			            _("%s: status.expirationTimestamp \"%s\" is not RFC 3339"),
			            where, value);
			return NULL;
		}
		expiry = g_date_time_to_unix(when) * G_USEC_PER_SEC +
		         g_date_time_get_microsecond(when);
	}
	result = g_new0(MsdExecResult, 1);
	result->token = token != NULL && token[0] != '\0' ? g_strdup(token) : NULL;
	result->certificate = g_steal_pointer(&certificate);
	result->expiry = expiry;
	return result;
}

static gboolean
msd_exec_plugin_timeout_cb(gpointer user_data)
{
	MsdExecRun *run = user_data;

	msd_source_clear(&run->timeout_source);
	run->timed_out = TRUE;
	g_subprocess_force_exit(run->process);
	return G_SOURCE_REMOVE;
}

static void
msd_exec_plugin_done_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	MsdExecPlugin *self = g_task_get_source_object(task);
	MsdExecRun *run = g_task_get_task_data(task);
	GSubprocess *process = G_SUBPROCESS(source);
	g_autoptr(GError) error = NULL;
	g_autoptr(GError) local_error = NULL;
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	MsdExecResult *parsed = NULL;

	msd_source_clear(&run->timeout_source);
	if (!g_subprocess_communicate_utf8_finish(process, result, &out, &err, &local_error)) {
		g_set_error(&error, MESHSYNC_ERROR, MESHSYNC_ERROR_FAILED,
		            _("%s: running %s failed: %s"), self->where, self->command,
		            local_error->message);
	} else if (run->timed_out) {
		g_set_error(&error, MESHSYNC_ERROR, MESHSYNC_ERROR_FAILED,
		            _("%s: %s gave no credentials within %u s and was stopped"),
		            self->where, self->command, run->timeout_seconds);
	} else if (!g_subprocess_get_successful(process)) {
		g_autofree gchar *message = g_strstrip(g_strdup(err != NULL ? err : ""));

		/* one line: the plugin's stderr may span several */
		g_strdelimit(message, "\r\n", ' ');
		g_set_error(&error, MESHSYNC_ERROR, MESHSYNC_ERROR_FAILED,
		            _("%s: %s exited with status %d: %s"), self->where, self->command,
		            g_subprocess_get_if_exited(process)
		                    ? g_subprocess_get_exit_status(process)
		                    : -1,
		            message[0] != '\0' ? message : _("(no output on stderr)"));
	} else {
		parsed = msd_exec_plugin_parse(self, out != NULL ? out : "", &error);
	}
	if (parsed == NULL) {
		g_task_return_error(task, g_steal_pointer(&error));
		return;
	}
	g_task_return_pointer(task, parsed, (GDestroyNotify)msd_exec_result_free);
}

void
msd_exec_plugin_run_async(MsdExecPlugin *self,
                          guint timeout_seconds,
                          GAsyncReadyCallback callback,
                          gpointer user_data)
{
	g_autoptr(GTask) task = NULL;
	g_autoptr(GSubprocessLauncher) launcher = NULL;
	g_autoptr(GSubprocess) process = NULL;
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_autoptr(GError) local_error = NULL;
	g_autofree gchar *info = NULL;
	MsdExecRun *run;

	g_return_if_fail(MSD_IS_EXEC_PLUGIN(self));

	task = g_task_new(self, NULL, callback, user_data);
	g_task_set_source_tag(task, msd_exec_plugin_run_async);
	if (g_strcmp0(self->interactive_mode, "Always") == 0) {
		g_task_return_new_error(task, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		                        _("%s.interactiveMode: Always needs a terminal, which "
		                          "meshsync does not have"),
		                        self->where);
		return;
	}
	launcher = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE |
	                                     G_SUBPROCESS_FLAGS_STDERR_PIPE);
	for (guint i = 0; i + 1 < self->env->len; i += 2) {
		g_subprocess_launcher_setenv(launcher, g_ptr_array_index(self->env, i),
		                             g_ptr_array_index(self->env, i + 1), TRUE);
	}
	info = msd_exec_plugin_info(self);
	g_subprocess_launcher_setenv(launcher, "KUBERNETES_EXEC_INFO", info, TRUE);
	g_ptr_array_add(argv, self->command);
	for (guint i = 0; self->args != NULL && self->args[i] != NULL; i++)
		g_ptr_array_add(argv, self->args[i]);
	g_ptr_array_add(argv, NULL);
	process = g_subprocess_launcher_spawnv(launcher, (const gchar *const *)argv->pdata,
	                                       &local_error);
	if (process == NULL) {
		if (g_error_matches(local_error, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT)) {
			g_task_return_new_error(
			        task, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			        _("%s.command: %s not found%s%s"), self->where, self->command,
			        self->install_hint != NULL ? "; " : "",
			        self->install_hint != NULL ? self->install_hint : "");
		} else {
			g_task_return_new_error(task, MESHSYNC_ERROR, MESHSYNC_ERROR_FAILED,
			                        _("%s.command: cannot run %s: %s"), self->where,
			                        self->command, local_error->message);
		}
		return;
	}
	g_debug("running credential plugin %s", self->command);
	run = g_new0(MsdExecRun, 1);
	run->process = g_object_ref(process);
	run->timeout_seconds = timeout_seconds;
	/* the context of the request that needs the credentials, which is the engine's */
	run->timeout_source = msd_source_attach_named(
	        g_timeout_source_new_seconds(timeout_seconds), g_task_get_context(task),
	        "[meshsync] credential plugin timeout", msd_exec_plugin_timeout_cb, run, NULL);
	g_task_set_task_data(task, run, (GDestroyNotify)msd_exec_run_free);
	g_subprocess_communicate_utf8_async(process, NULL, NULL, msd_exec_plugin_done_cb,
	                                    g_steal_pointer(&task));
}

gboolean
msd_exec_plugin_run_finish(MsdExecPlugin *self,
                           GAsyncResult *result,
                           gchar **token,
                           GTlsCertificate **certificate,
                           gint64 *expiry,
                           GError **error)
{
	MsdExecResult *parsed;

	g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
	g_return_val_if_fail(g_task_get_source_tag(G_TASK(result)) == msd_exec_plugin_run_async,
	                     FALSE);

	parsed = g_task_propagate_pointer(G_TASK(result), error);
	if (parsed == NULL)
		return FALSE;
	*token = g_steal_pointer(&parsed->token);
	*certificate = g_steal_pointer(&parsed->certificate);
	*expiry = parsed->expiry;
	msd_exec_result_free(parsed);
	return TRUE;
}
