/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <string.h>

#include "broker/msd-envelope.h"
#include "util/msd-json-string.h"

/* The pieces of a resource event's envelope that do not depend on the event. The event type
 * goes in between unescaped: its names are plain upper-case words. */
#define EVENT_HEAD "{\"ObjectType\":\"meshsync-data\",\"EventType\":\""
#define EVENT_MID  "\",\"Request\":null,\"Object\":"

void
msd_envelope_append_head(GString *out, const gchar *object_type, const gchar *event_type)
{
	g_string_append(out, "{\"ObjectType\":");
	msd_json_string_append(out, object_type, -1, MSD_JSON_STRING_GO);
	g_string_append(out, ",\"EventType\":");
	msd_json_string_append(out, event_type, -1, MSD_JSON_STRING_GO);
	g_string_append(out, ",\"Request\":null,\"Object\":");
}

void
msd_envelope_append_tail(GString *out)
{
	g_string_append_c(out, '}');
}

GBytes *
msd_envelope_new_bytes(const gchar *object_type,
                       const gchar *event_type,
                       const gchar *object_json,
                       gssize len)
{
	gsize n = len < 0 ? strlen(object_json) : (gsize)len;
	GString *out = g_string_sized_new(n + 96);

	msd_envelope_append_head(out, object_type, event_type);
	g_string_append_len(out, object_json, (gssize)n);
	msd_envelope_append_tail(out);
	return g_string_free_to_bytes(out);
}

gsize
msd_envelope_event_parts(MsdReplayPart parts[MSD_ENVELOPE_N_PARTS],
                         MeshSyncEventType event_type,
                         const gchar *json,
                         gsize len)
{
	const gchar *type = meshsync_event_type_to_string(event_type);
	gsize total = 0;

	parts[0] = (MsdReplayPart){EVENT_HEAD, sizeof(EVENT_HEAD) - 1};
	parts[1] = (MsdReplayPart){type, strlen(type)};
	parts[2] = (MsdReplayPart){EVENT_MID, sizeof(EVENT_MID) - 1};
	parts[3] = (MsdReplayPart){json, len};
	parts[4] = (MsdReplayPart){"}", 1};
	for (guint i = 0; i < MSD_ENVELOPE_N_PARTS; i++)
		total += parts[i].len;
	return total;
}
