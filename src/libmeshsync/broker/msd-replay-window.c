/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncBroker"

#include "config.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "broker/msd-replay-window.h"

/*
 * The messages live in chunks mapped straight from the kernel, one after the other, each
 * message a small header, the subject with its NUL, then the payload. A chunk goes back to
 * the kernel (munmap) as soon as confirmations have moved past its last message, so an outage
 * that filled the window returns its memory once the broker confirmed the re-send; through
 * malloc it would stay in the heap, where glibc's growing mmap threshold puts blocks of this
 * size after the first ones were freed. Up to eight chunks are kept for reuse, so the steady
 * state (a confirmation every few hundred milliseconds, a few MiB in between even at tens of
 * thousands of events a second) maps nothing and faults no fresh page in.
 */

#define MSD_REPLAY_CHUNK_SIZE   (1024 * 1024)
#define MSD_REPLAY_SPARE_CHUNKS 8
#define MSD_REPLAY_ALIGN(n)     (((n) + 7) & ~(gsize)7)

typedef struct _MsdReplayChunk MsdReplayChunk;

struct _MsdReplayChunk {
	MsdReplayChunk *next;
	gsize mapped;  /* the whole mapping, this header included */
	gsize used;    /* bytes of messages after the header */
	guint64 first; /* the sequence number of its first message */
	guint64 n;     /* its messages */
	gsize held;    /* their subjects and payloads */
};

/* Keeps the messages 16-byte aligned whatever the header's size. */
#define MSD_REPLAY_CHUNK_HEADER MSD_REPLAY_ALIGN(sizeof(MsdReplayChunk) + 8)

typedef struct {
	guint32 subject_len;
	guint32 data_len;
} MsdReplayRecord;

struct _MsdReplayWindow {
	MsdReplayChunk *head_chunk; /* (nullable): holds the oldest message */
	gsize head_offset;
	gsize head_dropped;           /* subjects and payloads confirmed from the head chunk */
	MsdReplayChunk *cursor_chunk; /* (nullable): holds the first unsent message */
	gsize cursor_offset;
	MsdReplayChunk *tail_chunk; /* (nullable): the one appended to */
	guint64 head_seq;           /* of the oldest message; next_seq when empty */
	guint64 cursor_seq;         /* of the first unsent message; next_seq when none */
	guint64 next_seq;
	gsize bytes; /* subjects and payloads held */
	gsize unsent_bytes;
	MsdReplayChunk *spare; /* (nullable): linked through next */
	guint n_spare;
	gsize mapped;
};

static guint8 *
msd_replay_chunk_data(MsdReplayChunk *chunk)
{
	return (guint8 *)chunk + MSD_REPLAY_CHUNK_HEADER;
}

static gsize
msd_replay_chunk_capacity(MsdReplayChunk *chunk)
{
	return chunk->mapped - MSD_REPLAY_CHUNK_HEADER;
}

static gsize
msd_replay_record_size(gsize subject_len, gsize data_len)
{
	return MSD_REPLAY_ALIGN(sizeof(MsdReplayRecord) + subject_len + 1 + data_len);
}

static MsdReplayChunk *
msd_replay_chunk_new(MsdReplayWindow *self, gsize record_size)
{
	gsize need = MSD_REPLAY_CHUNK_HEADER + record_size;
	gsize page = (gsize)sysconf(_SC_PAGESIZE);
	MsdReplayChunk *chunk;
	gsize mapped;
	void *mem;

	if (need <= MSD_REPLAY_CHUNK_SIZE && self->spare != NULL) {
		chunk = self->spare;
		self->spare = chunk->next;
		self->n_spare--;
		chunk->next = NULL;
		chunk->used = 0;
		chunk->first = self->next_seq;
		chunk->n = 0;
		chunk->held = 0;
		return chunk;
	}
	mapped = MAX((gsize)MSD_REPLAY_CHUNK_SIZE, (need + page - 1) / page * page);
	mem = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		g_error("replay window: cannot map %" G_GSIZE_FORMAT " bytes", mapped);
	chunk = mem;
	chunk->next = NULL;
	chunk->mapped = mapped;
	chunk->used = 0;
	chunk->first = self->next_seq;
	chunk->n = 0;
	chunk->held = 0;
	self->mapped += mapped;
	return chunk;
}

static void
msd_replay_chunk_release(MsdReplayWindow *self, MsdReplayChunk *chunk)
{
	if (chunk->mapped == MSD_REPLAY_CHUNK_SIZE && self->n_spare < MSD_REPLAY_SPARE_CHUNKS) {
		chunk->next = self->spare;
		self->spare = chunk;
		self->n_spare++;
		return;
	}
	self->mapped -= chunk->mapped;
	munmap(chunk, chunk->mapped);
}

MsdReplayWindow *
msd_replay_window_new(void)
{
	MsdReplayWindow *self = g_new0(MsdReplayWindow, 1);

	self->head_seq = self->cursor_seq = self->next_seq = 1;
	return self;
}

void
msd_replay_window_free(MsdReplayWindow *self)
{
	if (self == NULL)
		return;
	msd_replay_window_clear(self);
	while (self->spare != NULL) {
		MsdReplayChunk *next = self->spare->next;

		self->mapped -= self->spare->mapped;
		munmap(self->spare, self->spare->mapped);
		self->spare = next;
	}
	g_free(self);
}

/* Drops every message, sent or not; the numbering goes on. */
void
msd_replay_window_clear(MsdReplayWindow *self)
{
	MsdReplayChunk *chunk = self->head_chunk;

	while (chunk != NULL) {
		MsdReplayChunk *next = chunk->next;

		msd_replay_chunk_release(self, chunk);
		chunk = next;
	}
	self->head_chunk = self->cursor_chunk = self->tail_chunk = NULL;
	self->head_offset = self->cursor_offset = 0;
	self->head_dropped = 0;
	self->head_seq = self->cursor_seq = self->next_seq;
	self->bytes = self->unsent_bytes = 0;
}

/* Returns the sequence number of the message. */
guint64
msd_replay_window_append(MsdReplayWindow *self, const gchar *subject, gconstpointer data, gsize len)
{
	MsdReplayPart part = {data, len};

	return msd_replay_window_append_parts(self, subject, &part, 1);
}

guint64
msd_replay_window_append_parts(MsdReplayWindow *self,
                               const gchar *subject,
                               const MsdReplayPart *parts,
                               guint n_parts)
{
	gsize subject_len = strlen(subject);
	gsize len = 0;
	gsize size;
	MsdReplayChunk *tail = self->tail_chunk;
	MsdReplayRecord *record;
	guint8 *p;

	for (guint i = 0; i < n_parts; i++)
		len += parts[i].len;
	g_return_val_if_fail(len <= G_MAXUINT32 && subject_len <= G_MAXUINT32, 0);
	size = msd_replay_record_size(subject_len, len);

	if (tail == NULL || msd_replay_chunk_capacity(tail) - tail->used < size) {
		MsdReplayChunk *chunk = msd_replay_chunk_new(self, size);

		if (tail != NULL)
			tail->next = chunk;
		else
			self->head_chunk = self->cursor_chunk = chunk;
		self->tail_chunk = tail = chunk;
	}
	p = msd_replay_chunk_data(tail) + tail->used;
	record = (MsdReplayRecord *)p;
	record->subject_len = (guint32)subject_len;
	record->data_len = (guint32)len;
	p += sizeof(MsdReplayRecord);
	memcpy(p, subject, subject_len + 1);
	p += subject_len + 1;
	for (guint i = 0; i < n_parts; i++) {
		memcpy(p, parts[i].data, parts[i].len);
		p += parts[i].len;
	}
	tail->used += size;
	tail->n++;
	tail->held += subject_len + len;
	self->bytes += subject_len + len;
	self->unsent_bytes += subject_len + len;
	return self->next_seq++;
}

/* A position at the end of a chunk that has a successor means the successor's start. */
static void
msd_replay_normalize(MsdReplayChunk **chunk, gsize *offset)
{
	if (*chunk != NULL && *offset == (*chunk)->used && (*chunk)->next != NULL) {
		*chunk = (*chunk)->next;
		*offset = 0;
	}
}

static const MsdReplayRecord *
msd_replay_record_at(MsdReplayChunk *chunk, gsize offset)
{
	return (const MsdReplayRecord *)(msd_replay_chunk_data(chunk) + offset);
}

/* The first message not sent on the current connection. */
gboolean
msd_replay_window_peek_unsent(MsdReplayWindow *self,
                              const gchar **subject,
                              gconstpointer *data,
                              gsize *len)
{
	const MsdReplayRecord *record;
	const gchar *p;

	if (self->cursor_seq == self->next_seq)
		return FALSE;
	msd_replay_normalize(&self->cursor_chunk, &self->cursor_offset);
	record = msd_replay_record_at(self->cursor_chunk, self->cursor_offset);
	p = (const gchar *)(record + 1);
	*subject = p;
	*data = p + record->subject_len + 1;
	*len = record->data_len;
	return TRUE;
}

/* The message peek_unsent() gave was handed to the connection. */
void
msd_replay_window_mark_sent(MsdReplayWindow *self)
{
	const MsdReplayRecord *record;

	g_return_if_fail(self->cursor_seq < self->next_seq);
	msd_replay_normalize(&self->cursor_chunk, &self->cursor_offset);
	record = msd_replay_record_at(self->cursor_chunk, self->cursor_offset);
	self->cursor_offset += msd_replay_record_size(record->subject_len, record->data_len);
	self->unsent_bytes -= record->subject_len + record->data_len;
	self->cursor_seq++;
}

/* Every message held is to be sent again, from the oldest; returns how many had been sent. */
guint64
msd_replay_window_rewind(MsdReplayWindow *self)
{
	guint64 n = self->cursor_seq - self->head_seq;

	self->cursor_chunk = self->head_chunk;
	self->cursor_offset = self->head_offset;
	self->cursor_seq = self->head_seq;
	self->unsent_bytes = self->bytes;
	return n;
}

/* The head chunk goes, every message in it confirmed; a chunk follows it. */
static void
msd_replay_drop_head_chunk(MsdReplayWindow *self)
{
	MsdReplayChunk *done = self->head_chunk;

	self->bytes -= done->held - self->head_dropped;
	self->head_seq = done->first + done->n;
	self->head_chunk = done->next;
	self->head_offset = 0;
	self->head_dropped = 0;
	if (self->cursor_chunk == done) {
		self->cursor_chunk = done->next;
		self->cursor_offset = 0;
	}
	msd_replay_chunk_release(self, done);
}

/* Drops the messages up to @seq that were sent; unsent ones are never confirmed. */
void
msd_replay_window_confirm(MsdReplayWindow *self, guint64 seq)
{
	guint64 last = MIN(seq, self->cursor_seq - 1);

	while (self->head_seq <= last) {
		MsdReplayChunk *head = self->head_chunk;
		const MsdReplayRecord *record;
		gsize held;

		/* A chunk confirmed to its end goes whole: its records, written long ago, are
		 * not read again only to be stepped over. The tail chunk is never whole. */
		if (head->next != NULL && head->first + head->n - 1 <= last) {
			msd_replay_drop_head_chunk(self);
			continue;
		}
		record = msd_replay_record_at(head, self->head_offset);
		held = record->subject_len + record->data_len;
		self->head_offset += msd_replay_record_size(record->subject_len, record->data_len);
		self->head_dropped += held;
		self->bytes -= held;
		self->head_seq++;
	}
	if (self->head_seq != self->next_seq)
		return;
	/* Empty: keep one standard chunk to append to, from its start. */
	if (self->tail_chunk != NULL && self->tail_chunk->mapped != MSD_REPLAY_CHUNK_SIZE) {
		msd_replay_window_clear(self);
		return;
	}
	while (self->head_chunk != self->tail_chunk) {
		MsdReplayChunk *done = self->head_chunk;

		self->head_chunk = done->next;
		msd_replay_chunk_release(self, done);
	}
	if (self->tail_chunk != NULL) {
		self->tail_chunk->used = 0;
		self->tail_chunk->first = self->next_seq;
		self->tail_chunk->n = 0;
		self->tail_chunk->held = 0;
	}
	self->cursor_chunk = self->head_chunk;
	self->head_offset = self->cursor_offset = 0;
	self->head_dropped = 0;
}

guint64
msd_replay_window_get_last_sent(MsdReplayWindow *self)
{
	return self->cursor_seq - 1;
}

guint64
msd_replay_window_get_last_seq(MsdReplayWindow *self)
{
	return self->next_seq - 1;
}

guint64
msd_replay_window_get_n_messages(MsdReplayWindow *self)
{
	return self->next_seq - self->head_seq;
}

guint64
msd_replay_window_get_n_unsent(MsdReplayWindow *self)
{
	return self->next_seq - self->cursor_seq;
}

gsize
msd_replay_window_get_bytes(MsdReplayWindow *self)
{
	return self->bytes;
}

gsize
msd_replay_window_get_unsent_bytes(MsdReplayWindow *self)
{
	return self->unsent_bytes;
}

/* Memory held from the kernel, spare chunks included. */
gsize
msd_replay_window_get_mapped_bytes(MsdReplayWindow *self)
{
	return self->mapped;
}
