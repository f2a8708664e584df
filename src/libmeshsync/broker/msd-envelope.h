/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

#include "meshsync-event-type.h"
#include "broker/msd-replay-window.h"

G_BEGIN_DECLS

/*
 * Every message on the upstream subjects is meshkit's broker.Message as Go's encoding/json
 * writes it: `{"ObjectType":<s>,"EventType":<s>,"Request":null,"Object":<json>}`. Consumers
 * decode it, but the golden tests compare bytes, so its one spelling lives here.
 */

/* Appends everything up to the Object's value; @object_type and @event_type are escaped as
 * Go escapes strings. */
void msd_envelope_append_head(GString *out, const gchar *object_type, const gchar *event_type);
/* Closes what msd_envelope_append_head() opened, once the Object's value is written. */
void msd_envelope_append_tail(GString *out);

/* A whole envelope around @object_json (@len bytes, or NUL-terminated with -1). */
GBytes *msd_envelope_new_bytes(const gchar *object_type,
                               const gchar *event_type,
                               const gchar *object_json,
                               gssize len);

#define MSD_ENVELOPE_N_PARTS 5

/* A resource event (`"ObjectType":"meshsync-data"`) as pieces that point into @json and into
 * constant text, so the caller copies the object once, where it keeps the message. Returns
 * the message's length. */
gsize msd_envelope_event_parts(MsdReplayPart parts[MSD_ENVELOPE_N_PARTS],
                               MeshSyncEventType event_type,
                               const gchar *json,
                               gsize len);

G_END_DECLS
