/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncEngine"

#include "config.h"

#include <json-glib/json-glib.h>

#include "engine/msd-watch-list-follower.h"
#include "informer/msd-informer.h"

#define MSD_WATCH_LIST_NAMESPACE "meshery"
#define MSD_WATCH_LIST_NAME      "meshery-meshsync"

struct _MsdWatchListFollower {
	GObject parent_instance;

	MsdInformer *informer;       /* (owned) */
	gboolean present;            /* the resource exists */
	gchar *watch_list;           /* (owned) (nullable): its spec.watch-list as JSON text */
	MeshSyncWatchConfig *config; /* (owned) (nullable): read from it; NULL while absent */
};

G_DEFINE_FINAL_TYPE(MsdWatchListFollower, msd_watch_list_follower, G_TYPE_OBJECT)

enum {
	SIGNAL_CHANGED,
	N_SIGNALS,
};

static guint signals[N_SIGNALS];

/* The part of the resource the configuration comes from, in a form two writes of the same
 * content share: the rest (metadata, status) changes with every write and means nothing
 * here. */
static gchar *
msd_watch_list_follower_extract(const gchar *data, gsize length)
{
	g_autoptr(JsonParser) parser = json_parser_new();
	JsonNode *root;
	JsonObject *spec;
	JsonNode *watch_list;

	if (!json_parser_load_from_data(parser, data, (gssize)length, NULL))
		return g_strdup("");
	root = json_parser_get_root(parser);
	if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root) ||
	    !json_object_has_member(json_node_get_object(root), "spec") ||
	    !JSON_NODE_HOLDS_OBJECT(json_object_get_member(json_node_get_object(root), "spec")))
		return g_strdup("");
	spec = json_object_get_object_member(json_node_get_object(root), "spec");
	watch_list = json_object_get_member(spec, "watch-list");
	return watch_list != NULL ? json_to_string(watch_list, FALSE) : g_strdup("");
}

static void
msd_watch_list_follower_read(MsdWatchListFollower *self, const MsdStoreEntry *entry)
{
	g_autoptr(GBytes) object = msd_store_entry_dup_object(entry);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *watch_list = NULL;
	gsize length = 0;
	const gchar *data = g_bytes_get_data(object, &length);

	watch_list = msd_watch_list_follower_extract(data, length);
	if (self->present && g_strcmp0(watch_list, self->watch_list) == 0) {
		g_debug("MeshSync resource %s/%s rewritten with the same watch list: nothing to do",
		        MSD_WATCH_LIST_NAMESPACE, MSD_WATCH_LIST_NAME);
		return;
	}
	g_clear_object(&self->config);
	self->config = meshsync_watch_config_new_from_resource(data, (gssize)length, &error);
	if (self->config == NULL) {
		g_warning("%s; watching upstream's whole built-in table instead", error->message);
		self->config = meshsync_watch_config_new_builtin_table();
	}
	self->present = TRUE;
	g_free(self->watch_list);
	self->watch_list = g_steal_pointer(&watch_list);
	g_signal_emit(self, signals[SIGNAL_CHANGED], 0);
}

static void
msd_watch_list_follower_event_cb(MsdInformer *informer,
                                 const MsdInformerEvent *event,
                                 gpointer user_data)
{
	MsdWatchListFollower *self = user_data;

	if (g_strcmp0(event->entry->name, MSD_WATCH_LIST_NAME) != 0)
		return;
	if (event->type != MESHSYNC_EVENT_TYPE_DELETED) {
		msd_watch_list_follower_read(self, event->entry);
		return;
	}
	if (!self->present)
		return;
	self->present = FALSE;
	g_clear_pointer(&self->watch_list, g_free);
	g_clear_object(&self->config);
	g_signal_emit(self, signals[SIGNAL_CHANGED], 0);
}

static void
msd_watch_list_follower_dispose(GObject *object)
{
	MsdWatchListFollower *self = MSD_WATCH_LIST_FOLLOWER(object);

	msd_watch_list_follower_stop(self);
	G_OBJECT_CLASS(msd_watch_list_follower_parent_class)->dispose(object);
}

static void
msd_watch_list_follower_finalize(GObject *object)
{
	MsdWatchListFollower *self = MSD_WATCH_LIST_FOLLOWER(object);

	g_clear_object(&self->informer);
	g_clear_object(&self->config);
	g_free(self->watch_list);
	G_OBJECT_CLASS(msd_watch_list_follower_parent_class)->finalize(object);
}

static void
msd_watch_list_follower_class_init(MsdWatchListFollowerClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->dispose = msd_watch_list_follower_dispose;
	object_class->finalize = msd_watch_list_follower_finalize;
	signals[SIGNAL_CHANGED] =
	        g_signal_new("changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
	                     NULL, G_TYPE_NONE, 0);
}

static void
msd_watch_list_follower_init(MsdWatchListFollower *self)
{
}

MsdWatchListFollower *
msd_watch_list_follower_new(MsdEngineContext *engine,
                            MsdKubeClient *client,
                            MeshSyncApiResource *meshsyncs)
{
	MsdWatchListFollower *self;

	g_return_val_if_fail(MSD_IS_KUBE_CLIENT(client), NULL);
	g_return_val_if_fail(MESHSYNC_IS_API_RESOURCE(meshsyncs), NULL);

	self = g_object_new(MSD_TYPE_WATCH_LIST_FOLLOWER, NULL);
	/* the namespace rather than a field selector: it holds one such object as a rule, and
	 * the informer's list and watch need nothing new */
	self->informer =
	        msd_informer_new_in_namespace(engine, client, meshsyncs, MSD_WATCH_LIST_NAMESPACE);
	msd_informer_set_event_func(self->informer, msd_watch_list_follower_event_cb, self, NULL);
	return self;
}

void
msd_watch_list_follower_start(MsdWatchListFollower *self)
{
	g_return_if_fail(MSD_IS_WATCH_LIST_FOLLOWER(self));
	msd_informer_start(self->informer);
}

void
msd_watch_list_follower_stop(MsdWatchListFollower *self)
{
	g_return_if_fail(MSD_IS_WATCH_LIST_FOLLOWER(self));
	if (self->informer != NULL)
		msd_informer_stop(self->informer);
}

MeshSyncWatchConfig *
msd_watch_list_follower_dup_config(MsdWatchListFollower *self)
{
	g_return_val_if_fail(MSD_IS_WATCH_LIST_FOLLOWER(self), NULL);
	return self->config != NULL ? g_object_ref(self->config) : NULL;
}

gboolean
msd_watch_list_follower_get_synced(MsdWatchListFollower *self)
{
	g_return_val_if_fail(MSD_IS_WATCH_LIST_FOLLOWER(self), FALSE);
	return msd_informer_get_synced(self->informer);
}

gboolean
msd_watch_list_follower_get_present(MsdWatchListFollower *self)
{
	g_return_val_if_fail(MSD_IS_WATCH_LIST_FOLLOWER(self), FALSE);
	return self->present;
}
