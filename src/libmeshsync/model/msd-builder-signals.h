/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

#include "util/msd-json-tokens.h"

G_BEGIN_DECLS

/*
 * Builder signals (upstream's roadmap design fd3): what Meshery Server needs to tell which
 * tool built a workload without keeping cross-object state in MeshSync. Deployments, Pods and
 * CustomResourceDefinitions carry, in `component_metadata`,
 *
 *   {"builderSignals":{"crdsPresent":[...],"images":[...]}}
 *
 * images: the container images of the pod (template), init containers first, each once, in
 * the order they appear; crdsPresent: a CRD's own name. Both keys are there on those kinds
 * (possibly empty), and absent on every other kind, with one exception: a Pod or Deployment
 * whose pod spec has no containers, which is what a shallow type's object is (its spec was
 * never read, doc/tiers.md), has no `images`: unknown, not none. Keys are sorted as Go's
 * encoder sorts a map's.
 */

/* Whether @kind of @api_version carries builder signals. */
gboolean msd_builder_signals_apply(const gchar *kind, const gchar *api_version);

/* The component_metadata JSON text for the object at @index of @doc, whose kind passed
 * msd_builder_signals_apply(). */
gchar *msd_builder_signals_to_metadata(const MsdJsonTokens *doc, gint index, const gchar *kind);

G_END_DECLS
