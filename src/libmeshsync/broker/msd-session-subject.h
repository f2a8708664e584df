/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * Session ids are NATS subjects made of request fields (upstream's
 * `exec.<namespace>.<pod>.<container>.<id>`), and Meshery Server builds the same string to
 * subscribe, so every valid Kubernetes name must give upstream's id, dots in pod names
 * included. What would break the subject is encoded, reversibly:
 *
 * - the bytes `*`, `>`, `%`, the space, control characters and DEL become `%XX` (two
 *   upper-case hex digits), as does `.` in every field but the pod's;
 * - an empty field becomes a lone `%` (NATS refuses an empty token);
 * - everything else is kept.
 *
 * Namespaces and containers are DNS labels and request ids get their dots encoded, so an id
 * splits back unambiguously: the first token is the namespace, the last ones are the
 * container and the request id, and whatever lies between is the pod.
 */
void msd_session_subject_append_token(GString *subject, const gchar *field, gboolean keep_dots);

/* Decodes one field made by msd_session_subject_append_token(); NULL when @token is not such
 * an encoding. */
gchar *msd_session_subject_decode_token(const gchar *token, gboolean keep_dots);

/* `exec.<ns>.<pod>.<container>.<id>` */
gchar *msd_session_subject_exec(const gchar *ns,
                                const gchar *pod,
                                const gchar *container,
                                const gchar *id);
/* `logs.<ns>.<pod>.<container>`: no request id, so viewers of one container share it. */
gchar *msd_session_subject_logs(const gchar *ns, const gchar *pod, const gchar *container);

/* Splits an id made by the two functions above back into its fields (@id is NULL for a log
 * session); FALSE when @session_id is no such id. */
gboolean msd_session_subject_parse(
        const gchar *session_id, gchar **ns, gchar **pod, gchar **container, gchar **id);

G_END_DECLS
