/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * What tells that an infrastructure is installed, and what to watch once it is (fd1's
 * InfraSignature). Data only: the detector (msd-infra-detector.h) evaluates it.
 *
 * @indicator_crds: CRD names (`<plural>.<group>`, the CRD's metadata.name).
 * @indicator_labels: `key=value`, or `key` alone for any value, as the installation's
 * Deployments and Pods carry them.
 * @tier3_resource_keys: pipeline names (`<plural>.<version>.<group>`) watched while detected.
 * @delegate_to_adapter: TRUE when a Meshery adapter owns the deep discovery: detection is
 * published as `infra-detected` and nothing is watched here.
 */
typedef struct {
	const gchar *name;
	const gchar *const *indicator_crds;
	const gchar *const *indicator_labels;
	const gchar *const *tier3_resource_keys;
	gboolean delegate_to_adapter;
} MsdInfraSignature;

/* The built-in registry, in a stable order; @n_signatures receives its length. */
const MsdInfraSignature *msd_infra_signature_get_all(guint *n_signatures);
const MsdInfraSignature *msd_infra_signature_lookup(const gchar *name);

G_END_DECLS
