/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-pack.h"

#include <zstd.h>

/* zstd's fastest level: packing is on the path of every write, churn's tens of thousands of
 * events per second included, and the dictionary gives most of the ratio. */
#define PACK_LEVEL 1

struct _KubesimPackDict {
	ZSTD_CDict *cdict;
	ZSTD_DDict *ddict;
};

static gboolean pack_enabled = TRUE;

/* kubesim serves from one thread: one context of each kind is reused for every object. */
static ZSTD_CCtx *cctx;
static ZSTD_DCtx *dctx;

void
kubesim_pack_set_enabled(gboolean enabled)
{
	pack_enabled = enabled;
}

gboolean
kubesim_pack_get_enabled(void)
{
	return pack_enabled;
}

static void
dict_clear(gpointer data)
{
	KubesimPackDict *dict = data;

	ZSTD_freeCDict(dict->cdict);
	ZSTD_freeDDict(dict->ddict);
}

KubesimPackDict *
kubesim_pack_dict_new(GBytes *json)
{
	KubesimPackDict *dict = g_rc_box_new0(KubesimPackDict);
	gsize len;
	const gchar *js = g_bytes_get_data(json, &len);

	/* both copy the content: the object it came from may go */
	dict->cdict = ZSTD_createCDict(js, len, PACK_LEVEL);
	dict->ddict = ZSTD_createDDict(js, len);
	if (dict->cdict == NULL || dict->ddict == NULL)
		g_error("kubesim: zstd could not make a dictionary of %" G_GSIZE_FORMAT " bytes",
		        len);
	return dict;
}

KubesimPackDict *
kubesim_pack_dict_ref(KubesimPackDict *dict)
{
	return g_rc_box_acquire(dict);
}

void
kubesim_pack_dict_unref(KubesimPackDict *dict)
{
	g_rc_box_release_full(dict, dict_clear);
}

GBytes *
kubesim_pack(KubesimPackDict *dict, GBytes *json)
{
	gsize len, bound, n;
	const gchar *js = g_bytes_get_data(json, &len);
	gchar *buf;

	if (cctx == NULL)
		cctx = ZSTD_createCCtx();
	bound = ZSTD_compressBound(len);
	buf = g_malloc(bound);
	n = ZSTD_compress_usingCDict(cctx, buf, bound, js, len, dict->cdict);
	if (ZSTD_isError(n) || n >= len) {
		g_free(buf);
		return NULL;
	}
	/* the frame is kept for as long as the object: no slack after it */
	return g_bytes_new_take(g_realloc(buf, n), n);
}

static void
unpack_into(KubesimPackDict *dict, GBytes *packed, gsize json_len, gchar *buf)
{
	gsize len, n;
	const gchar *src = g_bytes_get_data(packed, &len);

	if (dctx == NULL)
		dctx = ZSTD_createDCtx();
	n = ZSTD_decompress_usingDDict(dctx, buf, json_len, src, len, dict->ddict);
	/* only ever fed frames kubesim_pack() made */
	if (ZSTD_isError(n) || n != json_len)
		g_error("kubesim: a stored object does not unpack: %s",
		        ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong length");
	buf[json_len] = '\0';
}

GBytes *
kubesim_unpack(KubesimPackDict *dict, GBytes *packed, gsize json_len)
{
	gchar *buf = g_malloc(json_len + 1);

	unpack_into(dict, packed, json_len, buf);
	return g_bytes_new_take(buf, json_len);
}

void
kubesim_unpack_append(KubesimPackDict *dict, GBytes *packed, gsize json_len, GString *out)
{
	gsize at = out->len;

	/* GString keeps room for the NUL unpack_into() writes */
	g_string_set_size(out, at + json_len);
	unpack_into(dict, packed, json_len, out->str + at);
}
