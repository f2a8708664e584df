/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define MSD_TYPE_READ_AHEAD_INPUT_STREAM (msd_read_ahead_input_stream_get_type())
G_DECLARE_FINAL_TYPE(MsdReadAheadInputStream,
                     msd_read_ahead_input_stream,
                     MSD,
                     READ_AHEAD_INPUT_STREAM,
                     GFilterInputStream)

#define MSD_TYPE_READ_AHEAD_CONNECTION (msd_read_ahead_connection_get_type())
G_DECLARE_FINAL_TYPE(
        MsdReadAheadConnection, msd_read_ahead_connection, MSD, READ_AHEAD_CONNECTION, GIOStream)

GInputStream *msd_read_ahead_input_stream_new(GInputStream *base);
/* reads of the base stream that returned bytes, for tests */
guint64 msd_read_ahead_input_stream_get_n_base_reads(MsdReadAheadInputStream *self);
guint64 msd_read_ahead_input_stream_get_n_reads(MsdReadAheadInputStream *self);

GIOStream *msd_read_ahead_connection_new(GIOStream *base);
/* (transfer none) */
GIOStream *msd_read_ahead_connection_get_base(MsdReadAheadConnection *self);

G_END_DECLS
