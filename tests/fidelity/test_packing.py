"""meshsync-kubesim --store-compression zstd: objects kept packed read back exactly as plain.

Two simulators generate the same workload from one seed, one packing its objects and one
keeping them plain. Paged lists, streaming lists and single reads must be the same, byte for
byte once decoded; a burst of writes (POST /kubesim/touch) must leave the packed one serving
the new versions; and the packed one must hold far less. This is what lets the million-pod
benchmark run (doc/kubesim.md, "How objects are kept") without a simulator that answers
differently from the one every other test uses.
"""

import urllib.parse

from kubesim import Kubesim

PODS = 3000
NAMESPACES = 4
SEED = "7"
KINDS = ["/api/v1/pods", "/apis/apps/v1/deployments", "/apis/apps/v1/replicasets",
         "/api/v1/services", "/api/v1/configmaps", "/api/v1/secrets"]


def start(compression):
    return Kubesim(pods=PODS, namespaces=NAMESPACES,
                   extra=["--seed", SEED, "--store-compression", compression])


def pages(sim, path, limit=500):
    """Every item of @path, read in pages of @limit as client-go reads them."""
    items, token = [], ""
    while True:
        query = {"limit": str(limit)}
        if token:
            query["continue"] = token
        status, body = sim.request("GET", path + "?" + urllib.parse.urlencode(query))
        assert status == 200, body
        items += body["items"]
        token = body["metadata"].get("continue", "")
        if not token:
            return items


def streaming_list(sim, path):
    """The objects of a streaming list (sendInitialEvents), up to its end bookmark."""
    query = "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan" \
            "&allowWatchBookmarks=true"
    objects = []
    for event in sim.watch(f"{path}?{query}"):
        if event["type"] == "BOOKMARK":
            annotations = event["object"]["metadata"].get("annotations", {})
            if annotations.get("k8s.io/initial-events-end") == "true":
                return objects
            continue
        assert event["type"] == "ADDED", event["type"]
        objects.append(event["object"])
    raise AssertionError("the streaming list ended without its bookmark")


def unstarted(item):
    """What of @item does not depend on the moment its simulator started (uid, times)."""
    meta = item["metadata"]
    return (meta["name"], meta.get("labels"), item.get("spec"), item.get("status"))


def resident_kib(sim):
    with open(f"/proc/{sim.proc.pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_packed_objects_read_back_as_plain_ones():
    with start("zstd") as packed, start("none") as plain:
        for path in KINDS:
            assert pages(packed, path) == pages(plain, path), path
        # the namespaces made at start (default, kube-system, ...) get a random uid and the
        # times of the start
        assert [unstarted(n) for n in pages(packed, "/api/v1/namespaces")] == \
            [unstarted(n) for n in pages(plain, "/api/v1/namespaces")]
        listed = streaming_list(packed, "/api/v1/pods")
        assert len(listed) == PODS
        assert listed == streaming_list(plain, "/api/v1/pods")
        pod = listed[PODS // 2]["metadata"]
        single = f"/api/v1/namespaces/{pod['namespace']}/pods/{pod['name']}"
        assert packed.request("GET", single) == plain.request("GET", single)
        # about 1.2 KB of packed pod against 10 KB plain; the rest of each process is alike
        assert resident_kib(packed) < resident_kib(plain) / 2, \
            (resident_kib(packed), resident_kib(plain))


def test_writes_to_packed_objects_are_served():
    with start("zstd") as packed:
        namespace = pages(packed, "/api/v1/namespaces")[-1]["metadata"]["name"]
        before = {p["metadata"]["uid"]: p for p in pages(packed, "/api/v1/pods")
                  if p["metadata"]["namespace"] == namespace}
        assert before
        packed.touch("v1", "Pod", rounds=3, namespace=namespace)
        after = {p["metadata"]["uid"]: p for p in pages(packed, "/api/v1/pods")
                 if p["metadata"]["namespace"] == namespace}
        assert after.keys() == before.keys()
        for uid, pod in after.items():
            old = before[uid]
            assert int(pod["metadata"]["resourceVersion"]) > \
                int(old["metadata"]["resourceVersion"])
            # only the resourceVersion moved: the repacked object is the same object
            pod["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
            assert pod == old
