#!/usr/bin/env python3
"""Smoke check of meshsync-realkube through tests/lib/realkube.py (not part of the meson
suites: the binary takes minutes to build the first time). Run after `scripts/realkube build`:

    python3 tests/realkube/smoke.py

Checks what meshsync's tests will lean on: kubectl works as admin and is refused as the
restricted user; a Deployment gets its ReplicaSet and 3 Pods (controllers run); a deleted
namespace goes away (namespace controller); objects survive a restart on the same data dir;
a streaming-list watch ends its initial events with the k8s.io/initial-events-end bookmark;
aggregated discovery v2 answers; the version is v1.37.2.
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))

from realkube import REALKUBE, Realkube, available  # noqa: E402

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: smoke}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: registry.example/web:1}]}
"""


def wait_for(predicate, what, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def check(rk):
    status, version = rk.request("GET", "/version")
    assert status == 200 and version["gitVersion"] == "v1.37.2", version
    names = {ns["metadata"]["name"] for ns in rk.get_json("namespaces")["items"]}
    assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= names, names

    try:
        rk.kubectl("get", "pods", "-n", "default", restricted=True)
        raise AssertionError("the restricted user may list pods")
    except RuntimeError as err:
        assert "Forbidden" in str(err), err

    rk.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "smoke"}})
    rk.apply(DEPLOYMENT)
    wait_for(lambda: len(rk.get_json("pods", "smoke")["items"]) == 3, "3 pods")
    uid = rk.get_json("deployment/web", "smoke")["metadata"]["uid"]

    assert rk.restart() == 0, rk.log()
    assert rk.get_json("deployment/web", "smoke")["metadata"]["uid"] == uid
    assert len(rk.get_json("pods", "smoke")["items"]) == 3

    events = []
    for event in rk.watch("/api/v1/pods?watch=1&sendInitialEvents=true"
                          "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"):
        events.append(event)
        if event["type"] == "BOOKMARK":
            break
    annotations = events[-1]["object"]["metadata"].get("annotations", {})
    assert annotations.get("k8s.io/initial-events-end") == "true", events[-1]
    assert [e["type"] for e in events[:-1]] == ["ADDED"] * 3, events

    status, discovery = rk.request(
        "GET", "/apis",
        headers={"Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"})
    assert status == 200 and discovery["kind"] == "APIGroupDiscoveryList", discovery
    assert "apps" in {group["metadata"]["name"] for group in discovery["items"]}

    rk.kubectl("delete", "namespace", "smoke", "--wait=false")
    rk.kubectl("wait", "--for=delete", "namespace/smoke", "--timeout=60s", timeout=90)


def main():
    if not available():
        print(f"smoke: no binary at {REALKUBE}; run scripts/realkube build", file=sys.stderr)
        return 2
    started = time.monotonic()
    with Realkube() as rk:
        try:
            check(rk)
        except BaseException:
            print(rk.log(), file=sys.stderr)
            raise
        status = rk.stop()
    assert status == 0, f"exit status {status} on SIGTERM"
    print(f"realkube smoke: ok in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
