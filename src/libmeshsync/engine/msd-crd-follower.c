/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncEngine"

#include "config.h"

#include "engine/msd-crd-follower.h"
#include "informer/msd-informer.h"
#include "util/msd-json-tokens.h"

struct _MsdCrdFollower {
	GObject parent_instance;

	MeshSyncWatchConfig *watch; /* (owned) */
	MsdInformer *informer;      /* (owned) */
	gboolean synced;
	MsdInformerEventFunc tap; /* (nullable): sees every event first */
	gpointer tap_data;
};

G_DEFINE_FINAL_TYPE(MsdCrdFollower, msd_crd_follower, G_TYPE_OBJECT)

enum {
	SIGNAL_SYNCED,
	SIGNAL_CHANGED,
	N_SIGNALS,
};

static guint signals[N_SIGNALS];

gchar *
msd_crd_follower_name_for(const MsdJsonTokens *doc, gint index)
{
	g_autofree gchar *group = NULL;
	g_autofree gchar *plural = NULL;
	g_autofree gchar *version = NULL;
	gint versions;

	group = msd_json_tokens_dup_string(doc,
	                                   msd_json_tokens_path(doc, index, "spec", "group", NULL));
	plural = msd_json_tokens_dup_string(
	        doc, msd_json_tokens_path(doc, index, "spec", "names", "plural", NULL));
	versions = msd_json_tokens_path(doc, index, "spec", "versions", NULL);
	if (msd_json_tokens_size(doc, versions) > 0 && msd_json_tokens_is_array(doc, versions))
		version = msd_json_tokens_dup_string(
		        doc, msd_json_tokens_member(doc, versions + 1, "name"));
	if (group == NULL || plural == NULL)
		return NULL;
	return g_strdup_printf("%s.%s.%s", plural, version != NULL ? version : "", group);
}

static gchar *
msd_crd_follower_name_of(const MsdInformerEvent *event)
{
	g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;
	g_autoptr(GBytes) object = NULL;
	gsize length = 0;
	const gchar *data;

	if (event->doc != NULL)
		return msd_crd_follower_name_for(event->doc, event->index);
	/* found deleted by a relist: only the stored copy is left */
	object = msd_store_entry_dup_object(event->entry);
	data = g_bytes_get_data(object, &length);
	if (!msd_json_tokens_parse(&tokens, data, length, NULL))
		return NULL;
	return msd_crd_follower_name_for(&tokens, 0);
}

static void
msd_crd_follower_event_cb(MsdInformer *informer, const MsdInformerEvent *event, gpointer user_data)
{
	MsdCrdFollower *self = user_data;
	g_autofree gchar *name = NULL;
	gboolean changed = FALSE;

	if (self->tap != NULL)
		self->tap(informer, event, self->tap_data);
	if (event->type == MESHSYNC_EVENT_TYPE_MODIFIED)
		return;
	name = msd_crd_follower_name_of(event);
	if (name == NULL) {
		g_message("customresourcedefinitions: %s has no spec.group or spec.names.plural: "
		          "ignored",
		          event->entry->name);
		return;
	}
	if (event->type == MESHSYNC_EVENT_TYPE_ADDED)
		changed = meshsync_watch_config_add_crd(self->watch, name);
	else
		changed = meshsync_watch_config_remove_crd(self->watch, name);
	if (!changed)
		return;
	g_info("custom resource type %s %s%s", name,
	       event->type == MESHSYNC_EVENT_TYPE_ADDED ? "added" : "removed",
	       self->synced ? ": resync scheduled" : "");
	/* CRDs already there at start join the first run; later ones trigger a resync */
	if (self->synced)
		g_signal_emit(self, signals[SIGNAL_CHANGED], 0);
}

static void
msd_crd_follower_synced_cb(MsdInformer *informer, MsdCrdFollower *self)
{
	if (self->synced)
		return;
	self->synced = TRUE;
	g_signal_emit(self, signals[SIGNAL_SYNCED], 0);
}

static void
msd_crd_follower_dispose(GObject *object)
{
	MsdCrdFollower *self = MSD_CRD_FOLLOWER(object);

	msd_crd_follower_stop(self);
	G_OBJECT_CLASS(msd_crd_follower_parent_class)->dispose(object);
}

static void
msd_crd_follower_finalize(GObject *object)
{
	MsdCrdFollower *self = MSD_CRD_FOLLOWER(object);

	g_clear_object(&self->informer);
	g_clear_object(&self->watch);
	G_OBJECT_CLASS(msd_crd_follower_parent_class)->finalize(object);
}

static void
msd_crd_follower_class_init(MsdCrdFollowerClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->dispose = msd_crd_follower_dispose;
	object_class->finalize = msd_crd_follower_finalize;
	signals[SIGNAL_SYNCED] = g_signal_new("synced", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
	                                      0, NULL, NULL, NULL, G_TYPE_NONE, 0);
	signals[SIGNAL_CHANGED] =
	        g_signal_new("changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
	                     NULL, G_TYPE_NONE, 0);
}

static void
msd_crd_follower_init(MsdCrdFollower *self)
{
}

MsdCrdFollower *
msd_crd_follower_new(MsdEngineContext *engine,
                     MsdKubeClient *client,
                     MeshSyncApiResource *crds,
                     MeshSyncWatchConfig *watch)
{
	MsdCrdFollower *self;

	g_return_val_if_fail(MSD_IS_KUBE_CLIENT(client), NULL);
	g_return_val_if_fail(MESHSYNC_IS_API_RESOURCE(crds), NULL);
	g_return_val_if_fail(MESHSYNC_IS_WATCH_CONFIG(watch), NULL);

	self = g_object_new(MSD_TYPE_CRD_FOLLOWER, NULL);
	self->watch = g_object_ref(watch);
	self->informer = msd_informer_new(engine, client, crds);
	msd_informer_set_event_func(self->informer, msd_crd_follower_event_cb, self, NULL);
	g_signal_connect(self->informer, "synced", G_CALLBACK(msd_crd_follower_synced_cb), self);
	/* refused (403/404): nothing to follow, but nobody should wait for it either */
	g_signal_connect(self->informer, "denied", G_CALLBACK(msd_crd_follower_synced_cb), self);
	return self;
}

void
msd_crd_follower_start(MsdCrdFollower *self)
{
	g_return_if_fail(MSD_IS_CRD_FOLLOWER(self));
	msd_informer_start(self->informer);
}

void
msd_crd_follower_stop(MsdCrdFollower *self)
{
	g_return_if_fail(MSD_IS_CRD_FOLLOWER(self));
	if (self->informer != NULL)
		msd_informer_stop(self->informer);
}

gboolean
msd_crd_follower_get_synced(MsdCrdFollower *self)
{
	g_return_val_if_fail(MSD_IS_CRD_FOLLOWER(self), FALSE);
	return self->synced;
}

void
msd_crd_follower_set_tap(MsdCrdFollower *self, MsdInformerEventFunc func, gpointer user_data)
{
	g_return_if_fail(MSD_IS_CRD_FOLLOWER(self));
	self->tap = func;
	self->tap_data = user_data;
}

MsdInformer *
msd_crd_follower_get_informer(MsdCrdFollower *self)
{
	g_return_val_if_fail(MSD_IS_CRD_FOLLOWER(self), NULL);
	return self->informer;
}
