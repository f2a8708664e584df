/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * Random Kubernetes-like objects for the tests that compare two paths byte for byte: the
 * members the model reads, in every case variant, duplicated, escaped and with invalid UTF-8,
 * plus managedFields, odd numbers and random whitespace. Always valid JSON.
 */

/* The seed of a randomized test: MESHSYNC_TEST_SEED when set, else @fallback; printed. */
guint32 test_random_seed(guint32 fallback);

/* One object's JSON text. */
gchar *test_random_object(GRand *rand);

/* A kind or apiVersion a caller might pass as a default, or NULL. */
const gchar *test_random_default(GRand *rand);

/* @object's text with the members named @key (exact) of its top level cut out. */
gchar *test_cut_member(const gchar *object, const gchar *key);

/* @object's text with @members (JSON members, comma-separated) put into its metadata object,
 * first or @last, when it has one (else a copy). */
gchar *test_metadata_insert(const gchar *object, const gchar *members, gboolean last);

/* @object's text with `"managedFields":[...]` of @size bytes or so put first in its
 * metadata object, when it has one (else a copy). */
gchar *test_add_managed_fields(const gchar *object, gsize size);

G_END_DECLS
