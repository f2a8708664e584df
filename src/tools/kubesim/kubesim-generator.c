/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include <string.h>

#include "kubesim-workload.h"
#include "util/msd-json-string.h"

/*
 * Objects are written as literal JSON fragments into one reused buffer and copied out at their
 * exact size: building trees would cost ~14x the bytes and make 100,000 pods take minutes.
 */

/* 2025-06-01T08:00:00Z: a fixed origin, so that the same seed gives byte-identical objects. */
#define KUBESIM_EPOCH 1748764800

/* Characters Kubernetes uses for generated name suffixes (no vowels, no look-alikes). */
static const gchar kubesim_alnum[] = "bcdfghjklmnpqrstvwxz2456789";

static const gchar *const kubesim_apps[] = {
        "web",    "api",      "cart",   "checkout", "catalog", "auth",   "search",
        "orders", "payments", "worker", "frontend", "gateway", "ledger", "notifier",
};

static const gchar *const kubesim_images[] = {
        "nginx:1.27.0",
        "registry.example.com/shop/api:2.14.1",
        "ghcr.io/example/worker:v0.9.3",
        "docker.io/library/redis:7.2.5",
        "quay.io/example/gateway:1.3.0",
};

/* Exercises every escaping path of a JSON writer: quotes, backslashes, a control character,
 * non-ASCII text and an astral-plane character. */
static const gchar kubesim_odd_value[] =
        "Gr\xc3\xbc\xc3\x9f"
        "e \"quoted\" C:\\temp\\new \xe2\x9c\x93 tab\there bell\x01"
        " \xf0\x9f\x9a\x80 </script>";

typedef struct {
	GRand *rand;
	GString *buf;
	KubesimObjectSink sink;
	gpointer user_data;
	guint nodes;
	guint32 pod_ip;
	guint32 service_ip;
	guint node_port;
	guint lb_ip;
} KubesimGen;

/* What a Pod needs to know about its owners; the churn path has none. */
typedef struct {
	const gchar *namespace_;
	const gchar *app;
	const gchar *image;
	const gchar *hash;     /* (nullable) pod-template-hash */
	const gchar *rs_name;  /* (nullable) owning ReplicaSet */
	const gchar *rs_uid;   /* (nullable) */
	const gchar *image_id; /* sha256 hex of the image */
	gint64 created;
	guint port;
} KubesimPodOwner;

/* Names, hashes and IPs never need escaping; skipping the scan keeps the hot path short. */
static inline void
kubesim_append_plain(GString *s, const gchar *value)
{
	g_string_append_c(s, '"');
	g_string_append(s, value);
	g_string_append_c(s, '"');
}

static void
kubesim_append_uint(GString *s, guint64 value)
{
	gchar digits[24];
	guint n = sizeof digits;

	do {
		digits[--n] = (gchar)('0' + value % 10);
		value /= 10;
	} while (value != 0);
	g_string_append_len(s, digits + n, sizeof digits - n);
}

static void
kubesim_append_two(GString *s, guint value)
{
	g_string_append_c(s, (gchar)('0' + value / 10));
	g_string_append_c(s, (gchar)('0' + value % 10));
}

/* RFC 3339 in UTC without GDateTime: a pod carries a dozen timestamps and GDateTime formatting
 * would dominate the run time. Days to civil date after H. Hinnant's public-domain algorithm. */
static void
kubesim_append_time(GString *s, gint64 unix_seconds)
{
	gint64 days = unix_seconds / 86400;
	gint64 secs = unix_seconds % 86400;
	gint64 z = days + 719468;
	gint64 era = z / 146097;
	gint64 doe = z - era * 146097;
	gint64 yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	gint64 doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	gint64 mp = (5 * doy + 2) / 153;
	guint day = (guint)(doy - (153 * mp + 2) / 5 + 1);
	guint month = (guint)(mp < 10 ? mp + 3 : mp - 9);
	guint64 year = (guint64)(yoe + era * 400 + (month <= 2));

	g_string_append_c(s, '"');
	kubesim_append_uint(s, year);
	g_string_append_c(s, '-');
	kubesim_append_two(s, month);
	g_string_append_c(s, '-');
	kubesim_append_two(s, day);
	g_string_append_c(s, 'T');
	kubesim_append_two(s, (guint)(secs / 3600));
	g_string_append_c(s, ':');
	kubesim_append_two(s, (guint)(secs / 60 % 60));
	g_string_append_c(s, ':');
	kubesim_append_two(s, (guint)(secs % 60));
	g_string_append(s, "Z\"");
}

static void
kubesim_append_ipv4(GString *s, guint a, guint b, guint c, guint d)
{
	g_string_append_c(s, '"');
	kubesim_append_uint(s, a);
	g_string_append_c(s, '.');
	kubesim_append_uint(s, b);
	g_string_append_c(s, '.');
	kubesim_append_uint(s, c);
	g_string_append_c(s, '.');
	kubesim_append_uint(s, d);
	g_string_append_c(s, '"');
}

static void
kubesim_random_hex(GRand *rand, gchar *out, guint len)
{
	static const gchar hex[] = "0123456789abcdef";
	guint32 bits = 0;
	guint i;

	for (i = 0; i < len; i++) {
		if (i % 8 == 0)
			bits = g_rand_int(rand);
		out[i] = hex[bits & 0xf];
		bits >>= 4;
	}
	out[len] = '\0';
}

/* A version 4 UUID in text form; @out holds 37 bytes. */
static void
kubesim_random_uid(GRand *rand, gchar *out)
{
	gchar hex[33];

	kubesim_random_hex(rand, hex, 32);
	hex[12] = '4';
	hex[16] = "89ab"[g_rand_int_range(rand, 0, 4)];
	memcpy(out, hex, 8);
	out[8] = '-';
	memcpy(out + 9, hex + 8, 4);
	out[13] = '-';
	memcpy(out + 14, hex + 12, 4);
	out[18] = '-';
	memcpy(out + 19, hex + 16, 4);
	out[23] = '-';
	memcpy(out + 24, hex + 20, 12);
	out[36] = '\0';
}

static void
kubesim_random_suffix(GRand *rand, gchar *out, guint len)
{
	guint i;

	for (i = 0; i < len; i++)
		out[i] = kubesim_alnum[g_rand_int_range(rand, 0, sizeof kubesim_alnum - 1)];
	out[len] = '\0';
}

static void
kubesim_emit(KubesimGen *gen)
{
	g_autoptr(GBytes) bytes = g_bytes_new(gen->buf->str, gen->buf->len);

	gen->sink(bytes, gen->user_data);
	g_string_truncate(gen->buf, 0);
}

/* Opens an object and its metadata up to and including the uid; the caller continues inside
 * metadata with a leading comma. */
static void
kubesim_begin_object(GString *s,
                     const gchar *api_version,
                     const gchar *kind,
                     const gchar *namespace_,
                     const gchar *name,
                     const gchar *uid,
                     gint64 created)
{
	g_string_append(s, "{\"apiVersion\":");
	kubesim_append_plain(s, api_version);
	g_string_append(s, ",\"kind\":");
	kubesim_append_plain(s, kind);
	g_string_append(s, ",\"metadata\":{\"name\":");
	msd_json_string_append(s, name, -1, MSD_JSON_STRING_PLAIN);
	if (namespace_ != NULL) {
		g_string_append(s, ",\"namespace\":");
		kubesim_append_plain(s, namespace_);
	}
	g_string_append(s, ",\"uid\":");
	kubesim_append_plain(s, uid);
	g_string_append(s, ",\"creationTimestamp\":");
	kubesim_append_time(s, created);
}

static void
kubesim_append_owner(GString *s,
                     const gchar *api_version,
                     const gchar *kind,
                     const gchar *name,
                     const gchar *uid)
{
	g_string_append(s, ",\"ownerReferences\":[{\"apiVersion\":");
	kubesim_append_plain(s, api_version);
	g_string_append(s, ",\"kind\":");
	kubesim_append_plain(s, kind);
	g_string_append(s, ",\"name\":");
	kubesim_append_plain(s, name);
	g_string_append(s, ",\"uid\":");
	kubesim_append_plain(s, uid);
	g_string_append(s, ",\"controller\":true,\"blockOwnerDeletion\":true}]");
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
	kubesim_append_plain(s, o->image);
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
		g_string_append(s, ",\"readOnly\":true,\"mountPath\":"
		                   "\"/var/run/secrets/kubernetes.io/serviceaccount\"}");
	}
	g_string_append(s, "],\"livenessProbe\":");
	kubesim_append_probe(s, "/healthz", o->port, 10);
	g_string_append(s, ",\"readinessProbe\":");
	kubesim_append_probe(s, "/readyz", o->port, 5);
	g_string_append(
	        s,
	        ",\"terminationMessagePath\":\"/dev/termination-log\","
	        "\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":\"IfNotPresent\"},"
	        "{\"name\":\"log-shipper\",\"image\":\"cr.fluentbit.io/fluent/fluent-bit:3.0.7\","
	        "\"ports\":[{\"name\":\"fluent\",\"containerPort\":2020,\"protocol\":\"TCP\"}],"
	        "\"env\":[{\"name\":\"NODE_NAME\",\"valueFrom\":{\"fieldRef\":{\"apiVersion\":"
	        "\"v1\",\"fieldPath\":\"spec.nodeName\"}}}],\"resources\":{\"limits\":"
	        "{\"memory\":\"64Mi\"},\"requests\":{\"cpu\":\"10m\",\"memory\":\"32Mi\"}},"
	        "\"volumeMounts\":[{\"name\":\"config\",\"readOnly\":true,\"mountPath\":"
	        "\"/fluent-bit/etc\"}");
	if (api_volume != NULL) {
		g_string_append(s, ",{\"name\":");
		kubesim_append_plain(s, api_volume);
		g_string_append(s, ",\"readOnly\":true,\"mountPath\":"
		                   "\"/var/run/secrets/kubernetes.io/serviceaccount\"}");
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

static void
kubesim_append_condition(GString *s, const gchar *type, gint64 when, gboolean probe_time)
{
	g_string_append(s, "{\"type\":");
	kubesim_append_plain(s, type);
	g_string_append(s, ",\"status\":\"True\"");
	if (probe_time)
		g_string_append(s, ",\"lastProbeTime\":null");
	g_string_append(s, ",\"lastTransitionTime\":");
	kubesim_append_time(s, when);
	g_string_append_c(s, '}');
}

static void
kubesim_append_container_status(GString *s,
                                GRand *rand,
                                const gchar *name,
                                const gchar *image,
                                const gchar *image_id,
                                gint64 started)
{
	gchar container_id[65];

	kubesim_random_hex(rand, container_id, 64);
	g_string_append(s, "{\"name\":");
	kubesim_append_plain(s, name);
	g_string_append(s, ",\"state\":{\"running\":{\"startedAt\":");
	kubesim_append_time(s, started);
	g_string_append(s, "}},\"lastState\":{},\"ready\":true,\"restartCount\":0,\"image\":");
	kubesim_append_plain(s, image);
	g_string_append(s, ",\"imageID\":\"");
	g_string_append(s, image);
	g_string_append(s, "@sha256:");
	g_string_append(s, image_id);
	g_string_append(s, "\",\"containerID\":\"containerd://");
	g_string_append(s, container_id);
	g_string_append(s, "\",\"started\":true}");
}

static void
kubesim_write_pod(KubesimGen *gen, const KubesimPodOwner *o, const gchar *name, gboolean odd)
{
	GString *s = gen->buf;
	gchar uid[37];
	gchar api_volume[32];
	gchar suffix[6];
	gchar node_name[32];
	guint node = (guint)g_rand_int_range(gen->rand, 0, (gint32)gen->nodes);
	guint32 ip = gen->pod_ip++;
	gint64 created = o->created + g_rand_int_range(gen->rand, 0, 3600);

	kubesim_random_uid(gen->rand, uid);
	kubesim_random_suffix(gen->rand, suffix, 5);
	g_snprintf(api_volume, sizeof api_volume, "kube-api-access-%s", suffix);
	g_snprintf(node_name, sizeof node_name, "worker-%04u", node);

	kubesim_begin_object(s, "v1", "Pod", o->namespace_, name, uid, created);
	if (o->rs_name != NULL) {
		g_string_append(s, ",\"generateName\":\"");
		g_string_append(s, o->rs_name);
		g_string_append(s, "-\"");
	}
	g_string_append(s, ",\"labels\":{\"app\":");
	kubesim_append_plain(s, o->app);
	if (o->hash != NULL) {
		g_string_append(s, ",\"pod-template-hash\":");
		kubesim_append_plain(s, o->hash);
	}
	g_string_append(s, ",\"app.kubernetes.io/part-of\":\"shop\"},\"annotations\":{"
	                   "\"prometheus.io/scrape\":\"true\",\"prometheus.io/port\":\"9090\","
	                   "\"kubectl.kubernetes.io/default-container\":");
	kubesim_append_plain(s, o->app);
	if (odd) {
		g_string_append(s, ",\"example.com/note\":");
		msd_json_string_append(s, kubesim_odd_value, -1, MSD_JSON_STRING_PLAIN);
	}
	g_string_append_c(s, '}');
	if (o->rs_name != NULL)
		kubesim_append_owner(s, "apps/v1", "ReplicaSet", o->rs_name, o->rs_uid);
	g_string_append(s, "},\"spec\":");
	kubesim_append_pod_spec(s, o, api_volume, node_name);

	g_string_append(s, ",\"status\":{\"phase\":\"Running\",\"conditions\":[");
	kubesim_append_condition(s, "PodReadyToStartContainers", created + 3, TRUE);
	g_string_append_c(s, ',');
	kubesim_append_condition(s, "Initialized", created + 1, TRUE);
	g_string_append_c(s, ',');
	kubesim_append_condition(s, "Ready", created + 9, TRUE);
	g_string_append_c(s, ',');
	kubesim_append_condition(s, "ContainersReady", created + 9, TRUE);
	g_string_append_c(s, ',');
	kubesim_append_condition(s, "PodScheduled", created, TRUE);
	g_string_append(s, "],\"hostIP\":");
	kubesim_append_ipv4(s, 10, 0, node >> 8 & 0xff, node & 0xff);
	g_string_append(s, ",\"hostIPs\":[{\"ip\":");
	kubesim_append_ipv4(s, 10, 0, node >> 8 & 0xff, node & 0xff);
	g_string_append(s, "}],\"podIP\":");
	kubesim_append_ipv4(s, 10, 64 + (ip >> 16 & 0x3f), ip >> 8 & 0xff, ip & 0xff);
	g_string_append(s, ",\"podIPs\":[{\"ip\":");
	kubesim_append_ipv4(s, 10, 64 + (ip >> 16 & 0x3f), ip >> 8 & 0xff, ip & 0xff);
	g_string_append(s, "}],\"startTime\":");
	kubesim_append_time(s, created);
	g_string_append(s, ",\"containerStatuses\":[");
	kubesim_append_container_status(s, gen->rand, o->app, o->image, o->image_id, created + 3);
	g_string_append_c(s, ',');
	kubesim_append_container_status(
	        s, gen->rand, "log-shipper", "cr.fluentbit.io/fluent/fluent-bit:3.0.7",
	        "2a3b5c8d0e1f4a6b7c9d0e2f3a5b6c8d9e0f1a3b4c6d7e9f0a2b3c5d6e8f9a0b", created + 4);
	g_string_append(s, "],\"qosClass\":\"Burstable\"}}");
	kubesim_emit(gen);
}

static void
kubesim_write_namespace(KubesimGen *gen, const gchar *name)
{
	GString *s = gen->buf;
	gchar uid[37];

	kubesim_random_uid(gen->rand, uid);
	kubesim_begin_object(s, "v1", "Namespace", NULL, name, uid, KUBESIM_EPOCH);
	g_string_append(s, ",\"labels\":{\"kubernetes.io/metadata.name\":");
	kubesim_append_plain(s, name);
	g_string_append(s, "}},\"spec\":{\"finalizers\":[\"kubernetes\"]},"
	                   "\"status\":{\"phase\":\"Active\"}}");
	kubesim_emit(gen);
}

static void
kubesim_write_configmaps(KubesimGen *gen, const gchar *ns, gboolean with_binary)
{
	GString *s = gen->buf;
	gchar uid[37];

	kubesim_random_uid(gen->rand, uid);
	kubesim_begin_object(s, "v1", "ConfigMap", ns, "kube-root-ca.crt", uid, KUBESIM_EPOCH);
	g_string_append(s,
	                ",\"annotations\":{\"kubernetes.io/description\":\"Contains a CA bundle "
	                "that can be used to verify the kube-apiserver when using internal "
	                "endpoints such as the internal service IP or kubernetes.default.svc.\"}},"
	                "\"data\":{\"ca.crt\":\"-----BEGIN CERTIFICATE-----\\n"
	                "MIIBdzCCAR2gAwIBAgIBADAKBggqhkjOPQQDAjAjMSEwHwYDVQQDDBhrM3Mtc2Vy\\n"
	                "dmVyLWNhQDE3MTcyMzQ1NjcwHhcNMjQwNjAxMDgwMDAwWhcNMzQwNTMwMDgwMDAw\\n"
	                "-----END CERTIFICATE-----\\n\"}}");
	kubesim_emit(gen);

	if (!with_binary)
		return;
	kubesim_random_uid(gen->rand, uid);
	kubesim_begin_object(s, "v1", "ConfigMap", ns, "static-assets", uid, KUBESIM_EPOCH + 60);
	g_string_append(s, ",\"labels\":{\"app.kubernetes.io/part-of\":\"shop\"},\"annotations\":"
	                   "{\"example.com/owner\":");
	msd_json_string_append(s, kubesim_odd_value, -1, MSD_JSON_STRING_PLAIN);
	g_string_append(s,
	                "}},\"data\":{\"README\":\"Binary assets for the storefront.\\n\"},"
	                "\"binaryData\":{\"favicon.ico\":\"AAABAAEAEBAAAAEAIABoBAAAFgAAACgAAAAQ"
	                "AAAAIAAAAAEAIAAAAAAAAAQAAAAAAAAAAAAAAAAAAAAAAAA=\",\"logo.png\":"
	                "\"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGA"
	                "WjR9awAAAABJRU5ErkJggg==\"}}");
	kubesim_emit(gen);
}

static void
kubesim_write_token_secret(KubesimGen *gen, const gchar *ns)
{
	GString *s = gen->buf;
	gchar uid[37];
	gchar sa_uid[37];
	gchar suffix[6];
	g_autofree gchar *name = NULL;
	g_autofree gchar *ns_b64 = g_base64_encode((const guchar *)ns, strlen(ns));

	kubesim_random_uid(gen->rand, uid);
	kubesim_random_uid(gen->rand, sa_uid);
	kubesim_random_suffix(gen->rand, suffix, 5);
	name = g_strdup_printf("default-token-%s", suffix);
	kubesim_begin_object(s, "v1", "Secret", ns, name, uid, KUBESIM_EPOCH);
	g_string_append(s, ",\"annotations\":{\"kubernetes.io/service-account.name\":\"default\","
	                   "\"kubernetes.io/service-account.uid\":");
	kubesim_append_plain(s, sa_uid);
	g_string_append(s,
	                "}},\"type\":\"kubernetes.io/service-account-token\",\"data\":{"
	                "\"ca.crt\":\"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJkekNDQVIyZ0F3SUJB"
	                "Z0lCQURBS0JnZ3Foa2pPUFFRREFqQWpNU0V3SHdZRFZRUUREQmhyTTNNdGMyVnkKLS0tLS1FTk"
	                "QgQ0VSVElGSUNBVEUtLS0tLQo=\",\"namespace\":");
	kubesim_append_plain(s, ns_b64);
	g_string_append(
	        s, ",\"token\":\"ZXlKaGJHY2lPaUpTVXpJMU5pSXNJbXRwWkNJNklrTTBNMlpSIn0u"
	           "ZXlKcGMzTWlPaUpyZFdKbGNtNWxkR1Z6TDNObGNuWnBZMlZoWTJOdmRXNTBJbjAuc2lnbmF0dXJl"
	           "\"}}");
	kubesim_emit(gen);
}

static void
kubesim_write_app_config(KubesimGen *gen, const gchar *ns, const gchar *app, gint64 created)
{
	GString *s = gen->buf;
	gchar uid[37];
	g_autofree gchar *name = g_strdup_printf("%s-config", app);

	kubesim_random_uid(gen->rand, uid);
	kubesim_begin_object(s, "v1", "ConfigMap", ns, name, uid, created);
	g_string_append(s, ",\"labels\":{\"app\":");
	kubesim_append_plain(s, app);
	g_string_append(s, "}},\"data\":{\"feature-flags\":\"checkout-v2=true,dark-mode=false\","
	                   "\"app.yaml\":\"server:\\n  port: 8080\\n  timeout: 30s\\nlog:\\n  "
	                   "level: info\\n  format: json\\n\"}}");
	kubesim_emit(gen);

	kubesim_random_uid(gen->rand, uid);
	g_free(name);
	name = g_strdup_printf("%s-secrets", app);
	kubesim_begin_object(s, "v1", "Secret", ns, name, uid, created);
	g_string_append(s, ",\"labels\":{\"app\":");
	kubesim_append_plain(s, app);
	g_string_append(s, "}},\"type\":\"Opaque\",\"data\":{\"db-password\":\"czNjcjN0LXBhc3M=\","
	                   "\"api-key\":\"QUtJQUlPU0ZPRE5ON0VYQU1QTEU=\"}}");
	kubesim_emit(gen);
}

/* Writes the ClusterIP of the next service; 10.96.0.1 and .10 belong to kubernetes and DNS. */
static void
kubesim_append_cluster_ip(KubesimGen *gen, GString *s, gboolean headless)
{
	guint32 n = gen->service_ip++;

	if (headless) {
		g_string_append(s, "\"clusterIP\":\"None\",\"clusterIPs\":[\"None\"]");
		return;
	}
	g_string_append(s, "\"clusterIP\":");
	kubesim_append_ipv4(s, 10, 96 + (n >> 16 & 0xf), n >> 8 & 0xff, n & 0xff);
	g_string_append(s, ",\"clusterIPs\":[");
	kubesim_append_ipv4(s, 10, 96 + (n >> 16 & 0xf), n >> 8 & 0xff, n & 0xff);
	g_string_append_c(s, ']');
}

typedef enum {
	KUBESIM_SVC_CLUSTER_IP,
	KUBESIM_SVC_NODE_PORT,
	KUBESIM_SVC_LOAD_BALANCER,
	KUBESIM_SVC_HEADLESS,
	KUBESIM_SVC_EXTERNAL_NAME,
	KUBESIM_SVC_LAST,
} KubesimServiceType;

static void
kubesim_write_service(KubesimGen *gen,
                      const gchar *ns,
                      const gchar *name,
                      const gchar *app,
                      guint target_port,
                      KubesimServiceType type,
                      gint64 created)
{
	GString *s = gen->buf;
	gchar uid[37];
	static const gchar *const type_names[] = {
	        "ClusterIP", "NodePort", "LoadBalancer", "ClusterIP", "ExternalName",
	};

	kubesim_random_uid(gen->rand, uid);
	kubesim_begin_object(s, "v1", "Service", ns, name, uid, created);
	if (app != NULL) {
		g_string_append(s, ",\"labels\":{\"app\":");
		kubesim_append_plain(s, app);
		g_string_append_c(s, '}');
	}
	if (type == KUBESIM_SVC_LOAD_BALANCER) {
		g_string_append(s,
		                ",\"annotations\":{\"service.beta.kubernetes.io/aws-load-balancer-"
		                "type\":\"nlb\"},\"finalizers\":[\"service.kubernetes.io/"
		                "load-balancer-cleanup\"]");
	}
	g_string_append(s, "},\"spec\":{");
	if (type == KUBESIM_SVC_EXTERNAL_NAME) {
		g_string_append(s, "\"type\":\"ExternalName\",\"externalName\":\"");
		g_string_append(s, name);
		g_string_append(s, ".db.example.com\",\"sessionAffinity\":\"None\"},"
		                   "\"status\":{\"loadBalancer\":{}}}");
		kubesim_emit(gen);
		return;
	}
	g_string_append(s, "\"ports\":[{\"name\":\"http\",\"protocol\":\"TCP\",\"port\":80,"
	                   "\"targetPort\":");
	kubesim_append_uint(s, target_port);
	if (type == KUBESIM_SVC_NODE_PORT || type == KUBESIM_SVC_LOAD_BALANCER) {
		g_string_append(s, ",\"nodePort\":");
		kubesim_append_uint(s, 30000 + gen->node_port++ % 2768);
	}
	g_string_append(s, "}],\"selector\":{\"app\":");
	kubesim_append_plain(s, app);
	g_string_append(s, "},");
	kubesim_append_cluster_ip(gen, s, type == KUBESIM_SVC_HEADLESS);
	g_string_append(s, ",\"type\":");
	kubesim_append_plain(s, type_names[type]);
	g_string_append(s, ",\"sessionAffinity\":\"None\"");
	if (type == KUBESIM_SVC_NODE_PORT || type == KUBESIM_SVC_LOAD_BALANCER)
		g_string_append(s, ",\"externalTrafficPolicy\":\"Cluster\"");
	if (type == KUBESIM_SVC_LOAD_BALANCER)
		g_string_append(s, ",\"allocateLoadBalancerNodePorts\":true");
	g_string_append(s, ",\"ipFamilies\":[\"IPv4\"],\"ipFamilyPolicy\":\"SingleStack\","
	                   "\"internalTrafficPolicy\":\"Cluster\"},\"status\":{\"loadBalancer\":{");
	if (type == KUBESIM_SVC_LOAD_BALANCER) {
		guint n = gen->lb_ip++;

		/* Loopback on purpose: MeshSync probes a LoadBalancer's address with a TCP
		 * connect, and a simulated cluster must never send it off the machine. */
		g_string_append(s, "\"ingress\":[{\"ip\":");
		kubesim_append_ipv4(s, 127, 0, 113 + (n >> 8 & 0x3), n & 0xff);
		g_string_append(s, ",\"ipMode\":\"VIP\"}]");
	}
	g_string_append(s, "}}}");
	kubesim_emit(gen);
}

static void
kubesim_write_system_service(KubesimGen *gen, const gchar *ns, const gchar *name, const gchar *ip)
{
	GString *s = gen->buf;
	gchar uid[37];
	gboolean dns = g_str_equal(name, "kube-dns");

	kubesim_random_uid(gen->rand, uid);
	kubesim_begin_object(s, "v1", "Service", ns, name, uid, KUBESIM_EPOCH);
	if (dns)
		g_string_append(
		        s, ",\"labels\":{\"k8s-app\":\"kube-dns\","
		           "\"kubernetes.io/name\":\"CoreDNS\"}},\"spec\":{\"ports\":["
		           "{\"name\":\"dns\",\"protocol\":\"UDP\",\"port\":53,\"targetPort\":53},"
		           "{\"name\":\"dns-tcp\",\"protocol\":\"TCP\",\"port\":53,"
		           "\"targetPort\":53}],\"selector\":{\"k8s-app\":\"kube-dns\"},");
	else
		g_string_append(s, ",\"labels\":{\"component\":\"apiserver\",\"provider\":"
		                   "\"kubernetes\"}},\"spec\":{\"ports\":[{\"name\":\"https\","
		                   "\"protocol\":\"TCP\",\"port\":443,\"targetPort\":6443}],");
	g_string_append(s, "\"clusterIP\":\"");
	g_string_append(s, ip);
	g_string_append(s, "\",\"clusterIPs\":[\"");
	g_string_append(s, ip);
	g_string_append(s,
	                "\"],\"type\":\"ClusterIP\",\"sessionAffinity\":\"None\","
	                "\"ipFamilies\":[\"IPv4\"],\"ipFamilyPolicy\":\"SingleStack\","
	                "\"internalTrafficPolicy\":\"Cluster\"},\"status\":{\"loadBalancer\":{}}}");
	kubesim_emit(gen);
}

static void
kubesim_write_deployment(KubesimGen *gen,
                         const KubesimPodOwner *o,
                         const gchar *uid,
                         guint replicas)
{
	GString *s = gen->buf;

	kubesim_begin_object(s, "apps/v1", "Deployment", o->namespace_, o->app, uid, o->created);
	g_string_append(s, ",\"generation\":2,\"labels\":{\"app\":");
	kubesim_append_plain(s, o->app);
	g_string_append(s, "},\"annotations\":{\"deployment.kubernetes.io/revision\":\"2\","
	                   "\"example.com/description\":");
	msd_json_string_append(s, kubesim_odd_value, -1, MSD_JSON_STRING_PLAIN);
	g_string_append(s, "}},\"spec\":{\"replicas\":");
	kubesim_append_uint(s, replicas);
	g_string_append(s, ",\"selector\":{\"matchLabels\":{\"app\":");
	kubesim_append_plain(s, o->app);
	g_string_append(s, "}},\"template\":{\"metadata\":{\"labels\":{\"app\":");
	kubesim_append_plain(s, o->app);
	g_string_append(s, "}},\"spec\":");
	kubesim_append_pod_spec(s, o, NULL, NULL);
	g_string_append(s, "},\"strategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":"
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
	kubesim_emit(gen);
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
                         guint revision)
{
	GString *s = gen->buf;

	kubesim_begin_object(s, "apps/v1", "ReplicaSet", o->namespace_, name, uid, o->created);
	g_string_append(s, ",\"generation\":1,\"labels\":{\"app\":");
	kubesim_append_plain(s, o->app);
	g_string_append(s, ",\"pod-template-hash\":");
	kubesim_append_plain(s, hash);
	g_string_append(s, "},\"annotations\":{\"deployment.kubernetes.io/desired-replicas\":\"");
	kubesim_append_uint(s, desired);
	g_string_append(s, "\",\"deployment.kubernetes.io/max-replicas\":\"");
	kubesim_append_uint(s, desired + (desired + 3) / 4);
	g_string_append(s, "\",\"deployment.kubernetes.io/revision\":\"");
	kubesim_append_uint(s, revision);
	g_string_append(s, "\"}");
	kubesim_append_owner(s, "apps/v1", "Deployment", o->app, deployment_uid);
	g_string_append(s, "},\"spec\":{\"replicas\":");
	kubesim_append_uint(s, replicas);
	g_string_append(s, ",\"selector\":{\"matchLabels\":{\"app\":");
	kubesim_append_plain(s, o->app);
	g_string_append(s, ",\"pod-template-hash\":");
	kubesim_append_plain(s, hash);
	g_string_append(s, "}},\"template\":{\"metadata\":{\"labels\":{\"app\":");
	kubesim_append_plain(s, o->app);
	g_string_append(s, ",\"pod-template-hash\":");
	kubesim_append_plain(s, hash);
	g_string_append(s, "}},\"spec\":");
	kubesim_append_pod_spec(s, o, NULL, NULL);
	g_string_append(s, "}},\"status\":{\"replicas\":");
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
	kubesim_emit(gen);
}

/* One Deployment with its current ReplicaSet, a scaled-down previous one, its pods, config,
 * secret and a Service whose type rotates through @service_type. */
static void
kubesim_write_app(KubesimGen *gen,
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
	guint i;

	o.namespace_ = ns;
	o.app = app;
	o.image = kubesim_images[g_rand_int_range(gen->rand, 0, G_N_ELEMENTS(kubesim_images))];
	o.port = g_rand_boolean(gen->rand) ? 8080 : 3000;
	o.created = KUBESIM_EPOCH + g_rand_int_range(gen->rand, 600, 86400 * 30);
	image_id = g_compute_checksum_for_string(G_CHECKSUM_SHA256, o.image, -1);
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

	kubesim_write_app_config(gen, ns, app, o.created);
	kubesim_write_deployment(gen, &o, deployment_uid, replicas);
	kubesim_write_replicaset(gen, &o, old_rs_name, old_hash, old_rs_uid, deployment_uid, 0,
	                         replicas, 1);
	kubesim_write_replicaset(gen, &o, rs_name, hash, rs_uid, deployment_uid, replicas, replicas,
	                         2);
	for (i = 0; i < replicas; i++) {
		gchar suffix[6];
		g_autofree gchar *name = NULL;

		kubesim_random_suffix(gen->rand, suffix, 5);
		name = g_strdup_printf("%s-%s", rs_name, suffix);
		kubesim_write_pod(gen, &o, name, *pod_counter % 50 == 0);
		(*pod_counter)++;
	}
	kubesim_write_service(gen, ns, app, app, o.port, service_type, o.created);
}

void
kubesim_workload_generate(
        guint namespaces, guint pods, guint32 seed, KubesimObjectSink sink, gpointer user_data)
{
	KubesimGen gen = {0};
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	guint pod_counter = 0;
	guint app_counter = 0;
	guint i;

	g_return_if_fail(sink != NULL);

	gen.rand = g_rand_new_with_seed(seed);
	gen.buf = g_string_sized_new(16384);
	gen.sink = sink;
	gen.user_data = user_data;
	/* About 30 pods per node, as in the upstream scalability tests. */
	gen.nodes = MAX(3, pods / 30);
	gen.service_ip = 100;

	/* Workload namespaces: default plus the team namespaces; kube-system holds only the
	 * cluster's own objects so that per-namespace pod counts stay predictable. */
	g_ptr_array_add(names, g_strdup("default"));
	for (i = 1; i <= namespaces; i++)
		g_ptr_array_add(names, g_strdup_printf("team-%u", i));

	kubesim_write_namespace(&gen, "default");
	kubesim_write_namespace(&gen, "kube-system");
	for (i = 1; i < names->len; i++)
		kubesim_write_namespace(&gen, g_ptr_array_index(names, i));

	kubesim_write_configmaps(&gen, "kube-system", FALSE);
	kubesim_write_token_secret(&gen, "kube-system");
	kubesim_write_system_service(&gen, "kube-system", "kube-dns", "10.96.0.10");
	kubesim_write_system_service(&gen, "default", "kubernetes", "10.96.0.1");

	for (i = 0; i < names->len; i++) {
		const gchar *ns = g_ptr_array_index(names, i);
		guint share = pods / names->len + (i < pods % names->len ? 1 : 0);
		guint done = 0;
		guint k = 0;
		g_autofree gchar *external = g_strdup_printf("%s-db", ns);

		kubesim_write_configmaps(&gen, ns, TRUE);
		kubesim_write_token_secret(&gen, ns);
		kubesim_write_service(&gen, ns, external, NULL, 0, KUBESIM_SVC_EXTERNAL_NAME,
		                      KUBESIM_EPOCH + 300);
		while (done < share) {
			guint replicas = (guint)g_rand_int_range(gen.rand, 1, 9);
			g_autofree gchar *app = NULL;

			replicas = MIN(replicas, share - done);
			app = g_strdup_printf("%s-%u", kubesim_apps[k % G_N_ELEMENTS(kubesim_apps)],
			                      k);
			kubesim_write_app(&gen, ns, app, replicas,
			                  app_counter % KUBESIM_SVC_EXTERNAL_NAME, &pod_counter);
			done += replicas;
			k++;
			app_counter++;
		}
	}

	g_string_free(gen.buf, TRUE);
	g_rand_free(gen.rand);
}

static void
kubesim_keep_object(GBytes *compact_json, gpointer user_data)
{
	GBytes **out = user_data;

	g_clear_pointer(out, g_bytes_unref);
	*out = g_bytes_ref(compact_json);
}

GBytes *
kubesim_workload_new_pod(const gchar *namespace_, guint64 index, GRand *rand)
{
	KubesimGen gen = {0};
	KubesimPodOwner o = {0};
	g_autoptr(GBytes) pod = NULL;
	g_autofree gchar *name = g_strdup_printf("churn-%" G_GUINT64_FORMAT, index);
	g_autofree gchar *image_id = NULL;

	g_return_val_if_fail(namespace_ != NULL, NULL);
	g_return_val_if_fail(rand != NULL, NULL);

	gen.rand = rand;
	gen.buf = g_string_sized_new(8192);
	gen.sink = kubesim_keep_object;
	gen.user_data = &pod;
	gen.nodes = 30;
	gen.pod_ip = (guint32)(0x200000 + index % 0x1fffff);
	o.namespace_ = namespace_;
	o.app = "churn";
	o.image = kubesim_images[index % G_N_ELEMENTS(kubesim_images)];
	o.port = 8080;
	o.created = KUBESIM_EPOCH + 86400 * 31 + (gint64)(index % 86400);
	image_id = g_compute_checksum_for_string(G_CHECKSUM_SHA256, o.image, -1);
	o.image_id = image_id;
	kubesim_write_pod(&gen, &o, name, index % 50 == 0);
	g_string_free(gen.buf, TRUE);
	return g_steal_pointer(&pod);
}
