/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncModel"

#include "config.h"

#include <string.h>

#include "meshsync-error.h"
#include "model/msd-json-writer.h"
#include "model/msd-model.h"
#include "model/msd-secret-redact.h"
#include "model/msd-service-endpoint.h"
#include "util/msd-utf8.h"

/*
 * Contract 1.2 in one pass over one tokenization. Upstream first marshals the unstructured
 * object (Go JSON: sorted, deduplicated keys), then (a) decodes that text into the struct
 * with Go's lenient, case-insensitive decoder, and (b) overwrites some fields with raw byte
 * spans found at exact key paths. We do (a) over the members in sorted order (so that the
 * last case-variant wins, as it does in Go) and (b) with exact lookups afterwards.
 */

#define PATTERN_LABEL "design.meshery.io/id"

typedef struct {
	MsdModel *m;
	GString *arena;
	const MsdJsonTokens *doc;
	GArray *labels;      /* (element-type MsdKeyValue) */
	GArray *annotations; /* (element-type MsdKeyValue) */
} Builder;

void
msd_model_clear(MsdModel *m)
{
	g_free(m->arena);
	g_free(m->kv);
	memset(m, 0, sizeof(*m));
}

static void
span_begin(Builder *b, MsdSpan *s)
{
	s->off = (guint32)b->arena->len;
}

static void
span_end(Builder *b, MsdSpan *s)
{
	s->len = (guint32)b->arena->len - s->off;
	g_string_append_c(b->arena, '\0');
}

static void
set_literal(Builder *b, MsdField f, const gchar *text, gssize len)
{
	span_begin(b, &b->m->f[f]);
	g_string_append_len(b->arena, text, len);
	span_end(b, &b->m->f[f]);
}

/* Go's decoder: a string value sets the field, null leaves it, any other type is skipped. */
static void
decode_string(Builder *b, MsdField f, gint v)
{
	if (b->doc->tokens[v].type != MSD_JSON_STRING)
		return;
	span_begin(b, &b->m->f[f]);
	msd_json_tokens_append_decoded(b->doc, v, b->arena);
	span_end(b, &b->m->f[f]);
}

static void
set_raw(Builder *b, MsdField f, gint v)
{
	span_begin(b, &b->m->f[f]);
	msd_json_write_raw(b->arena, b->doc, v);
	span_end(b, &b->m->f[f]);
}

/* An int64 as Go decodes the canonical number text into one; FALSE on a type error. */
static gboolean
decode_int64(Builder *b, gint v, gint64 *out)
{
	g_autoptr(GString) text = NULL;

	if (b->doc->tokens[v].type != MSD_JSON_NUMBER)
		return FALSE;
	text = g_string_sized_new(24);
	msd_json_write_value(text, b->doc, v);
	return g_ascii_string_to_signed(text->str, 10, G_MININT64, G_MAXINT64, out, NULL);
}

gboolean
msd_model_key_folds_to(const gchar *key, gsize len, const gchar *field)
{
	gsize i = 0;

	for (; *field != '\0'; field++) {
		guchar c;
		gunichar cp;
		gint sz;

		if (i >= len)
			return FALSE;
		c = (guchar)key[i];
		if (c < 0x80) {
			if ((c | 0x20) != (*field | 0x20) || !g_ascii_isalpha(c)) {
				if (c != (guchar)*field)
					return FALSE;
			}
			i++;
			continue;
		}
		/* Go folds with ToUpper(ToLower(r)); these four non-ASCII runes land on ASCII */
		sz = msd_utf8_decode((const guchar *)key + i, len - i, &cp);
		if (sz == 0)
			return FALSE;
		if (cp == 0x017f)
			c = 'S';
		else if (cp == 0x212a)
			c = 'K';
		else if (cp == 0x0130 || cp == 0x0131)
			c = 'I';
		else
			return FALSE;
		if (c != g_ascii_toupper(*field))
			return FALSE;
		i += (gsize)sz;
	}
	return i == len;
}

gboolean
msd_model_parse_uuid(const gchar *text, gsize len, gchar out[37])
{
	gchar hex[32];
	gsize h = 0;

	if (len == 45 && g_ascii_strncasecmp(text, "urn:uuid:", 9) == 0) {
		text += 9;
		len -= 9;
	} else if (len == 38 && text[0] == '{' && text[37] == '}') {
		text++;
		len -= 2;
	}
	if (len != 32 && len != 36)
		return FALSE;
	for (gsize i = 0; i < len; i++) {
		if (len == 36 && (i == 8 || i == 13 || i == 18 || i == 23)) {
			if (text[i] != '-')
				return FALSE;
			continue;
		}
		if (!g_ascii_isxdigit(text[i]))
			return FALSE;
		hex[h++] = g_ascii_tolower(text[i]);
	}
	g_snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16,
	           hex + 20);
	return TRUE;
}

static const struct {
	const gchar *name;
	MsdField field;
} meta_strings[] = {
        {"id", MSD_F_META_ID},
        {"name", MSD_F_NAME},
        {"generateName", MSD_F_GENERATE_NAME},
        {"namespace", MSD_F_NAMESPACE},
        {"selfLink", MSD_F_SELF_LINK},
        {"uid", MSD_F_UID},
        {"resourceVersion", MSD_F_RESOURCE_VERSION},
        {"creationTimestamp", MSD_F_CREATION_TIMESTAMP},
        {"deletionTimestamp", MSD_F_DELETION_TIMESTAMP},
        {"ownerReferences", MSD_F_OWNER_REFERENCES},
        {"finalizers", MSD_F_FINALIZERS},
        {"clusterName", MSD_F_CLUSTER_NAME},
        {"cluster_id", MSD_F_META_CLUSTER_ID},
};

static void
decode_metadata(Builder *b, gint obj)
{
	gint n = 0;
	MsdJsonMember *mem = msd_json_tokens_sorted_members(b->doc, obj, &n);

	for (gint k = 0; k < n; k++) {
		gint v = mem[k].value_tok;
		gint64 i64 = 0;

		for (guint f = 0; f < G_N_ELEMENTS(meta_strings); f++) {
			if (msd_model_key_folds_to(mem[k].key, mem[k].key_len,
			                           meta_strings[f].name))
				decode_string(b, meta_strings[f].field, v);
		}
		if (msd_model_key_folds_to(mem[k].key, mem[k].key_len, "generation")) {
			if (decode_int64(b, v, &i64))
				b->m->generation = i64;
		} else if (msd_model_key_folds_to(mem[k].key, mem[k].key_len,
		                                  "deletionGracePeriodSeconds")) {
			/* a pointer: Go allocates it for any non-null value, even one that then
			 * fails to decode (and stays 0) */
			if (b->doc->tokens[v].type != MSD_JSON_NULL) {
				b->m->has_grace_period = TRUE;
				b->m->grace_period = decode_int64(b, v, &i64) ? i64 : 0;
			}
		}
	}
	msd_json_members_free(mem, n);
}

/* spec or status into a {id, attribute} struct: the leak of a string `id` (any case) from the
 * object into the wire's spec.id is upstream behaviour, kept for byte compatibility. */
static void
decode_attribute_struct(Builder *b, gint v, MsdField id_field, MsdField attr_field)
{
	gint n = 0;
	MsdJsonMember *mem;

	if (b->doc->tokens[v].type != MSD_JSON_OBJECT)
		return;
	mem = msd_json_tokens_sorted_members(b->doc, v, &n);
	for (gint k = 0; k < n; k++) {
		if (msd_model_key_folds_to(mem[k].key, mem[k].key_len, "id"))
			decode_string(b, id_field, mem[k].value_tok);
		else if (msd_model_key_folds_to(mem[k].key, mem[k].key_len, "attribute"))
			decode_string(b, attr_field, mem[k].value_tok);
	}
	msd_json_members_free(mem, n);
}

static const struct {
	const gchar *name;
	MsdField field;
} top_strings[] = {
        {"id", MSD_F_ID},
        {"apiVersion", MSD_F_API_VERSION},
        {"kind", MSD_F_KIND},
        {"model", MSD_F_MODEL},
        {"immutable", MSD_F_IMMUTABLE},
        {"data", MSD_F_DATA},
        {"binaryData", MSD_F_BINARY_DATA},
        {"stringData", MSD_F_STRING_DATA},
        {"type", MSD_F_TYPE},
};

static void
decode_top(Builder *b)
{
	gint n = 0;
	MsdJsonMember *mem = msd_json_tokens_sorted_members(b->doc, 0, &n);

	for (gint k = 0; k < n; k++) {
		const gchar *key = mem[k].key;
		gsize len = mem[k].key_len;
		gint v = mem[k].value_tok;
		gboolean is_null = b->doc->tokens[v].type == MSD_JSON_NULL;

		for (guint f = 0; f < G_N_ELEMENTS(top_strings); f++) {
			if (msd_model_key_folds_to(key, len, top_strings[f].name))
				decode_string(b, top_strings[f].field, v);
		}
		if (msd_model_key_folds_to(key, len, "metadata")) {
			if (b->doc->tokens[v].type == MSD_JSON_OBJECT)
				decode_metadata(b, v);
		} else if (msd_model_key_folds_to(key, len, "spec")) {
			/* null leaves the pointer unset: no spec on the wire (upstream then
			 * crashes on the raw step; we treat it as absent, a deliberate fix) */
			if (!is_null) {
				b->m->has_spec = TRUE;
				decode_attribute_struct(b, v, MSD_F_SPEC_ID, MSD_F_SPEC_ATTRIBUTE);
			}
		} else if (msd_model_key_folds_to(key, len, "status")) {
			if (!is_null) {
				b->m->has_status = TRUE;
				decode_attribute_struct(b, v, MSD_F_STATUS_ID,
				                        MSD_F_STATUS_ATTRIBUTE);
			}
		}
	}
	msd_json_members_free(mem, n);
}

static void
collect_key_values(Builder *b, gint obj, GArray *into, gboolean labels)
{
	gint n = 0;
	MsdJsonMember *mem;

	/* upstream iterates with ObjectEach: anything but an object gives no entries */
	if (obj < 0 || b->doc->tokens[obj].type != MSD_JSON_OBJECT)
		return;
	mem = msd_json_tokens_sorted_members(b->doc, obj, &n);
	for (gint k = 0; k < n; k++) {
		MsdKeyValue kv;

		span_begin(b, &kv.key);
		g_string_append_len(b->arena, mem[k].key, (gssize)mem[k].key_len);
		span_end(b, &kv.key);
		span_begin(b, &kv.value);
		msd_json_write_raw(b->arena, b->doc, mem[k].value_tok);
		span_end(b, &kv.value);
		g_array_append_val(into, kv);

		/* Deliberate fix: upstream builds the UUID from the 36 raw bytes and always gets
		 * the zero UUID; we parse the text, and invalid text gives null. */
		if (labels && mem[k].key_len == strlen(PATTERN_LABEL) &&
		    memcmp(mem[k].key, PATTERN_LABEL, mem[k].key_len) == 0) {
			gchar uuid[37];

			b->m->has_pattern_resource = msd_model_parse_uuid(
			        b->arena->str + kv.value.off, kv.value.len, uuid);
			if (b->m->has_pattern_resource)
				set_literal(b, MSD_F_PATTERN_RESOURCE, uuid, 36);
		}
	}
	msd_json_members_free(mem, n);
}

static void
raw_steps(Builder *b, gboolean redact)
{
	const MsdJsonTokens *doc = b->doc;
	gint meta = msd_json_tokens_member(doc, 0, "metadata");
	static const struct {
		const gchar *name;
		MsdField field;
		gboolean secret;
	} top_raw[] = {
	        {"immutable", MSD_F_IMMUTABLE, FALSE},
	        {"data", MSD_F_DATA, TRUE},
	        {"binaryData", MSD_F_BINARY_DATA, TRUE},
	        {"stringData", MSD_F_STRING_DATA, TRUE},
	        {"type", MSD_F_TYPE, FALSE},
	};
	gint v;

	if (meta >= 0 && doc->tokens[meta].type == MSD_JSON_OBJECT) {
		collect_key_values(b, msd_json_tokens_member(doc, meta, "labels"), b->labels, TRUE);
		collect_key_values(b, msd_json_tokens_member(doc, meta, "annotations"),
		                   b->annotations, FALSE);
		v = msd_json_tokens_member(doc, meta, "finalizers");
		if (v >= 0)
			set_raw(b, MSD_F_FINALIZERS, v);
		/* managedFields is dropped on purpose, as upstream does */
		v = msd_json_tokens_member(doc, meta, "ownerReferences");
		if (v >= 0)
			set_raw(b, MSD_F_OWNER_REFERENCES, v);
	}
	v = msd_json_tokens_member(doc, 0, "spec");
	if (v >= 0 && doc->tokens[v].type != MSD_JSON_NULL)
		set_raw(b, MSD_F_SPEC_ATTRIBUTE, v);
	v = msd_json_tokens_member(doc, 0, "status");
	if (v >= 0 && doc->tokens[v].type != MSD_JSON_NULL)
		set_raw(b, MSD_F_STATUS_ATTRIBUTE, v);
	for (guint f = 0; f < G_N_ELEMENTS(top_raw); f++) {
		MsdSpan *s = &b->m->f[top_raw[f].field];

		v = msd_json_tokens_member(doc, 0, top_raw[f].name);
		if (v < 0)
			continue;
		if (redact && top_raw[f].secret) {
			span_begin(b, s);
			if (!msd_secret_redact_write(b->arena, doc, v))
				msd_json_write_raw(b->arena, doc, v);
			span_end(b, s);
		} else {
			set_raw(b, top_raw[f].field, v);
		}
	}
}

/* One tokenization buffer per thread, reused: conversion runs for every event. */
static void
scratch_free(gpointer p)
{
	msd_json_tokens_clear(p);
	g_free(p);
}

static GPrivate scratch_doc = G_PRIVATE_INIT(scratch_free);

static MsdJsonTokens *
get_scratch_doc(void)
{
	MsdJsonTokens *doc = g_private_get(&scratch_doc);

	if (doc == NULL) {
		doc = g_new0(MsdJsonTokens, 1);
		g_private_set(&scratch_doc, doc);
	}
	return doc;
}

gboolean
msd_model_convert(MsdModel *m,
                  const gchar *json,
                  gsize length,
                  MeshSyncEventType event_type,
                  const gchar *cluster_id,
                  MsdServiceEndpoint **endpoint,
                  GError **error)
{
	MsdJsonTokens *doc = get_scratch_doc();
	Builder b;
	gboolean redact;

	if (endpoint != NULL)
		*endpoint = NULL;
	if (!msd_json_tokens_parse(doc, json, length, error))
		return FALSE;
	if (doc->tokens[0].type != MSD_JSON_OBJECT) {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		                    "Kubernetes object is not a JSON object");
		return FALSE;
	}

	memset(m, 0, sizeof(*m));
	b.m = m;
	b.doc = doc;
	b.arena = g_string_sized_new(length + 64);
	/* offset 0 is an empty string: every unset span points at it */
	g_string_append_c(b.arena, '\0');
	b.labels = g_array_new(FALSE, FALSE, sizeof(MsdKeyValue));
	b.annotations = g_array_new(FALSE, FALSE, sizeof(MsdKeyValue));

	decode_top(&b);
	redact = strcmp(b.arena->str + m->f[MSD_F_KIND].off, "Secret") == 0 &&
	         msd_secret_redact_enabled();
	raw_steps(&b, redact);
	set_literal(&b, MSD_F_CLUSTER_ID, cluster_id != NULL ? cluster_id : "", -1);

	if (endpoint != NULL && event_type != MESHSYNC_EVENT_TYPE_DELETED &&
	    strcmp(b.arena->str + m->f[MSD_F_KIND].off, "Service") == 0)
		*endpoint = msd_service_endpoint_new_from_doc(doc, 0);

	m->n_labels = b.labels->len;
	m->n_annotations = b.annotations->len;
	if (m->n_labels + m->n_annotations > 0) {
		m->kv = g_new(MsdKeyValue, m->n_labels + m->n_annotations);
		memcpy(m->kv, b.labels->data, sizeof(MsdKeyValue) * m->n_labels);
		memcpy(m->kv + m->n_labels, b.annotations->data,
		       sizeof(MsdKeyValue) * m->n_annotations);
	}
	g_array_unref(b.labels);
	g_array_unref(b.annotations);
	m->arena_len = b.arena->len;
	/* give back GString's power-of-two slack: the model lives as long as the store entry */
	m->arena = g_realloc(g_string_free(b.arena, FALSE), m->arena_len);
	return TRUE;
}

static void
write_key(GString *out, const gchar *key)
{
	g_string_append_c(out, '"');
	g_string_append(out, key);
	g_string_append_len(out, "\":", 2);
}

static void
write_field(GString *out, const MsdModel *m, const gchar *key, MsdField f, gboolean omitempty)
{
	if (omitempty && m->f[f].len == 0)
		return;
	write_key(out, key);
	msd_json_append_string(out, msd_model_get(m, f), m->f[f].len);
	g_string_append_c(out, ',');
}

static void
write_key_values(GString *out,
                 const MsdModel *m,
                 const gchar *key,
                 const MsdKeyValue *kv,
                 guint n,
                 const gchar *kind)
{
	if (n == 0)
		return;
	write_key(out, key);
	g_string_append_c(out, '[');
	for (guint i = 0; i < n; i++) {
		if (i > 0)
			g_string_append_c(out, ',');
		g_string_append_printf(out, "{\"id\":\"\",\"unique_id\":\"\",\"kind\":\"%s\"",
		                       kind);
		if (kv[i].key.len > 0) {
			g_string_append(out, ",\"key\":");
			msd_json_append_string(out, msd_model_str(m, kv[i].key), kv[i].key.len);
		}
		if (kv[i].value.len > 0) {
			g_string_append(out, ",\"value\":");
			msd_json_append_string(out, msd_model_str(m, kv[i].value), kv[i].value.len);
		}
		g_string_append_c(out, '}');
	}
	g_string_append_len(out, "],", 2);
}

static void
write_attribute_struct(
        GString *out, const MsdModel *m, const gchar *key, MsdField id, MsdField attr)
{
	write_key(out, key);
	g_string_append(out, "{\"id\":");
	msd_json_append_string(out, msd_model_get(m, id), m->f[id].len);
	if (m->f[attr].len > 0) {
		g_string_append(out, ",\"attribute\":");
		msd_json_append_string(out, msd_model_get(m, attr), m->f[attr].len);
	}
	g_string_append_len(out, "},", 2);
}

void
msd_model_write_wire(const MsdModel *m, const gchar *component_metadata, GString *out)
{
	g_string_append_c(out, '{');
	write_field(out, m, "id", MSD_F_ID, FALSE);
	write_field(out, m, "apiVersion", MSD_F_API_VERSION, FALSE);
	write_field(out, m, "kind", MSD_F_KIND, FALSE);
	write_field(out, m, "model", MSD_F_MODEL, FALSE);

	write_key(out, "metadata");
	g_string_append_c(out, '{');
	write_field(out, m, "id", MSD_F_META_ID, FALSE);
	write_field(out, m, "name", MSD_F_NAME, TRUE);
	write_field(out, m, "generateName", MSD_F_GENERATE_NAME, TRUE);
	write_field(out, m, "namespace", MSD_F_NAMESPACE, TRUE);
	write_field(out, m, "selfLink", MSD_F_SELF_LINK, TRUE);
	write_field(out, m, "uid", MSD_F_UID, FALSE);
	write_field(out, m, "resourceVersion", MSD_F_RESOURCE_VERSION, TRUE);
	if (m->generation != 0)
		g_string_append_printf(out, "\"generation\":%" G_GINT64_FORMAT ",", m->generation);
	write_field(out, m, "creationTimestamp", MSD_F_CREATION_TIMESTAMP, TRUE);
	write_field(out, m, "deletionTimestamp", MSD_F_DELETION_TIMESTAMP, TRUE);
	if (m->has_grace_period)
		g_string_append_printf(out, "\"deletionGracePeriodSeconds\":%" G_GINT64_FORMAT ",",
		                       m->grace_period);
	write_key_values(out, m, "labels", m->kv, m->n_labels, "label");
	write_key_values(out, m, "annotations", m->kv + m->n_labels, m->n_annotations,
	                 "annotation");
	write_field(out, m, "ownerReferences", MSD_F_OWNER_REFERENCES, TRUE);
	write_field(out, m, "finalizers", MSD_F_FINALIZERS, TRUE);
	write_field(out, m, "clusterName", MSD_F_CLUSTER_NAME, TRUE);
	write_key(out, "cluster_id");
	msd_json_append_string(out, msd_model_get(m, MSD_F_META_CLUSTER_ID),
	                       m->f[MSD_F_META_CLUSTER_ID].len);
	g_string_append_len(out, "},", 2);

	if (m->has_spec)
		write_attribute_struct(out, m, "spec", MSD_F_SPEC_ID, MSD_F_SPEC_ATTRIBUTE);
	if (m->has_status)
		write_attribute_struct(out, m, "status", MSD_F_STATUS_ID, MSD_F_STATUS_ATTRIBUTE);
	write_field(out, m, "cluster_id", MSD_F_CLUSTER_ID, FALSE);
	write_key(out, "pattern_resource");
	if (m->has_pattern_resource)
		msd_json_append_string(out, msd_model_get(m, MSD_F_PATTERN_RESOURCE), -1);
	else
		g_string_append_len(out, "null", 4);
	g_string_append_c(out, ',');
	write_key(out, "component_metadata");
	g_string_append(out, component_metadata != NULL ? component_metadata : "null");
	g_string_append_c(out, ',');
	write_field(out, m, "immutable", MSD_F_IMMUTABLE, TRUE);
	write_field(out, m, "data", MSD_F_DATA, TRUE);
	write_field(out, m, "binaryData", MSD_F_BINARY_DATA, TRUE);
	write_field(out, m, "stringData", MSD_F_STRING_DATA, TRUE);
	write_field(out, m, "type", MSD_F_TYPE, TRUE);
	/* every field above ends with a comma: turn the last one into the closing brace */
	out->str[out->len - 1] = '}';
}
