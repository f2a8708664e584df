/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncKube"

#include "config.h"

#include "kube/msd-credentials.h"

/* client-go's cached file token source re-reads the file once a minute, for projected
 * service-account tokens that the kubelet rotates. */
#define MSD_CREDENTIALS_TOKEN_FILE_PERIOD 60
/* A plugin that hangs (waiting on a network, a prompt nobody answers) would hold every API
 * request back for good: it is killed after this long and the request fails. */
#define MSD_CREDENTIALS_EXEC_TIMEOUT 60

struct _MsdCredentials {
	GObject parent_instance;

	gchar *static_token;                 /* (nullable) */
	GTlsCertificate *client_certificate; /* (nullable): certificate with key */
	MsdExecPlugin *exec;                 /* (nullable) */

	/* tokenFile or the service-account token: re-read when older than the period */
	gchar *token_file;      /* (nullable) */
	gchar *file_token;      /* (nullable): the last good token read from token_file */
	gint64 file_token_time; /* monotonic µs of the last good read; 0 = stale */
	guint token_file_period;
	guint exec_timeout; /* seconds a credential plugin may take */

	/* exec plugin cache */
	gboolean exec_cached;
	gchar *exec_token;                 /* (nullable) */
	GTlsCertificate *exec_certificate; /* (nullable) */
	gint64 exec_expiry;                /* real time µs; G_MAXINT64 = never */

	gboolean refreshing;
	GPtrArray *waiters;       /* (element-type GTask) */
	guint generation;         /* bumped by invalidate, so that a run started before is not
	                           * cached */
	guint refresh_generation; /* the generation the refresh under way started in */
};

G_DEFINE_FINAL_TYPE(MsdCredentials, msd_credentials, G_TYPE_OBJECT)

static void
msd_credentials_finalize(GObject *object)
{
	MsdCredentials *self = MSD_CREDENTIALS(object);

	g_free(self->static_token);
	g_clear_object(&self->client_certificate);
	g_clear_object(&self->exec);
	g_free(self->token_file);
	g_free(self->file_token);
	g_free(self->exec_token);
	g_clear_object(&self->exec_certificate);
	/* every refresh holds a reference, so no waiter can be left here */
	g_ptr_array_unref(self->waiters);

	G_OBJECT_CLASS(msd_credentials_parent_class)->finalize(object);
}

static void
msd_credentials_class_init(MsdCredentialsClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = msd_credentials_finalize;
}

static void
msd_credentials_init(MsdCredentials *self)
{
	self->token_file_period = MSD_CREDENTIALS_TOKEN_FILE_PERIOD;
	self->exec_timeout = MSD_CREDENTIALS_EXEC_TIMEOUT;
	self->waiters = g_ptr_array_new_with_free_func(g_object_unref);
}

MsdCredentials *
msd_credentials_new(const gchar *static_token,
                    GTlsCertificate *client_certificate,
                    const gchar *token_file,
                    const gchar *file_token,
                    MsdExecPlugin *exec)
{
	MsdCredentials *self = g_object_new(MSD_TYPE_CREDENTIALS, NULL);

	self->static_token = g_strdup(static_token);
	g_set_object(&self->client_certificate, client_certificate);
	g_set_object(&self->exec, exec);
	if (token_file != NULL) {
		self->token_file = g_strdup(token_file);
		/* as client-go: a static token is the fallback when the file cannot be read */
		if (file_token != NULL) {
			self->file_token = g_strdup(file_token);
			self->file_token_time = g_get_monotonic_time();
		} else {
			self->file_token = g_strdup(static_token);
		}
	}
	return self;
}

void
msd_credentials_set_token_file_period(MsdCredentials *self, guint seconds)
{
	g_return_if_fail(MSD_IS_CREDENTIALS(self));
	self->token_file_period = seconds;
}

void
msd_credentials_set_exec_timeout(MsdCredentials *self, guint seconds)
{
	g_return_if_fail(MSD_IS_CREDENTIALS(self));
	self->exec_timeout = seconds;
}

gchar *
msd_credentials_trim_token(const gchar *contents)
{
	g_autofree gchar *token = g_strstrip(g_strdup(contents));

	if (token[0] == '\0')
		return NULL;
	return g_steal_pointer(&token);
}

static MeshSyncKubeCredentials *
msd_credentials_pack(const gchar *token, GTlsCertificate *certificate)
{
	MeshSyncKubeCredentials *credentials = g_new0(MeshSyncKubeCredentials, 1);

	credentials->token = g_strdup(token);
	credentials->client_certificate = certificate != NULL ? g_object_ref(certificate) : NULL;
	return credentials;
}

static MeshSyncKubeCredentials *
msd_credentials_current(MsdCredentials *self)
{
	if (self->exec != NULL) {
		return msd_credentials_pack(self->exec_token, self->exec_certificate != NULL
		                                                      ? self->exec_certificate
		                                                      : self->client_certificate);
	}
	if (self->token_file != NULL)
		return msd_credentials_pack(self->file_token, self->client_certificate);
	return msd_credentials_pack(self->static_token, self->client_certificate);
}

static gboolean
msd_credentials_fresh(MsdCredentials *self)
{
	if (self->exec != NULL)
		return self->exec_cached && g_get_real_time() < self->exec_expiry;
	if (self->token_file != NULL) {
		return self->token_file_period > 0 && self->file_token_time != 0 &&
		       g_get_monotonic_time() - self->file_token_time <
		               (gint64)self->token_file_period * G_USEC_PER_SEC;
	}
	return TRUE;
}

/* Answers everyone who waited for the refresh, with CREDENTIALS or ERROR. */
static void
msd_credentials_refresh_done(MsdCredentials *self,
                             const MeshSyncKubeCredentials *credentials,
                             const GError *error)
{
	g_autoptr(GPtrArray) waiters = g_steal_pointer(&self->waiters);

	self->waiters = g_ptr_array_new_with_free_func(g_object_unref);
	self->refreshing = FALSE;
	for (guint i = 0; i < waiters->len; i++) {
		GTask *task = g_ptr_array_index(waiters, i);

		if (error != NULL)
			g_task_return_error(task, g_error_copy(error));
		else
			g_task_return_pointer(task,
			                      msd_credentials_pack(credentials->token,
			                                           credentials->client_certificate),
			                      (GDestroyNotify)meshsync_kube_credentials_free);
	}
}

static void
msd_credentials_token_file_loaded_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MsdCredentials) self = user_data;
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeCredentials) credentials = NULL;
	g_autofree gchar *contents = NULL;
	g_autofree gchar *token = NULL;

	if (g_file_load_contents_finish(G_FILE(source), result, &contents, NULL, NULL, &error))
		token = msd_credentials_trim_token(contents);
	if (token != NULL) {
		g_free(self->file_token);
		self->file_token = g_steal_pointer(&token);
		self->file_token_time = g_get_monotonic_time();
	} else {
		/* as client-go: keep the last good token and try again on the next request */
		g_warning("%s: cannot re-read the token, keeping the previous one: %s",
		          self->token_file, error != NULL ? error->message : "empty file");
	}
	credentials = msd_credentials_current(self);
	msd_credentials_refresh_done(self, credentials, NULL);
}

static void
msd_credentials_exec_done_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	g_autoptr(MsdCredentials) self = user_data;
	g_autoptr(GError) error = NULL;
	g_autoptr(GTlsCertificate) certificate = NULL;
	g_autoptr(MeshSyncKubeCredentials) credentials = NULL;
	g_autofree gchar *token = NULL;
	gint64 expiry = 0;

	if (!msd_exec_plugin_run_finish(MSD_EXEC_PLUGIN(source), result, &token, &certificate,
	                                &expiry, &error)) {
		msd_credentials_refresh_done(self, NULL, error);
		return;
	}
	credentials = msd_credentials_pack(token, certificate != NULL ? certificate
	                                                              : self->client_certificate);
	/* an invalidation while the plugin ran means its answer may already be stale */
	if (self->refresh_generation == self->generation) {
		g_free(self->exec_token);
		self->exec_token = g_steal_pointer(&token);
		g_set_object(&self->exec_certificate, certificate);
		self->exec_expiry = expiry;
		self->exec_cached = TRUE;
	}
	msd_credentials_refresh_done(self, credentials, NULL);
}

void
msd_credentials_resolve(MsdCredentials *self, GTask *task)
{
	g_return_if_fail(MSD_IS_CREDENTIALS(self));
	g_return_if_fail(G_IS_TASK(task));

	if (g_task_return_error_if_cancelled(task)) {
		g_object_unref(task);
		return;
	}
	if (!self->refreshing && msd_credentials_fresh(self)) {
		g_task_return_pointer(task, msd_credentials_current(self),
		                      (GDestroyNotify)meshsync_kube_credentials_free);
		g_object_unref(task);
		return;
	}
	g_ptr_array_add(self->waiters, task);
	if (self->refreshing)
		return;
	self->refreshing = TRUE;
	self->refresh_generation = self->generation;
	if (self->exec != NULL) {
		msd_exec_plugin_run_async(self->exec, self->exec_timeout,
		                          msd_credentials_exec_done_cb, g_object_ref(self));
	} else {
		g_autoptr(GFile) file = g_file_new_for_path(self->token_file);
		g_file_load_contents_async(file, NULL, msd_credentials_token_file_loaded_cb,
		                           g_object_ref(self));
	}
}

void
msd_credentials_invalidate(MsdCredentials *self)
{
	g_return_if_fail(MSD_IS_CREDENTIALS(self));

	self->generation++;
	self->exec_cached = FALSE;
	g_clear_pointer(&self->exec_token, g_free);
	g_clear_object(&self->exec_certificate);
	/* keep file_token itself: it is the fallback if the re-read fails */
	self->file_token_time = 0;
}
