# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""Durable delivery (--jetstream) against a real nats-server with JetStream.

The stream MESHSYNC_EVENTS and a durable pull consumer are read with the raw-socket client's
$JS.API requests. Every wait is for a state of the server (stream counts, messages); the log is
only read once the state is reached.
"""

import base64
import os
import tempfile

from broker_faults import GatedProxy
from kubesim import Kubesim
from nats_client import NatsError
from nats_server import NatsServer, free_port, wait_until
from meshsync_run import env_allowing_warnings
from test_broker_mode import CORE, Daemon, envelope

TIMEOUT = 90.0
STREAM = "MESHSYNC_EVENTS"
PODS = ["-outputResources", "pod"]


def pod(name, namespace="default"):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app": "late"}},
            "spec": {"containers": [{"name": "app", "image": "registry.local/app:1"}]}}


def jetstream_server(*extra):
    return NatsServer("-js", "--store_dir", tempfile.mkdtemp(prefix="meshsync-js-"), *extra)


def stream_messages(nc):
    """The stream's message count, or None while it is not there (or, in a cluster, while
    its group has no leader and the request goes unanswered)."""
    try:
        return nc.stream_info(STREAM, timeout=3.0)["state"]["messages"]
    except (NatsError, TimeoutError):
        return None


def add_consumer_when_led(nc, stream, durable):
    """Creates a pull consumer once the stream's group has a leader: in a cluster that just
    lost one, a request sent before the new election goes unanswered, so it is asked again
    (creating the same durable twice is harmless)."""
    def created():
        try:
            if not nc.stream_info(stream, timeout=3.0).get("cluster", {}).get("leader"):
                return False
            nc.add_pull_consumer(stream, durable)
            return True
        except (NatsError, TimeoutError):
            return False

    wait_until(created, f"consumer {durable} on {stream}")


def wait_stream(nc, count, run=None, timeout=TIMEOUT):
    def reached():
        if run is not None and run.proc.poll() is not None:
            raise AssertionError("meshsync exited:\n" + run.log())
        n = stream_messages(nc)
        return n is not None and n >= count

    wait_until(reached, f"{count} messages in {STREAM}", timeout)
    return stream_messages(nc)


def drain(nc, durable, expected_at_least, timeout=TIMEOUT):
    """Fetches until the consumer has nothing more, after at least @expected_at_least."""
    got = []

    def enough():
        got.extend(nc.fetch(STREAM, durable, 500, expires=0.5))
        return len(got) >= expected_at_least

    wait_until(enough, f"{expected_at_least} messages from {durable}", timeout)
    while True:
        more = nc.fetch(STREAM, durable, 500, expires=0.5)
        if not more:
            return got
        got.extend(more)


def test_stream_is_created_with_the_fd4_config(tmp_path):
    with Kubesim(pods=3, namespaces=1) as sim, jetstream_server() as nats, \
            nats.client() as js:
        env = {"MESHSYNC_JETSTREAM": "true"}
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url, *PODS, env=env) as run:
            wait_stream(js, 3, run)
            cfg = js.stream_info(STREAM)["config"]
            assert cfg["subjects"] == [CORE]
            assert cfg["retention"] == "limits"
            assert cfg["storage"] == "file"
            assert cfg["max_age"] == 24 * 3600 * 10**9
            assert cfg["max_bytes"] == 256 * 1024 * 1024
            assert cfg["num_replicas"] == 1
            assert cfg["duplicate_window"] == 120 * 10**9
            assert run.terminate() == 0
        # A second start finds the stream and keeps it (and its messages) as it is.
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url, "--jetstream", *PODS) as run:
            run.wait_synced()
            assert js.stream_info(STREAM)["config"] == cfg
            assert "created JetStream stream" not in run.log()


def test_stream_at_its_limit_holds_events_without_warnings(tmp_path):
    """A stream kept as the operator made it (here: at most 5 messages, new ones refused)
    answers the events past its limit with an error (503, maximum messages exceeded). They
    are neither lost nor warned about: each waits and is sent again (message-level lines,
    meshsync_jetstream_resent_total), the daemon runs on under G_DEBUG=fatal-warnings as every
    suite runs it, and once the limit is lifted every event is stored."""
    pods = 15
    config = {"name": STREAM, "subjects": [CORE], "storage": "file", "max_msgs": 5,
              "discard": "new", "duplicate_window": 120 * 10**9}
    with Kubesim(pods=pods, namespaces=1) as sim, jetstream_server() as nats, \
            nats.client() as js:
        js.js_api("STREAM.CREATE." + STREAM, config)
        assert "fatal-warnings" in os.environ.get("G_DEBUG", "")
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url, "--jetstream",
                    "--jetstream-ack-timeout-ms", "300", *PODS) as run:
            run.wait_metric("meshsync_jetstream_resent_total", 2 * (pods - 5))
            assert stream_messages(js) == 5
            assert run.metric("meshsync_jetstream_rejected_total") == 0
            assert run.metric("meshsync_jetstream_pending_messages") == pods - 5
            js.js_api("STREAM.UPDATE." + STREAM, dict(config, max_msgs=-1))
            wait_stream(js, pods, run)
            sim.create(pod("after"))
            wait_stream(js, pods + 1, run)
            run.wait_until(lambda: run.metric("meshsync_jetstream_pending_messages") == 0,
                           "nothing pending")
            assert run.metric("meshsync_jetstream_acked_total") == pods + 1
            log = run.log()
            assert run.terminate() == 0
        assert "kept as it is" in log, log
        assert "WARNING" not in log and "CRITICAL" not in log, log


def test_conflicting_stream_is_refused_and_kept(tmp_path):
    with Kubesim(pods=1, namespaces=1) as sim, jetstream_server() as nats, \
            nats.client() as js:
        js.js_api("STREAM.CREATE." + STREAM,
                  {"name": STREAM, "subjects": ["other.>"], "storage": "memory"})
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url, "--jetstream", *PODS) as run:
            assert run.wait_exit() != 0
            log = run.log()
        assert ("(subjects are [other.>], not [meshery.meshsync.core]; storage is memory, "
                "not file)") in log, log
        assert "refusing to change it" in log
        cfg = js.stream_info(STREAM)["config"]
        assert cfg["subjects"] == ["other.>"] and cfg["storage"] == "memory"


def test_outage_of_the_consumer_drains_exactly_the_missed_changes(tmp_path):
    """fd4: K objects published, the durable consumer stops, M more change, and the restarted
    consumer gets exactly the M it missed; K+M distinct objects, no resync."""
    k, m = 40, 25
    with Kubesim(pods=k, namespaces=1) as sim, jetstream_server() as nats, \
            nats.client() as js, nats.client() as core:
        core.subscribe(CORE)
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url, "--jetstream", *PODS) as run:
            assert wait_stream(js, k, run) == k
            js.add_pull_consumer(STREAM, "meshery-server")
            first = drain(js, "meshery-server", k)
            assert len(first) == k
            # The consumer is stopped: nothing fetches while M new pods appear.
            for i in range(m):
                sim.create(pod(f"late-{i}"))
            assert wait_stream(js, k + m, run) == k + m
            again = drain(js, "meshery-server", m)
            assert len(again) == m
            first_uids = {envelope(msg)["Object"]["metadata"]["uid"] for msg in first}
            again_env = [envelope(msg) for msg in again]
            again_uids = {e["Object"]["metadata"]["uid"] for e in again_env}
            assert len(first_uids) == k and len(again_uids) == m
            assert not first_uids & again_uids
            assert all(e["EventType"] == "ADDED" for e in again_env)
            assert sorted(e["Object"]["metadata"]["name"] for e in again_env) == \
                sorted(f"late-{i}" for i in range(m))
            # No resync: the stream holds K+M messages, one per object.
            assert stream_messages(js) == k + m
            # Core subscribers got the very same bytes, once each.
            seen = [core.next_msg(TIMEOUT) for _ in range(k + m)]
            assert sorted(msg.data for msg in seen) == sorted(msg.data for msg in first + again)
            # Nats-Msg-Id: upstream's SetID value, the resourceVersion and the event type.
            for msg in first + again:
                env = envelope(msg)
                obj = env["Object"]
                key = ".".join([obj["cluster_id"], obj["kind"], obj["apiVersion"],
                                obj["metadata"].get("namespace", ""), obj["metadata"]["name"]])
                expected = "%s.%s.%s" % (base64.b64encode(key.encode()).decode(),
                                         obj["metadata"]["resourceVersion"], env["EventType"])
                assert msg.headers["Nats-Msg-Id"] == [expected]


def test_duplicate_after_a_forced_reconnect_is_stored_once(tmp_path):
    """The acks never come back, the connection goes stale and reconnects, meshsync sends the
    unacknowledged events again with the same Nats-Msg-Id: core subscribers see them twice,
    the stream stores them once. A new version afterwards is stored."""
    n = 20
    with Kubesim(pods=0, namespaces=1) as sim, jetstream_server() as nats, \
            nats.client() as js, nats.client() as core:
        proxy = GatedProxy(nats.port)
        try:
            core.subscribe(CORE)
            with Daemon(str(tmp_path), sim.kubeconfig, proxy.url, "--jetstream", *PODS,
                        "--jetstream-ack-timeout-ms", "60000") as run:
                run.wait_synced()
                assert stream_messages(js) == 0
                proxy.mute()
                for i in range(n):
                    sim.create(pod(f"dup-{i}"))
                assert wait_stream(js, n, run) == n
                counts = {}

                def resent():
                    msg = core.next_msg(TIMEOUT)
                    uid = envelope(msg)["Object"]["metadata"]["uid"]
                    counts[uid] = counts.get(uid, 0) + 1
                    return len(counts) == n and all(c >= 2 for c in counts.values())

                wait_until(resent, "every event a second time on the core subject")
                core.flush()
                assert stream_messages(js) == n
                status, obj = sim.request("GET", "/api/v1/namespaces/default/pods/dup-0")
                assert status == 200
                obj["metadata"]["labels"]["app"] = "changed"
                sim.replace(obj)
                assert wait_stream(js, n + 1, run) == n + 1
                assert "sending" in run.log() and "again" in run.log()
        finally:
            proxy.close()


def test_without_jetstream_falls_back_to_core_with_one_warning(tmp_path):
    pods = 15
    with Kubesim(pods=pods, namespaces=1) as sim, NatsServer() as nats, \
            nats.client() as core:
        core.subscribe(CORE)
        # the fallback is a warning (asked for JetStream, the server has none): allowed here
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url, "--jetstream", *PODS,
                    env=env_allowing_warnings()) as run:
            seen = {}
            for _ in range(pods):
                env = envelope(core.next_msg(TIMEOUT))
                seen[env["Object"]["metadata"]["uid"]] = env["EventType"]
            assert len(seen) == pods and set(seen.values()) == {"ADDED"}
            sim.create(pod("after"))
            env = envelope(core.next_msg(TIMEOUT))
            assert env["Object"]["metadata"]["name"] == "after"
            log = run.log()
        assert log.count("has no JetStream") == 1, log


class JetStreamCluster:
    """Three JetStream servers on loopback, routed to each other (cluster "meshsync")."""

    def __init__(self, size=3):
        routes_ports = [free_port() for _ in range(size)]
        routes = ",".join(f"nats://127.0.0.1:{p}" for p in routes_ports)
        self.servers = {}
        for i, port in enumerate(routes_ports):
            name = f"n{i + 1}"
            self.servers[name] = jetstream_server(
                "-n", name, "--cluster_name", "meshsync",
                "--cluster", f"nats://127.0.0.1:{port}", "--routes", routes)

    @property
    def url(self):
        return ",".join(s.url for s in self.servers.values())

    def alive(self):
        return [s for s in self.servers.values() if s.proc is not None]

    def wait_ready(self):
        """Until every server answers JetStream account info: a meta leader exists."""
        for server in self.servers.values():
            with server.client() as nc:
                def ready():
                    try:
                        nc.js_api("INFO")
                        return True
                    except (NatsError, TimeoutError):
                        return False

                wait_until(ready, f"JetStream ready on {server.url}")

    def stop(self):
        for server in self.servers.values():
            server.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def test_cluster_leader_killed_during_churn_loses_nothing(tmp_path):
    """Replicas 3; the stream leader is killed while pods are created: every pod kubesim holds
    is in the stream at the end, and a change after the kill is stored too."""
    k, churn = 20, 120
    with Kubesim(pods=k, namespaces=1) as sim, JetStreamCluster() as cluster:
        cluster.wait_ready()
        with Daemon(str(tmp_path), sim.kubeconfig, cluster.url, "--jetstream",
                    "--jetstream-replicas", "3", *PODS) as run:
            with cluster.servers["n1"].client() as js:
                assert wait_stream(js, k, run) == k
                info = js.stream_info(STREAM)
                assert info["config"]["num_replicas"] == 3
                leader = info["cluster"]["leader"]
            killed = False
            for i in range(churn):
                sim.create(pod(f"churn-{i}"))
                if i == churn // 3:
                    cluster.servers[leader].stop()
                    killed = True
            assert killed
            survivor = cluster.alive()[0]
            with survivor.client() as js:
                truth = {p["metadata"]["uid"] for p in
                         sim.request("GET", "/api/v1/pods")[1]["items"]}
                assert len(truth) == k + churn

                wait_stream(js, k + churn, run)
                add_consumer_when_led(js, STREAM, "audit")
                msgs = drain(js, "audit", k + churn)
                uids = [envelope(m)["Object"]["metadata"]["uid"] for m in msgs]
                assert set(uids) == truth
                assert len(uids) == len(truth), "a re-sent event was stored twice"
                sim.create(pod("after-the-kill"))
                wait_stream(js, k + churn + 1, run)


def test_last_state_view_holds_each_object_once_with_tombstones(tmp_path):
    """--jetstream-state: a consumer created after the changes reads one message per object,
    its newest state, and the DELETED of a deleted one, without asking meshsync anything."""
    k = 12
    with Kubesim(pods=k, namespaces=1) as sim, jetstream_server() as nats, \
            nats.client() as js:
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url, "--jetstream", *PODS,
                    env={"MESHSYNC_JETSTREAM_STATE": "true"}) as run:
            assert wait_stream(js, k, run) == k
            items = sim.request("GET", "/api/v1/pods")[1]["items"]
            changed, deleted = items[0], items[1]
            for value in ("a", "b", "c"):
                changed["metadata"]["labels"] = {"app": value}
                status, changed = sim.request(
                    "PUT", "/api/v1/namespaces/%s/pods/%s" % (
                        changed["metadata"]["namespace"], changed["metadata"]["name"]),
                    changed)
                assert status == 200
            sim.delete("v1", "Pod", deleted["metadata"]["name"],
                       deleted["metadata"]["namespace"])
            # k ADDED, 3 MODIFIED, 1 DELETED on the event stream.
            wait_stream(js, k + 4, run)
            cfg = js.stream_info("MESHSYNC_STATE")["config"]
            assert cfg["subjects"] == ["meshery.meshsync.state.>"]
            assert cfg["max_msgs_per_subject"] == 1
            state = js.stream_info("MESHSYNC_STATE")["state"]
            assert state["messages"] == k, state
            js.add_pull_consumer("MESHSYNC_STATE", "late-reader")
            msgs = js.fetch("MESHSYNC_STATE", "late-reader", 100, expires=1.0)
            assert len(msgs) == k
            by_name = {}
            for msg in msgs:
                env = envelope(msg)
                obj = env["Object"]
                name = obj["metadata"]["name"]
                assert msg.subject == "meshery.meshsync.state.%s.Pod.%s.%s" % (
                    obj["cluster_id"], obj["metadata"]["namespace"], name)
                by_name[name] = (env["EventType"], obj)
            assert by_name[deleted["metadata"]["name"]][0] == "DELETED"
            kind, obj = by_name[changed["metadata"]["name"]]
            assert kind == "MODIFIED"
            assert obj["metadata"]["resourceVersion"] == changed["metadata"]["resourceVersion"]
            assert sum(1 for kind, _ in by_name.values() if kind == "ADDED") == k - 2
