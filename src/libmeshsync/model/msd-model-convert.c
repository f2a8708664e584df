/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncModel"

#include "config.h"

#include <string.h>

#include "meshsync-error.h"
#include "model/msd-attribute-cache.h"
#include "model/msd-json-writer.h"
#include "model/msd-model.h"
#include "model/msd-secret-redact.h"
#include "model/msd-service-endpoint.h"
#include "util/msd-json-string.h"
#include "util/msd-utf8.h"
#include "util/msd-i18n.h"

/*
 * Contract 1.2 in one pass over one tokenization. Upstream first marshals the unstructured
 * object (Go JSON: sorted, deduplicated keys), then (a) decodes that text into the struct
 * with Go's lenient, case-insensitive decoder, and (b) overwrites some fields with raw byte
 * spans found at exact key paths. We do (a) over the members in sorted order (so that the
 * last case-variant wins, as it does in Go) and (b) with exact lookups afterwards.
 *
 * The object may be any token of a document the caller already tokenized (a watch line, a
 * list page): the result is the one the store's copy of that object would give (see
 * msd_store_entry_new_from_tokens()). That copy differs from the object's bytes in three ways,
 * and only one of them can change the model: whitespace (nothing here reads it),
 * metadata.managedFields (nothing here reads it), and the kind and apiVersion put in front of
 * a list item that lacks them, which are merged into the sorted members below as "virtual"
 * members.
 */

#define PATTERN_LABEL "design.meshery.io/id"

/* A string member the store's copy would have and the object lacks. */
typedef struct {
	const gchar *key;
	const gchar *value; /* the bytes the store would put between the quotes */
} VirtualMember;

/* Labels or annotations as they are collected: a few, so on the stack up to a point. */
typedef struct {
	MsdKeyValue *kv; /* @local or a heap array */
	guint n;
	guint allocated;
	MsdKeyValue local[16];
} KeyValues;

static void
key_values_add(KeyValues *kvs, const MsdKeyValue *kv)
{
	if (kvs->n == kvs->allocated) {
		guint allocated = kvs->allocated * 2;

		if (kvs->kv == kvs->local)
			kvs->kv = g_memdup2(kvs->local, sizeof(MsdKeyValue) * kvs->n);
		kvs->kv = g_renew(MsdKeyValue, kvs->kv, allocated);
		kvs->allocated = allocated;
	}
	kvs->kv[kvs->n++] = *kv;
}

static void
key_values_clear(KeyValues *kvs)
{
	if (kvs->kv != kvs->local)
		g_free(kvs->kv);
}

typedef struct {
	MsdModel *m;
	GString *arena;
	const MsdJsonTokens *doc;
	gint root;
	VirtualMember virt[2]; /* sorted by key; unused ones have a NULL key */
	KeyValues labels;
	KeyValues annotations;
	MsdAttributeCache *cache; /* nullable */
} Builder;

void
msd_model_clear(MsdModel *m)
{
	g_free(m->arena);
	g_free(m->kv);
	memset(m, 0, sizeof(*m));
}

static void
span_begin(Builder *b, MsdSpan *s)
{
	s->off = (guint32)b->arena->len;
}

static void
span_end(Builder *b, MsdSpan *s)
{
	s->len = (guint32)b->arena->len - s->off;
	g_string_append_c(b->arena, '\0');
}

static void
set_literal(Builder *b, MsdField f, const gchar *text, gssize len)
{
	span_begin(b, &b->m->f[f]);
	g_string_append_len(b->arena, text, len);
	span_end(b, &b->m->f[f]);
}

/* Go's decoder: a string value sets the field, null leaves it, any other type is skipped.
 * A field kept in its wire form gets the decoded string escaped, which is the string's body
 * as the canonical writer writes it. */
static void
decode_string(Builder *b, MsdField f, gint v)
{
	if (b->doc->tokens[v].type != MSD_JSON_STRING)
		return;
	span_begin(b, &b->m->f[f]);
	if (msd_model_field_is_wire(f))
		msd_json_write_string_body(b->arena, b->doc, v);
	else
		msd_json_tokens_append_decoded(b->doc, v, b->arena);
	span_end(b, &b->m->f[f]);
}

static void
set_raw(Builder *b, MsdField f, gint v)
{
	span_begin(b, &b->m->f[f]);
	if (msd_model_field_is_wire(f))
		msd_json_write_raw_nested(b->arena, b->doc, v);
	else
		msd_json_write_raw(b->arena, b->doc, v);
	span_end(b, &b->m->f[f]);
}

/* set_raw() for a wire field, through the cache when the value is big enough to be worth it:
 * the wire form is a function of the value's bytes alone. */
static void
set_raw_cached(Builder *b, MsdField f, gint v)
{
	const MsdJsonToken *t = &b->doc->tokens[v];
	const gchar *raw = b->doc->data + t->start;
	gsize raw_len = (gsize)(t->end - t->start);
	MsdSpan *s = &b->m->f[f];

	if (b->cache == NULL || t->type == MSD_JSON_STRING ||
	    raw_len < MSD_ATTRIBUTE_CACHE_MIN_VALUE) {
		set_raw(b, f, v);
		return;
	}
	span_begin(b, s);
	if (!msd_attribute_cache_lookup(b->cache, raw, raw_len, b->arena)) {
		msd_json_write_raw_nested(b->arena, b->doc, v);
		msd_attribute_cache_insert(b->cache, raw, raw_len, b->arena->str + s->off,
		                           b->arena->len - s->off);
	}
	span_end(b, s);
}

/* An int64 as Go decodes the canonical number text into one; FALSE on a type error. */
static gboolean
decode_int64(Builder *b, gint v, gint64 *out)
{
	const MsdJsonToken *t = &b->doc->tokens[v];
	const gchar *raw = b->doc->data + t->start;
	gsize n = (gsize)(t->end - t->start);
	g_autoptr(GString) text = NULL;
	gboolean all_digits = FALSE;
	gchar buf[24];

	if (t->type != MSD_JSON_NUMBER)
		return FALSE;
	/* an integer of up to 18 digits is its own canonical text ("-0" reads as 0 too); the
	 * token is not NUL-terminated, so the digit run is counted within its bounds */
	if (n > 0 && n < sizeof(buf) - 1) {
		gsize sign = raw[0] == '-' ? 1 : 0;
		gsize digits = 0;

		while (sign + digits < n && g_ascii_isdigit(raw[sign + digits]))
			digits++;
		all_digits = digits > 0 && sign + digits == n && digits <= 18;
	}
	if (all_digits) {
		memcpy(buf, raw, n);
		buf[n] = '\0';
		return g_ascii_string_to_signed(buf, 10, G_MININT64, G_MAXINT64, out, NULL);
	}
	text = g_string_sized_new(24);
	msd_json_write_value(text, b->doc, v);
	return g_ascii_string_to_signed(text->str, 10, G_MININT64, G_MAXINT64, out, NULL);
}

gboolean
msd_model_key_folds_to(const gchar *key, gsize len, const gchar *field)
{
	gsize i = 0;

	for (; *field != '\0'; field++) {
		guchar c;
		gunichar cp;
		gint sz;

		if (i >= len)
			return FALSE;
		c = (guchar)key[i];
		if (c < 0x80) {
			if ((c | 0x20) != (*field | 0x20) || !g_ascii_isalpha(c)) {
				if (c != (guchar)*field)
					return FALSE;
			}
			i++;
			continue;
		}
		/* Go folds with ToUpper(ToLower(r)); these four non-ASCII runes land on ASCII */
		sz = msd_utf8_decode((const guchar *)key + i, len - i, &cp);
		if (sz == 0)
			return FALSE;
		if (cp == 0x017f)
			c = 'S';
		else if (cp == 0x212a)
			c = 'K';
		else if (cp == 0x0130 || cp == 0x0131)
			c = 'I';
		else
			return FALSE;
		if (c != g_ascii_toupper(*field))
			return FALSE;
		i += (gsize)sz;
	}
	return i == len;
}

/* msd_model_key_folds_to() with the answers that need no loop first: this runs for every
 * member against every field name. A folding rune is at least as long as the letter it folds
 * to, so a shorter key never matches and a key of the same length only when it is ASCII. */
static inline gboolean
key_folds_to(const gchar *key, gsize len, const gchar *field, gsize field_len)
{
	guchar c;

	if (len < field_len || len == 0)
		return len == field_len && len == 0;
	c = (guchar)key[0];
	if (c < 0x80 && c != (guchar)field[0] &&
	    (!g_ascii_isalpha(c) || (c | 0x20) != ((guchar)field[0] | 0x20)))
		return FALSE;
	if (len > field_len)
		return msd_model_key_folds_to(key, len, field);
	for (gsize i = 0; i < len; i++) {
		c = (guchar)key[i];
		if (c == (guchar)field[i])
			continue;
		if (c >= 0x80 || !g_ascii_isalpha(c) || (c | 0x20) != ((guchar)field[i] | 0x20))
			return FALSE;
	}
	return TRUE;
}

#define FIELD_NAME(name) name, sizeof(name) - 1

gboolean
msd_model_parse_uuid(const gchar *text, gsize len, gchar out[37])
{
	gchar hex[32];
	gsize h = 0;

	if (len == 45 && g_ascii_strncasecmp(text, "urn:uuid:", 9) == 0) {
		text += 9;
		len -= 9;
	} else if (len == 38 && text[0] == '{' && text[37] == '}') {
		text++;
		len -= 2;
	}
	if (len != 32 && len != 36)
		return FALSE;
	for (gsize i = 0; i < len; i++) {
		if (len == 36 && (i == 8 || i == 13 || i == 18 || i == 23)) {
			if (text[i] != '-')
				return FALSE;
			continue;
		}
		if (!g_ascii_isxdigit(text[i]))
			return FALSE;
		hex[h++] = g_ascii_tolower(text[i]);
	}
	g_snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16,
	           hex + 20);
	return TRUE;
}

typedef struct {
	const gchar *name;
	gsize len;
	MsdField field;
} FieldName;

static const FieldName meta_strings[] = {
        {FIELD_NAME("id"), MSD_F_META_ID},
        {FIELD_NAME("name"), MSD_F_NAME},
        {FIELD_NAME("generateName"), MSD_F_GENERATE_NAME},
        {FIELD_NAME("namespace"), MSD_F_NAMESPACE},
        {FIELD_NAME("selfLink"), MSD_F_SELF_LINK},
        {FIELD_NAME("uid"), MSD_F_UID},
        {FIELD_NAME("resourceVersion"), MSD_F_RESOURCE_VERSION},
        {FIELD_NAME("creationTimestamp"), MSD_F_CREATION_TIMESTAMP},
        {FIELD_NAME("deletionTimestamp"), MSD_F_DELETION_TIMESTAMP},
        {FIELD_NAME("ownerReferences"), MSD_F_OWNER_REFERENCES},
        {FIELD_NAME("finalizers"), MSD_F_FINALIZERS},
        {FIELD_NAME("clusterName"), MSD_F_CLUSTER_NAME},
        {FIELD_NAME("cluster_id"), MSD_F_META_CLUSTER_ID},
};

/* Whether member @mem folds to the field name @name. */
#define FOLDS(mem, name) key_folds_to((mem)->key, (mem)->key_len, FIELD_NAME(name))

static void
decode_metadata(Builder *b, gint obj)
{
	MsdJsonMembers members;

	msd_json_members_init_sorted(&members, b->doc, obj);
	for (gint k = 0; k < members.n; k++) {
		const MsdJsonMember *mem = &members.m[k];
		gint v = mem->value_tok;
		gint64 i64 = 0;

		for (guint f = 0; f < G_N_ELEMENTS(meta_strings); f++) {
			if (key_folds_to(mem->key, mem->key_len, meta_strings[f].name,
			                 meta_strings[f].len))
				decode_string(b, meta_strings[f].field, v);
		}
		if (FOLDS(mem, "generation")) {
			if (decode_int64(b, v, &i64))
				b->m->generation = i64;
		} else if (FOLDS(mem, "deletionGracePeriodSeconds")) {
			/* a pointer: Go allocates it for any non-null value, even one that then
			 * fails to decode (and stays 0) */
			if (b->doc->tokens[v].type != MSD_JSON_NULL) {
				b->m->has_grace_period = TRUE;
				b->m->grace_period = decode_int64(b, v, &i64) ? i64 : 0;
			}
		}
	}
	msd_json_members_clear(&members);
}

/* spec or status into a {id, attribute} struct: the leak of a string `id` (any case) from the
 * object into the wire's spec.id is upstream behaviour, kept for byte compatibility. */
static void
decode_attribute_struct(Builder *b, gint v, MsdField id_field, MsdField attr_field)
{
	MsdJsonMembers members;

	if (b->doc->tokens[v].type != MSD_JSON_OBJECT)
		return;
	msd_json_members_init_sorted(&members, b->doc, v);
	for (gint k = 0; k < members.n; k++) {
		const MsdJsonMember *mem = &members.m[k];

		if (FOLDS(mem, "id"))
			decode_string(b, id_field, mem->value_tok);
		else if (FOLDS(mem, "attribute"))
			decode_string(b, attr_field, mem->value_tok);
	}
	msd_json_members_clear(&members);
}

static const FieldName top_strings[] = {
        {FIELD_NAME("id"), MSD_F_ID},
        {FIELD_NAME("apiVersion"), MSD_F_API_VERSION},
        {FIELD_NAME("kind"), MSD_F_KIND},
        {FIELD_NAME("model"), MSD_F_MODEL},
        {FIELD_NAME("immutable"), MSD_F_IMMUTABLE},
        {FIELD_NAME("data"), MSD_F_DATA},
        {FIELD_NAME("binaryData"), MSD_F_BINARY_DATA},
        {FIELD_NAME("stringData"), MSD_F_STRING_DATA},
        {FIELD_NAME("type"), MSD_F_TYPE},
};

/* The text the tokenizer decodes from the bytes the store puts between quotes: those bytes
 * have no quote, backslash or control byte (the store checks), so only invalid UTF-8 changes,
 * one U+FFFD per bad byte as in msd_json_tokens_append_decoded(). */
static void
append_decoded_plain(GString *out, const gchar *text)
{
	const guchar *p = (const guchar *)text;
	gsize n = strlen(text);
	gsize i = 0;

	while (i < n) {
		gsize run = i;
		gunichar cp;
		gint sz;

		while (run < n && p[run] < 0x80)
			run++;
		g_string_append_len(out, text + i, (gssize)(run - i));
		i = run;
		if (i >= n)
			break;
		sz = msd_utf8_decode(p + i, n - i, &cp);
		if (sz == 0) {
			g_string_append_len(out, MSD_UTF8_REPLACEMENT, 3);
			i++;
		} else {
			g_string_append_len(out, text + i, sz);
			i += (gsize)sz;
		}
	}
}

static void
decode_virtual(Builder *b, const VirtualMember *vm)
{
	MsdField f = strcmp(vm->key, "kind") == 0 ? MSD_F_KIND : MSD_F_API_VERSION;

	span_begin(b, &b->m->f[f]);
	append_decoded_plain(b->arena, vm->value);
	span_end(b, &b->m->f[f]);
}

/* The sorted members' order (msd_json_members_init_sorted()): bytes, then length. */
static gint
key_cmp(const gchar *a, gsize a_len, const gchar *bk, gsize b_len)
{
	gint c = memcmp(a, bk, MIN(a_len, b_len));

	if (c != 0)
		return c;
	return a_len < b_len ? -1 : a_len > b_len ? 1 : 0;
}

static void
decode_top(Builder *b)
{
	MsdJsonMembers members;
	guint next_virt = 0;

	msd_json_members_init_sorted(&members, b->doc, b->root);
	for (gint k = 0; k <= members.n; k++) {
		const MsdJsonMember *mem = k < members.n ? &members.m[k] : NULL;
		gint v;
		gboolean is_null;

		/* a virtual member goes where its key sorts; no real key equals it */
		while (next_virt < G_N_ELEMENTS(b->virt) && b->virt[next_virt].key != NULL &&
		       (mem == NULL ||
		        key_cmp(b->virt[next_virt].key, strlen(b->virt[next_virt].key), mem->key,
		                mem->key_len) < 0))
			decode_virtual(b, &b->virt[next_virt++]);
		if (mem == NULL)
			break;
		v = mem->value_tok;
		is_null = b->doc->tokens[v].type == MSD_JSON_NULL;
		for (guint f = 0; f < G_N_ELEMENTS(top_strings); f++) {
			if (key_folds_to(mem->key, mem->key_len, top_strings[f].name,
			                 top_strings[f].len))
				decode_string(b, top_strings[f].field, v);
		}
		if (FOLDS(mem, "metadata")) {
			if (b->doc->tokens[v].type == MSD_JSON_OBJECT)
				decode_metadata(b, v);
		} else if (FOLDS(mem, "spec")) {
			/* null leaves the pointer unset: no spec on the wire (upstream then
			 * crashes on the raw step; we treat it as absent, a deliberate fix) */
			if (!is_null) {
				b->m->has_spec = TRUE;
				decode_attribute_struct(b, v, MSD_F_SPEC_ID, MSD_F_SPEC_ATTRIBUTE);
			}
		} else if (FOLDS(mem, "status")) {
			if (!is_null) {
				b->m->has_status = TRUE;
				decode_attribute_struct(b, v, MSD_F_STATUS_ID,
				                        MSD_F_STATUS_ATTRIBUTE);
			}
		}
	}
	msd_json_members_clear(&members);
}

static void
collect_key_values(Builder *b, gint obj, KeyValues *into, gboolean labels)
{
	MsdJsonMembers members;

	/* upstream iterates with ObjectEach: anything but an object gives no entries */
	if (obj < 0 || b->doc->tokens[obj].type != MSD_JSON_OBJECT)
		return;
	msd_json_members_init_sorted(&members, b->doc, obj);
	for (gint k = 0; k < members.n; k++) {
		const MsdJsonMember *mem = &members.m[k];
		MsdKeyValue kv;

		span_begin(b, &kv.key);
		msd_json_string_append_raw(b->arena, mem->key, mem->key_len);
		span_end(b, &kv.key);
		span_begin(b, &kv.value);
		/* annotation values (a last-applied configuration is kilobytes of escaped JSON)
		 * are kept in their wire form; label values in the form their getter gives */
		if (labels)
			msd_json_write_raw(b->arena, b->doc, mem->value_tok);
		else
			msd_json_write_raw_nested(b->arena, b->doc, mem->value_tok);
		span_end(b, &kv.value);
		key_values_add(into, &kv);

		/* Deliberate fix: upstream builds the UUID from the 36 raw bytes and always gets
		 * the zero UUID; we parse the text, and invalid text gives null. */
		if (labels && mem->key_len == strlen(PATTERN_LABEL) &&
		    memcmp(mem->key, PATTERN_LABEL, mem->key_len) == 0) {
			gchar uuid[37];

			b->m->has_pattern_resource = msd_model_parse_uuid(
			        b->arena->str + kv.value.off, kv.value.len, uuid);
			if (b->m->has_pattern_resource)
				set_literal(b, MSD_F_PATTERN_RESOURCE, uuid, 36);
		}
	}
	msd_json_members_clear(&members);
}

static void
raw_steps(Builder *b, gboolean redact)
{
	const MsdJsonTokens *doc = b->doc;
	gint meta = msd_json_tokens_member(doc, b->root, "metadata");
	static const struct {
		const gchar *name;
		MsdField field;
		gboolean secret;
	} top_raw[] = {
	        {"immutable", MSD_F_IMMUTABLE, FALSE},
	        {"data", MSD_F_DATA, TRUE},
	        {"binaryData", MSD_F_BINARY_DATA, TRUE},
	        {"stringData", MSD_F_STRING_DATA, TRUE},
	        {"type", MSD_F_TYPE, FALSE},
	};
	gint v;

	if (meta >= 0 && doc->tokens[meta].type == MSD_JSON_OBJECT) {
		collect_key_values(b, msd_json_tokens_member(doc, meta, "labels"), &b->labels,
		                   TRUE);
		collect_key_values(b, msd_json_tokens_member(doc, meta, "annotations"),
		                   &b->annotations, FALSE);
		v = msd_json_tokens_member(doc, meta, "finalizers");
		if (v >= 0)
			set_raw(b, MSD_F_FINALIZERS, v);
		/* managedFields is dropped on purpose, as upstream does */
		v = msd_json_tokens_member(doc, meta, "ownerReferences");
		if (v >= 0)
			set_raw(b, MSD_F_OWNER_REFERENCES, v);
	}
	v = msd_json_tokens_member(doc, b->root, "spec");
	if (v >= 0 && doc->tokens[v].type != MSD_JSON_NULL)
		set_raw_cached(b, MSD_F_SPEC_ATTRIBUTE, v);
	v = msd_json_tokens_member(doc, b->root, "status");
	if (v >= 0 && doc->tokens[v].type != MSD_JSON_NULL)
		set_raw(b, MSD_F_STATUS_ATTRIBUTE, v);
	for (guint f = 0; f < G_N_ELEMENTS(top_raw); f++) {
		MsdSpan *s = &b->m->f[top_raw[f].field];

		v = msd_json_tokens_member(doc, b->root, top_raw[f].name);
		if (v < 0)
			continue;
		if (redact && top_raw[f].secret) {
			g_autoptr(GString) redacted = g_string_new(NULL);

			/* rare enough to write twice: the redacted JSON, then its wire form */
			if (!msd_secret_redact_write(redacted, doc, v)) {
				set_raw(b, top_raw[f].field, v);
				continue;
			}
			span_begin(b, s);
			msd_json_string_append_escaped(b->arena, redacted->str,
			                               (gssize)redacted->len, MSD_JSON_STRING_GO);
			span_end(b, s);
		} else {
			set_raw(b, top_raw[f].field, v);
		}
	}
}

/* The arena is built in a buffer the engine keeps from one conversion to the next (its
 * MsdConvertState), then copied out at its exact size: a fresh 10 KB buffer per event cost a
 * trip through malloc's bins, and its growth a realloc. A buffer grown past the cap (a huge
 * object) is not kept. */
#define SCRATCH_KEEP_MAX (1u << 20)

void
msd_convert_state_init(MsdConvertState *state, gboolean redact_secrets)
{
	state->scratch = NULL;
	state->redact_secrets = redact_secrets;
}

void
msd_convert_state_clear(MsdConvertState *state)
{
	if (state->scratch != NULL)
		g_string_free(g_steal_pointer(&state->scratch), TRUE);
}

static GString *
scratch_take(MsdConvertState *state, gsize size_hint)
{
	GString *s = state != NULL ? g_steal_pointer(&state->scratch) : NULL;

	if (s == NULL)
		return g_string_sized_new(MAX(size_hint, 16 * 1024));
	g_string_truncate(s, 0);
	return s;
}

static void
scratch_give_back(MsdConvertState *state, GString *s)
{
	if (state == NULL || state->scratch != NULL || s->allocated_len > SCRATCH_KEEP_MAX) {
		g_string_free(s, TRUE);
		return;
	}
	state->scratch = s;
}

/* Whether the store would put @text between quotes as it is (msd_store_is_plain()). */
static gboolean
store_takes_default(const gchar *text)
{
	for (const gchar *p = text; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\' || (guchar)*p < 0x20)
			return FALSE;
	}
	return TRUE;
}

gboolean
msd_model_convert_tokens(MsdModel *m,
                         const MsdJsonTokens *doc,
                         gint index,
                         const gchar *default_kind,
                         const gchar *default_api_version,
                         MeshSyncEventType event_type,
                         const gchar *cluster_id,
                         MsdServiceEndpoint **endpoint,
                         MsdAttributeCache *cache,
                         MsdConvertState *state,
                         GError **error)
{
	Builder b = {0};
	const MsdJsonToken *t;
	guint n_virt = 0;
	gboolean redact;

	if (endpoint != NULL)
		*endpoint = NULL;
	if (!msd_json_tokens_is_object(doc, index)) {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		                    _("Kubernetes object is not a JSON object"));
		return FALSE;
	}
	t = &doc->tokens[index];

	memset(m, 0, sizeof(*m));
	b.m = m;
	b.doc = doc;
	b.root = index;
	b.cache = cache;
	/* the store puts kind first, then apiVersion; sorted, apiVersion comes first */
	if (default_api_version != NULL && store_takes_default(default_api_version) &&
	    msd_json_tokens_member(doc, index, "apiVersion") < 0)
		b.virt[n_virt++] = (VirtualMember){"apiVersion", default_api_version};
	if (default_kind != NULL && store_takes_default(default_kind) &&
	    msd_json_tokens_member(doc, index, "kind") < 0)
		b.virt[n_virt++] = (VirtualMember){"kind", default_kind};
	b.arena = scratch_take(state, (gsize)(t->end - t->start) + 64);
	/* offset 0 is an empty string: every unset span points at it */
	g_string_append_c(b.arena, '\0');
	b.labels.kv = b.labels.local;
	b.labels.allocated = G_N_ELEMENTS(b.labels.local);
	b.annotations.kv = b.annotations.local;
	b.annotations.allocated = G_N_ELEMENTS(b.annotations.local);

	decode_top(&b);
	redact = strcmp(b.arena->str + m->f[MSD_F_KIND].off, "Secret") == 0 &&
	         (state != NULL ? state->redact_secrets : msd_secret_redact_enabled());
	raw_steps(&b, redact);
	set_literal(&b, MSD_F_CLUSTER_ID, cluster_id != NULL ? cluster_id : "", -1);

	if (endpoint != NULL && event_type != MESHSYNC_EVENT_TYPE_DELETED &&
	    strcmp(b.arena->str + m->f[MSD_F_KIND].off, "Service") == 0)
		*endpoint = msd_service_endpoint_new_from_doc(doc, index);

	m->n_labels = b.labels.n;
	m->n_annotations = b.annotations.n;
	if (m->n_labels + m->n_annotations > 0) {
		m->kv = g_new(MsdKeyValue, m->n_labels + m->n_annotations);
		/* an empty side has no array at all: memcpy must not see its NULL */
		if (m->n_labels > 0)
			memcpy(m->kv, b.labels.kv, sizeof(MsdKeyValue) * m->n_labels);
		if (m->n_annotations > 0)
			memcpy(m->kv + m->n_labels, b.annotations.kv,
			       sizeof(MsdKeyValue) * m->n_annotations);
	}
	key_values_clear(&b.labels);
	key_values_clear(&b.annotations);
	m->arena_len = b.arena->len;
	/* The model may outlive the event by a long time (a burst held while the output is not
	 * writable): an exact copy, because shrinking the GString's power-of-two block in
	 * place would leave a hole beside every held model that only small blocks can use. */
	m->arena = g_memdup2(b.arena->str, m->arena_len);
	scratch_give_back(state, b.arena);
	return TRUE;
}
