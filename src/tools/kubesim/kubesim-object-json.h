/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

#include "util/msd-json-tokens.h"

G_BEGIN_DECLS

/*
 * The store's one rewrite of an object's JSON on a write: the metadata members the server
 * sets, in the member order the server writes, with the place of the resourceVersion noted so
 * that later versions splice it without reading the object again.
 */

/* ObjectMeta's member names in the order of its Go fields (how the server writes them);
 * NULL-terminated. */
extern const gchar *const kubesim_object_meta_order[];

/* A metadata member to set (value is raw JSON) or, with a NULL value, to remove. */
typedef struct {
	const gchar *key;
	gchar *value;
	gboolean done;
} KubesimMetaEdit;

/*
 * Copies the compact object tokenized in @doc with @edits applied to its metadata. @canonical
 * (built-in types): kind, apiVersion and metadata go first, in the order of the Go types the
 * server serializes, and metadata's members in ObjectMeta's field order; the other members
 * follow in their order. Otherwise metadata stays where it is (last when the object had none),
 * its members keep their order and new ones go last. *@rv_off and *@rv_len say where the
 * resourceVersion written is in the copy (0 when not exactly one was written). NULL when the
 * document is not an object.
 */
GBytes *kubesim_object_json_rewrite_doc(const MsdJsonTokens *doc,
                                        gboolean canonical,
                                        KubesimMetaEdit *edits,
                                        guint n_edits,
                                        gsize *rv_off,
                                        gsize *rv_len);
/* The same for a text not tokenized yet. */
GBytes *kubesim_object_json_rewrite(GBytes *json,
                                    gboolean canonical,
                                    KubesimMetaEdit *edits,
                                    guint n_edits,
                                    gsize *rv_off,
                                    gsize *rv_len);

/* Where the item of a typed list starts in @js (after its "{"): past kind and apiVersion when
 * the object begins with them, as canonical objects do; 0 when it does not. */
gsize kubesim_object_json_item_offset(const gchar *js, gsize len);

G_END_DECLS
