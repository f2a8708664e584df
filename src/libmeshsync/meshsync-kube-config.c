/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncKube"

#include "config.h"

#include <string.h>

#include "meshsync-error.h"
#include "meshsync-kube-config-private.h"
#include "util/msd-yaml.h"

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

#define KC_DEFAULT_SERVICE_ACCOUNT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
/* client-go's cached file token source re-reads the file once a minute, for projected
 * service-account tokens that the kubelet rotates. */
#define KC_DEFAULT_TOKEN_FILE_PERIOD 60
/* A plugin that hangs (waiting on a network, a prompt nobody answers) would hold every API
 * request back for good: it is killed after this long and the request fails. */
#define KC_EXEC_TIMEOUT_SECONDS 60
#define KC_EXEC_API_V1          "client.authentication.k8s.io/v1"
#define KC_EXEC_API_V1BETA1     "client.authentication.k8s.io/v1beta1"

typedef struct {
	gchar *api_version;
	gchar *command;
	GStrv args;
	GPtrArray *env; /* (element-type utf8): name, value, name, value... */
	gchar *interactive_mode;
	gboolean provide_cluster_info;
	gchar *install_hint;
	JsonNode *cluster_config; /* (nullable): the cluster's client.authentication.k8s.io/exec
	                             extension, passed to the plugin as spec.cluster.config */
	gchar *where;             /* "FILE: users[NAME].exec", for messages */
} KcExec;

struct _MeshSyncKubeConfig {
	GObject parent_instance;

	gchar *server;
	gchar *context_name; /* (nullable) */
	gchar *cluster_name; /* (nullable) */
	gchar *user_name;    /* (nullable) */
	gchar *namespace;
	gchar *tls_server_name; /* (nullable) */
	gboolean insecure_skip_tls_verify;
	gboolean in_cluster;
	gchar *source;

	GBytes *ca_pem;                      /* (nullable): validated PEM bundle */
	gchar *static_token;                 /* (nullable) */
	GTlsCertificate *client_certificate; /* (nullable): certificate with key */
	KcExec *exec;                        /* (nullable) */

	/* tokenFile or the service-account token: re-read when older than the period */
	gchar *token_file;      /* (nullable) */
	gchar *file_token;      /* (nullable): the last good token read from token_file */
	gint64 file_token_time; /* monotonic µs of the last good read; 0 = stale */
	guint token_file_period;
	guint exec_timeout; /* seconds a credential plugin may take */

	/* exec plugin cache */
	gboolean exec_cached;
	gchar *exec_token;                 /* (nullable) */
	GTlsCertificate *exec_certificate; /* (nullable) */
	gint64 exec_expiry;                /* real time µs; G_MAXINT64 = never */

	/* one refresh (plugin run or token file read) at a time; everyone asking meanwhile
	 * waits for its result */
	gboolean refreshing;
	GPtrArray *waiters; /* (element-type GTask) */
	guint generation;   /* bumped by invalidate, so that a run started before is not cached */
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
	PROP_INSECURE_SKIP_TLS_VERIFY,
	PROP_IN_CLUSTER,
	PROP_SOURCE,
	N_PROPS
};

static GParamSpec *properties[N_PROPS];

static gchar *kc_service_account_dir = NULL;

/* One named entry of clusters, contexts or users, with the file that defined it. */
typedef struct {
	JsonNode *body; /* (owned): the "cluster", "context" or "user" mapping, or null */
	gchar *origin;  /* the file path, or "kubeconfig data" */
	gchar *dir;     /* absolute directory that relative paths resolve against */
	gchar *section; /* "clusters", "contexts" or "users" */
	gchar *name;
	const gchar *prefix; /* (nullable): a sub-mapping such as "exec", for messages */
} KcEntry;

typedef struct {
	GHashTable *clusters; /* (element-type utf8 KcEntry) */
	GHashTable *contexts;
	GHashTable *users;
	gchar *current_context; /* (nullable) */
	GPtrArray *origins;     /* (element-type utf8): the files read, for messages */
} KcMerged;

static void
kc_exec_free(KcExec *exec)
{
	if (exec == NULL)
		return;
	g_free(exec->api_version);
	g_free(exec->command);
	g_strfreev(exec->args);
	g_clear_pointer(&exec->env, g_ptr_array_unref);
	g_free(exec->interactive_mode);
	g_free(exec->install_hint);
	g_clear_pointer(&exec->cluster_config, json_node_unref);
	g_free(exec->where);
	g_free(exec);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(KcExec, kc_exec_free)

static void
kc_entry_free(KcEntry *entry)
{
	g_clear_pointer(&entry->body, json_node_unref);
	g_free(entry->origin);
	g_free(entry->dir);
	g_free(entry->section);
	g_free(entry->name);
	g_free(entry);
}

static KcMerged *
kc_merged_new(void)
{
	KcMerged *merged = g_new0(KcMerged, 1);

	merged->clusters =
	        g_hash_table_new_full(g_str_hash, g_str_equal, NULL, (GDestroyNotify)kc_entry_free);
	merged->contexts =
	        g_hash_table_new_full(g_str_hash, g_str_equal, NULL, (GDestroyNotify)kc_entry_free);
	merged->users =
	        g_hash_table_new_full(g_str_hash, g_str_equal, NULL, (GDestroyNotify)kc_entry_free);
	merged->origins = g_ptr_array_new_with_free_func(g_free);
	return merged;
}

static void
kc_merged_free(KcMerged *merged)
{
	g_hash_table_unref(merged->clusters);
	g_hash_table_unref(merged->contexts);
	g_hash_table_unref(merged->users);
	g_free(merged->current_context);
	g_ptr_array_unref(merged->origins);
	g_free(merged);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(KcMerged, kc_merged_free)

static gchar *
kc_merged_describe(KcMerged *merged)
{
	g_autoptr(GString) text = g_string_new(NULL);

	for (guint i = 0; i < merged->origins->len; i++) {
		if (i > 0)
			g_string_append_c(text, ':');
		g_string_append(text, g_ptr_array_index(merged->origins, i));
	}
	return g_strdup(text->str);
}

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

static MeshSyncKubeCredentials *
kc_credentials_new(const gchar *token, GTlsCertificate *certificate)
{
	MeshSyncKubeCredentials *credentials = g_new0(MeshSyncKubeCredentials, 1);

	credentials->token = g_strdup(token);
	credentials->client_certificate = certificate != NULL ? g_object_ref(certificate) : NULL;
	return credentials;
}

/* ---- reading the tree ---- */

static gchar *
kc_field(const KcEntry *entry, const gchar *member)
{
	if (entry->prefix != NULL)
		return g_strdup_printf("%s: %s[%s].%s.%s", entry->origin, entry->section,
		                       entry->name, entry->prefix, member);
	return g_strdup_printf("%s: %s[%s].%s", entry->origin, entry->section, entry->name, member);
}

/* Reads a scalar member as text. YAML's core schema makes `token: 12345` an integer and
 * `namespace: true` a boolean; kubeconfig fields are strings, so take the text back. */
static gboolean
kc_get_string(const KcEntry *entry, const gchar *member, gchar **out, GError **error)
{
	JsonObject *object;
	JsonNode *node;
	GType type;

	*out = NULL;
	if (entry->body == NULL || !JSON_NODE_HOLDS_OBJECT(entry->body))
		return TRUE;
	object = json_node_get_object(entry->body);
	node = json_object_get_member(object, member);
	if (node == NULL || JSON_NODE_HOLDS_NULL(node))
		return TRUE;
	if (!JSON_NODE_HOLDS_VALUE(node)) {
		g_autofree gchar *field = kc_field(entry, member);
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "%s: not a string", field);
		return FALSE;
	}
	type = json_node_get_value_type(node);
	if (type == G_TYPE_STRING)
		*out = g_strdup(json_node_get_string(node));
	else if (type == G_TYPE_INT64)
		*out = g_strdup_printf("%" G_GINT64_FORMAT, json_node_get_int(node));
	else if (type == G_TYPE_BOOLEAN)
		*out = g_strdup(json_node_get_boolean(node) ? "true" : "false");
	else if (type == G_TYPE_DOUBLE)
		*out = g_strdup_printf("%g", json_node_get_double(node));
	if (*out != NULL && (*out)[0] == '\0')
		g_clear_pointer(out, g_free);
	return TRUE;
}

static gboolean
kc_get_boolean(const KcEntry *entry, const gchar *member, gboolean *out, GError **error)
{
	g_autofree gchar *text = NULL;

	*out = FALSE;
	if (!kc_get_string(entry, member, &text, error))
		return FALSE;
	if (text == NULL || g_ascii_strcasecmp(text, "false") == 0)
		return TRUE;
	if (g_ascii_strcasecmp(text, "true") == 0) {
		*out = TRUE;
		return TRUE;
	}
	{
		g_autofree gchar *field = kc_field(entry, member);
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "%s: \"%s\" is not true or false", field, text);
	}
	return FALSE;
}

static JsonNode *
kc_get_member(const KcEntry *entry, const gchar *member)
{
	JsonNode *node;

	if (entry->body == NULL || !JSON_NODE_HOLDS_OBJECT(entry->body))
		return NULL;
	node = json_object_get_member(json_node_get_object(entry->body), member);
	if (node == NULL || JSON_NODE_HOLDS_NULL(node))
		return NULL;
	return node;
}

static gchar *
kc_resolve_path(const KcEntry *entry, const gchar *path)
{
	return g_canonicalize_filename(path, entry->dir);
}

static gchar *
kc_trim_token(const gchar *data)
{
	g_autofree gchar *token = g_strstrip(g_strdup(data));

	if (token[0] == '\0')
		return NULL;
	return g_steal_pointer(&token);
}

/* ---- merging files ---- */

static gboolean
kc_merge_section(KcMerged *merged,
                 JsonObject *root,
                 const gchar *section,
                 const gchar *body_member,
                 GHashTable *table,
                 const gchar *origin,
                 const gchar *dir,
                 GError **error)
{
	JsonNode *node = json_object_get_member(root, section);
	JsonArray *array;

	if (node == NULL || JSON_NODE_HOLDS_NULL(node))
		return TRUE;
	if (!JSON_NODE_HOLDS_ARRAY(node)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "%s: %s: not a list", origin, section);
		return FALSE;
	}
	array = json_node_get_array(node);
	for (guint i = 0; i < json_array_get_length(array); i++) {
		JsonNode *item = json_array_get_element(array, i);
		JsonObject *object;
		const gchar *name;
		JsonNode *body;
		KcEntry *entry;

		if (!JSON_NODE_HOLDS_OBJECT(item)) {
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            "%s: %s[%u]: not a mapping", origin, section, i);
			return FALSE;
		}
		object = json_node_get_object(item);
		name = json_object_get_string_member_with_default(object, "name", NULL);
		if (name == NULL || name[0] == '\0') {
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            "%s: %s[%u].name: missing", origin, section, i);
			return FALSE;
		}
		body = json_object_get_member(object, body_member);
		if (body != NULL && !JSON_NODE_HOLDS_OBJECT(body) && !JSON_NODE_HOLDS_NULL(body)) {
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            "%s: %s[%s].%s: not a mapping", origin, section, name,
			            body_member);
			return FALSE;
		}
		/* kubectl's rule: the first file that defines a name wins */
		if (g_hash_table_contains(table, name))
			continue;
		entry = g_new0(KcEntry, 1);
		entry->body = body != NULL ? json_node_ref(body) : NULL;
		entry->origin = g_strdup(origin);
		entry->dir = g_strdup(dir);
		entry->section = g_strdup(section);
		entry->name = g_strdup(name);
		g_hash_table_insert(table, entry->name, entry);
	}
	return TRUE;
}

static gboolean
kc_merge_data(KcMerged *merged,
              const gchar *data,
              gsize length,
              const gchar *origin,
              const gchar *dir,
              GError **error)
{
	g_autoptr(GPtrArray) documents = NULL;
	g_autoptr(GError) local_error = NULL;
	JsonNode *root_node;
	JsonObject *root;
	const gchar *current;

	documents = msd_yaml_parse_documents(data, length, origin, &local_error);
	if (documents == NULL) {
		/* the YAML reader's message already reads FILE:LINE:COLUMN: problem */
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		                    local_error->message);
		return FALSE;
	}
	g_ptr_array_add(merged->origins, g_strdup(origin));
	/* an empty file is an empty config, as for kubectl */
	if (documents->len == 0)
		return TRUE;
	if (documents->len > 1) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "%s: more than one YAML document", origin);
		return FALSE;
	}
	root_node = g_ptr_array_index(documents, 0);
	if (JSON_NODE_HOLDS_NULL(root_node))
		return TRUE;
	if (!JSON_NODE_HOLDS_OBJECT(root_node)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "%s: not a kubeconfig mapping", origin);
		return FALSE;
	}
	root = json_node_get_object(root_node);
	if (!kc_merge_section(merged, root, "clusters", "cluster", merged->clusters, origin, dir,
	                      error))
		return FALSE;
	if (!kc_merge_section(merged, root, "contexts", "context", merged->contexts, origin, dir,
	                      error))
		return FALSE;
	if (!kc_merge_section(merged, root, "users", "user", merged->users, origin, dir, error))
		return FALSE;
	current = json_object_get_string_member_with_default(root, "current-context", NULL);
	if (merged->current_context == NULL && current != NULL && current[0] != '\0')
		merged->current_context = g_strdup(current);
	return TRUE;
}

/* ---- certificates ---- */

/* Reads PEM from FIELD (a path, relative to the defining file) or FIELD-data (base64).
 * Returns FALSE on error; *pem stays NULL when neither is set. *where names the field used. */
static gboolean
kc_read_pem(const KcEntry *entry, const gchar *field, GBytes **pem, gchar **where, GError **error)
{
	g_autofree gchar *data_field = g_strconcat(field, "-data", NULL);
	g_autofree gchar *data = NULL;
	g_autofree gchar *path = NULL;

	*pem = NULL;
	*where = NULL;
	if (!kc_get_string(entry, data_field, &data, error))
		return FALSE;
	if (!kc_get_string(entry, field, &path, error))
		return FALSE;
	if (data != NULL) {
		gsize length = 0;
		guchar *decoded;

		if (path != NULL)
			g_debug("%s: %s[%s]: %s overrides %s", entry->origin, entry->section,
			        entry->name, data_field, field);
		decoded = g_base64_decode(data, &length);
		*pem = g_bytes_new_take(decoded, length);
		*where = kc_field(entry, data_field);
		return TRUE;
	}
	if (path != NULL) {
		g_autofree gchar *resolved = kc_resolve_path(entry, path);
		g_autoptr(GError) local_error = NULL;
		gchar *contents = NULL;
		gsize length = 0;

		*where = kc_field(entry, field);
		if (!g_file_get_contents(resolved, &contents, &length, &local_error)) {
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG, "%s: %s",
			            *where, local_error->message);
			g_clear_pointer(where, g_free);
			return FALSE;
		}
		*pem = g_bytes_new_take(contents, length);
	}
	return TRUE;
}

/* Checks that PEM holds one or more certificates, each of which parses. */
static gboolean
kc_validate_ca_bundle(GBytes *pem, const gchar *where, GError **error)
{
	static const gchar begin[] = "-----BEGIN CERTIFICATE-----";
	static const gchar end[] = "-----END CERTIFICATE-----";
	g_autofree gchar *text = g_strndup(g_bytes_get_data(pem, NULL), g_bytes_get_size(pem));
	const gchar *cursor = text;
	guint count = 0;

	for (;;) {
		const gchar *start = strstr(cursor, begin);
		const gchar *stop;
		g_autoptr(GTlsCertificate) certificate = NULL;
		g_autoptr(GError) local_error = NULL;

		if (start == NULL)
			break;
		stop = strstr(start, end);
		if (stop == NULL) {
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            "%s: certificate %u has no END line", where, count + 1);
			return FALSE;
		}
		stop += strlen(end);
		certificate = g_tls_certificate_new_from_pem(start, stop - start, &local_error);
		if (certificate == NULL) {
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            "%s: certificate %u is not a valid PEM certificate: %s", where,
			            count + 1, local_error->message);
			return FALSE;
		}
		count++;
		cursor = stop;
	}
	if (count == 0) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "%s: not a PEM certificate", where);
		return FALSE;
	}
	return TRUE;
}

static GTlsCertificate *
kc_certificate_with_key(const gchar *cert_pem,
                        gsize cert_length,
                        const gchar *cert_where,
                        const gchar *key_pem,
                        gsize key_length,
                        const gchar *key_where,
                        GError **error)
{
	g_autoptr(GTlsCertificate) alone = NULL;
	g_autoptr(GTlsCertificate) certificate = NULL;
	g_autoptr(GError) local_error = NULL;
	g_autoptr(GString) both = NULL;

	alone = g_tls_certificate_new_from_pem(cert_pem, cert_length, &local_error);
	if (alone == NULL ||
	    g_strstr_len(cert_pem, cert_length, "-----BEGIN CERTIFICATE-----") == NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "%s: not a PEM certificate", cert_where);
		return NULL;
	}
	/* without this check a key file holding no key would silently give a certificate
	 * without one, and the failure would only show in the TLS handshake */
	if (g_strstr_len(key_pem, key_length, "PRIVATE KEY-----") == NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "%s: not a PEM private key", key_where);
		return NULL;
	}
	both = g_string_new_len(cert_pem, cert_length);
	g_string_append_c(both, '\n');
	g_string_append_len(both, key_pem, key_length);
	g_clear_error(&local_error);
	certificate = g_tls_certificate_new_from_pem(both->str, both->len, &local_error);
	if (certificate == NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "%s: not a PEM private key (%s)", key_where, local_error->message);
		return NULL;
	}
	return g_steal_pointer(&certificate);
}

/* ---- cluster, user, exec ---- */

static gboolean
kc_load_cluster(MeshSyncKubeConfig *self, const KcEntry *entry, GError **error)
{
	g_autoptr(GUri) uri = NULL;
	g_autoptr(GBytes) ca = NULL;
	g_autofree gchar *where = NULL;
	const gchar *scheme;

	if (!kc_get_string(entry, "server", &self->server, error))
		return FALSE;
	if (self->server == NULL) {
		g_autofree gchar *field = kc_field(entry, "server");
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG, "%s: missing",
		            field);
		return FALSE;
	}
	uri = g_uri_parse(self->server, G_URI_FLAGS_NONE, NULL);
	scheme = uri != NULL ? g_uri_get_scheme(uri) : NULL;
	if (uri == NULL || g_uri_get_host(uri) == NULL ||
	    (g_strcmp0(scheme, "https") != 0 && g_strcmp0(scheme, "http") != 0)) {
		g_autofree gchar *field = kc_field(entry, "server");
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "%s: \"%s\" is not an http or https URL", field, self->server);
		return FALSE;
	}
	if (!kc_get_string(entry, "tls-server-name", &self->tls_server_name, error))
		return FALSE;
	if (!kc_get_boolean(entry, "insecure-skip-tls-verify", &self->insecure_skip_tls_verify,
	                    error))
		return FALSE;
	if (!kc_read_pem(entry, "certificate-authority", &ca, &where, error))
		return FALSE;
	if (ca != NULL) {
		if (!kc_validate_ca_bundle(ca, where, error))
			return FALSE;
		self->ca_pem = g_steal_pointer(&ca);
	}
	return TRUE;
}

static JsonNode *
kc_exec_cluster_config(const KcEntry *cluster)
{
	JsonNode *extensions = kc_get_member(cluster, "extensions");
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
		if (g_strcmp0(json_object_get_string_member_with_default(object, "name", NULL),
		              "client.authentication.k8s.io/exec") == 0 &&
		    json_object_has_member(object, "extension"))
			return json_node_copy(json_object_get_member(object, "extension"));
	}
	return NULL;
}

static KcExec *
kc_load_exec(const KcEntry *user, const KcEntry *cluster, JsonNode *node, GError **error)
{
	g_autoptr(KcExec) exec = g_new0(KcExec, 1);
	g_autofree gchar *provide = NULL;
	KcEntry sub = *user;
	JsonNode *args;
	JsonNode *env;

	exec->where = kc_field(user, "exec");
	if (!JSON_NODE_HOLDS_OBJECT(node)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "%s: not a mapping", exec->where);
		return NULL;
	}
	/* read the exec mapping with the same helpers; field names come out as
	 * users[NAME].exec.FIELD */
	sub.body = node;
	sub.prefix = "exec";
#define KC_EXEC_FIELD(member) kc_field(&sub, member)
	if (!kc_get_string(&sub, "apiVersion", &exec->api_version, error))
		return NULL;
	if (g_strcmp0(exec->api_version, KC_EXEC_API_V1) != 0 &&
	    g_strcmp0(exec->api_version, KC_EXEC_API_V1BETA1) != 0) {
		g_autofree gchar *field = KC_EXEC_FIELD("apiVersion");
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "%s: \"%s\" is not supported (use %s or %s)", field,
		            exec->api_version != NULL ? exec->api_version : "", KC_EXEC_API_V1,
		            KC_EXEC_API_V1BETA1);
		return NULL;
	}
	if (!kc_get_string(&sub, "command", &exec->command, error))
		return NULL;
	if (exec->command == NULL) {
		g_autofree gchar *field = KC_EXEC_FIELD("command");
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG, "%s: missing",
		            field);
		return NULL;
	}
	/* as client-go: a command with a slash is a path relative to the kubeconfig; a bare
	 * name is looked up in PATH */
	if (strchr(exec->command, '/') != NULL && !g_path_is_absolute(exec->command)) {
		gchar *resolved = kc_resolve_path(user, exec->command);
		g_free(exec->command);
		exec->command = resolved;
	}
	args = json_object_get_member(json_node_get_object(node), "args");
	if (args != NULL && !JSON_NODE_HOLDS_NULL(args)) {
		g_autoptr(GStrvBuilder) builder = g_strv_builder_new();
		JsonArray *array;

		if (!JSON_NODE_HOLDS_ARRAY(args)) {
			g_autofree gchar *field = KC_EXEC_FIELD("args");
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            "%s: not a list", field);
			return NULL;
		}
		array = json_node_get_array(args);
		for (guint i = 0; i < json_array_get_length(array); i++) {
			JsonNode *arg = json_array_get_element(array, i);
			if (!JSON_NODE_HOLDS_VALUE(arg) ||
			    json_node_get_value_type(arg) != G_TYPE_STRING) {
				g_autofree gchar *field = KC_EXEC_FIELD("args");
				g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
				            "%s[%u]: not a string", field, i);
				return NULL;
			}
			g_strv_builder_add(builder, json_node_get_string(arg));
		}
		exec->args = g_strv_builder_end(builder);
	}
	exec->env = g_ptr_array_new_with_free_func(g_free);
	env = json_object_get_member(json_node_get_object(node), "env");
	if (env != NULL && !JSON_NODE_HOLDS_NULL(env)) {
		JsonArray *array = JSON_NODE_HOLDS_ARRAY(env) ? json_node_get_array(env) : NULL;

		for (guint i = 0; array != NULL && i < json_array_get_length(array); i++) {
			JsonNode *item = json_array_get_element(array, i);
			KcEntry var = sub;
			g_autofree gchar *name = NULL;
			g_autofree gchar *value = NULL;

			var.body = item;
			if (!JSON_NODE_HOLDS_OBJECT(item) ||
			    !kc_get_string(&var, "name", &name, NULL) ||
			    !kc_get_string(&var, "value", &value, NULL) || name == NULL) {
				g_autofree gchar *field = KC_EXEC_FIELD("env");
				g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
				            "%s[%u]: not a mapping with name and value", field, i);
				return NULL;
			}
			g_ptr_array_add(exec->env, g_steal_pointer(&name));
			g_ptr_array_add(exec->env,
			                value != NULL ? g_steal_pointer(&value) : g_strdup(""));
		}
		if (array == NULL) {
			g_autofree gchar *field = KC_EXEC_FIELD("env");
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            "%s: not a list", field);
			return NULL;
		}
	}
	if (!kc_get_string(&sub, "interactiveMode", &exec->interactive_mode, error))
		return NULL;
	if (exec->interactive_mode == NULL) {
		if (g_strcmp0(exec->api_version, KC_EXEC_API_V1) == 0) {
			g_autofree gchar *field = KC_EXEC_FIELD("interactiveMode");
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            "%s: missing, %s requires Never, IfAvailable or Always", field,
			            KC_EXEC_API_V1);
			return NULL;
		}
		exec->interactive_mode = g_strdup("IfAvailable");
	}
	if (g_strcmp0(exec->interactive_mode, "Never") != 0 &&
	    g_strcmp0(exec->interactive_mode, "IfAvailable") != 0 &&
	    g_strcmp0(exec->interactive_mode, "Always") != 0) {
		g_autofree gchar *field = KC_EXEC_FIELD("interactiveMode");
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "%s: \"%s\" is not Never, IfAvailable or Always", field,
		            exec->interactive_mode);
		return NULL;
	}
	if (!kc_get_boolean(&sub, "provideClusterInfo", &exec->provide_cluster_info, error))
		return NULL;
	if (!kc_get_string(&sub, "installHint", &exec->install_hint, error))
		return NULL;
	if (exec->provide_cluster_info)
		exec->cluster_config = kc_exec_cluster_config(cluster);
#undef KC_EXEC_FIELD
	return g_steal_pointer(&exec);
}

static gboolean
kc_load_user(MeshSyncKubeConfig *self, const KcEntry *entry, const KcEntry *cluster, GError **error)
{
	g_autoptr(GBytes) cert = NULL;
	g_autoptr(GBytes) key = NULL;
	g_autofree gchar *cert_where = NULL;
	g_autofree gchar *key_where = NULL;
	g_autofree gchar *token_file = NULL;
	JsonNode *exec;

	if (kc_get_member(entry, "auth-provider") != NULL) {
		g_autofree gchar *field = kc_field(entry, "auth-provider");
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "%s: not supported (kubectl removed auth providers; use an exec "
		            "credential plugin)",
		            field);
		return FALSE;
	}
	if (!kc_get_string(entry, "token", &self->static_token, error))
		return FALSE;
	if (!kc_get_string(entry, "tokenFile", &token_file, error))
		return FALSE;
	if (token_file != NULL) {
		g_autoptr(GError) local_error = NULL;
		g_autofree gchar *contents = NULL;

		self->token_file = kc_resolve_path(entry, token_file);
		if (g_file_get_contents(self->token_file, &contents, NULL, &local_error))
			self->file_token = kc_trim_token(contents);
		/* as client-go: a static token is the fallback when the file cannot be read */
		if (self->file_token == NULL && self->static_token == NULL) {
			g_autofree gchar *field = kc_field(entry, "tokenFile");
			if (local_error != NULL)
				g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
				            "%s: %s", field, local_error->message);
			else
				g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
				            "%s: %s is empty", field, self->token_file);
			return FALSE;
		}
		if (self->file_token != NULL)
			self->file_token_time = g_get_monotonic_time();
		else
			self->file_token = g_strdup(self->static_token);
	}
	if (!kc_read_pem(entry, "client-certificate", &cert, &cert_where, error))
		return FALSE;
	if (!kc_read_pem(entry, "client-key", &key, &key_where, error))
		return FALSE;
	if ((cert == NULL) != (key == NULL)) {
		g_autofree gchar *field =
		        kc_field(entry, cert == NULL ? "client-certificate" : "client-key");
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "%s: missing (a client certificate needs both certificate and key)",
		            field);
		return FALSE;
	}
	if (cert != NULL) {
		self->client_certificate = kc_certificate_with_key(
		        g_bytes_get_data(cert, NULL), g_bytes_get_size(cert), cert_where,
		        g_bytes_get_data(key, NULL), g_bytes_get_size(key), key_where, error);
		if (self->client_certificate == NULL)
			return FALSE;
	}
	exec = kc_get_member(entry, "exec");
	if (exec != NULL) {
		self->exec = kc_load_exec(entry, cluster, exec, error);
		if (self->exec == NULL)
			return FALSE;
	}
	return TRUE;
}

static MeshSyncKubeConfig *
kc_build(KcMerged *merged, const gchar *context, const gchar *source, GError **error)
{
	g_autoptr(MeshSyncKubeConfig) self = NULL;
	g_autofree gchar *origins = kc_merged_describe(merged);
	g_autofree gchar *cluster_name = NULL;
	g_autofree gchar *user_name = NULL;
	const gchar *context_name = context;
	KcEntry *ctx;
	KcEntry *cluster;
	KcEntry *user = NULL;

	if (context_name == NULL || context_name[0] == '\0')
		context_name = merged->current_context;
	if (context_name == NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "%s: current-context is not set and no context was given", origins);
		return NULL;
	}
	ctx = g_hash_table_lookup(merged->contexts, context_name);
	if (ctx == NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "%s: context \"%s\" not found", origins, context_name);
		return NULL;
	}
	if (!kc_get_string(ctx, "cluster", &cluster_name, error))
		return NULL;
	if (cluster_name == NULL) {
		g_autofree gchar *field = kc_field(ctx, "cluster");
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG, "%s: missing",
		            field);
		return NULL;
	}
	cluster = g_hash_table_lookup(merged->clusters, cluster_name);
	if (cluster == NULL) {
		g_autofree gchar *field = kc_field(ctx, "cluster");
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "%s: cluster \"%s\" not found", field, cluster_name);
		return NULL;
	}
	if (!kc_get_string(ctx, "user", &user_name, error))
		return NULL;
	if (user_name != NULL) {
		user = g_hash_table_lookup(merged->users, user_name);
		if (user == NULL) {
			g_autofree gchar *field = kc_field(ctx, "user");
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            "%s: user \"%s\" not found", field, user_name);
			return NULL;
		}
	}

	self = g_object_new(MESHSYNC_TYPE_KUBE_CONFIG, NULL);
	self->context_name = g_strdup(context_name);
	self->cluster_name = g_steal_pointer(&cluster_name);
	self->user_name = g_steal_pointer(&user_name);
	self->source = g_strdup(source);
	if (!kc_get_string(ctx, "namespace", &self->namespace, error))
		return NULL;
	if (self->namespace == NULL)
		self->namespace = g_strdup("default");
	if (!kc_load_cluster(self, cluster, error))
		return NULL;
	if (user != NULL && !kc_load_user(self, user, cluster, error))
		return NULL;
	return g_steal_pointer(&self);
}

static MeshSyncKubeConfig *
kc_new_from_files(const gchar *const *paths,
                  gboolean missing_ok,
                  const gchar *context,
                  GError **error)
{
	g_autoptr(KcMerged) merged = kc_merged_new();
	g_autoptr(GString) listed = g_string_new(NULL);

	for (guint i = 0; paths != NULL && paths[i] != NULL; i++) {
		g_autoptr(GError) local_error = NULL;
		g_autofree gchar *contents = NULL;
		g_autofree gchar *absolute = NULL;
		g_autofree gchar *dir = NULL;
		gsize length = 0;

		if (paths[i][0] == '\0')
			continue;
		if (listed->len > 0)
			g_string_append_c(listed, ':');
		g_string_append(listed, paths[i]);
		if (!g_file_get_contents(paths[i], &contents, &length, &local_error)) {
			if (missing_ok &&
			    g_error_matches(local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT)) {
				g_debug("kubeconfig %s does not exist, skipped", paths[i]);
				continue;
			}
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            "%s: cannot read: %s", paths[i], local_error->message);
			return NULL;
		}
		absolute = g_canonicalize_filename(paths[i], NULL);
		dir = g_path_get_dirname(absolute);
		if (!kc_merge_data(merged, contents, length, paths[i], dir, error))
			return NULL;
	}
	if (merged->origins->len == 0) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "no kubeconfig file exists among: %s",
		            listed->len > 0 ? listed->str : "(no files given)");
		return NULL;
	}
	return kc_build(merged, context, listed->str, error);
}

/* ---- GObject ---- */

static void
meshsync_kube_config_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
	MeshSyncKubeConfig *self = MESHSYNC_KUBE_CONFIG(object);

	switch (prop_id) {
	case PROP_SERVER:
		g_value_set_string(value, self->server);
		break;
	case PROP_CONTEXT_NAME:
		g_value_set_string(value, self->context_name);
		break;
	case PROP_CLUSTER_NAME:
		g_value_set_string(value, self->cluster_name);
		break;
	case PROP_USER_NAME:
		g_value_set_string(value, self->user_name);
		break;
	case PROP_NAMESPACE:
		g_value_set_string(value, self->namespace);
		break;
	case PROP_TLS_SERVER_NAME:
		g_value_set_string(value, self->tls_server_name);
		break;
	case PROP_INSECURE_SKIP_TLS_VERIFY:
		g_value_set_boolean(value, self->insecure_skip_tls_verify);
		break;
	case PROP_IN_CLUSTER:
		g_value_set_boolean(value, self->in_cluster);
		break;
	case PROP_SOURCE:
		g_value_set_string(value, self->source);
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

	g_free(self->server);
	g_free(self->context_name);
	g_free(self->cluster_name);
	g_free(self->user_name);
	g_free(self->namespace);
	g_free(self->tls_server_name);
	g_free(self->source);
	g_clear_pointer(&self->ca_pem, g_bytes_unref);
	g_free(self->static_token);
	g_clear_object(&self->client_certificate);
	kc_exec_free(self->exec);
	g_free(self->token_file);
	g_free(self->file_token);
	g_free(self->exec_token);
	g_clear_object(&self->exec_certificate);
	/* every refresh holds a reference, so no waiter can be left here */
	g_ptr_array_unref(self->waiters);

	G_OBJECT_CLASS(meshsync_kube_config_parent_class)->finalize(object);
}

static void
meshsync_kube_config_class_init(MeshSyncKubeConfigClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->get_property = meshsync_kube_config_get_property;
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

	g_object_class_install_properties(object_class, N_PROPS, properties);
}

static void
meshsync_kube_config_init(MeshSyncKubeConfig *self)
{
	self->token_file_period = KC_DEFAULT_TOKEN_FILE_PERIOD;
	self->exec_timeout = KC_EXEC_TIMEOUT_SECONDS;
	self->waiters = g_ptr_array_new_with_free_func(g_object_unref);
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

	return kc_new_from_files(paths, TRUE, context, error);
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

	return kc_new_from_files(paths, FALSE, context, error);
}

/**
 * meshsync_kube_config_new_from_data:
 * @data: kubeconfig text (YAML or JSON)
 * @length: the length of @data in bytes, or -1 if it is nul-terminated
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
	g_autoptr(KcMerged) merged = kc_merged_new();
	g_autofree gchar *cwd = g_get_current_dir();

	g_return_val_if_fail(data != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	if (length < 0)
		length = strlen(data);
	if (!kc_merge_data(merged, data, length, "kubeconfig data", cwd, error))
		return NULL;
	return kc_build(merged, context, "kubeconfig data", error);
}

static const gchar *
kc_get_service_account_dir(void)
{
	return kc_service_account_dir != NULL ? kc_service_account_dir
	                                      : KC_DEFAULT_SERVICE_ACCOUNT_DIR;
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
	g_autoptr(MeshSyncKubeConfig) self = NULL;
	g_autoptr(GError) local_error = NULL;
	g_autofree gchar *contents = NULL;
	g_autofree gchar *ca_path = NULL;
	g_autofree gchar *namespace_path = NULL;
	const gchar *host = g_getenv("KUBERNETES_SERVICE_HOST");
	const gchar *port = g_getenv("KUBERNETES_SERVICE_PORT");
	const gchar *dir = kc_get_service_account_dir();
	const gchar *pod_namespace = g_getenv("POD_NAMESPACE");
	gsize length = 0;

	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	if (host == NULL || host[0] == '\0' || port == NULL || port[0] == '\0') {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		                    "not running in a cluster: KUBERNETES_SERVICE_HOST and "
		                    "KUBERNETES_SERVICE_PORT must both be set");
		return NULL;
	}

	self = g_object_new(MESHSYNC_TYPE_KUBE_CONFIG, NULL);
	self->in_cluster = TRUE;
	self->source = g_strdup("in-cluster");
	if (strchr(host, ':') != NULL)
		self->server = g_strdup_printf("https://[%s]:%s", host, port);
	else
		self->server = g_strdup_printf("https://%s:%s", host, port);

	self->token_file = g_build_filename(dir, "token", NULL);
	if (g_file_get_contents(self->token_file, &contents, NULL, &local_error))
		self->file_token = kc_trim_token(contents);
	if (self->file_token == NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "%s: cannot read the service-account token%s%s", self->token_file,
		            local_error != NULL ? ": " : " (empty file)",
		            local_error != NULL ? local_error->message : "");
		return NULL;
	}
	self->file_token_time = g_get_monotonic_time();
	g_clear_pointer(&contents, g_free);
	g_clear_error(&local_error);

	ca_path = g_build_filename(dir, "ca.crt", NULL);
	if (g_file_get_contents(ca_path, &contents, &length, &local_error)) {
		g_autoptr(GBytes) ca = g_bytes_new_take(g_steal_pointer(&contents), length);
		if (!kc_validate_ca_bundle(ca, ca_path, error))
			return NULL;
		self->ca_pem = g_steal_pointer(&ca);
	} else {
		/* client-go also carries on with the system trust store here */
		g_warning("%s: cannot read the service-account CA, using the system trust store: "
		          "%s",
		          ca_path, local_error->message);
	}
	g_clear_error(&local_error);

	if (pod_namespace != NULL && pod_namespace[0] != '\0') {
		self->namespace = g_strdup(pod_namespace);
	} else {
		namespace_path = g_build_filename(dir, "namespace", NULL);
		if (g_file_get_contents(namespace_path, &contents, NULL, NULL))
			self->namespace = kc_trim_token(contents);
		if (self->namespace == NULL)
			self->namespace = g_strdup("default");
	}
	return g_steal_pointer(&self);
}

static gboolean
kc_any_file_exists(const gchar *const *paths)
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

		if (kc_any_file_exists((const gchar *const *)paths))
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
	            "no Kubernetes configuration found: tried no explicit kubeconfig, in-cluster "
	            "(KUBERNETES_SERVICE_HOST not set), %s, %s (no such file)",
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
	return self->server;
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
	return self->context_name;
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
	return self->cluster_name;
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
	return self->user_name;
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
	return self->namespace;
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
	return self->tls_server_name;
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
	return self->insecure_skip_tls_verify;
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
	return self->in_cluster;
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
	return self->source;
}

/* ---- private API: CA, credentials ---- */

GBytes *
meshsync_kube_config_get_ca_pem(MeshSyncKubeConfig *self)
{
	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(self), NULL);
	return self->ca_pem;
}

void
meshsync_kube_config_set_service_account_dir_for_testing(const gchar *dir)
{
	g_free(kc_service_account_dir);
	kc_service_account_dir = g_strdup(dir);
}

void
meshsync_kube_config_set_exec_timeout_for_testing(MeshSyncKubeConfig *self, guint seconds)
{
	g_return_if_fail(MESHSYNC_IS_KUBE_CONFIG(self));
	self->exec_timeout = seconds;
}

void
meshsync_kube_config_set_token_file_period_for_testing(MeshSyncKubeConfig *self, guint seconds)
{
	g_return_if_fail(MESHSYNC_IS_KUBE_CONFIG(self));
	self->token_file_period = seconds;
}

static MeshSyncKubeCredentials *
kc_current_credentials(MeshSyncKubeConfig *self)
{
	if (self->exec != NULL) {
		return kc_credentials_new(self->exec_token, self->exec_certificate != NULL
		                                                    ? self->exec_certificate
		                                                    : self->client_certificate);
	}
	if (self->token_file != NULL)
		return kc_credentials_new(self->file_token, self->client_certificate);
	return kc_credentials_new(self->static_token, self->client_certificate);
}

static gboolean
kc_credentials_fresh(MeshSyncKubeConfig *self)
{
	if (self->exec != NULL)
		return self->exec_cached && g_get_real_time() < self->exec_expiry;
	if (self->token_file != NULL) {
		return self->token_file_period > 0 && self->file_token_time != 0 &&
		       g_get_monotonic_time() - self->file_token_time <
		               (gint64)self->token_file_period * G_USEC_PER_SEC;
	}
	return TRUE;
}

/* Answers everyone who waited for the refresh, with CREDENTIALS or ERROR. */
static void
kc_refresh_done(MeshSyncKubeConfig *self,
                const MeshSyncKubeCredentials *credentials,
                const GError *error)
{
	g_autoptr(GPtrArray) waiters = g_steal_pointer(&self->waiters);

	self->waiters = g_ptr_array_new_with_free_func(g_object_unref);
	self->refreshing = FALSE;
	for (guint i = 0; i < waiters->len; i++) {
		GTask *task = g_ptr_array_index(waiters, i);

		if (error != NULL)
			g_task_return_error(task, g_error_copy(error));
		else
			g_task_return_pointer(task,
			                      kc_credentials_new(credentials->token,
			                                         credentials->client_certificate),
			                      (GDestroyNotify)meshsync_kube_credentials_free);
	}
}

static void
kc_token_file_loaded_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MeshSyncKubeConfig) self = user_data;
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeCredentials) credentials = NULL;
	g_autofree gchar *contents = NULL;
	g_autofree gchar *token = NULL;

	if (g_file_load_contents_finish(G_FILE(source), result, &contents, NULL, NULL, &error))
		token = kc_trim_token(contents);
	if (token != NULL) {
		g_free(self->file_token);
		self->file_token = g_steal_pointer(&token);
		self->file_token_time = g_get_monotonic_time();
	} else {
		/* as client-go: keep the last good token and try again on the next request */
		g_warning("%s: cannot re-read the token, keeping the previous one: %s",
		          self->token_file, error != NULL ? error->message : "empty file");
	}
	credentials = kc_current_credentials(self);
	kc_refresh_done(self, credentials, NULL);
}

static gchar *
kc_exec_info(MeshSyncKubeConfig *self)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autoptr(JsonGenerator) generator = json_generator_new();
	g_autoptr(JsonNode) root = NULL;

	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "kind");
	json_builder_add_string_value(builder, "ExecCredential");
	json_builder_set_member_name(builder, "apiVersion");
	json_builder_add_string_value(builder, self->exec->api_version);
	json_builder_set_member_name(builder, "spec");
	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "interactive");
	/* a daemon has no terminal to ask on */
	json_builder_add_boolean_value(builder, FALSE);
	if (self->exec->provide_cluster_info) {
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
		if (self->exec->cluster_config != NULL) {
			json_builder_set_member_name(builder, "config");
			json_builder_add_value(builder, json_node_copy(self->exec->cluster_config));
		}
		json_builder_end_object(builder);
	}
	json_builder_end_object(builder);
	json_builder_end_object(builder);
	root = json_builder_get_root(builder);
	json_generator_set_root(generator, root);
	return json_generator_to_data(generator, NULL);
}

/* Parses the plugin's ExecCredential into the cache fields of a scratch result. */
static gboolean
kc_exec_parse(MeshSyncKubeConfig *self,
              const gchar *output,
              gchar **token,
              GTlsCertificate **certificate,
              gint64 *expiry,
              GError **error)
{
	g_autoptr(JsonParser) parser = json_parser_new();
	g_autoptr(GError) local_error = NULL;
	JsonObject *root;
	JsonObject *status;
	JsonNode *status_node;
	const gchar *api_version;
	const gchar *value;
	const gchar *cert;
	const gchar *key;
	const gchar *where = self->exec->where;

	if (!json_parser_load_from_data(parser, output, -1, &local_error)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            "%s: plugin output is not JSON: %s", where, local_error->message);
		return FALSE;
	}
	if (!JSON_NODE_HOLDS_OBJECT(json_parser_get_root(parser))) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            "%s: plugin output is not an ExecCredential", where);
		return FALSE;
	}
	root = json_node_get_object(json_parser_get_root(parser));
	api_version = json_object_get_string_member_with_default(root, "apiVersion", "");
	if (g_strcmp0(api_version, self->exec->api_version) != 0) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            "%s: plugin returned apiVersion \"%s\", configured for \"%s\"", where,
		            api_version, self->exec->api_version);
		return FALSE;
	}
	status_node = json_object_get_member(root, "status");
	status = status_node != NULL && JSON_NODE_HOLDS_OBJECT(status_node)
	                 ? json_node_get_object(status_node)
	                 : NULL;
	if (status == NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            "%s: plugin output has no status", where);
		return FALSE;
	}
	value = json_object_get_string_member_with_default(status, "token", NULL);
	cert = json_object_get_string_member_with_default(status, "clientCertificateData", NULL);
	key = json_object_get_string_member_with_default(status, "clientKeyData", NULL);
	if ((cert == NULL || cert[0] == '\0') != (key == NULL || key[0] == '\0')) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            "%s: plugin returned %s without %s", where,
		            cert != NULL ? "clientCertificateData" : "clientKeyData",
		            cert != NULL ? "clientKeyData" : "clientCertificateData");
		return FALSE;
	}
	if ((value == NULL || value[0] == '\0') && cert == NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            "%s: plugin returned neither a token nor a certificate and key", where);
		return FALSE;
	}
	if (cert != NULL && cert[0] != '\0') {
		g_autofree gchar *cert_where =
		        g_strdup_printf("%s: status.clientCertificateData", where);
		g_autofree gchar *key_where = g_strdup_printf("%s: status.clientKeyData", where);

		*certificate = kc_certificate_with_key(cert, strlen(cert), cert_where, key,
		                                       strlen(key), key_where, error);
		if (*certificate == NULL)
			return FALSE;
	}
	*token = value != NULL && value[0] != '\0' ? g_strdup(value) : NULL;
	*expiry = G_MAXINT64;
	value = json_object_get_string_member_with_default(status, "expirationTimestamp", NULL);
	if (value != NULL && value[0] != '\0') {
		g_autoptr(GDateTime) when = g_date_time_new_from_iso8601(value, NULL);

		if (when == NULL) {
			g_clear_pointer(token, g_free);
			g_clear_object(certificate);
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
			            "%s: status.expirationTimestamp \"%s\" is not RFC 3339", where,
			            value);
			return FALSE;
		}
		*expiry = g_date_time_to_unix(when) * G_USEC_PER_SEC +
		          g_date_time_get_microsecond(when);
	}
	return TRUE;
}

typedef struct {
	MeshSyncKubeConfig *self; /* (owned) */
	GSubprocess *process;     /* (owned) */
	guint generation;
	guint timeout_id;
	gboolean timed_out;
} KcExecRun;

static gboolean
kc_exec_timeout_cb(gpointer user_data)
{
	KcExecRun *run = user_data;

	run->timeout_id = 0;
	run->timed_out = TRUE;
	g_subprocess_force_exit(run->process);
	return G_SOURCE_REMOVE;
}

static void
kc_exec_done_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	KcExecRun *run = user_data;
	g_autoptr(MeshSyncKubeConfig) self = run->self;
	GSubprocess *process = G_SUBPROCESS(source);
	g_autoptr(GError) error = NULL;
	g_autoptr(GError) local_error = NULL;
	g_autoptr(GTlsCertificate) certificate = NULL;
	g_autoptr(MeshSyncKubeCredentials) credentials = NULL;
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	g_autofree gchar *token = NULL;
	guint generation = run->generation;
	gboolean timed_out = run->timed_out;
	gint64 expiry = 0;

	g_clear_handle_id(&run->timeout_id, g_source_remove);
	g_object_unref(run->process);
	g_free(run);
	if (!g_subprocess_communicate_utf8_finish(process, result, &out, &err, &local_error)) {
		g_set_error(&error, MESHSYNC_ERROR, MESHSYNC_ERROR_FAILED,
		            "%s: running %s failed: %s", self->exec->where, self->exec->command,
		            local_error->message);
	} else if (timed_out) {
		g_set_error(&error, MESHSYNC_ERROR, MESHSYNC_ERROR_FAILED,
		            "%s: %s gave no credentials within %u s and was stopped",
		            self->exec->where, self->exec->command, self->exec_timeout);
	} else if (!g_subprocess_get_successful(process)) {
		g_autofree gchar *message = g_strstrip(g_strdup(err != NULL ? err : ""));

		/* one line: the plugin's stderr may span several */
		g_strdelimit(message, "\r\n", ' ');
		g_set_error(
		        &error, MESHSYNC_ERROR, MESHSYNC_ERROR_FAILED,
		        "%s: %s exited with status %d: %s", self->exec->where, self->exec->command,
		        g_subprocess_get_if_exited(process) ? g_subprocess_get_exit_status(process)
		                                            : -1,
		        message[0] != '\0' ? message : "(no output on stderr)");
	} else {
		kc_exec_parse(self, out != NULL ? out : "", &token, &certificate, &expiry, &error);
	}
	if (error != NULL) {
		kc_refresh_done(self, NULL, error);
		return;
	}
	credentials = kc_credentials_new(token, certificate != NULL ? certificate
	                                                            : self->client_certificate);
	/* an invalidation while the plugin ran means its answer may already be stale */
	if (generation == self->generation) {
		g_free(self->exec_token);
		self->exec_token = g_steal_pointer(&token);
		g_set_object(&self->exec_certificate, certificate);
		self->exec_expiry = expiry;
		self->exec_cached = TRUE;
	}
	kc_refresh_done(self, credentials, NULL);
}

static void
kc_exec_start(MeshSyncKubeConfig *self)
{
	g_autoptr(GSubprocessLauncher) launcher = NULL;
	g_autoptr(GSubprocess) process = NULL;
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_autoptr(GError) local_error = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *info = NULL;
	KcExecRun *run;

	if (g_strcmp0(self->exec->interactive_mode, "Always") == 0) {
		g_set_error(&error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            "%s.interactiveMode: Always needs a terminal, which meshsync does "
		            "not have",
		            self->exec->where);
		kc_refresh_done(self, NULL, error);
		return;
	}
	launcher = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE |
	                                     G_SUBPROCESS_FLAGS_STDERR_PIPE);
	for (guint i = 0; i + 1 < self->exec->env->len; i += 2) {
		g_subprocess_launcher_setenv(launcher, g_ptr_array_index(self->exec->env, i),
		                             g_ptr_array_index(self->exec->env, i + 1), TRUE);
	}
	info = kc_exec_info(self);
	g_subprocess_launcher_setenv(launcher, "KUBERNETES_EXEC_INFO", info, TRUE);
	g_ptr_array_add(argv, self->exec->command);
	for (guint i = 0; self->exec->args != NULL && self->exec->args[i] != NULL; i++)
		g_ptr_array_add(argv, self->exec->args[i]);
	g_ptr_array_add(argv, NULL);
	process = g_subprocess_launcher_spawnv(launcher, (const gchar *const *)argv->pdata,
	                                       &local_error);
	if (process == NULL) {
		if (g_error_matches(local_error, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT)) {
			g_set_error(
			        &error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			        "%s.command: %s not found%s%s", self->exec->where,
			        self->exec->command, self->exec->install_hint != NULL ? "; " : "",
			        self->exec->install_hint != NULL ? self->exec->install_hint : "");
		} else {
			g_set_error(&error, MESHSYNC_ERROR, MESHSYNC_ERROR_FAILED,
			            "%s.command: cannot run %s: %s", self->exec->where,
			            self->exec->command, local_error->message);
		}
		kc_refresh_done(self, NULL, error);
		return;
	}
	g_debug("running credential plugin %s", self->exec->command);
	run = g_new0(KcExecRun, 1);
	run->self = g_object_ref(self);
	run->process = g_object_ref(process);
	run->generation = self->generation;
	run->timeout_id = g_timeout_add_seconds(self->exec_timeout, kc_exec_timeout_cb, run);
	/* no cancellable: the run is shared by every waiter, one caller cancelling must not
	 * fail the others */
	g_subprocess_communicate_utf8_async(process, NULL, NULL, kc_exec_done_cb, run);
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
	if (g_task_return_error_if_cancelled(task))
		return;
	if (!self->refreshing && kc_credentials_fresh(self)) {
		g_task_return_pointer(task, kc_current_credentials(self),
		                      (GDestroyNotify)meshsync_kube_credentials_free);
		return;
	}
	g_ptr_array_add(self->waiters, g_steal_pointer(&task));
	if (self->refreshing)
		return;
	self->refreshing = TRUE;
	if (self->exec != NULL) {
		kc_exec_start(self);
	} else {
		g_autoptr(GFile) file = g_file_new_for_path(self->token_file);
		g_file_load_contents_async(file, NULL, kc_token_file_loaded_cb, g_object_ref(self));
	}
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

	self->generation++;
	self->exec_cached = FALSE;
	g_clear_pointer(&self->exec_token, g_free);
	g_clear_object(&self->exec_certificate);
	/* keep file_token itself: it is the fallback if the re-read fails */
	self->file_token_time = 0;
}
