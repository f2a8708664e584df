/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>
#include <nats/nats.h>

G_BEGIN_DECLS

/*
 * What the replay window and JetStream use of the NATS connection below them, and how they
 * tell it that their "full" changed. The connection's owner fills it in; neither of them
 * knows that owner's type, so the durable paths sit on the connection instead of calling
 * back into the broker. Loop thread only, like its users.
 */

typedef void (*MsdNatsPortMessageFunc)(const gchar *subject, GBytes *payload, gpointer user_data);

typedef struct {
	/* the URL without its credentials, for messages */
	const gchar *(*get_url)(gpointer owner);
	/* the write buffer is above its high mark: send nothing more now */
	gboolean (*get_congested)(gpointer owner);
	/* the caller's "full" changed: the owner recomputes what it reports as writable */
	void (*full_changed)(gpointer owner);
	/* one PUB; subject and size were checked by the caller */
	gboolean (*publish_unchecked)(gpointer owner,
	                              const gchar *subject,
	                              gconstpointer data,
	                              gsize length,
	                              GError **error);
	/* one HPUB with a reply subject and a Nats-Msg-Id header, checked like the above */
	gboolean (*publish_with_id)(gpointer owner,
	                            const gchar *subject,
	                            const gchar *reply,
	                            const gchar *msg_id,
	                            gconstpointer data,
	                            gsize length,
	                            GError **error);
	/* a subscription delivered on the loop; 0 and @error when it failed */
	guint (*subscribe)(gpointer owner,
	                   const gchar *subject,
	                   MsdNatsPortMessageFunc func,
	                   gpointer user_data,
	                   GError **error);
	/* a worker thread's hold on the connection (NULL: none), and its release */
	natsConnection *(*hold_connection)(gpointer owner);
	void (*release_connection)(gpointer owner);
} MsdNatsPortFuncs;

typedef struct {
	const MsdNatsPortFuncs *funcs;
	/* A GTask a user starts on a worker thread takes it as its source object, so the owner
	 * (which owns the user) outlives the task. */
	GObject *owner; /* (unowned) */
} MsdNatsPort;

static inline const gchar *
msd_nats_port_get_url(const MsdNatsPort *port)
{
	return port->funcs->get_url(port->owner);
}

static inline gboolean
msd_nats_port_get_congested(const MsdNatsPort *port)
{
	return port->funcs->get_congested(port->owner);
}

static inline void
msd_nats_port_full_changed(const MsdNatsPort *port)
{
	port->funcs->full_changed(port->owner);
}

static inline gboolean
msd_nats_port_publish_unchecked(const MsdNatsPort *port,
                                const gchar *subject,
                                gconstpointer data,
                                gsize length,
                                GError **error)
{
	return port->funcs->publish_unchecked(port->owner, subject, data, length, error);
}

static inline gboolean
msd_nats_port_publish_with_id(const MsdNatsPort *port,
                              const gchar *subject,
                              const gchar *reply,
                              const gchar *msg_id,
                              gconstpointer data,
                              gsize length,
                              GError **error)
{
	return port->funcs->publish_with_id(port->owner, subject, reply, msg_id, data, length,
	                                    error);
}

static inline guint
msd_nats_port_subscribe(const MsdNatsPort *port,
                        const gchar *subject,
                        MsdNatsPortMessageFunc func,
                        gpointer user_data,
                        GError **error)
{
	return port->funcs->subscribe(port->owner, subject, func, user_data, error);
}

static inline natsConnection *
msd_nats_port_hold_connection(const MsdNatsPort *port)
{
	return port->funcs->hold_connection(port->owner);
}

static inline void
msd_nats_port_release_connection(const MsdNatsPort *port)
{
	port->funcs->release_connection(port->owner);
}

G_END_DECLS
