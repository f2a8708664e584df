/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * Objects at rest, compressed: what lets kubesim hold a million pods and their workload in a
 * few GB. Each resource gets a dictionary, the first object of its kind stored (zstd takes it
 * as raw content): objects of one kind share most of their bytes (the keys, the managedFields,
 * a template's spec), so a 10 kB pod packs to about 600 bytes. A packed object keeps a
 * reference to the dictionary it was packed with, so a resource's dictionary may be replaced
 * without harm to objects already packed.
 */

typedef struct _KubesimPackDict KubesimPackDict;

/* Whether objects are packed at all (default TRUE); only objects stored afterwards follow. */
void kubesim_pack_set_enabled(gboolean enabled);
gboolean kubesim_pack_get_enabled(void);

/* A dictionary made from @json, a typical object of its resource. */
KubesimPackDict *kubesim_pack_dict_new(GBytes *json);
KubesimPackDict *kubesim_pack_dict_ref(KubesimPackDict *dict);
void kubesim_pack_dict_unref(KubesimPackDict *dict);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(KubesimPackDict, kubesim_pack_dict_unref)

/* @json packed with @dict, or NULL when packing would not make it smaller. */
GBytes *kubesim_pack(KubesimPackDict *dict, GBytes *json);
/* The JSON of @packed, which is @json_len bytes long; a NUL follows it, as after the JSON the
 * store keeps plain. */
GBytes *kubesim_unpack(KubesimPackDict *dict, GBytes *packed, gsize json_len);
/* The same, written at the end of @out: what a watch event needs, without a copy between. */
void kubesim_unpack_append(KubesimPackDict *dict, GBytes *packed, gsize json_len, GString *out);

G_END_DECLS
