/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncBroker"

#include "config.h"

#include <string.h>

#include "meshsync-error.h"
#include "broker/msd-broker-url.h"
#include "util/msd-i18n.h"

#define MSD_BROKER_DEFAULT_PORT 4222

void
msd_broker_url_free(MsdBrokerUrl *url)
{
	if (url == NULL)
		return;
	g_strfreev(url->servers);
	g_free(url->display);
	g_free(url->user);
	if (url->password != NULL)
		memset(url->password, 0, strlen(url->password));
	g_free(url->password);
	if (url->token != NULL)
		memset(url->token, 0, strlen(url->token));
	g_free(url->token);
	g_free(url);
}

/* Error messages name the URL, but a password or token must not reach a log line. */
static gchar *
msd_broker_url_redact(const gchar *url)
{
	g_auto(GStrv) items = g_strsplit(url, ",", -1);

	for (guint i = 0; items[i] != NULL; i++) {
		gchar *sep = strstr(items[i], "://");
		gchar *start = sep != NULL ? sep + 3 : items[i];
		gchar *at = strrchr(start, '@');
		gchar *redacted;

		if (at == NULL)
			continue;
		redacted = g_strdup_printf("%.*s***%s", (int)(start - items[i]), items[i], at);
		g_free(items[i]);
		items[i] = redacted;
	}
	return g_strjoinv(",", items);
}

static gboolean
msd_broker_url_fail(const gchar *url, const gchar *why, GError **error)
{
	g_autofree gchar *shown = msd_broker_url_redact(url);

	g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
	            _("invalid broker URL '%s': %s"), shown, why);
	return FALSE;
}

static gboolean
msd_broker_url_has_space(const gchar *s, gsize len)
{
	for (gsize i = 0; i < len; i++) {
		if (g_ascii_isspace(s[i]) || (guchar)s[i] < 0x20)
			return TRUE;
	}
	return FALSE;
}

static gboolean
msd_broker_url_parse_port(const gchar *s, guint *port)
{
	guint64 value = 0;

	if (*s == '\0' || strlen(s) > 5)
		return FALSE;
	for (const gchar *p = s; *p != '\0'; p++) {
		if (!g_ascii_isdigit(*p))
			return FALSE;
		value = value * 10 + (guint)(*p - '0');
	}
	if (value == 0 || value > 65535)
		return FALSE;
	*port = (guint)value;
	return TRUE;
}

/* Userinfo is user:password or a bare token, as nats.go and nats.c read it; both are
 * percent-decoded because passwords often need reserved characters. */
static gboolean
msd_broker_url_take_userinfo(
        MsdBrokerUrl *self, const gchar *whole, const gchar *info, gsize len, GError **error)
{
	g_autofree gchar *raw = g_strndup(info, len);
	const gchar *colon = strchr(raw, ':');
	g_autofree gchar *user = NULL;
	g_autofree gchar *password = NULL;
	g_autofree gchar *token = NULL;

	if (colon != NULL) {
		g_autofree gchar *user_raw = g_strndup(raw, (gsize)(colon - raw));

		user = g_uri_unescape_string(user_raw, NULL);
		password = g_uri_unescape_string(colon + 1, NULL);
		if (user == NULL || password == NULL)
			return msd_broker_url_fail(whole, "bad percent-encoding in the credentials",
			                           error);
		if (*user == '\0')
			return msd_broker_url_fail(whole, "empty user name", error);
	} else {
		token = g_uri_unescape_string(raw, NULL);
		if (token == NULL)
			return msd_broker_url_fail(whole, "bad percent-encoding in the token",
			                           error);
		if (*token == '\0')
			return msd_broker_url_fail(whole, "empty token", error);
	}
	memset(raw, 0, len);

	/* One set of credentials for the whole list: nats.c applies them per connection. */
	if (self->user != NULL || self->token != NULL) {
		gboolean same = g_strcmp0(self->user, user) == 0 &&
		                g_strcmp0(self->password, password) == 0 &&
		                g_strcmp0(self->token, token) == 0;
		if (!same)
			return msd_broker_url_fail(
			        whole, "the servers of the list carry different credentials",
			        error);
		return TRUE;
	}
	self->user = g_steal_pointer(&user);
	self->password = g_steal_pointer(&password);
	self->token = g_steal_pointer(&token);
	return TRUE;
}

static gboolean
msd_broker_url_parse_one(MsdBrokerUrl *self,
                         const gchar *whole,
                         const gchar *item,
                         GPtrArray *servers,
                         GError **error)
{
	const gchar *scheme = "nats";
	const gchar *rest = item;
	const gchar *sep = strstr(item, "://");
	const gchar *end;
	const gchar *at;
	const gchar *hostport;
	g_autofree gchar *host = NULL;
	guint port = MSD_BROKER_DEFAULT_PORT;

	if (*item == '\0')
		return msd_broker_url_fail(whole, "empty server in the list", error);
	if (sep != NULL) {
		g_autofree gchar *given = g_ascii_strdown(item, (gssize)(sep - item));

		if (g_strcmp0(given, "nats") == 0)
			scheme = "nats";
		else if (g_strcmp0(given, "tls") == 0)
			scheme = "tls";
		else
			return msd_broker_url_fail(whole, "the scheme must be nats:// or tls://",
			                           error);
		rest = sep + 3;
	}

	/* Only a trailing slash may follow the authority. */
	end = rest + strcspn(rest, "/?#");
	if (*end != '\0' && strcmp(end, "/") != 0)
		return msd_broker_url_fail(whole, "a broker URL has no path or query", error);

	at = g_strrstr_len(rest, end - rest, "@");
	hostport = rest;
	if (at != NULL) {
		if (at == rest)
			return msd_broker_url_fail(whole, "empty credentials before '@'", error);
		if (!msd_broker_url_take_userinfo(self, whole, rest, (gsize)(at - rest), error))
			return FALSE;
		hostport = at + 1;
	}
	if (msd_broker_url_has_space(hostport, (gsize)(end - hostport)))
		return msd_broker_url_fail(whole, "space in the host", error);

	if (*hostport == '[') {
		const gchar *close = memchr(hostport, ']', (gsize)(end - hostport));
		g_autofree gchar *literal = NULL;

		if (close == NULL)
			return msd_broker_url_fail(whole, "unterminated IPv6 address", error);
		literal = g_strndup(hostport + 1, (gsize)(close - hostport - 1));
		if (!g_hostname_is_ip_address(literal) || strchr(literal, ':') == NULL)
			return msd_broker_url_fail(whole, "bad IPv6 address", error);
		host = g_strdup_printf("[%s]", literal);
		if (close + 1 < end) {
			g_autofree gchar *port_text = NULL;

			if (close[1] != ':')
				return msd_broker_url_fail(whole, "junk after the IPv6 address",
				                           error);
			port_text = g_strndup(close + 2, (gsize)(end - close - 2));
			if (!msd_broker_url_parse_port(port_text, &port))
				return msd_broker_url_fail(whole, "bad port", error);
		}
	} else {
		const gchar *colon = memchr(hostport, ':', (gsize)(end - hostport));

		if (colon != NULL) {
			g_autofree gchar *port_text =
			        g_strndup(colon + 1, (gsize)(end - colon - 1));

			if (memchr(colon + 1, ':', (gsize)(end - colon - 1)) != NULL)
				return msd_broker_url_fail(
				        whole, "an IPv6 address needs brackets, as in [::1]:4222",
				        error);
			if (!msd_broker_url_parse_port(port_text, &port))
				return msd_broker_url_fail(whole, "bad port", error);
			host = g_strndup(hostport, (gsize)(colon - hostport));
		} else {
			host = g_strndup(hostport, (gsize)(end - hostport));
		}
		if (*host == '\0')
			return msd_broker_url_fail(whole, "no host", error);
	}

	if (g_strcmp0(scheme, "tls") == 0)
		self->tls = TRUE;
	g_ptr_array_add(servers, g_strdup_printf("%s://%s:%u", scheme, host, port));
	return TRUE;
}

/*
 * msd_broker_url_parse:
 * @url: upstream's BROKER_URL (`host:4222`, `nats://host:4222`), or `tls://`, IPv6 in
 *   brackets, `user:password@` or `token@`, or a comma-separated list of those
 * @error: an INVALID_CONFIG error naming @url
 *
 * Returns: (transfer full) (nullable): the parts
 */
MsdBrokerUrl *
msd_broker_url_parse(const gchar *url, GError **error)
{
	g_autoptr(MsdBrokerUrl) self = g_new0(MsdBrokerUrl, 1);
	g_autoptr(GPtrArray) servers = g_ptr_array_new_with_free_func(g_free);
	g_auto(GStrv) items = NULL;
	g_autofree gchar *trimmed = NULL;

	if (url == NULL || *(trimmed = g_strstrip(g_strdup(url))) == '\0') {
		msd_broker_url_fail(url != NULL ? url : "", "it is empty", error);
		return NULL;
	}
	items = g_strsplit(trimmed, ",", -1);
	for (guint i = 0; items[i] != NULL; i++) {
		g_strstrip(items[i]);
		if (!msd_broker_url_parse_one(self, url, items[i], servers, error))
			return NULL;
	}
	g_ptr_array_add(servers, NULL);
	self->servers = (gchar **)g_ptr_array_steal(servers, NULL);
	self->display = g_strjoinv(",", self->servers);
	return g_steal_pointer(&self);
}
