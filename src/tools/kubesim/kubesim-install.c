/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-install.h"

#include <string.h>

#include "meshsync-error.h"

typedef struct {
	const gchar *plural;
	const gchar *kind;
	const gchar *group;
	const gchar *version;
} KubesimInstallCrd;

typedef struct {
	const gchar *name;
	const gchar *image;
	const gchar *labels; /* JSON members, without the braces */
} KubesimInstallDeployment;

typedef struct {
	const gchar *name;
	const gchar *namespace_;
	const KubesimInstallCrd *crds;
	const KubesimInstallDeployment *deployments;
} KubesimInstallation;

/* The releases are recent ones of each project; labels as their charts set them. */
static const KubesimInstallCrd istio_crds[] = {
        {"virtualservices", "VirtualService", "networking.istio.io", "v1"},
        {"destinationrules", "DestinationRule", "networking.istio.io", "v1"},
        {"gateways", "Gateway", "networking.istio.io", "v1"},
        {"peerauthentications", "PeerAuthentication", "security.istio.io", "v1"},
        {NULL},
};
static const KubesimInstallDeployment istio_deployments[] = {
        {"istiod", "docker.io/istio/pilot:1.24.2",
         "\"app\":\"istiod\",\"istio\":\"pilot\",\"istio.io/rev\":\"default\","
         "\"app.kubernetes.io/name\":\"istiod\",\"app.kubernetes.io/part-of\":\"istio\","
         "\"app.kubernetes.io/version\":\"1.24.2\""},
        {"istio-ingressgateway", "docker.io/istio/proxyv2:1.24.2",
         "\"app\":\"istio-ingressgateway\",\"istio\":\"ingressgateway\","
         "\"istio.io/rev\":\"default\""},
        {NULL},
};

static const KubesimInstallCrd linkerd_crds[] = {
        {"serviceprofiles", "ServiceProfile", "linkerd.io", "v1alpha2"},
        {"servers", "Server", "policy.linkerd.io", "v1beta3"},
        {"authorizationpolicies", "AuthorizationPolicy", "policy.linkerd.io", "v1alpha1"},
        {NULL},
};
#define KUBESIM_LINKERD_LABELS(component)                                                     \
	"\"linkerd.io/control-plane-component\":\"" component "\","                           \
	"\"linkerd.io/control-plane-ns\":\"linkerd\",\"app.kubernetes.io/name\":\"" component \
	"\",\"app.kubernetes.io/part-of\":\"Linkerd\",\"app.kubernetes.io/version\":"         \
	"\"edge-24.11.8\""
static const KubesimInstallDeployment linkerd_deployments[] = {
        {"linkerd-destination", "cr.l5d.io/linkerd/controller:edge-24.11.8",
         KUBESIM_LINKERD_LABELS("destination")},
        {"linkerd-identity", "cr.l5d.io/linkerd/controller:edge-24.11.8",
         KUBESIM_LINKERD_LABELS("identity")},
        {"linkerd-proxy-injector", "cr.l5d.io/linkerd/controller:edge-24.11.8",
         KUBESIM_LINKERD_LABELS("proxy-injector")},
        {NULL},
};

static const KubesimInstallCrd prometheus_crds[] = {
        {"prometheuses", "Prometheus", "monitoring.coreos.com", "v1"},
        {"servicemonitors", "ServiceMonitor", "monitoring.coreos.com", "v1"},
        {"podmonitors", "PodMonitor", "monitoring.coreos.com", "v1"},
        {"alertmanagers", "Alertmanager", "monitoring.coreos.com", "v1"},
        {NULL},
};
static const KubesimInstallDeployment prometheus_deployments[] = {
        {"prometheus-operator", "quay.io/prometheus-operator/prometheus-operator:v0.78.2",
         "\"app.kubernetes.io/name\":\"prometheus-operator\","
         "\"app.kubernetes.io/component\":\"controller\","
         "\"app.kubernetes.io/version\":\"0.78.2\""},
        {NULL},
};

static const KubesimInstallCrd grafana_crds[] = {
        {"grafanas", "Grafana", "grafana.integreatly.org", "v1beta1"},
        {"grafanadashboards", "GrafanaDashboard", "grafana.integreatly.org", "v1beta1"},
        {"grafanadatasources", "GrafanaDatasource", "grafana.integreatly.org", "v1beta1"},
        {NULL},
};
static const KubesimInstallDeployment grafana_deployments[] = {
        {"grafana-operator", "ghcr.io/grafana/grafana-operator:v5.15.1",
         "\"app.kubernetes.io/name\":\"grafana-operator\","
         "\"app.kubernetes.io/instance\":\"grafana-operator\","
         "\"app.kubernetes.io/version\":\"v5.15.1\""},
        {NULL},
};

static const KubesimInstallation installations[] = {
        {"istio", "istio-system", istio_crds, istio_deployments},
        {"linkerd", "linkerd", linkerd_crds, linkerd_deployments},
        {"prometheus-operator", "monitoring", prometheus_crds, prometheus_deployments},
        {"grafana-operator", "grafana", grafana_crds, grafana_deployments},
};

static const gchar *const names[] = {"istio", "linkerd", "prometheus-operator", "grafana-operator",
                                     NULL};

const gchar *const *
kubesim_install_names(void)
{
	return names;
}

static const KubesimInstallation *
kubesim_install_find(const gchar *name, GError **error)
{
	g_autofree gchar *known = NULL;

	for (guint i = 0; i < G_N_ELEMENTS(installations); i++) {
		if (g_strcmp0(installations[i].name, name) == 0)
			return &installations[i];
	}
	known = g_strjoinv(", ", (gchar **)names);
	g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
	            "no installation named %s (known: %s)", name, known);
	return NULL;
}

static gboolean
kubesim_install_write(KubesimStore *store, gchar *json, GError **error)
{
	g_autoptr(GBytes) bytes = g_bytes_new_take(json, strlen(json));
	g_autoptr(KubesimStatus) status = NULL;
	g_autoptr(KubesimObject) obj = NULL;
	KubesimResource *res = kubesim_store_resource_for(store, bytes, &status);

	if (res != NULL)
		obj = kubesim_store_upsert(store, res, bytes, &status);
	if (obj == NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA, "%s",
		            status != NULL && status->message != NULL ? status->message
		                                                      : "not written");
		return FALSE;
	}
	return TRUE;
}

static gchar *
kubesim_install_crd_json(const KubesimInstallCrd *crd)
{
	g_autofree gchar *singular = g_ascii_strdown(crd->kind, -1);

	return g_strdup_printf(
	        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
	        "\"metadata\":{\"name\":\"%s.%s\"},\"spec\":{\"group\":\"%s\",\"scope\":"
	        "\"Namespaced\",\"names\":{\"plural\":\"%s\",\"singular\":\"%s\",\"kind\":\"%s\","
	        "\"listKind\":\"%sList\"},\"versions\":[{\"name\":\"%s\",\"served\":true,"
	        "\"storage\":true,\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
	        "\"x-kubernetes-preserve-unknown-fields\":true}}}]}}",
	        crd->plural, crd->group, crd->group, crd->plural, singular, crd->kind, crd->kind,
	        crd->version);
}

static gchar *
kubesim_install_deployment_json(const KubesimInstallDeployment *d, const gchar *ns)
{
	return g_strdup_printf(
	        "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":"
	        "\"%s\",\"namespace\":\"%s\",\"labels\":{%s}},\"spec\":{\"replicas\":1,"
	        "\"selector\":{\"matchLabels\":{\"app.kubernetes.io/instance\":\"%s\"}},"
	        "\"template\":{\"metadata\":{\"labels\":{%s}},\"spec\":{\"containers\":[{"
	        "\"name\":\"%s\",\"image\":\"%s\"}]}}},\"status\":{\"replicas\":1,"
	        "\"readyReplicas\":1,\"availableReplicas\":1}}",
	        d->name, ns, d->labels, d->name, d->labels, d->name, d->image);
}

/* The Pod a ReplicaSet would make: the template's labels, a stable suffix. */
static gchar *
kubesim_install_pod_json(const KubesimInstallDeployment *d, const gchar *ns)
{
	return g_strdup_printf(
	        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s-7d4b9c6f5-"
	        "x2k8p\","
	        "\"namespace\":\"%s\",\"labels\":{%s}},\"spec\":{\"containers\":[{\"name\":"
	        "\"%s\",\"image\":\"%s\"}]},\"status\":{\"phase\":\"Running\"}}",
	        d->name, ns, d->labels, d->name, d->image);
}

gboolean
kubesim_install(KubesimStore *store, const gchar *name, guint *n_objects, GError **error)
{
	const KubesimInstallation *inst = kubesim_install_find(name, error);
	guint n = 0;

	if (inst == NULL)
		return FALSE;
	if (!kubesim_install_write(
	            store,
	            g_strdup_printf("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{"
	                            "\"name\":\"%s\"}}",
	                            inst->namespace_),
	            error))
		return FALSE;
	n++;
	/* the CRDs first, as a chart's crds/ directory: the operator needs its types */
	for (guint i = 0; inst->crds[i].plural != NULL; i++, n++) {
		if (!kubesim_install_write(store, kubesim_install_crd_json(&inst->crds[i]), error))
			return FALSE;
	}
	for (guint i = 0; inst->deployments[i].name != NULL; i++, n += 2) {
		const KubesimInstallDeployment *d = &inst->deployments[i];

		if (!kubesim_install_write(
		            store, kubesim_install_deployment_json(d, inst->namespace_), error) ||
		    !kubesim_install_write(store, kubesim_install_pod_json(d, inst->namespace_),
		                           error))
			return FALSE;
	}
	if (n_objects != NULL)
		*n_objects = n;
	return TRUE;
}

static guint
kubesim_install_delete(KubesimStore *store,
                       const gchar *api_version,
                       const gchar *kind,
                       const gchar *ns,
                       const gchar *name)
{
	KubesimResource *res = kubesim_store_lookup_kind(store, api_version, kind);
	g_autoptr(KubesimStatus) status = NULL;
	g_autoptr(KubesimObject) obj = NULL;

	if (res == NULL)
		return 0;
	obj = kubesim_store_delete(store, res, ns, name, &status);
	return obj != NULL ? 1 : 0;
}

gboolean
kubesim_uninstall(KubesimStore *store, const gchar *name, guint *n_objects, GError **error)
{
	const KubesimInstallation *inst = kubesim_install_find(name, error);
	guint n = 0;

	if (inst == NULL)
		return FALSE;
	for (guint i = 0; inst->deployments[i].name != NULL; i++) {
		const KubesimInstallDeployment *d = &inst->deployments[i];
		g_autofree gchar *pod = g_strconcat(d->name, "-7d4b9c6f5-x2k8p", NULL);

		n += kubesim_install_delete(store, "v1", "Pod", inst->namespace_, pod);
		n += kubesim_install_delete(store, "apps/v1", "Deployment", inst->namespace_,
		                            d->name);
	}
	for (guint i = 0; inst->crds[i].plural != NULL; i++) {
		g_autofree gchar *crd =
		        g_strconcat(inst->crds[i].plural, ".", inst->crds[i].group, NULL);

		n += kubesim_install_delete(store, "apiextensions.k8s.io/v1",
		                            "CustomResourceDefinition", NULL, crd);
	}
	n += kubesim_install_delete(store, "v1", "Namespace", NULL, inst->namespace_);
	if (n_objects != NULL)
		*n_objects = n;
	return TRUE;
}
