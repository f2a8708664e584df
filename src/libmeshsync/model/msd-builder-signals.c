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
append_string(GString *out, const gchar *text, gsize length)
{
	msd_json_string_append(out, text, (gssize)length, MSD_JSON_STRING_GO_DECODED);
}

#define IMAGES_ON_STACK 16

typedef struct {
	const gchar *text;
	gsize length;
} ImageSpan;

/* The images written so far: most are plain text read in place; the few with escapes are
 * decoded copies. A pod has a handful of containers: a linear look is cheaper than a set. */
typedef struct {
	ImageSpan local[IMAGES_ON_STACK];
	guint n;
	GArray *more;     /* (nullable) (element-type ImageSpan): past the local ones */
	GPtrArray *owned; /* (nullable): the decoded copies spans point into */
} Images;

static void
images_clear(Images *images)
{
	g_clear_pointer(&images->more, g_array_unref);
	g_clear_pointer(&images->owned, g_ptr_array_unref);
}

static const ImageSpan *
images_get(const Images *images, guint i)
{
	if (i < IMAGES_ON_STACK)
		return &images->local[i];
	return &g_array_index(images->more, ImageSpan, i - IMAGES_ON_STACK);
}

static gboolean
images_contain(const Images *images, const gchar *text, gsize length)
{
	for (guint i = 0; i < images->n; i++) {
		const ImageSpan *image = images_get(images, i);

		if (image->length == length && memcmp(image->text, text, length) == 0)
			return TRUE;
	}
	return FALSE;
}

/* Keeps @copy (nullable: @text lies in the document), which @text points into. */
static void
images_add(Images *images, const gchar *text, gsize length, gchar *copy)
{
	ImageSpan image = {text, length};

	if (copy != NULL) {
		if (images->owned == NULL)
			images->owned = g_ptr_array_new_with_free_func(g_free);
		g_ptr_array_add(images->owned, copy);
	}
	if (images->n < IMAGES_ON_STACK) {
		images->local[images->n] = image;
	} else {
		if (images->more == NULL)
			images->more = g_array_new(FALSE, FALSE, sizeof(ImageSpan));
		g_array_append_val(images->more, image);
	}
	images->n++;
}

/* Appends the images of @containers (an array of container objects), skipping those
 * already in @seen. */
static void
append_images(const MsdJsonTokens *doc, gint containers, GString *out, Images *seen)
{
	gint n;
	gint element;

	if (!msd_json_tokens_is_array(doc, containers))
		return;
	n = msd_json_tokens_size(doc, containers);
	element = containers + 1;
	for (gint i = 0; i < n; i++, element = msd_json_tokens_skip(doc, element)) {
		gint image = msd_json_tokens_member(doc, element, "image");
		gchar *copy = NULL;
		const gchar *text;
		gsize length;

		if (!msd_json_tokens_is_string(doc, image))
			continue;
		if (doc->tokens[image].plain) {
			/* the raw bytes are the text */
			text = msd_json_tokens_raw(doc, image, &length);
		} else {
			text = copy = msd_json_tokens_dup_string(doc, image);
			length = strlen(copy);
		}
		if (length == 0 || images_contain(seen, text, length)) {
			g_free(copy);
			continue;
		}
		if (seen->n > 0)
			g_string_append_c(out, ',');
		append_string(out, text, length);
		images_add(seen, text, length, copy);
	}
}

gchar *
msd_builder_signals_to_metadata(const MsdJsonTokens *doc, gint index, const gchar *kind)
{
	g_autoptr(GString) out = g_string_sized_new(256);
	Images seen = {.n = 0, .more = NULL, .owned = NULL};
	gint pod_spec = -1;

	g_string_append(out, "{\"builderSignals\":{\"crdsPresent\":[");
	if (g_str_equal(kind, "CustomResourceDefinition")) {
		gint name = msd_json_tokens_path(doc, index, "metadata", "name", NULL);

		if (msd_json_tokens_is_string(doc, name)) {
			g_autofree gchar *text = msd_json_tokens_dup_string(doc, name);

			append_string(out, text, strlen(text));
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
		              &seen);
		append_images(doc, msd_json_tokens_member(doc, pod_spec, "containers"), out, &seen);
		images_clear(&seen);
	}
	g_string_append(out, "]}}");
	return g_string_free(g_steal_pointer(&out), FALSE);
}
