/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * One file for one public class: the settings, the connect with its backoff, the state and
 * writable property, publish, subscribe, flush and close are MeshSyncBroker's API over one
 * set of fields (state, connect task, close waiters) that each of them reads; the work below
 * it lives beside it (broker/msd-nats-connection.c, msd-replay.c, msd-jetstream.c).
 */

#define G_LOG_DOMAIN "MeshSyncBroker"

#include "config.h"

#include <inttypes.h>
#include <nats/nats.h>
#include <string.h>

#include "meshsync-broker.h"
#include "meshsync-broker-writer.h"
#include "meshsync-enum-types.h"
#include "meshsync-error.h"
#include "meshsync-broker-private.h"
#include "broker/msd-broker-url.h"
#include "broker/msd-jetstream.h"
#include "broker/msd-nats-connection.h"
#include "broker/msd-replay.h"
#include "util/msd-i18n.h"
#include "util/msd-log.h"

/**
 * MeshSyncBroker:
 *
 * A connection to a NATS broker, driven by the main context the broker was created in.
 *
 * The URL takes upstream MeshSync's `BROKER_URL` forms (`host:4222`, `nats://host:4222`)
 * and also `tls://`, IPv6 addresses in brackets, `user:password@` or `token@` credentials
 * (percent-decoded) and a comma-separated list of servers.
 *
 * [method@MeshSync.Broker.connect_async] waits for the broker, retrying with a growing
 * delay, up to the connect timeout (five minutes by default, as upstream). Once connected the
 * broker pings it every second and takes three unanswered pings for a dead connection, so a
 * hung server is noticed within seconds; it reconnects on its own, every 2 seconds and by
 * default forever. Messages given to [method@MeshSync.Broker.publish] while it is away are
 * buffered by the NATS client (8 MB) and sent after the reconnection. When that buffer is
 * full, [method@MeshSync.Broker.publish] fails and [property@MeshSync.Broker:writable] turns
 * %FALSE until the connection is back.
 *
 * Resource events from a [class@MeshSync.BrokerWriter] take another path: the broker keeps
 * every one until the server confirmed it (a PING answered by a PONG, at least every 200 ms),
 * and after a reconnection sends again, in the original order and before any newer event,
 * everything that was not confirmed; while the broker is away new events wait behind them.
 * When 64 MiB are held unconfirmed, [property@MeshSync.Broker:writable] turns %FALSE until a
 * confirmation frees the window. A consumer may see an event again, never miss one.
 *
 * While connected, publishes wait in the client's write buffer until the main loop hands
 * them to the socket. A burst faster than the broker reads (the initial state of a large
 * cluster) would pile every message up there, so [property@MeshSync.Broker:writable] also
 * turns %FALSE once more than 4 MiB wait, and %TRUE again when the socket has taken them
 * down to 1 MiB: publishes are still taken meanwhile, but a producer that honours the
 * property holds its events instead, and memory stays bounded.
 *
 * Publishing never blocks. Messages of subscriptions and state changes arrive in the main
 * context; waiting calls such as [method@MeshSync.Broker.flush_async] run in a worker thread.
 */

/* Exponential backoff while waiting for the broker at start-up. */
#define MSD_BROKER_BACKOFF_FIRST_MS 500
#define MSD_BROKER_BACKOFF_MAX_MS   5000
/* One connect attempt: the TCP connect plus the INFO/CONNECT/PING handshake. */
#define MSD_BROKER_ATTEMPT_TIMEOUT_MS 2000
#define MSD_BROKER_RECONNECT_WAIT_MS  2000
/* A silently dead or hung peer is noticed after three pings a second apart went unanswered,
 * instead of nats.c's 4 to 6 minutes: what it did not confirm is re-sent that much sooner, and
 * the replay window holds seconds of events, not minutes. */
#define MSD_BROKER_PING_INTERVAL_MS 1000
#define MSD_BROKER_MAX_PINGS_OUT    3
/* How long close() may spend pushing the write buffer out. */
#define MSD_BROKER_CLOSE_DRAIN_MS 2000
/*
 * Marks on nats.c's write buffer, which only the loop drains and which never gives memory
 * back once grown: above the high one the broker says it is not writable, below the low one
 * writable again. 4 MiB is about 750 pod envelopes, several milliseconds of what loopback
 * takes, so the socket never runs dry while the producer waits; it also caps what the buffer
 * can ever hold to the mark plus one message. 1 MiB still left when the producer resumes
 * keeps the socket busy until fresh messages arrive.
 */
#define MSD_BROKER_WRITE_HIGH_MARK (4 * 1024 * 1024)
#define MSD_BROKER_WRITE_LOW_MARK  (1024 * 1024)

/* ------------------------------------------------------------------------------------------ */

/* A subscription's callback and data, as the connection hands its messages over. */
typedef struct {
	MeshSyncBroker *broker; /* (unowned): the subscription goes before it */
	/* one of the two: a subscriber of the broker's API, or of its MeshSyncBus interface */
	MeshSyncBrokerMessageFunc func;
	MeshSyncBusMessageFunc bus_func;
	gpointer user_data;
	GDestroyNotify destroy;
} MsdBrokerSubscription;

struct _MeshSyncBroker {
	GObject parent_instance;

	GMainContext *context; /* (owned) */
	MsdBrokerUrl *url;     /* (owned) */
	gchar *token;
	gchar *credentials_file;
	gchar *tls_ca;
	gchar *tls_certificate;
	gchar *tls_key;
	guint connect_timeout_s;
	gint max_reconnects;
	gsize reconnect_buffer_size; /* 0: nats.c's default */
	guint ping_interval_ms;
	guint max_pings_out;

	MsdNatsConnection *conn; /* (owned): publishing, subscriptions, the socket */
	MsdReplay *replay;       /* (owned): the resource events not confirmed yet */
	MsdJetStream *jetstream; /* (owned): the same on JetStream, when it is on */
	gboolean jetstream_wanted;
	GTask *connect_task; /* (unowned) (nullable): the connect in progress */

	MeshSyncBrokerState state;
	gboolean writable;      /* the property: link_writable and not congested */
	gboolean link_writable; /* connected, or away with room in the reconnect buffer */
	guint64 reconnects;

	GPtrArray *closing;  /* (owned) (element-type GTask): close_async() calls still waiting */
	GSource *close_idle; /* (owned) (nullable): ends a close_async() whose buffer drained */
};

static void meshsync_broker_bus_iface_init(MeshSyncBusInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(MeshSyncBroker,
                              meshsync_broker,
                              G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(MESHSYNC_TYPE_BUS,
                                                    meshsync_broker_bus_iface_init))

enum {
	PROP_0,
	PROP_URL,
	PROP_STATE,
	PROP_WRITABLE,
	N_PROPS,
};

static GParamSpec *props[N_PROPS];

static void
msd_broker_subscription_free(gpointer data)
{
	MsdBrokerSubscription *sub = data;

	if (sub->destroy != NULL)
		sub->destroy(sub->user_data);
	g_free(sub);
}

static void
msd_broker_subscription_message_cb(const gchar *subject,
                                   const gchar *reply,
                                   GBytes *payload,
                                   gpointer user_data)
{
	MsdBrokerSubscription *sub = user_data;
	/* the link holds the connection for the call; the function may drop the broker */
	g_autoptr(MeshSyncBroker) broker = g_object_ref(sub->broker);

	if (sub->bus_func != NULL)
		sub->bus_func(MESHSYNC_BUS(broker), subject, reply, payload, sub->user_data);
	else
		sub->func(broker, subject, reply, payload, sub->user_data);
}

static guint
msd_broker_subscribe(MeshSyncBroker *self,
                     const gchar *subject,
                     const gchar *queue_group,
                     MsdBrokerSubscription *sub,
                     GError **error)
{
	guint id;

	sub->broker = self;
	id = msd_nats_connection_subscribe(self->conn, subject, queue_group,
	                                   msd_broker_subscription_message_cb, sub,
	                                   msd_broker_subscription_free, error);
	/* a failed subscribe does not call its destroy notify, nor the subscriber's */
	if (id == 0)
		g_free(sub);
	return id;
}

static void
meshsync_broker_set_state(MeshSyncBroker *self, MeshSyncBrokerState state)
{
	if (self->state == state)
		return;
	self->state = state;
	msd_nats_connection_set_state(self->conn, state);
	g_object_notify_by_pspec(G_OBJECT(self), props[PROP_STATE]);
}

static void
meshsync_broker_update_writable(MeshSyncBroker *self)
{
	gboolean writable = self->link_writable && !msd_nats_connection_get_congested(self->conn) &&
	                    !msd_replay_is_full(self->replay) &&
	                    !msd_jetstream_is_full(self->jetstream);

	if (self->writable == writable)
		return;
	self->writable = writable;
	g_object_notify_by_pspec(G_OBJECT(self), props[PROP_WRITABLE]);
}

static void
meshsync_broker_set_writable(MeshSyncBroker *self, gboolean writable)
{
	self->link_writable = writable;
	meshsync_broker_update_writable(self);
}

static void meshsync_broker_close_check(MeshSyncBroker *self);

/* The connection below: its write buffer passed a mark. */
static void
meshsync_broker_congestion_changed_cb(gpointer owner, gboolean congested)
{
	MeshSyncBroker *self = owner;

	meshsync_broker_update_writable(self);
	if (!congested) {
		msd_replay_resume(self->replay);
		msd_jetstream_resume(self->jetstream);
	}
}

static void
meshsync_broker_reconnect_buffer_full_cb(gpointer owner)
{
	meshsync_broker_set_writable(owner, FALSE);
}

static void
meshsync_broker_written_cb(gpointer owner)
{
	meshsync_broker_close_check(owner);
}

static void
meshsync_broker_handle_event(gpointer owner, MsdNatsLinkEvent *event)
{
	/* a handler of the notifications below may drop the last other reference */
	g_autoptr(MeshSyncBroker) self = g_object_ref(owner);

	switch (event->kind) {
	case MSD_NATS_LINK_EVENT_DISCONNECTED:
		if (self->state != MESHSYNC_BROKER_STATE_CONNECTED)
			break;
		msd_info_url(self->url->display,
		             "lost the connection to the broker at %s; reconnecting",
		             self->url->display);
		msd_replay_disconnected(self->replay);
		msd_jetstream_disconnected(self->jetstream);
		meshsync_broker_set_state(self, MESHSYNC_BROKER_STATE_RECONNECTING);
		/* What waited for the socket went with the connection (the window sends it
		 * again): resource events wait in the window now, up to its bound. */
		msd_nats_connection_clear_congested(self->conn);
		meshsync_broker_update_writable(self);
		break;
	case MSD_NATS_LINK_EVENT_RECONNECTED:
		if (self->state == MESHSYNC_BROKER_STATE_CLOSED)
			break;
		self->reconnects++;
		msd_nats_connection_reconnected(self->conn, event->max_payload);
		msd_info_url(self->url->display, "reconnected to the broker at %s",
		             self->url->display);
		meshsync_broker_set_state(self, MESHSYNC_BROKER_STATE_CONNECTED);
		/* nats.c sent the reconnect buffer before calling back: room again. */
		meshsync_broker_set_writable(self, TRUE);
		/* The window goes again, oldest first, before anything newer. */
		msd_replay_connected(self->replay, event->reconnects);
		msd_jetstream_connected(self->jetstream);
		break;
	case MSD_NATS_LINK_EVENT_CLOSED:
		if (self->state == MESHSYNC_BROKER_STATE_CLOSED)
			break;
		msd_info_url(self->url->display,
		             "the connection to the broker at %s is closed for good",
		             self->url->display);
		msd_replay_closed(self->replay);
		msd_jetstream_closed(self->jetstream);
		meshsync_broker_set_state(self, MESHSYNC_BROKER_STATE_CLOSED);
		meshsync_broker_set_writable(self, FALSE);
		break;
	case MSD_NATS_LINK_EVENT_ERROR:
		msd_info_url(self->url->display, "broker at %s: %s", self->url->display,
		             natsStatus_GetText(event->status));
		break;
	default:
		g_assert_not_reached();
	}
	/* a connection lost while closing has nothing more to send */
	meshsync_broker_close_check(self);
}

static const MsdNatsConnectionOwnerFuncs meshsync_broker_connection_funcs = {
        .event = meshsync_broker_handle_event,
        .congestion_changed = meshsync_broker_congestion_changed_cb,
        .reconnect_buffer_full = meshsync_broker_reconnect_buffer_full_cb,
        .written = meshsync_broker_written_cb,
};

/* ------------------------------------------------------------------------------------------ */

static gboolean
msd_broker_is_auth_failure(natsStatus status, const gchar *reason)
{
	g_autofree gchar *lower = NULL;

	if (status == NATS_CONNECTION_AUTH_FAILED || status == NATS_NOT_PERMITTED)
		return TRUE;
	lower = g_ascii_strdown(reason != NULL ? reason : "", -1);
	return strstr(lower, "authorization violation") != NULL ||
	       strstr(lower, "authentication") != NULL;
}

static void
meshsync_broker_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
	MeshSyncBroker *self = MESHSYNC_BROKER(object);

	switch (prop_id) {
	case PROP_URL:
		g_value_set_string(value, self->url != NULL ? self->url->display : NULL);
		break;
	case PROP_STATE:
		g_value_set_enum(value, self->state);
		break;
	case PROP_WRITABLE:
		g_value_set_boolean(value, self->writable);
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
	}
}

static void
meshsync_broker_dispose(GObject *object)
{
	MeshSyncBroker *self = MESHSYNC_BROKER(object);

	if (self->conn != NULL && msd_nats_connection_is_attached(self->conn) &&
	    self->state != MESHSYNC_BROKER_STATE_CLOSED)
		meshsync_broker_close(self);
	if (self->close_idle != NULL) {
		g_source_destroy(self->close_idle);
		g_clear_pointer(&self->close_idle, g_source_unref);
	}
	if (self->conn != NULL) {
		msd_nats_connection_detach(self->conn);
		g_object_run_dispose(G_OBJECT(self->conn));
	}
	G_OBJECT_CLASS(meshsync_broker_parent_class)->dispose(object);
}

static void
meshsync_broker_finalize(GObject *object)
{
	MeshSyncBroker *self = MESHSYNC_BROKER(object);

	/* Workers hold a reference, so none is left here and the connection can go. */
	g_ptr_array_unref(self->closing);
	g_clear_object(&self->conn);
	msd_replay_free(self->replay);
	msd_jetstream_free(self->jetstream);
	msd_broker_url_free(self->url);
	g_free(self->token);
	g_free(self->credentials_file);
	g_free(self->tls_ca);
	g_free(self->tls_certificate);
	g_free(self->tls_key);
	if (self->context != NULL)
		g_main_context_unref(self->context);
	G_OBJECT_CLASS(meshsync_broker_parent_class)->finalize(object);
}

static void
meshsync_broker_class_init(MeshSyncBrokerClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->get_property = meshsync_broker_get_property;
	object_class->dispose = meshsync_broker_dispose;
	object_class->finalize = meshsync_broker_finalize;

	/**
	 * MeshSyncBroker:url:
	 *
	 * The servers of the broker, without credentials, for messages.
	 */
	props[PROP_URL] = g_param_spec_string("url", NULL, NULL, NULL,
	                                      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
	/**
	 * MeshSyncBroker:state:
	 *
	 * The state of the connection; changes are notified in the broker's main context.
	 */
	props[PROP_STATE] = g_param_spec_enum(
	        "state", NULL, NULL, MESHSYNC_TYPE_BROKER_STATE, MESHSYNC_BROKER_STATE_DISCONNECTED,
	        G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
	/**
	 * MeshSyncBroker:writable:
	 *
	 * Whether a publish can be taken now: %FALSE once the reconnect buffer filled up during
	 * an outage, %TRUE again after the reconnection sent it; also %FALSE while more than
	 * 4 MiB wait for the socket, until they are down to 1 MiB, and while the resource
	 * events not confirmed yet reach 64 MiB, until a confirmation took them below 32 MiB.
	 */
	props[PROP_WRITABLE] = g_param_spec_boolean("writable", NULL, NULL, FALSE,
	                                            G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY |
	                                                    G_PARAM_STATIC_STRINGS);
	g_object_class_install_properties(object_class, N_PROPS, props);
}

static void
meshsync_broker_init(MeshSyncBroker *self)
{
	self->connect_timeout_s = 300;
	self->max_reconnects = -1;
	self->state = MESHSYNC_BROKER_STATE_DISCONNECTED;
	self->ping_interval_ms = MSD_BROKER_PING_INTERVAL_MS;
	self->max_pings_out = MSD_BROKER_MAX_PINGS_OUT;
	self->closing = g_ptr_array_new_with_free_func(g_object_unref);
}

/* The replay window or JetStream says that whether it is full changed. */
static void
meshsync_broker_full_changed_cb(GObject *owner)
{
	meshsync_broker_update_writable(MESHSYNC_BROKER(owner));
}

/**
 * meshsync_broker_new:
 * @url: the broker: `host:port`, `nats://host:port` or `tls://host:port`, optionally with
 *   `user:password@` or `token@` before the host, or several of those separated by commas
 * @error: return location for a #GError
 *
 * Creates a broker for @url, in the thread-default main context of the caller; it does
 * not connect yet.
 *
 * A scheme-less URL means `nats://`, a missing port means 4222, and IPv6 addresses go in
 * brackets (`[::1]:4222`). Credentials are percent-decoded. An empty URL, a missing host, a
 * bad port or a space in the host give %MESHSYNC_ERROR_INVALID_CONFIG naming the URL (with
 * the credentials hidden).
 *
 * Returns: (transfer full) (nullable): a new broker, or %NULL if @url is not valid
 */
MeshSyncBroker *
meshsync_broker_new(const gchar *url, GError **error)
{
	g_autoptr(MsdBrokerUrl) parsed = msd_broker_url_parse(url, error);
	MeshSyncBroker *self;

	if (parsed == NULL)
		return NULL;
	self = g_object_new(MESHSYNC_TYPE_BROKER, NULL);
	self->url = g_steal_pointer(&parsed);
	self->context = g_main_context_ref_thread_default();
	self->conn = msd_nats_connection_new(self->context, self->url->display,
	                                     &meshsync_broker_connection_funcs, self);
	msd_nats_connection_set_marks(self->conn, MSD_BROKER_WRITE_HIGH_MARK,
	                              MSD_BROKER_WRITE_LOW_MARK);
	/* The broker, not the connection, is their owner: a worker task of either holds the
	 * broker, which owns both of them. */
	self->replay = msd_replay_new(self->conn, G_OBJECT(self), meshsync_broker_full_changed_cb,
	                              self->context);
	self->jetstream = msd_jetstream_new(self->conn, G_OBJECT(self),
	                                    meshsync_broker_full_changed_cb, self->context);
	return self;
}

/**
 * meshsync_broker_set_token:
 * @self: a #MeshSyncBroker
 * @token: (nullable): the token, or %NULL to use the one in the URL, if any
 *
 * Sets the token sent to the broker; takes effect at the next connect.
 */
void
meshsync_broker_set_token(MeshSyncBroker *self, const gchar *token)
{
	g_return_if_fail(MESHSYNC_IS_BROKER(self));
	g_free(self->token);
	self->token = g_strdup(token);
}

/**
 * meshsync_broker_set_credentials_file:
 * @self: a #MeshSyncBroker
 * @path: (nullable) (type filename): a NATS credentials file (user JWT and NKey seed, as
 *   `nsc` writes it), or %NULL for none
 *
 * Sets the credentials file used to authenticate; takes effect at the next connect.
 */
void
meshsync_broker_set_credentials_file(MeshSyncBroker *self, const gchar *path)
{
	g_return_if_fail(MESHSYNC_IS_BROKER(self));
	g_free(self->credentials_file);
	self->credentials_file = g_strdup(path);
}

/**
 * meshsync_broker_set_tls:
 * @self: a #MeshSyncBroker
 * @ca_file: (nullable) (type filename): PEM file of the certificate authorities to trust
 * @certificate_file: (nullable) (type filename): PEM client certificate, for mutual TLS
 * @key_file: (nullable) (type filename): PEM key of @certificate_file
 *
 * Turns TLS on (as a `tls://` URL does) and sets its files; takes effect at the next
 * connect.
 */
void
meshsync_broker_set_tls(MeshSyncBroker *self,
                        const gchar *ca_file,
                        const gchar *certificate_file,
                        const gchar *key_file)
{
	g_return_if_fail(MESHSYNC_IS_BROKER(self));
	g_free(self->tls_ca);
	g_free(self->tls_certificate);
	g_free(self->tls_key);
	self->tls_ca = g_strdup(ca_file);
	self->tls_certificate = g_strdup(certificate_file);
	self->tls_key = g_strdup(key_file);
	self->url->tls = TRUE;
}

/**
 * meshsync_broker_set_connect_timeout:
 * @self: a #MeshSyncBroker
 * @seconds: how long [method@MeshSync.Broker.connect_async] waits for the broker
 *
 * Sets how long the first connect keeps retrying; 300 seconds by default, upstream's five
 * minutes.
 */
void
meshsync_broker_set_connect_timeout(MeshSyncBroker *self, guint seconds)
{
	g_return_if_fail(MESHSYNC_IS_BROKER(self));
	self->connect_timeout_s = seconds;
}

/**
 * meshsync_broker_set_max_reconnects:
 * @self: a #MeshSyncBroker
 * @max_reconnects: reconnect attempts per server after a lost connection, or -1 for no
 *   limit
 *
 * Sets how often the broker tries to reconnect before closing for good. The default, -1,
 * retries forever (upstream gives up after 60 attempts and then drops every event).
 */
void
meshsync_broker_set_max_reconnects(MeshSyncBroker *self, gint max_reconnects)
{
	g_return_if_fail(MESHSYNC_IS_BROKER(self));
	self->max_reconnects = max_reconnects < 0 ? -1 : max_reconnects;
}

void
meshsync_broker_set_reconnect_buffer_size(MeshSyncBroker *self, gsize bytes)
{
	g_return_if_fail(MESHSYNC_IS_BROKER(self));
	self->reconnect_buffer_size = bytes;
}

void
meshsync_broker_set_write_buffer_marks(MeshSyncBroker *self, gsize high, gsize low)
{
	g_return_if_fail(MESHSYNC_IS_BROKER(self));
	g_return_if_fail(low <= high && high <= G_MAXINT);
	msd_nats_connection_set_marks(self->conn, high, low);
}

void
meshsync_broker_set_ping(MeshSyncBroker *self, guint interval_ms, guint max_outstanding)
{
	g_return_if_fail(MESHSYNC_IS_BROKER(self));
	self->ping_interval_ms = MAX(interval_ms, 1);
	self->max_pings_out = MAX(max_outstanding, 1);
}

void
meshsync_broker_set_replay_window(MeshSyncBroker *self, gsize max_bytes)
{
	g_return_if_fail(MESHSYNC_IS_BROKER(self));
	msd_replay_set_max_bytes(self->replay, max_bytes);
}

void
meshsync_broker_set_confirm_policy(MeshSyncBroker *self, guint interval_ms, guint every)
{
	g_return_if_fail(MESHSYNC_IS_BROKER(self));
	msd_replay_set_confirm_policy(self->replay, interval_ms, every);
}

void
meshsync_broker_get_replay_stats(MeshSyncBroker *self, MeshSyncBrokerReplayStats *stats)
{
	g_return_if_fail(MESHSYNC_IS_BROKER(self));
	g_return_if_fail(stats != NULL);
	stats->bytes = msd_replay_get_bytes(self->replay);
	stats->messages = msd_replay_get_n_messages(self->replay);
	stats->unsent_bytes = msd_replay_get_unsent_bytes(self->replay);
	stats->mapped_bytes = msd_replay_get_mapped_bytes(self->replay);
	stats->resent = msd_replay_get_n_resent(self->replay);
	stats->confirmations = msd_replay_get_n_confirmations(self->replay);
}

/* ------------------------------------------------------------------------------------------
 * Connect: each attempt is the connection's (a worker blocks on TCP and the handshake); the
 * backoff between attempts is a timeout source on the loop.
 */

typedef struct {
	natsOptions *opts; /* (owned) */
	gint64 deadline_us;
	guint delay_ms;
	gchar *last_reason;
	GSource *timer;     /* (owned) (nullable) */
	GSource *cancelled; /* (owned) (nullable) */
	gboolean attempting;
	gboolean logged;
} MsdConnectData;

static void
msd_connect_data_free(gpointer data)
{
	MsdConnectData *cd = data;

	if (cd->timer != NULL) {
		g_source_destroy(cd->timer);
		g_source_unref(cd->timer);
	}
	if (cd->cancelled != NULL) {
		g_source_destroy(cd->cancelled);
		g_source_unref(cd->cancelled);
	}
	natsOptions_Destroy(cd->opts);
	g_free(cd->last_reason);
	g_free(cd);
}

static natsOptions *
meshsync_broker_build_options(MeshSyncBroker *self, GError **error)
{
	MsdNatsSettings settings = {
	        .servers = (const gchar *const *)self->url->servers,
	        .user = self->url->user,
	        .password = self->url->password,
	        .token = self->token != NULL ? self->token : self->url->token,
	        .credentials_file = self->credentials_file,
	        .tls = self->url->tls,
	        .tls_ca = self->tls_ca,
	        .tls_certificate = self->tls_certificate,
	        .tls_key = self->tls_key,
	        .attempt_timeout_ms = MIN((gint64)MSD_BROKER_ATTEMPT_TIMEOUT_MS,
	                                  MAX((gint64)self->connect_timeout_s * 1000, 250)),
	        .max_reconnects = self->max_reconnects,
	        .reconnect_wait_ms = MSD_BROKER_RECONNECT_WAIT_MS,
	        .reconnect_buffer_size = self->reconnect_buffer_size,
	        .ping_interval_ms = self->ping_interval_ms,
	        .max_pings_out = (gint)self->max_pings_out,
	};

	return msd_nats_connection_build_options(self->conn, &settings, error);
}

static void meshsync_broker_connect_attempt(MeshSyncBroker *self, GTask *task);

static void
meshsync_broker_connect_fail(MeshSyncBroker *self, GTask *task, GError *error)
{
	if (self->connect_task == task)
		self->connect_task = NULL;
	if (self->state == MESHSYNC_BROKER_STATE_CONNECTING)
		meshsync_broker_set_state(self, MESHSYNC_BROKER_STATE_DISCONNECTED);
	g_task_return_error(task, error);
	g_object_unref(task);
}

static gboolean
msd_connect_timer_cb(gpointer data)
{
	GTask *task = data;
	MsdConnectData *cd = g_task_get_task_data(task);

	g_clear_pointer(&cd->timer, g_source_unref);
	meshsync_broker_connect_attempt(g_task_get_source_object(task), task);
	return G_SOURCE_REMOVE;
}

static gboolean
msd_connect_cancelled_cb(GCancellable *cancellable, gpointer data)
{
	GTask *task = data;
	MeshSyncBroker *self = g_task_get_source_object(task);
	MsdConnectData *cd = g_task_get_task_data(task);
	GError *error = NULL;

	g_clear_pointer(&cd->cancelled, g_source_unref);
	/* An attempt in flight finishes first and then sees the cancellation. */
	if (cd->attempting)
		return G_SOURCE_REMOVE;
	g_cancellable_set_error_if_cancelled(cancellable, &error);
	meshsync_broker_connect_fail(self, task, error);
	return G_SOURCE_REMOVE;
}

static void
meshsync_broker_connect_complete(MeshSyncBroker *self, GTask *task)
{
	self->connect_task = NULL;
	msd_nats_connection_clear_congested(self->conn);
	msd_info_url(self->url->display, "connected to the broker at %s%s", self->url->display,
	             msd_jetstream_is_active(self->jetstream) ? " (JetStream)" : "");
	meshsync_broker_set_state(self, MESHSYNC_BROKER_STATE_CONNECTED);
	meshsync_broker_set_writable(self, TRUE);
	g_task_return_boolean(task, TRUE);
	g_object_unref(task);
}

static void
msd_connect_jetstream_done(GObject *source, GAsyncResult *res, gpointer data)
{
	GTask *task = data;
	MeshSyncBroker *self = g_task_get_source_object(task);
	GError *error = NULL;
	gboolean ok = msd_jetstream_ensure_finish(self->jetstream, res, &error);

	msd_nats_connection_release(self->conn);
	if (self->connect_task != task) {
		g_clear_error(&error);
		meshsync_broker_connect_fail(
		        self, task,
		        g_error_new(MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		                    "the broker at %s was closed while connecting",
		                    self->url->display));
		return;
	}
	if (!ok) {
		/* A stream that is not ours is never changed: no connection, the error says why. */
		msd_nats_connection_close(self->conn);
		meshsync_broker_connect_fail(self, task, error);
		return;
	}
	meshsync_broker_connect_complete(self, task);
}

static void
msd_connect_attempt_done(GObject *source, GAsyncResult *res, gpointer data)
{
	GTask *task = data;
	MeshSyncBroker *self = g_task_get_source_object(task);
	MsdConnectData *cd = g_task_get_task_data(task);
	GError *error = NULL;
	gint64 now = g_get_monotonic_time();
	/* Closed or cancelled meanwhile: a connection made now is not kept. */
	gboolean wanted = self->connect_task == task &&
	                  !g_cancellable_is_cancelled(g_task_get_cancellable(task));
	guint64 reconnects = 0;
	natsStatus status = NATS_OK;
	g_autofree gchar *reason = NULL;
	gboolean connected = msd_nats_connection_connect_finish(self->conn, res, wanted,
	                                                        &reconnects, &status, &reason);

	cd->attempting = FALSE;
	if (self->connect_task != task) {
		meshsync_broker_connect_fail(
		        self, task,
		        g_error_new(MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		                    _("the broker at %s was closed while connecting"),
		                    self->url->display));
		return;
	}
	if (g_cancellable_set_error_if_cancelled(g_task_get_cancellable(task), &error)) {
		meshsync_broker_connect_fail(self, task, error);
		return;
	}

	if (connected) {
		msd_replay_connected(self->replay, reconnects);
		if (self->jetstream_wanted) {
			/* Connected only once the stream is there (or known absent). */
			msd_jetstream_ensure_async(
			        self->jetstream, msd_nats_connection_hold(self->conn),
			        MESHSYNC_SUBJECT_CORE, msd_connect_jetstream_done, task);
			return;
		}
		meshsync_broker_connect_complete(self, task);
		return;
	}

	if (msd_broker_is_auth_failure(status, reason)) {
		error = g_error_new(MESHSYNC_ERROR, MESHSYNC_ERROR_UNAUTHORIZED,
		                    _("the broker at %s refused the credentials: %s"),
		                    self->url->display, reason);
		meshsync_broker_connect_fail(self, task, error);
		return;
	}
	if (status == NATS_SSL_ERROR) {
		error = g_error_new(MESHSYNC_ERROR, MESHSYNC_ERROR_TLS,
		                    _("TLS with the broker at %s failed: %s"), self->url->display,
		                    reason);
		meshsync_broker_connect_fail(self, task, error);
		return;
	}

	g_free(cd->last_reason);
	cd->last_reason = g_steal_pointer(&reason);
	if (now + (gint64)cd->delay_ms * 1000 > cd->deadline_us) {
		error = g_error_new(MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		                    _("cannot reach the broker at %s within %u s: %s"),
		                    self->url->display, self->connect_timeout_s, cd->last_reason);
		meshsync_broker_connect_fail(self, task, error);
		return;
	}
	if (!cd->logged) {
		msd_info_url(self->url->display, "waiting for the broker at %s: %s",
		             self->url->display, cd->last_reason);
		cd->logged = TRUE;
	}
	cd->timer = g_timeout_source_new(cd->delay_ms);
	g_source_set_static_name(cd->timer, "meshsync-broker-backoff");
	g_source_set_callback(cd->timer, msd_connect_timer_cb, task, NULL);
	g_source_attach(cd->timer, self->context);
	cd->delay_ms = MIN(cd->delay_ms * 2, MSD_BROKER_BACKOFF_MAX_MS);
}

static void
meshsync_broker_connect_attempt(MeshSyncBroker *self, GTask *task)
{
	MsdConnectData *cd = g_task_get_task_data(task);

	if (self->connect_task != task) {
		meshsync_broker_connect_fail(
		        self, task,
		        g_error_new(MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		                    _("the broker at %s was closed while connecting"),
		                    self->url->display));
		return;
	}
	cd->attempting = TRUE;
	/* cd->opts lives as long as @task, which the attempt's callback completes */
	msd_nats_connection_connect_async(self->conn, cd->opts, msd_connect_attempt_done, task);
}

/**
 * meshsync_broker_connect_async:
 * @self: a #MeshSyncBroker
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when connected or when giving up
 * @user_data: data for @callback
 *
 * Connects to the broker, waiting for it with a growing delay (0.5 s doubling up to 5 s)
 * until it answers or the connect timeout (see
 * [method@MeshSync.Broker.set_connect_timeout]) runs out.
 *
 * Wrong credentials fail at once with %MESHSYNC_ERROR_UNAUTHORIZED, a TLS failure with
 * %MESHSYNC_ERROR_TLS; running out of time gives %MESHSYNC_ERROR_CONNECTION naming the URL
 * and the last reason.
 */
void
meshsync_broker_connect_async(MeshSyncBroker *self,
                              GCancellable *cancellable,
                              GAsyncReadyCallback callback,
                              gpointer user_data)
{
	g_autoptr(GTask) task = NULL;
	MsdConnectData *cd;
	GError *error = NULL;
	natsOptions *opts = NULL;

	g_return_if_fail(MESHSYNC_IS_BROKER(self));
	task = g_task_new(self, cancellable, callback, user_data);
	g_task_set_source_tag(task, meshsync_broker_connect_async);

	if (msd_nats_connection_is_attached(self->conn) || self->connect_task != NULL) {
		g_task_return_new_error(task, MESHSYNC_ERROR, MESHSYNC_ERROR_FAILED,
		                        _("the broker at %s is already connected or connecting"),
		                        self->url->display);
		return;
	}
	opts = meshsync_broker_build_options(self, &error);
	if (opts == NULL) {
		g_task_return_error(task, error);
		return;
	}
	cd = g_new0(MsdConnectData, 1);
	cd->opts = opts;
	cd->delay_ms = MSD_BROKER_BACKOFF_FIRST_MS;
	cd->deadline_us = g_get_monotonic_time() + (gint64)self->connect_timeout_s * G_USEC_PER_SEC;
	g_task_set_task_data(task, cd, msd_connect_data_free);
	if (cancellable != NULL) {
		cd->cancelled = g_cancellable_source_new(cancellable);
		g_source_set_callback(cd->cancelled, G_SOURCE_FUNC(msd_connect_cancelled_cb), task,
		                      NULL);
		g_source_attach(cd->cancelled, self->context);
	}
	self->connect_task = task;
	meshsync_broker_set_state(self, MESHSYNC_BROKER_STATE_CONNECTING);
	/* The loop owns the operation now; the reference is dropped when it returns. */
	meshsync_broker_connect_attempt(self, g_steal_pointer(&task));
}

/**
 * meshsync_broker_connect_finish:
 * @self: a #MeshSyncBroker
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Finishes [method@MeshSync.Broker.connect_async].
 *
 * Returns: %TRUE once connected
 */
gboolean
meshsync_broker_connect_finish(MeshSyncBroker *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
	return g_task_propagate_boolean(G_TASK(result), error);
}

/* ------------------------------------------------------------------------------------------ */

gboolean
meshsync_broker_subject_is_valid(const gchar *subject)
{
	gboolean token_empty = TRUE;

	if (subject == NULL || *subject == '\0')
		return FALSE;
	/* nats.c passes most bad subjects on silently (a space even turns the rest into a
	 * reply subject), so check the publish side here. */
	for (const gchar *p = subject; *p != '\0'; p++) {
		if (g_ascii_isspace(*p) || (guchar)*p < 0x20 || *p == 0x7f)
			return FALSE;
		if (*p == '.') {
			if (token_empty)
				return FALSE;
			token_empty = TRUE;
		} else {
			token_empty = FALSE;
		}
	}
	return !token_empty;
}

/**
 * meshsync_broker_publish:
 * @self: a #MeshSyncBroker
 * @subject: the subject
 * @payload: the message body
 * @error: return location for a #GError
 *
 * Publishes one message without waiting: it is queued for the socket, or kept in the
 * reconnect buffer while the broker is away. Call it from the broker's main context.
 *
 * A message larger than the server accepts gives %MESHSYNC_ERROR_INVALID_DATA naming the
 * subject and both sizes, as does a malformed subject. A full reconnect buffer gives
 * %MESHSYNC_ERROR_CONNECTION and turns [property@MeshSync.Broker:writable] %FALSE; so does
 * publishing before connecting or after closing.
 *
 * Returns: %TRUE if the message was taken
 */
gboolean
meshsync_broker_publish(MeshSyncBroker *self, const gchar *subject, GBytes *payload, GError **error)
{
	gsize len = 0;
	gconstpointer data;
	gint64 max_payload;

	g_return_val_if_fail(MESHSYNC_IS_BROKER(self), FALSE);
	g_return_val_if_fail(payload != NULL, FALSE);

	data = g_bytes_get_data(payload, &len);
	if (!meshsync_broker_subject_is_valid(subject)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("cannot publish to the broker at %s: invalid subject '%s'"),
		            self->url->display, subject != NULL ? subject : "");
		return FALSE;
	}
	max_payload = meshsync_broker_get_max_payload(self);
	if (max_payload > 0 && (gint64)len > max_payload) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("message on %s is %zu bytes; the broker at %s takes at "
		              "most %" PRId64),
		            subject, len, self->url->display, max_payload);
		return FALSE;
	}
	return msd_nats_connection_publish_unchecked(self->conn, subject, data, len, error);
}

gboolean
meshsync_broker_publish_event(MeshSyncBroker *self,
                              const gchar *subject,
                              const MsdReplayPart *parts,
                              guint n_parts,
                              GError **error)
{
	if (!msd_nats_connection_is_attached(self->conn) ||
	    self->state == MESHSYNC_BROKER_STATE_CLOSED) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		            _("cannot publish on %s: the broker at %s is not connected"), subject,
		            self->url->display);
		return FALSE;
	}
	/* Sent now if the connection is up and has room, later otherwise; kept until confirmed. */
	msd_replay_publish(self->replay, subject, parts, n_parts);
	return TRUE;
}

gboolean
meshsync_broker_publish_event_jetstream(MeshSyncBroker *self,
                                        const gchar *subject,
                                        const MsdReplayPart *parts,
                                        guint n_parts,
                                        const gchar *msg_id,
                                        GError **error)
{
	gboolean state = g_str_has_prefix(subject, MSD_JETSTREAM_STATE_PREFIX);
	g_autoptr(GString) data = NULL;

	g_return_val_if_fail(msg_id != NULL, FALSE);

	if (state ? !msd_jetstream_is_state_active(self->jetstream)
	          : !msd_jetstream_is_active(self->jetstream)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_NOT_SUPPORTED,
		            "cannot publish on %s: the %s stream is not in use", subject,
		            state ? "last-state" : "event");
		return FALSE;
	}
	if (!msd_nats_connection_is_attached(self->conn) ||
	    self->state == MESHSYNC_BROKER_STATE_CLOSED) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		            _("cannot publish on %s: the broker at %s is not connected"), subject,
		            self->url->display);
		return FALSE;
	}
	/* JetStream keeps its own copy until the PubAck: the pieces are joined there */
	data = g_string_new(NULL);
	for (guint i = 0; i < n_parts; i++)
		g_string_append_len(data, parts[i].data, (gssize)parts[i].len);
	msd_jetstream_publish(self->jetstream, subject, data->str, data->len, msg_id);
	return TRUE;
}

/**
 * meshsync_broker_set_jetstream:
 * @self: a #MeshSyncBroker
 * @enabled: whether resource events go to JetStream
 *
 * Turns durable delivery on or off; takes effect at the next connect. When on, the connect
 * ensures the stream `MESHSYNC_EVENTS` on `meshery.meshsync.core` (limits retention, file
 * storage, 24 h, a 2 minute duplicate window; see
 * [method@MeshSync.Broker.set_jetstream_limits]) and fails with
 * %MESHSYNC_ERROR_INVALID_CONFIG, changing nothing, if a stream of that name has other
 * subjects, retention or storage. Resource events of a [class@MeshSync.BrokerWriter] then
 * carry a `Nats-Msg-Id` and are kept until the stream acknowledged them, and sent again after
 * a reconnection or when the acknowledgement is late; the stream stores a re-sent event once.
 * Core subscribers of the subject see the same messages as without JetStream. A server
 * without JetStream gets one warning and core publishing.
 */
void
meshsync_broker_set_jetstream(MeshSyncBroker *self, gboolean enabled)
{
	g_return_if_fail(MESHSYNC_IS_BROKER(self));
	self->jetstream_wanted = enabled;
}

/**
 * meshsync_broker_set_jetstream_state:
 * @self: a #MeshSyncBroker
 * @enabled: whether to keep the last state of every object in JetStream too
 *
 * With [method@MeshSync.Broker.set_jetstream] on, also ensures the stream `MESHSYNC_STATE` on
 * `meshery.meshsync.state.>` (one message per subject, no age or size limit) and publishes each
 * resource event of a [class@MeshSync.BrokerWriter] a second time on
 * `meshery.meshsync.state.<cluster>.<kind>.<namespace>.<name>` (each field encoded as session
 * subjects are, dots included; an empty namespace is `%`): the stream keeps each object's
 * newest state, and a `DELETED` event as its tombstone, so a new consumer reads the state of
 * the cluster without a resync. Takes effect at the next connect.
 */
void
meshsync_broker_set_jetstream_state(MeshSyncBroker *self, gboolean enabled)
{
	g_return_if_fail(MESHSYNC_IS_BROKER(self));
	msd_jetstream_set_state(self->jetstream, enabled);
}

/**
 * meshsync_broker_get_jetstream_state_active:
 * @self: a #MeshSyncBroker
 *
 * Gets whether the last-state stream of [method@MeshSync.Broker.set_jetstream_state] is in
 * use.
 *
 * Returns: %TRUE once connected with JetStream and the stream ensured
 */
gboolean
meshsync_broker_get_jetstream_state_active(MeshSyncBroker *self)
{
	g_return_val_if_fail(MESHSYNC_IS_BROKER(self), FALSE);
	return msd_jetstream_is_state_active(self->jetstream);
}

/**
 * meshsync_broker_set_jetstream_limits:
 * @self: a #MeshSyncBroker
 * @replicas: the stream's replicas (1 for a single server, 3 in a JetStream cluster)
 * @max_bytes: the most the stream keeps before dropping its oldest messages, or 0 for
 *   256 MiB
 *
 * Sets the limits of the stream [method@MeshSync.Broker.set_jetstream] creates; an existing
 * stream keeps its own.
 */
void
meshsync_broker_set_jetstream_limits(MeshSyncBroker *self, guint replicas, guint64 max_bytes)
{
	g_return_if_fail(MESHSYNC_IS_BROKER(self));
	msd_jetstream_set_stream_limits(self->jetstream, replicas, max_bytes);
}

/**
 * meshsync_broker_get_jetstream_active:
 * @self: a #MeshSyncBroker
 *
 * Gets whether resource events go to JetStream: it was asked for and the server has it.
 *
 * Returns: %TRUE once connected with JetStream
 */
gboolean
meshsync_broker_get_jetstream_active(MeshSyncBroker *self)
{
	g_return_val_if_fail(MESHSYNC_IS_BROKER(self), FALSE);
	return msd_jetstream_is_active(self->jetstream);
}

/**
 * meshsync_broker_set_jetstream_ack_timeout:
 * @self: a #MeshSyncBroker
 * @timeout_ms: milliseconds, at least 1
 *
 * Sets how long an event published on JetStream waits for its acknowledgement before the
 * unacknowledged events are sent again in order (5 seconds by default). A JetStream cluster
 * electing a new stream leader drops publishes without answering; a shorter wait resends
 * sooner, at the cost of more duplicates for the stream to discard.
 */
void
meshsync_broker_set_jetstream_ack_timeout(MeshSyncBroker *self, guint timeout_ms)
{
	g_return_if_fail(MESHSYNC_IS_BROKER(self));
	msd_jetstream_set_ack_timeout(self->jetstream, timeout_ms);
}

void
meshsync_broker_get_jetstream_stats(MeshSyncBroker *self, MeshSyncBrokerJetStreamStats *stats)
{
	g_return_if_fail(MESHSYNC_IS_BROKER(self));
	stats->pending = msd_jetstream_get_n_pending(self->jetstream);
	stats->acked = msd_jetstream_get_n_acked(self->jetstream);
	stats->duplicates = msd_jetstream_get_n_duplicates(self->jetstream);
	stats->resent = msd_jetstream_get_n_resent(self->jetstream);
	stats->rejected = msd_jetstream_get_n_rejected(self->jetstream);
}

/**
 * meshsync_broker_subscribe:
 * @self: a #MeshSyncBroker
 * @subject: the subject, wildcards allowed
 * @queue_group: (nullable): a queue group, so that one member of the group gets each
 *   message, or %NULL
 * @func: (scope notified) (closure user_data) (destroy destroy): called for each message
 * @user_data: data for @func
 * @destroy: (nullable): frees @user_data once the subscription is gone
 * @error: return location for a #GError
 *
 * Subscribes to @subject. Messages are handed to @func in the broker's main context, in
 * the order they arrived; the subscription survives reconnections.
 *
 * Returns: an id for [method@MeshSync.Broker.unsubscribe], or 0 on error
 */
guint
meshsync_broker_subscribe(MeshSyncBroker *self,
                          const gchar *subject,
                          const gchar *queue_group,
                          MeshSyncBrokerMessageFunc func,
                          gpointer user_data,
                          GDestroyNotify destroy,
                          GError **error)
{
	MsdBrokerSubscription *sub;

	g_return_val_if_fail(MESHSYNC_IS_BROKER(self), 0);
	g_return_val_if_fail(subject != NULL, 0);
	g_return_val_if_fail(func != NULL, 0);

	sub = g_new0(MsdBrokerSubscription, 1);
	sub->func = func;
	sub->user_data = user_data;
	sub->destroy = destroy;
	return msd_broker_subscribe(self, subject, queue_group, sub, error);
}

/**
 * meshsync_broker_unsubscribe:
 * @self: a #MeshSyncBroker
 * @subscription_id: an id from [method@MeshSync.Broker.subscribe]
 *
 * Ends a subscription; messages already received for it are not delivered.
 */
void
meshsync_broker_unsubscribe(MeshSyncBroker *self, guint subscription_id)
{
	g_return_if_fail(MESHSYNC_IS_BROKER(self));
	msd_nats_connection_unsubscribe(self->conn, subscription_id);
}

/* The broker as a MeshSyncBus. */
static gboolean
meshsync_broker_bus_publish(MeshSyncBus *bus, const gchar *subject, GBytes *payload, GError **error)
{
	return meshsync_broker_publish(MESHSYNC_BROKER(bus), subject, payload, error);
}

static guint
meshsync_broker_bus_subscribe(MeshSyncBus *bus,
                              const gchar *subject,
                              const gchar *queue_group,
                              MeshSyncBusMessageFunc func,
                              gpointer user_data,
                              GDestroyNotify destroy,
                              GError **error)
{
	MsdBrokerSubscription *sub = g_new0(MsdBrokerSubscription, 1);

	sub->bus_func = func;
	sub->user_data = user_data;
	sub->destroy = destroy;
	return msd_broker_subscribe(MESHSYNC_BROKER(bus), subject, queue_group, sub, error);
}

static void
meshsync_broker_bus_unsubscribe(MeshSyncBus *bus, guint subscription_id)
{
	meshsync_broker_unsubscribe(MESHSYNC_BROKER(bus), subscription_id);
}

static void
meshsync_broker_bus_iface_init(MeshSyncBusInterface *iface)
{
	iface->publish = meshsync_broker_bus_publish;
	iface->subscribe = meshsync_broker_bus_subscribe;
	iface->unsubscribe = meshsync_broker_bus_unsubscribe;
}

/* ------------------------------------------------------------------------------------------ */

static void
msd_flush_done(GObject *source, GAsyncResult *res, gpointer data)
{
	g_autoptr(GTask) task = data;
	GError *error = NULL;

	if (msd_nats_connection_flush_finish(MSD_NATS_CONNECTION(source), res, &error))
		g_task_return_boolean(task, TRUE);
	else
		g_task_return_error(task, error);
}

/**
 * meshsync_broker_flush_async:
 * @self: a #MeshSyncBroker
 * @timeout_ms: how long to wait for the broker's answer
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the broker confirmed or the time ran out
 * @user_data: data for @callback
 *
 * Waits until the broker has received everything published so far (a PING answered by a
 * PONG), in a worker thread; the callback runs in the broker's main context. Resource events
 * a [class@MeshSync.BrokerWriter] published count once the broker confirmed them, after a
 * reconnection if need be, within @timeout_ms.
 */
void
meshsync_broker_flush_async(MeshSyncBroker *self,
                            guint timeout_ms,
                            GCancellable *cancellable,
                            GAsyncReadyCallback callback,
                            gpointer user_data)
{
	g_autoptr(GTask) task = NULL;

	g_return_if_fail(MESHSYNC_IS_BROKER(self));
	task = g_task_new(self, cancellable, callback, user_data);
	g_task_set_source_tag(task, meshsync_broker_flush_async);
	if (!msd_nats_connection_is_attached(self->conn) ||
	    self->state == MESHSYNC_BROKER_STATE_CLOSED) {
		g_task_return_new_error(task, MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		                        _("cannot flush: the broker at %s is not connected"),
		                        self->url->display);
		return;
	}
	if (!msd_jetstream_is_empty(self->jetstream)) {
		/* Every event up to now has its PubAck: stored by the stream. */
		msd_jetstream_wait(self->jetstream, g_steal_pointer(&task), timeout_ms);
		return;
	}
	if (!msd_replay_is_empty(self->replay)) {
		/* Its confirmation is a PING after all of them, and after everything else
		 * published before. */
		msd_replay_wait(self->replay, g_steal_pointer(&task), timeout_ms);
		return;
	}
	msd_nats_connection_flush_async(self->conn, timeout_ms, msd_flush_done,
	                                g_steal_pointer(&task));
}

/**
 * meshsync_broker_flush_finish:
 * @self: a #MeshSyncBroker
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Finishes [method@MeshSync.Broker.flush_async].
 *
 * Returns: %TRUE if the broker confirmed in time
 */
gboolean
meshsync_broker_flush_finish(MeshSyncBroker *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
	return g_task_propagate_boolean(G_TASK(result), error);
}

/* The connection's write buffer into the socket from the loop thread (see
 * msd_nats_connection_drain_output()). */
gboolean
meshsync_broker_drain_output(MeshSyncBroker *self, guint timeout_ms, GError **error)
{
	g_return_val_if_fail(MESHSYNC_IS_BROKER(self), FALSE);
	return msd_nats_connection_drain_output(self->conn, timeout_ms, error);
}

/* Closes for good. @left says what was left unsent when the caller gave up on it; without
 * it the loop may block up to @drain_ms to push the write buffer out first. FALSE with @error
 * when something was left. Every close_async() still waiting completes here: cancelled, with
 * that error, or with TRUE. */
static gboolean
meshsync_broker_shut(MeshSyncBroker *self, guint drain_ms, GError *left, GError **error)
{
	g_autoptr(GError) local_error = left;
	g_autoptr(GPtrArray) closing = NULL;

	/* A connect in progress notices this when its attempt returns. */
	self->connect_task = NULL;
	if (local_error == NULL && drain_ms > 0 && self->state != MESHSYNC_BROKER_STATE_CLOSED)
		msd_nats_connection_drain_output(self->conn, drain_ms, &local_error);
	msd_nats_connection_close(self->conn);
	msd_replay_closed(self->replay);
	msd_jetstream_closed(self->jetstream);
	meshsync_broker_set_state(self, MESHSYNC_BROKER_STATE_CLOSED);
	meshsync_broker_set_writable(self, FALSE);

	if (self->close_idle != NULL) {
		g_source_destroy(self->close_idle);
		g_clear_pointer(&self->close_idle, g_source_unref);
	}
	/* The tasks hold the broker: it lives until the end of this function. */
	closing = g_steal_pointer(&self->closing);
	self->closing = g_ptr_array_new_with_free_func(g_object_unref);
	for (guint i = 0; i < closing->len; i++) {
		GTask *task = g_ptr_array_index(closing, i);

		/* its timeout and cancellation sources go now, not when the callback ran */
		g_task_set_task_data(task, NULL, NULL);
		if (g_task_return_error_if_cancelled(task))
			continue;
		if (local_error != NULL)
			g_task_return_error(task, g_error_copy(local_error));
		else
			g_task_return_boolean(task, TRUE);
	}
	if (local_error != NULL) {
		g_propagate_error(error, g_steal_pointer(&local_error));
		return FALSE;
	}
	return TRUE;
}

/**
 * meshsync_broker_close:
 * @self: a #MeshSyncBroker
 *
 * Sends what is still in the write buffer, then closes the connection for good. No message
 * is delivered after this returns; data still in the reconnect buffer is lost. Call it from
 * the broker's main context.
 *
 * While the socket does not take the buffer this blocks the calling thread, and so the main
 * loop, for up to 2 seconds; [method@MeshSync.Broker.close_async] waits without blocking.
 */
void
meshsync_broker_close(MeshSyncBroker *self)
{
	g_autoptr(GError) error = NULL;

	g_return_if_fail(MESHSYNC_IS_BROKER(self));
	if (!meshsync_broker_shut(self, MSD_BROKER_CLOSE_DRAIN_MS, NULL, &error))
		g_info("%s", error->message);
}

/* Whether the write buffer still holds something a socket could take. */
static gboolean
meshsync_broker_has_output(MeshSyncBroker *self)
{
	return msd_nats_connection_has_output(self->conn);
}

static gboolean
msd_close_idle_cb(gpointer data)
{
	MeshSyncBroker *self = data;

	g_clear_pointer(&self->close_idle, g_source_unref);
	/* published since it drained: wait for the socket to take that too */
	if (meshsync_broker_has_output(self))
		return G_SOURCE_REMOVE;
	meshsync_broker_shut(self, 0, NULL, NULL);
	return G_SOURCE_REMOVE;
}

/* A close_async() is waiting and nothing is left to push out (or no socket to push it
 * into): it ends in an idle, never inside nats.c's socket dispatch. */
static void
meshsync_broker_close_check(MeshSyncBroker *self)
{
	if (self->closing->len == 0 || self->close_idle != NULL || meshsync_broker_has_output(self))
		return;
	self->close_idle = g_idle_source_new();
	g_source_set_static_name(self->close_idle, "[meshsync] broker close");
	g_source_set_priority(self->close_idle, G_PRIORITY_DEFAULT);
	g_source_set_callback(self->close_idle, msd_close_idle_cb, self, NULL);
	g_source_attach(self->close_idle, self->context);
}

typedef struct {
	GSource *timeout; /* (owned) */
	GSource *cancel;  /* (owned) (nullable) */
} MsdCloseWait;

static void
msd_close_wait_free(gpointer data)
{
	MsdCloseWait *wait = data;

	g_source_destroy(wait->timeout);
	g_source_unref(wait->timeout);
	if (wait->cancel != NULL) {
		g_source_destroy(wait->cancel);
		g_source_unref(wait->cancel);
	}
	g_free(wait);
}

/* The time is up, or the caller gave up: close now, naming what could not be sent. */
static void
meshsync_broker_close_now(MeshSyncBroker *self)
{
	GError *left = NULL;

	if (meshsync_broker_has_output(self)) {
		left = g_error_new(MESHSYNC_ERROR, MESHSYNC_ERROR_CONNECTION,
		                   _("the broker at %s took no data for %u ms"), self->url->display,
		                   MSD_BROKER_CLOSE_DRAIN_MS);
		g_info("%s", left->message);
	}
	meshsync_broker_shut(self, 0, left, NULL);
}

static gboolean
msd_close_timeout_cb(gpointer data)
{
	meshsync_broker_close_now(g_task_get_source_object(data));
	return G_SOURCE_REMOVE;
}

static gboolean
msd_close_cancelled_cb(GCancellable *cancellable, gpointer data)
{
	meshsync_broker_close_now(g_task_get_source_object(data));
	return G_SOURCE_REMOVE;
}

/**
 * meshsync_broker_close_async:
 * @self: a #MeshSyncBroker
 * @cancellable: (nullable): closes at once, without waiting for the write buffer
 * @callback: (scope async): called once the connection is closed
 * @user_data: data for @callback
 *
 * Closes the connection for good, as [method@MeshSync.Broker.close] does, without blocking
 * the main loop: the write buffer is handed to the socket as the socket takes it, for up to
 * 2 seconds, while everything else on the loop keeps running. Messages published meanwhile
 * are sent too if there is time; none is delivered after the callback ran. Data still in the
 * reconnect buffer is lost.
 *
 * Call it from the broker's main context; the callback runs there. The connection is closed
 * when the callback runs, whatever the result. Closing a broker that is closed already
 * completes at once.
 */
void
meshsync_broker_close_async(MeshSyncBroker *self,
                            GCancellable *cancellable,
                            GAsyncReadyCallback callback,
                            gpointer user_data)
{
	g_autoptr(GTask) task = NULL;
	MsdCloseWait *wait;

	g_return_if_fail(MESHSYNC_IS_BROKER(self));
	g_return_if_fail(cancellable == NULL || G_IS_CANCELLABLE(cancellable));

	task = g_task_new(self, cancellable, callback, user_data);
	g_task_set_source_tag(task, meshsync_broker_close_async);
	g_task_set_name(task, "[meshsync] broker close");
	if (!msd_nats_connection_is_attached(self->conn) ||
	    self->state == MESHSYNC_BROKER_STATE_CLOSED ||
	    g_cancellable_is_cancelled(cancellable)) {
		meshsync_broker_shut(self, 0, NULL, NULL);
		if (!g_task_return_error_if_cancelled(task))
			g_task_return_boolean(task, TRUE);
		return;
	}
	/* A connect in progress notices this when its attempt returns. */
	self->connect_task = NULL;
	wait = g_new0(MsdCloseWait, 1);
	wait->timeout = g_timeout_source_new(MSD_BROKER_CLOSE_DRAIN_MS);
	g_source_set_static_name(wait->timeout, "[meshsync] broker close timeout");
	g_source_set_callback(wait->timeout, msd_close_timeout_cb, task, NULL);
	g_source_attach(wait->timeout, self->context);
	if (cancellable != NULL) {
		wait->cancel = g_cancellable_source_new(cancellable);
		g_source_set_static_name(wait->cancel, "[meshsync] broker close cancelled");
		g_source_set_callback(wait->cancel, G_SOURCE_FUNC(msd_close_cancelled_cb), task,
		                      NULL);
		g_source_attach(wait->cancel, self->context);
	}
	g_task_set_task_data(task, wait, msd_close_wait_free);
	g_ptr_array_add(self->closing, g_steal_pointer(&task));
	meshsync_broker_close_check(self);
}

/**
 * meshsync_broker_close_finish:
 * @self: a #MeshSyncBroker
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Finishes [method@MeshSync.Broker.close_async]. The connection is closed either way.
 *
 * Returns: %TRUE if everything in the write buffer was handed to the socket; %FALSE with
 *   %MESHSYNC_ERROR_CONNECTION when the socket did not take it in time, or
 *   %G_IO_ERROR_CANCELLED when the close was cancelled
 */
gboolean
meshsync_broker_close_finish(MeshSyncBroker *self, GAsyncResult *result, GError **error)
{
	g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
	g_return_val_if_fail(g_task_get_source_tag(G_TASK(result)) == meshsync_broker_close_async,
	                     FALSE);
	return g_task_propagate_boolean(G_TASK(result), error);
}

/**
 * meshsync_broker_get_state:
 * @self: a #MeshSyncBroker
 *
 * Gets the state of the connection.
 *
 * Returns: the state
 */
MeshSyncBrokerState
meshsync_broker_get_state(MeshSyncBroker *self)
{
	g_return_val_if_fail(MESHSYNC_IS_BROKER(self), MESHSYNC_BROKER_STATE_CLOSED);
	return self->state;
}

/**
 * meshsync_broker_get_writable:
 * @self: a #MeshSyncBroker
 *
 * Gets whether a publish is taken now; see [property@MeshSync.Broker:writable].
 *
 * Returns: %TRUE if connected, or away with room left in the reconnect buffer
 */
gboolean
meshsync_broker_get_writable(MeshSyncBroker *self)
{
	g_return_val_if_fail(MESHSYNC_IS_BROKER(self), FALSE);
	return self->writable;
}

/**
 * meshsync_broker_get_max_payload:
 * @self: a #MeshSyncBroker
 *
 * Gets the largest message the server takes, as it announced when connecting.
 *
 * Returns: the size in bytes, or 0 when not connected
 */
gint64
meshsync_broker_get_max_payload(MeshSyncBroker *self)
{
	g_return_val_if_fail(MESHSYNC_IS_BROKER(self), 0);
	return msd_nats_connection_get_max_payload(self->conn);
}

/**
 * meshsync_broker_get_buffered_bytes:
 * @self: a #MeshSyncBroker
 *
 * Gets how much published data has not reached the socket yet: the write buffer, plus an
 * estimate of the reconnect buffer while the broker is away, plus the resource events waiting
 * to be sent (again) after a reconnection.
 *
 * Returns: a byte count
 */
guint64
meshsync_broker_get_buffered_bytes(MeshSyncBroker *self)
{
	g_return_val_if_fail(MESHSYNC_IS_BROKER(self), 0);
	if (!msd_nats_connection_is_attached(self->conn))
		return 0;
	return msd_nats_connection_get_buffered(self->conn) +
	       msd_replay_get_unsent_bytes(self->replay);
}

/**
 * meshsync_broker_get_reconnects:
 * @self: a #MeshSyncBroker
 *
 * Counts the reconnections since the first connect.
 *
 * Returns: the count
 */
guint64
meshsync_broker_get_reconnects(MeshSyncBroker *self)
{
	g_return_val_if_fail(MESHSYNC_IS_BROKER(self), 0);
	return self->reconnects;
}

/**
 * meshsync_broker_get_url:
 * @self: a #MeshSyncBroker
 *
 * Gets the servers of the broker as `scheme://host:port`, comma-separated, without
 * credentials.
 *
 * Returns: the URL
 */
const gchar *
meshsync_broker_get_url(MeshSyncBroker *self)
{
	g_return_val_if_fail(MESHSYNC_IS_BROKER(self), NULL);
	return self->url->display;
}
