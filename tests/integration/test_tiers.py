"""Depth per type (doc/tiers.md) against meshsync-kubesim, which answers metadata-only reads as
the API server does: with a tier-config that leaves Deployments and Services full, the shallow
types are listed and watched with the PartialObjectMetadata Accept forms (kubesim's request
log shows them), their objects reach the snapshot and the extended file as metadata with an
empty spec and status under their own kind, watch events (ADDED, MODIFIED, DELETED) and a
relist after an expired watch work for them, and the full types are unchanged; in broker mode
the informer-store reply holds the same shapes, before and after a resync. A tier-config that
cannot be read gives one warning and every type in full.

Progress is waited for on state: /metrics and the files on disk.
"""

import json

from kubesim import Kubesim
from meshsync_run import (Meshsync, cluster_view, env_allowing_warnings, extended_events,
                          read_documents, uid_counts)
from nats_server import NatsServer
from test_broker_mode import TIMEOUT, Daemon, envelope, request, wait_for_listener

SMALL = {"pods": 60, "namespaces": 3}
ACCEPT_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
ACCEPT_ONE = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
EMPTY = {"id": "", "attribute": "{}"}
WHITELIST = ["namespaces.v1.", "configmaps.v1.", "pods.v1.", "services.v1.",
             "deployments.v1.apps", "replicasets.v1.apps"]


def watch_config(path, tiers):
    """A watch configuration file: the whitelist above and @tiers as its tier-config."""
    lines = ["whitelist:"]
    for name in WHITELIST:
        lines += [f"  - resource: {name}", "    events: [ADDED, MODIFIED, DELETED]"]
    if tiers is not None:
        lines.append("tier-config: " + json.dumps(tiers))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def configmap(name, value="1", labels=None):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "team-1", "labels": labels or {}},
            "data": {"value": value}}


def accepts(log_path, plural):
    """{(list or watch, Accept)} of meshsync's requests for @plural that kubesim logged."""
    seen = set()
    with open(log_path, encoding="utf-8") as f:
        for line in f:
            request = json.loads(line)
            if not request["path"].endswith("/" + plural) or "/namespaces/" in request["path"]:
                continue
            headers = {k.lower(): v for k, v in request["headers"]}
            if not headers.get("user-agent", "").startswith("meshsync/"):
                continue  # the test's own reads
            watch = "watch=" in request["query"]
            seen.add(("watch" if watch else "list", headers.get("accept")))
    return seen


def test_shallow_types_read_and_published_as_metadata(tmp_path):
    request_log = str(tmp_path / "requests.jsonl")
    config = watch_config(tmp_path / "watch.yaml",
                          {"Depth": "shallow", "Full": ["deployments.v1.apps", "services.v1."]})
    with Kubesim(extra=["--request-log", request_log], **SMALL) as sim:
        with Meshsync(str(tmp_path), sim.kubeconfig, "--watch-config", config,
                      extended=True) as run:
            run.wait_synced()
            made = sim.create(configmap("shallow-one", labels={"step": "one"}))
            uid = made["metadata"]["uid"]
            run.wait_in_extended("ADDED", uid)
            changed = sim.replace(configmap("shallow-one", value="2", labels={"step": "two"}))
            run.wait_in_extended("MODIFIED", uid)
            sim.delete("v1", "ConfigMap", "shallow-one", "team-1")
            run.wait_in_extended("DELETED", uid)

            # an expired watch: the relist reconciles the shallow store
            relists = run.metric("meshsync_relists_total")
            sim.admin("expire-next-watch")
            sim.admin("close-watches")
            during = sim.create(configmap("during-expiry"))
            run.wait_metric("meshsync_relists_total", relists + 1)
            run.wait_in_extended("ADDED", during["metadata"]["uid"])
            run.mark(sim, "team-1")
            assert run.terminate() == 0, run.log()
            view = cluster_view(sim, {"configmaps", "pods", "services", "deployments",
                                      "replicasets", "namespaces"})
            deployment = sim.request("GET", "/apis/apps/v1/deployments")[1]["items"][0]
        documents = read_documents(run.output_file)
        events = extended_events(run.extended_file)
        extended = read_documents(run.extended_file)

    # what was asked for: metadata for the shallow types, whole objects for the full ones
    assert accepts(request_log, "pods") <= {("list", ACCEPT_LIST), ("watch", ACCEPT_ONE)}
    assert ("watch", ACCEPT_ONE) in accepts(request_log, "configmaps")
    assert accepts(request_log, "deployments") <= {("list", "application/json"),
                                                   ("watch", "application/json")}

    # the snapshot: every object once, shallow ones empty, full ones whole
    counts = uid_counts(documents)
    assert set(view) <= set(counts) and max(counts.values()) == 1
    by_kind = {}
    for doc in documents:
        by_kind.setdefault(doc["kind"], []).append(doc)
    for kind in ("Pod", "ConfigMap", "ReplicaSet", "Namespace"):
        assert by_kind[kind], kind
        for doc in by_kind[kind]:
            assert doc["spec"] == EMPTY and doc["status"] == EMPTY, doc
            assert "data" not in doc, doc
    assert all(d["apiVersion"] == "v1" for d in by_kind["Pod"])
    assert all(d["apiVersion"] == "apps/v1" for d in by_kind["ReplicaSet"])
    pod = by_kind["Pod"][0]
    assert "images" not in pod["component_metadata"]["builderSignals"], pod
    full = next(d for d in by_kind["Deployment"]
                if d["metadata"]["uid"] == deployment["metadata"]["uid"])
    assert json.loads(full["spec"]["attribute"]) == deployment["spec"]
    assert full["component_metadata"]["builderSignals"]["images"], full
    for doc in by_kind["Service"]:
        assert json.loads(doc["spec"]["attribute"]), doc

    # the relist found every other shallow object at its resourceVersion: nothing re-sent
    touched = {uid, during["metadata"]["uid"]}
    others = [e for e in events if e[4] not in touched and e[1] in ("Pod", "ConfigMap")
              and not e[3].startswith("end-marker-")]
    assert len(others) > SMALL["pods"], len(others)
    assert all(e[0] == "ADDED" for e in others), [e for e in others if e[0] != "ADDED"][:5]
    assert len(others) == len({e[4] for e in others}), "an object ADDED twice"

    # the watch events of a shallow type, in that shape
    mine = [(e, d["Object"]) for e, d in zip(events, extended) if e[4] == uid]
    assert [e[0] for e, _ in mine] == ["ADDED", "MODIFIED", "DELETED"], mine
    for _, obj in mine:
        assert obj["kind"] == "ConfigMap" and obj["spec"] == EMPTY, obj
    modified = mine[1][1]
    assert modified["metadata"]["resourceVersion"] == changed["metadata"]["resourceVersion"]
    assert [(kv["key"], kv["value"]) for kv in modified["metadata"]["labels"]] == \
        [("step", "two")]


def test_malformed_tier_config_warns_once_and_reads_in_full(tmp_path):
    config = watch_config(tmp_path / "watch.yaml", {"Depth": "deep"})
    with Kubesim(**SMALL) as sim:
        with Meshsync(str(tmp_path), sim.kubeconfig, "--watch-config", config,
                      "--stop-after-sync", env=env_allowing_warnings()) as run:
            assert run.wait_exit() == 0, run.log()
            log = run.log()
        documents = read_documents(run.output_file)
    assert log.count("tier-config") == 1, log
    assert 'tier-config ignored, every type is watched in full: Depth "deep" is neither ' \
        "shallow nor full" in log, log
    pods = [d for d in documents if d["kind"] == "Pod"]
    assert pods and all(json.loads(p["spec"]["attribute"])["containers"] for p in pods)


def store_reply(nc, subject):
    """Every object of one informer-store reply, in whatever chunks it came."""
    request(nc, "informer-store", {"Reply": subject})
    # meshsync-meta answered means the store request before it was handled
    request(nc, "meshsync-meta")
    objects = []
    while True:
        msg = nc.next_msg(TIMEOUT)
        if msg.subject == "meshsync-meta":
            break
        objects += envelope(msg)["Object"]
    for msg in nc.messages(timeout=1.0):
        objects += envelope(msg)["Object"]
    return objects


def check_store(objects, view):
    assert {o["metadata"]["uid"] for o in objects} == set(view)
    for obj in objects:
        if obj["kind"] in ("Deployment", "Service"):
            assert json.loads(obj["spec"]["attribute"]), obj
        else:
            assert obj["spec"] == EMPTY and obj["status"] == EMPTY, obj


def test_broker_store_reply_and_resync(tmp_path):
    config = watch_config(tmp_path / "watch.yaml",
                          {"Depth": "shallow", "Full": ["deployments.v1.apps", "services.v1."]})
    plurals = {"configmaps", "pods", "services", "deployments", "replicasets", "namespaces"}
    with Kubesim(**SMALL) as sim, NatsServer() as nats, nats.client() as nc:
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url, "--watch-config", config) as run:
            run.wait_synced()
            wait_for_listener(nats)
            nc.subscribe("store.reply")
            nc.subscribe("meshsync-meta")
            view = cluster_view(sim, plurals)
            check_store(store_reply(nc, "store.reply"), view)
            # a resync builds the run again: the depths hold in the new informers
            request(nc, "resync-discovery")
            run.wait_synced(2)
            check_store(store_reply(nc, "store.reply"), view)


def meshsync_resource(names, tiers=None):
    whitelist = [{"Resource": name, "Events": ["ADDED", "MODIFIED", "DELETED"]}
                 for name in names]
    data = {"whitelist": json.dumps(whitelist)}
    if tiers is not None:
        data["tier-config"] = json.dumps(tiers)
    return {"apiVersion": "meshery.io/v1alpha1", "kind": "MeshSync",
            "metadata": {"name": "meshery-meshsync", "namespace": "meshery"},
            "spec": {"watch-list": {"data": data}}}


def test_live_depth_change_replaces_that_informer_only(tmp_path):
    """The MeshSync resource is followed (doc/architecture.md, a live watch list): a
    tier-config that makes ConfigMaps shallow replaces their informer alone, which lists
    them again as metadata; Pods are not listed again."""
    with Kubesim(**SMALL) as sim:
        sim.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "meshery"}})
        sim.create(meshsync_resource(["pods.v1.", "configmaps.v1."]))
        with Meshsync(str(tmp_path), sim.kubeconfig, extended=True) as run:
            run.wait_synced()
            before = sim.create(configmap("before-change"))
            run.wait_in_extended("ADDED", before["metadata"]["uid"])
            sim.admin("requests", method="DELETE")

            sim.replace(meshsync_resource(["pods.v1.", "configmaps.v1."],
                                          {"Shallow": ["configmaps.v1."]}))
            run.wait_metric("meshsync_watch_list_changes_total", 1)
            after = sim.create(configmap("after-change"))
            run.wait_in_extended("ADDED", after["metadata"]["uid"])
            requests = sim.admin("requests", method="GET")
            lists = {key.split(" ", 1)[1] for key in requests["resources"]
                     if key.startswith(("list ", "watch "))}
            assert lists == {"/configmaps"}, lists
            assert "informer replaced [configmaps.v1.]" in run.log(), run.log()[-3000:]
            assert run.metric("meshsync_syncs_total") == 1
            assert run.terminate() == 0, run.log()[-3000:]
        extended = read_documents(run.extended_file)

    shapes = {}
    for doc in extended:
        obj = doc["Object"]
        shapes.setdefault(obj["metadata"]["uid"], []).append((doc["EventType"], obj["spec"]
                                                              if "spec" in obj else None))
    # before: whole (a ConfigMap has no spec: none on the wire); after: metadata, spec empty
    assert shapes[before["metadata"]["uid"]][0] == ("ADDED", None)
    assert ("ADDED", EMPTY) in shapes[before["metadata"]["uid"]][1:], \
        shapes[before["metadata"]["uid"]]
    assert shapes[after["metadata"]["uid"]] == [("ADDED", EMPTY)]


def test_disabled_infra_from_the_tier_config(tmp_path):
    """The tier-config's DisabledInfra reaches the infrastructure detection
    (doc/infrastructure.md): with istio and linkerd installed and linkerd disabled, istio is
    detected and linkerd never is."""
    config = watch_config(tmp_path / "watch.yaml", {"DisabledInfra": ["linkerd"]})
    with Kubesim(pods=2, namespaces=1, extra=["--install", "istio,linkerd"]) as sim:
        with Meshsync(str(tmp_path), sim.kubeconfig, "--watch-config", config) as run:
            run.wait_synced()
            # both are evaluated in the same pass: once istio is, linkerd was
            log = run.wait_for_line("infrastructure istio detected")
            assert "infrastructure linkerd" not in log, log[-3000:]
            assert run.terminate() == 0, run.log()[-3000:]
        assert "infrastructure linkerd" not in run.log()
