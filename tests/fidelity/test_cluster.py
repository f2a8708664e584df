"""A cluster that changes under its clients: replaced, restored, or written without events.

/kubesim/replace stands for an API server restarted against another etcd at the same URL;
/kubesim/snapshot and /kubesim/restore for an etcd restored from a backup; ?silent=true writes
for an event a watch never delivered. The Python client must see each as it would on a real
cluster: new identities and lower resourceVersions, versions that are now too large or too old,
and changes that only a list shows.
"""

import json
import queue
import threading

import pytest
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

import kubesim

PODS = 30
NAMESPACES = 2
WAIT = 60


def make_api(sim):
    configuration = client.Configuration()
    config.load_kube_config(config_file=sim.kubeconfig, client_configuration=configuration,
                            persist_config=False)
    return client.ApiClient(configuration)


@pytest.fixture
def cluster():
    with kubesim.Kubesim(pods=PODS, namespaces=NAMESPACES, extra=["--seed", "5"]) as sim:
        # reads ahead of the store answer at once
        sim.settings(rv_block_timeout=0)
        with make_api(sim) as api:
            yield sim, client.CoreV1Api(api)


def uids(v1):
    objects = (v1.list_pod_for_all_namespaces().items + v1.list_namespace().items +
               v1.list_config_map_for_all_namespaces().items)
    return {o.metadata.uid for o in objects}


class Watcher:
    """A Python client watch in a thread; its events (and its end) go to a queue."""

    def __init__(self, v1, namespace, rv):
        self.events = queue.Queue()
        self.stream = watch.Watch()
        thread = threading.Thread(target=self._run, args=(v1, namespace, rv), daemon=True)
        thread.start()

    def _run(self, v1, namespace, rv):
        try:
            for event in self.stream.stream(v1.list_namespaced_config_map, namespace,
                                            resource_version=rv, timeout_seconds=WAIT):
                self.events.put((event["type"], event["object"]))
        except Exception as err:  # handed to the test thread
            self.events.put(("EXCEPTION", err))
        self.events.put(("END", None))

    def next(self):
        try:
            return self.events.get(timeout=WAIT)
        except queue.Empty:
            raise AssertionError(f"no watch event within {WAIT} s") from None


def config_map(name, namespace="default", value="v"):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace}, "data": {"k": value}}


def test_replaced_cluster_has_new_identities_and_lower_versions(cluster):
    sim, v1 = cluster
    old_uids = uids(v1)
    old_rv = int(v1.list_pod_for_all_namespaces().metadata.resource_version)
    old_kube_system = v1.read_namespace("kube-system").metadata.uid
    watcher = Watcher(v1, "default", str(old_rv))
    sim.wait_for_watches(1)

    answer = sim.replace_cluster(pods=PODS // 2)

    # the open watch was closed, as by a restarted server
    assert watcher.next() == ("END", None)
    assert int(answer["previousResourceVersion"]) == old_rv
    new_rv = int(answer["resourceVersion"])
    assert new_rv < old_rv
    pods = v1.list_pod_for_all_namespaces()
    assert len(pods.items) == PODS // 2
    assert int(pods.metadata.resource_version) == new_rv
    assert all(int(p.metadata.resource_version) <= new_rv for p in pods.items)
    assert not uids(v1) & old_uids, "an object kept its uid"
    assert v1.read_namespace("kube-system").metadata.uid != old_kube_system
    assert sim.stats()["replaced"] == 1

    # the old version is ahead of the new server: a list waits, then 504
    with pytest.raises(ApiException) as failure:
        v1.list_pod_for_all_namespaces(resource_version=str(old_rv))
    assert failure.value.status == 504
    assert json.loads(failure.value.body)["details"]["causes"][0]["reason"] == \
        "ResourceVersionTooLarge"
    # a version below the new history is gone
    with pytest.raises(ApiException) as failure:
        for _ in watch.Watch().stream(v1.list_namespaced_pod, "default",
                                      resource_version=str(new_rv - 1), timeout_seconds=WAIT):
            pass
    assert failure.value.status == 410
    # a watch from the old version is accepted and hears only what passes it
    quiet = Watcher(v1, "default", str(old_rv))
    sim.wait_for_watches(1)
    sim.create(config_map("unseen"))
    while int(sim.stats()["resourceVersion"]) <= old_rv:
        sim.create(config_map(f"filler-{sim.stats()['resourceVersion']}", "team-1"))
    sim.create(config_map("seen"))
    kind, obj = quiet.next()
    assert (kind, obj.metadata.name) == ("ADDED", "seen")
    quiet.stream.stop()


def test_replace_takes_a_seed_and_a_starting_version(cluster):
    sim, v1 = cluster
    answer = sim.replace_cluster(seed=9, pods=10, rv=100000)
    assert int(answer["resourceVersion"]) > 100000
    first = sorted(p.metadata.uid for p in v1.list_pod_for_all_namespaces().items)
    sim.replace_cluster(seed=9, pods=10, rv=100000)
    # the same seed generates the same objects
    assert sorted(p.metadata.uid for p in v1.list_pod_for_all_namespaces().items) == first
    assert len(first) == 10


def test_restored_backup_keeps_uids_and_rolls_versions_back(cluster):
    sim, v1 = cluster
    taken = sim.snapshot()
    before = {p.metadata.uid: p.metadata.resource_version
              for p in v1.list_pod_for_all_namespaces().items}
    assert taken["resourceVersion"] == v1.list_namespace().metadata.resource_version
    victim = v1.list_namespaced_pod("team-1").items[0].metadata
    sim.delete("v1", "Pod", victim.name, victim.namespace)
    sim.create(config_map("after-backup"))
    later_rv = sim.stats()["resourceVersion"]
    watcher = Watcher(v1, "default", later_rv)
    sim.wait_for_watches(1)

    answer = sim.restore()

    assert watcher.next() == ("END", None)
    assert answer["resourceVersion"] == taken["resourceVersion"]
    after = {p.metadata.uid: p.metadata.resource_version
             for p in v1.list_pod_for_all_namespaces().items}
    assert after == before, "the backup's pods, uids and versions are back"
    with pytest.raises(ApiException) as failure:
        v1.read_namespaced_config_map("after-backup", "default")
    assert failure.value.status == 404
    # without a bump, what clients saw after the backup is ahead of the server again
    with pytest.raises(ApiException) as failure:
        v1.list_namespaced_config_map("default", resource_version=later_rv)
    assert failure.value.status == 504

    # with a bump (etcdutl --bump-revision --mark-compacted) it is gone instead
    answer = sim.restore(bump=1000)
    assert int(answer["resourceVersion"]) == int(taken["resourceVersion"]) + 1000
    with pytest.raises(ApiException) as failure:
        for _ in watch.Watch().stream(v1.list_namespaced_config_map, "default",
                                      resource_version=later_rv, timeout_seconds=WAIT):
            pass
    assert failure.value.status == 410
    written = sim.create(config_map("after-restore"))
    assert int(written["metadata"]["resourceVersion"]) == int(answer["resourceVersion"]) + 1


def test_restore_without_a_snapshot_is_refused(cluster):
    sim, _ = cluster
    status, body = sim.request("POST", "/kubesim/restore", auth=False)
    assert status == 409 and "snapshot" in body["message"]


def test_silent_writes_reach_lists_but_no_watch(cluster):
    sim, v1 = cluster
    listed = v1.list_namespaced_config_map("default")
    existing = listed.items[0].metadata.name
    watcher = Watcher(v1, "default", listed.metadata.resource_version)
    sim.wait_for_watches(1)

    quiet = sim.create(config_map("quiet"), silent=True)
    sim.replace(config_map(existing, value="changed quietly"), silent=True)
    sim.create(config_map("doomed"))
    sim.delete("v1", "ConfigMap", "doomed", "default", silent=True)
    sim.create(config_map("loud"))

    # only the writes with events arrive, in order
    assert [(k, o.metadata.name) for k, o in (watcher.next(), watcher.next())] == \
        [("ADDED", "doomed"), ("ADDED", "loud")]
    watcher.stream.stop()
    names = {c.metadata.name: c for c in v1.list_namespaced_config_map("default").items}
    assert "quiet" in names and "doomed" not in names and "loud" in names
    assert names[existing].data == {"k": "changed quietly"}
    assert names["quiet"].metadata.resource_version == quiet["metadata"]["resourceVersion"]
    # and no watch replays them later either
    replay = Watcher(v1, "default", listed.metadata.resource_version)
    assert [(k, o.metadata.name) for k, o in (replay.next(), replay.next())] == \
        [("ADDED", "doomed"), ("ADDED", "loud")]
    replay.stream.stop()
