/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * metadata.managedFields as the API server records them for writes through the API: the
 * manager's Update entry gets the fields it set or changed, other managers lose those, and
 * fields the write removed leave every entry. Entries are sorted as the server sorts them
 * (operation, time, manager, apiVersion, subresource).
 *
 * Without the OpenAPI schemas, list semantics come from the field names the built-in types use
 * (containers, env, ports, volumeMounts, conditions, ownerReferences... keyed; finalizers a
 * set; other lists atomic) and maps from the names of the map-typed fields (labels,
 * annotations, data, selectors, resource lists). Custom resources have no schema here, so all
 * their lists are atomic, as for a CRD that declares no list types.
 */

typedef struct {
	const gchar *manager;     /* the fieldManager parameter, or the User-Agent's product */
	const gchar *subresource; /* (nullable): "status" for writes to /status */
	const gchar *api_version; /* of the resource written */
	gboolean typed;           /* a built-in type: lists as its Go types declare them */
	gboolean status_ignored;  /* the resource has a status subresource: writes to the main
	                           * resource do not own status */
	gint64 time;              /* unix seconds */
} KubesimManagedWrite;

/*
 * @json (compact) with its managedFields brought up to date for @write, which turned @old
 * (nullable: a create) into @json. managedFields in @json that are absent or [] mean "as
 * before"; a list of one empty entry strips them all (as the server does). NULL when @json is
 * not an object.
 */
GBytes *kubesim_managed_fields_apply(GBytes *json, GBytes *old, const KubesimManagedWrite *write);

/* The manager a request names: @field_manager, else the User-Agent up to its first '/'. */
gchar *kubesim_managed_fields_manager(const gchar *field_manager, const gchar *user_agent);

G_END_DECLS
