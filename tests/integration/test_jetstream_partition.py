# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""A JetStream cluster partitioned under churn, meshsync on the minority side.

Three JetStream servers; meshsync reaches only n1, and n1's routes to n2 and n3 (both ways) go
through relays (tests/lib/partition_relay.py) while n2 and n3 are routed directly. The relays
cut n1 off for 30 s the way a network does: the route connections go silent, new ones are
refused. n1 keeps meshsync's connection but is in the minority: it can store nothing. After
the cut heals, the stream, read from the majority side message by message, must hold every
event meshsync published, each once, and its picture must equal kubesim's truth
(compare() in tests/lib/broker_faults.py); meshsync's memory must stay within the bound of its
JetStream window meanwhile. Every wait is for state; the only timed part is the cut itself.
"""

import base64
import collections
import json
import tempfile
import threading
import time
import urllib.request

from broker_faults import (Picture, RssSampler, compare, kubesim_rv, published_at_exit,
                           truth, wait_for_picture)
from kubesim import Kubesim
from nats_client import NatsClient, NatsError, _parse_headers
from nats_server import NatsServer, free_port, wait_until
from partition_relay import PartitionLink
from test_broker_mode import Daemon
from test_jetstream import STREAM, stream_messages

TIMEOUT = 120.0
PODS = 300
CHURN = 100  # writes per second
CUT = 30.0  # seconds n1 stays cut off
SEED = "24"
# Servers ping every second and give a peer up after two missed pings, and give up a peer
# that takes nothing for 2 s, so that the cut routes are noticed within seconds on both
# sides (the defaults, pings every 2 min and a 10 s write deadline, would outlast the cut).
SERVER_CONF = 'ping_interval: "1s"\nping_max: 2\nwrite_deadline: "2s"\n'
# The JetStream window's own bound (doc/durability.md): the cut may cost at most that much
# memory on top of what the daemon held before it, plus its allocator's slack.
WINDOW_BYTES = 64 << 20
SLACK_BYTES = 32 << 20


def conf_file():
    with tempfile.NamedTemporaryFile("w", prefix="meshsync-nats-", suffix=".conf",
                                     delete=False) as f:
        f.write(SERVER_CONF)
        return f.name


class PartitionedCluster:
    """n1, n2, n3, routed as a full mesh; every route that touches n1 goes through a relay of
    its own (one per direction and peer). No server advertises a reachable route address
    (gossip would otherwise let n1 dial n2 or n3 directly, around the relays) nor its
    peers to clients (meshsync's client would otherwise fail over to the majority side)."""

    def __init__(self):
        ports = {name: free_port() for name in ("n1", "n2", "n3")}
        # to n1's route port, one relay per peer dialling it; from n1, one per peer dialled
        self.relays = {(src, dst): PartitionLink(ports[dst])
                       for src, dst in (("n2", "n1"), ("n3", "n1"), ("n1", "n2"), ("n1", "n3"))}

        def route(src, dst):
            relay = self.relays.get((src, dst))
            port = relay.port if relay is not None else ports[dst]
            return f"nats://127.0.0.1:{port}"

        conf = conf_file()
        self.servers = {}
        for name, port in ports.items():
            routes = ",".join(route(name, peer) for peer in ports if peer != name)
            self.servers[name] = NatsServer(
                "-c", conf, "-js", "--store_dir", tempfile.mkdtemp(prefix="meshsync-js-"),
                "-n", name, "--cluster_name", "meshsync",
                "--cluster", f"nats://127.0.0.1:{port}", "--routes", routes,
                "--cluster_advertise", "127.0.0.1:1", "--no_advertise")

    def routes(self, name):
        with urllib.request.urlopen(self.servers[name].monitor + "/routez",
                                    timeout=10) as resp:
            return {r.get("remote_id") for r in json.load(resp).get("routes", [])}

    def wait_meshed(self):
        """Until every server has a route to both others and JetStream answers on each."""
        ids = {}
        for name, server in self.servers.items():
            with urllib.request.urlopen(server.monitor + "/varz", timeout=10) as resp:
                ids[name] = json.load(resp)["server_id"]
        for name in self.servers:
            want = {i for n, i in ids.items() if n != name}
            wait_until(lambda name=name, want=want: want <= self.routes(name),
                       f"{name} routed to both peers", timeout=TIMEOUT)
        for server in self.servers.values():
            with server.client() as nc:
                def ready():
                    try:
                        nc.js_api("INFO")
                        return True
                    except (NatsError, TimeoutError):
                        return False

                wait_until(ready, f"JetStream ready on {server.url}", timeout=TIMEOUT)

    def partition(self):
        for relay in self.relays.values():
            relay.partition()

    def heal(self):
        for relay in self.relays.values():
            relay.heal()

    def close(self):
        for server in self.servers.values():
            server.stop()
        for relay in self.relays.values():
            relay.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class StreamPicture(Picture):
    """The consumer's picture (see Picture) built from MESHSYNC_EVENTS as stored, read
    message by message in sequence order ($JS.API.STREAM.MSG.GET, which the stream's leader
    answers), plus the stream sequences per Nats-Msg-Id. No consumer is involved: what a
    consumer's own state does across leader changes cannot blur what the stream holds."""

    def __init__(self, port):
        super().__init__(port)
        self.ids = collections.defaultdict(set)  # Nats-Msg-Id -> stream sequences
        self.last_seq = 0

    def run(self):
        while not self.stopping:
            try:
                with NatsClient("127.0.0.1", self.port, timeout=5.0).connect() as nc:
                    self.connections += 1
                    while not self.stopping:
                        if not self.read_next(nc):
                            time.sleep(0.1)
            except (NatsError, TimeoutError, OSError):
                # no stream leader for a while, or the server busy: ask again
                time.sleep(0.2)

    def read_next(self, nc):
        """Reads the message after the last one read; False when there is none yet."""
        try:
            answer = nc.js_api(f"STREAM.MSG.GET.{STREAM}", {"seq": self.last_seq + 1},
                               timeout=5.0)
        except NatsError as e:
            if "no message found" in str(e):
                return False
            raise
        msg = answer["message"]
        headers = _parse_headers(base64.b64decode(msg["hdrs"]))
        seq = msg["seq"]
        with self.lock:
            self.ids[headers["Nats-Msg-Id"][0]].add(seq)
            self.last_seq = seq
        self._add(base64.b64decode(msg["data"]))
        return True

    def stored_twice(self):
        with self.lock:
            return {i: sorted(s) for i, s in self.ids.items() if len(s) > 1}

    def sequences(self):
        """(messages read, the last sequence read)."""
        with self.lock:
            return sum(len(s) for s in self.ids.values()), self.last_seq

    def distinct_ids(self):
        with self.lock:
            return len(self.ids)


def read_stream(server):
    """Every message of the stream, in sequence order: a StreamPicture that is not started,
    holding the stream's contents."""
    contents = StreamPicture(server.port)
    with server.client() as nc:
        state = nc.stream_info(STREAM, timeout=10.0)["state"]
        while contents.last_seq < state["last_seq"]:
            assert contents.read_next(nc), (contents.last_seq, state)
    read, last_seq = contents.sequences()
    assert read == state["messages"] and last_seq == state["last_seq"], (read, last_seq, state)
    return contents


def assert_stream_whole(server, published, rv, state, truth_state):
    """The stream read whole from @server once meshsync stopped: no Nats-Msg-Id stored twice,
    every one of the @published events there, and the picture it makes equal to the truth at
    @rv. Returns the StreamPicture read."""
    final = read_stream(server)
    assert final.stored_twice() == {}, "an event was stored twice"
    # every event meshsync handed to the broker is in the stream
    assert final.distinct_ids() == published, (
        f"published {published}, the stream holds {final.distinct_ids()}")
    diff = compare(final, rv, state, truth_state)
    assert not any(diff.values()), diff
    return final


def sim_object(sim, uid):
    """What kubesim has for @uid now: (resourceVersion) or None when it is gone."""
    for item in sim.request("GET", "/api/v1/pods")[1]["items"]:
        if item["metadata"]["uid"] == uid:
            return item["metadata"]["resourceVersion"]
    return None


def stored(server):
    """The stream's message count seen from @server, on a connection of its own: the servers
    ping every second, and a test client idle between requests does not answer."""
    with server.client() as nc:
        return stream_messages(nc)


def stream_leader(server):
    try:
        with server.client() as nc:
            return nc.stream_info(STREAM, timeout=3.0).get("cluster", {}).get("leader")
    except (NatsError, TimeoutError, OSError):
        return None


def move_stream_leader(server, name):
    """Asks the stream's leader to step down until @name leads it: the publisher's server
    leading the stream is the harder case, its uncommitted entries are the ones the cut
    strands. Returns the leader in the end (another one if the elections never chose it)."""
    leader = None
    for _ in range(12):
        leader = wait_until(lambda: stream_leader(server), "a stream leader", timeout=TIMEOUT)
        if leader == name:
            return leader
        try:
            with server.client() as nc:
                nc.js_api("STREAM.LEADER.STEPDOWN." + STREAM, timeout=3.0)
        except (NatsError, TimeoutError, OSError):
            pass
        # a step-down request that timed out on a loaded machine may never have reached the
        # leader: after a while without another leader it is asked again, not waited for
        deadline = time.monotonic() + 15
        while stream_leader(server) in (None, leader) and time.monotonic() < deadline:
            time.sleep(0.2)
    return leader


def test_minority_partition_loses_and_duplicates_nothing(tmp_path):
    with Kubesim(pods=PODS, namespaces=5,
                 extra=["--churn", str(CHURN), "--seed", SEED]) as sim, \
            PartitionedCluster() as cluster:
        cluster.wait_meshed()
        n1, n2 = cluster.servers["n1"], cluster.servers["n2"]
        with Daemon(str(tmp_path), sim.kubeconfig, n1.url, "--jetstream",
                    "--jetstream-replicas", "3", "-outputResources", "pod") as run:
            first_rv = kubesim_rv(sim)
            wait_until(lambda: (stored(n2) or 0) >= PODS, f"{PODS} events stored",
                       timeout=TIMEOUT, proc=run.proc, log=run.log)
            picture = StreamPicture(n2.port)
            picture.start()
            rss = RssSampler(run.proc.pid)
            rss.start()
            try:
                wait_for_picture(picture, sim, "the initial sync", TIMEOUT, run.proc, run.log)
                leader = move_stream_leader(n2, "n1")

                rss.phase = "cut"
                cluster.partition()
                cut = time.monotonic()
                # n1 notices, by its pings or its write deadline, that both routes are gone
                wait_until(lambda: not cluster.routes("n1"), "n1 without routes",
                           timeout=TIMEOUT, proc=run.proc, log=run.log)
                isolated = time.monotonic() - cut
                # the events of the cut wait in meshsync's window, unacknowledged
                wait_until(lambda: run.metric("meshsync_jetstream_pending_messages") > CHURN,
                           "events held while n1 is cut off", timeout=TIMEOUT,
                           proc=run.proc, log=run.log)
                time.sleep(max(0.0, CUT - (time.monotonic() - cut)))
                pending = run.metric("meshsync_jetstream_pending_messages")
                rss.phase = "after"
                cluster.heal()
                healed = time.monotonic()

                cluster.wait_meshed()
                rejoined = time.monotonic() - healed
                rv, state, diff, _ = wait_for_picture(picture, sim, "after the cut", TIMEOUT,
                                                      run.proc, run.log)
                took = time.monotonic() - healed
                if any(diff.values()):
                    final = read_stream(n2)
                    odd = diff["missing"][:3] + diff["extra"][:3] + diff["stale"][:3]
                    seen = {uid: (state.get(uid), picture.history.get(uid),
                                  final.history.get(uid), sim_object(sim, uid)) for uid in odd}
                    raise AssertionError(
                        f"the stream's picture at rv {rv} differs: "
                        f"{ {k: len(v) for k, v in diff.items()} }\n{seen}\n"
                        f"{run.log()[-3000:]}")
                resent = run.metric("meshsync_jetstream_resent_total")
                assert resent > 0, "nothing was sent again after the cut"
                assert run.terminate() == 0
                published = published_at_exit(run.log())
                events = kubesim_rv(sim) - first_rv

                # the stream as it is once meshsync stopped, read whole again
                final = assert_stream_whole(n2, published, rv, state, truth(sim)[1])
                count, last_seq = final.sequences()

                before, during = rss.peak("before"), rss.peak("cut")
                assert (during - before) * 1024 < WINDOW_BYTES + SLACK_BYTES, (
                    f"RSS grew from {before} to {during} KiB during the cut")
                print(f"stream leader {leader}; n1 lost its routes {isolated:.1f} s into the "
                      f"cut (machine under other load); {pending:.0f} events pending at its "
                      f"end; n1 routed again {rejoined:.1f} s and {len(state)} pods at rv {rv} "
                      f"agreed {took:.1f} s after the heal; {events} kubesim events; "
                      f"{published} events published, {count} stored (last sequence "
                      f"{last_seq}), none twice; re-sent {resent:.0f}; RSS before/during/after {before // 1024}/"
                      f"{during // 1024}/{rss.peak('after') // 1024} MiB")
            finally:
                rss.stopping = True
                picture.stop()
