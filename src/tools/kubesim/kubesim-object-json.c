/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-object-json.h"

#include <stdlib.h>
#include <string.h>

#include "kubesim-json.h"

/* Appends member @key_tok (a key and its value) of @doc, with a comma unless it is the first. */
static void
append_member(GString *out, const MsdJsonTokens *doc, gint key_tok, gboolean *first)
{
	const gchar *raw;
	gsize raw_len;

	if (!*first)
		g_string_append_c(out, ',');
	*first = FALSE;
	raw = msd_json_tokens_span(doc, key_tok, &raw_len);
	g_string_append_len(out, raw, raw_len);
	g_string_append_c(out, ':');
	raw = msd_json_tokens_span(doc, key_tok + 1, &raw_len);
	g_string_append_len(out, raw, raw_len);
}

/* Appends an edited member of metadata; counts and places the resourceVersion written. */
static void
append_edit(GString *out,
            const gchar *key,
            const gchar *value,
            gboolean *first,
            guint *n_rv,
            gsize *rv_off,
            gsize *rv_len)
{
	if (!*first)
		g_string_append_c(out, ',');
	*first = FALSE;
	msd_json_string_append(out, key, -1, MSD_JSON_STRING_GO);
	g_string_append_c(out, ':');
	if (strcmp(key, "resourceVersion") == 0) {
		(*n_rv)++;
		*rv_off = out->len;
		*rv_len = strlen(value);
	}
	g_string_append(out, value);
}

/* ObjectMeta's members in the order of its Go fields, which is how the server writes them. */
const gchar *const kubesim_object_meta_order[] = {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
        NULL,
};

static guint
object_meta_rank(const gchar *key, gsize len)
{
	guint i;

	for (i = 0; kubesim_object_meta_order[i] != NULL; i++) {
		if (strlen(kubesim_object_meta_order[i]) == len &&
		    memcmp(key, kubesim_object_meta_order[i], len) == 0)
			return i;
	}
	return i;
}

/* One member of metadata to write: from the document (@key_tok) or an edit (@edit). */
typedef struct {
	guint rank;
	guint seq;
	gint key_tok;
	const KubesimMetaEdit *edit;
} MetaMember;

static gint
meta_member_compare(gconstpointer a, gconstpointer b)
{
	const MetaMember *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Appends "metadata":{...} of @doc (token @meta, or -1) with @edits applied. @canonical: in
 * ObjectMeta's order (other members last, in their order); otherwise members stay where they
 * are and new ones go last.
 */
static void
append_metadata(GString *out,
                const MsdJsonTokens *doc,
                gint meta,
                KubesimMetaEdit *edits,
                guint n_edits,
                gboolean canonical,
                gboolean *first,
                guint *n_rv,
                gsize *rv_off,
                gsize *rv_len)
{
	MetaMember members[64];
	guint n = 0, i, e;
	gboolean mfirst = TRUE;
	gboolean sorted = TRUE;
	gint m = meta >= 0 && msd_json_tokens_is_object(doc, meta) ? msd_json_tokens_size(doc, meta)
	                                                           : 0;

	if (!*first)
		g_string_append_c(out, ',');
	*first = FALSE;
	g_string_append(out, "\"metadata\":{");
	/* odd metadata with very many members keeps its order */
	if (m + n_edits > G_N_ELEMENTS(members))
		canonical = FALSE;
	if (m > 0) {
		gint j, k = meta + 1;
		for (j = 0; j < m; j++, k = msd_json_tokens_skip(doc, k + 1)) {
			KubesimMetaEdit *edit = NULL;
			for (e = 0; e < n_edits; e++) {
				if (msd_json_tokens_string_equals(doc, k, edits[e].key))
					edit = &edits[e];
			}
			if (edit != NULL) {
				edit->done = TRUE;
				if (edit->value == NULL)
					continue;
			}
			if (!canonical) {
				if (edit == NULL)
					append_member(out, doc, k, &mfirst);
				else
					append_edit(out, edit->key, edit->value, &mfirst, n_rv,
					            rv_off, rv_len);
				continue;
			}
			members[n].key_tok = k;
			members[n].edit = edit;
			members[n].seq = n;
			{
				/* the raw key: one with escapes is no ObjectMeta field */
				gsize len;
				const gchar *key = msd_json_tokens_raw(doc, k, &len);
				members[n].rank = object_meta_rank(key, len);
			}
			if (n > 0 && members[n].rank < members[n - 1].rank)
				sorted = FALSE;
			n++;
		}
	}
	for (e = 0; e < n_edits; e++) {
		if (edits[e].done || edits[e].value == NULL)
			continue;
		if (!canonical) {
			append_edit(out, edits[e].key, edits[e].value, &mfirst, n_rv, rv_off,
			            rv_len);
			continue;
		}
		members[n].key_tok = -1;
		members[n].edit = &edits[e];
		members[n].seq = n;
		members[n].rank = object_meta_rank(edits[e].key, strlen(edits[e].key));
		if (n > 0 && members[n].rank < members[n - 1].rank)
			sorted = FALSE;
		n++;
	}
	if (!sorted)
		qsort(members, n, sizeof members[0], meta_member_compare);
	for (i = 0; i < n; i++) {
		if (members[i].edit != NULL)
			append_edit(out, members[i].edit->key, members[i].edit->value, &mfirst,
			            n_rv, rv_off, rv_len);
		else
			append_member(out, doc, members[i].key_tok, &mfirst);
	}
	g_string_append_c(out, '}');
}

GBytes *
kubesim_object_json_rewrite_doc(const MsdJsonTokens *doc,
                                gboolean canonical,
                                KubesimMetaEdit *edits,
                                guint n_edits,
                                gsize *rv_off,
                                gsize *rv_len)
{
	guint n_rv = 0;
	GString *out;
	gint i, n, tok, meta;
	gboolean first = TRUE;

	*rv_off = *rv_len = 0;
	if (!msd_json_tokens_is_object(doc, 0))
		return NULL;
	out = g_string_sized_new(doc->length + 160);
	meta = msd_json_tokens_member(doc, 0, "metadata");
	g_string_append_c(out, '{');
	n = msd_json_tokens_size(doc, 0);
	if (canonical) {
		static const gchar *const head[] = {"kind", "apiVersion"};
		guint h;
		for (h = 0; h < G_N_ELEMENTS(head); h++) {
			gint value = msd_json_tokens_member(doc, 0, head[h]);
			if (value >= 0)
				append_member(out, doc, value - 1, &first);
		}
		append_metadata(out, doc, meta, edits, n_edits, canonical, &first, &n_rv, rv_off,
		                rv_len);
	}
	for (i = 0, tok = 1; i < n; i++, tok = msd_json_tokens_skip(doc, tok + 1)) {
		if (tok + 1 == meta) {
			if (!canonical)
				append_metadata(out, doc, meta, edits, n_edits, canonical, &first,
				                &n_rv, rv_off, rv_len);
			continue;
		}
		if (canonical && (msd_json_tokens_string_equals(doc, tok, "kind") ||
		                  msd_json_tokens_string_equals(doc, tok, "apiVersion") ||
		                  msd_json_tokens_string_equals(doc, tok, "metadata")))
			continue;
		append_member(out, doc, tok, &first);
	}
	if (!canonical && meta < 0)
		append_metadata(out, doc, meta, edits, n_edits, canonical, &first, &n_rv, rv_off,
		                rv_len);
	g_string_append_c(out, '}');
	if (n_rv != 1)
		*rv_off = *rv_len = 0;
	/* trim the GString's spare capacity: stored objects live long */
	{
		gsize out_len = out->len;
		gchar *data = g_realloc(g_string_free(out, FALSE), out_len + 1);
		return g_bytes_new_take(data, out_len);
	}
}

GBytes *
kubesim_object_json_rewrite(GBytes *json,
                            gboolean canonical,
                            KubesimMetaEdit *edits,
                            guint n_edits,
                            gsize *rv_off,
                            gsize *rv_len)
{
	g_auto(MsdJsonTokens) doc = MSD_JSON_TOKENS_INIT;
	gsize len;
	const gchar *js = g_bytes_get_data(json, &len);

	*rv_off = *rv_len = 0;
	if (!msd_json_tokens_parse(&doc, js, len, NULL))
		return NULL;
	return kubesim_object_json_rewrite_doc(&doc, canonical, edits, n_edits, rv_off, rv_len);
}

gsize
kubesim_object_json_item_offset(const gchar *js, gsize len)
{
	static const gchar kind[] = "{\"kind\":\"";
	static const gchar api[] = "\",\"apiVersion\":\"";
	const gchar *end = js + len;
	const gchar *p;

	if (len < sizeof kind || memcmp(js, kind, sizeof kind - 1) != 0)
		return 0;
	p = memchr(js + sizeof kind - 1, '"', len - (sizeof kind - 1));
	if (p == NULL || p[-1] == '\\' || (gsize)(end - p) < sizeof api ||
	    memcmp(p, api, sizeof api - 1) != 0)
		return 0;
	p += sizeof api - 1;
	p = memchr(p, '"', (gsize)(end - p));
	if (p == NULL || p[-1] == '\\' || p + 1 >= end || p[1] != ',')
		return 0;
	return (gsize)(p + 2 - js);
}
