/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-resources.h"

#include <string.h>

typedef struct {
	const gchar *group;
	const gchar *version;
	const gchar *resource;
	const gchar *singular;
	const gchar *kind;
	gboolean namespaced;
	const gchar *short_names; /* comma-separated */
	const gchar *categories;
	const gchar *subresources;
} Builtin;

static const Builtin builtins[] = {
        {"", "v1", "namespaces", "namespace", "Namespace", FALSE, "ns", NULL, "status"},
        {"", "v1", "pods", "pod", "Pod", TRUE, "po", "all", "status,log,exec,attach,portforward"},
        {"", "v1", "services", "service", "Service", TRUE, "svc", "all", "status"},
        {"", "v1", "configmaps", "configmap", "ConfigMap", TRUE, "cm", NULL, NULL},
        {"", "v1", "secrets", "secret", "Secret", TRUE, NULL, NULL, NULL},
        {"", "v1", "nodes", "node", "Node", FALSE, "no", NULL, "status"},
        {"", "v1", "endpoints", "endpoints", "Endpoints", TRUE, "ep", NULL, NULL},
        {"", "v1", "persistentvolumes", "persistentvolume", "PersistentVolume", FALSE, "pv", NULL,
         "status"},
        {"", "v1", "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", TRUE,
         "pvc", NULL, "status"},
        {"", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", TRUE, "sa", NULL, NULL},
        {"", "v1", "events", "event", "Event", TRUE, "ev", NULL, NULL},
        {"", "v1", "replicationcontrollers", "replicationcontroller", "ReplicationController", TRUE,
         "rc", "all", "status,scale"},
        {"apps", "v1", "deployments", "deployment", "Deployment", TRUE, "deploy", "all",
         "status,scale"},
        {"apps", "v1", "replicasets", "replicaset", "ReplicaSet", TRUE, "rs", "all",
         "status,scale"},
        {"apps", "v1", "statefulsets", "statefulset", "StatefulSet", TRUE, "sts", "all",
         "status,scale"},
        {"apps", "v1", "daemonsets", "daemonset", "DaemonSet", TRUE, "ds", "all", "status"},
        {"batch", "v1", "jobs", "job", "Job", TRUE, NULL, "all", "status"},
        {"batch", "v1", "cronjobs", "cronjob", "CronJob", TRUE, "cj", "all", "status"},
        {"networking.k8s.io", "v1", "ingresses", "ingress", "Ingress", TRUE, "ing", NULL, "status"},
        {"discovery.k8s.io", "v1", "endpointslices", "endpointslice", "EndpointSlice", TRUE, NULL,
         NULL, NULL},
        {"storage.k8s.io", "v1", "storageclasses", "storageclass", "StorageClass", FALSE, "sc",
         NULL, NULL},
        {"storage.k8s.io", "v1", "volumeattachments", "volumeattachment", "VolumeAttachment", FALSE,
         NULL, NULL, "status"},
        {"rbac.authorization.k8s.io", "v1", "clusterroles", "clusterrole", "ClusterRole", FALSE,
         NULL, NULL, NULL},
        {"rbac.authorization.k8s.io", "v1", "clusterrolebindings", "clusterrolebinding",
         "ClusterRoleBinding", FALSE, NULL, NULL, NULL},
        {"rbac.authorization.k8s.io", "v1", "roles", "role", "Role", TRUE, NULL, NULL, NULL},
        {"rbac.authorization.k8s.io", "v1", "rolebindings", "rolebinding", "RoleBinding", TRUE,
         NULL, NULL, NULL},
        {"apiregistration.k8s.io", "v1", "apiservices", "apiservice", "APIService", FALSE, NULL,
         "api-extensions", "status"},
        {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "customresourcedefinition",
         "CustomResourceDefinition", FALSE, "crd,crds", "api-extensions", "status"},
};

/* The MeshSync CRD, present by default as in a cluster where Meshery's operator is installed
 * (by its Helm chart). Every %s is the time the simulator starts. */
static const gchar meshsync_crd[] =
        "{\"kind\":\"CustomResourceDefinition\",\"apiVersion\":\"apiextensions.k8s.io/v1\","
        "\"metadata\":{\"name\":\"meshsyncs.meshery.io\",\"labels\":{"
        "\"app.kubernetes.io/managed-by\":\"Helm\"},\"annotations\":{"
        "\"meta.helm.sh/release-name\":\"meshery-operator\","
        "\"meta.helm.sh/release-namespace\":\"meshery\"},\"managedFields\":["
        "{\"manager\":\"helm\",\"operation\":\"Update\",\"apiVersion\":"
        "\"apiextensions.k8s.io/v1\",\"time\":\"%s\",\"fieldsType\":\"FieldsV1\","
        "\"fieldsV1\":{\"f:metadata\":{\"f:annotations\":{\".\":{},"
        "\"f:meta.helm.sh/release-name\":{},\"f:meta.helm.sh/release-namespace\":{}},"
        "\"f:labels\":{\".\":{},\"f:app.kubernetes.io/managed-by\":{}}},\"f:spec\":{"
        "\"f:conversion\":{\".\":{},\"f:strategy\":{}},\"f:group\":{},\"f:names\":{"
        "\"f:kind\":{},\"f:listKind\":{},\"f:plural\":{},\"f:singular\":{}},"
        "\"f:scope\":{},\"f:versions\":{}}}},"
        "{\"manager\":\"kube-apiserver\",\"operation\":\"Update\",\"apiVersion\":"
        "\"apiextensions.k8s.io/v1\",\"time\":\"%s\",\"fieldsType\":\"FieldsV1\","
        "\"fieldsV1\":{\"f:status\":{\"f:acceptedNames\":{\"f:kind\":{},\"f:listKind\":{},"
        "\"f:plural\":{},\"f:singular\":{}},\"f:conditions\":{"
        "\"k:{\\\"type\\\":\\\"Established\\\"}\":{\".\":{},\"f:lastTransitionTime\":{},"
        "\"f:message\":{},\"f:reason\":{},\"f:status\":{},\"f:type\":{}},"
        "\"k:{\\\"type\\\":\\\"NamesAccepted\\\"}\":{\".\":{},"
        "\"f:lastTransitionTime\":{},\"f:message\":{},\"f:reason\":{},\"f:status\":{},"
        "\"f:type\":{}}}}},\"subresource\":\"status\"}]},"
        "\"spec\":{\"group\":\"meshery.io\",\"names\":{\"plural\":\"meshsyncs\","
        "\"singular\":\"meshsync\",\"kind\":\"MeshSync\",\"listKind\":\"MeshSyncList\"},"
        "\"scope\":\"Namespaced\",\"versions\":[{\"name\":\"v1alpha1\",\"served\":true,"
        "\"storage\":true,\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
        "\"x-kubernetes-preserve-unknown-fields\":true}},\"subresources\":{\"status\":{}}}],"
        "\"conversion\":{\"strategy\":\"None\"}},"
        "\"status\":{\"conditions\":[{\"type\":\"NamesAccepted\",\"status\":\"True\","
        "\"lastTransitionTime\":\"%s\",\"reason\":\"NoConflicts\",\"message\":"
        "\"no conflicts found\"},{\"type\":\"Established\",\"status\":\"True\","
        "\"lastTransitionTime\":\"%s\",\"reason\":\"InitialNamesAccepted\",\"message\":"
        "\"the initial names have been accepted\"}],\"acceptedNames\":{\"plural\":"
        "\"meshsyncs\",\"singular\":\"meshsync\",\"kind\":\"MeshSync\",\"listKind\":"
        "\"MeshSyncList\"},\"storedVersions\":[\"v1alpha1\"]}}";

static gchar **
split_or_null(const gchar *s)
{
	return s != NULL ? g_strsplit(s, ",", -1) : NULL;
}

void
kubesim_resources_install(KubesimStore *store)
{
	guint i;

	for (i = 0; i < G_N_ELEMENTS(builtins); i++) {
		const Builtin *b = &builtins[i];
		KubesimResource res = {0};
		g_auto(GStrv) short_names = split_or_null(b->short_names);
		g_auto(GStrv) categories = split_or_null(b->categories);
		g_auto(GStrv) subresources = split_or_null(b->subresources);
		res.group = (gchar *)b->group;
		res.version = (gchar *)b->version;
		res.resource = (gchar *)b->resource;
		res.singular = (gchar *)b->singular;
		res.kind = (gchar *)b->kind;
		res.namespaced = b->namespaced;
		res.short_names = short_names;
		res.categories = categories;
		res.subresources = subresources;
		kubesim_store_add_resource(store, &res);
	}
}

void
kubesim_resources_install_objects(KubesimStore *store)
{
	static const gchar *const namespaces[] = {"default", "kube-system", "kube-public",
	                                          "kube-node-lease"};
	KubesimResource *ns_res;
	KubesimResource *crd_res;
	g_autofree gchar *now = kubesim_now_rfc3339();
	guint i;

	ns_res = kubesim_store_lookup(store, "", "v1", "namespaces");
	for (i = 0; i < G_N_ELEMENTS(namespaces); i++) {
		/* made by the API server itself, as its managedFields say */
		g_autofree gchar *json = g_strdup_printf(
		        "{\"kind\":\"Namespace\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":"
		        "\"%s\",\"labels\":{\"kubernetes.io/metadata.name\":\"%s\"},"
		        "\"managedFields\":[{\"manager\":\"kube-apiserver\",\"operation\":"
		        "\"Update\",\"apiVersion\":\"v1\",\"time\":\"%s\",\"fieldsType\":"
		        "\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{\".\":{},"
		        "\"f:kubernetes.io/metadata.name\":{}}}}}]},\"spec\":{\"finalizers\":"
		        "[\"kubernetes\"]},\"status\":{\"phase\":\"Active\"}}",
		        namespaces[i], namespaces[i], now);
		g_autoptr(GBytes) bytes = g_bytes_new(json, strlen(json));
		g_autoptr(KubesimStatus) status = NULL;
		g_autoptr(KubesimObject) obj G_GNUC_UNUSED =
		        kubesim_store_upsert(store, ns_res, bytes, &status);
	}
	crd_res = kubesim_store_lookup(store, "apiextensions.k8s.io", "v1",
	                               "customresourcedefinitions");
	{
		g_autofree gchar *json = g_strdup_printf(meshsync_crd, now, now, now, now);
		g_autoptr(GBytes) bytes = g_bytes_new(json, strlen(json));
		g_autoptr(KubesimStatus) status = NULL;
		g_autoptr(KubesimObject) obj G_GNUC_UNUSED =
		        kubesim_store_upsert(store, crd_res, bytes, &status);
	}
}
