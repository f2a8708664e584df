/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <string.h>

#include "meshsync-error.h"
#include "meshsync-kube-config-private.h"
#include "kube/msd-proxy-resolver.h"

/* NO_PROXY as Go's golang.org/x/net/http/httpproxy reads it, case by case. */
typedef struct {
	const gchar *no_proxy;
	const gchar *host;
	guint16 port;
	gboolean bypass;
} NoProxyCase;

static const NoProxyCase no_proxy_cases[] = {
        /* loopback and localhost are never proxied, whatever NO_PROXY says */
        {"", "localhost", 443, TRUE},
        {"", "127.0.0.1", 6443, TRUE},
        {"", "127.0.0.2", 6443, TRUE},
        {"", "::1", 6443, TRUE},
        {"", "api.example.com", 443, FALSE},
        {"*", "api.example.com", 443, TRUE},
        /* a name matches itself and its subdomains, not a longer name */
        {"example.com", "example.com", 443, TRUE},
        {"example.com", "api.example.com", 443, TRUE},
        {"example.com", "notexample.com", 443, FALSE},
        /* a leading dot or "*." matches subdomains only */
        {".example.com", "example.com", 443, FALSE},
        {".example.com", "api.example.com", 443, TRUE},
        {"*.example.com", "example.com", 443, FALSE},
        {"*.example.com", "api.example.com", 443, TRUE},
        /* case and spaces around entries do not matter */
        {" foo.org , EXAMPLE.com ", "API.Example.COM", 443, TRUE},
        {",,", "api.example.com", 443, FALSE},
        /* a port narrows an entry to that port */
        {"example.com:6443", "api.example.com", 6443, TRUE},
        {"example.com:6443", "api.example.com", 443, FALSE},
        {"10.0.0.1:6443", "10.0.0.1", 6443, TRUE},
        {"10.0.0.1:6443", "10.0.0.1", 443, FALSE},
        {"[2001:db8::1]:6443", "2001:db8::1", 6443, TRUE},
        {"[2001:db8::1]:6443", "2001:db8::1", 443, FALSE},
        /* addresses match exactly; a name entry never matches an address */
        {"10.0.0.1", "10.0.0.1", 443, TRUE},
        {"10.0.0.1", "10.0.0.10", 443, FALSE},
        {"2001:db8::1", "2001:db8::1", 443, TRUE},
        {"example.com", "10.0.0.1", 443, FALSE},
        /* CIDRs match addresses in them, any port, and never names */
        {"10.0.0.0/8", "10.96.0.1", 443, TRUE},
        {"10.0.0.0/8", "11.0.0.1", 443, FALSE},
        {"2001:db8::/32", "2001:db8:1::5", 443, TRUE},
        {"10.0.0.0/8", "ten.example.com", 443, FALSE},
        /* a port without a host names nothing */
        {":443", "api.example.com", 443, FALSE},
};

static void
test_no_proxy_table(void)
{
	for (gsize i = 0; i < G_N_ELEMENTS(no_proxy_cases); i++) {
		const NoProxyCase *c = &no_proxy_cases[i];
		g_autoptr(MsdProxyResolver) resolver =
		        msd_proxy_resolver_new_from_env("http://proxy:3128", NULL, c->no_proxy);
		gboolean bypass = msd_proxy_resolver_bypasses(resolver, c->host, c->port);

		if (bypass != c->bypass)
			g_error("NO_PROXY=\"%s\" %s:%u: bypass %d, expected %d", c->no_proxy,
			        c->host, c->port, bypass, c->bypass);
	}
}

static gchar *
lookup_one(GProxyResolver *resolver, const gchar *uri)
{
	g_autoptr(GError) error = NULL;
	g_auto(GStrv) proxies = g_proxy_resolver_lookup(resolver, uri, NULL, &error);

	g_assert_no_error(error);
	g_assert_cmpuint(g_strv_length(proxies), ==, 1);
	return g_strdup(proxies[0]);
}

static void
test_scheme_picks_variable(void)
{
	g_autoptr(MsdProxyResolver) resolver =
	        msd_proxy_resolver_new_from_env("proxy-s:3128", "http://proxy-p:3128", "skip.me");
	g_autofree gchar *https = lookup_one(G_PROXY_RESOLVER(resolver), "https://api.x:6443/");
	g_autofree gchar *http = lookup_one(G_PROXY_RESOLVER(resolver), "http://api.x:8080/");
	g_autofree gchar *skipped = lookup_one(G_PROXY_RESOLVER(resolver), "https://skip.me/");

	/* a proxy without a scheme is an http one, as in Go */
	g_assert_cmpstr(https, ==, "http://proxy-s:3128");
	g_assert_cmpstr(http, ==, "http://proxy-p:3128");
	g_assert_cmpstr(skipped, ==, "direct://");
}

static void
test_fixed_takes_everything(void)
{
	g_autoptr(MsdProxyResolver) resolver = msd_proxy_resolver_new_fixed("socks5://s:1080");
	g_autofree gchar *loopback =
	        lookup_one(G_PROXY_RESOLVER(resolver), "https://127.0.0.1:6443/");

	/* client-go's proxy-url has no exceptions, loopback included */
	g_assert_cmpstr(loopback, ==, "socks5://s:1080");
	g_assert_false(msd_proxy_resolver_bypasses(resolver, "localhost", 443));
}

static MeshSyncKubeConfig *
config_with_proxy(const gchar *proxy_url, GError **error)
{
	g_autofree gchar *yaml = g_strdup_printf(
	        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
	        "clusters:\n- name: edge\n  cluster:\n    server: https://10.1.2.3:6443\n"
	        "    proxy-url: %s\n"
	        "contexts:\n- name: c\n  context:\n    cluster: edge\n    user: u\n"
	        "users:\n- name: u\n  user:\n    token: t\n",
	        proxy_url);

	return meshsync_kube_config_new_from_data(yaml, -1, NULL, error);
}

static void
test_kubeconfig_proxy_url(void)
{
	const gchar *accepted[] = {"http://p:3128", "https://p:3129", "socks5://p:1080"};

	for (gsize i = 0; i < G_N_ELEMENTS(accepted); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(MeshSyncKubeConfig) config = config_with_proxy(accepted[i], &error);

		g_assert_no_error(error);
		g_assert_cmpstr(meshsync_kube_config_get_proxy_url(config), ==, accepted[i]);
	}
}

static void
test_kubeconfig_proxy_url_refused(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = config_with_proxy("socks4://p:1080", &error);

	g_assert_null(config);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG);
	/* one line naming the cluster and the URL */
	g_assert_nonnull(strstr(error->message, "clusters[edge].proxy-url"));
	g_assert_nonnull(strstr(error->message, "socks4://p:1080"));
	g_assert_null(strchr(error->message, '\n'));
}

/* a proxy's password never reaches a message: the user does, as in Go's URL.Redacted */
static void
test_redact(void)
{
	const struct {
		const gchar *url;
		const gchar *shown;
	} cases[] = {
	        {"http://user:secret@proxy:3128", "http://user@proxy:3128"},
	        {"socks5://user:secret@127.0.0.1:1080", "socks5://user@127.0.0.1:1080"},
	        {"https://proxy:3129", "https://proxy:3129"},
	        {"http://user@proxy:3128", "http://user@proxy:3128"},
	        {"http://user:secret@[proxy:3128", "http://[proxy:3128"},
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree gchar *shown = msd_proxy_resolver_redact(cases[i].url);

		g_assert_cmpstr(shown, ==, cases[i].shown);
	}
}

static void
test_kubeconfig_proxy_url_refused_hides_password(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config =
	        config_with_proxy("socks4://user:secret@p:1080", &error);

	g_assert_null(config);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, "socks4://user@p:1080"));
	g_assert_null(strstr(error->message, "secret"));
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/proxy-resolver/no-proxy-table", test_no_proxy_table);
	g_test_add_func("/proxy-resolver/scheme-picks-variable", test_scheme_picks_variable);
	g_test_add_func("/proxy-resolver/fixed-takes-everything", test_fixed_takes_everything);
	g_test_add_func("/proxy-resolver/kubeconfig-proxy-url", test_kubeconfig_proxy_url);
	g_test_add_func("/proxy-resolver/kubeconfig-proxy-url-refused",
	                test_kubeconfig_proxy_url_refused);
	g_test_add_func("/proxy-resolver/kubeconfig-proxy-url-refused-hides-password",
	                test_kubeconfig_proxy_url_refused_hides_password);
	g_test_add_func("/proxy-resolver/redact", test_redact);
	return g_test_run();
}
