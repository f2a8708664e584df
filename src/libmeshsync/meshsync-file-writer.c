/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncOutput"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gunixoutputstream.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "meshsync-error.h"
#include "meshsync-file-writer-private.h"
#include "output/msd-snapshot-scan.h"
#include "output/msd-snapshot-yaml.h"
#include "output/msd-write-thread.h"
#include "util/msd-i18n.h"

/**
 * MeshSyncFileWriter:
 *
 * Writes the cluster snapshot that upstream MeshSync's file mode writes: one YAML document
 * per object, each followed by `---`, holding the first state seen of every object (later
 * events for the same uid are not written).
 *
 * An existing snapshot is continued, not truncated: on opening, the writer reads the uids of
 * the documents already in it (an earlier run of the same file, stopped or killed) and does
 * not write those objects again, so a restarted run adds only what the file does not hold
 * yet. What it keeps is the set of uids, one per object in the file. A document cut short at
 * the end of the file (a run killed in the middle of a write) is dropped before anything is
 * appended, and its object is written again whole; a file whose end is not a whole document
 * and not the start of one of ours is refused rather than changed. Upstream keeps the uids
 * in memory only and writes every object again after a restart.
 *
 * With the extended file enabled, every event is also written, with its event type, to
 * `<name>-extended<ext>` (`EventType` and `Object` keys); a restarted run keeps appending
 * every event to it (after dropping a cut-short last record the same way).
 *
 * Both files are created with mode 0600 whatever the umask, as the snapshot holds the data
 * of Secrets; a file that exists keeps its mode.
 *
 * Output is buffered; a failed write (full disk, permission) is reported as
 * %MESHSYNC_ERROR_WRITE naming the file, and every later call fails the same way, so a
 * truncated snapshot is never mistaken for a complete one.
 *
 * The YAML is rendered and written by a thread of the writer's own during bursts (an initial
 * sync), so that the engine's loop reads and converts the next objects meanwhile. A write
 * takes the event (a reference to the resource, which no one changes once it is delivered);
 * an error of the thread is reported by the calls after it, as the buffered writes always
 * were. [method@MeshSync.Writer.is_writable] is %FALSE while the thread is a full queue
 * behind, and [method@MeshSync.Writer.flush] and [method@MeshSync.Writer.close] return once
 * everything taken is written.
 */

/* Enough to amortise the write calls; small enough that a crash loses little. */
#define MESHSYNC_FILE_WRITER_BUFFER (256 * 1024)

/* Events taken and not yet written: a pod's document is about 6 KB and takes some tens of
 * microseconds, so the queue is a few milliseconds of work and holds no copies, only
 * references to resources the engine's store holds anyway. */
#define MESHSYNC_FILE_WRITER_QUEUE 1024
/* Events that wait before the thread is woken: one thread switch per batch, none for the
 * lone events of the steady state, which the loop writes itself when it flushes. */
#define MESHSYNC_FILE_WRITER_BATCH 64

/* One event on its way to the files. */
typedef struct {
	MeshSyncResource *resource; /* (owned) */
	MeshSyncEventType event_type;
	gboolean snapshot; /* also the snapshot's document (its first state) */
} MeshSyncFileWriterJob;

typedef struct {
	gchar *path;
	GOutputStream *stream; /* (owned) (nullable): NULL once closed */
	GString *pending;      /* (owned) */
	/* (owned): the renderer's, by one thread at a time (the writer thread, or the loop
	 * while it is idle) */
	MsdSnapshotBuffers *buffers;
	gboolean created; /* this writer created the file */
} MeshSyncSnapshotFile;

struct _MeshSyncFileWriter {
	GObject parent_instance;

	MeshSyncSnapshotFile main;
	MeshSyncSnapshotFile extended; /* path NULL when disabled */
	GHashTable *seen_uids;         /* (owned) (element-type utf8): first state written */
	guint n_documents;
	GError *failure; /* (owned) (nullable): the first write error, repeated afterwards */
	/* (owned) (nullable): made at the first write, in the context that writes; the files'
	 * streams and buffers belong to it between a write and the next wait */
	MsdWriteThread *thread;
	/* one processor to run on (taskset, a cgroup): a thread would only take turns with the
	 * loop, so the loop writes every document itself */
	gboolean inline_jobs;
};

static void meshsync_file_writer_iface_init(MeshSyncWriterInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(MeshSyncFileWriter,
                              meshsync_file_writer,
                              G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(MESHSYNC_TYPE_WRITER,
                                                    meshsync_file_writer_iface_init))

/* Opens @path for reading and writing, creating it 0600 when it does not exist: a snapshot
 * holds Secret data. An existing file keeps its mode, as the user may have chosen it. */
static gint
meshsync_snapshot_file_open_fd(const gchar *path, gboolean *created, GError **error)
{
	gint saved = 0;

	/* a file removed between the two opens is created by the next round */
	for (guint attempt = 0; attempt < 3; attempt++) {
		gint fd = g_open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

		if (fd >= 0) {
			/* the umask may have taken bits from 0600; it never adds any */
			if (fchmod(fd, 0600) != 0) {
				saved = errno;
				close(fd);
				break;
			}
			*created = TRUE;
			return fd;
		}
		if (errno != EEXIST) {
			saved = errno;
			break;
		}
		fd = g_open(path, O_RDWR | O_CLOEXEC, 0);
		if (fd >= 0)
			return fd;
		saved = errno;
		if (saved != ENOENT)
			break;
	}
	g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE,
	            _("cannot open the snapshot %s: %s"), path, g_strerror(saved));
	return -1;
}

/* What an earlier run left: the uids of the snapshot's documents go into @uids (NULL for the
 * extended file, of which only the end is checked). A document cut short (a run killed while
 * the buffer was being written, a full disk) is dropped: appending after it would make the
 * next document unreadable too, and its object is written again whole, as it was never
 * counted as written. A tail that is not the start of one of our documents is not ours to
 * drop, so the file is refused. */
static gboolean
meshsync_snapshot_file_continue(gint fd, const gchar *path, GHashTable *uids, GError **error)
{
	const gchar *first_key = uids != NULL ? "apiVersion:" : "EventType:";
	MsdSnapshotScan scan;
	gboolean ok;

	if (uids != NULL)
		ok = msd_snapshot_scan_uids(fd, path, first_key, uids, &scan, error);
	else
		ok = msd_snapshot_scan_tail(fd, path, first_key, &scan, error);
	if (!ok)
		return FALSE;
	if (scan.complete_end < scan.size) {
		if (!scan.tail_ours) {
			g_set_error(
			        error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE,
			        _("the snapshot %s does not end with a whole document (a \"---\" "
			          "line); not appending to it"),
			        path);
			return FALSE;
		}
		if (ftruncate(fd, scan.complete_end) != 0) {
			gint saved = errno;

			g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE,
			            _("cannot drop the partial document at the end of %s: %s"),
			            path, g_strerror(saved));
			return FALSE;
		}
		g_info("snapshot %s: dropped a partial document of %" G_GOFFSET_FORMAT
		       " bytes at its end, left by an interrupted run",
		       path, scan.size - scan.complete_end);
	}
	if (uids != NULL && scan.n_documents > 0)
		g_info("snapshot %s: continuing after %u documents of an earlier run; the %u "
		       "objects in them are not written again",
		       path, scan.n_documents, g_hash_table_size(uids));
	return TRUE;
}

static gboolean
meshsync_snapshot_file_open(MeshSyncSnapshotFile *file,
                            const gchar *path,
                            GHashTable *uids,
                            GError **error)
{
	gint fd;
	gint flags;

	fd = meshsync_snapshot_file_open_fd(path, &file->created, error);
	if (fd < 0)
		return FALSE;
	if (!meshsync_snapshot_file_continue(fd, path, uids, error)) {
		close(fd);
		return FALSE;
	}
	/* every write goes to the end, after the scan read from the start */
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_APPEND) != 0) {
		gint saved = errno;

		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE,
		            _("cannot open the snapshot %s: %s"), path, g_strerror(saved));
		close(fd);
		return FALSE;
	}
	file->path = g_strdup(path);
	file->stream = g_unix_output_stream_new(fd, TRUE);
	file->pending = g_string_sized_new(MESHSYNC_FILE_WRITER_BUFFER);
	file->buffers = msd_snapshot_buffers_new();
	return TRUE;
}

static gboolean
meshsync_snapshot_file_drain(MeshSyncSnapshotFile *file, gboolean sync, GError **error)
{
	g_autoptr(GError) local_error = NULL;

	if (file->stream == NULL)
		return TRUE;
	if (file->pending->len > 0 &&
	    !g_output_stream_write_all(file->stream, file->pending->str, file->pending->len, NULL,
	                               NULL, &local_error)) {
		/* The run ends on this error; writing the buffer again later (at close) could only
		 * add a second copy of what did get through. */
		g_string_truncate(file->pending, 0);
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE,
		            _("cannot write the snapshot %s: %s"), file->path,
		            local_error->message);
		return FALSE;
	}
	g_string_truncate(file->pending, 0);
	if (sync && !g_output_stream_flush(file->stream, NULL, &local_error)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE,
		            _("cannot write the snapshot %s: %s"), file->path,
		            local_error->message);
		return FALSE;
	}
	return TRUE;
}

static gboolean
meshsync_snapshot_file_close(MeshSyncSnapshotFile *file, GError **error)
{
	g_autoptr(GError) local_error = NULL;
	gboolean ok;

	if (file->stream == NULL)
		return TRUE;
	ok = meshsync_snapshot_file_drain(file, TRUE, error);
	if (!g_output_stream_close(file->stream, NULL, &local_error) && ok) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE,
		            _("cannot close the snapshot %s: %s"), file->path,
		            local_error->message);
		ok = FALSE;
	}
	g_clear_object(&file->stream);
	return ok;
}

static void
meshsync_snapshot_file_clear(MeshSyncSnapshotFile *file)
{
	g_clear_object(&file->stream);
	g_clear_pointer(&file->path, g_free);
	if (file->pending != NULL)
		g_string_free(file->pending, TRUE);
	file->pending = NULL;
	g_clear_pointer(&file->buffers, msd_snapshot_buffers_free);
}

static gboolean
meshsync_file_writer_fail(MeshSyncFileWriter *self, GError *error, GError **out)
{
	if (self->failure == NULL)
		self->failure = g_error_copy(error);
	g_propagate_error(out, error);
	return FALSE;
}

/* Appends the document of @resource (the extended record when @extended), then drains the
 * buffer once it is full. Runs in the writer's thread, or in the loop while that is idle. */
static gboolean
meshsync_file_writer_append(MeshSyncSnapshotFile *file,
                            MeshSyncResource *resource,
                            gboolean extended,
                            MeshSyncEventType event_type,
                            GError **error)
{
	GError *local_error = NULL;
	gboolean ok;

	/* straight from the resource's fields: no JSON is written or parsed for the YAML */
	if (extended)
		ok = msd_snapshot_yaml_append_record(file->pending, resource, event_type,
		                                     file->buffers, &local_error);
	else
		ok = msd_snapshot_yaml_append_resource(file->pending, resource, file->buffers,
		                                       &local_error);
	if (!ok) {
		/* The emitter only fails on a bug, not on bad input. */
		g_prefix_error(&local_error, "%s: ", file->path);
		g_propagate_error(error, local_error);
		return FALSE;
	}
	if (file->pending->len >= MESHSYNC_FILE_WRITER_BUFFER &&
	    !meshsync_snapshot_file_drain(file, FALSE, error))
		return FALSE;
	return TRUE;
}

static void
meshsync_file_writer_job_free(gpointer data)
{
	MeshSyncFileWriterJob *job = data;

	g_object_unref(job->resource);
	g_free(job);
}

/* The write itself, in the thread: a write error ends the output (the thread keeps it and
 * the engine hears of it at its next call); a document the emitter could not make is left
 * out and said so, as the engine says of an event a writer refused, and the rest goes on. */
static gboolean
meshsync_file_writer_job_run(gpointer item, gpointer user_data, GError **error)
{
	MeshSyncFileWriterJob *job = item;
	MeshSyncFileWriter *self = user_data;
	g_autoptr(GError) local_error = NULL;

	if ((self->extended.path == NULL ||
	     meshsync_file_writer_append(&self->extended, job->resource, TRUE, job->event_type,
	                                 &local_error)) &&
	    (!job->snapshot || meshsync_file_writer_append(&self->main, job->resource, FALSE,
	                                                   job->event_type, &local_error)))
		return TRUE;
	if (g_error_matches(local_error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE)) {
		g_propagate_error(error, g_steal_pointer(&local_error));
		return FALSE;
	}
	g_message("%s %s %s/%s not written: %s", meshsync_event_type_to_string(job->event_type),
	          meshsync_resource_get_kind(job->resource),
	          meshsync_resource_get_namespace(job->resource) != NULL
	                  ? meshsync_resource_get_namespace(job->resource)
	                  : "",
	          meshsync_resource_get_name(job->resource), local_error->message);
	return TRUE;
}

/* In the loop: a failure of the thread becomes the writer's (a full queue has room again or
 * the thread failed); either way the engine is to call again. */
static gboolean
meshsync_file_writer_thread_notify(gpointer user_data)
{
	meshsync_writer_writable_changed(MESHSYNC_WRITER(user_data));
	return G_SOURCE_REMOVE;
}

/* Whether the writer has failed, the thread's failure included; sets @error to it. */
static gboolean
meshsync_file_writer_check_failed(MeshSyncFileWriter *self, GError **error)
{
	if (self->failure == NULL && self->thread != NULL)
		msd_write_thread_has_failed(self->thread, &self->failure);
	if (self->failure == NULL)
		return FALSE;
	g_propagate_error(error, g_error_copy(self->failure));
	return TRUE;
}

/* Waits until the thread has written everything taken: the files are the loop's until the
 * next write. */
static gboolean
meshsync_file_writer_wait(MeshSyncFileWriter *self, GError **error)
{
	if (self->thread != NULL)
		msd_write_thread_wait(self->thread, NULL);
	return !meshsync_file_writer_check_failed(self, error);
}

static gboolean
meshsync_file_writer_write(MeshSyncWriter *writer,
                           MeshSyncResource *resource,
                           MeshSyncEventType event_type,
                           GError **error)
{
	MeshSyncFileWriter *self = MESHSYNC_FILE_WRITER(writer);
	MeshSyncFileWriterJob *job;
	const gchar *uid;
	gboolean snapshot = TRUE;

	if (meshsync_file_writer_check_failed(self, error))
		return FALSE;
	if (self->main.stream == NULL) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE,
		            _("the snapshot %s is closed"), self->main.path);
		return FALSE;
	}

	/* The snapshot holds the first state of each object; objects without a uid are
	 * always written, as upstream. */
	uid = meshsync_resource_get_uid(resource);
	if (uid != NULL && *uid != '\0') {
		if (g_hash_table_contains(self->seen_uids, uid))
			snapshot = FALSE;
		else
			g_hash_table_add(self->seen_uids, g_strdup(uid));
	}
	if (!snapshot && self->extended.path == NULL)
		return TRUE;
	if (snapshot)
		self->n_documents++;

	job = g_new0(MeshSyncFileWriterJob, 1);
	job->resource = g_object_ref(resource);
	job->event_type = event_type;
	job->snapshot = snapshot;
	if (self->inline_jobs) {
		g_autoptr(GError) local_error = NULL;
		gboolean written = meshsync_file_writer_job_run(job, self, &local_error);

		meshsync_file_writer_job_free(job);
		if (!written)
			return meshsync_file_writer_fail(self, g_steal_pointer(&local_error),
			                                 error);
		return TRUE;
	}
	if (self->thread == NULL) {
		g_autoptr(GMainContext) context = g_main_context_ref_thread_default();

		self->thread = msd_write_thread_new(
		        "meshsync-snapshot", MESHSYNC_FILE_WRITER_QUEUE, MESHSYNC_FILE_WRITER_BATCH,
		        meshsync_file_writer_job_run, meshsync_file_writer_job_free,
		        meshsync_file_writer_thread_notify, self, context);
	}
	msd_write_thread_push(self->thread, job);
	return TRUE;
}

static gboolean
meshsync_file_writer_is_writable(MeshSyncWriter *writer)
{
	MeshSyncFileWriter *self = MESHSYNC_FILE_WRITER(writer);

	return self->thread == NULL || !msd_write_thread_is_full(self->thread);
}

gboolean
meshsync_file_writer_has_object(MeshSyncFileWriter *self, const gchar *uid)
{
	g_return_val_if_fail(MESHSYNC_IS_FILE_WRITER(self), FALSE);
	return uid != NULL && *uid != '\0' && g_hash_table_contains(self->seen_uids, uid);
}

static gboolean
meshsync_file_writer_flush(MeshSyncWriter *writer, GError **error)
{
	MeshSyncFileWriter *self = MESHSYNC_FILE_WRITER(writer);
	GError *local_error = NULL;

	if (!meshsync_file_writer_wait(self, error))
		return FALSE;
	if (!meshsync_snapshot_file_drain(&self->extended, TRUE, &local_error) ||
	    !meshsync_snapshot_file_drain(&self->main, TRUE, &local_error))
		return meshsync_file_writer_fail(self, local_error, error);
	return TRUE;
}

static gboolean
meshsync_file_writer_close(MeshSyncWriter *writer, GError **error)
{
	MeshSyncFileWriter *self = MESHSYNC_FILE_WRITER(writer);
	GError *local_error = NULL;
	gboolean extended_ok;
	gboolean main_ok;

	/* whatever was taken is written before the files close */
	meshsync_file_writer_wait(self, NULL);
	g_clear_pointer(&self->thread, msd_write_thread_free);
	if (self->failure != NULL) {
		/* Release the files, but report the write that failed. */
		meshsync_snapshot_file_close(&self->extended, NULL);
		meshsync_snapshot_file_close(&self->main, NULL);
		g_propagate_error(error, g_error_copy(self->failure));
		return FALSE;
	}
	extended_ok = meshsync_snapshot_file_close(&self->extended, &local_error);
	main_ok = meshsync_snapshot_file_close(&self->main, extended_ok ? &local_error : NULL);
	if (!extended_ok || !main_ok)
		return meshsync_file_writer_fail(self, local_error, error);
	return TRUE;
}

static void
meshsync_file_writer_iface_init(MeshSyncWriterInterface *iface)
{
	iface->write = meshsync_file_writer_write;
	iface->flush = meshsync_file_writer_flush;
	iface->close = meshsync_file_writer_close;
	iface->is_writable = meshsync_file_writer_is_writable;
}

static void
meshsync_file_writer_finalize(GObject *object)
{
	MeshSyncFileWriter *self = MESHSYNC_FILE_WRITER(object);

	if (self->main.stream != NULL) {
		g_autoptr(GError) error = NULL;

		if (!meshsync_file_writer_close(MESHSYNC_WRITER(self), &error))
			g_warning("%s", error->message);
	}
	g_clear_pointer(&self->thread, msd_write_thread_free);
	meshsync_snapshot_file_clear(&self->main);
	meshsync_snapshot_file_clear(&self->extended);
	g_hash_table_unref(self->seen_uids);
	g_clear_error(&self->failure);
	G_OBJECT_CLASS(meshsync_file_writer_parent_class)->finalize(object);
}

static void
meshsync_file_writer_class_init(MeshSyncFileWriterClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = meshsync_file_writer_finalize;
}

static void
meshsync_file_writer_init(MeshSyncFileWriter *self)
{
	self->seen_uids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	self->inline_jobs = g_get_num_processors() <= 1;
}

static gchar *
meshsync_file_writer_extended_path_for(const gchar *path)
{
	g_autofree gchar *base = g_path_get_basename(path);
	const gchar *dot = strrchr(base, '.');
	gsize stem = dot != NULL ? (gsize)(dot - base) : strlen(base);
	g_autofree gchar *dir = g_path_get_dirname(path);
	g_autofree gchar *name = NULL;
	g_autofree gchar *prefix = g_strndup(base, stem);

	/* <name without the final extension>-extended<extension, or .yaml when there is none> */
	name = g_strconcat(prefix, "-extended", dot != NULL ? dot : ".yaml", NULL);
	if (g_strcmp0(dir, ".") == 0 && !g_str_has_prefix(path, "./"))
		return g_steal_pointer(&name);
	return g_build_filename(dir, name, NULL);
}

/**
 * meshsync_file_writer_make_default_path:
 * @directory: (nullable): where the snapshot goes; %NULL for the working directory
 * @error: return location for a #GError
 *
 * Chooses the snapshot name upstream MeshSync chooses when none is given:
 * `meshery-cluster-snapshot-<YYYYMMDD>-<NN>.yaml` with today's local date and the first
 * number from 00 to 1023 not taken yet.
 *
 * Returns: (transfer full): the path, or %NULL when every number is taken
 */
gchar *
meshsync_file_writer_make_default_path(const gchar *directory, GError **error)
{
	g_autoptr(GDateTime) now = g_date_time_new_now_local();
	g_autofree gchar *date = g_date_time_format(now, "%Y%m%d");

	for (guint n = 0; n < 1024; n++) {
		g_autofree gchar *name =
		        g_strdup_printf("meshery-cluster-snapshot-%s-%02u.yaml", date, n);
		g_autofree gchar *path = directory != NULL ? g_build_filename(directory, name, NULL)
		                                           : g_strdup(name);

		if (!g_file_test(path, G_FILE_TEST_EXISTS))
			return g_steal_pointer(&path);
	}
	g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_WRITE,
	            _("no unique snapshot name available for %s in %s"), date,
	            directory != NULL ? directory : _("the working directory"));
	return NULL;
}

/**
 * meshsync_file_writer_new:
 * @path: (nullable): the snapshot file; %NULL chooses the default name in the working
 *   directory (see [func@MeshSync.FileWriter.make_default_path])
 * @extended: whether to write every event to the extended file as well
 * @error: return location for a #GError
 *
 * Opens (creating or appending to) the snapshot file and, when asked, the extended file.
 *
 * Returns: (transfer full): a new writer, or %NULL if a file cannot be opened
 */
MeshSyncFileWriter *
meshsync_file_writer_new(const gchar *path, gboolean extended, GError **error)
{
	g_autoptr(MeshSyncFileWriter) self = g_object_new(MESHSYNC_TYPE_FILE_WRITER, NULL);
	g_autofree gchar *chosen = NULL;

	if (path == NULL || *path == '\0') {
		chosen = meshsync_file_writer_make_default_path(NULL, error);
		if (chosen == NULL)
			return NULL;
		path = chosen;
	}
	/* Upstream opens the extended file first and writes it first. */
	if (extended) {
		g_autofree gchar *extended_path = meshsync_file_writer_extended_path_for(path);

		if (!meshsync_snapshot_file_open(&self->extended, extended_path, NULL, error))
			return NULL;
	}
	if (!meshsync_snapshot_file_open(&self->main, path, self->seen_uids, error))
		return NULL;
	return g_steal_pointer(&self);
}

/**
 * meshsync_file_writer_get_path:
 * @self: a #MeshSyncFileWriter
 *
 * Gets the path of the snapshot file.
 *
 * Returns: the path
 */
const gchar *
meshsync_file_writer_get_path(MeshSyncFileWriter *self)
{
	g_return_val_if_fail(MESHSYNC_IS_FILE_WRITER(self), NULL);
	return self->main.path;
}

/**
 * meshsync_file_writer_get_extended_path:
 * @self: a #MeshSyncFileWriter
 *
 * Gets the path of the extended file, which holds every event.
 *
 * Returns: (nullable): the path, or %NULL when the extended file is not written
 */
const gchar *
meshsync_file_writer_get_extended_path(MeshSyncFileWriter *self)
{
	g_return_val_if_fail(MESHSYNC_IS_FILE_WRITER(self), NULL);
	return self->extended.path;
}

/**
 * meshsync_file_writer_get_n_documents:
 * @self: a #MeshSyncFileWriter
 *
 * Counts the documents written to the snapshot file by this writer: one per object.
 *
 * Returns: the count
 */
guint
meshsync_file_writer_get_n_documents(MeshSyncFileWriter *self)
{
	g_return_val_if_fail(MESHSYNC_IS_FILE_WRITER(self), 0);
	return self->n_documents;
}

static gboolean
meshsync_snapshot_file_remove_if_unused(MeshSyncSnapshotFile *file)
{
	GStatBuf st;

	if (file->path == NULL || file->stream != NULL || !file->created)
		return FALSE;
	if (g_stat(file->path, &st) != 0 || st.st_size != 0)
		return FALSE;
	if (g_unlink(file->path) != 0) {
		gint saved = errno;

		g_warning("cannot remove the empty snapshot %s: %s", file->path, g_strerror(saved));
		return FALSE;
	}
	file->created = FALSE;
	return TRUE;
}

/**
 * meshsync_file_writer_remove_if_unused:
 * @self: a closed #MeshSyncFileWriter
 *
 * Removes the snapshot file, and the extended file, when this writer created them and they
 * are still empty, so that a run that failed before writing anything leaves no empty snapshot
 * behind to be mistaken for an empty cluster. A file that existed before is never removed.
 * Call it after the writer is closed ([method@MeshSync.Writer.close]).
 *
 * Returns: %TRUE if the snapshot file was removed
 */
gboolean
meshsync_file_writer_remove_if_unused(MeshSyncFileWriter *self)
{
	g_return_val_if_fail(MESHSYNC_IS_FILE_WRITER(self), FALSE);
	meshsync_snapshot_file_remove_if_unused(&self->extended);
	return meshsync_snapshot_file_remove_if_unused(&self->main);
}
