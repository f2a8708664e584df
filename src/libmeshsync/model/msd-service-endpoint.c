/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncModel"

#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "model/msd-json-writer.h"
#include "model/msd-service-endpoint.h"
#include "util/msd-i18n.h"

#define PROBE_TIMEOUT_SECONDS 5

/* The pieces of a core/v1 Service the endpoint needs. Upstream decodes the whole object into
 * the typed struct and gives up on any type error; we check the types of the fields it reads. */
typedef struct {
	const MsdJsonTokens *doc;
	gboolean ok;
} Decoder;

/* The value of member @key of @obj when it is of @type; -1 when absent or null; marks the
 * decoder failed (and returns -1) on any other type. */
static gint
member_of_type(Decoder *d, gint obj, const gchar *key, MsdJsonType type)
{
	gint v;

	if (obj < 0)
		return -1;
	v = msd_json_tokens_member(d->doc, obj, key);
	if (v < 0 || d->doc->tokens[v].type == MSD_JSON_NULL)
		return -1;
	if (d->doc->tokens[v].type != type) {
		d->ok = FALSE;
		return -1;
	}
	return v;
}

static gchar *
member_string(Decoder *d, gint obj, const gchar *key)
{
	gint v = member_of_type(d, obj, key, MSD_JSON_STRING);
	GString *s = g_string_new(NULL);

	if (v >= 0)
		msd_json_tokens_append_decoded(d->doc, v, s);
	return g_string_free(s, FALSE);
}

/* An int32 member, the way Go decodes the number Kubernetes' decoder produced. */
static gint64
member_int32(Decoder *d, gint obj, const gchar *key)
{
	gint v = member_of_type(d, obj, key, MSD_JSON_NUMBER);
	g_autoptr(GString) text = NULL;
	gint64 n = 0;

	if (v < 0)
		return 0;
	text = g_string_new(NULL);
	msd_json_write_value(text, d->doc, v);
	if (!g_ascii_string_to_signed(text->str, 10, G_MININT32, G_MAXINT32, &n, NULL))
		d->ok = FALSE;
	return n;
}

MsdServiceEndpoint *
msd_service_endpoint_new_from_doc(const MsdJsonTokens *doc, gint root)
{
	Decoder d = {doc, TRUE};
	g_autoptr(MsdServiceEndpoint) ep = g_new0(MsdServiceEndpoint, 1);
	g_autofree gchar *ip = NULL;
	g_autofree gchar *hostname = NULL;
	gint64 cluster_port = 0;
	gint64 node_port = 0;
	gboolean ingress_set = FALSE;
	gint spec, ports, status, lb, ingress;

	if (root < 0 || doc->tokens[root].type != MSD_JSON_OBJECT)
		return NULL;
	spec = member_of_type(&d, root, "spec", MSD_JSON_OBJECT);
	/* A shallow Service (doc/tiers.md): its spec was never read. The API server always fills
	 * a Service's spec (clusterIP, type, sessionAffinity), so an empty one means unknown:
	 * no endpoint to publish, nothing to probe. */
	if (spec >= 0 && doc->tokens[spec].size == 0)
		return NULL;
	ep->internal_address = member_string(&d, spec, "clusterIP");
	ports = member_of_type(&d, spec, "ports", MSD_JSON_ARRAY);
	if (ports >= 0) {
		gint j = ports + 1;

		/* upstream keeps the ports of the last entry */
		for (gint k = 0; k < doc->tokens[ports].size; k++) {
			cluster_port = 0;
			node_port = 0;
			if (doc->tokens[j].type == MSD_JSON_OBJECT) {
				cluster_port = member_int32(&d, j, "port");
				node_port = member_int32(&d, j, "nodePort");
			} else if (doc->tokens[j].type != MSD_JSON_NULL) {
				d.ok = FALSE;
			}
			j = doc->tokens[j].next;
		}
	}
	status = member_of_type(&d, root, "status", MSD_JSON_OBJECT);
	lb = member_of_type(&d, status, "loadBalancer", MSD_JSON_OBJECT);
	ingress = member_of_type(&d, lb, "ingress", MSD_JSON_ARRAY);
	if (ingress >= 0 && doc->tokens[ingress].size > 0) {
		gint first = ingress + 1;

		if (doc->tokens[first].type == MSD_JSON_OBJECT) {
			gint mode = member_of_type(&d, first, "ipMode", MSD_JSON_STRING);
			gint iports = member_of_type(&d, first, "ports", MSD_JSON_ARRAY);

			ip = member_string(&d, first, "ip");
			hostname = member_string(&d, first, "hostname");
			ingress_set = ip[0] != '\0' || hostname[0] != '\0' || mode >= 0 ||
			              (iports >= 0 && doc->tokens[iports].size > 0);
		} else if (doc->tokens[first].type != MSD_JSON_NULL) {
			d.ok = FALSE;
		}
	}
	if (!d.ok)
		return NULL;

	ep->internal_port = cluster_port;
	ep->external_address = g_strdup("localhost");
	ep->external_port = node_port;
	if (ingress_set) {
		g_free(ep->external_address);
		if (ip[0] == '\0')
			ep->external_address = g_strdup(hostname);
		else if (strcmp(ip, ep->internal_address) == 0 || strcmp(ip, "<pending>") == 0)
			ep->external_address = g_strdup(ep->internal_address);
		else
			ep->external_address = g_strdup(ip);
		ep->external_port = cluster_port;
	}
	return g_steal_pointer(&ep);
}

void
msd_service_endpoint_free(MsdServiceEndpoint *ep)
{
	if (ep == NULL)
		return;
	g_free(ep->internal_address);
	g_free(ep->external_address);
	g_free(ep);
}

gboolean
msd_service_endpoint_needs_probe(const MsdServiceEndpoint *ep)
{
	return ep->external_port != 0 && strcmp(ep->external_address, "localhost") != 0;
}

static gboolean
valid_port_suffix(const gchar *s)
{
	if (*s == '\0')
		return TRUE;
	if (*s != ':')
		return FALSE;
	for (s++; *s != '\0'; s++) {
		if (!g_ascii_isdigit(*s))
			return FALSE;
	}
	return TRUE;
}

/* What Go's url.ParseRequestURI refuses in "<scheme>://<address>:<port>", for the addresses a
 * Service can carry: control bytes, a bad port after the last colon, characters a host may
 * not hold. (An approximation of net/url, good for IPs, names and odd bytes.) */
static gboolean
request_uri_ok(const gchar *url)
{
	g_autofree gchar *authority = NULL;
	const gchar *rest = strstr(url, "://");
	const gchar *host;
	const gchar *at;
	gsize n;

	for (const gchar *p = url; *p != '\0'; p++) {
		if ((guchar)*p < 0x20 || *p == 0x7f)
			return FALSE;
	}
	if (rest == NULL)
		return FALSE;
	rest += 3;
	n = strcspn(rest, "/?");
	authority = g_strndup(rest, n);
	at = strrchr(authority, '@');
	host = at != NULL ? at + 1 : authority;
	if (host[0] == '[') {
		const gchar *close = strrchr(host, ']');

		return close != NULL && valid_port_suffix(close + 1);
	}
	if (strrchr(host, ':') != NULL && !valid_port_suffix(strrchr(host, ':')))
		return FALSE;
	for (const gchar *p = host; *p != '\0'; p++) {
		if (strchr(" #%\\^`{|}", *p) != NULL)
			return FALSE;
	}
	return TRUE;
}

static void
append_url(GString *out, gboolean *first, const gchar *address, gint64 port)
{
	g_autofree gchar *lower = g_ascii_strdown(address, -1);
	g_autofree gchar *url = NULL;

	/* headless services have clusterIP "None" */
	if (strstr(lower, "none") != NULL)
		return;
	url = g_strdup_printf("%s://%s:%" G_GINT64_FORMAT, port == 443 ? "https" : "http", address,
	                      port);
	if (!request_uri_ok(url))
		return;
	if (!*first)
		g_string_append_c(out, ',');
	*first = FALSE;
	msd_json_append_string(out, url, -1);
}

gchar *
msd_service_endpoint_to_metadata(const MsdServiceEndpoint *ep, gboolean reachable)
{
	GString *out;
	gboolean first = TRUE;
	gboolean with_external = ep->external_port != 0;

	if (with_external && msd_service_endpoint_needs_probe(ep) && !reachable)
		return NULL;
	out = g_string_new("{\"capabilities\":{\"connection\":true,\"urls\":[");
	if (with_external)
		append_url(out, &first, ep->external_address, ep->external_port);
	append_url(out, &first, ep->internal_address, ep->internal_port);
	g_string_append(out, "]}}");
	return g_string_free(out, FALSE);
}

static void
probe_connected_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(GTask) task = user_data;
	g_autoptr(GSocketConnection) conn = NULL;
	GError *error = NULL;

	conn = g_socket_client_connect_finish(G_SOCKET_CLIENT(source), result, &error);
	if (conn == NULL) {
		g_task_return_error(task, error);
		return;
	}
	/* only reachability matters; close without waiting */
	g_io_stream_close_async(G_IO_STREAM(conn), G_PRIORITY_DEFAULT, NULL, NULL, NULL);
	g_task_return_boolean(task, TRUE);
}

void
msd_service_endpoint_probe_async(const MsdServiceEndpoint *ep,
                                 GCancellable *cancellable,
                                 GAsyncReadyCallback callback,
                                 gpointer user_data)
{
	g_autoptr(GTask) task = g_task_new(NULL, cancellable, callback, user_data);
	g_autoptr(GSocketClient) client = NULL;
	g_autoptr(GSocketConnectable) addr = NULL;

	g_task_set_source_tag(task, msd_service_endpoint_probe_async);
	if (ep->external_port <= 0 || ep->external_port > 65535 ||
	    ep->external_address[0] == '\0') {
		g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
		                        _("cannot connect to \"%s\" port %" PRId64),
		                        ep->external_address, ep->external_port);
		return;
	}
	client = g_socket_client_new();
	g_socket_client_set_timeout(client, PROBE_TIMEOUT_SECONDS);
	/* a plain TCP dial, as upstream's net.DialTimeout: no proxy in between */
	g_socket_client_set_enable_proxy(client, FALSE);
	addr = g_network_address_new(ep->external_address, (guint16)ep->external_port);
	g_socket_client_connect_async(client, addr, cancellable, probe_connected_cb,
	                              g_steal_pointer(&task));
}

gboolean
msd_service_endpoint_probe_finish(GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, NULL), FALSE);
	g_return_val_if_fail(
	        g_task_get_source_tag(G_TASK(result)) == msd_service_endpoint_probe_async, FALSE);
	return g_task_propagate_boolean(G_TASK(result), error);
}
