/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>
#include <yaml.h>

#include "output/msd-yaml-block-writer.h"
#include "util/msd-json-tokens.h"

G_BEGIN_DECLS

/*
 * The buffers a document's emitter grows. Whoever writes many documents in a row (the
 * snapshot writer) keeps them from one to the next, so that documents after the first grow
 * nothing and the snapshot's thread never reallocates a block the engine's loop allocated
 * first (each such call takes that allocator arena's lock, which the loop holds often);
 * other callers make them for one document. Used by one document at a time.
 */
typedef struct {
	GString *scratch; /* (owned) */
	GArray *ucs4;     /* (owned) */
	GArray *frames;   /* (owned) */
	GString *decoded; /* (owned) */
} MsdSnapshotBuffers;

MsdSnapshotBuffers *msd_snapshot_buffers_new(void);
void msd_snapshot_buffers_free(MsdSnapshotBuffers *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsdSnapshotBuffers, msd_snapshot_buffers_free)

/*
 * One snapshot document being emitted, with go-yaml v2's choices of style
 * (msd-snapshot-yaml.h). Shared by the two producers of documents: JSON text
 * (msd_snapshot_yaml_append()) and a resource's model (msd-snapshot-resource.c).
 *
 * The document is written by the block writer (msd-yaml-block-writer.h), or, with
 * @reference, through libyaml's emitter, whose output the block writer reproduces. When the
 * block writer meets something it leaves to libyaml, a call returns FALSE with no error and
 * sets unsupported: the producer then writes the document again with @reference.
 *
 * begin() starts the stream and the document, finish() ends them and appends the "---\n"
 * separator; clear() always runs and takes back a document that was not finished, so a
 * failed one never leaves half its text in @out. Every call returns FALSE with the error
 * given to begin() set, or with unsupported set.
 */
typedef struct {
	gboolean reference;
	gboolean unsupported;
	MsdYamlBlockWriter block;
	yaml_emitter_t emitter;
	gboolean initialized;
	gboolean finished;
	GString *out; /* (unowned) */
	gsize start;
	GError **error;
	GString *scratch; /* (unowned): decoded text of the string being emitted */
	GArray *ucs4;     /* (unowned) gunichar: the keys of the mapping being sorted */
} MsdSnapshotEmitter;

/* @buffers: the emitter's working buffers, borrowed for the document */
gboolean msd_snapshot_emitter_begin(MsdSnapshotEmitter *ctx,
                                    GString *out,
                                    gboolean reference,
                                    MsdSnapshotBuffers *buffers,
                                    GError **error);
gboolean msd_snapshot_emitter_finish(MsdSnapshotEmitter *ctx);
void msd_snapshot_emitter_clear(MsdSnapshotEmitter *ctx);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(MsdSnapshotEmitter, msd_snapshot_emitter_clear)

/* A scalar: @string says it is a string (styled so that it reads back as one), else the text
 * of a number, boolean or null, written plain. */
gboolean msd_snapshot_emitter_scalar(MsdSnapshotEmitter *ctx,
                                     const gchar *text,
                                     gsize length,
                                     gboolean string);
gboolean msd_snapshot_emitter_mapping_start(MsdSnapshotEmitter *ctx);
gboolean msd_snapshot_emitter_mapping_end(MsdSnapshotEmitter *ctx);
gboolean msd_snapshot_emitter_sequence_start(MsdSnapshotEmitter *ctx);
gboolean msd_snapshot_emitter_sequence_end(MsdSnapshotEmitter *ctx);

/* The JSON value at token @index, mapping keys in go-yaml v2's order. */
gboolean
msd_snapshot_emitter_json(MsdSnapshotEmitter *ctx, const MsdJsonTokens *tokens, guint index);

G_END_DECLS
