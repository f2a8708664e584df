/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncOutput"

#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "meshsync-error.h"
#include "output/msd-snapshot-scan.h"
#include "util/msd-i18n.h"

/* Enough to keep the number of reads low on a large snapshot; the scan holds one chunk. */
#define MSD_SNAPSHOT_SCAN_CHUNK (64 * 1024)

/* Only the start of a line is kept: it tells a separator, a top-level key or the uid line,
 * and a uid line is far shorter (Kubernetes uids are 36 characters). */
#define MSD_SNAPSHOT_SCAN_LINE 512

#define MSD_SNAPSHOT_UID_PREFIX "  uid: "

typedef struct {
	GHashTable *uids;
	gchar line[MSD_SNAPSHOT_SCAN_LINE];
	gsize line_len;
	gboolean line_long; /* the line went on past what line holds */
	gboolean in_metadata;
	gchar *uid; /* (owned) (nullable): the current document's */
	MsdSnapshotScan *scan;
} MsdSnapshotScanner;

static gboolean
msd_snapshot_scan_read(gint fd,
                       const gchar *path,
                       gchar *buffer,
                       gsize size,
                       goffset offset,
                       gssize *got,
                       GError **error)
{
	gssize n;

	do
		n = pread(fd, buffer, size, offset);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		gint saved = errno;

		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE,
		            _("cannot read the existing snapshot %s: %s"), path, g_strerror(saved));
		return FALSE;
	}
	*got = n;
	return TRUE;
}

static gboolean
msd_snapshot_scan_size(gint fd, const gchar *path, MsdSnapshotScan *scan, GError **error)
{
	struct stat st;

	memset(scan, 0, sizeof(*scan));
	if (fstat(fd, &st) != 0) {
		gint saved = errno;

		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE, _("cannot stat %s: %s"),
		            path, g_strerror(saved));
		return FALSE;
	}
	/* A device or a pipe (/dev/stdout, /dev/full) has no earlier content to continue. */
	if (S_ISREG(st.st_mode))
		scan->size = st.st_size;
	return TRUE;
}

/* Whether the bytes past the last whole document are the start of one of ours, cut short:
 * only then may the writer drop them. */
static gboolean
msd_snapshot_scan_check_tail(
        gint fd, const gchar *path, const gchar *first_key, MsdSnapshotScan *scan, GError **error)
{
	gchar head[64];
	gsize want = MIN(strlen(first_key), sizeof(head));
	gssize got;

	if (scan->size == scan->complete_end)
		return TRUE;
	if (!msd_snapshot_scan_read(fd, path, head, want, scan->complete_end, &got, error))
		return FALSE;
	scan->tail_ours = got > 0 && memcmp(head, first_key, (gsize)got) == 0;
	return TRUE;
}

static gint
msd_snapshot_scan_hex(const gchar *p, guint digits, gunichar *value)
{
	gunichar v = 0;

	for (guint i = 0; i < digits; i++) {
		gint d = g_ascii_xdigit_value(p[i]);

		if (d < 0)
			return -1;
		v = v * 16 + (gunichar)d;
	}
	*value = v;
	return (gint)digits;
}

gchar *
msd_snapshot_scan_scalar(const gchar *text, gsize length)
{
	g_autoptr(GString) out = NULL;
	const gchar *end = text + length;
	const gchar *p;

	if (length == 0)
		return NULL;
	if (text[0] == '\'') {
		out = g_string_new(NULL);
		for (p = text + 1; p < end; p++) {
			if (*p != '\'') {
				g_string_append_c(out, *p);
			} else if (p + 1 < end && p[1] == '\'') {
				g_string_append_c(out, '\'');
				p++;
			} else {
				return p + 1 == end ? g_string_free(g_steal_pointer(&out), FALSE)
				                    : NULL;
			}
		}
		return NULL; /* folded onto the next line */
	}
	if (text[0] == '"') {
		out = g_string_new(NULL);
		for (p = text + 1; p < end; p++) {
			gunichar c;
			gint used;

			if (*p == '"')
				return p + 1 == end ? g_string_free(g_steal_pointer(&out), FALSE)
				                    : NULL;
			if (*p != '\\') {
				g_string_append_c(out, *p);
				continue;
			}
			if (++p == end)
				return NULL; /* an escaped line break: folded */
			switch (*p) {
			case '\\':
			case '"':
			case '/':
				g_string_append_c(out, *p);
				continue;
			case 't':
				g_string_append_c(out, '\t');
				continue;
			case 'n':
				g_string_append_c(out, '\n');
				continue;
			case 'x':
				used = end - p > 2 ? msd_snapshot_scan_hex(p + 1, 2, &c) : -1;
				break;
			case 'u':
				used = end - p > 4 ? msd_snapshot_scan_hex(p + 1, 4, &c) : -1;
				break;
			case 'U':
				used = end - p > 8 ? msd_snapshot_scan_hex(p + 1, 8, &c) : -1;
				break;
			default:
				/* nothing our writer puts in a uid; leave it out rather than guess
				 */
				return NULL;
			}
			if (used < 0 || !g_unichar_validate(c))
				return NULL;
			g_string_append_unichar(out, c);
			p += used;
		}
		return NULL;
	}
	/* a block scalar (| or >) goes on over the next lines */
	if (text[0] == '|' || text[0] == '>')
		return NULL;
	return g_strndup(text, length);
}

static void
msd_snapshot_scanner_line(MsdSnapshotScanner *self, goffset next_line)
{
	const gchar *line = self->line;
	gsize len = self->line_len;

	if (!self->line_long && len == 3 && memcmp(line, "---", 3) == 0) {
		if (self->uid != NULL && *self->uid != '\0')
			g_hash_table_add(self->uids, g_steal_pointer(&self->uid));
		g_clear_pointer(&self->uid, g_free);
		self->in_metadata = FALSE;
		self->scan->complete_end = next_line;
		self->scan->n_documents++;
		return;
	}
	if (len > 0 && line[0] != ' ') {
		self->in_metadata =
		        !self->line_long && len == 9 && memcmp(line, "metadata:", 9) == 0;
		return;
	}
	if (self->in_metadata && !self->line_long && len > strlen(MSD_SNAPSHOT_UID_PREFIX) &&
	    memcmp(line, MSD_SNAPSHOT_UID_PREFIX, strlen(MSD_SNAPSHOT_UID_PREFIX)) == 0) {
		gsize skip = strlen(MSD_SNAPSHOT_UID_PREFIX);

		g_free(self->uid);
		self->uid = msd_snapshot_scan_scalar(line + skip, len - skip);
	}
}

gboolean
msd_snapshot_scan_uids(gint fd,
                       const gchar *path,
                       const gchar *first_key,
                       GHashTable *uids,
                       MsdSnapshotScan *scan,
                       GError **error)
{
	g_autofree gchar *chunk = NULL;
	MsdSnapshotScanner self = {.uids = uids, .scan = scan};
	goffset offset = 0;
	gboolean ok = TRUE;

	g_return_val_if_fail(uids != NULL, FALSE);

	if (!msd_snapshot_scan_size(fd, path, scan, error))
		return FALSE;
	chunk = g_malloc(MSD_SNAPSHOT_SCAN_CHUNK);
	while (offset < scan->size) {
		gssize got;
		const gchar *p;
		const gchar *end;

		if (!msd_snapshot_scan_read(fd, path, chunk, MSD_SNAPSHOT_SCAN_CHUNK, offset, &got,
		                            error)) {
			ok = FALSE;
			break;
		}
		if (got == 0) {
			/* shorter than fstat said: someone truncated it meanwhile */
			scan->size = offset;
			break;
		}
		p = chunk;
		end = chunk + got;
		while (p < end) {
			const gchar *nl = memchr(p, '\n', (gsize)(end - p));
			const gchar *stop = nl != NULL ? nl : end;
			gsize piece = (gsize)(stop - p);
			gsize room = sizeof(self.line) - self.line_len;

			if (piece > room) {
				self.line_long = TRUE;
				piece = room;
			}
			memcpy(self.line + self.line_len, p, piece);
			self.line_len += piece;
			if (nl == NULL)
				break;
			msd_snapshot_scanner_line(&self, offset + (nl - chunk) + 1);
			self.line_len = 0;
			self.line_long = FALSE;
			p = nl + 1;
		}
		offset += got;
	}
	/* the uid of a document without its separator is not counted: it is dropped */
	g_free(self.uid);
	if (!ok)
		return FALSE;
	return msd_snapshot_scan_check_tail(fd, path, first_key, scan, error);
}

gboolean
msd_snapshot_scan_tail(
        gint fd, const gchar *path, const gchar *first_key, MsdSnapshotScan *scan, GError **error)
{
	/* a separator line, with the line break before it: "\n---\n" */
	static const gchar separator[] = "\n---\n";
	const gsize seplen = sizeof(separator) - 1;
	g_autofree gchar *chunk = NULL;
	goffset window_end;

	if (!msd_snapshot_scan_size(fd, path, scan, error))
		return FALSE;
	if (scan->size == 0)
		return TRUE;
	chunk = g_malloc(MSD_SNAPSHOT_SCAN_CHUNK);
	window_end = scan->size;
	for (;;) {
		goffset start = MAX(window_end - MSD_SNAPSHOT_SCAN_CHUNK, 0);
		gsize len = (gsize)(window_end - start);
		gssize got;

		if (!msd_snapshot_scan_read(fd, path, chunk, len, start, &got, error))
			return FALSE;
		if ((gsize)got != len) {
			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE,
			            _("%s changed while it was read"), path);
			return FALSE;
		}
		for (gsize i = len; i >= seplen; i--) {
			if (memcmp(chunk + i - seplen, separator, seplen) == 0) {
				scan->complete_end = start + (goffset)i;
				return msd_snapshot_scan_check_tail(fd, path, first_key, scan,
				                                    error);
			}
		}
		/* the first document of the file has no line break before its separator */
		if (start == 0) {
			if (len >= seplen - 1 && memcmp(chunk, separator + 1, seplen - 1) == 0)
				scan->complete_end = (goffset)(seplen - 1);
			return msd_snapshot_scan_check_tail(fd, path, first_key, scan, error);
		}
		/* the next window overlaps this one by a separator's length, less one byte, so
		 * a separator across the boundary is found */
		window_end = start + (goffset)(seplen - 1);
	}
}
