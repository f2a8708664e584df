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
#include "model/msd-secret-redact.h"

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

int
main(int argc, char **argv)
{
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
	if (g_test_perf())
		g_test_add_func("/resource/perf/throughput", test_perf_throughput);

	return g_test_run();
}
