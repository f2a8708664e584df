/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * metadata.managedFields of generated objects, as the API server records them: one entry per
 * manager and operation (and subresource), members in the order the server writes them
 * (manager, operation, apiVersion, time, fieldsType, fieldsV1, subresource), and fieldsV1 sets
 * with their keys sorted: "." first, then f:<field>, k:{<list key>} and v:<value>.
 */

/* Starts an entry; @first says whether it is the first of the array (no comma). The caller
 * writes the fieldsV1 object next, then calls kubesim_fields_end(). */
void kubesim_fields_begin(GString *s,
                          gboolean first,
                          const gchar *manager,
                          const gchar *operation,
                          const gchar *api_version,
                          gint64 time);
/* @subresource: (nullable): e.g. "status" */
void kubesim_fields_end(GString *s, const gchar *subresource);

/*
 * The fieldsV1 of a workload pod spec (the "f:spec" value): two containers, config and secret
 * volumes, as a Deployment's manifest sets them with the server's defaults. @pod adds what
 * the server defaults only on pods (enableServiceLinks).
 */
void kubesim_fields_append_pod_spec(GString *s, const gchar *app, guint port, gboolean pod);

/*
 * The kubelet's fieldsV1 of a pod's status. @ready: the Ready and ContainersReady conditions
 * are True; when they are not, the kubelet also owns their reason and message.
 */
void kubesim_fields_append_pod_status(GString *s, const gchar *pod_ip, gboolean ready);

/* What the simulated kubelet looks for in a stored pod to update its entry in place. */
#define KUBESIM_FIELDS_KUBELET_ENTRY \
	"{\"manager\":\"kubelet\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\""
/* The start of a condition's set, up to where reason and message go when it is not True. */
#define KUBESIM_FIELDS_CONDITION(type)                                            \
	"\"k:{\\\"type\\\":\\\"" type "\\\"}\":{\".\":{},\"f:lastProbeTime\":{}," \
	"\"f:lastTransitionTime\":{},"
#define KUBESIM_FIELDS_REASON_MESSAGE "\"f:message\":{},\"f:reason\":{},"

G_END_DECLS
