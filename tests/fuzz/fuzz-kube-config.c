/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * The kubeconfig loader: meshsync_kube_config_new_from_data() on YAML (or JSON) text, with the
 * current context and with a named one. Loading never runs an exec plugin (that happens when
 * credentials are asked for), so fuzzed plugin commands are never started; files the input
 * names are only read.
 *
 * Checked: a refused config sets a MESHSYNC_ERROR; an accepted one has a server, a context
 * name and a source.
 *
 * Input: up to the first NUL byte, the context name to ask for; the rest is the config.
 */

#include "config.h"

#include <string.h>

#include "fuzz-common.h"
#include "meshsync-error.h"
#include "meshsync-kube-config.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_logs();
	return 0;
}

static void
load(const gchar *text, gsize length, const gchar *context)
{
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(GError) error = NULL;

	config = meshsync_kube_config_new_from_data(text, (gssize)length, context, &error);
	if (config == NULL) {
		FUZZ_CHECK(error != NULL && error->domain == MESHSYNC_ERROR);
		return;
	}
	FUZZ_CHECK(error == NULL);
	FUZZ_CHECK(meshsync_kube_config_get_server(config) != NULL);
	FUZZ_CHECK(meshsync_kube_config_get_source(config) != NULL);
	(void)meshsync_kube_config_get_context_name(config);
	(void)meshsync_kube_config_get_cluster_name(config);
	(void)meshsync_kube_config_get_user_name(config);
	(void)meshsync_kube_config_get_namespace(config);
	(void)meshsync_kube_config_get_tls_server_name(config);
	(void)meshsync_kube_config_get_insecure_skip_tls_verify(config);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const gchar *text = (const gchar *)data;
	const gchar *nul = memchr(text, '\0', size);

	if (nul != NULL && nul - text < 64) {
		g_autofree gchar *context = g_strndup(text, (gsize)(nul - text));
		gsize skip = (gsize)(nul - text) + 1;

		load(text + skip, size - skip, context);
		load(text + skip, size - skip, NULL);
	} else {
		load(text, size, NULL);
	}
	return 0;
}
