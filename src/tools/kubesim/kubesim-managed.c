/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * Field sets are JsonObjects in a normal form where membership is explicit: a field that is a
 * member has a "." key, so {} (a bare leaf in FieldsV1) reads as {".":{}} and a struct that is
 * only a path to its members has no ".". Union and difference are then plain recursive key
 * operations; the FieldsV1 text is written back with "." first and bare leaves as {}.
 *
 * What a write owns is what it added or changed: a field absent before is a member itself
 * (its "."), with all it holds; a field present before is only a path to what changed in it.
 * A create compares with the zero value of the Go type, in which structs (spec, template,
 * strategy...) and lists without omitempty (containers) are present, so they get no ".".
 *
 * Only writes through the API come here, small objects parsed as trees: the hot paths
 * (generated objects, churn) never do. One file: the list semantics, the set algebra and the
 * entries they update are one algorithm, the server's field manager.
 */

#include "kubesim-managed.h"

#include <string.h>

#include "kubesim-json.h"
#include "kubesim-write.h"

#define MAX_MANAGER_LEN 128

/* metadata members no manager owns */
static const gchar *const unowned_metadata[] = {
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "selfLink",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "managedFields",
        NULL,
};

static JsonObject *
member_set(void)
{
	JsonObject *set = json_object_new();

	json_object_set_object_member(set, ".", json_object_new());
	return set;
}

/* The keys of the items of list @field, as the built-in types declare them; NULL: atomic. */
static const gchar *const *
list_keys(const gchar *field, JsonArray *items)
{
	static const gchar *const by_name[] = {"name", NULL};
	static const gchar *const container_ports[] = {"containerPort", "protocol", NULL};
	static const gchar *const service_ports[] = {"port", "protocol", NULL};
	static const gchar *const mounts[] = {"mountPath", NULL};
	static const gchar *const devices[] = {"devicePath", NULL};
	static const gchar *const aliases[] = {"ip", NULL};
	static const gchar *const conditions[] = {"type", NULL};
	static const gchar *const owners[] = {"uid", NULL};
	static const gchar *const spread[] = {"topologyKey", "whenUnsatisfiable", NULL};
	JsonObject *first;

	if (json_array_get_length(items) == 0 ||
	    !JSON_NODE_HOLDS_OBJECT(json_array_get_element(items, 0)))
		return NULL;
	first = json_array_get_object_element(items, 0);
	if (g_strcmp0(field, "ports") == 0)
		return json_object_has_member(first, "containerPort") ? container_ports
		                                                      : service_ports;
	if (g_strcmp0(field, "volumeMounts") == 0)
		return mounts;
	if (g_strcmp0(field, "volumeDevices") == 0)
		return devices;
	if (g_strcmp0(field, "hostAliases") == 0)
		return aliases;
	if (g_strcmp0(field, "conditions") == 0)
		return conditions;
	if (g_strcmp0(field, "ownerReferences") == 0)
		return owners;
	if (g_strcmp0(field, "topologySpreadConstraints") == 0)
		return spread;
	if (g_strcmp0(field, "containers") == 0 || g_strcmp0(field, "initContainers") == 0 ||
	    g_strcmp0(field, "ephemeralContainers") == 0 || g_strcmp0(field, "volumes") == 0 ||
	    g_strcmp0(field, "env") == 0 || g_strcmp0(field, "imagePullSecrets") == 0 ||
	    g_strcmp0(field, "resourceClaims") == 0)
		return by_name;
	return NULL;
}

static gint
compare_names(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const gchar *const *)a, *(const gchar *const *)b);
}

/* "k:{...}" of an item: its key members, sorted, as compact JSON. */
static gchar *
item_key(JsonObject *item, const gchar *const *keys)
{
	g_autoptr(GPtrArray) names = g_ptr_array_new();
	GString *out = g_string_new("k:{");
	guint i;

	for (i = 0; keys[i] != NULL; i++) {
		if (json_object_has_member(item, keys[i]))
			g_ptr_array_add(names, (gpointer)keys[i]);
	}
	g_ptr_array_sort(names, compare_names);
	for (i = 0; i < names->len; i++) {
		const gchar *name = g_ptr_array_index(names, i);
		if (i > 0)
			g_string_append_c(out, ',');
		msd_json_string_append(out, name, -1, MSD_JSON_STRING_GO);
		g_string_append_c(out, ':');
		kubesim_json_append_node(out, json_object_get_member(item, name),
		                         MSD_JSON_STRING_GO);
	}
	g_string_append_c(out, '}');
	return g_string_free(out, FALSE);
}

static gchar *
set_value_key(JsonNode *value)
{
	GString *out = g_string_new("v:");

	kubesim_json_append_node(out, value, MSD_JSON_STRING_GO);
	return g_string_free(out, FALSE);
}

static JsonObject *set_of_value(const gchar *field, JsonNode *value, gboolean typed);

/* The members of object @obj, each "f:<name>" and all new, into @set. */
static void
add_members(JsonObject *set, JsonObject *obj, gboolean typed)
{
	JsonObjectIter iter;
	const gchar *name;
	JsonNode *value;

	json_object_iter_init(&iter, obj);
	while (json_object_iter_next(&iter, &name, &value)) {
		g_autofree gchar *key = g_strconcat("f:", name, NULL);
		json_object_set_object_member(set, key, set_of_value(name, value, typed));
	}
}

/* The items of list @items into @set, all new; FALSE when the list is atomic. */
static gboolean
add_items(JsonObject *set, const gchar *field, JsonArray *items, gboolean typed)
{
	const gchar *const *keys = typed ? list_keys(field, items) : NULL;
	guint i;

	if (keys != NULL) {
		for (i = 0; i < json_array_get_length(items); i++) {
			JsonNode *item = json_array_get_element(items, i);
			g_autofree gchar *key = NULL;
			JsonObject *item_set;
			if (!JSON_NODE_HOLDS_OBJECT(item))
				continue;
			key = item_key(json_node_get_object(item), keys);
			item_set = member_set();
			add_members(item_set, json_node_get_object(item), typed);
			json_object_set_object_member(set, key, item_set);
		}
		return TRUE;
	}
	if (typed && g_strcmp0(field, "finalizers") == 0) {
		for (i = 0; i < json_array_get_length(items); i++) {
			g_autofree gchar *key = set_value_key(json_array_get_element(items, i));
			json_object_set_object_member(set, key, member_set());
		}
		return TRUE;
	}
	return FALSE;
}

/* Label selectors (matchLabels, matchExpressions) are atomic structs in the built-in types. */
static gboolean
is_atomic_object(const gchar *field, JsonNode *value, gboolean typed)
{
	JsonObject *obj;

	if (!typed || !JSON_NODE_HOLDS_OBJECT(value))
		return FALSE;
	obj = json_node_get_object(value);
	return json_object_has_member(obj, "matchLabels") ||
	       json_object_has_member(obj, "matchExpressions");
}

/* The set of field @field, new with @value: itself and everything in it. */
static JsonObject *
set_of_value(const gchar *field, JsonNode *value, gboolean typed)
{
	JsonObject *set = member_set();

	if (is_atomic_object(field, value, typed))
		return set;
	if (JSON_NODE_HOLDS_OBJECT(value))
		add_members(set, json_node_get_object(value), typed);
	else if (JSON_NODE_HOLDS_ARRAY(value))
		add_items(set, field, json_node_get_array(value), typed);
	return set;
}

/* The fields of a whole object a write by the main resource (or @status_only) can own. */
static JsonObject *
set_of_object(JsonObject *obj, const KubesimManagedWrite *write, gboolean status_only)
{
	JsonObject *set = json_object_new();
	JsonObjectIter iter;
	const gchar *name;
	JsonNode *value;

	json_object_iter_init(&iter, obj);
	while (json_object_iter_next(&iter, &name, &value)) {
		gboolean is_status = g_strcmp0(name, "status") == 0;
		if (g_strcmp0(name, "kind") == 0 || g_strcmp0(name, "apiVersion") == 0)
			continue;
		if (status_only != is_status && (status_only || write->status_ignored))
			continue;
		if (g_strcmp0(name, "metadata") == 0 && JSON_NODE_HOLDS_OBJECT(value)) {
			JsonObject *meta = json_node_get_object(value);
			JsonObject *meta_set = json_object_new();
			JsonObjectIter mi;
			const gchar *mname;
			JsonNode *mvalue;
			json_object_iter_init(&mi, meta);
			while (json_object_iter_next(&mi, &mname, &mvalue)) {
				g_autofree gchar *key = NULL;
				if (g_strv_contains(unowned_metadata, mname))
					continue;
				key = g_strconcat("f:", mname, NULL);
				json_object_set_object_member(
				        meta_set, key, set_of_value(mname, mvalue, write->typed));
			}
			if (json_object_get_size(meta_set) > 0)
				json_object_set_object_member(set, "f:metadata", meta_set);
			else
				json_object_unref(meta_set);
			continue;
		}
		{
			g_autofree gchar *key = g_strconcat("f:", name, NULL);
			json_object_set_object_member(set, key,
			                              set_of_value(name, value, write->typed));
		}
	}
	return set;
}

/* @a gains every member of @b. */
static void
set_union(JsonObject *a, JsonObject *b)
{
	JsonObjectIter iter;
	const gchar *key;
	JsonNode *value;

	json_object_iter_init(&iter, b);
	while (json_object_iter_next(&iter, &key, &value)) {
		if (json_object_has_member(a, key)) {
			if (strcmp(key, ".") != 0)
				set_union(json_object_get_object_member(a, key),
				          json_node_get_object(value));
		} else {
			json_object_set_member(a, key, json_node_copy(value));
		}
	}
}

/* @a loses every member of @b; paths left with no member go. */
static void
set_subtract(JsonObject *a, JsonObject *b)
{
	JsonObjectIter iter;
	const gchar *key;
	JsonNode *value;

	json_object_iter_init(&iter, b);
	while (json_object_iter_next(&iter, &key, &value)) {
		JsonObject *child;
		if (!json_object_has_member(a, key))
			continue;
		if (strcmp(key, ".") == 0) {
			json_object_remove_member(a, key);
			continue;
		}
		child = json_object_get_object_member(a, key);
		set_subtract(child, json_node_get_object(value));
		if (json_object_get_size(child) == 0)
			json_object_remove_member(a, key);
	}
}

/*
 * What a write that turned @old into @new under field @field set or changed: new fields
 * whole, changed leaves and atomic values, matched list items by their keys. @old NULL: the
 * field was absent; a JSON null: present but empty (a zero value's nil list). NULL when the
 * value did not change.
 */
static JsonObject *
set_changed(const gchar *field, JsonNode *new, JsonNode *old, gboolean typed)
{
	JsonObject *set;

	if (old == NULL)
		return set_of_value(field, new, typed);
	if (JSON_NODE_HOLDS_NULL(old) &&
	    (JSON_NODE_HOLDS_OBJECT(new) || JSON_NODE_HOLDS_ARRAY(new))) {
		/* the field was there: what is in it is new, not the field */
		set = json_object_new();
		if (JSON_NODE_HOLDS_OBJECT(new))
			add_members(set, json_node_get_object(new), typed);
		else if (!add_items(set, field, json_node_get_array(new), typed))
			json_object_set_object_member(set, ".", json_object_new());
	} else if (JSON_NODE_TYPE(old) != JSON_NODE_TYPE(new) ||
	           is_atomic_object(field, new, typed)) {
		return json_node_equal(new, old) ? NULL : set_of_value(field, new, typed);
	} else if (JSON_NODE_HOLDS_OBJECT(new)) {
		/* present before and after: only what changed inside it is the write's */
		JsonObject *o = json_node_get_object(old);
		JsonObjectIter iter;
		const gchar *name;
		JsonNode *value;
		set = json_object_new();
		json_object_iter_init(&iter, json_node_get_object(new));
		while (json_object_iter_next(&iter, &name, &value)) {
			JsonObject *sub =
			        set_changed(name, value, json_object_get_member(o, name), typed);
			if (sub != NULL) {
				g_autofree gchar *key = g_strconcat("f:", name, NULL);
				json_object_set_object_member(set, key, sub);
			}
		}
	} else if (typed && JSON_NODE_HOLDS_ARRAY(new) &&
	           list_keys(field, json_node_get_array(new)) != NULL) {
		JsonArray *items = json_node_get_array(new);
		JsonArray *before = json_node_get_array(old);
		const gchar *const *keys = list_keys(field, items);
		g_autoptr(GHashTable) old_items =
		        g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
		guint i;
		set = json_object_new();
		for (i = 0; i < json_array_get_length(before); i++) {
			JsonNode *item = json_array_get_element(before, i);
			if (JSON_NODE_HOLDS_OBJECT(item))
				g_hash_table_insert(old_items,
				                    item_key(json_node_get_object(item), keys),
				                    item);
		}
		for (i = 0; i < json_array_get_length(items); i++) {
			JsonNode *item = json_array_get_element(items, i);
			g_autofree gchar *key = NULL;
			JsonNode *was;
			JsonObject *sub;
			if (!JSON_NODE_HOLDS_OBJECT(item))
				continue;
			key = item_key(json_node_get_object(item), keys);
			was = g_hash_table_lookup(old_items, key);
			if (was == NULL) {
				sub = member_set();
				add_members(sub, json_node_get_object(item), typed);
			} else {
				sub = set_changed(field, item, was, typed);
			}
			if (sub != NULL)
				json_object_set_object_member(set, key, sub);
		}
	} else if (typed && JSON_NODE_HOLDS_ARRAY(new) && g_strcmp0(field, "finalizers") == 0) {
		JsonArray *items = json_node_get_array(new);
		JsonArray *before = json_node_get_array(old);
		guint i, j;
		set = json_object_new();
		for (i = 0; i < json_array_get_length(items); i++) {
			JsonNode *value = json_array_get_element(items, i);
			gboolean had = FALSE;
			for (j = 0; j < json_array_get_length(before) && !had; j++)
				had = json_node_equal(value, json_array_get_element(before, j));
			if (!had) {
				g_autofree gchar *key = set_value_key(value);
				json_object_set_object_member(set, key, member_set());
			}
		}
	} else {
		return json_node_equal(new, old) ? NULL : set_of_value(field, new, typed);
	}
	if (json_object_get_size(set) == 0) {
		json_object_unref(set);
		return NULL;
	}
	return set;
}

/*
 * The zero value of a built-in type as the server compares a create with: the structs of
 * @obj's kind that Go always writes (spec, status, metadata, a template's, a strategy) and
 * the nil list of a pod spec's containers; everything else absent.
 */
static JsonNode *
zero_like(JsonNode *node, const gchar *field)
{
	static const gchar *const structs[] = {"metadata", "spec",     "status",
	                                       "template", "strategy", NULL};
	JsonObject *zero = json_object_new();
	JsonNode *out = json_node_new(JSON_NODE_OBJECT);
	JsonObjectIter iter;
	const gchar *name;
	JsonNode *value;

	json_node_take_object(out, zero);
	if (node == NULL || !JSON_NODE_HOLDS_OBJECT(node))
		return out;
	json_object_iter_init(&iter, json_node_get_object(node));
	while (json_object_iter_next(&iter, &name, &value)) {
		if (g_strv_contains(structs, name) && JSON_NODE_HOLDS_OBJECT(value))
			json_object_set_member(zero, name, zero_like(value, name));
		else if (g_strcmp0(field, "spec") == 0 && g_strcmp0(name, "containers") == 0)
			json_object_set_null_member(zero, name);
	}
	return out;
}

/* A FieldsV1 value read into the normal form: bare leaves {} become {".":{}}. */
static JsonObject *
set_from_fields(JsonObject *fields)
{
	JsonObject *set = json_object_new();
	JsonObjectIter iter;
	const gchar *key;
	JsonNode *value;

	json_object_iter_init(&iter, fields);
	while (json_object_iter_next(&iter, &key, &value)) {
		JsonObject *child;
		if (strcmp(key, ".") == 0) {
			json_object_set_object_member(set, ".", json_object_new());
			continue;
		}
		if (!JSON_NODE_HOLDS_OBJECT(value))
			continue;
		child = json_node_get_object(value);
		json_object_set_object_member(
		        set, key,
		        json_object_get_size(child) == 0 ? member_set() : set_from_fields(child));
	}
	return set;
}

/* "." first, then f:, k:, v:, i: paths, each kind in byte order, as the server writes them. */
static gint
fields_key_rank(const gchar *key)
{
	static const gchar order[] = ".fkvi";
	const gchar *p = strchr(order, key[0]);

	return p != NULL ? (gint)(p - order) : 5;
}

static gint
fields_key_compare(gconstpointer a, gconstpointer b)
{
	const gchar *x = *(const gchar *const *)a;
	const gchar *y = *(const gchar *const *)b;
	gint rx = fields_key_rank(x), ry = fields_key_rank(y);

	return rx != ry ? rx - ry : strcmp(x, y);
}

static void
append_fields(GString *out, JsonObject *set)
{
	g_autoptr(GPtrArray) keys = g_ptr_array_new();
	JsonObjectIter iter;
	const gchar *key;
	JsonNode *value;
	guint i;

	g_string_append_c(out, '{');
	/* a member with nothing inside is a bare leaf */
	if (json_object_get_size(set) == 1 && json_object_has_member(set, ".")) {
		g_string_append_c(out, '}');
		return;
	}
	json_object_iter_init(&iter, set);
	while (json_object_iter_next(&iter, &key, &value))
		g_ptr_array_add(keys, (gpointer)key);
	g_ptr_array_sort(keys, fields_key_compare);
	for (i = 0; i < keys->len; i++) {
		const gchar *k = g_ptr_array_index(keys, i);
		if (i > 0)
			g_string_append_c(out, ',');
		msd_json_string_append(out, k, -1, MSD_JSON_STRING_GO);
		g_string_append_c(out, ':');
		if (strcmp(k, ".") == 0)
			g_string_append(out, "{}");
		else
			append_fields(out, json_object_get_object_member(set, k));
	}
	g_string_append_c(out, '}');
}

typedef struct {
	gchar *manager;
	gchar *operation;
	gchar *api_version;
	gchar *time; /* as written, RFC 3339 */
	gchar *subresource;
	JsonObject *fields; /* normal form; NULL: an entry this code does not understand */
	JsonNode *raw;      /* the entry as it came, kept when it has no fieldsV1 */
} Entry;

static void
entry_free(gpointer data)
{
	Entry *e = data;

	g_free(e->manager);
	g_free(e->operation);
	g_free(e->api_version);
	g_free(e->time);
	g_free(e->subresource);
	if (e->fields != NULL)
		json_object_unref(e->fields);
	if (e->raw != NULL)
		json_node_unref(e->raw);
	g_free(e);
}

static gchar *
dup_member(JsonObject *obj, const gchar *name)
{
	JsonNode *node = json_object_get_member(obj, name);

	if (node == NULL || !JSON_NODE_HOLDS_VALUE(node) ||
	    json_node_get_value_type(node) != G_TYPE_STRING)
		return NULL;
	return g_strdup(json_node_get_string(node));
}

static GPtrArray *
entries_read(JsonArray *array)
{
	GPtrArray *entries = g_ptr_array_new_with_free_func(entry_free);
	guint i;

	for (i = 0; array != NULL && i < json_array_get_length(array); i++) {
		JsonNode *node = json_array_get_element(array, i);
		JsonObject *obj;
		Entry *e;
		if (!JSON_NODE_HOLDS_OBJECT(node))
			continue;
		obj = json_node_get_object(node);
		e = g_new0(Entry, 1);
		e->manager = dup_member(obj, "manager");
		e->operation = dup_member(obj, "operation");
		e->api_version = dup_member(obj, "apiVersion");
		e->time = dup_member(obj, "time");
		e->subresource = dup_member(obj, "subresource");
		if (json_object_has_member(obj, "fieldsV1") &&
		    JSON_NODE_HOLDS_OBJECT(json_object_get_member(obj, "fieldsV1")))
			e->fields = set_from_fields(json_object_get_object_member(obj, "fieldsV1"));
		else
			e->raw = json_node_copy(node);
		g_ptr_array_add(entries, e);
	}
	return entries;
}

static gint
entry_compare(gconstpointer a, gconstpointer b)
{
	const Entry *p = *(const Entry *const *)a;
	const Entry *q = *(const Entry *const *)b;
	gint c;

	/* the times are RFC 3339 UTC at second precision: their text sorts as they do */
	if ((c = g_strcmp0(p->operation, q->operation)) != 0)
		return c;
	if ((c = g_strcmp0(p->time, q->time)) != 0)
		return c;
	if ((c = g_strcmp0(p->manager, q->manager)) != 0)
		return c;
	if ((c = g_strcmp0(p->api_version, q->api_version)) != 0)
		return c;
	return g_strcmp0(p->subresource, q->subresource);
}

static void
append_string_member(GString *out, const gchar *name, const gchar *value, gboolean *first)
{
	if (value == NULL)
		return;
	if (!*first)
		g_string_append_c(out, ',');
	*first = FALSE;
	g_string_append_printf(out, "\"%s\":", name);
	msd_json_string_append(out, value, -1, MSD_JSON_STRING_GO);
}

static JsonNode *
entries_to_node(GPtrArray *entries)
{
	GString *out = g_string_new("[");
	JsonNode *node;
	guint i;

	g_ptr_array_sort(entries, entry_compare);
	for (i = 0; i < entries->len; i++) {
		Entry *e = g_ptr_array_index(entries, i);
		gboolean first = TRUE;
		if (i > 0)
			g_string_append_c(out, ',');
		if (e->fields == NULL) {
			kubesim_json_append_node(out, e->raw, MSD_JSON_STRING_GO);
			continue;
		}
		g_string_append_c(out, '{');
		append_string_member(out, "manager", e->manager, &first);
		append_string_member(out, "operation", e->operation, &first);
		append_string_member(out, "apiVersion", e->api_version, &first);
		append_string_member(out, "time", e->time, &first);
		g_string_append(out, first ? "" : ",");
		g_string_append(out, "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":");
		append_fields(out, e->fields);
		append_string_member(out, "subresource", e->subresource, &first);
		g_string_append_c(out, '}');
	}
	g_string_append_c(out, ']');
	node = kubesim_json_parse(out->str, out->len, NULL);
	g_string_free(out, TRUE);
	return node;
}

static JsonObject *
object_metadata(JsonObject *obj)
{
	JsonNode *meta = json_object_get_member(obj, "metadata");

	return meta != NULL && JSON_NODE_HOLDS_OBJECT(meta) ? json_node_get_object(meta) : NULL;
}

static JsonArray *
managed_fields_of(JsonObject *meta)
{
	JsonNode *node = meta != NULL ? json_object_get_member(meta, "managedFields") : NULL;

	return node != NULL && JSON_NODE_HOLDS_ARRAY(node) ? json_node_get_array(node) : NULL;
}

/* What the write owns anew: the changes from @old_obj (the zero value for a create), with
 * metadata's unowned members and what the subresource does not write left out. */
static JsonObject *
changes_of_write(JsonObject *new_obj,
                 JsonObject *old_obj,
                 const KubesimManagedWrite *write,
                 gboolean status_only)
{
	g_autoptr(JsonObject) owned = set_of_object(new_obj, write, status_only);
	g_autoptr(JsonNode) zero = NULL;
	JsonObject *changed = json_object_new();
	JsonObjectIter iter;
	const gchar *key;
	JsonNode *value;

	if (old_obj == NULL) {
		JsonNode *node = json_node_new(JSON_NODE_OBJECT);
		json_node_set_object(node, new_obj);
		zero = write->typed ? zero_like(node, NULL) : json_node_new(JSON_NODE_OBJECT);
		if (!write->typed)
			json_node_take_object(zero, json_object_new());
		json_node_unref(node);
		old_obj = json_node_get_object(zero);
	}
	json_object_iter_init(&iter, owned);
	while (json_object_iter_next(&iter, &key, &value)) {
		const gchar *name = key + 2;
		JsonObject *sub;
		if (strcmp(name, "metadata") == 0) {
			JsonObject *meta_changed = json_object_new();
			JsonObject *nm = object_metadata(new_obj);
			JsonObject *om = object_metadata(old_obj);
			JsonObjectIter mi;
			const gchar *mkey;
			JsonNode *mvalue;
			json_object_iter_init(&mi, json_node_get_object(value));
			while (json_object_iter_next(&mi, &mkey, &mvalue)) {
				JsonObject *msub = set_changed(
				        mkey + 2, json_object_get_member(nm, mkey + 2),
				        om != NULL ? json_object_get_member(om, mkey + 2) : NULL,
				        write->typed);
				if (msub != NULL)
					json_object_set_object_member(meta_changed, mkey, msub);
			}
			if (json_object_get_size(meta_changed) > 0)
				json_object_set_object_member(changed, key, meta_changed);
			else
				json_object_unref(meta_changed);
			continue;
		}
		sub = set_changed(name, json_object_get_member(new_obj, name),
		                  json_object_get_member(old_obj, name), write->typed);
		if (sub != NULL)
			json_object_set_object_member(changed, key, sub);
	}
	return changed;
}

GBytes *
kubesim_managed_fields_apply(GBytes *json, GBytes *old, const KubesimManagedWrite *write)
{
	g_autoptr(JsonNode) root =
	        kubesim_json_parse(g_bytes_get_data(json, NULL), g_bytes_get_size(json), NULL);
	g_autoptr(JsonNode) old_root = NULL;
	g_autoptr(GPtrArray) entries = NULL;
	g_autoptr(JsonObject) removed = NULL;
	g_autoptr(JsonObject) changed = NULL;
	JsonObject *obj, *old_obj = NULL, *meta;
	JsonArray *given;
	gchar time[KUBESIM_TIME_LEN + 1];
	gboolean status_only = g_strcmp0(write->subresource, "status") == 0;
	Entry *mine = NULL;
	guint i;

	if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root))
		return NULL;
	obj = json_node_get_object(root);
	if (old != NULL) {
		old_root = kubesim_json_parse(g_bytes_get_data(old, NULL), g_bytes_get_size(old),
		                              NULL);
		if (old_root != NULL && JSON_NODE_HOLDS_OBJECT(old_root))
			old_obj = json_node_get_object(old_root);
	}
	meta = object_metadata(obj);
	if (meta == NULL) {
		json_object_set_object_member(obj, "metadata", json_object_new());
		meta = object_metadata(obj);
	}
	given = managed_fields_of(meta);
	if (given != NULL && json_array_get_length(given) == 1 &&
	    JSON_NODE_HOLDS_OBJECT(json_array_get_element(given, 0)) &&
	    json_object_get_size(json_array_get_object_element(given, 0)) == 0) {
		/* [{}]: the client strips every entry */
		json_object_remove_member(meta, "managedFields");
		return kubesim_json_node_to_bytes(root);
	}
	/* absent or [] keeps what the object had */
	if (given == NULL || json_array_get_length(given) == 0)
		given = managed_fields_of(old_obj != NULL ? object_metadata(old_obj) : NULL);
	entries = entries_read(given);

	changed = changes_of_write(obj, old_obj, write, status_only);
	if (old_obj != NULL) {
		g_autoptr(JsonObject) new_set = set_of_object(obj, write, status_only);
		removed = set_of_object(old_obj, write, status_only);
		set_subtract(removed, new_set);
	} else {
		removed = json_object_new();
	}
	for (i = 0; i < entries->len; i++) {
		Entry *e = g_ptr_array_index(entries, i);
		if (e->fields == NULL)
			continue;
		if (g_strcmp0(e->manager, write->manager) == 0 &&
		    g_strcmp0(e->operation, "Update") == 0 &&
		    g_strcmp0(e->subresource, write->subresource) == 0) {
			mine = e;
			continue;
		}
		set_subtract(e->fields, changed);
		set_subtract(e->fields, removed);
	}
	if (mine != NULL) {
		set_subtract(mine->fields, removed);
		if (json_object_get_size(changed) > 0) {
			set_union(mine->fields, changed);
			kubesim_format_time(time, write->time);
			g_free(mine->time);
			mine->time = g_strdup(time);
			g_free(mine->api_version);
			mine->api_version = g_strdup(write->api_version);
		}
	} else if (json_object_get_size(changed) > 0) {
		mine = g_new0(Entry, 1);
		mine->manager = g_strdup(write->manager);
		mine->operation = g_strdup("Update");
		mine->api_version = g_strdup(write->api_version);
		kubesim_format_time(time, write->time);
		mine->time = g_strdup(time);
		mine->subresource = g_strdup(write->subresource);
		mine->fields = json_object_ref(changed);
		g_ptr_array_add(entries, mine);
	}
	/* managers left owning nothing go */
	for (i = entries->len; i-- > 0;) {
		Entry *e = g_ptr_array_index(entries, i);
		if (e->fields != NULL && json_object_get_size(e->fields) == 0)
			g_ptr_array_remove_index(entries, i);
	}
	if (entries->len == 0)
		json_object_remove_member(meta, "managedFields");
	else
		json_object_set_member(meta, "managedFields", entries_to_node(entries));
	return kubesim_json_node_to_bytes(root);
}

gchar *
kubesim_managed_fields_manager(const gchar *field_manager, const gchar *user_agent)
{
	const gchar *slash;

	if (field_manager != NULL && field_manager[0] != '\0')
		return g_strndup(field_manager, MAX_MANAGER_LEN);
	if (user_agent == NULL || user_agent[0] == '\0')
		return g_strdup("unknown");
	slash = strchr(user_agent, '/');
	return g_strndup(user_agent,
	                 MIN(slash != NULL ? (gsize)(slash - user_agent) : strlen(user_agent),
	                     MAX_MANAGER_LEN));
}
