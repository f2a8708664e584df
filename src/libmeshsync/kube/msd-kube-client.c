/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * One file: one request's life (credentials, TLS decision, send, status and Retry-After, body
 * or stream, retries) runs through shared request state from the first call to the last
 * callback; what stands alone lives beside it (kubeconfig, credentials, exec plugin, the stream
 * gzip decoder).
 */

#define G_LOG_DOMAIN "MeshSyncKube"

#include "config.h"

#include <inttypes.h>
#include <string.h>

#include <json-glib/json-glib.h>
#include <libsoup/soup.h>

#include "meshsync-error.h"
#include "meshsync-kube-config-private.h"
#include "kube/msd-kube-client.h"
#include "kube/msd-https-proxy.h"
#include "kube/msd-inflate-input-stream.h"
#include "kube/msd-proxy-resolver.h"
#include "kube/msd-read-ahead-proxy.h"
#include "util/msd-json-object.h"
#include "util/msd-i18n.h"
#include "util/msd-silence.h"
#include "util/msd-log.h"

/* Informers keep one watch connection per resource type open (HTTP/1.1 cannot multiplex),
 * so libsoup's default of 2 connections per host would starve every list behind them. */
#define MSD_KUBE_CLIENT_MAX_CONNS_PER_HOST 256
#define MSD_KUBE_CLIENT_MAX_CONNS          512

/* libsoup gives up on a socket that is silent for 60 s, and a quiet watch is silent that long
 * between the server's roughly one-minute bookmarks. Five minutes still finds a dead connection
 * well before a watch's own 5-10 minute lifetime would. */
#define MSD_KUBE_CLIENT_IO_TIMEOUT_SECONDS 300

/* A new connection must be made, through any proxy and TLS handshake included, within this
 * many seconds; client-go allows 30 s to dial and 10 s for the handshake. libsoup has no such
 * bound of its own, so a proxy that accepts and never answers would hold a request for the
 * whole I/O timeout. MESHSYNC_KUBE_CONNECT_TIMEOUT (seconds) changes it, for the tests. */
#define MSD_KUBE_CLIENT_CONNECT_TIMEOUT_SECONDS 40

/* A whole-body answer (a list page, discovery) that receives nothing, headers or body, for this
 * many seconds is given up, and so is a streamed one (a watch) that receives no headers: a
 * connection that a NAT gateway or a firewall forgot drops packets without a FIN or a RST, and only
 * the I/O timeout would end the wait minutes later. A real server streams a list page without
 * pauses; 30 s matches the bound on silent watches (see msd-informer.c).
 * MESHSYNC_KUBE_STALL_TIMEOUT (seconds) changes it, for the tests. */
#define MSD_KUBE_CLIENT_STALL_SECONDS       30
#define MSD_KUBE_CLIENT_STALL_CHECK_SECONDS 2

/* After a connection was found black-holed, the pooled ones opened before it are suspect too
 * (the same gateway forgot them all): requests go on new connections until libsoup's idle
 * timeout (60 s) has closed every connection that sat unused meanwhile. */
#define MSD_KUBE_CLIENT_DISTRUST_USEC (60 * G_USEC_PER_SEC)

/* How much of a non-JSON error body is quoted in an error message. */
#define MSD_KUBE_CLIENT_ERROR_BODY_MAX 200

/* The largest response body read whole (after gzip): a list page of 500 objects stays far
 * below it (a real object is at most 1.5 MiB in etcd, typically 2-20 KiB), while a response
 * that never ends stops here instead of growing without bound. Error bodies are only quoted,
 * so a little is enough. */
#define MSD_KUBE_CLIENT_MAX_BODY       (256 * 1024 * 1024)
#define MSD_KUBE_CLIENT_MAX_ERROR_BODY (1024 * 1024)
#define MSD_KUBE_CLIENT_READ_CHUNK     (64 * 1024)

struct _MsdKubeClient {
	GObject parent_instance;

	MeshSyncKubeConfig *config; /* (owned) */
	SoupSession *session;       /* (owned) */
	GProxyResolver *proxy;      /* (owned) (nullable): NULL means always direct */
	gchar *server;              /* (owned): base URL without a trailing slash */
	gchar *server_name;         /* (owned): the name the certificate must carry */
	guint16 port;
	GList *ca_certificates; /* (owned) (element-type GTlsCertificate) (nullable): NULL means
	                         * the system trust store */
	gboolean insecure;
	gboolean uncompressed; /* the cluster's disable-compression: gzip is not asked for */
	gboolean http2;        /* offered in the TLS handshake (MeshSyncKubeConfig:http2) */
	guint connect_timeout;
	guint stall_timeout;
	gint64 distrust_until; /* monotonic µs: until then, no request takes a pooled connection */
	gsize max_body;
};

G_DEFINE_FINAL_TYPE(MsdKubeClient, msd_kube_client, G_TYPE_OBJECT)

/* One GET, carried through credentials, send, a possible 401 retry and the body read. */
typedef struct {
	MsdKubeClient *client; /* (unowned): the task's source object keeps it alive */
	gchar *path_and_query; /* (owned) */
	gchar *url;            /* (owned) */
	gboolean stream;       /* hand the body stream over instead of reading it */
	gboolean one_shot;     /* MSD_KUBE_REQUEST_ONE_SHOT: its connection is not kept */
	gboolean fresh;        /* MSD_KUBE_REQUEST_NEW_CONNECTION: not one from the pool */
	gboolean metadata;     /* MSD_KUBE_REQUEST_METADATA: PartialObjectMetadata asked for */
	GStrv ws_protocols;    /* (owned) (nullable): a WebSocket upgrade offering these */
	gboolean retried;      /* a 401 was answered already */
	SoupMessage *msg;      /* (owned) (nullable) */
	gchar *tls_reason;     /* (owned) (nullable): why the certificate was refused */
	GInputStream *body;    /* (owned) (nullable): the response being read */
	GByteArray *read;      /* (owned) (nullable): what was read of it */
	gsize read_max;        /* its limit */
	GCancellable *send_cancellable; /* (owned) (nullable): the send alone, chained to the
	                                 * task's */
	gulong chain_id;                /* on the task's cancellable */
	GSource *connect_timer;         /* (owned) (nullable): a new connection is being made */
	gboolean connect_timed_out;
	gboolean proxy_negotiating; /* between a proxy's first byte and its tunnel */
	GCancellable *chained; /* (owned) (nullable): the task's cancellable, chain_id is on it */
	GSource *stall_timer;  /* (owned) (nullable): an answer (or a stream's headers) awaited */
	gint64 heard_at;       /* monotonic µs: the request written, or its last bytes */
	gint64 checked_at;     /* monotonic µs: the stall bound's last check */
	gboolean written;      /* the request went out: the answer's wait has begun */
	gboolean stalled;
} MsdKubeRequest;

static gboolean msd_kube_client_accept_certificate_cb(SoupMessage *msg,
                                                      GTlsCertificate *peer,
                                                      GTlsCertificateFlags errors,
                                                      gpointer user_data);

static void msd_kube_client_wrote_headers_cb(SoupMessage *msg, gpointer user_data);

static void msd_kube_client_connect_event_cb(SoupMessage *msg,
                                             GSocketClientEvent event,
                                             GIOStream *connection,
                                             gpointer user_data);

static void
msd_kube_request_stop_connect_timer(MsdKubeRequest *req)
{
	if (req->connect_timer != NULL) {
		g_source_destroy(req->connect_timer);
		g_clear_pointer(&req->connect_timer, g_source_unref);
	}
}

static void
msd_kube_request_stop_stall_timer(MsdKubeRequest *req)
{
	if (req->stall_timer != NULL) {
		g_source_destroy(req->stall_timer);
		g_clear_pointer(&req->stall_timer, g_source_unref);
	}
}

/* Ends the link that cancels the send (and a whole body's reads) with the task. */
static void
msd_kube_request_unchain(MsdKubeRequest *req)
{
	if (req->chain_id != 0)
		g_cancellable_disconnect(req->chained, req->chain_id);
	req->chain_id = 0;
	g_clear_object(&req->chained);
}

static void
msd_kube_request_clear_message(MsdKubeRequest *req)
{
	msd_kube_request_stop_connect_timer(req);
	msd_kube_request_stop_stall_timer(req);
	if (req->msg != NULL) {
		g_signal_handlers_disconnect_by_func(req->msg, msd_kube_client_connect_event_cb,
		                                     req);
		g_signal_handlers_disconnect_by_func(req->msg, msd_kube_client_wrote_headers_cb,
		                                     req);
	}
	/* a stream handed out keeps the message alive longer than this request */
	if (req->msg != NULL)
		g_signal_handlers_disconnect_by_func(req->msg,
		                                     msd_kube_client_accept_certificate_cb, req);
	g_clear_object(&req->msg);
}

static void
msd_kube_request_free(MsdKubeRequest *req)
{
	msd_kube_request_clear_message(req);
	msd_kube_request_unchain(req);
	g_free(req->path_and_query);
	g_free(req->url);
	g_free(req->tls_reason);
	g_strfreev(req->ws_protocols);
	g_clear_object(&req->body);
	g_clear_pointer(&req->read, g_byte_array_unref);
	g_clear_object(&req->send_cancellable);
	g_free(req);
}

static void msd_kube_client_request_start(GTask *task);

static void
msd_kube_client_finalize(GObject *object)
{
	MsdKubeClient *self = MSD_KUBE_CLIENT(object);

	g_clear_object(&self->session);
	g_clear_object(&self->proxy);
	g_clear_object(&self->config);
	g_list_free_full(self->ca_certificates, g_object_unref);
	g_free(self->server);
	g_free(self->server_name);

	G_OBJECT_CLASS(msd_kube_client_parent_class)->finalize(object);
}

static void
msd_kube_client_class_init(MsdKubeClientClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->finalize = msd_kube_client_finalize;
}

static void
msd_kube_client_init(MsdKubeClient *self)
{
	self->max_body = MSD_KUBE_CLIENT_MAX_BODY;
}

/* g_tls_certificate_new_from_pem() keeps only the first certificate (the rest become its
 * issuer chain), but every certificate of a CA bundle is a trust anchor of its own. */
static GList *
msd_kube_client_parse_ca_bundle(GBytes *pem, const gchar *source, GError **error)
{
	const gchar begin[] = "-----BEGIN CERTIFICATE-----";
	const gchar end[] = "-----END CERTIFICATE-----";
	g_autofree gchar *text = NULL;
	GList *list = NULL;
	const gchar *p;
	gsize size = 0;
	const gchar *data = g_bytes_get_data(pem, &size);

	text = g_strndup(data, size);
	p = text;
	while ((p = strstr(p, begin)) != NULL) {
		const gchar *stop = strstr(p, end);
		g_autoptr(GTlsCertificate) cert = NULL;
		g_autoptr(GError) error_local = NULL;

		if (stop == NULL)
			break;
		stop += strlen(end);
		cert = g_tls_certificate_new_from_pem(p, stop - p, &error_local);
		if (cert == NULL) {
			g_list_free_full(list, g_object_unref);
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            _("%s: certificate-authority: %s"), source,
			            error_local->message);
			return NULL;
		}
		list = g_list_append(list, g_steal_pointer(&cert));
		p = stop;
	}
	if (list == NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: certificate-authority: no PEM certificate found"), source);
	}
	return list;
}

static const gchar *
msd_kube_client_getenv_either(const gchar *upper, const gchar *lower)
{
	const gchar *value = g_getenv(upper);

	if (value == NULL || value[0] == '\0')
		value = g_getenv(lower);
	if (value == NULL || value[0] == '\0')
		return NULL;
	return value;
}

/* The cluster's proxy-url first, else HTTPS_PROXY, HTTP_PROXY and NO_PROXY, as client-go;
 * the desktop's proxy settings (GIO's default resolver) mean nothing to a cluster daemon.
 * A direct https connection is read ahead under its TLS (msd-read-ahead-stream.c), which
 * GIO lets only a proxy resolver arrange. Returns NULL, a plain direct connection, when no
 * proxy is set and reading ahead is off (MESHSYNC_READ_AHEAD=0). */
static GProxyResolver *
msd_kube_client_proxy_resolver_new(MeshSyncKubeConfig *config)
{
	const gchar *proxy_url = meshsync_kube_config_get_proxy_url(config);
	const gchar *https_proxy = msd_kube_client_getenv_either("HTTPS_PROXY", "https_proxy");
	const gchar *http_proxy = msd_kube_client_getenv_either("HTTP_PROXY", "http_proxy");
	gboolean read_ahead = msd_read_ahead_enabled();
	MsdProxyResolver *resolver;

	if (proxy_url != NULL)
		return G_PROXY_RESOLVER(msd_proxy_resolver_new_fixed(proxy_url));
	if (https_proxy == NULL && http_proxy == NULL) {
		if (!read_ahead)
			return NULL;
		resolver = msd_proxy_resolver_new_direct();
	} else {
		resolver = msd_proxy_resolver_new_from_env(
		        https_proxy, http_proxy,
		        msd_kube_client_getenv_either("NO_PROXY", "no_proxy"));
	}
	msd_proxy_resolver_set_read_ahead(resolver, read_ahead);
	return G_PROXY_RESOLVER(resolver);
}

/**
 * msd_kube_client_new:
 * @config: the configuration of the API server and its credentials
 * @error: return location for a #GError
 *
 * Creates a client for the API server named by @config. Nothing is sent yet.
 *
 * Returns: (transfer full): a new client, or %NULL if the server URL or the CA is unusable
 */
MsdKubeClient *
msd_kube_client_new(MeshSyncKubeConfig *config, GError **error)
{
	g_autoptr(MsdKubeClient) self = NULL;
	g_autoptr(GUri) uri = NULL;
	g_autoptr(GError) error_local = NULL;
	g_autofree gchar *user_agent = NULL;
	g_autoptr(GProxyResolver) proxy_resolver = NULL;
	const gchar *server;
	const gchar *source;
	GBytes *ca_pem;
	gint port;

	g_return_val_if_fail(MESHSYNC_IS_KUBE_CONFIG(config), NULL);

	server = meshsync_kube_config_get_server(config);
	source = meshsync_kube_config_get_source(config);
	if (source == NULL)
		source = "kubeconfig";
	if (server == NULL || server[0] == '\0') {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: cluster.server is empty"), source);
		return NULL;
	}
	uri = g_uri_parse(server, G_URI_FLAGS_NONE, &error_local);
	if (uri == NULL || g_uri_get_host(uri) == NULL ||
	    (g_strcmp0(g_uri_get_scheme(uri), "https") != 0 &&
	     g_strcmp0(g_uri_get_scheme(uri), "http") != 0)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: cluster.server %s is not an http(s) URL"), source, server);
		return NULL;
	}

	self = g_object_new(MSD_TYPE_KUBE_CLIENT, NULL);
	self->config = g_object_ref(config);
	self->server = g_strdup(server);
	while (g_str_has_suffix(self->server, "/"))
		self->server[strlen(self->server) - 1] = '\0';
	port = g_uri_get_port(uri);
	if (port < 0)
		port = g_strcmp0(g_uri_get_scheme(uri), "https") == 0 ? 443 : 80;
	self->port = (guint16)port;
	self->uncompressed = meshsync_kube_config_get_disable_compression(config);
	if (meshsync_kube_config_get_tls_server_name(config) != NULL &&
	    meshsync_kube_config_get_tls_server_name(config)[0] != '\0')
		self->server_name = g_strdup(meshsync_kube_config_get_tls_server_name(config));
	else
		self->server_name = g_strdup(g_uri_get_host(uri));
	self->insecure = meshsync_kube_config_get_insecure_skip_tls_verify(config);
	self->http2 = meshsync_kube_config_get_http2(config);
	self->connect_timeout = MSD_KUBE_CLIENT_CONNECT_TIMEOUT_SECONDS;
	if (g_getenv("MESHSYNC_KUBE_CONNECT_TIMEOUT") != NULL) {
		guint64 seconds =
		        g_ascii_strtoull(g_getenv("MESHSYNC_KUBE_CONNECT_TIMEOUT"), NULL, 10);
		if (seconds > 0 && seconds <= 3600)
			self->connect_timeout = (guint)seconds;
	}
	self->stall_timeout = MSD_KUBE_CLIENT_STALL_SECONDS;
	if (g_getenv("MESHSYNC_KUBE_STALL_TIMEOUT") != NULL) {
		guint64 seconds =
		        g_ascii_strtoull(g_getenv("MESHSYNC_KUBE_STALL_TIMEOUT"), NULL, 10);
		if (seconds > 0 && seconds <= 3600)
			self->stall_timeout = (guint)seconds;
	}
	/* honoured, as kubectl does, but never silently: anyone on the path can impersonate
	 * the API server and read the bearer token */
	if (self->insecure && g_str_has_prefix(self->server, "https:"))
		g_warning("TLS verification of the API server %s is off (insecure-skip-tls-verify "
		          "in %s): its certificate is not checked",
		          self->server, source);

	ca_pem = meshsync_kube_config_get_ca_pem(config);
	if (ca_pem != NULL && !self->insecure) {
		self->ca_certificates = msd_kube_client_parse_ca_bundle(ca_pem, source, error);
		if (self->ca_certificates == NULL)
			return NULL;
	}

	user_agent = g_strdup_printf("meshsync/%s (linux) libsoup", PACKAGE_VERSION);
	proxy_resolver = msd_kube_client_proxy_resolver_new(config);
	self->session = soup_session_new_with_options(
	        "user-agent", user_agent, "max-conns", MSD_KUBE_CLIENT_MAX_CONNS,
	        "max-conns-per-host", MSD_KUBE_CLIENT_MAX_CONNS_PER_HOST, "proxy-resolver",
	        proxy_resolver, "timeout", MSD_KUBE_CLIENT_IO_TIMEOUT_SECONDS, NULL);
	self->proxy = g_steal_pointer(&proxy_resolver);
	if (self->proxy != NULL) {
		g_auto(GStrv) proxies =
		        g_proxy_resolver_lookup(self->proxy, self->server, NULL, NULL);

		/* an https proxy is checked as client-go checks it: with the cluster's CA */
		msd_https_proxy_register();
		if (proxies != NULL && proxies[0] != NULL && g_str_has_prefix(proxies[0], "https:"))
			msd_https_proxy_trust(proxies[0], g_uri_get_host(uri), self->port,
			                      self->ca_certificates, self->insecure);
	}
	/* Without a database every certificate reaches accept-certificate, where it is checked
	 * against the configured CA only (the system store must not widen that trust). */
	if (self->ca_certificates != NULL || self->insecure)
		soup_session_set_tls_database(self->session, NULL);

	return g_steal_pointer(&self);
}

/**
 * msd_kube_client_get_config:
 * @self: a #MsdKubeClient
 *
 * Returns: (transfer none): the configuration the client was made from
 */
MeshSyncKubeConfig *
msd_kube_client_get_config(MsdKubeClient *self)
{
	g_return_val_if_fail(MSD_IS_KUBE_CLIENT(self), NULL);
	return self->config;
}

/**
 * msd_kube_client_get_server:
 * @self: a #MsdKubeClient
 *
 * Returns: the server's base URL, without a trailing slash
 */
void
msd_kube_client_set_max_body(MsdKubeClient *self, gsize bytes)
{
	g_return_if_fail(MSD_IS_KUBE_CLIENT(self));
	self->max_body = MAX(bytes, 1);
}

void
msd_kube_client_distrust_pool(MsdKubeClient *self)
{
	g_return_if_fail(MSD_IS_KUBE_CLIENT(self));
	self->distrust_until = g_get_monotonic_time() + MSD_KUBE_CLIENT_DISTRUST_USEC;
}

const gchar *
msd_kube_client_get_server(MsdKubeClient *self)
{
	g_return_val_if_fail(MSD_IS_KUBE_CLIENT(self), NULL);
	return self->server;
}

static gboolean
msd_kube_client_is_check_list(const gchar *text, gsize size)
{
	return size >= 3 && (strncmp(text, "[+]", 3) == 0 || strncmp(text, "[-]", 3) == 0);
}

/* A health endpoint's answer (/readyz, /livez, /healthz) lists one check a line, "[+]name ok"
 * or "[-]name failed: reason withheld": the failing names are what says why. NULL when the
 * list names no failing check. */
static gchar *
msd_kube_client_failed_checks(const gchar *text, gsize size)
{
	g_autoptr(GString) failed = NULL;
	const gchar *end = text + size;

	for (const gchar *line = text; line < end;) {
		const gchar *nl = memchr(line, '\n', (gsize)(end - line));
		const gchar *stop = nl != NULL ? nl : end;

		if (stop - line > 3 && strncmp(line, "[-]", 3) == 0) {
			const gchar *name = line + 3;
			const gchar *space = memchr(name, ' ', (gsize)(stop - name));
			gsize length = (gsize)((space != NULL ? space : stop) - name);

			if (failed == NULL)
				failed = g_string_new("failing checks: ");
			else
				g_string_append(failed, ", ");
			/* a server's list is short; a hostile one is cut at the error's bound */
			if (failed->len + length > MSD_KUBE_CLIENT_ERROR_BODY_MAX) {
				g_string_append(failed, "...");
				break;
			}
			g_string_append_len(failed, name, (gssize)length);
		}
		line = stop + 1;
	}
	if (failed == NULL || !g_utf8_validate(failed->str, (gssize)failed->len, NULL))
		return NULL;
	return g_string_free(g_steal_pointer(&failed), FALSE);
}

static gchar *
msd_kube_client_status_message(GBytes *body)
{
	g_autoptr(JsonParser) parser = json_parser_new();
	JsonNode *root;
	JsonObject *obj;
	const gchar *data;
	gsize size = 0;

	if (body == NULL)
		return NULL;
	data = g_bytes_get_data(body, &size);
	if (size == 0)
		return NULL;
	/* json-glib 1.6 is lenient enough to "parse" a bare word, so look at the root */
	if (json_parser_load_from_data(parser, data, (gssize)size, NULL) &&
	    (root = json_parser_get_root(parser)) != NULL && JSON_NODE_HOLDS_OBJECT(root)) {
		obj = json_node_get_object(root);
		if (g_strcmp0(msd_json_object_get_string(obj, "kind"), "Status") != 0)
			return NULL;
		return g_strdup(msd_json_object_get_string(obj, "message"));
	}

	if (msd_kube_client_is_check_list(data, size)) {
		gchar *checks = msd_kube_client_failed_checks(data, size);

		if (checks != NULL)
			return checks;
	} else if (data[0] == '{' || data[0] == '[') {
		return NULL;
	}

	/* a plain-text answer (an aggregated API's proxy, a load balancer): quote its first
	 * line if it is readable text */
	{
		g_autofree gchar *text = g_strndup(data, MIN(size, MSD_KUBE_CLIENT_ERROR_BODY_MAX));
		gchar *nl = strpbrk(text, "\r\n");

		if (nl != NULL)
			*nl = '\0';
		g_strstrip(text);
		if (text[0] == '\0' || !g_utf8_validate(text, -1, NULL))
			return NULL;
		return g_steal_pointer(&text);
	}
}

/**
 * msd_kube_client_error_from_status:
 * @url: what was requested, as the message should name it: "GET https://host/path"
 * @status: the HTTP status
 * @body: (nullable): the response body
 *
 * Returns: (transfer full): "<url>: <status> <reason>[: <Status message>]" in the
 *   MESHSYNC_ERROR domain
 */
GError *
msd_kube_client_error_from_status(const gchar *url, guint status, GBytes *body)
{
	g_autofree gchar *message = msd_kube_client_status_message(body);
	const gchar *phrase = soup_status_get_phrase(status);
	MeshSyncError code;

	switch (status) {
	case SOUP_STATUS_UNAUTHORIZED:
		code = MESHSYNC_ERROR_UNAUTHORIZED;
		break;
	case SOUP_STATUS_FORBIDDEN:
		code = MESHSYNC_ERROR_FORBIDDEN;
		break;
	case SOUP_STATUS_NOT_FOUND:
		code = MESHSYNC_ERROR_NOT_FOUND;
		break;
	case SOUP_STATUS_GONE:
		code = MESHSYNC_ERROR_GONE;
		break;
	default:
		code = MESHSYNC_ERROR_HTTP;
	}
	if (phrase == NULL)
		phrase = "Unknown status";
	/* "401 Unauthorized: Unauthorized" says nothing twice */
	if (message != NULL && message[0] != '\0' && g_ascii_strcasecmp(message, phrase) != 0)
		return g_error_new(MESHSYNC_ERROR, code, "%s: %u %s: %s", url, status, phrase,
		                   message);
	return g_error_new(MESHSYNC_ERROR, code, "%s: %u %s", url, status, phrase);
}

/**
 * msd_kube_client_error_get_status:
 * @error: (nullable): an error from this client
 *
 * The HTTP status of an error made by msd_kube_client_error_from_status(). GError has no room
 * for data beyond its domain, code and message, and MESHSYNC_ERROR's codes are public, so the
 * status travels in the message, which that function alone writes: the request URL (which
 * holds no spaces), ": ", then the three digits. Reading it back here keeps the format private
 * to this file and survives g_prefix_error(), which only adds text in front.
 *
 * Returns: the status (100-599), or 0 for errors that did not come from an HTTP answer
 */
guint
msd_kube_client_error_get_status(const GError *error)
{
	const gchar *url;
	const gchar *p;

	if (error == NULL || error->domain != MESHSYNC_ERROR)
		return 0;
	switch (error->code) {
	case MESHSYNC_ERROR_UNAUTHORIZED:
	case MESHSYNC_ERROR_FORBIDDEN:
	case MESHSYNC_ERROR_NOT_FOUND:
	case MESHSYNC_ERROR_GONE:
	case MESHSYNC_ERROR_HTTP:
		break;
	default:
		return 0;
	}
	url = strstr(error->message, "://");
	if (url == NULL)
		return 0;
	p = strstr(url, ": ");
	/* a transport failure reported as MESHSYNC_ERROR_HTTP has text, not a status, here */
	if (p == NULL || !g_ascii_isdigit(p[2]) || !g_ascii_isdigit(p[3]) ||
	    !g_ascii_isdigit(p[4]) || (p[5] != ' ' && p[5] != '\0'))
		return 0;
	return (guint)((p[2] - '0') * 100 + (p[3] - '0') * 10 + (p[4] - '0'));
}

static const gchar *
msd_kube_client_tls_flags_reason(GTlsCertificateFlags flags)
{
	if (flags & G_TLS_CERTIFICATE_UNKNOWN_CA)
		return "is not trusted by the configured CA";
	if (flags & G_TLS_CERTIFICATE_BAD_IDENTITY)
		return "does not match the server name";
	if (flags & G_TLS_CERTIFICATE_EXPIRED)
		return "has expired";
	if (flags & G_TLS_CERTIFICATE_NOT_ACTIVATED)
		return "is not valid yet";
	if (flags & G_TLS_CERTIFICATE_REVOKED)
		return "has been revoked";
	if (flags & G_TLS_CERTIFICATE_INSECURE)
		return "uses an insecure algorithm";
	return "could not be verified";
}

static gboolean
msd_kube_client_accept_certificate_cb(SoupMessage *msg,
                                      GTlsCertificate *peer,
                                      GTlsCertificateFlags errors,
                                      gpointer user_data)
{
	MsdKubeRequest *req = user_data;
	MsdKubeClient *self = req->client;
	g_autoptr(GSocketConnectable) identity = NULL;
	GTlsCertificateFlags best = 0;
	gboolean first = TRUE;

	if (self->insecure)
		return TRUE;

	if (self->ca_certificates == NULL) {
		/* the system trust store already said no */
		g_free(req->tls_reason);
		req->tls_reason = g_strdup_printf(
		        "TLS certificate of %s:%u %s (system trust store)", self->server_name,
		        self->port, msd_kube_client_tls_flags_reason(errors));
		return FALSE;
	}

	identity = g_network_address_new(self->server_name, self->port);
	for (GList *l = self->ca_certificates; l != NULL; l = l->next) {
		GTlsCertificateFlags flags =
		        g_tls_certificate_verify(peer, identity, G_TLS_CERTIFICATE(l->data));

		if (flags == 0)
			return TRUE;
		/* report the CA that came closest: a name mismatch beats an unknown CA */
		if (first || !(flags & G_TLS_CERTIFICATE_UNKNOWN_CA))
			best = flags;
		first = FALSE;
	}
	g_free(req->tls_reason);
	if (best & G_TLS_CERTIFICATE_UNKNOWN_CA)
		req->tls_reason = g_strdup_printf(
		        "TLS certificate of %s:%u is not trusted by the configured CA",
		        self->server_name, self->port);
	else
		req->tls_reason =
		        g_strdup_printf("TLS certificate of %s:%u %s", self->server_name,
		                        self->port, msd_kube_client_tls_flags_reason(best));
	return FALSE;
}

/* The proxy @url goes through, its password hidden; NULL when it goes direct. */
static gchar *
msd_kube_client_proxy_for(MsdKubeClient *self, const gchar *url)
{
	g_auto(GStrv) proxies = NULL;

	if (self->proxy == NULL)
		return NULL;
	proxies = g_proxy_resolver_lookup(self->proxy, url, NULL, NULL);
	if (proxies == NULL || proxies[0] == NULL || g_str_equal(proxies[0], "direct://") ||
	    msd_read_ahead_proxy_uri_is(proxies[0]))
		return NULL;
	return msd_proxy_resolver_redact(proxies[0]);
}

static GError *
msd_kube_client_transport_error(MsdKubeRequest *req, const GError *error)
{
	g_autofree gchar *proxy = NULL;

	if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
		return g_error_copy(error);
	/* through a proxy, a refusal, a time-out or a name not found is most often the proxy's:
	 * say which proxy, and for which cluster, so that the fix is not sought on the server */
	proxy = msd_kube_client_proxy_for(req->client, req->url);
	/* an https proxy's own handshake (msd-https-proxy.c) comes before any certificate of
	 * the server is seen: a TLS failure there is the proxy's */
	if (proxy != NULL && req->tls_reason == NULL && req->proxy_negotiating &&
	    error->domain == G_TLS_ERROR) {
		const gchar *cluster = meshsync_kube_config_get_cluster_name(req->client->config);

		return g_error_new(MESHSYNC_ERROR, MESHSYNC_ERROR_TLS,
		                   _("GET %s through proxy %s (cluster %s): TLS handshake with the "
		                     "proxy failed: %s"),
		                   req->url, proxy, cluster != NULL ? cluster : "-",
		                   error->message);
	}
	if (proxy != NULL && req->tls_reason == NULL &&
	    (error->domain == G_IO_ERROR || error->domain == G_RESOLVER_ERROR)) {
		const gchar *cluster = meshsync_kube_config_get_cluster_name(req->client->config);

		return g_error_new(MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		                   _("GET %s through proxy %s (cluster %s): %s"), req->url, proxy,
		                   cluster != NULL ? cluster : "-", error->message);
	}
	if (proxy == NULL) {
		g_autofree gchar *direct = msd_read_ahead_direct_message(error->message);

		if (direct != NULL) {
			g_autoptr(GError) reworded =
			        g_error_new_literal(error->domain, error->code, direct);

			return msd_kube_client_transport_error(req, reworded);
		}
	}
	if (req->tls_reason != NULL)
		return g_error_new(MESHSYNC_ERROR, MESHSYNC_ERROR_TLS, _("GET %s: %s"), req->url,
		                   req->tls_reason);
	if (error->domain == G_TLS_ERROR)
		return g_error_new(MESHSYNC_ERROR, MESHSYNC_ERROR_TLS,
		                   _("GET %s: TLS handshake failed: %s"), req->url, error->message);
	if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED))
		return g_error_new(MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		                   _("GET %s: connection refused"), req->url);
	if (error->domain == G_IO_ERROR || error->domain == G_RESOLVER_ERROR)
		return g_error_new(MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION, _("GET %s: %s"),
		                   req->url, error->message);
	return g_error_new(MESHSYNC_ERROR, MESHSYNC_ERROR_HTTP, _("GET %s: %s"), req->url,
	                   error->message);
}

/* Returns TRUE when the request was started again with fresh credentials. */
static gboolean
msd_kube_client_maybe_retry(GTask *task, guint status)
{
	MsdKubeClient *self = g_task_get_source_object(task);
	MsdKubeRequest *req = g_task_get_task_data(task);

	if (status != SOUP_STATUS_UNAUTHORIZED || req->retried)
		return FALSE;
	/* an exec plugin's or token file's token may have been rotated: ask again once */
	msd_log(G_LOG_LEVEL_DEBUG, NULL, NULL, req->url,
	        "GET %s: 401, retrying with fresh credentials", req->url);
	req->retried = TRUE;
	meshsync_kube_config_invalidate_credentials(self->config);
	msd_kube_client_request_start(task);
	return TRUE;
}

/* A non-2xx answer: retried once after a 401 (credentials may have rotated), else the error. */
static void
msd_kube_client_return_status_error(GTask *task, guint status, GBytes *body)
{
	MsdKubeRequest *req = g_task_get_task_data(task);
	g_autofree gchar *what = NULL;

	GError *error;
	const gchar *retry_after = NULL;
	guint64 seconds = 0;

	if (msd_kube_client_maybe_retry(task, status))
		return;
	what = g_strdup_printf("GET %s", req->url);
	error = msd_kube_client_error_from_status(what, status, body);
	/* 429 and 503 may say when to come back; only the delay-seconds form is read (what
	 * API Priority and Fairness sends), and it travels at the end of the message */
	if (req->msg != NULL)
		retry_after = soup_message_headers_get_one(
		        soup_message_get_response_headers(req->msg), "Retry-After");
	if (retry_after != NULL &&
	    g_ascii_string_to_unsigned(retry_after, 10, 1, MSD_KUBE_CLIENT_MAX_RETRY_AFTER,
	                               &seconds, NULL)) {
		g_autofree gchar *message = g_steal_pointer(&error->message);

		error->message = g_strdup_printf("%s (retry after %" G_GUINT64_FORMAT " s)",
		                                 message, seconds);
	}
	g_task_return_error(task, error);
}

/**
 * msd_kube_client_error_get_retry_after:
 * @error: (nullable): an error from this client
 *
 * Returns: the seconds the server asked to wait with Retry-After, or 0
 */
guint
msd_kube_client_error_get_retry_after(const GError *error)
{
	const gchar *p;
	guint64 seconds = 0;
	g_autofree gchar *digits = NULL;

	if (msd_kube_client_error_get_status(error) == 0 ||
	    !g_str_has_suffix(error->message, " s)"))
		return 0;
	p = g_strrstr(error->message, " (retry after ");
	if (p == NULL)
		return 0;
	p += strlen(" (retry after ");
	digits = g_strndup(p, strspn(p, "0123456789"));
	if (!g_ascii_string_to_unsigned(digits, 10, 1, MSD_KUBE_CLIENT_MAX_RETRY_AFTER, &seconds,
	                                NULL))
		return 0;
	return (guint)seconds;
}

static void msd_kube_client_read_more(GTask *task);

/* The whole body is in: a 2xx hands it over, anything else becomes the error it describes. */
static void
msd_kube_client_body_done(GTask *task)
{
	MsdKubeRequest *req = g_task_get_task_data(task);
	g_autoptr(GBytes) body = g_byte_array_free_to_bytes(g_steal_pointer(&req->read));
	guint status = soup_message_get_status(req->msg);

	g_clear_object(&req->body);
	if (SOUP_STATUS_IS_SUCCESSFUL(status)) {
		g_task_return_pointer(task, g_steal_pointer(&body), (GDestroyNotify)g_bytes_unref);
		return;
	}
	msd_kube_client_return_status_error(task, status, body);
}

static void
msd_kube_client_body_read_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	MsdKubeRequest *req = g_task_get_task_data(task);
	g_autoptr(GError) error = NULL;
	gssize n = g_input_stream_read_finish(G_INPUT_STREAM(source), result, &error);
	guint status = soup_message_get_status(req->msg);

	if (n < 0 && req->stalled) {
		g_task_return_new_error(task, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		                        _("GET %s: nothing received for %u s in the middle of the "
		                          "answer; its connection is given up"),
		                        req->url, req->client->stall_timeout);
		return;
	}
	req->heard_at = g_get_monotonic_time();
	if (n < 0) {
		/* an error body cut short still leaves the status to report */
		if (!SOUP_STATUS_IS_SUCCESSFUL(status) &&
		    !g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
			g_byte_array_set_size(req->read,
			                      req->read->len - MSD_KUBE_CLIENT_READ_CHUNK);
			msd_kube_client_body_done(task);
			return;
		}
		g_task_return_error(task, msd_kube_client_transport_error(req, error));
		return;
	}
	g_byte_array_set_size(req->read, req->read->len - MSD_KUBE_CLIENT_READ_CHUNK + (guint)n);
	if (n == 0) {
		msd_kube_client_body_done(task);
		return;
	}
	if (req->read->len > req->read_max) {
		if (!SOUP_STATUS_IS_SUCCESSFUL(status)) {
			/* quoting the start of an error body is enough */
			msd_kube_client_body_done(task);
			return;
		}
		/* a body that never ends (or a hostile one) stops here: nothing grows without
		 * bound */
		g_task_return_new_error(task, MESHSYNC_ERROR, MESHSYNC_ERROR_TOO_LARGE,
		                        _("GET %s: response body exceeds the limit of %zu MiB"),
		                        req->url, req->read_max / (1024 * 1024));
		return;
	}
	msd_kube_client_read_more(g_steal_pointer(&task));
}

/* Reads straight into the growing buffer, a chunk at a time. */
static void
msd_kube_client_read_more(GTask *task)
{
	MsdKubeRequest *req = g_task_get_task_data(task);
	guint used = req->read->len;

	g_byte_array_set_size(req->read, used + MSD_KUBE_CLIENT_READ_CHUNK);
	/* the send's own cancellable, still chained to the task's: a stall cancels it alone */
	g_input_stream_read_async(req->body, req->read->data + used, MSD_KUBE_CLIENT_READ_CHUNK,
	                          G_PRIORITY_DEFAULT, req->send_cancellable,
	                          msd_kube_client_body_read_cb, task);
}

/* HTTP/1.1 only, unless HTTP/2 was asked for: libsoup offers "h2" in ALPN and has no public
 * switch but SOUP_FORCE_HTTP1 (process-wide); a client that offers only "http/1.1" in its
 * own handshakes gets HTTP/1.1 connections, each watch on its own, with TCP back-pressure. */
static void
msd_kube_client_network_event_cb(SoupMessage *msg,
                                 GSocketClientEvent event,
                                 GIOStream *connection,
                                 gpointer user_data)
{
	static const gchar *const http11[] = {"http/1.1", NULL};

	if (event == G_SOCKET_CLIENT_TLS_HANDSHAKING && G_IS_TLS_CONNECTION(connection))
		g_tls_connection_set_advertised_protocols(G_TLS_CONNECTION(connection), http11);
}

static void
msd_kube_request_chain_cancel(GCancellable *cancellable, gpointer user_data)
{
	g_cancellable_cancel(G_CANCELLABLE(user_data));
}

static gboolean
msd_kube_client_stall_check_cb(gpointer user_data)
{
	MsdKubeRequest *req = user_data;
	MsdKubeClient *self = req->client;

	/* a request waiting for a connection (libsoup queues it behind others being made, as
	 * in a burst of 50 sessions' TLS handshakes; a new one has its own bound) is not
	 * waiting for an answer yet */
	if (!req->written)
		return G_SOURCE_CONTINUE;
	if (msd_silence_check(&req->heard_at, &req->checked_at, g_get_monotonic_time(),
	                      MSD_KUBE_CLIENT_STALL_CHECK_SECONDS * G_USEC_PER_SEC) <=
	    (gint64)self->stall_timeout * G_USEC_PER_SEC)
		return G_SOURCE_CONTINUE;
	req->stalled = TRUE;
	msd_kube_client_distrust_pool(self);
	g_clear_pointer(&req->stall_timer, g_source_unref);
	g_cancellable_cancel(req->send_cancellable);
	return G_SOURCE_REMOVE;
}

static gboolean
msd_kube_client_connect_timeout_cb(gpointer user_data)
{
	MsdKubeRequest *req = user_data;

	req->connect_timed_out = TRUE;
	g_clear_pointer(&req->connect_timer, g_source_unref);
	g_cancellable_cancel(req->send_cancellable);
	return G_SOURCE_REMOVE;
}

/* The bound runs from the first step of a new connection to its last: the TLS handshake for
 * an https server (after a proxy's CONNECT), the TCP connection for an http one. A request
 * on a pooled connection sees none of these and is not bounded here. */
static void
msd_kube_client_connect_event_cb(SoupMessage *msg,
                                 GSocketClientEvent event,
                                 GIOStream *connection,
                                 gpointer user_data)
{
	MsdKubeRequest *req = user_data;
	gboolean https = g_str_has_prefix(req->url, "https:");

	if (event == G_SOCKET_CLIENT_PROXY_NEGOTIATING)
		req->proxy_negotiating = TRUE;
	else if (event == G_SOCKET_CLIENT_PROXY_NEGOTIATED)
		req->proxy_negotiating = FALSE;
	if ((event == G_SOCKET_CLIENT_RESOLVING || event == G_SOCKET_CLIENT_CONNECTING) &&
	    req->connect_timer == NULL && !req->connect_timed_out) {
		req->connect_timer = g_timeout_source_new_seconds(req->client->connect_timeout);
		g_source_set_callback(req->connect_timer, msd_kube_client_connect_timeout_cb, req,
		                      NULL);
		g_source_attach(req->connect_timer, g_main_context_get_thread_default());
	} else if ((https && event == G_SOCKET_CLIENT_TLS_HANDSHAKED) ||
	           (!https && event == G_SOCKET_CLIENT_COMPLETE)) {
		msd_kube_request_stop_connect_timer(req);
	}
}

/* Arms the new-connection bound for the message about to be sent: the send gets a
 * cancellable of its own, chained to the task's, that the bound's timer cancels. */
static void
msd_kube_client_arm_connect_bound(GTask *task)
{
	MsdKubeRequest *req = g_task_get_task_data(task);
	GCancellable *cancellable = g_task_get_cancellable(task);

	g_clear_object(&req->send_cancellable);
	req->send_cancellable = g_cancellable_new();
	req->connect_timed_out = FALSE;
	req->proxy_negotiating = FALSE;
	req->stalled = FALSE;
	msd_kube_request_unchain(req);
	if (cancellable != NULL) {
		req->chained = g_object_ref(cancellable);
		req->chain_id = g_cancellable_connect(
		        cancellable, G_CALLBACK(msd_kube_request_chain_cancel),
		        g_object_ref(req->send_cancellable), g_object_unref);
	}
	g_signal_connect(req->msg, "network-event", G_CALLBACK(msd_kube_client_connect_event_cb),
	                 req);
}

/* Disarms the bound once the send has finished; TRUE when the bound is what ended it (and
 * not the caller's own cancellation). The chain to the task's cancellable stays for a whole
 * body's reads, unless @unchain. */
static gboolean
msd_kube_client_connect_ended(GTask *task, gboolean unchain)
{
	MsdKubeRequest *req = g_task_get_task_data(task);

	msd_kube_request_stop_connect_timer(req);
	if (unchain)
		msd_kube_request_unchain(req);
	return req->connect_timed_out && !g_cancellable_is_cancelled(g_task_get_cancellable(task));
}

/* The answer's wait starts when the request is written. */
static void
msd_kube_client_wrote_headers_cb(SoupMessage *msg, gpointer user_data)
{
	MsdKubeRequest *req = user_data;

	req->written = TRUE;
	req->heard_at = g_get_monotonic_time();
	req->checked_at = req->heard_at;
}

/* The stall bound for an answer: a whole body throughout, a stream until its headers. */
static void
msd_kube_client_arm_stall_bound(MsdKubeRequest *req)
{
	msd_kube_request_stop_stall_timer(req);
	req->written = FALSE;
	g_signal_connect(req->msg, "wrote-headers", G_CALLBACK(msd_kube_client_wrote_headers_cb),
	                 req);
	req->stall_timer = g_timeout_source_new_seconds(MSD_KUBE_CLIENT_STALL_CHECK_SECONDS);
	g_source_set_callback(req->stall_timer, msd_kube_client_stall_check_cb, req, NULL);
	g_source_set_static_name(req->stall_timer, "[meshsync] kube request stall");
	g_source_attach(req->stall_timer, g_main_context_get_thread_default());
}

static GError *
msd_kube_client_connect_timeout_error(MsdKubeRequest *req)
{
	MsdKubeClient *self = req->client;
	g_autofree gchar *proxy = msd_kube_client_proxy_for(self, req->url);
	const gchar *cluster = meshsync_kube_config_get_cluster_name(self->config);

	if (proxy != NULL)
		return g_error_new(MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		                   _("GET %s through proxy %s (cluster %s): no connection within "
		                     "%u s"),
		                   req->url, proxy, cluster != NULL ? cluster : "-",
		                   self->connect_timeout);
	return g_error_new(MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
	                   _("GET %s: no connection within %u s"), req->url, self->connect_timeout);
}

static void
msd_kube_client_send_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	MsdKubeClient *self = g_task_get_source_object(task);
	MsdKubeRequest *req = g_task_get_task_data(task);
	g_autoptr(GInputStream) stream = NULL;
	g_autoptr(GError) error = NULL;
	gboolean timed_out;
	guint status;
	goffset announced;

	stream = soup_session_send_finish(SOUP_SESSION(source), result, &error);
	/* a stream handed over outlives the request: only a whole body's reads stay chained and
	 * bounded */
	timed_out = msd_kube_client_connect_ended(task, stream == NULL || req->stream);
	req->heard_at = g_get_monotonic_time();
	if (stream == NULL || req->stream)
		msd_kube_request_stop_stall_timer(req);
	if (stream == NULL && req->stalled &&
	    !g_cancellable_is_cancelled(g_task_get_cancellable(task))) {
		g_task_return_new_error(
		        task, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		        _("GET %s: no answer within %u s; its connection is given up"), req->url,
		        self->stall_timeout);
		return;
	}
	if (stream == NULL && timed_out) {
		g_task_return_error(task, msd_kube_client_connect_timeout_error(req));
		return;
	}
	if (stream == NULL) {
		g_task_return_error(task, msd_kube_client_transport_error(req, error));
		return;
	}
	status = soup_message_get_status(req->msg);
	/* libsoup hands a refused CONNECT over as the request's own status: an answer to an
	 * https request that came without a server certificate is the proxy's, not the API
	 * server's 403 or 502 */
	if (!SOUP_STATUS_IS_SUCCESSFUL(status) && g_str_has_prefix(req->url, "https:") &&
	    soup_message_get_tls_peer_certificate(req->msg) == NULL) {
		g_autofree gchar *proxy = msd_kube_client_proxy_for(self, req->url);
		const gchar *cluster = meshsync_kube_config_get_cluster_name(self->config);

		if (proxy != NULL) {
			g_task_return_new_error(
			        task, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
			        _("GET %s through proxy %s (cluster %s): the proxy answered %u %s"),
			        req->url, proxy, cluster != NULL ? cluster : "-", status,
			        soup_message_get_reason_phrase(req->msg));
			return;
		}
	}
	if (SOUP_STATUS_IS_SUCCESSFUL(status) && req->stream) {
		const gchar *encoding = soup_message_headers_get_one(
		        soup_message_get_response_headers(req->msg), "Content-Encoding");

		/* decoded here, not by libsoup: see msd-inflate-input-stream.h */
		if (encoding != NULL && (g_ascii_strcasecmp(encoding, "gzip") == 0 ||
		                         g_ascii_strcasecmp(encoding, "x-gzip") == 0)) {
			GInputStream *decoded = msd_inflate_input_stream_new(stream);

			g_object_unref(stream);
			stream = decoded;
		} else if (encoding != NULL && g_ascii_strcasecmp(encoding, "identity") != 0) {
			g_task_return_new_error(task, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
			                        _("GET %s: unsupported Content-Encoding \"%s\""),
			                        req->url, encoding);
			return;
		}
		g_task_return_pointer(task, g_steal_pointer(&stream), g_object_unref);
		return;
	}
	req->read_max =
	        SOUP_STATUS_IS_SUCCESSFUL(status) ? self->max_body : MSD_KUBE_CLIENT_MAX_ERROR_BODY;
	announced = soup_message_headers_get_content_length(
	        soup_message_get_response_headers(req->msg));
	if (SOUP_STATUS_IS_SUCCESSFUL(status) && announced > 0 &&
	    (guint64)announced > req->read_max &&
	    soup_message_headers_get_one(soup_message_get_response_headers(req->msg),
	                                 "Content-Encoding") == NULL) {
		g_task_return_new_error(task, MESHSYNC_ERROR, MESHSYNC_ERROR_TOO_LARGE,
		                        _("GET %s: response body of %" PRId64
		                          " bytes exceeds the limit of %zu MiB"),
		                        req->url, (gint64)announced, req->read_max / (1024 * 1024));
		return;
	}
	g_clear_object(&req->body);
	req->body = g_steal_pointer(&stream);
	g_clear_pointer(&req->read, g_byte_array_unref);
	req->read = g_byte_array_sized_new(
	        announced > 0 && (guint64)announced <= req->read_max ? (guint)announced + 1 : 0);
	msd_kube_client_read_more(g_steal_pointer(&task));
}

static void
msd_kube_client_websocket_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	MsdKubeRequest *req = g_task_get_task_data(task);
	g_autoptr(GError) error = NULL;
	SoupWebsocketConnection *conn;
	gboolean timed_out;
	guint status;

	conn = soup_session_websocket_connect_finish(SOUP_SESSION(source), result, &error);
	timed_out = msd_kube_client_connect_ended(task, TRUE);
	if (conn == NULL && timed_out) {
		g_task_return_error(task, msd_kube_client_connect_timeout_error(req));
		return;
	}
	if (conn != NULL) {
		g_task_return_pointer(task, conn, g_object_unref);
		return;
	}
	status = soup_message_get_status(req->msg);
	/* an answer other than 101: the body is gone by now, the status tells what it was */
	if (error->domain == SOUP_WEBSOCKET_ERROR && status != SOUP_STATUS_NONE &&
	    status != SOUP_STATUS_SWITCHING_PROTOCOLS) {
		msd_kube_client_return_status_error(task, status, NULL);
		return;
	}
	if (error->domain == SOUP_WEBSOCKET_ERROR) {
		g_task_return_new_error(task, MESHSYNC_ERROR, MESHSYNC_ERROR_NOT_SUPPORTED,
		                        _("GET %s: WebSocket upgrade refused: %s"), req->url,
		                        error->message);
		return;
	}
	g_task_return_error(task, msd_kube_client_transport_error(req, error));
}

static void
msd_kube_client_credentials_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	MsdKubeClient *self = g_task_get_source_object(task);
	MsdKubeRequest *req = g_task_get_task_data(task);
	g_autoptr(MeshSyncKubeCredentials) credentials = NULL;
	g_autoptr(GError) error = NULL;
	SoupMessageHeaders *headers;

	credentials = meshsync_kube_config_get_credentials_finish(MESHSYNC_KUBE_CONFIG(source),
	                                                          result, &error);
	if (error != NULL) {
		if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
			g_task_return_error(task, g_steal_pointer(&error));
		else
			g_task_return_new_error(task, MESHSYNC_ERROR,
			                        error->domain == MESHSYNC_ERROR
			                                ? (gint)error->code
			                                : MESHSYNC_ERROR_UNAUTHORIZED,
			                        _("GET %s: %s"), req->url, error->message);
		return;
	}

	msd_kube_request_clear_message(req);
	g_clear_pointer(&req->tls_reason, g_free);
	req->msg = soup_message_new("GET", req->url);
	if (req->msg == NULL) {
		g_task_return_new_error(task, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		                        _("GET %s: not a valid URL"), req->url);
		return;
	}
	if (!self->http2)
		g_signal_connect(req->msg, "network-event",
		                 G_CALLBACK(msd_kube_client_network_event_cb), NULL);
	headers = soup_message_get_request_headers(req->msg);
	if (!req->metadata)
		soup_message_headers_replace(headers, "Accept", "application/json");
	else if (req->stream)
		soup_message_headers_replace(headers, "Accept", MSD_KUBE_ACCEPT_METADATA);
	else
		soup_message_headers_replace(headers, "Accept", MSD_KUBE_ACCEPT_METADATA_LIST);
	/* without Accept-Encoding the server answers plain, as client-go's DisableCompression
	 * asks; libsoup's decoder would add one of its own */
	if (self->uncompressed)
		soup_message_disable_feature(req->msg, SOUP_TYPE_CONTENT_DECODER);
	else
		soup_message_headers_replace(headers, "Accept-Encoding", "gzip");
	if (req->fresh || g_get_monotonic_time() < self->distrust_until)
		soup_message_add_flags(req->msg, SOUP_MESSAGE_NEW_CONNECTION);
	/* not reusable: libsoup closes it when the answer ends instead of pooling it */
	if (req->one_shot)
		soup_message_headers_replace(headers, "Connection", "close");
	if (credentials != NULL && credentials->token != NULL && credentials->token[0] != '\0') {
		g_autofree gchar *auth = g_strdup_printf("Bearer %s", credentials->token);

		soup_message_headers_replace(headers, "Authorization", auth);
	}
	if (credentials != NULL && credentials->client_certificate != NULL)
		soup_message_set_tls_client_certificate(req->msg, credentials->client_certificate);
	g_signal_connect(req->msg, "accept-certificate",
	                 G_CALLBACK(msd_kube_client_accept_certificate_cb), req);

	if (req->ws_protocols != NULL) {
		/* WebSocket frames are never compressed by the API server, and the upgrade
		 * answer has no body */
		soup_message_headers_remove(headers, "Accept-Encoding");
		/* an upgrade always takes a new connection of its own: the same bound applies,
		 * or a proxy that never answers would hold the session for the I/O timeout */
		msd_kube_client_arm_connect_bound(task);
		soup_session_websocket_connect_async(
		        self->session, req->msg, NULL, req->ws_protocols, G_PRIORITY_DEFAULT,
		        req->send_cancellable, msd_kube_client_websocket_cb,
		        g_steal_pointer(&task));
		return;
	}
	/* a stream's gzip is undone by msd_inflate_input_stream, which reads every gzip member
	 * of a watch list (libsoup's decoder stops after the first: the stream stalls) */
	if (req->stream)
		soup_message_disable_feature(req->msg, SOUP_TYPE_CONTENT_DECODER);
	msd_kube_client_arm_connect_bound(task);
	msd_kube_client_arm_stall_bound(req);
	soup_session_send_async(self->session, req->msg, G_PRIORITY_DEFAULT, req->send_cancellable,
	                        msd_kube_client_send_cb, g_steal_pointer(&task));
}

/* Takes its own reference on @task for the credentials lookup. */
static void
msd_kube_client_request_start(GTask *task)
{
	MsdKubeClient *self = g_task_get_source_object(task);

	meshsync_kube_config_get_credentials_async(self->config, g_task_get_cancellable(task),
	                                           msd_kube_client_credentials_cb,
	                                           g_object_ref(task));
}

static GTask *
msd_kube_client_request_new(MsdKubeClient *self,
                            const gchar *path_and_query,
                            gboolean stream,
                            GCancellable *cancellable,
                            GAsyncReadyCallback callback,
                            gpointer user_data)
{
	GTask *task = g_task_new(self, cancellable, callback, user_data);
	MsdKubeRequest *req = g_new0(MsdKubeRequest, 1);

	req->client = self;
	req->path_and_query = g_strdup(path_and_query);
	req->url = g_strconcat(self->server, path_and_query[0] == '/' ? "" : "/", path_and_query,
	                       NULL);
	req->stream = stream;
	g_task_set_task_data(task, req, (GDestroyNotify)msd_kube_request_free);
	return task;
}

/* The two public request kinds differ only in @stream and their source tag. */
static void
msd_kube_client_request(MsdKubeClient *self,
                        const gchar *path_and_query,
                        gboolean stream,
                        MsdKubeRequestFlags flags,
                        gpointer source_tag,
                        GCancellable *cancellable,
                        GAsyncReadyCallback callback,
                        gpointer user_data)
{
	g_autoptr(GTask) task = NULL;

	g_return_if_fail(MSD_IS_KUBE_CLIENT(self));
	g_return_if_fail(path_and_query != NULL);
	g_return_if_fail(cancellable == NULL || G_IS_CANCELLABLE(cancellable));

	task = msd_kube_client_request_new(self, path_and_query, stream, cancellable, callback,
	                                   user_data);
	((MsdKubeRequest *)g_task_get_task_data(task))->one_shot =
	        (flags & MSD_KUBE_REQUEST_ONE_SHOT) != 0;
	((MsdKubeRequest *)g_task_get_task_data(task))->fresh =
	        (flags & MSD_KUBE_REQUEST_NEW_CONNECTION) != 0;
	((MsdKubeRequest *)g_task_get_task_data(task))->metadata =
	        (flags & MSD_KUBE_REQUEST_METADATA) != 0;
	g_task_set_source_tag(task, source_tag);
	msd_kube_client_request_start(task);
}

static gpointer
msd_kube_client_request_finish(MsdKubeClient *self,
                               GAsyncResult *result,
                               gpointer source_tag,
                               GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), NULL);
	g_return_val_if_fail(g_task_get_source_tag(G_TASK(result)) == source_tag, NULL);
	return g_task_propagate_pointer(G_TASK(result), error);
}

/**
 * msd_kube_client_get_async:
 * @self: a #MsdKubeClient
 * @path_and_query: the path below the server URL, with its query string
 * @cancellable: (nullable): a #GCancellable
 * @callback: called in the caller's thread-default main context when the body is read
 * @user_data: data for @callback
 *
 * GETs @path_and_query and reads the whole body of a 2xx answer.
 */
void
msd_kube_client_get_async(MsdKubeClient *self,
                          const gchar *path_and_query,
                          GCancellable *cancellable,
                          GAsyncReadyCallback callback,
                          gpointer user_data)
{
	msd_kube_client_get_full_async(self, path_and_query, MSD_KUBE_REQUEST_DEFAULT, cancellable,
	                               callback, user_data);
}

void
msd_kube_client_get_full_async(MsdKubeClient *self,
                               const gchar *path_and_query,
                               MsdKubeRequestFlags flags,
                               GCancellable *cancellable,
                               GAsyncReadyCallback callback,
                               gpointer user_data)
{
	/* one source tag for both entry points: msd_kube_client_get_finish() ends either */
	msd_kube_client_request(self, path_and_query, FALSE, flags, msd_kube_client_get_async,
	                        cancellable, callback, user_data);
}

/**
 * msd_kube_client_get_finish:
 * @self: a #MsdKubeClient
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Returns: (transfer full): the body, or %NULL with @error set
 */
GBytes *
msd_kube_client_get_finish(MsdKubeClient *self, GAsyncResult *result, GError **error)
{
	return msd_kube_client_request_finish(self, result, msd_kube_client_get_async, error);
}

/**
 * msd_kube_client_stream_async:
 * @self: a #MsdKubeClient
 * @path_and_query: the path below the server URL, with its query string
 * @cancellable: (nullable): a #GCancellable; it also stops the body stream later on
 * @callback: called in the caller's thread-default main context once the status is known
 * @user_data: data for @callback
 *
 * GETs @path_and_query and hands over the body stream of a 2xx answer: for watches and log
 * follows. A non-2xx answer is read in full and turned into an error.
 */
void
msd_kube_client_stream_async(MsdKubeClient *self,
                             const gchar *path_and_query,
                             GCancellable *cancellable,
                             GAsyncReadyCallback callback,
                             gpointer user_data)
{
	msd_kube_client_stream_full_async(self, path_and_query, MSD_KUBE_REQUEST_DEFAULT,
	                                  cancellable, callback, user_data);
}

void
msd_kube_client_stream_full_async(MsdKubeClient *self,
                                  const gchar *path_and_query,
                                  MsdKubeRequestFlags flags,
                                  GCancellable *cancellable,
                                  GAsyncReadyCallback callback,
                                  gpointer user_data)
{
	msd_kube_client_request(self, path_and_query, TRUE, flags, msd_kube_client_stream_async,
	                        cancellable, callback, user_data);
}

/**
 * msd_kube_client_stream_finish:
 * @self: a #MsdKubeClient
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Returns: (transfer full): the body stream (already decompressed), or %NULL with @error set
 */
GInputStream *
msd_kube_client_stream_finish(MsdKubeClient *self, GAsyncResult *result, GError **error)
{
	return msd_kube_client_request_finish(self, result, msd_kube_client_stream_async, error);
}

/**
 * msd_kube_client_websocket_async:
 * @self: a #MsdKubeClient
 * @path_and_query: the path below the server URL, with its query string
 * @protocols: the subprotocols to offer, most preferred first
 * @cancellable: (nullable): a #GCancellable
 * @callback: called in the caller's thread-default main context once the upgrade is done
 * @user_data: data for @callback
 *
 * Opens a WebSocket on @path_and_query with the client's credentials and TLS checks: for
 * exec and attach.
 */
void
msd_kube_client_websocket_async(MsdKubeClient *self,
                                const gchar *path_and_query,
                                const gchar *const *protocols,
                                GCancellable *cancellable,
                                GAsyncReadyCallback callback,
                                gpointer user_data)
{
	g_autoptr(GTask) task = NULL;
	MsdKubeRequest *req;

	g_return_if_fail(MSD_IS_KUBE_CLIENT(self));
	g_return_if_fail(path_and_query != NULL);
	g_return_if_fail(protocols != NULL && protocols[0] != NULL);

	task = msd_kube_client_request_new(self, path_and_query, FALSE, cancellable, callback,
	                                   user_data);
	g_task_set_source_tag(task, msd_kube_client_websocket_async);
	req = g_task_get_task_data(task);
	req->ws_protocols = g_strdupv((gchar **)protocols);
	msd_kube_client_request_start(task);
}

/**
 * msd_kube_client_websocket_finish:
 * @self: a #MsdKubeClient
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Returns: (transfer full): the open connection, or %NULL with @error set (a refused
 *   upgrade carries its HTTP status, see msd_kube_client_error_get_status())
 */
SoupWebsocketConnection *
msd_kube_client_websocket_finish(MsdKubeClient *self, GAsyncResult *result, GError **error)
{
	return msd_kube_client_request_finish(self, result, msd_kube_client_websocket_async, error);
}
