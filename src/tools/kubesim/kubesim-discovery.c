/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-server.h"

#include <string.h>

#include "kubesim-json.h"

#define AGGREGATED_CONTENT_TYPE \
	"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
#define RESOURCE_VERBS "[\"create\",\"delete\",\"get\",\"list\",\"patch\",\"update\",\"watch\"]"

static const gchar version_json[] =
        "{\"major\":\"1\",\"minor\":\"31\",\"gitVersion\":\"v1.31.0-kubesim\","
        "\"gitCommit\":\"0000000000000000000000000000000000000000\",\"gitTreeState\":\"clean\","
        "\"buildDate\":\"2024-08-13T00:00:00Z\",\"goVersion\":\"go1.22.5\",\"compiler\":\"gc\","
        "\"platform\":\"linux/amd64\"}";

typedef struct {
	const gchar *kind;
	const gchar *verbs;
} SubresourceInfo;

static SubresourceInfo
subresource_info(KubesimResource *res, const gchar *sub)
{
	SubresourceInfo info = {res->kind, "[\"get\",\"patch\",\"update\"]"};

	if (g_strcmp0(sub, "log") == 0)
		info.verbs = "[\"get\"]";
	else if (g_strcmp0(sub, "exec") == 0)
		info = (SubresourceInfo){"PodExecOptions", "[\"create\",\"get\"]"};
	else if (g_strcmp0(sub, "attach") == 0)
		info = (SubresourceInfo){"PodAttachOptions", "[\"create\",\"get\"]"};
	else if (g_strcmp0(sub, "portforward") == 0)
		info = (SubresourceInfo){"PodPortForwardOptions", "[\"create\",\"get\"]"};
	else if (g_strcmp0(sub, "scale") == 0)
		info.kind = "Scale";
	return info;
}

static void
append_strv(GString *out, gchar **strv)
{
	guint i;

	g_string_append_c(out, '[');
	for (i = 0; strv != NULL && strv[i] != NULL; i++) {
		if (i > 0)
			g_string_append_c(out, ',');
		msd_json_string_append(out, strv[i], -1, MSD_JSON_STRING_GO);
	}
	g_string_append_c(out, ']');
}

/* The verbs, shortNames and categories of @res: the part both discovery formats share. */
static void
append_verbs_and_names(GString *out, const KubesimResource *res)
{
	g_string_append(out, ",\"verbs\":" RESOURCE_VERBS);
	if (res->short_names != NULL) {
		g_string_append(out, ",\"shortNames\":");
		append_strv(out, res->short_names);
	}
	if (res->categories != NULL) {
		g_string_append(out, ",\"categories\":");
		append_strv(out, res->categories);
	}
}

/* The group versions served, in registration order, as "group/version" (core: "v1"). */
static GPtrArray *
served_group_versions(KubesimServer *self, const gchar *only_group)
{
	GPtrArray *resources = kubesim_store_get_resources(self->store);
	GPtrArray *gvs = g_ptr_array_new_with_free_func(g_free);
	guint i, j;

	for (i = 0; i < resources->len; i++) {
		KubesimResource *res = g_ptr_array_index(resources, i);
		gboolean seen = FALSE;
		if (only_group != NULL && g_strcmp0(res->group, only_group) != 0)
			continue;
		for (j = 0; j < gvs->len && !seen; j++)
			seen = g_strcmp0(g_ptr_array_index(gvs, j), res->api_version) == 0;
		if (!seen)
			g_ptr_array_add(gvs, g_strdup(res->api_version));
	}
	return gvs;
}

static void
append_resource_list(KubesimServer *self, GString *out, const gchar *group, const gchar *version)
{
	GPtrArray *resources = kubesim_store_get_resources(self->store);
	gboolean first = TRUE;
	guint i, j;

	g_string_append(out, "{\"kind\":\"APIResourceList\",");
	if (group[0] != '\0')
		g_string_append(out, "\"apiVersion\":\"v1\",");
	g_string_append(out, "\"groupVersion\":");
	{
		g_autofree gchar *gv = group[0] != '\0' ? g_strdup_printf("%s/%s", group, version)
		                                        : g_strdup(version);
		msd_json_string_append(out, gv, -1, MSD_JSON_STRING_GO);
	}
	g_string_append(out, ",\"resources\":[");
	for (i = 0; i < resources->len; i++) {
		KubesimResource *res = g_ptr_array_index(resources, i);
		if (g_strcmp0(res->group, group) != 0 || g_strcmp0(res->version, version) != 0)
			continue;
		if (!first)
			g_string_append_c(out, ',');
		first = FALSE;
		g_string_append(out, "{\"name\":");
		msd_json_string_append(out, res->resource, -1, MSD_JSON_STRING_GO);
		g_string_append(out, ",\"singularName\":");
		msd_json_string_append(out, res->singular, -1, MSD_JSON_STRING_GO);
		g_string_append_printf(
		        out, ",\"namespaced\":%s,\"kind\":", res->namespaced ? "true" : "false");
		msd_json_string_append(out, res->kind, -1, MSD_JSON_STRING_GO);
		append_verbs_and_names(out, res);
		g_string_append_c(out, '}');
		for (j = 0; res->subresources != NULL && res->subresources[j] != NULL; j++) {
			SubresourceInfo info = subresource_info(res, res->subresources[j]);
			g_string_append(out, ",{\"name\":");
			{
				g_autofree gchar *name = g_strdup_printf("%s/%s", res->resource,
				                                         res->subresources[j]);
				msd_json_string_append(out, name, -1, MSD_JSON_STRING_GO);
			}
			g_string_append_printf(out, ",\"singularName\":\"\",\"namespaced\":%s",
			                       res->namespaced ? "true" : "false");
			if (g_strcmp0(info.kind, "Scale") == 0)
				g_string_append(out,
				                ",\"group\":\"autoscaling\",\"version\":\"v1\"");
			g_string_append(out, ",\"kind\":");
			msd_json_string_append(out, info.kind, -1, MSD_JSON_STRING_GO);
			g_string_append_printf(out, ",\"verbs\":%s}", info.verbs);
		}
	}
	g_string_append(out, "]}");
}

static void
append_group(GString *out, const gchar *group, GPtrArray *gvs)
{
	guint i;

	g_string_append(out, "{\"name\":");
	msd_json_string_append(out, group, -1, MSD_JSON_STRING_GO);
	g_string_append(out, ",\"versions\":[");
	for (i = 0; i < gvs->len; i++) {
		const gchar *gv = g_ptr_array_index(gvs, i);
		if (i > 0)
			g_string_append_c(out, ',');
		g_string_append(out, "{\"groupVersion\":");
		msd_json_string_append(out, gv, -1, MSD_JSON_STRING_GO);
		g_string_append(out, ",\"version\":");
		msd_json_string_append(out, strchr(gv, '/') + 1, -1, MSD_JSON_STRING_GO);
		g_string_append_c(out, '}');
	}
	g_string_append(out, "],\"preferredVersion\":{\"groupVersion\":");
	msd_json_string_append(out, g_ptr_array_index(gvs, 0), -1, MSD_JSON_STRING_GO);
	g_string_append(out, ",\"version\":");
	msd_json_string_append(out, strchr(g_ptr_array_index(gvs, 0), '/') + 1, -1,
	                       MSD_JSON_STRING_GO);
	g_string_append(out, "}}");
}

/* Named groups in first-registration order. */
static GPtrArray *
served_groups(KubesimServer *self)
{
	GPtrArray *resources = kubesim_store_get_resources(self->store);
	GPtrArray *groups = g_ptr_array_new();
	guint i;

	for (i = 0; i < resources->len; i++) {
		KubesimResource *res = g_ptr_array_index(resources, i);
		if (res->group[0] == '\0')
			continue;
		if (!g_ptr_array_find_with_equal_func(groups, res->group, g_str_equal, NULL))
			g_ptr_array_add(groups, res->group);
	}
	return groups;
}

static void
append_aggregated_group(KubesimServer *self, GString *out, const gchar *group)
{
	GPtrArray *resources = kubesim_store_get_resources(self->store);
	g_autoptr(GPtrArray) gvs = served_group_versions(self, group);
	guint i, j, v;

	g_string_append(out, "{\"metadata\":{");
	if (group[0] != '\0') {
		g_string_append(out, "\"name\":");
		msd_json_string_append(out, group, -1, MSD_JSON_STRING_GO);
		g_string_append_c(out, ',');
	}
	g_string_append(out, "\"creationTimestamp\":null},\"versions\":[");
	for (v = 0; v < gvs->len; v++) {
		const gchar *gv = g_ptr_array_index(gvs, v);
		const gchar *version = strchr(gv, '/') != NULL ? strchr(gv, '/') + 1 : gv;
		gboolean first = TRUE;
		if (v > 0)
			g_string_append_c(out, ',');
		g_string_append(out, "{\"version\":");
		msd_json_string_append(out, version, -1, MSD_JSON_STRING_GO);
		g_string_append(out, ",\"resources\":[");
		for (i = 0; i < resources->len; i++) {
			KubesimResource *res = g_ptr_array_index(resources, i);
			if (g_strcmp0(res->api_version, gv) != 0)
				continue;
			if (!first)
				g_string_append_c(out, ',');
			first = FALSE;
			g_string_append(out, "{\"resource\":");
			msd_json_string_append(out, res->resource, -1, MSD_JSON_STRING_GO);
			g_string_append(out, ",\"responseKind\":{\"group\":");
			msd_json_string_append(out, res->group, -1, MSD_JSON_STRING_GO);
			g_string_append(out, ",\"version\":");
			msd_json_string_append(out, res->version, -1, MSD_JSON_STRING_GO);
			g_string_append(out, ",\"kind\":");
			msd_json_string_append(out, res->kind, -1, MSD_JSON_STRING_GO);
			g_string_append_printf(out, "},\"scope\":\"%s\",\"singularResource\":",
			                       res->namespaced ? "Namespaced" : "Cluster");
			msd_json_string_append(out, res->singular, -1, MSD_JSON_STRING_GO);
			append_verbs_and_names(out, res);
			if (res->subresources != NULL) {
				g_string_append(out, ",\"subresources\":[");
				for (j = 0; res->subresources[j] != NULL; j++) {
					SubresourceInfo info =
					        subresource_info(res, res->subresources[j]);
					if (j > 0)
						g_string_append_c(out, ',');
					g_string_append(out, "{\"subresource\":");
					msd_json_string_append(out, res->subresources[j], -1,
					                       MSD_JSON_STRING_GO);
					g_string_append(out, ",\"responseKind\":{\"group\":");
					msd_json_string_append(
					        out,
					        g_strcmp0(info.kind, "Scale") == 0
					                ? "autoscaling"
					                : (g_strcmp0(info.kind, res->kind) == 0
					                           ? res->group
					                           : ""),
					        -1, MSD_JSON_STRING_GO);
					g_string_append(out, ",\"version\":");
					msd_json_string_append(out,
					                       g_strcmp0(info.kind, res->kind) == 0
					                               ? res->version
					                               : "v1",
					                       -1, MSD_JSON_STRING_GO);
					g_string_append(out, ",\"kind\":");
					msd_json_string_append(out, info.kind, -1,
					                       MSD_JSON_STRING_GO);
					g_string_append_printf(out, "},\"verbs\":%s}", info.verbs);
				}
				g_string_append_c(out, ']');
			}
			g_string_append_c(out, '}');
		}
		g_string_append(out, "],\"freshness\":\"Current\"}");
	}
	g_string_append(out, "]}");
}

static void
respond_aggregated(KubesimServer *self, SoupServerMessage *msg, gboolean core)
{
	GString *out = g_string_new("{\"kind\":\"APIGroupDiscoveryList\","
	                            "\"apiVersion\":\"apidiscovery.k8s.io/v2\","
	                            "\"metadata\":{},\"items\":[");
	guint i;

	if (core) {
		append_aggregated_group(self, out, "");
	} else {
		g_autoptr(GPtrArray) groups = served_groups(self);
		for (i = 0; i < groups->len; i++) {
			if (i > 0)
				g_string_append_c(out, ',');
			append_aggregated_group(self, out, g_ptr_array_index(groups, i));
		}
	}
	g_string_append(out, "]}");
	soup_message_headers_replace(soup_server_message_get_response_headers(msg), "Vary",
	                             "Accept");
	soup_server_message_set_status(msg, 200, NULL);
	soup_server_message_set_response(msg, AGGREGATED_CONTENT_TYPE, SOUP_MEMORY_TAKE, out->str,
	                                 out->len);
	g_string_free(out, FALSE);
}

gboolean
kubesim_discovery_handle(KubesimServer *self, SoupServerMessage *msg, const gchar *path)
{
	g_auto(GStrv) segs = NULL;
	guint n;

	if (g_strcmp0(path, "/version") == 0 || g_strcmp0(path, "/version/") == 0) {
		kubesim_respond_json(msg, 200, version_json);
		return TRUE;
	}
	if (g_strcmp0(path, "/healthz") == 0 || g_strcmp0(path, "/readyz") == 0 ||
	    g_strcmp0(path, "/livez") == 0) {
		kubesim_respond_text(msg, 200, "ok");
		return TRUE;
	}
	if (g_strcmp0(soup_server_message_get_method(msg), "GET") != 0)
		return FALSE;
	segs = g_strsplit(path + 1, "/", -1);
	n = g_strv_length(segs);
	if (n > 0 && segs[n - 1][0] == '\0')
		n--; /* a trailing slash */
	if (n == 1 && g_strcmp0(segs[0], "api") == 0) {
		if (kubesim_wants_aggregated(msg))
			respond_aggregated(self, msg, TRUE);
		else
			kubesim_respond_json(
			        msg, 200,
			        "{\"kind\":\"APIVersions\",\"versions\":[\"v1\"],"
			        "\"serverAddressByClientCIDRs\":[{\"clientCIDR\":\"0.0.0.0/0\","
			        "\"serverAddress\":\"127.0.0.1:6443\"}]}");
		return TRUE;
	}
	if (n == 1 && g_strcmp0(segs[0], "apis") == 0) {
		if (kubesim_wants_aggregated(msg)) {
			respond_aggregated(self, msg, FALSE);
		} else {
			g_autoptr(GPtrArray) groups = served_groups(self);
			GString *out = g_string_new("{\"kind\":\"APIGroupList\",\"apiVersion\":"
			                            "\"v1\",\"groups\":[");
			guint i;
			for (i = 0; i < groups->len; i++) {
				g_autoptr(GPtrArray) gvs =
				        served_group_versions(self, g_ptr_array_index(groups, i));
				if (i > 0)
					g_string_append_c(out, ',');
				append_group(out, g_ptr_array_index(groups, i), gvs);
			}
			g_string_append(out, "]}");
			kubesim_respond_json_take(msg, 200, g_string_free(out, FALSE));
		}
		return TRUE;
	}
	if (n == 2 && g_strcmp0(segs[0], "api") == 0) {
		GString *out;
		if (g_strcmp0(segs[1], "v1") != 0)
			return FALSE;
		out = g_string_new(NULL);
		append_resource_list(self, out, "", "v1");
		kubesim_respond_json_take(msg, 200, g_string_free(out, FALSE));
		return TRUE;
	}
	if (n == 2 && g_strcmp0(segs[0], "apis") == 0) {
		g_autoptr(GPtrArray) gvs = served_group_versions(self, segs[1]);
		GString *out;
		if (gvs->len == 0)
			return FALSE;
		out = g_string_new("{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\",");
		append_group(out, segs[1], gvs);
		/* APIGroup is the group object itself with kind/apiVersion in front */
		g_string_erase(out, strlen("{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\","), 1);
		kubesim_respond_json_take(msg, 200, g_string_free(out, FALSE));
		return TRUE;
	}
	if (n == 3 && g_strcmp0(segs[0], "apis") == 0) {
		GString *out;
		g_autoptr(GPtrArray) gvs = served_group_versions(self, segs[1]);
		g_autofree gchar *gv = g_strdup_printf("%s/%s", segs[1], segs[2]);
		if (!g_ptr_array_find_with_equal_func(gvs, gv, g_str_equal, NULL))
			return FALSE;
		out = g_string_new(NULL);
		append_resource_list(self, out, segs[1], segs[2]);
		kubesim_respond_json_take(msg, 200, g_string_free(out, FALSE));
		return TRUE;
	}
	return FALSE;
}
