/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncEngine"

#include "config.h"

#include <string.h>

#include "engine/msd-infra-detector.h"
#include "util/msd-json-tokens.h"

/* Every indicator of the registry has one bit: an object's match is one word. */
#define MSD_INFRA_MAX_INDICATORS 64

typedef struct {
	guint signature;
	gboolean is_crd;
	const gchar *text; /* CRD name, or the label as written in the registry */
	gchar *key;        /* (owned): labels only */
	gchar *value;      /* (owned) (nullable): labels only; NULL matches any value */
	guint count;       /* objects matching it now */
} MsdInfraIndicator;

struct _MsdInfraDetector {
	GObject parent_instance;

	const MsdInfraSignature *signatures;
	guint n_signatures;
	gboolean *enabled;  /* (owned): per signature */
	gboolean *detected; /* (owned): per signature */
	MsdInfraIndicator indicators[MSD_INFRA_MAX_INDICATORS];
	guint n_indicators;
	GHashTable *matches; /* (owned): uid → guint64 bits, for objects matching something */
	gboolean crds_watched;
	gboolean workloads_watched;
	gboolean evaluating;
};

G_DEFINE_FINAL_TYPE(MsdInfraDetector, msd_infra_detector, G_TYPE_OBJECT)

enum {
	SIGNAL_CHANGED,
	N_SIGNALS,
};

static guint signals[N_SIGNALS];

static void
msd_infra_detector_finalize(GObject *object)
{
	MsdInfraDetector *self = MSD_INFRA_DETECTOR(object);

	for (guint i = 0; i < self->n_indicators; i++) {
		g_free(self->indicators[i].key);
		g_free(self->indicators[i].value);
	}
	g_free(self->enabled);
	g_free(self->detected);
	g_hash_table_unref(self->matches);
	G_OBJECT_CLASS(msd_infra_detector_parent_class)->finalize(object);
}

static void
msd_infra_detector_class_init(MsdInfraDetectorClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = msd_infra_detector_finalize;
	/* (signature: const MsdInfraSignature *, detected: gboolean) */
	signals[SIGNAL_CHANGED] =
	        g_signal_new("changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
	                     NULL, G_TYPE_NONE, 2, G_TYPE_POINTER, G_TYPE_BOOLEAN);
}

static void
msd_infra_detector_init(MsdInfraDetector *self)
{
	self->matches = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	self->crds_watched = TRUE;
	self->workloads_watched = TRUE;
}

static void
msd_infra_detector_add_indicator(MsdInfraDetector *self,
                                 guint signature,
                                 gboolean is_crd,
                                 const gchar *text)
{
	MsdInfraIndicator *indicator;
	const gchar *eq;

	g_return_if_fail(self->n_indicators < MSD_INFRA_MAX_INDICATORS);
	indicator = &self->indicators[self->n_indicators++];
	indicator->signature = signature;
	indicator->is_crd = is_crd;
	indicator->text = text;
	if (is_crd)
		return;
	eq = strchr(text, '=');
	indicator->key = eq != NULL ? g_strndup(text, (gsize)(eq - text)) : g_strdup(text);
	indicator->value = eq != NULL ? g_strdup(eq + 1) : NULL;
}

static gboolean
msd_infra_detector_listed(const gchar *const *names, const gchar *name)
{
	return names != NULL && g_strv_contains(names, name);
}

static void
msd_infra_detector_warn_unknown(const gchar *const *names, const gchar *list)
{
	for (guint i = 0; names != NULL && names[i] != NULL; i++) {
		if (msd_infra_signature_lookup(names[i]) == NULL)
			g_message("%s names %s, which is no known infrastructure: ignored", list,
			          names[i]);
	}
}

static void msd_infra_detector_update(MsdInfraDetector *self);

static void
msd_infra_detector_apply_policy(MsdInfraDetector *self,
                                const gchar *const *enabled,
                                const gchar *const *disabled)
{
	msd_infra_detector_warn_unknown(enabled, "EnabledInfra");
	msd_infra_detector_warn_unknown(disabled, "DisabledInfra");
	for (guint i = 0; i < self->n_signatures; i++) {
		const gchar *name = self->signatures[i].name;

		/* an empty EnabledInfra is fd1's default too: everything */
		self->enabled[i] = (enabled == NULL || enabled[0] == NULL ||
		                    msd_infra_detector_listed(enabled, name)) &&
		                   !msd_infra_detector_listed(disabled, name);
	}
}

MsdInfraDetector *
msd_infra_detector_new(const gchar *const *enabled, const gchar *const *disabled)
{
	MsdInfraDetector *self = g_object_new(MSD_TYPE_INFRA_DETECTOR, NULL);

	self->signatures = msd_infra_signature_get_all(&self->n_signatures);
	self->enabled = g_new0(gboolean, self->n_signatures);
	self->detected = g_new0(gboolean, self->n_signatures);
	msd_infra_detector_apply_policy(self, enabled, disabled);
	for (guint i = 0; i < self->n_signatures; i++) {
		const MsdInfraSignature *signature = &self->signatures[i];

		for (guint j = 0; signature->indicator_crds[j] != NULL; j++)
			msd_infra_detector_add_indicator(self, i, TRUE,
			                                 signature->indicator_crds[j]);
		for (guint j = 0; signature->indicator_labels[j] != NULL; j++)
			msd_infra_detector_add_indicator(self, i, FALSE,
			                                 signature->indicator_labels[j]);
	}
	return self;
}

/* A live watch list changed EnabledInfra or DisabledInfra: the decisions are taken again on
 * the counts kept so far, and only the infrastructures whose decision flips are signalled. */
void
msd_infra_detector_set_policy(MsdInfraDetector *self,
                              const gchar *const *enabled,
                              const gchar *const *disabled)
{
	g_return_if_fail(MSD_IS_INFRA_DETECTOR(self));
	msd_infra_detector_apply_policy(self, enabled, disabled);
	msd_infra_detector_update(self);
}

void
msd_infra_detector_set_sources(MsdInfraDetector *self, gboolean crds, gboolean workloads)
{
	g_return_if_fail(MSD_IS_INFRA_DETECTOR(self));
	self->crds_watched = crds;
	self->workloads_watched = workloads;
}

static gint
msd_infra_detector_find(MsdInfraDetector *self, const gchar *name)
{
	for (guint i = 0; i < self->n_signatures; i++) {
		if (g_strcmp0(self->signatures[i].name, name) == 0)
			return (gint)i;
	}
	return -1;
}

static gboolean
msd_infra_detector_decide(MsdInfraDetector *self, guint signature)
{
	gboolean crd = FALSE;
	gboolean label = FALSE;

	if (!self->enabled[signature] || (!self->crds_watched && !self->workloads_watched))
		return FALSE;
	for (guint i = 0; i < self->n_indicators; i++) {
		const MsdInfraIndicator *indicator = &self->indicators[i];

		if (indicator->signature != signature || indicator->count == 0)
			continue;
		if (indicator->is_crd)
			crd = TRUE;
		else
			label = TRUE;
	}
	/* fd1: a CRD of the signature is enough (CRDs left by an uninstall still hold custom
	 * resources worth watching); the labels decide only where the CRDs cannot be read, since
	 * without CRDs there is no tier-3 type to watch */
	return crd || (!self->crds_watched && label);
}

static void
msd_infra_detector_update(MsdInfraDetector *self)
{
	g_autoptr(MsdInfraDetector) keep G_GNUC_UNUSED = NULL;

	if (!self->evaluating)
		return;
	/* a handler may drop the last other reference */
	keep = g_object_ref(self);
	for (guint i = 0; i < self->n_signatures; i++) {
		gboolean now = msd_infra_detector_decide(self, i);

		if (now == self->detected[i])
			continue;
		self->detected[i] = now;
		g_signal_emit(self, signals[SIGNAL_CHANGED], 0, &self->signatures[i], now);
	}
}

static gboolean
msd_infra_detector_is_workload(const gchar *kind)
{
	return g_strcmp0(kind, "Deployment") == 0 || g_strcmp0(kind, "Pod") == 0 ||
	       g_strcmp0(kind, "StatefulSet") == 0 || g_strcmp0(kind, "DaemonSet") == 0;
}

static gboolean
msd_infra_detector_has_label(const gchar *const *labels, const MsdInfraIndicator *indicator)
{
	gsize key_length = strlen(indicator->key);

	for (guint i = 0; labels != NULL && labels[i] != NULL; i++) {
		const gchar *label = labels[i];

		if (strncmp(label, indicator->key, key_length) != 0 || label[key_length] != '=')
			continue;
		if (indicator->value == NULL ||
		    strcmp(label + key_length + 1, indicator->value) == 0)
			return TRUE;
	}
	return FALSE;
}

static void
msd_infra_detector_set_bits(MsdInfraDetector *self, const gchar *uid, guint64 bits)
{
	guint64 *stored = g_hash_table_lookup(self->matches, uid);
	guint64 before = stored != NULL ? *stored : 0;

	if (before == bits)
		return;
	for (guint i = 0; i < self->n_indicators; i++) {
		guint64 bit = G_GUINT64_CONSTANT(1) << i;

		if ((before & bit) && !(bits & bit))
			self->indicators[i].count--;
		else if (!(before & bit) && (bits & bit))
			self->indicators[i].count++;
	}
	if (bits == 0)
		g_hash_table_remove(self->matches, uid);
	else if (stored != NULL)
		*stored = bits;
	else
		g_hash_table_insert(self->matches, g_strdup(uid), g_memdup2(&bits, sizeof bits));
	msd_infra_detector_update(self);
}

void
msd_infra_detector_observe(MsdInfraDetector *self,
                           const gchar *uid,
                           const gchar *kind,
                           const gchar *name,
                           const gchar *const *labels)
{
	gboolean crd;
	gboolean workload;
	guint64 bits = 0;

	g_return_if_fail(MSD_IS_INFRA_DETECTOR(self));
	g_return_if_fail(uid != NULL);

	crd = g_strcmp0(kind, "CustomResourceDefinition") == 0;
	workload = msd_infra_detector_is_workload(kind);
	for (guint i = 0; i < self->n_indicators; i++) {
		const MsdInfraIndicator *indicator = &self->indicators[i];
		gboolean match;

		if (indicator->is_crd)
			match = crd && g_strcmp0(name, indicator->text) == 0;
		else
			match = workload && msd_infra_detector_has_label(labels, indicator);
		if (match)
			bits |= G_GUINT64_CONSTANT(1) << i;
	}
	msd_infra_detector_set_bits(self, uid, bits);
}

void
msd_infra_detector_forget(MsdInfraDetector *self, const gchar *uid)
{
	g_return_if_fail(MSD_IS_INFRA_DETECTOR(self));
	msd_infra_detector_set_bits(self, uid, 0);
}

/* The indicators the object at token @index matches, read from its tokens in place: this runs
 * for every Pod event of the run, so nothing is copied. */
static guint64
msd_infra_detector_bits_of(MsdInfraDetector *self,
                           const gchar *kind,
                           const gchar *name,
                           const MsdJsonTokens *doc,
                           gint index)
{
	gboolean crd = g_strcmp0(kind, "CustomResourceDefinition") == 0;
	gint labels = crd ? -1 : msd_json_tokens_path(doc, index, "metadata", "labels", NULL);
	guint64 bits = 0;

	for (guint i = 0; i < self->n_indicators; i++) {
		const MsdInfraIndicator *indicator = &self->indicators[i];
		gboolean match;

		if (indicator->is_crd) {
			match = crd && g_strcmp0(name, indicator->text) == 0;
		} else {
			gint value = msd_json_tokens_member(doc, labels, indicator->key);

			match = value >= 0 &&
			        (indicator->value == NULL ||
			         msd_json_tokens_string_equals(doc, value, indicator->value));
		}
		if (match)
			bits |= G_GUINT64_CONSTANT(1) << i;
	}
	return bits;
}

void
msd_infra_detector_handle_event(MsdInfraDetector *self, const MsdInformerEvent *event)
{
	g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;
	g_autoptr(GBytes) object = NULL;
	/* a shallow type's metadata-only object has the labels too: no stored copy to unpack */
	const MsdJsonTokens *doc = event->read;
	gint index = event->index;

	g_return_if_fail(MSD_IS_INFRA_DETECTOR(self));

	if (event->type == MESHSYNC_EVENT_TYPE_DELETED) {
		msd_infra_detector_forget(self, event->entry->uid);
		return;
	}
	if (g_strcmp0(event->kind, "CustomResourceDefinition") == 0) {
		/* the name is all a CRD gives: nothing to read */
		msd_infra_detector_observe(self, event->entry->uid, event->kind, event->entry->name,
		                           NULL);
		return;
	}
	if (!msd_infra_detector_is_workload(event->kind))
		return;
	if (doc == NULL) {
		gsize length = 0;
		const gchar *data;

		object = msd_store_entry_dup_object(event->entry);
		data = g_bytes_get_data(object, &length);
		if (!msd_json_tokens_parse(&tokens, data, length, NULL))
			return;
		doc = &tokens;
		index = 0;
	}
	msd_infra_detector_set_bits(
	        self, event->entry->uid,
	        msd_infra_detector_bits_of(self, event->kind, event->entry->name, doc, index));
}

void
msd_infra_detector_forget_crds(MsdInfraDetector *self)
{
	GHashTableIter iter;
	gpointer bits;
	guint64 crd_bits = 0;

	g_return_if_fail(MSD_IS_INFRA_DETECTOR(self));

	for (guint i = 0; i < self->n_indicators; i++) {
		if (self->indicators[i].is_crd) {
			crd_bits |= G_GUINT64_CONSTANT(1) << i;
			self->indicators[i].count = 0;
		}
	}
	g_hash_table_iter_init(&iter, self->matches);
	while (g_hash_table_iter_next(&iter, NULL, &bits)) {
		*(guint64 *)bits &= ~crd_bits;
		if (*(guint64 *)bits == 0)
			g_hash_table_iter_remove(&iter);
	}
	msd_infra_detector_update(self);
}

void
msd_infra_detector_suspend(MsdInfraDetector *self)
{
	g_return_if_fail(MSD_IS_INFRA_DETECTOR(self));
	self->evaluating = FALSE;
}

void
msd_infra_detector_evaluate(MsdInfraDetector *self)
{
	g_return_if_fail(MSD_IS_INFRA_DETECTOR(self));
	self->evaluating = TRUE;
	msd_infra_detector_update(self);
}

gboolean
msd_infra_detector_is_enabled(MsdInfraDetector *self, const gchar *name)
{
	gint i;

	g_return_val_if_fail(MSD_IS_INFRA_DETECTOR(self), FALSE);
	i = msd_infra_detector_find(self, name);
	return i >= 0 && self->enabled[i];
}

gboolean
msd_infra_detector_is_detected(MsdInfraDetector *self, const gchar *name)
{
	gint i;

	g_return_val_if_fail(MSD_IS_INFRA_DETECTOR(self), FALSE);
	i = msd_infra_detector_find(self, name);
	return i >= 0 && self->detected[i];
}

void
msd_infra_detector_dup_evidence(
        MsdInfraDetector *self, const gchar *name, GStrv *crds, GStrv *labels, guint *n_workloads)
{
	g_autoptr(GStrvBuilder) crd_list = g_strv_builder_new();
	g_autoptr(GStrvBuilder) label_list = g_strv_builder_new();
	guint64 label_bits = 0;
	GHashTableIter iter;
	gpointer bits;
	gint signature;

	g_return_if_fail(MSD_IS_INFRA_DETECTOR(self));
	signature = msd_infra_detector_find(self, name);
	*n_workloads = 0;
	for (guint i = 0; signature >= 0 && i < self->n_indicators; i++) {
		const MsdInfraIndicator *indicator = &self->indicators[i];

		if (indicator->signature != (guint)signature)
			continue;
		if (!indicator->is_crd)
			label_bits |= G_GUINT64_CONSTANT(1) << i;
		if (indicator->count > 0)
			g_strv_builder_add(indicator->is_crd ? crd_list : label_list,
			                   indicator->text);
	}
	/* objects, not label matches: only matching objects are remembered, so this is short */
	g_hash_table_iter_init(&iter, self->matches);
	while (g_hash_table_iter_next(&iter, NULL, &bits)) {
		if ((*(guint64 *)bits & label_bits) != 0)
			(*n_workloads)++;
	}
	*crds = g_strv_builder_end(crd_list);
	*labels = g_strv_builder_end(label_list);
}

gchar *
msd_infra_detector_describe_evidence(MsdInfraDetector *self, const gchar *name)
{
	g_auto(GStrv) crds = NULL;
	g_auto(GStrv) labels = NULL;
	g_autofree gchar *crd_text = NULL;
	g_autofree gchar *label_text = NULL;
	guint n_crds;
	guint n_workloads = 0;

	g_return_val_if_fail(MSD_IS_INFRA_DETECTOR(self), NULL);
	msd_infra_detector_dup_evidence(self, name, &crds, &labels, &n_workloads);
	n_crds = g_strv_length(crds);
	crd_text = g_strjoinv(", ", crds);
	label_text = g_strjoinv(", ", labels);
	return g_strdup_printf("%u CRDs%s%s%s, %u labelled workloads%s%s%s", n_crds,
	                       n_crds > 0 ? " (" : "", crd_text, n_crds > 0 ? ")" : "", n_workloads,
	                       n_workloads > 0 ? " (" : "", label_text, n_workloads > 0 ? ")" : "");
}
