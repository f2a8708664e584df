/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* What the command line asked for; strings are borrowed from the caller. */
typedef struct {
	const gchar *kubeconfig;
	const gchar *context;
	gboolean kube_http2;    /* offer HTTP/2 to the API server (or MESHSYNC_KUBE_HTTP2=true) */
	gboolean file_output;   /* -output file (meshsyncd_daemon_parse_output()) */
	gboolean broker_output; /* -output broker, the default */
	const gchar *output_file;
	const gchar *output_namespaces;
	const gchar *output_resources;
	const gchar *namespaces;     /* comma-separated watch scope; NULL: the whole cluster */
	guint reconcile_interval_ms; /* 0: no periodic reconciliation */
	gboolean store_compressed;   /* --store-compression=zstd, the default */
	guint delivery_queue_size;   /* 0: the library's default */
	guint shard;                 /* this replica's shard, below total_shards */
	guint total_shards;          /* 0 or 1: not sharded */
	const gchar *watch_config;
	gboolean output_extended;
	gboolean stop_after_sync; /* stop once the initial sync is complete */
	gint64 stop_after_ns;     /* negative: run until a signal */
	/* broker mode; NULL: the matching NATS_* environment variable, if any */
	const gchar *broker_token;
	const gchar *broker_creds;
	const gchar *broker_tls_ca;
	const gchar *broker_tls_cert;
	const gchar *broker_tls_key;
	guint broker_connect_timeout_s;
	gboolean jetstream;       /* or MESHSYNC_JETSTREAM=true */
	gboolean jetstream_state; /* or MESHSYNC_JETSTREAM_STATE=true */
	guint jetstream_replicas;
	guint64 jetstream_max_bytes;    /* 0: the library's 256 MiB */
	guint jetstream_ack_timeout_ms; /* 0: the library's; a test knob */
	const gchar *health_address;    /* NULL: every address */
	guint health_port;              /* 0: any free port (logged) */
	gboolean strict_readiness;      /* /readyz follows the broker and the sync, no latch */
	GBusType dbus_bus;              /* G_BUS_TYPE_NONE: no D-Bus interface */
	/* log and exec sessions (broker mode) */
	guint max_sessions;
	gboolean disable_exec;
	const gchar *exec_namespaces; /* comma-separated; NULL: every namespace */
	guint exec_idle_timeout_s;    /* 0: never */
} MeshsyncdDaemonOptions;

/* Go's strconv.ParseBool true values, which upstream takes for
 * MESHSYNC_BROKER_CONTENT_DEDUP; anything else is false. */
gboolean meshsyncd_daemon_parse_go_bool(const gchar *value);

/* Upstream takes "broker" or "file"; "broker,file" asks for both. */
gboolean meshsyncd_daemon_parse_output(const gchar *output,
                                       gboolean *file,
                                       gboolean *broker,
                                       GError **error);

/*
 * Runs the sync until SIGINT, SIGTERM or the stop-after time, on the default main context.
 * Returns the process exit status: 0 after a normal stop, 1 when the configuration is
 * unusable, the run watches nothing, the output cannot be written, the D-Bus name is lost, or
 * a one-shot run meets a lasting error (the message is on stderr).
 */
gint meshsyncd_daemon_run(const MeshsyncdDaemonOptions *options);

G_END_DECLS
