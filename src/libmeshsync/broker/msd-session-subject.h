/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * Session ids are NATS subjects made of request fields (upstream's
 * `exec.<namespace>.<pod>.<container>.<id>`), so a field holding a dot, a wildcard or a
 * space would change the subject's shape, and an empty field gives an empty token that NATS
 * refuses. Each field is therefore one token encoded reversibly:
 *
 * - the bytes `.` `*` `>` `%`, the space, control characters and DEL become `%XX` (two
 *   upper-case hex digits);
 * - an empty field becomes a lone `%` (which no non-empty field can encode to);
 * - everything else, so every valid Kubernetes name and UUID, is kept as it is: ids stay
 *   upstream's for every name a cluster can hold.
 */
void msd_session_subject_append_token(GString *subject, const gchar *field);

/* Decodes one token made by msd_session_subject_append_token(); NULL when @token is not
 * such an encoding. */
gchar *msd_session_subject_decode_token(const gchar *token);

/* `exec.<ns>.<pod>.<container>.<id>` */
gchar *msd_session_subject_exec(const gchar *ns,
                                const gchar *pod,
                                const gchar *container,
                                const gchar *id);
/* `logs.<ns>.<pod>.<container>`: no request id, so viewers of one container share it. */
gchar *msd_session_subject_logs(const gchar *ns, const gchar *pod, const gchar *container);

G_END_DECLS
