/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>
#include <libsoup/soup.h>

#include "kube/msd-kube-client.h"

G_BEGIN_DECLS

/* Generous: the loop is iterated until a condition holds, this only turns a hang into a
 * failure. */
#define TIMEOUT_SECONDS 60

typedef gboolean (*Condition)(gpointer user_data);

/* Iterates the main loop until @condition holds; fails the test after TIMEOUT_SECONDS. */
void wait_until(Condition condition, gpointer user_data, const gchar *what);

/* One asynchronous call waited for with wait_until(async_done, &wait, ...). */
typedef struct {
	gboolean done;
	GObject *source;
	GAsyncResult *result; /* (owned) once done */
} AsyncWait;

void async_wait_cb(GObject *source, GAsyncResult *result, gpointer user_data);
gboolean async_done(gpointer user_data);

/* A meshsync-kubesim with a generated workload, plain HTTP on 127.0.0.1, and a kube client
 * for it. */
typedef struct {
	GSubprocess *process;
	gchar *url;
	gchar *tmpdir;
	gchar *kubeconfig;
	SoupSession *session;
	MsdKubeClient *client;
} Sim;

void sim_start(Sim *sim, guint pods, guint namespaces);
void sim_stop(Sim *sim);
/* Calls the simulator's admin API (or any path); returns the status and the body. */
guint
sim_request(Sim *sim, const gchar *method, const gchar *path, const gchar *body, GBytes **answer);
void sim_admin(Sim *sim, const gchar *method, const gchar *action, const gchar *body);
/* A member of GET /kubesim/stats. */
gint64 sim_stat(Sim *sim, const gchar *member);

G_END_DECLS
