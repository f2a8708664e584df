/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * Writes one YAML document straight into a GString, byte for byte as libyaml's emitter writes
 * it with the settings the snapshot uses (block style, indent 2, width 80, unicode, implicit
 * document start and end), without its event queue and per-character output: the snapshot's
 * hot path (doc/performance.md).
 *
 * It covers what the snapshot's documents nearly always hold: a mapping or sequence at the
 * root, simple keys, and scalars of printable ASCII and line breaks. Anything else (a byte
 * outside that set, a key that libyaml would write as "? key", a root scalar, a literal block
 * that keeps trailing line breaks) makes a call return FALSE, and the caller writes the
 * document through libyaml instead; what was written by then is the caller's to drop.
 */

typedef enum {
	MSD_YAML_BLOCK_PLAIN,   /* plain when it can be, else quoted as libyaml chooses */
	MSD_YAML_BLOCK_DOUBLE,  /* double quoted */
	MSD_YAML_BLOCK_LITERAL, /* a literal block when it can be, else double quoted */
} MsdYamlBlockStyle;

typedef struct {
	GString *out; /* (unowned) */
	gint column;
	gint indent;
	gboolean whitespace;
	gboolean indention;
	guint8 pending;              /* a collection started, not yet known to be empty */
	gboolean pending_in_mapping; /* that collection is a mapping's value */
	GArray *frames;              /* (unowned) the open block collections */
} MsdYamlBlockWriter;

/* @frames: an array from msd_yaml_block_writer_frames_new() for the writer to use (emptied
 * first); its owner keeps it from one document to the next */
void msd_yaml_block_writer_init(MsdYamlBlockWriter *self, GString *out, GArray *frames);
/* (transfer full): an array for msd_yaml_block_writer_init() to borrow */
GArray *msd_yaml_block_writer_frames_new(void);
void msd_yaml_block_writer_clear(MsdYamlBlockWriter *self);

gboolean msd_yaml_block_writer_scalar(MsdYamlBlockWriter *self,
                                      const gchar *text,
                                      gsize length,
                                      MsdYamlBlockStyle style);
gboolean msd_yaml_block_writer_mapping_start(MsdYamlBlockWriter *self);
gboolean msd_yaml_block_writer_mapping_end(MsdYamlBlockWriter *self);
gboolean msd_yaml_block_writer_sequence_start(MsdYamlBlockWriter *self);
gboolean msd_yaml_block_writer_sequence_end(MsdYamlBlockWriter *self);

/* Ends the document (its last line break); the caller adds the separator. */
gboolean msd_yaml_block_writer_finish(MsdYamlBlockWriter *self);

G_END_DECLS
