/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-server.h"

#include "kubesim-resources.h"
#include "kubesim-workload.h"
#include "kubesim-write.h"

typedef struct {
	KubesimStore *store;
	guint loaded;
	guint refused;
} Loader;

/* Where generated and loaded objects go: upsert, so later manifests win. */
static void
load_object(GBytes *json, gpointer user_data)
{
	Loader *loader = user_data;
	KubesimStatus *status = NULL;
	g_autoptr(KubesimObject) obj = kubesim_store_load(loader->store, json, &status);

	if (obj == NULL) {
		loader->refused++;
		g_warning("object not loaded: %s", status->message);
		kubesim_status_free(status);
		return;
	}
	loader->loaded++;
}

/* Manifests were written by kubectl, as the annotation it leaves says: apply or create. */
static void
load_manifest_object(GBytes *json, gpointer user_data)
{
	Loader *loader = user_data;
	gsize len;
	const gchar *js = g_bytes_get_data(json, &len);
	gboolean applied =
	        kubesim_find(js, len, "\"kubectl.kubernetes.io/last-applied-configuration\"") !=
	        NULL;

	kubesim_store_set_field_manager(
	        loader->store, applied ? "kubectl-client-side-apply" : "kubectl-create", NULL);
	load_object(json, user_data);
	kubesim_store_set_field_manager(loader->store, NULL, NULL);
}

gboolean
kubesim_workload_load(KubesimStore *store,
                      const KubesimWorkload *workload,
                      guint *loaded,
                      guint *refused,
                      GError **error)
{
	Loader loader = {store, 0, 0};
	gboolean ok = TRUE;

	kubesim_resources_install_objects(store);
	if (workload->pods > 0 || workload->namespaces > 0)
		kubesim_workload_generate(workload->namespaces > 0 ? workload->namespaces : 1,
		                          workload->pods, workload->seed, load_object, &loader);
	if (workload->data != NULL)
		ok = kubesim_manifests_load(workload->data, load_manifest_object, &loader, error);
	/* what was loaded is the starting state, not history a watch could replay */
	kubesim_store_compact(store);
	if (loaded != NULL)
		*loaded = loader.loaded;
	if (refused != NULL)
		*refused = loader.refused;
	return ok;
}

gboolean
kubesim_cluster_replace(KubesimServer *self,
                        const KubesimWorkload *workload,
                        guint64 rv,
                        GError **error)
{
	guint64 before = kubesim_store_get_rv(self->store);
	g_autofree gchar *data = g_strdup(workload->data);
	guint loaded = 0, refused = 0;
	gboolean ok;

	/* a restarted server drops every connection; its clients watch again */
	kubesim_watch_close_all(self);
	kubesim_exec_close_all(self);
	kubesim_logs_clear(self->logs);
	kubesim_store_reset(self->store, rv);
	ok = kubesim_workload_load(self->store, workload, &loaded, &refused, error);
	g_free(self->workload.data);
	self->workload = *workload;
	self->workload.data = g_steal_pointer(&data);
	self->replaced++;
	g_message("cluster replaced: %u objects (%u refused), resourceVersion %" G_GUINT64_FORMAT
	          " (was %" G_GUINT64_FORMAT ")",
	          loaded, refused, kubesim_store_get_rv(self->store), before);
	return ok;
}

void
kubesim_cluster_restore(KubesimServer *self, guint64 bump)
{
	guint64 before = kubesim_store_get_rv(self->store);

	g_return_if_fail(self->snapshot != NULL);
	kubesim_watch_close_all(self);
	kubesim_exec_close_all(self);
	kubesim_logs_clear(self->logs);
	kubesim_store_restore(self->store, self->snapshot, bump);
	self->replaced++;
	g_message("cluster restored: %u objects, resourceVersion %" G_GUINT64_FORMAT
	          " (was %" G_GUINT64_FORMAT ")",
	          kubesim_store_count_objects(self->store), kubesim_store_get_rv(self->store),
	          before);
}
