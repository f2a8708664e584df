/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncOutput"

#include "config.h"

#include <string.h>
#include <yaml.h>

#include "meshsync-error.h"
#include "output/msd-snapshot-emitter.h"
#include "output/msd-snapshot-yaml.h"
#include "output/msd-yaml-block-writer.h"
#include "util/msd-json-tokens.h"
#include "util/msd-i18n.h"

static gboolean
msd_snapshot_is_digit(gunichar c)
{
	return g_unichar_isdigit(c);
}

/* The key order of go-yaml v2 on two NUL-terminated code point strings. */
static gint
msd_snapshot_compare_ucs4(const gunichar *ar, const gunichar *br)
{
	glong i;

	for (i = 0; ar[i] != 0 && br[i] != 0; i++) {
		gboolean a_letter;
		gboolean b_letter;
		gint64 an = 0;
		gint64 bn = 0;
		glong ai;
		glong bi;

		if (ar[i] == br[i])
			continue;
		a_letter = g_unichar_isalpha(ar[i]);
		b_letter = g_unichar_isalpha(br[i]);
		if (a_letter && b_letter)
			return ar[i] < br[i] ? -1 : 1;
		if (a_letter || b_letter)
			return b_letter ? -1 : 1;
		/* Digits: a run of digits compares by value ("a2" before "a10"); a zero that
		 * continues an earlier non-zero run still counts. */
		if (ar[i] == '0' || br[i] == '0') {
			for (glong j = i - 1; j >= 0 && msd_snapshot_is_digit(ar[j]); j--) {
				if (ar[j] != '0') {
					an = 1;
					bn = 1;
					break;
				}
			}
		}
		/* go-yaml sums into an int and lets it wrap: unsigned sums wrap the same, without
		 * the undefined behaviour of a signed overflow, and compare the same once cast */
		for (ai = i; ar[ai] != 0 && msd_snapshot_is_digit(ar[ai]); ai++)
			an = (gint64)((guint64)an * 10 + (guint64)g_unichar_digit_value(ar[ai]));
		for (bi = i; br[bi] != 0 && msd_snapshot_is_digit(br[bi]); bi++)
			bn = (gint64)((guint64)bn * 10 + (guint64)g_unichar_digit_value(br[bi]));
		if (an != bn)
			return an < bn ? -1 : 1;
		if (ai != bi)
			return ai < bi ? -1 : 1;
		return ar[i] < br[i] ? -1 : 1;
	}
	if (ar[i] == 0 && br[i] == 0)
		return 0;
	return ar[i] == 0 ? -1 : 1;
}

gint
msd_snapshot_yaml_compare_keys(const gchar *a, const gchar *b)
{
	g_autofree gunichar *ar = g_utf8_to_ucs4_fast(a, -1, NULL);
	g_autofree gunichar *br = g_utf8_to_ucs4_fast(b, -1, NULL);

	return msd_snapshot_compare_ucs4(ar, br);
}

static gboolean
msd_snapshot_parse_digits(const gchar **p, guint min, guint max, guint *value)
{
	guint n = 0;
	guint v = 0;

	while (g_ascii_isdigit(**p) && n < max) {
		v = v * 10 + (guint)(**p - '0');
		(*p)++;
		n++;
	}
	*value = v;
	return n >= min && !g_ascii_isdigit(**p);
}

/* The timestamp forms go-yaml v2 recognises: 2006-1-2, optionally followed by T or t, a time
 * and a zone (Z or +07:00), or by a space and a time without a zone. */
static gboolean
msd_snapshot_is_timestamp(const gchar *s)
{
	const gchar *p = s;
	guint year;
	guint month;
	guint day;
	guint hour;
	guint minute;
	guint second;
	gchar separator;

	if (!msd_snapshot_parse_digits(&p, 4, 4, &year) || *p++ != '-')
		return FALSE;
	if (!msd_snapshot_parse_digits(&p, 1, 2, &month) || month < 1 || month > 12 || *p++ != '-')
		return FALSE;
	if (!msd_snapshot_parse_digits(&p, 1, 2, &day) || day < 1 || day > 31)
		return FALSE;
	if (*p == '\0')
		return TRUE;
	separator = *p++;
	if (separator != 'T' && separator != 't' && separator != ' ')
		return FALSE;
	if (!msd_snapshot_parse_digits(&p, 1, 2, &hour) || hour > 23 || *p++ != ':')
		return FALSE;
	if (!msd_snapshot_parse_digits(&p, 1, 2, &minute) || minute > 59 || *p++ != ':')
		return FALSE;
	if (!msd_snapshot_parse_digits(&p, 1, 2, &second) || second > 59)
		return FALSE;
	if (*p == '.') {
		p++;
		if (!g_ascii_isdigit(*p))
			return FALSE;
		while (g_ascii_isdigit(*p))
			p++;
	}
	if (separator == ' ')
		return *p == '\0';
	if (*p == 'Z')
		return p[1] == '\0';
	if (*p == '+' || *p == '-') {
		guint zone_hour;
		guint zone_minute;

		p++;
		if (!msd_snapshot_parse_digits(&p, 2, 2, &zone_hour) || *p++ != ':')
			return FALSE;
		return msd_snapshot_parse_digits(&p, 2, 2, &zone_minute) && *p == '\0';
	}
	return FALSE;
}

static gboolean
msd_snapshot_all_in(const gchar *s, const gchar *set)
{
	if (*s == '\0')
		return FALSE;
	for (; *s != '\0'; s++) {
		if (strchr(set, *s) == NULL)
			return FALSE;
	}
	return TRUE;
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static gboolean
msd_snapshot_is_yaml_float(const gchar *s)
{
	const gchar *p = s;
	gboolean mantissa = FALSE;

	if (*p == '+' || *p == '-')
		p++;
	if (*p == '.') {
		p++;
		if (!g_ascii_isdigit(*p))
			return FALSE;
		while (g_ascii_isdigit(*p))
			p++;
		mantissa = TRUE;
	} else if (g_ascii_isdigit(*p)) {
		while (g_ascii_isdigit(*p))
			p++;
		if (*p == '.') {
			p++;
			while (g_ascii_isdigit(*p))
				p++;
		}
		mantissa = TRUE;
	}
	if (!mantissa)
		return FALSE;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!g_ascii_isdigit(*p))
			return FALSE;
		while (g_ascii_isdigit(*p))
			p++;
	}
	return *p == '\0';
}

/* Integers as Go's ParseInt with base 0 reads them (after go-yaml drops underscores). */
static gboolean
msd_snapshot_is_go_int(const gchar *s)
{
	const gchar *p = s;

	if (*p == '+' || *p == '-')
		p++;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		return msd_snapshot_all_in(p + 2, "0123456789abcdefABCDEF");
	if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O'))
		return msd_snapshot_all_in(p + 2, "01234567");
	if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B'))
		return msd_snapshot_all_in(p + 2, "01");
	if (p[0] == '0' && p[1] != '\0')
		return msd_snapshot_all_in(p + 1, "01234567");
	return msd_snapshot_all_in(p, "0123456789");
}

/* 1:20, -3:25:45.5 and the like: YAML 1.1 sexagesimal numbers, which go-yaml v2 quotes. */
static gboolean
msd_snapshot_is_base60(const gchar *s)
{
	const gchar *p = s;
	guint groups = 0;

	if (*p == '+' || *p == '-')
		p++;
	if (!g_ascii_isdigit(*p))
		return FALSE;
	while (g_ascii_isdigit(*p) || *p == '_')
		p++;
	while (*p == ':') {
		p++;
		if (g_ascii_isdigit(p[0]) && g_ascii_isdigit(p[1])) {
			if (p[0] > '5')
				return FALSE;
			p += 2;
		} else if (g_ascii_isdigit(p[0])) {
			p += 1;
		} else {
			return FALSE;
		}
		groups++;
	}
	if (groups == 0)
		return FALSE;
	if (*p == '.') {
		p++;
		while (g_ascii_isdigit(*p) || *p == '_')
			p++;
	}
	return *p == '\0';
}

/* The longest word of msd_snapshot_yaml_plain_retypes(): "false", "-.inf" and the like. */
#define MSD_SNAPSHOT_LONGEST_WORD 5

gboolean
msd_snapshot_yaml_plain_retypes(const gchar *text)
{
	static const gchar *const words[] = {
	        "",      "~",     "null",  "Null", "NULL", "y",    "Y",     "yes",   "Yes",
	        "YES",   "on",    "On",    "ON",   "n",    "N",    "no",    "No",    "NO",
	        "off",   "Off",   "OFF",   "true", "True", "TRUE", "false", "False", "FALSE",
	        ".nan",  ".NaN",  ".NAN",  ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF",
	        "-.inf", "-.Inf", "-.INF", "<<",   NULL,
	};
	g_autofree gchar *plain = NULL;
	gchar first = text[0];

	/* every word starts with one of these, and every number form with a digit, a sign or a
	 * dot: most text is decided here */
	if (first != '\0' && strchr("~nNyYoOtTfF.+-<", first) == NULL && !g_ascii_isdigit(first))
		return FALSE;
	/* no word is longer than MSD_SNAPSHOT_LONGEST_WORD */
	if (strnlen(text, MSD_SNAPSHOT_LONGEST_WORD + 1) <= MSD_SNAPSHOT_LONGEST_WORD &&
	    g_strv_contains(words, text))
		return TRUE;
	if (!(g_ascii_isdigit(first) || first == '+' || first == '-' || first == '.'))
		return FALSE;
	if (msd_snapshot_is_base60(text))
		return TRUE;
	if (g_ascii_isdigit(first) && msd_snapshot_is_timestamp(text))
		return TRUE;
	plain = g_strdup(text);
	g_strdelimit(plain, "_", '\x01');
	{
		/* go-yaml removes every underscore before it tries the number forms. */
		gchar *w = plain;

		for (const gchar *r = plain; *r != '\0'; r++) {
			if (*r != '\x01')
				*w++ = *r;
		}
		*w = '\0';
	}
	return msd_snapshot_is_go_int(plain) || msd_snapshot_is_yaml_float(plain);
}

static gboolean
msd_snapshot_emit(MsdSnapshotEmitter *ctx, yaml_event_t *event)
{
	if (yaml_emitter_emit(&ctx->emitter, event))
		return TRUE;
	g_set_error(ctx->error, MESHSYNC_ERROR, MESHSYNC_ERROR_FAILED, _("YAML emitter: %s"),
	            ctx->emitter.problem != NULL ? ctx->emitter.problem : _("failed"));
	return FALSE;
}

/* The block writer's answer: FALSE means it left the document to libyaml. */
static gboolean
msd_snapshot_block(MsdSnapshotEmitter *ctx, gboolean ok)
{
	if (!ok)
		ctx->unsupported = TRUE;
	return ok;
}

gboolean
msd_snapshot_emitter_scalar(MsdSnapshotEmitter *ctx,
                            const gchar *text,
                            gsize length,
                            gboolean string)
{
	yaml_event_t event;
	yaml_scalar_style_t style = YAML_PLAIN_SCALAR_STYLE;

	if (string) {
		if (memchr(text, '\n', length) != NULL) {
			style = YAML_LITERAL_SCALAR_STYLE;
		} else if (length == 0 ||
		           (length <= MSD_SNAPSHOT_LONGEST_WORD &&
		            strchr("~nNyYoOtTfF<", text[0]) != NULL) ||
		           strchr(".+-", text[0]) != NULL || g_ascii_isdigit(text[0])) {
			/* text starting with a letter changes type only as one of the short
			 * words (numbers start with a digit, a sign or a dot); @text may be a span
			 * of the document: the checks want a C string */
			g_autofree gchar *copy = g_strndup(text, length);

			if (msd_snapshot_yaml_plain_retypes(copy))
				style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
		}
	}
	if (!ctx->reference) {
		MsdYamlBlockStyle block =
		        style == YAML_LITERAL_SCALAR_STYLE ? MSD_YAML_BLOCK_LITERAL
		        : style == YAML_PLAIN_SCALAR_STYLE ? MSD_YAML_BLOCK_PLAIN
		                                           : MSD_YAML_BLOCK_DOUBLE;

		return msd_snapshot_block(
		        ctx, msd_yaml_block_writer_scalar(&ctx->block, text, length, block));
	}
	/* A plain request falls back to single, then double quotes when the text needs it,
	 * which is the same choice go-yaml's port of this emitter makes. */
	yaml_scalar_event_initialize(&event, NULL, NULL, (yaml_char_t *)text, (int)length, 1, 1,
	                             style);
	return msd_snapshot_emit(ctx, &event);
}

gboolean
msd_snapshot_emitter_mapping_start(MsdSnapshotEmitter *ctx)
{
	yaml_event_t event;

	if (!ctx->reference)
		return msd_snapshot_block(ctx, msd_yaml_block_writer_mapping_start(&ctx->block));
	yaml_mapping_start_event_initialize(&event, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
	return msd_snapshot_emit(ctx, &event);
}

gboolean
msd_snapshot_emitter_mapping_end(MsdSnapshotEmitter *ctx)
{
	yaml_event_t event;

	if (!ctx->reference)
		return msd_snapshot_block(ctx, msd_yaml_block_writer_mapping_end(&ctx->block));
	yaml_mapping_end_event_initialize(&event);
	return msd_snapshot_emit(ctx, &event);
}

gboolean
msd_snapshot_emitter_sequence_start(MsdSnapshotEmitter *ctx)
{
	yaml_event_t event;

	if (!ctx->reference)
		return msd_snapshot_block(ctx, msd_yaml_block_writer_sequence_start(&ctx->block));
	yaml_sequence_start_event_initialize(&event, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
	return msd_snapshot_emit(ctx, &event);
}

gboolean
msd_snapshot_emitter_sequence_end(MsdSnapshotEmitter *ctx)
{
	yaml_event_t event;

	if (!ctx->reference)
		return msd_snapshot_block(ctx, msd_yaml_block_writer_sequence_end(&ctx->block));
	yaml_sequence_end_event_initialize(&event);
	return msd_snapshot_emit(ctx, &event);
}

typedef struct {
	const gchar *key; /* decoded: into the document, or @owned */
	gsize key_len;
	guint ucs4; /* offset of the key's code points in the context's ucs4 array */
	guint value;
	gchar *owned;
} MsdSnapshotMember;

static gint
msd_snapshot_member_compare(gconstpointer a, gconstpointer b, gpointer data)
{
	const MsdSnapshotMember *left = a;
	const MsdSnapshotMember *right = b;
	const gunichar *ucs4 = (const gunichar *)((GArray *)data)->data;

	return msd_snapshot_compare_ucs4(ucs4 + left->ucs4, ucs4 + right->ucs4);
}

static void
msd_snapshot_member_clear(gpointer data)
{
	MsdSnapshotMember *member = data;

	g_free(member->owned);
}

/* Decoded text of string token @index, up to its first NUL (as a C string would end). */
static const gchar *
msd_snapshot_string(const MsdJsonTokens *tokens, guint index, GString *scratch, gsize *length)
{
	const gchar *text = msd_json_tokens_string(tokens, (gint)index, scratch, length);

	if (!tokens->tokens[index].plain)
		*length = strlen(text);
	return text;
}

static gboolean
msd_snapshot_emit_mapping(MsdSnapshotEmitter *ctx, const MsdJsonTokens *tokens, guint index)
{
	const MsdJsonToken *object = &tokens->tokens[index];
	g_autoptr(GArray) members =
	        g_array_sized_new(FALSE, FALSE, sizeof(MsdSnapshotMember), (guint)object->size);
	guint child = index + 1;

	g_array_set_clear_func(members, msd_snapshot_member_clear);
	g_array_set_size(ctx->ucs4, 0);
	for (gint i = 0; i < object->size; i++) {
		MsdSnapshotMember member = {NULL, 0, ctx->ucs4->len, child + 1, NULL};
		const gchar *key =
		        msd_snapshot_string(tokens, child, ctx->scratch, &member.key_len);

		if (tokens->tokens[child].plain) {
			member.key = key;
			for (gsize k = 0; k < member.key_len; k++) {
				gunichar c = (guchar)key[k];
				g_array_append_val(ctx->ucs4, c);
			}
		} else {
			member.owned = g_strndup(key, member.key_len);
			member.key = member.owned;
			for (const gchar *p = member.key; *p != '\0'; p = g_utf8_next_char(p)) {
				gunichar c = g_utf8_get_char(p);
				g_array_append_val(ctx->ucs4, c);
			}
		}
		{
			gunichar end = 0;
			g_array_append_val(ctx->ucs4, end);
		}
		g_array_append_val(members, member);
		child = msd_json_tokens_skip(tokens, child + 1);
	}
	g_array_sort_with_data(members, msd_snapshot_member_compare, ctx->ucs4);

	if (!msd_snapshot_emitter_mapping_start(ctx))
		return FALSE;
	for (guint i = 0; i < members->len; i++) {
		MsdSnapshotMember *member = &g_array_index(members, MsdSnapshotMember, i);

		if (!msd_snapshot_emitter_scalar(ctx, member->key, member->key_len, TRUE))
			return FALSE;
		if (!msd_snapshot_emitter_json(ctx, tokens, member->value))
			return FALSE;
	}
	return msd_snapshot_emitter_mapping_end(ctx);
}

gboolean
msd_snapshot_emitter_json(MsdSnapshotEmitter *ctx, const MsdJsonTokens *tokens, guint index)
{
	const MsdJsonToken *token = &tokens->tokens[index];

	switch (token->type) {
	case MSD_JSON_OBJECT:
		return msd_snapshot_emit_mapping(ctx, tokens, index);
	case MSD_JSON_ARRAY: {
		guint child = index + 1;

		if (!msd_snapshot_emitter_sequence_start(ctx))
			return FALSE;
		for (gint i = 0; i < token->size; i++) {
			if (!msd_snapshot_emitter_json(ctx, tokens, child))
				return FALSE;
			child = msd_json_tokens_skip(tokens, child);
		}
		return msd_snapshot_emitter_sequence_end(ctx);
	}
	case MSD_JSON_STRING: {
		gsize length;
		const gchar *text = msd_snapshot_string(tokens, index, ctx->scratch, &length);

		return msd_snapshot_emitter_scalar(ctx, text, length, TRUE);
	}
	default: {
		gsize length;
		const gchar *raw = msd_json_tokens_raw(tokens, index, &length);

		return msd_snapshot_emitter_scalar(ctx, raw, length, FALSE);
	}
	}
}

static int
msd_snapshot_write_cb(void *data, unsigned char *buffer, size_t size)
{
	g_string_append_len(data, (const gchar *)buffer, (gssize)size);
	return 1;
}

MsdSnapshotBuffers *
msd_snapshot_buffers_new(void)
{
	MsdSnapshotBuffers *self = g_new0(MsdSnapshotBuffers, 1);

	self->scratch = g_string_new(NULL);
	self->ucs4 = g_array_new(FALSE, FALSE, sizeof(gunichar));
	self->frames = msd_yaml_block_writer_frames_new();
	self->decoded = g_string_new(NULL);
	return self;
}

void
msd_snapshot_buffers_free(MsdSnapshotBuffers *self)
{
	if (self == NULL)
		return;
	g_string_free(self->scratch, TRUE);
	g_array_unref(self->ucs4);
	g_array_unref(self->frames);
	g_string_free(self->decoded, TRUE);
	g_free(self);
}

gboolean
msd_snapshot_emitter_begin(MsdSnapshotEmitter *ctx,
                           GString *out,
                           gboolean reference,
                           MsdSnapshotBuffers *buffers,
                           GError **error)
{
	yaml_event_t event;

	memset(ctx, 0, sizeof(*ctx));
	ctx->out = out;
	ctx->start = out->len;
	ctx->error = error;
	ctx->reference = reference;
	ctx->scratch = buffers->scratch;
	ctx->ucs4 = buffers->ucs4;
	g_string_truncate(ctx->scratch, 0);
	g_array_set_size(ctx->ucs4, 0);
	if (!reference) {
		msd_yaml_block_writer_init(&ctx->block, out, buffers->frames);
		return TRUE;
	}
	if (!yaml_emitter_initialize(&ctx->emitter)) {
		g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_FAILED,
		            _("cannot initialise the YAML emitter"));
		return FALSE;
	}
	ctx->initialized = TRUE;
	yaml_emitter_set_output(&ctx->emitter, msd_snapshot_write_cb, out);
	yaml_emitter_set_unicode(&ctx->emitter, 1);

	yaml_stream_start_event_initialize(&event, YAML_UTF8_ENCODING);
	if (!msd_snapshot_emit(ctx, &event))
		return FALSE;
	yaml_document_start_event_initialize(&event, NULL, NULL, NULL, 1);
	return msd_snapshot_emit(ctx, &event);
}

gboolean
msd_snapshot_emitter_finish(MsdSnapshotEmitter *ctx)
{
	yaml_event_t event;

	if (!ctx->reference) {
		if (!msd_snapshot_block(ctx, msd_yaml_block_writer_finish(&ctx->block)))
			return FALSE;
		g_string_append(ctx->out, "---\n");
		ctx->finished = TRUE;
		return TRUE;
	}
	yaml_document_end_event_initialize(&event, 1);
	if (!msd_snapshot_emit(ctx, &event))
		return FALSE;
	yaml_stream_end_event_initialize(&event);
	if (!msd_snapshot_emit(ctx, &event) || !yaml_emitter_flush(&ctx->emitter))
		return FALSE;
	g_string_append(ctx->out, "---\n");
	ctx->finished = TRUE;
	return TRUE;
}

void
msd_snapshot_emitter_clear(MsdSnapshotEmitter *ctx)
{
	if (ctx->initialized)
		yaml_emitter_delete(&ctx->emitter);
	msd_yaml_block_writer_clear(&ctx->block);
	/* Never leave half a document behind. */
	if (!ctx->finished && ctx->out != NULL)
		g_string_truncate(ctx->out, ctx->start);
	memset(ctx, 0, sizeof(*ctx));
}

static gboolean
msd_snapshot_yaml_append_with(
        GString *out, const gchar *json, gsize length, gboolean reference, GError **error)
{
	g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;
	g_autoptr(MsdSnapshotBuffers) buffers = NULL;

	if (!msd_json_tokens_parse(&tokens, json, length, error))
		return FALSE;
	buffers = msd_snapshot_buffers_new();
	for (;;) {
		g_auto(MsdSnapshotEmitter) ctx = {0};

		if (msd_snapshot_emitter_begin(&ctx, out, reference, buffers, error) &&
		    msd_snapshot_emitter_json(&ctx, &tokens, 0) &&
		    msd_snapshot_emitter_finish(&ctx))
			return TRUE;
		if (!ctx.unsupported)
			return FALSE;
		reference = TRUE;
	}
}

gboolean
msd_snapshot_yaml_append(GString *out, const gchar *json, gsize length, GError **error)
{
	return msd_snapshot_yaml_append_with(out, json, length, FALSE, error);
}

gboolean
msd_snapshot_yaml_append_reference(GString *out, const gchar *json, gsize length, GError **error)
{
	return msd_snapshot_yaml_append_with(out, json, length, TRUE, error);
}
