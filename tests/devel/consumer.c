/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/* A program that uses libmeshsync as a third party would: through pkg-config only. */

#include <libmeshsync/meshsync.h>

int
main(int argc, char **argv)
{
	static const gchar kubeconfig[] = "apiVersion: v1\n"
	                                  "kind: Config\n"
	                                  "clusters:\n"
	                                  "- name: c\n"
	                                  "  cluster: {server: \"https://127.0.0.1:6443\"}\n"
	                                  "users:\n"
	                                  "- name: u\n"
	                                  "  user: {token: t}\n"
	                                  "contexts:\n"
	                                  "- name: x\n"
	                                  "  context: {cluster: c, user: u}\n"
	                                  "current-context: x\n";
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config =
	        meshsync_kube_config_new_from_data(kubeconfig, -1, NULL, &error);

	if (config == NULL) {
		g_printerr("%s\n", error->message);
		return 1;
	}
	g_print("%s %s\n", meshsync_get_version(), meshsync_kube_config_get_server(config));
	return 0;
}
