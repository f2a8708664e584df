# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""Periodic reconciliation (upstream's design fd5) against kubesim: changes made behind the
daemon's back (kubesim's silent writes: no watch event, only a list shows them) come out as
exactly one ADDED, MODIFIED or DELETED each after a tick, a quiet cluster gets nothing, and
a list that fails deletes nothing. The daemon runs in file mode with the extended file, which
holds every event it passed on, in order. Waits are for metrics (ticks completed), never for
time; the test knob --reconcile-floor lets the interval go below five minutes."""

import collections
import json
import subprocess

from kubesim import Kubesim
from meshsync_run import DAEMON, Meshsync, daemon_env, extended_events, read_documents

FLAGS = ["--reconcile-floor", "100ms", "-reconcileInterval", "500ms"]


def configmap(name, value):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "team-1"}, "data": {"value": value}}


def wait_ticks(run, more):
    """Waits for @more ticks to complete after now; the first of them may have begun before
    now, so a change made now is seen by the last one at the latest when @more >= 2."""
    now = run.metric("meshsync_reconcile_ticks_total")
    return run.wait_metric("meshsync_reconcile_ticks_total", now + more)


def drift(run):
    return {t: run.metric("meshsync_reconcile_drift_total", type=t)
            for t in ("ADDED", "MODIFIED", "DELETED")}


def test_drift_behind_the_watch_appears_once_after_a_tick(tmp_path):
    with Kubesim(pods=10, namespaces=1) as sim:
        sim.create(configmap("will-change", "1"))
        doomed = sim.create(configmap("will-go", "1"))
        with Meshsync(str(tmp_path), sim.kubeconfig, *FLAGS, extended=True) as run:
            run.wait_synced()
            wait_ticks(run, 1)
            before = len(extended_events(run.extended_file))

            created = sim.create(configmap("made-behind", "1"), silent=True)
            changed = sim.replace(configmap("will-change", "2"), silent=True)
            sim.delete("v1", "ConfigMap", "will-go", namespace="team-1", silent=True)
            wait_ticks(run, 2)
            wait_ticks(run, 1)  # and a quiet one after it

            after = extended_events(run.extended_file)[before:]
            documents = read_documents(run.extended_file)[before:]
            counted = drift(run)
            assert run.terminate() == 0
    by_uid = collections.Counter((e[0], e[4]) for e in after)
    assert by_uid == {("ADDED", created["metadata"]["uid"]): 1,
                      ("MODIFIED", changed["metadata"]["uid"]): 1,
                      ("DELETED", doomed["metadata"]["uid"]): 1}, after
    assert counted == {"ADDED": 1, "MODIFIED": 1, "DELETED": 1}
    # the missed delete goes out with the last state the store had
    gone = [d["Object"] for d in documents if d["EventType"] == "DELETED"][0]
    assert gone["metadata"]["resourceVersion"] == doomed["metadata"]["resourceVersion"]
    assert json.loads(gone["data"]) == {"value": "1"}  # the model keeps data as JSON text


def test_interval_rules(tmp_path):
    def run(*flags, env=None):
        return subprocess.run([DAEMON, "-output", "file", "--kubeconfig",
                               str(tmp_path / "missing")] + list(flags),
                              capture_output=True, text=True, check=False,
                              env=daemon_env(env), stdin=subprocess.DEVNULL)

    bad = run("-reconcileInterval", "often")
    assert bad.returncode == 2 and "-reconcileInterval" in bad.stderr, bad.stderr
    # under the five-minute floor: said, and reconciliation stays off (the run goes on to
    # fail on the missing kubeconfig, as it would without the flag)
    low = run("-reconcileInterval", "1m")
    assert "below the 5m minimum" in low.stderr and low.returncode == 1, low.stderr
    env = {"PATH": "/usr/bin:/bin", "RECONCILE_INTERVAL": "30s"}
    assert "RECONCILE_INTERVAL 30s is below" in run(env=env).stderr


def test_quiet_cluster_publishes_nothing_per_tick(tmp_path):
    with Kubesim(pods=30, namespaces=2) as sim:
        with Meshsync(str(tmp_path), sim.kubeconfig, *FLAGS, extended=True) as run:
            run.wait_synced()
            before = len(extended_events(run.extended_file))
            wait_ticks(run, 3)
            assert len(extended_events(run.extended_file)) == before
            assert drift(run) == {"ADDED": 0, "MODIFIED": 0, "DELETED": 0}
            assert "reconcile tick: 0 drifted" in run.log()
            assert run.terminate() == 0


def test_failed_list_deletes_nothing(tmp_path):
    with Kubesim(pods=10, namespaces=1) as sim:
        with Meshsync(str(tmp_path), sim.kubeconfig, "-outputResources", "pod", *FLAGS,
                      extended=True) as run:
            run.wait_synced()
            before = len(extended_events(run.extended_file))
            # every list of pods fails for a while: the ticks give the type up, the watch
            # goes on, nothing is taken for deleted
            fault = sim.arm_fault("both", code=500, count=100000, path="/api/v1/pods")
            run.wait_metric("meshsync_reconcile_list_failures_total", 2)
            assert sim.fault(fault)["consumed"] >= 2
            sim.clear_faults()
            # the watch still works after the failed ticks
            made = sim.create({"apiVersion": "v1", "kind": "Pod",
                               "metadata": {"name": "after", "namespace": "team-1"},
                               "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
            run.wait_in_extended("ADDED", made["metadata"]["uid"])
            events = extended_events(run.extended_file)[before:]
            assert not [e for e in events if e[0] == "DELETED"], events
            assert run.terminate() == 0
