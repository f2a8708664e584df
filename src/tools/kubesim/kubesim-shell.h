/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * The commands an exec runs, in-process: no real process ever starts. A small busybox-like
 * set (echo, cat, env, printenv, exit, sleep, ls, pwd, cd, hostname, true, false, export) and
 * a tiny sh that runs them from `sh -c SCRIPT` or from stdin line by line (with a prompt when
 * interactive: a TTY, or -i). See doc/kubesim.md.
 */
typedef struct _KubesimShell KubesimShell;

/* @stream: 1 stdout, 2 stderr */
typedef void (*KubesimShellOutputFunc)(gint stream,
                                       const gchar *data,
                                       gsize len,
                                       gpointer user_data);
/*
 * The command ended with @code; or it could not start (@error, as the container runtime
 * words it, and @code -1). Called once, from the main loop, never from inside a call into the
 * shell.
 */
typedef void (*KubesimShellExitFunc)(gint code, const gchar *error, gpointer user_data);

typedef struct {
	const gchar *hostname;
	const gchar *namespace_;
	const gchar *const *env; /* "NAME=value", the container's own */
	gboolean tty;            /* a terminal: input echoed and line-edited, \n written \r\n */
} KubesimShellContext;

KubesimShell *kubesim_shell_new(const gchar *const *argv,
                                const KubesimShellContext *context,
                                KubesimShellOutputFunc output,
                                KubesimShellExitFunc exited,
                                gpointer user_data);
/* Runs the command; its output and end come through the callbacks. */
void kubesim_shell_start(KubesimShell *shell);
void kubesim_shell_feed(KubesimShell *shell, const gchar *data, gsize len);
/* End of stdin (the client half-closed it, or asked for no stdin). */
void kubesim_shell_close_stdin(KubesimShell *shell);
void kubesim_shell_resize(KubesimShell *shell, guint width, guint height);
void kubesim_shell_free(KubesimShell *shell);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(KubesimShell, kubesim_shell_free)

G_END_DECLS
