/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <sys/socket.h>
#include <unistd.h>

#include "meshsyncd-tls-trust.h"

static MeshSyncKubeConfig *
config_new(const gchar *cluster)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *yaml =
	        g_strdup_printf("current-context: c\n"
	                        "clusters: [{name: k, cluster: {server: 'https://k:6443'%s}}]\n"
	                        "contexts: [{name: c, context: {cluster: k}}]\n",
	                        cluster);
	MeshSyncKubeConfig *config = meshsync_kube_config_new_from_data(yaml, -1, NULL, &error);

	g_assert_no_error(error);
	return config;
}

/* A new TLS client connection made as libsoup makes it, before it is given a database. */
static GTlsDatabase *
new_connection_database(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GSocket) socket = NULL;
	g_autoptr(GSocketConnection) base = NULL;
	g_autoptr(GIOStream) tls = NULL;
	gint fds[2];

	g_assert_no_errno(socketpair(AF_UNIX, SOCK_STREAM, 0, fds));
	close(fds[1]);
	socket = g_socket_new_from_fd(fds[0], &error);
	g_assert_no_error(error);
	base = g_socket_connection_factory_create_connection(socket);
	tls = g_initable_new(g_tls_backend_get_client_connection_type(g_tls_backend_get_default()),
	                     NULL, &error, "base-io-stream", base, NULL);
	g_assert_no_error(error);
	return g_object_ref(g_tls_connection_get_database(G_TLS_CONNECTION(tls)));
}

/* A kubeconfig without a CA keeps the system's trust: that is the cluster's then. */
static void
test_tls_trust_without_ca(void)
{
	g_autoptr(MeshSyncKubeConfig) config = config_new("");
	g_autoptr(GTlsDatabase) before =
	        g_tls_backend_get_default_database(g_tls_backend_get_default());
	g_autoptr(GTlsDatabase) after = NULL;

	g_assert_false(meshsyncd_tls_trust_cluster_only(config));
	after = g_tls_backend_get_default_database(g_tls_backend_get_default());
	g_assert_true(after == before);
	g_assert_false(MESHSYNCD_IS_NO_TRUST(after));
}

/* With the cluster's CA named, new connections start from a database that trusts nothing:
 * no system bundle parsed for them, and one that kept it would fail closed. */
static void
test_tls_trust_with_ca(void)
{
	g_autofree gchar *ca = g_test_build_filename(G_TEST_DIST, "data", "tls", "ca.pem", NULL);
	g_autofree gchar *cluster = g_strdup_printf(", certificate-authority: '%s'", ca);
	g_autoptr(MeshSyncKubeConfig) config = config_new(cluster);
	g_autoptr(GTlsDatabase) database = NULL;
	g_autoptr(GTlsCertificate) certificate = NULL;
	g_autoptr(GError) error = NULL;

	g_assert_true(meshsyncd_tls_trust_cluster_only(config));
	database = new_connection_database();
	g_assert_true(MESHSYNCD_IS_NO_TRUST(database));
	certificate = g_tls_certificate_new_from_file(ca, &error);
	g_assert_no_error(error);
	g_assert_cmpint(g_tls_database_verify_chain(
	                        database, certificate, G_TLS_DATABASE_PURPOSE_AUTHENTICATE_SERVER,
	                        NULL, NULL, G_TLS_DATABASE_VERIFY_NONE, NULL, &error),
	                ==, G_TLS_CERTIFICATE_UNKNOWN_CA);
	g_assert_no_error(error);
}

/* Skipping verification, the daemon needs no trust either. */
static void
test_tls_trust_insecure(void)
{
	g_autoptr(MeshSyncKubeConfig) config = config_new(", insecure-skip-tls-verify: true");
	g_autoptr(GTlsDatabase) database = NULL;

	g_assert_true(meshsyncd_tls_trust_cluster_only(config));
	database = new_connection_database();
	g_assert_true(MESHSYNCD_IS_NO_TRUST(database));
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	/* in this order: the first needs the process's default untouched */
	g_test_add_func("/daemon/tls-trust/without-ca", test_tls_trust_without_ca);
	g_test_add_func("/daemon/tls-trust/with-ca", test_tls_trust_with_ca);
	g_test_add_func("/daemon/tls-trust/insecure", test_tls_trust_insecure);
	return g_test_run();
}
