/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSync"

#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "meshsync-error.h"
#include "util/msd-yaml.h"
#include "util/msd-i18n.h"

/* Deep enough for any Kubernetes object; bounds recursion on hostile input. */
#define MSD_YAML_MAX_DEPTH 256

typedef struct {
	yaml_parser_t *parser;
	const gchar *origin;
} MsdYamlReader;

static gboolean
msd_yaml_next_event(MsdYamlReader *reader, yaml_event_t *event, GError **error)
{
	if (yaml_parser_parse(reader->parser, event))
		return TRUE;
	g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA, "%s:%zu:%zu: %s",
	            reader->origin, reader->parser->problem_mark.line + 1,
	            reader->parser->problem_mark.column + 1,
	            reader->parser->problem != NULL ? reader->parser->problem : _("invalid YAML"));
	return FALSE;
}

static gboolean
msd_yaml_scalar_is_integer(const gchar *text, gint64 *value)
{
	gchar *end = NULL;
	gint64 parsed;
	gint base = 10;
	const gchar *digits = text;

	if (text[0] == '\0')
		return FALSE;
	if (g_str_has_prefix(text, "0x")) {
		base = 16;
		digits = text + 2;
	} else if (g_str_has_prefix(text, "0o")) {
		base = 8;
		digits = text + 2;
	} else if (text[0] != '-' && text[0] != '+' && !g_ascii_isdigit(text[0])) {
		return FALSE;
	}
	errno = 0;
	parsed = g_ascii_strtoll(digits, &end, base);
	if (errno != 0 || end == digits || *end != '\0')
		return FALSE;
	*value = parsed;
	return TRUE;
}

static gboolean
msd_yaml_scalar_is_float(const gchar *text, gdouble *value)
{
	gchar *end = NULL;
	gdouble parsed;

	if (g_strcmp0(text, ".inf") == 0 || g_strcmp0(text, ".nan") == 0 ||
	    g_strcmp0(text, "-.inf") == 0) {
		/* JSON has no infinities or NaN: keep the text rather than invent a number. */
		return FALSE;
	}
	if (text[0] != '-' && text[0] != '+' && text[0] != '.' && !g_ascii_isdigit(text[0]))
		return FALSE;
	errno = 0;
	parsed = g_ascii_strtod(text, &end);
	if (errno != 0 || end == text || *end != '\0')
		return FALSE;
	*value = parsed;
	return TRUE;
}

static JsonNode *
msd_yaml_scalar_to_node(const yaml_event_t *event)
{
	const gchar *text = (const gchar *)event->data.scalar.value;
	const gchar *tag = (const gchar *)event->data.scalar.tag;
	gint64 integer = 0;
	gdouble number = 0;
	JsonNode *node;

	if (event->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
	    g_strcmp0(tag, YAML_STR_TAG) == 0) {
		node = json_node_new(JSON_NODE_VALUE);
		json_node_set_string(node, text);
		return node;
	}
	if (text[0] == '\0' || g_strcmp0(text, "~") == 0 || g_ascii_strcasecmp(text, "null") == 0)
		return json_node_new(JSON_NODE_NULL);
	if (g_ascii_strcasecmp(text, "true") == 0 || g_ascii_strcasecmp(text, "false") == 0) {
		node = json_node_new(JSON_NODE_VALUE);
		json_node_set_boolean(node, g_ascii_strcasecmp(text, "true") == 0);
		return node;
	}
	node = json_node_new(JSON_NODE_VALUE);
	if (msd_yaml_scalar_is_integer(text, &integer))
		json_node_set_int(node, integer);
	else if (msd_yaml_scalar_is_float(text, &number))
		json_node_set_double(node, number);
	else
		json_node_set_string(node, text);
	return node;
}

static JsonNode *
msd_yaml_read_node(MsdYamlReader *reader, yaml_event_t *first, guint depth, GError **error);

static JsonNode *
msd_yaml_read_sequence(MsdYamlReader *reader, guint depth, GError **error)
{
	g_autoptr(JsonArray) array = json_array_new();
	JsonNode *node;

	for (;;) {
		g_auto(yaml_event_t) event = {0};
		JsonNode *item;

		if (!msd_yaml_next_event(reader, &event, error))
			return NULL;
		if (event.type == YAML_SEQUENCE_END_EVENT)
			break;
		item = msd_yaml_read_node(reader, &event, depth + 1, error);
		if (item == NULL)
			return NULL;
		json_array_add_element(array, item);
	}
	node = json_node_new(JSON_NODE_ARRAY);
	json_node_set_array(node, array);
	return node;
}

static JsonNode *
msd_yaml_read_mapping(MsdYamlReader *reader, guint depth, GError **error)
{
	g_autoptr(JsonObject) object = json_object_new();
	JsonNode *node;

	for (;;) {
		g_auto(yaml_event_t) key = {0};
		JsonNode *value;

		if (!msd_yaml_next_event(reader, &key, error))
			return NULL;
		if (key.type == YAML_MAPPING_END_EVENT)
			break;
		if (key.type != YAML_SCALAR_EVENT) {
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
			            _("%s:%zu:%zu: mapping keys must be scalars"), reader->origin,
			            key.start_mark.line + 1, key.start_mark.column + 1);
			return NULL;
		}
		value = msd_yaml_read_node(reader, NULL, depth + 1, error);
		if (value == NULL)
			return NULL;
		/* Later keys win, as in Go's YAML decoder into a map. */
		json_object_set_member(object, (const gchar *)key.data.scalar.value, value);
	}
	node = json_node_new(JSON_NODE_OBJECT);
	json_node_set_object(node, object);
	return node;
}

/* Reads one node, starting at @first when the caller already holds its first event. */
static JsonNode *
msd_yaml_read_node(MsdYamlReader *reader, yaml_event_t *first, guint depth, GError **error)
{
	g_auto(yaml_event_t) own = {0};
	yaml_event_t *event = first;

	if (event == NULL) {
		if (!msd_yaml_next_event(reader, &own, error))
			return NULL;
		event = &own;
	}
	if (depth > MSD_YAML_MAX_DEPTH) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("%s:%zu:%zu: nesting deeper than %u levels"), reader->origin,
		            event->start_mark.line + 1, event->start_mark.column + 1,
		            (guint)MSD_YAML_MAX_DEPTH);
		return NULL;
	}
	switch (event->type) {
	case YAML_SCALAR_EVENT:
		return msd_yaml_scalar_to_node(event);
	case YAML_SEQUENCE_START_EVENT:
		return msd_yaml_read_sequence(reader, depth, error);
	case YAML_MAPPING_START_EVENT:
		return msd_yaml_read_mapping(reader, depth, error);
	case YAML_ALIAS_EVENT:
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("%s:%zu:%zu: YAML aliases are not supported"), reader->origin,
		            event->start_mark.line + 1, event->start_mark.column + 1);
		return NULL;
	default:
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("%s:%zu:%zu: unexpected YAML event"), reader->origin,
		            event->start_mark.line + 1, event->start_mark.column + 1);
		return NULL;
	}
}

GPtrArray *
msd_yaml_parse_documents(const gchar *data, gsize length, const gchar *origin, GError **error)
{
	g_auto(yaml_parser_t) parser = {0};
	g_autoptr(GPtrArray) documents =
	        g_ptr_array_new_with_free_func((GDestroyNotify)json_node_unref);
	MsdYamlReader reader = {&parser, origin != NULL ? origin : "<data>"};

	g_return_val_if_fail(data != NULL || length == 0, NULL);

	if (!yaml_parser_initialize(&parser)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_FAILED,
		            _("%s: cannot initialise the YAML parser"), reader.origin);
		return NULL;
	}
	yaml_parser_set_input_string(&parser, (const guchar *)(data != NULL ? data : ""), length);

	for (;;) {
		g_auto(yaml_event_t) event = {0};
		g_auto(yaml_event_t) end = {0};
		g_auto(yaml_event_t) content = {0};
		JsonNode *document;

		if (!msd_yaml_next_event(&reader, &event, error))
			return NULL;
		if (event.type == YAML_STREAM_END_EVENT)
			break;
		if (event.type != YAML_DOCUMENT_START_EVENT)
			continue; /* YAML_STREAM_START_EVENT */
		if (!msd_yaml_next_event(&reader, &content, error))
			return NULL;
		if (content.type == YAML_DOCUMENT_END_EVENT)
			continue;
		document = msd_yaml_read_node(&reader, &content, 0, error);
		if (document == NULL)
			return NULL;
		if (!msd_yaml_next_event(&reader, &end, error)) {
			json_node_unref(document);
			return NULL;
		}
		/* A document that holds only "null" (like "---\n~") is as empty as "---". */
		if (JSON_NODE_HOLDS_NULL(document))
			json_node_unref(document);
		else
			g_ptr_array_add(documents, document);
	}
	return g_steal_pointer(&documents);
}

JsonNode *
msd_yaml_parse_document(const gchar *data, gsize length, const gchar *origin, GError **error)
{
	g_autoptr(GPtrArray) documents = msd_yaml_parse_documents(data, length, origin, error);

	if (documents == NULL)
		return NULL;
	if (documents->len == 0) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("%s: the document is empty"), origin != NULL ? origin : "<data>");
		return NULL;
	}
	return json_node_ref(g_ptr_array_index(documents, 0));
}
