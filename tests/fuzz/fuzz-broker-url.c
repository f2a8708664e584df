/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * The broker URL parser (broker/msd-broker-url.c) on the text of BROKER_URL.
 *
 * Checked: a refused URL sets MESHSYNC_ERROR_INVALID_CONFIG; an accepted one names at least
 * one server, every server is nats://HOST:PORT or tls://HOST:PORT with the credentials taken
 * out, and the display text is the servers joined by commas.
 *
 * Input: the URL (cut at the first NUL byte, as an environment variable would be).
 */

#include "config.h"

#include <string.h>

#include "broker/msd-broker-url.h"
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
	g_autofree gchar *text = g_strndup((const gchar *)data, size);
	g_autoptr(MsdBrokerUrl) url = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *joined = NULL;

	url = msd_broker_url_parse(text, &error);
	if (url == NULL) {
		FUZZ_CHECK(g_error_matches(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG));
		return 0;
	}
	FUZZ_CHECK(error == NULL);
	FUZZ_CHECK(url->servers != NULL && url->servers[0] != NULL);
	for (guint i = 0; url->servers[i] != NULL; i++) {
		const gchar *s = url->servers[i];
		const gchar *colon;

		FUZZ_CHECK(g_str_has_prefix(s, "nats://") || g_str_has_prefix(s, "tls://"));
		FUZZ_CHECK(strchr(s, '@') == NULL);
		colon = strrchr(s, ':');
		FUZZ_CHECK(colon != NULL && g_ascii_isdigit(colon[1]));
	}
	joined = g_strjoinv(",", url->servers);
	FUZZ_CHECK(url->display != NULL && strcmp(url->display, joined) == 0);
	return 0;
}
