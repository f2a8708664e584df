# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""What meshsync may see of a real cluster, and what it does with it: a custom resource type
created, used and deleted while it runs (followed, as upstream does, when the MeshSync
resource exists); a user with Roles in exactly two namespaces and `--namespaces` naming them;
a token the server refuses. One cluster and one nats-server for the module; the tests use
namespaces and types of their own."""

import json
import re
import subprocess
import time

import pytest

import kube_seed
from realkube_run import (DAEMON, TIMEOUT, Consumer, Daemon, diff, kubeconfig_for,
                          nats_server, start_realkube, truth, wait_for_subscription,
                          wait_picture, wait_until)
from meshsync_run import daemon_env


@pytest.fixture(scope="module")
def cluster():
    with start_realkube() as rk:
        yield rk


@pytest.fixture(scope="module")
def nats():
    with nats_server() as server:
        yield server


@pytest.fixture
def consumer(nats):
    consumer = Consumer(nats.port)
    consumer.start()
    try:
        wait_for_subscription(consumer)
        yield consumer
    finally:
        consumer.close()


def crd(group, kind, plural, scope="Namespaced", version="v1"):
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {"group": group, "scope": scope,
                 "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural,
                           "singular": kind.lower()},
                 "versions": [{"name": version, "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {
                                   "type": "object",
                                   "x-kubernetes-preserve-unknown-fields": True}}}]}}


def established(rk, name):
    rk.kubectl("wait", "--for=condition=Established", f"crd/{name}", "--timeout=60s",
               timeout=90)


WIDGETS = "/apis/example.com/v1/namespaces/widgets/widgets"


def widget_truth(client):
    """{uid: resourceVersion} of the Widgets; {} once the type is gone."""
    status, data = client.request("GET", "/apis/example.com/v1/widgets")
    if status == 404:
        return {}
    assert status == 200, data[:300]
    return {i["metadata"]["uid"]: i["metadata"]["resourceVersion"]
            for i in json.loads(data)["items"]}


def widget_picture(consumer):
    with consumer.lock:
        return {uid: rv for uid, rv in consumer.state.items()
                if consumer.meta[uid][0] == "Widget"}


def wait_widgets(consumer, client, daemon, what):
    def same():
        return widget_picture(consumer) == widget_truth(client)

    try:
        wait_until(same, what, TIMEOUT, proc=daemon.proc, log=daemon.log, interval=0.1)
    except AssertionError as error:
        raise AssertionError(f"{diff(widget_picture(consumer), widget_truth(client))}\n"
                             f"{error}") from None


def test_crd_created_used_and_deleted(cluster, nats, consumer, tmp_path):
    client = kube_seed.Client(cluster.kubeconfig)
    cluster.apply(crd("meshery.io", "MeshSync", "meshsyncs", version="v1alpha1"))
    established(cluster, "meshsyncs.meshery.io")
    cluster.apply({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        for name in ("meshery", "widgets")]})
    cluster.apply({"apiVersion": "meshery.io/v1alpha1", "kind": "MeshSync",
                   "metadata": {"name": "meshery-meshsync", "namespace": "meshery"},
                   "spec": {"watch-list": {"data": {"blacklist": '["secrets.v1."]'}}}})
    try:
        with Daemon(str(tmp_path), cluster.kubeconfig, nats.url) as daemon:
            log = daemon.wait_synced()
            assert "watch configuration from the MeshSync resource" in log, log[-3000:]
            assert "widgets" not in log

            # created: the type is followed after the resync, its objects come as ADDED
            cluster.apply(crd("example.com", "Widget", "widgets"))
            established(cluster, "widgets.example.com")
            uids = []
            for n in range(3):
                status, data = client.request("POST", WIDGETS, json.dumps(
                    {"apiVersion": "example.com/v1", "kind": "Widget",
                     "metadata": {"name": f"gear-{n}"}, "spec": {"teeth": 10 + n}}))
                assert status == 201, data[:300]
                uids.append(json.loads(data)["metadata"]["uid"])
            daemon.wait_for_line("custom resource type widgets.v1.example.com added: "
                                 "resync scheduled")
            wait_widgets(consumer, client, daemon, "the three Widgets in the picture")
            assert set(widget_picture(consumer)) == set(uids)

            # used: a change, a deletion and a new one, through the watch
            status, data = client.request("PATCH", f"{WIDGETS}/gear-0",
                                          json.dumps({"spec": {"teeth": 99}}),
                                          "application/merge-patch+json")
            assert status == 200, data[:300]
            status, data = client.request("DELETE", f"{WIDGETS}/gear-1")
            assert status == 200, data[:300]
            status, data = client.request("POST", WIDGETS, json.dumps(
                {"apiVersion": "example.com/v1", "kind": "Widget",
                 "metadata": {"name": "gear-3"}, "spec": {"teeth": 13}}))
            assert status == 201, data[:300]
            wait_widgets(consumer, client, daemon, "the Widgets after a patch, a delete and "
                                                   "a create")
            assert uids[1] not in widget_picture(consumer)
            kinds = [e[0] for e in consumer.events_since(0) if e[1] == uids[0]]
            assert kinds == ["ADDED", "MODIFIED"], kinds

            # deleted: the server deletes every Widget, then the type; both leave the
            # picture, and the type's informer is gone after the resync
            syncs = daemon.metric("meshsync_syncs_total")
            cluster.kubectl("delete", "crd", "widgets.example.com", "--wait=true",
                            timeout=120)
            wait_until(lambda: widget_truth(client) == {}, "the Widget type gone")
            daemon.wait_for_line("custom resource type widgets.v1.example.com removed: "
                                 "resync scheduled")
            daemon.wait_metric("meshsync_syncs_total", syncs + 1)
            wait_widgets(consumer, client, daemon, "no Widget left in the picture")
            deleted = [e[1] for e in consumer.events_since(0)
                       if e[0] == "DELETED" and e[4] == "Widget"]
            assert sorted(deleted) == sorted(set(deleted)), "a Widget retracted twice"
            assert daemon.proc.poll() is None
            assert daemon.terminate() == 0, daemon.log()[-3000:]
    finally:
        cluster.kubectl("delete", "--ignore-not-found", "crd", "meshsyncs.meshery.io",
                        "widgets.example.com", "--wait=true", timeout=120)


# The namespaced types of the default watch set, by API group, as a Role grants them.
NAMESPACED = {
    "": ["configmaps", "secrets", "persistentvolumeclaims", "pods", "services", "endpoints",
         "serviceaccounts", "replicationcontrollers"],
    "apps": ["replicasets", "deployments", "statefulsets", "daemonsets"],
    "networking.k8s.io": ["ingresses"],
    "batch": ["cronjobs"],
    "discovery.k8s.io": ["endpointslices"],
}
SCOPED = ["acc-0", "acc-1"]


def live_meshsync(names):
    whitelist = [{"Resource": name, "Events": ["ADDED", "MODIFIED", "DELETED"]}
                 for name in names]
    return {"apiVersion": "meshery.io/v1alpha1", "kind": "MeshSync",
            "metadata": {"name": "meshery-meshsync", "namespace": "meshery"},
            "spec": {"watch-list": {"data": {"whitelist": json.dumps(whitelist)}}}}


def test_watch_list_changed_while_running(cluster, nats, consumer, tmp_path):
    """The MeshSync resource's watch list changed on a real server: the added type's objects
    are published without a resync, an annotation alone changes nothing, and deleting the
    resource goes back to the default types."""
    client = kube_seed.Client(cluster.kubeconfig)
    cluster.apply(crd("meshery.io", "MeshSync", "meshsyncs", version="v1alpha1"))
    established(cluster, "meshsyncs.meshery.io")
    cluster.apply({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        for name in ("meshery", "live")]})
    cluster.apply(live_meshsync(["configmaps.v1."]))
    cluster.apply({"apiVersion": "v1", "kind": "Secret",
                   "metadata": {"name": "token", "namespace": "live"},
                   "stringData": {"a": "1"}})
    secret = json.loads(cluster.kubectl("get", "secret", "-n", "live", "token", "-o", "json"))
    uid = secret["metadata"]["uid"]
    try:
        with Daemon(str(tmp_path), cluster.kubeconfig, nats.url) as daemon:
            daemon.wait_synced()
            assert uid not in consumer.picture()
            cluster.apply(live_meshsync(["configmaps.v1.", "secrets.v1."]))
            daemon.wait_metric("meshsync_watch_list_changes_total", 1)
            wait_until(lambda: uid in consumer.picture(), "the Secret published",
                       proc=daemon.proc, log=daemon.log)
            # an annotation, then the same change written again: nothing; the deletion that
            # follows is the second change counted
            cluster.kubectl("annotate", "-n", "meshery", "meshsyncs.meshery.io",
                            "meshery-meshsync", "touched=yes")
            cluster.apply(live_meshsync(["configmaps.v1.", "secrets.v1."]))
            cluster.kubectl("delete", "-n", "meshery", "meshsyncs.meshery.io",
                            "meshery-meshsync", "--wait=true", timeout=120)
            daemon.wait_metric("meshsync_watch_list_changes_total", 2)
            # the default types: the kubernetes Service joins
            def kinds():
                with consumer.lock:
                    return {meta[0] for meta in consumer.meta.values()}

            wait_until(lambda: "Service" in kinds(), "a Service published", proc=daemon.proc,
                       log=daemon.log)
            assert daemon.metric("meshsync_watch_list_changes_total") == 2
            assert daemon.metric("meshsync_syncs_total") == 1
            assert daemon.terminate() == 0, daemon.log()[-3000:]
    finally:
        cluster.kubectl("delete", "--ignore-not-found", "crd", "meshsyncs.meshery.io",
                        "--wait=true", timeout=120)
        client.request("DELETE", "/api/v1/namespaces/live")


def grant(rk, namespace):
    """A Role with list and watch on the namespaced default types in @namespace, bound to
    the restricted user."""
    rules = [{"apiGroups": [group], "resources": resources, "verbs": ["list", "watch"]}
             for group, resources in NAMESPACED.items()]
    rk.apply({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": {"name": "meshsync-reader", "namespace": namespace}, "rules": rules},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": "meshsync-reader", "namespace": namespace},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                     "name": "meshsync-reader"},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                       "name": "restricted"}]}]})


def test_namespaces_with_roles_in_two(cluster, nats, consumer, tmp_path):
    client = kube_seed.Client(cluster.kubeconfig)
    kube_seed.seed_pods(cluster.kubeconfig, 300, namespaces=3, threads=4, prefix="acc")
    for namespace in ("acc-0", "acc-1", "acc-2"):
        cluster.apply({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": "settings", "namespace": namespace}, "data": {"a": "1"}},
            {"apiVersion": "v1", "kind": "Secret",
             "metadata": {"name": "token", "namespace": namespace},
             "stringData": {"t": "x"}},
            {"apiVersion": "v1", "kind": "Service",
             "metadata": {"name": "api", "namespace": namespace},
             "spec": {"ports": [{"port": 80}]}}]})
    for namespace in SCOPED:
        grant(cluster, namespace)
    wait_until(lambda: cluster.kubectl("auth", "can-i", "watch", "pods", "-n", "acc-1",
                                       restricted=True).strip() == "yes",
               "the Role in force")

    with Daemon(str(tmp_path), cluster.restricted_kubeconfig, nats.url,
                "--namespaces", ",".join(SCOPED)) as daemon:
        daemon.wait_synced()
        waited, state = wait_picture(consumer, lambda: truth(client, namespaces=SCOPED),
                                     "the two namespaces' objects", daemon=daemon)
        assert len(state) > 200
        with consumer.lock:
            namespaces = {meta[1] for meta in consumer.meta.values()}
        assert namespaces == set(SCOPED), namespaces

        # changes in a granted namespace come through; one elsewhere does not
        outside = cluster.apply({"apiVersion": "v1", "kind": "ConfigMap",
                                 "metadata": {"name": "late", "namespace": "acc-2"}})
        assert outside is not None
        for namespace in SCOPED:
            cluster.apply({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": "late", "namespace": namespace}})
        wait_picture(consumer, lambda: truth(client, namespaces=SCOPED),
                     "the two namespaces' objects after changes", daemon=daemon)
        with consumer.lock:
            assert {meta[1] for meta in consumer.meta.values()} == set(SCOPED)

        # no error loop: every refusal (cluster-scoped types, the cluster id, the
        # MeshSync resource) logged once, nothing re-listed or re-watched
        assert daemon.metric("meshsync_relists_total") == 0
        # watches are reopened every 15-25 s as the server ends them (doc/durability.md),
        # which is no loop; a refusal repeated would be one
        log = daemon.log()
        refused = [line for line in log.splitlines()
                   if re.search(r"forbidden|403|refused", line, re.I)]
        repeated = {line: n for line, n in
                    ((l, refused.count(l)) for l in set(refused)) if n > 1}
        assert not repeated, repeated
        # only what the Roles do not grant is refused: cluster-scoped types, the cluster id
        # in kube-system, the MeshSync resource; how many of those depends on discovery, so
        # it is not counted; nothing in a granted namespace may be among them
        granted = [line for line in refused
                   if any(f'namespace "{namespace}"' in line for namespace in SCOPED)]
        assert not granted, "\n".join(granted)
        assert daemon.proc.poll() is None
        assert daemon.terminate() == 0, daemon.log()[-3000:]
        print(f"{len(state)} objects of {SCOPED} pictured {waited:.2f} s after the sync; "
              f"{len(refused)} refusals logged:\n" + "\n".join(refused))


def test_refused_token_one_shot_exits_1(cluster, tmp_path):
    bad = kubeconfig_for(cluster, str(tmp_path / "bad.kubeconfig"), token="not-a-token")
    out = tmp_path / "snapshot.yaml"
    started = time.monotonic()
    run = subprocess.run([DAEMON, "-output", "file", "--outputFile", str(out),
                          "--stop-after-sync", "--kubeconfig", bad, "--health-port", "0",
                          "--health-address", "127.0.0.1"],
                         capture_output=True, text=True, timeout=TIMEOUT, env=daemon_env(),
                         stdin=subprocess.DEVNULL, check=False)
    assert run.returncode == 1, (run.returncode, run.stderr[-3000:])
    # what the server answers that token
    status, answer = cluster.request("GET", "/api", token="not-a-token")
    assert status == 401 and answer["reason"] == "Unauthorized", (status, answer)
    # the error, in one line of its own (the log lines before it carry a level and time)
    errors = [line for line in run.stderr.splitlines() if line.startswith("meshsync: ")]
    assert len(errors) == 1, run.stderr
    assert f"401 {answer['reason']}" in errors[0], run.stderr
    assert not out.exists(), "an empty snapshot left behind"
    print(f"{errors[0]} ({time.monotonic() - started:.2f} s)")
