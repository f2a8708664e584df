/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include <json-glib/json-glib.h>
#include <string.h>

#include "meshsync-enum-types.h"
#include "meshsync-error.h"
#include "meshsync-resource.h"
#include "meshsync-resource-private.h"
#include "informer/msd-store.h"
#include "model/msd-secret-redact.h"
#include "test-random-object.h"

#define CLUSTER_ID "0b3e2c1d-aaaa-4bbb-8ccc-0123456789ab"

static gchar *
read_fixture(const gchar *name, gsize *len)
{
	g_autofree gchar *path = g_test_build_filename(G_TEST_DIST, "data", "model", name, NULL);
	g_autoptr(GError) error = NULL;
	gchar *contents = NULL;

	g_file_get_contents(path, &contents, len, &error);
	g_assert_no_error(error);
	return contents;
}

static MeshSyncResource *
convert_fixture(const gchar *name, MeshSyncEventType event)
{
	gsize len = 0;
	g_autofree gchar *json = read_fixture(name, &len);
	g_autoptr(GError) error = NULL;
	MeshSyncResource *res =
	        meshsync_resource_new_from_json(json, (gssize)len, event, CLUSTER_ID, &error);

	g_assert_no_error(error);
	g_assert_nonnull(res);
	return res;
}

static void
assert_wire_equals_file(MeshSyncResource *res, const gchar *expected_name)
{
	gsize len = 0;
	g_autofree gchar *expected = read_fixture(expected_name, &len);
	g_autofree gchar *wire = meshsync_resource_to_json(res);
	g_autoptr(JsonParser) parser = json_parser_new();

	/* expected files end with one newline for the sake of editors */
	if (len > 0 && expected[len - 1] == '\n')
		expected[len - 1] = '\0';
	if (strcmp(wire, expected) != 0) {
		gsize i = 0;

		while (wire[i] != '\0' && wire[i] == expected[i])
			i++;
		g_test_message("first difference at byte %" G_GSIZE_FORMAT
		               ":\n got: %.80s\nwant: %.80s",
		               i, wire + i, expected + i);
	}
	g_assert_cmpstr(wire, ==, expected);
	/* and it is JSON */
	g_assert_true(json_parser_load_from_data(parser, wire, -1, NULL));
}

typedef struct {
	const gchar *input;
	const gchar *expected;
	MeshSyncEventType event;
	const gchar *redact; /* MESHSYNC_REDACT_SECRETS, or NULL for unset */
} Golden;

static const Golden goldens[] = {
        {"pod.json", "pod.expected.json", MESHSYNC_EVENT_TYPE_ADDED, NULL},
        {"service-clusterip.json", "service-clusterip.expected.json", MESHSYNC_EVENT_TYPE_ADDED,
         NULL},
        {"service-nodeport.json", "service-nodeport.expected.json", MESHSYNC_EVENT_TYPE_MODIFIED,
         NULL},
        {"service-nodeport.json", "service-nodeport-deleted.expected.json",
         MESHSYNC_EVENT_TYPE_DELETED, NULL},
        {"service-lb-ip.json", "service-lb-ip.expected.json", MESHSYNC_EVENT_TYPE_ADDED, NULL},
        {"service-lb-hostname.json", "service-lb-hostname.expected.json", MESHSYNC_EVENT_TYPE_ADDED,
         NULL},
        {"service-externalname.json", "service-externalname.expected.json",
         MESHSYNC_EVENT_TYPE_ADDED, NULL},
        {"service-headless.json", "service-headless.expected.json", MESHSYNC_EVENT_TYPE_ADDED,
         NULL},
        {"secret.json", "secret.expected.json", MESHSYNC_EVENT_TYPE_ADDED, NULL},
        {"secret.json", "secret.expected.json", MESHSYNC_EVENT_TYPE_ADDED, "false"},
        {"secret.json", "secret-redacted.expected.json", MESHSYNC_EVENT_TYPE_ADDED, "true"},
        {"configmap-binarydata.json", "configmap-binarydata.expected.json",
         MESHSYNC_EVENT_TYPE_ADDED, "true"},
        {"custom-resource.json", "custom-resource.expected.json", MESHSYNC_EVENT_TYPE_ADDED, NULL},
        {"unicode.json", "unicode.expected.json", MESHSYNC_EVENT_TYPE_ADDED, NULL},
        {"invalid-utf8.json", "invalid-utf8.expected.json", MESHSYNC_EVENT_TYPE_ADDED, NULL},
        {"spec-null.json", "spec-null.expected.json", MESHSYNC_EVENT_TYPE_ADDED, NULL},
        {"numbers.json", "numbers.expected.json", MESHSYNC_EVENT_TYPE_ADDED, NULL},
};

static void
test_golden(gconstpointer data)
{
	const Golden *g = data;
	g_autoptr(MeshSyncResource) res = NULL;

	if (g->redact != NULL)
		g_setenv("MESHSYNC_REDACT_SECRETS", g->redact, TRUE);
	else
		g_unsetenv("MESHSYNC_REDACT_SECRETS");
	res = convert_fixture(g->input, g->event);
	g_unsetenv("MESHSYNC_REDACT_SECRETS");
	assert_wire_equals_file(res, g->expected);
}

/* The string member @key of the wire object, parsed back. */
static gchar *
wire_member(MeshSyncResource *res, const gchar *key)
{
	g_autofree gchar *wire = meshsync_resource_to_json(res);
	g_autoptr(JsonParser) parser = json_parser_new();
	JsonObject *obj;

	g_assert_true(json_parser_load_from_data(parser, wire, -1, NULL));
	obj = json_node_get_object(json_parser_get_root(parser));
	if (!json_object_has_member(obj, key) || json_object_get_null_member(obj, key))
		return NULL;
	return g_strdup(json_object_get_string_member(obj, key));
}

static void
test_managed_fields_dropped(void)
{
	g_autoptr(MeshSyncResource) res = convert_fixture("pod.json", MESHSYNC_EVENT_TYPE_ADDED);
	g_autofree gchar *wire = meshsync_resource_to_json(res);

	g_assert_null(strstr(wire, "managedFields"));
	g_assert_null(strstr(wire, "kube-controller-manager"));
	g_assert_null(strstr(wire, "FieldsV1"));
	/* metadata is still there */
	g_assert_cmpstr(meshsync_resource_get_name(res), ==, "nginx-deployment-5d9c-abcde");
	g_assert_cmpstr(meshsync_resource_get_namespace(res), ==, "agile-otter");
	g_assert_nonnull(strstr(wire, "\"generateName\":\"nginx-deployment-5d9c-\""));
}

static const gchar secret_with_binary[] =
        "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\",\"uid\":\"u\"},"
        "\"data\":{\"b\":\"Ymk=\",\"a\":\"YQ==\"},\"stringData\":{\"pw\":\"hunter2\"},"
        "\"binaryData\":{\"bin\":\"AAE=\"},\"type\":\"Opaque\"}";

static MeshSyncResource *
convert_inline(const gchar *json, MeshSyncEventType event)
{
	g_autoptr(GError) error = NULL;
	MeshSyncResource *res = meshsync_resource_new_from_json(json, -1, event, "c", &error);

	g_assert_no_error(error);
	return res;
}

static void
test_redaction_off_by_default(void)
{
	g_autoptr(MeshSyncResource) res = NULL;
	g_autofree gchar *data = NULL;
	g_autofree gchar *string_data = NULL;

	g_unsetenv("MESHSYNC_REDACT_SECRETS");
	res = convert_inline(secret_with_binary, MESHSYNC_EVENT_TYPE_ADDED);
	data = wire_member(res, "data");
	string_data = wire_member(res, "stringData");
	g_assert_cmpstr(data, ==, "{\"a\":\"YQ==\",\"b\":\"Ymk=\"}");
	g_assert_cmpstr(string_data, ==, "{\"pw\":\"hunter2\"}");
}

static void
test_redaction_on(void)
{
	g_autoptr(MeshSyncResource) res = NULL;
	g_autofree gchar *data = NULL;
	g_autofree gchar *string_data = NULL;
	g_autofree gchar *binary_data = NULL;
	g_autofree gchar *type = NULL;

	g_setenv("MESHSYNC_REDACT_SECRETS", "true", TRUE);
	res = convert_inline(secret_with_binary, MESHSYNC_EVENT_TYPE_ADDED);
	g_unsetenv("MESHSYNC_REDACT_SECRETS");
	data = wire_member(res, "data");
	string_data = wire_member(res, "stringData");
	binary_data = wire_member(res, "binaryData");
	type = wire_member(res, "type");
	g_assert_cmpstr(data, ==, "{\"a\":\"[REDACTED]\",\"b\":\"[REDACTED]\"}");
	g_assert_cmpstr(string_data, ==, "{\"pw\":\"[REDACTED]\"}");
	g_assert_cmpstr(binary_data, ==, "{\"bin\":\"[REDACTED]\"}");
	g_assert_cmpstr(type, ==, "Opaque");
}

/* The engine reads the variable once, into its conversion state: what it read holds for every
 * later conversion, whatever the environment says by then. */
static void
test_redaction_from_state(void)
{
	MsdConvertState on, off;
	g_autoptr(MeshSyncResource) redacted = NULL;
	g_autoptr(MeshSyncResource) plain = NULL;
	g_autofree gchar *data_on = NULL;
	g_autofree gchar *data_off = NULL;

	msd_convert_state_init(&on, TRUE);
	msd_convert_state_init(&off, FALSE);
	g_unsetenv("MESHSYNC_REDACT_SECRETS");
	redacted = meshsync_resource_new_from_json_full(secret_with_binary, -1,
	                                                MESHSYNC_EVENT_TYPE_ADDED, "c", &on, NULL);
	g_setenv("MESHSYNC_REDACT_SECRETS", "true", TRUE);
	plain = meshsync_resource_new_from_json_full(secret_with_binary, -1,
	                                             MESHSYNC_EVENT_TYPE_ADDED, "c", &off, NULL);
	g_unsetenv("MESHSYNC_REDACT_SECRETS");
	data_on = wire_member(redacted, "data");
	data_off = wire_member(plain, "data");
	g_assert_cmpstr(data_on, ==, "{\"a\":\"[REDACTED]\",\"b\":\"[REDACTED]\"}");
	g_assert_false(g_str_equal(data_off, data_on));
	g_assert_null(strstr(data_off, "REDACTED"));
	/* the arena buffer is kept for the next conversion */
	g_assert_nonnull(on.scratch);
	msd_convert_state_clear(&on);
	msd_convert_state_clear(&off);
	g_assert_null(on.scratch);
}

static void
test_redaction_leaves_configmap(void)
{
	static const gchar cm[] = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
	                          "{\"name\":\"c\"},\"data\":{\"k\":\"v\"}}";
	g_autoptr(MeshSyncResource) res = NULL;
	g_autofree gchar *data = NULL;

	g_setenv("MESHSYNC_REDACT_SECRETS", "1", TRUE);
	res = convert_inline(cm, MESHSYNC_EVENT_TYPE_ADDED);
	g_unsetenv("MESHSYNC_REDACT_SECRETS");
	data = wire_member(res, "data");
	g_assert_cmpstr(data, ==, "{\"k\":\"v\"}");
}

static void
test_redaction_truthiness(void)
{
	static const struct {
		const gchar *value;
		gboolean on;
	} table[] = {
	        {"", FALSE},      {"false", FALSE}, {"0", FALSE},   {"no", FALSE},  {"yes", FALSE},
	        {" true", FALSE}, {"true", TRUE},   {"TRUE", TRUE}, {"True", TRUE}, {"1", TRUE},
	};

	g_unsetenv("MESHSYNC_REDACT_SECRETS");
	g_assert_false(msd_secret_redact_enabled());
	for (guint i = 0; i < G_N_ELEMENTS(table); i++) {
		g_setenv("MESHSYNC_REDACT_SECRETS", table[i].value, TRUE);
		if (msd_secret_redact_enabled() != table[i].on)
			g_test_fail_printf("MESHSYNC_REDACT_SECRETS=\"%s\" should be %s",
			                   table[i].value, table[i].on ? "on" : "off");
	}
	g_unsetenv("MESHSYNC_REDACT_SECRETS");
}

static void
test_redact_helper(void)
{
	static const struct {
		const gchar *in;
		const gchar *out;
	} cases[] = {
	        {"{\"user\":\"YWRtaW4=\",\"pass\":\"czNjcjN0\"}",
	         "{\"pass\":\"[REDACTED]\",\"user\":\"[REDACTED]\"}"},
	        {"{\"n\":1,\"o\":{\"x\":[1]},\"z\":null}",
	         "{\"n\":\"[REDACTED]\",\"o\":\"[REDACTED]\",\"z\":\"[REDACTED]\"}"},
	        {"{\"<k>\":\"v\"}", "{\"\\u003ck\\u003e\":\"[REDACTED]\"}"},
	        {"", ""},
	        {"{not-json", "{not-json"},
	        {"[1,2]", "[1,2]"},
	        {"{}", "{}"},
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree gchar *out = msd_secret_redact(cases[i].in, -1);

		g_assert_cmpstr(out, ==, cases[i].out);
	}
}

static void
test_getters(void)
{
	g_autoptr(MeshSyncResource) res = convert_fixture("pod.json", MESHSYNC_EVENT_TYPE_MODIFIED);
	g_autofree gchar *kind = NULL;
	g_autofree gchar *rv = NULL;
	MeshSyncEventType event = MESHSYNC_EVENT_TYPE_ADDED;

	g_assert_cmpstr(meshsync_resource_get_api_version(res), ==, "v1");
	g_assert_cmpstr(meshsync_resource_get_kind(res), ==, "Pod");
	g_assert_cmpstr(meshsync_resource_get_uid(res), ==, "2f0c9b1e-2222-4b4b-8c8c-abcdefabcdef");
	g_assert_cmpstr(meshsync_resource_get_resource_version(res), ==, "4711");
	g_assert_cmpstr(meshsync_resource_get_cluster_id(res), ==, CLUSTER_ID);
	g_assert_cmpint(meshsync_resource_get_event_type(res), ==, MESHSYNC_EVENT_TYPE_MODIFIED);
	g_assert_cmpstr(meshsync_resource_get_label(res, "app"), ==, "nginx");
	g_assert_null(meshsync_resource_get_label(res, "missing"));
	g_object_get(res, "kind", &kind, "resource-version", &rv, "event-type", &event, NULL);
	g_assert_cmpstr(kind, ==, "Pod");
	g_assert_cmpstr(rv, ==, "4711");
	g_assert_cmpint(event, ==, MESHSYNC_EVENT_TYPE_MODIFIED);
}

static void
test_cluster_scoped_getters(void)
{
	g_autoptr(MeshSyncResource) res =
	        convert_inline("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{}}",
	                       MESHSYNC_EVENT_TYPE_ADDED);

	g_assert_null(meshsync_resource_get_name(res));
	g_assert_null(meshsync_resource_get_namespace(res));
	g_assert_null(meshsync_resource_get_resource_version(res));
	g_assert_cmpstr(meshsync_resource_get_uid(res), ==, "");
}

static void
test_event_type_strings(void)
{
	MeshSyncEventType t = MESHSYNC_EVENT_TYPE_ADDED;

	g_assert_cmpstr(meshsync_event_type_to_string(MESHSYNC_EVENT_TYPE_ADDED), ==, "ADDED");
	g_assert_cmpstr(meshsync_event_type_to_string(MESHSYNC_EVENT_TYPE_MODIFIED), ==,
	                "MODIFIED");
	g_assert_cmpstr(meshsync_event_type_to_string(MESHSYNC_EVENT_TYPE_DELETED), ==, "DELETED");
	g_assert_true(meshsync_event_type_from_string("DELETED", &t));
	g_assert_cmpint(t, ==, MESHSYNC_EVENT_TYPE_DELETED);
	g_assert_true(meshsync_event_type_from_string("MODIFIED", &t));
	g_assert_cmpint(t, ==, MESHSYNC_EVENT_TYPE_MODIFIED);
	g_assert_false(meshsync_event_type_from_string("deleted", &t));
	g_assert_false(meshsync_event_type_from_string("ADD", &t));
	g_assert_false(meshsync_event_type_from_string(NULL, &t));
	g_assert_cmpint(t, ==, MESHSYNC_EVENT_TYPE_MODIFIED);
	g_assert_true(G_TYPE_IS_ENUM(MESHSYNC_TYPE_EVENT_TYPE));
}

static void
test_invalid_input(void)
{
	static const gchar *bad[] = {
	        "", "[]", "\"pod\"", "{\"kind\":", "{\"kind\":\"Pod\"} {}", "{\"kind\":\"Pod\",}"};

	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(MeshSyncResource) res = meshsync_resource_new_from_json(
		        bad[i], -1, MESHSYNC_EVENT_TYPE_ADDED, NULL, &error);

		g_assert_null(res);
		g_assert_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_DATA);
	}
}

static void
test_case_insensitive_fields(void)
{
	/* Go's decoder matches struct fields in any case: a top-level "Type" lands in `type`,
	 * "ſpec" (long s) folds to "spec" and counts as a spec */
	g_autoptr(MeshSyncResource) res =
	        convert_inline("{\"apiVersion\":\"v1\",\"kind\":\"X\",\"metadata\":{\"NAME\":\"n\"}"
	                       ",\"Type\":\"t\","
	                       "\"\xc5\xbfpec\":{\"Id\":\"leak\"}}",
	                       MESHSYNC_EVENT_TYPE_ADDED);
	g_autofree gchar *wire = meshsync_resource_to_json(res);

	g_assert_cmpstr(meshsync_resource_get_name(res), ==, "n");
	g_assert_cmpstr(
	        wire, ==,
	        "{\"id\":\"\",\"apiVersion\":\"v1\",\"kind\":\"X\",\"model\":\"\","
	        "\"metadata\":{\"id\":\"\",\"name\":\"n\",\"uid\":\"\",\"cluster_id\":\"\"},"
	        "\"spec\":{\"id\":\"leak\"},\"cluster_id\":\"c\",\"pattern_resource\":null,"
	        "\"component_metadata\":null,\"type\":\"t\"}");
}

static void
test_service_probe_outcomes(void)
{
	g_autoptr(MeshSyncResource) up =
	        convert_fixture("service-lb-ip.json", MESHSYNC_EVENT_TYPE_ADDED);
	g_autoptr(MeshSyncResource) down =
	        convert_fixture("service-lb-hostname.json", MESHSYNC_EVENT_TYPE_ADDED);
	g_autoptr(MeshSyncResource) deleted =
	        convert_fixture("service-lb-ip.json", MESHSYNC_EVENT_TYPE_DELETED);
	g_autoptr(MeshSyncResource) cip =
	        convert_fixture("service-clusterip.json", MESHSYNC_EVENT_TYPE_ADDED);
	const MsdServiceEndpoint *ep = meshsync_resource_get_pending_endpoint(up);

	g_assert_nonnull(ep);
	g_assert_cmpstr(ep->external_address, ==, "203.0.113.10");
	g_assert_cmpint(ep->external_port, ==, 80);
	g_assert_cmpstr(ep->internal_address, ==, "10.96.7.7");
	g_assert_null(meshsync_resource_get_component_metadata(up));
	meshsync_resource_complete_probe(up, TRUE);
	g_assert_null(meshsync_resource_get_pending_endpoint(up));
	g_assert_cmpstr(meshsync_resource_get_component_metadata(up), ==,
	                "{\"capabilities\":{\"connection\":true,\"urls\":"
	                "[\"http://203.0.113.10:80\",\"http://10.96.7.7:80\"]}}");

	ep = meshsync_resource_get_pending_endpoint(down);
	g_assert_nonnull(ep);
	g_assert_cmpstr(ep->external_address, ==, "a1b2c3.elb.example.com");
	g_assert_cmpint(ep->external_port, ==, 443);
	meshsync_resource_complete_probe(down, FALSE);
	g_assert_null(meshsync_resource_get_pending_endpoint(down));
	g_assert_null(meshsync_resource_get_component_metadata(down));

	g_assert_null(meshsync_resource_get_pending_endpoint(deleted));
	g_assert_null(meshsync_resource_get_component_metadata(deleted));
	g_assert_null(meshsync_resource_get_pending_endpoint(cip));
}

typedef struct {
	GMainLoop *loop;
	gboolean ok;
	GError *error;
} ProbeData;

static void
probed_cb(GObject *source, GAsyncResult *result, gpointer user_data)
{
	ProbeData *d = user_data;

	d->ok = meshsync_resource_probe_finish(MESHSYNC_RESOURCE(source), result, &d->error);
	g_main_loop_quit(d->loop);
}

static MeshSyncResource *
lb_service_on(const gchar *ip, guint16 port)
{
	g_autofree gchar *json = g_strdup_printf(
	        "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"lb\"},"
	        "\"spec\":{\"clusterIP\":\"10.96.9.9\",\"ports\":[{\"port\":%u,\"nodePort\":31000}]"
	        "},"
	        "\"status\":{\"loadBalancer\":{\"ingress\":[{\"ip\":\"%s\"}]}}}",
	        port, ip);

	return convert_inline(json, MESHSYNC_EVENT_TYPE_ADDED);
}

static void
run_probe(MeshSyncResource *res, ProbeData *d)
{
	d->loop = g_main_loop_new(NULL, FALSE);
	meshsync_resource_probe_async(res, NULL, probed_cb, d);
	g_main_loop_run(d->loop);
	g_main_loop_unref(d->loop);
}

static void
test_service_probe_async(void)
{
	g_autoptr(GSocketListener) listener = g_socket_listener_new();
	g_autoptr(GError) error = NULL;
	g_autoptr(MeshSyncResource) reachable = NULL;
	g_autoptr(MeshSyncResource) unreachable = NULL;
	g_autoptr(GSocketAddress) any = NULL;
	g_autoptr(GSocketAddress) bound = NULL;
	g_autoptr(GInetAddress) lo = g_inet_address_new_loopback(G_SOCKET_FAMILY_IPV4);
	g_autofree gchar *expected = NULL;
	guint16 port;
	guint16 closed_port;
	ProbeData d = {0};

	/* a listening port: the connect succeeds (the kernel completes it, no accept needed) */
	any = g_inet_socket_address_new(lo, 0);
	g_socket_listener_add_address(listener, any, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP,
	                              NULL, &bound, &error);
	g_assert_no_error(error);
	port = g_inet_socket_address_get_port(G_INET_SOCKET_ADDRESS(bound));
	reachable = lb_service_on("127.0.0.1", port);
	g_assert_nonnull(meshsync_resource_get_pending_endpoint(reachable));
	run_probe(reachable, &d);
	g_assert_no_error(d.error);
	g_assert_true(d.ok);
	expected = g_strdup_printf("{\"capabilities\":{\"connection\":true,\"urls\":"
	                           "[\"http://127.0.0.1:%u\",\"http://10.96.9.9:%u\"]}}",
	                           port, port);
	g_assert_cmpstr(meshsync_resource_get_component_metadata(reachable), ==, expected);

	/* a port nobody listens on: refused at once, no metadata at all */
	g_socket_listener_close(listener);
	closed_port = port;
	unreachable = lb_service_on("127.0.0.1", closed_port);
	memset(&d, 0, sizeof(d));
	run_probe(unreachable, &d);
	g_assert_no_error(d.error);
	g_assert_true(d.ok);
	g_assert_null(meshsync_resource_get_pending_endpoint(unreachable));
	g_assert_null(meshsync_resource_get_component_metadata(unreachable));
}

/* ------------------------------------------------------------------------------------------
 * meshsync_resource_new_from_tokens() against the path it replaces: the store's copy of the
 * object, converted from its JSON.
 */

static void
assert_same_endpoint(const MsdServiceEndpoint *a, const MsdServiceEndpoint *b)
{
	g_assert_true((a == NULL) == (b == NULL));
	if (a == NULL)
		return;
	g_assert_cmpstr(a->internal_address, ==, b->internal_address);
	g_assert_cmpint(a->internal_port, ==, b->internal_port);
	g_assert_cmpstr(a->external_address, ==, b->external_address);
	g_assert_cmpint(a->external_port, ==, b->external_port);
}

static void
assert_same_wire(MeshSyncResource *a, MeshSyncResource *b)
{
	GBytes *wa = meshsync_resource_get_wire_bytes(a);
	GBytes *wb = meshsync_resource_get_wire_bytes(b);
	g_autofree gchar *ja = meshsync_resource_to_json(a);

	g_assert_cmpmem(g_bytes_get_data(wa, NULL), g_bytes_get_size(wa),
	                g_bytes_get_data(wb, NULL), g_bytes_get_size(wb));
	/* made once: the same bytes every time, and to_json() is a copy of them */
	g_assert_true(meshsync_resource_get_wire_bytes(a) == wa);
	g_assert_cmpmem(ja, strlen(ja), g_bytes_get_data(wa, NULL), g_bytes_get_size(wa));
}

/* Every field of the model, every getter, the probe state, then the wire bytes. */
static void
assert_same_resource(MeshSyncResource *a, MeshSyncResource *b)
{
	const MsdModel *ma = meshsync_resource_get_model(a);
	const MsdModel *mb = meshsync_resource_get_model(b);

	for (guint f = 0; f < MSD_N_FIELDS; f++) {
		g_assert_cmpuint(ma->f[f].len, ==, mb->f[f].len);
		g_assert_cmpmem(msd_model_get(ma, f), ma->f[f].len, msd_model_get(mb, f),
		                mb->f[f].len);
	}
	g_assert_cmpint(ma->generation, ==, mb->generation);
	g_assert_cmpint(ma->grace_period, ==, mb->grace_period);
	g_assert_cmpint(ma->has_grace_period, ==, mb->has_grace_period);
	g_assert_cmpint(ma->has_spec, ==, mb->has_spec);
	g_assert_cmpint(ma->has_status, ==, mb->has_status);
	g_assert_cmpint(ma->has_pattern_resource, ==, mb->has_pattern_resource);
	g_assert_cmpuint(ma->n_labels, ==, mb->n_labels);
	g_assert_cmpuint(ma->n_annotations, ==, mb->n_annotations);
	for (guint i = 0; i < ma->n_labels + ma->n_annotations; i++) {
		g_assert_cmpstr(msd_model_str(ma, ma->kv[i].key), ==,
		                msd_model_str(mb, mb->kv[i].key));
		g_assert_cmpstr(msd_model_str(ma, ma->kv[i].value), ==,
		                msd_model_str(mb, mb->kv[i].value));
		if (i < ma->n_labels)
			g_assert_cmpstr(
			        meshsync_resource_get_label(a, msd_model_str(ma, ma->kv[i].key)), ==
			        , meshsync_resource_get_label(b, msd_model_str(ma, ma->kv[i].key)));
	}
	g_assert_cmpstr(meshsync_resource_get_api_version(a), ==,
	                meshsync_resource_get_api_version(b));
	g_assert_cmpstr(meshsync_resource_get_kind(a), ==, meshsync_resource_get_kind(b));
	g_assert_cmpstr(meshsync_resource_get_name(a), ==, meshsync_resource_get_name(b));
	g_assert_cmpstr(meshsync_resource_get_namespace(a), ==, meshsync_resource_get_namespace(b));
	g_assert_cmpstr(meshsync_resource_get_uid(a), ==, meshsync_resource_get_uid(b));
	g_assert_cmpstr(meshsync_resource_get_resource_version(a), ==,
	                meshsync_resource_get_resource_version(b));
	g_assert_cmpstr(meshsync_resource_get_cluster_id(a), ==,
	                meshsync_resource_get_cluster_id(b));
	g_assert_cmpint(meshsync_resource_get_event_type(a), ==,
	                meshsync_resource_get_event_type(b));
	g_assert_cmpstr(meshsync_resource_get_component_metadata(a), ==,
	                meshsync_resource_get_component_metadata(b));
	assert_same_endpoint(meshsync_resource_get_pending_endpoint(a),
	                     meshsync_resource_get_pending_endpoint(b));
	if (meshsync_resource_get_pending_endpoint(a) != NULL) {
		meshsync_resource_complete_probe(a, TRUE);
		meshsync_resource_complete_probe(b, TRUE);
		g_assert_cmpstr(meshsync_resource_get_component_metadata(a), ==,
		                meshsync_resource_get_component_metadata(b));
	}
	assert_same_wire(a, b);
}

/* Shared by every check, and small: the conversions through it hit, miss and evict. */
static MsdAttributeCache *shared_cache;
/* the engine's buffer kept from one conversion to the next: the results must not depend on it */
static MsdConvertState shared_state;

/* The object at token @index of @doc both ways, and twice more through the attribute cache
 * (a miss or a hit, then a hit); FALSE when the store refuses it (no name), when there is
 * nothing to compare against. */
static gboolean
check_from_tokens(const MsdJsonTokens *doc,
                  gint index,
                  const gchar *kind,
                  const gchar *api_version,
                  MeshSyncEventType event)
{
	g_autoptr(MsdStoreEntry) entry = NULL;
	g_autoptr(MeshSyncResource) via_store = NULL;
	g_autoptr(MeshSyncResource) direct = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GBytes) object = NULL;
	gsize len = 0;
	const gchar *copy;

	direct = meshsync_resource_new_from_tokens(doc, index, kind, api_version, event, CLUSTER_ID,
	                                           NULL, NULL, &error);
	g_assert_no_error(error);
	g_assert_nonnull(direct);
	if (shared_cache == NULL)
		shared_cache = msd_attribute_cache_new(16 * 1024);
	/* as an engine made under the environment the caller set */
	shared_state.redact_secrets = msd_secret_redact_enabled();
	for (guint i = 0; i < 2; i++) {
		g_autoptr(MeshSyncResource) cached = meshsync_resource_new_from_tokens(
		        doc, index, kind, api_version, event, CLUSTER_ID, shared_cache,
		        &shared_state, &error);
		g_autoptr(MeshSyncResource) plain = NULL;

		g_assert_no_error(error);
		/* a fresh one each time: the comparison completes the probes of both */
		plain = meshsync_resource_new_from_tokens(doc, index, kind, api_version, event,
		                                          CLUSTER_ID, NULL, NULL, &error);
		g_assert_no_error(error);
		assert_same_resource(cached, plain);
	}
	entry = msd_store_entry_new_from_tokens(doc, (guint)index, kind, api_version, NULL);
	if (entry == NULL)
		return FALSE;
	object = msd_store_entry_dup_object(entry);
	copy = g_bytes_get_data(object, &len);
	via_store = meshsync_resource_new_from_json(copy, (gssize)len, event, CLUSTER_ID, &error);
	g_assert_no_error(error);
	assert_same_resource(via_store, direct);
	return TRUE;
}

static gint
watch_object_index(const MsdJsonTokens *doc)
{
	gint object = msd_json_tokens_member(doc, 0, "object");

	g_assert_cmpint(object, >, 0);
	return object;
}

/* @object as the informer gets it: in a watch line, and twice as items of a list page
 * without kind and apiVersion; each converted both ways with @kind and @api_version as the
 * defaults. Returns how many of the three were compared. */
static guint
check_object_everywhere(const gchar *object,
                        const gchar *kind,
                        const gchar *api_version,
                        MeshSyncEventType event)
{
	g_auto(MsdJsonTokens) doc = MSD_JSON_TOKENS_INIT;
	g_autofree gchar *line = NULL;
	g_autofree gchar *no_kind = test_cut_member(object, "kind");
	g_autofree gchar *item = test_cut_member(no_kind, "apiVersion");
	g_autofree gchar *page = NULL;
	g_autoptr(GError) error = NULL;
	guint compared = 0;
	gint items;
	gint index;

	line = g_strdup_printf("{\"type\":\"%s\",\"object\":%s}\n",
	                       meshsync_event_type_to_string(event), object);
	g_assert_true(msd_json_tokens_parse(&doc, line, strlen(line), &error));
	g_assert_no_error(error);
	compared += check_from_tokens(&doc, watch_object_index(&doc), kind, api_version, event);

	page = g_strdup_printf("{\"kind\":\"List\",\"apiVersion\":\"v1\",\"metadata\":"
	                       "{\"resourceVersion\":\"9\"},\"items\":[%s, %s]}",
	                       item, item);
	g_assert_true(msd_json_tokens_parse(&doc, page, strlen(page), &error));
	g_assert_no_error(error);
	items = msd_json_tokens_member(&doc, 0, "items");
	index = items + 1;
	for (gint i = 0; i < 2; i++) {
		compared += check_from_tokens(&doc, index, kind, api_version, event);
		index = msd_json_tokens_skip(&doc, index);
	}
	return compared;
}

static void
test_from_tokens_fixtures(void)
{
	static const MeshSyncEventType events[] = {MESHSYNC_EVENT_TYPE_ADDED,
	                                           MESHSYNC_EVENT_TYPE_DELETED};
	static const gchar *const redact[] = {NULL, "true"};
	g_autofree gchar *dir = g_test_build_filename(G_TEST_DIST, "data", "model", NULL);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const gchar *name;
	guint fixtures = 0;

	g_assert_nonnull(d);
	while ((name = g_dir_read_name(d)) != NULL) {
		gsize len = 0;
		g_autofree gchar *json = NULL;
		g_autofree gchar *with_fields = NULL;
		g_auto(MsdJsonTokens) doc = MSD_JSON_TOKENS_INIT;
		g_autofree gchar *kind = NULL;
		g_autofree gchar *api_version = NULL;

		if (!g_str_has_suffix(name, ".json") || g_str_has_suffix(name, ".expected.json"))
			continue;
		fixtures++;
		json = read_fixture(name, &len);
		/* the defaults the informer would pass: the type's own kind and group/version */
		g_assert_true(msd_json_tokens_parse(&doc, json, len, NULL));
		kind = msd_json_tokens_dup_string(&doc, msd_json_tokens_member(&doc, 0, "kind"));
		api_version = msd_json_tokens_dup_string(
		        &doc, msd_json_tokens_member(&doc, 0, "apiVersion"));
		with_fields = test_add_managed_fields(json, 2048);
		g_assert_cmpuint(strlen(with_fields), >, len + 2000);
		for (guint r = 0; r < G_N_ELEMENTS(redact); r++) {
			if (redact[r] != NULL)
				g_setenv("MESHSYNC_REDACT_SECRETS", redact[r], TRUE);
			else
				g_unsetenv("MESHSYNC_REDACT_SECRETS");
			for (guint e = 0; e < G_N_ELEMENTS(events); e++) {
				g_test_message("%s, %s, redact=%s", name,
				               meshsync_event_type_to_string(events[e]),
				               redact[r] != NULL ? redact[r] : "unset");
				g_assert_cmpuint(check_object_everywhere(with_fields, kind,
				                                         api_version, events[e]),
				                 ==, 3);
				g_assert_cmpuint(
				        check_object_everywhere(json, kind, api_version, events[e]),
				        ==, 3);
				/* defaults that differ from the object's own, and none */
				g_assert_cmpuint(check_object_everywhere(with_fields, "Other",
				                                         "x/v9", events[e]),
				                 ==, 3);
				g_assert_cmpuint(
				        check_object_everywhere(with_fields, NULL, NULL, events[e]),
				        ==, 3);
			}
		}
	}
	g_unsetenv("MESHSYNC_REDACT_SECRETS");
	g_assert_cmpuint(fixtures, >=, 14);
	/* the fixtures with a spec past the cache's minimum went through it, and hit */
	{
		MsdAttributeCacheStats stats;

		msd_attribute_cache_get_stats(shared_cache, &stats);
		g_assert_cmpuint(stats.hits, >, 0);
		g_assert_cmpuint(stats.misses, >, 0);
	}
}

/* Odd members the store and the conversion must agree on. */
static void
test_from_tokens_odd_members(void)
{
	static const gchar *const objects[] = {
	        /* a case variant of kind and no kind: the default still counts, and sorts
	         * after "Kind" */
	        "{\"Kind\":\"Upper\",\"metadata\":{\"name\":\"a\"}}",
	        /* the Kelvin sign folds to k and sorts after the default */
	        "{\"\xe2\x84\xaaind\":\"Kelvin\",\"metadata\":{\"name\":\"a\"}}",
	        /* an escaped kind is a kind: no default */
	        "{\"ki\\u006ed\":\"Escaped\",\"metadata\":{\"name\":\"a\"}}",
	        /* duplicates: the last wins, in the object and in metadata */
	        "{\"kind\":\"A\",\"kind\":\"B\",\"metadata\":{\"name\":\"a\",\"name\":\"b\","
	        "\"managedFields\":[1],\"managedFields\":[2]},\"metadata\":{\"name\":\"c\"}}",
	        /* managedFields first, last, alone */
	        "{\"metadata\":{\"managedFields\":[{\"manager\":\"m\"}],\"name\":\"a\"}}",
	        "{\"metadata\":{\"name\":\"a\",\"managedFields\":{\"x\":[]}}}",
	        /* a non-string kind, null spec, escapes everywhere */
	        "{\"kind\":7,\"spec\":null,\"metadata\":{\"na\\u006de\":\"\\u00e9\\ud800\","
	        "\"labels\":{\"a\\\"b\":\"<&>\"}}}",
	        /* pretty-printed with every kind of whitespace */
	        "{\r\n\t\"metadata\" :\n {\"name\"\t:\t\"a\" ,\"managedFields\" : [ ] } ,\n"
	        "  \"spec\" : { \"b\" : [ 1 , 2.50 , \"x y\" ] , \"a\" : { } }\n}",
	        /* a Service whose endpoint needs a probe */
	        "{\"kind\":\"Service\",\"metadata\":{\"name\":\"lb\",\"managedFields\":[]},"
	        "\"spec\":{\"clusterIP\":\"10.0.0.1\",\"ports\":[{\"port\":80}]},\"status\":"
	        "{\"loadBalancer\":{\"ingress\":[{\"ip\":\"203.0.113.1\"}]}}}",
	};
	static const gchar *const defaults[] = {NULL,     "Pod",         "Service",  "",
	                                        "Ki\"nd", "caf\xc3\xa9", "\xff\xfe", "a\\b"};

	for (guint i = 0; i < G_N_ELEMENTS(objects); i++) {
		for (guint k = 0; k < G_N_ELEMENTS(defaults); k++) {
			g_test_message("object %u, default %u", i, k);
			g_assert_cmpuint(
			        check_object_everywhere(objects[i], defaults[k],
			                                defaults[(k + 3) % G_N_ELEMENTS(defaults)],
			                                MESHSYNC_EVENT_TYPE_MODIFIED),
			        >=, 1);
		}
	}
}

static void
test_from_tokens_random(void)
{
	g_autoptr(GRand) rand = g_rand_new_with_seed(test_random_seed(20261130));
	guint compared = 0;
	guint rounds = g_test_thorough() ? 20000 : 1500;

	for (guint i = 0; i < rounds; i++) {
		g_autofree gchar *object = test_random_object(rand);
		g_autofree gchar *with_fields =
		        g_rand_boolean(rand) ? test_add_managed_fields(object, 1024) : NULL;
		const gchar *kind = test_random_default(rand);
		const gchar *api_version = test_random_default(rand);
		MeshSyncEventType event = g_rand_int_range(rand, 0, 3);

		if (g_rand_int_range(rand, 0, 8) == 0)
			g_setenv("MESHSYNC_REDACT_SECRETS", "1", TRUE);
		else
			g_unsetenv("MESHSYNC_REDACT_SECRETS");
		compared += check_object_everywhere(with_fields != NULL ? with_fields : object,
		                                    kind, api_version, event);
	}
	g_unsetenv("MESHSYNC_REDACT_SECRETS");
	/* most random objects have a name, so the store takes them */
	g_assert_cmpuint(compared, >, rounds);
}

static void
test_wire_bytes_kept(void)
{
	g_autoptr(MeshSyncResource) res = convert_fixture("pod.json", MESHSYNC_EVENT_TYPE_ADDED);
	GBytes *wire = meshsync_resource_get_wire_bytes(res);
	g_autofree gchar *json = meshsync_resource_to_json(res);

	g_assert_nonnull(wire);
	g_assert_true(meshsync_resource_get_wire_bytes(res) == wire);
	g_assert_cmpmem(json, strlen(json), g_bytes_get_data(wire, NULL), g_bytes_get_size(wire));
	/* to_json() is a copy: changing it does not touch the kept bytes */
	json[0] = 'X';
	g_assert_cmpint(((const gchar *)g_bytes_get_data(wire, NULL))[0], ==, '{');
}

static void
test_probe_after_wire_bytes(void)
{
	g_autoptr(MeshSyncResource) up =
	        convert_fixture("service-lb-ip.json", MESHSYNC_EVENT_TYPE_ADDED);
	g_autofree gchar *before = NULL;
	g_autofree gchar *after = NULL;

	g_assert_nonnull(meshsync_resource_get_pending_endpoint(up));
	before = meshsync_resource_to_json(up);
	if (g_test_subprocess()) {
		/* a programming error: the bytes writers may hold would no longer match */
		meshsync_resource_complete_probe(up, TRUE);
		return;
	}
	g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
	g_test_trap_assert_failed();
	g_test_trap_assert_stderr("*CRITICAL*meshsync_resource_complete_probe*");
	after = meshsync_resource_to_json(up);
	g_assert_cmpstr(before, ==, after);
	g_assert_nonnull(strstr(after, "\"component_metadata\":null"));
}

static void
test_perf_throughput(void)
{
	gsize len = 0;
	g_autofree gchar *json = read_fixture("pod.json", &len);
	g_autofree gchar *compact = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func(g_object_unref);
	guint iterations = 20000;
	gsize wire_bytes = 0;
	gdouble convert_secs, write_secs;

	/* the informer hands compact JSON to the model: measure on that */
	{
		g_autoptr(JsonParser) parser = json_parser_new();
		g_autoptr(JsonGenerator) gen = json_generator_new();

		g_assert_true(json_parser_load_from_data(parser, json, (gssize)len, NULL));
		json_generator_set_root(gen, json_parser_get_root(parser));
		compact = json_generator_to_data(gen, &len);
	}
	g_test_timer_start();
	for (guint i = 0; i < iterations; i++) {
		MeshSyncResource *res = meshsync_resource_new_from_json(
		        compact, (gssize)len, MESHSYNC_EVENT_TYPE_ADDED, CLUSTER_ID, &error);

		g_assert_nonnull(res);
		g_ptr_array_add(all, res);
	}
	convert_secs = g_test_timer_elapsed();
	g_assert_no_error(error);
	g_test_timer_start();
	for (guint i = 0; i < iterations; i++) {
		g_autofree gchar *wire = meshsync_resource_to_json(g_ptr_array_index(all, i));

		wire_bytes += strlen(wire);
	}
	write_secs = g_test_timer_elapsed();
	g_assert_cmpuint(wire_bytes, >, (gsize)iterations * len);
	g_test_message("input %" G_GSIZE_FORMAT " bytes of compact pod JSON, wire %" G_GSIZE_FORMAT
	               " bytes",
	               len, wire_bytes / iterations);
	g_test_message("convert: %.1f MB/s of input (%.0f objects/s)",
	               (gdouble)len * iterations / convert_secs / 1e6, iterations / convert_secs);
	g_test_message("to_json: %.1f MB/s of output (%.0f objects/s)",
	               (gdouble)wire_bytes / write_secs / 1e6, iterations / write_secs);
	g_test_minimized_result(convert_secs + write_secs,
	                        "convert + to_json: %.1f MB/s of input (%.0f objects/s)",
	                        (gdouble)len * iterations / (convert_secs + write_secs) / 1e6,
	                        iterations / (convert_secs + write_secs));
}

/* Builder signals (fd3): images of Deployments and Pods, a CRD's own name, in
 * component_metadata, on those kinds only; the labels Server groups by are untouched. */
static const struct {
	const gchar *object;
	const gchar *metadata; /* NULL: component_metadata is null */
} builder_cases[] = {
        {"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
         "\"uid\":\"d1\",\"labels\":{\"app.kubernetes.io/name\":\"web\","
         "\"app.kubernetes.io/instance\":\"web-1\"}},\"spec\":{\"template\":{\"spec\":{"
         "\"initContainers\":[{\"name\":\"i\",\"image\":\"busybox:1.36\"},{\"name\":\"j\","
         "\"image\":\"envoy:v1\"}],\"containers\":[{\"name\":\"a\",\"image\":\"envoy:v1\"},"
         "{\"name\":\"b\",\"image\":\"app<2>:\\u00e9\"},{\"name\":\"c\",\"image\":\"\"},"
         "{\"name\":\"d\"}]}}}}",
         "{\"builderSignals\":{\"crdsPresent\":[],\"images\":[\"busybox:1.36\",\"envoy:v1\","
         "\"app\\u003c2\\u003e:\u00e9\"]}}"},
        {"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"uid\":\"p1\"},"
         "\"spec\":{\"containers\":[]}}",
         "{\"builderSignals\":{\"crdsPresent\":[],\"images\":[]}}"},
        /* shallow objects (doc/tiers.md): no containers were read, so no images key */
        {"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"uid\":\"p1\"},"
         "\"spec\":{},\"status\":{}}",
         "{\"builderSignals\":{\"crdsPresent\":[]}}"},
        {"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\","
         "\"uid\":\"d2\"},\"spec\":{},\"status\":{}}",
         "{\"builderSignals\":{\"crdsPresent\":[]}}"},
        /* a shallow Service: no endpoint read, none published, nothing probed */
        {"{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"s\","
         "\"uid\":\"s1\"},\"spec\":{},\"status\":{}}",
         NULL},
        {"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
         "\"metadata\":{\"name\":\"virtualservices.networking.istio.io\",\"uid\":\"c1\"},"
         "\"spec\":{\"group\":\"networking.istio.io\"}}",
         "{\"builderSignals\":{\"crdsPresent\":[\"virtualservices.networking.istio.io\"],"
         "\"images\":[]}}"},
        {"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\","
         "\"uid\":\"m1\"},\"data\":{\"image\":\"x\"}}",
         NULL},
        {"{\"apiVersion\":\"extensions/v1beta1\",\"kind\":\"Deployment\",\"metadata\":{"
         "\"name\":\"old\",\"uid\":\"o1\"},\"spec\":{\"template\":{\"spec\":{\"containers\":"
         "[{\"name\":\"a\",\"image\":\"x\"}]}}}}",
         NULL},
        {"{\"apiVersion\":\"v1\",\"kind\":\"ReplicationController\",\"metadata\":{\"name\":"
         "\"rc\",\"uid\":\"r1\"},\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":"
         "\"a\",\"image\":\"x\"}]}}}}",
         NULL},
};

static void
test_builder_signals(void)
{
	for (guint i = 0; i < G_N_ELEMENTS(builder_cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(MeshSyncResource) res = meshsync_resource_new_from_json(
		        builder_cases[i].object, -1, MESHSYNC_EVENT_TYPE_MODIFIED, "c", &error);
		g_autofree gchar *wire = NULL;

		g_assert_no_error(error);
		g_assert_cmpstr(meshsync_resource_get_component_metadata(res), ==,
		                builder_cases[i].metadata);
		wire = meshsync_resource_to_json(res);
		if (builder_cases[i].metadata == NULL)
			g_assert_nonnull(strstr(wire, "\"component_metadata\":null"));
		else
			g_assert_nonnull(strstr(wire, builder_cases[i].metadata));
	}
	/* more images than are kept on the stack, repeated before and after that point, and an
	 * escaped spelling of one already seen: each image once, in order */
	{
		g_autoptr(GString) pod = g_string_new(
		        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
		        "\"uid\":\"p2\"},\"spec\":{\"containers\":[");
		g_autoptr(GString) want =
		        g_string_new("{\"builderSignals\":{\"crdsPresent\":[],\"images\":[");
		g_autoptr(MeshSyncResource) res = NULL;

		for (guint i = 0; i < 40; i++)
			g_string_append_printf(pod, "{\"name\":\"c%u\",\"image\":\"img%u\"},", i,
			                       i % 20);
		g_string_append(pod, "{\"name\":\"x\",\"image\":\"\\u0069mg3\"},"
		                     "{\"name\":\"y\",\"image\":\"img\\u0031\\u0039\"},"
		                     "{\"name\":\"z\",\"image\":\"\\u0069mg20\"}]}}");
		for (guint i = 0; i < 21; i++)
			g_string_append_printf(want, "%s\"img%u\"", i > 0 ? "," : "", i);
		g_string_append(want, "]}}");
		res = meshsync_resource_new_from_json(pod->str, -1, MESHSYNC_EVENT_TYPE_ADDED, "c",
		                                      NULL);
		g_assert_cmpstr(meshsync_resource_get_component_metadata(res), ==, want->str);
	}
	/* the labels a consumer groups by, as they came */
	{
		g_autoptr(MeshSyncResource) res = meshsync_resource_new_from_json(
		        builder_cases[0].object, -1, MESHSYNC_EVENT_TYPE_ADDED, "c", NULL);
		g_autofree gchar *wire = meshsync_resource_to_json(res);

		g_assert_nonnull(
		        strstr(wire, "\"key\":\"app.kubernetes.io/name\",\"value\":\"web\""));
		g_assert_nonnull(
		        strstr(wire, "\"key\":\"app.kubernetes.io/instance\",\"value\":\"web-1\""));
	}
}

int
main(int argc, char **argv)
{
	gint rc;

	g_test_init(&argc, &argv, NULL);
	g_unsetenv("MESHSYNC_REDACT_SECRETS");

	for (guint i = 0; i < G_N_ELEMENTS(goldens); i++) {
		g_autofree gchar *path =
		        g_strdup_printf("/resource/golden/%s/%s%s%s", goldens[i].expected,
		                        meshsync_event_type_to_string(goldens[i].event),
		                        goldens[i].redact != NULL ? "/redact=" : "",
		                        goldens[i].redact != NULL ? goldens[i].redact : "");

		g_test_add_data_func(path, &goldens[i], test_golden);
	}
	g_test_add_func("/resource/managed-fields-dropped", test_managed_fields_dropped);
	g_test_add_func("/resource/redaction/off-by-default", test_redaction_off_by_default);
	g_test_add_func("/resource/redaction/on", test_redaction_on);
	g_test_add_func("/resource/redaction/from-state", test_redaction_from_state);
	g_test_add_func("/resource/redaction/configmap-untouched", test_redaction_leaves_configmap);
	g_test_add_func("/resource/redaction/truthiness", test_redaction_truthiness);
	g_test_add_func("/resource/redaction/helper", test_redact_helper);
	g_test_add_func("/resource/getters", test_getters);
	g_test_add_func("/resource/getters/cluster-scoped", test_cluster_scoped_getters);
	g_test_add_func("/resource/event-type/strings", test_event_type_strings);
	g_test_add_func("/resource/invalid-input", test_invalid_input);
	g_test_add_func("/resource/case-insensitive-fields", test_case_insensitive_fields);
	g_test_add_func("/resource/service/probe-outcomes", test_service_probe_outcomes);
	g_test_add_func("/resource/service/probe-async", test_service_probe_async);
	g_test_add_func("/resource/service/probe-after-wire-bytes", test_probe_after_wire_bytes);
	g_test_add_func("/resource/wire-bytes/kept", test_wire_bytes_kept);
	g_test_add_func("/resource/from-tokens/fixtures", test_from_tokens_fixtures);
	g_test_add_func("/resource/from-tokens/odd-members", test_from_tokens_odd_members);
	g_test_add_func("/resource/from-tokens/random", test_from_tokens_random);
	g_test_add_func("/resource/builder-signals", test_builder_signals);
	if (g_test_perf())
		g_test_add_func("/resource/perf/throughput", test_perf_throughput);

	rc = g_test_run();
	msd_attribute_cache_free(shared_cache);
	msd_convert_state_clear(&shared_state);
	return rc;
}
