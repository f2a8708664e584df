"""meshsync-kubesim's metadata-only forms, without a real server: get, list (paged and
gzipped), watch and streaming list under Accept: ...;as=PartialObjectMetadata[List];
g=meta.k8s.io;v=v1 (issue 23's shallow tier), and the 406s around them. The expected values
are the real API server's, as test_realkube_metadata.py checks them against one and
doc/kubesim.md records them."""

import json

import pytest

import kubesim
from raw_http import http_request

TOKEN = "metadata-token"
NAMESPACE = "shallow"
POM = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
POML = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
POML_BETA = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1"
CONFIGMAPS = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
OBJECT_META_ORDER = ["name", "generateName", "namespace", "selfLink", "uid", "resourceVersion",
                     "generation", "creationTimestamp", "deletionTimestamp",
                     "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences",
                     "finalizers", "managedFields"]
# generated pods: a list of their metadata alone still passes the 128 KiB gzip threshold
PODS = 600


@pytest.fixture(scope="module")
def sim():
    with kubesim.Kubesim(token=TOKEN, pods=PODS, namespaces=2) as sim:
        def create(path, obj):
            status, answer = sim.request("POST", path, obj)
            assert status == 201, (path, status, answer)

        create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                      "metadata": {"name": NAMESPACE}})
        for i in range(5):
            create(CONFIGMAPS, {
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"annotations": {"z": "<&>", "a": "1"}, "name": f"cm-{i}",
                             "labels": {"tier": "web", "app": "shallow"}},
                "data": {"big": "x" * 100}})
        create(f"/apis/apps/v1/namespaces/{NAMESPACE}/daemonsets", {
            "apiVersion": "apps/v1", "kind": "DaemonSet",
            # as a real server writes it, from the internal type's spec.templateGeneration
            "metadata": {"name": "agent", "namespace": NAMESPACE,
                         "annotations": {"deprecated.daemonset.template.generation": "1",
                                         "team": "mesh"}},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                     "template": {"metadata": {"labels": {"app": "agent"}},
                                  "spec": {"containers": [{"name": "a", "image": "agent:1"}]}}}})
        # a custom resource keeps the member order it was written in: metadata last first
        create(f"/apis/meshery.io/v1alpha1/namespaces/{NAMESPACE}/meshsyncs", {
            "metadata": {"labels": {"b": "2", "a": "1"}, "name": "meshery-meshsync"},
            "spec": {"broker": {}}, "kind": "MeshSync", "apiVersion": "meshery.io/v1alpha1"})
        yield sim


def get(sim, target, accept, encoding=None, stop=None):
    headers = [("Authorization", f"Bearer {TOKEN}"), ("User-Agent", "metadata-forms/1.0")]
    if accept is not None:
        headers.append(("Accept", accept))
    if encoding is not None:
        headers.append(("Accept-Encoding", encoding))
    return http_request(sim.url, target, headers,
                        stop=(lambda resp, text: stop(text)) if stop else None)


def events(resp):
    return [json.loads(line) for line in resp.text.split(b"\n") if line]


def full(sim, path):
    status, obj = sim.request("GET", path)
    assert status == 200, (path, status, obj)
    return obj


def test_get_is_the_metadata_alone_in_object_meta_order(sim):
    resp = get(sim, f"{CONFIGMAPS}/cm-0", POM)
    assert resp.status == 200
    assert resp.header("Content-Type") == "application/json"
    assert resp.text.endswith(b"}\n")
    # Go's escaping of < & > is kept as stored
    assert b'"z":"\\u003c\\u0026\\u003e"' in resp.text
    doc = json.loads(resp.text)
    assert list(doc) == ["kind", "apiVersion", "metadata"]
    assert (doc["kind"], doc["apiVersion"]) == ("PartialObjectMetadata", "meta.k8s.io/v1")
    meta = doc["metadata"]
    assert meta == full(sim, f"{CONFIGMAPS}/cm-0")["metadata"]
    assert list(meta) == [k for k in OBJECT_META_ORDER if k in meta]
    # map keys sorted, as Go writes a map
    assert list(meta["labels"]) == ["app", "tier"]
    assert list(meta["annotations"]) == ["a", "z"]

    beta = json.loads(get(sim, f"{CONFIGMAPS}/cm-0", POM.replace("v=v1", "v=v1beta1")).text)
    assert beta["apiVersion"] == "meta.k8s.io/v1beta1"


def test_custom_resources_and_daemonsets_read_as_the_typed_metadata(sim):
    path = f"/apis/meshery.io/v1alpha1/namespaces/{NAMESPACE}/meshsyncs/meshery-meshsync"
    meta = json.loads(get(sim, path, POM).text)["metadata"]
    assert list(meta) == [k for k in OBJECT_META_ORDER if k in meta]
    assert list(meta["labels"]) == ["a", "b"]
    assert meta["generation"] == 1

    path = f"/apis/apps/v1/namespaces/{NAMESPACE}/daemonsets/agent"
    assert "deprecated.daemonset.template.generation" in full(sim, path)["metadata"][
        "annotations"]
    # the internal DaemonSet keeps that annotation in its spec
    assert json.loads(get(sim, path, POM).text)["metadata"]["annotations"] == {"team": "mesh"}


def test_list_pages_are_metadata_lists(sim):
    resp = get(sim, f"{CONFIGMAPS}?limit=2", POML)
    assert resp.status == 200
    page = json.loads(resp.text)
    assert (page["kind"], page["apiVersion"]) == ("PartialObjectMetadataList", "meta.k8s.io/v1")
    assert list(page["metadata"]) == ["resourceVersion", "continue", "remainingItemCount"]
    assert page["metadata"]["remainingItemCount"] == 3
    names = [item["metadata"]["name"] for item in page["items"]]
    assert names == ["cm-0", "cm-1"]
    for item in page["items"]:
        assert list(item) == ["kind", "apiVersion", "metadata"]
        assert item["kind"] == "PartialObjectMetadata"
    token = page["metadata"]["continue"]
    rest = json.loads(get(sim, f"{CONFIGMAPS}?limit=10&continue={token}", POML_BETA).text)
    assert rest["apiVersion"] == "meta.k8s.io/v1beta1"
    assert "continue" not in rest["metadata"]
    assert [i["metadata"]["name"] for i in rest["items"]] == ["cm-2", "cm-3", "cm-4"]
    assert {i["apiVersion"] for i in rest["items"]} == {"meta.k8s.io/v1beta1"}

    # an empty converted list has null items, unlike the typed list's []
    empty = get(sim, "/api/v1/namespaces/nowhere/configmaps", POML)
    assert b'"items":null' in empty.text


def test_a_large_metadata_list_is_every_object_metadata_gzipped(sim):
    plain = full(sim, "/api/v1/pods")
    resp = get(sim, "/api/v1/pods", POML, encoding="gzip")
    assert resp.status == 200
    assert resp.header("Content-Encoding") == "gzip"
    doc = json.loads(resp.text)
    assert len(doc["items"]) == len(plain["items"]) >= PODS
    for item, obj in zip(doc["items"], plain["items"]):
        assert item["metadata"] == obj["metadata"]
    # the metadata is what a shallow informer saves: most of a pod is its spec and status
    assert len(resp.text) < len(json.dumps(plain)) / 2


def test_client_go_header_and_what_cannot_be_served(sim):
    client_go = f"{POML},{POML_BETA},application/json"
    assert json.loads(get(sim, CONFIGMAPS, client_go).text)["kind"] == \
        "PartialObjectMetadataList"

    # the object form of a list: 406, indented when nothing plain follows in the header
    resp = get(sim, CONFIGMAPS, POM)
    assert resp.status == 406
    assert resp.text.startswith(b'{\n  "kind": "Status",\n')
    assert not resp.text.endswith(b"\n")
    status = json.loads(resp.text)
    assert status["reason"] == "NotAcceptable"
    assert status["message"] == ("you requested PartialObjectMetadata, but the requested "
                                 "object is a list (*core.ConfigMapList)")
    resp = get(sim, CONFIGMAPS, f"{POM},application/json")
    assert resp.status == 406
    assert resp.text.startswith(b'{"kind":"Status",') and resp.text.endswith(b"}\n")

    resp = get(sim, f"{CONFIGMAPS}/cm-0", POML)
    assert json.loads(resp.text)["message"] == (
        "you requested PartialObjectMetadataList, but the requested object is not a list "
        "(*core.ConfigMap)")
    resp = get(sim, f"/apis/apps/v1/namespaces/{NAMESPACE}/daemonsets", POM)
    assert json.loads(resp.text)["message"].endswith("(*apps.DaemonSetList)")

    # nothing acceptable at all: the API server's message, then go-restful's
    resp = get(sim, f"{CONFIGMAPS}/cm-0", POM.replace("v=v1", "v=v2"))
    assert resp.status == 406
    assert json.loads(resp.text)["message"] == (
        "only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.kubernetes.protobuf")
    resp = get(sim, f"{CONFIGMAPS}/cm-0", "text/html")
    assert resp.status == 406
    assert json.loads(resp.text)["message"].startswith(
        "406: Not Acceptable\n\nAvailable representations: application/json")
    # a range that cannot be served is passed over for the next
    resp = get(sim, f"{CONFIGMAPS}/cm-0", POM.replace("v=v1", "v=v2") + ",application/json")
    assert json.loads(resp.text)["kind"] == "ConfigMap"
    resp = get(sim, f"{CONFIGMAPS}/cm-0", f"{POM};q=0.5, application/json;q=0.9")
    assert json.loads(resp.text)["kind"] == "ConfigMap"


def test_watch_list_sends_metadata_and_ends_with_the_metadata_bookmark(sim):
    resp = get(sim, f"{CONFIGMAPS}?watch=1&sendInitialEvents=true&resourceVersionMatch="
               "NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=60", POM, encoding="gzip",
               stop=lambda text: b"initial-events-end" in text)
    assert resp.status == 200
    assert resp.header("Content-Encoding") == "gzip"
    got = events(resp)
    assert [e["type"] for e in got] == ["ADDED"] * 5 + ["BOOKMARK"]
    for event in got[:-1]:
        assert list(event["object"]) == ["kind", "apiVersion", "metadata"]
        assert event["object"]["kind"] == "PartialObjectMetadata"
    bookmark = got[-1]["object"]
    assert bookmark == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                        "metadata": {"resourceVersion": bookmark["metadata"]["resourceVersion"],
                                     "annotations": {"k8s.io/initial-events-end": "true"}}}


def test_watch_events_are_metadata(sim):
    rv = full(sim, f"{CONFIGMAPS}?limit=1")["metadata"]["resourceVersion"]
    obj = {"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "changing", "namespace": NAMESPACE}, "data": {"a": "1"}}
    assert sim.request("POST", CONFIGMAPS, obj)[0] == 201
    assert sim.request("PATCH", f"{CONFIGMAPS}/changing", {"metadata": {"labels": {"x": "y"}}},
                       content_type="application/merge-patch+json")[0] == 200
    assert sim.request("DELETE", f"{CONFIGMAPS}/changing")[0] == 200
    resp = get(sim, f"{CONFIGMAPS}?watch=1&resourceVersion={rv}&timeoutSeconds=60", POM,
               stop=lambda text: b'"DELETED"' in text)
    got = events(resp)
    assert [e["type"] for e in got] == ["ADDED", "MODIFIED", "DELETED"]
    assert got[1]["object"]["metadata"]["labels"] == {"x": "y"}
    assert all(e["object"]["kind"] == "PartialObjectMetadata" for e in got)
    assert all("data" not in e["object"] for e in got)


def test_a_watch_in_the_list_form_ends_at_its_first_object(sim):
    # no object converts to PartialObjectMetadataList: the real server ends the stream
    resp = get(sim, f"{CONFIGMAPS}?watch=1&sendInitialEvents=true&resourceVersionMatch="
               "NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=60", POML)
    assert resp.status == 200
    assert resp.complete
    assert resp.text == b""
