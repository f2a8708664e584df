/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncInformer"

#include "config.h"

#include <string.h>

#include "meshsync-error.h"
#include "informer/msd-store.h"
#include "util/msd-i18n.h"

struct _MsdStore {
	GObject parent_instance;

	GHashTable *by_uid; /* (owned): entry->uid (borrowed) -> MsdStoreEntry (owned) */
	/* (owned): the entries of by_uid (borrowed) as a set hashed by namespace and name; an
	 * entry leaves it before it leaves by_uid */
	GHashTable *by_key;
	guint64 bytes_held;
	guint64 json_bytes;
	MsdStoreCodec *codec; /* (owned) (nullable): set when the store compresses */
	guint32 mark; /* the current (or last) relist's; entries seen by it carry the same */
};

G_DEFINE_FINAL_TYPE(MsdStore, msd_store, G_TYPE_OBJECT)

/* The strings of an entry live in its own allocation, after the struct: a store of a
 * million objects is a million entries, and every allocation saved per entry is a million
 * mallocs and frees saved, and a million allocation headers and roundings of memory. */
static void
msd_store_entry_clear(MsdStoreEntry *entry)
{
	g_clear_pointer(&entry->json, g_bytes_unref);
	g_free(entry->frame);
	g_clear_pointer(&entry->dict, msd_store_dict_unref);
}

/* One of an entry's strings, borrowed from the tokens when they hold it as it reads. */
typedef struct {
	const gchar *text;
	gsize length;
	gchar *owned; /* (owned) (nullable): a decoded copy @text points into */
} MsdStoreText;

static void
msd_store_text_clear(MsdStoreText *text)
{
	g_clear_pointer(&text->owned, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(MsdStoreText, msd_store_text_clear)

static void
msd_store_text_set_owned(MsdStoreText *text, gchar *owned)
{
	g_free(text->owned);
	text->owned = owned;
	text->text = owned;
	text->length = owned != NULL ? strlen(owned) : 0;
}

/* What msd_json_tokens_dup_string() would give for @index (NULL: no value, or a container),
 * without a copy for a plain string. */
static gboolean
msd_store_text_from_token(MsdStoreText *text, const MsdJsonTokens *tokens, gint index)
{
	if (msd_json_tokens_is_string(tokens, index) && tokens->tokens[index].plain) {
		const MsdJsonToken *t = &tokens->tokens[index];

		g_clear_pointer(&text->owned, g_free);
		text->text = tokens->data + t->start;
		text->length = (gsize)(t->end - t->start);
		return TRUE;
	}
	msd_store_text_set_owned(text, msd_json_tokens_dup_string(tokens, index));
	return text->text != NULL;
}

static gchar *
msd_store_text_copy(gchar *out, const MsdStoreText *text, gchar **field)
{
	*field = out;
	if (text->length > 0)
		memcpy(out, text->text, text->length);
	out[text->length] = '\0';
	return out + text->length + 1;
}

static MsdStoreEntry *
msd_store_entry_alloc(const MsdStoreText *uid,
                      const MsdStoreText *namespace_,
                      const MsdStoreText *name,
                      const MsdStoreText *resource_version)
{
	gsize strings =
	        uid->length + namespace_->length + name->length + resource_version->length + 4;
	MsdStoreEntry *entry = g_atomic_rc_box_alloc0(sizeof(MsdStoreEntry) + strings);
	gchar *out = (gchar *)(entry + 1);

	out = msd_store_text_copy(out, uid, &entry->uid);
	out = msd_store_text_copy(out, namespace_, &entry->namespace_);
	out = msd_store_text_copy(out, name, &entry->name);
	msd_store_text_copy(out, resource_version, &entry->resource_version);
	return entry;
}

MsdStoreEntry *
msd_store_entry_ref(MsdStoreEntry *entry)
{
	return g_atomic_rc_box_acquire(entry);
}

void
msd_store_entry_unref(MsdStoreEntry *entry)
{
	g_atomic_rc_box_release_full(entry, (GDestroyNotify)msd_store_entry_clear);
}

/**
 * msd_store_entry_dup_object:
 * @entry: an entry
 *
 * Returns: (transfer full): the object's compact JSON
 */
GBytes *
msd_store_entry_dup_object(const MsdStoreEntry *entry)
{
	g_return_val_if_fail(entry != NULL, NULL);

	if (!entry->compressed)
		return g_bytes_ref(entry->json);
	return msd_store_codec_decompress(entry->dict, entry->frame, entry->held_size, entry->size);
}

/* Compresses @entry's JSON in place: only before the entry is stored, while its maker alone
 * holds it. Objects that do not get smaller (tiny ones) stay plain. */
static void
msd_store_entry_compress(MsdStoreEntry *entry, MsdStoreCodec *codec)
{
	MsdStoreDict *dict = NULL;
	gsize frame_size = 0;
	guint8 *frame;

	if (entry->compressed)
		return;
	frame = msd_store_codec_compress_frame(codec, g_bytes_get_data(entry->json, NULL),
	                                       entry->size, &dict, &frame_size);
	if (frame == NULL)
		return;
	/* the JSON may outlive the entry's hold on it (a reader's copy of the bytes) */
	g_clear_pointer(&entry->json, g_bytes_unref);
	entry->frame = frame;
	entry->held_size = frame_size;
	entry->dict = dict;
	entry->compressed = TRUE;
}

static gboolean
msd_store_is_plain(const gchar *text)
{
	for (const gchar *p = text; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\' || (guchar)*p < 0x20)
			return FALSE;
	}
	return TRUE;
}

/* Copies @start..@end leaving out @cut_start..@cut_end and the whitespace between tokens: the
 * text stays the server's, only its layout is compacted. Returns the end of the output. */
static gchar *
msd_store_copy_compact(gchar *out,
                       const gchar *start,
                       const gchar *end,
                       const gchar *cut_start,
                       const gchar *cut_end)
{
	const gchar *p = start;

	while (p < end) {
		gchar c;

		if (p == cut_start) {
			p = cut_end;
			continue;
		}
		c = *p;
		if (c == '"') {
			/* a whole string at once: its closing quote is the first one after an even
			 * number of backslashes */
			const gchar *q = p + 1;
			gsize n;

			for (;;) {
				const gchar *b;

				q = memchr(q, '"', (gsize)(end - q));
				if (q == NULL) {
					q = end - 1;
					break;
				}
				for (b = q; b > p + 1 && b[-1] == '\\'; b--)
					;
				if ((q - b) % 2 == 0)
					break;
				q++;
			}
			n = (gsize)(q + 1 - p);
			memcpy(out, p, n);
			out += n;
			p = q + 1;
			continue;
		}
		p++;
		if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
			continue;
		*out++ = c;
	}
	return out;
}

static gboolean
msd_store_is_space(gchar c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* Finds metadata.managedFields and the byte range that removes it with one of its commas. */
static gboolean
msd_store_find_managed_fields(const MsdJsonTokens *tokens,
                              gint metadata,
                              const gchar **cut_start,
                              const gchar **cut_end)
{
	const gchar *data = tokens->data;
	gint value = msd_json_tokens_member(tokens, (guint)metadata, "managedFields");
	const gchar *first;
	const gchar *last;
	const gchar *span;
	gsize length;

	if (value < 0)
		return FALSE;
	/* the key token sits right before its value; its opening quote right before its start */
	first = data + tokens->tokens[value - 1].start - 1;
	span = msd_json_tokens_span(tokens, (guint)value, &length);
	last = span + length;

	/* take the comma after the member, or else the one before it */
	{
		const gchar *p = last;
		const gchar *object_end = data + tokens->tokens[metadata].end;

		while (p < object_end && msd_store_is_space(*p))
			p++;
		if (p < object_end && *p == ',') {
			last = p + 1;
		} else {
			const gchar *q = first - 1;

			while (q > data && msd_store_is_space(*q))
				q--;
			if (*q == ',')
				first = q;
		}
	}
	*cut_start = first;
	*cut_end = last;
	return TRUE;
}

/* A shallow type's entry: the type's own kind and apiVersion (a metadata-only answer says
 * PartialObjectMetadata of meta.k8s.io/v1 instead), the metadata without managedFields, and
 * an empty spec and status, so that every reader of the store, the conversion included,
 * sees the shape of a whole object whose spec and status are empty. Anything else the
 * server sent (a server that ignored the metadata-only Accept sends whole objects) is left
 * out: the memory a shallow type costs is its metadata's, whatever was read. */
static MsdStoreEntry *
msd_store_entry_new_metadata(const MsdJsonTokens *tokens,
                             gint metadata,
                             const gchar *kind,
                             const gchar *api_version,
                             const MsdStoreText *uid,
                             const MsdStoreText *namespace_,
                             const MsdStoreText *name,
                             const MsdStoreText *resource_version)
{
	static const gchar tail[] = ",\"spec\":{},\"status\":{}}";
	const gchar *start = tokens->data + tokens->tokens[metadata].start;
	const gchar *end = tokens->data + tokens->tokens[metadata].end;
	const gchar *cut_start = NULL;
	const gchar *cut_end = NULL;
	g_autofree gchar *prefix = NULL;
	MsdStoreEntry *entry;
	gchar *buffer;
	gchar *out;

	if (!msd_store_is_plain(kind) || !msd_store_is_plain(api_version))
		kind = api_version = "";
	prefix = g_strdup_printf("{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":", kind,
	                         api_version);
	msd_store_find_managed_fields(tokens, metadata, &cut_start, &cut_end);
	buffer = g_malloc(strlen(prefix) + (gsize)(end - start) + sizeof(tail));
	out = g_stpcpy(buffer, prefix);
	out = msd_store_copy_compact(out, start, end, cut_start, cut_end);
	memcpy(out, tail, sizeof(tail) - 1);
	out += sizeof(tail) - 1;

	entry = msd_store_entry_alloc(uid, namespace_, name, resource_version);
	entry->size = (gsize)(out - buffer);
	entry->json = g_bytes_new_take(g_realloc(buffer, entry->size), entry->size);
	entry->held_size = entry->size;
	return entry;
}

/**
 * msd_store_entry_new_from_tokens:
 * @tokens: a tokenized document
 * @index: the token of the object
 * @kind: (nullable): the kind to add when the object has none
 * @api_version: (nullable): the apiVersion to add when the object has none
 * @error: return location for a #GError
 *
 * Returns: (transfer full): a new entry, or %NULL when the object has no metadata.name
 */
static MsdStoreEntry *
msd_store_entry_new_full(const MsdJsonTokens *tokens,
                         guint index,
                         const gchar *kind,
                         const gchar *api_version,
                         gboolean metadata_only,
                         GError **error)
{
	g_auto(MsdStoreText) uid = {NULL, 0, NULL};
	g_auto(MsdStoreText) name = {NULL, 0, NULL};
	g_auto(MsdStoreText) namespace_ = {NULL, 0, NULL};
	g_auto(MsdStoreText) resource_version = {NULL, 0, NULL};
	g_autoptr(GString) prefix = NULL;
	MsdStoreEntry *entry;
	const gchar *start;
	const gchar *end;
	const gchar *cut_start = NULL;
	const gchar *cut_end = NULL;
	gchar *buffer;
	gchar *out;
	gint metadata;
	gint name_index;

	if ((gint)index >= tokens->n_tokens || tokens->tokens[index].type != MSD_JSON_OBJECT) {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		                    _("object is not a JSON object"));
		return NULL;
	}
	metadata = msd_json_tokens_member(tokens, index, "metadata");
	if (metadata < 0 || tokens->tokens[metadata].type != MSD_JSON_OBJECT) {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		                    _("object has no metadata"));
		return NULL;
	}
	name_index = msd_json_tokens_member(tokens, (guint)metadata, "name");
	if (!msd_json_tokens_is_string(tokens, name_index) ||
	    !msd_store_text_from_token(&name, tokens, name_index) || name.length == 0 ||
	    name.text[0] == '\0') {
		g_set_error_literal(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA,
		                    _("object has no metadata.name"));
		return NULL;
	}
	if (!msd_store_text_from_token(
	            &namespace_, tokens,
	            msd_json_tokens_member(tokens, (guint)metadata, "namespace")))
		namespace_.text = "";
	if (!msd_store_text_from_token(
	            &resource_version, tokens,
	            msd_json_tokens_member(tokens, (guint)metadata, "resourceVersion")))
		resource_version.text = "";
	if (!msd_store_text_from_token(&uid, tokens,
	                               msd_json_tokens_member(tokens, (guint)metadata, "uid")) ||
	    uid.length == 0 || uid.text[0] == '\0')
		msd_store_text_set_owned(&uid, g_strdup_printf("%.*s/%.*s", (gint)namespace_.length,
		                                               namespace_.text, (gint)name.length,
		                                               name.text));

	if (metadata_only)
		return msd_store_entry_new_metadata(tokens, metadata, kind, api_version, &uid,
		                                    &namespace_, &name, &resource_version);

	if (kind != NULL && msd_store_is_plain(kind) &&
	    msd_json_tokens_member(tokens, index, "kind") < 0) {
		prefix = g_string_new(NULL);
		g_string_append_printf(prefix, "\"kind\":\"%s\",", kind);
	}
	if (api_version != NULL && msd_store_is_plain(api_version) &&
	    msd_json_tokens_member(tokens, index, "apiVersion") < 0) {
		if (prefix == NULL)
			prefix = g_string_new(NULL);
		g_string_append_printf(prefix, "\"apiVersion\":\"%s\",", api_version);
	}

	start = tokens->data + tokens->tokens[index].start;
	end = tokens->data + tokens->tokens[index].end;
	msd_store_find_managed_fields(tokens, metadata, &cut_start, &cut_end);

	buffer = g_malloc((gsize)(end - start) + (prefix != NULL ? prefix->len : 0));
	out = buffer;
	if (prefix != NULL) {
		/* "{" + prefix + the members; an empty object must not keep the prefix's comma */
		*out++ = '{';
		memcpy(out, prefix->str, prefix->len);
		out += prefix->len;
		if (tokens->tokens[index].size == 0)
			out--;
		start++;
	}
	if (tokens->compact) {
		/* what API servers send: the text is compact already, so only the cut is left */
		const gchar *split = cut_start != NULL ? cut_start : end;

		memcpy(out, start, (gsize)(split - start));
		out += split - start;
		if (cut_start != NULL) {
			memcpy(out, cut_end, (gsize)(end - cut_end));
			out += end - cut_end;
		}
	} else {
		out = msd_store_copy_compact(out, start, end, cut_start, cut_end);
	}

	entry = msd_store_entry_alloc(&uid, &namespace_, &name, &resource_version);
	entry->size = (gsize)(out - buffer);
	entry->json = g_bytes_new_take(g_realloc(buffer, entry->size), entry->size);
	entry->held_size = entry->size;
	return entry;
}

MsdStoreEntry *
msd_store_entry_new_from_tokens(const MsdJsonTokens *tokens,
                                guint index,
                                const gchar *kind,
                                const gchar *api_version,
                                GError **error)
{
	return msd_store_entry_new_full(tokens, index, kind, api_version, FALSE, error);
}

/**
 * msd_store_entry_new_metadata_from_tokens:
 * @tokens: a tokenized document
 * @index: the token of the object
 * @kind: the kind the entry says
 * @api_version: the apiVersion the entry says
 * @error: return location for a #GError
 *
 * Returns: (transfer full): a new entry holding the object's metadata only, or %NULL when
 *   the object has no metadata.name
 */
MsdStoreEntry *
msd_store_entry_new_metadata_from_tokens(const MsdJsonTokens *tokens,
                                         guint index,
                                         const gchar *kind,
                                         const gchar *api_version,
                                         GError **error)
{
	g_return_val_if_fail(kind != NULL && api_version != NULL, NULL);

	return msd_store_entry_new_full(tokens, index, kind, api_version, TRUE, error);
}

/**
 * msd_store_entry_new_from_json:
 * @data: the JSON of one object
 * @length: its length
 * @error: return location for a #GError
 *
 * Returns: (transfer full): a new entry, or %NULL when @data is not an object with a name
 */
MsdStoreEntry *
msd_store_entry_new_from_json(const gchar *data, gsize length, GError **error)
{
	g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;

	if (!msd_json_tokens_parse(&tokens, data, length, error))
		return NULL;
	return msd_store_entry_new_from_tokens(&tokens, 0, NULL, NULL, error);
}

/* by_key's hash and equality: an entry's namespace and name */
static guint
msd_store_key_hash(gconstpointer key)
{
	const MsdStoreEntry *entry = key;

	return g_str_hash(entry->namespace_) * 33 + g_str_hash(entry->name);
}

static gboolean
msd_store_key_equal(gconstpointer a, gconstpointer b)
{
	const MsdStoreEntry *x = a;
	const MsdStoreEntry *y = b;

	return strcmp(x->name, y->name) == 0 && strcmp(x->namespace_, y->namespace_) == 0;
}

/* (transfer none) (nullable): the entry stored under @namespace_ and @name */
static MsdStoreEntry *
msd_store_key_lookup(MsdStore *self, const gchar *namespace_, const gchar *name)
{
	MsdStoreEntry probe = {0};

	probe.namespace_ = (gchar *)(namespace_ != NULL ? namespace_ : "");
	probe.name = (gchar *)name;
	return g_hash_table_lookup(self->by_key, &probe);
}

static void
msd_store_finalize(GObject *object)
{
	MsdStore *self = MSD_STORE(object);

	g_hash_table_unref(self->by_uid);
	g_hash_table_unref(self->by_key);
	msd_store_codec_free(self->codec);
	G_OBJECT_CLASS(msd_store_parent_class)->finalize(object);
}

static void
msd_store_class_init(MsdStoreClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = msd_store_finalize;
}

static GHashTable *
msd_store_new_uid_table(void)
{
	return g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
	                             (GDestroyNotify)msd_store_entry_unref);
}

static void
msd_store_init(MsdStore *self)
{
	self->by_uid = msd_store_new_uid_table();
	self->by_key = g_hash_table_new(msd_store_key_hash, msd_store_key_equal);
}

/**
 * msd_store_new:
 *
 * Returns: (transfer full): an empty store
 */
MsdStore *
msd_store_new(void)
{
	return g_object_new(MSD_TYPE_STORE, NULL);
}

void
msd_store_set_compressed(MsdStore *self, gboolean compressed)
{
	g_return_if_fail(MSD_IS_STORE(self));

	if (compressed && self->codec == NULL)
		self->codec = msd_store_codec_new();
	else if (!compressed)
		g_clear_pointer(&self->codec, msd_store_codec_free);
}

gboolean
msd_store_get_compressed(MsdStore *self)
{
	g_return_val_if_fail(MSD_IS_STORE(self), FALSE);
	return self->codec != NULL;
}

MsdStoreDict *
msd_store_get_dict(MsdStore *self)
{
	g_return_val_if_fail(MSD_IS_STORE(self), NULL);
	return self->codec != NULL ? msd_store_codec_get_dict(self->codec) : NULL;
}

static void
msd_store_account(MsdStore *self, MsdStoreEntry *entry, gboolean add)
{
	guint64 held = entry->held_size;

	if (add) {
		self->bytes_held += held;
		self->json_bytes += entry->size;
	} else {
		self->bytes_held -= held;
		self->json_bytes -= entry->size;
	}
}

static void
msd_store_index_add(MsdStore *self, MsdStoreEntry *entry)
{
	/* a namesake held before (another uid) gives way, as its key */
	g_hash_table_add(self->by_key, entry);
}

static void
msd_store_index_remove(MsdStore *self, MsdStoreEntry *entry)
{
	MsdStoreEntry *holder = g_hash_table_lookup(self->by_key, entry);

	/* a recreated object may already own the name under its new uid */
	if (holder != NULL && strcmp(holder->uid, entry->uid) == 0)
		g_hash_table_remove(self->by_key, holder);
}

static MsdStoreChange
msd_store_upsert_over(MsdStore *self, MsdStoreEntry *entry, MsdStoreEntry *old);

/**
 * msd_store_upsert:
 * @self: a #MsdStore
 * @entry: the new state of an object; the store takes its own reference
 *
 * Returns: whether the object is new, modified, or unchanged because its resourceVersion equals
 *   the stored one
 */
MsdStoreChange
msd_store_upsert(MsdStore *self, MsdStoreEntry *entry)
{
	g_return_val_if_fail(MSD_IS_STORE(self), MSD_STORE_UNCHANGED);
	g_return_val_if_fail(entry != NULL, MSD_STORE_UNCHANGED);

	return msd_store_upsert_over(self, entry, g_hash_table_lookup(self->by_uid, entry->uid));
}

/* msd_store_upsert() once the entry held under @entry's uid (nullable) has been looked up. */
static MsdStoreChange
msd_store_upsert_over(MsdStore *self, MsdStoreEntry *entry, MsdStoreEntry *old)
{
	if (old != NULL && g_strcmp0(old->resource_version, entry->resource_version) == 0)
		return MSD_STORE_UNCHANGED;
	if (old != NULL) {
		msd_store_account(self, old, FALSE);
		msd_store_index_remove(self, old);
	}
	if (self->codec != NULL)
		msd_store_entry_compress(entry, self->codec);
	msd_store_account(self, entry, TRUE);
	msd_store_index_add(self, entry);
	g_hash_table_replace(self->by_uid, entry->uid, msd_store_entry_ref(entry));
	return old != NULL ? MSD_STORE_MODIFIED : MSD_STORE_ADDED;
}

/**
 * msd_store_delete:
 * @self: a #MsdStore
 * @uid: the object's uid
 *
 * Returns: (transfer full) (nullable): the object's last stored entry
 */
MsdStoreEntry *
msd_store_delete(MsdStore *self, const gchar *uid)
{
	gpointer value = NULL;
	MsdStoreEntry *old;

	g_return_val_if_fail(MSD_IS_STORE(self), NULL);
	g_return_val_if_fail(uid != NULL, NULL);

	if (!g_hash_table_steal_extended(self->by_uid, uid, NULL, &value))
		return NULL;
	old = value;
	msd_store_account(self, old, FALSE);
	msd_store_index_remove(self, old);
	return old;
}

void
msd_store_begin_relist(MsdStore *self)
{
	g_return_if_fail(MSD_IS_STORE(self));

	/* 0 is what a new entry carries: never equal to a relist's mark */
	if (++self->mark == 0)
		self->mark = 1;
}

static MsdStoreEntry *
msd_store_steal(MsdStore *self, const gchar *uid)
{
	gpointer value = NULL;
	MsdStoreEntry *old;

	if (!g_hash_table_steal_extended(self->by_uid, uid, NULL, &value))
		return NULL;
	old = value;
	msd_store_account(self, old, FALSE);
	msd_store_index_remove(self, old);
	return old;
}

MsdStoreChange
msd_store_relist_upsert(MsdStore *self, MsdStoreEntry *entry, MsdStoreEntry **displaced)
{
	MsdStoreEntry *old;

	g_return_val_if_fail(MSD_IS_STORE(self), MSD_STORE_UNCHANGED);
	g_return_val_if_fail(entry != NULL, MSD_STORE_UNCHANGED);
	g_return_val_if_fail(displaced != NULL, MSD_STORE_UNCHANGED);

	*displaced = NULL;
	old = g_hash_table_lookup(self->by_uid, entry->uid);
	if (old == NULL) {
		MsdStoreEntry *other = g_hash_table_lookup(self->by_key, entry);

		if (other != NULL && other->relist_mark != self->mark)
			*displaced = msd_store_steal(self, other->uid);
	} else if (g_strcmp0(old->resource_version, entry->resource_version) == 0) {
		old->relist_mark = self->mark;
		return MSD_STORE_UNCHANGED;
	}
	entry->relist_mark = self->mark;
	/* a displaced namesake had another uid: what was looked up under this one stands */
	return msd_store_upsert_over(self, entry, old);
}

gboolean
msd_store_check_unchanged(MsdStore *self,
                          const gchar *uid,
                          const gchar *resource_version,
                          gboolean listed)
{
	MsdStoreEntry *old;

	g_return_val_if_fail(MSD_IS_STORE(self), FALSE);
	g_return_val_if_fail(uid != NULL, FALSE);

	old = g_hash_table_lookup(self->by_uid, uid);
	if (old == NULL || g_strcmp0(old->resource_version, resource_version) != 0)
		return FALSE;
	if (listed)
		old->relist_mark = self->mark;
	return TRUE;
}

GPtrArray *
msd_store_end_relist(MsdStore *self)
{
	GPtrArray *deleted = g_ptr_array_new_with_free_func((GDestroyNotify)msd_store_entry_unref);
	GHashTableIter iter;
	gpointer value;

	g_return_val_if_fail(MSD_IS_STORE(self), deleted);

	if (self->codec != NULL)
		msd_store_codec_end_list(self->codec);
	g_hash_table_iter_init(&iter, self->by_uid);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		MsdStoreEntry *entry = value;

		if (entry->relist_mark == self->mark)
			continue;
		msd_store_account(self, entry, FALSE);
		msd_store_index_remove(self, entry);
		g_hash_table_iter_steal(&iter);
		g_ptr_array_add(deleted, entry);
	}
	return deleted;
}

void
msd_store_abort_relist(MsdStore *self)
{
	g_return_if_fail(MSD_IS_STORE(self));
	/* nothing to undo: what the relist upserted stays, as it was reported, and the next
	 * relist takes a new mark */
}

/**
 * msd_store_replace_all:
 * @self: a #MsdStore
 * @entries: (element-type MsdStoreEntry): the complete new state, as a relist returned it
 * @added: (out) (optional) (transfer container): objects not stored before
 * @modified: (out) (optional) (transfer container): objects whose resourceVersion changed
 * @deleted: (out) (optional) (transfer container): stored objects missing from @entries, with
 *   their last known state (and objects displaced by a namesake with another uid)
 *
 * Reconciles the store with a whole relist at once, as client-go's DeltaFIFO Replace does:
 * unchanged objects keep their stored entry and appear in no list.
 */
void
msd_store_replace_all(MsdStore *self,
                      GPtrArray *entries,
                      GPtrArray **added,
                      GPtrArray **modified,
                      GPtrArray **deleted)
{
	GPtrArray *added_list =
	        g_ptr_array_new_with_free_func((GDestroyNotify)msd_store_entry_unref);
	GPtrArray *modified_list =
	        g_ptr_array_new_with_free_func((GDestroyNotify)msd_store_entry_unref);
	GPtrArray *deleted_list = NULL;
	GPtrArray *displaced_list =
	        g_ptr_array_new_with_free_func((GDestroyNotify)msd_store_entry_unref);

	g_return_if_fail(MSD_IS_STORE(self));
	g_return_if_fail(entries != NULL);

	msd_store_begin_relist(self);
	for (guint i = 0; i < entries->len; i++) {
		MsdStoreEntry *entry = g_ptr_array_index(entries, i);
		MsdStoreEntry *displaced = NULL;

		switch (msd_store_relist_upsert(self, entry, &displaced)) {
		case MSD_STORE_ADDED:
			g_ptr_array_add(added_list, msd_store_entry_ref(entry));
			break;
		case MSD_STORE_MODIFIED:
			g_ptr_array_add(modified_list, msd_store_entry_ref(entry));
			break;
		case MSD_STORE_UNCHANGED:
		default:
			break;
		}
		if (displaced != NULL)
			g_ptr_array_add(displaced_list, displaced);
	}
	deleted_list = msd_store_end_relist(self);
	g_ptr_array_extend_and_steal(deleted_list, displaced_list);

	if (added != NULL)
		*added = added_list;
	else
		g_ptr_array_unref(added_list);
	if (modified != NULL)
		*modified = modified_list;
	else
		g_ptr_array_unref(modified_list);
	if (deleted != NULL)
		*deleted = deleted_list;
	else
		g_ptr_array_unref(deleted_list);
}

/**
 * msd_store_lookup:
 * @self: a #MsdStore
 * @uid: an object's uid
 *
 * Returns: (transfer none) (nullable): the stored entry
 */
MsdStoreEntry *
msd_store_lookup(MsdStore *self, const gchar *uid)
{
	g_return_val_if_fail(MSD_IS_STORE(self), NULL);
	return g_hash_table_lookup(self->by_uid, uid);
}

/**
 * msd_store_lookup_by_name:
 * @self: a #MsdStore
 * @namespace_: (nullable): the namespace, "" or %NULL for cluster-scoped objects
 * @name: the object's name
 *
 * Returns: (transfer none) (nullable): the stored entry
 */
MsdStoreEntry *
msd_store_lookup_by_name(MsdStore *self, const gchar *namespace_, const gchar *name)
{
	g_return_val_if_fail(MSD_IS_STORE(self), NULL);
	g_return_val_if_fail(name != NULL, NULL);
	return msd_store_key_lookup(self, namespace_, name);
}

guint
msd_store_get_size(MsdStore *self)
{
	g_return_val_if_fail(MSD_IS_STORE(self), 0);
	return g_hash_table_size(self->by_uid);
}

guint64
msd_store_get_bytes_held(MsdStore *self)
{
	g_return_val_if_fail(MSD_IS_STORE(self), 0);
	return self->bytes_held;
}

guint64
msd_store_get_json_bytes(MsdStore *self)
{
	g_return_val_if_fail(MSD_IS_STORE(self), 0);
	return self->json_bytes;
}

void
msd_store_foreach(MsdStore *self, MsdStoreForeachFunc func, gpointer user_data)
{
	GHashTableIter iter;
	gpointer value;

	g_return_if_fail(MSD_IS_STORE(self));
	g_hash_table_iter_init(&iter, self->by_uid);
	while (g_hash_table_iter_next(&iter, NULL, &value))
		func(value, user_data);
}

GPtrArray *
msd_store_snapshot(MsdStore *self)
{
	GPtrArray *entries;
	GHashTableIter iter;
	gpointer value;

	g_return_val_if_fail(MSD_IS_STORE(self), NULL);
	entries = g_ptr_array_new_full(g_hash_table_size(self->by_uid),
	                               (GDestroyNotify)msd_store_entry_unref);
	g_hash_table_iter_init(&iter, self->by_uid);
	while (g_hash_table_iter_next(&iter, NULL, &value))
		g_ptr_array_add(entries, msd_store_entry_ref(value));
	return entries;
}
