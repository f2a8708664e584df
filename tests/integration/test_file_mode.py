"""The meshsync daemon in file mode against meshsync-kubesim, after upstream's file-mode
integration cases: snapshot content, filters, -stopAfter, objects changed during the run,
dropped and expired watches, CustomResourceDefinitions added at run time, startup errors, and
runs killed and restarted on the same snapshot.

Progress is waited for on state: /metrics (meshsync_syncs_total, meshsync_relists_total,
meshsync_watch_restarts_total) and the files on disk; "nothing more to come" is an end marker
(a ConfigMap created last and waited for in the snapshot).
"""

import json
import os
import re
import signal
import stat
import subprocess

import pytest
from kubesim import Kubesim
from meshsync_run import (DAEMON, META_KEYS, TIMEOUT, TOP_KEYS, Meshsync, cluster_view,
                          daemon_env, env_allowing_warnings, extended_events, read_documents,
                          seconds, snapshot_uid_counts, uid_counts, uncompressed_kubeconfig)

# Small clusters keep the suite fast; three team namespaces besides the system ones.
SMALL = {"pods": 60, "namespaces": 3}


def configmap(name, namespace="team-1", value="1"):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace}, "data": {"value": value}}


def pod(name, namespace="team-1"):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}},
            "spec": {"containers": [{"name": "main", "image": "nginx:1.14.2"}]},
            "status": {"phase": "Pending"}}


def kube_system_uid(sim):
    status, body = sim.request("GET", "/api/v1/namespaces/kube-system")
    assert status == 200, body
    return body["metadata"]["uid"]


def test_snapshot_holds_every_object_once(tmp_path):
    with Kubesim(**SMALL) as sim:
        view = cluster_view(sim)
        cluster_id = kube_system_uid(sim)
        with Meshsync(str(tmp_path), sim.kubeconfig, "--stop-after-sync") as run:
            assert run.wait_exit() == 0, run.log()
            log = run.log()
        documents = read_documents(run.output_file)

    counts = uid_counts(documents)
    duplicates = {uid: n for uid, n in counts.items() if n > 1}
    assert not duplicates, f"written more than once: {duplicates}"
    assert set(counts) == set(view), (
        f"missing: {[view[u] for u in set(view) - set(counts)]}, "
        f"unexpected: {sorted(set(counts) - set(view))}")
    assert f"snapshot {run.output_file}: {len(documents)} documents written" in log

    for doc in documents:
        assert TOP_KEYS <= set(doc), f"{sorted(TOP_KEYS - set(doc))} missing: {doc}"
        assert META_KEYS <= set(doc["metadata"]), doc["metadata"]
        kind, namespace, name = view[doc["metadata"]["uid"]]
        assert doc["kind"] == kind
        assert doc["metadata"]["name"] == name
        assert doc["metadata"].get("namespace", "") == namespace
        assert doc["id"] == "" and doc["model"] == "" and doc["metadata"]["id"] == ""
        assert doc["cluster_id"] == cluster_id
        assert doc["metadata"]["cluster_id"] == ""
    # every kind kubesim generated made it, not just some
    assert {view[u][0] for u in view} == {doc["kind"] for doc in documents}
    assert {"Pod", "Deployment", "ReplicaSet", "Service", "ConfigMap", "Secret",
            "Namespace"} <= {doc["kind"] for doc in documents}


def test_one_processor_writes_the_snapshot_whole(tmp_path):
    """On one processor (taskset) the snapshot writer keeps its documents on the loop instead
    of handing them to its thread; the snapshot is the same."""
    out = tmp_path / "snapshot.yaml"
    with Kubesim(**SMALL) as sim:
        view = cluster_view(sim)
        run = subprocess.run(["taskset", "-c", "0", DAEMON, "-output", "file", "-outputFile",
                              str(out), "--kubeconfig", sim.kubeconfig, "--stop-after-sync",
                              "--health-port", "0", "--health-address", "127.0.0.1"],
                             capture_output=True, text=True, timeout=TIMEOUT,
                             env=daemon_env(), stdin=subprocess.DEVNULL, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    counts = uid_counts(read_documents(str(out)))
    assert set(counts) == set(view) and set(counts.values()) == {1}
    assert f"snapshot {out}: {len(view)} documents written" in run.stderr


def test_disable_compression_asks_for_plain_answers(tmp_path):
    """The cluster's disable-compression: no request asks for gzip (kubesim gzips whoever
    does, lists and streaming lists alike), and the snapshot is whole all the same."""
    request_log = tmp_path / "requests.jsonl"
    with Kubesim(extra=["--request-log", str(request_log)], **SMALL) as sim:
        view = cluster_view(sim)
        kubeconfig = uncompressed_kubeconfig(sim.kubeconfig, tmp_path / "kubeconfig")
        with Meshsync(str(tmp_path), kubeconfig, "--stop-after-sync") as run:
            assert run.wait_exit() == 0, run.log()
        documents = read_documents(run.output_file)

    encodings = []
    with open(request_log, encoding="utf-8") as f:
        for line in f:
            headers = {k.lower(): v for k, v in json.loads(line)["headers"]}
            encodings.append(headers.get("accept-encoding"))
    assert len(encodings) > 10
    assert not [e for e in encodings if e and "gzip" in e], encodings
    assert set(uid_counts(documents)) == set(view)


@pytest.mark.parametrize("setting", [None, "0"], ids=["default", "off"])
def test_read_ahead_sync_is_whole(tmp_path, setting):
    """By default the API server's TLS connections are read ahead (through GIO's proxy
    machinery); MESHSYNC_READ_AHEAD=0 leaves them plain. Either way the snapshot holds the
    cluster, object for object."""
    with Kubesim(**SMALL) as sim:
        view = cluster_view(sim)
        env = dict(os.environ)
        env.pop("MESHSYNC_READ_AHEAD", None)
        if setting is not None:
            env["MESHSYNC_READ_AHEAD"] = setting
        with Meshsync(str(tmp_path), sim.kubeconfig, "--stop-after-sync", "-v",
                      env=env) as run:
            assert run.wait_exit() == 0, run.log()
        documents = read_documents(run.output_file)
    assert ("read ahead under TLS" in run.log()) == (setting is None), run.log()[-3000:]
    assert set(uid_counts(documents)) == set(view)
    assert max(uid_counts(documents).values()) == 1


@pytest.mark.parametrize("flags, kinds, namespaces", [
    (["-outputNamespaces", "team-1"], None, {"team-1"}),
    (["-outputResources", "pod,deployment"], {"Pod", "Deployment"}, None),
    (["-outputResources", "pod,deployment", "-outputNamespaces", "team-1"],
     {"Pod", "Deployment"}, {"team-1"}),
], ids=["namespaces", "resources", "both"])
def test_filters(tmp_path, flags, kinds, namespaces):
    with Kubesim(**SMALL) as sim:
        view = cluster_view(sim)
        with Meshsync(str(tmp_path), sim.kubeconfig, "--stop-after-sync", *flags) as run:
            assert run.wait_exit() == 0, run.log()
        documents = read_documents(run.output_file)

    expected = {uid for uid, (kind, namespace, _) in view.items()
                if (kinds is None or kind in kinds)
                and (namespaces is None or namespace in namespaces)}
    assert expected, "the cluster has nothing the filters let through"
    for doc in documents:
        if namespaces is not None:
            assert doc["metadata"].get("namespace") in namespaces, doc["metadata"]
        if kinds is not None:
            assert doc["kind"] in kinds, doc["kind"]
    if namespaces is not None:
        assert not {"Namespace", "Node", "PersistentVolume"} & {d["kind"] for d in documents}
    assert sorted(uid_counts(documents).elements()) == sorted(expected)


def test_stop_after_exits_zero(tmp_path):
    with Kubesim(**SMALL) as sim:
        view = cluster_view(sim)
        # long enough for the small cluster's initial sync with the suite's other tests
        # beside it (2 s was not, three at a time), short enough to wait for
        with Meshsync(str(tmp_path), sim.kubeconfig, "-stopAfter", seconds(10)) as run:
            # nothing stops it but its own timer
            assert run.wait_exit() == 0, run.log()
            log = run.log()
        documents = read_documents(run.output_file)
    assert "initial sync complete" in log
    # the default: the stores hold the objects compressed
    assert "(store compression zstd)" in log
    assert set(uid_counts(documents)) == set(view)


def test_objects_created_during_the_run_are_appended(tmp_path):
    with Kubesim(**SMALL) as sim:
        with Meshsync(str(tmp_path), sim.kubeconfig, extended=True) as run:
            run.wait_synced()
            created_cm = sim.create(configmap("created-during-run"))
            created_pod = sim.create(pod("created-during-run"))
            # on disk while it runs: the informers have handed both over
            run.wait_in_extended("ADDED", created_cm["metadata"]["uid"])
            run.wait_in_extended("ADDED", created_pod["metadata"]["uid"])
            assert run.terminate() == 0, run.log()
            view = cluster_view(sim)
        documents = read_documents(run.output_file)
        events = extended_events(run.extended_file)

    counts = uid_counts(documents)
    assert set(counts) == set(view)
    assert max(counts.values()) == 1
    for obj in (created_cm, created_pod):
        uid = obj["metadata"]["uid"]
        assert counts[uid] == 1
        assert ("ADDED", obj["kind"], "team-1", "created-during-run", uid) in events
    # appended: after the initial state, not in the middle of it
    uids = [doc["metadata"]["uid"] for doc in documents]
    assert uids.index(created_cm["metadata"]["uid"]) >= len(documents) - 2
    assert uids.index(created_pod["metadata"]["uid"]) >= len(documents) - 2


def test_snapshot_on_disk_shows_objects_created_during_the_run(tmp_path):
    """While the daemon runs, what it received is in the files: upstream writes each record
    as it arrives, so a reader (or a crash) sees the snapshot up to the last event."""
    with Kubesim(**SMALL) as sim:
        with Meshsync(str(tmp_path), sim.kubeconfig, extended=True) as run:
            run.wait_synced()
            created = sim.create(configmap("visible-while-running"))
            uid = created["metadata"]["uid"]
            # both files show it while the daemon runs, without a stop or a signal
            run.wait_in_extended("ADDED", uid)
            run.wait_in_snapshot({uid})
            assert run.proc.poll() is None
            assert run.terminate() == 0


def _kill_during_initial_sync(tmp_path, sim, output_file, total, attempts=5):
    """Runs the daemon on @output_file and SIGKILLs it while its initial sync is half
    written: stopped (SIGSTOP) as soon as the snapshot holds some objects, then killed if
    it still lacks some, so "half written" is what the file shows, not a guess about time.
    A run that got everything out before it was stopped is tried again on a fresh file.
    Returns the uids on disk after the kill."""
    for _ in range(attempts):
        if os.path.exists(output_file):
            os.unlink(output_file)
        with Meshsync(str(tmp_path), sim.kubeconfig, output_file=output_file) as run:
            run.wait_until(lambda: len(run.snapshot_uids()) > 0, "the first objects on disk")
            run.proc.send_signal(signal.SIGSTOP)
            on_disk = run.snapshot_uids()
            run.kill()
        assert max(on_disk.values()) == 1
        if len(on_disk) < total:
            return on_disk
    raise AssertionError(f"{attempts} runs wrote all {total} objects before they were stopped")


def _cut_last_document(path):
    """Cuts the file in the middle of its last document, as a kill during that write would
    leave it; returns (the uid of that document, the whole documents kept)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    start = text.rfind("\n---\n", 0, len(text) - 4) + 5
    last = text[start:]
    uid = re.search(r"^  uid: (.*)$", last, re.M).group(1)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text[:start] + last[:len(last) // 2])
    return uid, text[:start].count("\n---\n") + text[:start].startswith("---\n")


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_restart_on_the_same_snapshot_writes_each_object_once(tmp_path):
    """A run killed (SIGKILL) during its initial sync, one killed after it and a last one
    stopped normally, all on the same -outputFile: every object is in the snapshot exactly
    once, a document the kill cut short is dropped and written again whole, the extended
    file gets every event of every run, and the files are 0600 (kept as they are once
    they exist)."""
    output_file = str(tmp_path / "snapshot.yaml")
    extended_file = str(tmp_path / "snapshot-extended.yaml")
    with Kubesim(pods=1200, namespaces=3) as sim:
        view = cluster_view(sim)
        old_mask = os.umask(0o022)
        try:
            on_disk = _kill_during_initial_sync(tmp_path, sim, output_file, len(view))
        finally:
            os.umask(old_mask)
        assert 0 < len(on_disk) < len(view)
        assert set(on_disk) <= set(view)
        assert _mode(output_file) == 0o600

        # the kill cut the last document short
        cut_uid, kept = _cut_last_document(output_file)
        assert snapshot_uid_counts(output_file)[cut_uid] == 0

        # a second run continues the file, with the extended file too; killed after sync
        os.chmod(output_file, 0o640)
        with Meshsync(str(tmp_path), sim.kubeconfig, output_file=output_file,
                      extended=True) as run:
            run.wait_synced()
            run.wait_in_snapshot(set(view))
            run.kill()
            log = run.log()
        assert "dropped a partial document" in log, log
        assert f"continuing after {kept} documents of an earlier run" in log, log
        assert _mode(output_file) == 0o640
        assert _mode(extended_file) == 0o600
        assert max(snapshot_uid_counts(output_file).values()) == 1
        with open(output_file, encoding="utf-8") as f:
            after_second = f.read()

        # while nothing runs, the cluster changes
        created = sim.create(configmap("created-while-down"))
        kind, namespace, name = next(v for v in view.values() if v[0] == "ConfigMap")
        status, current = sim.request("GET", f"/api/v1/namespaces/{namespace}/configmaps/{name}")
        assert status == 200, current
        current["data"] = {"changed": "while-down"}
        sim.replace(current)

        with Meshsync(str(tmp_path), sim.kubeconfig, output_file=output_file,
                      extended=True) as run:
            run.wait_synced()
            marker = run.mark(sim)
            assert run.terminate() == 0, run.log()
            log = run.log()
        final_view = cluster_view(sim)

    documents = read_documents(output_file)
    counts = uid_counts(documents)
    duplicates = {uid: n for uid, n in counts.items() if n > 1}
    assert not duplicates, f"written more than once: {duplicates}"
    assert set(counts) == set(final_view), (
        f"missing: {[final_view[u] for u in set(final_view) - set(counts)]}, "
        f"unexpected: {sorted(set(counts) - set(final_view))}")
    assert created["metadata"]["uid"] in counts and marker["metadata"]["uid"] in counts
    assert counts[cut_uid] == 1
    # the last run only appended what the file did not have: the new object and the two
    # end markers
    with open(output_file, encoding="utf-8") as f:
        final = f.read()
    assert final.startswith(after_second)
    assert f"snapshot {output_file}: 3 documents written" in log, log
    # the first state is kept: the change made while down is not in the snapshot
    assert '"changed":"while-down"' not in final
    # the extended file has the events of the second and the third run, the change included
    events = extended_events(extended_file)
    added = uid_counts([{"metadata": {"uid": uid}}
                        for event, _, _, _, uid in events if event == "ADDED"])
    assert all(added[uid] >= 2 for uid in view), "an object missing from a run's events"
    assert ("ADDED", "ConfigMap", "team-1", "created-while-down",
            created["metadata"]["uid"]) in events
    with open(extended_file, encoding="utf-8") as f:
        assert '"changed":"while-down"' in f.read()
    assert _mode(extended_file) == 0o600


def _changes_around_watch_loss(tmp_path, expire):
    """Creates, replaces and deletes ConfigMaps and Pods before, during and after a loss of
    every watch (with a 410 for the next watch when @expire); returns (events, log, view)."""
    resources = "configmap" if expire else "configmap,pod"
    with Kubesim(**SMALL) as sim:
        seeded = [name for _, _, name in
                  sorted(v for v in cluster_view(sim, {"configmaps"}).values()
                         if v[1] == "team-1")]
        assert len(seeded) >= 2, seeded
        with Meshsync(str(tmp_path), sim.kubeconfig, "-outputResources", resources,
                      extended=True) as run:
            run.wait_synced()
            restarts = run.metric("meshsync_watch_restarts_total")
            relists = run.metric("meshsync_relists_total")
            expected = []
            before = sim.create(configmap("before-loss"))
            expected.append(("ADDED", before))
            sim.delete("v1", "ConfigMap", seeded[0], "team-1")
            expected.append(("DELETED", seeded[0]))

            if expire:
                # the ConfigMaps' watch: the MeshSync resource's is reopened too
                sim.admin("expire-next-watch", resource="configmaps")
            sim.admin("close-watches")
            # made while the informers reconnect: they come back through the resumed watch
            # or, after the 410, through the relist
            during = sim.create(configmap("during-loss"))
            expected.append(("ADDED", during))
            modified = sim.replace(configmap("before-loss", value="2"))
            expected.append(("MODIFIED", modified))
            sim.delete("v1", "ConfigMap", seeded[1], "team-1")
            expected.append(("DELETED", seeded[1]))
            if not expire:
                during_pod = sim.create(pod("during-loss"))
                expected.append(("ADDED", during_pod))

            # the loss was seen: a relist after the 410, a resumed watch otherwise
            if expire:
                run.wait_metric("meshsync_relists_total", relists + 1)
            else:
                run.wait_metric("meshsync_watch_restarts_total", restarts + 1)
            after = sim.create(configmap("after-loss"))
            expected.append(("ADDED", after))
            run.wait_in_extended("ADDED", after["metadata"]["uid"])
            if not expire:
                run.wait_in_extended("ADDED", during_pod["metadata"]["uid"])
            # everything the ConfigMap informer got before the marker is written
            run.mark(sim, "team-1")
            if not expire:
                # a resumed watch: nothing was listed again
                assert run.metric("meshsync_relists_total") == relists, run.log()
            assert run.terminate() == 0, run.log()
            log = run.log()
            view = cluster_view(sim, {"configmaps", "pods"})
        events = extended_events(run.extended_file)
        documents = read_documents(run.output_file)
    return expected, events, documents, log, view


def _check_changes(expected, events, documents, view, kinds):
    seen = {(event_type, name) for event_type, _, _, name, _ in events}
    for event_type, obj in expected:
        name = obj if isinstance(obj, str) else obj["metadata"]["name"]
        assert (event_type, name) in seen, f"{event_type} {name} lost: {sorted(seen)}"
    # the end state: everything kubesim holds is in the snapshot exactly once, and the
    # deleted objects keep their first state there
    counts = uid_counts(documents)
    assert max(counts.values()) == 1
    live = {uid for uid, (kind, _, _) in view.items() if kind in kinds}
    assert live <= set(counts)
    # nothing reported DELETED that still exists, nothing live missing its ADDED
    deleted = {uid for event_type, _, _, _, uid in events if event_type == "DELETED"}
    assert not deleted & live
    added = {uid for event_type, _, _, _, uid in events if event_type == "ADDED"}
    assert live <= added


def test_expired_watch_loses_nothing(tmp_path):
    expected, events, documents, log, view = _changes_around_watch_loss(tmp_path, expire=True)
    assert "configmaps.v1.: watch expired" in log
    _check_changes(expected, events, documents, view, {"ConfigMap"})


def test_dropped_watch_loses_nothing(tmp_path):
    expected, events, documents, log, view = _changes_around_watch_loss(tmp_path, expire=False)
    assert "watch expired" not in log
    _check_changes(expected, events, documents, view, {"ConfigMap", "Pod"})


WIDGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"kind": "Widget", "listKind": "WidgetList", "plural": "widgets",
                       "singular": "widget"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "schema": {"openAPIV3Schema": {
                               "type": "object",
                               "x-kubernetes-preserve-unknown-fields": True}}}]},
}


def test_crd_added_at_run_time_is_watched_after_resync(tmp_path):
    with Kubesim(**SMALL) as sim:
        sim.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "meshery"}})
        sim.create({"apiVersion": "meshery.io/v1alpha1", "kind": "MeshSync",
                    "metadata": {"name": "meshery-meshsync", "namespace": "meshery"},
                    "spec": {"watch-list": {"data": {"blacklist": '["secrets.v1."]'}}}})
        with Meshsync(str(tmp_path), sim.kubeconfig) as run:
            log = run.wait_synced()
            assert "watch configuration from the MeshSync resource" in log
            assert "widgets" not in log
            sim.create(WIDGET_CRD)
            widget = sim.create({"apiVersion": "example.com/v1", "kind": "Widget",
                                 "metadata": {"name": "gear", "namespace": "team-1"},
                                 "spec": {"teeth": 12}})
            # the resync waits for 5 s without further CRD changes, then lists everything
            log = run.wait_synced(count=2)
            assert ("custom resource type widgets.v1.example.com added: resync scheduled"
                    in log), log
            assert "widgets.v1.example.com: synced, 1 objects" in log, log
            run.wait_in_snapshot({widget["metadata"]["uid"]})
            assert run.terminate() == 0, run.log()
        documents = read_documents(run.output_file)

    widgets = [doc for doc in documents if doc["kind"] == "Widget"]
    assert [w["metadata"]["uid"] for w in widgets] == [widget["metadata"]["uid"]], log
    assert widgets[0]["apiVersion"] == "example.com/v1"
    assert widgets[0]["metadata"]["namespace"] == "team-1"
    # the resync re-lists everything as ADDED; the snapshot still has each object once
    assert max(uid_counts(documents).values()) == 1
    # the blacklist held through the resync
    assert "Secret" not in {doc["kind"] for doc in documents}
    assert "Pod" in {doc["kind"] for doc in documents}


def test_objects_gone_while_the_run_was_torn_down_are_retracted(tmp_path):
    """A real server closes a CRD's watches when the CRD is deleted, before the DELETED
    events of its objects reach them; and an object can go while a resync has no watch open.
    Both are written here as silent deletes (no watch event): the run that follows the resync
    lists neither, and meshsync must retract what the torn-down run had published (the
    snapshot keeps every object's first state, as upstream's does; the extended file has
    every event)."""
    with Kubesim(**SMALL) as sim:
        sim.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "meshery"}})
        sim.create({"apiVersion": "meshery.io/v1alpha1", "kind": "MeshSync",
                    "metadata": {"name": "meshery-meshsync", "namespace": "meshery"},
                    "spec": {"watch-list": {"data": {"blacklist": '["secrets.v1."]'}}}})
        sim.create(WIDGET_CRD)
        widget = sim.create({"apiVersion": "example.com/v1", "kind": "Widget",
                             "metadata": {"name": "gear", "namespace": "team-1"},
                             "spec": {"teeth": 12}})
        config = sim.create({"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": "short-lived", "namespace": "team-1"},
                             "data": {"a": "1"}})
        gone = [widget["metadata"]["uid"], config["metadata"]["uid"]]
        with Meshsync(str(tmp_path), sim.kubeconfig, extended=True) as run:
            run.wait_synced()
            run.wait_in_snapshot(gone)
            sim.delete("example.com/v1", "Widget", "gear", namespace="team-1", silent=True)
            sim.delete("v1", "ConfigMap", "short-lived", namespace="team-1", silent=True)
            sim.delete("apiextensions.k8s.io/v1", "CustomResourceDefinition",
                       "widgets.example.com")
            for uid in gone:
                run.wait_in_extended("DELETED", uid)
            log = run.log()
            assert ("custom resource type widgets.v1.example.com removed: resync scheduled"
                    in log), log[-3000:]
            # those two and nothing else: what the new run lists is not retracted
            assert "2 objects published by a torn-down run are gone" in log, log[-3000:]
            assert run.terminate() == 0, run.log()[-3000:]


def _run(args, timeout=TIMEOUT, env=None):
    health = ["--health-port", "0", "--health-address", "127.0.0.1"]
    return subprocess.run([DAEMON] + args + health, capture_output=True, text=True,
                          timeout=timeout, env=daemon_env(env),
                          stdin=subprocess.DEVNULL, check=False)


def test_missing_kubeconfig_fails(tmp_path):
    missing = str(tmp_path / "no-such-kubeconfig")
    run = _run(["-output", "file", "-outputFile", str(tmp_path / "out.yaml"),
                "--kubeconfig", missing])
    assert run.returncode == 1, run.stderr
    assert missing in run.stderr


def test_malformed_kubeconfig_fails(tmp_path):
    bad = tmp_path / "kubeconfig"
    bad.write_text("just a string\n", encoding="utf-8")
    run = _run(["-output", "file", "-outputFile", str(tmp_path / "out.yaml"),
                "--kubeconfig", str(bad)])
    assert run.returncode == 1, run.stderr
    assert str(bad) in run.stderr


def test_unsupported_output_mode_fails(tmp_path):
    run = _run(["-output", "bogus", "--kubeconfig", str(tmp_path / "unused")])
    assert run.returncode == 2, run.stderr
    assert 'unsupported output mode "bogus", supported list is [broker, file]' in run.stderr


def test_unwritable_output_file_fails(tmp_path):
    target = str(tmp_path / "missing-directory" / "out.yaml")
    with Kubesim(pods=5, namespaces=1) as sim:
        run = _run(["-output", "file", "-outputFile", target, "--kubeconfig", sim.kubeconfig])
    assert run.returncode == 1, run.stderr
    assert target in run.stderr
    assert not os.path.exists(target)


def test_full_disk_fails(tmp_path):
    with Kubesim(**SMALL) as sim:
        run = _run(["-output", "file", "-outputFile", "/dev/full", "--stop-after-sync",
                    "--kubeconfig", sim.kubeconfig])
    assert run.returncode == 1, run.stderr
    assert "No space left on device" in run.stderr
    assert "/dev/full" in run.stderr


@pytest.mark.parametrize("value", ["8x", "abc", "1.5.3s", ""])
def test_bad_stop_after_is_a_usage_error(tmp_path, value):
    run = _run(["-output", "file", "-outputFile", str(tmp_path / "out.yaml"),
                "-stopAfter", value, "--kubeconfig", str(tmp_path / "unused")])
    assert run.returncode == 2, run.stderr
    assert re.search(r"stopAfter", run.stderr), run.stderr
    assert not os.path.exists(tmp_path / "out.yaml")


# One-shot runs (--stop-after-sync, -stopAfter) against a server they can never sync with: the
# reason on stderr, exit 1, and no empty snapshot left behind to be taken for an empty cluster.

def _kubeconfig_variant(sim, tmp_path, name, edit):
    path = tmp_path / name
    with open(sim.kubeconfig, encoding="utf-8") as f:
        path.write_text(edit(f.read()), encoding="utf-8")
    return str(path)


def _wrong_token(sim, tmp_path):
    return _kubeconfig_variant(sim, tmp_path, "wrong-token",
                               lambda text: text.replace(f'"{sim.token}"', '"wrong"'))


def _untrusted(sim, tmp_path):
    # no certificate-authority-data: the server's self-signed CA is not in the system store
    return _kubeconfig_variant(
        sim, tmp_path, "untrusted",
        lambda text: re.sub(r"^\s*certificate-authority-data:.*\n", "", text, flags=re.M))


def _refused(sim, tmp_path):
    from meshsync_run import free_port
    return _kubeconfig_variant(
        sim, tmp_path, "refused",
        lambda text: re.sub(r'server: "[^"]*"', f'server: "https://127.0.0.1:{free_port()}"',
                            text))


@pytest.mark.parametrize("one_shot", [["--stop-after-sync"], ["-stopAfter", "10m"]],
                         ids=["stop-after-sync", "stopAfter"])
@pytest.mark.parametrize("variant,reason", [
    (_wrong_token, r"401 Unauthorized"),
    (_untrusted, r"TLS certificate of 127\.0\.0\.1:\d+ .*not trusted|TLS"),
    (_refused, r"connection refused"),
], ids=["401", "untrusted-ca", "refused"])
def test_one_shot_fails_fast_on_lasting_errors(tmp_path, one_shot, variant, reason):
    out = tmp_path / "out.yaml"
    with Kubesim(pods=5, namespaces=1) as sim:
        kubeconfig = variant(sim, tmp_path)
        run = _run(["-output", "file", "-outputFile", str(out), "--kubeconfig", kubeconfig]
                   + one_shot)
    assert run.returncode == 1, run.stderr
    last = [line for line in run.stderr.splitlines() if line.startswith("meshsync: ")]
    assert last and re.search(reason, last[-1]), run.stderr
    assert not out.exists(), "the empty snapshot was left behind"


def test_one_shot_keeps_an_existing_snapshot(tmp_path):
    out = tmp_path / "out.yaml"
    out.write_text("", encoding="utf-8")
    with Kubesim(pods=5, namespaces=1) as sim:
        run = _run(["-output", "file", "-outputFile", str(out), "--stop-after-sync",
                    "--kubeconfig", _wrong_token(sim, tmp_path)])
    assert run.returncode == 1, run.stderr
    assert out.exists(), "a file the run did not create was removed"


def test_long_running_daemon_keeps_retrying(tmp_path):
    with Kubesim(pods=5, namespaces=1) as sim:
        with Meshsync(str(tmp_path), _wrong_token(sim, tmp_path)) as run:
            # each failed attempt is counted, and the daemon is still there after several
            run.wait_metric("meshsync_run_failures_total", 3)
            assert run.proc.poll() is None
            assert run.http("/healthz") == (200, "ok")
            assert run.terminate() == 0


@pytest.mark.parametrize("flags", [["-outputResources", "nosuchthing"],
                                   ["--watch-config", "WATCH"]],
                         ids=["output-resources", "watch-config"])
def test_watching_nothing_fails(tmp_path, flags):
    watch = tmp_path / "watch.yaml"
    watch.write_text("whitelist:\n- Resource: grafanas.v1beta1.grafana.integreatly.org\n"
                     "  Events: [ADDED]\n", encoding="utf-8")
    flags = [str(watch) if f == "WATCH" else f for f in flags]
    out = tmp_path / "out.yaml"
    with Kubesim(pods=5, namespaces=1) as sim:
        # the watch configuration's unknown type is the user's to fix: a warning
        run = _run(["-output", "file", "-outputFile", str(out), "--kubeconfig",
                    sim.kubeconfig] + flags, env=env_allowing_warnings())
    assert run.returncode == 1, run.stderr
    assert "nothing to watch" in run.stderr
    assert not out.exists()


@pytest.mark.parametrize("args,needle", [
    (["stray"], 'unexpected argument "stray"'),
    (["-output", "files"], 'unsupported output mode "files"'),
    (["--output=broker,filez"], 'unsupported output mode "filez"'),
    (["--readiness", "sometimes"], "--readiness must be latch or strict"),
    (["--store-compression", "lz4"], '--store-compression must be zstd or none, not "lz4"'),
])
def test_usage_errors_exit_2(tmp_path, args, needle):
    run = _run(args + ["--kubeconfig", str(tmp_path / "unused")])
    assert run.returncode == 2, run.stderr
    assert needle in run.stderr


def test_namespace_scope_reads_only_the_scoped_namespaces(tmp_path):
    """--namespaces lists and watches each namespaced type in each scoped namespace: never
    cluster-wide (a request there would be refused here, as RBAC with only a Role refuses
    it), and a cluster-scoped type the server refuses is skipped, the run going on."""
    from meshsync_run import WATCHED
    scope = ["team-1", "team-3"]
    with Kubesim(pods=40, namespaces=4) as sim:
        view = cluster_view(sim)
        wide = {}
        for plural, path, _, namespaced in WATCHED:
            if namespaced:
                wide[plural] = sim.arm_fault("both", code=403, count=1000000, path=path)
        sim.arm_fault("both", code=403, count=1000000, path="/api/v1/nodes")
        with Meshsync(str(tmp_path), sim.kubeconfig, "--stop-after-sync",
                      "--namespaces", ",".join(scope)) as run:
            assert run.wait_exit() == 0, run.log()
            log = run.log()
        documents = read_documents(run.output_file)
        untouched = {plural: sim.fault(f)["consumed"] for plural, f in wide.items()}

    assert all(n == 0 for n in untouched.values()), f"listed cluster-wide: {untouched}"
    expected = {uid for uid, (kind, ns, _) in view.items()
                if ns in scope or (ns == "" and kind != "Node")}
    assert set(uid_counts(documents)) == expected
    assert "Pod" in {doc["kind"] for doc in documents}
    assert "pods.v1. in team-3: synced" in log
    assert re.search(r"nodes\.v1\.: .*403", log), log
