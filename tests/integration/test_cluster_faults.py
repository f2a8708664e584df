# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""What the API server does wrong, and what the consumer's picture becomes: the daemon in file
mode with every event recorded (--outputExtended) against kubesim's fault hooks. Every test
ends by comparing the picture the events build (uid -> resourceVersion) with kubesim's truth,
waiting on that state, never on log lines or time."""

import os
import re
import time
import urllib.error
import urllib.request

import yaml

from kubesim import Kubesim
from meshsync_run import DAEMON, DaemonProcess
from nats_server import free_port

TIMEOUT = 90.0
PODS = 30
Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Run(DaemonProcess):
    """The daemon in file mode, pods only, every event in the extended file."""

    def __init__(self, tmp_path, sim, *flags):
        self.snapshot = os.path.join(str(tmp_path), "snapshot.yaml")
        self.extended = os.path.join(str(tmp_path), "snapshot-extended.yaml")
        self.port = free_port()
        argv = [DAEMON, "-output", "file", "-outputFile", self.snapshot, "--outputExtended",
                "-outputResources", "pod", "--kubeconfig", sim.kubeconfig,
                "--health-address", "127.0.0.1", "--health-port", str(self.port)] + list(flags)
        super().__init__(str(tmp_path), argv)

    def events(self):
        """[(type, uid, resourceVersion, cluster_id)] of every complete record so far."""
        try:
            with open(self.extended, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            return []
        # the writer may be in the middle of a record: only what ends with a separator
        text = text[:text.rfind("---\n") + 4] if "---\n" in text else ""
        events = []
        for chunk in re.split(r"^---\n", text, flags=re.M)[:-1]:
            doc = yaml.load(chunk, Loader=Loader)
            obj = doc["Object"]
            events.append((doc["EventType"], obj["metadata"]["uid"],
                           obj["metadata"].get("resourceVersion"), obj["cluster_id"]))
        return events

    def picture(self):
        seen = {}
        for kind, uid, rv, _ in self.events():
            if kind == "DELETED":
                seen.pop(uid, None)
            else:
                seen[uid] = rv
        return seen

    def metric(self, name):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics",
                                        timeout=10) as r:
                text = r.read().decode()
        except (urllib.error.URLError, ConnectionError):
            return None
        match = re.search(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M)
        return float(match.group(1)) if match else None

    def wait(self, predicate, what):
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"meshsync exited ({self.proc.returncode}) before {what}"
                                     f":\n{self.log()}")
            value = predicate()
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}:\n{self.log()[-6000:]}")

    def wait_matches(self, sim, what):
        truth = {}
        last = {}

        def matches():
            truth.clear()
            truth.update(pod_truth(sim))
            last.clear()
            last.update(self.picture())
            return last == truth

        try:
            self.wait(matches, what)
        except AssertionError as error:
            missing = sorted(set(truth) - set(last))[:5]
            extra = sorted(set(last) - set(truth))[:5]
            stale = [u for u in truth if u in last and last[u] != truth[u]][:5]
            raise AssertionError(f"{error}\nmissing {missing}, extra {extra}, stale {stale}")
        # the gauge counts what the informers hold: after any fault, exactly the cluster's pods
        self.wait(lambda: self.metric("meshsync_objects") == len(truth),
                  f"meshsync_objects equal to the {len(truth)} pods of {what}")


# The faults are armed for the daemon's own requests only (this exact path); the truth is read
# namespace by namespace, which no fault matches.
PODS_PATH = "/api/v1/pods"


def pod_truth(sim):
    truth = {}
    status, namespaces = sim.request("GET", "/api/v1/namespaces")
    assert status == 200, namespaces
    for ns in namespaces["items"]:
        name = ns["metadata"]["name"]
        status, body = sim.request("GET", f"/api/v1/namespaces/{name}/pods")
        assert status == 200, body
        for item in body["items"]:
            truth[item["metadata"]["uid"]] = item["metadata"]["resourceVersion"]
    return truth


def kube_system_uid(sim):
    status, ns = sim.request("GET", "/api/v1/namespaces/kube-system")
    assert status == 200, ns
    return ns["metadata"]["uid"]


def pod(name, namespace="default"):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app": "late"}},
            "spec": {"containers": [{"name": "app", "image": "registry.local/app:1"}]}}


def test_http_410_on_a_watch_relists(tmp_path):
    """A watch refused with 410 at the HTTP level must relist: only a list sees a change made
    without a watch event."""
    with Kubesim(pods=PODS, namespaces=2, extra=("--rv-block-timeout", "0")) as sim:
        with Run(tmp_path, sim) as run:
            run.wait_matches(sim, "the initial sync")
            sim.create(pod("silent-1"), silent=True)
            fault = sim.arm_fault("watch", code=410, path=PODS_PATH)
            sim.admin("close-watches")
            run.wait_matches(sim, "the silent pod, through a relist")
            assert sim.fault(fault)["consumed"] == 1
            assert run.metric("meshsync_relists_total") >= 1


def test_watch_5xx_and_429_lose_nothing(tmp_path):
    with Kubesim(pods=PODS, namespaces=2, extra=("--rv-block-timeout", "0")) as sim:
        with Run(tmp_path, sim) as run:
            run.wait_matches(sim, "the initial sync")
            burst = [sim.arm_fault("watch", code=500, count=3, path=PODS_PATH),
                     sim.arm_fault("both", code=429, retry_after=1, count=2,
                                   path=PODS_PATH)]
            sim.admin("close-watches")
            for i in range(5):
                sim.create(pod(f"during-{i}"))
            run.wait(lambda: all(sim.fault(f)["remaining"] == 0 for f in burst),
                     "every armed failure answered")
            run.wait_matches(sim, "every pod created during the burst")


def test_429_retries_the_watch_after_retry_after(tmp_path):
    """A watch refused with 429 keeps its resourceVersion: the watch is tried again, no
    sooner than Retry-After says, and no list is made (a list is the heavier request an
    overloaded server is shedding). The pods created meanwhile come through that watch."""
    with Kubesim(pods=PODS, namespaces=2) as sim:
        with Run(tmp_path, sim) as run:
            run.wait_matches(sim, "the initial sync")
            relists = run.metric("meshsync_relists_total")
            fault = sim.arm_fault("watch", code=429, retry_after=2, count=2, path=PODS_PATH)
            sim.admin("close-watches")
            for i in range(3):
                sim.create(pod(f"throttled-{i}"))
            run.wait(lambda: sim.fault(fault)["remaining"] == 0, "both 429s answered")
            run.wait_matches(sim, "every pod created while throttled")
            assert run.metric("meshsync_relists_total") == relists
            log = run.log()
            waits = [int(ms) for ms in re.findall(r"429 .*; watching again in (\d+) ms", log)]
            assert len(waits) == 2 and min(waits) >= 2000, log


def test_connection_reset_mid_list(tmp_path):
    with Kubesim(pods=PODS, namespaces=2, extra=("--rv-block-timeout", "0")) as sim:
        # the streaming list is refused for good, so the pages are read, and one breaks
        sim.arm_fault("watch", code=400, path=PODS_PATH)
        reset = sim.arm_fault("list", fault="reset", path=PODS_PATH)
        with Run(tmp_path, sim) as run:
            run.wait_matches(sim, "the initial sync after a reset page")
            assert sim.fault(reset)["consumed"] == 1


def test_replaced_cluster(tmp_path):
    """Another cluster at the same URL: every old object deleted exactly once, under the old
    cluster id; the new cluster's objects under the new one, never deleted."""
    with Kubesim(pods=PODS, namespaces=2, extra=("--rv-block-timeout", "0")) as sim:
        with Run(tmp_path, sim) as run:
            run.wait_matches(sim, "the initial sync")
            old_uids = set(pod_truth(sim))
            old_cluster = kube_system_uid(sim)
            sim.replace_cluster(pods=20)
            new_cluster = kube_system_uid(sim)
            assert new_cluster != old_cluster
            run.wait_matches(sim, "the new cluster's pods, and none of the old")
            events = run.events()
            new_uids = set(pod_truth(sim))
            assert not old_uids & new_uids
            deletions = [e for e in events if e[0] == "DELETED"]
            for uid in old_uids:
                mine = [e for e in deletions if e[1] == uid]
                assert len(mine) == 1, (uid, mine)
                assert mine[0][3] == old_cluster, mine
            assert not [e for e in deletions if e[1] in new_uids]
            latest = {}
            for kind, uid, rv, cluster in events:
                latest[uid] = cluster
            assert all(latest[uid] == new_cluster for uid in new_uids)


def test_replaced_cluster_before_its_kube_system(tmp_path):
    """Another cluster at the same URL that answers before it has made kube-system (a real
    API server's first seconds): it cannot yet be told from the old one, so nothing is listed
    until it can; no object of the new cluster is ever published under the old cluster id."""
    with Kubesim(pods=PODS, namespaces=2, extra=("--rv-block-timeout", "0")) as sim:
        with Run(tmp_path, sim) as run:
            run.wait_matches(sim, "the initial sync")
            old_uids = set(pod_truth(sim))
            old_cluster = kube_system_uid(sim)
            checks = run.metric("meshsync_cluster_identity_checks_total")
            assert checks is not None
            sim.replace_cluster(pods=20, **{"kube-system": 0})
            status, body = sim.request("GET", "/api/v1/namespaces/kube-system")
            assert status == 404, body
            new_uids = set(pod_truth(sim))
            assert new_uids and not old_uids & new_uids
            # asked again while the answer names no cluster, and nothing listed meanwhile
            run.wait(lambda: run.metric("meshsync_cluster_identity_checks_total")
                     >= checks + 3, "three identity checks of the cluster without kube-system")
            early = [e for e in run.events() if e[1] in new_uids]
            assert early == [], f"published before the cluster could be told: {early[:5]}"
            assert old_uids <= set(run.picture())

            sim.create({"apiVersion": "v1", "kind": "Namespace",
                        "metadata": {"name": "kube-system"}})
            new_cluster = kube_system_uid(sim)
            assert new_cluster != old_cluster
            run.wait_matches(sim, "the new cluster's pods, and none of the old")
            events = run.events()
            wrong = [e for e in events if e[1] in new_uids and e[3] != new_cluster]
            assert wrong == [], f"new objects under another cluster id: {wrong[:5]}"
            deletions = [e for e in events if e[0] == "DELETED"]
            for uid in old_uids:
                mine = [e for e in deletions if e[1] == uid]
                assert len(mine) == 1 and mine[0][3] == old_cluster, (uid, mine)


def test_restored_cluster(tmp_path):
    """An etcd restored from a backup without a bump: resourceVersions go back, watches would
    resume quietly at versions that now mean other changes. The picture must become the
    restored state."""
    with Kubesim(pods=PODS, namespaces=2, extra=("--rv-block-timeout", "0")) as sim:
        with Run(tmp_path, sim) as run:
            run.wait_matches(sim, "the initial sync")
            sim.snapshot()
            victims = sorted(pod_truth(sim))[:2]
            for i in range(3):
                sim.create(pod(f"after-backup-{i}"))
            status, body = sim.request("GET", PODS_PATH)
            for item in body["items"]:
                if item["metadata"]["uid"] in victims:
                    sim.delete("v1", "Pod", item["metadata"]["name"],
                               item["metadata"]["namespace"])
            run.wait_matches(sim, "the changes made after the backup")
            sim.restore()
            run.wait_matches(sim, "the restored state")
            assert set(victims) <= set(run.picture())


def skipped(run):
    return run.metric("meshsync_objects_skipped_total") or 0


def test_hostile_objects_are_skipped_alone(tmp_path):
    """An object nested too deep, one too large, one with too many labels: each is skipped
    and counted, and everything around it is kept, in lists and in watches."""
    with Kubesim(pods=PODS, namespaces=2, extra=("--rv-block-timeout", "0")) as sim:
        sim.arm_fault("both", fault="deep", depth=2000, path=PODS_PATH)
        with Run(tmp_path, sim) as run:
            run.wait_matches(sim, "the initial sync around a deep object")
            run.wait(lambda: skipped(run) >= 1, "the deep object counted as skipped")
            # each arrives as the first event of the next watch
            sim.arm_fault("watch", fault="huge", bytes=10 * 1024 * 1024, path=PODS_PATH)
            sim.admin("close-watches")
            run.wait(lambda: skipped(run) >= 2, "the huge object skipped")
            sim.arm_fault("watch", fault="labels", labels=5000, path=PODS_PATH)
            sim.admin("close-watches")
            run.wait(lambda: skipped(run) >= 3, "the many-labelled object skipped")
            for i in range(3):
                sim.create(pod(f"after-hostile-{i}"))
            run.wait_matches(sim, "the pods created after the hostile watch events")
            assert not [e for e in run.events() if "kubesim-" in (e[1] or "")]


def peak_rss_mb(pid):
    with open(f"/proc/{pid}/status", encoding="utf-8") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0


def test_endless_list_is_bounded(tmp_path):
    """A list that never ends stops at the body limit, is retried, and memory stays bounded."""
    with Kubesim(pods=PODS, namespaces=2, extra=("--rv-block-timeout", "0")) as sim:
        sim.arm_fault("watch", code=400, path=PODS_PATH)
        endless = sim.arm_fault("list", fault="endless", path=PODS_PATH)
        with Run(tmp_path, sim) as run:
            run.wait_matches(sim, "the initial sync after an endless page")
            assert sim.fault(endless)["consumed"] == 1
            # the body limit (256 MiB, with the copy a growing buffer makes) plus what a
            # sync of 30 pods needs; AddressSanitizer keeps freed blocks in its quarantine
            # (256 MiB) and adds its shadow, so its bound is looser
            bound = 1536 if "ASAN_OPTIONS" in os.environ else 700
            assert peak_rss_mb(run.proc.pid) < bound, peak_rss_mb(run.proc.pid)
