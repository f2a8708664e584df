/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-controllers.h"

#include <stdlib.h>
#include <string.h>

#include "kubesim-json.h"
#include "kubesim-write.h"

typedef struct _Deployment Deployment;

typedef struct {
	gchar *key; /* namespace/name in the store */
	Deployment *owner;
	guint64 revision; /* deployment.kubernetes.io/revision: the highest is the current one */
	gint pods;
	gint ready;
	gboolean dirty;
	gint64 written;
} ReplicaSet;

struct _Deployment {
	gchar *key;
	GPtrArray *sets; /* ReplicaSet, borrowed */
	gboolean dirty;
	gint64 written;
};

struct _KubesimControllers {
	KubesimStore *store;
	KubesimResource *replicasets;
	KubesimResource *deployments;
	GHashTable *sets_by_uid;        /* uid → ReplicaSet */
	GHashTable *deployments_by_uid; /* uid → Deployment */
	GPtrArray *dirty_sets;          /* ReplicaSet, borrowed, each once */
	GPtrArray *dirty_deployments;
	GString *text;
	GArray *splices; /* KubesimSplice */
	guint epoch;     /* the store's, when the owners were read */
};

static void
replicaset_free(gpointer data)
{
	ReplicaSet *rs = data;

	g_free(rs->key);
	g_free(rs);
}

static void
deployment_free(gpointer data)
{
	Deployment *d = data;

	g_free(d->key);
	g_ptr_array_unref(d->sets);
	g_free(d);
}

/* The uid of the owner of @kind in an ownerReferences list as kubesim writes it. */
static gchar *
owner_uid(KubesimObject *obj, const gchar *kind)
{
	g_autoptr(GBytes) json = kubesim_object_get_json(obj);
	gsize len;
	const gchar *js = g_bytes_get_data(json, &len);
	g_autofree gchar *marker = g_strdup_printf("\"kind\":\"%s\",\"name\":\"", kind);
	const gchar *p = kubesim_find(js, len, "\"ownerReferences\":[");
	const gchar *end;

	if (p == NULL || (p = kubesim_find(p, len - (gsize)(p - js), marker)) == NULL ||
	    (p = kubesim_find(p, len - (gsize)(p - js), "\",\"uid\":\"")) == NULL)
		return NULL;
	p += strlen("\",\"uid\":\"");
	end = memchr(p, '"', len - (gsize)(p - js));
	return end != NULL ? g_strndup(p, (gsize)(end - p)) : NULL;
}

static gboolean
pod_ready(KubesimObject *pod)
{
	g_autoptr(GBytes) json = kubesim_object_get_json(pod);
	gsize len;
	const gchar *js = g_bytes_get_data(json, &len);

	return kubesim_find(js, len, "{\"type\":\"Ready\",\"status\":\"True\"") != NULL;
}

static guint64
revision_of(KubesimObject *rs)
{
	g_autoptr(GBytes) json = kubesim_object_get_json(rs);
	gsize len;
	const gchar *js = g_bytes_get_data(json, &len);
	const gchar *p = kubesim_find(js, len, "\"deployment.kubernetes.io/revision\":\"");

	return p != NULL ? g_ascii_strtoull(p + strlen("\"deployment.kubernetes.io/revision\":\""),
	                                    NULL, 10)
	                 : 0;
}

static ReplicaSet *
replicaset_of(KubesimControllers *ctrl, KubesimObject *pod)
{
	g_autofree gchar *uid = owner_uid(pod, "ReplicaSet");

	return uid != NULL ? g_hash_table_lookup(ctrl->sets_by_uid, uid) : NULL;
}

/* Reads the owners and counts the pods, as the store has them now, without writing. */
static void
read_owners(KubesimControllers *ctrl)
{
	KubesimResource *pods = kubesim_store_lookup(ctrl->store, "", "v1", "pods");
	GTreeNode *node;

	g_ptr_array_set_size(ctrl->dirty_sets, 0);
	g_ptr_array_set_size(ctrl->dirty_deployments, 0);
	g_hash_table_remove_all(ctrl->sets_by_uid);
	g_hash_table_remove_all(ctrl->deployments_by_uid);
	ctrl->epoch = kubesim_store_get_epoch(ctrl->store);
	for (node = g_tree_node_first(ctrl->deployments->objects); node != NULL;
	     node = g_tree_node_next(node)) {
		KubesimObject *obj = g_tree_node_value(node);
		Deployment *d = g_new0(Deployment, 1);
		d->key = g_strdup(obj->key);
		d->sets = g_ptr_array_new();
		g_hash_table_replace(ctrl->deployments_by_uid, g_strdup(obj->uid), d);
	}
	for (node = g_tree_node_first(ctrl->replicasets->objects); node != NULL;
	     node = g_tree_node_next(node)) {
		KubesimObject *obj = g_tree_node_value(node);
		ReplicaSet *rs = g_new0(ReplicaSet, 1);
		g_autofree gchar *dep = owner_uid(obj, "Deployment");
		rs->key = g_strdup(obj->key);
		rs->revision = revision_of(obj);
		rs->owner = dep != NULL ? g_hash_table_lookup(ctrl->deployments_by_uid, dep) : NULL;
		if (rs->owner != NULL)
			g_ptr_array_add(rs->owner->sets, rs);
		g_hash_table_replace(ctrl->sets_by_uid, g_strdup(obj->uid), rs);
	}
	/* what the pods are as churn starts, without writing anything */
	for (node = pods != NULL ? g_tree_node_first(pods->objects) : NULL; node != NULL;
	     node = g_tree_node_next(node)) {
		KubesimObject *pod = g_tree_node_value(node);
		ReplicaSet *rs = replicaset_of(ctrl, pod);
		if (rs != NULL) {
			rs->pods++;
			rs->ready += pod_ready(pod);
		}
	}
}

/* A replaced or restored cluster has other owners and pods. */
static void
check_epoch(KubesimControllers *ctrl)
{
	if (ctrl->epoch != kubesim_store_get_epoch(ctrl->store))
		read_owners(ctrl);
}

KubesimControllers *
kubesim_controllers_new(KubesimStore *store)
{
	KubesimControllers *ctrl = g_new0(KubesimControllers, 1);

	ctrl->store = store;
	ctrl->replicasets =
	        kubesim_resource_ref(kubesim_store_lookup(store, "apps", "v1", "replicasets"));
	ctrl->deployments =
	        kubesim_resource_ref(kubesim_store_lookup(store, "apps", "v1", "deployments"));
	ctrl->sets_by_uid = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, replicaset_free);
	ctrl->deployments_by_uid =
	        g_hash_table_new_full(g_str_hash, g_str_equal, g_free, deployment_free);
	ctrl->dirty_sets = g_ptr_array_new();
	ctrl->dirty_deployments = g_ptr_array_new();
	ctrl->text = g_string_new(NULL);
	ctrl->splices = g_array_new(FALSE, FALSE, sizeof(KubesimSplice));
	read_owners(ctrl);
	return ctrl;
}

void
kubesim_controllers_free(KubesimControllers *ctrl)
{
	kubesim_resource_unref(ctrl->replicasets);
	kubesim_resource_unref(ctrl->deployments);
	g_ptr_array_unref(ctrl->dirty_sets);
	g_ptr_array_unref(ctrl->dirty_deployments);
	g_hash_table_unref(ctrl->sets_by_uid);
	g_hash_table_unref(ctrl->deployments_by_uid);
	g_string_free(ctrl->text, TRUE);
	g_array_unref(ctrl->splices);
	g_free(ctrl);
}

static void
mark_dirty(KubesimControllers *ctrl, ReplicaSet *rs)
{
	if (!rs->dirty) {
		rs->dirty = TRUE;
		g_ptr_array_add(ctrl->dirty_sets, rs);
	}
	if (rs->owner != NULL && !rs->owner->dirty) {
		rs->owner->dirty = TRUE;
		g_ptr_array_add(ctrl->dirty_deployments, rs->owner);
	}
}

void
kubesim_controllers_pod_changed(KubesimControllers *ctrl,
                                KubesimObject *before,
                                KubesimObject *after)
{
	ReplicaSet *rs;
	gint was, is;

	/* the counts read from a replaced store already hold this change */
	if (ctrl->epoch != kubesim_store_get_epoch(ctrl->store)) {
		read_owners(ctrl);
		return;
	}
	rs = replicaset_of(ctrl, after != NULL ? after : before);
	was = before != NULL ? pod_ready(before) : 0;
	is = after != NULL ? pod_ready(after) : 0;
	if (rs == NULL)
		return;
	if (before == NULL)
		rs->pods++;
	if (after == NULL)
		rs->pods--;
	rs->ready += is - was;
	if (before == NULL || after == NULL || is != was)
		mark_dirty(ctrl, rs);
}

/* Adds a splice of @offset, @length in the stored JSON by what was appended to ctrl->text
 * since @text_start. */
static void
add_splice(KubesimControllers *ctrl, gsize offset, gsize length, gsize text_start)
{
	KubesimSplice sp = {offset, length, text_start, ctrl->text->len - text_start};

	g_array_append_val(ctrl->splices, sp);
}

/* The time of the controller's status entry in managedFields: the controller wrote status. */
static void
splice_status_time(KubesimControllers *ctrl, const MsdJsonTokens *doc, gint64 now)
{
	gint fields = msd_json_tokens_path(doc, 0, "metadata", "managedFields", NULL);
	gint i, n = msd_json_tokens_size(doc, fields);
	gint entry = fields + 1;

	for (i = 0; i < n; i++, entry = msd_json_tokens_skip(doc, entry)) {
		gint time = msd_json_tokens_member(doc, entry, "time");
		gsize start;
		if (!msd_json_tokens_string_equals(doc,
		                                   msd_json_tokens_member(doc, entry, "manager"),
		                                   "kube-controller-manager") ||
		    !msd_json_tokens_string_equals(
		            doc, msd_json_tokens_member(doc, entry, "subresource"), "status") ||
		    !msd_json_tokens_is_string(doc, time))
			continue;
		start = ctrl->text->len;
		kubesim_append_time(ctrl->text, now);
		add_splice(ctrl, doc->tokens[time].start - 1,
		           doc->tokens[time].end + 1 - (doc->tokens[time].start - 1), start);
		return;
	}
}

/* Appends ,"name":value unless @value is 0 (omitempty) or @always. */
static void
append_count(GString *s, const gchar *name, gint value, gboolean always)
{
	if (value <= 0 && !always)
		return;
	g_string_append_printf(s, ",\"%s\":", name);
	kubesim_append_uint(s, (guint64)MAX(value, 0));
}

static void
append_raw_member(GString *s, const MsdJsonTokens *doc, gint object, const gchar *name)
{
	gint value = msd_json_tokens_member(doc, object, name);
	const gchar *raw;
	gsize len;

	if (value < 0)
		return;
	raw = msd_json_tokens_span(doc, value, &len);
	g_string_append_printf(s, ",\"%s\":", name);
	g_string_append_len(s, raw, len);
}

/* Writes the new status (and the controller's managedFields time) if the status changed. */
static void
commit(KubesimControllers *ctrl,
       KubesimResource *res,
       KubesimObject *obj,
       const MsdJsonTokens *doc,
       gint status,
       gsize status_text,
       gint64 now)
{
	gsize old_len, new_len = ctrl->text->len - status_text;
	const gchar *old = msd_json_tokens_span(doc, status, &old_len);
	g_autoptr(KubesimObject) written = NULL;

	if (old_len == new_len && memcmp(old, ctrl->text->str + status_text, new_len) == 0)
		return;
	add_splice(ctrl, (gsize)(old - doc->data), old_len, status_text);
	splice_status_time(ctrl, doc, now);
	/* the managedFields time comes before status in the object */
	if (ctrl->splices->len == 2) {
		KubesimSplice *sp = (KubesimSplice *)(gpointer)ctrl->splices->data;
		KubesimSplice tmp = sp[0];
		sp[0] = sp[1];
		sp[1] = tmp;
	}
	written = kubesim_store_modify(ctrl->store, res, obj,
	                               (const KubesimSplice *)(gpointer)ctrl->splices->data,
	                               ctrl->splices->len, ctrl->text->str);
}

static void
write_replicaset(KubesimControllers *ctrl, ReplicaSet *rs, gint64 now)
{
	KubesimObject *obj = g_tree_lookup(ctrl->replicasets->objects, rs->key);
	g_auto(MsdJsonTokens) doc = MSD_JSON_TOKENS_INIT;
	g_autoptr(GBytes) json = NULL;
	gint status;
	gsize start;

	if (obj == NULL || (json = kubesim_object_get_json(obj)) == NULL ||
	    !msd_json_tokens_parse(&doc, g_bytes_get_data(json, NULL), g_bytes_get_size(json),
	                           NULL) ||
	    !msd_json_tokens_is_object(&doc, (status = msd_json_tokens_member(&doc, 0, "status"))))
		return;
	g_string_truncate(ctrl->text, 0);
	g_array_set_size(ctrl->splices, 0);
	start = ctrl->text->len;
	/* ReplicaSetStatus in its Go order; counts are omitempty but replicas */
	g_string_append(ctrl->text, "{\"replicas\":");
	kubesim_append_uint(ctrl->text, (guint64)MAX(rs->pods, 0));
	append_count(ctrl->text, "fullyLabeledReplicas", rs->pods, FALSE);
	append_count(ctrl->text, "readyReplicas", rs->ready, FALSE);
	append_count(ctrl->text, "availableReplicas", rs->ready, FALSE);
	append_raw_member(ctrl->text, &doc, status, "observedGeneration");
	append_raw_member(ctrl->text, &doc, status, "conditions");
	g_string_append_c(ctrl->text, '}');
	commit(ctrl, ctrl->replicasets, obj, &doc, status, start, now);
}

/* maxUnavailable of a RollingUpdate strategy, scaled to @desired and rounded down. */
static gint
max_unavailable(const MsdJsonTokens *doc, gint desired)
{
	gint value = msd_json_tokens_path(doc, 0, "spec", "strategy", "rollingUpdate",
	                                  "maxUnavailable", NULL);
	g_autofree gchar *text = msd_json_tokens_dup_string(doc, value);

	if (text == NULL)
		return desired / 4;
	if (g_str_has_suffix(text, "%"))
		return (gint)(desired * g_ascii_strtoll(text, NULL, 10) / 100);
	return (gint)g_ascii_strtoll(text, NULL, 10);
}

static void
append_available_condition(GString *s, gboolean available, gint64 now)
{
	g_string_append(s, available ? "{\"type\":\"Available\",\"status\":\"True\""
	                             : "{\"type\":\"Available\",\"status\":\"False\"");
	g_string_append(s, ",\"lastUpdateTime\":");
	kubesim_append_time(s, now);
	g_string_append(s, ",\"lastTransitionTime\":");
	kubesim_append_time(s, now);
	g_string_append(s, available ? ",\"reason\":\"MinimumReplicasAvailable\",\"message\":"
	                               "\"Deployment has minimum availability.\"}"
	                             : ",\"reason\":\"MinimumReplicasUnavailable\",\"message\":"
	                               "\"Deployment does not have minimum availability.\"}");
}

static void
write_deployment(KubesimControllers *ctrl, Deployment *d, gint64 now)
{
	KubesimObject *obj = g_tree_lookup(ctrl->deployments->objects, d->key);
	g_auto(MsdJsonTokens) doc = MSD_JSON_TOKENS_INIT;
	g_autoptr(GBytes) json = NULL;
	gint status, conditions, desired, total = 0, ready = 0, updated = 0;
	guint64 newest = 0;
	gboolean available;
	gsize start;
	guint i;

	if (obj == NULL || (json = kubesim_object_get_json(obj)) == NULL ||
	    !msd_json_tokens_parse(&doc, g_bytes_get_data(json, NULL), g_bytes_get_size(json),
	                           NULL) ||
	    !msd_json_tokens_is_object(&doc, (status = msd_json_tokens_member(&doc, 0, "status"))))
		return;
	{
		g_autofree gchar *replicas = msd_json_tokens_dup_string(
		        &doc, msd_json_tokens_path(&doc, 0, "spec", "replicas", NULL));
		desired = replicas != NULL ? (gint)g_ascii_strtoll(replicas, NULL, 10) : 1;
	}
	for (i = 0; i < d->sets->len; i++) {
		ReplicaSet *rs = g_ptr_array_index(d->sets, i);
		total += MAX(rs->pods, 0);
		ready += MAX(rs->ready, 0);
		if (rs->revision >= newest) {
			newest = rs->revision;
			updated = MAX(rs->pods, 0);
		}
	}
	available = ready >= desired - max_unavailable(&doc, desired);
	g_string_truncate(ctrl->text, 0);
	g_array_set_size(ctrl->splices, 0);
	start = ctrl->text->len;
	/* DeploymentStatus in its Go order, every count omitempty */
	g_string_append_c(ctrl->text, '{');
	append_raw_member(ctrl->text, &doc, status, "observedGeneration");
	append_count(ctrl->text, "replicas", total, FALSE);
	append_count(ctrl->text, "updatedReplicas", updated, FALSE);
	append_count(ctrl->text, "readyReplicas", ready, FALSE);
	append_count(ctrl->text, "availableReplicas", ready, FALSE);
	append_count(ctrl->text, "unavailableReplicas", desired - ready, FALSE);
	conditions = msd_json_tokens_member(&doc, status, "conditions");
	if (msd_json_tokens_is_array(&doc, conditions)) {
		gint n = msd_json_tokens_size(&doc, conditions);
		gint c = conditions + 1, k;
		g_string_append(ctrl->text, ",\"conditions\":[");
		for (k = 0; k < n; k++, c = msd_json_tokens_skip(&doc, c)) {
			gint type = msd_json_tokens_member(&doc, c, "type");
			gboolean was = msd_json_tokens_string_equals(
			        &doc, msd_json_tokens_member(&doc, c, "status"), "True");
			if (k > 0)
				g_string_append_c(ctrl->text, ',');
			if (msd_json_tokens_string_equals(&doc, type, "Available") &&
			    was != available) {
				append_available_condition(ctrl->text, available, now);
			} else {
				gsize len;
				const gchar *raw = msd_json_tokens_span(&doc, c, &len);
				g_string_append_len(ctrl->text, raw, len);
			}
		}
		g_string_append_c(ctrl->text, ']');
	}
	append_raw_member(ctrl->text, &doc, status, "collisionCount");
	g_string_append_c(ctrl->text, '}');
	/* "{,..." when observedGeneration was absent */
	if (ctrl->text->len > start + 1 && ctrl->text->str[start + 1] == ',')
		g_string_erase(ctrl->text, (gssize)start + 1, 1);
	commit(ctrl, ctrl->deployments, obj, &doc, status, start, now);
}

void
kubesim_controllers_sync(KubesimControllers *ctrl, gint64 now, gint64 interval)
{
	guint i = 0;

	check_epoch(ctrl);
	/* ReplicaSets first, then their Deployments, as the controllers' order goes */
	while (i < ctrl->dirty_sets->len) {
		ReplicaSet *rs = g_ptr_array_index(ctrl->dirty_sets, i);
		if (now - rs->written < interval) {
			i++;
			continue;
		}
		rs->dirty = FALSE;
		rs->written = now;
		write_replicaset(ctrl, rs, now);
		g_ptr_array_remove_index_fast(ctrl->dirty_sets, i);
	}
	i = 0;
	while (i < ctrl->dirty_deployments->len) {
		Deployment *d = g_ptr_array_index(ctrl->dirty_deployments, i);
		if (now - d->written < interval) {
			i++;
			continue;
		}
		d->dirty = FALSE;
		d->written = now;
		write_deployment(ctrl, d, now);
		g_ptr_array_remove_index_fast(ctrl->dirty_deployments, i);
	}
}
