/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-churn.h"

#include <stdlib.h>
#include <string.h>

#include "kubesim-controllers.h"
#include "kubesim-kubelet.h"
#include "kubesim-workload.h"
#include "kubesim-write.h"

#define TICK_MS 100

/* Mixed into churn's seed: with --seed alone its random stream would be the generator's, and
 * the uids it draws those of objects already loaded. */
#define CHURN_STREAM 0x6368726eu /* "chrn" */

struct _KubesimChurn {
	KubesimStore *store;
	KubesimResource *pods;
	GRand *rand;
	gdouble per_tick;
	gdouble carry;   /* fractional events owed from earlier ticks */
	guint64 created; /* pods created, for the names of pods without an owner */
	GQueue pending;  /* keys of pods created Pending, oldest first */
	KubesimEdits edits;
	KubesimControllers *controllers; /* (nullable) */
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
		gchar probe[2] = {(gchar)g_rand_int_range(churn->rand, 'a', 'z' + 1), '\0'};
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

/* The JSON string value after @marker in @js, if it needs no unescaping. */
static gchar *
value_after(const gchar *js, gsize len, const gchar *marker, const gchar **end)
{
	const gchar *p = kubesim_find(js, len, marker);
	const gchar *close;

	if (p == NULL)
		return NULL;
	p += strlen(marker);
	close = memchr(p, '"', len - (gsize)(p - js));
	if (close == NULL || memchr(p, '\\', (gsize)(close - p)) != NULL)
		return NULL;
	if (end != NULL)
		*end = close;
	return g_strndup(p, (gsize)(close - p));
}

/* What a replacement for @pod needs, read from the way kubesim writes its pods: its
 * ReplicaSet, app, image and port. FALSE for pods of any other shape. */
typedef struct {
	KubesimPodTemplate tmpl;
	gchar *rs_name;
	gchar *rs_uid;
	gchar *image;
} Replacement;

static void
replacement_clear(Replacement *r)
{
	g_free(r->rs_name);
	g_free(r->rs_uid);
	g_free(r->image);
}

static gboolean
replacement_read(KubesimObject *pod, Replacement *r)
{
	g_autoptr(GBytes) json = kubesim_object_get_json(pod);
	gsize len;
	const gchar *js = g_bytes_get_data(json, &len);
	const gchar *end = NULL;
	const gchar *port;

	memset(r, 0, sizeof *r);
	r->tmpl.namespace_ = pod->namespace_;
	r->tmpl.app = kubesim_object_label(pod, "app");
	r->tmpl.hash = kubesim_object_label(pod, "pod-template-hash");
	r->rs_name = value_after(js, len,
	                         "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
	                         "\"ReplicaSet\",\"name\":\"",
	                         &end);
	if (r->rs_name != NULL)
		r->rs_uid = value_after(end, len - (gsize)(end - js), "\",\"uid\":\"", NULL);
	r->image = value_after(js, len, "\"containers\":[{\"name\":", &end);
	g_clear_pointer(&r->image, g_free);
	if (end != NULL)
		r->image = value_after(end, len - (gsize)(end - js), "\"image\":\"", &end);
	if (r->tmpl.namespace_ == NULL || r->tmpl.app == NULL || r->tmpl.hash == NULL ||
	    r->rs_uid == NULL || r->image == NULL)
		return FALSE;
	port = kubesim_find(end, len - (gsize)(end - js), "\"containerPort\":");
	if (port == NULL)
		return FALSE;
	r->tmpl.port = (guint)strtoul(port + 16, NULL, 10);
	r->tmpl.rs_name = r->rs_name;
	r->tmpl.rs_uid = r->rs_uid;
	r->tmpl.image = r->image;
	return r->tmpl.port > 0;
}

static gint64
now_seconds(void)
{
	return g_get_real_time() / G_USEC_PER_SEC;
}

/* Creates a pod like @victim, as its ReplicaSet would replace it: Pending, under a new name. */
static void
churn_create(KubesimChurn *churn, KubesimObject *victim)
{
	Replacement r = {0};
	KubesimPodTemplate bare = {0};
	const KubesimPodTemplate *tmpl = &bare;
	g_autofree gchar *name = NULL;
	g_auto(KubesimNewPod) pod = {0};
	g_autoptr(KubesimObject) obj = NULL;
	guint64 index = churn->created++;

	if (victim != NULL && replacement_read(victim, &r)) {
		tmpl = &r.tmpl;
		/* the server's generateName: a random suffix, drawn again while taken */
		do {
			gchar suffix[6];
			g_free(name);
			kubesim_random_suffix(churn->rand, suffix, 5);
			name = g_strdup_printf("%s-%s", r.rs_name, suffix);
		} while (kubesim_resource_get(churn->pods, victim->namespace_, name) != NULL);
	} else {
		bare.namespace_ = victim != NULL ? victim->namespace_ : "default";
		bare.app = "churn";
		bare.image = "nginx:1.27.0";
		bare.port = 8080;
		for (;;) {
			g_free(name);
			name = g_strdup_printf("churn-%" G_GUINT64_FORMAT, index);
			if (kubesim_resource_get(churn->pods, bare.namespace_, name) == NULL)
				break;
			index = churn->created++;
		}
	}
	kubesim_workload_new_pod(tmpl, name, now_seconds(), TRUE, index % 50 == 0, churn->rand,
	                         &pod);
	/* the name was checked free, so this adds */
	obj = kubesim_store_add(churn->store, churn->pods, pod.json, tmpl->namespace_, name,
	                        pod.uid, pod.labels->str, pod.labels->len, pod.rv_off, pod.rv_len);
	replacement_clear(&r);
	g_assert(obj != NULL);
	g_queue_push_tail(&churn->pending, g_strdup(obj->key));
	if (churn->controllers != NULL)
		kubesim_controllers_pod_changed(churn->controllers, NULL, obj);
}

/* The oldest pod created Pending that is still there: the kubelet starts it next. */
static KubesimObject *
next_pending(KubesimChurn *churn)
{
	gchar *key;

	while ((key = g_queue_pop_head(&churn->pending)) != NULL) {
		KubesimObject *obj = g_tree_lookup(churn->pods->objects, key);
		g_free(key);
		if (obj != NULL)
			return obj;
	}
	return NULL;
}

static void
churn_modify(KubesimChurn *churn, KubesimObject *victim)
{
	g_autoptr(KubesimObject) obj = NULL;
	/* the store lets go of the old version */
	g_autoptr(KubesimObject) before = kubesim_object_ref(victim);

	if (kubesim_kubelet_update(victim, now_seconds(), churn->rand, &churn->edits))
		obj = kubesim_store_modify(
		        churn->store, churn->pods, victim,
		        (const KubesimSplice *)(gpointer)churn->edits.splices->data,
		        churn->edits.splices->len, churn->edits.text->str);
	else
		obj = kubesim_store_touch(churn->store, churn->pods, victim);
	if (churn->controllers != NULL)
		kubesim_controllers_pod_changed(churn->controllers, before, obj);
}

static void
churn_one(KubesimChurn *churn)
{
	guint choice = g_rand_int_range(churn->rand, 0, 10);
	KubesimObject *victim = random_pod(churn);

	/* mostly updates; creates and deletes balance so the pod count stays near its start */
	if (victim != NULL && choice < 6) {
		KubesimObject *pending = next_pending(churn);
		churn_modify(churn, pending != NULL ? pending : victim);
	} else if (victim == NULL || choice < 8) {
		churn_create(churn, victim);
	} else {
		g_autoptr(KubesimObject) obj = kubesim_store_delete(
		        churn->store, churn->pods, victim->namespace_, victim->name, NULL);
		if (churn->controllers != NULL && obj != NULL)
			kubesim_controllers_pod_changed(churn->controllers, obj, NULL);
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
	if (churn->controllers != NULL)
		kubesim_controllers_sync(churn->controllers, now_seconds(), 1);
	return G_SOURCE_CONTINUE;
}

KubesimChurn *
kubesim_churn_new(KubesimStore *store,
                  gdouble events_per_second,
                  guint32 seed,
                  gboolean controllers)
{
	KubesimChurn *churn = g_new0(KubesimChurn, 1);
	guint32 seeds[] = {seed, CHURN_STREAM};

	churn->store = store;
	churn->pods = kubesim_resource_ref(kubesim_store_lookup(store, "", "v1", "pods"));
	churn->rand = g_rand_new_with_seed_array(seeds, G_N_ELEMENTS(seeds));
	churn->per_tick = events_per_second * TICK_MS / 1000.0;
	g_queue_init(&churn->pending);
	kubesim_edits_init(&churn->edits);
	if (controllers)
		churn->controllers = kubesim_controllers_new(store);
	churn->source_id = g_timeout_add(TICK_MS, on_tick, churn);
	return churn;
}

void
kubesim_churn_free(KubesimChurn *churn)
{
	g_clear_handle_id(&churn->source_id, g_source_remove);
	kubesim_resource_unref(churn->pods);
	g_rand_free(churn->rand);
	g_queue_clear_full(&churn->pending, g_free);
	kubesim_edits_clear(&churn->edits);
	g_clear_pointer(&churn->controllers, kubesim_controllers_free);
	g_free(churn);
}
