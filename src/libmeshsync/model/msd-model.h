/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

#include "meshsync-event-type.h"
#include "model/msd-attribute-cache.h"
#include "util/msd-json-tokens.h"

G_BEGIN_DECLS

/*
 * The wire fields of one KubernetesResource, as text: every string lives in one arena (one
 * allocation per object), fields are spans of it, each followed by a NUL so that getters can
 * hand out pointers. An empty span is both "absent" and "empty": on the wire the two only
 * differ for the few fields that have their own flag below.
 *
 * The fields that hold JSON text (msd_model_field_is_wire(): spec and status attributes,
 * data, ownerReferences...) and the annotation values are kept in their wire form, the bytes
 * between the quotes of the wire's string: they are most of an object and escape a quote
 * every few bytes, so the conversion writes them once, already escaped, and the wire copies
 * them. Every other field holds its text, escaped when it is written.
 */

typedef struct {
	guint32 off;
	guint32 len;
} MsdSpan;

typedef enum {
	MSD_F_ID,
	MSD_F_API_VERSION,
	MSD_F_KIND,
	MSD_F_MODEL,
	MSD_F_META_ID,
	MSD_F_NAME,
	MSD_F_GENERATE_NAME,
	MSD_F_NAMESPACE,
	MSD_F_SELF_LINK,
	MSD_F_UID,
	MSD_F_RESOURCE_VERSION,
	MSD_F_CREATION_TIMESTAMP,
	MSD_F_DELETION_TIMESTAMP,
	MSD_F_OWNER_REFERENCES,
	MSD_F_FINALIZERS,
	MSD_F_CLUSTER_NAME,
	MSD_F_META_CLUSTER_ID,
	MSD_F_SPEC_ID,
	MSD_F_SPEC_ATTRIBUTE,
	MSD_F_STATUS_ID,
	MSD_F_STATUS_ATTRIBUTE,
	MSD_F_CLUSTER_ID,
	MSD_F_PATTERN_RESOURCE,
	MSD_F_IMMUTABLE,
	MSD_F_DATA,
	MSD_F_BINARY_DATA,
	MSD_F_STRING_DATA,
	MSD_F_TYPE,
	MSD_N_FIELDS
} MsdField;

/* Whether field @f holds its wire form rather than its text (see above). */
static inline gboolean
msd_model_field_is_wire(MsdField f)
{
	switch (f) {
	case MSD_F_OWNER_REFERENCES:
	case MSD_F_FINALIZERS:
	case MSD_F_SPEC_ATTRIBUTE:
	case MSD_F_STATUS_ATTRIBUTE:
	case MSD_F_DATA:
	case MSD_F_BINARY_DATA:
	case MSD_F_STRING_DATA:
		return TRUE;
	default:
		return FALSE;
	}
}

typedef struct {
	MsdSpan key;   /* JSON-decoded key */
	MsdSpan value; /* labels: Go-escaped form, without quotes (upstream's raw bytes);
	                * annotations: that in its wire form */
} MsdKeyValue;

typedef struct {
	gchar *arena; /* (owned) */
	gsize arena_len;
	MsdSpan f[MSD_N_FIELDS];
	gint64 generation;
	gint64 grace_period; /* deletionGracePeriodSeconds, valid when has_grace_period */
	guint has_grace_period : 1;
	guint has_spec : 1;
	guint has_status : 1;
	guint has_pattern_resource : 1;
	guint n_labels;
	guint n_annotations;
	MsdKeyValue *kv; /* (owned) (nullable): labels first, then annotations */
} MsdModel;

typedef struct _MsdServiceEndpoint MsdServiceEndpoint;

void msd_model_clear(MsdModel *m);

/* Text of a field, never NULL. */
static inline const gchar *
msd_model_get(const MsdModel *m, MsdField f)
{
	return m->arena != NULL ? m->arena + m->f[f].off : "";
}

static inline const gchar *
msd_model_str(const MsdModel *m, MsdSpan s)
{
	return m->arena + s.off;
}

/* What the conversions of one engine share from one to the next: the buffer the arena is
 * built in, and whether Secrets are redacted (the engine reads MESHSYNC_REDACT_SECRETS once).
 * The thread that owns the engine only. */
typedef struct {
	GString *scratch; /* (owned) (nullable) */
	gboolean redact_secrets;
} MsdConvertState;

void msd_convert_state_init(MsdConvertState *state, gboolean redact_secrets);
void msd_convert_state_clear(MsdConvertState *state);

/*
 * Fill @m from the object at token @index of @doc (contract 1.2). The result is exactly the
 * one the store's copy of that object gives, msd_store_entry_new_from_tokens(@doc, @index,
 * @default_kind, @default_api_version) tokenized on its own: @default_kind and
 * @default_api_version (nullable) count only when the object has no `kind` or `apiVersion`
 * member, and metadata.managedFields is never read. @doc is only read, during the call.
 *
 * @endpoint receives the Service endpoint when the object is a Service and @event_type is not
 * DELETED (NULL otherwise, and NULL when the object does not decode as a Service): the caller
 * decides whether it needs a probe.
 *
 * @cache (nullable) holds the wire form of big values (the spec) by their bytes: looked up,
 * and filled on a miss. The result is the same with or without it.
 *
 * @state (nullable): the engine's; without one, a fresh buffer and MESHSYNC_REDACT_SECRETS
 * read now.
 */
gboolean msd_model_convert_tokens(MsdModel *m,
                                  const MsdJsonTokens *doc,
                                  gint index,
                                  const gchar *default_kind,
                                  const gchar *default_api_version,
                                  MeshSyncEventType event_type,
                                  const gchar *cluster_id,
                                  MsdServiceEndpoint **endpoint,
                                  MsdAttributeCache *cache,
                                  MsdConvertState *state,
                                  GError **error);

/* Append the wire form (contract 1.1). @component_metadata is JSON text or NULL. */
void msd_model_write_wire(const MsdModel *m, const gchar *component_metadata, GString *out);

/* About the size of the wire form without component_metadata, for sizing a buffer. */
gsize msd_model_wire_size_hint(const MsdModel *m);

/* Case-insensitive key match as Go's encoding/json does it against an ASCII field name. */
gboolean msd_model_key_folds_to(const gchar *key, gsize len, const gchar *field);

/* The canonical text form of a textual UUID (8-4-4-4-12, braced, urn:uuid: or 32 hex digits);
 * FALSE when @text is none of those. @out holds 37 bytes. */
gboolean msd_model_parse_uuid(const gchar *text, gsize len, gchar out[37]);

G_END_DECLS
