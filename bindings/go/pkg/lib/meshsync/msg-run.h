/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <stdint.h>

#include <libmeshsync/meshsync.h>

/* One embedded run: a MeshSyncService on a main context of its own, driven by the thread
 * that calls msg_run_execute(). Configured before that call, stopped from any thread. */
typedef struct _MsgRun MsgRun;

/* The severities of the engine's lines handed to Go's logger (msgLog). */
enum {
	MSG_LOG_ERROR,
	MSG_LOG_WARNING,
	MSG_LOG_INFO,
	MSG_LOG_DEBUG
};

/* The first run installs the process's GLib log writer (GLib takes one per process): from
 * then on, what the engine logs on a run's thread goes to that run's Go logger. */
MsgRun *msg_run_new(uintptr_t handle);
void msg_run_free(MsgRun *run);

void msg_run_set_log_debug(MsgRun *run, gboolean debug);
void msg_run_set_kubeconfig(MsgRun *run, const char *data, size_t length);
void msg_run_set_file(MsgRun *run, const char *path, gboolean extended);
void msg_run_set_broker_url(MsgRun *run, const char *url);
void msg_run_set_events_to_go(MsgRun *run);
void msg_run_add_output_namespace(MsgRun *run, const char *name_space);
void msg_run_add_output_resource(MsgRun *run, const char *resource);

char *msg_run_execute(MsgRun *run);
void msg_run_stop(MsgRun *run);
void msg_run_writable_changed(MsgRun *run);
void msg_run_resync(MsgRun *run);
GPtrArray *msg_run_dup_store(MsgRun *run);
void msg_run_request(MsgRun *run, const char *data, size_t length);
void msg_run_bus_deliver(MsgRun *run,
                         unsigned int id,
                         const char *subject,
                         const char *data,
                         size_t length);
