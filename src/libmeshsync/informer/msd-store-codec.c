/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncInformer"

#include "config.h"

/* ZDICT_trainFromBuffer_fastCover(): in libzstd's exported ABI since 1.3.6 */
#define ZDICT_STATIC_LINKING_ONLY
#include <zdict.h>
#include <zstd.h>

#include "informer/msd-store-codec.h"

/* Fast enough that an object costs less to compress than to tokenize; the dictionary, not the
 * level, is what makes small objects compress (doc/performance.md has the levels measured). */
#define MSD_STORE_CODEC_LEVEL 1
/* Training on the first objects of a type, then once more on objects further into it: the
 * first page of a list is often one namespace's (kube-system), not what the type holds most. */
static const guint msd_store_codec_train_at[] = {128, 4096};
#define MSD_STORE_CODEC_SAMPLES           128
#define MSD_STORE_CODEC_MAX_SAMPLE        (64 * 1024)
#define MSD_STORE_CODEC_MAX_SAMPLES_BYTES (2 * 1024 * 1024)
#define MSD_STORE_CODEC_DICT_CAPACITY     (32 * 1024)

struct _MsdStoreDict {
	ZSTD_CDict *cdict; /* (owned) */
	ZSTD_DDict *ddict; /* (owned) */
	gsize size;
	guint version;
	guint64 serial; /* unique in the process: what a thread's context was set up for */
};

/* A serial, not the dictionary's address, says which dictionary a thread's context holds: a
 * freed dictionary's address can come back as a new one's. */
static gsize msd_store_dict_serials;

struct _MsdStoreCodec {
	MsdStoreDict *dict;   /* (owned) (nullable): the current version */
	GByteArray *samples;  /* (owned): the samples' bytes, one after another */
	GArray *sample_sizes; /* (owned) (element-type gsize) */
	guint64 seen;         /* objects compressed so far */
	guint next_training;  /* index in msd_store_codec_train_at */
	guint versions;
	gint level;
};

static void
msd_store_dict_clear(MsdStoreDict *dict)
{
	ZSTD_freeCDict(dict->cdict);
	ZSTD_freeDDict(dict->ddict);
}

MsdStoreDict *
msd_store_dict_ref(MsdStoreDict *dict)
{
	return g_atomic_rc_box_acquire(dict);
}

void
msd_store_dict_unref(MsdStoreDict *dict)
{
	if (dict == NULL)
		return;
	g_atomic_rc_box_release_full(dict, (GDestroyNotify)msd_store_dict_clear);
}

guint
msd_store_dict_get_version(const MsdStoreDict *dict)
{
	return dict->version;
}

gsize
msd_store_dict_get_size(const MsdStoreDict *dict)
{
	return dict->size + ZSTD_sizeof_CDict(dict->cdict) + ZSTD_sizeof_DDict(dict->ddict);
}

/* A thread's compression context and the buffer it compresses into. Frames are copied out
 * at their size: compressing into a buffer of the object's size and shrinking it would leave a
 * hole of the difference behind every stored object, too small for the next object's JSON,
 * and at 100,000 pods the heap would keep most of the uncompressed size after all. */
typedef struct {
	ZSTD_CCtx *cctx;
	guint8 *frame;
	gsize capacity;
	/* the level and dictionary (its serial, 0 for none) the context is set up for: zstd
	 * keeps them from frame to frame, and setting them again for every object cost 2-3 % of
	 * compressing a pod */
	gboolean configured;
	gint level;
	guint64 dict_serial;
} MsdStoreCodecThread;

/* Kept between objects up to this; a larger object gets a buffer of its own. */
#define MSD_STORE_CODEC_KEPT_FRAME (256 * 1024)

static void
msd_store_codec_free_thread(gpointer data)
{
	MsdStoreCodecThread *thread = data;

	ZSTD_freeCCtx(thread->cctx);
	g_free(thread->frame);
	g_free(thread);
}

static void
msd_store_codec_free_dctx(gpointer dctx)
{
	ZSTD_freeDCtx(dctx);
}

/* One context each per thread, reused for every object: making one costs more than
 * compressing a small object with it. */
static GPrivate msd_store_codec_thread = G_PRIVATE_INIT(msd_store_codec_free_thread);
static GPrivate msd_store_codec_dctx = G_PRIVATE_INIT(msd_store_codec_free_dctx);

static MsdStoreCodecThread *
msd_store_codec_get_thread(void)
{
	MsdStoreCodecThread *thread = g_private_get(&msd_store_codec_thread);

	if (thread == NULL) {
		thread = g_new0(MsdStoreCodecThread, 1);
		thread->cctx = ZSTD_createCCtx();
		if (thread->cctx == NULL)
			g_error("out of memory for a zstd context");
		g_private_set(&msd_store_codec_thread, thread);
	}
	return thread;
}

static ZSTD_DCtx *
msd_store_codec_get_dctx(void)
{
	ZSTD_DCtx *dctx = g_private_get(&msd_store_codec_dctx);

	if (dctx == NULL) {
		dctx = ZSTD_createDCtx();
		if (dctx == NULL)
			g_error("out of memory for a zstd context");
		g_private_set(&msd_store_codec_dctx, dctx);
	}
	return dctx;
}

MsdStoreCodec *
msd_store_codec_new(void)
{
	MsdStoreCodec *self = g_new0(MsdStoreCodec, 1);

	self->samples = g_byte_array_new();
	self->sample_sizes = g_array_new(FALSE, FALSE, sizeof(gsize));
	self->level = MSD_STORE_CODEC_LEVEL;
	return self;
}

void
msd_store_codec_set_level(MsdStoreCodec *self, gint level)
{
	g_return_if_fail(self != NULL);
	self->level = level;
}

void
msd_store_codec_free(MsdStoreCodec *self)
{
	if (self == NULL)
		return;
	g_clear_pointer(&self->dict, msd_store_dict_unref);
	g_byte_array_unref(self->samples);
	g_array_unref(self->sample_sizes);
	g_free(self);
}

MsdStoreDict *
msd_store_codec_get_dict(MsdStoreCodec *self)
{
	return self->dict;
}

static void
msd_store_codec_clear_samples(MsdStoreCodec *self)
{
	g_byte_array_set_size(self->samples, 0);
	g_array_set_size(self->sample_sizes, 0);
	/* the bytes are not needed until the next window: give the memory back */
	g_byte_array_unref(self->samples);
	self->samples = g_byte_array_new();
}

gboolean
msd_store_codec_train(MsdStoreCodec *self)
{
	ZDICT_fastCover_params_t params = {0};
	g_autofree guint8 *buffer = NULL;
	MsdStoreDict *dict;
	gsize capacity;
	gsize size;

	g_return_val_if_fail(self != NULL, FALSE);

	/* zstd wants several times the dictionary's size in samples, and a few of them */
	capacity = MIN(MSD_STORE_CODEC_DICT_CAPACITY, self->samples->len / 4);
	if (self->sample_sizes->len < 8 || capacity < 1024) {
		msd_store_codec_clear_samples(self);
		return FALSE;
	}
	/* One fastCover training with fixed parameters. ZDICT_trainFromBuffer() runs the same
	 * algorithm over several segment sizes and keeps the one that compresses a held-back
	 * quarter of the samples best: three times the work, on the main loop in the middle of
	 * an initial sync, and on generated lists of six kinds it chose no better (much worse
	 * for ConfigMaps) than 4 KiB segments of 8-byte d-mers (doc/performance.md, "Training
	 * the store's dictionaries"). */
	params.k = 4096;
	params.d = 8;
	params.f = 20;
	params.accel = 1;
	params.zParams.compressionLevel = self->level;
	buffer = g_malloc(capacity);
	size = ZDICT_trainFromBuffer_fastCover(buffer, capacity, self->samples->data,
	                                       (const size_t *)(gpointer)self->sample_sizes->data,
	                                       self->sample_sizes->len, params);
	msd_store_codec_clear_samples(self);
	if (ZDICT_isError(size)) {
		/* samples too alike or too few to learn from: compressing without one works */
		g_debug("no store dictionary trained: %s", ZDICT_getErrorName(size));
		return FALSE;
	}

	dict = g_atomic_rc_box_new0(MsdStoreDict);
	dict->cdict = ZSTD_createCDict(buffer, size, self->level);
	dict->ddict = ZSTD_createDDict(buffer, size);
	if (dict->cdict == NULL || dict->ddict == NULL)
		g_error("out of memory for a zstd dictionary");
	dict->size = size;
	dict->version = ++self->versions;
	dict->serial = (guint64)g_atomic_pointer_add(&msd_store_dict_serials, 1) + 1;
	g_clear_pointer(&self->dict, msd_store_dict_unref);
	self->dict = dict;
	return TRUE;
}

void
msd_store_codec_end_list(MsdStoreCodec *self)
{
	g_return_if_fail(self != NULL);

	if (self->next_training > 0 || self->sample_sizes->len == 0)
		return;
	/* the first window ends here; the second still comes if the type grows that far */
	self->next_training = 1;
	msd_store_codec_train(self);
}

/* Keeps @data as a sample when it falls in a training window, and trains at a window's end. */
static void
msd_store_codec_sample(MsdStoreCodec *self, const guint8 *data, gsize size)
{
	guint at;

	if (self->next_training >= G_N_ELEMENTS(msd_store_codec_train_at))
		return;
	at = msd_store_codec_train_at[self->next_training];
	if (self->seen + MSD_STORE_CODEC_SAMPLES >= at && size <= MSD_STORE_CODEC_MAX_SAMPLE &&
	    self->samples->len + size <= MSD_STORE_CODEC_MAX_SAMPLES_BYTES) {
		g_byte_array_append(self->samples, data, (guint)size);
		g_array_append_val(self->sample_sizes, size);
	}
	self->seen++;
	if (self->seen >= at) {
		self->next_training++;
		msd_store_codec_train(self);
	}
}

guint8 *
msd_store_codec_compress_frame(
        MsdStoreCodec *self, const guint8 *data, gsize size, MsdStoreDict **dict, gsize *frame_size)
{
	MsdStoreCodecThread *thread = msd_store_codec_get_thread();
	ZSTD_CCtx *cctx = thread->cctx;
	gsize capacity = ZSTD_compressBound(size);
	g_autofree guint8 *own = NULL;
	guint8 *frame;
	guint64 dict_serial;
	gsize length;

	g_return_val_if_fail(self != NULL, NULL);
	g_return_val_if_fail(dict != NULL, NULL);
	g_return_val_if_fail(frame_size != NULL, NULL);

	*dict = NULL;
	*frame_size = 0;
	msd_store_codec_sample(self, data, size);

	dict_serial = self->dict != NULL ? self->dict->serial : 0;
	if (!thread->configured || thread->level != self->level ||
	    thread->dict_serial != dict_serial) {
		ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, self->level);
		/* the entry records its dictionary and its length: the frame need not */
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_dictIDFlag, 0);
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
		if (self->dict != NULL)
			ZSTD_CCtx_refCDict(cctx, self->dict->cdict);
		thread->configured = TRUE;
		thread->level = self->level;
		thread->dict_serial = dict_serial;
	}

	if (capacity > MSD_STORE_CODEC_KEPT_FRAME) {
		frame = own = g_malloc(capacity);
	} else {
		if (thread->capacity < capacity) {
			thread->frame = g_realloc(thread->frame, capacity);
			thread->capacity = capacity;
		}
		frame = thread->frame;
	}
	length = ZSTD_compress2(cctx, frame, capacity, data, size);
	if (ZSTD_isError(length) || length >= size)
		return NULL;
	if (self->dict != NULL)
		*dict = msd_store_dict_ref(self->dict);
	*frame_size = length;
	if (own != NULL)
		return g_realloc(g_steal_pointer(&own), length);
	return g_memdup2(frame, length);
}

GBytes *
msd_store_codec_decompress(const MsdStoreDict *dict,
                           const guint8 *frame,
                           gsize frame_size,
                           gsize size)
{
	ZSTD_DCtx *dctx = msd_store_codec_get_dctx();
	guint8 *data = g_malloc(MAX(size, 1));
	gsize length;

	if (dict != NULL)
		length = ZSTD_decompress_usingDDict(dctx, data, size, frame, frame_size,
		                                    dict->ddict);
	else
		length = ZSTD_decompressDCtx(dctx, data, size, frame, frame_size);
	if (ZSTD_isError(length) || length != size)
		g_error("a stored object does not decompress: %s",
		        ZSTD_isError(length) ? ZSTD_getErrorName(length) : "wrong length");
	return g_bytes_new_take(data, size);
}
