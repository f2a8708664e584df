/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <string.h>

#include "broker/msd-replay-window.h"

#define MIB (1024 * 1024)

/* A payload of @len bytes that says which message it is. */
static gchar *
payload_new(guint64 seq, gsize len)
{
	gchar *data = g_malloc(len);
	g_autofree gchar *head = g_strdup_printf("#%" G_GUINT64_FORMAT "#", seq);

	memset(data, 'a' + (gchar)(seq % 26), len);
	memcpy(data, head, MIN(strlen(head), len));
	return data;
}

static guint64
append(MsdReplayWindow *w, gsize len)
{
	guint64 next = msd_replay_window_get_last_seq(w) + 1;
	g_autofree gchar *data = payload_new(next, len);
	g_autofree gchar *subject = g_strdup_printf("s.%" G_GUINT64_FORMAT, next);

	g_assert_cmpuint(msd_replay_window_append(w, subject, data, len), ==, next);
	return next;
}

/* Sends the next unsent message, checking it is message @seq of @len bytes. */
static void
send_expect(MsdReplayWindow *w, guint64 seq, gsize len)
{
	const gchar *subject;
	gconstpointer data;
	gsize got;
	g_autofree gchar *want = payload_new(seq, len);
	g_autofree gchar *want_subject = g_strdup_printf("s.%" G_GUINT64_FORMAT, seq);

	g_assert_true(msd_replay_window_peek_unsent(w, &subject, &data, &got));
	g_assert_cmpstr(subject, ==, want_subject);
	g_assert_cmpuint(got, ==, len);
	g_assert_true(memcmp(data, want, len) == 0);
	msd_replay_window_mark_sent(w);
	g_assert_cmpuint(msd_replay_window_get_last_sent(w), ==, seq);
}

static void
test_order_and_confirm(void)
{
	MsdReplayWindow *w = msd_replay_window_new();
	const gchar *subject;
	gconstpointer data;
	gsize len;

	g_assert_false(msd_replay_window_peek_unsent(w, &subject, &data, &len));
	for (guint i = 1; i <= 10; i++)
		append(w, 100 + i);
	g_assert_cmpuint(msd_replay_window_get_n_messages(w), ==, 10);
	g_assert_cmpuint(msd_replay_window_get_n_unsent(w), ==, 10);
	/* subjects "s.1".."s.9" and "s.10" */
	g_assert_cmpuint(msd_replay_window_get_bytes(w), ==, 1055 + 9 * 3 + 4);
	g_assert_cmpuint(msd_replay_window_get_unsent_bytes(w), ==, msd_replay_window_get_bytes(w));
	for (guint i = 1; i <= 6; i++)
		send_expect(w, i, 100 + i);

	/* only what was sent is ever confirmed */
	msd_replay_window_confirm(w, 8);
	g_assert_cmpuint(msd_replay_window_get_n_messages(w), ==, 4);
	g_assert_cmpuint(msd_replay_window_get_n_unsent(w), ==, 4);
	g_assert_cmpuint(msd_replay_window_get_bytes(w), ==, msd_replay_window_get_unsent_bytes(w));
	send_expect(w, 7, 107);
	send_expect(w, 8, 108);
	msd_replay_window_confirm(w, 7);
	g_assert_cmpuint(msd_replay_window_get_n_messages(w), ==, 3);

	/* a rewind sends again from the oldest held */
	g_assert_cmpuint(msd_replay_window_rewind(w), ==, 1);
	for (guint i = 8; i <= 10; i++)
		send_expect(w, i, 100 + i);
	g_assert_false(msd_replay_window_peek_unsent(w, &subject, &data, &len));
	msd_replay_window_confirm(w, G_MAXUINT64);
	g_assert_cmpuint(msd_replay_window_get_n_messages(w), ==, 0);
	g_assert_cmpuint(msd_replay_window_get_bytes(w), ==, 0);

	/* the numbering goes on in an emptied window */
	g_assert_cmpuint(append(w, 5), ==, 11);
	send_expect(w, 11, 5);
	msd_replay_window_free(w);
}

/* Messages across many chunks, one larger than a chunk: order, content, and the memory. */
static void
test_chunks(void)
{
	MsdReplayWindow *w = msd_replay_window_new();
	const guint n = 6000;
	g_autofree gsize *sizes = g_new(gsize, n + 1);
	gsize mapped_full;

	for (guint i = 1; i <= n; i++) {
		sizes[i] = i == 700 ? 3 * MIB : 3000 + (i * 7919) % 5000;
		append(w, sizes[i]);
	}
	mapped_full = msd_replay_window_get_mapped_bytes(w);
	/* about 36 MB of messages, in 1 MiB chunks, the big one in its own */
	g_assert_cmpuint(mapped_full, >=, msd_replay_window_get_bytes(w));
	g_assert_cmpuint(mapped_full, <=, msd_replay_window_get_bytes(w) + 2 * MIB);

	for (guint i = 1; i <= n / 2; i++)
		send_expect(w, i, sizes[i]);
	/* a rewind halfway, as a reconnection does */
	g_assert_cmpuint(msd_replay_window_rewind(w), ==, n / 2);
	for (guint i = 1; i <= n; i++)
		send_expect(w, i, sizes[i]);

	/* confirming in steps gives chunks back as soon as they are passed */
	msd_replay_window_confirm(w, n / 2);
	g_assert_cmpuint(msd_replay_window_get_mapped_bytes(w), <, mapped_full / 2 + 10 * MIB);
	msd_replay_window_confirm(w, n);
	/* empty: one chunk to append to and eight spare ones at most */
	g_assert_cmpuint(msd_replay_window_get_mapped_bytes(w), <=, 9 * MIB);

	/* and the chunks are used again */
	for (guint i = n + 1; i <= n + 300; i++)
		append(w, 3000);
	g_assert_cmpuint(msd_replay_window_get_mapped_bytes(w), <=, 9 * MIB);
	for (guint i = n + 1; i <= n + 300; i++)
		send_expect(w, i, 3000);
	msd_replay_window_free(w);
}

/* An empty window whose chunk appended to was an oversize one gives it back. */
static void
test_oversize_alone(void)
{
	MsdReplayWindow *w = msd_replay_window_new();

	append(w, 2 * MIB);
	g_assert_cmpuint(msd_replay_window_get_mapped_bytes(w), >, 2 * MIB);
	send_expect(w, 1, 2 * MIB);
	msd_replay_window_confirm(w, 1);
	g_assert_cmpuint(msd_replay_window_get_mapped_bytes(w), ==, 0);
	append(w, 10);
	send_expect(w, 2, 10);
	msd_replay_window_clear(w);
	g_assert_cmpuint(msd_replay_window_get_n_messages(w), ==, 0);
	g_assert_cmpuint(append(w, 10), ==, 3);
	msd_replay_window_free(w);
}

/* Confirmations in uneven steps, mid-chunk and across whole chunks: what is held, its bytes
 * and the next message to send again stay right after each. */
static void
test_confirm_in_steps(void)
{
	MsdReplayWindow *w = msd_replay_window_new();
	static const guint64 steps[] = {1, 2, 150, 151, 152, 700, 1999, 2000, 2999, 3000};
	const guint n = 3000;
	g_autofree gsize *sizes = g_new(gsize, n + 1);
	guint64 confirmed = 0;

	for (guint i = 1; i <= n; i++) {
		sizes[i] = i == 1500 ? 2 * MIB : 1000 + (i * 7919) % 9000;
		append(w, sizes[i]);
	}
	for (guint i = 1; i <= n; i++)
		send_expect(w, i, sizes[i]);
	for (guint k = 0; k < G_N_ELEMENTS(steps); k++) {
		gsize held = 0;

		msd_replay_window_confirm(w, steps[k]);
		confirmed = steps[k];
		for (guint64 i = confirmed + 1; i <= n; i++) {
			g_autofree gchar *subject = g_strdup_printf("s.%" G_GUINT64_FORMAT, i);

			held += strlen(subject) + sizes[i];
		}
		g_assert_cmpuint(msd_replay_window_get_n_messages(w), ==, n - confirmed);
		g_assert_cmpuint(msd_replay_window_get_bytes(w), ==, held);
		if (confirmed == n)
			break;
		/* a reconnection here sends the oldest held first */
		g_assert_cmpuint(msd_replay_window_rewind(w), ==, n - confirmed);
		for (guint64 i = confirmed + 1; i <= n; i++)
			send_expect(w, i, sizes[i]);
	}
	g_assert_cmpuint(msd_replay_window_get_mapped_bytes(w), <=, 9 * MIB);
	g_assert_cmpuint(append(w, 10), ==, n + 1);
	send_expect(w, n + 1, 10);
	msd_replay_window_confirm(w, n + 1);
	g_assert_cmpuint(msd_replay_window_get_bytes(w), ==, 0);
	msd_replay_window_free(w);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/replay-window/order-and-confirm", test_order_and_confirm);
	g_test_add_func("/replay-window/chunks", test_chunks);
	g_test_add_func("/replay-window/oversize-alone", test_oversize_alone);
	g_test_add_func("/replay-window/confirm-in-steps", test_confirm_in_steps);
	return g_test_run();
}
