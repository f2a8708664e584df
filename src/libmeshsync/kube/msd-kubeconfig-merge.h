/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/*
 * One named entry of a kubeconfig's clusters, contexts or users, with the file that defined
 * it, so that every message can name the file and the field ("FILE: users[NAME].token").
 *
 * A caller may copy an entry on the stack and point body at a sub-mapping (with prefix naming
 * it) to read that mapping with the same helpers; such a copy owns nothing.
 */
typedef struct {
	JsonNode *body; /* (owned) (nullable): the "cluster", "context" or "user" mapping */
	gchar *origin;  /* the file path, or "kubeconfig data" */
	gchar *dir;     /* absolute directory that relative paths resolve against */
	gchar *section; /* "clusters", "contexts" or "users" */
	gchar *name;
	const gchar *prefix; /* (nullable): a sub-mapping such as "exec", for messages */
} MsdKubeconfigEntry;

/* "ORIGIN: SECTION[NAME].MEMBER", the way every message names a field. */
gchar *msd_kubeconfig_entry_field(const MsdKubeconfigEntry *entry, const gchar *member);

/* Reads a scalar member as text; *out is NULL when the member is absent, null or empty. */
gboolean msd_kubeconfig_entry_get_string(const MsdKubeconfigEntry *entry,
                                         const gchar *member,
                                         gchar **out,
                                         GError **error);
/* Reads true or false (any case); absent is FALSE. */
gboolean msd_kubeconfig_entry_get_boolean(const MsdKubeconfigEntry *entry,
                                          const gchar *member,
                                          gboolean *out,
                                          GError **error);
/* Returns: (transfer none) (nullable): the member, NULL when absent or null. */
JsonNode *msd_kubeconfig_entry_get_member(const MsdKubeconfigEntry *entry, const gchar *member);
/* Resolves a path from the entry's file against that file's directory. */
gchar *msd_kubeconfig_entry_resolve_path(const MsdKubeconfigEntry *entry, const gchar *path);

/*
 * Kubeconfig files merged the way kubectl merges the KUBECONFIG list: for clusters, contexts
 * and users the first file that defines a name wins, and current-context comes from the first
 * file that sets it. Parse errors read "FILE:LINE:COLUMN: problem"; structure errors name the
 * file and the entry.
 */
typedef struct _MsdKubeconfigMerge MsdKubeconfigMerge;

/* Merges @paths in order; with @missing_ok, files that do not exist are skipped, but at least
 * one must exist. Empty strings in @paths are ignored. */
MsdKubeconfigMerge *
msd_kubeconfig_merge_new_from_files(const gchar *const *paths, gboolean missing_ok, GError **error);
/* Reads kubeconfig text, named "kubeconfig data", with paths relative to the current
 * directory. */
MsdKubeconfigMerge *
msd_kubeconfig_merge_new_from_data(const gchar *data, gsize length, GError **error);
void msd_kubeconfig_merge_free(MsdKubeconfigMerge *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsdKubeconfigMerge, msd_kubeconfig_merge_free)

/* Every path given (read or skipped) separated by ':', or "kubeconfig data". */
const gchar *msd_kubeconfig_merge_get_source(MsdKubeconfigMerge *self);
/* The files actually read, separated by ':', for messages about the merge as a whole. */
gchar *msd_kubeconfig_merge_describe(MsdKubeconfigMerge *self);
const gchar *msd_kubeconfig_merge_get_current_context(MsdKubeconfigMerge *self);

/* Returns: (transfer none) (nullable): the entry named @name. */
const MsdKubeconfigEntry *msd_kubeconfig_merge_get_context(MsdKubeconfigMerge *self,
                                                           const gchar *name);
const MsdKubeconfigEntry *msd_kubeconfig_merge_get_cluster(MsdKubeconfigMerge *self,
                                                           const gchar *name);
const MsdKubeconfigEntry *msd_kubeconfig_merge_get_user(MsdKubeconfigMerge *self,
                                                        const gchar *name);

G_END_DECLS
