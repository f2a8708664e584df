/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * The way a read-ahead stream gets under libsoup's TLS connection. libsoup makes its
 * connections with a GSocketClient and has no hook for the stream it wraps in TLS, but GIO
 * lets a proxy hand back a stream of its own in place of the socket's: the kube client's
 * proxy resolver answers MSD_READ_AHEAD_PROTOCOL://host:port for a direct connection to an
 * https server, GIO connects to that host and port as it would directly, and this "proxy"
 * negotiates nothing: it wraps the connection. libsoup treats any proxy but "http" as a
 * tunnel, so it speaks TLS and HTTP to the server as on a direct connection.
 */

#define G_LOG_DOMAIN "MeshSyncKube"

#include "config.h"

#include <string.h>

#include "kube/msd-read-ahead-proxy.h"
#include "kube/msd-read-ahead-stream.h"

struct _MsdReadAheadProxy {
	GObject parent_instance;
};

static void msd_read_ahead_proxy_iface_init(GProxyInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(MsdReadAheadProxy,
                              msd_read_ahead_proxy,
                              G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(G_TYPE_PROXY, msd_read_ahead_proxy_iface_init))

static GIOStream *
msd_read_ahead_proxy_connect(GProxy *proxy,
                             GIOStream *connection,
                             GProxyAddress *proxy_address,
                             GCancellable *cancellable,
                             GError **error)
{
	if (g_cancellable_set_error_if_cancelled(cancellable, error))
		return NULL;
	g_debug("connection to %s:%u read ahead under TLS",
	        g_proxy_address_get_destination_hostname(proxy_address),
	        g_proxy_address_get_destination_port(proxy_address));
	return msd_read_ahead_connection_new(connection);
}

static void
msd_read_ahead_proxy_connect_async(GProxy *proxy,
                                   GIOStream *connection,
                                   GProxyAddress *proxy_address,
                                   GCancellable *cancellable,
                                   GAsyncReadyCallback callback,
                                   gpointer user_data)
{
	g_autoptr(GTask) task = g_task_new(proxy, cancellable, callback, user_data);
	GError *error = NULL;
	GIOStream *wrapped;

	g_task_set_source_tag(task, msd_read_ahead_proxy_connect_async);
	wrapped =
	        msd_read_ahead_proxy_connect(proxy, connection, proxy_address, cancellable, &error);
	if (wrapped == NULL)
		g_task_return_error(task, error);
	else
		g_task_return_pointer(task, wrapped, g_object_unref);
}

static GIOStream *
msd_read_ahead_proxy_connect_finish(GProxy *proxy, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, proxy), NULL);
	return g_task_propagate_pointer(G_TASK(result), error);
}

/* GIO then leaves the name to us (and to the TLS layer's server identity), as directly */
static gboolean
msd_read_ahead_proxy_supports_hostname(GProxy *proxy)
{
	return TRUE;
}

static void
msd_read_ahead_proxy_class_init(MsdReadAheadProxyClass *klass)
{
}

static void
msd_read_ahead_proxy_init(MsdReadAheadProxy *self)
{
}

static void
msd_read_ahead_proxy_iface_init(GProxyInterface *iface)
{
	iface->connect = msd_read_ahead_proxy_connect;
	iface->connect_async = msd_read_ahead_proxy_connect_async;
	iface->connect_finish = msd_read_ahead_proxy_connect_finish;
	iface->supports_hostname = msd_read_ahead_proxy_supports_hostname;
}

void
msd_read_ahead_proxy_register(void)
{
	static gsize done = 0;

	if (g_once_init_enter(&done)) {
		/* loads GIO's own proxies first, so that the extension point exists */
		GProxy *builtin = g_proxy_get_default_for_protocol("socks5");

		g_clear_object(&builtin);
		g_io_extension_point_implement(G_PROXY_EXTENSION_POINT_NAME,
		                               MSD_TYPE_READ_AHEAD_PROXY, MSD_READ_AHEAD_PROTOCOL,
		                               0);
		g_once_init_leave(&done, 1);
	}
}

/* On unless MESHSYNC_READ_AHEAD=0: the way back to GIO's plain connection, should a
 * network or a TLS library ever disagree with the buffer. */
gboolean
msd_read_ahead_enabled(void)
{
	return g_strcmp0(g_getenv("MESHSYNC_READ_AHEAD"), "0") != 0;
}

gchar *
msd_read_ahead_proxy_uri(const gchar *host, gint port)
{
	/* an IPv6 literal keeps its brackets in a URI's authority */
	gboolean literal = strchr(host, ':') != NULL && host[0] != '[';

	return g_strdup_printf("%s://%s%s%s:%d", MSD_READ_AHEAD_PROTOCOL, literal ? "[" : "", host,
	                       literal ? "]" : "", port);
}

gboolean
msd_read_ahead_proxy_uri_is(const gchar *proxy_uri)
{
	return proxy_uri != NULL && g_str_has_prefix(proxy_uri, MSD_READ_AHEAD_PROTOCOL "://");
}

/* GIO words a failed connection through a proxy as "Could not connect to proxy server
 * <address>: ...". A read-ahead connection goes through that machinery to the server itself,
 * so its message is put back the way GIO words a direct one (both as GLib translates them). */
gchar *
msd_read_ahead_direct_message(const gchar *message)
{
	const gchar *via = g_dgettext("glib20", "Could not connect to proxy server %s: ");
	const gchar *direct = g_dgettext("glib20", "Could not connect to %s: ");
	const gchar *slot = strstr(via, "%s");
	const gchar *direct_slot = strstr(direct, "%s");
	g_autofree gchar *direct_head = NULL;
	g_autofree gchar *address = NULL;
	const gchar *after;
	const gchar *end;

	if (slot == NULL || direct_slot == NULL || strncmp(message, via, (gsize)(slot - via)) != 0)
		return NULL;
	after = message + (slot - via);
	/* what follows the address in the wording, ": " in English */
	end = *(slot + 2) != '\0' ? strstr(after, slot + 2) : NULL;
	if (end == NULL)
		return NULL;
	address = g_strndup(after, (gsize)(end - after));
	direct_head = g_strndup(direct, (gsize)(direct_slot - direct));
	return g_strconcat(direct_head, address, direct_slot + 2, end + strlen(slot + 2), NULL);
}
