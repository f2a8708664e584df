/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "kubesim-workload.h"

G_BEGIN_DECLS

/*
 * The workload generator's own declarations, shared by kubesim-generator.c (the cluster's
 * layout and its simple kinds) and kubesim-gen-apps.c (Deployments, their ReplicaSets and
 * Pods, which must agree on one pod template).
 *
 * Objects are written as literal JSON fragments into one reused buffer and copied out at their
 * exact size: building trees would cost ~14x the bytes and make 100,000 pods take minutes.
 * Members are in the order the API server writes them (Go struct order; map keys sorted), and
 * metadata carries a resourceVersion placeholder where the server puts it, so that the store
 * fills it in place.
 */

/* 2025-06-01T08:00:00Z: a fixed origin, so that the same seed gives byte-identical objects. */
#define KUBESIM_EPOCH 1748764800

typedef struct {
	const gchar *spec;   /* as the manifest writes it */
	const gchar *status; /* as the kubelet reports it, fully qualified */
} KubesimImage;

typedef struct {
	GRand *rand;
	GString *buf;
	GString *manifest;        /* a last-applied-configuration before it is escaped */
	GString *template_fields; /* the current app's pod template spec, fieldsV1 */
	GString *pod_fields;      /* the same with what only pods get */
	KubesimObjectSink sink;
	gpointer user_data;
	guint nodes;
	guint32 pod_ip;
	guint32 service_ip;
	guint node_port;
	guint lb_ip;
} KubesimGen;

/* What a Pod needs to know about its app and owners. */
typedef struct {
	const gchar *namespace_;
	const gchar *app;
	const KubesimImage *image;
	const gchar *image_id; /* status imageID: repo@sha256:... */
	const gchar *hash;     /* (nullable) pod-template-hash */
	const gchar *rs_name;  /* (nullable) owning ReplicaSet */
	const gchar *rs_uid;   /* (nullable) */
	gint64 created;
	guint port;
} KubesimPodOwner;

typedef enum {
	KUBESIM_SVC_CLUSTER_IP,
	KUBESIM_SVC_NODE_PORT,
	KUBESIM_SVC_LOAD_BALANCER,
	KUBESIM_SVC_HEADLESS,
	KUBESIM_SVC_EXTERNAL_NAME,
	KUBESIM_SVC_LAST,
} KubesimServiceType;

/* Exercises every escaping path of a JSON writer: quotes, backslashes, a control character,
 * non-ASCII text, an astral-plane character and what Go escapes for HTML. */
extern const gchar kubesim_gen_odd_value[];

void kubesim_gen_init(KubesimGen *gen, GRand *rand, KubesimObjectSink sink, gpointer user_data);
void kubesim_gen_clear(KubesimGen *gen);
/* Hands gen->buf to the sink and empties it. */
void kubesim_gen_emit(KubesimGen *gen);
/* Opens an object and its metadata up to and including creationTimestamp; the caller continues
 * inside metadata with a leading comma. @generation 0: the kind has none. */
void kubesim_gen_begin_object(GString *s,
                              const gchar *kind,
                              const gchar *api_version,
                              const gchar *namespace_,
                              const gchar *name,
                              const gchar *generate_name,
                              const gchar *uid,
                              guint generation,
                              gint64 created);
void kubesim_gen_append_owner(GString *s,
                              const gchar *api_version,
                              const gchar *kind,
                              const gchar *name,
                              const gchar *uid);
/* The fieldsV1 of an ownerReferences list the owner's controller wrote. */
void kubesim_gen_append_owner_fields(GString *s, const gchar *owner_uid);
/* The annotation kubectl apply leaves, from the manifest in gen->manifest (then emptied). */
void kubesim_gen_append_last_applied(KubesimGen *gen, GString *s);
/* The metadata of a manifest: annotations (without last-applied), labels, name, namespace. */
void kubesim_gen_manifest_begin(GString *m,
                                const gchar *api_version,
                                const gchar *kind,
                                const gchar *ns,
                                const gchar *name,
                                const gchar *app,
                                const gchar *annotations);

/* kubesim-generator.c: what an app has besides its workload */
void
kubesim_gen_write_app_config(KubesimGen *gen, const gchar *ns, const gchar *app, gint64 created);
void kubesim_gen_write_service(KubesimGen *gen,
                               const gchar *ns,
                               const gchar *name,
                               const gchar *app,
                               guint target_port,
                               KubesimServiceType type,
                               gint64 created);

/* kubesim-gen-apps.c: one Deployment with its current ReplicaSet, a scaled-down previous one,
 * its pods, config, secret and a Service of @service_type. */
void kubesim_gen_write_app(KubesimGen *gen,
                           const gchar *ns,
                           const gchar *app,
                           guint replicas,
                           KubesimServiceType service_type,
                           guint *pod_counter);

G_END_DECLS
