/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include <string.h>

#include "kubesim-fields.h"
#include "kubesim-gen.h"
#include "kubesim-write.h"
#include "util/msd-json-string.h"

/* The cluster's layout (namespaces, system objects, apps spread over the namespaces) and the
 * kinds that are not a workload: Namespaces, ConfigMaps, Secrets and Services. */

static const gchar *const kubesim_apps[] = {
        "web",    "api",      "cart",   "checkout", "catalog", "auth",   "search",
        "orders", "payments", "worker", "frontend", "gateway", "ledger", "notifier",
};

const gchar kubesim_gen_odd_value[] = "Gr\xc3\xbc\xc3\x9f"
                                      "e \"quoted\" C:\\temp\\new \xe2\x9c\x93 tab\there bell\x01"
                                      " \xf0\x9f\x9a\x80 </script>";

void
kubesim_gen_init(KubesimGen *gen, GRand *rand, KubesimObjectSink sink, gpointer user_data)
{
	gen->rand = rand;
	gen->buf = g_string_sized_new(16384);
	gen->manifest = g_string_sized_new(4096);
	gen->template_fields = g_string_sized_new(4096);
	gen->pod_fields = g_string_sized_new(4096);
	gen->sink = sink;
	gen->user_data = user_data;
}

void
kubesim_gen_clear(KubesimGen *gen)
{
	g_string_free(gen->buf, TRUE);
	g_string_free(gen->manifest, TRUE);
	g_string_free(gen->template_fields, TRUE);
	g_string_free(gen->pod_fields, TRUE);
}

void
kubesim_gen_emit(KubesimGen *gen)
{
	g_autoptr(GBytes) bytes = g_bytes_new(gen->buf->str, gen->buf->len);

	gen->sink(bytes, gen->user_data);
	g_string_truncate(gen->buf, 0);
}

void
kubesim_gen_begin_object(GString *s,
                         const gchar *kind,
                         const gchar *api_version,
                         const gchar *namespace_,
                         const gchar *name,
                         const gchar *generate_name,
                         const gchar *uid,
                         guint generation,
                         gint64 created)
{
	g_string_append(s, "{\"kind\":");
	kubesim_append_plain(s, kind);
	g_string_append(s, ",\"apiVersion\":");
	kubesim_append_plain(s, api_version);
	g_string_append(s, ",\"metadata\":{\"name\":");
	kubesim_append_plain(s, name);
	if (generate_name != NULL) {
		g_string_append(s, ",\"generateName\":\"");
		g_string_append(s, generate_name);
		g_string_append(s, "-\"");
	}
	if (namespace_ != NULL) {
		g_string_append(s, ",\"namespace\":");
		kubesim_append_plain(s, namespace_);
	}
	g_string_append(s, ",\"uid\":");
	kubesim_append_plain(s, uid);
	/* the store writes the real value here */
	g_string_append(s, ",\"resourceVersion\":\"0\"");
	if (generation > 0) {
		g_string_append(s, ",\"generation\":");
		kubesim_append_uint(s, generation);
	}
	g_string_append(s, ",\"creationTimestamp\":");
	kubesim_append_time(s, created);
}

void
kubesim_gen_append_owner(GString *s,
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

void
kubesim_gen_append_owner_fields(GString *s, const gchar *owner_uid)
{
	g_string_append(s, "\"f:ownerReferences\":{\".\":{},\"k:{\\\"uid\\\":\\\"");
	g_string_append(s, owner_uid);
	g_string_append(s, "\\\"}\":{}}");
}

void
kubesim_gen_append_last_applied(KubesimGen *gen, GString *s)
{
	g_string_append_c(gen->manifest, '\n');
	g_string_append(s, "\"kubectl.kubernetes.io/last-applied-configuration\":");
	msd_json_string_append(s, gen->manifest->str, (gssize)gen->manifest->len,
	                       MSD_JSON_STRING_GO);
	g_string_truncate(gen->manifest, 0);
}

void
kubesim_gen_manifest_begin(GString *m,
                           const gchar *api_version,
                           const gchar *kind,
                           const gchar *ns,
                           const gchar *name,
                           const gchar *app,
                           const gchar *annotations)
{
	g_string_append(m, "{\"apiVersion\":");
	kubesim_append_plain(m, api_version);
	g_string_append(m, ",\"kind\":");
	kubesim_append_plain(m, kind);
	g_string_append(m, ",\"metadata\":{\"annotations\":{");
	if (annotations != NULL)
		g_string_append(m, annotations);
	g_string_append(m, "}");
	if (app != NULL) {
		g_string_append(m, ",\"labels\":{\"app\":");
		kubesim_append_plain(m, app);
		g_string_append_c(m, '}');
	}
	g_string_append(m, ",\"name\":");
	kubesim_append_plain(m, name);
	g_string_append(m, ",\"namespace\":");
	kubesim_append_plain(m, ns);
	g_string_append(m, "}");
}

static void
kubesim_write_namespace(KubesimGen *gen, const gchar *name, gboolean system)
{
	GString *s = gen->buf;
	gchar uid[37];

	kubesim_random_uid(gen->rand, uid);
	kubesim_gen_begin_object(s, "Namespace", "v1", NULL, name, NULL, uid, 0, KUBESIM_EPOCH);
	g_string_append(s, ",\"labels\":{\"kubernetes.io/metadata.name\":");
	kubesim_append_plain(s, name);
	g_string_append(s, "},\"managedFields\":[");
	kubesim_fields_begin(s, TRUE, system ? "kube-apiserver" : "kubectl-create", "Update", "v1",
	                     KUBESIM_EPOCH);
	g_string_append(s, "{\"f:metadata\":{\"f:labels\":{\".\":{},"
	                   "\"f:kubernetes.io/metadata.name\":{}}}}");
	kubesim_fields_end(s, NULL);
	g_string_append(s, "]},\"spec\":{\"finalizers\":[\"kubernetes\"]},"
	                   "\"status\":{\"phase\":\"Active\"}}");
	kubesim_gen_emit(gen);
}

static void
kubesim_write_configmaps(KubesimGen *gen, const gchar *ns, gboolean with_binary)
{
	GString *s = gen->buf;
	gchar uid[37];

	kubesim_random_uid(gen->rand, uid);
	kubesim_gen_begin_object(s, "ConfigMap", "v1", ns, "kube-root-ca.crt", NULL, uid, 0,
	                         KUBESIM_EPOCH);
	g_string_append(s,
	                ",\"annotations\":{\"kubernetes.io/description\":\"Contains a CA bundle "
	                "that can be used to verify the kube-apiserver when using internal "
	                "endpoints such as the internal service IP or kubernetes.default.svc. No "
	                "other usage is guaranteed across distributions of Kubernetes clusters.\"},"
	                "\"managedFields\":[");
	kubesim_fields_begin(s, TRUE, "kube-controller-manager", "Update", "v1", KUBESIM_EPOCH);
	g_string_append(s, "{\"f:data\":{\".\":{},\"f:ca.crt\":{}},\"f:metadata\":{"
	                   "\"f:annotations\":{\".\":{},\"f:kubernetes.io/description\":{}}}}");
	kubesim_fields_end(s, NULL);
	g_string_append(s, "]},\"data\":{\"ca.crt\":\"-----BEGIN CERTIFICATE-----\\n"
	                   "MIIBdzCCAR2gAwIBAgIBADAKBggqhkjOPQQDAjAjMSEwHwYDVQQDDBhrM3Mtc2Vy\\n"
	                   "dmVyLWNhQDE3MTcyMzQ1NjcwHhcNMjQwNjAxMDgwMDAwWhcNMzQwNTMwMDgwMDAw\\n"
	                   "-----END CERTIFICATE-----\\n\"}}");
	kubesim_gen_emit(gen);

	if (!with_binary)
		return;
	/* applied server-side: an Apply entry, which owns no "." and leaves no annotation */
	kubesim_random_uid(gen->rand, uid);
	kubesim_gen_begin_object(s, "ConfigMap", "v1", ns, "static-assets", NULL, uid, 0,
	                         KUBESIM_EPOCH + 60);
	g_string_append(s, ",\"labels\":{\"app.kubernetes.io/part-of\":\"shop\"},\"annotations\":"
	                   "{\"example.com/owner\":");
	msd_json_string_append(s, kubesim_gen_odd_value, -1, MSD_JSON_STRING_GO);
	g_string_append(s, "},\"managedFields\":[");
	kubesim_fields_begin(s, TRUE, "kubectl", "Apply", "v1", KUBESIM_EPOCH + 60);
	g_string_append(s, "{\"f:binaryData\":{\"f:favicon.ico\":{},\"f:logo.png\":{}},\"f:data\":"
	                   "{\"f:README\":{}},\"f:metadata\":{\"f:annotations\":{"
	                   "\"f:example.com/owner\":{}},\"f:labels\":{"
	                   "\"f:app.kubernetes.io/part-of\":{}}}}");
	kubesim_fields_end(s, NULL);
	g_string_append(s,
	                "]},\"data\":{\"README\":\"Binary assets for the storefront.\\n\"},"
	                "\"binaryData\":{\"favicon.ico\":\"AAABAAEAEBAAAAEAIABoBAAAFgAAACgAAAAQ"
	                "AAAAIAAAAAEAIAAAAAAAAAQAAAAAAAAAAAAAAAAAAAAAAAA=\",\"logo.png\":"
	                "\"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGA"
	                "WjR9awAAAABJRU5ErkJggg==\"}}");
	kubesim_gen_emit(gen);
}

static void
kubesim_write_service_account(KubesimGen *gen, const gchar *ns)
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

	/* The namespace's default ServiceAccount, which the service-account controller creates
	 * with the namespace and which names its legacy token Secret. */
	kubesim_gen_begin_object(s, "ServiceAccount", "v1", ns, "default", NULL, sa_uid, 0,
	                         KUBESIM_EPOCH);
	g_string_append(s, ",\"managedFields\":[");
	kubesim_fields_begin(s, TRUE, "kube-controller-manager", "Update", "v1", KUBESIM_EPOCH);
	g_string_append(s, "{\"f:secrets\":{\".\":{},\"k:{\\\"name\\\":\\\"");
	g_string_append(s, name);
	g_string_append(s, "\\\"}\":{}}}");
	kubesim_fields_end(s, NULL);
	g_string_append(s, "]},\"secrets\":[{\"name\":");
	kubesim_append_plain(s, name);
	g_string_append(s, "}]}");
	kubesim_gen_emit(gen);

	kubesim_gen_begin_object(s, "Secret", "v1", ns, name, NULL, uid, 0, KUBESIM_EPOCH);
	g_string_append(s, ",\"annotations\":{\"kubernetes.io/service-account.name\":\"default\","
	                   "\"kubernetes.io/service-account.uid\":");
	kubesim_append_plain(s, sa_uid);
	g_string_append(s, "},\"managedFields\":[");
	kubesim_fields_begin(s, TRUE, "kube-controller-manager", "Update", "v1", KUBESIM_EPOCH);
	g_string_append(s,
	                "{\"f:data\":{\".\":{},\"f:ca.crt\":{},\"f:namespace\":{},\"f:token\":{}},"
	                "\"f:metadata\":{\"f:annotations\":{\".\":{},"
	                "\"f:kubernetes.io/service-account.name\":{},"
	                "\"f:kubernetes.io/service-account.uid\":{}}},\"f:type\":{}}");
	kubesim_fields_end(s, NULL);
	g_string_append(s,
	                "]},\"data\":{"
	                "\"ca.crt\":\"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJkekNDQVIyZ0F3SUJB"
	                "Z0lCQURBS0JnZ3Foa2pPUFFRREFqQWpNU0V3SHdZRFZRUUREQmhyTTNNdGMyVnkKLS0tLS1FTk"
	                "QgQ0VSVElGSUNBVEUtLS0tLQo=\",\"namespace\":");
	kubesim_append_plain(s, ns_b64);
	g_string_append(
	        s, ",\"token\":\"ZXlKaGJHY2lPaUpTVXpJMU5pSXNJbXRwWkNJNklrTTBNMlpSIn0u"
	           "ZXlKcGMzTWlPaUpyZFdKbGNtNWxkR1Z6TDNObGNuWnBZMlZoWTJOdmRXNTBJbjAuc2lnbmF0dXJl"
	           "\"},\"type\":\"kubernetes.io/service-account-token\"}");
	kubesim_gen_emit(gen);
}

#define APP_CONFIG_YAML \
	"server:\\n  port: 8080\\n  timeout: 30s\\nlog:\\n  level: info\\n  format: json\\n"
#define APP_FEATURE_FLAGS "checkout-v2=true,dark-mode=false"

void
kubesim_gen_write_app_config(KubesimGen *gen, const gchar *ns, const gchar *app, gint64 created)
{
	GString *s = gen->buf;
	gchar uid[37];
	g_autofree gchar *name = g_strdup_printf("%s-config", app);

	/* kubectl apply: its manifest, keys sorted as Go writes a map */
	g_string_append(gen->manifest,
	                "{\"apiVersion\":\"v1\",\"data\":{\"app.yaml\":\"" APP_CONFIG_YAML
	                "\",\"feature-flags\":\"" APP_FEATURE_FLAGS "\"},"
	                "\"kind\":\"ConfigMap\",\"metadata\":{\"annotations\":{},"
	                "\"labels\":{\"app\":");
	kubesim_append_plain(gen->manifest, app);
	g_string_append(gen->manifest, "},\"name\":");
	kubesim_append_plain(gen->manifest, name);
	g_string_append(gen->manifest, ",\"namespace\":");
	kubesim_append_plain(gen->manifest, ns);
	g_string_append(gen->manifest, "}}");

	kubesim_random_uid(gen->rand, uid);
	kubesim_gen_begin_object(s, "ConfigMap", "v1", ns, name, NULL, uid, 0, created);
	g_string_append(s, ",\"labels\":{\"app\":");
	kubesim_append_plain(s, app);
	g_string_append(s, "},\"annotations\":{");
	kubesim_gen_append_last_applied(gen, s);
	g_string_append(s, "},\"managedFields\":[");
	kubesim_fields_begin(s, TRUE, "kubectl-client-side-apply", "Update", "v1", created);
	g_string_append(s, "{\"f:data\":{\".\":{},\"f:app.yaml\":{},\"f:feature-flags\":{}},"
	                   "\"f:metadata\":{\"f:annotations\":{\".\":{},"
	                   "\"f:kubectl.kubernetes.io/last-applied-configuration\":{}},"
	                   "\"f:labels\":{\".\":{},\"f:app\":{}}}}");
	kubesim_fields_end(s, NULL);
	g_string_append(s, "]},\"data\":{\"app.yaml\":\"" APP_CONFIG_YAML
	                   "\",\"feature-flags\":\"" APP_FEATURE_FLAGS "\"}}");
	kubesim_gen_emit(gen);

	/* kubectl create secret, then kubectl label */
	kubesim_random_uid(gen->rand, uid);
	g_free(name);
	name = g_strdup_printf("%s-secrets", app);
	kubesim_gen_begin_object(s, "Secret", "v1", ns, name, NULL, uid, 0, created);
	g_string_append(s, ",\"labels\":{\"app\":");
	kubesim_append_plain(s, app);
	g_string_append(s, "},\"managedFields\":[");
	kubesim_fields_begin(s, TRUE, "kubectl-create", "Update", "v1", created);
	g_string_append(s, "{\"f:data\":{\".\":{},\"f:api-key\":{},\"f:db-password\":{}},"
	                   "\"f:type\":{}}");
	kubesim_fields_end(s, NULL);
	kubesim_fields_begin(s, FALSE, "kubectl-label", "Update", "v1", created + 5);
	g_string_append(s, "{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:app\":{}}}}");
	kubesim_fields_end(s, NULL);
	g_string_append(s, "]},\"data\":{\"api-key\":\"QUtJQUlPU0ZPRE5ON0VYQU1QTEU=\","
	                   "\"db-password\":\"czNjcjN0LXBhc3M=\"},\"type\":\"Opaque\"}");
	kubesim_gen_emit(gen);
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

#define LB_TYPE_ANNOTATION "service.beta.kubernetes.io/aws-load-balancer-type"
#define LB_FINALIZER       "service.kubernetes.io/load-balancer-cleanup"

/* The Service's manifest, for its last-applied-configuration. */
static void
kubesim_manifest_service(GString *m,
                         const gchar *ns,
                         const gchar *name,
                         const gchar *app,
                         guint target_port,
                         KubesimServiceType type)
{
	kubesim_gen_manifest_begin(
	        m, "v1", "Service", ns, name, app,
	        type == KUBESIM_SVC_LOAD_BALANCER ? "\"" LB_TYPE_ANNOTATION "\":\"nlb\"" : NULL);
	if (type == KUBESIM_SVC_EXTERNAL_NAME) {
		g_string_append(m, ",\"spec\":{\"externalName\":\"");
		g_string_append(m, name);
		g_string_append(m, ".db.example.com\",\"type\":\"ExternalName\"}}");
		return;
	}
	g_string_append(m, ",\"spec\":{");
	if (type == KUBESIM_SVC_HEADLESS)
		g_string_append(m, "\"clusterIP\":\"None\",");
	g_string_append(m, "\"ports\":[{\"name\":\"http\",\"port\":80,\"targetPort\":");
	kubesim_append_uint(m, target_port);
	g_string_append(m, "}],\"selector\":{\"app\":");
	kubesim_append_plain(m, app);
	g_string_append(m, "}");
	if (type == KUBESIM_SVC_NODE_PORT)
		g_string_append(m, ",\"type\":\"NodePort\"");
	else if (type == KUBESIM_SVC_LOAD_BALANCER)
		g_string_append(m, ",\"type\":\"LoadBalancer\"");
	g_string_append(m, "}}");
}

/* What kubectl's client-side apply owns of that Service, defaults included. */
static void
kubesim_append_service_fields(GString *s, gboolean has_app, KubesimServiceType type)
{
	g_string_append(s, "{\"f:metadata\":{\"f:annotations\":{\".\":{},"
	                   "\"f:kubectl.kubernetes.io/last-applied-configuration\":{}");
	if (type == KUBESIM_SVC_LOAD_BALANCER)
		g_string_append(s, ",\"f:" LB_TYPE_ANNOTATION "\":{}");
	g_string_append_c(s, '}');
	if (has_app)
		g_string_append(s, ",\"f:labels\":{\".\":{},\"f:app\":{}}");
	g_string_append(s, "},\"f:spec\":{");
	if (type == KUBESIM_SVC_EXTERNAL_NAME) {
		g_string_append(s,
		                "\"f:externalName\":{},\"f:sessionAffinity\":{},\"f:type\":{}}}");
		return;
	}
	if (type == KUBESIM_SVC_LOAD_BALANCER)
		g_string_append(s, "\"f:allocateLoadBalancerNodePorts\":{},");
	if (type == KUBESIM_SVC_HEADLESS)
		g_string_append(s, "\"f:clusterIP\":{},");
	if (type == KUBESIM_SVC_NODE_PORT || type == KUBESIM_SVC_LOAD_BALANCER)
		g_string_append(s, "\"f:externalTrafficPolicy\":{},");
	g_string_append(s, "\"f:internalTrafficPolicy\":{},\"f:ports\":{\".\":{},"
	                   "\"k:{\\\"port\\\":80,\\\"protocol\\\":\\\"TCP\\\"}\":{\".\":{},"
	                   "\"f:name\":{},\"f:port\":{},\"f:protocol\":{},\"f:targetPort\":{}}},"
	                   "\"f:selector\":{},\"f:sessionAffinity\":{},\"f:type\":{}}}");
}

void
kubesim_gen_write_service(KubesimGen *gen,
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

	kubesim_manifest_service(gen->manifest, ns, name, app, target_port, type);
	kubesim_random_uid(gen->rand, uid);
	kubesim_gen_begin_object(s, "Service", "v1", ns, name, NULL, uid, 0, created);
	if (app != NULL) {
		g_string_append(s, ",\"labels\":{\"app\":");
		kubesim_append_plain(s, app);
		g_string_append_c(s, '}');
	}
	g_string_append(s, ",\"annotations\":{");
	kubesim_gen_append_last_applied(gen, s);
	if (type == KUBESIM_SVC_LOAD_BALANCER)
		g_string_append(s, ",\"" LB_TYPE_ANNOTATION "\":\"nlb\"},\"finalizers\":"
		                   "[\"" LB_FINALIZER "\"]");
	else
		g_string_append_c(s, '}');
	g_string_append(s, ",\"managedFields\":[");
	kubesim_fields_begin(s, TRUE, "kubectl-client-side-apply", "Update", "v1", created);
	kubesim_append_service_fields(s, app != NULL, type);
	kubesim_fields_end(s, NULL);
	if (type == KUBESIM_SVC_LOAD_BALANCER) {
		/* the service controller: its finalizer, then the address it provisioned */
		kubesim_fields_begin(s, FALSE, "kube-controller-manager", "Update", "v1",
		                     created + 1);
		g_string_append(s, "{\"f:metadata\":{\"f:finalizers\":{\".\":{},"
		                   "\"v:\\\"" LB_FINALIZER "\\\"\":{}}}}");
		kubesim_fields_end(s, NULL);
		kubesim_fields_begin(s, FALSE, "kube-controller-manager", "Update", "v1",
		                     created + 45);
		g_string_append(s, "{\"f:status\":{\"f:loadBalancer\":{\"f:ingress\":{}}}}");
		kubesim_fields_end(s, "status");
	}
	g_string_append(s, "]},\"spec\":{");
	if (type == KUBESIM_SVC_EXTERNAL_NAME) {
		g_string_append(s, "\"type\":\"ExternalName\",\"externalName\":\"");
		g_string_append(s, name);
		g_string_append(s, ".db.example.com\",\"sessionAffinity\":\"None\"},"
		                   "\"status\":{\"loadBalancer\":{}}}");
		kubesim_gen_emit(gen);
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
	g_string_append(s, ",\"ipFamilies\":[\"IPv4\"],\"ipFamilyPolicy\":\"SingleStack\"");
	if (type == KUBESIM_SVC_LOAD_BALANCER)
		g_string_append(s, ",\"allocateLoadBalancerNodePorts\":true");
	g_string_append(s,
	                ",\"internalTrafficPolicy\":\"Cluster\"},\"status\":{\"loadBalancer\":{");
	if (type == KUBESIM_SVC_LOAD_BALANCER) {
		guint n = gen->lb_ip++;

		/* Loopback on purpose: MeshSync probes a LoadBalancer's address with a TCP
		 * connect, and a simulated cluster must never send it off the machine. */
		g_string_append(s, "\"ingress\":[{\"ip\":");
		kubesim_append_ipv4(s, 127, 0, 113 + (n >> 8 & 0x3), n & 0xff);
		g_string_append(s, ",\"ipMode\":\"VIP\"}]");
	}
	g_string_append(s, "}}}");
	kubesim_gen_emit(gen);
}

static void
kubesim_write_system_service(KubesimGen *gen, const gchar *ns, const gchar *name, const gchar *ip)
{
	GString *s = gen->buf;
	gchar uid[37];
	gboolean dns = g_str_equal(name, "kube-dns");

	kubesim_random_uid(gen->rand, uid);
	kubesim_gen_begin_object(s, "Service", "v1", ns, name, NULL, uid, 0, KUBESIM_EPOCH);
	if (dns) {
		g_string_append(s, ",\"labels\":{\"k8s-app\":\"kube-dns\",\"kubernetes.io/name\":"
		                   "\"CoreDNS\"},\"managedFields\":[");
		kubesim_fields_begin(s, TRUE, "kubeadm", "Update", "v1", KUBESIM_EPOCH);
		g_string_append(
		        s, "{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:k8s-app\":{},"
		           "\"f:kubernetes.io/name\":{}}},\"f:spec\":{\"f:clusterIP\":{},"
		           "\"f:internalTrafficPolicy\":{},\"f:ports\":{\".\":{},"
		           "\"k:{\\\"port\\\":53,\\\"protocol\\\":\\\"TCP\\\"}\":{\".\":{},"
		           "\"f:name\":{},\"f:port\":{},\"f:protocol\":{},\"f:targetPort\":{}},"
		           "\"k:{\\\"port\\\":53,\\\"protocol\\\":\\\"UDP\\\"}\":{\".\":{},"
		           "\"f:name\":{},\"f:port\":{},\"f:protocol\":{},\"f:targetPort\":{}}},"
		           "\"f:selector\":{},\"f:sessionAffinity\":{},\"f:type\":{}}}");
		kubesim_fields_end(s, NULL);
		g_string_append(
		        s, "]},\"spec\":{\"ports\":["
		           "{\"name\":\"dns\",\"protocol\":\"UDP\",\"port\":53,\"targetPort\":53},"
		           "{\"name\":\"dns-tcp\",\"protocol\":\"TCP\",\"port\":53,"
		           "\"targetPort\":53}],\"selector\":{\"k8s-app\":\"kube-dns\"},");
	} else {
		g_string_append(s, ",\"labels\":{\"component\":\"apiserver\",\"provider\":"
		                   "\"kubernetes\"},\"managedFields\":[");
		kubesim_fields_begin(s, TRUE, "kube-apiserver", "Update", "v1", KUBESIM_EPOCH);
		g_string_append(s,
		                "{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:component\":{},"
		                "\"f:provider\":{}}},\"f:spec\":{\"f:clusterIP\":{},"
		                "\"f:internalTrafficPolicy\":{},\"f:ipFamilyPolicy\":{},"
		                "\"f:ports\":{\".\":{},\"k:{\\\"port\\\":443,\\\"protocol\\\":"
		                "\\\"TCP\\\"}\":{\".\":{},\"f:name\":{},\"f:port\":{},"
		                "\"f:protocol\":{},\"f:targetPort\":{}}},\"f:sessionAffinity\":{},"
		                "\"f:type\":{}}}");
		kubesim_fields_end(s, NULL);
		g_string_append(s,
		                "]},\"spec\":{\"ports\":[{\"name\":\"https\",\"protocol\":\"TCP\","
		                "\"port\":443,\"targetPort\":6443}],");
	}
	g_string_append(s, "\"clusterIP\":\"");
	g_string_append(s, ip);
	g_string_append(s, "\",\"clusterIPs\":[\"");
	g_string_append(s, ip);
	g_string_append(s,
	                "\"],\"type\":\"ClusterIP\",\"sessionAffinity\":\"None\","
	                "\"ipFamilies\":[\"IPv4\"],\"ipFamilyPolicy\":\"SingleStack\","
	                "\"internalTrafficPolicy\":\"Cluster\"},\"status\":{\"loadBalancer\":{}}}");
	kubesim_gen_emit(gen);
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

	kubesim_gen_init(&gen, g_rand_new_with_seed(seed), sink, user_data);
	/* About 30 pods per node, as in the upstream scalability tests. */
	gen.nodes = MAX(3, pods / 30);
	gen.service_ip = 100;

	/* Workload namespaces: default plus the team namespaces; kube-system holds only the
	 * cluster's own objects so that per-namespace pod counts stay predictable. */
	g_ptr_array_add(names, g_strdup("default"));
	for (i = 1; i <= namespaces; i++)
		g_ptr_array_add(names, g_strdup_printf("team-%u", i));

	kubesim_write_namespace(&gen, "default", TRUE);
	kubesim_write_namespace(&gen, "kube-system", TRUE);
	for (i = 1; i < names->len; i++)
		kubesim_write_namespace(&gen, g_ptr_array_index(names, i), FALSE);

	kubesim_write_configmaps(&gen, "kube-system", FALSE);
	kubesim_write_service_account(&gen, "kube-system");
	kubesim_write_system_service(&gen, "kube-system", "kube-dns", "10.96.0.10");
	kubesim_write_system_service(&gen, "default", "kubernetes", "10.96.0.1");

	for (i = 0; i < names->len; i++) {
		const gchar *ns = g_ptr_array_index(names, i);
		guint share = pods / names->len + (i < pods % names->len ? 1 : 0);
		guint done = 0;
		guint k = 0;
		g_autofree gchar *external = g_strdup_printf("%s-db", ns);

		kubesim_write_configmaps(&gen, ns, TRUE);
		kubesim_write_service_account(&gen, ns);
		kubesim_gen_write_service(&gen, ns, external, NULL, 0, KUBESIM_SVC_EXTERNAL_NAME,
		                          KUBESIM_EPOCH + 300);
		while (done < share) {
			guint replicas = (guint)g_rand_int_range(gen.rand, 1, 9);
			g_autofree gchar *app = NULL;

			replicas = MIN(replicas, share - done);
			app = g_strdup_printf("%s-%u", kubesim_apps[k % G_N_ELEMENTS(kubesim_apps)],
			                      k);
			kubesim_gen_write_app(&gen, ns, app, replicas,
			                      app_counter % KUBESIM_SVC_EXTERNAL_NAME,
			                      &pod_counter);
			done += replicas;
			k++;
			app_counter++;
		}
	}

	g_rand_free(gen.rand);
	kubesim_gen_clear(&gen);
}
