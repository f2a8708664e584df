/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <string.h>

#include "engine/msd-infra-detector.h"
#include "engine/msd-infra-signature.h"
#include "util/msd-json-tokens.h"

/* What the detector said, in order: "+istio", "-istio". */
typedef struct {
	GPtrArray *changes;
} Fixture;

static void
changed_cb(MsdInfraDetector *detector,
           const MsdInfraSignature *signature,
           gboolean detected,
           Fixture *fixture)
{
	g_ptr_array_add(fixture->changes, g_strconcat(detected ? "+" : "-", signature->name, NULL));
}

static MsdInfraDetector *
detector_new(Fixture *fixture, const gchar *const *enabled, const gchar *const *disabled)
{
	MsdInfraDetector *detector = msd_infra_detector_new(enabled, disabled);

	fixture->changes = g_ptr_array_new_with_free_func(g_free);
	g_signal_connect(detector, "changed", G_CALLBACK(changed_cb), fixture);
	return detector;
}

static void
fixture_clear(Fixture *fixture)
{
	g_ptr_array_unref(fixture->changes);
}

static gchar *
changes_text(Fixture *fixture)
{
	g_autoptr(GString) text = g_string_new(NULL);

	for (guint i = 0; i < fixture->changes->len; i++)
		g_string_append_printf(text, "%s%s", i > 0 ? " " : "",
		                       (const gchar *)g_ptr_array_index(fixture->changes, i));
	g_ptr_array_set_size(fixture->changes, 0);
	return g_string_free(g_steal_pointer(&text), FALSE);
}

static void
add_crd(MsdInfraDetector *detector, const gchar *name)
{
	g_autofree gchar *uid = g_strconcat("crd-", name, NULL);

	msd_infra_detector_observe(detector, uid, "CustomResourceDefinition", name, NULL);
}

static void
remove_crd(MsdInfraDetector *detector, const gchar *name)
{
	g_autofree gchar *uid = g_strconcat("crd-", name, NULL);

	msd_infra_detector_forget(detector, uid);
}

static const gchar *const istiod_labels[] = {"app=istiod", "istio.io/rev=default",
                                             "install.operator.istio.io/owning-resource=unknown",
                                             NULL};
static const gchar *const linkerd_labels[] = {"linkerd.io/control-plane-component=destination",
                                              "linkerd.io/control-plane-ns=linkerd", NULL};
static const gchar *const plain_labels[] = {"app=web", NULL};

/* The registry holds fd1's seeds, each complete and with well-formed tier-3 names; both the
 * delegated and the in-process paths exist. */
static void
test_registry(void)
{
	static const gchar *const seeds[] = {"istio", "linkerd", "prometheus-operator",
	                                     "grafana-operator", NULL};
	guint n = 0;
	const MsdInfraSignature *all = msd_infra_signature_get_all(&n);
	gboolean delegated = FALSE;
	gboolean in_process = FALSE;

	g_assert_cmpuint(n, ==, g_strv_length((gchar **)seeds));
	for (guint i = 0; seeds[i] != NULL; i++)
		g_assert_nonnull(msd_infra_signature_lookup(seeds[i]));
	g_assert_null(msd_infra_signature_lookup("consul"));
	for (guint i = 0; i < n; i++) {
		g_assert_nonnull(all[i].indicator_crds[0]);
		g_assert_nonnull(all[i].indicator_labels[0]);
		g_assert_nonnull(all[i].tier3_resource_keys[0]);
		for (guint j = 0; all[i].tier3_resource_keys[j] != NULL; j++) {
			g_auto(GStrv) parts = g_strsplit(all[i].tier3_resource_keys[j], ".", 3);
			g_autofree gchar *crd = NULL;

			g_assert_cmpuint(g_strv_length(parts), ==, 3);
			/* each tier-3 type is one of the indicator CRDs, so detection implies the
			 * server serves it */
			crd = g_strconcat(parts[0], ".", parts[2], NULL);
			g_assert_true(g_strv_contains(all[i].indicator_crds, crd));
		}
		if (all[i].delegate_to_adapter)
			delegated = TRUE;
		else
			in_process = TRUE;
	}
	g_assert_true(delegated);
	g_assert_true(in_process);
}

/* CRDs and a labelled control plane: detected at evaluation, and not before it. */
static void
test_present(void)
{
	Fixture fixture;
	g_autoptr(MsdInfraDetector) detector = detector_new(&fixture, NULL, NULL);
	g_autofree gchar *changes = NULL;
	g_autofree gchar *evidence = NULL;

	add_crd(detector, "virtualservices.networking.istio.io");
	add_crd(detector, "gateways.networking.istio.io");
	msd_infra_detector_observe(detector, "d1", "Deployment", "istiod", istiod_labels);
	msd_infra_detector_observe(detector, "p1", "Pod", "istiod-5c8f", istiod_labels);
	g_assert_false(msd_infra_detector_is_detected(detector, "istio"));
	g_assert_cmpuint(fixture.changes->len, ==, 0);

	msd_infra_detector_evaluate(detector);
	changes = changes_text(&fixture);
	g_assert_cmpstr(changes, ==, "+istio");
	g_assert_true(msd_infra_detector_is_detected(detector, "istio"));
	g_assert_false(msd_infra_detector_is_detected(detector, "linkerd"));
	evidence = msd_infra_detector_describe_evidence(detector, "istio");
	g_assert_cmpstr(evidence, ==,
	                "2 CRDs (virtualservices.networking.istio.io, "
	                "gateways.networking.istio.io), 2 labelled workloads (app=istiod)");
	fixture_clear(&fixture);
}

/* Nothing of any signature: nothing detected; unrelated objects and kinds do not count. */
static void
test_absent(void)
{
	Fixture fixture;
	g_autoptr(MsdInfraDetector) detector = detector_new(&fixture, NULL, NULL);
	static const gchar *const on_a_service[] = {"app=istiod", NULL};

	add_crd(detector, "certificates.cert-manager.io");
	msd_infra_detector_observe(detector, "d1", "Deployment", "web", plain_labels);
	/* a Service is no workload: its labels are not evidence */
	msd_infra_detector_observe(detector, "s1", "Service", "istiod", on_a_service);
	msd_infra_detector_observe(detector, "s2", "CustomResourceDefinition", "x", NULL);
	msd_infra_detector_evaluate(detector);
	g_assert_cmpuint(fixture.changes->len, ==, 0);
	for (guint i = 0, n = 0; i < (msd_infra_signature_get_all(&n), n); i++)
		g_assert_false(msd_infra_detector_is_detected(
		        detector, msd_infra_signature_get_all(&n)[i].name));
	fixture_clear(&fixture);
}

/* A CRD of a signature decides (fd1: a synthetic CRD activates tier 3), even without a
 * control plane, as after an uninstall that kept the CRDs; a workload labelled like a control
 * plane without its API types is partial evidence and detects nothing. The label's value
 * matters where the registry gives one, and any value does where it gives only the key. */
static void
test_partial(void)
{
	Fixture fixture;
	g_autoptr(MsdInfraDetector) detector = detector_new(&fixture, NULL, NULL);
	static const gchar *const wrong_value[] = {"app=istiod-canary", NULL};
	g_autofree gchar *changes = NULL;
	g_autofree gchar *more = NULL;

	msd_infra_detector_evaluate(detector);
	msd_infra_detector_observe(detector, "d1", "Deployment", "x", wrong_value);
	msd_infra_detector_observe(detector, "d2", "Deployment", "linkerd-destination",
	                           linkerd_labels);
	g_assert_cmpuint(fixture.changes->len, ==, 0);
	g_assert_false(msd_infra_detector_is_detected(detector, "istio"));
	g_assert_false(msd_infra_detector_is_detected(detector, "linkerd"));

	/* a CRD alone: detected at once, since evaluation is on */
	add_crd(detector, "virtualservices.networking.istio.io");
	changes = changes_text(&fixture);
	g_assert_cmpstr(changes, ==, "+istio");
	/* the labelled workload's missing CRD arrives */
	add_crd(detector, "serviceprofiles.linkerd.io");
	more = changes_text(&fixture);
	g_assert_cmpstr(more, ==, "+linkerd");
	fixture_clear(&fixture);
}

/* Counts follow the changes: a second CRD going keeps the detection, the last one ends it; a
 * workload whose label is changed away is no longer evidence (though the CRD still decides). */
static void
test_comes_and_goes(void)
{
	Fixture fixture;
	g_autoptr(MsdInfraDetector) detector = detector_new(&fixture, NULL, NULL);
	g_autofree gchar *first = NULL;
	g_autofree gchar *second = NULL;
	g_autofree gchar *third = NULL;
	g_autofree gchar *evidence = NULL;

	msd_infra_detector_evaluate(detector);
	add_crd(detector, "prometheuses.monitoring.coreos.com");
	add_crd(detector, "servicemonitors.monitoring.coreos.com");
	{
		static const gchar *const operator_labels[] = {
		        "app.kubernetes.io/name=prometheus-operator", NULL};

		msd_infra_detector_observe(detector, "d1", "Deployment", "prometheus-operator",
		                           operator_labels);
		/* the same object seen again changes nothing */
		msd_infra_detector_observe(detector, "d1", "Deployment", "prometheus-operator",
		                           operator_labels);
	}
	first = changes_text(&fixture);
	g_assert_cmpstr(first, ==, "+prometheus-operator");

	remove_crd(detector, "servicemonitors.monitoring.coreos.com");
	g_assert_true(msd_infra_detector_is_detected(detector, "prometheus-operator"));
	remove_crd(detector, "prometheuses.monitoring.coreos.com");
	second = changes_text(&fixture);
	g_assert_cmpstr(second, ==, "-prometheus-operator");

	add_crd(detector, "prometheuses.monitoring.coreos.com");
	g_assert_true(msd_infra_detector_is_detected(detector, "prometheus-operator"));
	msd_infra_detector_observe(detector, "d1", "Deployment", "prometheus-operator",
	                           plain_labels);
	third = changes_text(&fixture);
	g_assert_cmpstr(third, ==, "+prometheus-operator");
	evidence = msd_infra_detector_describe_evidence(detector, "prometheus-operator");
	g_assert_true(g_str_has_suffix(evidence, ", 0 labelled workloads"));
	/* forgetting an object never seen is harmless */
	msd_infra_detector_forget(detector, "nobody");
	fixture_clear(&fixture);
}

/* EnabledInfra limits the candidates, DisabledInfra removes some and wins over EnabledInfra;
 * NULL for both is the whole registry. */
static void
test_enabled_disabled(void)
{
	static const gchar *const enabled[] = {"linkerd", "istio", "consul", NULL};
	static const gchar *const disabled[] = {"istio", NULL};
	Fixture fixture;
	g_autoptr(MsdInfraDetector) all = msd_infra_detector_new(NULL, NULL);
	g_autoptr(MsdInfraDetector) detector = NULL;
	g_autofree gchar *changes = NULL;

	for (guint i = 0, n = 0; i < (msd_infra_signature_get_all(&n), n); i++)
		g_assert_true(msd_infra_detector_is_enabled(
		        all, msd_infra_signature_get_all(&n)[i].name));

	g_test_expect_message("MeshSyncEngine", G_LOG_LEVEL_MESSAGE,
	                      "EnabledInfra names consul, which is no known infrastructure*");
	detector = detector_new(&fixture, enabled, disabled);
	g_test_assert_expected_messages();
	g_assert_true(msd_infra_detector_is_enabled(detector, "linkerd"));
	g_assert_false(msd_infra_detector_is_enabled(detector, "istio"));
	g_assert_false(msd_infra_detector_is_enabled(detector, "grafana-operator"));

	add_crd(detector, "virtualservices.networking.istio.io");
	msd_infra_detector_observe(detector, "d1", "Deployment", "istiod", istiod_labels);
	add_crd(detector, "grafanas.grafana.integreatly.org");
	{
		static const gchar *const grafana[] = {"app.kubernetes.io/name=grafana-operator",
		                                       NULL};

		msd_infra_detector_observe(detector, "d2", "Deployment", "grafana-operator",
		                           grafana);
	}
	add_crd(detector, "serviceprofiles.linkerd.io");
	msd_infra_detector_observe(detector, "d3", "Deployment", "linkerd-destination",
	                           linkerd_labels);
	msd_infra_detector_evaluate(detector);
	changes = changes_text(&fixture);
	g_assert_cmpstr(changes, ==, "+linkerd");
	fixture_clear(&fixture);
}

/* A kind of evidence the run cannot see (no informer for it) is not required. */
static void
test_sources(void)
{
	Fixture fixture;
	g_autoptr(MsdInfraDetector) detector = detector_new(&fixture, NULL, NULL);
	g_autofree gchar *changes = NULL;

	msd_infra_detector_set_sources(detector, FALSE, TRUE);
	msd_infra_detector_observe(detector, "d1", "Deployment", "istiod", istiod_labels);
	msd_infra_detector_evaluate(detector);
	changes = changes_text(&fixture);
	g_assert_cmpstr(changes, ==, "+istio");
	fixture_clear(&fixture);

	{
		Fixture none;
		g_autoptr(MsdInfraDetector) blind = detector_new(&none, NULL, NULL);

		msd_infra_detector_set_sources(blind, FALSE, FALSE);
		msd_infra_detector_observe(blind, "d1", "Deployment", "istiod", istiod_labels);
		msd_infra_detector_evaluate(blind);
		g_assert_cmpuint(none.changes->len, ==, 0);
		fixture_clear(&none);
	}
}

/* Informer events: labels read from the event's tokens (a list item has no kind of its own),
 * from the stored copy when there are none, and DELETED by uid. */
static void
test_events(void)
{
	static const gchar deployment[] =
	        "{\"metadata\":{\"name\":\"linkerd-destination\",\"namespace\":\"linkerd\","
	        "\"uid\":\"u1\",\"labels\":{\"linkerd.io/control-plane-component\":"
	        "\"destination\",\"linkerd.io/control-plane-ns\":\"linkerd\"}}}";
	static const gchar crd[] = "{\"metadata\":{\"name\":\"serviceprofiles.linkerd.io\","
	                           "\"uid\":\"u2\"}}";
	Fixture fixture;
	g_autoptr(MsdInfraDetector) detector = detector_new(&fixture, NULL, NULL);
	g_auto(MsdJsonTokens) tokens = MSD_JSON_TOKENS_INIT;
	g_autoptr(MsdStoreEntry) entry = NULL;
	g_autoptr(MsdStoreEntry) crd_entry = NULL;
	g_autofree gchar *changes = NULL;
	g_autofree gchar *gone = NULL;
	MsdInformerEvent event = {.index = 0};

	msd_infra_detector_evaluate(detector);
	g_assert_true(msd_json_tokens_parse(&tokens, deployment, strlen(deployment), NULL));
	entry = msd_store_entry_new_from_tokens(&tokens, 0, "Deployment", "apps/v1", NULL);
	g_assert_nonnull(entry);
	event.type = MESHSYNC_EVENT_TYPE_ADDED;
	event.entry = entry;
	/* a shallow type's event: the tokens as read, none for the conversion */
	event.doc = NULL;
	event.read = &tokens;
	event.kind = "Deployment";
	msd_infra_detector_handle_event(detector, &event);

	/* no tokens: the stored copy is read */
	crd_entry = msd_store_entry_new_from_json(crd, strlen(crd), NULL);
	g_assert_nonnull(crd_entry);
	event.type = MESHSYNC_EVENT_TYPE_MODIFIED;
	event.entry = crd_entry;
	event.read = NULL;
	event.index = -1;
	event.kind = "CustomResourceDefinition";
	msd_infra_detector_handle_event(detector, &event);
	changes = changes_text(&fixture);
	g_assert_cmpstr(changes, ==, "+linkerd");

	event.type = MESHSYNC_EVENT_TYPE_DELETED;
	msd_infra_detector_handle_event(detector, &event);
	gone = changes_text(&fixture);
	g_assert_cmpstr(gone, ==, "-linkerd");
	fixture_clear(&fixture);
}

/* The CRDs' source replaced: suspended, the CRDs forgotten, and told again by the new source,
 * the decision is the same and nothing flips on the way. */
static void
test_crd_source_replaced(void)
{
	Fixture fixture;
	g_autoptr(MsdInfraDetector) detector = detector_new(&fixture, NULL, NULL);
	g_autofree gchar *first = NULL;
	g_autofree gchar *gone = NULL;

	add_crd(detector, "virtualservices.networking.istio.io");
	msd_infra_detector_observe(detector, "d1", "Deployment", "istiod", istiod_labels);
	msd_infra_detector_evaluate(detector);
	first = changes_text(&fixture);
	g_assert_cmpstr(first, ==, "+istio");

	msd_infra_detector_suspend(detector);
	msd_infra_detector_forget_crds(detector);
	g_assert_cmpuint(fixture.changes->len, ==, 0);
	msd_infra_detector_observe(detector, "other-uid", "CustomResourceDefinition",
	                           "virtualservices.networking.istio.io", NULL);
	msd_infra_detector_evaluate(detector);
	g_assert_cmpuint(fixture.changes->len, ==, 0);
	g_assert_true(msd_infra_detector_is_detected(detector, "istio"));

	/* the workloads were kept: only the CRD counts were dropped */
	msd_infra_detector_forget_crds(detector);
	gone = changes_text(&fixture);
	g_assert_cmpstr(gone, ==, "-istio");
	fixture_clear(&fixture);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
	g_test_add_func("/infra-detector/registry", test_registry);
	g_test_add_func("/infra-detector/present", test_present);
	g_test_add_func("/infra-detector/absent", test_absent);
	g_test_add_func("/infra-detector/partial", test_partial);
	g_test_add_func("/infra-detector/comes-and-goes", test_comes_and_goes);
	g_test_add_func("/infra-detector/enabled-disabled", test_enabled_disabled);
	g_test_add_func("/infra-detector/sources", test_sources);
	g_test_add_func("/infra-detector/events", test_events);
	g_test_add_func("/infra-detector/crd-source-replaced", test_crd_source_replaced);
	return g_test_run();
}
