/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * The store's compression of objects at rest: zstd with a dictionary trained per resource type
 * from the first objects the type's store receives. Objects of one type share most of their
 * text (keys, labels, images, the same status conditions), and each is small, so without a
 * dictionary zstd finds little to take out of one object alone.
 *
 * A dictionary is reference counted: every frame compressed with it holds a reference, so a
 * later training (a new version) never leaves an older frame unreadable, and a dictionary is
 * freed with the last frame that needs it. One codec belongs to one store and is used from
 * the thread that changes that store; the zstd contexts are per thread and reused.
 */
typedef struct _MsdStoreDict MsdStoreDict;
typedef struct _MsdStoreCodec MsdStoreCodec;

MsdStoreDict *msd_store_dict_ref(MsdStoreDict *dict);
void msd_store_dict_unref(MsdStoreDict *dict); /* NULL-safe */
/* 1 for a codec's first dictionary, one more for each training after it */
guint msd_store_dict_get_version(const MsdStoreDict *dict);
gsize msd_store_dict_get_size(const MsdStoreDict *dict);

MsdStoreCodec *msd_store_codec_new(void);
void msd_store_codec_free(MsdStoreCodec *self);
/* The zstd level, 1 unless set: for the micro benchmark that compares levels; set it before
 * the first object, as a dictionary is prepared for the level in force when it is trained. */
void msd_store_codec_set_level(MsdStoreCodec *self, gint level);

/* Compresses @data (@size bytes of JSON) with the codec's current dictionary, after keeping
 * it as a training sample while the codec samples, into a block of its own (g_free() it) of
 * *@frame_size bytes: a store entry holds that, one allocation where a GBytes is two.
 * Returns NULL when the frame would be no smaller than @data (tiny objects): the caller keeps
 * them plain. @dict receives a reference to the dictionary used, or NULL. */
guint8 *msd_store_codec_compress_frame(MsdStoreCodec *self,
                                       const guint8 *data,
                                       gsize size,
                                       MsdStoreDict **dict,
                                       gsize *frame_size);
/* Trains a new dictionary version from the samples held now and makes it current; FALSE (and
 * the current one stays) when there are too few samples to train on. The codec trains by
 * itself as objects arrive; this is for a caller that knows better, and for tests. */
gboolean msd_store_codec_train(MsdStoreCodec *self);
/* A list is complete: a type with fewer objects than the first training wants trains on what
 * it has (when that is enough), and the samples are let go either way, not kept for objects
 * that may never come. */
void msd_store_codec_end_list(MsdStoreCodec *self);
/* (transfer none) (nullable) */
MsdStoreDict *msd_store_codec_get_dict(MsdStoreCodec *self);

/* Undoes msd_store_codec_compress_frame(): @size is the JSON's length, as compressed. Aborts on a
 * frame that does not decode: frames never leave the process, so that is memory corruption. */
GBytes *msd_store_codec_decompress(const MsdStoreDict *dict,
                                   const guint8 *frame,
                                   gsize frame_size,
                                   gsize size);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsdStoreDict, msd_store_dict_unref)

G_END_DECLS
