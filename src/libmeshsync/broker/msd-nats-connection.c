/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * One file for one object: publishing, subscriptions, the write marks, the holds, the
 * connect attempt and the flush all read and change the one natsConnection and its state; the
 * thread-to-loop link (msd-nats-link.c) and the socket's source (msd-nats-source.c) stand
 * alone beside it.
 */

/* Its messages are the broker's, under the broker's domain, as before the split. */
#define G_LOG_DOMAIN "MeshSyncBroker"

#include "config.h"

#include <string.h>

#include "meshsync-error.h"
#include "broker/msd-nats-connection.h"
#include "broker/msd-nats-source.h"
#include "util/msd-i18n.h"
#include "util/msd-log.h"
#include "util/msd-source.h"

/* Rough protocol overhead of one PUB line, for the reconnect-buffer estimate. */
#define MSD_NATS_PUB_OVERHEAD 16
/* Published messages destroyed together: nats.c hands each destroyed message to its
 * collector thread, with a wake-up when that thread waits, so one by one is a futex call and
 * a context switch per publish. */
#define MSD_NATS_SPENT_BATCH 64

typedef struct {
	guint id;
	gint64 sid;
	natsSubscription *sub; /* (owned) */
	MsdNatsConnectionMessageFunc func;
	gpointer user_data;
	GDestroyNotify destroy;
	gboolean polled; /* synchronous, drained on the loop */
} MsdNatsSubscription;

struct _MsdNatsConnection {
	GObject parent_instance;

	GMainContext *context; /* (owned) */
	gchar *url;            /* without credentials, for messages */
	const MsdNatsConnectionOwnerFuncs *funcs;
	gpointer owner; /* (unowned) (nullable): NULL once detached */

	MsdNatsLoop *loop;    /* (owned) */
	MsdNatsLink *link;    /* (owned) */
	natsConnection *nc;   /* (owned) (nullable) */
	gint64 max_payload;   /* the server's, as of the last (re)connect */
	guint n_workers;      /* worker threads still using nc */
	gboolean destroy_due; /* closed while a worker used nc */
	MeshSyncBrokerState state;

	gboolean congested; /* the write buffer passed the high mark, not yet the low */
	gsize high_mark;
	gsize low_mark;
	GSource *recheck;      /* (owned) (nullable): idle that ends a congestion */
	guint64 pending_bytes; /* estimate of the reconnect buffer */

	GHashTable *by_id;  /* (owned): id -> MsdNatsSubscription */
	GHashTable *by_sid; /* (unowned values): sid -> same */
	guint next_id;
	guint n_polled;
	GSource *drain;   /* (owned) (nullable): idle that drains the polled subscriptions */
	GPtrArray *spent; /* (owned) (element-type natsMsg): published, not yet destroyed */
};

G_DEFINE_FINAL_TYPE(MsdNatsConnection, msd_nats_connection, G_TYPE_OBJECT)

static void
msd_nats_subscription_free(gpointer data)
{
	MsdNatsSubscription *sub = data;

	if (sub->sub != NULL)
		natsSubscription_Destroy(sub->sub);
	if (sub->destroy != NULL)
		sub->destroy(sub->user_data);
	g_free(sub);
}

gchar *
msd_nats_connection_clean_error_text(const gchar *text)
{
	GString *out = g_string_sized_new(strlen(text));
	const gchar *p = text;

	while (*p != '\0') {
		/* "(" name ".c:" digits ")", the form nats_setError() writes */
		const gchar *q = p + 1;
		gboolean place = FALSE;

		if (*p == '(') {
			while (g_ascii_isalnum(*q) || *q == '_' || *q == '-' || *q == '.' ||
			       *q == '/')
				q++;
			if (q - p > 3 && q[-2] == '.' && q[-1] == 'c' && q[0] == ':' &&
			    g_ascii_isdigit(q[1])) {
				q++;
				while (g_ascii_isdigit(*q))
					q++;
				place = *q == ')';
			}
		}
		if (!place) {
			g_string_append_c(out, *p++);
			continue;
		}
		p = q + 1;
		/* a leading "(conn.c:2088): " goes with its separator, " (conn.c:2088)" with
		 * the space before it */
		if (out->len == 0) {
			if (*p == ':')
				p++;
			while (*p == ' ')
				p++;
		} else {
			while (out->len > 0 && out->str[out->len - 1] == ' ')
				g_string_truncate(out, out->len - 1);
		}
	}
	return g_string_free(out, FALSE);
}

gchar *
msd_nats_connection_last_error(natsStatus status)
{
	natsStatus last = NATS_OK;
	const gchar *text = nats_GetLastError(&last);

	if (text != NULL && *text != '\0')
		return msd_nats_connection_clean_error_text(text);
	return g_strdup(natsStatus_GetText(status));
}

static void
msd_nats_connection_set_congested(MsdNatsConnection *self, gboolean congested)
{
	if (self->congested == congested)
		return;
	self->congested = congested;
	msd_log(G_LOG_LEVEL_DEBUG, NULL, NULL, self->url, "broker at %s: %s", self->url,
	        congested ? "write buffer above its high mark, holding publishes"
	                  : "write buffer drained, taking publishes again");
	if (self->owner != NULL)
		self->funcs->congestion_changed(self->owner, congested);
}

static gboolean
msd_nats_connection_recheck_cb(gpointer data)
{
	MsdNatsConnection *self = data;

	g_clear_pointer(&self->recheck, g_source_unref);
	if (!self->congested || self->nc == NULL)
		return G_SOURCE_REMOVE;
	if (natsConnection_Buffered(self->nc) <= (gint)self->low_mark)
		msd_nats_connection_set_congested(self, FALSE);
	return G_SOURCE_REMOVE;
}

/* An idle in the connection's context, which the connection destroys in dispose. */
static GSource *
msd_nats_connection_idle(MsdNatsConnection *self, const gchar *name, GSourceFunc func)
{
	GSource *source = g_idle_source_new();

	g_source_set_priority(source, G_PRIORITY_DEFAULT);
	return msd_source_attach_named(source, self->context, name, func, self, NULL);
}

static void
msd_nats_connection_destroy_spent(MsdNatsConnection *self)
{
	for (guint i = 0; i < self->spent->len; i++)
		natsMsg_Destroy(g_ptr_array_index(self->spent, i));
	g_ptr_array_set_size(self->spent, 0);
}

/* The nats source wrote to the socket. The congestion ends in an idle of its own, so that
 * whoever listens to the owner's writable state (and publishes from there) never runs inside
 * nats.c's socket dispatch. */
static void
msd_nats_connection_written_cb(gpointer data)
{
	MsdNatsConnection *self = data;

	/* their bytes are in nats.c's buffer since the publish; this is just a moment that
	 * comes often enough */
	msd_nats_connection_destroy_spent(self);
	if (self->owner != NULL)
		self->funcs->written(self->owner);
	if (!self->congested || self->recheck != NULL || self->nc == NULL ||
	    natsConnection_Buffered(self->nc) > (gint)self->low_mark)
		return;
	self->recheck = msd_nats_connection_idle(self, "meshsync-broker-drained",
	                                         msd_nats_connection_recheck_cb);
}

/* Drains one polled subscription, until nothing is pending or it is gone (a handler may
 * unsubscribe it). */
static void
msd_nats_connection_drain_one(MsdNatsConnection *self, guint id, GPtrArray *done)
{
	for (;;) {
		MsdNatsSubscription *sub = g_hash_table_lookup(self->by_id, GUINT_TO_POINTER(id));
		natsMsg *msg = NULL;
		natsStatus s;

		if (sub == NULL || self->state == MESHSYNC_BROKER_STATE_CLOSED)
			return;
		s = natsSubscription_NextMsg(&msg, sub->sub, 0);
		if (s == NATS_OK) {
			g_autoptr(GBytes) payload = g_bytes_new_static(
			        natsMsg_GetData(msg), (gsize)natsMsg_GetDataLength(msg));
			const gchar *reply = natsMsg_GetReply(msg);

			g_ptr_array_add(done, msg);
			sub->func(natsMsg_GetSubject(msg),
			          reply != NULL && *reply != '\0' ? reply : NULL, payload,
			          sub->user_data);
		} else if (s == NATS_NO_RESPONDERS) {
			/* nats.c keeps the status message to itself: the subject is unknown */
			g_autoptr(GBytes) payload = g_bytes_new_static("", 0);

			sub->func(NULL, NULL, payload, sub->user_data);
		} else if (s == NATS_SLOW_CONSUMER) {
			msd_log(G_LOG_LEVEL_MESSAGE, NULL, NULL, self->url,
			        "broker at %s: messages of a subscription dropped (the loop fell "
			        "behind)",
			        self->url);
		} else {
			/* NATS_TIMEOUT: nothing more pending; anything else: closed */
			return;
		}
	}
}

static gboolean
msd_nats_connection_drain_cb(gpointer data)
{
	MsdNatsConnection *self = data;
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(guint));
	g_autoptr(GPtrArray) done = g_ptr_array_new();
	GHashTableIter iter;
	gpointer value;

	g_clear_pointer(&self->drain, g_source_unref);
	if (self->nc == NULL)
		return G_SOURCE_REMOVE;
	/* ids first: a handler may unsubscribe */
	g_hash_table_iter_init(&iter, self->by_id);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		MsdNatsSubscription *sub = value;

		if (sub->polled)
			g_array_append_val(ids, sub->id);
	}
	for (guint i = 0; i < ids->len; i++)
		msd_nats_connection_drain_one(self, g_array_index(ids, guint, i), done);
	/* together, for the reason of MSD_NATS_SPENT_BATCH */
	for (guint i = 0; i < done->len; i++)
		natsMsg_Destroy(g_ptr_array_index(done, i));
	return G_SOURCE_REMOVE;
}

void
msd_nats_connection_poll(MsdNatsConnection *self)
{
	if (self->n_polled == 0 || self->drain != NULL)
		return;
	/* In an idle of its own, as the congestion's end: handlers may publish, and must not
	 * do so inside nats.c's socket dispatch. */
	self->drain = msd_nats_connection_idle(self, "meshsync-broker-polled",
	                                       msd_nats_connection_drain_cb);
}

/* The loop processed what the socket had: a polled subscription may have messages. */
static void
msd_nats_connection_read_cb(gpointer data)
{
	msd_nats_connection_poll(data);
}

static void
msd_nats_connection_link_event_cb(GObject *object, MsdNatsLinkEvent *event)
{
	MsdNatsConnection *self = MSD_NATS_CONNECTION(object);
	MsdNatsSubscription *sub;

	if (event->kind != MSD_NATS_LINK_EVENT_MESSAGE) {
		if (self->owner != NULL)
			self->funcs->event(self->owner, event);
		return;
	}
	sub = g_hash_table_lookup(self->by_sid, &event->sid);
	/* Unsubscribed or closed since the message was queued. */
	if (sub == NULL || self->state == MESHSYNC_BROKER_STATE_CLOSED)
		return;
	sub->func(event->subject, event->reply, event->payload, sub->user_data);
}

static void
msd_nats_connection_destroy_nc(MsdNatsConnection *self)
{
	if (self->nc == NULL)
		return;
	if (self->n_workers > 0) {
		/* A worker still uses it; the last one to finish destroys. */
		self->destroy_due = TRUE;
		return;
	}
	natsConnection_Destroy(self->nc);
	self->nc = NULL;
	self->destroy_due = FALSE;
}

static void
msd_nats_connection_dispose(GObject *object)
{
	MsdNatsConnection *self = MSD_NATS_CONNECTION(object);

	self->owner = NULL;
	if (self->loop != NULL) {
		msd_nats_loop_set_written_func(self->loop, NULL, NULL);
		msd_nats_loop_set_read_func(self->loop, NULL, NULL);
	}
	msd_source_clear(&self->drain);
	msd_nats_connection_destroy_spent(self);
	msd_source_clear(&self->recheck);
	if (self->link != NULL)
		msd_nats_link_detach(self->link);
	G_OBJECT_CLASS(msd_nats_connection_parent_class)->dispose(object);
}

static void
msd_nats_connection_finalize(GObject *object)
{
	MsdNatsConnection *self = MSD_NATS_CONNECTION(object);

	g_hash_table_unref(self->by_sid);
	g_hash_table_unref(self->by_id);
	msd_nats_connection_destroy_spent(self);
	g_ptr_array_unref(self->spent);
	/* Workers hold the owner, which holds this: none is left, nc can go. */
	if (self->nc != NULL)
		natsConnection_Destroy(self->nc);
	if (self->link != NULL)
		msd_nats_link_unref(self->link);
	if (self->loop != NULL)
		msd_nats_loop_unref(self->loop);
	g_free(self->url);
	g_main_context_unref(self->context);
	G_OBJECT_CLASS(msd_nats_connection_parent_class)->finalize(object);
}

static void
msd_nats_connection_class_init(MsdNatsConnectionClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->dispose = msd_nats_connection_dispose;
	object_class->finalize = msd_nats_connection_finalize;
}

static void
msd_nats_connection_init(MsdNatsConnection *self)
{
	self->state = MESHSYNC_BROKER_STATE_DISCONNECTED;
	self->by_id = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
	                                    msd_nats_subscription_free);
	self->by_sid = g_hash_table_new(g_int64_hash, g_int64_equal);
	self->spent = g_ptr_array_sized_new(MSD_NATS_SPENT_BATCH);
}

MsdNatsConnection *
msd_nats_connection_new(GMainContext *context,
                        const gchar *url,
                        const MsdNatsConnectionOwnerFuncs *funcs,
                        gpointer owner)
{
	MsdNatsConnection *self = g_object_new(MSD_TYPE_NATS_CONNECTION, NULL);

	self->context = g_main_context_ref(context);
	self->url = g_strdup(url);
	self->funcs = funcs;
	self->owner = owner;
	self->loop = msd_nats_loop_new(context);
	msd_nats_loop_set_written_func(self->loop, msd_nats_connection_written_cb, self);
	msd_nats_loop_set_read_func(self->loop, msd_nats_connection_read_cb, self);
	self->link = msd_nats_link_new(context, msd_nats_connection_link_event_cb, G_OBJECT(self));
	return self;
}

void
msd_nats_connection_detach(MsdNatsConnection *self)
{
	self->owner = NULL;
}

/* Hooks the link's callbacks and the source into @opts. */
static natsStatus
msd_nats_connection_configure(MsdNatsConnection *self, natsOptions *opts)
{
	natsStatus s =
	        natsOptions_SetDisconnectedCB(opts, msd_nats_link_disconnected_cb, self->link);

	if (s == NATS_OK)
		s = natsOptions_SetReconnectedCB(opts, msd_nats_link_reconnected_cb, self->link);
	if (s == NATS_OK)
		s = natsOptions_SetClosedCB(opts, msd_nats_link_closed_cb, self->link);
	if (s == NATS_OK)
		s = natsOptions_SetErrorHandler(opts, msd_nats_link_error_cb, self->link);
	if (s == NATS_OK)
		s = msd_nats_loop_install(self->loop, opts);
	return s;
}

natsOptions *
msd_nats_connection_build_options(MsdNatsConnection *self,
                                  const MsdNatsSettings *settings,
                                  GError **error)
{
	natsOptions *opts = NULL;
	natsStatus s;

	s = natsOptions_Create(&opts);
	if (s == NATS_OK)
		s = natsOptions_SetServers(opts, (const char **)settings->servers,
		                           (int)g_strv_length((gchar **)settings->servers));
	if (s == NATS_OK)
		s = natsOptions_SetNoRandomize(opts, true);
	if (s == NATS_OK)
		s = natsOptions_SetName(opts, "meshsync");
	if (s == NATS_OK)
		s = natsOptions_SetTimeout(opts, settings->attempt_timeout_ms);
	/* A publish asks the loop for the socket's write side at once, instead of signalling
	 * nats.c's flusher thread, which woke about 1 ms later only to ask the same: one futex
	 * round and a thread switch less per burst, and replies leave without that delay. */
	if (s == NATS_OK)
		s = natsOptions_SetSendAsap(opts, true);
	if (s == NATS_OK)
		s = natsOptions_SetAllowReconnect(opts, true);
	if (s == NATS_OK)
		s = natsOptions_SetMaxReconnect(opts, settings->max_reconnects);
	if (s == NATS_OK)
		s = natsOptions_SetReconnectWait(opts, settings->reconnect_wait_ms);
	if (s == NATS_OK && settings->reconnect_buffer_size > 0)
		s = natsOptions_SetReconnectBufSize(opts, (int)settings->reconnect_buffer_size);
	if (s == NATS_OK)
		s = natsOptions_SetPingInterval(opts, settings->ping_interval_ms);
	if (s == NATS_OK)
		s = natsOptions_SetMaxPingsOut(opts, settings->max_pings_out);
	if (s == NATS_OK && settings->user != NULL)
		s = natsOptions_SetUserInfo(opts, settings->user, settings->password);
	if (s == NATS_OK && settings->token != NULL)
		s = natsOptions_SetToken(opts, settings->token);
	if (s == NATS_OK && settings->credentials_file != NULL)
		s = natsOptions_SetUserCredentialsFromFiles(opts, settings->credentials_file, NULL);
	if (s == NATS_OK && settings->tls)
		s = natsOptions_SetSecure(opts, true);
	if (s == NATS_OK && settings->tls_ca != NULL)
		s = natsOptions_LoadCATrustedCertificates(opts, settings->tls_ca);
	if (s == NATS_OK && settings->tls_certificate != NULL)
		s = natsOptions_LoadCertificatesChain(opts, settings->tls_certificate,
		                                      settings->tls_key);
	if (s == NATS_OK)
		s = msd_nats_connection_configure(self, opts);
	if (s != NATS_OK) {
		g_autofree gchar *reason = msd_nats_connection_last_error(s);

		natsOptions_Destroy(opts);
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
		            _("cannot configure the connection to the broker at %s: %s"), self->url,
		            reason);
		return NULL;
	}
	return opts;
}

typedef struct {
	natsConnection *nc; /* (owned) (nullable) */
	natsStatus status;
	gchar *reason;
	guint64 reconnects;
	gint64 max_payload;
} MsdNatsAttempt;

static void
msd_nats_attempt_free(gpointer data)
{
	MsdNatsAttempt *attempt = data;

	if (attempt->nc != NULL)
		natsConnection_Destroy(attempt->nc);
	g_free(attempt->reason);
	g_free(attempt);
}

static void
msd_nats_connection_connect_thread(GTask *task,
                                   gpointer source,
                                   gpointer data,
                                   GCancellable *cancellable)
{
	natsOptions *opts = data;
	MsdNatsAttempt *attempt = g_new0(MsdNatsAttempt, 1);

	attempt->status = natsConnection_Connect(&attempt->nc, opts);
	if (attempt->status != NATS_OK) {
		attempt->nc = NULL;
		attempt->reason = msd_nats_connection_last_error(attempt->status);
	} else {
		attempt->reconnects = msd_nats_link_read_reconnects(attempt->nc);
		attempt->max_payload = natsConnection_GetMaxPayload(attempt->nc);
	}
	/* GTask's pool threads live on; release the library's per-thread error state. */
	nats_ReleaseThreadMemory();
	g_task_return_pointer(task, attempt, msd_nats_attempt_free);
}

void
msd_nats_connection_connect_async(MsdNatsConnection *self,
                                  natsOptions *opts,
                                  GAsyncReadyCallback callback,
                                  gpointer user_data)
{
	g_autoptr(GTask) task = g_task_new(self, NULL, callback, user_data);

	g_return_if_fail(self->nc == NULL);
	/* The connection's callbacks use the link until the closed callback drops this. */
	msd_nats_link_ref(self->link);
	g_task_set_source_tag(task, msd_nats_connection_connect_async);
	g_task_set_task_data(task, opts, NULL);
	g_task_run_in_thread(task, msd_nats_connection_connect_thread);
}

gboolean
msd_nats_connection_connect_finish(MsdNatsConnection *self,
                                   GAsyncResult *result,
                                   gboolean attach,
                                   guint64 *reconnects,
                                   natsStatus *status,
                                   gchar **reason)
{
	MsdNatsAttempt *attempt = g_task_propagate_pointer(G_TASK(result), NULL);
	gboolean ok = attempt->status == NATS_OK;

	*status = attempt->status;
	*reconnects = attempt->reconnects;
	*reason = g_steal_pointer(&attempt->reason);
	if (!ok) {
		msd_nats_link_unref(self->link); /* no callback will ever come */
	} else if (attach) {
		self->nc = g_steal_pointer(&attempt->nc);
		self->max_payload = attempt->max_payload;
		self->pending_bytes = 0;
		self->congested = FALSE;
	}
	/* not attached: destroying it closes it, and its closed callback drops the link */
	msd_nats_attempt_free(attempt);
	return ok;
}

gboolean
msd_nats_connection_is_attached(MsdNatsConnection *self)
{
	return self->nc != NULL;
}

const gchar *
msd_nats_connection_get_url(MsdNatsConnection *self)
{
	return self->url;
}

void
msd_nats_connection_set_state(MsdNatsConnection *self, MeshSyncBrokerState state)
{
	self->state = state;
}

void
msd_nats_connection_reconnected(MsdNatsConnection *self, gint64 max_payload)
{
	self->pending_bytes = 0;
	self->max_payload = max_payload;
	/* nats.c sent the reconnect buffer before calling back. What was in the write buffer
	 * went with the old socket or into that buffer. */
	self->congested = FALSE;
}

void
msd_nats_connection_close(MsdNatsConnection *self)
{
	if (self->nc != NULL)
		natsConnection_Close(self->nc);
	g_hash_table_remove_all(self->by_sid);
	g_hash_table_remove_all(self->by_id);
	self->n_polled = 0;
	msd_nats_connection_destroy_spent(self);
	msd_nats_connection_destroy_nc(self);
}

void
msd_nats_connection_set_marks(MsdNatsConnection *self, gsize high, gsize low)
{
	self->high_mark = high;
	self->low_mark = low;
}

gboolean
msd_nats_connection_get_congested(MsdNatsConnection *self)
{
	return self->congested;
}

void
msd_nats_connection_clear_congested(MsdNatsConnection *self)
{
	self->congested = FALSE;
}

gint64
msd_nats_connection_get_max_payload(MsdNatsConnection *self)
{
	/* Kept from the connect: asking nats.c takes the connection lock, which its reconnect
	 * thread holds through a whole connect attempt. */
	return self->nc != NULL ? self->max_payload : 0;
}

guint64
msd_nats_connection_get_buffered(MsdNatsConnection *self)
{
	gint buffered = 0;

	if (self->nc == NULL)
		return 0;
	/* nats.c drops its write buffer at the reconnection; while it reconnects its lock may be
	 * held for a whole attempt. */
	if (self->state == MESHSYNC_BROKER_STATE_CONNECTED)
		buffered = natsConnection_Buffered(self->nc);
	return (buffered > 0 ? (guint64)buffered : 0) + self->pending_bytes;
}

/* Whether the write buffer still holds something a socket could take. */
gboolean
msd_nats_connection_has_output(MsdNatsConnection *self)
{
	return self->nc != NULL && self->state != MESHSYNC_BROKER_STATE_CLOSED &&
	       natsConnection_Status(self->nc) == NATS_CONN_STATUS_CONNECTED &&
	       natsConnection_Buffered(self->nc) > 0;
}

/*
 * Pushes the write buffer into the socket from the loop thread, without waiting for the
 * server's answer. Close needs this: natsConnection_Close() otherwise waits for a PONG that
 * only this very thread could read.
 */
gboolean
msd_nats_connection_drain_output(MsdNatsConnection *self, guint timeout_ms, GError **error)
{
	gint64 deadline = g_get_monotonic_time() + (gint64)timeout_ms * 1000;

	if (self->nc == NULL)
		return TRUE;
	while (natsConnection_Status(self->nc) == NATS_CONN_STATUS_CONNECTED &&
	       natsConnection_Buffered(self->nc) > 0) {
		gint64 left_ms = (deadline - g_get_monotonic_time()) / 1000;

		/* No socket (the connection just dropped) or no room in time: stop here. */
		if (left_ms <= 0 || !msd_nats_loop_wait_writable(self->loop, (gint)left_ms))
			break;
		natsConnection_ProcessWriteEvent(self->nc);
	}
	if (natsConnection_Status(self->nc) == NATS_CONN_STATUS_CONNECTED &&
	    natsConnection_Buffered(self->nc) > 0) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		            _("the broker at %s took no data for %u ms"), self->url, timeout_ms);
		return FALSE;
	}
	return TRUE;
}

typedef struct {
	natsConnection *nc; /* (unowned): held, destroying it waits for this worker */
	guint timeout_ms;
} MsdNatsFlush;

static void
msd_nats_connection_flush_thread(GTask *task,
                                 gpointer source,
                                 gpointer data,
                                 GCancellable *cancellable)
{
	MsdNatsFlush *flush = data;
	natsStatus s = natsConnection_FlushTimeout(flush->nc, flush->timeout_ms);

	/* NULL on success, else the reason. */
	g_task_return_pointer(task, s == NATS_OK ? NULL : msd_nats_connection_last_error(s),
	                      g_free);
	nats_ReleaseThreadMemory();
}

void
msd_nats_connection_flush_async(MsdNatsConnection *self,
                                guint timeout_ms,
                                GAsyncReadyCallback callback,
                                gpointer user_data)
{
	g_autoptr(GTask) task = g_task_new(self, NULL, callback, user_data);
	MsdNatsFlush *flush;

	g_task_set_source_tag(task, msd_nats_connection_flush_async);
	flush = g_new0(MsdNatsFlush, 1);
	flush->nc = msd_nats_connection_hold(self);
	flush->timeout_ms = MAX(timeout_ms, 1);
	g_task_set_task_data(task, flush, g_free);
	if (flush->nc == NULL) {
		g_task_return_new_error(task, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		                        _("cannot flush: the broker at %s is not connected"),
		                        self->url);
		return;
	}
	g_task_run_in_thread(task, msd_nats_connection_flush_thread);
}

gboolean
msd_nats_connection_flush_finish(MsdNatsConnection *self, GAsyncResult *result, GError **error)
{
	MsdNatsFlush *flush = g_task_get_task_data(G_TASK(result));
	g_autoptr(GError) local_error = NULL;
	g_autofree gchar *reason = NULL;

	reason = g_task_propagate_pointer(G_TASK(result), &local_error);
	if (local_error != NULL) {
		g_propagate_error(error, g_steal_pointer(&local_error));
		return FALSE;
	}
	msd_nats_connection_release(self);
	if (reason != NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		            _("flushing to the broker at %s failed within %u ms: %s"), self->url,
		            flush->timeout_ms, reason);
		return FALSE;
	}
	return TRUE;
}

gboolean
msd_nats_connection_publish_unchecked(MsdNatsConnection *self,
                                      const gchar *subject,
                                      gconstpointer data,
                                      gsize len,
                                      GError **error)
{
	natsStatus s;

	if (self->nc == NULL || self->state == MESHSYNC_BROKER_STATE_CLOSED) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		            _("cannot publish on %s: the broker at %s is not connected"), subject,
		            self->url);
		return FALSE;
	}

	s = natsConnection_Publish(self->nc, subject, data, (int)len);
	switch (s) {
	case NATS_OK:
		if (self->state == MESHSYNC_BROKER_STATE_RECONNECTING)
			self->pending_bytes += len + strlen(subject) + MSD_NATS_PUB_OVERHEAD;
		else if (!self->congested &&
		         natsConnection_Buffered(self->nc) > (gint)self->high_mark)
			msd_nats_connection_set_congested(self, TRUE);
		return TRUE;
	case NATS_INSUFFICIENT_BUFFER:
		if (self->owner != NULL)
			self->funcs->reconnect_buffer_full(self->owner);
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		            _("cannot publish on %s: the broker at %s is away and the reconnect "
		              "buffer is full"),
		            subject, self->url);
		return FALSE;
	case NATS_MAX_PAYLOAD:
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("message on %s is %zu bytes; more than the broker at "
		              "%s takes"),
		            subject, len, self->url);
		return FALSE;
	default: {
		g_autofree gchar *reason = msd_nats_connection_last_error(s);

		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		            _("cannot publish on %s to the broker at %s: %s"), subject, self->url,
		            reason);
		return FALSE;
	}
	}
}

gboolean
msd_nats_connection_publish_with_id(MsdNatsConnection *self,
                                    const gchar *subject,
                                    const gchar *reply,
                                    const gchar *msg_id,
                                    gconstpointer data,
                                    gsize len,
                                    GError **error)
{
	natsMsg *msg = NULL;
	natsStatus s;

	/* Nothing goes to nats.c's reconnect buffer: the caller sends it again itself. */
	if (self->nc == NULL || self->state != MESHSYNC_BROKER_STATE_CONNECTED) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		            "cannot publish on %s: the broker at %s is not connected", subject,
		            self->url);
		return FALSE;
	}
	s = natsMsg_Create(&msg, subject, reply, data, (int)len);
	if (s == NATS_OK)
		s = natsMsgHeader_Set(msg, "Nats-Msg-Id", msg_id);
	if (s == NATS_OK)
		s = natsConnection_PublishMsg(self->nc, msg);
	if (msg != NULL) {
		g_ptr_array_add(self->spent, msg);
		if (self->spent->len >= MSD_NATS_SPENT_BATCH)
			msd_nats_connection_destroy_spent(self);
	}
	if (s == NATS_OK) {
		if (!self->congested && natsConnection_Buffered(self->nc) > (gint)self->high_mark)
			msd_nats_connection_set_congested(self, TRUE);
		return TRUE;
	}
	{
		g_autofree gchar *reason = msd_nats_connection_last_error(s);

		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		            "cannot publish on %s to the broker at %s: %s", subject, self->url,
		            reason);
	}
	return FALSE;
}

/* Either kind of subscription: delivered by nats.c's delivery thread through the link, or
 * @polled, drained by the loop (msd_nats_connection_subscribe_polled()). */
static guint
msd_nats_connection_subscribe_full(MsdNatsConnection *self,
                                   const gchar *subject,
                                   const gchar *queue_group,
                                   gboolean polled,
                                   MsdNatsConnectionMessageFunc func,
                                   gpointer user_data,
                                   GDestroyNotify destroy,
                                   GError **error)
{
	MsdNatsSubscription *sub;
	natsSubscription *nsub = NULL;
	natsStatus s;

	if (self->nc == NULL || self->state == MESHSYNC_BROKER_STATE_CLOSED) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		            _("cannot subscribe to %s: the broker at %s is not connected"), subject,
		            self->url);
		return 0;
	}
	if (polled) {
		s = natsConnection_SubscribeSync(&nsub, self->nc, subject);
	} else {
		/* The delivery thread keeps the link until the completion callback below. */
		msd_nats_link_ref(self->link);
		if (queue_group != NULL && *queue_group != '\0')
			s = natsConnection_QueueSubscribe(&nsub, self->nc, subject, queue_group,
			                                  msd_nats_link_message_cb, self->link);
		else
			s = natsConnection_Subscribe(&nsub, self->nc, subject,
			                             msd_nats_link_message_cb, self->link);
		if (s != NATS_OK)
			msd_nats_link_unref(self->link);
	}
	if (s != NATS_OK) {
		g_autofree gchar *reason = msd_nats_connection_last_error(s);

		g_set_error(error, MESHSYNC_ERROR,
		            s == NATS_INVALID_SUBJECT ? MESHSYNC_ERROR_INVALID_DATA
		                                      : MESHSYNC_ERROR_CONNECTION,
		            _("cannot subscribe to %s at the broker at %s: %s"), subject, self->url,
		            reason);
		return 0;
	}
	if (!polled && natsSubscription_SetOnCompleteCB(
	                       nsub, msd_nats_link_subscription_complete_cb, self->link) != NATS_OK)
		/* Keep the link forever rather than free it under a running callback. */
		g_warning("subscription to %s: no completion callback", subject);

	sub = g_new0(MsdNatsSubscription, 1);
	sub->id = ++self->next_id;
	sub->sid = natsSubscription_GetID(nsub);
	sub->sub = nsub;
	sub->func = func;
	sub->user_data = user_data;
	sub->destroy = destroy;
	sub->polled = polled;
	if (polled)
		self->n_polled++;
	g_hash_table_insert(self->by_id, GUINT_TO_POINTER(sub->id), sub);
	g_hash_table_insert(self->by_sid, &sub->sid, sub);
	return sub->id;
}

guint
msd_nats_connection_subscribe(MsdNatsConnection *self,
                              const gchar *subject,
                              const gchar *queue_group,
                              MsdNatsConnectionMessageFunc func,
                              gpointer user_data,
                              GDestroyNotify destroy,
                              GError **error)
{
	return msd_nats_connection_subscribe_full(self, subject, queue_group, FALSE, func,
	                                          user_data, destroy, error);
}

guint
msd_nats_connection_subscribe_polled(MsdNatsConnection *self,
                                     const gchar *subject,
                                     MsdNatsConnectionMessageFunc func,
                                     gpointer user_data,
                                     GDestroyNotify destroy,
                                     GError **error)
{
	return msd_nats_connection_subscribe_full(self, subject, NULL, TRUE, func, user_data,
	                                          destroy, error);
}

void
msd_nats_connection_unsubscribe(MsdNatsConnection *self, guint id)
{
	MsdNatsSubscription *sub = g_hash_table_lookup(self->by_id, GUINT_TO_POINTER(id));

	if (sub == NULL)
		return;
	if (sub->polled)
		self->n_polled--;
	if (self->nc != NULL && self->state != MESHSYNC_BROKER_STATE_CLOSED)
		natsSubscription_Unsubscribe(sub->sub);
	g_hash_table_remove(self->by_sid, &sub->sid);
	g_hash_table_remove(self->by_id, GUINT_TO_POINTER(id));
}

natsConnection *
msd_nats_connection_hold(MsdNatsConnection *self)
{
	if (self->nc == NULL || self->state == MESHSYNC_BROKER_STATE_CLOSED)
		return NULL;
	self->n_workers++;
	return self->nc;
}

void
msd_nats_connection_release(MsdNatsConnection *self)
{
	g_return_if_fail(self->n_workers > 0);
	self->n_workers--;
	if (self->n_workers == 0 && self->destroy_due)
		msd_nats_connection_destroy_nc(self);
}
