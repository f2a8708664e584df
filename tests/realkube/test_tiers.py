# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""Depth per type (doc/tiers.md) against a real API server: the metadata-only forms meshsync
asks for are the ones the server converts to (a list, a watch, the streaming list), and a
MeshSync resource whose tier-config makes every type shallow but Deployments and Services
gives a one-shot snapshot where the shallow types' objects are their metadata with an empty
spec and status, under their own kind and apiVersion, and the full types' objects are
exactly what kubectl reads; in broker mode, a shallow type's change and deletion arrive
through its metadata-only watch in that shape."""

import json
import subprocess

import pytest

import kube_seed
from realkube_run import (DAEMON, TIMEOUT, Consumer, Daemon, nats_server, start_realkube,
                          wait_for_subscription, wait_until)
from meshsync_run import daemon_env, read_documents

# What the informer of a shallow type sends (src/libmeshsync/kube/msd-kube-client.h).
ACCEPT_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
ACCEPT_ONE = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

TIERS = {"Depth": "shallow", "Full": ["deployments.v1.apps", "services.v1."]}

OBJECTS = """\
apiVersion: v1
kind: Namespace
metadata: {name: meshery}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, labels: {app.kubernetes.io/name: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: registry.example/web:1}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: app-config, namespace: shop, labels: {tier: shallow}}
data: {mode: production}
"""


def crd_meshsync():
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "meshsyncs.meshery.io"},
        "spec": {"group": "meshery.io", "scope": "Namespaced",
                 "names": {"kind": "MeshSync", "listKind": "MeshSyncList",
                           "plural": "meshsyncs", "singular": "meshsync"},
                 "versions": [{"name": "v1alpha1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {
                                   "type": "object",
                                   "x-kubernetes-preserve-unknown-fields": True}}}]}}


@pytest.fixture(scope="module")
def cluster():
    with start_realkube() as rk:
        rk.apply(crd_meshsync())
        rk.kubectl("wait", "--for=condition=Established", "crd/meshsyncs.meshery.io",
                   "--timeout=60s", timeout=90)
        rk.apply(OBJECTS)
        rk.apply({"apiVersion": "meshery.io/v1alpha1", "kind": "MeshSync",
                  "metadata": {"name": "meshery-meshsync", "namespace": "meshery"},
                  "spec": {"watch-list": {"data": {"blacklist": '["secrets.v1."]',
                                                   "tier-config": json.dumps(TIERS)}}}})

        def made():
            # no kubelet runs: the pods the ReplicaSet makes exist, never become ready
            pods = rk.get_json("pods", "shop")["items"]
            return len([p for p in pods if p["metadata"].get("ownerReferences")]) == 2

        wait_until(made, "the Deployment's ReplicaSet and 2 pods", TIMEOUT, log=rk.log,
                   interval=0.2)
        yield rk


def test_server_answers_the_metadata_forms(cluster):
    """The list answer is a PartialObjectMetadataList, each watch event (the streaming
    list's too) a PartialObjectMetadata: without spec, status or data."""
    status, listed = cluster.request("GET", "/api/v1/configmaps?limit=500",
                                     headers={"Accept": ACCEPT_LIST})
    assert status == 200, listed
    assert listed["kind"] == "PartialObjectMetadataList", listed
    assert listed["apiVersion"] == "meta.k8s.io/v1"
    assert listed["items"] and all(set(i) <= {"kind", "apiVersion", "metadata"}
                                   for i in listed["items"]), listed["items"][:2]

    for query in ("watch=true&resourceVersion=" + listed["metadata"]["resourceVersion"],
                  "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                  "&resourceVersion=&allowWatchBookmarks=true"):
        # a ConfigMap made after the list reaches both watches as an event
        name = "probe-" + str(len(query))
        cluster.apply({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": name, "namespace": "shop"}, "data": {"a": "b"}})
        for event in cluster.watch(f"/api/v1/namespaces/shop/configmaps?{query}"
                                   "&timeoutSeconds=30", headers={"Accept": ACCEPT_ONE}):
            obj = event["object"]
            if event["type"] == "BOOKMARK":
                continue
            assert obj["kind"] == "PartialObjectMetadata", event
            assert obj["apiVersion"] == "meta.k8s.io/v1", event
            assert "data" not in obj and "spec" not in obj, event
            if obj["metadata"]["name"] == name:
                break
        cluster.kubectl("delete", "configmap", name, "-n", "shop")


def component(doc):
    """component_metadata: an object in the file's YAML, JSON text on the broker's wire."""
    value = doc["component_metadata"]
    return json.loads(value) if isinstance(value, str) else value


def test_one_shot_snapshot_shallow_and_full(cluster, tmp_path):
    out = str(tmp_path / "snapshot.yaml")
    argv = [DAEMON, "-output", "file", "--outputFile", out, "--stop-after-sync",
            "--kubeconfig", cluster.kubeconfig, "--health-port", "0",
            "--health-address", "127.0.0.1"]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                         env=daemon_env(), stdin=subprocess.DEVNULL, check=False)
    assert run.returncode == 0, run.stderr[-6000:]
    assert "watch configuration from the MeshSync resource" in run.stderr, run.stderr[-3000:]
    assert "tier-config" not in run.stderr, run.stderr[-3000:]
    docs = read_documents(out)
    by_kind = {}
    for doc in docs:
        by_kind.setdefault(doc["kind"], []).append(doc)

    # full: spec and status as the server has them, images read
    deployment = next(d for d in by_kind["Deployment"] if d["metadata"]["name"] == "web")
    server = cluster.get_json("deployment/web", "shop")
    assert json.loads(deployment["spec"]["attribute"]) == server["spec"]
    assert deployment["apiVersion"] == "apps/v1"
    signals = component(deployment)["builderSignals"]
    assert signals["images"] == ["registry.example/web:1"]
    service = next(d for d in by_kind["Service"] if d["metadata"]["name"] == "web")
    assert json.loads(service["spec"]["attribute"])["ports"][0]["port"] == 80

    # shallow: every other type, metadata as the server has it, spec and status empty
    shallow = {"Pod", "ReplicaSet", "ConfigMap", "Namespace", "ServiceAccount"}
    assert shallow <= set(by_kind), sorted(by_kind)
    for kind in shallow:
        for doc in by_kind[kind]:
            assert doc["spec"] == {"id": "", "attribute": "{}"}, doc
            assert doc["status"] == {"id": "", "attribute": "{}"}, doc
            assert "data" not in doc, doc
    config = next(d for d in by_kind["ConfigMap"] if d["metadata"]["name"] == "app-config")
    truth = cluster.get_json("configmap/app-config", "shop")
    assert config["apiVersion"] == "v1"
    assert config["metadata"]["uid"] == truth["metadata"]["uid"]
    assert config["metadata"]["resourceVersion"] == truth["metadata"]["resourceVersion"]
    assert {(kv["key"], kv["value"]) for kv in config["metadata"]["labels"]} == \
        {("tier", "shallow")}
    pods = [d for d in by_kind["Pod"] if d["metadata"]["namespace"] == "shop"]
    assert len(pods) == 2 and all(p["apiVersion"] == "v1" for p in pods)
    for pod in pods:
        # owner references are metadata: kept; the images were never read: no key
        assert json.loads(pod["metadata"]["ownerReferences"])[0]["kind"] == "ReplicaSet"
        signals = component(pod)["builderSignals"]
        assert "images" not in signals, signals
    # every object the server has, at its resourceVersion
    listed = cluster.get_json("pods", "shop")["items"]
    assert {p["metadata"]["uid"]: p["metadata"]["resourceVersion"] for p in listed} == \
        {p["metadata"]["uid"]: p["metadata"]["resourceVersion"] for p in pods}


class ObjectConsumer(Consumer):
    """The consumer, keeping the last Object published for each uid as well."""

    def __init__(self, port):
        super().__init__(port)
        self.objects = {}

    def _add(self, payload):
        super()._add(payload)
        try:
            obj = json.loads(payload)["Object"]
            with self.lock:
                self.objects[obj["metadata"]["uid"]] = obj
        except (ValueError, KeyError, TypeError):
            pass

    def last(self, uid):
        with self.lock:
            return self.objects.get(uid)


def test_broker_watch_events_of_a_shallow_type(cluster, tmp_path):
    client = kube_seed.Client(cluster.kubeconfig)
    path = "/api/v1/namespaces/shop/configmaps"
    with nats_server() as nats:
        consumer = ObjectConsumer(nats.port)
        consumer.start()
        try:
            wait_for_subscription(consumer)
            with Daemon(str(tmp_path), cluster.kubeconfig, nats.url) as daemon:
                daemon.wait_synced()
                web = cluster.get_json("deployment/web", "shop")
                wait_until(lambda: consumer.last(web["metadata"]["uid"]), "the Deployment",
                           TIMEOUT, proc=daemon.proc, log=daemon.log)
                full = consumer.last(web["metadata"]["uid"])
                assert json.loads(full["spec"]["attribute"])["replicas"] == 2

                status, made = client.request("POST", path, json.dumps(
                    {"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": "watched", "labels": {"step": "one"}},
                     "data": {"k": "v"}}))
                assert status == 201, made
                uid = json.loads(made)["metadata"]["uid"]
                status, patched = client.request(
                    "PATCH", f"{path}/watched",
                    json.dumps({"metadata": {"labels": {"step": "two"}}}),
                    "application/merge-patch+json")
                assert status == 200, patched
                rv = json.loads(patched)["metadata"]["resourceVersion"]

                def modified():
                    obj = consumer.last(uid)
                    return obj if obj and obj["metadata"]["resourceVersion"] == rv else None

                obj = wait_until(modified, "the shallow ConfigMap's MODIFIED", TIMEOUT,
                                 proc=daemon.proc, log=daemon.log)
                assert obj["kind"] == "ConfigMap" and obj["apiVersion"] == "v1", obj
                assert obj["spec"] == {"id": "", "attribute": "{}"}, obj
                assert obj["status"] == {"id": "", "attribute": "{}"}, obj
                assert "data" not in obj, obj
                assert [(kv["key"], kv["value"]) for kv in obj["metadata"]["labels"]] == \
                    [("step", "two")]

                status, _ = client.request("DELETE", f"{path}/watched")
                assert status == 200

                def deleted():
                    return [e for e in consumer.events_since() if e[0] == "DELETED"
                            and e[1] == uid]

                wait_until(deleted, "the shallow ConfigMap's DELETED", TIMEOUT,
                           proc=daemon.proc, log=daemon.log)
                # a MODIFIED may be folded into the ADDED when the output is behind
                kinds = [e[0] for e in consumer.events_since() if e[1] == uid]
                assert kinds[0] == "ADDED" and kinds[-1] == "DELETED", kinds
                assert consumer.last(uid)["spec"] == {"id": "", "attribute": "{}"}
        finally:
            consumer.close()
