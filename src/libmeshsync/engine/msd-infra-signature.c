/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include "engine/msd-infra-signature.h"

/*
 * The seeds of fd1. Which ones are delegated follows who can do more with them: Meshery has
 * adapters that manage Linkerd and read Grafana through its own connection, so a detection
 * is enough for them; Istio's traffic objects and the Prometheus Operator's monitoring
 * objects are useful to every consumer of the stream, so they are watched here.
 *
 * The labels are those the upstream manifests and Helm charts put on the control-plane
 * Deployments and their Pods; the tier-3 versions are the first entry of each CRD's
 * spec.versions, the name the CRD follower gives the type.
 */

static const gchar *const istio_crds[] = {
        "virtualservices.networking.istio.io",
        "destinationrules.networking.istio.io",
        "gateways.networking.istio.io",
        "peerauthentications.security.istio.io",
        NULL,
};
static const gchar *const istio_labels[] = {"app=istiod", "istio=pilot", "istio=ingressgateway",
                                            NULL};
static const gchar *const istio_tier3[] = {
        "virtualservices.v1.networking.istio.io",
        "destinationrules.v1.networking.istio.io",
        "gateways.v1.networking.istio.io",
        "peerauthentications.v1.security.istio.io",
        NULL,
};

static const gchar *const linkerd_crds[] = {
        "serviceprofiles.linkerd.io",
        "servers.policy.linkerd.io",
        "authorizationpolicies.policy.linkerd.io",
        NULL,
};
static const gchar *const linkerd_labels[] = {"linkerd.io/control-plane-component", NULL};
static const gchar *const linkerd_tier3[] = {
        "serviceprofiles.v1alpha2.linkerd.io",
        "servers.v1beta3.policy.linkerd.io",
        "authorizationpolicies.v1alpha1.policy.linkerd.io",
        NULL,
};

static const gchar *const prometheus_crds[] = {
        "prometheuses.monitoring.coreos.com",
        "servicemonitors.monitoring.coreos.com",
        "podmonitors.monitoring.coreos.com",
        "alertmanagers.monitoring.coreos.com",
        NULL,
};
static const gchar *const prometheus_labels[] = {
        "app.kubernetes.io/name=prometheus-operator",
        "app=kube-prometheus-stack-operator",
        NULL,
};
static const gchar *const prometheus_tier3[] = {
        "prometheuses.v1.monitoring.coreos.com",
        "servicemonitors.v1.monitoring.coreos.com",
        "podmonitors.v1.monitoring.coreos.com",
        "alertmanagers.v1.monitoring.coreos.com",
        NULL,
};

static const gchar *const grafana_crds[] = {
        "grafanas.grafana.integreatly.org",
        "grafanadashboards.grafana.integreatly.org",
        "grafanadatasources.grafana.integreatly.org",
        NULL,
};
/* v5's chart labels by the standard key; v4's manifests by a bare `name` */
static const gchar *const grafana_labels[] = {
        "app.kubernetes.io/name=grafana-operator",
        "name=grafana-operator",
        NULL,
};
static const gchar *const grafana_tier3[] = {
        "grafanas.v1beta1.grafana.integreatly.org",
        "grafanadashboards.v1beta1.grafana.integreatly.org",
        "grafanadatasources.v1beta1.grafana.integreatly.org",
        NULL,
};

static const MsdInfraSignature registry[] = {
        {"istio", istio_crds, istio_labels, istio_tier3, FALSE},
        {"linkerd", linkerd_crds, linkerd_labels, linkerd_tier3, TRUE},
        {"prometheus-operator", prometheus_crds, prometheus_labels, prometheus_tier3, FALSE},
        {"grafana-operator", grafana_crds, grafana_labels, grafana_tier3, TRUE},
};

const MsdInfraSignature *
msd_infra_signature_get_all(guint *n_signatures)
{
	*n_signatures = G_N_ELEMENTS(registry);
	return registry;
}

const MsdInfraSignature *
msd_infra_signature_lookup(const gchar *name)
{
	for (guint i = 0; i < G_N_ELEMENTS(registry); i++) {
		if (g_strcmp0(registry[i].name, name) == 0)
			return &registry[i];
	}
	return NULL;
}
