/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncModel"

#include "config.h"

#include <string.h>

#include "model/msd-json-writer.h"
#include "model/msd-model.h"

/*
 * The wire form of a model (contract 1.1): a fixed struct, written field by field. The keys
 * are literals (their lengths known at compile time); the JSON-holding fields are kept in
 * their wire form (msd_model_field_is_wire()) and copied, the others escaped here.
 */

#include "util/msd-json-string.h"

#define APPEND_LITERAL(out, text) msd_json_string_append_raw((out), text, sizeof(text) - 1)

/* "key": with the comma that ends the field before it, if any */
#define WRITE_KEY(out, key) APPEND_LITERAL(out, "\"" key "\":")

static inline void
write_value(GString *out, const MsdModel *m, MsdField f)
{
	const gchar *text = msd_model_get(m, f);

	g_string_append_c(out, '"');
	if (msd_model_field_is_wire(f))
		msd_json_string_append_raw(out, text, m->f[f].len);
	else
		msd_json_string_append_escaped(out, text, m->f[f].len, MSD_JSON_STRING_GO);
	APPEND_LITERAL(out, "\",");
}

#define WRITE_FIELD(out, m, key, field)           \
	G_STMT_START                              \
	{                                         \
		WRITE_KEY(out, key);              \
		write_value((out), (m), (field)); \
	}                                         \
	G_STMT_END

#define WRITE_FIELD_OMITEMPTY(out, m, key, field)        \
	G_STMT_START                                     \
	{                                                \
		if ((m)->f[field].len > 0)               \
			WRITE_FIELD(out, m, key, field); \
	}                                                \
	G_STMT_END

static void
write_int64(GString *out, gint64 v)
{
	gchar text[24];
	gint len = g_snprintf(text, sizeof(text), "%" G_GINT64_FORMAT ",", v);

	msd_json_string_append_raw(out, text, (gsize)len);
}

static void
write_key_values(
        GString *out, const MsdModel *m, const MsdKeyValue *kv, guint n, gboolean annotations)
{
	g_string_append_c(out, '[');
	for (guint i = 0; i < n; i++) {
		if (i > 0)
			g_string_append_c(out, ',');
		if (annotations)
			APPEND_LITERAL(out,
			               "{\"id\":\"\",\"unique_id\":\"\",\"kind\":\"annotation\"");
		else
			APPEND_LITERAL(out, "{\"id\":\"\",\"unique_id\":\"\",\"kind\":\"label\"");
		if (kv[i].key.len > 0) {
			APPEND_LITERAL(out, ",\"key\":\"");
			msd_json_string_append_escaped(out, msd_model_str(m, kv[i].key),
			                               kv[i].key.len, MSD_JSON_STRING_GO);
			g_string_append_c(out, '"');
		}
		if (kv[i].value.len > 0) {
			APPEND_LITERAL(out, ",\"value\":\"");
			/* annotation values are kept in their wire form, label values not */
			if (annotations)
				msd_json_string_append_raw(out, msd_model_str(m, kv[i].value),
				                           kv[i].value.len);
			else
				msd_json_string_append_escaped(out, msd_model_str(m, kv[i].value),
				                               kv[i].value.len, MSD_JSON_STRING_GO);
			g_string_append_c(out, '"');
		}
		g_string_append_c(out, '}');
	}
	APPEND_LITERAL(out, "],");
}

static void
write_attribute_struct(GString *out, const MsdModel *m, MsdField id, MsdField attr)
{
	APPEND_LITERAL(out, "{\"id\":\"");
	msd_json_string_append_escaped(out, msd_model_get(m, id), m->f[id].len, MSD_JSON_STRING_GO);
	g_string_append_c(out, '"');
	if (m->f[attr].len > 0) {
		APPEND_LITERAL(out, ",\"attribute\":\"");
		msd_json_string_append_raw(out, msd_model_get(m, attr), m->f[attr].len);
		g_string_append_c(out, '"');
	}
	APPEND_LITERAL(out, "},");
}

void
msd_model_write_wire(const MsdModel *m, const gchar *component_metadata, GString *out)
{
	g_string_append_c(out, '{');
	WRITE_FIELD(out, m, "id", MSD_F_ID);
	WRITE_FIELD(out, m, "apiVersion", MSD_F_API_VERSION);
	WRITE_FIELD(out, m, "kind", MSD_F_KIND);
	WRITE_FIELD(out, m, "model", MSD_F_MODEL);

	APPEND_LITERAL(out, "\"metadata\":{");
	WRITE_FIELD(out, m, "id", MSD_F_META_ID);
	WRITE_FIELD_OMITEMPTY(out, m, "name", MSD_F_NAME);
	WRITE_FIELD_OMITEMPTY(out, m, "generateName", MSD_F_GENERATE_NAME);
	WRITE_FIELD_OMITEMPTY(out, m, "namespace", MSD_F_NAMESPACE);
	WRITE_FIELD_OMITEMPTY(out, m, "selfLink", MSD_F_SELF_LINK);
	WRITE_FIELD(out, m, "uid", MSD_F_UID);
	WRITE_FIELD_OMITEMPTY(out, m, "resourceVersion", MSD_F_RESOURCE_VERSION);
	if (m->generation != 0) {
		WRITE_KEY(out, "generation");
		write_int64(out, m->generation);
	}
	WRITE_FIELD_OMITEMPTY(out, m, "creationTimestamp", MSD_F_CREATION_TIMESTAMP);
	WRITE_FIELD_OMITEMPTY(out, m, "deletionTimestamp", MSD_F_DELETION_TIMESTAMP);
	if (m->has_grace_period) {
		WRITE_KEY(out, "deletionGracePeriodSeconds");
		write_int64(out, m->grace_period);
	}
	if (m->n_labels > 0) {
		WRITE_KEY(out, "labels");
		write_key_values(out, m, m->kv, m->n_labels, FALSE);
	}
	if (m->n_annotations > 0) {
		WRITE_KEY(out, "annotations");
		write_key_values(out, m, m->kv + m->n_labels, m->n_annotations, TRUE);
	}
	WRITE_FIELD_OMITEMPTY(out, m, "ownerReferences", MSD_F_OWNER_REFERENCES);
	WRITE_FIELD_OMITEMPTY(out, m, "finalizers", MSD_F_FINALIZERS);
	WRITE_FIELD_OMITEMPTY(out, m, "clusterName", MSD_F_CLUSTER_NAME);
	WRITE_KEY(out, "cluster_id");
	g_string_append_c(out, '"');
	msd_json_string_append_escaped(out, msd_model_get(m, MSD_F_META_CLUSTER_ID),
	                               m->f[MSD_F_META_CLUSTER_ID].len, MSD_JSON_STRING_GO);
	APPEND_LITERAL(out, "\"},");

	if (m->has_spec) {
		WRITE_KEY(out, "spec");
		write_attribute_struct(out, m, MSD_F_SPEC_ID, MSD_F_SPEC_ATTRIBUTE);
	}
	if (m->has_status) {
		WRITE_KEY(out, "status");
		write_attribute_struct(out, m, MSD_F_STATUS_ID, MSD_F_STATUS_ATTRIBUTE);
	}
	WRITE_FIELD(out, m, "cluster_id", MSD_F_CLUSTER_ID);
	WRITE_KEY(out, "pattern_resource");
	if (m->has_pattern_resource) {
		g_string_append_c(out, '"');
		msd_json_string_append_raw(out, msd_model_get(m, MSD_F_PATTERN_RESOURCE),
		                           m->f[MSD_F_PATTERN_RESOURCE].len);
		APPEND_LITERAL(out, "\",");
	} else {
		APPEND_LITERAL(out, "null,");
	}
	WRITE_KEY(out, "component_metadata");
	if (component_metadata != NULL)
		msd_json_string_append_raw(out, component_metadata, strlen(component_metadata));
	else
		APPEND_LITERAL(out, "null");
	g_string_append_c(out, ',');
	WRITE_FIELD_OMITEMPTY(out, m, "immutable", MSD_F_IMMUTABLE);
	WRITE_FIELD_OMITEMPTY(out, m, "data", MSD_F_DATA);
	WRITE_FIELD_OMITEMPTY(out, m, "binaryData", MSD_F_BINARY_DATA);
	WRITE_FIELD_OMITEMPTY(out, m, "stringData", MSD_F_STRING_DATA);
	WRITE_FIELD_OMITEMPTY(out, m, "type", MSD_F_TYPE);
	/* every field above ends with a comma: turn the last one into the closing brace */
	out->str[out->len - 1] = '}';
}

gsize
msd_model_wire_size_hint(const MsdModel *m)
{
	/* the arena holds every text once, the big ones already escaped; the fixed keys and
	 * the label objects are the rest */
	return m->arena_len + 640 + (m->n_labels + m->n_annotations) * 64;
}
