/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What every fuzz target (tests/fuzz/fuzz-*.c) defines: the libFuzzer entry points. A target
 * checks the properties its surface promises with FUZZ_CHECK(), which aborts (a crash for
 * libFuzzer, a failure for the corpus replay) with the condition and the location.
 */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                              \
	do {                                                          \
		if (G_UNLIKELY(!(cond)))                              \
			fuzz_check_failed(__FILE__, __LINE__, #cond); \
	} while (0)

G_NORETURN void fuzz_check_failed(const gchar *file, gint line, const gchar *what);

/* The log handler every target installs: warnings are expected (malformed input), criticals
 * and errors are bugs and abort. */
void fuzz_quiet_logs(void);

/* A known critical (a finding in code another branch is fixing, listed in doc/reliability.md)
 * that must not stop the fuzzing of everything else: a critical whose message contains
 * @substring is not a crash. Remove the call when the fix is merged. */
void fuzz_allow_critical(const gchar *substring);
