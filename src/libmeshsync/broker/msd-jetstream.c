/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * One file: the stream set-up, the window of events waiting for their PubAck, the ack
 * handler and the re-sends are one state machine over that window (send position, sequence
 * numbers, state subjects), as the comment below the includes explains.
 */

#define G_LOG_DOMAIN "MeshSyncBroker"

#include "config.h"

#include <string.h>

#include "broker/msd-jetstream.h"
#include "broker/msd-session-subject.h"
#include "meshsync-error.h"

/*
 * Why not js_PublishAsync: in nats.c 3.4.1 its pending list is a hash (a re-send after a
 * reconnection would go out of order), it has no per-message timeout (an ack lost with a
 * stream leader is waited for forever), it stalls the calling thread when MaxPending is
 * reached (on the loop thread, the one that reads the acks), and its ack handler runs on a
 * delivery thread with no completion callback to tie the closure's lifetime to. The wire
 * protocol is the same and small: an HPUB with a Nats-Msg-Id header and a reply subject, and
 * a PubAck ({"stream":..,"seq":..} or {"error":{..}}) on that reply subject. So the events
 * are published with a reply subject of their own (_INBOX.<nuid>.<seq>) and the acks come in
 * through the broker's own subscription, on the loop, where this module keeps the window.
 *
 * The window is ordered by publish sequence. Sending follows it; an ack removes its entry
 * wherever it is. A disconnection rewinds the send position to the oldest entry, and so does
 * an ack that is overdue (a JetStream cluster electing a new stream leader drops the publish
 * without answering): the whole window goes again in order, and the stream's duplicate window
 * (2 min) absorbs what it had stored already.
 */

#define MSD_JETSTREAM_MAX_AGE_NS    ((gint64)24 * 3600 * G_GINT64_CONSTANT(1000000000))
#define MSD_JETSTREAM_DUPLICATES_NS ((gint64)120 * G_GINT64_CONSTANT(1000000000))
/* Stream API requests (info, create) wait this long for the server. */
#define MSD_JETSTREAM_API_WAIT_MS 5000
/* Unacked events at most before the broker says it is not writable (and bytes). */
#define MSD_JETSTREAM_MAX_PENDING       8192
#define MSD_JETSTREAM_MAX_PENDING_BYTES (64 * 1024 * 1024)
/* An ack not back after this long makes the window go again. */
#define MSD_JETSTREAM_ACK_TIMEOUT_MS 5000
#define MSD_JETSTREAM_TICK_MS        500

typedef struct {
	guint64 seq;
	gboolean state; /* on a state subject: a newer event on it replaces this one */
	gchar *subject; /* (owned): not interned, interned strings are never freed and a
	                 * state subject names one object */
	GBytes *data;   /* (owned) */
	gchar *msg_id;  /* (owned) */
	gint64 sent_us; /* 0: not sent on this connection */
} MsdJsEntry;

typedef struct {
	GTask *task; /* (owned) */
	guint64 target;
	GSource *timeout; /* (owned) */
} MsdJsWaiter;

struct _MsdJetStream {
	MsdNatsConnection *conn;             /* (owned): the connection below */
	GObject *owner;                      /* (unowned): who owns this */
	MsdNatsFullChangedFunc full_changed; /* tells the owner */
	GMainContext *context;               /* (owned): the connection's */
	guint replicas;
	guint64 max_bytes;
	guint ack_timeout_ms;
	gboolean state_wanted;
	gboolean state_active;

	gboolean active;
	gboolean connected;
	gboolean closed;
	gboolean full;
	gchar *inbox; /* _INBOX.<nuid> */
	guint ack_subscription;

	GQueue window;                /* (element-type MsdJsEntry) by seq */
	GHashTable *by_seq;           /* seq -> GList link of window */
	GHashTable *by_state_subject; /* state subject (the entry's) -> GList link of window */
	GList *next_unsent;           /* (unowned) (nullable): first entry to send */
	gsize window_bytes;
	guint64 next_seq;
	GSource *tick;  /* (owned) (nullable) */
	GQueue waiters; /* (element-type MsdJsWaiter) */
	gboolean no_stream_logged;

	guint64 n_acked;
	guint64 n_duplicates;
	guint64 n_resent;
	guint64 n_rejected;
};

static void
msd_js_entry_free(MsdJsEntry *entry)
{
	g_bytes_unref(entry->data);
	g_free(entry->msg_id);
	g_free(entry->subject);
	g_free(entry);
}

MsdJetStream *
msd_jetstream_new(MsdNatsConnection *conn,
                  GObject *owner,
                  MsdNatsFullChangedFunc full_changed,
                  GMainContext *context)
{
	MsdJetStream *self = g_new0(MsdJetStream, 1);

	self->conn = g_object_ref(conn);
	self->owner = owner;
	self->full_changed = full_changed;
	self->context = g_main_context_ref(context);
	self->replicas = 1;
	self->max_bytes = MSD_JETSTREAM_DEFAULT_MAX_BYTES;
	self->ack_timeout_ms = MSD_JETSTREAM_ACK_TIMEOUT_MS;
	self->next_seq = 1;
	g_queue_init(&self->window);
	g_queue_init(&self->waiters);
	self->by_seq = g_hash_table_new(g_int64_hash, g_int64_equal);
	self->by_state_subject = g_hash_table_new(g_str_hash, g_str_equal);
	return self;
}

static void
msd_jetstream_finish_waiter(MsdJsWaiter *waiter, GError *error)
{
	if (waiter->timeout != NULL) {
		g_source_destroy(waiter->timeout);
		g_source_unref(waiter->timeout);
	}
	if (error != NULL)
		g_task_return_error(waiter->task, error);
	else
		g_task_return_boolean(waiter->task, TRUE);
	g_object_unref(waiter->task);
	g_free(waiter);
}

static void
msd_jetstream_fail_waiters(MsdJetStream *self, const gchar *why)
{
	MsdJsWaiter *waiter;

	while ((waiter = g_queue_pop_head(&self->waiters)) != NULL)
		msd_jetstream_finish_waiter(
		        waiter,
		        g_error_new(MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		                    "JetStream did not acknowledge what was published: %s", why));
}

static void
msd_jetstream_stop_tick(MsdJetStream *self)
{
	if (self->tick == NULL)
		return;
	g_source_destroy(self->tick);
	g_clear_pointer(&self->tick, g_source_unref);
}

void
msd_jetstream_free(MsdJetStream *self)
{
	if (self == NULL)
		return;
	msd_jetstream_stop_tick(self);
	msd_jetstream_fail_waiters(self, "the broker is gone");
	g_queue_clear_full(&self->window, (GDestroyNotify)msd_js_entry_free);
	g_hash_table_unref(self->by_seq);
	g_hash_table_unref(self->by_state_subject);
	g_free(self->inbox);
	g_object_unref(self->conn);
	g_main_context_unref(self->context);
	g_free(self);
}

void
msd_jetstream_set_stream_limits(MsdJetStream *self, guint replicas, guint64 max_bytes)
{
	self->replicas = MAX(replicas, 1);
	self->max_bytes = max_bytes > 0 ? max_bytes : MSD_JETSTREAM_DEFAULT_MAX_BYTES;
}

void
msd_jetstream_set_ack_timeout(MsdJetStream *self, guint timeout_ms)
{
	self->ack_timeout_ms = MAX(timeout_ms, 1);
}

void
msd_jetstream_set_state(MsdJetStream *self, gboolean enabled)
{
	self->state_wanted = enabled;
}

gboolean
msd_jetstream_is_active(MsdJetStream *self)
{
	return self->active;
}

gboolean
msd_jetstream_is_state_active(MsdJetStream *self)
{
	return self->active && self->state_active;
}

/* ------------------------------------------------------------------------------------------
 * Stream set-up, in a worker: the JetStream API is request/reply, and the reply is read by the
 * loop thread.
 */

typedef struct {
	natsConnection *nc; /* (unowned): held by the caller */
	gchar *subject;
	guint replicas;
	guint64 max_bytes;
	gboolean state;     /* the last-state stream too */
	gboolean absent;    /* result: the server has no JetStream */
	gchar *differences; /* result: informational, the stream was kept */
} MsdEnsureData;

static void
msd_ensure_data_free(gpointer data)
{
	MsdEnsureData *ed = data;

	g_free(ed->subject);
	g_free(ed->differences);
	g_free(ed);
}

static gchar *
msd_jetstream_reason(natsStatus s)
{
	natsStatus last = NATS_OK;
	const gchar *text = nats_GetLastError(&last);

	return g_strdup(text != NULL && *text != '\0' ? text : natsStatus_GetText(s));
}

static gboolean
msd_jetstream_is_absent(natsStatus s, jsErrCode jerr)
{
	return s == NATS_NO_RESPONDERS || jerr == JSNotEnabledErr ||
	       jerr == JSNotEnabledForAccountErr;
}

static const gchar *
msd_retention_name(jsRetentionPolicy policy)
{
	switch (policy) {
	case js_LimitsPolicy:
		return "limits";
	case js_InterestPolicy:
		return "interest";
	case js_WorkQueuePolicy:
		return "workqueue";
	default:
		return "unknown";
	}
}

/* What makes the existing stream unusable as ours, every difference: NULL if nothing. */
static gchar *
msd_jetstream_conflict(const jsStreamConfig *cfg, const gchar *subject, gint64 per_subject)
{
	g_autoptr(GString) subjects = g_string_new(NULL);
	g_autoptr(GString) out = g_string_new(NULL);

	for (int i = 0; i < cfg->SubjectsLen; i++)
		g_string_append_printf(subjects, "%s%s", i > 0 ? "," : "", cfg->Subjects[i]);
	if (cfg->SubjectsLen != 1 || g_strcmp0(cfg->Subjects[0], subject) != 0)
		g_string_append_printf(out, "; subjects are [%s], not [%s]", subjects->str,
		                       subject);
	if (cfg->Retention != js_LimitsPolicy)
		g_string_append_printf(out, "; retention is %s, not limits",
		                       msd_retention_name(cfg->Retention));
	if (cfg->Storage != js_FileStorage)
		g_string_append(out, "; storage is memory, not file");
	if (cfg->MaxMsgsPerSubject != per_subject &&
	    !(per_subject == -1 && cfg->MaxMsgsPerSubject == 0))
		g_string_append_printf(out,
		                       "; max messages per subject is %" G_GINT64_FORMAT
		                       ", not %" G_GINT64_FORMAT,
		                       (gint64)cfg->MaxMsgsPerSubject, per_subject);
	return out->len > 0 ? g_strdup(out->str + 2) : NULL;
}

/* Limits that differ from ours: reported, never changed (an operator may have chosen them). */
static gchar *
msd_jetstream_differences(const jsStreamConfig *cfg, const MsdEnsureData *ed)
{
	g_autoptr(GString) out = g_string_new(NULL);

	if (cfg->MaxAge != MSD_JETSTREAM_MAX_AGE_NS)
		g_string_append_printf(out, " max age %" G_GINT64_FORMAT " s;",
		                       (gint64)(cfg->MaxAge / 1000000000));
	if (cfg->MaxBytes != (int64_t)ed->max_bytes)
		g_string_append_printf(out, " max bytes %" G_GINT64_FORMAT ";",
		                       (gint64)cfg->MaxBytes);
	if (cfg->Replicas != (int64_t)ed->replicas && !(cfg->Replicas == 0 && ed->replicas == 1))
		g_string_append_printf(out, " replicas %" G_GINT64_FORMAT ";",
		                       (gint64)cfg->Replicas);
	if (cfg->Duplicates != MSD_JETSTREAM_DUPLICATES_NS)
		g_string_append_printf(out, " duplicate window %" G_GINT64_FORMAT " s;",
		                       (gint64)(cfg->Duplicates / 1000000000));
	if (out->len == 0)
		return NULL;
	g_string_truncate(out, out->len - 1);
	return g_strdup(out->str + 1);
}

/* Looks @name up and creates it if missing; FALSE with @error set when it is not usable, or
 * with ed->absent set when the server has no JetStream. */
static gboolean
msd_jetstream_ensure_stream(jsCtx *js,
                            MsdEnsureData *ed,
                            const gchar *name,
                            const gchar *subject,
                            gboolean last_state,
                            GError **error)
{
	jsStreamInfo *si = NULL;
	jsErrCode jerr = 0;
	natsStatus s;
	gint64 per_subject = last_state ? 1 : -1;
	gboolean ok = FALSE;

	s = js_GetStreamInfo(&si, js, name, NULL, &jerr);
	if (s == NATS_NOT_FOUND || jerr == JSStreamNotFoundErr) {
		jsStreamConfig cfg;
		const char *subjects[] = {subject};

		jsStreamConfig_Init(&cfg);
		cfg.Name = name;
		cfg.Subjects = subjects;
		cfg.SubjectsLen = 1;
		cfg.Retention = js_LimitsPolicy;
		cfg.Storage = js_FileStorage;
		cfg.Discard = js_DiscardOld;
		/* The last state of an object stays for as long as the object exists. */
		cfg.MaxAge = last_state ? 0 : MSD_JETSTREAM_MAX_AGE_NS;
		cfg.MaxBytes = last_state ? -1 : (int64_t)ed->max_bytes;
		cfg.MaxMsgsPerSubject = per_subject;
		cfg.Replicas = ed->replicas;
		cfg.Duplicates = MSD_JETSTREAM_DUPLICATES_NS;
		jerr = 0;
		s = js_AddStream(&si, js, &cfg, NULL, &jerr);
		if (s == NATS_OK)
			g_message("created JetStream stream %s on %s (%u replica%s)", name, subject,
			          ed->replicas, ed->replicas == 1 ? "" : "s");
		else if (jerr == JSStreamNameExistErr)
			/* Another instance created it meanwhile: check that one. */
			s = js_GetStreamInfo(&si, js, name, NULL, &jerr);
	}
	if (s == NATS_OK) {
		g_autofree gchar *conflict =
		        msd_jetstream_conflict(si->Config, subject, per_subject);

		if (conflict != NULL)
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
			            "JetStream stream %s exists with another configuration (%s); "
			            "refusing to change it",
			            name, conflict);
		else if (!last_state)
			ed->differences = msd_jetstream_differences(si->Config, ed);
		ok = conflict == NULL;
	} else if (msd_jetstream_is_absent(s, jerr)) {
		ed->absent = TRUE;
	} else {
		g_autofree gchar *reason = msd_jetstream_reason(s);

		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		            "cannot set up JetStream stream %s: %s (error code %d)", name, reason,
		            (int)jerr);
	}
	jsStreamInfo_Destroy(si);
	return ok;
}

static void
msd_jetstream_ensure_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
	MsdEnsureData *ed = data;
	jsCtx *js = NULL;
	jsOptions opts;
	natsStatus s;
	GError *error = NULL;

	jsOptions_Init(&opts);
	opts.Wait = MSD_JETSTREAM_API_WAIT_MS;
	s = natsConnection_JetStream(&js, ed->nc, &opts);
	if (s != NATS_OK) {
		g_autofree gchar *reason = msd_jetstream_reason(s);

		error = g_error_new(MESHSYNC_ERROR, MESHSYNC_ERROR_FAILED,
		                    "cannot use JetStream: %s", reason);
	} else if (msd_jetstream_ensure_stream(js, ed, MSD_JETSTREAM_STREAM, ed->subject, FALSE,
	                                       &error) &&
	           ed->state) {
		msd_jetstream_ensure_stream(js, ed, MSD_JETSTREAM_STATE_STREAM,
		                            MSD_JETSTREAM_STATE_PREFIX ">", TRUE, &error);
	}
	jsCtx_Destroy(js);
	nats_ReleaseThreadMemory();
	if (error != NULL)
		g_task_return_error(task, error);
	else
		g_task_return_boolean(task, TRUE);
}

void
msd_jetstream_ensure_async(MsdJetStream *self,
                           natsConnection *nc,
                           const gchar *subject,
                           GAsyncReadyCallback callback,
                           gpointer user_data)
{
	g_autoptr(GTask) task = g_task_new(self->owner, NULL, callback, user_data);
	MsdEnsureData *ed = g_new0(MsdEnsureData, 1);

	ed->nc = nc;
	ed->subject = g_strdup(subject);
	ed->replicas = self->replicas;
	ed->max_bytes = self->max_bytes;
	ed->state = self->state_wanted;
	g_task_set_source_tag(task, msd_jetstream_ensure_async);
	g_task_set_task_data(task, ed, msd_ensure_data_free);
	g_task_run_in_thread(task, msd_jetstream_ensure_thread);
}

static void
msd_jetstream_ack_cb(const gchar *subject, const gchar *reply, GBytes *payload, gpointer user_data);

gboolean
msd_jetstream_ensure_finish(MsdJetStream *self, GAsyncResult *result, GError **error)
{
	MsdEnsureData *ed = g_task_get_task_data(G_TASK(result));
	g_autofree gchar *pattern = NULL;
	natsInbox *inbox = NULL;

	if (!g_task_propagate_boolean(G_TASK(result), error))
		return FALSE;
	if (ed->absent) {
		g_warning("the broker at %s has no JetStream: publishing resource events on core "
		          "NATS only, without durable delivery",
		          msd_nats_connection_get_url(self->conn));
		self->active = FALSE;
		return TRUE;
	}
	if (ed->differences != NULL)
		g_message("JetStream stream %s kept as it is, with%s", MSD_JETSTREAM_STREAM,
		          ed->differences);
	if (self->inbox == NULL) {
		if (natsInbox_Create(&inbox) != NATS_OK) {
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_FAILED,
			            "cannot make an inbox for JetStream acknowledgements");
			return FALSE;
		}
		self->inbox = g_strdup(inbox);
		natsInbox_Destroy(inbox);
	}
	pattern = g_strconcat(self->inbox, ".*", NULL);
	/* polled: each ack would otherwise wake nats.c's delivery thread, which would wake the
	 * loop in turn */
	self->ack_subscription = msd_nats_connection_subscribe_polled(
	        self->conn, pattern, msd_jetstream_ack_cb, self, NULL, error);
	if (self->ack_subscription == 0)
		return FALSE;
	self->active = TRUE;
	self->state_active = ed->state;
	self->connected = TRUE;
	return TRUE;
}

/* ------------------------------------------------------------------------------------------
 * The window.
 */

static void
msd_jetstream_update_full(MsdJetStream *self)
{
	guint n = self->window.length;
	gboolean full = self->full;

	if (!full && (n >= MSD_JETSTREAM_MAX_PENDING ||
	              self->window_bytes >= MSD_JETSTREAM_MAX_PENDING_BYTES))
		full = TRUE;
	else if (full && n <= MSD_JETSTREAM_MAX_PENDING / 2 &&
	         self->window_bytes <= MSD_JETSTREAM_MAX_PENDING_BYTES / 2)
		full = FALSE;
	if (full == self->full)
		return;
	self->full = full;
	g_debug("JetStream: %u events not acknowledged, %s", n,
	        full ? "holding publishes" : "taking publishes again");
	self->full_changed(self->owner);
}

static void
msd_jetstream_complete_waiters(MsdJetStream *self)
{
	MsdJsEntry *oldest = g_queue_peek_head(&self->window);
	GList *l = self->waiters.head;

	while (l != NULL) {
		GList *next = l->next;
		MsdJsWaiter *waiter = l->data;

		if (oldest == NULL || oldest->seq > waiter->target) {
			g_queue_delete_link(&self->waiters, l);
			msd_jetstream_finish_waiter(waiter, NULL);
		}
		l = next;
	}
}

static void msd_jetstream_schedule_tick(MsdJetStream *self);

static void
msd_jetstream_pump(MsdJetStream *self)
{
	gint64 now = g_get_monotonic_time();

	while (self->connected && !self->closed && self->next_unsent != NULL &&
	       !msd_nats_connection_get_congested(self->conn)) {
		MsdJsEntry *entry = self->next_unsent->data;
		g_autofree gchar *reply =
		        g_strdup_printf("%s.%" G_GUINT64_FORMAT, self->inbox, entry->seq);
		g_autoptr(GError) error = NULL;
		gsize len = 0;
		gconstpointer data = g_bytes_get_data(entry->data, &len);

		if (!msd_nats_connection_publish_with_id(self->conn, entry->subject, reply,
		                                         entry->msg_id, data, len, &error)) {
			/* Away or out of room: the window goes again at the reconnection. */
			g_debug("JetStream publish held: %s", error->message);
			break;
		}
		entry->sent_us = now;
		self->next_unsent = self->next_unsent->next;
	}
	msd_jetstream_schedule_tick(self);
}

/* Sends the whole window again, oldest first. */
static void
msd_jetstream_rewind(MsdJetStream *self, const gchar *why)
{
	guint sent = 0;

	for (GList *l = self->window.head; l != NULL && l != self->next_unsent; l = l->next) {
		((MsdJsEntry *)l->data)->sent_us = 0;
		sent++;
	}
	if (sent == 0 && self->next_unsent == self->window.head)
		return;
	self->n_resent += sent;
	if (sent > 0)
		g_message("JetStream: sending %u unacknowledged events again (%s)", sent, why);
	self->next_unsent = self->window.head;
}

static gboolean
msd_jetstream_tick_cb(gpointer data)
{
	MsdJetStream *self = data;
	MsdJsEntry *oldest = g_queue_peek_head(&self->window);
	gint64 now = g_get_monotonic_time();

	g_clear_pointer(&self->tick, g_source_unref);
	/* acks the socket's reads did not bring to a drain (read by nats.c's reconnect thread) */
	msd_nats_connection_poll(self->conn);
	if (oldest != NULL && self->connected && oldest->sent_us != 0 &&
	    now - oldest->sent_us > (gint64)self->ack_timeout_ms * 1000) {
		msd_jetstream_rewind(self, "no acknowledgement in time");
		msd_jetstream_pump(self);
		return G_SOURCE_REMOVE;
	}
	if (self->next_unsent != NULL)
		msd_jetstream_pump(self);
	else
		msd_jetstream_schedule_tick(self);
	return G_SOURCE_REMOVE;
}

static void
msd_jetstream_schedule_tick(MsdJetStream *self)
{
	if (self->tick != NULL || self->closed || self->window.length == 0)
		return;
	self->tick = g_timeout_source_new(MSD_JETSTREAM_TICK_MS);
	g_source_set_static_name(self->tick, "meshsync-jetstream-acks");
	g_source_set_callback(self->tick, msd_jetstream_tick_cb, self, NULL);
	g_source_attach(self->tick, self->context);
}

static void msd_jetstream_remove(MsdJetStream *self, GList *link);

void
msd_jetstream_publish(MsdJetStream *self,
                      const gchar *subject,
                      gconstpointer data,
                      gsize len,
                      const gchar *msg_id)
{
	MsdJsEntry *entry = g_new0(MsdJsEntry, 1);

	entry->seq = self->next_seq++;
	entry->subject = g_strdup(subject);
	entry->state = g_str_has_prefix(subject, MSD_JETSTREAM_STATE_PREFIX);
	if (entry->state) {
		GList *older = g_hash_table_lookup(self->by_state_subject, entry->subject);

		/* Only the newest state of an object matters, and a re-send of the older one
		 * after the newer was stored would replace it in the stream. */
		if (older != NULL)
			msd_jetstream_remove(self, older);
	}
	entry->data = g_bytes_new(data, len);
	entry->msg_id = g_strdup(msg_id);
	g_queue_push_tail(&self->window, entry);
	g_hash_table_insert(self->by_seq, &entry->seq, self->window.tail);
	if (entry->state)
		g_hash_table_replace(self->by_state_subject, entry->subject, self->window.tail);
	if (self->next_unsent == NULL)
		self->next_unsent = self->window.tail;
	self->window_bytes += len;
	msd_jetstream_update_full(self);
	msd_jetstream_pump(self);
}

static void
msd_jetstream_remove(MsdJetStream *self, GList *link)
{
	MsdJsEntry *entry = link->data;

	if (self->next_unsent == link)
		self->next_unsent = link->next;
	g_hash_table_remove(self->by_seq, &entry->seq);
	if (entry->state && g_hash_table_lookup(self->by_state_subject, entry->subject) == link)
		g_hash_table_remove(self->by_state_subject, entry->subject);
	self->window_bytes -= g_bytes_get_size(entry->data);
	g_queue_delete_link(&self->window, link);
	msd_js_entry_free(entry);
}

static void
msd_jetstream_ack_cb(const gchar *subject, const gchar *reply, GBytes *payload, gpointer user_data)
{
	MsdJetStream *self = user_data;
	const gchar *dot = subject != NULL ? strrchr(subject, '.') : NULL;
	gsize len = 0;
	const gchar *body = g_bytes_get_data(payload, &len);
	g_autofree gchar *text = NULL;
	guint64 seq;
	GList *link;

	if (subject == NULL) {
		/* a no-responders status without its subject: the oldest waits longest */
		link = self->window.head;
		if (link != NULL && !self->no_stream_logged)
			g_message("JetStream: no stream answered for %s; retrying",
			          ((MsdJsEntry *)link->data)->subject);
		self->no_stream_logged = link != NULL;
		return;
	}
	if (dot == NULL)
		return;
	seq = g_ascii_strtoull(dot + 1, NULL, 10);
	link = g_hash_table_lookup(self->by_seq, &seq);
	if (link == NULL)
		return; /* an ack for a copy sent twice */
	if (len == 0) {
		/* A no-responders status: no stream captures the subject right now (a cluster
		 * restarting). The event stays, and goes again when its ack is overdue. */
		if (!self->no_stream_logged)
			g_message("JetStream: no stream answered for %s; retrying",
			          ((MsdJsEntry *)link->data)->subject);
		self->no_stream_logged = TRUE;
		return;
	}
	text = g_strndup(body, len);
	if (strstr(text, "\"error\"") != NULL) {
		MsdJsEntry *entry = link->data;

		/* 503: no stream leader (yet); the ack timeout sends it again. Anything else is
		 * about the message itself and would fail every time. */
		if (strstr(text, "\"code\":503") != NULL)
			return;
		self->n_rejected++;
		g_message("JetStream refused event %s: %s", entry->msg_id, text);
	} else if (strstr(text, "\"stream\":\"" MSD_JETSTREAM_STREAM "\"") == NULL &&
	           strstr(text, "\"stream\":\"" MSD_JETSTREAM_STATE_STREAM "\"") == NULL) {
		/* Not a PubAck: core subscribers see the reply subject too, and one may answer. */
		return;
	} else {
		self->n_acked++;
		self->no_stream_logged = FALSE;
		if (strstr(text, "\"duplicate\":true") != NULL)
			self->n_duplicates++;
	}
	msd_jetstream_remove(self, link);
	msd_jetstream_update_full(self);
	msd_jetstream_complete_waiters(self);
	if (self->window.length == 0)
		msd_jetstream_stop_tick(self);
}

void
msd_jetstream_connected(MsdJetStream *self)
{
	if (!self->active || self->closed)
		return;
	self->connected = TRUE;
	msd_jetstream_rewind(self, "reconnected");
	msd_jetstream_pump(self);
}

void
msd_jetstream_disconnected(MsdJetStream *self)
{
	self->connected = FALSE;
}

void
msd_jetstream_closed(MsdJetStream *self)
{
	self->connected = FALSE;
	self->closed = TRUE;
	msd_jetstream_stop_tick(self);
	msd_jetstream_fail_waiters(self, "the connection is closed");
}

void
msd_jetstream_resume(MsdJetStream *self)
{
	if (self->active)
		msd_jetstream_pump(self);
}

gboolean
msd_jetstream_is_full(MsdJetStream *self)
{
	return self->full;
}

gboolean
msd_jetstream_is_empty(MsdJetStream *self)
{
	return self->window.length == 0;
}

static gboolean
msd_jetstream_waiter_timeout_cb(gpointer data)
{
	MsdJsWaiter *waiter = data;
	MsdJetStream *self = g_task_get_task_data(waiter->task);

	g_clear_pointer(&waiter->timeout, g_source_unref);
	g_queue_remove(&self->waiters, waiter);
	msd_jetstream_finish_waiter(
	        waiter, g_error_new(MESHSYNC_ERROR, MESHSYNC_ERROR_TIMED_OUT,
	                            "JetStream did not acknowledge every event in time"));
	return G_SOURCE_REMOVE;
}

/* Completes @task (taking it) once everything published so far is acknowledged. */
void
msd_jetstream_wait(MsdJetStream *self, GTask *task, guint timeout_ms)
{
	MsdJsWaiter *waiter = g_new0(MsdJsWaiter, 1);

	waiter->task = task;
	waiter->target = self->next_seq - 1;
	g_task_set_task_data(task, self, NULL);
	g_queue_push_tail(&self->waiters, waiter);
	waiter->timeout = g_timeout_source_new(MAX(timeout_ms, 1));
	g_source_set_static_name(waiter->timeout, "meshsync-jetstream-wait");
	g_source_set_callback(waiter->timeout, msd_jetstream_waiter_timeout_cb, waiter, NULL);
	g_source_attach(waiter->timeout, g_task_get_context(task));
	msd_jetstream_complete_waiters(self);
}

guint64
msd_jetstream_get_n_pending(MsdJetStream *self)
{
	return self->window.length;
}

guint64
msd_jetstream_get_n_acked(MsdJetStream *self)
{
	return self->n_acked;
}

guint64
msd_jetstream_get_n_duplicates(MsdJetStream *self)
{
	return self->n_duplicates;
}

guint64
msd_jetstream_get_n_resent(MsdJetStream *self)
{
	return self->n_resent;
}

guint64
msd_jetstream_get_n_rejected(MsdJetStream *self)
{
	return self->n_rejected;
}

gchar *
msd_jetstream_msg_id(MeshSyncResource *resource, MeshSyncEventType event_type)
{
	const gchar *cluster = meshsync_resource_get_cluster_id(resource);
	const gchar *ns = meshsync_resource_get_namespace(resource);
	const gchar *rv = meshsync_resource_get_resource_version(resource);
	g_autofree gchar *key = g_strdup_printf(
	        "%s.%s.%s.%s.%s", cluster != NULL ? cluster : "",
	        meshsync_resource_get_kind(resource) != NULL ? meshsync_resource_get_kind(resource)
	                                                     : "",
	        meshsync_resource_get_api_version(resource) != NULL
	                ? meshsync_resource_get_api_version(resource)
	                : "",
	        ns != NULL ? ns : "",
	        meshsync_resource_get_name(resource) != NULL ? meshsync_resource_get_name(resource)
	                                                     : "");
	g_autofree gchar *id = g_base64_encode((const guchar *)key, strlen(key));

	return g_strdup_printf("%s.%s.%s", id, rv != NULL ? rv : "",
	                       meshsync_event_type_to_string(event_type));
}

gchar *
msd_jetstream_state_subject(MeshSyncResource *resource)
{
	const gchar *cluster = meshsync_resource_get_cluster_id(resource);
	GString *subject = g_string_new(MSD_JETSTREAM_STATE_PREFIX);

	/* Dots encoded in every field: a fixed number of tokens, so wildcards select by field. */
	msd_session_subject_append_token(subject, cluster != NULL ? cluster : "", FALSE);
	g_string_append_c(subject, '.');
	msd_session_subject_append_token(subject, meshsync_resource_get_kind(resource), FALSE);
	g_string_append_c(subject, '.');
	msd_session_subject_append_token(subject, meshsync_resource_get_namespace(resource), FALSE);
	g_string_append_c(subject, '.');
	msd_session_subject_append_token(subject, meshsync_resource_get_name(resource), FALSE);
	return g_string_free(subject, FALSE);
}
