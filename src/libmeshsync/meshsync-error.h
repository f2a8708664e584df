/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#if !defined(__MESHSYNC_H_INSIDE__) && !defined(MESHSYNC_COMPILATION)
#error "Only <libmeshsync/meshsync.h> can be included directly."
#endif

#include <gio/gio.h>

#include "meshsync-version.h"

G_BEGIN_DECLS

/**
 * MESHSYNC_ERROR:
 *
 * The error domain of libmeshsync; see [error@MeshSync.Error].
 */
#define MESHSYNC_ERROR (meshsync_error_quark())

/**
 * MeshSyncError:
 * @MESHSYNC_ERROR_FAILED: an unexpected failure
 * @MESHSYNC_ERROR_INVALID_CONFIG: a configuration file or value is missing, broken or
 *   inconsistent (the message names the file and field)
 * @MESHSYNC_ERROR_NOT_FOUND: the server answered 404, or a named item does not exist
 * @MESHSYNC_ERROR_CONNECTION: the server could not be reached or dropped the connection
 * @MESHSYNC_ERROR_TLS: the TLS handshake failed (untrusted or mismatched certificate)
 * @MESHSYNC_ERROR_UNAUTHORIZED: the server answered 401
 * @MESHSYNC_ERROR_FORBIDDEN: the server answered 403
 * @MESHSYNC_ERROR_GONE: the server answered 410: the requested resourceVersion has expired
 * @MESHSYNC_ERROR_HTTP: the server answered another non-success HTTP status
 * @MESHSYNC_ERROR_INVALID_DATA: the server sent data that could not be parsed
 * @MESHSYNC_ERROR_NOT_SUPPORTED: the operation is not supported here
 * @MESHSYNC_ERROR_WRITE: output could not be written (disk full, permission denied)
 * @MESHSYNC_ERROR_TOO_LARGE: input exceeds one of the engine's limits (a response body, an
 *   object, a line, the nesting depth, the number of labels); the message names the limit
 * @MESHSYNC_ERROR_TIMED_OUT: something took or waited longer than allowed (an idle session)
 * @MESHSYNC_ERROR_REFUSED: a request was refused by configuration (a session limit, exec
 *   disabled, a namespace not allowed)
 *
 * Error codes of the %MESHSYNC_ERROR domain. Over D-Bus they travel as
 * `io.meshery.MeshSync1.Error.<Name>`.
 */
typedef enum /*< underscore_name=meshsync_error >*/ {
	MESHSYNC_ERROR_FAILED,
	MESHSYNC_ERROR_INVALID_CONFIG,
	MESHSYNC_ERROR_NOT_FOUND,
	MESHSYNC_ERROR_CONNECTION,
	MESHSYNC_ERROR_TLS,
	MESHSYNC_ERROR_UNAUTHORIZED,
	MESHSYNC_ERROR_FORBIDDEN,
	MESHSYNC_ERROR_GONE,
	MESHSYNC_ERROR_HTTP,
	MESHSYNC_ERROR_INVALID_DATA,
	MESHSYNC_ERROR_NOT_SUPPORTED,
	MESHSYNC_ERROR_WRITE,
	MESHSYNC_ERROR_TOO_LARGE,
	MESHSYNC_ERROR_TIMED_OUT,
	MESHSYNC_ERROR_REFUSED,
} MeshSyncError;

MESHSYNC_AVAILABLE_IN_ALL
GQuark meshsync_error_quark(void);

G_END_DECLS
