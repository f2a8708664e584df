/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * The NATS request decoder: msd_request_parse() on a message body from
 * meshery.meshsync.request, then msd_request_dup_reply() on its payload, as the request
 * listener does for every message.
 *
 * Checked: a refused envelope sets MESHSYNC_ERROR_INVALID_DATA; an accepted one has an entity
 * (possibly empty); a reply subject, when there is one, is not empty.
 */

#include "config.h"

#include <string.h>

#include "broker/msd-request-listener.h"
#include "fuzz-common.h"
#include "meshsync-error.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_logs();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(MsdRequest) request = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *reply = NULL;

	request = msd_request_parse((const gchar *)data, size, &error);
	if (request == NULL) {
		FUZZ_CHECK(g_error_matches(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA));
		return 0;
	}
	FUZZ_CHECK(error == NULL);
	FUZZ_CHECK(request->entity != NULL);
	reply = msd_request_dup_reply(request->payload);
	FUZZ_CHECK(reply == NULL || *reply != '\0');
	return 0;
}
