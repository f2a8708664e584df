/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include "meshsync-error.h"
#include "meshsyncd-one-shot.h"

/* A server being restarted comes back within this; a wrong address never does. */
#define MESHSYNCD_ONE_SHOT_UNREACHABLE_US (10 * G_USEC_PER_SEC)

gboolean
meshsyncd_one_shot_error_is_lasting(const GError *error, gint64 *unreachable_since_us)
{
	gint64 now;

	if (error->domain != MESHSYNC_ERROR)
		return FALSE;
	switch (error->code) {
	case MESHSYNC_ERROR_UNAUTHORIZED:
	case MESHSYNC_ERROR_FORBIDDEN:
	case MESHSYNC_ERROR_TLS:
	case MESHSYNC_ERROR_INVALID_CONFIG:
		return TRUE;
	case MESHSYNC_ERROR_CONNECTION:
		now = g_get_monotonic_time();
		if (*unreachable_since_us == 0)
			*unreachable_since_us = now;
		return now - *unreachable_since_us >= MESHSYNCD_ONE_SHOT_UNREACHABLE_US;
	default:
		return FALSE;
	}
}
