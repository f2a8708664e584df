/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncModel"

#include "config.h"

#include <string.h>

#include "model/msd-json-writer.h"
#include "model/msd-secret-redact.h"

gboolean
msd_secret_redact_enabled(void)
{
	const gchar *v = g_getenv("MESHSYNC_REDACT_SECRETS");

	/* upstream lower-cases the value and compares with "true", or takes "1" */
	return v != NULL && (g_ascii_strcasecmp(v, "true") == 0 || strcmp(v, "1") == 0);
}

gboolean
msd_secret_redact_write(GString *out, const MsdJsonTokens *doc, gint idx)
{
	MsdJsonMembers members;

	if (idx < 0 || doc->tokens[idx].type != MSD_JSON_OBJECT)
		return FALSE;
	msd_json_members_init_sorted(&members, doc, idx);
	g_string_append_c(out, '{');
	for (gint k = 0; k < members.n; k++) {
		if (k > 0)
			g_string_append_c(out, ',');
		msd_json_append_string(out, members.m[k].key, (gssize)members.m[k].key_len);
		g_string_append(out, ":\"" MSD_REDACTED_VALUE "\"");
	}
	g_string_append_c(out, '}');
	msd_json_members_clear(&members);
	return TRUE;
}

gchar *
msd_secret_redact(const gchar *json, gssize len)
{
	MsdJsonTokens doc;
	GString *out;

	if (json == NULL)
		return g_strdup("");
	if (len < 0)
		len = (gssize)strlen(json);
	if (len == 0)
		return g_strdup("");
	msd_json_tokens_init(&doc);
	out = g_string_sized_new((gsize)len);
	if (!msd_json_tokens_parse(&doc, json, (gsize)len, NULL) ||
	    !msd_secret_redact_write(out, &doc, 0)) {
		g_string_truncate(out, 0);
		g_string_append_len(out, json, len);
	}
	msd_json_tokens_clear(&doc);
	return g_string_free(out, FALSE);
}
