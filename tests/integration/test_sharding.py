# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""Sharding across replicas against one churning kubesim: three daemons, --shard 0, 1 and 2
of --total-shards 3, each publishing to a nats-server of its own so that the test knows who
published what. Together they publish every pod exactly once (the union of what they
published is kubesim's truth, no uid comes from two of them), each object from the shard the
uid hash names (FNV-1a 64 modulo 3, as kube-state-metrics shards), and a restarted shard
loses nothing. Every wait is for state: the consumers' pictures against kubesim's lists."""

import itertools

from broker_faults import Picture, wait_for_picture
from kubesim import Kubesim
from meshsync_run import TIMEOUT
from nats_server import NatsServer
from test_broker_mode import Daemon

SHARDS = 3
PODS = 300
CHURN = 150


def shard_of(uid):
    value = 0xcbf29ce484222325
    for byte in uid.encode():
        value ^= byte
        value = (value * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return value % SHARDS


class Union:
    """The pictures of every shard's consumer, read as one."""

    def __init__(self, pictures):
        self.pictures = pictures

    def latest(self):
        merged = {}
        for picture in self.pictures:
            merged.update(picture.latest())
        return merged


def start_shard(tmp_path, sim, nats, shard):
    return Daemon(str(tmp_path / f"shard-{shard}"), sim.kubeconfig, nats.url,
                  "-outputResources", "pod", "--shard", str(shard), "--total-shards",
                  str(SHARDS))


def published(picture):
    with picture.lock:
        return set(picture.history)


def assert_sharded(pictures):
    seen = [published(p) for p in pictures]
    for (i, a), (j, b) in itertools.combinations(enumerate(seen), 2):
        both = a & b
        assert not both, f"shards {i} and {j} both published {sorted(both)[:5]}"
    for shard, uids in enumerate(seen):
        strays = [uid for uid in uids if shard_of(uid) != shard]
        assert not strays, f"shard {shard} published others' objects: {strays[:5]}"
        assert uids, f"shard {shard} published nothing"


def restart_settled(diff, state):
    """Nothing missing or behind. What shard 1 held and the cluster deleted while it was down
    cannot be retracted by a fresh process on core NATS (see doc/durability.md): those, and
    only those, may linger."""
    return (not diff["missing"] and not diff["stale"]
            and all(shard_of(uid) == 1 and uid not in state for uid in diff["extra"]))


def test_three_shards_publish_every_pod_once_and_a_restart_loses_nothing(tmp_path):
    for shard in range(SHARDS):
        (tmp_path / f"shard-{shard}").mkdir()
    with Kubesim(pods=PODS, namespaces=3, extra=["--churn", str(CHURN), "--seed", "5"]) as sim, \
            NatsServer() as n0, NatsServer() as n1, NatsServer() as n2:
        servers = [n0, n1, n2]
        pictures = [Picture(n.port) for n in servers]
        for picture in pictures:
            picture.start()
            assert picture.subscribed.wait(30)
        runs = [start_shard(tmp_path, sim, servers[i], i) for i in range(SHARDS)]
        try:
            for run in runs:
                run.wait_synced()
            union = Union(pictures)
            rv, state, diff, _ = wait_for_picture(union, sim, "the sharded sync", TIMEOUT)
            assert not any(diff.values()), diff
            assert_sharded(pictures)

            # shard 1 stops and starts again while the churn goes on
            assert runs[1].terminate() == 0
            runs[1].__exit__(None, None, None)
            runs[1] = start_shard(tmp_path, sim, servers[1], 1)
            runs[1].wait_synced()
            rv, state, diff, _ = wait_for_picture(union, sim, "after the restart", TIMEOUT,
                                                  settled=restart_settled)
            assert restart_settled(diff, state), diff
            assert_sharded(pictures)
            for run in runs:
                assert run.terminate() == 0
        finally:
            for picture in pictures:
                picture.stop()
            for run in runs:
                run.__exit__(None, None, None)
