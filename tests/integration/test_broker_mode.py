# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""The meshsync daemon in broker mode against kubesim and a real nats-server.

A subscriber on the stdlib NATS client checks what arrives on the wire: resource events, the
replies to every request entity, and what is delivered after the broker was away. Every wait
is for a message, a log line or a process exit, with a deadline that fails the test.
"""

import collections
import json
import os
import re
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from broker_faults import GatedProxy
from kubesim import Kubesim
from meshsync_run import (DAEMON, HEALTH_FLAGS, META_KEYS, TOP_KEYS, DaemonProcess,
                          cluster_view, list_objects)
from nats_server import NatsServer, free_port, wait_until

TIMEOUT = 90.0
ENVELOPE_KEYS = ["ObjectType", "EventType", "Request", "Object"]
CORE = "meshery.meshsync.core"
REQUEST = "meshery.meshsync.request"
QUEUE = "meshsync-request-stream"
SMALL = {"pods": 20, "namespaces": 2}


class Daemon(DaemonProcess):
    """meshsync in broker mode (or another output given by @output), with BROKER_URL."""

    def __init__(self, tmpdir, kubeconfig, broker_url, *flags, env=None, debug=False,
                 output="broker"):
        argv = [DAEMON, "-output", output] + HEALTH_FLAGS
        if debug:
            argv.append("-v")
        if kubeconfig is not None:
            argv += ["--kubeconfig", kubeconfig]
        argv += list(flags)
        full_env = dict(os.environ)
        for name in ("BROKER_URL", "NATS_TOKEN", "NATS_CREDS", "MESHSYNC_BROKER_CONTENT_DEDUP"):
            full_env.pop(name, None)
        if broker_url is not None:
            full_env["BROKER_URL"] = broker_url
        full_env.update(env or {})
        super().__init__(tmpdir, argv, full_env)


def envelope(msg):
    """The decoded envelope, after checking its keys and their order."""
    pairs = json.loads(msg.data, object_pairs_hook=lambda p: p)
    assert [k for k, _ in pairs] == ENVELOPE_KEYS, msg.data[:300]
    return json.loads(msg.data)


def request(nc, entity, payload=None):
    body = {"ObjectType": "request-payload", "EventType": "ADDED",
            "Request": {"Entity": entity, "Payload": payload}, "Object": None}
    nc.publish(REQUEST, json.dumps(body))
    nc.flush()


def wait_for_listener(nats, timeout=TIMEOUT):
    """Waits until the server has the daemon's request subscription (queue group
    meshsync-request-stream), read from its monitoring endpoint: a request sent before that
    would reach nobody."""
    def subscribed():
        with urllib.request.urlopen(nats.monitor + "/connz?subs=detail", timeout=10) as resp:
            connz = json.load(resp)
        return any(sub.get("subject") == REQUEST and sub.get("qgroup") == QUEUE
                   for conn in connz.get("connections", [])
                   for sub in conn.get("subscriptions_list_detail", []))

    wait_until(subscribed, "the request subscription on the server", timeout)


def kube_system_uid(sim):
    status, ns = sim.request("GET", "/api/v1/namespaces/kube-system")
    assert status == 200
    return ns["metadata"]["uid"]


class Seen:
    """What a subscriber saw on meshery.meshsync.core, per uid."""

    def __init__(self, nc):
        self.nc = nc
        self.events = []
        self.last = {}
        self.count = collections.Counter()

    def drain(self, timeout=0.2):
        """Takes every message already here; waits @timeout for each next one."""
        while True:
            try:
                msg = self.nc.next_msg(timeout)
            except TimeoutError:
                return
            self.add(msg)

    def add(self, msg):
        env = envelope(msg)
        obj = env["Object"]
        uid = obj["metadata"]["uid"]
        self.events.append((env["EventType"], uid, obj))
        self.last[uid] = (env["EventType"], obj)
        self.count[uid] += 1

    def until(self, predicate, what, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        while not predicate():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out waiting for {what}")
            try:
                self.add(self.nc.next_msg(remaining))
            except TimeoutError:
                raise AssertionError(f"timed out waiting for {what}") from None


def final_state(sim):
    """{uid: resourceVersion} of every watched object kubesim holds."""
    from meshsync_run import WATCHED

    state = {}
    for _, path, _, _ in WATCHED:
        for item in list_objects(sim, path) or []:
            state[item["metadata"]["uid"]] = item["metadata"]["resourceVersion"]
    return state


def matches_final(seen, state):
    for uid, rv in state.items():
        last = seen.last.get(uid)
        if last is None or last[0] == "DELETED" or last[1]["metadata"].get(
                "resourceVersion") != rv:
            return False
    return all(event == "DELETED" for uid, (event, _) in seen.last.items() if uid not in state)


def configmap(name, namespace="default", value="1"):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace}, "data": {"k": value}}


# ------------------------------------------------------------------------------------------


def test_initial_sync_one_message_per_object(tmp_path):
    with Kubesim(**SMALL) as sim, NatsServer() as nats, nats.client() as nc:
        nc.subscribe(CORE)
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url) as run:
            run.wait_synced()
            view = cluster_view(sim)
            seen = Seen(nc)
            seen.until(lambda: set(seen.last) >= set(view), "an event for every object")
            seen.drain()
            cluster_id = kube_system_uid(sim)
            assert set(seen.last) == set(view)
            assert all(n == 1 for n in seen.count.values()), seen.count.most_common(3)
            for event, uid, obj in seen.events:
                assert event == "ADDED"
                assert TOP_KEYS <= set(obj), sorted(obj)
                assert META_KEYS <= set(obj["metadata"])
                assert obj["cluster_id"] == cluster_id
                assert obj["metadata"]["cluster_id"] == ""
                kind, namespace, name = view[uid]
                assert (obj["kind"], obj["metadata"].get("namespace", ""),
                        obj["metadata"]["name"]) == (kind, namespace, name)
            assert run.terminate() == 0
            assert "meshsync: shutting down" in run.log()


def test_envelope_constants(tmp_path):
    with Kubesim(pods=1, namespaces=1) as sim, NatsServer() as nats, nats.client() as nc:
        nc.subscribe(CORE)
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url, "-outputResources", "pod"):
            msg = nc.next_msg(TIMEOUT)
            env = envelope(msg)
            assert env["ObjectType"] == "meshsync-data"
            assert env["Request"] is None
            assert b'"Request":null' in msg.data


def test_modified_and_deleted_follow_changes(tmp_path):
    with Kubesim(**SMALL) as sim, NatsServer() as nats, nats.client() as nc:
        nc.subscribe(CORE)
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url) as run:
            run.wait_synced()
            view = cluster_view(sim)
            seen = Seen(nc)
            seen.until(lambda: set(seen.last) >= set(view), "the initial sync")

            created = sim.create(configmap("broker-test"))
            status, cm = sim.request("GET", "/api/v1/namespaces/default/configmaps/broker-test")
            assert status == 200
            cm["data"] = {"k": "2"}
            sim.replace(cm)
            pod_uid, (_, pod_ns, pod_name) = next(
                (uid, v) for uid, v in view.items() if v[0] == "Pod")
            sim.delete("v1", "Pod", pod_name, pod_ns)
            state = final_state(sim)
            seen.until(lambda: matches_final(seen, state), "the changes")
            uid = cm["metadata"]["uid"]
            types = [e for e, u, _ in seen.events if u == uid]
            assert types == ["ADDED", "MODIFIED"], types
            assert seen.last[uid][1]["metadata"]["resourceVersion"] == state[uid]
            assert seen.last[pod_uid][0] == "DELETED"
            assert seen.last[pod_uid][1]["metadata"]["name"] == pod_name
            assert created is not None


# The reply is converted and published a round of 64 batches (320 objects) at a time: the
# larger cluster spans several rounds, and must split exactly as one pass would.
@pytest.mark.parametrize("cluster", [SMALL, {"pods": 1200, "namespaces": 3}],
                         ids=["one-round", "several-rounds"])
def test_informer_store_batches_of_five(tmp_path, cluster):
    with Kubesim(**cluster) as sim, NatsServer() as nats, nats.client() as nc:
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url) as run:
            run.wait_synced()
            wait_for_listener(nats)
            view = cluster_view(sim)
            nc.subscribe("meshery-server.meshsync.store")
            # key case does not matter, as with Go's decoder
            request(nc, "informer-store", {"reply": "meshery-server.meshsync.store"})
            objects = []
            sizes = []
            while len(objects) < len(view):
                env = envelope(nc.next_msg(TIMEOUT))
                assert env["ObjectType"] == "" and env["EventType"] == ""
                assert env["Request"] is None
                assert isinstance(env["Object"], list)
                sizes.append(len(env["Object"]))
                objects += env["Object"]
            assert all(s == 5 for s in sizes[:-1]) and 1 <= sizes[-1] <= 5, sizes
            uids = [o["metadata"]["uid"] for o in objects]
            assert sorted(uids) == sorted(view)
            assert all(TOP_KEYS <= set(o) for o in objects)
            # nothing more than the store
            with pytest.raises(TimeoutError):
                nc.next_msg(1.0)


def test_informer_store_during_a_resync_answers_from_the_last_store(tmp_path):
    with Kubesim(**SMALL) as sim, NatsServer() as nats, nats.client() as nc:
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url, "-outputResources",
                    "pod") as run:
            run.wait_synced()
            wait_for_listener(nats)
            pods = {u for u, (kind, _, _) in cluster_view(sim).items() if kind == "Pod"}
            # the resync's list of pods fails until the fault is cleared: the new run
            # cannot complete, and Meshery Server asks for the store meanwhile
            fault = sim.arm_fault("both", code=500, count=100000, path="/api/v1/pods")
            request(nc, "resync-discovery")
            run.wait_until(lambda: run.metric("meshsync_ready") == 0, "the resync under way")
            nc.subscribe("store.reply")
            request(nc, "informer-store", {"Reply": "store.reply"})
            objects = []
            while len(objects) < len(pods):
                objects += envelope(nc.next_msg(TIMEOUT))["Object"]
            assert {o["metadata"]["uid"] for o in objects} == pods
            assert run.metric("meshsync_ready") == 0, (
                f"the reply came from the old store {sim.fault(fault)}\n{run.log()[-3000:]}")

            sim.clear_faults()
            run.wait_synced(2)
            assert run.proc.poll() is None


def test_informer_store_applies_namespace_filter(tmp_path):
    with Kubesim(**SMALL) as sim, NatsServer() as nats, nats.client() as nc:
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url, "-outputNamespaces",
                    "default") as run:
            run.wait_synced()
            wait_for_listener(nats)
            nc.subscribe("store.reply")
            request(nc, "informer-store", {"Reply": "store.reply"})
            # meshsync-meta answered means the store request before it was handled
            nc.subscribe("meshsync-meta")
            objects = []
            request(nc, "meshsync-meta")
            while True:
                msg = nc.next_msg(TIMEOUT)
                if msg.subject == "meshsync-meta":
                    break
                objects += envelope(msg)["Object"]
            # the store reply is published in chunks from the loop: take what is left
            for msg in nc.messages(timeout=1.0):
                objects += envelope(msg)["Object"]
            # cluster-scoped objects have no namespace: the filter leaves them out, as it
            # does for events
            namespaces = {o["metadata"].get("namespace", "") for o in objects}
            assert namespaces == {"default"}, namespaces
            expected = {u for u, (_, ns, _) in cluster_view(sim).items() if ns == "default"}
            assert {o["metadata"]["uid"] for o in objects} == expected


def test_informer_store_without_reply_is_ignored(tmp_path):
    with Kubesim(pods=2, namespaces=1) as sim, NatsServer() as nats, nats.client() as nc:
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url) as run:
            run.wait_synced()
            wait_for_listener(nats)
            request(nc, "informer-store", {"Reply": ""})
            run.wait_for_line("informer-store request without a Reply subject")
            nc.subscribe("meshsync-meta")
            request(nc, "meshsync-meta")
            assert envelope(nc.next_msg(TIMEOUT))["Object"]


def test_resync_discovery_sends_added_storm(tmp_path):
    with Kubesim(**SMALL) as sim, NatsServer() as nats, nats.client() as nc:
        nc.subscribe(CORE)
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url) as run:
            run.wait_synced()
            view = cluster_view(sim)
            seen = Seen(nc)
            seen.until(lambda: set(seen.last) >= set(view), "the initial sync")
            seen.drain()
            seen.count.clear()
            wait_for_listener(nats)
            request(nc, "resync-discovery")
            run.wait_for_line("resync requested over the broker")
            seen.until(lambda: all(seen.count[u] >= 1 for u in view),
                       "ADDED again for every object")
            assert all(e == "ADDED" for e, _, _ in seen.events[-len(view):])


def test_meshsync_meta_replies_with_version(tmp_path):
    version = subprocess.run([DAEMON, "--version"], capture_output=True, text=True,
                             check=True).stdout.split()[-1]
    with Kubesim(pods=2, namespaces=1) as sim, NatsServer() as nats, nats.client() as nc:
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url):
            wait_for_listener(nats)
            nc.subscribe("meshsync-meta")
            request(nc, "meshsync-meta")
            msg = nc.next_msg(TIMEOUT)
            assert msg.data == ('{"ObjectType":"","EventType":"","Request":null,"Object":"%s"}'
                                % version).encode()


def test_active_exec_one_ticker(tmp_path):
    with Kubesim(pods=2, namespaces=1) as sim, NatsServer() as nats, nats.client() as nc:
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url, debug=True) as run:
            wait_for_listener(nats)
            nc.subscribe("active_sessions.exec")
            nc.subscribe("meshsync-meta")
            for _ in range(3):
                request(nc, "active-exec")
            request(nc, "meshsync-meta")
            subjects = []
            while "meshsync-meta" not in subjects:
                msg = nc.next_msg(TIMEOUT)
                subjects.append(msg.subject)
                if msg.subject == "active_sessions.exec":
                    env = envelope(msg)
                    assert env == {"ObjectType": "active-exec", "EventType": "",
                                   "Request": None, "Object": []}
            # requests are handled in order: all three were before the meta reply
            assert subjects.count("active_sessions.exec") == 1, subjects
            log = run.log()
            assert log.count("active-exec: publishing the active sessions") == 1, log
            assert log.count("active-exec: the ticker already runs") == 2


@pytest.mark.parametrize("body,problem", [
    (b"{not json", "request is not JSON"),
    (b'{"ObjectType":"","EventType":"","Request":null,"Object":null}',
     "request envelope has no Request"),
    (b'["Request"]', "request envelope is not a JSON object"),
    (b'{"Request":{"Entity":5}}', "Entity of the request is not a string"),
])
def test_malformed_request_ignored(tmp_path, body, problem):
    with Kubesim(pods=2, namespaces=1) as sim, NatsServer() as nats, nats.client() as nc:
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url) as run:
            wait_for_listener(nats)
            nc.subscribe("meshsync-meta")
            nc.publish(REQUEST, body)
            nc.flush()
            run.wait_for_line(problem)
            # lower-case keys are accepted, and the daemon still answers
            nc.publish(REQUEST, b'{"request":{"entity":"meshsync-meta"}}')
            assert envelope(nc.next_msg(TIMEOUT))["Object"]
            assert run.proc.poll() is None


def test_changes_during_broker_outage_are_delivered(tmp_path):
    with Kubesim(**SMALL) as sim, NatsServer() as nats:
        proxy = GatedProxy(nats.port)
        nc = nats.client()
        nc.subscribe(CORE)
        try:
            with Daemon(str(tmp_path), sim.kubeconfig, proxy.url) as run:
                run.wait_synced()
                view = cluster_view(sim)
                seen = Seen(nc)
                seen.until(lambda: set(seen.last) >= set(view), "the initial sync")

                proxy.cut()
                nats.stop()
                nc.close()
                run.wait_for_line("lost the connection to the broker")
                for i in range(15):
                    sim.create(configmap(f"outage-{i}"))
                for i in range(0, 15, 3):
                    status, cm = sim.request(
                        "GET", f"/api/v1/namespaces/default/configmaps/outage-{i}")
                    assert status == 200
                    cm["data"] = {"k": "changed"}
                    sim.replace(cm)
                pods = [v for v in view.values() if v[0] == "Pod"][:5]
                for _, ns, name in pods:
                    sim.delete("v1", "Pod", name, ns)
                state = final_state(sim)

                nats.start()  # same port
                nc = nats.client()
                nc.subscribe(CORE)
                seen.nc = nc
                proxy.open = True
                run.wait_for_line("reconnected to the broker")
                seen.until(lambda: matches_final(seen, state),
                           "every change made during the outage")
                assert run.terminate() == 0
        finally:
            nc.close()
            proxy.close()


def test_stopped_during_broker_outage_is_not_a_warning(tmp_path):
    """A broker away when the daemon stops is a remote condition: the events it cannot send
    are said at message level, so a program running with G_DEBUG=fatal-warnings (as every
    test does) goes through it and exits normally."""
    with Kubesim(**SMALL) as sim, NatsServer() as nats:
        proxy = GatedProxy(nats.port)
        nc = nats.client()
        nc.subscribe(CORE)
        try:
            with Daemon(str(tmp_path), sim.kubeconfig, proxy.url) as run:
                run.wait_synced()
                view = cluster_view(sim)
                seen = Seen(nc)
                seen.until(lambda: set(seen.last) >= set(view), "the initial sync")

                proxy.cut()
                nats.stop()
                run.wait_for_line("lost the connection to the broker")
                for i in range(15):
                    sim.create(configmap(f"away-{i}"))
                # handed to the output (held for the broker) before the stop
                run.wait_metric("meshsync_events_total", 15, kind="ConfigMap", type="ADDED")
                assert run.terminate() == 0
                log = run.log()
            assert "WARNING" not in log and "CRITICAL" not in log, log
        finally:
            nc.close()
            proxy.close()


def test_token_auth(tmp_path):
    with Kubesim(pods=2, namespaces=1) as sim, NatsServer("--auth", "s3cret") as nats:
        with nats.client(token="s3cret") as nc:
            nc.subscribe(CORE)
            with Daemon(str(tmp_path), sim.kubeconfig, nats.url,
                        env={"NATS_TOKEN": "s3cret"}) as run:
                run.wait_synced()
                assert envelope(nc.next_msg(TIMEOUT))["ObjectType"] == "meshsync-data"


def test_user_password_in_url(tmp_path):
    with Kubesim(pods=2, namespaces=1) as sim, \
            NatsServer("--user", "ms", "--pass", "pw") as nats:
        with nats.client(user="ms", password="pw") as nc:
            nc.subscribe(CORE)
            url = f"nats://ms:pw@127.0.0.1:{nats.port}"
            with Daemon(str(tmp_path), sim.kubeconfig, url) as run:
                run.wait_synced()
                assert envelope(nc.next_msg(TIMEOUT))["ObjectType"] == "meshsync-data"
                assert "pw@" not in run.log()


@pytest.mark.parametrize("server,url_auth,flags", [
    (("--auth", "s3cret"), "", ("--broker-token", "wrong")),
    (("--user", "ms", "--pass", "pw"), "ms:nope@", ()),
])
def test_wrong_credentials_exit_1(tmp_path, server, url_auth, flags):
    with Kubesim(pods=2, namespaces=1) as sim, NatsServer(*server) as nats:
        url = f"nats://{url_auth}127.0.0.1:{nats.port}"
        with Daemon(str(tmp_path), sim.kubeconfig, url, *flags) as run:
            assert run.wait_exit() == 1
            log = run.log()
            assert re.search(r"meshsync: .*(authori[sz]ation|credentials|auth)", log,
                             re.I), log
            assert "run started" not in log


def test_missing_broker_url_exit_1(tmp_path):
    with Kubesim(pods=2, namespaces=1) as sim:
        with Daemon(str(tmp_path), sim.kubeconfig, None) as run:
            assert run.wait_exit() == 1
            assert "BROKER_URL is not set" in run.log()


def test_broker_never_comes_exit_1(tmp_path):
    with Kubesim(pods=2, namespaces=1) as sim:
        url = f"nats://127.0.0.1:{free_port()}"
        with Daemon(str(tmp_path), sim.kubeconfig, url, "--broker-connect-timeout",
                    "1") as run:
            assert run.wait_exit() == 1
            log = run.log()
            assert "meshsync: " in log and "run started" not in log
            assert re.search(r"meshsync: .*broker", log), log


def test_broker_url_flag_is_ignored(tmp_path):
    with Kubesim(pods=2, namespaces=1) as sim, NatsServer() as nats, nats.client() as nc:
        nc.subscribe(CORE)
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url, "-broker-url",
                    "nats://127.0.0.1:1") as run:
            run.wait_synced()
            assert envelope(nc.next_msg(TIMEOUT))["ObjectType"] == "meshsync-data"


def test_content_dedup_skips_unchanged_on_resync(tmp_path):
    with Kubesim(**SMALL) as sim, NatsServer() as nats, nats.client() as nc:
        nc.subscribe(CORE)
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url, "-outputResources", "configmap",
                    env={"MESHSYNC_BROKER_CONTENT_DEDUP": "T"}) as run:
            run.wait_for_line("broker content deduplication enabled")
            run.wait_synced()
            view = cluster_view(sim, {"configmaps"})
            seen = Seen(nc)
            seen.until(lambda: set(seen.last) >= set(view), "the initial sync")
            wait_for_listener(nats)
            request(nc, "resync-discovery")
            run.wait_synced(2)
            # a change after the resync is the next thing on the wire
            created = sim.create(configmap("after-resync"))
            msg = envelope(nc.next_msg(TIMEOUT))
            assert msg["Object"]["metadata"]["name"] == "after-resync", msg
            assert created is not None


def test_broker_and_file_composite(tmp_path):
    out = str(tmp_path / "snap.yaml")
    with Kubesim(pods=3, namespaces=1) as sim, NatsServer() as nats, nats.client() as nc:
        nc.subscribe(CORE)
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url, "-outputFile", out,
                    "--stop-after-sync", output="broker,file") as run:
            assert run.wait_exit() == 0
            view = cluster_view(sim)
            seen = Seen(nc)
            seen.until(lambda: set(seen.last) >= set(view), "every object on the broker")
            with open(out, encoding="utf-8") as f:
                text = f.read()
            assert all(uid in text for uid in view)

