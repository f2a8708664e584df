/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <libsoup/soup.h>

G_BEGIN_DECLS

/*
 * What clients asked of the API, counted as an authorizer would see each request: by verb and
 * group/resource[/subresource] for resource requests ("list apps/deployments",
 * "get /pods/log"), by verb and path for the others ("get /apis"), and the names requests
 * for one object used (what RBAC's resourceNames restrict). A test compares these with the
 * RBAC rules a deployment grants.
 */
typedef struct _KubesimRequests KubesimRequests;

KubesimRequests *kubesim_requests_new(void);
void kubesim_requests_free(KubesimRequests *requests);
/* @group: "" for the core group; @subresource, @name: (nullable) */
void kubesim_requests_record_resource(KubesimRequests *requests,
                                      const gchar *verb,
                                      const gchar *group,
                                      const gchar *resource,
                                      const gchar *subresource,
                                      const gchar *name);
void kubesim_requests_record_path(KubesimRequests *requests, const gchar *verb, const gchar *path);
/* {"resources":{"<verb> <group>/<resource>[/<sub>]":N,...},"nonResourceURLs":{...},
 *  "resourceNames":{"<verb> <group>/<resource>[/<sub>]":["name",...],...}} */
gchar *kubesim_requests_to_json(KubesimRequests *requests);
void kubesim_requests_reset(KubesimRequests *requests);

/*
 * The request log (--request-log FILE): every API request as it arrived, one JSON object a line
 * ({"method", "path", "query", "http", "headers": [[name, value], ...]}), written and flushed
 * as each comes in, so that a test can read what a client sent (its exact query strings and
 * headers) and send the same requests elsewhere. Requests under /kubesim/ are not logged.
 */
gboolean kubesim_requests_open_log(KubesimRequests *requests, const gchar *path, GError **error);
void kubesim_requests_log(KubesimRequests *requests, SoupServerMessage *msg);

/* The RBAC verb of a request: get, list, watch, create, update, patch, delete or
 * deletecollection (what the API server's request info calls it). */
const gchar *kubesim_requests_verb(const gchar *method, gboolean named, gboolean watch);

G_END_DECLS
