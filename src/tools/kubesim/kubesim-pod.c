/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-pod.h"

#include <string.h>

#include "kubesim-json.h"

static void
container_free(gpointer data)
{
	KubesimContainer *c = data;

	g_free(c->name);
	g_free(c->image);
	g_strfreev(c->env);
	g_free(c->state);
	g_free(c->waiting_reason);
	g_free(c->container_id);
	g_free(c->last_id);
	g_free(c->last_reason);
	g_free(c);
}

static const gchar *
get_string(JsonObject *obj, const gchar *member)
{
	JsonNode *node;

	if (obj == NULL)
		return NULL;
	node = json_object_get_member(obj, member);
	if (node == NULL || json_node_get_value_type(node) != G_TYPE_STRING)
		return NULL;
	return json_node_get_string(node);
}

static JsonObject *
get_object(JsonObject *obj, const gchar *member)
{
	JsonNode *node;

	if (obj == NULL)
		return NULL;
	node = json_object_get_member(obj, member);
	return node != NULL && JSON_NODE_HOLDS_OBJECT(node) ? json_node_get_object(node) : NULL;
}

static JsonArray *
get_array(JsonObject *obj, const gchar *member)
{
	JsonNode *node;

	if (obj == NULL)
		return NULL;
	node = json_object_get_member(obj, member);
	return node != NULL && JSON_NODE_HOLDS_ARRAY(node) ? json_node_get_array(node) : NULL;
}

static gint64
get_int(JsonObject *obj, const gchar *member)
{
	JsonNode *node;

	if (obj == NULL)
		return 0;
	node = json_object_get_member(obj, member);
	if (node == NULL || !JSON_NODE_HOLDS_VALUE(node) ||
	    json_node_get_value_type(node) != G_TYPE_INT64)
		return 0;
	return json_node_get_int(node);
}

static gint64
get_time(JsonObject *obj, const gchar *member)
{
	const gchar *text = get_string(obj, member);
	g_autoptr(GDateTime) dt = NULL;

	if (text == NULL)
		return 0;
	dt = g_date_time_new_from_iso8601(text, NULL);
	return dt != NULL
	               ? g_date_time_to_unix(dt) * G_USEC_PER_SEC + g_date_time_get_microsecond(dt)
	               : 0;
}

static GPtrArray *
read_containers(JsonObject *spec, const gchar *member)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(container_free);
	JsonArray *list = get_array(spec, member);

	for (guint i = 0; list != NULL && i < json_array_get_length(list); i++) {
		JsonNode *node = json_array_get_element(list, i);
		JsonObject *obj = JSON_NODE_HOLDS_OBJECT(node) ? json_node_get_object(node) : NULL;
		JsonArray *env = get_array(obj, "env");
		g_autoptr(GPtrArray) vars = g_ptr_array_new();
		KubesimContainer *c;

		if (get_string(obj, "name") == NULL)
			continue;
		c = g_new0(KubesimContainer, 1);
		c->name = g_strdup(get_string(obj, "name"));
		c->image = g_strdup(get_string(obj, "image"));
		for (guint j = 0; env != NULL && j < json_array_get_length(env); j++) {
			JsonNode *e = json_array_get_element(env, j);
			JsonObject *eo = JSON_NODE_HOLDS_OBJECT(e) ? json_node_get_object(e) : NULL;
			const gchar *name = get_string(eo, "name");
			const gchar *value = get_string(eo, "value");
			/* values from fields and secrets are resolved by the kubelet: not here */
			if (name != NULL)
				g_ptr_array_add(vars, g_strdup_printf("%s=%s", name,
				                                      value != NULL ? value : ""));
		}
		g_ptr_array_add(vars, NULL);
		c->env = (gchar **)g_ptr_array_steal(vars, NULL);
		g_ptr_array_add(out, c);
	}
	return out;
}

static void
read_statuses(GPtrArray *containers, JsonObject *status, const gchar *member)
{
	JsonArray *list = get_array(status, member);

	for (guint i = 0; list != NULL && i < json_array_get_length(list); i++) {
		JsonNode *node = json_array_get_element(list, i);
		JsonObject *obj = JSON_NODE_HOLDS_OBJECT(node) ? json_node_get_object(node) : NULL;
		const gchar *name = get_string(obj, "name");
		JsonObject *state = get_object(obj, "state");
		JsonObject *last = get_object(get_object(obj, "lastState"), "terminated");
		KubesimContainer *c = NULL;
		const gchar *last_id;

		for (guint j = 0; name != NULL && j < containers->len; j++) {
			KubesimContainer *cand = g_ptr_array_index(containers, j);
			if (g_strcmp0(cand->name, name) == 0)
				c = cand;
		}
		if (c == NULL)
			continue;
		c->restart_count = (guint)CLAMP(get_int(obj, "restartCount"), 0, G_MAXUINT);
		if (get_object(state, "running") != NULL) {
			c->state = g_strdup("running");
			c->started_at = get_time(get_object(state, "running"), "startedAt");
			c->container_id = g_strdup(get_string(obj, "containerID"));
		} else if (get_object(state, "terminated") != NULL) {
			JsonObject *t = get_object(state, "terminated");
			c->state = g_strdup("terminated");
			c->started_at = get_time(t, "startedAt");
			c->finished_at = get_time(t, "finishedAt");
			c->container_id = g_strdup(get_string(t, "containerID"));
			if (c->container_id == NULL)
				c->container_id = g_strdup(get_string(obj, "containerID"));
		} else if (get_object(state, "waiting") != NULL) {
			c->state = g_strdup("waiting");
			c->waiting_reason =
			        g_strdup(get_string(get_object(state, "waiting"), "reason"));
		}
		last_id = get_string(last, "containerID");
		if (last_id != NULL && last_id[0] != '\0') {
			c->last_id = g_strdup(last_id);
			c->last_started_at = get_time(last, "startedAt");
			c->last_finished_at = get_time(last, "finishedAt");
			c->last_exit_code = (gint)CLAMP(get_int(last, "exitCode"), 0, 255);
			c->last_reason = g_strdup(get_string(last, "reason"));
		}
	}
}

KubesimPod *
kubesim_pod_new(KubesimObject *obj)
{
	g_autoptr(GBytes) json = kubesim_object_get_json(obj);
	gsize len;
	const gchar *js = g_bytes_get_data(json, &len);
	g_autoptr(JsonNode) root = kubesim_json_parse(js, len, NULL);
	JsonObject *top =
	        root != NULL && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
	JsonObject *meta = get_object(top, "metadata");
	JsonObject *spec = get_object(top, "spec");
	JsonObject *status = get_object(top, "status");
	KubesimPod *pod = g_new0(KubesimPod, 1);

	pod->namespace_ = g_strdup(obj->namespace_);
	pod->name = g_strdup(obj->name);
	pod->uid = g_strdup(obj->uid != NULL ? obj->uid : "");
	pod->phase = g_strdup(get_string(status, "phase"));
	pod->hostname = g_strdup(get_string(spec, "hostname") != NULL ? get_string(spec, "hostname")
	                                                              : obj->name);
	pod->created = get_time(meta, "creationTimestamp");
	pod->containers = read_containers(spec, "containers");
	pod->init_containers = read_containers(spec, "initContainers");
	pod->ephemeral_containers = read_containers(spec, "ephemeralContainers");
	read_statuses(pod->containers, status, "containerStatuses");
	read_statuses(pod->init_containers, status, "initContainerStatuses");
	read_statuses(pod->ephemeral_containers, status, "ephemeralContainerStatuses");
	return pod;
}

KubesimPod *
kubesim_pod_lookup(KubesimStore *store, const gchar *ns, const gchar *name, KubesimStatus **status)
{
	KubesimResource *res = kubesim_store_lookup(store, "", "v1", "pods");
	KubesimObject *obj =
	        res != NULL && name != NULL ? kubesim_resource_get(res, ns, name) : NULL;

	if (obj == NULL) {
		*status = kubesim_status_not_found("", "pods", name != NULL ? name : "");
		return NULL;
	}
	return kubesim_pod_new(obj);
}

void
kubesim_pod_free(KubesimPod *pod)
{
	if (pod == NULL)
		return;
	g_free(pod->namespace_);
	g_free(pod->name);
	g_free(pod->uid);
	g_free(pod->phase);
	g_free(pod->hostname);
	g_ptr_array_unref(pod->containers);
	g_ptr_array_unref(pod->init_containers);
	g_ptr_array_unref(pod->ephemeral_containers);
	g_free(pod);
}

/* Go's %v of a []string: "[a b]" */
static void
append_names(GString *out, GPtrArray *containers)
{
	g_string_append_c(out, '[');
	for (guint i = 0; i < containers->len; i++) {
		KubesimContainer *c = g_ptr_array_index(containers, i);
		if (i > 0)
			g_string_append_c(out, ' ');
		g_string_append(out, c->name);
	}
	g_string_append_c(out, ']');
}

static KubesimContainer *
find_in(GPtrArray *containers, const gchar *name)
{
	for (guint i = 0; i < containers->len; i++) {
		KubesimContainer *c = g_ptr_array_index(containers, i);
		if (g_strcmp0(c->name, name) == 0)
			return c;
	}
	return NULL;
}

KubesimContainer *
kubesim_pod_pick_container(KubesimPod *pod, const gchar *name, KubesimStatus **status)
{
	KubesimContainer *c;

	if (name == NULL || name[0] == '\0') {
		g_autoptr(GString) msg = NULL;
		if (pod->containers->len == 1)
			return g_ptr_array_index(pod->containers, 0);
		/* the wording of the API server's pod strategy */
		msg = g_string_new(NULL);
		g_string_append_printf(msg,
		                       "a container name must be specified for pod %s, choose "
		                       "one of: ",
		                       pod->name);
		append_names(msg, pod->containers);
		if (pod->init_containers->len > 0) {
			g_string_append(msg, " or one of the init containers: ");
			append_names(msg, pod->init_containers);
		}
		if (pod->ephemeral_containers->len > 0) {
			g_string_append(msg, " or one of the ephemeral containers: ");
			append_names(msg, pod->ephemeral_containers);
		}
		*status = kubesim_status_new(400, "BadRequest", "%s", msg->str);
		return NULL;
	}
	c = find_in(pod->containers, name);
	if (c == NULL)
		c = find_in(pod->init_containers, name);
	if (c == NULL)
		c = find_in(pod->ephemeral_containers, name);
	if (c == NULL)
		*status = kubesim_status_new(
		        400, "BadRequest", "container %s is not valid for pod %s", name, pod->name);
	return c;
}

gchar *
kubesim_container_current_id(KubesimPod *pod, KubesimContainer *c)
{
	if (c->container_id != NULL && c->container_id[0] != '\0')
		return g_strdup(c->container_id);
	if (c->state != NULL && g_strcmp0(c->state, "running") != 0 && c->last_id != NULL)
		return g_strdup(c->last_id);
	return g_strdup_printf("kubesim://%s/%s", pod->uid, c->name);
}
