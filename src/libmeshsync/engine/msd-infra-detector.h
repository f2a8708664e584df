/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib-object.h>

#include "engine/msd-infra-signature.h"
#include "informer/msd-informer.h"

G_BEGIN_DECLS

/*
 * Decides which infrastructures of the registry (msd-infra-signature.h) are installed, from the
 * objects of the tier-1 stores as their informers report them. Each object's matching
 * indicators are remembered by uid and the per-indicator counts moved on every change, so an
 * event costs a look at that object only, never a pass over a store.
 *
 * An infrastructure is detected when each kind of evidence the stores can give is there: one
 * of its CRDs (when CustomResourceDefinitions are watched) and one Deployment, Pod, StatefulSet
 * or DaemonSet carrying one of its labels (when any of those is watched). Either alone is
 * partial: CRDs outlive an uninstall (Helm keeps them), and labels without the API types leave
 * nothing deeper to watch.
 *
 * Nothing is decided before msd_infra_detector_evaluate(), called once the informers have
 * synced; from then on each change that flips a decision emits "changed" at once.
 */
#define MSD_TYPE_INFRA_DETECTOR (msd_infra_detector_get_type())
G_DECLARE_FINAL_TYPE(MsdInfraDetector, msd_infra_detector, MSD, INFRA_DETECTOR, GObject)

/* @enabled: the names to consider, NULL for the whole registry (fd1's default: discovery is
 * on for every known infrastructure). @disabled: names left out, NULL for none; it wins over
 * @enabled. Unknown names are reported once and ignored. */
MsdInfraDetector *msd_infra_detector_new(const gchar *const *enabled, const gchar *const *disabled);

/* Which kinds of evidence exist at all (which tier-1 types have informers). */
void msd_infra_detector_set_policy(MsdInfraDetector *self,
                                   const gchar *const *enabled,
                                   const gchar *const *disabled);
void msd_infra_detector_set_sources(MsdInfraDetector *self, gboolean crds, gboolean workloads);

/* The object @uid of @kind exists with @name and @labels ("key=value" each, NULL for none);
 * called again for a changed object, it replaces what was known of it. */
void msd_infra_detector_observe(MsdInfraDetector *self,
                                const gchar *uid,
                                const gchar *kind,
                                const gchar *name,
                                const gchar *const *labels);
void msd_infra_detector_forget(MsdInfraDetector *self, const gchar *uid);
/* observe() or forget() for one informer event. */
void msd_infra_detector_handle_event(MsdInfraDetector *self, const MsdInformerEvent *event);

/* Forgets every CRD seen (their source is replaced; the new one tells them again). */
void msd_infra_detector_forget_crds(MsdInfraDetector *self);
/* No decision until msd_infra_detector_evaluate() again (a source being replaced). */
void msd_infra_detector_suspend(MsdInfraDetector *self);

/* Decides now, and on every later change. */
void msd_infra_detector_evaluate(MsdInfraDetector *self);

gboolean msd_infra_detector_is_enabled(MsdInfraDetector *self, const gchar *name);
gboolean msd_infra_detector_is_detected(MsdInfraDetector *self, const gchar *name);
/* "2 CRDs (a, b), 3 labelled workloads (app=istiod)": what the decision rests on (a workload
 * with two of the labels counts once). */
gchar *msd_infra_detector_describe_evidence(MsdInfraDetector *self, const gchar *name);

/* The indicator CRDs and labels found for @name (transfer full), and how many workloads carry
 * the labels. */
void msd_infra_detector_dup_evidence(
        MsdInfraDetector *self, const gchar *name, GStrv *crds, GStrv *labels, guint *n_workloads);

G_END_DECLS
