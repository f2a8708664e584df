/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncKube"

#include "config.h"

#include <json-glib/json-glib.h>

#include "kube/msd-exec-status.h"
#include "util/msd-json-object.h"

#define MSD_EXEC_STATUS_QUOTE 200

static gint
msd_exec_status_exit_code(JsonObject *status)
{
	JsonObject *details;
	JsonArray *causes;
	gint64 code = -1;

	if (g_strcmp0(msd_json_object_get_string(status, "reason"), "NonZeroExitCode") != 0)
		return -1;
	if (!json_object_has_member(status, "details") ||
	    !JSON_NODE_HOLDS_OBJECT(json_object_get_member(status, "details")))
		return -1;
	details = json_object_get_object_member(status, "details");
	if (!json_object_has_member(details, "causes") ||
	    !JSON_NODE_HOLDS_ARRAY(json_object_get_member(details, "causes")))
		return -1;
	causes = json_object_get_array_member(details, "causes");
	for (guint i = 0; i < json_array_get_length(causes); i++) {
		JsonNode *node = json_array_get_element(causes, i);
		JsonObject *cause;
		const gchar *text;

		if (!JSON_NODE_HOLDS_OBJECT(node))
			continue;
		cause = json_node_get_object(node);
		if (g_strcmp0(msd_json_object_get_string(cause, "reason"), "ExitCode") != 0)
			continue;
		text = msd_json_object_get_string(cause, "message");
		if (text != NULL && g_ascii_string_to_signed(text, 10, 0, G_MAXINT, &code, NULL))
			return (gint)code;
	}
	return -1;
}

gboolean
msd_exec_status_parse(const gchar *data, gsize len, gint *exit_code, gchar **message)
{
	g_autoptr(JsonParser) parser = json_parser_new_immutable();
	JsonNode *root;
	JsonObject *status;
	const gchar *text;

	*exit_code = -1;
	*message = NULL;
	if (len > G_MAXSSIZE || !json_parser_load_from_data(parser, data, (gssize)len, NULL) ||
	    (root = json_parser_get_root(parser)) == NULL || !JSON_NODE_HOLDS_OBJECT(root)) {
		g_autofree gchar *quote = g_utf8_make_valid(data, MIN(len, MSD_EXEC_STATUS_QUOTE));

		*message = g_strdup_printf("exec ended with an error: %s", quote);
		return FALSE;
	}
	status = json_node_get_object(root);
	if (g_strcmp0(msd_json_object_get_string(status, "status"), "Success") == 0) {
		*exit_code = 0;
		return TRUE;
	}
	*exit_code = msd_exec_status_exit_code(status);
	text = msd_json_object_get_string(status, "message");
	*message = g_strdup(text != NULL && text[0] != '\0' ? text : "exec failed");
	return FALSE;
}
