/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

#include "util/msd-json-tokens.h"
#include "model/msd-model.h"

G_BEGIN_DECLS

/*
 * The endpoint of a Service as upstream computes it for `component_metadata` (contract 1.7):
 * an internal (clusterIP, port of the last port entry) and an external address.
 *
 * How it is used:
 *  1. meshsync_resource_new_from_json() computes the endpoint of every Service it converts for
 *     an ADDED or MODIFIED event. When the endpoint needs no network I/O (external port 0, or
 *     the external address is "localhost") the resource's component_metadata is filled right
 *     away.
 *  2. Otherwise upstream tries a TCP connect (5 s) to the external address first and publishes
 *     no component_metadata at all when that fails. The resource then holds the endpoint as
 *     "pending": meshsync_resource_get_pending_endpoint() returns it, and component_metadata stays
 *     null until meshsync_resource_complete_probe() is called with the probe's outcome.
 *  3. The pipeline, before writing such a resource, calls meshsync_resource_probe_async() (which
 *     runs msd_service_endpoint_probe_async() and completes the resource) and writes the
 *     resource from its callback, in the main context that was thread-default when it started.
 *     The probe never blocks the main loop.
 */
struct _MsdServiceEndpoint {
	gchar *internal_address; /* (owned) (not nullable) */
	gint64 internal_port;
	gchar *external_address; /* (owned) (not nullable) */
	gint64 external_port;
};

MsdServiceEndpoint *msd_service_endpoint_new_from_doc(const MsdJsonTokens *doc, gint root);
void msd_service_endpoint_free(MsdServiceEndpoint *ep);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsdServiceEndpoint, msd_service_endpoint_free)

/* TRUE when upstream would connect before deciding (external port set, address not localhost). */
gboolean msd_service_endpoint_needs_probe(const MsdServiceEndpoint *ep);

/* The component_metadata JSON text; @reachable is the probe outcome (ignored when no probe is
 * needed). NULL when upstream would publish no metadata (probe needed and failed). */
gchar *msd_service_endpoint_to_metadata(const MsdServiceEndpoint *ep, gboolean reachable);

/* TCP connect to the external address, 5 s timeout. The callback runs in the thread-default
 * main context of the caller. */
void msd_service_endpoint_probe_async(const MsdServiceEndpoint *ep,
                                      GCancellable *cancellable,
                                      GAsyncReadyCallback callback,
                                      gpointer user_data);
/* TRUE if the connection was made; FALSE with @error set otherwise (G_IO_ERROR_CANCELLED when
 * cancelled: callers should then drop the resource rather than publish it without metadata). */
gboolean msd_service_endpoint_probe_finish(GAsyncResult *result, GError **error);

G_END_DECLS
