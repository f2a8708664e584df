/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-churn.h"

#include "kubesim-workload.h"

#define TICK_MS 100

struct _KubesimChurn {
	KubesimStore *store;
	KubesimResource *pods;
	GRand *rand;
	gdouble per_tick;
	gdouble carry; /* fractional events owed from earlier ticks */
	guint64 created;
	guint source_id;
};

static KubesimObject *
random_pod(KubesimChurn *churn)
{
	gint n = g_tree_nnodes(churn->pods->objects);
	GTreeNode *node;
	gint skip;

	if (n == 0)
		return NULL;
	/* a random start key is cheaper than walking to a random index */
	{
		g_autofree gchar *probe =
		        g_strdup_printf("%c", (gchar)g_rand_int_range(churn->rand, 'a', 'z' + 1));
		node = g_tree_lower_bound(churn->pods->objects, probe);
	}
	if (node == NULL)
		node = g_tree_node_first(churn->pods->objects);
	for (skip = g_rand_int_range(churn->rand, 0, MIN(n, 64)); skip > 0; skip--) {
		GTreeNode *next = g_tree_node_next(node);
		node = next != NULL ? next : g_tree_node_first(churn->pods->objects);
	}
	return g_tree_node_value(node);
}

static void
churn_one(KubesimChurn *churn)
{
	guint choice = g_rand_int_range(churn->rand, 0, 10);
	KubesimObject *victim = random_pod(churn);
	KubesimStatus *status = NULL;

	/* mostly updates; creates and deletes balance so the pod count stays near its start */
	if (victim != NULL && choice < 6) {
		g_autoptr(KubesimObject) obj =
		        kubesim_store_touch(churn->store, churn->pods, victim);
	} else if (victim == NULL || choice < 8) {
		const gchar *ns = victim != NULL ? victim->namespace_ : "default";
		g_autoptr(GBytes) json =
		        kubesim_workload_new_pod(ns, churn->created++, churn->rand);
		g_autoptr(KubesimObject) obj =
		        kubesim_store_upsert(churn->store, churn->pods, json, &status);
		if (obj == NULL) {
			g_warning("churn: new pod refused: %s", status->message);
			kubesim_status_free(status);
		}
	} else {
		g_autoptr(KubesimObject) obj = kubesim_store_delete(
		        churn->store, churn->pods, victim->namespace_, victim->name, NULL);
	}
}

static gboolean
on_tick(gpointer data)
{
	KubesimChurn *churn = data;
	guint n;

	churn->carry += churn->per_tick;
	n = (guint)churn->carry;
	churn->carry -= n;
	while (n-- > 0)
		churn_one(churn);
	return G_SOURCE_CONTINUE;
}

KubesimChurn *
kubesim_churn_new(KubesimStore *store, gdouble events_per_second, guint32 seed)
{
	KubesimChurn *churn = g_new0(KubesimChurn, 1);

	churn->store = store;
	churn->pods = kubesim_resource_ref(kubesim_store_lookup(store, "", "v1", "pods"));
	churn->rand = g_rand_new_with_seed(seed);
	churn->per_tick = events_per_second * TICK_MS / 1000.0;
	churn->source_id = g_timeout_add(TICK_MS, on_tick, churn);
	return churn;
}

void
kubesim_churn_free(KubesimChurn *churn)
{
	g_clear_handle_id(&churn->source_id, g_source_remove);
	kubesim_resource_unref(churn->pods);
	g_rand_free(churn->rand);
	g_free(churn);
}
