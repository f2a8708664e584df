/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * One file: the little shell an exec into kubesim gets (parsing, expansion, the built-in
 * commands, the fake file system and the terminal echo) shares the session's state at every
 * step, and is a test fixture, not part of the library.
 */

#include "kubesim-shell.h"

#include <string.h>

/* A line the shell reads, or typed at a terminal, is cut there: input is never held whole. */
#define SHELL_MAX_LINE  (64 * 1024)
#define SHELL_MAX_INPUT (1024 * 1024)
/* The longest sleep: an exec nobody ends must not hold a timer for ever. */
#define SHELL_MAX_SLEEP_S (24 * 3600)

typedef enum {
	SEP_NONE, /* the first command */
	SEP_SEMI, /* ; or a newline */
	SEP_AND,  /* && */
	SEP_OR,   /* || */
} Separator;

/* One simple command of a script, expanded only when it runs (so $? is current). */
typedef struct {
	Separator sep;
	gchar *text;
	gchar *error; /* a syntax error to report instead of running it */
} Command;

typedef enum {
	RUN_IDLE,
	RUN_CAT,   /* cat copying stdin to stdout */
	RUN_SLEEP, /* sleep's timer */
} Running;

struct _KubesimShell {
	KubesimShellOutputFunc output;
	KubesimShellExitFunc exited;
	gpointer user_data;
	gboolean tty;
	gchar *hostname;
	gchar *namespace_;
	GPtrArray *env; /* "NAME=value" */
	gchar *cwd;

	gchar **argv;
	gboolean is_shell;    /* sh: reads commands from stdin once its script is done */
	gboolean interactive; /* prints a prompt */
	gboolean prompted;
	GQueue pending; /* Command */
	gint status;    /* $? */
	Running running;
	guint sleep_id;
	gboolean started;
	gboolean done;
	guint exit_id;
	gint exit_code;
	gchar *exit_error;

	GString *line;  /* the terminal's line being typed (tty) */
	GString *input; /* what sh has not read yet */
	gboolean stdin_closed;
};

static void shell_run(KubesimShell *shell);

static void
command_free(gpointer data)
{
	Command *cmd = data;

	g_free(cmd->text);
	g_free(cmd->error);
	g_free(cmd);
}

/* ---- output ---- */

static void
shell_write(KubesimShell *shell, gint stream, const gchar *data, gsize len)
{
	g_autoptr(GString) crlf = NULL;

	if (shell->done || len == 0)
		return;
	if (!shell->tty) {
		shell->output(stream, data, len, shell->user_data);
		return;
	}
	/* a terminal's ONLCR: what the command writes as \n reaches the client as \r\n */
	crlf = g_string_sized_new(len + 16);
	for (gsize i = 0; i < len; i++) {
		if (data[i] == '\n' && (i == 0 || data[i - 1] != '\r'))
			g_string_append_c(crlf, '\r');
		g_string_append_c(crlf, data[i]);
	}
	shell->output(stream, crlf->str, crlf->len, shell->user_data);
}

static void
shell_print(KubesimShell *shell, gint stream, const gchar *text)
{
	shell_write(shell, stream, text, strlen(text));
}

static void shell_printf(KubesimShell *shell, gint stream, const gchar *format, ...)
        G_GNUC_PRINTF(3, 4);

static void
shell_printf(KubesimShell *shell, gint stream, const gchar *format, ...)
{
	g_autofree gchar *text = NULL;
	va_list args;

	va_start(args, format);
	text = g_strdup_vprintf(format, args);
	va_end(args);
	shell_print(shell, stream, text);
}

static gboolean
exit_idle(gpointer data)
{
	KubesimShell *shell = data;

	shell->exit_id = 0;
	shell->exited(shell->exit_code, shell->exit_error, shell->user_data);
	return G_SOURCE_REMOVE;
}

static void
shell_finish(KubesimShell *shell, gint code, const gchar *error)
{
	if (shell->done)
		return;
	shell->done = TRUE;
	shell->exit_code = code;
	shell->exit_error = g_strdup(error);
	g_clear_handle_id(&shell->sleep_id, g_source_remove);
	shell->exit_id = g_idle_add(exit_idle, shell);
}

/* ---- the environment and a read-only file system ---- */

static const gchar *
env_get(KubesimShell *shell, const gchar *name)
{
	gsize n = strlen(name);

	for (guint i = 0; i < shell->env->len; i++) {
		const gchar *entry = g_ptr_array_index(shell->env, i);
		if (strncmp(entry, name, n) == 0 && entry[n] == '=')
			return entry + n + 1;
	}
	return NULL;
}

static void
env_set(KubesimShell *shell, const gchar *name, const gchar *value)
{
	gsize n = strlen(name);

	for (guint i = 0; i < shell->env->len; i++) {
		gchar *entry = g_ptr_array_index(shell->env, i);
		if (strncmp(entry, name, n) == 0 && entry[n] == '=') {
			g_free(entry);
			g_ptr_array_index(shell->env, i) = g_strdup_printf("%s=%s", name, value);
			return;
		}
	}
	g_ptr_array_add(shell->env, g_strdup_printf("%s=%s", name, value));
}

typedef struct {
	const gchar *path;
	const gchar *children; /* space-separated, NULL for a file */
} FsEntry;

static const FsEntry fs_entries[] = {
        {"/", "app bin dev etc home lib proc root run sbin sys tmp usr var"},
        {"/app", "config.yaml server"},
        {"/bin", "busybox cat echo env hostname ls printenv pwd sh sleep"},
        {"/dev", "null stderr stdin stdout tty urandom zero"},
        {"/etc", "hostname hosts os-release passwd resolv.conf"},
        {"/home", ""},
        {"/lib", "ld-musl-x86_64.so.1 libc.musl-x86_64.so.1"},
        {"/proc", "1 self version"},
        {"/root", ""},
        {"/run", ""},
        {"/sbin", ""},
        {"/sys", ""},
        {"/tmp", ""},
        {"/usr", "bin lib local sbin share"},
        {"/var", "cache lib log run tmp"},
};

static const gchar *const fs_files[] = {
        "/app/config.yaml", "/app/server",      "/etc/hostname", "/etc/hosts", "/etc/os-release",
        "/etc/passwd",      "/etc/resolv.conf", "/proc/version", NULL,
};

/* @path made absolute against the working directory, without "." and ".." segments. */
static gchar *
fs_resolve(KubesimShell *shell, const gchar *path)
{
	g_autofree gchar *joined =
	        path[0] == '/' ? g_strdup(path) : g_build_filename(shell->cwd, path, NULL);
	g_auto(GStrv) segs = g_strsplit(joined, "/", -1);
	g_autoptr(GPtrArray) out = g_ptr_array_new();
	GString *result = g_string_new(NULL);

	for (guint i = 0; segs[i] != NULL; i++) {
		if (segs[i][0] == '\0' || strcmp(segs[i], ".") == 0)
			continue;
		if (strcmp(segs[i], "..") == 0) {
			if (out->len > 0)
				g_ptr_array_remove_index(out, out->len - 1);
			continue;
		}
		g_ptr_array_add(out, segs[i]);
	}
	for (guint i = 0; i < out->len; i++) {
		g_string_append_c(result, '/');
		g_string_append(result, g_ptr_array_index(out, i));
	}
	if (result->len == 0)
		g_string_append_c(result, '/');
	return g_string_free(result, FALSE);
}

static const FsEntry *
fs_dir(const gchar *abs)
{
	for (guint i = 0; i < G_N_ELEMENTS(fs_entries); i++)
		if (strcmp(fs_entries[i].path, abs) == 0)
			return &fs_entries[i];
	return NULL;
}

/* The contents of the file @abs, or NULL when there is none. */
static gchar *
fs_read(KubesimShell *shell, const gchar *abs)
{
	if (!g_strv_contains(fs_files, abs))
		return NULL;
	if (strcmp(abs, "/etc/hostname") == 0)
		return g_strdup_printf("%s\n", shell->hostname);
	if (strcmp(abs, "/etc/hosts") == 0)
		return g_strdup_printf("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n"
		                       "::1\tlocalhost ip6-localhost ip6-loopback\n"
		                       "10.244.0.17\t%s\n",
		                       shell->hostname);
	if (strcmp(abs, "/etc/resolv.conf") == 0)
		return g_strdup_printf("search %s.svc.cluster.local svc.cluster.local "
		                       "cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n",
		                       shell->namespace_);
	if (strcmp(abs, "/etc/os-release") == 0)
		return g_strdup("NAME=\"Alpine Linux\"\nID=alpine\nVERSION_ID=3.20.1\n"
		                "PRETTY_NAME=\"Alpine Linux v3.20\"\n");
	if (strcmp(abs, "/etc/passwd") == 0)
		return g_strdup("root:x:0:0:root:/root:/bin/sh\n"
		                "nobody:x:65534:65534:nobody:/:/sbin/nologin\n");
	if (strcmp(abs, "/proc/version") == 0)
		return g_strdup("Linux version 6.1.0-kubesim (gcc 12.2.0) #1 SMP\n");
	if (strcmp(abs, "/app/config.yaml") == 0)
		return g_strdup("server:\n  port: 8080\nlog:\n  level: info\n");
	return g_strdup("\x7f"
	                "ELF\n");
}

/* ---- parsing ---- */

/* Splits @script into simple commands at ;, &&, || and newlines, outside quotes. */
static void
parse_script(KubesimShell *shell, const gchar *script, GQueue *into)
{
	GString *cur = g_string_new(NULL);
	Separator sep = SEP_NONE;
	gchar quote = 0;
	const gchar *error = NULL;

	for (const gchar *p = script;; p++) {
		gchar ch = *p;
		Separator next = SEP_NONE;
		gboolean end = FALSE;

		if (ch != '\0' && quote != 0) {
			if (ch == quote)
				quote = 0;
			else if (ch == '\\' && quote == '"' && p[1] != '\0')
				g_string_append_c(cur, *p++);
			g_string_append_c(cur, *p);
			continue;
		}
		if (ch == '\0') {
			end = TRUE;
		} else if (ch == '\'' || ch == '"') {
			quote = ch;
		} else if (ch == '\\' && p[1] != '\0') {
			/* the escaped character stays with its backslash for the word splitter */
			g_string_append_c(cur, *p++);
			g_string_append_c(cur, *p);
			continue;
		} else if (ch == '#' &&
		           (cur->len == 0 || g_ascii_isspace(cur->str[cur->len - 1]))) {
			while (p[1] != '\0' && p[1] != '\n')
				p++;
			continue;
		} else if (ch == ';' || ch == '\n') {
			end = TRUE;
			next = SEP_SEMI;
		} else if (ch == '&' && p[1] == '&') {
			end = TRUE;
			next = SEP_AND;
			p++;
		} else if (ch == '|' && p[1] == '|') {
			end = TRUE;
			next = SEP_OR;
			p++;
		} else if (ch == '|' || ch == '&' || ch == '<' || ch == '>' || ch == '`' ||
		           ch == '(' || ch == ')') {
			error = "sh: syntax error: pipes, redirections, background jobs and "
			        "subshells are not supported by kubesim's shell\n";
		}
		if (!end) {
			g_string_append_c(cur, ch);
			continue;
		}
		g_strstrip(cur->str);
		if (cur->str[0] != '\0' || error != NULL) {
			Command *cmd = g_new0(Command, 1);
			cmd->sep = sep;
			cmd->text = g_strdup(cur->str);
			cmd->error = g_strdup(error);
			g_queue_push_tail(into, cmd);
		}
		g_string_truncate(cur, 0);
		error = NULL;
		sep = next;
		if (ch == '\0')
			break;
	}
	if (quote != 0) {
		Command *cmd = g_new0(Command, 1);
		cmd->sep = SEP_SEMI;
		cmd->text = g_strdup("");
		cmd->error = g_strdup("sh: syntax error: unterminated quoted string\n");
		g_queue_push_tail(into, cmd);
	}
	g_string_free(cur, TRUE);
	(void)shell;
}

static void
expand_var(KubesimShell *shell, const gchar **pp, GString *word)
{
	const gchar *p = *pp + 1; /* after $ */
	g_autofree gchar *name = NULL;
	const gchar *value;

	if (*p == '?') {
		g_string_append_printf(word, "%d", shell->status);
		*pp = p;
		return;
	}
	if (*p == '$') {
		g_string_append(word, "1");
		*pp = p;
		return;
	}
	if (*p == '{') {
		const gchar *close = strchr(p, '}');
		if (close == NULL) {
			g_string_append_c(word, '$');
			*pp = p - 1;
			return;
		}
		name = g_strndup(p + 1, close - p - 1);
		*pp = close;
	} else {
		const gchar *start = p;
		while (g_ascii_isalnum(*p) || *p == '_')
			p++;
		if (p == start) {
			g_string_append_c(word, '$');
			*pp = start - 1;
			return;
		}
		name = g_strndup(start, p - start);
		*pp = p - 1;
	}
	value = env_get(shell, name);
	if (value != NULL)
		g_string_append(word, value);
}

/* The words of one simple command: quotes removed, variables expanded. */
static GPtrArray *
split_words(KubesimShell *shell, const gchar *text)
{
	GPtrArray *words = g_ptr_array_new_with_free_func(g_free);
	GString *word = g_string_new(NULL);
	gboolean in_word = FALSE;
	gchar quote = 0;

	for (const gchar *p = text; *p != '\0'; p++) {
		if (quote == '\'') {
			if (*p == '\'')
				quote = 0;
			else
				g_string_append_c(word, *p);
			continue;
		}
		if (quote == '"') {
			if (*p == '"')
				quote = 0;
			else if (*p == '\\' && p[1] != '\0' && strchr("\"\\$`", p[1]) != NULL)
				g_string_append_c(word, *++p);
			else if (*p == '$')
				expand_var(shell, &p, word);
			else
				g_string_append_c(word, *p);
			continue;
		}
		if (g_ascii_isspace(*p)) {
			if (in_word)
				g_ptr_array_add(words, g_strdup(word->str));
			g_string_truncate(word, 0);
			in_word = FALSE;
			continue;
		}
		in_word = TRUE;
		if (*p == '\'' || *p == '"')
			quote = *p;
		else if (*p == '\\' && p[1] != '\0')
			g_string_append_c(word, *++p);
		else if (*p == '$')
			expand_var(shell, &p, word);
		else
			g_string_append_c(word, *p);
	}
	if (in_word)
		g_ptr_array_add(words, g_strdup(word->str));
	g_string_free(word, TRUE);
	return words;
}

/* ---- the commands ---- */

static gboolean
on_sleep_done(gpointer data)
{
	KubesimShell *shell = data;

	shell->sleep_id = 0;
	shell->running = RUN_IDLE;
	shell->status = 0;
	shell_run(shell);
	return G_SOURCE_REMOVE;
}

static gboolean
is_shell_name(const gchar *name)
{
	static const gchar *const shells[] = {"sh",   "/bin/sh",   "ash",           "/bin/ash",
	                                      "bash", "/bin/bash", "/usr/bin/bash", "/usr/bin/sh",
	                                      NULL};
	return g_strv_contains(shells, name);
}

/* The base name of a command given as a path (/bin/echo → echo). */
static const gchar *
command_name(const gchar *arg)
{
	const gchar *slash = strrchr(arg, '/');

	return slash != NULL && slash[1] != '\0' ? slash + 1 : arg;
}

static gint
cmd_ls(KubesimShell *shell, gchar **args, guint n)
{
	gint status = 0;
	guint paths = 0;

	for (guint i = 1; i < n; i++)
		if (args[i][0] != '-')
			paths++;
	for (guint i = paths == 0 ? 0 : 1; i < (paths == 0 ? 1 : n); i++) {
		const gchar *arg = paths == 0 ? "." : args[i];
		g_autofree gchar *abs = NULL;
		const FsEntry *dir;

		if (paths > 0 && arg[0] == '-')
			continue;
		abs = fs_resolve(shell, arg);
		dir = fs_dir(abs);
		if (dir == NULL && g_strv_contains(fs_files, abs)) {
			shell_printf(shell, 1, "%s\n", arg);
			continue;
		}
		if (dir == NULL) {
			shell_printf(shell, 2, "ls: %s: No such file or directory\n", arg);
			status = 1;
			continue;
		}
		if (paths > 1)
			shell_printf(shell, 1, "%s:\n", arg);
		if (dir->children[0] != '\0') {
			g_auto(GStrv) names = g_strsplit(dir->children, " ", -1);
			g_autofree gchar *joined = g_strjoinv(shell->tty ? "  " : "\n", names);
			shell_printf(shell, 1, "%s\n", joined);
		}
	}
	return status;
}

/* Runs @words; returns its status, or -1 when it blocks (cat on stdin, sleep). */
static gint
run_words(KubesimShell *shell, GPtrArray *words)
{
	gchar **args = (gchar **)words->pdata;
	guint n = words->len;
	const gchar *name;

	/* NAME=value alone sets a variable */
	while (n > 0 && strchr(args[0], '=') != NULL && args[0][0] != '=' &&
	       strspn(args[0], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") ==
	               (gsize)(strchr(args[0], '=') - args[0])) {
		g_autofree gchar *var = g_strndup(args[0], strchr(args[0], '=') - args[0]);
		if (n == 1) {
			env_set(shell, var, strchr(args[0], '=') + 1);
			return 0;
		}
		/* a prefix assignment: for this command only, which is close enough */
		env_set(shell, var, strchr(args[0], '=') + 1);
		args++;
		n--;
	}
	if (n == 0)
		return 0;
	name = command_name(args[0]);
	if (strcmp(name, "echo") == 0) {
		gboolean newline = TRUE;
		guint i = 1;
		g_autoptr(GString) out = g_string_new(NULL);
		if (n > 1 && strcmp(args[1], "-n") == 0) {
			newline = FALSE;
			i = 2;
		}
		for (guint j = i; j < n; j++) {
			if (j > i)
				g_string_append_c(out, ' ');
			g_string_append(out, args[j]);
		}
		if (newline)
			g_string_append_c(out, '\n');
		shell_write(shell, 1, out->str, out->len);
		return 0;
	}
	if (strcmp(name, "true") == 0)
		return 0;
	if (strcmp(name, "false") == 0)
		return 1;
	if (strcmp(name, "pwd") == 0) {
		shell_printf(shell, 1, "%s\n", shell->cwd);
		return 0;
	}
	if (strcmp(name, "hostname") == 0) {
		shell_printf(shell, 1, "%s\n", shell->hostname);
		return 0;
	}
	if (strcmp(name, "whoami") == 0) {
		shell_print(shell, 1, "root\n");
		return 0;
	}
	if (strcmp(name, "env") == 0 || strcmp(name, "printenv") == 0) {
		if (strcmp(name, "printenv") == 0 && n > 1) {
			gint status = 0;
			for (guint i = 1; i < n; i++) {
				const gchar *value = env_get(shell, args[i]);
				if (value != NULL)
					shell_printf(shell, 1, "%s\n", value);
				else
					status = 1;
			}
			return status;
		}
		for (guint i = 0; i < shell->env->len; i++)
			shell_printf(shell, 1, "%s\n", (gchar *)g_ptr_array_index(shell->env, i));
		return 0;
	}
	if (strcmp(name, "export") == 0) {
		for (guint i = 1; i < n; i++) {
			gchar *eq = strchr(args[i], '=');
			if (eq != NULL) {
				g_autofree gchar *var = g_strndup(args[i], eq - args[i]);
				env_set(shell, var, eq + 1);
			}
		}
		return 0;
	}
	if (strcmp(name, "cd") == 0) {
		const gchar *target = n > 1 ? args[1] : "/root";
		g_autofree gchar *abs = fs_resolve(shell, target);
		if (fs_dir(abs) == NULL) {
			shell_printf(shell, 2,
			             "sh: cd: can't cd to %s: No such file or directory\n", target);
			return 2;
		}
		g_free(shell->cwd);
		shell->cwd = g_steal_pointer(&abs);
		env_set(shell, "PWD", shell->cwd);
		return 0;
	}
	if (strcmp(name, "ls") == 0)
		return cmd_ls(shell, args, n);
	if (strcmp(name, "exit") == 0) {
		gint code = shell->status;
		if (n > 1) {
			gchar *end = NULL;
			gint64 v = g_ascii_strtoll(args[1], &end, 10);
			if (end == args[1] || *end != '\0') {
				shell_printf(shell, 2, "sh: exit: illegal number: %s\n", args[1]);
				code = 2;
			} else {
				code = (gint)(v & 0xff);
			}
		}
		shell_finish(shell, code, NULL);
		return code;
	}
	if (strcmp(name, "sleep") == 0) {
		gchar *end = NULL;
		gdouble seconds = n > 1 ? g_ascii_strtod(args[1], &end) : -1;
		if (n < 2 || end == args[1] || *end != '\0' || seconds < 0) {
			shell_printf(shell, 2, "sleep: invalid number '%s'\n",
			             n > 1 ? args[1] : "");
			return 1;
		}
		seconds = MIN(seconds, SHELL_MAX_SLEEP_S);
		shell->running = RUN_SLEEP;
		shell->sleep_id =
		        g_timeout_add((guint)(seconds * 1000 + 0.5), on_sleep_done, shell);
		return -1;
	}
	if (strcmp(name, "cat") == 0) {
		gint status = 0;
		gboolean from_stdin = n == 1;
		for (guint i = 1; i < n; i++) {
			g_autofree gchar *abs = NULL;
			g_autofree gchar *text = NULL;
			if (strcmp(args[i], "-") == 0) {
				from_stdin = TRUE;
				continue;
			}
			abs = fs_resolve(shell, args[i]);
			text = fs_read(shell, abs);
			if (text == NULL) {
				if (fs_dir(abs) != NULL)
					shell_print(shell, 2, "cat: read error: Is a directory\n");
				else
					shell_printf(shell, 2,
					             "cat: can't open '%s': No such file or "
					             "directory\n",
					             args[i]);
				status = 1;
				continue;
			}
			shell_print(shell, 1, text);
		}
		if (!from_stdin)
			return status;
		/* what sh had read ahead but not run goes to cat, as it would in a real pipe */
		if (shell->input->len > 0) {
			shell_write(shell, 1, shell->input->str, shell->input->len);
			g_string_truncate(shell->input, 0);
		}
		if (shell->stdin_closed)
			return status;
		shell->running = RUN_CAT;
		return -1;
	}
	if (is_shell_name(args[0]) || strcmp(name, "sh") == 0) {
		/* a shell inside the shell: its script runs here, next */
		for (guint i = 1; i + 1 < n; i++) {
			if (strcmp(args[i], "-c") == 0) {
				GQueue script = G_QUEUE_INIT;
				parse_script(shell, args[i + 1], &script);
				while (!g_queue_is_empty(&script))
					g_queue_push_head(&shell->pending,
					                  g_queue_pop_tail(&script));
				return 0;
			}
		}
		return 0;
	}
	shell_printf(shell, 2, "sh: %s: not found\n", args[0]);
	return 127;
}

static void
shell_prompt(KubesimShell *shell)
{
	if (!shell->interactive || shell->prompted || shell->done)
		return;
	shell->prompted = TRUE;
	shell_printf(shell, 1, "%s # ", shell->cwd);
}

/* Runs what is pending until something blocks, input is needed, or the shell ends. */
static void
shell_run(KubesimShell *shell)
{
	while (!shell->done && shell->running == RUN_IDLE) {
		Command *cmd = g_queue_pop_head(&shell->pending);
		if (cmd != NULL) {
			g_autoptr(GPtrArray) words = NULL;
			gint status;
			if ((cmd->sep == SEP_AND && shell->status != 0) ||
			    (cmd->sep == SEP_OR && shell->status == 0)) {
				command_free(cmd);
				continue;
			}
			if (cmd->error != NULL) {
				shell_print(shell, 2, cmd->error);
				shell->status = 2;
				command_free(cmd);
				continue;
			}
			words = split_words(shell, cmd->text);
			command_free(cmd);
			status = run_words(shell, words);
			if (status >= 0)
				shell->status = status;
			continue;
		}
		if (!shell->is_shell) {
			shell_finish(shell, shell->status, NULL);
			return;
		}
		/* sh: the next line of stdin */
		{
			gchar *nl = memchr(shell->input->str, '\n', shell->input->len);
			if (nl != NULL || (shell->stdin_closed && shell->input->len > 0)) {
				gsize len = nl != NULL ? (gsize)(nl - shell->input->str)
				                       : shell->input->len;
				g_autofree gchar *line = g_strndup(shell->input->str, len);
				g_string_erase(shell->input, 0, nl != NULL ? len + 1 : len);
				shell->prompted = FALSE;
				parse_script(shell, line, &shell->pending);
				continue;
			}
		}
		if (shell->stdin_closed) {
			if (shell->interactive)
				shell_print(shell, 1, "\n");
			shell_finish(shell, shell->status, NULL);
			return;
		}
		shell_prompt(shell);
		return;
	}
}

/* ---- stdin ---- */

static void
shell_interrupt(KubesimShell *shell)
{
	/* ^C: the running command dies of SIGINT; an interactive shell survives it */
	g_clear_handle_id(&shell->sleep_id, g_source_remove);
	g_queue_clear_full(&shell->pending, command_free);
	shell->running = RUN_IDLE;
	shell->status = 130;
	if (!shell->is_shell) {
		shell_finish(shell, 130, NULL);
		return;
	}
	shell->prompted = FALSE;
	shell_run(shell);
}

/* Input as the command reads it (after the terminal's line discipline, with a TTY). */
static void
shell_deliver(KubesimShell *shell, const gchar *data, gsize len)
{
	if (shell->running == RUN_CAT) {
		shell_write(shell, 1, data, len);
		return;
	}
	if (!shell->is_shell)
		return; /* nothing reads it */
	/* what sh reads ahead is bounded: past that, input is dropped, as a full pipe would
	 * stop its writer */
	if (shell->input->len + len > SHELL_MAX_INPUT)
		len = shell->input->len < SHELL_MAX_INPUT ? SHELL_MAX_INPUT - shell->input->len : 0;
	g_string_append_len(shell->input, data, len);
	if (shell->input->len > SHELL_MAX_LINE &&
	    memchr(shell->input->str, '\n', shell->input->len) == NULL)
		g_string_append_c(shell->input, '\n');
	if (shell->running == RUN_IDLE)
		shell_run(shell);
}

/* What the terminal echoes goes out in one message per read, before the command's output. */
static void
terminal_echo(KubesimShell *shell, GString *echo)
{
	if (echo->len > 0 && !shell->done)
		shell->output(1, echo->str, echo->len, shell->user_data);
	g_string_truncate(echo, 0);
}

void
kubesim_shell_feed(KubesimShell *shell, const gchar *data, gsize len)
{
	g_autoptr(GString) echo = NULL;

	if (shell->done || shell->stdin_closed || !shell->started)
		return;
	if (!shell->tty) {
		shell_deliver(shell, data, len);
		return;
	}
	/* a terminal in canonical mode: echo, erase, ^C, ^D, lines end at \r or \n */
	echo = g_string_new(NULL);
	for (gsize i = 0; i < len && !shell->done && !shell->stdin_closed; i++) {
		gchar ch = data[i];
		if (ch == '\r' || ch == '\n') {
			g_autoptr(GString) line = g_steal_pointer(&shell->line);
			g_string_append_c(line, '\n');
			shell->line = g_string_new(NULL);
			g_string_append(echo, "\r\n");
			terminal_echo(shell, echo);
			shell_deliver(shell, line->str, line->len);
		} else if (ch == 0x7f || ch == 0x08) {
			if (shell->line->len > 0) {
				g_string_truncate(shell->line, shell->line->len - 1);
				g_string_append(echo, "\b \b");
			}
		} else if (ch == 0x03) {
			g_string_append(echo, "^C\r\n");
			terminal_echo(shell, echo);
			g_string_truncate(shell->line, 0);
			shell_interrupt(shell);
		} else if (ch == 0x04) {
			g_autoptr(GString) line = g_steal_pointer(&shell->line);
			shell->line = g_string_new(NULL);
			terminal_echo(shell, echo);
			if (line->len == 0)
				kubesim_shell_close_stdin(shell);
			else
				shell_deliver(shell, line->str, line->len);
		} else if (shell->line->len < SHELL_MAX_LINE) {
			g_string_append_c(shell->line, ch);
			g_string_append_c(echo, ch);
		}
	}
	terminal_echo(shell, echo);
}

void
kubesim_shell_close_stdin(KubesimShell *shell)
{
	if (shell->stdin_closed)
		return;
	shell->stdin_closed = TRUE;
	if (shell->done || !shell->started)
		return;
	if (shell->running == RUN_CAT) {
		shell->running = RUN_IDLE;
		shell->status = 0;
	}
	if (shell->running == RUN_IDLE)
		shell_run(shell);
}

void
kubesim_shell_resize(KubesimShell *shell, guint width, guint height)
{
	g_autofree gchar *cols = g_strdup_printf("%u", width);
	g_autofree gchar *lines = g_strdup_printf("%u", height);

	env_set(shell, "COLUMNS", cols);
	env_set(shell, "LINES", lines);
}

/* ---- life ---- */

KubesimShell *
kubesim_shell_new(const gchar *const *argv,
                  const KubesimShellContext *context,
                  KubesimShellOutputFunc output,
                  KubesimShellExitFunc exited,
                  gpointer user_data)
{
	KubesimShell *shell = g_new0(KubesimShell, 1);

	shell->output = output;
	shell->exited = exited;
	shell->user_data = user_data;
	shell->tty = context->tty;
	shell->hostname = g_strdup(context->hostname != NULL ? context->hostname : "localhost");
	shell->namespace_ = g_strdup(context->namespace_ != NULL ? context->namespace_ : "default");
	shell->cwd = g_strdup("/");
	shell->argv = g_strdupv((gchar **)argv);
	shell->env = g_ptr_array_new_with_free_func(g_free);
	g_queue_init(&shell->pending);
	shell->line = g_string_new(NULL);
	shell->input = g_string_new(NULL);
	env_set(shell, "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	env_set(shell, "HOSTNAME", shell->hostname);
	if (shell->tty)
		env_set(shell, "TERM", "xterm");
	for (guint i = 0; context->env != NULL && context->env[i] != NULL; i++) {
		const gchar *eq = strchr(context->env[i], '=');
		if (eq != NULL) {
			g_autofree gchar *name = g_strndup(context->env[i], eq - context->env[i]);
			env_set(shell, name, eq + 1);
		}
	}
	env_set(shell, "KUBERNETES_SERVICE_HOST", "10.96.0.1");
	env_set(shell, "KUBERNETES_SERVICE_PORT", "443");
	env_set(shell, "KUBERNETES_PORT", "tcp://10.96.0.1:443");
	env_set(shell, "HOME", "/root");
	return shell;
}

void
kubesim_shell_start(KubesimShell *shell)
{
	guint n = shell->argv != NULL ? g_strv_length(shell->argv) : 0;
	static const gchar *const known[] = {"echo",  "cat",   "env",    "printenv", "exit",
	                                     "sleep", "ls",    "pwd",    "cd",       "hostname",
	                                     "true",  "false", "whoami", "export",   NULL};

	if (shell->started)
		return;
	shell->started = TRUE;
	if (n == 0) {
		shell_finish(shell, -1, "no command given");
		return;
	}
	if (is_shell_name(shell->argv[0])) {
		gboolean script = FALSE;
		shell->is_shell = TRUE;
		for (guint i = 1; i < n; i++) {
			if (strcmp(shell->argv[i], "-c") == 0 && i + 1 < n) {
				parse_script(shell, shell->argv[i + 1], &shell->pending);
				script = TRUE;
				break;
			}
			if (strcmp(shell->argv[i], "-i") == 0)
				shell->interactive = TRUE;
		}
		if (script) {
			/* sh -c runs its script and ends; it reads no commands from stdin */
			shell->is_shell = FALSE;
			shell->interactive = FALSE;
		} else if (shell->tty) {
			shell->interactive = TRUE;
		}
	} else if (g_strv_contains(known, command_name(shell->argv[0]))) {
		g_autoptr(GString) text = g_string_new(NULL);
		Command *cmd = g_new0(Command, 1);
		/* already split: quote every word so the shell's expansion leaves it be */
		for (guint i = 0; i < n; i++) {
			g_autofree gchar *quoted = g_shell_quote(shell->argv[i]);
			if (i > 0)
				g_string_append_c(text, ' ');
			g_string_append(text, quoted);
		}
		cmd->sep = SEP_NONE;
		cmd->text = g_string_free(g_steal_pointer(&text), FALSE);
		g_queue_push_tail(&shell->pending, cmd);
	} else {
		/* as runc words it when the binary is not in the image */
		g_autofree gchar *error = g_strdup_printf(
		        "OCI runtime exec failed: exec failed: unable to start container process: "
		        "exec: \"%s\": executable file not found in $PATH: unknown",
		        shell->argv[0]);
		shell_finish(shell, -1, error);
		return;
	}
	shell_run(shell);
}

void
kubesim_shell_free(KubesimShell *shell)
{
	if (shell == NULL)
		return;
	g_clear_handle_id(&shell->sleep_id, g_source_remove);
	g_clear_handle_id(&shell->exit_id, g_source_remove);
	g_queue_clear_full(&shell->pending, command_free);
	g_ptr_array_unref(shell->env);
	g_strfreev(shell->argv);
	g_free(shell->hostname);
	g_free(shell->namespace_);
	g_free(shell->cwd);
	g_free(shell->exit_error);
	g_string_free(shell->line, TRUE);
	g_string_free(shell->input, TRUE);
	g_free(shell);
}
