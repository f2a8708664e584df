/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-fields.h"

#include <string.h>

#include "kubesim-write.h"
#include "util/msd-json-string.h"

/* Sets used more than once; every member is owned, set by the manifest or by defaults. */
static const gchar probe_fields[] =
        "{\".\":{},\"f:failureThreshold\":{},\"f:httpGet\":{\".\":{},\"f:path\":{},"
        "\"f:port\":{},\"f:scheme\":{}},\"f:initialDelaySeconds\":{},\"f:periodSeconds\":{},"
        "\"f:successThreshold\":{},\"f:timeoutSeconds\":{}}";
static const gchar env_value_fields[] = "{\".\":{},\"f:name\":{},\"f:value\":{}}";
static const gchar env_field_ref_fields[] =
        "{\".\":{},\"f:name\":{},\"f:valueFrom\":{\".\":{},\"f:fieldRef\":{}}}";
static const gchar env_secret_ref_fields[] =
        "{\".\":{},\"f:name\":{},\"f:valueFrom\":{\".\":{},\"f:secretKeyRef\":{}}}";
static const gchar mount_fields[] = "{\".\":{},\"f:mountPath\":{},\"f:name\":{},\"f:readOnly\":{}}";
static const gchar port_fields[] =
        "{\".\":{},\"f:containerPort\":{},\"f:name\":{},\"f:protocol\":{}}";
static const gchar condition_true_fields[] = "{\".\":{},\"f:lastProbeTime\":{},"
                                             "\"f:lastTransitionTime\":{},\"f:status\":{},"
                                             "\"f:type\":{}}";
static const gchar condition_false_fields[] =
        "{\".\":{},\"f:lastProbeTime\":{},\"f:lastTransitionTime\":{},\"f:message\":{},"
        "\"f:reason\":{},\"f:status\":{},\"f:type\":{}}";

/* Appends a "k:{...}" key of a list item and its colon; @key is the item's key as JSON. */
static void
append_item_key(GString *s, const gchar *key)
{
	g_string_append(s, "\"k:");
	msd_json_string_append_escaped(s, key, -1, MSD_JSON_STRING_GO);
	g_string_append(s, "\":");
}

void
kubesim_fields_begin(GString *s,
                     gboolean first,
                     const gchar *manager,
                     const gchar *operation,
                     const gchar *api_version,
                     gint64 time)
{
	if (!first)
		g_string_append_c(s, ',');
	g_string_append(s, "{\"manager\":");
	kubesim_append_plain(s, manager);
	g_string_append(s, ",\"operation\":");
	kubesim_append_plain(s, operation);
	g_string_append(s, ",\"apiVersion\":");
	kubesim_append_plain(s, api_version);
	g_string_append(s, ",\"time\":");
	kubesim_append_time(s, time);
	g_string_append(s, ",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":");
}

void
kubesim_fields_end(GString *s, const gchar *subresource)
{
	if (subresource != NULL) {
		g_string_append(s, ",\"subresource\":");
		kubesim_append_plain(s, subresource);
	}
	g_string_append_c(s, '}');
}

static void
append_app_container(GString *s, const gchar *app, guint port)
{
	g_autofree gchar *key = g_strdup_printf("{\"name\":\"%s\"}", app);
	g_autofree gchar *port_key =
	        g_strdup_printf("{\"containerPort\":%u,\"protocol\":\"TCP\"}", port);

	append_item_key(s, key);
	g_string_append(s, "{\".\":{},\"f:env\":{\".\":{},");
	append_item_key(s, "{\"name\":\"APP_NAME\"}");
	g_string_append(s, env_value_fields);
	g_string_append_c(s, ',');
	append_item_key(s, "{\"name\":\"DB_PASSWORD\"}");
	g_string_append(s, env_secret_ref_fields);
	g_string_append_c(s, ',');
	append_item_key(s, "{\"name\":\"LOG_LEVEL\"}");
	g_string_append(s, env_value_fields);
	g_string_append_c(s, ',');
	append_item_key(s, "{\"name\":\"POD_IP\"}");
	g_string_append(s, env_field_ref_fields);
	g_string_append_c(s, ',');
	append_item_key(s, "{\"name\":\"POD_NAME\"}");
	g_string_append(s, env_field_ref_fields);
	g_string_append(s, "},\"f:image\":{},\"f:imagePullPolicy\":{},\"f:livenessProbe\":");
	g_string_append(s, probe_fields);
	g_string_append(s, ",\"f:name\":{},\"f:ports\":{\".\":{},");
	/* the application's port sorts before the metrics one: both are below 9090 */
	append_item_key(s, port_key);
	g_string_append(s, port_fields);
	g_string_append_c(s, ',');
	append_item_key(s, "{\"containerPort\":9090,\"protocol\":\"TCP\"}");
	g_string_append(s, port_fields);
	g_string_append(s, "},\"f:readinessProbe\":");
	g_string_append(s, probe_fields);
	g_string_append(s, ",\"f:resources\":{\".\":{},\"f:limits\":{\".\":{},\"f:cpu\":{},"
	                   "\"f:memory\":{}},\"f:requests\":{\".\":{},\"f:cpu\":{},"
	                   "\"f:memory\":{}}},\"f:terminationMessagePath\":{},"
	                   "\"f:terminationMessagePolicy\":{},\"f:volumeMounts\":{\".\":{},");
	append_item_key(s, "{\"mountPath\":\"/etc/app\"}");
	g_string_append(s, mount_fields);
	g_string_append_c(s, ',');
	append_item_key(s, "{\"mountPath\":\"/etc/app/secrets\"}");
	g_string_append(s, mount_fields);
	g_string_append(s, "}}");
}

static void
append_sidecar_container(GString *s)
{
	append_item_key(s, "{\"name\":\"log-shipper\"}");
	g_string_append(s, "{\".\":{},\"f:env\":{\".\":{},");
	append_item_key(s, "{\"name\":\"NODE_NAME\"}");
	g_string_append(s, env_field_ref_fields);
	g_string_append(s, "},\"f:image\":{},\"f:imagePullPolicy\":{},\"f:name\":{},"
	                   "\"f:ports\":{\".\":{},");
	append_item_key(s, "{\"containerPort\":2020,\"protocol\":\"TCP\"}");
	g_string_append(s, port_fields);
	g_string_append(s, "},\"f:resources\":{\".\":{},\"f:limits\":{\".\":{},\"f:memory\":{}},"
	                   "\"f:requests\":{\".\":{},\"f:cpu\":{},\"f:memory\":{}}},"
	                   "\"f:terminationMessagePath\":{},\"f:terminationMessagePolicy\":{},"
	                   "\"f:volumeMounts\":{\".\":{},");
	append_item_key(s, "{\"mountPath\":\"/fluent-bit/etc\"}");
	g_string_append(s, mount_fields);
	g_string_append(s, "}}");
}

void
kubesim_fields_append_pod_spec(GString *s, const gchar *app, guint port, gboolean pod)
{
	/* list items sort by their key, here the container name */
	g_string_append(s, "{\"f:containers\":{");
	if (strcmp(app, "log-shipper") < 0) {
		append_app_container(s, app, port);
		g_string_append_c(s, ',');
		append_sidecar_container(s);
	} else {
		append_sidecar_container(s);
		g_string_append_c(s, ',');
		append_app_container(s, app, port);
	}
	g_string_append(s, "},\"f:dnsPolicy\":{},");
	if (pod)
		g_string_append(s, "\"f:enableServiceLinks\":{},");
	g_string_append(s, "\"f:restartPolicy\":{},\"f:schedulerName\":{},"
	                   "\"f:securityContext\":{\".\":{},\"f:fsGroup\":{}},"
	                   "\"f:serviceAccount\":{},\"f:serviceAccountName\":{},"
	                   "\"f:terminationGracePeriodSeconds\":{},\"f:volumes\":{\".\":{},");
	append_item_key(s, "{\"name\":\"config\"}");
	g_string_append(s, "{\".\":{},\"f:configMap\":{\".\":{},\"f:defaultMode\":{},"
	                   "\"f:name\":{}},\"f:name\":{}},");
	append_item_key(s, "{\"name\":\"secrets\"}");
	g_string_append(s, "{\".\":{},\"f:name\":{},\"f:secret\":{\".\":{},"
	                   "\"f:defaultMode\":{},\"f:secretName\":{}}}}}");
}

void
kubesim_fields_append_pod_status(GString *s, const gchar *pod_ip, gboolean ready)
{
	const gchar *cond = ready ? condition_true_fields : condition_false_fields;
	g_autofree gchar *ip_key = g_strdup_printf("{\"ip\":\"%s\"}", pod_ip);

	g_string_append(s, "{\"f:status\":{\"f:conditions\":{");
	append_item_key(s, "{\"type\":\"ContainersReady\"}");
	g_string_append(s, cond);
	g_string_append_c(s, ',');
	append_item_key(s, "{\"type\":\"Initialized\"}");
	g_string_append(s, condition_true_fields);
	g_string_append_c(s, ',');
	append_item_key(s, "{\"type\":\"PodReadyToStartContainers\"}");
	g_string_append(s, condition_true_fields);
	g_string_append_c(s, ',');
	append_item_key(s, "{\"type\":\"Ready\"}");
	g_string_append(s, cond);
	g_string_append(s, "},\"f:containerStatuses\":{},\"f:hostIP\":{},\"f:hostIPs\":{},"
	                   "\"f:phase\":{},\"f:podIP\":{},\"f:podIPs\":{\".\":{},");
	append_item_key(s, ip_key);
	g_string_append(s, "{\".\":{},\"f:ip\":{}}},\"f:startTime\":{}}}");
}
