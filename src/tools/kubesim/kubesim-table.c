/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-table.h"

#include <string.h>

#include "kubesim-json.h"

static const gchar pod_columns[] =
        "[{\"name\":\"Name\",\"type\":\"string\",\"format\":\"name\",\"description\":\"Name must "
        "be unique within a namespace.\",\"priority\":0},"
        "{\"name\":\"Ready\",\"type\":\"string\",\"format\":\"\",\"description\":\"The aggregate "
        "readiness state of this pod for accepting traffic.\",\"priority\":0},"
        "{\"name\":\"Status\",\"type\":\"string\",\"format\":\"\",\"description\":\"The aggregate "
        "status of the containers in this pod.\",\"priority\":0},"
        "{\"name\":\"Restarts\",\"type\":\"string\",\"format\":\"\",\"description\":\"The number "
        "of times the containers in this pod have been restarted.\",\"priority\":0},"
        "{\"name\":\"Age\",\"type\":\"string\",\"format\":\"\",\"description\":\"Time since the "
        "object was created.\",\"priority\":0},"
        "{\"name\":\"IP\",\"type\":\"string\",\"format\":\"\",\"description\":\"IP address "
        "allocated to the pod.\",\"priority\":1},"
        "{\"name\":\"Node\",\"type\":\"string\",\"format\":\"\",\"description\":\"Name of the node "
        "the pod is assigned to.\",\"priority\":1},"
        "{\"name\":\"Nominated Node\",\"type\":\"string\",\"format\":\"\",\"description\":"
        "\"Nominated node.\",\"priority\":1},"
        "{\"name\":\"Readiness Gates\",\"type\":\"string\",\"format\":\"\",\"description\":"
        "\"Readiness gates.\",\"priority\":1}]";

static const gchar generic_columns[] =
        "[{\"name\":\"Name\",\"type\":\"string\",\"format\":\"name\",\"description\":\"Name must "
        "be unique within a namespace.\",\"priority\":0},"
        "{\"name\":\"Age\",\"type\":\"string\",\"format\":\"\",\"description\":\"Time since the "
        "object was created.\",\"priority\":0}]";

static gboolean
is_pod(KubesimResource *res)
{
	return res->group[0] == '\0' && g_strcmp0(res->resource, "pods") == 0;
}

gchar *
kubesim_human_duration(gint64 seconds)
{
	gint64 minutes, hours, days;

	if (seconds < 0)
		seconds = 0;
	minutes = seconds / 60;
	hours = minutes / 60;
	days = hours / 24;
	if (seconds < 120)
		return g_strdup_printf("%" G_GINT64_FORMAT "s", seconds);
	if (minutes < 10) {
		if (seconds % 60 == 0)
			return g_strdup_printf("%" G_GINT64_FORMAT "m", minutes);
		return g_strdup_printf("%" G_GINT64_FORMAT "m%" G_GINT64_FORMAT "s", minutes,
		                       seconds % 60);
	}
	if (minutes < 180)
		return g_strdup_printf("%" G_GINT64_FORMAT "m", minutes);
	if (hours < 8) {
		if (minutes % 60 == 0)
			return g_strdup_printf("%" G_GINT64_FORMAT "h", hours);
		return g_strdup_printf("%" G_GINT64_FORMAT "h%" G_GINT64_FORMAT "m", hours,
		                       minutes % 60);
	}
	if (hours < 48)
		return g_strdup_printf("%" G_GINT64_FORMAT "h", hours);
	if (hours < 24 * 8) {
		if (hours % 24 == 0)
			return g_strdup_printf("%" G_GINT64_FORMAT "d", days);
		return g_strdup_printf("%" G_GINT64_FORMAT "d%" G_GINT64_FORMAT "h", days,
		                       hours % 24);
	}
	if (days < 365 * 2)
		return g_strdup_printf("%" G_GINT64_FORMAT "d", days);
	return g_strdup_printf("%" G_GINT64_FORMAT "y", days / 365);
}

static gchar *
age_of(JsonObject *meta)
{
	const gchar *created = meta != NULL ? json_object_get_string_member_with_default(
	                                              meta, "creationTimestamp", NULL)
	                                    : NULL;
	g_autoptr(GDateTime) then = NULL;
	g_autoptr(GDateTime) now = g_date_time_new_now_utc();

	if (created != NULL)
		then = g_date_time_new_from_iso8601(created, NULL);
	if (then == NULL)
		return g_strdup("<unknown>");
	return kubesim_human_duration(g_date_time_difference(now, then) / G_TIME_SPAN_SECOND);
}

static JsonObject *
member_object(JsonObject *obj, const gchar *name)
{
	JsonNode *n = obj != NULL ? json_object_get_member(obj, name) : NULL;

	return n != NULL && JSON_NODE_HOLDS_OBJECT(n) ? json_node_get_object(n) : NULL;
}

static JsonArray *
member_array(JsonObject *obj, const gchar *name)
{
	JsonNode *n = obj != NULL ? json_object_get_member(obj, name) : NULL;

	return n != NULL && JSON_NODE_HOLDS_ARRAY(n) ? json_node_get_array(n) : NULL;
}

/* The pod columns as kubectl's printer computes them, simplified to the common cases. */
static void
append_pod_cells(GString *out, JsonObject *root)
{
	JsonObject *meta = member_object(root, "metadata");
	JsonObject *spec = member_object(root, "spec");
	JsonObject *status = member_object(root, "status");
	JsonArray *containers = member_array(spec, "containers");
	JsonArray *statuses = member_array(status, "containerStatuses");
	const gchar *reason;
	guint total = containers != NULL ? json_array_get_length(containers) : 0;
	guint ready = 0, i;
	gint64 restarts = 0;
	g_autofree gchar *age = age_of(meta);
	g_autofree gchar *ready_text = NULL;
	g_autofree gchar *restarts_text = NULL;

	reason = status != NULL
	                 ? json_object_get_string_member_with_default(status, "phase", "Pending")
	                 : "Pending";
	if (status != NULL && json_object_has_member(status, "reason"))
		reason = json_object_get_string_member_with_default(status, "reason", reason);
	for (i = 0; statuses != NULL && i < json_array_get_length(statuses); i++) {
		JsonNode *n = json_array_get_element(statuses, i);
		JsonObject *cs, *state;
		if (!JSON_NODE_HOLDS_OBJECT(n))
			continue;
		cs = json_node_get_object(n);
		if (json_object_get_boolean_member_with_default(cs, "ready", FALSE))
			ready++;
		restarts += json_object_get_int_member_with_default(cs, "restartCount", 0);
		state = member_object(cs, "state");
		if (member_object(state, "waiting") != NULL)
			reason = json_object_get_string_member_with_default(
			        member_object(state, "waiting"), "reason", reason);
		else if (member_object(state, "terminated") != NULL)
			reason = json_object_get_string_member_with_default(
			        member_object(state, "terminated"), "reason", reason);
	}
	if (meta != NULL && json_object_has_member(meta, "deletionTimestamp"))
		reason = "Terminating";
	ready_text = g_strdup_printf("%u/%u", ready, total);
	restarts_text = g_strdup_printf("%" G_GINT64_FORMAT, restarts);
	msd_json_string_append(out, json_object_get_string_member_with_default(meta, "name", ""),
	                       -1, MSD_JSON_STRING_GO);
	g_string_append_c(out, ',');
	msd_json_string_append(out, ready_text, -1, MSD_JSON_STRING_GO);
	g_string_append_c(out, ',');
	msd_json_string_append(out, reason, -1, MSD_JSON_STRING_GO);
	g_string_append_c(out, ',');
	msd_json_string_append(out, restarts_text, -1, MSD_JSON_STRING_GO);
	g_string_append_c(out, ',');
	msd_json_string_append(out, age, -1, MSD_JSON_STRING_GO);
	g_string_append_c(out, ',');
	msd_json_string_append(out,
	                       status != NULL ? json_object_get_string_member_with_default(
	                                                status, "podIP", "<none>")
	                                      : "<none>",
	                       -1, MSD_JSON_STRING_GO);
	g_string_append_c(out, ',');
	msd_json_string_append(out,
	                       spec != NULL ? json_object_get_string_member_with_default(
	                                              spec, "nodeName", "<none>")
	                                    : "<none>",
	                       -1, MSD_JSON_STRING_GO);
	g_string_append(out, ",\"<none>\",\"<none>\"");
}

void
kubesim_table_begin(GString *out,
                    KubesimResource *res,
                    guint64 rv,
                    const gchar *continue_token,
                    gboolean with_columns)
{
	g_string_append_printf(out,
	                       "{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\","
	                       "\"metadata\":{\"resourceVersion\":\"%" G_GUINT64_FORMAT "\"",
	                       rv);
	if (continue_token != NULL) {
		g_string_append(out, ",\"continue\":");
		msd_json_string_append(out, continue_token, -1, MSD_JSON_STRING_GO);
	}
	g_string_append(out, "},\"columnDefinitions\":");
	if (with_columns)
		g_string_append(out, is_pod(res) ? pod_columns : generic_columns);
	else
		g_string_append(out, "[]");
	g_string_append(out, ",\"rows\":[");
}

void
kubesim_table_append_row(GString *out,
                         KubesimResource *res,
                         KubesimObject *obj,
                         const gchar *include_object,
                         gboolean first_row)
{
	g_autoptr(GBytes) json = kubesim_object_get_json(obj);
	gsize len;
	const gchar *js = g_bytes_get_data(json, &len);

	if (!first_row)
		g_string_append_c(out, ',');
	g_string_append(out, "{\"cells\":[");
	if (is_pod(res)) {
		g_autoptr(JsonNode) root = kubesim_json_parse(js, len, NULL);
		append_pod_cells(out, root != NULL && JSON_NODE_HOLDS_OBJECT(root)
		                              ? json_node_get_object(root)
		                              : NULL);
	} else {
		g_autoptr(JsonNode) root = kubesim_json_parse(js, len, NULL);
		g_autofree gchar *age =
		        age_of(root != NULL && JSON_NODE_HOLDS_OBJECT(root)
		                       ? member_object(json_node_get_object(root), "metadata")
		                       : NULL);
		msd_json_string_append(out, obj->name, -1, MSD_JSON_STRING_GO);
		g_string_append_c(out, ',');
		msd_json_string_append(out, age, -1, MSD_JSON_STRING_GO);
	}
	g_string_append(out, "]");
	if (g_strcmp0(include_object, "None") == 0) {
		g_string_append(out, "}");
	} else if (g_strcmp0(include_object, "Object") == 0) {
		g_string_append(out, ",\"object\":");
		g_string_append_len(out, js, len);
		g_string_append_c(out, '}');
	} else {
		g_auto(MsdJsonTokens) doc = MSD_JSON_TOKENS_INIT;
		g_string_append(out, ",\"object\":{\"kind\":\"PartialObjectMetadata\","
		                     "\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":");
		if (msd_json_tokens_parse(&doc, js, len, NULL) &&
		    msd_json_tokens_member(&doc, 0, "metadata") >= 0) {
			const gchar *raw;
			gsize raw_len;
			raw = msd_json_tokens_span(
			        &doc, msd_json_tokens_member(&doc, 0, "metadata"), &raw_len);
			g_string_append_len(out, raw, raw_len);
		} else {
			g_string_append(out, "{}");
		}
		g_string_append(out, "}}");
	}
}

void
kubesim_table_end(GString *out)
{
	g_string_append(out, "]}");
}
