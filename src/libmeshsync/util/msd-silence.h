/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * How long a connection has been silent, for the bounds on silent watches and stalled answers.
 * Only time the process could have listened counts: a periodic check that runs late was held
 * up by the main loop itself (a burst of TLS handshakes, valgrind), and bytes that arrived
 * meanwhile could not be read yet, so the lateness moves the start of the silence forward.
 * A black-holed connection in an idle process is noticed as before.
 *
 * @heard_at: monotonic µs of the last bytes, moved forward here
 * @checked_at: monotonic µs of the previous check, 0 before the first; updated here
 * @interval: the check's period in µs
 *
 * Returns: the silence in µs as of @now.
 */
static inline gint64
msd_silence_check(gint64 *heard_at, gint64 *checked_at, gint64 now, gint64 interval)
{
	if (*checked_at != 0) {
		gint64 late = now - *checked_at - interval;

		/* a seconds timeout may fire up to a second late by design */
		if (late > G_USEC_PER_SEC)
			*heard_at = MIN(*heard_at + late, now);
	}
	*checked_at = now;
	return now - *heard_at;
}

G_END_DECLS
