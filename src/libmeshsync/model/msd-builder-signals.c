/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <string.h>

#include "model/msd-builder-signals.h"
#include "util/msd-json-string.h"

gboolean
msd_builder_signals_apply(const gchar *kind, const gchar *api_version)
{
	if (g_str_equal(kind, "Pod"))
		return g_str_equal(api_version, "v1");
	if (g_str_equal(kind, "Deployment"))
		return g_str_equal(api_version, "apps/v1");
	if (g_str_equal(kind, "CustomResourceDefinition"))
		return g_str_has_prefix(api_version, "apiextensions.k8s.io/");
	return FALSE;
}

/* @text was decoded (invalid UTF-8 already U+FFFD), as Go holds a string it decoded. */
static void
append_string(GString *out, const gchar *text)
{
	msd_json_string_append(out, text, -1, MSD_JSON_STRING_GO_DECODED);
}

/* Appends the images of @containers (an array of container objects), skipping those
 * already in @seen. */
static void
append_images(const MsdJsonTokens *doc, gint containers, GString *out, GPtrArray *seen)
{
	gint n;
	gint element;

	if (!msd_json_tokens_is_array(doc, containers))
		return;
	n = msd_json_tokens_size(doc, containers);
	element = containers + 1;
	for (gint i = 0; i < n; i++, element = msd_json_tokens_skip(doc, element)) {
		gint image = msd_json_tokens_member(doc, element, "image");
		g_autofree gchar *text = NULL;

		if (!msd_json_tokens_is_string(doc, image))
			continue;
		text = msd_json_tokens_dup_string(doc, image);
		/* a pod has a handful of containers: a linear look is cheaper than a set */
		if (text[0] == '\0' ||
		    g_ptr_array_find_with_equal_func(seen, text, g_str_equal, NULL))
			continue;
		if (seen->len > 0)
			g_string_append_c(out, ',');
		append_string(out, text);
		g_ptr_array_add(seen, g_steal_pointer(&text));
	}
}

gchar *
msd_builder_signals_to_metadata(const MsdJsonTokens *doc, gint index, const gchar *kind)
{
	g_autoptr(GString) out = g_string_sized_new(128);
	g_autoptr(GPtrArray) seen = g_ptr_array_new_with_free_func(g_free);
	gint pod_spec = -1;

	g_string_append(out, "{\"builderSignals\":{\"crdsPresent\":[");
	if (g_str_equal(kind, "CustomResourceDefinition")) {
		gint name = msd_json_tokens_path(doc, index, "metadata", "name", NULL);

		if (msd_json_tokens_is_string(doc, name)) {
			g_autofree gchar *text = msd_json_tokens_dup_string(doc, name);

			append_string(out, text);
		}
	} else if (g_str_equal(kind, "Pod")) {
		pod_spec = msd_json_tokens_member(doc, index, "spec");
	} else {
		pod_spec = msd_json_tokens_path(doc, index, "spec", "template", "spec", NULL);
	}
	/* A pod spec without containers is one the server never sends whole (they are
	 * required): a shallow type's object, whose images were not read. Saying none would be
	 * a claim; no key says unknown. */
	if (!g_str_equal(kind, "CustomResourceDefinition") &&
	    !msd_json_tokens_is_array(doc, msd_json_tokens_member(doc, pod_spec, "containers"))) {
		g_string_append(out, "]}}");
		return g_string_free(g_steal_pointer(&out), FALSE);
	}
	g_string_append(out, "],\"images\":[");
	if (pod_spec >= 0) {
		append_images(doc, msd_json_tokens_member(doc, pod_spec, "initContainers"), out,
		              seen);
		append_images(doc, msd_json_tokens_member(doc, pod_spec, "containers"), out, seen);
	}
	g_string_append(out, "]}}");
	return g_string_free(g_steal_pointer(&out), FALSE);
}
