/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncOutput"

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "meshsync-error.h"
#include "meshsync-resource-private.h"
#include "model/msd-model.h"
#include "output/msd-snapshot-emitter.h"
#include "output/msd-snapshot-yaml.h"
#include "util/msd-bytes16.h"
#include "util/msd-json-string.h"
#include "util/msd-json-tokens.h"
#include "util/msd-utf8.h"

/*
 * The snapshot document of a resource straight from its model. The wire JSON is a fixed
 * struct (msd_model_write_wire()), so its YAML is too: the same mappings with the same keys,
 * each present under the same condition, sorted once in go-yaml v2's order. Each string is
 * the text a decoder of the wire JSON would get back: the field's bytes with every byte of
 * invalid UTF-8 as U+FFFD (the wire writes it as \ufffd) and cut at the first NUL (the
 * emitter takes C strings); a field the model keeps in its wire form is unescaped first.
 * Only component_metadata, JSON text of a small object, is tokenized.
 */

typedef enum {
	ENTRY_STRING,      /* always present */
	ENTRY_OMITEMPTY,   /* present when not empty */
	ENTRY_GENERATION,  /* metadata.generation, when not 0 */
	ENTRY_GRACE,       /* metadata.deletionGracePeriodSeconds, when set */
	ENTRY_LABELS,      /* when there are any */
	ENTRY_ANNOTATIONS, /* when there are any */
	ENTRY_METADATA,
	ENTRY_SPEC, /* when the object has one */
	ENTRY_STATUS,
	ENTRY_PATTERN,   /* a UUID string or null */
	ENTRY_COMPONENT, /* JSON text or null */
	ENTRY_CONSTANT,  /* a fixed string */
} EntryKind;

typedef struct {
	const gchar *key;
	EntryKind kind;
	MsdField field;        /* ENTRY_STRING, ENTRY_OMITEMPTY */
	const gchar *constant; /* ENTRY_CONSTANT */
} Entry;

static Entry top_entries[] = {
        {"id", ENTRY_STRING, MSD_F_ID, NULL},
        {"apiVersion", ENTRY_STRING, MSD_F_API_VERSION, NULL},
        {"kind", ENTRY_STRING, MSD_F_KIND, NULL},
        {"model", ENTRY_STRING, MSD_F_MODEL, NULL},
        {"metadata", ENTRY_METADATA, 0, NULL},
        {"spec", ENTRY_SPEC, 0, NULL},
        {"status", ENTRY_STATUS, 0, NULL},
        {"cluster_id", ENTRY_STRING, MSD_F_CLUSTER_ID, NULL},
        {"pattern_resource", ENTRY_PATTERN, 0, NULL},
        {"component_metadata", ENTRY_COMPONENT, 0, NULL},
        {"immutable", ENTRY_OMITEMPTY, MSD_F_IMMUTABLE, NULL},
        {"data", ENTRY_OMITEMPTY, MSD_F_DATA, NULL},
        {"binaryData", ENTRY_OMITEMPTY, MSD_F_BINARY_DATA, NULL},
        {"stringData", ENTRY_OMITEMPTY, MSD_F_STRING_DATA, NULL},
        {"type", ENTRY_OMITEMPTY, MSD_F_TYPE, NULL},
};

static Entry metadata_entries[] = {
        {"id", ENTRY_STRING, MSD_F_META_ID, NULL},
        {"name", ENTRY_OMITEMPTY, MSD_F_NAME, NULL},
        {"generateName", ENTRY_OMITEMPTY, MSD_F_GENERATE_NAME, NULL},
        {"namespace", ENTRY_OMITEMPTY, MSD_F_NAMESPACE, NULL},
        {"selfLink", ENTRY_OMITEMPTY, MSD_F_SELF_LINK, NULL},
        {"uid", ENTRY_STRING, MSD_F_UID, NULL},
        {"resourceVersion", ENTRY_OMITEMPTY, MSD_F_RESOURCE_VERSION, NULL},
        {"generation", ENTRY_GENERATION, 0, NULL},
        {"creationTimestamp", ENTRY_OMITEMPTY, MSD_F_CREATION_TIMESTAMP, NULL},
        {"deletionTimestamp", ENTRY_OMITEMPTY, MSD_F_DELETION_TIMESTAMP, NULL},
        {"deletionGracePeriodSeconds", ENTRY_GRACE, 0, NULL},
        {"labels", ENTRY_LABELS, 0, NULL},
        {"annotations", ENTRY_ANNOTATIONS, 0, NULL},
        {"ownerReferences", ENTRY_OMITEMPTY, MSD_F_OWNER_REFERENCES, NULL},
        {"finalizers", ENTRY_OMITEMPTY, MSD_F_FINALIZERS, NULL},
        {"clusterName", ENTRY_OMITEMPTY, MSD_F_CLUSTER_NAME, NULL},
        {"cluster_id", ENTRY_STRING, MSD_F_META_CLUSTER_ID, NULL},
};

/* spec and status: {id, attribute}; the fields are given per use */
static Entry attribute_entries[] = {
        {"id", ENTRY_STRING, 0, NULL},
        {"attribute", ENTRY_OMITEMPTY, 1, NULL},
};

/* one label or annotation: {id, unique_id, kind, key, value}; key and value per use */
static Entry key_value_entries[] = {
        {"id", ENTRY_CONSTANT, 0, ""},     {"unique_id", ENTRY_CONSTANT, 0, ""},
        {"kind", ENTRY_CONSTANT, 0, NULL}, /* "label" or "annotation" */
        {"key", ENTRY_OMITEMPTY, 0, NULL}, {"value", ENTRY_OMITEMPTY, 1, NULL},
};

static gint
entry_compare(gconstpointer a, gconstpointer b)
{
	return msd_snapshot_yaml_compare_keys(((const Entry *)a)->key, ((const Entry *)b)->key);
}

static void
sort_entries_once(void)
{
	static gsize sorted = 0;

	if (g_once_init_enter(&sorted)) {
		qsort(top_entries, G_N_ELEMENTS(top_entries), sizeof(Entry), entry_compare);
		qsort(metadata_entries, G_N_ELEMENTS(metadata_entries), sizeof(Entry),
		      entry_compare);
		qsort(attribute_entries, G_N_ELEMENTS(attribute_entries), sizeof(Entry),
		      entry_compare);
		qsort(key_value_entries, G_N_ELEMENTS(key_value_entries), sizeof(Entry),
		      entry_compare);
		g_once_init_leave(&sorted, 1);
	}
}

typedef struct {
	MsdSnapshotEmitter *e;
	const MsdModel *m;
	const gchar *component_metadata;
	GString *decoded; /* (unowned): a wire-form field decoded */
} Writer;

/* The length of the run of ASCII bytes other than NUL that @p starts with, 16 at a time: the
 * text of nearly every field. */
static gsize
ascii_prefix(const guchar *p, gsize len)
{
	gsize i = 0;

	while (len - i >= 16) {
		MsdBytes16 x;
		guint lane;

		memcpy(&x, p + i, sizeof(x));
		lane = msd_bytes16_first_lane((MsdBytes16)((x == 0) | (x >= 0x80)));
		i += lane;
		if (lane < 16)
			return i;
	}
	while (i < len && p[i] != 0 && p[i] < 0x80)
		i++;
	return i;
}

/* The text a decoder of the wire string would give: see the comment at the top. */
static gboolean
emit_text(Writer *w, const gchar *text, gsize len)
{
	const guchar *p = (const guchar *)text;
	GString *scratch = w->e->scratch;
	gsize end = ascii_prefix(p, len);

	/* valid UTF-8 (nearly always ASCII) up to the end or a NUL: the bytes are the text */
	while (end < len && p[end] != 0) {
		gunichar cp;
		gint sz;

		if (p[end] < 0x80) {
			end++;
			continue;
		}
		sz = msd_utf8_decode(p + end, len - end, &cp);
		if (sz == 0)
			break;
		end += (gsize)sz;
	}
	if (end == len || p[end] == 0)
		return msd_snapshot_emitter_scalar(w->e, text, end, TRUE);

	g_string_truncate(scratch, 0);
	g_string_append_len(scratch, text, (gssize)end);
	while (end < len && p[end] != 0) {
		gunichar cp;
		gint sz = msd_utf8_decode(p + end, len - end, &cp);

		if (sz == 0) {
			g_string_append_len(scratch, MSD_UTF8_REPLACEMENT, 3);
			end++;
		} else {
			g_string_append_len(scratch, text + end, sz);
			end += (gsize)sz;
		}
	}
	return msd_snapshot_emitter_scalar(w->e, scratch->str, scratch->len, TRUE);
}

static gboolean
emit_key(Writer *w, const gchar *key)
{
	return msd_snapshot_emitter_scalar(w->e, key, strlen(key), TRUE);
}

static gboolean
emit_span(Writer *w, MsdSpan span)
{
	return emit_text(w, msd_model_str(w->m, span), span.len);
}

/* The first backslash at or after @i, or @n. */
static gsize
backslash_at(const gchar *p, gsize i, gsize n)
{
	while (n - i >= 16) {
		MsdBytes16 x;
		guint lane;

		memcpy(&x, p + i, sizeof(x));
		lane = msd_bytes16_first_lane((MsdBytes16)(x == '\\'));
		i += lane;
		if (lane < 16)
			return i;
	}
	while (i < n && p[i] != '\\')
		i++;
	return i;
}

/* A field kept in its wire form (msd_model_field_is_wire()): the JSON string body decoded,
 * which the model wrote itself, so it is well formed. */
static gboolean
emit_wire_span(Writer *w, MsdSpan span)
{
	const gchar *p = msd_model_str(w->m, span);
	gsize n = span.len;
	gsize i = 0;
	GString *decoded = w->decoded;

	gchar *out;

	if (memchr(p, '\\', n) == NULL)
		return emit_text(w, p, n);
	/* an escape never decodes to more bytes than it takes */
	g_string_set_size(decoded, n);
	out = decoded->str;
	while (i < n) {
		gsize seg = backslash_at(p, i, n);
		gunichar cp;

		memcpy(out, p + i, seg - i);
		out += seg - i;
		i = seg;
		if (i >= n)
			break;
		/* nearly all of them: the escaped quotes and backslashes of JSON text */
		if (p[i + 1] == '"' || p[i + 1] == '\\') {
			*out++ = p[i + 1];
			i += 2;
			continue;
		}
		i += (gsize)msd_json_decode_escape(p + i, n - i, &cp);
		if (cp < 0x80)
			*out++ = (gchar)cp;
		else
			out += g_unichar_to_utf8(cp, out);
	}
	g_string_truncate(decoded, (gsize)(out - decoded->str));
	return emit_text(w, decoded->str, decoded->len);
}

static gboolean
emit_number(Writer *w, gint64 value)
{
	gchar text[24];
	gint len = g_snprintf(text, sizeof(text), "%" G_GINT64_FORMAT, value);

	return msd_snapshot_emitter_scalar(w->e, text, (gsize)len, FALSE);
}

static gboolean
emit_null(Writer *w)
{
	return msd_snapshot_emitter_scalar(w->e, "null", 4, FALSE);
}

/* A {key: span} mapping from @entries, whose @field numbers index @spans; the span of field
 * number 1 is in its wire form when @wire_second. */
static gboolean
emit_struct(Writer *w,
            const Entry *entries,
            guint n,
            const MsdSpan *spans,
            gboolean wire_second,
            const gchar *constant)
{
	if (!msd_snapshot_emitter_mapping_start(w->e))
		return FALSE;
	for (guint i = 0; i < n; i++) {
		const Entry *entry = &entries[i];

		if (entry->kind == ENTRY_OMITEMPTY && spans[entry->field].len == 0)
			continue;
		if (!emit_key(w, entry->key))
			return FALSE;
		if (entry->kind == ENTRY_CONSTANT) {
			const gchar *text = entry->constant != NULL ? entry->constant : constant;

			if (!msd_snapshot_emitter_scalar(w->e, text, strlen(text), TRUE))
				return FALSE;
		} else if (wire_second && entry->field == 1) {
			if (!emit_wire_span(w, spans[1]))
				return FALSE;
		} else if (!emit_span(w, spans[entry->field])) {
			return FALSE;
		}
	}
	return msd_snapshot_emitter_mapping_end(w->e);
}

static gboolean
emit_key_values(Writer *w, const MsdKeyValue *kv, guint n, gboolean annotations)
{
	if (!msd_snapshot_emitter_sequence_start(w->e))
		return FALSE;
	for (guint i = 0; i < n; i++) {
		MsdSpan spans[2] = {kv[i].key, kv[i].value};

		/* annotation values are kept in their wire form */
		if (!emit_struct(w, key_value_entries, G_N_ELEMENTS(key_value_entries), spans,
		                 annotations, annotations ? "annotation" : "label"))
			return FALSE;
	}
	return msd_snapshot_emitter_sequence_end(w->e);
}

static gboolean
emit_component_metadata(Writer *w)
{
	g_auto(MsdJsonTokens) doc = MSD_JSON_TOKENS_INIT;

	if (w->component_metadata == NULL)
		return emit_null(w);
	if (!msd_json_tokens_parse(&doc, w->component_metadata, strlen(w->component_metadata),
	                           w->e->error))
		return FALSE;
	return msd_snapshot_emitter_json(w->e, &doc, 0);
}

static gboolean emit_mapping(Writer *w, const Entry *entries, guint n);

/* Whether @entry appears in the document for this model. */
static gboolean
entry_present(Writer *w, const Entry *entry)
{
	const MsdModel *m = w->m;

	switch (entry->kind) {
	case ENTRY_OMITEMPTY:
		return m->f[entry->field].len > 0;
	case ENTRY_GENERATION:
		return m->generation != 0;
	case ENTRY_GRACE:
		return m->has_grace_period;
	case ENTRY_LABELS:
		return m->n_labels > 0;
	case ENTRY_ANNOTATIONS:
		return m->n_annotations > 0;
	case ENTRY_SPEC:
		return m->has_spec;
	case ENTRY_STATUS:
		return m->has_status;
	default:
		return TRUE;
	}
}

static gboolean
emit_entry_value(Writer *w, const Entry *entry)
{
	const MsdModel *m = w->m;

	switch (entry->kind) {
	case ENTRY_STRING:
	case ENTRY_OMITEMPTY:
		if (msd_model_field_is_wire(entry->field))
			return emit_wire_span(w, m->f[entry->field]);
		return emit_span(w, m->f[entry->field]);
	case ENTRY_GENERATION:
		return emit_number(w, m->generation);
	case ENTRY_GRACE:
		return emit_number(w, m->grace_period);
	case ENTRY_LABELS:
		return emit_key_values(w, m->kv, m->n_labels, FALSE);
	case ENTRY_ANNOTATIONS:
		return emit_key_values(w, m->kv + m->n_labels, m->n_annotations, TRUE);
	case ENTRY_METADATA:
		return emit_mapping(w, metadata_entries, G_N_ELEMENTS(metadata_entries));
	case ENTRY_SPEC:
	case ENTRY_STATUS: {
		gboolean spec = entry->kind == ENTRY_SPEC;
		MsdSpan spans[2] = {m->f[spec ? MSD_F_SPEC_ID : MSD_F_STATUS_ID],
		                    m->f[spec ? MSD_F_SPEC_ATTRIBUTE : MSD_F_STATUS_ATTRIBUTE]};

		/* the attribute is JSON text, kept in its wire form */
		return emit_struct(w, attribute_entries, G_N_ELEMENTS(attribute_entries), spans,
		                   TRUE, NULL);
	}
	case ENTRY_PATTERN:
		if (!m->has_pattern_resource)
			return emit_null(w);
		return emit_span(w, m->f[MSD_F_PATTERN_RESOURCE]);
	case ENTRY_COMPONENT:
		return emit_component_metadata(w);
	case ENTRY_CONSTANT:
	default:
		g_assert_not_reached();
	}
}

static gboolean
emit_mapping(Writer *w, const Entry *entries, guint n)
{
	if (!msd_snapshot_emitter_mapping_start(w->e))
		return FALSE;
	for (guint i = 0; i < n; i++) {
		if (!entry_present(w, &entries[i]))
			continue;
		if (!emit_key(w, entries[i].key) || !emit_entry_value(w, &entries[i]))
			return FALSE;
	}
	return msd_snapshot_emitter_mapping_end(w->e);
}

static gboolean
write_document(Writer *w, MsdSnapshotEmitter *e, const gchar *event_type)
{
	if (event_type != NULL) {
		/* {"EventType": ..., "Object": ...}: already in go-yaml's order */
		if (!msd_snapshot_emitter_mapping_start(e) || !emit_key(w, "EventType") ||
		    !msd_snapshot_emitter_scalar(e, event_type, strlen(event_type), TRUE) ||
		    !emit_key(w, "Object"))
			return FALSE;
	}
	if (!emit_mapping(w, top_entries, G_N_ELEMENTS(top_entries)))
		return FALSE;
	if (event_type != NULL && !msd_snapshot_emitter_mapping_end(e))
		return FALSE;
	return msd_snapshot_emitter_finish(e);
}

/* Through the block writer, or libyaml's emitter when it leaves the document to it. */
static gboolean
append_document(GString *out,
                MeshSyncResource *resource,
                const gchar *event_type,
                MsdSnapshotBuffers *buffers,
                GError **error)
{
	g_autoptr(MsdSnapshotBuffers) own = buffers == NULL ? msd_snapshot_buffers_new() : NULL;
	gboolean reference = FALSE;

	if (buffers == NULL)
		buffers = own;
	sort_entries_once();
	for (;;) {
		g_auto(MsdSnapshotEmitter) e = {0};
		Writer w = {&e, meshsync_resource_get_model(resource),
		            meshsync_resource_get_component_metadata(resource), buffers->decoded};

		if (msd_snapshot_emitter_begin(&e, out, reference, buffers, error) &&
		    write_document(&w, &e, event_type))
			return TRUE;
		if (!e.unsupported)
			return FALSE;
		reference = TRUE;
	}
}

gboolean
msd_snapshot_yaml_append_resource(GString *out,
                                  MeshSyncResource *resource,
                                  MsdSnapshotBuffers *buffers,
                                  GError **error)
{
	return append_document(out, resource, NULL, buffers, error);
}

gboolean
msd_snapshot_yaml_append_record(GString *out,
                                MeshSyncResource *resource,
                                MeshSyncEventType event_type,
                                MsdSnapshotBuffers *buffers,
                                GError **error)
{
	return append_document(out, resource, meshsync_event_type_to_string(event_type), buffers,
	                       error);
}
