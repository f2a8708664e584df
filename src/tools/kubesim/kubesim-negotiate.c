/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-negotiate.h"

#include <string.h>

/* The serializers of a built-in resource, in the API server's order (the first one is used
 * when there is no Accept header). */
static const gchar *const media_types[] = {"application/json", "application/yaml",
                                           "application/vnd.kubernetes.protobuf", NULL};

/* One media range of Accept, as the API server's parser (goautoneg) reads it. */
typedef struct {
	gchar *type;
	gchar *subtype;
	gdouble q;
	gchar *as, *g, *v, *stream;
	gboolean has_as, has_g, has_v;
} Clause;

static void
clause_clear(gpointer data)
{
	Clause *c = data;

	g_free(c->type);
	g_free(c->subtype);
	g_free(c->as);
	g_free(c->g);
	g_free(c->v);
	g_free(c->stream);
}

/* goautoneg's order, which Go's sort applies by insertion to so few elements: a higher q, a
 * concrete type or subtype before a wildcard. */
static gboolean
clause_less(const Clause *a, const Clause *b)
{
	if (a->q > b->q)
		return TRUE;
	if (g_strcmp0(a->type, "*") != 0 && g_strcmp0(b->type, "*") == 0)
		return TRUE;
	if (g_strcmp0(a->subtype, "*") != 0 && g_strcmp0(b->subtype, "*") == 0)
		return TRUE;
	return FALSE;
}

static GArray *
parse_accept(const gchar *header)
{
	GArray *clauses = g_array_new(FALSE, TRUE, sizeof(Clause));
	g_auto(GStrv) parts = g_strsplit(header, ",", -1);

	g_array_set_clear_func(clauses, clause_clear);
	for (guint i = 0; parts[i] != NULL; i++) {
		g_auto(GStrv) params = g_strsplit(g_strstrip(parts[i]), ";", -1);
		g_auto(GStrv) range = g_strsplit(params[0], "/", -1);
		Clause c = {0};

		c.q = 1.0;
		c.type = g_strdup(g_strstrip(range[0]));
		if (range[1] == NULL && g_strcmp0(c.type, "*") == 0) {
			c.subtype = g_strdup("*");
		} else if (range[1] != NULL && range[2] == NULL) {
			c.subtype = g_strdup(g_strstrip(range[1]));
		} else {
			clause_clear(&c);
			continue;
		}
		for (guint j = 1; params[j] != NULL; j++) {
			gchar *eq = strchr(params[j], '=');
			g_autofree gchar *key = NULL;
			gchar *value;

			if (eq == NULL)
				continue;
			key = g_strstrip(g_strndup(params[j], eq - params[j]));
			value = g_strstrip(g_strdup(eq + 1));
			if (g_strcmp0(key, "q") == 0) {
				c.q = g_ascii_strtod(value, NULL);
				g_free(value);
			} else if (g_strcmp0(key, "as") == 0) {
				g_free(c.as), c.as = value, c.has_as = TRUE;
			} else if (g_strcmp0(key, "g") == 0) {
				g_free(c.g), c.g = value, c.has_g = TRUE;
			} else if (g_strcmp0(key, "v") == 0) {
				g_free(c.v), c.v = value, c.has_v = TRUE;
			} else if (g_strcmp0(key, "stream") == 0) {
				g_free(c.stream), c.stream = value;
			} else {
				/* pretty, export and the rest change nothing kubesim writes */
				g_free(value);
			}
		}
		g_array_append_val(clauses, c);
	}
	for (guint i = 1; i < clauses->len; i++) {
		for (guint j = i; j > 0 && clause_less(&g_array_index(clauses, Clause, j),
		                                       &g_array_index(clauses, Clause, j - 1));
		     j--) {
			Clause tmp = g_array_index(clauses, Clause, j);
			g_array_index(clauses, Clause, j) = g_array_index(clauses, Clause, j - 1);
			g_array_index(clauses, Clause, j - 1) = tmp;
		}
	}
	return clauses;
}

/* Whether @c can be served by the serializer of @media_type; @conversions: whether the
 * endpoint converts (a resource's get, list and watch) or only encodes (an error). */
static gboolean
clause_accepts(const Clause *c, const gchar *media_type, gboolean conversions, KubesimForm *form)
{
	const gchar *slash = strchr(media_type, '/');
	g_autofree gchar *type = g_strndup(media_type, slash - media_type);
	const gchar *subtype = slash + 1;
	gboolean yaml = g_strcmp0(subtype, "yaml") == 0;

	if (!((g_strcmp0(c->type, type) == 0 &&
	       (g_strcmp0(c->subtype, subtype) == 0 || g_strcmp0(c->subtype, "*") == 0)) ||
	      (g_strcmp0(c->type, "*") == 0 && g_strcmp0(c->subtype, "*") == 0)))
		return FALSE;
	/* YAML has no stream serializer; "watch" is the only stream schema */
	if (c->stream != NULL && c->stream[0] != '\0' &&
	    (yaml || g_strcmp0(c->stream, "watch") != 0))
		return FALSE;
	if (!c->has_as && !c->has_g && !c->has_v) {
		form->kind = KUBESIM_FORM_OBJECT;
		form->version = NULL;
		return TRUE;
	}
	if (!conversions || g_strcmp0(c->g, "meta.k8s.io") != 0)
		return FALSE;
	if (g_strcmp0(c->v, "v1") == 0)
		form->version = "v1";
	else if (g_strcmp0(c->v, "v1beta1") == 0)
		form->version = "v1beta1";
	else
		return FALSE;
	if (g_strcmp0(c->as, "Table") == 0 && g_strcmp0(type, "application") == 0 &&
	    (g_strcmp0(subtype, "json") == 0 || yaml))
		form->kind = KUBESIM_FORM_TABLE;
	else if (g_strcmp0(c->as, "PartialObjectMetadata") == 0)
		form->kind = KUBESIM_FORM_METADATA;
	else if (g_strcmp0(c->as, "PartialObjectMetadataList") == 0)
		form->kind = KUBESIM_FORM_METADATA_LIST;
	else
		return FALSE;
	return TRUE;
}

/* The API server's NegotiateMediaTypeOptions: the first clause, in goautoneg's order, that a
 * serializer can serve. */
static gboolean
negotiate(const gchar *header, gboolean conversions, KubesimForm *form)
{
	g_autoptr(GArray) clauses = NULL;

	form->kind = KUBESIM_FORM_OBJECT;
	form->version = NULL;
	if (header == NULL || header[0] == '\0')
		return TRUE;
	clauses = parse_accept(header);
	for (guint i = 0; i < clauses->len; i++) {
		for (guint j = 0; media_types[j] != NULL; j++) {
			if (clause_accepts(&g_array_index(clauses, Clause, i), media_types[j],
			                   conversions, form))
				return TRUE;
		}
	}
	return FALSE;
}

/* go-restful's route selection, before the API server sees the request: a media range,
 * parameters cut off, must be one the route produces (its stream types, which carry a
 * parameter, never match), or * / *. */
static gboolean
route_produces(const gchar *header)
{
	g_auto(GStrv) ranges = NULL;

	if (header == NULL || header[0] == '\0')
		return TRUE;
	ranges = g_strsplit(header, ",", -1);
	for (guint i = 0; ranges[i] != NULL; i++) {
		gchar *semi = strchr(ranges[i], ';');
		if (semi != NULL)
			*semi = '\0';
		g_strstrip(ranges[i]);
		if (g_strcmp0(ranges[i], "*/*") == 0 || g_strv_contains(media_types, ranges[i]))
			return TRUE;
	}
	return FALSE;
}

static const gchar *
accept_header(SoupServerMessage *msg)
{
	return soup_message_headers_get_list(soup_server_message_get_request_headers(msg),
	                                     "Accept");
}

KubesimStatus *
kubesim_negotiate(SoupServerMessage *msg, gboolean collection, KubesimForm *form)
{
	const gchar *header = accept_header(msg);

	if (!route_produces(header))
		return kubesim_status_new_details(
		        406, "NotAcceptable",
		        collection ? "406: Not Acceptable\n\nAvailable representations: "
		                     "application/json, application/yaml, "
		                     "application/vnd.kubernetes.protobuf, "
		                     "application/json;stream=watch, "
		                     "application/vnd.kubernetes.protobuf;stream=watch"
		                   : "406: Not Acceptable\n\nAvailable representations: "
		                     "application/json, application/yaml, "
		                     "application/vnd.kubernetes.protobuf");
	if (!negotiate(header, TRUE, form))
		return kubesim_status_new(406, "NotAcceptable",
		                          "only the following media types are accepted: "
		                          "application/json, application/yaml, "
		                          "application/vnd.kubernetes.protobuf");
	return NULL;
}

gboolean
kubesim_negotiate_compact_errors(SoupServerMessage *msg)
{
	KubesimForm form;

	return negotiate(accept_header(msg), FALSE, &form);
}

/* The Go type the API server names in its 406: the internal type of a built-in kind (its
 * group's package), unstructured for a custom resource. */
static gchar *
go_type(const KubesimResource *res, gboolean list)
{
	g_autofree gchar *package = NULL;

	if (res->crd_name != NULL)
		return g_strdup(list ? "*unstructured.UnstructuredList"
		                     : "*unstructured.Unstructured");
	/* events.k8s.io's Event is the core Event inside the server */
	if (res->group[0] == '\0' || g_strcmp0(res->group, "events.k8s.io") == 0)
		package = g_strdup("core");
	else
		package = g_strndup(res->group, strcspn(res->group, "."));
	return g_strdup_printf("*%s.%s%s", package, res->kind, list ? "List" : "");
}

KubesimStatus *
kubesim_form_check(const KubesimForm *form, const KubesimResource *res, gboolean list)
{
	g_autofree gchar *type = NULL;

	if (form->kind == KUBESIM_FORM_METADATA && list) {
		type = go_type(res, TRUE);
		return kubesim_status_new(406, "NotAcceptable",
		                          "you requested PartialObjectMetadata, but the requested "
		                          "object is a list (%s)",
		                          type);
	}
	if (form->kind == KUBESIM_FORM_METADATA_LIST && !list && res->crd_name != NULL)
		/* an unstructured object passes the conversion's list check (it has the list
		 * accessors) and fails where it has no items: a plain error, so a 500 without a
		 * reason */
		return kubesim_status_new(500, NULL, "content is not a list");
	if (form->kind == KUBESIM_FORM_METADATA_LIST && !list) {
		type = go_type(res, FALSE);
		return kubesim_status_new(406, "NotAcceptable",
		                          "you requested PartialObjectMetadataList, but the "
		                          "requested object is not a list (%s)",
		                          type);
	}
	return NULL;
}
