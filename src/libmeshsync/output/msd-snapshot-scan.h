/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* What a scan found in a snapshot (or extended) file left by an earlier run. */
typedef struct {
	goffset size;         /* the file's length */
	goffset complete_end; /* just past the "---" line that ends the last whole document */
	guint n_documents;    /* whole documents read (forward scan only) */
	gboolean tail_ours;   /* the bytes past complete_end start like one of our documents */
} MsdSnapshotScan;

/*
 * Reads the regular file open on @fd from its start, in chunks, and adds to @uids (a set of
 * owned strings) the metadata.uid of every whole document in it. It relies on the layout
 * msd_snapshot_yaml_append() writes, not on a YAML parser: a document ends at a "---" line,
 * top-level keys start in column 0, and the object's uid is the "  uid: " line of the
 * "metadata:" block (any deeper uid, an owner's, is indented further). A uid that cannot be
 * read from its single line is left out, which can only make the writer write that object
 * again, never lose it. @first_key is the key every document of the file starts with; it
 * decides tail_ours.
 */
gboolean msd_snapshot_scan_uids(gint fd,
                                const gchar *path,
                                const gchar *first_key,
                                GHashTable *uids,
                                MsdSnapshotScan *scan,
                                GError **error);

/*
 * Finds the end of the last whole document of the regular file open on @fd by reading
 * backwards from its end: for the extended file, which is only ever appended to and may be
 * far larger than the snapshot, so reading all of it at every start would cost too much.
 * n_documents is left at 0.
 */
gboolean msd_snapshot_scan_tail(
        gint fd, const gchar *path, const gchar *first_key, MsdSnapshotScan *scan, GError **error);

/* The value of a single-line YAML scalar as our writer emits it (plain, 'single' or "double"
 * quoted); NULL when it does not fit on its line or is not a scalar. Exposed for tests. */
gchar *msd_snapshot_scan_scalar(const gchar *text, gsize length);

G_END_DECLS
