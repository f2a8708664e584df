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
#define CUSTOM_RESOURCE_VERBS \
	"[\"delete\",\"get\",\"list\",\"patch\",\"create\",\"update\",\"watch\"]"

/* indented, without a final newline, as the version handler marshals it */
static const gchar version_json[] =
        "{\n"
        "  \"major\": \"1\",\n"
        "  \"minor\": \"31\",\n"
        "  \"gitVersion\": \"v1.31.0-kubesim\",\n"
        "  \"gitCommit\": \"0000000000000000000000000000000000000000\",\n"
        "  \"gitTreeState\": \"clean\",\n"
        "  \"buildDate\": \"2024-08-13T00:00:00Z\",\n"
        "  \"goVersion\": \"go1.22.5\",\n"
        "  \"compiler\": \"gc\",\n"
        "  \"platform\": \"linux/amd64\"\n"
        "}";

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
	/* the API extensions server lists a custom resource's verbs in its own order */
	g_string_append(out, res->crd_name != NULL ? ",\"verbs\":" CUSTOM_RESOURCE_VERBS
	                                           : ",\"verbs\":" RESOURCE_VERBS);
	if (res->short_names != NULL) {
		g_string_append(out, ",\"shortNames\":");
		append_strv(out, res->short_names);
	}
	if (res->categories != NULL) {
		g_string_append(out, ",\"categories\":");
		append_strv(out, res->categories);
	}
}

static gint
compare_resource_names(gconstpointer a, gconstpointer b)
{
	const KubesimResource *ra = *(KubesimResource *const *)a;
	const KubesimResource *rb = *(KubesimResource *const *)b;

	return g_strcmp0(ra->resource, rb->resource);
}

/* The resources of one group version, by name: both discovery formats list them sorted. */
static GPtrArray *
sorted_resources(KubesimServer *self, const gchar *group, const gchar *version)
{
	GPtrArray *resources = kubesim_store_get_resources(self->store);
	GPtrArray *out = g_ptr_array_new();

	for (guint i = 0; i < resources->len; i++) {
		KubesimResource *res = g_ptr_array_index(resources, i);
		if (g_strcmp0(res->group, group) == 0 && g_strcmp0(res->version, version) == 0)
			g_ptr_array_add(out, res);
	}
	g_ptr_array_sort(out, compare_resource_names);
	return out;
}

static gint
compare_strings(gconstpointer a, gconstpointer b)
{
	return g_strcmp0(*(const gchar *const *)a, *(const gchar *const *)b);
}

/* @res's subresources by name (a copy; NULL without any). */
static gchar **
sorted_subresources(const KubesimResource *res)
{
	gchar **subs;

	if (res->subresources == NULL)
		return NULL;
	subs = g_strdupv(res->subresources);
	qsort(subs, g_strv_length(subs), sizeof(*subs), compare_strings);
	return subs;
}

/* What the API server says of the type it stores a resource as: the first 8 bytes of the
 * SHA-256 of "group/version/kind", in base64 (discovery.StorageVersionHash). */
static gchar *
storage_version_hash(const KubesimResource *res)
{
	g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
	g_autofree gchar *gvk = g_strdup_printf("%s/%s/%s", res->group, res->version, res->kind);
	guint8 digest[32];
	gsize len = sizeof digest;

	g_checksum_update(sum, (const guchar *)gvk, -1);
	g_checksum_get_digest(sum, digest, &len);
	return g_base64_encode(digest, 8);
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
	g_autoptr(GPtrArray) resources = sorted_resources(self, group, version);
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
		g_auto(GStrv) subs = sorted_subresources(res);
		g_autofree gchar *hash = storage_version_hash(res);

		if (i > 0)
			g_string_append_c(out, ',');
		g_string_append(out, "{\"name\":");
		msd_json_string_append(out, res->resource, -1, MSD_JSON_STRING_GO);
		g_string_append(out, ",\"singularName\":");
		msd_json_string_append(out, res->singular, -1, MSD_JSON_STRING_GO);
		g_string_append_printf(
		        out, ",\"namespaced\":%s,\"kind\":", res->namespaced ? "true" : "false");
		msd_json_string_append(out, res->kind, -1, MSD_JSON_STRING_GO);
		append_verbs_and_names(out, res);
		g_string_append(out, ",\"storageVersionHash\":");
		msd_json_string_append(out, hash, -1, MSD_JSON_STRING_GO);
		g_string_append_c(out, '}');
		for (j = 0; subs != NULL && subs[j] != NULL; j++) {
			SubresourceInfo info = subresource_info(res, subs[j]);
			g_string_append(out, ",{\"name\":");
			{
				g_autofree gchar *name =
				        g_strdup_printf("%s/%s", res->resource, subs[j]);
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

/* The kind a resource or subresource answers with. The built-in types leave the group and
 * version empty when it is the resource's own group version (Scale is autoscaling/v1); the
 * API extensions server writes them out for custom resources. */
static void
append_response_kind(GString *out, const KubesimResource *res, const gchar *kind)
{
	gboolean scale = g_strcmp0(kind, "Scale") == 0;
	gboolean custom = res->crd_name != NULL;

	g_string_append(out, "\"responseKind\":{\"group\":");
	msd_json_string_append(out,
	                       scale    ? "autoscaling"
	                       : custom ? res->group
	                                : "",
	                       -1, MSD_JSON_STRING_GO);
	g_string_append(out, ",\"version\":");
	msd_json_string_append(out,
	                       scale    ? "v1"
	                       : custom ? res->version
	                                : "",
	                       -1, MSD_JSON_STRING_GO);
	g_string_append(out, ",\"kind\":");
	msd_json_string_append(out, kind, -1, MSD_JSON_STRING_GO);
	g_string_append_c(out, '}');
}

static void
append_aggregated_group(KubesimServer *self, GString *out, const gchar *group)
{
	g_autoptr(GPtrArray) gvs = served_group_versions(self, group);
	guint i, j, v;

	/* a 1.37 server writes no creationTimestamp in an empty ObjectMeta */
	g_string_append(out, "{\"metadata\":{");
	if (group[0] != '\0') {
		g_string_append(out, "\"name\":");
		msd_json_string_append(out, group, -1, MSD_JSON_STRING_GO);
	}
	g_string_append(out, "},\"versions\":[");
	for (v = 0; v < gvs->len; v++) {
		const gchar *gv = g_ptr_array_index(gvs, v);
		const gchar *version = strchr(gv, '/') != NULL ? strchr(gv, '/') + 1 : gv;
		g_autoptr(GPtrArray) resources = sorted_resources(self, group, version);

		if (v > 0)
			g_string_append_c(out, ',');
		g_string_append(out, "{\"version\":");
		msd_json_string_append(out, version, -1, MSD_JSON_STRING_GO);
		g_string_append(out, ",\"resources\":[");
		for (i = 0; i < resources->len; i++) {
			KubesimResource *res = g_ptr_array_index(resources, i);
			g_auto(GStrv) subs = sorted_subresources(res);

			if (i > 0)
				g_string_append_c(out, ',');
			g_string_append(out, "{\"resource\":");
			msd_json_string_append(out, res->resource, -1, MSD_JSON_STRING_GO);
			g_string_append_c(out, ',');
			append_response_kind(out, res, res->kind);
			g_string_append_printf(out, ",\"scope\":\"%s\",\"singularResource\":",
			                       res->namespaced ? "Namespaced" : "Cluster");
			msd_json_string_append(out, res->singular, -1, MSD_JSON_STRING_GO);
			append_verbs_and_names(out, res);
			if (subs != NULL) {
				g_string_append(out, ",\"subresources\":[");
				for (j = 0; subs[j] != NULL; j++) {
					SubresourceInfo info = subresource_info(res, subs[j]);
					if (j > 0)
						g_string_append_c(out, ',');
					g_string_append(out, "{\"subresource\":");
					msd_json_string_append(out, subs[j], -1,
					                       MSD_JSON_STRING_GO);
					g_string_append_c(out, ',');
					append_response_kind(out, res, info.kind);
					g_string_append_printf(out, ",\"verbs\":%s}", info.verbs);
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
	g_string_append(out, "]}\n");
	/* the aggregated document is cacheable (public, with an ETag a client can send back in
	 * If-None-Match), unlike every other answer of the API server */
	{
		SoupMessageHeaders *headers = soup_server_message_get_response_headers(msg);
		g_autofree gchar *sum = g_compute_checksum_for_data(
		        G_CHECKSUM_SHA512, (const guchar *)out->str, out->len);
		g_autofree gchar *upper = g_ascii_strup(sum, -1);
		g_autofree gchar *etag = g_strdup_printf("\"%s\"", upper);
		const gchar *if_none_match = soup_message_headers_get_one(
		        soup_server_message_get_request_headers(msg), "If-None-Match");

		soup_message_headers_replace(headers, "Cache-Control", "public");
		soup_message_headers_replace(headers, "Etag", etag);
		soup_message_headers_replace(headers, "Vary", "Accept");
		if (g_strcmp0(if_none_match, etag) == 0) {
			soup_server_message_set_status(msg, 304, NULL);
			g_string_free(out, TRUE);
			return;
		}
	}
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
		soup_server_message_set_status(msg, 200, NULL);
		soup_server_message_set_response(msg, "application/json", SOUP_MEMORY_STATIC,
		                                 version_json, sizeof version_json - 1);
		return TRUE;
	}
	if (g_strcmp0(path, "/healthz") == 0 || g_strcmp0(path, "/readyz") == 0 ||
	    g_strcmp0(path, "/livez") == 0) {
		/* the real server's health checks say nosniff, as its errors do */
		soup_message_headers_replace(soup_server_message_get_response_headers(msg),
		                             "X-Content-Type-Options", "nosniff");
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
