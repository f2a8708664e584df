/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/*
 * A gzip-decoding filter over a response body stream, pollable as its base is.
 *
 * A real API server (1.37, WatchListCompression) gzips a streaming list when asked, and every
 * flush of its watch stream closes one gzip member and the next write opens another: the body
 * is a series of gzip members, one per burst of events. libsoup's content decoder (GLib's
 * GZlibDecompressor in a GConverterInputStream) decodes the first member and then surfaces
 * nothing more, so a watch list stalled after its first burst with the rest read off the
 * socket. This stream decodes member after member, and drains what zlib holds before it
 * waits on the network again.
 *
 * A stream that ends inside a member fails with G_IO_ERROR_PARTIAL_INPUT, corrupt data with
 * G_IO_ERROR_INVALID_DATA.
 */
#define MSD_TYPE_INFLATE_INPUT_STREAM (msd_inflate_input_stream_get_type())
G_DECLARE_FINAL_TYPE(MsdInflateInputStream,
                     msd_inflate_input_stream,
                     MSD,
                     INFLATE_INPUT_STREAM,
                     GFilterInputStream)

GInputStream *msd_inflate_input_stream_new(GInputStream *base);

G_END_DECLS
