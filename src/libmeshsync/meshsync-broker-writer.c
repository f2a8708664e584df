/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncBroker"

#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "meshsync-broker-writer.h"
#include "meshsync-error.h"
#include "meshsync-broker-private.h"
#include "util/msd-i18n.h"
#include "broker/msd-envelope.h"
#include "broker/msd-jetstream.h"

/**
 * MeshSyncBrokerWriter:
 *
 * Publishes every resource event to a [class@MeshSync.Broker], one message per event, in
 * upstream MeshSync's envelope:
 * `{"ObjectType":"meshsync-data","EventType":"ADDED","Request":null,"Object":{...}}`.
 *
 * With content deduplication on (upstream's `MESHSYNC_BROKER_CONTENT_DEDUP`), an `ADDED` or
 * `MODIFIED` event whose object is byte-for-byte what was last published for the same uid
 * is skipped; `DELETED` is always published and forgets the uid; objects without a uid are
 * always published; a failed publish remembers nothing.
 *
 * An object too large for the broker is reported as %MESHSYNC_ERROR_INVALID_DATA naming it,
 * counted, and does not stop the writer.
 *
 * Every event is kept by the broker until the server confirmed it, and sent again in order
 * after a reconnection (see [class@MeshSync.Broker]); while the broker is away events are
 * taken and wait for it. The writer is writable while the broker is: when the events not
 * confirmed yet fill the broker's window, or the socket does not keep up, it emits
 * [signal@MeshSync.Writer::writable-changed] so the engine holds its events.
 */

struct _MeshSyncBrokerWriter {
	GObject parent_instance;

	MeshSyncBroker *broker; /* (owned) */
	gchar *subject;
	gboolean subject_valid; /* checked once: the subject never changes */
	gboolean content_dedup;
	GHashTable *published; /* (owned): uid -> SHA-256 of the last published object */
	gulong writable_handler;
	gboolean closed;
	guint64 n_published;
	guint64 n_oversize;
	guint64 n_errors;
};

static void meshsync_broker_writer_iface_init(MeshSyncWriterInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(MeshSyncBrokerWriter,
                              meshsync_broker_writer,
                              G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(MESHSYNC_TYPE_WRITER,
                                                    meshsync_broker_writer_iface_init))

static GBytes *
msd_broker_writer_digest(const gchar *json, gsize len)
{
	g_autoptr(GChecksum) checksum = g_checksum_new(G_CHECKSUM_SHA256);
	guint8 digest[32];
	gsize digest_len = sizeof(digest);

	g_checksum_update(checksum, (const guchar *)json, (gssize)len);
	g_checksum_get_digest(checksum, digest, &digest_len);
	return g_bytes_new(digest, digest_len);
}

static gboolean
meshsync_broker_writer_write(MeshSyncWriter *writer,
                             MeshSyncResource *resource,
                             MeshSyncEventType event_type,
                             GError **error)
{
	MeshSyncBrokerWriter *self = MESHSYNC_BROKER_WRITER(writer);
	g_autoptr(GBytes) digest = NULL;
	g_autoptr(GError) local_error = NULL;
	const gchar *uid = meshsync_resource_get_uid(resource);
	GBytes *wire;
	const gchar *json;
	gsize json_len = 0;
	gboolean tracked;
	gint64 max_payload;
	MsdReplayPart parts[MSD_ENVELOPE_N_PARTS];
	gsize envelope_len;
	g_autofree gchar *msg_id = NULL;
	gboolean published;

	if (self->closed) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE,
		            _("the broker writer for %s is closed"), self->subject);
		return FALSE;
	}
	if (!self->subject_valid) {
		self->n_errors++;
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("cannot publish to the broker at %s: invalid subject '%s'"),
		            meshsync_broker_get_url(self->broker), self->subject);
		return FALSE;
	}

	/* the resource's own bytes: made once, shared with every other writer of the event */
	wire = meshsync_resource_get_wire_bytes(resource);
	json = g_bytes_get_data(wire, &json_len);
	tracked = self->content_dedup && uid != NULL && *uid != '\0';
	if (tracked && event_type != MESHSYNC_EVENT_TYPE_DELETED) {
		GBytes *last = g_hash_table_lookup(self->published, uid);

		digest = msd_broker_writer_digest(json, json_len);
		if (last != NULL && g_bytes_equal(last, digest))
			return TRUE;
	}

	/* The envelope is put together where the broker keeps it until confirmed: the object
	 * is copied once on its way to nats.c's buffer. */
	envelope_len = msd_envelope_event_parts(parts, event_type, json, json_len);

	if (tracked && event_type == MESHSYNC_EVENT_TYPE_DELETED)
		g_hash_table_remove(self->published, uid);
	max_payload = meshsync_broker_get_max_payload(self->broker);
	if (max_payload > 0 && (gint64)envelope_len > max_payload) {
		self->n_oversize++;
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		            _("%s %s/%s is %zu bytes as a message on %s; the broker at "
		              "%s takes at most %" PRId64),
		            meshsync_resource_get_kind(resource),
		            meshsync_resource_get_namespace(resource) != NULL
		                    ? meshsync_resource_get_namespace(resource)
		                    : "",
		            meshsync_resource_get_name(resource), envelope_len, self->subject,
		            meshsync_broker_get_url(self->broker), max_payload);
		return FALSE;
	}
	/* The durable path is picked here: JetStream for the core subject when the server has it
	 * (kept until its PubAck, the id lets the stream drop a re-sent copy), the replay window
	 * (kept until a PONG confirmed it) for everything else. */
	if (meshsync_broker_get_jetstream_active(self->broker))
		msg_id = msd_jetstream_msg_id(resource, event_type);
	if (msg_id != NULL && g_strcmp0(self->subject, MESHSYNC_SUBJECT_CORE) == 0)
		published = meshsync_broker_publish_event_jetstream(self->broker, self->subject,
		                                                    parts, G_N_ELEMENTS(parts),
		                                                    msg_id, &local_error);
	else
		published = meshsync_broker_publish_event(self->broker, self->subject, parts,
		                                          G_N_ELEMENTS(parts), &local_error);
	if (!published) {
		self->n_errors++;
		g_propagate_error(error, g_steal_pointer(&local_error));
		return FALSE;
	}
	if (msg_id != NULL && meshsync_broker_get_jetstream_state_active(self->broker)) {
		g_autofree gchar *state = msd_jetstream_state_subject(resource);

		/* Its own stream keeps the newest per object; a DELETED is the tombstone. */
		if (!meshsync_broker_publish_event_jetstream(self->broker, state, parts,
		                                             G_N_ELEMENTS(parts), msg_id,
		                                             &local_error)) {
			self->n_errors++;
			g_propagate_error(error, g_steal_pointer(&local_error));
			return FALSE;
		}
	}
	self->n_published++;
	if (digest != NULL)
		g_hash_table_insert(self->published, g_strdup(uid), g_steal_pointer(&digest));
	return TRUE;
}

/* Nothing to wait for: the broker's event-loop source writes the buffer whenever the socket
 * takes data, and during an outage the broker's window holds the events. Waiting here for the
 * socket would freeze the whole loop (watches, health probes) when the broker stops reading; the
 * bounded, blocking drain is for close() at shutdown only. */
static gboolean
meshsync_broker_writer_flush(MeshSyncWriter *writer, GError **error)
{
	return TRUE;
}

/* The broker may carry other traffic (requests), so it stays open. */
static gboolean
meshsync_broker_writer_close(MeshSyncWriter *writer, GError **error)
{
	MeshSyncBrokerWriter *self = MESHSYNC_BROKER_WRITER(writer);
	gboolean ok;

	if (self->closed)
		return TRUE;
	ok = meshsync_broker_writer_flush(writer, error);
	self->closed = TRUE;
	g_clear_signal_handler(&self->writable_handler, self->broker);
	return ok;
}

static gboolean
meshsync_broker_writer_is_writable(MeshSyncWriter *writer)
{
	MeshSyncBrokerWriter *self = MESHSYNC_BROKER_WRITER(writer);

	return !self->closed && meshsync_broker_get_writable(self->broker);
}

static void
meshsync_broker_writer_iface_init(MeshSyncWriterInterface *iface)
{
	iface->write = meshsync_broker_writer_write;
	iface->flush = meshsync_broker_writer_flush;
	iface->close = meshsync_broker_writer_close;
	iface->is_writable = meshsync_broker_writer_is_writable;
}

static void
meshsync_broker_writer_writable_cb(GObject *broker, GParamSpec *pspec, gpointer user_data)
{
	meshsync_writer_writable_changed(MESHSYNC_WRITER(user_data));
}

static void
meshsync_broker_writer_finalize(GObject *object)
{
	MeshSyncBrokerWriter *self = MESHSYNC_BROKER_WRITER(object);

	g_clear_signal_handler(&self->writable_handler, self->broker);
	g_clear_object(&self->broker);
	g_free(self->subject);
	g_hash_table_unref(self->published);
	G_OBJECT_CLASS(meshsync_broker_writer_parent_class)->finalize(object);
}

static void
meshsync_broker_writer_class_init(MeshSyncBrokerWriterClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = meshsync_broker_writer_finalize;
}

static void
meshsync_broker_writer_init(MeshSyncBrokerWriter *self)
{
	self->published = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
	                                        (GDestroyNotify)g_bytes_unref);
}

/**
 * meshsync_broker_writer_new:
 * @broker: the broker to publish to
 * @subject: (nullable): the subject, or %NULL for %MESHSYNC_SUBJECT_CORE
 *
 * Creates a writer that publishes each event as one message on @subject.
 *
 * Returns: (transfer full): a new writer
 */
MeshSyncBrokerWriter *
meshsync_broker_writer_new(MeshSyncBroker *broker, const gchar *subject)
{
	MeshSyncBrokerWriter *self;

	g_return_val_if_fail(MESHSYNC_IS_BROKER(broker), NULL);
	self = g_object_new(MESHSYNC_TYPE_BROKER_WRITER, NULL);
	self->broker = g_object_ref(broker);
	self->subject =
	        g_strdup(subject != NULL && *subject != '\0' ? subject : MESHSYNC_SUBJECT_CORE);
	self->subject_valid = meshsync_broker_subject_is_valid(self->subject);
	self->writable_handler = g_signal_connect(
	        broker, "notify::writable", G_CALLBACK(meshsync_broker_writer_writable_cb), self);
	return self;
}

/**
 * meshsync_broker_writer_set_content_dedup:
 * @self: a #MeshSyncBrokerWriter
 * @enabled: whether to skip objects published before with the same content
 *
 * Turns content deduplication on or off (upstream's `MESHSYNC_BROKER_CONTENT_DEDUP`; off
 * by default). Turning it off forgets what was published.
 */
void
meshsync_broker_writer_set_content_dedup(MeshSyncBrokerWriter *self, gboolean enabled)
{
	g_return_if_fail(MESHSYNC_IS_BROKER_WRITER(self));
	self->content_dedup = enabled;
	if (!enabled)
		g_hash_table_remove_all(self->published);
}

/**
 * meshsync_broker_writer_get_n_published:
 * @self: a #MeshSyncBrokerWriter
 *
 * Counts the events handed to the broker.
 *
 * Returns: the count
 */
guint64
meshsync_broker_writer_get_n_published(MeshSyncBrokerWriter *self)
{
	g_return_val_if_fail(MESHSYNC_IS_BROKER_WRITER(self), 0);
	return self->n_published;
}

/**
 * meshsync_broker_writer_get_n_oversize:
 * @self: a #MeshSyncBrokerWriter
 *
 * Counts the events not published because the message would exceed the broker's maximum
 * payload.
 *
 * Returns: the count
 */
guint64
meshsync_broker_writer_get_n_oversize(MeshSyncBrokerWriter *self)
{
	g_return_val_if_fail(MESHSYNC_IS_BROKER_WRITER(self), 0);
	return self->n_oversize;
}

/**
 * meshsync_broker_writer_get_n_errors:
 * @self: a #MeshSyncBrokerWriter
 *
 * Counts the events the broker refused (before it first connected, after it closed).
 *
 * Returns: the count
 */
guint64
meshsync_broker_writer_get_n_errors(MeshSyncBrokerWriter *self)
{
	g_return_val_if_fail(MESHSYNC_IS_BROKER_WRITER(self), 0);
	return self->n_errors;
}
