/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <gio/gunixinputstream.h>
#include <libsoup/soup.h>
#include <string.h>
#include <unistd.h>

#include "kube/msd-proxy-resolver.h"
#include "kube/msd-read-ahead-proxy.h"
#include "kube/msd-read-ahead-stream.h"
#include "test-tls-server.h"

static gchar *
pattern_new(gsize size)
{
	gchar *data = g_malloc(size);

	for (gsize i = 0; i < size; i++)
		data[i] = (gchar)('a' + (i * 7 + i / 13) % 26);
	return data;
}

/* Small reads, as GnuTLS makes them (a five-byte header, then the record), come from one
 * read of the base per 64 KiB; a read as large as the buffer goes straight to the base. */
static void
test_read_ahead_small_reads(void)
{
	const gsize size = 300 * 1024;
	g_autofree gchar *data = pattern_new(size);
	g_autoptr(GInputStream) base =
	        g_memory_input_stream_new_from_data(g_memdup2(data, size), size, g_free);
	g_autoptr(GInputStream) stream = msd_read_ahead_input_stream_new(base);
	MsdReadAheadInputStream *ahead = MSD_READ_AHEAD_INPUT_STREAM(stream);
	g_autofree gchar *out = g_malloc(size);
	gsize got = 0;
	guint step = 0;

	while (got < size) {
		g_autoptr(GError) error = NULL;
		gsize want = step++ % 2 == 0 ? 5 : 4091;
		gssize n;

		n = g_pollable_input_stream_read_nonblocking(G_POLLABLE_INPUT_STREAM(stream),
		                                             out + got, MIN(want, size - got), NULL,
		                                             &error);
		g_assert_no_error(error);
		g_assert_cmpint(n, >, 0);
		got += (gsize)n;
	}
	g_assert_cmpmem(out, size, data, size);
	g_assert_cmpuint(msd_read_ahead_input_stream_get_n_base_reads(ahead), ==, 5);
	g_assert_cmpuint(msd_read_ahead_input_stream_get_n_reads(ahead), >, 140);
	/* the end */
	g_assert_cmpint(g_input_stream_read(stream, out, 5, NULL, NULL), ==, 0);

	/* a large read of a fresh stream skips the buffer */
	{
		g_autoptr(GInputStream) again =
		        g_memory_input_stream_new_from_data(g_memdup2(data, size), size, g_free);
		g_autoptr(GInputStream) wrapped = msd_read_ahead_input_stream_new(again);
		gssize n = g_input_stream_read(wrapped, out, size, NULL, NULL);

		g_assert_cmpint(n, ==, (gssize)size);
		g_assert_cmpmem(out, size, data, size);
	}
}

static gboolean
source_fired_cb(GObject *stream, gpointer user_data)
{
	*(gboolean *)user_data = TRUE;
	return G_SOURCE_REMOVE;
}

/* Whether a source made now for @stream fires at once (without waiting for the pipe). */
static gboolean
fires_now(GInputStream *stream)
{
	g_autoptr(GSource) source =
	        g_pollable_input_stream_create_source(G_POLLABLE_INPUT_STREAM(stream), NULL);
	gboolean fired = FALSE;

	g_source_set_callback(source, G_SOURCE_FUNC(source_fired_cb), &fired, NULL);
	g_source_attach(source, NULL);
	/* a ready source is dispatched by the first iteration that does not block */
	for (guint i = 0; i < 3 && !fired; i++)
		g_main_context_iteration(NULL, FALSE);
	g_source_destroy(source);
	return fired;
}

/* A read-ahead stream over a pipe's reading end (the pipe stands for the socket); the writing
 * end goes to *@write_fd. */
static GInputStream *
pipe_stream_new(gint *write_fd)
{
	gint fds[2];
	g_autoptr(GInputStream) base = NULL;

	g_assert_no_errno(pipe(fds));
	*write_fd = fds[1];
	base = g_unix_input_stream_new(fds[0], TRUE);
	return msd_read_ahead_input_stream_new(base);
}

/* Bytes read ahead are readable while the socket (a pipe here) has nothing: a poll on the
 * socket alone would wait for bytes that already came. */
static void
test_read_ahead_buffered_is_readable(void)
{
	gint writer;
	g_autoptr(GInputStream) stream = pipe_stream_new(&writer);
	g_autoptr(GError) error = NULL;
	gchar out[16];
	gssize n;
	g_assert_true(g_pollable_input_stream_can_poll(G_POLLABLE_INPUT_STREAM(stream)));
	g_assert_false(g_pollable_input_stream_is_readable(G_POLLABLE_INPUT_STREAM(stream)));
	g_assert_false(fires_now(stream));
	n = g_pollable_input_stream_read_nonblocking(G_POLLABLE_INPUT_STREAM(stream), out, 5, NULL,
	                                             &error);
	g_assert_error(error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK);
	g_assert_cmpint(n, ==, -1);
	g_clear_error(&error);

	g_assert_cmpint(write(writer, "0123456789", 10), ==, 10);
	n = g_pollable_input_stream_read_nonblocking(G_POLLABLE_INPUT_STREAM(stream), out, 3, NULL,
	                                             &error);
	g_assert_no_error(error);
	g_assert_cmpint(n, ==, 3);
	g_assert_cmpmem(out, 3, "012", 3);
	/* the pipe is empty now; seven bytes wait in the stream */
	g_assert_true(g_pollable_input_stream_is_readable(G_POLLABLE_INPUT_STREAM(stream)));
	g_assert_true(fires_now(stream));
	n = g_pollable_input_stream_read_nonblocking(G_POLLABLE_INPUT_STREAM(stream), out,
	                                             sizeof(out), NULL, &error);
	g_assert_no_error(error);
	g_assert_cmpint(n, ==, 7);
	g_assert_cmpmem(out, 7, "3456789", 7);
	g_assert_false(g_pollable_input_stream_is_readable(G_POLLABLE_INPUT_STREAM(stream)));

	/* the writer's end closes: the end of the stream, once */
	close(writer);
	g_assert_true(fires_now(stream));
	n = g_input_stream_read(stream, out, sizeof(out), NULL, &error);
	g_assert_no_error(error);
	g_assert_cmpint(n, ==, 0);
}

typedef struct {
	GString *got;
	guint empty_wakeups; /* dispatched with nothing to read */
} KeptReader;

/* Reads three bytes at a time and stays attached, as GIO's TLS connection and libsoup's
 * WebSocket input keep their source across reads. */
static gboolean
kept_reader_cb(GObject *stream, gpointer user_data)
{
	KeptReader *r = user_data;
	g_autoptr(GError) error = NULL;
	gchar out[3];
	gssize n = g_pollable_input_stream_read_nonblocking(G_POLLABLE_INPUT_STREAM(stream), out,
	                                                    sizeof(out), NULL, &error);

	if (n > 0)
		g_string_append_len(r->got, out, n);
	else
		r->empty_wakeups++;
	return G_SOURCE_CONTINUE;
}

/* Runs the iterations that need no waiting: every ready source is dispatched. */
static void
run_ready(void)
{
	for (guint i = 0; i < 16; i++)
		g_main_context_iteration(NULL, FALSE);
}

/* One source kept attached while the buffer fills and empties: it wakes for bytes read ahead
 * while the pipe is empty, and sleeps once they are read. Made with the buffer empty, a
 * source on the pipe alone slept on seven bytes already read; made with bytes waiting, a
 * source that fired at once went on firing with none left. */
static void
test_read_ahead_kept_source(void)
{
	gint writer;
	g_autoptr(GInputStream) stream = pipe_stream_new(&writer);
	g_autoptr(GSource) source = NULL;
	g_autoptr(GSource) again = NULL;
	KeptReader r = {g_string_new(NULL), 0};

	/* made while nothing waits anywhere */
	source = g_pollable_input_stream_create_source(G_POLLABLE_INPUT_STREAM(stream), NULL);
	g_source_set_callback(source, G_SOURCE_FUNC(kept_reader_cb), &r, NULL);
	g_source_attach(source, NULL);
	run_ready();
	g_assert_cmpuint(r.got->len, ==, 0);
	g_assert_cmpuint(r.empty_wakeups, ==, 0);

	/* the first read takes all ten bytes off the pipe; the other seven come from the buffer */
	g_assert_cmpint(write(writer, "0123456789", 10), ==, 10);
	while (r.got->len == 0)
		g_main_context_iteration(NULL, TRUE);
	run_ready();
	g_assert_cmpstr(r.got->str, ==, "0123456789");
	g_assert_cmpuint(r.empty_wakeups, ==, 0);
	g_source_destroy(source);

	/* made while five bytes wait in the buffer: it fires for them, then sleeps */
	g_string_truncate(r.got, 0);
	g_assert_cmpint(write(writer, "abcdefgh", 8), ==, 8);
	{
		g_autoptr(GError) error = NULL;
		gchar out[3];

		g_assert_cmpint(g_input_stream_read(stream, out, 3, NULL, &error), ==, 3);
		g_assert_no_error(error);
	}
	again = g_pollable_input_stream_create_source(G_POLLABLE_INPUT_STREAM(stream), NULL);
	g_source_set_callback(again, G_SOURCE_FUNC(kept_reader_cb), &r, NULL);
	g_source_attach(again, NULL);
	run_ready();
	g_assert_cmpstr(r.got->str, ==, "defgh");
	g_assert_cmpuint(r.empty_wakeups, ==, 0);
	run_ready();
	g_assert_cmpuint(r.empty_wakeups, ==, 0);

	/* new bytes on the pipe wake it again */
	g_assert_cmpint(write(writer, "XY", 2), ==, 2);
	while (r.got->len < 7)
		g_main_context_iteration(NULL, TRUE);
	g_assert_cmpstr(r.got->str, ==, "defghXY");
	g_source_destroy(again);
	close(writer);
	g_string_free(r.got, TRUE);
}

/* The connection wraps the input only; closing it closes what it wraps. */
static void
test_read_ahead_connection(void)
{
	g_autoptr(GInputStream) in = g_memory_input_stream_new_from_data("abc", 3, NULL);
	g_autoptr(GOutputStream) out = g_memory_output_stream_new_resizable();
	g_autoptr(GIOStream) base = g_simple_io_stream_new(in, out);
	g_autoptr(GIOStream) conn = msd_read_ahead_connection_new(base);
	g_autoptr(GError) error = NULL;
	gchar buffer[4];

	g_assert_true(MSD_IS_READ_AHEAD_INPUT_STREAM(g_io_stream_get_input_stream(conn)));
	g_assert_true(g_io_stream_get_output_stream(conn) == out);
	g_assert_true(msd_read_ahead_connection_get_base(MSD_READ_AHEAD_CONNECTION(conn)) == base);
	g_assert_cmpint(
	        g_input_stream_read(g_io_stream_get_input_stream(conn), buffer, 1, NULL, &error),
	        ==, 1);
	g_assert_no_error(error);
	g_assert_true(g_io_stream_close(conn, NULL, &error));
	g_assert_no_error(error);
	g_assert_true(g_io_stream_is_closed(base));
	g_assert_true(g_input_stream_is_closed(in));
}

/* The resolver answers the read-ahead "proxy" for direct https and wss only. */
static void
test_read_ahead_resolver(void)
{
	g_autoptr(MsdProxyResolver) resolver = msd_proxy_resolver_new_direct();
	g_autoptr(MsdProxyResolver) env =
	        msd_proxy_resolver_new_from_env("http://proxy:3128", NULL, "internal.example");
	static const struct {
		const gchar *uri;
		const gchar *expected;
	} cases[] = {
	        {"https://api.example:6443/api", "meshsync-read-ahead://api.example:6443"},
	        {"https://api.example/api", "meshsync-read-ahead://api.example:443"},
	        {"wss://10.0.0.1:6443/exec", "meshsync-read-ahead://10.0.0.1:6443"},
	        {"https://[fd00::1]:6443/api", "meshsync-read-ahead://[fd00::1]:6443"},
	        {"http://api.example:8080/api", "direct://"},
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_auto(GStrv) off = g_proxy_resolver_lookup(G_PROXY_RESOLVER(resolver),
		                                            cases[i].uri, NULL, NULL);

		g_assert_cmpstr(off[0], ==, "direct://");
	}
	msd_proxy_resolver_set_read_ahead(resolver, TRUE);
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_auto(GStrv) on = g_proxy_resolver_lookup(G_PROXY_RESOLVER(resolver), cases[i].uri,
		                                           NULL, NULL);

		g_assert_cmpstr(on[0], ==, cases[i].expected);
		g_assert_true(msd_read_ahead_proxy_uri_is(on[0]) ==
		              g_str_has_prefix(cases[i].expected, "meshsync-"));
	}
	/* a proxy still carries what it carries; what NO_PROXY sends direct is read ahead */
	msd_proxy_resolver_set_read_ahead(env, TRUE);
	{
		g_auto(GStrv) proxied = g_proxy_resolver_lookup(
		        G_PROXY_RESOLVER(env), "https://api.example:6443/api", NULL, NULL);
		g_auto(GStrv) bypassed = g_proxy_resolver_lookup(
		        G_PROXY_RESOLVER(env), "https://internal.example:6443/api", NULL, NULL);

		g_assert_cmpstr(proxied[0], ==, "http://proxy:3128");
		g_assert_cmpstr(bypassed[0], ==, "meshsync-read-ahead://internal.example:6443");
	}
	{
		g_autoptr(GProxy) proxy = g_proxy_get_default_for_protocol(MSD_READ_AHEAD_PROTOCOL);

		g_assert_true(MSD_IS_READ_AHEAD_PROXY(proxy));
	}
}

/* GIO's wording of a failed connection "through a proxy" is put back as for a direct one. */
static void
test_read_ahead_direct_message(void)
{
	g_autofree gchar *reworded = msd_read_ahead_direct_message(
	        "Could not connect to proxy server 10.0.0.7: No route to host");
	g_autofree gchar *unchanged =
	        msd_read_ahead_direct_message("Could not connect to 10.0.0.7: No route to host");

	g_assert_cmpstr(reworded, ==, "Could not connect to 10.0.0.7: No route to host");
	g_assert_null(unchanged);
	g_assert_null(msd_read_ahead_direct_message("Socket I/O timed out"));
	g_assert_null(msd_read_ahead_direct_message("Could not connect to proxy server"));
}

typedef struct {
	GIOStream *tls_base; /* (owned) (nullable): what the TLS connection runs over */
	GBytes *body;        /* (owned) (nullable) */
	GError *error;       /* (owned) (nullable) */
	gboolean done;
} NetworkEvents;

static void
read_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	NetworkEvents *events = user_data;

	events->body =
	        soup_session_send_and_read_finish(SOUP_SESSION(source), result, &events->error);
	events->done = TRUE;
}

static void
network_event_cb(SoupMessage *msg,
                 GSocketClientEvent event,
                 GIOStream *connection,
                 gpointer user_data)
{
	NetworkEvents *events = user_data;

	if (event == G_SOCKET_CLIENT_TLS_HANDSHAKING && events->tls_base == NULL)
		g_object_get(connection, "base-io-stream", &events->tls_base, NULL);
}

static gboolean
accept_certificate_cb(SoupMessage *msg,
                      GTlsCertificate *certificate,
                      GTlsCertificateFlags errors,
                      gpointer user_data)
{
	return TRUE;
}

/* Through libsoup and GIO's TLS, as the kube client connects: the TLS connection runs over
 * the read-ahead stream, the body arrives whole, and the socket is read in large pieces. */
static void
test_read_ahead_through_soup(void)
{
	g_autoptr(MsdTestServer) server = msd_test_server_new(TRUE);
	g_autoptr(MsdProxyResolver) resolver = msd_proxy_resolver_new_direct();
	g_autoptr(SoupSession) session = NULL;
	g_autoptr(SoupMessage) msg = NULL;
	g_autoptr(GBytes) body = NULL;
	g_autofree gchar *url = NULL;
	g_autofree gchar *payload = NULL;
	GIOStream *wrapped = NULL;
	MsdReadAheadInputStream *input;
	NetworkEvents events = {NULL, NULL, NULL, FALSE};
	const gsize size = 512 * 1024;

	payload = pattern_new(size + 1);
	payload[size] = '\0';
	msd_test_server_add(server, "/big", SOUP_STATUS_OK, payload);
	msd_proxy_resolver_set_read_ahead(resolver, TRUE);
	session = soup_session_new_with_options("proxy-resolver", resolver, NULL);
	url = g_strconcat(msd_test_server_get_url(server), "/big", NULL);
	msg = soup_message_new("GET", url);
	g_signal_connect(msg, "network-event", G_CALLBACK(network_event_cb), &events);
	g_signal_connect(msg, "accept-certificate", G_CALLBACK(accept_certificate_cb), NULL);
	/* the test server answers on this thread's context: the request must not block it */
	soup_session_send_and_read_async(session, msg, G_PRIORITY_DEFAULT, NULL, read_cb, &events);
	while (!events.done)
		g_main_context_iteration(NULL, TRUE);
	g_assert_no_error(events.error);
	body = g_steal_pointer(&events.body);
	g_assert_cmpuint(soup_message_get_status(msg), ==, SOUP_STATUS_OK);
	g_assert_cmpmem(g_bytes_get_data(body, NULL), g_bytes_get_size(body), payload, size);

	/* GIO wraps what a proxy hands back in a GTcpWrapperConnection */
	g_assert_nonnull(events.tls_base);
	g_assert_true(G_IS_TCP_WRAPPER_CONNECTION(events.tls_base));
	wrapped = g_tcp_wrapper_connection_get_base_io_stream(
	        G_TCP_WRAPPER_CONNECTION(events.tls_base));
	g_assert_true(MSD_IS_READ_AHEAD_CONNECTION(wrapped));
	input = MSD_READ_AHEAD_INPUT_STREAM(g_io_stream_get_input_stream(wrapped));
	/* two small reads per TLS record, and far fewer reads of the socket */
	g_assert_cmpuint(msd_read_ahead_input_stream_get_n_reads(input), >=, 2 * (size / 16384));
	g_assert_cmpuint(msd_read_ahead_input_stream_get_n_base_reads(input) * 4, <,
	                 msd_read_ahead_input_stream_get_n_reads(input));
	g_clear_object(&events.tls_base);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/read-ahead/small-reads", test_read_ahead_small_reads);
	g_test_add_func("/read-ahead/buffered-is-readable", test_read_ahead_buffered_is_readable);
	g_test_add_func("/read-ahead/kept-source", test_read_ahead_kept_source);
	g_test_add_func("/read-ahead/connection", test_read_ahead_connection);
	g_test_add_func("/read-ahead/resolver", test_read_ahead_resolver);
	g_test_add_func("/read-ahead/through-soup", test_read_ahead_through_soup);
	g_test_add_func("/read-ahead/direct-message", test_read_ahead_direct_message);
	return g_test_run();
}
