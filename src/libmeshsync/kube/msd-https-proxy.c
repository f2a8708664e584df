/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * The "https" proxy of GIO's proxy extension point, in place of GIO's own: TLS to the proxy,
 * then CONNECT through it. GIO's checks the proxy's certificate against the system trust
 * store only; Go's transport, and so client-go, checks it with the cluster's TLS settings
 * (its certificate-authority, insecure-skip-tls-verify), and so does this one: the kube
 * client registers those settings per proxy and server with msd_https_proxy_trust(). A
 * proxy with no settings registered is checked against the system trust store, as GIO's.
 * Registered process-wide, under a higher priority than GIO's, by msd_https_proxy_register().
 */

#define G_LOG_DOMAIN "MeshSyncKube"

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "kube/msd-https-proxy.h"
#include "util/msd-i18n.h"

/* a CONNECT answer's head is a status line and a few headers */
#define MSD_HTTPS_PROXY_MAX_REPLY 16384

typedef struct {
	GList *ca_certificates; /* (owned) (element-type GTlsCertificate) (nullable): NULL
	                         * means the system trust store */
	gboolean insecure;
} MsdHttpsProxyTrust;

struct _MsdHttpsProxy {
	GObject parent_instance;
};

static void msd_https_proxy_iface_init(GProxyInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(MsdHttpsProxy,
                              msd_https_proxy,
                              G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(G_TYPE_PROXY, msd_https_proxy_iface_init))

static GMutex trust_lock;
static GHashTable *trust_table; /* (element-type utf8 MsdHttpsProxyTrust) */

static void
msd_https_proxy_trust_free(MsdHttpsProxyTrust *trust)
{
	g_list_free_full(trust->ca_certificates, g_object_unref);
	g_free(trust);
}

static gpointer
msd_https_proxy_ref_copy(gconstpointer object, gpointer unused)
{
	return g_object_ref((gpointer)object);
}

static gchar *
msd_https_proxy_trust_key(const gchar *proxy_uri, const gchar *host, guint16 port)
{
	return g_strdup_printf("%s %s:%u", proxy_uri, host, port);
}

/**
 * msd_https_proxy_trust:
 * @proxy_uri: the proxy's URL, as the proxy resolver hands it over
 * @host: the API server's host, as in its URL
 * @port: the API server's port
 * @ca_certificates: (element-type GTlsCertificate) (nullable): the cluster's CA
 * @insecure: the cluster's insecure-skip-tls-verify
 *
 * Checks the certificate of @proxy_uri, on the way to @host:@port, as the cluster's
 * certificate is checked.
 */
void
msd_https_proxy_trust(const gchar *proxy_uri,
                      const gchar *host,
                      guint16 port,
                      GList *ca_certificates,
                      gboolean insecure)
{
	MsdHttpsProxyTrust *trust = g_new0(MsdHttpsProxyTrust, 1);

	trust->ca_certificates = g_list_copy_deep(ca_certificates, msd_https_proxy_ref_copy, NULL);
	trust->insecure = insecure;
	g_mutex_lock(&trust_lock);
	if (trust_table == NULL)
		trust_table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
		                                    (GDestroyNotify)msd_https_proxy_trust_free);
	g_hash_table_replace(trust_table, msd_https_proxy_trust_key(proxy_uri, host, port), trust);
	g_mutex_unlock(&trust_lock);
}

/**
 * msd_https_proxy_register:
 *
 * Makes #MsdHttpsProxy the process's "https" proxy. Idempotent.
 */
void
msd_https_proxy_register(void)
{
	static gsize done = 0;

	if (g_once_init_enter(&done)) {
		/* loads GIO's own proxies first, so that the extension point exists and ours
		 * is ranked against theirs */
		GProxy *builtin = g_proxy_get_default_for_protocol("https");

		g_clear_object(&builtin);
		g_io_extension_point_implement(G_PROXY_EXTENSION_POINT_NAME, MSD_TYPE_HTTPS_PROXY,
		                               "https", 100);
		g_once_init_leave(&done, 1);
	}
}

typedef struct {
	GIOStream *tls;               /* (owned) */
	GList *ca_certificates;       /* (owned) (element-type GTlsCertificate) */
	GSocketConnectable *identity; /* (owned) */
	gboolean insecure;
	gchar *request; /* (owned) */
	gboolean has_credentials;
	GByteArray *reply; /* (owned) */
	guint8 byte;
} MsdHttpsProxyConnect;

static void
msd_https_proxy_connect_free(MsdHttpsProxyConnect *data)
{
	/* the connection outlives this: its handler must not outlive @data */
	if (data->tls != NULL)
		g_signal_handlers_disconnect_by_data(data->tls, data);
	g_clear_object(&data->tls);
	g_list_free_full(data->ca_certificates, g_object_unref);
	g_clear_object(&data->identity);
	g_free(data->request);
	g_byte_array_unref(data->reply);
	g_free(data);
}

static gboolean
msd_https_proxy_accept_certificate_cb(GTlsConnection *conn,
                                      GTlsCertificate *peer,
                                      GTlsCertificateFlags errors,
                                      gpointer user_data)
{
	MsdHttpsProxyConnect *data = user_data;

	if (data->insecure)
		return TRUE;
	for (GList *l = data->ca_certificates; l != NULL; l = l->next)
		if (g_tls_certificate_verify(peer, data->identity, G_TLS_CERTIFICATE(l->data)) == 0)
			return TRUE;
	return FALSE;
}

/* The TLS connection to the proxy, checked as its cluster's server is. */
static MsdHttpsProxyConnect *
msd_https_proxy_connect_new(GIOStream *io_stream, GProxyAddress *address, GError **error)
{
	g_autoptr(GUri) uri =
	        g_uri_parse(g_proxy_address_get_uri(address), G_URI_FLAGS_HAS_PASSWORD, NULL);
	MsdHttpsProxyConnect *data = g_new0(MsdHttpsProxyConnect, 1);
	const gchar *user = g_proxy_address_get_username(address);
	const gchar *password = g_proxy_address_get_password(address);
	g_autofree gchar *host = NULL;
	g_autofree gchar *key = NULL;
	GString *request;
	MsdHttpsProxyTrust *trust = NULL;

	data->reply = g_byte_array_new();
	if (uri != NULL && g_uri_get_host(uri) != NULL)
		data->identity = g_network_address_new(
		        g_uri_get_host(uri),
		        g_uri_get_port(uri) > 0 ? (guint16)g_uri_get_port(uri) : 443);
	else
		data->identity = G_SOCKET_CONNECTABLE(g_object_ref(address));
	data->tls = G_IO_STREAM(g_tls_client_connection_new(io_stream, data->identity, error));
	if (data->tls == NULL) {
		msd_https_proxy_connect_free(data);
		return NULL;
	}

	key = msd_https_proxy_trust_key(g_proxy_address_get_uri(address),
	                                g_proxy_address_get_destination_hostname(address),
	                                g_proxy_address_get_destination_port(address));
	g_mutex_lock(&trust_lock);
	if (trust_table != NULL)
		trust = g_hash_table_lookup(trust_table, key);
	if (trust != NULL) {
		data->insecure = trust->insecure;
		data->ca_certificates =
		        g_list_copy_deep(trust->ca_certificates, msd_https_proxy_ref_copy, NULL);
	}
	g_mutex_unlock(&trust_lock);
	/* without a database every certificate reaches accept-certificate, where only the
	 * cluster's CA may vouch for it, as for the server */
	if (data->insecure || data->ca_certificates != NULL) {
		g_tls_connection_set_database(G_TLS_CONNECTION(data->tls), NULL);
		g_signal_connect(data->tls, "accept-certificate",
		                 G_CALLBACK(msd_https_proxy_accept_certificate_cb), data);
	}

	host = g_hostname_to_ascii(g_proxy_address_get_destination_hostname(address));
	if (host == NULL)
		host = g_strdup(g_proxy_address_get_destination_hostname(address));
	request = g_string_new(NULL);
	/* an IPv6 destination goes in brackets */
	if (strchr(host, ':') != NULL)
		g_string_append_printf(request, "CONNECT [%s]:%u HTTP/1.1\r\nHost: [%s]:%u\r\n",
		                       host, g_proxy_address_get_destination_port(address), host,
		                       g_proxy_address_get_destination_port(address));
	else
		g_string_append_printf(request, "CONNECT %s:%u HTTP/1.1\r\nHost: %s:%u\r\n", host,
		                       g_proxy_address_get_destination_port(address), host,
		                       g_proxy_address_get_destination_port(address));
	if (user != NULL) {
		g_autofree gchar *pair = g_strdup_printf("%s:%s", user, password ? password : "");
		g_autofree gchar *encoded = g_base64_encode((const guchar *)pair, strlen(pair));

		g_string_append_printf(request, "Proxy-Authorization: Basic %s\r\n", encoded);
		data->has_credentials = TRUE;
	}
	g_string_append(request, "\r\n");
	data->request = g_string_free(request, FALSE);
	return data;
}

/* TRUE once the answer's head is complete. */
static gboolean
msd_https_proxy_reply_done(MsdHttpsProxyConnect *data)
{
	const guint8 *end = data->reply->data + data->reply->len;

	return data->reply->len >= 4 && memcmp(end - 4, "\r\n\r\n", 4) == 0;
}

/* Reads the CONNECT answer's status line: a 2xx opens the tunnel. */
static gboolean
msd_https_proxy_check_reply(MsdHttpsProxyConnect *data, GError **error)
{
	g_autofree gchar *head = g_strndup((const gchar *)data->reply->data, data->reply->len);
	g_autofree gchar *reason = NULL;
	const gchar *line_end = strstr(head, "\r\n");
	const gchar *p;
	guint64 status = 0;
	gchar *end = NULL;

	if (!g_str_has_prefix(head, "HTTP/1.") || strlen(head) < 12) {
		g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_PROXY_FAILED,
		                    _("the proxy's answer to CONNECT is not HTTP"));
		return FALSE;
	}
	p = head + 8;
	while (*p == ' ')
		p++;
	status = g_ascii_strtoull(p, &end, 10);
	if (end == p || status < 100 || status > 599) {
		g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_PROXY_FAILED,
		                    _("the proxy's answer to CONNECT is not HTTP"));
		return FALSE;
	}
	if (status >= 200 && status < 300)
		return TRUE;
	while (*end == ' ')
		end++;
	reason = g_strndup(end, line_end != NULL && line_end > end ? (gsize)(line_end - end) : 0);
	g_set_error(error, G_IO_ERROR,
	            status == 407   ? (data->has_credentials ? G_IO_ERROR_PROXY_AUTH_FAILED
	                                                     : G_IO_ERROR_PROXY_NEED_AUTH)
	            : status == 403 ? G_IO_ERROR_PROXY_NOT_ALLOWED
	                            : G_IO_ERROR_PROXY_FAILED,
	            _("the proxy answered %u %s"), (guint)status, reason);
	return FALSE;
}

static GIOStream *
msd_https_proxy_connect(GProxy *proxy,
                        GIOStream *io_stream,
                        GProxyAddress *proxy_address,
                        GCancellable *cancellable,
                        GError **error)
{
	MsdHttpsProxyConnect *data = msd_https_proxy_connect_new(io_stream, proxy_address, error);
	GIOStream *result = NULL;

	if (data == NULL)
		return NULL;
	if (!g_tls_connection_handshake(G_TLS_CONNECTION(data->tls), cancellable, error) ||
	    !g_output_stream_write_all(g_io_stream_get_output_stream(data->tls), data->request,
	                               strlen(data->request), NULL, cancellable, error))
		goto out;
	/* a byte at a time: what follows the answer's head is the tunnel's, not ours */
	while (!msd_https_proxy_reply_done(data)) {
		gssize n = g_input_stream_read(g_io_stream_get_input_stream(data->tls), &data->byte,
		                               1, cancellable, error);
		if (n < 0)
			goto out;
		if (n == 0 || data->reply->len >= MSD_HTTPS_PROXY_MAX_REPLY) {
			g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_PROXY_FAILED,
			                    _("the proxy closed the connection before answering "
			                      "CONNECT"));
			goto out;
		}
		g_byte_array_append(data->reply, &data->byte, 1);
	}
	if (msd_https_proxy_check_reply(data, error))
		result = g_object_ref(data->tls);
out:
	msd_https_proxy_connect_free(data);
	return result;
}

static void msd_https_proxy_read_cb(GObject *source, GAsyncResult *result, gpointer user_data);

static void
msd_https_proxy_read_next(GTask *task)
{
	MsdHttpsProxyConnect *data = g_task_get_task_data(task);

	g_input_stream_read_async(g_io_stream_get_input_stream(data->tls), &data->byte, 1,
	                          g_task_get_priority(task), g_task_get_cancellable(task),
	                          msd_https_proxy_read_cb, task);
}

static void
msd_https_proxy_read_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	MsdHttpsProxyConnect *data = g_task_get_task_data(task);
	GError *error = NULL;
	gssize n = g_input_stream_read_finish(G_INPUT_STREAM(source), result, &error);

	if (n < 0) {
		g_task_return_error(task, error);
		return;
	}
	if (n == 0 || data->reply->len >= MSD_HTTPS_PROXY_MAX_REPLY) {
		g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_PROXY_FAILED,
		                        _("the proxy closed the connection before answering "
		                          "CONNECT"));
		return;
	}
	g_byte_array_append(data->reply, &data->byte, 1);
	if (!msd_https_proxy_reply_done(data)) {
		msd_https_proxy_read_next(g_steal_pointer(&task));
		return;
	}
	if (!msd_https_proxy_check_reply(data, &error)) {
		g_task_return_error(task, error);
		return;
	}
	g_task_return_pointer(task, g_object_ref(data->tls), g_object_unref);
}

static void
msd_https_proxy_written_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	GError *error = NULL;

	if (!g_output_stream_write_all_finish(G_OUTPUT_STREAM(source), result, NULL, &error)) {
		g_task_return_error(task, error);
		return;
	}
	msd_https_proxy_read_next(g_steal_pointer(&task));
}

static void
msd_https_proxy_handshake_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = G_TASK(user_data);
	MsdHttpsProxyConnect *data = g_task_get_task_data(task);
	/* read before the task reference is stolen into the write's arguments */
	gint priority = g_task_get_priority(task);
	GCancellable *cancellable = g_task_get_cancellable(task);
	GError *error = NULL;

	if (!g_tls_connection_handshake_finish(G_TLS_CONNECTION(source), result, &error)) {
		g_task_return_error(task, error);
		return;
	}
	g_output_stream_write_all_async(g_io_stream_get_output_stream(data->tls), data->request,
	                                strlen(data->request), priority, cancellable,
	                                msd_https_proxy_written_cb, g_steal_pointer(&task));
}

static void
msd_https_proxy_connect_async(GProxy *proxy,
                              GIOStream *io_stream,
                              GProxyAddress *proxy_address,
                              GCancellable *cancellable,
                              GAsyncReadyCallback callback,
                              gpointer user_data)
{
	g_autoptr(GTask) task = g_task_new(proxy, cancellable, callback, user_data);
	GError *error = NULL;
	MsdHttpsProxyConnect *data;

	g_task_set_source_tag(task, msd_https_proxy_connect_async);
	data = msd_https_proxy_connect_new(io_stream, proxy_address, &error);
	if (data == NULL) {
		g_task_return_error(task, error);
		return;
	}
	g_task_set_task_data(task, data, (GDestroyNotify)msd_https_proxy_connect_free);
	g_tls_connection_handshake_async(G_TLS_CONNECTION(data->tls), G_PRIORITY_DEFAULT,
	                                 cancellable, msd_https_proxy_handshake_cb,
	                                 g_steal_pointer(&task));
}

static GIOStream *
msd_https_proxy_connect_finish(GProxy *proxy, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, proxy), NULL);
	return g_task_propagate_pointer(G_TASK(result), error);
}

static gboolean
msd_https_proxy_supports_hostname(GProxy *proxy)
{
	return TRUE;
}

static void
msd_https_proxy_class_init(MsdHttpsProxyClass *klass)
{
}

static void
msd_https_proxy_init(MsdHttpsProxy *self)
{
}

static void
msd_https_proxy_iface_init(GProxyInterface *iface)
{
	iface->connect = msd_https_proxy_connect;
	iface->connect_async = msd_https_proxy_connect_async;
	iface->connect_finish = msd_https_proxy_connect_finish;
	iface->supports_hostname = msd_https_proxy_supports_hostname;
}
