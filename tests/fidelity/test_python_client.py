"""python-kubernetes (the Debian package, 22.x) against meshsync-kubesim.

The simulator must look like a real API server to the official Python client: its kubeconfig,
paginated lists, label selectors, watches with every event type, a 410 in a watch stream, and
objects loaded from manifests read back through the typed API.
"""

import json
import os
import queue
import threading

import pytest
import yaml
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

import kubesim

SEEDED_PODS = 57
SEEDED_NAMESPACES = 3
PAGE = 7
# Upper bounds for waiting on conditions; a healthy run never gets close to them.
EVENT_WAIT = 30
WATCH_SERVER_TIMEOUT = 60

MANIFESTS = os.path.join(kubesim.DATA, "manifests")


def make_api_client(sim):
    """A client configured only from the kubeconfig kubesim wrote, never the user's own."""
    configuration = client.Configuration()
    config.load_kube_config(config_file=sim.kubeconfig, client_configuration=configuration,
                            persist_config=False)
    return client.ApiClient(configuration)


@pytest.fixture
def seeded():
    with kubesim.Kubesim(pods=SEEDED_PODS, namespaces=SEEDED_NAMESPACES) as sim:
        with make_api_client(sim) as api:
            yield sim, api


@pytest.fixture
def manifests():
    with kubesim.Kubesim(data=MANIFESTS) as sim:
        with make_api_client(sim) as api:
            yield sim, api


def list_all_pods_paginated(v1, limit):
    """Follows continue tokens; returns the pods and the resourceVersion of every page."""
    pods, versions = [], []
    token = None
    while True:
        kwargs = {"limit": limit}
        if token:
            kwargs["_continue"] = token
        page = v1.list_pod_for_all_namespaces(**kwargs)
        pods.extend(page.items)
        versions.append(page.metadata.resource_version)
        token = page.metadata._continue
        if token:
            # nothing changes meanwhile: the count is exact
            assert page.metadata.remaining_item_count == SEEDED_PODS - len(pods)
        else:
            assert page.metadata.remaining_item_count is None
        if not token:
            return pods, versions


class WatchThread:
    """Runs a watch in a thread and queues its events, so that the test can change objects
    while the stream is open and wait for each event with a timeout instead of sleeping."""

    def __init__(self, func, *args, stop_when=None, **kwargs):
        self.events = queue.Queue()
        self.watch = watch.Watch()
        self._stop_when = stop_when
        self._thread = threading.Thread(target=self._run, args=(func, args, kwargs),
                                        daemon=True)
        self._thread.start()

    def _run(self, func, args, kwargs):
        try:
            for event in self.watch.stream(func, *args, **kwargs):
                self.events.put((event["type"], event["object"]))
                if self._stop_when is not None and self._stop_when(event):
                    self.watch.stop()
        except Exception as err:  # handed to the test thread, which fails with it
            self.events.put(("EXCEPTION", err))
        self.events.put(("END", None))

    def next_event(self):
        try:
            kind, obj = self.events.get(timeout=EVENT_WAIT)
        except queue.Empty:
            raise AssertionError(f"no watch event within {EVENT_WAIT} s") from None
        if kind == "EXCEPTION":
            raise obj
        return kind, obj

    def join(self):
        self._thread.join(timeout=EVENT_WAIT)
        assert not self._thread.is_alive(), "the watch did not end after it was stopped"


def sample_pod(namespace, name, labels):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"containers": [{"name": "main", "image": "docker.io/library/busybox:1.36"}]},
    }


def test_kubeconfig_gives_https_with_ca_and_token(seeded):
    sim, api = seeded
    configuration = api.configuration

    assert configuration.host.startswith("https://127.0.0.1:")
    assert configuration.verify_ssl
    assert configuration.ssl_ca_cert and os.path.exists(configuration.ssl_ca_cert)
    assert configuration.api_key.get("authorization") == "Bearer " + sim.token

    names = {ns.metadata.name for ns in client.CoreV1Api(api).list_namespace().items}
    expected = {"default", "kube-system"}
    expected |= {f"team-{i}" for i in range(1, SEEDED_NAMESPACES + 1)}
    assert expected <= names


def test_wrong_token_is_rejected_with_401(seeded):
    sim, api = seeded
    configuration = client.Configuration()
    config.load_kube_config(config_file=sim.kubeconfig, client_configuration=configuration,
                            persist_config=False)
    configuration.api_key = {"authorization": "Bearer not-" + sim.token}
    with client.ApiClient(configuration) as bad:
        with pytest.raises(ApiException) as failure:
            client.CoreV1Api(bad).list_namespace()
    assert failure.value.status == 401


def test_paginated_list_returns_every_seeded_pod_once(seeded):
    _, api = seeded
    v1 = client.CoreV1Api(api)

    pods, versions = list_all_pods_paginated(v1, PAGE)

    keys = [(p.metadata.namespace, p.metadata.name) for p in pods]
    assert len(versions) >= SEEDED_PODS // PAGE, "the list was not split into pages"
    assert len(set(versions)) == 1, f"pages of one list carry different RVs: {versions}"
    assert len(keys) == SEEDED_PODS
    assert len(set(keys)) == SEEDED_PODS, "a pod was returned twice"
    whole = v1.list_pod_for_all_namespaces()
    assert {(p.metadata.namespace, p.metadata.name) for p in whole.items} == set(keys)
    assert whole.metadata._continue is None


def test_seeded_pods_are_complete_and_owned_by_replicasets(seeded):
    _, api = seeded
    v1 = client.CoreV1Api(api)
    apps = client.AppsV1Api(api)

    pods = v1.list_pod_for_all_namespaces().items
    replicasets = {rs.metadata.uid: rs for rs in apps.list_replica_set_for_all_namespaces().items}
    deployments = {d.metadata.uid: d for d in apps.list_deployment_for_all_namespaces().items}

    for pod in pods:
        owner = pod.metadata.owner_references[0]
        assert owner.kind == "ReplicaSet" and owner.controller
        rs = replicasets[owner.uid]
        assert rs.metadata.name == owner.name
        assert rs.metadata.namespace == pod.metadata.namespace
        assert pod.metadata.labels["pod-template-hash"] == rs.metadata.labels["pod-template-hash"]
        assert rs.metadata.owner_references[0].uid in deployments
        assert pod.status.phase == "Running"
        assert len(pod.spec.containers) == 2
        assert len(pod.status.conditions) == 5
        for status in pod.status.container_statuses:
            assert status.ready and status.started
            assert status.state.running.started_at is not None


LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def test_seeded_objects_carry_managed_fields_and_times(seeded):
    _, api = seeded
    v1 = client.CoreV1Api(api)
    apps = client.AppsV1Api(api)

    for pod in v1.list_pod_for_all_namespaces().items:
        entries = pod.metadata.managed_fields
        assert [e.manager for e in entries][:2] == ["kube-controller-manager", "kubelet"]
        for entry in entries:
            assert isinstance(entry, client.V1ManagedFieldsEntry)
            assert entry.operation == "Update" and entry.fields_type == "FieldsV1"
            assert isinstance(entry.fields_v1, dict) and entry.time.tzinfo is not None
        assert entries[1].subresource == "status"
        assert "f:conditions" in entries[1].fields_v1["f:status"]
        assert entries[1].time == max(c.last_transition_time for c in pod.status.conditions)
        for status in pod.status.container_statuses:
            assert status.image_id and status.container_id.startswith("containerd://")
            assert status.restart_count == 0

    deployments = apps.list_deployment_for_all_namespaces().items
    for deployment in deployments:
        managers = {(e.manager, e.subresource) for e in deployment.metadata.managed_fields}
        assert managers == {("kubectl-client-side-apply", None),
                            ("kube-controller-manager", "status")}
        applied = json.loads(deployment.metadata.annotations[LAST_APPLIED])
        assert applied["metadata"]["name"] == deployment.metadata.name
        assert applied["spec"]["replicas"] == deployment.spec.replicas
        for cond in deployment.status.conditions:
            assert cond.last_update_time is not None and cond.last_transition_time is not None
    for rs in apps.list_replica_set_for_all_namespaces().items:
        owner = rs.metadata.owner_references[0]
        assert owner.controller and owner.block_owner_deletion
        assert rs.metadata.managed_fields[0].manager == "kube-controller-manager"
    for service in v1.list_service_for_all_namespaces().items:
        assert service.metadata.managed_fields, service.metadata.name
    applied_maps = [json.loads(cm.metadata.annotations[LAST_APPLIED])
                    for cm in v1.list_config_map_for_all_namespaces().items
                    if LAST_APPLIED in (cm.metadata.annotations or {})]
    assert {a["kind"] for a in applied_maps} == {"ConfigMap"}
    assert len(applied_maps) == len(deployments)


def test_label_selector_filters_namespaced_list(seeded):
    _, api = seeded
    v1 = client.CoreV1Api(api)
    pods = v1.list_pod_for_all_namespaces().items
    target = pods[-1]
    namespace = target.metadata.namespace
    app = target.metadata.labels["app"]
    expected = {p.metadata.name for p in pods
                if p.metadata.namespace == namespace and p.metadata.labels.get("app") == app}

    selected = v1.list_namespaced_pod(namespace, label_selector=f"app={app}").items
    assert {p.metadata.name for p in selected} == expected

    others = v1.list_namespaced_pod(namespace, label_selector=f"app!={app}").items
    assert others, "the namespace should hold pods of other apps"
    assert all(p.metadata.labels["app"] != app for p in others)


def test_watch_sees_added_modified_deleted_in_order(seeded):
    sim, api = seeded
    v1 = client.CoreV1Api(api)
    namespace = "team-1"
    name = "watched-pod"
    listed = v1.list_namespaced_pod(namespace)

    def ours_deleted(event):
        return event["type"] == "DELETED" and event["object"].metadata.name == name

    watcher = WatchThread(v1.list_namespaced_pod, namespace,
                          resource_version=listed.metadata.resource_version,
                          timeout_seconds=WATCH_SERVER_TIMEOUT, stop_when=ours_deleted)
    sim.wait_for_watches(1)

    sim.create(sample_pod(namespace, name, {"app": "watched", "stage": "one"}))
    sim.replace(sample_pod(namespace, name, {"app": "watched", "stage": "two"}))
    sim.delete("v1", "Pod", name, namespace)

    seen = []
    while len(seen) < 3:
        kind, pod = watcher.next_event()
        assert kind != "END", f"the watch ended early after {seen}"
        if pod.metadata.name == name:
            seen.append((kind, pod))
    watcher.join()

    assert [kind for kind, _ in seen] == ["ADDED", "MODIFIED", "DELETED"]
    assert seen[0][1].metadata.labels["stage"] == "one"
    assert seen[1][1].metadata.labels["stage"] == "two"
    versions = [pod.metadata.resource_version for _, pod in seen]
    assert len(set(versions)) == 3, f"events reuse a resourceVersion: {versions}"
    assert listed.metadata.resource_version not in versions
    with pytest.raises(ApiException) as gone:
        v1.read_namespaced_pod(name, namespace)
    assert gone.value.status == 404


def test_touch_sends_rounds_of_modified_events(seeded):
    """/kubesim/touch: every pod of a namespace written once a round, a MODIFIED event with a
    new resourceVersion each time, the rounds in order."""
    sim, api = seeded
    v1 = client.CoreV1Api(api)
    namespace = "team-3"
    listed = v1.list_namespaced_pod(namespace)
    names = sorted(pod.metadata.name for pod in listed.items)
    assert names
    rounds = 3

    watcher = WatchThread(v1.list_namespaced_pod, namespace,
                          resource_version=listed.metadata.resource_version,
                          timeout_seconds=WATCH_SERVER_TIMEOUT)
    sim.wait_for_watches(1)
    answer = sim.touch("v1", "Pod", rounds=rounds, namespace=namespace)
    assert answer["events"] == rounds * len(names)

    seen = []
    while len(seen) < rounds * len(names):
        kind, pod = watcher.next_event()
        assert kind == "MODIFIED", f"after {len(seen)} events: {kind}"
        seen.append(pod)
    versions = [int(pod.metadata.resource_version) for pod in seen]
    assert versions == sorted(versions) and len(set(versions)) == len(versions)
    assert str(versions[-1]) == answer["resourceVersion"]
    # each round writes every pod once, in the list's order
    for r in range(rounds):
        chunk = seen[r * len(names):(r + 1) * len(names)]
        assert [pod.metadata.name for pod in chunk] == names
    # the objects themselves are unchanged but for their version
    assert seen[-1].metadata.uid == next(p.metadata.uid for p in listed.items
                                         if p.metadata.name == seen[-1].metadata.name)
    with pytest.raises(RuntimeError):
        sim.touch("v1", "NoSuchKind")


def test_expired_watch_raises_410_then_relist_and_watch_work(seeded):
    sim, api = seeded
    v1 = client.CoreV1Api(api)
    namespace = "team-2"
    stale = v1.list_namespaced_pod(namespace).metadata.resource_version

    sim.admin("expire-next-watch")
    with pytest.raises(ApiException) as expired:
        for _ in watch.Watch().stream(v1.list_namespaced_pod, namespace,
                                      resource_version=stale,
                                      timeout_seconds=WATCH_SERVER_TIMEOUT):
            pass
    assert expired.value.status == 410

    relisted = v1.list_namespaced_pod(namespace)
    assert len(relisted.items) == len([p for p in v1.list_pod_for_all_namespaces().items
                                       if p.metadata.namespace == namespace])
    name = "after-relist"
    watcher = WatchThread(v1.list_namespaced_pod, namespace,
                          resource_version=relisted.metadata.resource_version,
                          timeout_seconds=WATCH_SERVER_TIMEOUT,
                          stop_when=lambda event: event["object"].metadata.name == name)
    sim.wait_for_watches(1)
    sim.create(sample_pod(namespace, name, {"app": "relisted"}))

    kind, pod = watcher.next_event()
    watcher.join()
    assert (kind, pod.metadata.name) == ("ADDED", name)


def manifest_objects():
    """Every object of tests/data/manifests as the loader should see it."""
    objects = []
    for entry in sorted(os.listdir(MANIFESTS)):
        if not entry.endswith((".yaml", ".yml", ".json")):
            continue
        with open(os.path.join(MANIFESTS, entry), encoding="utf-8") as stream:
            for doc in yaml.safe_load_all(stream):
                if doc is None:
                    continue
                if doc["kind"].endswith("List"):
                    objects.extend(doc["items"])
                else:
                    objects.append(doc)
    return objects


def read_object(api, obj, plurals):
    """Reads @obj back through the typed API matching its kind; custom kinds by @plurals."""
    v1 = client.CoreV1Api(api)
    apps = client.AppsV1Api(api)
    name = obj["metadata"]["name"]
    namespace = obj["metadata"].get("namespace")
    readers = {
        "Namespace": lambda: v1.read_namespace(name),
        "Pod": lambda: v1.read_namespaced_pod(name, namespace),
        "Service": lambda: v1.read_namespaced_service(name, namespace),
        "ConfigMap": lambda: v1.read_namespaced_config_map(name, namespace),
        "Secret": lambda: v1.read_namespaced_secret(name, namespace),
        "Deployment": lambda: apps.read_namespaced_deployment(name, namespace),
        "CustomResourceDefinition":
            lambda: client.ApiextensionsV1Api(api).read_custom_resource_definition(name),
    }
    if obj["kind"] in readers:
        return api.sanitize_for_serialization(readers[obj["kind"]]())
    group, version = obj["apiVersion"].split("/")
    return client.CustomObjectsApi(api).get_namespaced_custom_object(
        group, version, namespace, plurals[obj["kind"]], name)


def test_manifest_objects_are_readable_through_the_client(manifests):
    _, api = manifests
    objects = manifest_objects()
    assert len(objects) == 14, "the sample set changed; update this test with it"
    plurals = {o["spec"]["names"]["kind"]: o["spec"]["names"]["plural"]
               for o in objects if o["kind"] == "CustomResourceDefinition"}

    for obj in objects:
        got = read_object(api, obj, plurals)
        what = f'{obj["kind"]} {obj["metadata"]["name"]}'
        assert got["metadata"]["name"] == obj["metadata"]["name"], what
        assert got["metadata"].get("namespace") == obj["metadata"].get("namespace"), what
        for field in ("labels", "annotations"):
            assert got["metadata"].get(field) == obj["metadata"].get(field), f"{what} {field}"
        for field in ("data", "binaryData"):
            for key, value in obj.get(field, {}).items():
                assert got[field][key] == value, f"{what} {field}.{key}"
        if obj["kind"] == "Service":
            assert got["spec"].get("type", "ClusterIP") == obj["spec"].get("type", "ClusterIP")
        if obj["kind"] in ("Mesh", "Deployment"):
            assert got["spec"]["replicas"] == obj["spec"]["replicas"], what


def test_manifest_odd_values_survive(manifests):
    _, api = manifests
    v1 = client.CoreV1Api(api)

    pod = v1.read_namespaced_pod("debug-shell", "shop")
    assert pod.metadata.annotations["example.com/note"] == \
        "says \"hi\" from C:\\tmp \u2014 \u00fcn\u00efc\u00f6d\u00e9"
    public = v1.read_namespaced_service("storefront-public", "shop")
    assert public.status.load_balancer.ingress[0].ip == "127.0.113.10"
    assert v1.read_namespaced_service("storefront-headless", "shop").spec.cluster_ip == "None"
    external = v1.read_namespaced_service("payments-db", "shop")
    assert external.spec.external_name == "payments.db.example.com"
    mesh = client.CustomObjectsApi(api).get_namespaced_custom_object(
        "demo.meshery.io", "v1alpha1", "shop", "meshes", "primary")
    assert mesh["spec"]["weight"] == 0.75 and mesh["spec"]["mtls"] is True


def test_typed_list_items_leave_out_kind_and_custom_resources_keep_it(manifests):
    sim, api = manifests
    v1 = client.CoreV1Api(api)

    # a real server's typed lists carry the kind once, on the list
    for path in ("/api/v1/pods", "/api/v1/namespaces/shop/services?limit=2",
                 "/apis/apps/v1/deployments"):
        status, body = sim.request("GET", path)
        assert status == 200 and body["items"], body
        assert body["kind"].endswith("List")
        for item in body["items"]:
            assert "kind" not in item and "apiVersion" not in item, (path, item)
            assert list(item)[0] == "metadata"
    # custom resources are unstructured: every item says what it is
    status, body = sim.request("GET", "/apis/demo.meshery.io/v1alpha1/meshes")
    assert status == 200 and body["kind"] == "MeshList"
    assert [(i["kind"], i["apiVersion"]) for i in body["items"]] == \
        [("Mesh", "demo.meshery.io/v1alpha1")]
    # watch events carry them, for the current state of a streaming list too
    for query in ("watch=1&timeoutSeconds=1",
                  "watch=1&timeoutSeconds=1&sendInitialEvents=true&allowWatchBookmarks=true"
                  "&resourceVersionMatch=NotOlderThan"):
        events = list(sim.watch(f"/api/v1/namespaces/shop/pods?{query}"))
        added = [e["object"] for e in events if e["type"] == "ADDED"]
        assert added and all((o["kind"], o["apiVersion"]) == ("Pod", "v1") for o in added)
    # and the typed client reads the list all the same
    pods = v1.list_namespaced_pod("shop").items
    assert {p.metadata.name for p in pods} >= {"debug-shell"}
    assert all(p.kind is None and p.spec.containers for p in pods)


def fields_of(obj, manager):
    entries = [e for e in obj.metadata.managed_fields if e.manager == manager]
    assert len(entries) == 1, [e.manager for e in obj.metadata.managed_fields]
    assert entries[0].operation == "Update" and entries[0].fields_type == "FieldsV1"
    assert entries[0].time.tzinfo is not None
    return entries[0].fields_v1


def test_writes_through_the_api_get_their_managers_fields(seeded):
    sim, api = seeded
    v1 = client.CoreV1Api(api)
    body = sample_pod("team-1", "recorded", {"app": "recorded"})
    body["spec"]["containers"][0]["env"] = [{"name": "MODE", "value": "test"}]
    body["spec"]["containers"][0]["ports"] = [{"containerPort": 8080, "protocol": "TCP"}]

    created = v1.create_namespaced_pod("team-1", body)

    # the manager is the product of the client's User-Agent (OpenAPI-Generator/x/python)
    fields = fields_of(created, "OpenAPI-Generator")
    assert fields["f:metadata"] == {"f:labels": {".": {}, "f:app": {}}}
    container = fields["f:spec"]["f:containers"]['k:{"name":"main"}']
    assert container["."] == {} and container["f:image"] == {}
    assert container["f:env"] == {".": {}, 'k:{"name":"MODE"}': {".": {}, "f:name": {},
                                                                 "f:value": {}}}
    assert 'k:{"containerPort":8080,"protocol":"TCP"}' in container["f:ports"]
    assert "." not in fields["f:spec"]["f:containers"], "containers is never absent from a Pod"

    # a later change by another manager moves the fields it set to it
    patched = v1.patch_namespaced_pod("recorded", "team-1",
                                      {"metadata": {"labels": {"app": "moved", "extra": "x"}}},
                                      field_manager="relabeller")
    assert fields_of(patched, "relabeller") == \
        {"f:metadata": {"f:labels": {"f:app": {}, "f:extra": {}}}}
    assert fields_of(patched, "OpenAPI-Generator")["f:metadata"] == {"f:labels": {}}
    assert [e.manager for e in patched.metadata.managed_fields] == \
        ["OpenAPI-Generator", "relabeller"]
    # a change that removes what a manager owned takes it from that manager
    patched = v1.patch_namespaced_pod("recorded", "team-1",
                                      {"metadata": {"labels": {"extra": None, "app": None}}},
                                      field_manager="relabeller")
    assert [e.manager for e in patched.metadata.managed_fields] == ["OpenAPI-Generator"]
    # [{}] strips them all, as the server documents
    patched = v1.patch_namespaced_pod("recorded", "team-1",
                                      {"metadata": {"managedFields": [{}]}})
    assert patched.metadata.managed_fields is None

    # manifests loaded at start read as kubectl wrote them
    with kubesim.Kubesim(data=MANIFESTS) as loaded, make_api_client(loaded) as api2:
        pod = client.CoreV1Api(api2).read_namespaced_pod("debug-shell", "shop")
        fields = fields_of(pod, "kubectl-create")
        assert fields["f:metadata"]["f:annotations"] == {".": {}, "f:example.com/note": {}}
        mesh = client.CustomObjectsApi(api2).get_namespaced_custom_object(
            "demo.meshery.io", "v1alpha1", "shop", "meshes", "primary")
        entry = mesh["metadata"]["managedFields"][0]
        # a custom resource's zero value has no spec: the spec itself is the manager's
        assert entry["apiVersion"] == "demo.meshery.io/v1alpha1"
        assert entry["fieldsV1"]["f:spec"]["."] == {}
