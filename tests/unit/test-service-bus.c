/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/* A service that answers requests on a host's bus (meshsync_service_set_bus() and
 * handle_request()), as an embedding host drives it: the replies, the active-exec list and
 * a session's error and input subscription all go through the bus, not NATS. */

#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "meshsync-bus.h"
#include "meshsync-error.h"
#include "meshsync-kube-config.h"
#include "meshsync-service.h"
#include "test-kubesim.h"
#include "test-writer-fake.h"

/* A bus that records what is published and holds its subscriptions. */
#define TEST_TYPE_BUS (test_bus_get_type())
G_DECLARE_FINAL_TYPE(TestBus, test_bus, TEST, BUS, GObject)

typedef struct {
	gchar *subject;
	MeshSyncBusMessageFunc func;
	gpointer user_data;
	GDestroyNotify destroy;
} TestSubscription;

struct _TestBus {
	GObject parent_instance;
	GPtrArray *subjects;       /* (element-type utf8) */
	GPtrArray *payloads;       /* (element-type JsonNode): each envelope, parsed */
	GHashTable *subscriptions; /* id → TestSubscription */
	guint next_id;
	guint unsubscribed;
};

static void test_bus_iface_init(MeshSyncBusInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(TestBus,
                              test_bus,
                              G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(MESHSYNC_TYPE_BUS, test_bus_iface_init))

static void
test_subscription_free(gpointer data)
{
	TestSubscription *sub = data;

	if (sub->destroy != NULL)
		sub->destroy(sub->user_data);
	g_free(sub->subject);
	g_free(sub);
}

static gboolean
test_bus_publish(MeshSyncBus *bus, const gchar *subject, GBytes *payload, GError **error)
{
	TestBus *self = TEST_BUS(bus);
	gsize length = 0;
	const gchar *data = g_bytes_get_data(payload, &length);
	g_autoptr(JsonParser) parser = json_parser_new();

	g_assert_true(json_parser_load_from_data(parser, data, (gssize)length, error));
	g_ptr_array_add(self->subjects, g_strdup(subject));
	g_ptr_array_add(self->payloads, json_parser_steal_root(parser));
	return TRUE;
}

static guint
test_bus_subscribe(MeshSyncBus *bus,
                   const gchar *subject,
                   const gchar *queue_group,
                   MeshSyncBusMessageFunc func,
                   gpointer user_data,
                   GDestroyNotify destroy,
                   GError **error)
{
	TestBus *self = TEST_BUS(bus);
	TestSubscription *sub = g_new0(TestSubscription, 1);

	sub->subject = g_strdup(subject);
	sub->func = func;
	sub->user_data = user_data;
	sub->destroy = destroy;
	g_hash_table_insert(self->subscriptions, GUINT_TO_POINTER(++self->next_id), sub);
	return self->next_id;
}

static void
test_bus_unsubscribe(MeshSyncBus *bus, guint id)
{
	TestBus *self = TEST_BUS(bus);

	if (g_hash_table_remove(self->subscriptions, GUINT_TO_POINTER(id)))
		self->unsubscribed++;
}

static void
test_bus_iface_init(MeshSyncBusInterface *iface)
{
	iface->publish = test_bus_publish;
	iface->subscribe = test_bus_subscribe;
	iface->unsubscribe = test_bus_unsubscribe;
}

static void
test_bus_finalize(GObject *object)
{
	TestBus *self = TEST_BUS(object);

	g_ptr_array_unref(self->subjects);
	g_ptr_array_unref(self->payloads);
	g_hash_table_unref(self->subscriptions);
	G_OBJECT_CLASS(test_bus_parent_class)->finalize(object);
}

static void
test_bus_class_init(TestBusClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = test_bus_finalize;
}

static void
test_bus_init(TestBus *self)
{
	self->subjects = g_ptr_array_new_with_free_func(g_free);
	self->payloads = g_ptr_array_new_with_free_func((GDestroyNotify)json_node_unref);
	self->subscriptions = g_hash_table_new_full(NULL, NULL, NULL, test_subscription_free);
}

/* The envelope of the last message on @subject, or NULL. */
static JsonObject *
test_bus_last(TestBus *self, const gchar *subject)
{
	for (guint i = self->payloads->len; i > 0; i--) {
		if (g_str_equal(g_ptr_array_index(self->subjects, i - 1), subject))
			return json_node_get_object(g_ptr_array_index(self->payloads, i - 1));
	}
	return NULL;
}

static gboolean
test_bus_subscribed(TestBus *self, const gchar *subject)
{
	GHashTableIter iter;
	TestSubscription *sub;

	g_hash_table_iter_init(&iter, self->subscriptions);
	while (g_hash_table_iter_next(&iter, NULL, (gpointer *)&sub)) {
		if (g_str_equal(sub->subject, subject))
			return TRUE;
	}
	return FALSE;
}

typedef struct {
	TestBus *bus;
	const gchar *subject;
	guint n_objects; /* informer-store: objects received so far */
} Wait;

static gboolean
published_on(gpointer data)
{
	Wait *w = data;

	return test_bus_last(w->bus, w->subject) != NULL;
}

static void
handle(MeshSyncService *service, const gchar *envelope)
{
	g_autoptr(GBytes) bytes = g_bytes_new(envelope, strlen(envelope));

	meshsync_service_handle_request(service, bytes);
}

static void
started_cb(GObject *source, GAsyncResult *result, gpointer data)
{
	g_autoptr(GError) error = NULL;

	g_assert_true(meshsync_service_start_finish(MESHSYNC_SERVICE(source), result, &error));
	g_assert_no_error(error);
	*(gboolean *)data = TRUE;
}

static gboolean
ready(gpointer data)
{
	return meshsync_service_get_ready(data);
}

static gboolean
stored_all(gpointer data)
{
	Wait *w = data;
	guint n = 0;

	for (guint i = 0; i < w->bus->payloads->len; i++) {
		JsonObject *envelope;
		JsonArray *batch;

		if (!g_str_equal(g_ptr_array_index(w->bus->subjects, i), w->subject))
			continue;
		envelope = json_node_get_object(g_ptr_array_index(w->bus->payloads, i));
		batch = json_object_get_array_member(envelope, "Object");
		g_assert_cmpuint(json_array_get_length(batch), >=, 1);
		g_assert_cmpuint(json_array_get_length(batch), <=, 5);
		n += json_array_get_length(batch);
	}
	w->n_objects = n;
	return n >= 20;
}

static gboolean
input_gone(gpointer data)
{
	Wait *w = data;

	return !test_bus_subscribed(w->bus, w->subject);
}

static void
test_requests_answered_on_the_bus(void)
{
	Sim sim = {0};
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncKubeConfig) config = NULL;
	g_autoptr(MeshSyncService) service = NULL;
	g_autoptr(TestBus) bus = g_object_new(TEST_TYPE_BUS, NULL);
	g_autoptr(TestWriter) writer = test_writer_new();
	const gchar *pods[] = {"pod", NULL};
	const gchar *session = "exec.default.ghost.app.x";
	g_autofree gchar *input = g_strconcat("input.", session, NULL);
	gboolean started = FALSE;
	Wait w = {.bus = bus};
	JsonObject *envelope;

	sim_start(&sim, 20, 2);
	config = meshsync_kube_config_new_from_file(sim.kubeconfig, NULL, &error);
	g_assert_no_error(error);
	service = meshsync_service_new(config);
	meshsync_service_add_writer(service, MESHSYNC_WRITER(writer));
	meshsync_service_set_bus(service, MESHSYNC_BUS(bus));
	meshsync_service_set_output_resources(service, pods);

	/* before the start: nothing to answer with, and nothing breaks */
	handle(service, "{\"Request\":{\"Entity\":\"meshsync-meta\"}}");
	g_assert_cmpuint(bus->payloads->len, ==, 0);

	meshsync_service_start_async(service, NULL, started_cb, &started);
	wait_until(ready, service, "the service ready");
	g_assert_true(started);

	handle(service, "{\"ObjectType\":\"\",\"EventType\":\"\",\"Request\":{\"Entity\":"
	                "\"meshsync-meta\",\"Payload\":null},\"Object\":null}");
	w.subject = "meshsync-meta";
	wait_until(published_on, &w, "the version on meshsync-meta");
	envelope = test_bus_last(bus, "meshsync-meta");
	g_assert_cmpstr(json_object_get_string_member(envelope, "Object"), ==,
	                meshsync_get_version());

	/* the store, in batches of five on the reply subject: no NATS writability to wait on */
	handle(service, "{\"Request\":{\"Entity\":\"informer-store\",\"Payload\":{\"Reply\":"
	                "\"host.store\"}}}");
	w.subject = "host.store";
	wait_until(stored_all, &w, "the 20 pods on host.store");
	g_assert_cmpuint(w.n_objects, ==, 20);

	handle(service, "{\"Request\":{\"Entity\":\"active-exec\"}}");
	w.subject = "active_sessions.exec";
	wait_until(published_on, &w, "the active list");
	envelope = test_bus_last(bus, "active_sessions.exec");
	g_assert_cmpstr(json_object_get_string_member(envelope, "ObjectType"), ==, "active-exec");
	g_assert_cmpuint(json_array_get_length(json_object_get_array_member(envelope, "Object")),
	                 ==, 0);

	/* a shell for a pod that is not there: its input is subscribed on the bus, the error
	 * goes out on the session's subject, and the subscription ends with it */
	handle(service, "{\"Request\":{\"Entity\":\"exec-request\",\"Payload\":{\"s\":{\"id\":"
	                "\"x\",\"name\":\"ghost\",\"namespace\":\"default\",\"container\":"
	                "\"app\"}}}}");
	w.subject = session;
	wait_until(published_on, &w, "the shell's error");
	envelope = test_bus_last(bus, session);
	g_assert_cmpstr(json_object_get_string_member(envelope, "ObjectType"), ==, "error");
	g_assert_nonnull(strstr(json_object_get_string_member(envelope, "Object"), "ghost"));
	w.subject = input;
	wait_until(input_gone, &w, "the input subscription gone");
	g_assert_cmpuint(bus->unsubscribed, >=, 1);

	g_clear_object(&service);
	g_assert_cmpuint(g_hash_table_size(bus->subscriptions), ==, 0);
	sim_stop(&sim);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/service-bus/requests-answered-on-the-bus",
	                test_requests_answered_on_the_bus);
	return g_test_run();
}
