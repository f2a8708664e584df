/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

#include "meshsync-kube-config-private.h"
#include "kube/msd-exec-plugin.h"

G_BEGIN_DECLS

/*
 * The credentials of one configuration at run time, owned by its MeshSyncKubeConfig. They come
 * from, in this order of precedence, an exec plugin (cached until its expirationTimestamp), a
 * token file (re-read at most once a period, a minute by default, for the tokens the kubelet
 * rotates; the last good token is kept when a re-read fails), or a static token; a client
 * certificate goes along with any of them unless the plugin returns its own.
 *
 * One refresh (plugin run or token file read) runs at a time: everyone asking meanwhile waits
 * for its result. All calls belong to one thread-default main context.
 */
#define MSD_TYPE_CREDENTIALS (msd_credentials_get_type())
G_DECLARE_FINAL_TYPE(MsdCredentials, msd_credentials, MSD, CREDENTIALS, GObject)

/* @file_token is what the loader read from @token_file; NULL when that read failed, and then
 * @static_token stands in until a re-read succeeds. Every argument may be NULL. */
MsdCredentials *msd_credentials_new(const gchar *static_token,
                                    GTlsCertificate *client_certificate,
                                    const gchar *token_file,
                                    const gchar *file_token,
                                    MsdExecPlugin *exec);

/* Returns a MeshSyncKubeCredentials (freed with meshsync_kube_credentials_free()) or an error
 * into @task (transfer full), at once when the cached credentials are fresh. The task belongs
 * to the caller, source object and tag included, so a public API keeps its own; only its
 * cancellable is looked at, before anything starts. */
void msd_credentials_resolve(MsdCredentials *self, GTask *task);

/* Marks cached credentials stale, so that the next request resolves them again; a plugin run
 * already under way is not cached. */
void msd_credentials_invalidate(MsdCredentials *self);

/* For tests: how long a token file is trusted, and how long a plugin may run. */
void msd_credentials_set_token_file_period(MsdCredentials *self, guint seconds);
void msd_credentials_set_exec_timeout(MsdCredentials *self, guint seconds);

/* A token file's contents without surrounding whitespace; NULL when nothing is left. */
gchar *msd_credentials_trim_token(const gchar *contents);

G_END_DECLS
