/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <libmeshsync/meshsync.h>

G_BEGIN_DECLS

#define MESHSYNCD_TYPE_NO_TRUST (meshsyncd_no_trust_get_type())
G_DECLARE_FINAL_TYPE(MeshsyncdNoTrust, meshsyncd_no_trust, MESHSYNCD, NO_TRUST, GTlsDatabase)

/*
 * The process's default TLS trust when the daemon's cluster brings its own: nothing.
 *
 * glib-networking (2.74) fills every new TLS client connection's trust from the process's
 * default database when it makes the connection, before libsoup gives it the kube client's
 * own (none: the cluster's CA is checked in accept-certificate). With the system bundle
 * that is 7 ms of certificate parsing per connection, for trust that is dropped at once:
 * 35 ms at every start of a one-type sync, 150 ms for the 22 connections of the default
 * watch set, again at each reconnect. The daemon speaks TLS to its cluster only (the broker
 * through nats.c's own TLS), so when the kubeconfig names the cluster's CA, or turns
 * verification off, the default becomes a database that trusts nothing: a connection that
 * kept it would fail closed. Without a CA in the kubeconfig the system's trust is the
 * cluster's, and the default stays. A library must not change process-wide state, so this
 * is the daemon's to decide, not libmeshsync's.
 *
 * Returns whether the default was replaced.
 */
gboolean meshsyncd_tls_trust_cluster_only(MeshSyncKubeConfig *config);

G_END_DECLS
