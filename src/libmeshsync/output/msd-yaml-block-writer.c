/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncOutput"

#include "config.h"

#include <string.h>

#include "output/msd-yaml-block-writer.h"
#include "util/msd-bytes16.h"
#include "util/msd-json-string.h"

/*
 * The rules here are libyaml's emitter's (0.2.5), restricted to block collections and ASCII:
 * where a line is broken and indented, which indicator needs a space before it, how a scalar's
 * style is chosen from what it contains, and where a long scalar folds (at a single space past
 * column 80). Flow style only ever appears as an empty "{}" or "[]". The unit test
 * snapshot-yaml and the snapshot-yaml fuzz target compare every document with libyaml's.
 */

#define BEST_INDENT 2
#define BEST_WIDTH  80
/* libyaml writes a longer key as "? key" */
#define SIMPLE_KEY_MAX 128

enum {
	NONE,
	MAPPING,
	SEQUENCE
};

typedef struct {
	guint8 kind;
	gboolean value_next; /* a mapping's: its next node is a value, not a key */
	gint saved_indent;
} Frame;

/* What the analysis of a scalar needs to know of a byte. */
enum {
	C_PLAIN = 0, /* no bearing on the style */
	C_SPACE,
	C_BREAK,
	C_COLON,
	C_HASH,
	C_OTHER, /* an indicator only as the first character */
	C_UNSUPPORTED,
};

static guint8 byte_class[256];

static void
init_classes_once(void)
{
	static gsize done = 0;

	if (g_once_init_enter(&done)) {
		for (guint c = 0; c < 256; c++) {
			if (c == '\n')
				byte_class[c] = C_BREAK;
			else if (c < 0x20 || c > 0x7e)
				byte_class[c] = C_UNSUPPORTED;
			else if (c == ' ')
				byte_class[c] = C_SPACE;
			else if (c == ':')
				byte_class[c] = C_COLON;
			else if (c == '#')
				byte_class[c] = C_HASH;
			else if (strchr(",[]{}&*!|>'\"%@`?-", (gint)c) != NULL)
				byte_class[c] = C_OTHER;
			else
				byte_class[c] = C_PLAIN;
		}
		g_once_init_leave(&done, 1);
	}
}

/* The stops of each scan: what the analysis or a writer has to look at one byte at a time. */
typedef enum {
	STOP_ANALYZE, /* a space, ':', '#', or a byte outside printable ASCII (a break among them)
	               */
	STOP_SINGLE,  /* a space, a break or a single quote */
	STOP_DOUBLE,  /* a space, a break, a double quote or a backslash */
} Stops;

static inline __attribute__((always_inline)) gboolean
is_stop(guchar c, Stops stops)
{
	switch (stops) {
	case STOP_ANALYZE:
		return byte_class[c] != C_PLAIN && byte_class[c] != C_OTHER;
	case STOP_SINGLE:
		return c == ' ' || c == '\n' || c == '\'';
	case STOP_DOUBLE:
	default:
		return c == ' ' || c == '\n' || c == '"' || c == '\\';
	}
}

static inline __attribute__((always_inline)) MsdBytes16
stop_lanes(MsdBytes16 x, Stops stops)
{
	switch (stops) {
	case STOP_ANALYZE:
		return (MsdBytes16)(((MsdBytes16)(x - 0x20) >= 0x5f) | (x == ' ') | (x == ':') |
		                    (x == '#'));
	case STOP_SINGLE:
		return (MsdBytes16)((x == ' ') | (x == '\n') | (x == '\''));
	case STOP_DOUBLE:
	default:
		return (MsdBytes16)((x == ' ') | (x == '\n') | (x == '"') | (x == '\\'));
	}
}

/* The first stop at or after @i, or @n. */
static inline __attribute__((always_inline)) gsize
scan(const guchar *s, gsize i, gsize n, Stops stops)
{
	while (n - i >= 16) {
		MsdBytes16 x;
		guint lane;

		memcpy(&x, s + i, sizeof(x));
		lane = msd_bytes16_first_lane(stop_lanes(x, stops));
		i += lane;
		if (lane < 16)
			return i;
	}
	while (i < n && !is_stop(s[i], stops))
		i++;
	return i;
}

typedef struct {
	gboolean multiline;
	gboolean block_plain_allowed;
	gboolean single_quoted_allowed;
	gboolean block_allowed;
} Analysis;

static inline gboolean
blankz_at(const guchar *s, gsize n, gsize i)
{
	return i >= n || s[i] == ' ' || s[i] == '\n';
}

/* libyaml's yaml_emitter_analyze_scalar() for block context; FALSE for a byte outside the
 * supported set. */
static gboolean
analyze(const guchar *s, gsize n, Analysis *a)
{
	gboolean indicators = FALSE;
	gboolean line_breaks = FALSE;
	gboolean edge_space = FALSE; /* leading or trailing, space or break */
	gboolean trailing_space = FALSE;
	gboolean break_space = FALSE;
	gboolean space_break = FALSE;
	gboolean previous_space = FALSE;
	gboolean previous_break = FALSE;

	if (n == 0) {
		a->multiline = FALSE;
		a->block_plain_allowed = TRUE;
		a->single_quoted_allowed = TRUE;
		a->block_allowed = FALSE;
		return TRUE;
	}
	if (n >= 3 && ((s[0] == '-' && s[1] == '-' && s[2] == '-') ||
	               (s[0] == '.' && s[1] == '.' && s[2] == '.')))
		indicators = TRUE;
	switch (s[0]) {
	case '?':
	case ':':
	case '-':
		if (blankz_at(s, n, 1))
			indicators = TRUE;
		break;
	default:
		if (byte_class[s[0]] == C_OTHER || byte_class[s[0]] == C_HASH)
			indicators = TRUE;
		break;
	}
	for (gsize i = 0; i < n; i++) {
		gsize stop = scan(s, i, n, STOP_ANALYZE);

		/* what lies between the stops only ends a run of spaces or breaks */
		if (stop > i) {
			previous_space = FALSE;
			previous_break = FALSE;
			i = stop;
			if (i == n)
				break;
		}
		switch (byte_class[s[i]]) {
		case C_COLON:
			if (i > 0 && blankz_at(s, n, i + 1))
				indicators = TRUE;
			previous_space = FALSE;
			previous_break = FALSE;
			break;
		case C_HASH:
			if (i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\n'))
				indicators = TRUE;
			previous_space = FALSE;
			previous_break = FALSE;
			break;
		case C_SPACE:
			if (i == 0 || i == n - 1)
				edge_space = TRUE;
			if (i == n - 1)
				trailing_space = TRUE;
			if (previous_break)
				break_space = TRUE;
			previous_space = TRUE;
			previous_break = FALSE;
			break;
		case C_BREAK:
			line_breaks = TRUE;
			if (i == 0 || i == n - 1)
				edge_space = TRUE;
			if (previous_space)
				space_break = TRUE;
			previous_space = FALSE;
			previous_break = TRUE;
			break;
		default:
			return FALSE;
		}
	}
	a->multiline = line_breaks;
	a->block_plain_allowed =
	        !(edge_space || break_space || space_break || line_breaks || indicators);
	a->single_quoted_allowed = !(break_space || space_break);
	a->block_allowed = !(trailing_space || space_break);
	return TRUE;
}

static inline void
put(MsdYamlBlockWriter *self, gchar c)
{
	g_string_append_c(self->out, c);
	self->column++;
}

static inline void
put_run(MsdYamlBlockWriter *self, const gchar *p, gsize n)
{
	msd_json_string_append_raw(self->out, p, n);
	self->column += (gint)n;
}

static inline void
put_break(MsdYamlBlockWriter *self)
{
	g_string_append_c(self->out, '\n');
	self->column = 0;
}

static void
write_indent(MsdYamlBlockWriter *self)
{
	gint indent = self->indent >= 0 ? self->indent : 0;

	if (!self->indention || self->column > indent ||
	    (self->column == indent && !self->whitespace))
		put_break(self);
	if (self->column < indent) {
		gsize pad = (gsize)(indent - self->column);
		gsize at = self->out->len;

		g_string_set_size(self->out, at + pad);
		memset(self->out->str + at, ' ', pad);
		self->column = indent;
	}
	self->whitespace = TRUE;
	self->indention = TRUE;
}

static void
write_indicator(MsdYamlBlockWriter *self,
                const gchar *indicator,
                gboolean need_whitespace,
                gboolean is_whitespace,
                gboolean is_indention)
{
	if (need_whitespace && !self->whitespace)
		put(self, ' ');
	put_run(self, indicator, strlen(indicator));
	self->whitespace = is_whitespace;
	self->indention = self->indention && is_indention;
}

/* Plain: folds at a single space past the width; never holds a line break. */
static void
write_plain(MsdYamlBlockWriter *self, const gchar *s, gsize n, gboolean allow_breaks)
{
	gboolean spaces = FALSE;
	gsize i = 0;

	if (!self->whitespace && n > 0)
		put(self, ' ');
	while (i < n) {
		if (s[i] == ' ') {
			if (allow_breaks && !spaces && self->column > BEST_WIDTH &&
			    (i + 1 >= n || s[i + 1] != ' '))
				write_indent(self);
			else
				put(self, ' ');
			spaces = TRUE;
			i++;
		} else {
			const gchar *space = memchr(s + i, ' ', n - i);
			gsize end = space != NULL ? (gsize)(space - s) : n;

			put_run(self, s + i, end - i);
			self->indention = FALSE;
			spaces = FALSE;
			i = end;
		}
	}
	self->whitespace = FALSE;
	self->indention = FALSE;
}

static void
write_single_quoted(MsdYamlBlockWriter *self, const gchar *s, gsize n, gboolean allow_breaks)
{
	gboolean spaces = FALSE;
	gboolean breaks = FALSE;
	gsize i = 0;

	write_indicator(self, "'", TRUE, FALSE, FALSE);
	while (i < n) {
		gchar c = s[i];

		if (c == ' ') {
			if (allow_breaks && !spaces && self->column > BEST_WIDTH && i != 0 &&
			    i != n - 1 && s[i + 1] != ' ')
				write_indent(self);
			else
				put(self, ' ');
			spaces = TRUE;
			i++;
		} else if (c == '\n') {
			if (!breaks)
				put_break(self);
			put_break(self);
			self->indention = TRUE;
			breaks = TRUE;
			i++;
		} else {
			gsize end = i + 1;

			if (breaks)
				write_indent(self);
			if (c == '\'')
				put(self, '\'');
			else
				end = scan((const guchar *)s, end, n, STOP_SINGLE);
			put_run(self, s + i, end - i);
			self->indention = FALSE;
			spaces = FALSE;
			breaks = FALSE;
			i = end;
		}
	}
	if (breaks)
		write_indent(self);
	write_indicator(self, "'", FALSE, FALSE, FALSE);
	self->whitespace = FALSE;
	self->indention = FALSE;
}

static void
write_double_quoted(MsdYamlBlockWriter *self, const gchar *s, gsize n, gboolean allow_breaks)
{
	gboolean spaces = FALSE;
	gsize i = 0;

	write_indicator(self, "\"", TRUE, FALSE, FALSE);
	while (i < n) {
		gchar c = s[i];

		if (c == '\n' || c == '"' || c == '\\') {
			put(self, '\\');
			put(self, c == '\n' ? 'n' : c);
			spaces = FALSE;
			i++;
		} else if (c == ' ') {
			if (allow_breaks && !spaces && self->column > BEST_WIDTH && i != 0 &&
			    i != n - 1) {
				write_indent(self);
				if (s[i + 1] == ' ')
					put(self, '\\');
			} else {
				put(self, ' ');
			}
			spaces = TRUE;
			i++;
		} else {
			gsize end = scan((const guchar *)s, i + 1, n, STOP_DOUBLE);

			put_run(self, s + i, end - i);
			spaces = FALSE;
			i = end;
		}
	}
	write_indicator(self, "\"", FALSE, FALSE, FALSE);
	self->whitespace = FALSE;
	self->indention = FALSE;
}

/* FALSE for text ending in two line breaks (or only one): libyaml keeps them with "|+" and
 * ends the stream with "...", which this writer leaves to it. */
static gboolean
write_literal(MsdYamlBlockWriter *self, const gchar *s, gsize n)
{
	gboolean breaks = TRUE;
	gsize i = 0;

	if (s[n - 1] == '\n' && (n == 1 || s[n - 2] == '\n'))
		return FALSE;
	write_indicator(self, "|", TRUE, FALSE, FALSE);
	if (s[0] == ' ' || s[0] == '\n')
		write_indicator(self, "2", FALSE, FALSE, FALSE);
	if (s[n - 1] != '\n')
		write_indicator(self, "-", FALSE, FALSE, FALSE);
	put_break(self);
	self->indention = TRUE;
	self->whitespace = TRUE;
	while (i < n) {
		if (s[i] == '\n') {
			put_break(self);
			self->indention = TRUE;
			breaks = TRUE;
			i++;
		} else {
			const gchar *nl = memchr(s + i, '\n', n - i);
			gsize end = nl != NULL ? (gsize)(nl - s) : n;

			if (breaks)
				write_indent(self);
			put_run(self, s + i, end - i);
			self->indention = FALSE;
			breaks = FALSE;
			i = end;
		}
	}
	return TRUE;
}

GArray *
msd_yaml_block_writer_frames_new(void)
{
	return g_array_new(FALSE, FALSE, sizeof(Frame));
}

void
msd_yaml_block_writer_init(MsdYamlBlockWriter *self, GString *out, GArray *frames)
{
	init_classes_once();
	memset(self, 0, sizeof(*self));
	self->out = out;
	self->indent = -1;
	self->whitespace = TRUE;
	self->indention = TRUE;
	g_array_set_size(frames, 0);
	self->frames = frames;
}

void
msd_yaml_block_writer_clear(MsdYamlBlockWriter *self)
{
	memset(self, 0, sizeof(*self));
}

static Frame *
top_frame(MsdYamlBlockWriter *self)
{
	if (self->frames->len == 0)
		return NULL;
	return &g_array_index(self->frames, Frame, self->frames->len - 1);
}

/* A started collection turns out to have content: it becomes a block collection. */
static void
open_pending(MsdYamlBlockWriter *self)
{
	Frame frame = {self->pending, FALSE, self->indent};
	gboolean indentless =
	        self->pending == SEQUENCE && self->pending_in_mapping && !self->indention;

	self->pending = NONE;
	if (self->indent < 0)
		self->indent = 0;
	else if (!indentless)
		self->indent += BEST_INDENT;
	g_array_append_val(self->frames, frame);
}

/* What the enclosing collection writes before a node: "-" for an item, the line of a key,
 * ":" after a key. FALSE for a node libyaml would not write this way. */
static gboolean
begin_node(MsdYamlBlockWriter *self, gboolean scalar, gboolean *simple_key, gboolean *in_mapping)
{
	Frame *top;

	if (self->pending != NONE)
		open_pending(self);
	top = top_frame(self);
	*simple_key = FALSE;
	*in_mapping = FALSE;
	if (top == NULL)
		return !scalar; /* a root scalar: libyaml may mark the document open-ended */
	if (top->kind == SEQUENCE) {
		write_indent(self);
		write_indicator(self, "-", TRUE, FALSE, TRUE);
		return TRUE;
	}
	*in_mapping = TRUE;
	if (!top->value_next) {
		top->value_next = TRUE;
		if (!scalar)
			return FALSE; /* a collection as a key */
		write_indent(self);
		*simple_key = TRUE;
		return TRUE;
	}
	top->value_next = FALSE;
	write_indicator(self, ":", FALSE, FALSE, FALSE);
	return TRUE;
}

gboolean
msd_yaml_block_writer_scalar(MsdYamlBlockWriter *self,
                             const gchar *text,
                             gsize length,
                             MsdYamlBlockStyle style)
{
	Analysis a;
	gboolean simple_key;
	gboolean in_mapping;
	gint saved_indent;
	gboolean ok = TRUE;

	if (!analyze((const guchar *)text, length, &a))
		return FALSE;
	if (!begin_node(self, TRUE, &simple_key, &in_mapping))
		return FALSE;
	if (simple_key && (a.multiline || length > SIMPLE_KEY_MAX))
		return FALSE;

	saved_indent = self->indent;
	self->indent = self->indent < 0 ? BEST_INDENT : self->indent + BEST_INDENT;
	if (style == MSD_YAML_BLOCK_LITERAL && (!a.block_allowed || simple_key))
		style = MSD_YAML_BLOCK_DOUBLE;
	if (style == MSD_YAML_BLOCK_LITERAL) {
		ok = write_literal(self, text, length);
	} else if (style == MSD_YAML_BLOCK_DOUBLE) {
		write_double_quoted(self, text, length, !simple_key);
	} else if (a.block_plain_allowed && !(length == 0 && simple_key)) {
		write_plain(self, text, length, !simple_key);
	} else if (a.single_quoted_allowed) {
		write_single_quoted(self, text, length, !simple_key);
	} else {
		write_double_quoted(self, text, length, !simple_key);
	}
	self->indent = saved_indent;
	return ok;
}

static gboolean
collection_start(MsdYamlBlockWriter *self, guint8 kind)
{
	gboolean simple_key;
	gboolean in_mapping;

	if (!begin_node(self, FALSE, &simple_key, &in_mapping))
		return FALSE;
	self->pending = kind;
	self->pending_in_mapping = in_mapping;
	return TRUE;
}

static gboolean
collection_end(MsdYamlBlockWriter *self, guint8 kind)
{
	Frame *top;

	if (self->pending == kind) {
		self->pending = NONE;
		write_indicator(self, kind == MAPPING ? "{" : "[", TRUE, TRUE, FALSE);
		write_indicator(self, kind == MAPPING ? "}" : "]", FALSE, FALSE, FALSE);
		return TRUE;
	}
	top = top_frame(self);
	if (self->pending != NONE || top == NULL || top->kind != kind ||
	    (kind == MAPPING && top->value_next))
		return FALSE;
	self->indent = top->saved_indent;
	g_array_set_size(self->frames, self->frames->len - 1);
	return TRUE;
}

gboolean
msd_yaml_block_writer_mapping_start(MsdYamlBlockWriter *self)
{
	return collection_start(self, MAPPING);
}

gboolean
msd_yaml_block_writer_mapping_end(MsdYamlBlockWriter *self)
{
	return collection_end(self, MAPPING);
}

gboolean
msd_yaml_block_writer_sequence_start(MsdYamlBlockWriter *self)
{
	return collection_start(self, SEQUENCE);
}

gboolean
msd_yaml_block_writer_sequence_end(MsdYamlBlockWriter *self)
{
	return collection_end(self, SEQUENCE);
}

gboolean
msd_yaml_block_writer_finish(MsdYamlBlockWriter *self)
{
	if (self->pending != NONE || self->frames->len > 0)
		return FALSE;
	write_indent(self);
	return TRUE;
}
