"""Differential fidelity of the metadata-only forms: meshsync-kubesim against a real
kube-apiserver (v1.37.2, realkube) for gets, lists and watches whose Accept asks for
meta.k8s.io PartialObjectMetadata or PartialObjectMetadataList (issue 23, the shallow tier).

Both servers get the same objects through the same API calls, so that their metadata
(managedFields included) is written by each server itself. Each probe goes to both over
HTTP/1.1 through the raw client of the differential test; the answers are compared field by
field after what must differ is made a placeholder (uids, resourceVersions, timestamps,
continue tokens): status code, Content-Type and Content-Encoding, and the body: a document
member by member, an error byte for byte (its indentation and final newline show which of the
API server's encoders wrote it), a watch event by event. The differences ALLOWED lists are
those of the objects themselves (doc/kubesim.md), not of the metadata forms; an allowed
difference that no longer occurs fails the test too.

The real server is meshsync-realkube ($MESHSYNC_REALKUBE, else scripts/realkube's path): the
test fails, and does not skip, without it.
"""

import json
import re
import threading
import urllib.parse

import pytest

import kubesim
import realkube
from kube_seed import Client
from raw_http import http_request

TOKEN = "metadata-admin-token"
RESTRICTED_TOKEN = "metadata-restricted-token"
NAMESPACE = "shallow"
POM = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
POM_BETA = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1"
POML = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
POML_BETA = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1"
# what client-go's metadata client sent for a list before it asked for protobuf first
POML_CLIENT_GO = f"{POML},{POML_BETA},application/json"
POM_CLIENT_GO = f"{POM},{POM_BETA},application/json"

# (probe regex, field regex) -> why kubesim differs there. Differences of the objects
# themselves, which the metadata form shows as it shows any metadata.
ALLOWED = {
    (r"pods", r"metadata\.(generation|keys)$"):
        "a 1.33+ server sets a Pod's metadata.generation; kubesim's pods have none",
    (r".", r"\.managedFields\.\d+\.fieldsV1\."):
        "kubesim defaults nothing, so its managedFields own only what the client sent, not "
        "the fields the server's defaulting set (imagePullPolicy, revisionHistoryLimit, ...), "
        "and it knows list semantics from field names, not schemas",
    (r"(^get|^list|^watchlist|^watch without).* ?(/api/v1/namespaces/shallow v|namespaces)",
     r"metadata\.(keys|labels\..*|managedFields\..*)$"):
        "a Namespace made through kubesim's API gets neither the kubernetes.io/metadata.name "
        "label nor a managedFields entry",
    (r"^(no accept|lower q first|unknown version, plain after)$", r"\.labels\.keys$"):
        "the whole object: kubesim keeps the labels of an object written through its API in "
        "the order the client sent them; a real server sorts them (the metadata forms are "
        "sorted)",
}


def manifests():
    labels = {"app": "shallow", "tier": "web"}
    objs = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}]
    for i in range(4):
        objs.append({"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": f"settings-{i}", "namespace": NAMESPACE,
                                  "labels": dict(labels, index=str(i)),
                                  "annotations": {"note": "<kept & escaped>"}},
                     "data": {"mode": "test"}})
    # ownerReferences and finalizers: members the typed ObjectMeta orders
    objs.append({"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "owned", "namespace": NAMESPACE,
                              "finalizers": ["example.com/keep"],
                              "ownerReferences": [{
                                  "apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                  "uid": "6f1f2f5e-0000-4000-8000-000000000001",
                                  "controller": True, "blockOwnerDeletion": False}]},
                 "data": {"k": "v"}})
    objs += [
        {"apiVersion": "v1", "kind": "Secret",
         "metadata": {"name": "key", "namespace": NAMESPACE, "labels": labels},
         "type": "Opaque", "data": {"k": "dg=="}},
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": "web", "namespace": NAMESPACE, "labels": labels},
         "spec": {"selector": labels, "ports": [{"port": 80, "targetPort": 8080}]}},
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": "web-0", "namespace": NAMESPACE, "labels": labels},
         "spec": {"containers": [{"name": "web", "image": "registry.example/web:1"}]}},
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "web", "namespace": NAMESPACE, "labels": labels,
                      "annotations": {"team": "mesh"}},
         "spec": {"replicas": 0, "selector": {"matchLabels": labels},
                  "template": {"metadata": {"labels": labels},
                               "spec": {"containers": [{"name": "web",
                                                        "image": "registry.example/web:1"}]}}}},
        # apps/v1 keeps the template generation in an annotation, the internal type in its
        # spec: the metadata form has no such annotation
        {"apiVersion": "apps/v1", "kind": "DaemonSet",
         "metadata": {"name": "agent", "namespace": NAMESPACE},
         "spec": {"selector": {"matchLabels": {"app": "agent"}},
                  "template": {"metadata": {"labels": {"app": "agent"}},
                               "spec": {"containers": [{"name": "agent",
                                                        "image": "registry.example/agent:1"}]}}}},
    ]
    return objs


def meshsync_object():
    return {"apiVersion": "meshery.io/v1alpha1", "kind": "MeshSync",
            "metadata": {"name": "meshery-meshsync", "namespace": NAMESPACE,
                         "labels": {"app": "meshsync"}, "annotations": {"b": "2", "a": "1"}},
            "spec": {"broker": {"native": {"name": "meshery-broker"}}}}


PLURALS = {"Namespace": "namespaces", "ConfigMap": "configmaps", "Secret": "secrets",
           "Service": "services", "Pod": "pods", "Deployment": "deployments",
           "DaemonSet": "daemonsets", "MeshSync": "meshsyncs",
           "CustomResourceDefinition": "customresourcedefinitions"}


def collection_path(obj):
    group_version = obj["apiVersion"]
    prefix = f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"
    plural = PLURALS[obj["kind"]]
    namespace = obj["metadata"].get("namespace")
    return f"{prefix}/namespaces/{namespace}/{plural}" if namespace else f"{prefix}/{plural}"


class Server:
    def __init__(self, name, url, kubeconfig):
        self.name = name
        self.url = url
        self.client = Client(kubeconfig)

    def call(self, method, path, obj=None, content_type="application/json"):
        body = json.dumps(obj).encode() if obj is not None else None
        status, data = self.client.request(method, path, body, content_type=content_type)
        assert status in (200, 201), (self.name, method, path, status, data[:300])
        return json.loads(data)

    def create(self, obj):
        return self.call("POST", collection_path(obj), obj)

    def rv(self):
        return self.call("GET", "/api/v1/configmaps?limit=1")["metadata"]["resourceVersion"]


def wait_for_watch_cache(server, path):
    """A new type's watch cache answers 429 until it is filled: wait for its first 200."""
    for _ in range(600):
        resp = http_request(server.url, f"{path}?watch=1&timeoutSeconds=1",
                            [("Authorization", f"Bearer {TOKEN}")], max_time=5)
        if resp.status == 200:
            return
    raise AssertionError(f"{server.name}: {path} never served a watch")


@pytest.fixture(scope="module")
def servers():
    if not realkube.available():
        pytest.fail(f"the real API server is missing: {realkube.REALKUBE} (build it with "
                    "scripts/realkube build, or name it in MESHSYNC_REALKUBE)")
    with realkube.Realkube("--controllers", "-", token=TOKEN,
                           restricted_token=RESTRICTED_TOKEN) as rk, \
            kubesim.Kubesim(token=TOKEN, extra=["--restricted-token", RESTRICTED_TOKEN]) as sim:
        real = Server("realkube", rk.url, rk.kubeconfig)
        simulated = Server("kubesim", sim.url, sim.kubeconfig)
        crd = simulated.call(
            "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/meshsyncs.meshery.io")
        real.create({"apiVersion": crd["apiVersion"], "kind": crd["kind"],
                     "metadata": {"name": crd["metadata"]["name"]}, "spec": crd["spec"]})
        for server in (real, simulated):
            for obj in manifests():
                server.create(obj)
        wait_for_watch_cache(real, "/apis/meshery.io/v1alpha1/meshsyncs")
        for server in (real, simulated):
            server.create(meshsync_object())
        yield real, simulated


# ------------------------------------------------------------------------------------------
# A probe and what its answer shows.

class Probe:
    """A GET sent to both servers. @query: (key, value) pairs, a value None filled in per
    server with its current resourceVersion; @before(server): writes made first, on each;
    @stop(text): when a stream has been read far enough."""

    def __init__(self, name, path, accept, query=(), token=TOKEN, watch=False, stop=None,
                 before=None, max_time=15.0):
        self.name = name
        self.path = path
        self.accept = accept
        self.query = list(query)
        self.token = token
        self.watch = watch
        self.stop = stop
        self.before = before
        self.max_time = max_time

    def send(self, server):
        pairs = [(k, server.rv() if v is None else v) for k, v in self.query]
        if self.before is not None:
            self.before(server)
        target = self.path + ("?" + urllib.parse.urlencode(pairs) if pairs else "")
        headers = [("User-Agent", "meshsync-metadata-test/1.0"),
                   ("Accept-Encoding", "gzip"),
                   ("Authorization", f"Bearer {self.token}")]
        if self.accept is not None:
            headers.append(("Accept", self.accept))
        stop = (lambda resp, text: self.stop(text)) if self.stop is not None else None
        return http_request(server.url, target, headers, stop=stop, max_time=self.max_time)


UID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def placeholders(value, key=None):
    """@value with what two servers never share made placeholders."""
    if isinstance(value, dict):
        return {k: placeholders(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [placeholders(v) for v in value]
    if isinstance(value, str):
        if key in ("uid",) and UID.match(value):
            return "UID"
        if key == "resourceVersion" and value.isdigit():
            return "RV"
        if key == "continue" and value:
            return "TOKEN"
        if TIME.match(value):
            return "TIME"
    return value


def flatten(value, prefix, out):
    """Every leaf of @value under its path (a.b.0.c), empty containers as leaves."""
    if isinstance(value, dict) and value:
        out[f"{prefix}.keys"] = list(value)  # the member order, as Go writes it
        for k, v in value.items():
            flatten(v, f"{prefix}.{k}", out)
    elif isinstance(value, list) and value:
        out[f"{prefix}.len"] = len(value)
        for i, v in enumerate(value):
            flatten(v, f"{prefix}.{i}", out)
    else:
        out[prefix] = value
    return out


def observe(server, probe):
    resp = probe.send(server)
    props = {"status": resp.status,
             "header.content-type": resp.header("Content-Type"),
             "header.content-encoding": resp.header("Content-Encoding")}
    text = resp.text
    if probe.watch and resp.status == 200:
        props["stream.chunked"] = resp.chunked
        props["stream.ended"] = resp.complete
        lines = [line for line in text.split(b"\n") if line]
        props["stream.events"] = len(lines)
        for i, line in enumerate(lines):
            flatten(placeholders(json.loads(line)), f"event.{i}", props)
        return props
    try:
        doc = json.loads(text)
    except ValueError:
        props["body"] = text.decode(errors="replace")
        return props
    if isinstance(doc, dict) and doc.get("kind") == "Status":
        # byte for byte: the indentation and final newline say which encoder wrote it
        props["body"] = re.sub(r"\d+", "N", text.decode())
        return props
    props["body.ends-with-newline"] = text.endswith(b"\n")
    flatten(placeholders(doc), "body", props)
    return props


def allowed(name, field):
    for rule in ALLOWED:
        if re.search(rule[0], name) and re.search(rule[1], field):
            return rule
    return None


# ------------------------------------------------------------------------------------------

def object_probes():
    probes = []
    for obj in manifests() + [meshsync_object()]:
        meta = obj["metadata"]
        path = f"{collection_path(obj)}/{meta['name']}"
        probes.append(Probe(f"get {path} v1", path, POM))
        if obj["kind"] in ("ConfigMap", "DaemonSet", "MeshSync"):
            probes += [Probe(f"get {path} v1beta1", path, POM_BETA),
                       Probe(f"get {path} client-go", path, POM_CLIENT_GO)]
    return probes


def list_probes():
    probes = []
    for obj in manifests() + [meshsync_object()]:
        if obj["kind"] == "Namespace":
            continue
        path = collection_path(obj)
        probes.append(Probe(f"list {path} client-go", path, POML_CLIENT_GO))
    configmaps = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
    probes += [
        Probe("list configmaps v1", configmaps, POML),
        Probe("list configmaps v1beta1", configmaps, POML_BETA),
        Probe("list configmaps page 1", configmaps, POML, [("limit", "2")]),
        Probe("list configmaps selected page", configmaps, POML,
              [("limit", "1"), ("labelSelector", "app=shallow")]),
        Probe("list namespaces", "/api/v1/namespaces", POML,
              [("fieldSelector", f"metadata.name={NAMESPACE}")]),
        Probe("list empty", "/api/v1/namespaces/nowhere/configmaps", POML),
        Probe("list meshsyncs everywhere", "/apis/meshery.io/v1alpha1/meshsyncs", POML),
    ]
    return probes


def error_probes():
    configmaps = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
    one = f"{configmaps}/settings-0"
    meshsyncs = f"/apis/meshery.io/v1alpha1/namespaces/{NAMESPACE}/meshsyncs"
    return [
        # the object form of a list and the list form of an object: 406, written indented
        # when no plain form follows in the header, compact when one does
        Probe("406 object form of a list", configmaps, POM),
        Probe("406 object form of a list, plain after", configmaps, POM_CLIENT_GO),
        Probe("406 list form of an object", one, POML),
        Probe("406 list form of an object, plain after", one, POML_CLIENT_GO),
        Probe("406 object form of a custom resource list", meshsyncs, POM),
        # a custom resource's object is unstructured, which the conversion takes for a list
        # until it finds no items: 500, not 406
        Probe("500 list form of a custom resource", f"{meshsyncs}/meshery-meshsync", POML),
        Probe("406 object form of deployments", "/apis/apps/v1/deployments", POM),
        # nothing the server can serve
        Probe("406 unknown version", one, "application/json;as=PartialObjectMetadata;"
              "g=meta.k8s.io;v=v2"),
        Probe("406 no group", one, "application/json;as=PartialObjectMetadata;v=v1"),
        Probe("406 wrong case", one, "application/json;as=partialobjectmetadata;"
              "g=meta.k8s.io;v=v1"),
        Probe("406 unknown kind", configmaps, "application/json;as=Foo;g=meta.k8s.io;v=v1"),
        Probe("406 html", one, "text/html"),
        Probe("406 html list", configmaps, "text/html"),
        Probe("406 application wildcard", one, "application/*;as=PartialObjectMetadata;"
              "g=meta.k8s.io;v=v1"),
        # what the server does serve
        Probe("unknown version, plain after", one, "application/json;as=PartialObjectMetadata;"
              "g=meta.k8s.io;v=v2,application/json"),
        Probe("lower q first", one, f"{POM};q=0.5, application/json;q=0.9"),
        Probe("spaces", one, "application/json ; as=PartialObjectMetadata ; g=meta.k8s.io ; "
              "v=v1"),
        Probe("any media type", one, "*/*;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"),
        Probe("unknown parameter", one, f"{POM};foo=bar"),
        Probe("no accept", one, None),
        # errors before the form is applied, under a header of conversions only
        Probe("404 object", f"{configmaps}/nope", POM),
        Probe("404 object, plain after", f"{configmaps}/nope", POM_CLIENT_GO),
        Probe("401", configmaps, POML, token="wrong-token"),
        Probe("403", configmaps, POML, token=RESTRICTED_TOKEN),
        Probe("422 watch options", configmaps, POM,
              [("watch", "1"), ("sendInitialEvents", "true")], watch=True),
    ]


def end_bookmark(text):
    return b'"k8s.io/initial-events-end":"true"' in text


def watch_probes():
    configmaps = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
    watchlist = [("watch", "1"), ("sendInitialEvents", "true"),
                 ("resourceVersionMatch", "NotOlderThan"), ("allowWatchBookmarks", "true"),
                 ("timeoutSeconds", "30")]
    probes = []
    for obj in manifests() + [meshsync_object()]:
        if obj["kind"] == "Namespace":
            continue
        path = collection_path(obj)
        probes.append(Probe(f"watchlist {path}", path, POM, watchlist, watch=True,
                            stop=end_bookmark))
    probes += [
        Probe("watchlist v1beta1", configmaps, POM_BETA, watchlist, watch=True,
              stop=end_bookmark),
        Probe("watchlist client-go", configmaps, POM_CLIENT_GO, watchlist, watch=True,
              stop=end_bookmark),
        # a watch from no resourceVersion is a streaming list on a 1.37 server
        Probe("watch without resourceVersion", configmaps, POM,
              [("watch", "1"), ("allowWatchBookmarks", "true"), ("timeoutSeconds", "30")],
              watch=True, stop=end_bookmark),
        # no object converts to the list form: the stream ends at its first event, empty
        Probe("watchlist list form", configmaps, POML, watchlist, watch=True),
        Probe("watchlist list form, plain after", configmaps, POML_CLIENT_GO, watchlist,
              watch=True),
    ]

    def writes(server):
        cm = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "changing", "namespace": NAMESPACE}, "data": {"a": "1"}}
        server.create(cm)
        server.call("PATCH", f"{configmaps}/changing", {"metadata": {"labels": {"x": "y"}}},
                    content_type="application/merge-patch+json")
        server.call("DELETE", f"{configmaps}/changing")

    # the events of writes made after the watch's resourceVersion, replayed from history
    probes.append(Probe("watch events", configmaps, POM,
                        [("resourceVersion", None), ("watch", "1"), ("timeoutSeconds", "30")],
                        watch=True, before=writes, stop=lambda text: b'"DELETED"' in text))
    return probes


def compare(name, sim_props, real_props, used):
    """The differences not allowed, as text; the rules that allowed others go into @used."""
    out = []
    for field in sorted(set(sim_props) | set(real_props)):
        sim_value = sim_props.get(field, "<absent>")
        real_value = real_props.get(field, "<absent>")
        if sim_value == real_value:
            continue
        rule = allowed(name, field)
        if rule is not None:
            used.add(rule)
            continue
        out.append(f"{name}: {field}:\n    kubesim:  {sim_value!r}\n"
                   f"    realkube: {real_value!r}")
    return out


def test_metadata_forms_match_the_real_api_server(servers):
    real, simulated = servers
    probes = object_probes() + list_probes() + error_probes() + watch_probes()
    differences = []
    used = set()
    for probe in probes:
        # both at once: the servers' clients are their own, and a probe's writes are made on
        # each server before its request
        real_result = {}
        thread = threading.Thread(
            target=lambda: real_result.setdefault("props", observe(real, probe)))
        thread.start()
        sim_props = observe(simulated, probe)
        thread.join()
        real_props = real_result["props"]
        assert real_props["status"] != 429, (probe.name, real_props)
        differences += compare(probe.name, sim_props, real_props, used)
    print(f"{len(probes)} probes compared")
    assert not differences, (f"{len(differences)} differences from the real server:\n"
                             + "\n".join(differences))
    stale = [f"{rule}: {ALLOWED[rule]}" for rule in ALLOWED if rule not in used]
    assert not stale, "allowed differences that no longer occur:\n" + "\n".join(stale)


def test_the_page_after_the_first_is_metadata_too(servers):
    """A continue token from a metadata-only page continues in that form."""
    pages = {}
    real, simulated = servers
    for server in (real, simulated):
        path = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
        first = observe(server, Probe("page 1", path, POML, [("limit", "2")]))
        token = json.loads(http_request(
            server.url, f"{path}?limit=2",
            [("Authorization", f"Bearer {TOKEN}"), ("Accept", POML)]).text)["metadata"][
                "continue"]
        second = observe(server, Probe("page 2", path, POML,
                                       [("limit", "2"), ("continue", token)]))
        pages[server.name] = (first, second)
    differences = []
    for i in (0, 1):
        differences += compare(f"page {i + 1}", pages["kubesim"][i], pages["realkube"][i],
                               set())
    assert not differences, "\n".join(differences)
    second = pages["kubesim"][1]
    assert second["body.kind"] == "PartialObjectMetadataList"
    assert second["body.items.len"] == 2
