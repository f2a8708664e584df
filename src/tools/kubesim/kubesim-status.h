/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * A refused API request, as a Kubernetes Status body: not a GError, because it is the answer
 * the client gets (code, reason, details), not a failure of kubesim.
 */
typedef struct {
	guint code;
	gchar *reason;
	gchar *message;
	gchar *name;  /* details.name */
	gchar *group; /* details.group */
	gchar *kind;  /* details.kind: the resource (plural) */
	/* details.causes[0]: @cause_reason defaults to FieldValueInvalid and @cause_message to
	 * the message when only @cause_field is set */
	gchar *cause_field;
	gchar *cause_reason;
	gchar *cause_message;
	guint retry_after; /* details.retryAfterSeconds; 0 leaves it out */
	/* details even when it holds nothing ("details":{}), as errors made with a
	 * GroupResource write it (a 404 of the router, a 403) */
	gboolean details_always;
} KubesimStatus;

KubesimStatus *kubesim_status_new(guint code, const gchar *reason, const gchar *format, ...)
        G_GNUC_PRINTF(3, 4);
/* A Status whose details are written even when empty. */
KubesimStatus *kubesim_status_new_details(guint code, const gchar *reason, const gchar *message);
/* Sets the details of @status; returns it for chaining. */
KubesimStatus *kubesim_status_details(KubesimStatus *status,
                                      const gchar *group,
                                      const gchar *kind,
                                      const gchar *name);
void kubesim_status_free(KubesimStatus *status);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(KubesimStatus, kubesim_status_free)

/* The compact JSON of the Status. */
gchar *kubesim_status_to_json(const KubesimStatus *status);

/* Common statuses. */
KubesimStatus *
kubesim_status_not_found(const gchar *group, const gchar *resource, const gchar *name);
KubesimStatus *kubesim_status_invalid(const gchar *group,
                                      const gchar *kind,
                                      const gchar *name,
                                      const gchar *format,
                                      ...) G_GNUC_PRINTF(4, 5);

/*
 * 504 Timeout for a read at a resourceVersion the server has not reached, as the watch cache
 * words it ("Too large resource version", cause ResourceVersionTooLarge). @retry_after: the
 * details.retryAfterSeconds (1 from the watch cache, 0 from etcd).
 */
KubesimStatus *kubesim_status_new_too_large_rv(guint64 wanted, guint64 current, guint retry_after);

/* 422 Invalid for a bad list or watch query parameter @field, as the API server words it. */
KubesimStatus *kubesim_status_new_invalid_list_options(const gchar *field, const gchar *message);

G_END_DECLS
