/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <string.h>

#include "meshsync-broker.h"
#include "meshsync-error.h"
#include "broker/msd-broker-url.h"

typedef struct {
	const gchar *url;
	const gchar *servers; /* comma-joined */
	const gchar *user;
	const gchar *password;
	const gchar *token;
	gboolean tls;
} UrlCase;

static const UrlCase good_urls[] = {
        {"host:4222", "nats://host:4222", NULL, NULL, NULL, FALSE},
        {"nats://host:4222", "nats://host:4222", NULL, NULL, NULL, FALSE},
        {"NATS://host:4222", "nats://host:4222", NULL, NULL, NULL, FALSE},
        {"broker", "nats://broker:4222", NULL, NULL, NULL, FALSE},
        {"nats://broker", "nats://broker:4222", NULL, NULL, NULL, FALSE},
        {"nats://broker:4222/", "nats://broker:4222", NULL, NULL, NULL, FALSE},
        {"  meshery-nats.meshery.svc:4222  ", "nats://meshery-nats.meshery.svc:4222", NULL, NULL,
         NULL, FALSE},
        {"tls://secure:4443", "tls://secure:4443", NULL, NULL, NULL, TRUE},
        {"[::1]:4222", "nats://[::1]:4222", NULL, NULL, NULL, FALSE},
        {"nats://[fe80::1]", "nats://[fe80::1]:4222", NULL, NULL, NULL, FALSE},
        {"nats://alice:s3cret@host:4222", "nats://host:4222", "alice", "s3cret", NULL, FALSE},
        {"nats://alice:p%40ss%3Aw%2Ford@host:1", "nats://host:1", "alice", "p@ss:w/ord", NULL,
         FALSE},
        {"nats://bob:@host", "nats://host:4222", "bob", "", NULL, FALSE},
        {"nats://TOKEN123@host:4222", "nats://host:4222", NULL, NULL, "TOKEN123", FALSE},
        {"tok%20en@[::1]:5", "nats://[::1]:5", NULL, NULL, "tok en", FALSE},
        {"a:4222,nats://b:4223, tls://c", "nats://a:4222,nats://b:4223,tls://c:4222", NULL, NULL,
         NULL, TRUE},
        {"nats://u:p@a:1,nats://u:p@b:2", "nats://a:1,nats://b:2", "u", "p", NULL, FALSE},
        {"nats://u:p@a:1,b:2", "nats://a:1,nats://b:2", "u", "p", NULL, FALSE},
        {"host:65535", "nats://host:65535", NULL, NULL, NULL, FALSE},
};

static void
test_url_good(void)
{
	for (gsize i = 0; i < G_N_ELEMENTS(good_urls); i++) {
		const UrlCase *c = &good_urls[i];
		g_autoptr(GError) error = NULL;
		g_autoptr(MsdBrokerUrl) url = msd_broker_url_parse(c->url, &error);

		g_test_message("%s", c->url);
		g_assert_no_error(error);
		g_assert_nonnull(url);
		g_assert_cmpstr(url->display, ==, c->servers);
		g_assert_cmpstr(url->user, ==, c->user);
		g_assert_cmpstr(url->password, ==, c->password);
		g_assert_cmpstr(url->token, ==, c->token);
		g_assert_cmpint(url->tls, ==, c->tls);
	}
}

typedef struct {
	const gchar *url;
	const gchar *why;
} BadCase;

static const BadCase bad_urls[] = {
        {"", "empty"},
        {"   ", "empty"},
        {"nats://", "no host"},
        {":4222", "no host"},
        {"nats://:4222", "no host"},
        {"nats://user:pw@", "no host"},
        {"host:", "bad port"},
        {"host:0", "bad port"},
        {"host:65536", "bad port"},
        {"host:42a2", "bad port"},
        {"host:-1", "bad port"},
        {"host:123456", "bad port"},
        {"[::1]:x", "bad port"},
        {"bad host:4222", "space in the host"},
        {"nats://bad\thost", "space in the host"},
        {"http://host:4222", "scheme"},
        {"ws://host:4222", "scheme"},
        {"::1:4222", "brackets"},
        {"[::1", "unterminated"},
        {"[nothost]:4222", "bad IPv6"},
        {"[::1]x", "junk"},
        {"nats://host:4222/path", "no path"},
        {"nats://host?x=1", "no path"},
        {"a:1,,b:2", "empty server"},
        {"a:1,", "empty server"},
        {"@host", "empty credentials"},
        {"nats://:pw@host", "empty user"},
        {"nats://u:p@a:1,nats://v:q@b:2", "different credentials"},
        {"nats://u:%zz@host", "percent-encoding"},
};

static void
test_url_bad(void)
{
	for (gsize i = 0; i < G_N_ELEMENTS(bad_urls); i++) {
		const BadCase *c = &bad_urls[i];
		g_autoptr(GError) error = NULL;
		g_autoptr(MsdBrokerUrl) url = msd_broker_url_parse(c->url, &error);
		g_autofree gchar *stripped = g_strstrip(g_strdup(c->url));

		g_test_message("'%s'", c->url);
		g_assert_null(url);
		g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG);
		g_assert_nonnull(strstr(error->message, c->why));
		/* Names the URL, except where it would be empty. */
		if (*stripped != '\0' && strchr(c->url, '@') == NULL)
			g_assert_nonnull(strstr(error->message, c->url));
	}
}

static void
test_url_redacts_credentials(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MsdBrokerUrl) url =
	        msd_broker_url_parse("nats://alice:hunter2@bad host:4222", &error);

	g_assert_null(url);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG);
	g_assert_null(strstr(error->message, "hunter2"));
	g_assert_nonnull(strstr(error->message, "nats://***@bad host:4222"));
}

static void
test_url_null(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MsdBrokerUrl) url = msd_broker_url_parse(NULL, &error);

	g_assert_null(url);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG);
}

static void
test_broker_new(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncBroker) broker = meshsync_broker_new("nats://u:pw@[::1]:4222", &error);
	g_autoptr(MeshSyncBroker) bad = NULL;

	g_assert_no_error(error);
	g_assert_cmpstr(meshsync_broker_get_url(broker), ==, "nats://[::1]:4222");
	g_assert_cmpint(meshsync_broker_get_state(broker), ==, MESHSYNC_BROKER_STATE_DISCONNECTED);
	g_assert_false(meshsync_broker_get_writable(broker));
	g_assert_cmpint(meshsync_broker_get_max_payload(broker), ==, 0);

	bad = meshsync_broker_new("nats://host:99999", &error);
	g_assert_null(bad);
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG);
	g_assert_nonnull(strstr(error->message, "nats://host:99999"));
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/broker-url/good", test_url_good);
	g_test_add_func("/broker-url/bad", test_url_bad);
	g_test_add_func("/broker-url/redacts-credentials", test_url_redacts_credentials);
	g_test_add_func("/broker-url/null", test_url_null);
	g_test_add_func("/broker-url/broker-new", test_broker_new);
	return g_test_run();
}
