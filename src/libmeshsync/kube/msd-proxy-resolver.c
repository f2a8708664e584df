/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * Which proxy a request to the API server goes through, decided as client-go decides it: a
 * cluster's proxy-url carries every request, with no exception; otherwise HTTPS_PROXY or
 * HTTP_PROXY by the server's scheme, minus what NO_PROXY names and minus loopback, with the
 * NO_PROXY grammar of Go's net/http. GSimpleProxyResolver's ignore list reads entries
 * differently (no CIDR ports, no "*." forms, loopback proxied), so a kubeconfig that works
 * with kubectl would take another path here.
 */

#define G_LOG_DOMAIN "MeshSyncKube"

#include "config.h"

#include <string.h>

#include "meshsync-error.h"
#include "kube/msd-proxy-resolver.h"
#include "kube/msd-read-ahead-proxy.h"
#include "util/msd-i18n.h"

typedef enum {
	MSD_NO_PROXY_IP,
	MSD_NO_PROXY_CIDR,
	MSD_NO_PROXY_DOMAIN,
} MsdNoProxyKind;

typedef struct {
	MsdNoProxyKind kind;
	GInetAddressMask *mask; /* (owned) (nullable): IP and CIDR entries */
	gchar *domain;          /* (owned) (nullable): with a leading dot */
	gboolean match_host;    /* the domain itself matches, not only its subdomains */
	gint port;              /* -1: any port */
} MsdNoProxyRule;

struct _MsdProxyResolver {
	GObject parent_instance;

	gchar *fixed;       /* (owned) (nullable): the cluster's proxy-url */
	gchar *https_proxy; /* (owned) (nullable) */
	gchar *http_proxy;  /* (owned) (nullable) */
	gboolean bypass_all;
	GPtrArray *rules;    /* (owned) (element-type MsdNoProxyRule) */
	gboolean read_ahead; /* a direct https connection is read ahead */
};

static void msd_proxy_resolver_iface_init(GProxyResolverInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(MsdProxyResolver,
                              msd_proxy_resolver,
                              G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(G_TYPE_PROXY_RESOLVER,
                                                    msd_proxy_resolver_iface_init))

static void
msd_no_proxy_rule_free(MsdNoProxyRule *rule)
{
	g_clear_object(&rule->mask);
	g_free(rule->domain);
	g_free(rule);
}

static void
msd_proxy_resolver_finalize(GObject *object)
{
	MsdProxyResolver *self = MSD_PROXY_RESOLVER(object);

	g_free(self->fixed);
	g_free(self->https_proxy);
	g_free(self->http_proxy);
	g_ptr_array_unref(self->rules);
	G_OBJECT_CLASS(msd_proxy_resolver_parent_class)->finalize(object);
}

static void
msd_proxy_resolver_class_init(MsdProxyResolverClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = msd_proxy_resolver_finalize;
}

static void
msd_proxy_resolver_init(MsdProxyResolver *self)
{
	self->rules = g_ptr_array_new_with_free_func((GDestroyNotify)msd_no_proxy_rule_free);
}

/* Splits "host:port" or "[v6]:port" as Go's net.SplitHostPort does; FALSE when @entry has no
 * port, or a port that is not a number (Go keeps such an entry as a host name). */
static gboolean
msd_proxy_split_host_port(const gchar *entry, gchar **host, gint *port)
{
	const gchar *colon;
	gchar *end = NULL;
	guint64 value;

	if (entry[0] == '[') {
		const gchar *close = strchr(entry, ']');
		if (close == NULL || close[1] != ':')
			return FALSE;
		colon = close + 1;
		*host = g_strndup(entry + 1, close - entry - 1);
	} else {
		colon = strrchr(entry, ':');
		if (colon == NULL || strchr(entry, ':') != colon)
			return FALSE;
		*host = g_strndup(entry, colon - entry);
	}
	value = g_ascii_strtoull(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || value > G_MAXUINT16) {
		g_clear_pointer(host, g_free);
		return FALSE;
	}
	*port = (gint)value;
	return TRUE;
}

static void
msd_proxy_resolver_parse_no_proxy(MsdProxyResolver *self, const gchar *no_proxy)
{
	g_auto(GStrv) entries = g_strsplit(no_proxy, ",", -1);

	for (guint i = 0; entries[i] != NULL; i++) {
		g_autofree gchar *entry = g_ascii_strdown(g_strstrip(entries[i]), -1);
		g_autofree gchar *host = NULL;
		g_autoptr(GInetAddress) address = NULL;
		GInetAddressMask *mask;
		MsdNoProxyRule *rule;
		gint port = -1;

		if (entry[0] == '\0')
			continue;
		if (g_str_equal(entry, "*")) {
			self->bypass_all = TRUE;
			return;
		}
		if (strchr(entry, '/') != NULL &&
		    (mask = g_inet_address_mask_new_from_string(entry, NULL)) != NULL) {
			rule = g_new0(MsdNoProxyRule, 1);
			rule->kind = MSD_NO_PROXY_CIDR;
			rule->mask = mask;
			rule->port = -1;
			g_ptr_array_add(self->rules, rule);
			continue;
		}
		if (!msd_proxy_split_host_port(entry, &host, &port)) {
			host = g_strdup(entry);
			port = -1;
		}
		/* ":80" names no host: Go drops it rather than matching every host on that port */
		if (host[0] == '\0')
			continue;
		address = g_inet_address_new_from_string(host);
		rule = g_new0(MsdNoProxyRule, 1);
		rule->port = port;
		if (address != NULL) {
			rule->kind = MSD_NO_PROXY_IP;
			rule->mask = g_inet_address_mask_new(
			        address, g_inet_address_get_native_size(address) * 8, NULL);
		} else {
			const gchar *name = g_str_has_prefix(host, "*.") ? host + 1 : host;

			rule->kind = MSD_NO_PROXY_DOMAIN;
			rule->match_host = name[0] != '.';
			rule->domain =
			        rule->match_host ? g_strconcat(".", name, NULL) : g_strdup(name);
		}
		g_ptr_array_add(self->rules, rule);
	}
}

/**
 * msd_proxy_resolver_redact:
 * @url: a proxy URL, which may carry user:password@
 *
 * The URL to show in a message: a proxy's password must not reach the logs, its user may
 * (as Go's URL.Redacted). Without G_URI_FLAGS_HAS_PASSWORD, GUri keeps "user:password" as
 * one user name and hides nothing.
 *
 * Returns: (transfer full): @url without its password
 */
gchar *
msd_proxy_resolver_redact(const gchar *url)
{
	g_autoptr(GUri) uri = g_uri_parse(url, G_URI_FLAGS_HAS_PASSWORD, NULL);
	const gchar *at = strrchr(url, '@');
	const gchar *authority = strstr(url, "://");

	if (uri != NULL)
		return g_uri_to_string_partial(uri, G_URI_HIDE_PASSWORD);
	/* not a URL GUri reads: still leave out whatever userinfo it seems to carry */
	if (at != NULL && authority != NULL && authority < at) {
		g_autofree gchar *scheme = g_strndup(url, authority + 3 - url);

		return g_strconcat(scheme, at + 1, NULL);
	}
	return g_strdup(url);
}

/**
 * msd_proxy_resolver_check_url:
 * @url: a cluster's proxy-url
 * @field: where @url was read (origin, cluster and member), for the message
 * @error: return location for a #GError
 *
 * Checks that @url is a proxy this client can speak to: the schemes client-go accepts (http,
 * https, socks5), each of which GIO implements.
 *
 * Returns: %TRUE when usable
 */
gboolean
msd_proxy_resolver_check_url(const gchar *url, const gchar *field, GError **error)
{
	g_autoptr(GUri) uri = g_uri_parse(url, G_URI_FLAGS_HAS_PASSWORD, NULL);
	const gchar *scheme = uri != NULL ? g_uri_get_scheme(uri) : NULL;
	g_autofree gchar *shown = msd_proxy_resolver_redact(url);

	if (uri == NULL || g_uri_get_host(uri) == NULL || g_uri_get_host(uri)[0] == '\0') {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: \"%s\" is not a URL"), field, shown);
		return FALSE;
	}
	if (g_strcmp0(scheme, "http") != 0 && g_strcmp0(scheme, "https") != 0 &&
	    g_strcmp0(scheme, "socks5") != 0) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("%s: \"%s\": scheme %s is not supported (http, https or socks5)"),
		            field, shown, scheme);
		return FALSE;
	}
	return TRUE;
}

/**
 * msd_proxy_resolver_new_fixed:
 * @url: a checked proxy-url
 *
 * Returns: (transfer full): a resolver that sends every request through @url
 */
MsdProxyResolver *
msd_proxy_resolver_new_fixed(const gchar *url)
{
	MsdProxyResolver *self = g_object_new(MSD_TYPE_PROXY_RESOLVER, NULL);

	self->fixed = g_strdup(url);
	return self;
}

/**
 * msd_proxy_resolver_new_direct:
 *
 * Returns: (transfer full): a resolver that sends every request direct
 */
MsdProxyResolver *
msd_proxy_resolver_new_direct(void)
{
	return g_object_new(MSD_TYPE_PROXY_RESOLVER, NULL);
}

/**
 * msd_proxy_resolver_set_read_ahead:
 * @self: a #MsdProxyResolver
 * @read_ahead: whether direct https connections are read ahead
 *
 * Answers MSD_READ_AHEAD_PROTOCOL://host:port, not direct://, for an https or wss URI that
 * goes direct (msd-read-ahead-proxy.c registers what GIO then uses).
 */
void
msd_proxy_resolver_set_read_ahead(MsdProxyResolver *self, gboolean read_ahead)
{
	g_return_if_fail(MSD_IS_PROXY_RESOLVER(self));
	self->read_ahead = read_ahead;
	if (read_ahead)
		msd_read_ahead_proxy_register();
}

/**
 * msd_proxy_resolver_new_from_env:
 * @https_proxy: (nullable): HTTPS_PROXY
 * @http_proxy: (nullable): HTTP_PROXY
 * @no_proxy: (nullable): NO_PROXY
 *
 * Returns: (transfer full): a resolver following the environment's proxy variables
 */
MsdProxyResolver *
msd_proxy_resolver_new_from_env(const gchar *https_proxy,
                                const gchar *http_proxy,
                                const gchar *no_proxy)
{
	MsdProxyResolver *self = g_object_new(MSD_TYPE_PROXY_RESOLVER, NULL);

	/* Go takes a proxy given without a scheme as http:// */
	if (https_proxy != NULL && strstr(https_proxy, "://") == NULL)
		self->https_proxy = g_strconcat("http://", https_proxy, NULL);
	else
		self->https_proxy = g_strdup(https_proxy);
	if (http_proxy != NULL && strstr(http_proxy, "://") == NULL)
		self->http_proxy = g_strconcat("http://", http_proxy, NULL);
	else
		self->http_proxy = g_strdup(http_proxy);
	if (no_proxy != NULL)
		msd_proxy_resolver_parse_no_proxy(self, no_proxy);
	return self;
}

/**
 * msd_proxy_resolver_bypasses:
 * @self: a #MsdProxyResolver
 * @host: the server's host name or address, without brackets
 * @port: the server's port
 *
 * Returns: %TRUE when a request to @host:@port goes direct, whatever the scheme
 */
gboolean
msd_proxy_resolver_bypasses(MsdProxyResolver *self, const gchar *host, guint16 port)
{
	g_autofree gchar *name = NULL;
	g_autoptr(GInetAddress) address = NULL;

	g_return_val_if_fail(MSD_IS_PROXY_RESOLVER(self), TRUE);

	if (self->fixed != NULL)
		return FALSE;
	if (self->bypass_all)
		return TRUE;
	name = g_ascii_strdown(host, -1);
	g_strstrip(name);
	if (g_str_equal(name, "localhost"))
		return TRUE;
	address = g_inet_address_new_from_string(name);
	if (address != NULL && g_inet_address_get_is_loopback(address))
		return TRUE;
	for (guint i = 0; i < self->rules->len; i++) {
		const MsdNoProxyRule *rule = g_ptr_array_index(self->rules, i);

		switch (rule->kind) {
		case MSD_NO_PROXY_CIDR:
			if (address != NULL && g_inet_address_mask_matches(rule->mask, address))
				return TRUE;
			break;
		case MSD_NO_PROXY_IP:
			if (address != NULL && g_inet_address_mask_matches(rule->mask, address) &&
			    (rule->port < 0 || rule->port == port))
				return TRUE;
			break;
		case MSD_NO_PROXY_DOMAIN:
			if ((g_str_has_suffix(name, rule->domain) ||
			     (rule->match_host && g_str_equal(name, rule->domain + 1))) &&
			    (rule->port < 0 || rule->port == port))
				return TRUE;
			break;
		default:
			g_assert_not_reached();
		}
	}
	return FALSE;
}

static gchar **
msd_proxy_resolver_lookup(GProxyResolver *resolver,
                          const gchar *uri,
                          GCancellable *cancellable,
                          GError **error)
{
	MsdProxyResolver *self = MSD_PROXY_RESOLVER(resolver);
	g_autoptr(GUri) parsed = NULL;
	const gchar *host = NULL;
	const gchar *proxy = NULL;
	gboolean https = FALSE;
	gint port = -1;
	gchar **result;

	if (g_cancellable_set_error_if_cancelled(cancellable, error))
		return NULL;
	parsed = g_uri_parse(uri, G_URI_FLAGS_NONE, NULL);
	if (parsed != NULL && g_uri_get_host(parsed) != NULL) {
		host = g_uri_get_host(parsed);
		https = g_strcmp0(g_uri_get_scheme(parsed), "https") == 0 ||
		        g_strcmp0(g_uri_get_scheme(parsed), "wss") == 0;
		port = g_uri_get_port(parsed);
		if (port < 0)
			port = https ? 443 : 80;
	}
	if (self->fixed != NULL)
		proxy = self->fixed;
	else if (host != NULL && !msd_proxy_resolver_bypasses(self, host, (guint16)port))
		proxy = https ? self->https_proxy : self->http_proxy;
	result = g_new0(gchar *, 2);
	if (proxy != NULL)
		result[0] = g_strdup(proxy);
	else if (self->read_ahead && host != NULL && https)
		result[0] = msd_read_ahead_proxy_uri(host, port);
	else
		result[0] = g_strdup("direct://");
	return result;
}

static void
msd_proxy_resolver_lookup_async(GProxyResolver *resolver,
                                const gchar *uri,
                                GCancellable *cancellable,
                                GAsyncReadyCallback callback,
                                gpointer user_data)
{
	g_autoptr(GTask) task = g_task_new(resolver, cancellable, callback, user_data);
	GError *error = NULL;
	gchar **proxies;

	g_task_set_source_tag(task, msd_proxy_resolver_lookup_async);
	/* nothing here blocks: the answer is ready at once */
	proxies = msd_proxy_resolver_lookup(resolver, uri, cancellable, &error);
	if (proxies == NULL)
		g_task_return_error(task, error);
	else
		g_task_return_pointer(task, proxies, (GDestroyNotify)g_strfreev);
}

static gchar **
msd_proxy_resolver_lookup_finish(GProxyResolver *resolver, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, resolver), NULL);
	return g_task_propagate_pointer(G_TASK(result), error);
}

static void
msd_proxy_resolver_iface_init(GProxyResolverInterface *iface)
{
	iface->lookup = msd_proxy_resolver_lookup;
	iface->lookup_async = msd_proxy_resolver_lookup_async;
	iface->lookup_finish = msd_proxy_resolver_lookup_finish;
}
