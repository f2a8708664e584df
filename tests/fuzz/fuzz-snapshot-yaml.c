/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * The snapshot YAML writer (output/msd-snapshot-yaml.c) on the wire JSON of a resource: the
 * input is converted as the informer's objects are (meshsync_resource_new_from_json, then
 * meshsync_resource_to_json) when it is a Kubernetes object, else given to the writer as it is.
 *
 * Checked: whatever the writer appends parses with libyaml's own parser as a well-formed
 * stream; for an object (every resource is one) its first document is a mapping whose keys are
 * exactly the object's top-level keys; the "---" after it is followed by nothing but an empty
 * document; and it is byte for byte what libyaml's emitter writes of the same JSON
 * (msd_snapshot_yaml_append_reference()), which the block writer reproduces.
 */

#include "config.h"

#include <string.h>
#include <yaml.h>

#include "fuzz-common.h"
#include "meshsync-error.h"
#include "meshsync-resource.h"
#include "output/msd-snapshot-yaml.h"
#include "util/msd-json-tokens.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_logs();
	return 0;
}

/* The top-level keys of the JSON object @json, decoded, in a set; NULL when @json is not an
 * object. */
static GHashTable *
json_keys(const gchar *json, gsize length)
{
	g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;
	GHashTable *keys;
	gint j = 1;

	if (!msd_json_tokens_parse(&tokens, json, length, NULL) ||
	    tokens.tokens[0].type != MSD_JSON_OBJECT)
		return NULL;
	keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	for (gint k = 0; k < tokens.tokens[0].size; k++) {
		g_hash_table_add(keys, msd_json_tokens_dup_string(&tokens, j));
		j = msd_json_tokens_skip(&tokens, j + 1);
	}
	return keys;
}

/* Parses @yaml with libyaml; checks the shape and that the first document's mapping keys are
 * @keys. */
static void
check_yaml(const gchar *yaml, gsize length, GHashTable *keys)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	guint seen = 0;
	gboolean done;

	FUZZ_CHECK(yaml_parser_initialize(&parser));
	yaml_parser_set_input_string(&parser, (const guchar *)yaml, length);

	FUZZ_CHECK(yaml_parser_load(&parser, &doc));
	root = yaml_document_get_root_node(&doc);
	FUZZ_CHECK(root != NULL);
	FUZZ_CHECK(keys == NULL || root->type == YAML_MAPPING_NODE);
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     keys != NULL && p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *key = yaml_document_get_node(&doc, p->key);
		g_autofree gchar *text = NULL;

		FUZZ_CHECK(key != NULL && key->type == YAML_SCALAR_NODE);
		text = g_strndup((const gchar *)key->data.scalar.value, key->data.scalar.length);
		FUZZ_CHECK(g_hash_table_contains(keys, text));
		seen++;
	}
	FUZZ_CHECK(keys == NULL || seen == g_hash_table_size(keys));
	yaml_document_delete(&doc);

	/* after "---", an empty document (no root), then the end of the stream */
	FUZZ_CHECK(yaml_parser_load(&parser, &doc));
	done = yaml_document_get_root_node(&doc) == NULL;
	yaml_document_delete(&doc);
	if (!done) {
		FUZZ_CHECK(yaml_parser_load(&parser, &doc));
		FUZZ_CHECK(yaml_document_get_root_node(&doc) == NULL);
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&parser);
}

static void
write_and_check(const gchar *json, gsize length)
{
	g_autoptr(GString) out = g_string_new(NULL);
	g_autoptr(GString) reference = g_string_new(NULL);
	g_autoptr(GHashTable) keys = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GError) reference_error = NULL;
	gboolean ok = msd_snapshot_yaml_append(out, json, length, &error);

	FUZZ_CHECK(msd_snapshot_yaml_append_reference(reference, json, length, &reference_error) ==
	           ok);
	FUZZ_CHECK(g_string_equal(out, reference));
	if (!ok) {
		FUZZ_CHECK(error != NULL && error->domain == MESHSYNC_ERROR);
		FUZZ_CHECK(out->len == 0);
		return;
	}
	FUZZ_CHECK(out->len >= 4 && g_str_has_suffix(out->str, "---\n"));
	FUZZ_CHECK(g_utf8_validate(out->str, (gssize)out->len, NULL));
	keys = json_keys(json, length);
	check_yaml(out->str, out->len, keys);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(MeshSyncResource) resource = NULL;
	const gchar *json = (const gchar *)data;

	resource = meshsync_resource_new_from_json(json, (gssize)size, MESHSYNC_EVENT_TYPE_ADDED,
	                                           "fuzz-cluster", NULL);
	if (resource != NULL) {
		g_autofree gchar *wire = meshsync_resource_to_json(resource);

		write_and_check(wire, strlen(wire));
	} else {
		write_and_check(json, size);
	}
	return 0;
}
