/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

#include "util/msd-json-tokens.h"

G_BEGIN_DECLS

#define MSD_REDACTED_VALUE "[REDACTED]"

/* Whether MESHSYNC_REDACT_SECRETS asks for redaction: "1", or "true" in any case. Read on every
 * call; an engine calls it once, into its MsdConvertState, so the event path never reads the
 * environment. */
gboolean msd_secret_redact_enabled(void);

/* Redact the JSON text of a Secret's data map: same keys (sorted, Go-escaped), every value
 * "[REDACTED]". Empty input gives ""; input that is not a JSON object comes back unchanged. */
gchar *msd_secret_redact(const gchar *json, gssize len);

/* The same from a parsed value: writes the redacted object when token @idx is an object and
 * returns TRUE, else writes nothing and returns FALSE. */
gboolean msd_secret_redact_write(GString *out, const MsdJsonTokens *doc, gint idx);

G_END_DECLS
