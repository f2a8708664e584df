/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncModel"

#include "config.h"

#include <string.h>

#include "model/msd-json-writer.h"
#include "model/msd-model.h"

/* The wire form of a model (contract 1.1): a fixed struct, written field by field. */

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

gsize
msd_model_wire_size_hint(const MsdModel *m)
{
	/* the arena holds every text once; escaping the JSON-holding fields adds about a
	 * backslash per quote, and the fixed keys and label objects the rest */
	return m->arena_len + m->arena_len / 4 + 512 + (m->n_labels + m->n_annotations) * 64;
}
