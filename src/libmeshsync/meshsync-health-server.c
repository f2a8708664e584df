/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncHealth"

#include "config.h"

#include <libsoup/soup.h>
#include <string.h>

#include "meshsync-error.h"
#include "meshsync-health-server.h"
#include "meshsync-health-server-private.h"
#include "util/msd-i18n.h"

/**
 * MeshSyncHealthServer:
 *
 * A small HTTP server for probes and scrapes, the counterpart of upstream MeshSync's health
 * endpoints (upstream listens on port %MESHSYNC_HEALTH_PORT on every address).
 *
 * - `GET /healthz` answers 200 `ok` while the process runs.
 * - `GET /readyz` answers 200 `ok` when at least one readiness check has been registered
 *   with [method@MeshSync.HealthServer.set_check] and all of them pass, and 503 `not ready`
 *   otherwise. With `?verbose` (or `?verbose=1`, `?verbose=true`) the body lists every check
 *   in registration order, Kubernetes style: `[+]name ok` or `[-]name failed: reason`, then
 *   `readyz check passed` or `readyz check failed`; the status code is the same.
 *   With [property@MeshSync.HealthServer:latch] set, the first time every check passes
 *   `/readyz` answers 200 for good, as upstream MeshSync's does; the verbose body still
 *   shows each check as it is now and ends `readyz check passed (latched)` while one fails.
 * - `GET /metrics` answers the daemon's metrics in the Prometheus text format 0.0.4.
 *
 * Every answer is plain text with `X-Content-Type-Options: nosniff` and closes the
 * connection (probes gain nothing from keep-alive). `HEAD` is answered like
 * `GET` without the body; other methods get 405, other paths 404.
 *
 * The server runs on the thread-default main context of the thread that calls
 * [method@MeshSync.HealthServer.listen]; call every method from that thread.
 */

struct _MeshSyncHealthServer {
	GObject parent_instance;

	SoupServer *server;  /* (owned) */
	MsdMetrics *metrics; /* (owned) */
	GPtrArray *checks;   /* (owned) (element-type MeshSyncHealthCheck): registration order */
	guint port;          /* 0 until listening */
	gboolean ready;
	gboolean latch; /* once ready, ready for good */
	gboolean latched;
};

typedef struct {
	gchar *name;   /* (owned) */
	gchar *reason; /* (owned) (nullable) */
	gboolean ok;
} MeshSyncHealthCheck;

enum {
	PROP_0,
	PROP_PORT,
	PROP_READY,
	PROP_LATCH,
	N_PROPS,
};

static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE(MeshSyncHealthServer, meshsync_health_server, G_TYPE_OBJECT)

static void
meshsync_health_check_free(gpointer data)
{
	MeshSyncHealthCheck *check = data;

	g_free(check->name);
	g_free(check->reason);
	g_free(check);
}

static gboolean
meshsync_health_server_compute_ready(MeshSyncHealthServer *self)
{
	if (self->latched)
		return TRUE;
	if (self->checks->len == 0)
		return FALSE;
	for (guint i = 0; i < self->checks->len; i++) {
		MeshSyncHealthCheck *check = g_ptr_array_index(self->checks, i);

		if (!check->ok)
			return FALSE;
	}
	return TRUE;
}

/* `?verbose`, `?verbose=` and any value other than `0` or `false` ask for the long form. */
static gboolean
meshsync_health_server_query_verbose(SoupServerMessage *msg)
{
	const gchar *query = g_uri_get_query(soup_server_message_get_uri(msg));
	g_auto(GStrv) pairs = NULL;

	if (query == NULL)
		return FALSE;
	pairs = g_strsplit(query, "&", -1);
	for (guint i = 0; pairs[i] != NULL; i++) {
		gchar *eq = strchr(pairs[i], '=');
		g_autofree gchar *name = NULL;
		g_autofree gchar *value = NULL;

		if (eq != NULL)
			*eq = '\0';
		name = g_uri_unescape_string(pairs[i], NULL);
		if (g_strcmp0(name, "verbose") != 0)
			continue;
		if (eq == NULL)
			return TRUE;
		value = g_uri_unescape_string(eq + 1, NULL);
		return value != NULL && g_strcmp0(value, "0") != 0 &&
		       g_ascii_strcasecmp(value, "false") != 0;
	}
	return FALSE;
}

static void
meshsync_health_server_respond(SoupServerMessage *msg,
                               guint status,
                               const gchar *content_type,
                               gchar *body)
{
	SoupMessageHeaders *headers = soup_server_message_get_response_headers(msg);

	soup_message_headers_replace(headers, "X-Content-Type-Options", "nosniff");
	soup_message_headers_replace(headers, "Cache-Control", "no-cache, private");
	/* libsoup 3.2 leaks the socket (and its fd) of an idle keep-alive connection that the
	 * client closes; probes come every few seconds, so never leave a connection idle. */
	soup_message_headers_replace(headers, "Connection", "close");
	soup_server_message_set_status(msg, status, NULL);
	soup_server_message_set_response(msg, content_type, SOUP_MEMORY_TAKE, body, strlen(body));
}

static gchar *
meshsync_health_server_readyz_body(MeshSyncHealthServer *self, gboolean ready, gboolean verbose)
{
	GString *body;
	gboolean all_pass = TRUE;

	if (!verbose)
		return g_strdup(ready ? "ok" : "not ready");
	body = g_string_new(NULL);
	for (guint i = 0; i < self->checks->len; i++) {
		MeshSyncHealthCheck *check = g_ptr_array_index(self->checks, i);

		if (check->ok) {
			g_string_append_printf(body, "[+]%s ok\n", check->name);
		} else {
			all_pass = FALSE;
			g_string_append_printf(body, "[-]%s failed: %s\n", check->name,
			                       check->reason != NULL ? check->reason
			                                             : "reason withheld");
		}
	}
	g_string_append_printf(body, "readyz check %s%s\n", ready ? "passed" : "failed",
	                       ready && !all_pass ? " (latched)" : "");
	return g_string_free(body, FALSE);
}

static void
meshsync_health_server_handle_cb(SoupServer *server,
                                 SoupServerMessage *msg,
                                 const gchar *path,
                                 GHashTable *query,
                                 gpointer user_data)
{
	MeshSyncHealthServer *self = MESHSYNC_HEALTH_SERVER(user_data);
	const gchar *method = soup_server_message_get_method(msg);
	const gchar *text_plain = "text/plain; charset=utf-8";
	gboolean is_healthz = g_str_equal(path, "/healthz");
	gboolean is_readyz = g_str_equal(path, "/readyz");
	gboolean is_metrics = g_str_equal(path, "/metrics");

	if (!is_healthz && !is_readyz && !is_metrics) {
		meshsync_health_server_respond(msg, SOUP_STATUS_NOT_FOUND, text_plain,
		                               g_strdup("404 page not found\n"));
		return;
	}
	if (!g_str_equal(method, SOUP_METHOD_GET) && !g_str_equal(method, SOUP_METHOD_HEAD)) {
		soup_message_headers_replace(soup_server_message_get_response_headers(msg), "Allow",
		                             "GET, HEAD");
		meshsync_health_server_respond(msg, SOUP_STATUS_METHOD_NOT_ALLOWED, text_plain,
		                               g_strdup("405 method not allowed\n"));
		return;
	}
	if (is_healthz) {
		meshsync_health_server_respond(msg, SOUP_STATUS_OK, text_plain, g_strdup("ok"));
	} else if (is_readyz) {
		gboolean verbose = meshsync_health_server_query_verbose(msg);

		meshsync_health_server_respond(
		        msg, self->ready ? SOUP_STATUS_OK : SOUP_STATUS_SERVICE_UNAVAILABLE,
		        text_plain, meshsync_health_server_readyz_body(self, self->ready, verbose));
	} else {
		meshsync_health_server_respond(msg, SOUP_STATUS_OK, MSD_METRICS_CONTENT_TYPE,
		                               msd_metrics_render(self->metrics));
	}
}

/* `127.0.0.1:11000`, `[::1]:11000`, or `*:11000` for every address. */
static gchar *
meshsync_health_server_describe(GInetAddress *address, guint port)
{
	g_autofree gchar *text = NULL;

	if (address == NULL)
		return g_strdup_printf("*:%u", port);
	text = g_inet_address_to_string(address);
	if (g_inet_address_get_family(address) == G_SOCKET_FAMILY_IPV6)
		return g_strdup_printf("[%s]:%u", text, port);
	return g_strdup_printf("%s:%u", text, port);
}

/**
 * meshsync_health_server_new:
 *
 * Creates a server that is not listening yet, with no readiness checks and an empty set of
 * metrics.
 *
 * Returns: (transfer full): a new health server
 */
MeshSyncHealthServer *
meshsync_health_server_new(void)
{
	return g_object_new(MESHSYNC_TYPE_HEALTH_SERVER, NULL);
}

/**
 * meshsync_health_server_listen:
 * @self: a health server
 * @address: (nullable): an IPv4 or IPv6 address to listen on, or %NULL for every address
 * @port: the TCP port, e.g. %MESHSYNC_HEALTH_PORT; 0 lets the system pick one (read it back
 *   with [method@MeshSync.HealthServer.get_port])
 * @error: return location for a #GError
 *
 * Starts answering requests on the thread-default main context of the calling thread. A
 * server listens once; after a failure it may try again (e.g. on another port).
 *
 * Returns: %TRUE if listening; %FALSE with %MESHSYNC_ERROR_INVALID_CONFIG for an address
 *   that is not an IP address, or %MESHSYNC_ERROR_FAILED naming the address and port when
 *   it cannot be bound (e.g. the port is in use)
 */
gboolean
meshsync_health_server_listen(MeshSyncHealthServer *self,
                              const gchar *address,
                              guint port,
                              GError **error)
{
	g_autoptr(GInetAddress) inet = NULL;
	g_autoptr(GError) local_error = NULL;
	g_autofree gchar *where = NULL;
	GSList *listeners;
	gboolean ok;

	g_return_val_if_fail(MESHSYNC_IS_HEALTH_SERVER(self), FALSE);
	g_return_val_if_fail(self->port == 0, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	if (port > G_MAXUINT16) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("health server: invalid port %u"), port);
		return FALSE;
	}
	if (address != NULL && *address != '\0') {
		inet = g_inet_address_new_from_string(address);
		if (inet == NULL) {
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            _("health server: ‘%s’ is not an IP address"), address);
			return FALSE;
		}
	}
	if (inet != NULL) {
		g_autoptr(GSocketAddress) socket_address = g_inet_socket_address_new(inet, port);

		ok = soup_server_listen(self->server, socket_address, 0, &local_error);
	} else {
		ok = soup_server_listen_all(self->server, port, 0, &local_error);
	}
	if (!ok) {
		/* listen_all may have bound one family before failing on the other. */
		soup_server_disconnect(self->server);
		where = meshsync_health_server_describe(inet, port);
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_FAILED,
		            _("health server: cannot listen on %s: %s"), where,
		            local_error->message);
		return FALSE;
	}

	listeners = soup_server_get_listeners(self->server);
	for (GSList *l = listeners; l != NULL && self->port == 0; l = l->next) {
		g_autoptr(GSocketAddress) local = g_socket_get_local_address(l->data, NULL);

		if (G_IS_INET_SOCKET_ADDRESS(local))
			self->port = g_inet_socket_address_get_port(G_INET_SOCKET_ADDRESS(local));
	}
	g_slist_free(listeners);
	where = meshsync_health_server_describe(inet, self->port);
	g_debug("health endpoints /healthz, /readyz and /metrics listening on %s", where);
	g_object_notify_by_pspec(G_OBJECT(self), props[PROP_PORT]);
	return TRUE;
}

/**
 * meshsync_health_server_get_port: (get-property port)
 * @self: a health server
 *
 * Gets the port the server listens on; useful after listening on port 0.
 *
 * Returns: the port, or 0 when not listening
 */
guint
meshsync_health_server_get_port(MeshSyncHealthServer *self)
{
	g_return_val_if_fail(MESHSYNC_IS_HEALTH_SERVER(self), 0);

	return self->port;
}

static void
meshsync_health_server_update_ready(MeshSyncHealthServer *self)
{
	gboolean ready = meshsync_health_server_compute_ready(self);

	if (ready && self->latch)
		self->latched = TRUE;
	if (ready != self->ready) {
		self->ready = ready;
		g_object_notify_by_pspec(G_OBJECT(self), props[PROP_READY]);
	}
}

/**
 * meshsync_health_server_set_check:
 * @self: a health server
 * @name: the check's name, e.g. `broker`
 * @ok: whether the check passes
 * @reason: (nullable): why it fails, shown by `/readyz?verbose`; ignored when @ok
 *
 * Registers a readiness check or updates it. `/readyz` answers 200 when every registered
 * check passes; checks are listed in the order they were first registered.
 */
void
meshsync_health_server_set_check(MeshSyncHealthServer *self,
                                 const gchar *name,
                                 gboolean ok,
                                 const gchar *reason)
{
	MeshSyncHealthCheck *check = NULL;

	g_return_if_fail(MESHSYNC_IS_HEALTH_SERVER(self));
	g_return_if_fail(name != NULL && *name != '\0');
	g_return_if_fail(strchr(name, '\n') == NULL);

	for (guint i = 0; i < self->checks->len && check == NULL; i++) {
		MeshSyncHealthCheck *candidate = g_ptr_array_index(self->checks, i);

		if (g_str_equal(candidate->name, name))
			check = candidate;
	}
	if (check == NULL) {
		check = g_new0(MeshSyncHealthCheck, 1);
		check->name = g_strdup(name);
		g_ptr_array_add(self->checks, check);
	}
	check->ok = ok;
	g_free(check->reason);
	check->reason = ok || reason == NULL || *reason == '\0' ? NULL : g_strdup(reason);

	meshsync_health_server_update_ready(self);
}

/**
 * meshsync_health_server_set_latch: (set-property latch)
 * @self: a health server
 * @latch: whether `/readyz` stays 200 once it has been
 *
 * Chooses upstream MeshSync's readiness (@latch %TRUE: ready for good from the first time
 * every check passes, so a broker blip never takes the pod out of its Service) or the strict
 * one (%FALSE, the default: ready exactly while every check passes). Turning the latch off
 * forgets that it had closed.
 */
void
meshsync_health_server_set_latch(MeshSyncHealthServer *self, gboolean latch)
{
	g_return_if_fail(MESHSYNC_IS_HEALTH_SERVER(self));

	latch = !!latch;
	if (self->latch == latch)
		return;
	self->latch = latch;
	if (!latch)
		self->latched = FALSE;
	g_object_notify_by_pspec(G_OBJECT(self), props[PROP_LATCH]);
	meshsync_health_server_update_ready(self);
}

/**
 * meshsync_health_server_get_latch: (get-property latch)
 * @self: a health server
 *
 * Gets whether `/readyz` stays 200 once it has been.
 *
 * Returns: %TRUE for upstream's latched readiness
 */
gboolean
meshsync_health_server_get_latch(MeshSyncHealthServer *self)
{
	g_return_val_if_fail(MESHSYNC_IS_HEALTH_SERVER(self), FALSE);

	return self->latch;
}

/**
 * meshsync_health_server_get_ready: (get-property ready)
 * @self: a health server
 *
 * Gets whether `/readyz` currently answers 200.
 *
 * Returns: %TRUE if at least one check is registered and every check passes, or, with
 *   [property@MeshSync.HealthServer:latch], if that has been so once
 */
gboolean
meshsync_health_server_get_ready(MeshSyncHealthServer *self)
{
	g_return_val_if_fail(MESHSYNC_IS_HEALTH_SERVER(self), FALSE);

	return self->ready;
}

/* Private: serve @metrics (a new reference is taken) on `/metrics`. */
void
meshsync_health_server_set_metrics(MeshSyncHealthServer *self, MsdMetrics *metrics)
{
	g_return_if_fail(MESHSYNC_IS_HEALTH_SERVER(self));
	g_return_if_fail(MSD_IS_METRICS(metrics));

	g_set_object(&self->metrics, metrics);
}

/* Private: the registry served on `/metrics` (transfer none). */
MsdMetrics *
meshsync_health_server_get_metrics(MeshSyncHealthServer *self)
{
	g_return_val_if_fail(MESHSYNC_IS_HEALTH_SERVER(self), NULL);

	return self->metrics;
}

static void
meshsync_health_server_get_property(GObject *object,
                                    guint prop_id,
                                    GValue *value,
                                    GParamSpec *pspec)
{
	MeshSyncHealthServer *self = MESHSYNC_HEALTH_SERVER(object);

	switch (prop_id) {
	case PROP_PORT:
		g_value_set_uint(value, self->port);
		break;
	case PROP_READY:
		g_value_set_boolean(value, self->ready);
		break;
	case PROP_LATCH:
		g_value_set_boolean(value, self->latch);
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
		break;
	}
}

static void
meshsync_health_server_set_property(GObject *object,
                                    guint prop_id,
                                    const GValue *value,
                                    GParamSpec *pspec)
{
	MeshSyncHealthServer *self = MESHSYNC_HEALTH_SERVER(object);

	switch (prop_id) {
	case PROP_LATCH:
		meshsync_health_server_set_latch(self, g_value_get_boolean(value));
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
		break;
	}
}

static void
meshsync_health_server_dispose(GObject *object)
{
	MeshSyncHealthServer *self = MESHSYNC_HEALTH_SERVER(object);

	if (self->server != NULL) {
		soup_server_remove_handler(self->server, NULL);
		soup_server_disconnect(self->server);
		g_clear_object(&self->server);
	}
	g_clear_object(&self->metrics);

	G_OBJECT_CLASS(meshsync_health_server_parent_class)->dispose(object);
}

static void
meshsync_health_server_finalize(GObject *object)
{
	MeshSyncHealthServer *self = MESHSYNC_HEALTH_SERVER(object);

	g_ptr_array_unref(self->checks);

	G_OBJECT_CLASS(meshsync_health_server_parent_class)->finalize(object);
}

static void
meshsync_health_server_class_init(MeshSyncHealthServerClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->get_property = meshsync_health_server_get_property;
	object_class->set_property = meshsync_health_server_set_property;
	object_class->dispose = meshsync_health_server_dispose;
	object_class->finalize = meshsync_health_server_finalize;

	/**
	 * MeshSyncHealthServer:port: (getter get_port)
	 *
	 * The port the server listens on, 0 before [method@MeshSync.HealthServer.listen]
	 * succeeds.
	 */
	props[PROP_PORT] = g_param_spec_uint("port", NULL, NULL, 0, G_MAXUINT16, 0,
	                                     G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

	/**
	 * MeshSyncHealthServer:ready: (getter get_ready)
	 *
	 * Whether `/readyz` answers 200: at least one check is registered and all pass.
	 * Notified when it changes.
	 */
	props[PROP_READY] = g_param_spec_boolean("ready", NULL, NULL, FALSE,
	                                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

	/**
	 * MeshSyncHealthServer:latch: (getter get_latch) (setter set_latch)
	 *
	 * Whether `/readyz` stays 200 once every check has passed, as upstream MeshSync's
	 * does. Off by default.
	 */
	props[PROP_LATCH] = g_param_spec_boolean("latch", NULL, NULL, FALSE,
	                                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
	                                                 G_PARAM_EXPLICIT_NOTIFY);

	g_object_class_install_properties(object_class, N_PROPS, props);
}

static void
meshsync_health_server_init(MeshSyncHealthServer *self)
{
	self->server = soup_server_new(NULL, NULL);
	self->metrics = msd_metrics_new();
	self->checks = g_ptr_array_new_with_free_func(meshsync_health_check_free);
	soup_server_add_handler(self->server, NULL, meshsync_health_server_handle_cb, self, NULL);
}
