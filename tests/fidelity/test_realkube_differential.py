"""Differential fidelity: meshsync-kubesim against a real kube-apiserver (v1.37.2, realkube),
request by request (issue 18 section 3).

Both servers hold the same objects. The requests are the ones the meshsync daemon makes,
recorded by kubesim's --request-log while the daemon syncs (once to completion, once for a few
seconds with its watches closed under it and a streaming list refused, so that it resumes
watches and falls back to a paginated list), plus the requests of its error paths built from
them: the same requests with a bad token (401) and as a user without RBAC grants (403), a
watch from a compacted resourceVersion (410), unknown types (404), invalid options (422), reads
at a resourceVersion the server has not reached (504), and smaller pages of its list (continue,
remainingItemCount, an expired continue token). Each goes to both servers over HTTP/1.1 with
the daemon's own headers (Accept, Accept-Encoding: gzip, Authorization, User-Agent), through a
raw client that sees the framing: the status line, every header, every chunk, every gzip
member.

What is compared is what a client can rely on, not values that must differ (uids,
resourceVersions, timestamps, audit ids): the status code; Content-Type, Content-Encoding and
the other headers clients read; the framing of streams; list metadata (resourceVersion,
continue, remainingItemCount); watch streams (one JSON object a line, the events of a
streaming list, the shape of bookmarks, gzip members); Status bodies; discovery documents for
the resources kubesim serves. Every property must be equal for every request, except the
differences ALLOWED lists, which mirror doc/kubesim.md "Differences from a real API server
(differential test)", each with its reason. An allowed difference that no longer occurs fails
the test too, so that the list stays true.

The real server is meshsync-realkube ($MESHSYNC_REALKUBE, else scripts/realkube's path): the
test fails, and does not skip, without it.
"""

import base64
import json
import os
import re
import subprocess
import threading
import time
import urllib.parse

import pytest

import kubesim
import realkube
from kube_seed import Client
from raw_http import http_request

DAEMON = os.environ.get("MESHSYNC_DAEMON", "meshsync")
TOKEN = "differential-admin-token"
RESTRICTED_TOKEN = "differential-restricted-token"
BAD_TOKEN = "differential-bad-token"
# Namespaces the test fills on both servers: objects elsewhere (a real cluster's bootstrap
# RBAC, kubesim's defaults) are not compared one by one.
NAMESPACES = ("shop", "big")
BIG_PODS = 300
# The real server's compactor runs this often, so that a watch from an old resourceVersion
# and an old continue token get 410 within seconds.
COMPACTION_INTERVAL = "3s"
# A resourceVersion neither server reaches during the test.
FUTURE_RV = "99999999"
# What a watch that is not a streaming list is read for (its timeoutSeconds).
SHORT_WATCH = 2

# Differences that stay, as doc/kubesim.md lists them: (probe name regex, property regex) ->
# the reason. Property names are those the comparison reports.
ALLOWED = {
    (r".*", r"^framing$"):
        "complete (non-watch) bodies: the real server streams lists and discovery documents "
        "(chunked as Go's net/http buffers them, 2 KiB at a time) and gives small answers a "
        "Content-Length; kubesim gives every complete body a Content-Length. HTTP/1.1 "
        "clients read both; only watches must be chunked, and are compared",
    (r"^discovery ", r"\.verbs$"):
        "kubesim offers no deletecollection verb",
    (r"(^| )/version$", r"^body\.keys$"):
        "kubesim's /version is a 1.31 server's (so that kubectl's dispatcher runs a kubectl "
        "that execs over WebSockets): no emulation/minCompatibility members, which 1.33 added",
    (r"^list-exact-ahead",
     r"^(status|status\.code|status\.reason|body|header\.retry-after|header\.names)$"):
        "a list at a future resourceVersion with a limit (or Exact) gets etcd's 500 'required "
        "revision is a future revision' from kubesim, as from a 1.31-1.33 server; 1.34+ serves "
        "it from the watch cache (504 Too large resource version). meshsync never lists at a "
        "resourceVersion",
    (r"^continue-expired", r"^body$"):
        "the 410 of an expired continue token: the real server's Status carries a new "
        "continue token (metadata.continue, for an inconsistent remainder) and says so; "
        "kubesim keeps no old snapshots to continue from, so it has neither",
}


# ------------------------------------------------------------------------------------------
# The objects both servers hold.

def manifests():
    objs = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
            for ns in NAMESPACES]
    for i in range(3):
        objs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"web-{i}", "namespace": "shop",
                                  "labels": {"app": "web"}},
                     "spec": {"containers": [{"name": "web",
                                              "image": "registry.example/web:1"}]}})
    # enough pods that both servers' list of them passes the 128 KiB gzip threshold
    for i in range(BIG_PODS):
        objs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"pod-{i:04d}", "namespace": "big",
                                  "labels": {"app": "big"},
                                  "annotations": {"note": "x" * 400}},
                     "spec": {"containers": [{"name": "app",
                                              "image": "registry.example/app:1"}]}})
    objs += [
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "shop"},
         "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "settings", "namespace": "shop"}, "data": {"mode": "test"}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "key", "namespace": "shop"},
         "type": "Opaque", "data": {"k": base64.b64encode(b"v").decode()}},
        {"apiVersion": "v1", "kind": "ServiceAccount",
         "metadata": {"name": "builder", "namespace": "shop"}},
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "web", "namespace": "shop"},
         "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
                  "template": {"metadata": {"labels": {"app": "web"}},
                               "spec": {"containers": [{"name": "web",
                                                        "image": "registry.example/web:1"}]}}}},
    ]
    return objs


def api_path(obj):
    group_version = obj["apiVersion"]
    prefix = f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"
    plural = obj["kind"].lower() + "s"
    namespace = obj["metadata"].get("namespace")
    return f"{prefix}/namespaces/{namespace}/{plural}" if namespace else f"{prefix}/{plural}"


class Server:
    """One side of the comparison: its URL and an API client."""

    def __init__(self, name, url, kubeconfig):
        self.name = name
        self.url = url
        self.client = Client(kubeconfig)

    def get_json(self, path):
        status, data = self.client.request("GET", path)
        assert status == 200, (self.name, path, status, data[:300])
        return json.loads(data)

    def create(self, obj):
        status, data = self.client.request("POST", api_path(obj), json.dumps(obj).encode())
        assert status == 201, (self.name, obj["metadata"], status, data[:300])
        return json.loads(data)

    def rv(self):
        """The current resourceVersion, as a list of configmaps says it."""
        return self.get_json("/api/v1/configmaps?limit=1")["metadata"]["resourceVersion"]


def wait_for(predicate, what, timeout=60.0, interval=0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    if not realkube.available():
        pytest.fail(f"the real API server is missing: {realkube.REALKUBE} (build it with "
                    "scripts/realkube build, or name it in MESHSYNC_REALKUBE)")
    tmp = tmp_path_factory.mktemp("differential")
    data = tmp / "objects.json"
    data.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": manifests()}))
    request_log = tmp / "requests.jsonl"
    # No controllers: both servers hold what the test wrote and nothing a controller derives
    # from it (the Deployment has no replicas anyway).
    with realkube.Realkube("--controllers", "-", "--etcd-compaction-interval",
                           COMPACTION_INTERVAL, token=TOKEN,
                           restricted_token=RESTRICTED_TOKEN) as rk, \
            kubesim.Kubesim(token=TOKEN, data=str(data),
                            extra=["--restricted-token", RESTRICTED_TOKEN, "--request-log",
                                   str(request_log), "--rv-block-timeout", "0"]) as sim:
        real = Server("realkube", rk.url, rk.kubeconfig)
        simulated = Server("kubesim", sim.url, sim.kubeconfig)
        for obj in manifests():
            real.create(obj)
        # the MeshSync CRD kubesim serves from the start, so that its group answers alike
        crd = simulated.get_json(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/meshsyncs.meshery.io")
        crd = {"apiVersion": crd["apiVersion"], "kind": crd["kind"],
               "metadata": {"name": crd["metadata"]["name"]}, "spec": crd["spec"]}
        real.create(crd)
        # served once its watch cache is ready (watches get 429 until then)
        wait_for(lambda: http_request(
            real.url, "/apis/meshery.io/v1alpha1/meshsyncs?watch=true&timeoutSeconds=1",
            [("Authorization", f"Bearer {TOKEN}")], max_time=5).status == 200,
            "the MeshSync CRD")
        yield {"realkube": real, "kubesim": simulated, "sim": sim, "rk": rk,
               "request_log": request_log, "tmp": tmp}


# ------------------------------------------------------------------------------------------
# What meshsync asks.

def run_daemon(sim, tmp, name, *args, during=None):
    out = tmp / f"{name}.yaml"
    argv = [DAEMON, "-output", "file", "--outputFile", str(out), "--kubeconfig",
            sim.kubeconfig, "--health-port", "0", *args]
    with open(tmp / f"{name}.log", "w", encoding="utf-8") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        try:
            if during is not None:
                during()
            assert proc.wait(timeout=120) == 0, (tmp / f"{name}.log").read_text()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def recorded_requests(sim, tmp, request_log):
    """Runs the daemon against kubesim and returns what it sent, from the request log."""
    run_daemon(sim, tmp, "sync", "--stop-after-sync")

    def disturb():
        # once synced, close every watch (the daemon resumes each from its resourceVersion)
        wait_for(lambda: sim.stats()["watches"] >= 20, "the daemon's watches", timeout=60)
        sim.admin("close-watches")

    # the pods' streaming list refused: the daemon falls back to a paginated list
    sim.arm_fault("watch", code=422, resource="pods", count=1)
    run_daemon(sim, tmp, "run", "--stopAfter=5s", during=disturb)
    sim.clear_faults()
    with open(request_log, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def query_shape(query):
    """The query with values that vary from run to run (timeouts, resourceVersions) as
    placeholders: requests of one shape are one probe."""
    pairs = urllib.parse.parse_qsl(query or "", keep_blank_values=True)
    shape = []
    for key, value in pairs:
        if key == "timeoutSeconds":
            value = "T"
        elif key == "resourceVersion" and value not in ("", "0"):
            value = "RV"
        elif key == "continue":
            value = "TOKEN"
        shape.append((key, value))
    return tuple(shape)


def kind_of(shape):
    keys = dict(shape)
    if keys.get("watch") in ("1", "true"):
        return "watchlist" if keys.get("sendInitialEvents") == "true" else "watch"
    return "get"


class Probe:
    """One request sent to both servers. @query: (key, value) pairs; a value None is filled
    in per server (the current resourceVersion)."""

    def __init__(self, name, path, query, headers, token=TOKEN, mode=None, max_time=30.0,
                 before=None):
        self.name = name
        self.path = path
        self.query = list(query)
        self.headers = headers
        self.token = token
        self.mode = mode or kind_of(self.query)
        self.max_time = max_time
        self.before = before  # (server) -> None, run before the request to that server

    def target(self, server):
        pairs = [(k, server.rv() if v is None else v) for k, v in self.query]
        query = urllib.parse.urlencode(pairs, safe="")
        return self.path + ("?" + query if query else "")

    def request_headers(self):
        headers = [(k, v) for k, v in self.headers
                   if k.lower() not in ("host", "connection", "authorization")]
        if self.token is not None:
            headers.append(("Authorization", f"Bearer {self.token}"))
        return headers


def plan(recorded):
    """The probes: each shape meshsync sent, as itself, as the restricted user and with a bad
    token; then its error paths and the variants of its list."""
    shapes = {}
    for req in recorded:
        if req["method"] != "GET":
            continue
        shape = query_shape(req["query"])
        shapes.setdefault((req["path"], shape), req)
    probes = []
    list_headers = None
    for (path, shape), req in sorted(shapes.items()):
        query = []
        for key, value in shape:
            if value == "T":
                # plain watches end after a short while; streaming lists are read to their
                # end bookmark whatever their timeout
                value = str(SHORT_WATCH) if kind_of(shape) == "watch" else "300"
            elif value == "RV":
                value = None
            elif value == "TOKEN":
                continue
            query.append((key, value))
        name = f"{path}?{urllib.parse.urlencode(shape)}" if shape else path
        headers = req["headers"]
        probes.append(Probe(name, path, query, headers))
        probes.append(Probe(f"forbidden {name}", path, query, headers, token=RESTRICTED_TOKEN))
        probes.append(Probe(f"unauthorized {name}", path, query, headers, token=BAD_TOKEN))
        if kind_of(shape) == "get" and dict(shape).get("limit"):
            list_headers = headers
    assert list_headers is not None, "the daemon made no paginated list"
    return probes, list_headers


# ------------------------------------------------------------------------------------------
# What a response shows a client.

DIGITS = re.compile(r"\d+")
# Headers whose values are compared; the others are compared by presence only.
VALUE_HEADERS = ("content-type", "content-encoding", "vary", "cache-control", "retry-after",
                 "x-content-type-options", "warning")
# Framing, compared on its own ("framing"), and what a connection says about itself.
FRAMING_HEADERS = ("date", "content-length", "transfer-encoding", "connection", "keep-alive")


def normalize_status(status):
    """A Status body with numbers in its message (resourceVersions) made placeholders."""
    status = json.loads(json.dumps(status))
    if isinstance(status.get("message"), str):
        status["message"] = DIGITS.sub("N", status["message"])
    for cause in status.get("details", {}).get("causes", []):
        if isinstance(cause.get("message"), str):
            cause["message"] = DIGITS.sub("N", cause["message"])
    return status


def ours(obj):
    """Whether an object is one the test wrote (in its namespaces, or one of them)."""
    meta = obj.get("metadata", {})
    return meta.get("namespace") in NAMESPACES or (
        obj.get("kind") == "Namespace" and meta.get("name") in NAMESPACES)


def bookmark_shape(obj):
    obj = json.loads(json.dumps(obj))
    if "resourceVersion" in obj.get("metadata", {}):
        obj["metadata"]["resourceVersion"] = "RV"
    return obj


def view_headers(resp, props):
    names = sorted({k.lower() for k, _ in resp.headers} - set(FRAMING_HEADERS))
    props["header.names"] = names
    for name in VALUE_HEADERS:
        props[f"header.{name}"] = resp.header(name)


def view_body_document(doc, props):
    kind = doc.get("kind") if isinstance(doc, dict) else None
    if kind == "Status":
        props["body"] = normalize_status(doc)
        # compared on their own too, so that an allowed difference of wording hides no other
        props["status.code"] = doc.get("code")
        props["status.reason"] = doc.get("reason")
        return
    if isinstance(doc, dict) and kind and kind.endswith("List") and "items" in doc:
        meta = doc.get("metadata", {})
        props["list.kind"] = kind
        props["list.apiVersion"] = doc.get("apiVersion")
        props["list.metadata.keys"] = sorted(meta)
        props["list.resourceVersion"] = bool(meta.get("resourceVersion"))
        props["list.continue"] = bool(meta.get("continue"))
        props["list.remainingItemCount"] = meta.get("remainingItemCount")
        items = doc.get("items") or []
        props["list.items.kind"] = sorted({"kind" in item for item in items})
        props["list.items.ours"] = sorted(
            f"{i['metadata'].get('namespace', '')}/{i['metadata']['name']}"
            for i in items if ours(i))
        return
    if isinstance(doc, dict) and kind and "metadata" in doc:
        props["object.kind"] = kind
        props["object.apiVersion"] = doc.get("apiVersion")
        props["object.name"] = doc["metadata"].get("name")
        return
    props["body.keys"] = sorted(doc) if isinstance(doc, dict) else type(doc).__name__


def verbs_views(props, label, entry):
    """An entry's verbs, and the same without deletecollection (kubesim offers none): only the
    first may differ, by that verb alone."""
    if "verbs" in entry:
        props[f"{label}.verbs-but-deletecollection"] = [
            v for v in entry["verbs"] if v != "deletecollection"]


def view_discovery(doc, props, simulated_doc):
    """A discovery document: what kubesim serves, entry by entry, as the real server has it.
    @simulated_doc is kubesim's answer, which says which entries to look at."""
    props["body.kind"] = doc.get("kind")
    props["body.apiVersion"] = doc.get("apiVersion")
    props["body.keys"] = sorted(doc)
    kind = doc.get("kind")
    if kind == "APIResourceList":
        props["body.groupVersion"] = doc.get("groupVersion")
        mine = {r["name"] for r in simulated_doc.get("resources", [])}
        entries = {r["name"]: r for r in doc.get("resources", []) if r["name"] in mine}
        props["resources.names"] = sorted(entries)
        props["resources.order"] = [r["name"] for r in doc.get("resources", [])
                                    if r["name"] in mine]
        for name, entry in entries.items():
            for key, value in entry.items():
                props[f"{name}.{key}"] = value
            verbs_views(props, name, entry)
            props[f"{name}.keys"] = sorted(entry)
    elif kind == "APIGroupList":
        mine = {g["name"] for g in simulated_doc.get("groups", [])}
        for group in doc.get("groups", []):
            if group["name"] in mine:
                props[f"group {group['name']}"] = group
    elif kind == "APIGroupDiscoveryList":
        props["body.metadata"] = doc.get("metadata")
        mine = {}
        for item in simulated_doc.get("items", []):
            for version in item.get("versions", []):
                for res in version.get("resources", []):
                    subs = {s["subresource"] for s in res.get("subresources", [])}
                    mine[(item["metadata"].get("name", ""), version["version"],
                          res["resource"])] = subs
        for item in doc.get("items", []):
            group = item["metadata"].get("name", "")
            if any(key[0] == group for key in mine):
                props[f"group {group}.metadata"] = item["metadata"]
            for version in item.get("versions", []):
                for res in version.get("resources", []):
                    key = (group, version["version"], res["resource"])
                    if key not in mine:
                        continue
                    label = f"{group}/{version['version']}/{res['resource']}"
                    props[f"{label}.version.freshness"] = version.get("freshness")
                    for field, value in res.items():
                        if field != "subresources":
                            props[f"{label}.{field}"] = value
                    verbs_views(props, label, res)
                    subs = [s for s in res.get("subresources", [])
                            if s["subresource"] in mine[key]]
                    props[f"{label}.subresources.order"] = [s["subresource"] for s in subs]
                    for sub in subs:
                        props[f"{label}/{sub['subresource']}"] = sub
    elif kind == "APIVersions":
        props["body.versions"] = doc.get("versions")


def view_stream(resp, props, probe):
    """A watch: its framing, its events and their shapes."""
    props["stream.framing"] = "chunked" if resp.chunked else "length"
    text = resp.text
    if resp.gzip is not None:
        gz = resp.gzip
        props["gzip.decodable"] = gz.error is None
        props["gzip.members-hold-whole-events"] = all(m.endswith(b"\n") for m in gz.members)
    lines = text.split(b"\n")
    tail = lines.pop()
    events = []
    parsed = True
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            parsed = False
            continue
        if not isinstance(event, dict) or set(event) != {"type", "object"}:
            parsed = False
            continue
        events.append(event)
    props["stream.one-json-object-a-line"] = parsed and (tail == b"" or not resp.complete)
    types = [e["type"] for e in events]
    # a run of ADDED events is one step: which objects they bring is compared through the
    # names of ours (the servers' own objects differ), so none is one too
    steps = []
    for t in types:
        if not steps or steps[-1] != t or t != "ADDED":
            steps.append(t)
    if steps and steps[0] == "ADDED":
        steps.pop(0)
    props["stream.event-steps"] = (["ADDED*"] + steps if probe.mode == "watchlist"
                                   else sorted(set(types)))
    props["stream.added.ours"] = sorted(
        f"{e['object']['metadata'].get('namespace', '')}/{e['object']['metadata']['name']}"
        for e in events if e["type"] == "ADDED" and ours(e["object"]))
    props["stream.objects.have-kind"] = sorted(
        {"kind" in e["object"] and "apiVersion" in e["object"] for e in events})
    bookmarks = [bookmark_shape(e["object"]) for e in events if e["type"] == "BOOKMARK"]
    end = [b for b in bookmarks
           if b["metadata"].get("annotations", {}).get("k8s.io/initial-events-end") == "true"]
    props["stream.end-bookmark"] = end
    props["stream.other-bookmarks"] = sorted(
        {json.dumps(b, sort_keys=True) for b in bookmarks if b not in end})
    props["stream.errors"] = [normalize_status(e["object"]) for e in events
                              if e["type"] == "ERROR"]
    if probe.mode == "watch":
        # a plain watch ends cleanly (the terminating chunk) when its timeoutSeconds pass
        props["stream.ended-cleanly"] = resp.complete
    if len(events) >= 100 and resp.gzip is not None:
        props["gzip.several-members"] = len(resp.gzip.members) > 1


def watch_stop(resp, text):
    return (b'"k8s.io/initial-events-end":"true"' in text or b'"type":"ERROR"' in text)


def observe(server, probe, simulated_doc=None, target=None):
    """The properties of @server's answer to @probe (sent to @target, else to the probe's
    target on that server)."""
    if probe.before is not None:
        probe.before(server)
    stop = watch_stop if probe.mode == "watchlist" else None
    resp = http_request(server.url, target or probe.target(server), probe.request_headers(),
                        stop=stop, max_time=probe.max_time)
    props = {"status": resp.status}
    view_headers(resp, props)
    content_type = resp.header("Content-Type") or ""
    streaming = probe.mode in ("watch", "watchlist") and resp.status == 200
    if streaming:
        view_stream(resp, props, probe)
        return props, None
    props["framing"] = "chunked" if resp.chunked else "length"
    text = resp.text
    if content_type.startswith("application/json"):
        props["body.ends-with-newline"] = text.endswith(b"\n")
        try:
            doc = json.loads(text)
        except ValueError:
            props["body"] = "not JSON"
            return props, None
        if probe.mode == "discovery":
            view_discovery(doc, props, simulated_doc if simulated_doc else doc)
        else:
            view_body_document(doc, props)
        return props, doc
    props["body"] = text.decode(errors="replace")
    return props, None


def compare(probe, simulated, real):
    """Differences as (probe, property, kubesim's value, the real server's value)."""
    out = []
    for key in sorted(set(simulated) | set(real)):
        if simulated.get(key) != real.get(key):
            out.append((probe.name, key, simulated.get(key), real.get(key)))
    return out


# ------------------------------------------------------------------------------------------
# The error paths and variants, built from meshsync's own requests.

def discovery_probes(recorded_headers):
    agg = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
           "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
           "application/json")
    probes = []
    for path in ("/api", "/apis", "/api/v1", "/apis/apps/v1", "/apis/batch/v1",
                 "/apis/rbac.authorization.k8s.io/v1", "/apis/meshery.io/v1alpha1"):
        probes.append(Probe(f"discovery {path} legacy", path, [], recorded_headers,
                            mode="discovery"))
    aggregated = [(k, v) for k, v in recorded_headers if k.lower() != "accept"]
    aggregated.append(("Accept", agg))
    for path in ("/api", "/apis"):
        probes.append(Probe(f"discovery {path} aggregated", path, [], aggregated,
                            mode="discovery"))
    return probes


def error_probes(list_headers, watch_headers):
    watchlist = [("watch", "1"), ("sendInitialEvents", "true"),
                 ("resourceVersionMatch", "NotOlderThan"), ("resourceVersion", ""),
                 ("allowWatchBookmarks", "true"), ("timeoutSeconds", "300")]
    resume = [("watch", "true"), ("allowWatchBookmarks", "true")]
    probes = [
        # 404: a type the group version does not serve, a group no server has, an object
        Probe("unknown-type watchlist", "/api/v1/widgets", watchlist, watch_headers),
        Probe("unknown-type list", "/api/v1/widgets", [("limit", "500")], list_headers),
        Probe("unknown-group list", "/apis/example.com/v1/widgets", [("limit", "500")],
              list_headers),
        Probe("unknown-group forbidden", "/apis/example.com/v1/widgets", [("limit", "500")],
              list_headers, token=RESTRICTED_TOKEN),
        Probe("missing object", "/apis/meshery.io/v1alpha1/namespaces/meshery/meshsyncs/"
              "meshery-meshsync", [], list_headers),
        Probe("missing pod", "/api/v1/namespaces/shop/pods/nope", [], list_headers),
        Probe("forbidden pod", "/api/v1/namespaces/shop/pods/web-0", [], list_headers,
              token=RESTRICTED_TOKEN),
        Probe("forbidden namespaced watchlist", "/apis/apps/v1/namespaces/shop/deployments",
              watchlist, watch_headers, token=RESTRICTED_TOKEN),
        # 422: invalid options
        Probe("invalid watchlist without resourceVersionMatch", "/api/v1/pods",
              [q for q in watchlist if q[0] != "resourceVersionMatch"], watch_headers),
        Probe("invalid list with sendInitialEvents", "/api/v1/pods",
              [("limit", "500"), ("sendInitialEvents", "true")], list_headers),
        Probe("invalid watch with resourceVersionMatch", "/api/v1/pods",
              resume + [("resourceVersion", None), ("resourceVersionMatch", "NotOlderThan"),
                        ("timeoutSeconds", "2")], watch_headers),
        # 504: reads at a resourceVersion the server has not reached
        Probe("too-large list", "/api/v1/namespaces/shop/pods",
              [("resourceVersion", FUTURE_RV)], list_headers),
        Probe("too-large watchlist", "/api/v1/namespaces/shop/pods",
              [q if q[0] != "resourceVersion" else ("resourceVersion", FUTURE_RV)
               for q in watchlist], watch_headers),
        Probe("list-exact-ahead", "/api/v1/namespaces/shop/pods",
              [("limit", "2"), ("resourceVersion", FUTURE_RV)], list_headers),
        # a plain watch from a resourceVersion not reached: accepted, quiet until it ends
        Probe("too-large watch", "/api/v1/namespaces/shop/pods",
              resume + [("resourceVersion", FUTURE_RV), ("timeoutSeconds", "2")],
              watch_headers),
        # the paginated list, by smaller pages
        Probe("page 1 of 2", "/api/v1/namespaces/shop/pods", [("limit", "2")], list_headers),
        Probe("page 1 with a selector", "/api/v1/namespaces/shop/pods",
              [("limit", "2"), ("labelSelector", "app=web")], list_headers),
        Probe("gzip list", "/api/v1/namespaces/big/pods", [("limit", "500")], list_headers),
        Probe("gzip watchlist", "/api/v1/namespaces/big/pods", watchlist, watch_headers),
        Probe("small watchlist", "/api/v1/namespaces/shop/pods", watchlist, watch_headers),
        Probe("watchlist without gzip", "/api/v1/namespaces/shop/pods", watchlist,
              [(k, v) for k, v in watch_headers if k.lower() != "accept-encoding"]),
        # a watch from no resourceVersion is a streaming list on a 1.37 server (WatchList
        # defaults sendInitialEvents): with bookmarks it ends its initial events with the
        # bookmark, and is gzipped
        Probe("watch without resourceVersion", "/api/v1/namespaces/shop/pods",
              [("watch", "1"), ("allowWatchBookmarks", "true"), ("timeoutSeconds", "300")],
              watch_headers, mode="watchlist"),
        Probe("watch from resourceVersion 0", "/api/v1/namespaces/shop/pods",
              [("watch", "1"), ("resourceVersion", "0"), ("allowWatchBookmarks", "true"),
               ("timeoutSeconds", "300")], watch_headers, mode="watchlist"),
        Probe("watch without resourceVersion nor bookmarks", "/api/v1/namespaces/shop/pods",
              [("watch", "1"), ("timeoutSeconds", "2")], watch_headers, mode="watch"),
        Probe("watchlist without bookmarks", "/api/v1/namespaces/shop/pods",
              [q for q in watchlist if q[0] != "allowWatchBookmarks"]
              [:-1] + [("timeoutSeconds", "2")], watch_headers, mode="watch"),
    ]
    return probes


def resume_probe(watch_headers):
    """meshsync's resumed watch (of one namespace), with a write it must see and one of the
    same type it does not see, which moves the type's resourceVersion past the first: the
    event, then a bookmark before timeoutSeconds (the real server's watch cache sends one 2 s
    before the deadline when its resourceVersion for the type has passed the watcher's), then
    the end."""

    def before(server):
        def writes():
            time.sleep(0.5)
            for namespace in ("shop", "big"):
                server.create({"apiVersion": "v1", "kind": "ConfigMap",
                               "metadata": {"name": "resumed", "namespace": namespace}})
        threading.Thread(target=writes, daemon=True).start()

    probe = Probe("resumed watch with events", "/api/v1/namespaces/shop/configmaps",
                  [("watch", "true"), ("allowWatchBookmarks", "true"),
                   ("resourceVersion", None), ("timeoutSeconds", "5")],
                  watch_headers, before=before, max_time=15)
    return probe


def old_rv_probe(watch_headers):
    """meshsync's resumed watch from a resourceVersion the server no longer has: 410 Expired,
    in the stream. The real server's watch cache of a type holds every event since the cache
    was filled, which for the built-in types is about when etcd was empty: the MeshSync
    type's cache was filled when the test made its CRD, long after resourceVersion 2."""
    return Probe("expired watch", "/apis/meshery.io/v1alpha1/meshsyncs",
                 [("watch", "true"), ("allowWatchBookmarks", "true"), ("resourceVersion", "2"),
                  ("timeoutSeconds", "2")], watch_headers)


# ------------------------------------------------------------------------------------------

def allowed(name, prop):
    for (probe_re, prop_re), reason in ALLOWED.items():
        if re.search(probe_re, name) and re.search(prop_re, prop):
            return (probe_re, prop_re)
    return None


def short(value, limit=300):
    text = json.dumps(value, sort_keys=True) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[:limit] + "..."


def test_kubesim_answers_meshsyncs_requests_as_a_real_api_server(servers):
    started = time.monotonic()
    sim = servers["sim"]
    simulated, real = servers["kubesim"], servers["realkube"]
    recorded = recorded_requests(sim, servers["tmp"], servers["request_log"])
    probes, list_headers = plan(recorded)
    watch_headers = next(p.headers for p in probes if p.mode == "watchlist")
    paths = {p.path for p in probes}
    # what the daemon must have asked, or the recording missed something
    for expected in ("/version", "/api", "/apis", "/api/v1", "/api/v1/namespaces/kube-system"):
        assert expected in paths, sorted(paths)
    modes = {p.mode for p in probes}
    assert modes >= {"get", "watch", "watchlist"}, modes

    probes += discovery_probes(list_headers)
    probes += error_probes(list_headers, watch_headers)
    probes.append(resume_probe(watch_headers))

    differences = []
    observed = 0
    discovery_docs = {}
    for probe in probes:
        if probe.mode == "watch":
            continue  # all at once below: each lasts its timeoutSeconds
        sim_props, sim_doc = observe(simulated, probe)
        real_props, _ = observe(real, probe, simulated_doc=sim_doc)
        if probe.mode == "discovery":
            discovery_docs[probe.name] = sim_doc
            sim_props, _ = observe(simulated, probe, simulated_doc=sim_doc)
        differences += compare(probe, sim_props, real_props)
        observed += 1

    # plain watches last their timeoutSeconds: every one at once, on both servers; then the
    # one that writes, alone, so that no other watch sees its writes on one server only
    watches = [p for p in probes if p.mode == "watch" and p.before is None]
    results = {}

    def run(server, probe, target):
        results[(server.name, probe.name)] = observe(server, probe, target=target)[0]

    # the targets first: the servers' API clients are not shared between threads
    threads = [threading.Thread(target=run, args=(server, probe, probe.target(server)))
               for probe in watches for server in (simulated, real)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    writing = [p for p in probes if p.mode == "watch" and p.before is not None]
    for probe in writing:
        threads = [threading.Thread(target=run, args=(server, probe, probe.target(server)))
                   for server in (simulated, real)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    for probe in watches + writing:
        differences += compare(probe, results[("kubesim", probe.name)],
                               results[("realkube", probe.name)])
        observed += 1

    # continue tokens: the second page, then a token past its time
    page = {}
    for server in (simulated, real):
        first = server.get_json("/api/v1/namespaces/shop/pods?limit=2")
        page[server.name] = first["metadata"]["continue"]
    cont = Probe("page 2 of 2", "/api/v1/namespaces/shop/pods", [("limit", "2")],
                 list_headers)
    per_server = {}
    for server in (simulated, real):
        cont.query = [("limit", "2"), ("continue", page[server.name])]
        per_server[server.name] = observe(server, cont)[0]
    differences += compare(cont, per_server["kubesim"], per_server["realkube"])
    observed += 1

    # compaction: kubesim forgets its history on request, the real server every few seconds
    sim.admin("compact")
    expired_watch = old_rv_probe(watch_headers)
    differences += compare(expired_watch, observe(simulated, expired_watch)[0],
                           observe(real, expired_watch)[0])
    observed += 1

    def moved_on():
        # writes move the revision on, so that a compaction passes the old token
        real.create({"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"generateName": "compaction-", "namespace": "big"}})
        status, _ = real.client.request(
            "GET", "/api/v1/namespaces/shop/pods?limit=2&continue="
            + urllib.parse.quote(page["realkube"], safe=""))
        return status == 410

    wait_for(moved_on, "the real server's compaction", timeout=60, interval=1.0)
    expired = Probe("continue-expired", "/api/v1/namespaces/shop/pods", [], list_headers)
    per_server = {}
    for server in (simulated, real):
        expired.query = [("limit", "2"), ("continue", page[server.name])]
        per_server[server.name] = observe(server, expired)[0]
    differences += compare(expired, per_server["kubesim"], per_server["realkube"])
    observed += 1

    unexpected = []
    used = {}
    for name, prop, sim_value, real_value in differences:
        rule = allowed(name, prop)
        if rule is not None:
            used.setdefault(rule, []).append(f"{name}: {prop}")
            continue
        unexpected.append(f"{name}: {prop}:\n    kubesim:  {short(sim_value)}\n"
                          f"    realkube: {short(real_value)}")
    stale = [f"{rule}: {ALLOWED[rule]}" for rule in ALLOWED if rule not in used]
    for rule, where in used.items():
        print(f"allowed {rule}: {len(where)} ({ALLOWED[rule][:60]}...), e.g. {where[0]}")
    print(f"{observed} requests compared on both servers, {len(differences)} differences "
          f"({len(differences) - len(unexpected)} allowed) in "
          f"{time.monotonic() - started:.1f} s")
    assert not unexpected, (f"{len(unexpected)} differences from the real server:\n"
                            + "\n".join(unexpected))
    assert not stale, "allowed differences that no longer occur:\n" + "\n".join(stale)
