/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <string.h>

#include <glib/gstdio.h>
#include <unistd.h>

#include "broker/msd-session-subject.h"
#include "kube/msd-exec-status.h"
#include "meshsync-error.h"
#include "meshsync-session-private.h"
#include "meshsync-session.h"
#include "util/msd-utf8-chunk.h"

static void
test_chunk_length_boundaries(void)
{
	/* "aé" = 61 c3 a9; "€" = e2 82 ac; "😀" = f0 9f 98 80 */
	const guint8 two[] = {'a', 0xc3, 0xa9};
	const guint8 four[] = {'a', 'b', 0xf0, 0x9f, 0x98, 0x80};
	const guint8 bad[] = {'a', 'b', 'c', 0xff, 'd'};
	const guint8 lone[] = {'a', 'b', 'c', 0xc3, 'x'};

	/* a cut inside "é" moves before it */
	g_assert_cmpuint(msd_utf8_chunk_length(two, 3, 4, FALSE), ==, 3);
	g_assert_cmpuint(msd_utf8_chunk_length(four, 6, 4, FALSE), ==, 2);
	g_assert_cmpuint(msd_utf8_chunk_length(four, 6, 5, FALSE), ==, 2);
	g_assert_cmpuint(msd_utf8_chunk_length(four, 6, 6, FALSE), ==, 6);
	/* the end of what arrived holds back a sequence cut short, unless nothing follows */
	g_assert_cmpuint(msd_utf8_chunk_length(four, 4, 100, FALSE), ==, 2);
	g_assert_cmpuint(msd_utf8_chunk_length(four, 4, 100, TRUE), ==, 4);
	/* bytes that are never valid go one by one: no stall */
	g_assert_cmpuint(msd_utf8_chunk_length(bad, 5, 4, FALSE), ==, 4);
	/* a lead byte followed by no continuation is invalid at once */
	g_assert_cmpuint(msd_utf8_chunk_length(lone, 5, 5, FALSE), ==, 5);
	g_assert_cmpuint(msd_utf8_chunk_length(lone, 4, 4, FALSE), ==, 3);
	g_assert_cmpuint(msd_utf8_chunk_length(two, 0, 4, FALSE), ==, 0);
}

/* Every split of a long multi-byte text, read in pieces of every size, comes out as chunks
 * that are valid UTF-8 on their own, no larger than the limit, and whole when joined. */
static void
test_chunker_reassembles(void)
{
	g_autoptr(GString) text = g_string_new(NULL);

	for (guint i = 0; i < 200; i++)
		g_string_append(text, i % 3 == 0 ? "é" : i % 3 == 1 ? "€x" : "😀");
	for (gsize max = 4; max <= 13; max++) {
		for (gsize piece = 1; piece <= 9; piece++) {
			MsdUtf8Chunker chunker;
			g_autoptr(GString) joined = g_string_new(NULL);
			GBytes *chunk;

			msd_utf8_chunker_init(&chunker, max);
			for (gsize off = 0; off < text->len; off += piece) {
				msd_utf8_chunker_push(&chunker, (const guint8 *)text->str + off,
				                      MIN(piece, text->len - off));
				while ((chunk = msd_utf8_chunker_pop(&chunker, FALSE)) != NULL) {
					gsize n = 0;
					const gchar *d = g_bytes_get_data(chunk, &n);

					g_assert_cmpuint(n, <=, max);
					g_assert_true(g_utf8_validate(d, (gssize)n, NULL));
					g_string_append_len(joined, d, (gssize)n);
					g_bytes_unref(chunk);
				}
			}
			while ((chunk = msd_utf8_chunker_pop(&chunker, TRUE)) != NULL) {
				g_string_append_len(joined, g_bytes_get_data(chunk, NULL),
				                    (gssize)g_bytes_get_size(chunk));
				g_bytes_unref(chunk);
			}
			g_assert_cmpuint(msd_utf8_chunker_get_pending(&chunker), ==, 0);
			g_assert_cmpstr(joined->str, ==, text->str);
			msd_utf8_chunker_clear(&chunker);
		}
	}
}

static void
test_chunker_flushes_an_incomplete_tail(void)
{
	MsdUtf8Chunker chunker;
	const guint8 cut[] = {'o', 'k', 0xe2, 0x82};
	g_autoptr(GBytes) first = NULL;
	g_autoptr(GBytes) rest = NULL;

	msd_utf8_chunker_init(&chunker, 1024);
	msd_utf8_chunker_push(&chunker, cut, sizeof(cut));
	first = msd_utf8_chunker_pop(&chunker, FALSE);
	g_assert_cmpuint(g_bytes_get_size(first), ==, 2);
	g_assert_null(msd_utf8_chunker_pop(&chunker, FALSE));
	/* at the end of the stream the invalid tail still goes out */
	rest = msd_utf8_chunker_pop(&chunker, TRUE);
	g_assert_cmpuint(g_bytes_get_size(rest), ==, 2);
	msd_utf8_chunker_clear(&chunker);
}

static void
test_subject_ids(void)
{
	g_autofree gchar *plain = msd_session_subject_exec("default", "web-0", "app", "abc");
	g_autofree gchar *logs = msd_session_subject_logs("default", "web-0", "app");
	g_autofree gchar *odd = msd_session_subject_exec("ns", "pod.v1", "", "a b*>%");

	/* real names keep upstream's ids */
	g_assert_cmpstr(plain, ==, "exec.default.web-0.app.abc");
	g_assert_cmpstr(logs, ==, "logs.default.web-0.app");
	/* an empty field, wildcards, a space, the escape itself and a dot outside the pod are
	 * encoded; a pod's dots are kept, as Meshery Server writes the subject */
	g_assert_cmpstr(odd, ==, "exec.ns.pod.v1.%.a%20b%2A%3E%25");
}

static void
test_subject_round_trip(void)
{
	const gchar *fields[] = {"",  "web-0", "pod.v1",    "a b", "*",     ">",
	                         "%", "%25",   "tab\there", "ünï", "x.y.z", "\x7f"};

	for (guint i = 0; i < G_N_ELEMENTS(fields); i++) {
		g_autoptr(GString) token = g_string_new(NULL);
		g_autofree gchar *back = NULL;

		msd_session_subject_append_token(token, fields[i], FALSE);
		g_assert_null(strchr(token->str, '.'));
		g_assert_null(strchr(token->str, ' '));
		g_assert_null(strchr(token->str, '*'));
		g_assert_null(strchr(token->str, '>'));
		g_assert_cmpuint(token->len, >, 0);
		back = msd_session_subject_decode_token(token->str, FALSE);
		g_assert_cmpstr(back, ==, fields[i]);
	}
	g_assert_null(msd_session_subject_decode_token("a.b", FALSE));
	g_assert_null(msd_session_subject_decode_token("%zz", FALSE));
	g_assert_null(msd_session_subject_decode_token("%2", FALSE));
	g_assert_null(msd_session_subject_decode_token("%00", FALSE));
	g_assert_null(msd_session_subject_decode_token("", FALSE));
}

/* Whole ids split back into their fields, a dotted pod included. */
static void
test_subject_parse(void)
{
	const gchar *cases[][4] = {
	        {"default", "web-0", "app", "3f1c"},
	        {"ns", "db.primary.v2", "", "a.b c"},
	        {"", "", "", ""},
	        {"x", "p*>%", "c d", "%"},
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree gchar *exec = msd_session_subject_exec(cases[i][0], cases[i][1],
		                                                  cases[i][2], cases[i][3]);
		g_autofree gchar *logs =
		        msd_session_subject_logs(cases[i][0], cases[i][1], cases[i][2]);
		g_autofree gchar *ns = NULL;
		g_autofree gchar *pod = NULL;
		g_autofree gchar *container = NULL;
		g_autofree gchar *id = NULL;

		g_assert_true(msd_session_subject_parse(exec, &ns, &pod, &container, &id));
		g_assert_cmpstr(ns, ==, cases[i][0]);
		g_assert_cmpstr(pod, ==, cases[i][1]);
		g_assert_cmpstr(container, ==, cases[i][2]);
		g_assert_cmpstr(id, ==, cases[i][3]);
		g_clear_pointer(&ns, g_free);
		g_clear_pointer(&pod, g_free);
		g_clear_pointer(&container, g_free);
		g_clear_pointer(&id, g_free);
		g_assert_true(msd_session_subject_parse(logs, &ns, &pod, &container, &id));
		g_assert_cmpstr(pod, ==, cases[i][1]);
		g_assert_cmpstr(container, ==, cases[i][2]);
		g_assert_null(id);
	}
	g_assert_false(msd_session_subject_parse("exec.a.b", NULL, NULL, NULL, NULL));
	g_assert_false(msd_session_subject_parse("shell.a.b.c.d", NULL, NULL, NULL, NULL));
	g_assert_false(msd_session_subject_parse("exec.a..b.c.d", NULL, NULL, NULL, NULL));
	g_assert_false(msd_session_subject_parse("logs.a.b.c d", NULL, NULL, NULL, NULL));
}

static void
test_exec_status(void)
{
	const gchar *ok = "{\"metadata\":{},\"status\":\"Success\"}";
	const gchar *exit42 =
	        "{\"metadata\":{},\"status\":\"Failure\",\"message\":\"command terminated with "
	        "non-zero exit code: error executing command [sh -c exit 42], exit code 42\","
	        "\"reason\":\"NonZeroExitCode\",\"details\":{\"causes\":[{\"reason\":\"ExitCode\","
	        "\"message\":\"42\"}]}}";
	const gchar *other = "{\"status\":\"Failure\",\"message\":\"container not running\"}";
	const gchar *junk = "not a status";
	g_autofree gchar *message = NULL;
	gint code = 7;

	g_assert_true(msd_exec_status_parse(ok, strlen(ok), &code, &message));
	g_assert_cmpint(code, ==, 0);
	g_assert_null(message);

	g_assert_false(msd_exec_status_parse(exit42, strlen(exit42), &code, &message));
	g_assert_cmpint(code, ==, 42);
	g_assert_nonnull(strstr(message, "exit code 42"));
	g_clear_pointer(&message, g_free);

	g_assert_false(msd_exec_status_parse(other, strlen(other), &code, &message));
	g_assert_cmpint(code, ==, -1);
	g_assert_cmpstr(message, ==, "container not running");
	g_clear_pointer(&message, g_free);

	g_assert_false(msd_exec_status_parse(junk, strlen(junk), &code, &message));
	g_assert_cmpint(code, ==, -1);
	g_assert_nonnull(strstr(message, "not a status"));
}

/* Teardown runs once whatever ends the session, and a session never started closes too. */
static void
test_session_closes_once(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MeshSyncSession) session = NULL;
	const gchar *yaml = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
	                    "    server: http://127.0.0.1:1\ncontexts:\n- name: x\n  context:\n"
	                    "    cluster: c\n    user: u\nusers:\n- name: u\n  user: {}\n"
	                    "current-context: x\n";
	guint closed = 0;

	config = meshsync_kube_config_new_from_data(yaml, -1, NULL, &error);
	g_assert_no_error(error);
	session = meshsync_session_new_exec(config, "ns", "pod", NULL, NULL);
	g_assert_cmpstr(meshsync_session_get_id(session), ==, "exec.ns.pod.");
	g_signal_connect_swapped(session, "closed", G_CALLBACK(g_atomic_int_inc), &closed);
	g_assert_true(meshsync_session_write(session, (const guint8 *)"x\n", 2, NULL));
	meshsync_session_start(session);
	g_assert_cmpint(meshsync_session_get_state(session), ==, MESHSYNC_SESSION_STATE_STARTING);
	meshsync_session_stop(session);
	meshsync_session_stop(session);
	g_assert_cmpuint(closed, ==, 1);
	g_assert_cmpint(meshsync_session_get_state(session), ==, MESHSYNC_SESSION_STATE_CLOSED);
	g_assert_false(meshsync_session_write(session, (const guint8 *)"x", 1, &error));
	g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION);
	/* the cancelled request unwinds from the main loop without another closed */
	while (g_main_context_iteration(NULL, FALSE))
		;
	g_assert_cmpuint(closed, ==, 1);
}

/* Holds every connection it is given and never answers: an API server that hangs. */
static gboolean
silent_incoming_cb(GSocketService *service,
                   GSocketConnection *connection,
                   GObject *source,
                   gpointer user_data)
{
	g_ptr_array_add(user_data, g_object_ref(connection));
	return TRUE;
}

static void
record_error_cb(MeshSyncSession *session, const GError *error, gpointer user_data)
{
	GError **out = user_data;

	g_clear_error(out);
	*out = g_error_copy(error);
}

/* An exec's pod lookup, and a log's request, that the server never answers end the session
 * at the opening's deadline with an error naming the pod, instead of leaving it starting. */
static void
test_session_open_deadline(gconstpointer data)
{
	MeshSyncSessionKind kind = GPOINTER_TO_INT(data);
	g_autoptr(GSocketService) service = g_socket_service_new();
	g_autoptr(GPtrArray) held = g_ptr_array_new_with_free_func(g_object_unref);
	g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback(G_SOCKET_FAMILY_IPV4);
	g_autoptr(GSocketAddress) want = g_inet_socket_address_new(loopback, 0);
	g_autoptr(GSocketAddress) bound = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GError) reported = NULL;
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MeshSyncSession) session = NULL;
	g_autofree gchar *yaml = NULL;
	guint closed = 0;

	g_assert_true(g_socket_listener_add_address(G_SOCKET_LISTENER(service), want,
	                                            G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP,
	                                            NULL, &bound, &error));
	g_assert_no_error(error);
	g_signal_connect(service, "incoming", G_CALLBACK(silent_incoming_cb), held);
	yaml = g_strdup_printf("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
	                       "    server: http://127.0.0.1:%u\ncontexts:\n- name: x\n  context:\n"
	                       "    cluster: c\n    user: u\nusers:\n- name: u\n  user: {}\n"
	                       "current-context: x\n",
	                       g_inet_socket_address_get_port(G_INET_SOCKET_ADDRESS(bound)));
	config = meshsync_kube_config_new_from_data(yaml, -1, NULL, &error);
	g_assert_no_error(error);
	session = kind == MESHSYNC_SESSION_KIND_LOG
	                  ? meshsync_session_new_log(config, "ns", "web-0", "app")
	                  : meshsync_session_new_exec(config, "ns", "web-0", "app", NULL);
	meshsync_session_set_open_timeout(session, 100);
	g_signal_connect(session, "error", G_CALLBACK(record_error_cb), &reported);
	g_signal_connect_swapped(session, "closed", G_CALLBACK(g_atomic_int_inc), &closed);
	meshsync_session_start(session);
	while (closed == 0)
		g_main_context_iteration(NULL, TRUE);

	/* the server did take the connection (queued in its backlog, accepted by now or soon):
	 * the deadline, not a refused connect, ended the session */
	while (held->len == 0)
		g_main_context_iteration(NULL, TRUE);
	g_assert_error(reported, MESHSYNC_ERROR, MESHSYNC_ERROR_TIMED_OUT);
	g_assert_nonnull(strstr(reported->message, "ns/web-0"));
	g_assert_cmpint(meshsync_session_get_state(session), ==, MESHSYNC_SESSION_STATE_CLOSED);
	g_socket_service_stop(service);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);

	g_test_add_func("/sessions/chunk-length", test_chunk_length_boundaries);
	g_test_add_func("/sessions/chunker-reassembles", test_chunker_reassembles);
	g_test_add_func("/sessions/chunker-tail", test_chunker_flushes_an_incomplete_tail);
	g_test_add_func("/sessions/subject-ids", test_subject_ids);
	g_test_add_func("/sessions/subject-round-trip", test_subject_round_trip);
	g_test_add_func("/sessions/subject-parse", test_subject_parse);
	g_test_add_func("/sessions/exec-status", test_exec_status);
	g_test_add_func("/sessions/closes-once", test_session_closes_once);
	g_test_add_data_func("/sessions/open-deadline/exec",
	                     GINT_TO_POINTER(MESHSYNC_SESSION_KIND_EXEC),
	                     test_session_open_deadline);
	g_test_add_data_func("/sessions/open-deadline/log",
	                     GINT_TO_POINTER(MESHSYNC_SESSION_KIND_LOG),
	                     test_session_open_deadline);
	return g_test_run();
}
