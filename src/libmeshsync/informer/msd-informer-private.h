/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include "informer/msd-informer.h"

G_BEGIN_DECLS

/* Knobs for tests, so they never wait for production delays. Call before starting. */

/* Backoff starts at @initial_ms and doubles up to @max_ms; a 403/404 on the resource type is
 * retried every @denied_retry_ms. */
void
msd_informer_set_delays(MsdInformer *self, guint initial_ms, guint max_ms, guint denied_retry_ms);
void msd_informer_set_page_size(MsdInformer *self, guint page_size);
/* Whether to try a streaming list (sendInitialEvents) before a paginated one. */
void msd_informer_set_watch_list(MsdInformer *self, gboolean enabled);
void msd_informer_set_max_line(MsdInformer *self, gsize max_line);
/* The largest object kept (8 MiB by default); larger ones are skipped and counted. */
void msd_informer_set_max_object(MsdInformer *self, gsize max_object);

G_END_DECLS
