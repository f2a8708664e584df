/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include <string.h>

#include "kubesim-fields.h"
#include "kubesim-gen.h"
#include "kubesim-write.h"
#include "util/msd-json-string.h"

/* Deployments, their ReplicaSets and Pods: one pod template, written as a manifest applies it
 * (last-applied-configuration), as the API server stores it in the workloads, and as pods get
 * it with what admission, scheduling and the kubelet add. */

static const KubesimImage kubesim_images[] = {
        {"nginx:1.27.0", "docker.io/library/nginx:1.27.0"},
        {"registry.example.com/shop/api:2.14.1", "registry.example.com/shop/api:2.14.1"},
        {"ghcr.io/example/worker:v0.9.3", "ghcr.io/example/worker:v0.9.3"},
        {"docker.io/library/redis:7.2.5", "docker.io/library/redis:7.2.5"},
        {"quay.io/example/gateway:1.3.0", "quay.io/example/gateway:1.3.0"},
};

#define SIDECAR_IMAGE "cr.fluentbit.io/fluent/fluent-bit:3.0.7"
#define SIDECAR_IMAGE_ID                            \
	"cr.fluentbit.io/fluent/fluent-bit@sha256:" \
	"2a3b5c8d0e1f4a6b7c9d0e2f3a5b6c8d9e0f1a3b4c6d7e9f0a2b3c5d6e8f9a0b"
#define SA_MOUNT_PATH "/var/run/secrets/kubernetes.io/serviceaccount"

gchar *
kubesim_workload_image_id(const gchar *image)
{
	g_autofree gchar *digest = NULL;
	const gchar *colon = strrchr(image, ':');
	gsize repo_len = colon != NULL && strchr(colon, '/') == NULL ? (gsize)(colon - image)
	                                                             : strlen(image);

	if (strcmp(image, SIDECAR_IMAGE) == 0)
		return g_strdup(SIDECAR_IMAGE_ID);
	digest = g_compute_checksum_for_string(G_CHECKSUM_SHA256, image, -1);
	return g_strdup_printf("%.*s@sha256:%s", (gint)repo_len, image, digest);
}

/* A pod template as its manifest writes it (no defaults), for last-applied-configuration. */
static void
kubesim_manifest_pod_template(GString *m, const KubesimPodOwner *o)
{
	g_string_append(m, "{\"metadata\":{\"annotations\":{\"kubectl.kubernetes.io/"
	                   "default-container\":");
	kubesim_append_plain(m, o->app);
	g_string_append(m, ",\"prometheus.io/port\":\"9090\",\"prometheus.io/scrape\":\"true\"},"
	                   "\"labels\":{\"app\":");
	kubesim_append_plain(m, o->app);
	g_string_append(m, ",\"app.kubernetes.io/part-of\":\"shop\"}},\"spec\":{\"containers\":[{"
	                   "\"env\":[{\"name\":\"LOG_LEVEL\",\"value\":\"info\"},{\"name\":"
	                   "\"APP_NAME\",\"value\":");
	kubesim_append_plain(m, o->app);
	g_string_append(m, "},{\"name\":\"POD_NAME\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":"
	                   "\"metadata.name\"}}},{\"name\":\"POD_IP\",\"valueFrom\":{\"fieldRef\":"
	                   "{\"fieldPath\":\"status.podIP\"}}},{\"name\":\"DB_PASSWORD\","
	                   "\"valueFrom\":{\"secretKeyRef\":{\"key\":\"db-password\",\"name\":\"");
	g_string_append(m, o->app);
	g_string_append(m, "-secrets\"}}}],\"image\":");
	kubesim_append_plain(m, o->image->spec);
	g_string_append(m, ",\"livenessProbe\":{\"httpGet\":{\"path\":\"/healthz\",\"port\":");
	kubesim_append_uint(m, o->port);
	g_string_append(m, "},\"initialDelaySeconds\":10},\"name\":");
	kubesim_append_plain(m, o->app);
	g_string_append(m, ",\"ports\":[{\"containerPort\":");
	kubesim_append_uint(m, o->port);
	g_string_append(m, ",\"name\":\"http\"},{\"containerPort\":9090,\"name\":\"metrics\"}],"
	                   "\"readinessProbe\":{\"httpGet\":{\"path\":\"/readyz\",\"port\":");
	kubesim_append_uint(m, o->port);
	g_string_append(m, "},\"initialDelaySeconds\":5},\"resources\":{\"limits\":{\"cpu\":"
	                   "\"500m\",\"memory\":\"256Mi\"},\"requests\":{\"cpu\":\"100m\","
	                   "\"memory\":\"128Mi\"}},\"volumeMounts\":[{\"mountPath\":\"/etc/app\","
	                   "\"name\":\"config\",\"readOnly\":true},{\"mountPath\":"
	                   "\"/etc/app/secrets\",\"name\":\"secrets\",\"readOnly\":true}]},"
	                   "{\"env\":[{\"name\":\"NODE_NAME\",\"valueFrom\":{\"fieldRef\":"
	                   "{\"fieldPath\":\"spec.nodeName\"}}}],\"image\":\"" SIDECAR_IMAGE "\","
	                   "\"name\":\"log-shipper\",\"ports\":[{\"containerPort\":2020,\"name\":"
	                   "\"fluent\"}],\"resources\":{\"limits\":{\"memory\":\"64Mi\"},"
	                   "\"requests\":{\"cpu\":\"10m\",\"memory\":\"32Mi\"}},\"volumeMounts\":"
	                   "[{\"mountPath\":\"/fluent-bit/etc\",\"name\":\"config\",\"readOnly\":"
	                   "true}]}],\"securityContext\":{\"fsGroup\":2000},\"serviceAccountName\":"
	                   "\"default\",\"volumes\":[{\"configMap\":{\"name\":\"");
	g_string_append(m, o->app);
	g_string_append(m, "-config\"},\"name\":\"config\"},{\"name\":\"secrets\",\"secret\":"
	                   "{\"secretName\":\"");
	g_string_append(m, o->app);
	g_string_append(m, "-secrets\"}}]}}");
}

static void
kubesim_append_probe(GString *s, const gchar *path, guint port, guint initial_delay)
{
	g_string_append(s, "{\"httpGet\":{\"path\":");
	kubesim_append_plain(s, path);
	g_string_append(s, ",\"port\":");
	kubesim_append_uint(s, port);
	g_string_append(s, ",\"scheme\":\"HTTP\"},\"initialDelaySeconds\":");
	kubesim_append_uint(s, initial_delay);
	g_string_append(s, ",\"timeoutSeconds\":1,\"periodSeconds\":10,\"successThreshold\":1,"
	                   "\"failureThreshold\":3}");
}

/* The two containers of every workload pod: the application and a log shipper sidecar. */
static void
kubesim_append_containers(GString *s, const KubesimPodOwner *o, const gchar *api_volume)
{
	g_string_append(s, "\"containers\":[{\"name\":");
	kubesim_append_plain(s, o->app);
	g_string_append(s, ",\"image\":");
	kubesim_append_plain(s, o->image->spec);
	g_string_append(s, ",\"ports\":[{\"name\":\"http\",\"containerPort\":");
	kubesim_append_uint(s, o->port);
	g_string_append(
	        s, ",\"protocol\":\"TCP\"},{\"name\":\"metrics\",\"containerPort\":9090,"
	           "\"protocol\":\"TCP\"}],\"env\":[{\"name\":\"LOG_LEVEL\",\"value\":\"info\"},"
	           "{\"name\":\"APP_NAME\",\"value\":");
	kubesim_append_plain(s, o->app);
	g_string_append(s, "},{\"name\":\"POD_NAME\",\"valueFrom\":{\"fieldRef\":{\"apiVersion\":"
	                   "\"v1\",\"fieldPath\":\"metadata.name\"}}},{\"name\":\"POD_IP\","
	                   "\"valueFrom\":{\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":"
	                   "\"status.podIP\"}}},{\"name\":\"DB_PASSWORD\",\"valueFrom\":"
	                   "{\"secretKeyRef\":{\"name\":\"");
	g_string_append(s, o->app);
	g_string_append(s, "-secrets\",\"key\":\"db-password\"}}}],"
	                   "\"resources\":{\"limits\":{\"cpu\":\"500m\",\"memory\":\"256Mi\"},"
	                   "\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"}},"
	                   "\"volumeMounts\":[{\"name\":\"config\",\"readOnly\":true,\"mountPath\":"
	                   "\"/etc/app\"},{\"name\":\"secrets\",\"readOnly\":true,\"mountPath\":"
	                   "\"/etc/app/secrets\"}");
	if (api_volume != NULL) {
		g_string_append(s, ",{\"name\":");
		kubesim_append_plain(s, api_volume);
		g_string_append(s, ",\"readOnly\":true,\"mountPath\":\"" SA_MOUNT_PATH "\"}");
	}
	g_string_append(s, "],\"livenessProbe\":");
	kubesim_append_probe(s, "/healthz", o->port, 10);
	g_string_append(s, ",\"readinessProbe\":");
	kubesim_append_probe(s, "/readyz", o->port, 5);
	g_string_append(
	        s, ",\"terminationMessagePath\":\"/dev/termination-log\","
	           "\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":\"IfNotPresent\"},"
	           "{\"name\":\"log-shipper\",\"image\":\"" SIDECAR_IMAGE "\","
	           "\"ports\":[{\"name\":\"fluent\",\"containerPort\":2020,\"protocol\":\"TCP\"}],"
	           "\"env\":[{\"name\":\"NODE_NAME\",\"valueFrom\":{\"fieldRef\":{\"apiVersion\":"
	           "\"v1\",\"fieldPath\":\"spec.nodeName\"}}}],\"resources\":{\"limits\":"
	           "{\"memory\":\"64Mi\"},\"requests\":{\"cpu\":\"10m\",\"memory\":\"32Mi\"}},"
	           "\"volumeMounts\":[{\"name\":\"config\",\"readOnly\":true,\"mountPath\":"
	           "\"/fluent-bit/etc\"}");
	if (api_volume != NULL) {
		g_string_append(s, ",{\"name\":");
		kubesim_append_plain(s, api_volume);
		g_string_append(s, ",\"readOnly\":true,\"mountPath\":\"" SA_MOUNT_PATH "\"}");
	}
	g_string_append(
	        s, "],\"terminationMessagePath\":\"/dev/termination-log\","
	           "\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":\"IfNotPresent\"}]");
}

/* A pod spec; templates lack what admission and scheduling add (token volume, node). */
static void
kubesim_append_pod_spec(GString *s,
                        const KubesimPodOwner *o,
                        const gchar *api_volume,
                        const gchar *node_name)
{
	g_string_append(s, "{\"volumes\":[");
	if (api_volume != NULL) {
		g_string_append(s, "{\"name\":");
		kubesim_append_plain(s, api_volume);
		g_string_append(s,
		                ",\"projected\":{\"sources\":[{\"serviceAccountToken\":"
		                "{\"expirationSeconds\":3607,\"path\":\"token\"}},{\"configMap\":"
		                "{\"name\":\"kube-root-ca.crt\",\"items\":[{\"key\":\"ca.crt\","
		                "\"path\":\"ca.crt\"}]}},{\"downwardAPI\":{\"items\":[{\"path\":"
		                "\"namespace\",\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":"
		                "\"metadata.namespace\"}}]}}],\"defaultMode\":420}},");
	}
	g_string_append(s, "{\"name\":\"config\",\"configMap\":{\"name\":\"");
	g_string_append(s, o->app);
	g_string_append(s, "-config\",\"defaultMode\":420}},{\"name\":\"secrets\",\"secret\":"
	                   "{\"secretName\":\"");
	g_string_append(s, o->app);
	g_string_append(s, "-secrets\",\"defaultMode\":420}}],");
	kubesim_append_containers(s, o, api_volume);
	g_string_append(s, ",\"restartPolicy\":\"Always\",\"terminationGracePeriodSeconds\":30,"
	                   "\"dnsPolicy\":\"ClusterFirst\",\"serviceAccountName\":\"default\","
	                   "\"serviceAccount\":\"default\"");
	if (node_name != NULL) {
		g_string_append(s, ",\"nodeName\":");
		kubesim_append_plain(s, node_name);
	}
	g_string_append(s, ",\"securityContext\":{\"fsGroup\":2000},\"schedulerName\":"
	                   "\"default-scheduler\"");
	if (node_name != NULL) {
		g_string_append(s, ",\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\","
		                   "\"operator\":\"Exists\",\"effect\":\"NoExecute\","
		                   "\"tolerationSeconds\":300},{\"key\":"
		                   "\"node.kubernetes.io/unreachable\",\"operator\":\"Exists\","
		                   "\"effect\":\"NoExecute\",\"tolerationSeconds\":300}],"
		                   "\"priority\":0,\"enableServiceLinks\":true,"
		                   "\"preemptionPolicy\":\"PreemptLowerPriority\"");
	}
	g_string_append_c(s, '}');
}

/* The labels and annotations of a pod template (and of its pods, with their hash). @note: an
 * annotation of the pod's own, which sorts first. */
static void
kubesim_append_template_meta(GString *s, const KubesimPodOwner *o, const gchar *hash, gboolean note)
{
	g_string_append(s, "\"labels\":{\"app\":");
	kubesim_append_plain(s, o->app);
	g_string_append(s, ",\"app.kubernetes.io/part-of\":\"shop\"");
	if (hash != NULL) {
		g_string_append(s, ",\"pod-template-hash\":");
		kubesim_append_plain(s, hash);
	}
	g_string_append(s, "},\"annotations\":{");
	if (note) {
		g_string_append(s, "\"example.com/note\":");
		msd_json_string_append(s, kubesim_gen_odd_value, -1, MSD_JSON_STRING_GO);
		g_string_append_c(s, ',');
	}
	g_string_append(s, "\"kubectl.kubernetes.io/default-container\":");
	kubesim_append_plain(s, o->app);
	g_string_append(s, ",\"prometheus.io/port\":\"9090\",\"prometheus.io/scrape\":\"true\"}");
}

/* The fieldsV1 of those labels and annotations; @generate_name: a pod's, which its ReplicaSet
 * named. */
static void
kubesim_append_template_meta_fields(GString *s, gboolean hash, gboolean generate_name)
{
	g_string_append(s, "\"f:annotations\":{\".\":{},\"f:kubectl.kubernetes.io/default-container"
	                   "\":{},\"f:prometheus.io/port\":{},\"f:prometheus.io/scrape\":{}},");
	if (generate_name)
		g_string_append(s, "\"f:generateName\":{},");
	g_string_append(s,
	                hash ? "\"f:labels\":{\".\":{},\"f:app\":{},\"f:app.kubernetes.io/part-of"
	                       "\":{},\"f:pod-template-hash\":{}}"
	                     : "\"f:labels\":{\".\":{},\"f:app\":{},\"f:app.kubernetes.io/part-of"
	                       "\":{}}");
}

/* A template as Deployments and ReplicaSets hold it. */
static void
kubesim_append_template(KubesimGen *gen, GString *s, const KubesimPodOwner *o, const gchar *hash)
{
	g_string_append(s, "\"template\":{\"metadata\":{\"creationTimestamp\":null,");
	kubesim_append_template_meta(s, o, hash, FALSE);
	g_string_append(s, "},\"spec\":");
	kubesim_append_pod_spec(s, o, NULL, NULL);
	g_string_append_c(s, '}');
}

static void
kubesim_append_template_fields(KubesimGen *gen, GString *s, gboolean hash)
{
	g_string_append(s, "\"f:template\":{\"f:metadata\":{");
	kubesim_append_template_meta_fields(s, hash, FALSE);
	g_string_append(s, "},\"f:spec\":");
	g_string_append_len(s, gen->template_fields->str, gen->template_fields->len);
	g_string_append_c(s, '}');
}

static void
kubesim_append_condition(GString *s, const gchar *type, gboolean ready, gint64 when)
{
	g_string_append(s, "{\"type\":");
	kubesim_append_plain(s, type);
	g_string_append(s, ready ? ",\"status\":\"True\"" : ",\"status\":\"False\"");
	g_string_append(s, ",\"lastProbeTime\":null,\"lastTransitionTime\":");
	kubesim_append_time(s, when);
	g_string_append_c(s, '}');
}

/* Ready or ContainersReady while containers are still being created. */
static void
kubesim_append_unready_condition(GString *s, const gchar *type, const gchar *app, gint64 when)
{
	kubesim_append_condition(s, type, FALSE, when);
	g_string_truncate(s, s->len - 1);
	g_string_append(s, ",\"reason\":\"ContainersNotReady\",\"message\":\"containers with "
	                   "unready status: [");
	g_string_append(s, app);
	g_string_append(s, " log-shipper]\"}");
}

static void
kubesim_append_status_mount(GString *s, const gchar *name, const gchar *path)
{
	g_string_append(s, "{\"name\":");
	kubesim_append_plain(s, name);
	g_string_append(s, ",\"mountPath\":");
	kubesim_append_plain(s, path);
	g_string_append(s, ",\"readOnly\":true,\"recursiveReadOnly\":\"Disabled\"}");
}

static void
kubesim_append_container_status(GString *s,
                                GRand *rand,
                                const gchar *name,
                                const gchar *image,
                                const gchar *image_id,
                                gint64 started, /* 0: still being created */
                                const gchar *const *mounts /* name, path, ..., NULL */)
{
	g_string_append(s, "{\"name\":");
	kubesim_append_plain(s, name);
	if (started != 0) {
		gchar container_id[65];

		kubesim_random_hex(rand, container_id, 64);
		g_string_append(s, ",\"state\":{\"running\":{\"startedAt\":");
		kubesim_append_time(s, started);
		g_string_append(s, "}},\"lastState\":{},\"ready\":true,\"restartCount\":0,"
		                   "\"image\":");
		kubesim_append_plain(s, image);
		g_string_append(s, ",\"imageID\":");
		kubesim_append_plain(s, image_id);
		g_string_append(s, ",\"containerID\":\"containerd://");
		g_string_append(s, container_id);
		g_string_append(s, "\",\"started\":true");
	} else {
		g_string_append(s,
		                ",\"state\":{\"waiting\":{\"reason\":\"ContainerCreating\"}},"
		                "\"lastState\":{},\"ready\":false,\"restartCount\":0,\"image\":");
		kubesim_append_plain(s, image);
		g_string_append(s, ",\"imageID\":\"\",\"started\":false");
	}
	g_string_append(s, ",\"volumeMounts\":[");
	for (guint i = 0; mounts[i] != NULL; i += 2) {
		if (i > 0)
			g_string_append_c(s, ',');
		kubesim_append_status_mount(s, mounts[i], mounts[i + 1]);
	}
	g_string_append(s, "]}");
}

static void
kubesim_write_pod(KubesimGen *gen,
                  const KubesimPodOwner *o,
                  const gchar *name,
                  const gchar *uid,
                  gint64 created,
                  gboolean pending,
                  gboolean odd)
{
	GString *s = gen->buf;
	gchar api_volume[32];
	gchar suffix[6];
	gchar node_name[32];
	gchar pod_ip[16];
	guint node = (guint)g_rand_int_range(gen->rand, 0, (gint32)gen->nodes);
	guint32 ip = gen->pod_ip++;
	/* when the kubelet last wrote: containers ready, or (for churn) the moment of creation */
	gint64 ready_time = created + (pending ? 0 : 9);

	kubesim_random_suffix(gen->rand, suffix, 5);
	g_snprintf(api_volume, sizeof api_volume, "kube-api-access-%s", suffix);
	g_snprintf(node_name, sizeof node_name, "worker-%04u", node);
	g_snprintf(pod_ip, sizeof pod_ip, "10.%u.%u.%u", 64 + (ip >> 16 & 0x3f), ip >> 8 & 0xff,
	           ip & 0xff);

	kubesim_gen_begin_object(s, "Pod", "v1", o->namespace_, name, o->rs_name, uid, 0, created);
	g_string_append_c(s, ',');
	kubesim_append_template_meta(s, o, o->hash, odd);
	if (o->rs_name != NULL)
		kubesim_gen_append_owner(s, "apps/v1", "ReplicaSet", o->rs_name, o->rs_uid);

	g_string_append(s, ",\"managedFields\":[");
	kubesim_fields_begin(s, TRUE,
	                     o->rs_name != NULL ? "kube-controller-manager" : "kubectl-create",
	                     "Update", "v1", created);
	g_string_append(s, "{\"f:metadata\":{");
	kubesim_append_template_meta_fields(s, o->hash != NULL, o->rs_name != NULL);
	if (o->rs_name != NULL) {
		g_string_append_c(s, ',');
		kubesim_gen_append_owner_fields(s, o->rs_uid);
	}
	g_string_append(s, "},\"f:spec\":");
	g_string_append_len(s, gen->pod_fields->str, gen->pod_fields->len);
	g_string_append_c(s, '}');
	kubesim_fields_end(s, NULL);
	kubesim_fields_begin(s, FALSE, "kubelet", "Update", "v1", ready_time);
	kubesim_fields_append_pod_status(s, pod_ip, !pending);
	kubesim_fields_end(s, "status");
	if (odd) {
		kubesim_fields_begin(s, FALSE, "kubectl-annotate", "Update", "v1", created + 600);
		g_string_append(s,
		                "{\"f:metadata\":{\"f:annotations\":{\"f:example.com/note\":{}}}}");
		kubesim_fields_end(s, NULL);
	}
	g_string_append(s, "]},\"spec\":");
	kubesim_append_pod_spec(s, o, api_volume, node_name);

	g_string_append(s, pending ? ",\"status\":{\"phase\":\"Pending\",\"conditions\":["
	                           : ",\"status\":{\"phase\":\"Running\",\"conditions\":[");
	kubesim_append_condition(s, "PodReadyToStartContainers", TRUE, created + (pending ? 0 : 2));
	g_string_append_c(s, ',');
	kubesim_append_condition(s, "Initialized", TRUE, created + (pending ? 0 : 1));
	g_string_append_c(s, ',');
	if (pending) {
		kubesim_append_unready_condition(s, "Ready", o->app, created);
		g_string_append_c(s, ',');
		kubesim_append_unready_condition(s, "ContainersReady", o->app, created);
	} else {
		kubesim_append_condition(s, "Ready", TRUE, created + 9);
		g_string_append_c(s, ',');
		kubesim_append_condition(s, "ContainersReady", TRUE, created + 9);
	}
	g_string_append_c(s, ',');
	kubesim_append_condition(s, "PodScheduled", TRUE, created);
	/* node addresses from 10.0.0.2 on, 250 to a /24 */
	g_string_append(s, "],\"hostIP\":");
	kubesim_append_ipv4(s, 10, 0, node / 250 & 0xff, node % 250 + 2);
	g_string_append(s, ",\"hostIPs\":[{\"ip\":");
	kubesim_append_ipv4(s, 10, 0, node / 250 & 0xff, node % 250 + 2);
	g_string_append(s, "}],\"podIP\":");
	kubesim_append_plain(s, pod_ip);
	g_string_append(s, ",\"podIPs\":[{\"ip\":");
	kubesim_append_plain(s, pod_ip);
	g_string_append(s, "}],\"startTime\":");
	kubesim_append_time(s, created);
	g_string_append(s, ",\"containerStatuses\":[");
	{
		const gchar *const app_mounts[] = {
		        "config",   "/etc/app",    "secrets", "/etc/app/secrets",
		        api_volume, SA_MOUNT_PATH, NULL};
		const gchar *const sidecar_mounts[] = {"config", "/fluent-bit/etc", api_volume,
		                                       SA_MOUNT_PATH, NULL};
		kubesim_append_container_status(s, gen->rand, o->app, o->image->status, o->image_id,
		                                pending ? 0 : created + 3, app_mounts);
		g_string_append_c(s, ',');
		kubesim_append_container_status(s, gen->rand, "log-shipper", SIDECAR_IMAGE,
		                                SIDECAR_IMAGE_ID, pending ? 0 : created + 4,
		                                sidecar_mounts);
	}
	g_string_append(s, "],\"qosClass\":\"Burstable\"}}");
	kubesim_gen_emit(gen);
}

static void
kubesim_write_deployment(KubesimGen *gen,
                         const KubesimPodOwner *o,
                         const gchar *uid,
                         guint replicas)
{
	GString *s = gen->buf;
	GString *m = gen->manifest;

	g_autoptr(GString) description = g_string_new("\"example.com/description\":");

	msd_json_string_append(description, kubesim_gen_odd_value, -1, MSD_JSON_STRING_GO);
	kubesim_gen_manifest_begin(m, "apps/v1", "Deployment", o->namespace_, o->app, o->app,
	                           description->str);
	g_string_append(m, ",\"spec\":{\"replicas\":");
	kubesim_append_uint(m, replicas);
	g_string_append(m, ",\"selector\":{\"matchLabels\":{\"app\":");
	kubesim_append_plain(m, o->app);
	g_string_append(m, "}},\"template\":");
	kubesim_manifest_pod_template(m, o);
	g_string_append(m, "}}");

	kubesim_gen_begin_object(s, "Deployment", "apps/v1", o->namespace_, o->app, NULL, uid, 2,
	                         o->created);
	g_string_append(s, ",\"labels\":{\"app\":");
	kubesim_append_plain(s, o->app);
	g_string_append(s, "},\"annotations\":{\"deployment.kubernetes.io/revision\":\"2\","
	                   "\"example.com/description\":");
	msd_json_string_append(s, kubesim_gen_odd_value, -1, MSD_JSON_STRING_GO);
	g_string_append_c(s, ',');
	kubesim_gen_append_last_applied(gen, s);
	g_string_append(s, "},\"managedFields\":[");
	/* the second kubectl apply (generation 2) owns the spec; the controller its status */
	kubesim_fields_begin(s, TRUE, "kubectl-client-side-apply", "Update", "apps/v1",
	                     o->created + 30);
	g_string_append(s,
	                "{\"f:metadata\":{\"f:annotations\":{\".\":{},"
	                "\"f:example.com/description\":{},"
	                "\"f:kubectl.kubernetes.io/last-applied-configuration\":{}},"
	                "\"f:labels\":{\".\":{},\"f:app\":{}}},\"f:spec\":{"
	                "\"f:progressDeadlineSeconds\":{},\"f:replicas\":{},"
	                "\"f:revisionHistoryLimit\":{},\"f:selector\":{},\"f:strategy\":{"
	                "\"f:rollingUpdate\":{\".\":{},\"f:maxSurge\":{},\"f:maxUnavailable\":{}},"
	                "\"f:type\":{}},");
	kubesim_append_template_fields(gen, s, FALSE);
	g_string_append(s, "}}");
	kubesim_fields_end(s, NULL);
	kubesim_fields_begin(s, FALSE, "kube-controller-manager", "Update", "apps/v1",
	                     o->created + 40);
	g_string_append(s, "{\"f:metadata\":{\"f:annotations\":{"
	                   "\"f:deployment.kubernetes.io/revision\":{}}},\"f:status\":{"
	                   "\"f:availableReplicas\":{},\"f:conditions\":{\".\":{},"
	                   "\"k:{\\\"type\\\":\\\"Available\\\"}\":{\".\":{},"
	                   "\"f:lastTransitionTime\":{},\"f:lastUpdateTime\":{},\"f:message\":{},"
	                   "\"f:reason\":{},\"f:status\":{},\"f:type\":{}},"
	                   "\"k:{\\\"type\\\":\\\"Progressing\\\"}\":{\".\":{},"
	                   "\"f:lastTransitionTime\":{},\"f:lastUpdateTime\":{},\"f:message\":{},"
	                   "\"f:reason\":{},\"f:status\":{},\"f:type\":{}}},"
	                   "\"f:observedGeneration\":{},\"f:readyReplicas\":{},\"f:replicas\":{},"
	                   "\"f:updatedReplicas\":{}}}");
	kubesim_fields_end(s, "status");
	g_string_append(s, "]},\"spec\":{\"replicas\":");
	kubesim_append_uint(s, replicas);
	g_string_append(s, ",\"selector\":{\"matchLabels\":{\"app\":");
	kubesim_append_plain(s, o->app);
	g_string_append(s, "}},");
	kubesim_append_template(gen, s, o, NULL);
	g_string_append(s, ",\"strategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":"
	                   "{\"maxUnavailable\":\"25%\",\"maxSurge\":\"25%\"}},"
	                   "\"revisionHistoryLimit\":10,\"progressDeadlineSeconds\":600},"
	                   "\"status\":{\"observedGeneration\":2,\"replicas\":");
	kubesim_append_uint(s, replicas);
	g_string_append(s, ",\"updatedReplicas\":");
	kubesim_append_uint(s, replicas);
	g_string_append(s, ",\"readyReplicas\":");
	kubesim_append_uint(s, replicas);
	g_string_append(s, ",\"availableReplicas\":");
	kubesim_append_uint(s, replicas);
	g_string_append(s, ",\"conditions\":[{\"type\":\"Available\",\"status\":\"True\","
	                   "\"lastUpdateTime\":");
	kubesim_append_time(s, o->created + 20);
	g_string_append(s, ",\"lastTransitionTime\":");
	kubesim_append_time(s, o->created + 20);
	g_string_append(s, ",\"reason\":\"MinimumReplicasAvailable\",\"message\":\"Deployment has "
	                   "minimum availability.\"},{\"type\":\"Progressing\",\"status\":\"True\","
	                   "\"lastUpdateTime\":");
	kubesim_append_time(s, o->created + 40);
	g_string_append(s, ",\"lastTransitionTime\":");
	kubesim_append_time(s, o->created);
	g_string_append(s, ",\"reason\":\"NewReplicaSetAvailable\",\"message\":\"ReplicaSet \\\"");
	g_string_append(s, o->rs_name);
	g_string_append(s, "\\\" has successfully progressed.\"}]}}");
	kubesim_gen_emit(gen);
}

static void
kubesim_write_replicaset(KubesimGen *gen,
                         const KubesimPodOwner *o,
                         const gchar *name,
                         const gchar *hash,
                         const gchar *uid,
                         const gchar *deployment_uid,
                         guint replicas,
                         guint desired,
                         guint revision,
                         gint64 created)
{
	GString *s = gen->buf;

	kubesim_gen_begin_object(s, "ReplicaSet", "apps/v1", o->namespace_, name, NULL, uid, 1,
	                         created);
	g_string_append(s, ",\"labels\":{\"app\":");
	kubesim_append_plain(s, o->app);
	g_string_append(s, ",\"app.kubernetes.io/part-of\":\"shop\",\"pod-template-hash\":");
	kubesim_append_plain(s, hash);
	g_string_append(s, "},\"annotations\":{\"deployment.kubernetes.io/desired-replicas\":\"");
	kubesim_append_uint(s, desired);
	g_string_append(s, "\",\"deployment.kubernetes.io/max-replicas\":\"");
	kubesim_append_uint(s, desired + (desired + 3) / 4);
	g_string_append(s, "\",\"deployment.kubernetes.io/revision\":\"");
	kubesim_append_uint(s, revision);
	g_string_append(s, "\"}");
	kubesim_gen_append_owner(s, "apps/v1", "Deployment", o->app, deployment_uid);
	g_string_append(s, ",\"managedFields\":[");
	kubesim_fields_begin(s, TRUE, "kube-controller-manager", "Update", "apps/v1", created);
	g_string_append(s, "{\"f:metadata\":{\"f:annotations\":{\".\":{},"
	                   "\"f:deployment.kubernetes.io/desired-replicas\":{},"
	                   "\"f:deployment.kubernetes.io/max-replicas\":{},"
	                   "\"f:deployment.kubernetes.io/revision\":{}},\"f:labels\":{\".\":{},"
	                   "\"f:app\":{},\"f:app.kubernetes.io/part-of\":{},"
	                   "\"f:pod-template-hash\":{}},");
	kubesim_gen_append_owner_fields(s, deployment_uid);
	g_string_append(s, "},\"f:spec\":{\"f:replicas\":{},\"f:selector\":{},");
	kubesim_append_template_fields(gen, s, TRUE);
	g_string_append(s, "}}");
	kubesim_fields_end(s, NULL);
	kubesim_fields_begin(s, FALSE, "kube-controller-manager", "Update", "apps/v1",
	                     created + 20);
	g_string_append(s, replicas > 0
	                           ? "{\"f:status\":{\"f:availableReplicas\":{},"
	                             "\"f:fullyLabeledReplicas\":{},\"f:observedGeneration\":{},"
	                             "\"f:readyReplicas\":{},\"f:replicas\":{}}}"
	                           : "{\"f:status\":{\"f:observedGeneration\":{},"
	                             "\"f:replicas\":{}}}");
	kubesim_fields_end(s, "status");
	g_string_append(s, "]},\"spec\":{\"replicas\":");
	kubesim_append_uint(s, replicas);
	g_string_append(s, ",\"selector\":{\"matchLabels\":{\"app\":");
	kubesim_append_plain(s, o->app);
	g_string_append(s, ",\"pod-template-hash\":");
	kubesim_append_plain(s, hash);
	g_string_append(s, "}},");
	kubesim_append_template(gen, s, o, hash);
	g_string_append(s, "},\"status\":{\"replicas\":");
	kubesim_append_uint(s, replicas);
	if (replicas > 0) {
		g_string_append(s, ",\"fullyLabeledReplicas\":");
		kubesim_append_uint(s, replicas);
		g_string_append(s, ",\"readyReplicas\":");
		kubesim_append_uint(s, replicas);
		g_string_append(s, ",\"availableReplicas\":");
		kubesim_append_uint(s, replicas);
	}
	g_string_append(s, ",\"observedGeneration\":1}}");
	kubesim_gen_emit(gen);
}

/* The fieldsV1 of the app's pod spec, as pods get it and (@templates) as workloads hold it. */
static void
kubesim_gen_set_app(KubesimGen *gen, const gchar *app, guint port, gboolean templates)
{
	g_string_truncate(gen->template_fields, 0);
	if (templates)
		kubesim_fields_append_pod_spec(gen->template_fields, app, port, FALSE);
	g_string_truncate(gen->pod_fields, 0);
	kubesim_fields_append_pod_spec(gen->pod_fields, app, port, TRUE);
}

void
kubesim_gen_write_app(KubesimGen *gen,
                      const gchar *ns,
                      const gchar *app,
                      guint replicas,
                      KubesimServiceType service_type,
                      guint *pod_counter)
{
	KubesimPodOwner o = {0};
	gchar deployment_uid[37];
	gchar rs_uid[37];
	gchar old_rs_uid[37];
	gchar hash[11];
	gchar old_hash[11];
	g_autofree gchar *rs_name = NULL;
	g_autofree gchar *old_rs_name = NULL;
	g_autofree gchar *image_id = NULL;
	gchar suffixes[8][6];
	guint i;

	g_return_if_fail(replicas <= G_N_ELEMENTS(suffixes));
	o.namespace_ = ns;
	o.app = app;
	o.image = &kubesim_images[g_rand_int_range(gen->rand, 0, G_N_ELEMENTS(kubesim_images))];
	o.port = g_rand_boolean(gen->rand) ? 8080 : 3000;
	o.created = KUBESIM_EPOCH + g_rand_int_range(gen->rand, 600, 86400 * 30);
	image_id = kubesim_workload_image_id(o.image->status);
	o.image_id = image_id;
	kubesim_random_uid(gen->rand, deployment_uid);
	kubesim_random_uid(gen->rand, rs_uid);
	kubesim_random_uid(gen->rand, old_rs_uid);
	kubesim_random_suffix(gen->rand, hash, 10);
	kubesim_random_suffix(gen->rand, old_hash, 10);
	rs_name = g_strdup_printf("%s-%s", app, hash);
	old_rs_name = g_strdup_printf("%s-%s", app, old_hash);
	o.rs_name = rs_name;
	o.rs_uid = rs_uid;
	o.hash = hash;
	kubesim_gen_set_app(gen, app, o.port, TRUE);

	kubesim_gen_write_app_config(gen, ns, app, o.created);
	kubesim_write_deployment(gen, &o, deployment_uid, replicas);
	kubesim_write_replicaset(gen, &o, old_rs_name, old_hash, old_rs_uid, deployment_uid, 0,
	                         replicas, 1, o.created);
	kubesim_write_replicaset(gen, &o, rs_name, hash, rs_uid, deployment_uid, replicas, replicas,
	                         2, o.created + 30);
	for (i = 0; i < replicas; i++) {
		gchar *suffix = suffixes[i];
		gchar uid[37];
		g_autofree gchar *name = NULL;
		gint64 created = o.created + 30 + g_rand_int_range(gen->rand, 0, 3600);
		guint j;

		/* the server would retry a generateName that is taken: so do we */
		do {
			kubesim_random_suffix(gen->rand, suffix, 5);
			for (j = 0; j < i && strcmp(suffixes[j], suffix) != 0; j++)
				;
		} while (j < i);
		kubesim_random_uid(gen->rand, uid);
		name = g_strdup_printf("%s-%s", rs_name, suffix);
		kubesim_write_pod(gen, &o, name, uid, created, FALSE, *pod_counter % 50 == 0);
		(*pod_counter)++;
	}
	kubesim_gen_write_service(gen, ns, app, app, o.port, service_type, o.created);
}

static void
kubesim_keep_object(GBytes *compact_json, gpointer user_data)
{
	GBytes **out = user_data;

	g_clear_pointer(out, g_bytes_unref);
	*out = g_bytes_ref(compact_json);
}

void
kubesim_new_pod_clear(KubesimNewPod *pod)
{
	g_clear_pointer(&pod->json, g_bytes_unref);
	if (pod->labels != NULL)
		g_string_free(g_steal_pointer(&pod->labels), TRUE);
}

void
kubesim_workload_new_pod(const KubesimPodTemplate *tmpl,
                         const gchar *name,
                         gint64 created,
                         gboolean pending,
                         gboolean odd,
                         GRand *rand,
                         KubesimNewPod *out)
{
	static const gchar placeholder[] = ",\"resourceVersion\":";
	KubesimGen gen = {0};
	KubesimPodOwner o = {0};
	KubesimImage custom = {0};
	g_autofree gchar *image_id = NULL;
	const gchar *rv;
	gsize len;
	guint i;

	g_return_if_fail(tmpl != NULL && tmpl->namespace_ != NULL && tmpl->app != NULL);
	g_return_if_fail(tmpl->image != NULL && name != NULL && rand != NULL && out != NULL);

	memset(out, 0, sizeof *out);
	kubesim_gen_init(&gen, rand, kubesim_keep_object, &out->json);
	gen.nodes = 30;
	gen.pod_ip = g_rand_int_range(rand, 0x200000, 0x3fffff);
	o.namespace_ = tmpl->namespace_;
	o.app = tmpl->app;
	o.port = tmpl->port;
	o.hash = tmpl->hash;
	o.rs_name = tmpl->rs_name;
	o.rs_uid = tmpl->rs_uid;
	o.created = created;
	for (i = 0; i < G_N_ELEMENTS(kubesim_images); i++) {
		if (g_strcmp0(kubesim_images[i].spec, tmpl->image) == 0)
			o.image = &kubesim_images[i];
	}
	if (o.image == NULL) {
		custom.spec = custom.status = tmpl->image;
		o.image = &custom;
	}
	image_id = kubesim_workload_image_id(o.image->status);
	o.image_id = image_id;
	kubesim_gen_set_app(&gen, o.app, o.port, FALSE);
	kubesim_random_uid(rand, out->uid);
	kubesim_write_pod(&gen, &o, name, out->uid, created, pending, odd);
	kubesim_gen_clear(&gen);

	/* the labels kubesim_append_template_meta() wrote, in the store's form */
	out->labels = g_string_new(NULL);
	g_string_append_len(out->labels, "app", 4);
	g_string_append_len(out->labels, o.app, (gssize)strlen(o.app) + 1);
	g_string_append_len(out->labels, "app.kubernetes.io/part-of\0shop", 31);
	if (o.hash != NULL) {
		g_string_append_len(out->labels, "pod-template-hash", 18);
		g_string_append_len(out->labels, o.hash, (gssize)strlen(o.hash) + 1);
	}
	/* names and the uid before it cannot hold a quote: the first match is the member */
	rv = g_bytes_get_data(out->json, &len);
	rv = kubesim_find(rv, len, placeholder);
	g_assert(rv != NULL);
	out->rv_off = (gsize)(rv - (const gchar *)g_bytes_get_data(out->json, NULL)) +
	              strlen(placeholder);
	out->rv_len = strlen("\"0\"");
}
