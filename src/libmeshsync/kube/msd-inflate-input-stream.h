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
 * GConverterInputStream with a GZlibDecompressor (what libsoup's content decoder uses) reads
 * its base stream before it asks the decompressor for output it already holds: when one read
 * fills the caller's buffer and zlib keeps the rest of a long match, the next non-blocking read
 * reports G_IO_ERROR_WOULD_BLOCK and its source waits on the socket. A watch stream, which the
 * real API server gzips when asked and then leaves quiet, stalls there for good. This stream
 * drains zlib first and reads the network only when zlib has nothing more to give.
 *
 * Concatenated gzip members are read one after the other; a stream that ends inside a member
 * fails with G_IO_ERROR_PARTIAL_INPUT, corrupt data with G_IO_ERROR_INVALID_DATA.
 */
#define MSD_TYPE_INFLATE_INPUT_STREAM (msd_inflate_input_stream_get_type())
G_DECLARE_FINAL_TYPE(MsdInflateInputStream,
                     msd_inflate_input_stream,
                     MSD,
                     INFLATE_INPUT_STREAM,
                     GFilterInputStream)

GInputStream *msd_inflate_input_stream_new(GInputStream *base);

G_END_DECLS
