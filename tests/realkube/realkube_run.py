# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""What the realkube suite's tests share: the cluster (meshsync-realkube, a real kube-apiserver
and etcd; tests/lib/realkube.py), the server's truth read through its API, churn written
through its API, meshsync in broker mode, and a consumer that builds its picture of the
cluster from the events on meshery.meshsync.core.

The suite does not skip without the binary: CI builds it first (scripts/realkube build), and
a missing binary is a failure that names the command to run.

Every wait polls state (the health server's /metrics, what arrived on NATS, what the API
server lists, files, the process's exit) until a deadline; nothing sleeps to let something
happen. The churn paces its writes, which is load shaping, not synchronization.
"""

import http.client
import json
import os
import random
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
for _path in (os.path.join(HERE, "..", "lib"), os.path.join(HERE, "..", "integration")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import kube_seed  # noqa: E402
import yaml  # noqa: E402
from broker_faults import GatedProxy, Picture, server_conf_file  # noqa: E402,F401
from meshsync_run import (DAEMON, HEALTH_FLAGS, TIMEOUT, WATCHED,  # noqa: E402,F401
                          DaemonProcess)
from nats_server import NatsServer  # noqa: E402
from realkube import REALKUBE, Realkube, available  # noqa: E402

CORE = "meshery.meshsync.core"
REQUEST = "meshery.meshsync.request"
QUEUE = "meshsync-request-stream"

# The two ways meshsync talks to the API server: HTTP/1.1, a connection per watch (the
# default), and HTTP/2, every request on one connection.
PROTOCOLS = {"http1": [], "http2": ["--kube-http2"]}


def start_realkube(*flags):
    """A running cluster; fails (never skips) when the binary is not there."""
    assert available(), (
        f"{REALKUBE} is missing or not executable: the realkube suite needs it and does not "
        f"skip; build it with `scripts/realkube build` (or set MESHSYNC_REALKUBE)")
    return Realkube(*flags)


def wait_until(predicate, what, timeout=TIMEOUT, proc=None, log=None, interval=0.05):
    """Polls @predicate() until it returns something true, which is returned; fails when
    @proc (a Popen) exits first or the deadline passes."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"meshsync exited ({proc.returncode}) before {what}:\n"
                                 f"{log()[-6000:] if log else ''}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}\n"
                                 f"{log()[-6000:] if log else ''}")
        time.sleep(interval)


def kubeconfig_for(rk, path, port=None, token=None):
    """Writes to @path a copy of @rk's admin kubeconfig that reaches the server on @port of
    127.0.0.1 (a relay in front of it; the serving certificate names the address, not the
    port) and/or sends @token; returns @path."""
    with open(rk.kubeconfig, encoding="utf-8") as f:
        config = yaml.safe_load(f)
    if port is not None:
        config["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{port}"
    if token is not None:
        config["users"][0]["user"]["token"] = token
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump(config, f)
    return path


def cluster_uid(client):
    """The uid of namespace kube-system: the cluster_id meshsync publishes."""
    status, data = client.request("GET", "/api/v1/namespaces/kube-system")
    assert status == 200, data[:300]
    return json.loads(data)["metadata"]["uid"]


def current_rv(client):
    """The cluster's resourceVersion now (etcd's revision)."""
    status, data = client.request("GET", "/api/v1/namespaces?limit=1")
    assert status == 200, data[:300]
    return json.loads(data)["metadata"]["resourceVersion"]


# -- the server's truth ---------------------------------------------------------------------


def _scoped(path, namespace):
    """@path (a cluster-wide list path) for one namespace."""
    prefix, plural = path.rsplit("/", 1)
    return f"{prefix}/namespaces/{namespace}/{plural}"


def truth(client, namespaces=None, kinds=None):
    """{uid: resourceVersion} of every object of meshsync's default watch set the API server
    holds, one list per type (and per namespace of @namespaces: then namespaced types only),
    read through @client (a kube_seed.Client)."""
    state = {}
    for _, path, kind, namespaced in WATCHED:
        if kinds is not None and kind not in kinds:
            continue
        if namespaces is None:
            paths = [path]
        elif namespaced:
            paths = [_scoped(path, ns) for ns in namespaces]
        else:
            continue
        for one in paths:
            status, data = client.request("GET", one)
            assert status == 200, f"GET {one}: {status} {data[:300]!r}"
            for item in json.loads(data)["items"]:
                state[item["metadata"]["uid"]] = item["metadata"]["resourceVersion"]
    return state


def diff(picture, state):
    """A short account of how {uid: rv} @picture differs from @state; "" when equal."""
    missing = [u for u in state if u not in picture]
    extra = [u for u in picture if u not in state]
    stale = [u for u in state if u in picture and picture[u] != state[u]]
    if not (missing or extra or stale):
        return ""
    return (f"{len(missing)} missing {missing[:5]}, {len(extra)} extra {extra[:5]}, "
            f"{len(stale)} stale {[(u, picture[u], state[u]) for u in stale[:5]]}")


# -- the consumer ---------------------------------------------------------------------------


class Consumer(Picture):
    """A subscriber on meshery.meshsync.core (tests/lib/broker_faults.py's reader: its own
    thread and socket, reconnecting by itself) that builds the consumer's picture the way
    Meshery Server does: ADDED and MODIFIED set the object, DELETED removes it. It also keeps
    every event, and every ADDED of an object the picture already held (a re-send)."""

    def __init__(self, port):
        super().__init__(port, CORE)
        self.state = {}     # uid -> resourceVersion
        self.meta = {}      # uid -> (kind, namespace, name, cluster_id) of its last event
        self.events = []    # (type, uid, resourceVersion, cluster_id, kind, namespace, name)
        self.readded = []   # (uid, resourceVersion held, resourceVersion of the ADDED)
        self.errors = []

    def _add(self, payload):
        try:
            envelope = json.loads(payload)
            assert envelope["ObjectType"] == "meshsync-data", payload[:200]
            kind = envelope["EventType"]
            obj = envelope["Object"]
            meta = obj["metadata"]
            uid, rv = meta["uid"], meta.get("resourceVersion")
            record = (kind, uid, rv, obj.get("cluster_id"), obj.get("kind"),
                      meta.get("namespace", ""), meta.get("name"))
        except (ValueError, KeyError, TypeError, AssertionError) as error:
            with self.lock:
                self.errors.append(f"{error!r}: {payload[:200]!r}")
            return
        with self.lock:
            self.messages += 1
            self.events.append(record)
            self.meta[uid] = (record[4], record[5], record[6], record[3])
            if kind == "DELETED":
                self.state.pop(uid, None)
            elif kind in ("ADDED", "MODIFIED"):
                if kind == "ADDED" and uid in self.state:
                    self.readded.append((uid, self.state[uid], rv))
                self.state[uid] = rv
            else:
                self.errors.append(f"event type {kind!r}: {payload[:200]!r}")

    def picture(self):
        with self.lock:
            return dict(self.state)

    def event_count(self):
        with self.lock:
            return len(self.events)

    def events_since(self, start=0):
        with self.lock:
            return self.events[start:]

    def readded_since(self, start=0):
        with self.lock:
            return self.readded[start:]

    def close(self):
        self.stop()
        self.join(10)
        assert not self.errors, f"the consumer could not read {len(self.errors)} messages: " \
                                f"{self.errors[:3]}"


def wait_for_subscription(consumer, timeout=30):
    assert consumer.subscribed.wait(timeout), "the consumer's subscription never confirmed"


def wait_picture(consumer, state_fn, what, timeout=TIMEOUT, daemon=None):
    """Waits until the consumer's picture equals @state_fn() (the truth, read again when the
    picture has caught up with the last one read but that one is stale); returns (seconds
    waited, the truth)."""
    start = time.monotonic()
    deadline = start + timeout
    state = state_fn()
    last_read = time.monotonic()
    while True:
        picture = consumer.picture()
        if picture == state:
            return time.monotonic() - start, state
        if daemon is not None and daemon.proc.poll() is not None:
            raise AssertionError(f"meshsync exited ({daemon.proc.returncode}) before "
                                 f"{what}:\n{daemon.log()[-6000:]}")
        if time.monotonic() > deadline:
            state = state_fn()
            if consumer.picture() == state:
                return time.monotonic() - start, state
            log = daemon.log()[-4000:] if daemon is not None else ""
            raise AssertionError(f"the picture is not {what} after {timeout:.0f} s: "
                                 f"{diff(consumer.picture(), state)}\n{log}")
        # the truth moves on only through controllers once the churn stopped: read it again
        # now and then, not on every look
        if time.monotonic() - last_read > 1.0:
            state = state_fn()
            last_read = time.monotonic()
        time.sleep(0.05)


# -- meshsync --------------------------------------------------------------------------------


class Daemon(DaemonProcess):
    """meshsync in broker mode (BROKER_URL) against @kubeconfig, its health server on a
    port of its own."""

    def __init__(self, tmpdir, kubeconfig, broker_url, *flags, env=None, output="broker"):
        argv = [DAEMON, "-output", output] + HEALTH_FLAGS + ["--kubeconfig", kubeconfig]
        argv += list(flags)
        full_env = dict(os.environ if env is None else env)
        for name in ("BROKER_URL", "NATS_TOKEN", "NATS_CREDS", "MESHSYNC_BROKER_CONTENT_DEDUP",
                     "MESHSYNC_NAMESPACES", "MESHSYNC_KUBE_HTTP2", "KUBECONFIG"):
            full_env.pop(name, None)
        if broker_url is not None:
            full_env["BROKER_URL"] = broker_url
        super().__init__(tmpdir, argv, full_env)


def nats_server():
    """A nats-server that lets a Python subscriber fall behind without cutting it off."""
    return NatsServer("-c", server_conf_file())


def wait_for_listener(nats, timeout=TIMEOUT):
    """Waits until the server has the daemon's request subscription (queue group
    meshsync-request-stream): a request sent before would reach nobody."""
    def subscribed():
        with urllib.request.urlopen(nats.monitor + "/connz?subs=detail", timeout=10) as resp:
            connz = json.load(resp)
        return any(sub.get("subject") == REQUEST and sub.get("qgroup") == QUEUE
                   for conn in connz.get("connections", [])
                   for sub in conn.get("subscriptions_list_detail", []))

    wait_until(subscribed, "the request subscription on the server", timeout)


def request(nc, entity, payload=None):
    body = {"ObjectType": "request-payload", "EventType": "ADDED",
            "Request": {"Entity": entity, "Payload": payload}, "Object": None}
    nc.publish(REQUEST, json.dumps(body))
    nc.flush()


# -- churn -----------------------------------------------------------------------------------


class Churn:
    """Writes through the API from @threads threads, each on its own keep-alive connection
    (kube_seed.Client): ConfigMaps and Pods in @namespaces created, patched (merge patch)
    and deleted, @rate writes a second in all. With @tolerate_outage a write that cannot
    reach the server (a restart) is tried again a moment later instead of failing the run.

    start() / stop(); or run(seconds). Afterwards: writes, rate, outage_errors."""

    def __init__(self, kubeconfig, namespaces, threads=4, rate=300, prefix="churn",
                 tolerate_outage=False, seed=1):
        self.kubeconfig = kubeconfig
        self.namespaces = list(namespaces)
        self.threads = threads
        self.rate = rate
        self.prefix = prefix
        self.tolerate_outage = tolerate_outage
        self.seed = seed
        self.lock = threading.Lock()
        self.writes = 0
        self.outage_errors = 0
        self.failures = []
        self.stopping = threading.Event()
        self.workers = []
        self.started = self.ended = None

    def start(self):
        client = kube_seed.Client(self.kubeconfig)
        for namespace in self.namespaces:
            kube_seed.ensure_namespace(client, namespace)
        self.started = time.monotonic()
        self.workers = [threading.Thread(target=self._work, args=(n,), daemon=True)
                        for n in range(self.threads)]
        for worker in self.workers:
            worker.start()
        return self

    def stop(self):
        self.stopping.set()
        for worker in self.workers:
            worker.join(120)
            assert not worker.is_alive(), "a churn worker did not stop"
        self.ended = time.monotonic()
        assert not self.failures, f"{len(self.failures)} writes failed, first: " \
                                  f"{self.failures[:3]}"
        return self

    def run(self, seconds):
        self.start()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self.failures:
            time.sleep(0.1)
        return self.stop()

    @property
    def achieved_rate(self):
        return self.writes / max(1e-9, (self.ended or time.monotonic()) - self.started)

    def wait_writes(self, count, timeout=TIMEOUT):
        wait_until(lambda: self.writes >= count or self.failures,
                   f"{count} churn writes", timeout)
        assert not self.failures, self.failures[:3]

    def _send(self, client, method, path, body, content_type="application/json"):
        """One write; returns the status. Connection failures (a restarting server) are
        retried when tolerated."""
        while True:
            try:
                status, data = client.request(method, path, body, content_type)
            except (OSError, http.client.HTTPException) as error:
                if not self.tolerate_outage:
                    raise AssertionError(f"{method} {path}: {error!r}") from None
                if self.stopping.is_set():
                    return None
                with self.lock:
                    self.outage_errors += 1
                time.sleep(0.1)
                continue
            if status >= 500 or status == 429:
                if not self.tolerate_outage:
                    raise AssertionError(f"{method} {path}: {status} {data[:200]!r}")
                if self.stopping.is_set():
                    return None
                with self.lock:
                    self.outage_errors += 1
                time.sleep(0.1)
                continue
            return status, data

    def _work(self, index):
        rng = random.Random(self.seed * 1000 + index)
        client = kube_seed.Client(self.kubeconfig)
        live = []  # (kind, namespace, name)
        serial = 0
        interval = self.threads / self.rate
        next_at = time.monotonic()
        try:
            while not self.stopping.is_set():
                now = time.monotonic()
                if now < next_at:
                    time.sleep(min(next_at - now, 0.05))
                    continue
                next_at += interval
                # never more than a second of writes behind: a burst after a stall would be
                # a different load
                next_at = max(next_at, now - 1.0)
                roll = rng.random()
                if len(live) < 20 or roll < 0.4:
                    serial += 1
                    namespace = self.namespaces[serial % len(self.namespaces)]
                    name = f"{self.prefix}-{index}-{serial}"
                    if serial % 3:
                        kind, path = "configmaps", f"/api/v1/namespaces/{namespace}/configmaps"
                        body = {"apiVersion": "v1", "kind": "ConfigMap",
                                "metadata": {"name": name, "labels": {"churn": "yes"}},
                                "data": {"value": "0"}}
                    else:
                        kind, path = "pods", f"/api/v1/namespaces/{namespace}/pods"
                        body = kube_seed.pod(name, namespace, serial)
                    answer = self._send(client, "POST", path, json.dumps(body))
                    if answer is None:
                        break
                    # 409: created by an earlier try whose answer a restart cut off
                    if answer[0] not in (201, 409):
                        raise AssertionError(f"POST {path}: {answer[0]} {answer[1][:200]!r}")
                    live.append((kind, namespace, name))
                elif roll < 0.75:
                    kind, namespace, name = rng.choice(live)
                    path = f"/api/v1/namespaces/{namespace}/{kind}/{name}"
                    if kind == "configmaps":
                        patch = {"data": {"value": str(rng.randrange(1 << 30))}}
                    else:
                        patch = {"metadata": {"labels": {"rev": str(rng.randrange(1 << 30))}}}
                    answer = self._send(client, "PATCH", path, json.dumps(patch),
                                        "application/merge-patch+json")
                    if answer is None:
                        break
                    if answer[0] != 200:
                        raise AssertionError(f"PATCH {path}: {answer[0]} {answer[1][:200]!r}")
                else:
                    victim = live.pop(rng.randrange(len(live)))
                    kind, namespace, name = victim
                    path = f"/api/v1/namespaces/{namespace}/{kind}/{name}"
                    answer = self._send(client, "DELETE", path, None)
                    if answer is None:
                        break
                    # 404: deleted by an earlier try whose answer a restart cut off
                    if answer[0] not in (200, 202, 404):
                        raise AssertionError(f"DELETE {path}: {answer[0]} {answer[1][:200]!r}")
                with self.lock:
                    self.writes += 1
        except BaseException as error:  # noqa: BLE001 - reported by stop()
            with self.lock:
                self.failures.append(repr(error))
