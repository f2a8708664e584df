/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * The model converter: meshsync_resource_new_from_json() on a Kubernetes object, then the
 * wire bytes (meshsync_resource_to_json) that every writer sends.
 *
 * Checked: a refused object sets a MESHSYNC_ERROR; an accepted one has its kind and
 * apiVersion, converts the same way twice, and its wire bytes are JSON that the tokenizer and
 * json-glib read back as an object.
 *
 * Input: the first byte picks the event type, the rest is the object.
 */

#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "fuzz-common.h"
#include "meshsync-error.h"
#include "meshsync-resource.h"
#include "util/msd-json-tokens.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_logs();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const MeshSyncEventType types[] = {
	        MESHSYNC_EVENT_TYPE_ADDED,
	        MESHSYNC_EVENT_TYPE_MODIFIED,
	        MESHSYNC_EVENT_TYPE_DELETED,
	};
	g_autoptr(MeshSyncResource) resource = NULL;
	g_autoptr(MeshSyncResource) twice = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *wire = NULL;
	g_autofree gchar *wire_twice = NULL;
	MeshSyncEventType type;
	const gchar *json;
	gsize length;

	if (size < 1)
		return 0;
	type = types[data[0] % G_N_ELEMENTS(types)];
	json = (const gchar *)data + 1;
	length = size - 1;

	resource =
	        meshsync_resource_new_from_json(json, (gssize)length, type, "fuzz-cluster", &error);
	if (resource == NULL) {
		FUZZ_CHECK(error != NULL && error->domain == MESHSYNC_ERROR);
		return 0;
	}
	FUZZ_CHECK(error == NULL);
	FUZZ_CHECK(meshsync_resource_get_kind(resource) != NULL);
	FUZZ_CHECK(meshsync_resource_get_api_version(resource) != NULL);
	FUZZ_CHECK(meshsync_resource_get_event_type(resource) == type);
	(void)meshsync_resource_get_name(resource);
	(void)meshsync_resource_get_namespace(resource);
	(void)meshsync_resource_get_uid(resource);
	(void)meshsync_resource_get_label(resource, "app");

	wire = meshsync_resource_to_json(resource);
	FUZZ_CHECK(wire != NULL);
	{
		g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;
		g_autoptr(JsonParser) parser = json_parser_new();

		FUZZ_CHECK(msd_json_tokens_parse(&tokens, wire, strlen(wire), NULL));
		FUZZ_CHECK(tokens.tokens[0].type == MSD_JSON_OBJECT);
		FUZZ_CHECK(json_parser_load_from_data(parser, wire, -1, NULL));
		FUZZ_CHECK(JSON_NODE_HOLDS_OBJECT(json_parser_get_root(parser)));
	}

	twice = meshsync_resource_new_from_json(json, (gssize)length, type, "fuzz-cluster", NULL);
	FUZZ_CHECK(twice != NULL);
	wire_twice = meshsync_resource_to_json(twice);
	FUZZ_CHECK(strcmp(wire, wire_twice) == 0);
	return 0;
}
