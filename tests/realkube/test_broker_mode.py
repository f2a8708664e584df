# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""meshsync in broker mode against a real kube-apiserver (meshsync-realkube) and a real
nats-server. A consumer on meshery.meshsync.core builds its picture of the cluster from the
ADDED, MODIFIED and DELETED events; the picture must equal what the API server lists (uids
and resourceVersions) after the initial sync, and within 10 s of the end of 20 s of churn
at a few hundred writes a second through the API. The requests Meshery Server sends on
meshery.meshsync.request (informer-store, meshsync-meta, resync-discovery) are answered from
the same state. Once over HTTP/1.1 (the default) and once over HTTP/2 (--kube-http2); the
cluster and the nats-server are shared, meshsync and the consumer are new for each."""

import collections
import json
import subprocess
import time

import pytest

import kube_seed
from realkube_run import (DAEMON, PROTOCOLS, TIMEOUT, Churn, Consumer, Daemon, diff,
                          nats_server, request, start_realkube, truth, wait_for_listener,
                          wait_for_subscription, wait_picture, wait_until)

PODS = 2000
CHURN_SECONDS = 20
CHURN_RATE = 300        # writes a second, over CHURN_THREADS connections
CHURN_THREADS = 4
# The churn must really be a few hundred writes a second for the test to mean anything;
# below this the machine could not produce the load and the run says so.
CHURN_FLOOR = 150
SETTLE_SECONDS = 10     # from the churn's end to a picture equal to the truth


@pytest.fixture(scope="module")
def cluster():
    with start_realkube() as rk:
        kube_seed.seed_pods(rk.kubeconfig, PODS, namespaces=5, threads=6, prefix="seed")
        yield rk


@pytest.fixture(scope="module")
def nats():
    with nats_server() as server:
        yield server


Run = collections.namedtuple("Run", "protocol daemon consumer client truth kubeconfig")


@pytest.fixture(scope="module", params=list(PROTOCOLS))
def synced(request, cluster, nats, tmp_path_factory):
    """meshsync (over the protocol of the parameter) and a consumer subscribed before it
    started, once the initial sync is complete."""
    protocol = request.param
    consumer = Consumer(nats.port)
    consumer.start()
    try:
        wait_for_subscription(consumer)
        client = kube_seed.Client(cluster.kubeconfig)
        tmpdir = str(tmp_path_factory.mktemp(f"broker-{protocol}"))
        with Daemon(tmpdir, cluster.kubeconfig, nats.url, *PROTOCOLS[protocol]) as daemon:
            daemon.wait_synced()
            yield Run(protocol, daemon, consumer, client, lambda: truth(client),
                      cluster.kubeconfig)
            assert daemon.terminate() == 0, daemon.log()[-4000:]
    finally:
        consumer.close()


def test_initial_sync_picture_equals_truth(synced):
    waited, state = wait_picture(synced.consumer, synced.truth, "the cluster after the "
                                 "initial sync", daemon=synced.daemon)
    events = synced.consumer.events_since(0)
    added = collections.Counter(uid for kind, uid, *_ in events if kind == "ADDED")
    # one ADDED per object: nothing announced twice
    assert set(added) >= set(state)
    assert max(added.values()) == 1, added.most_common(3)
    assert not synced.consumer.readded_since(0)
    assert sum(1 for _, _, _, _, kind, _, _ in events if kind == "Pod") >= PODS
    print(f"{synced.protocol}: {len(state)} objects, picture complete {waited:.2f} s after "
          f"the sync")


def test_churn_picture_equals_truth_within_10_s(synced):
    wait_picture(synced.consumer, synced.truth, "the cluster before the churn",
                 daemon=synced.daemon)
    mark = len(synced.consumer.readded_since(0))
    churn = Churn(synced.kubeconfig, [f"churn-{synced.protocol}-{n}" for n in range(3)],
                  threads=CHURN_THREADS, rate=CHURN_RATE, prefix=f"churn-{synced.protocol}")
    churn.run(CHURN_SECONDS)
    rate = churn.achieved_rate
    assert synced.daemon.proc.poll() is None, synced.daemon.log()[-4000:]
    left = SETTLE_SECONDS - (time.monotonic() - churn.ended)
    waited, state = wait_picture(synced.consumer, synced.truth,
                                 f"the cluster within {SETTLE_SECONDS} s of the churn's end",
                                 timeout=max(left, 0.1), daemon=synced.daemon)
    settled = time.monotonic() - churn.ended
    print(f"{synced.protocol}: {churn.writes} writes in {CHURN_SECONDS} s ({rate:.0f}/s), "
          f"picture equal to the {len(state)} objects {settled:.2f} s after the churn")
    assert rate >= CHURN_FLOOR, f"the churn made only {rate:.0f} writes a second"
    # watches carried the churn: nothing was announced as new that the consumer held
    assert synced.consumer.readded_since(mark) == []


def test_informer_store_equals_truth(synced, nats):
    wait_picture(synced.consumer, synced.truth, "the cluster", daemon=synced.daemon)
    state = synced.truth()
    wait_for_listener(nats)
    reply = f"store.reply.{synced.protocol}"
    with nats.client() as nc:
        nc.subscribe(reply)
        request(nc, "informer-store", {"Reply": reply})
        objects, sizes = [], []
        deadline = time.monotonic() + TIMEOUT
        while len(objects) < len(state):
            msg = nc.next_msg(max(0.1, deadline - time.monotonic()))
            envelope = json.loads(msg.data)
            assert envelope["ObjectType"] == "" and envelope["EventType"] == ""
            assert envelope["Request"] is None
            sizes.append(len(envelope["Object"]))
            objects += envelope["Object"]
        # and nothing after the whole store
        with pytest.raises(TimeoutError):
            nc.next_msg(1.0)
    store = {o["metadata"]["uid"]: o["metadata"]["resourceVersion"] for o in objects}
    assert len(store) == len(objects), "an object twice in the store reply"
    assert store == state, diff(store, state)
    assert all(s == 5 for s in sizes[:-1]) and 1 <= sizes[-1] <= 5, sizes[-5:]


def test_meshsync_meta_replies_with_version(synced, nats):
    version = subprocess.run([DAEMON, "--version"], capture_output=True, text=True,
                             check=True).stdout.split()[-1]
    wait_for_listener(nats)
    with nats.client() as nc:
        nc.subscribe("meshsync-meta")
        request(nc, "meshsync-meta")
        msg = nc.next_msg(TIMEOUT)
    assert msg.data == ('{"ObjectType":"","EventType":"","Request":null,"Object":"%s"}'
                        % version).encode()


def test_resync_discovery_adds_every_object_again(synced, nats):
    _, state = wait_picture(synced.consumer, synced.truth, "the cluster",
                            daemon=synced.daemon)
    syncs = synced.daemon.metric("meshsync_syncs_total")
    mark = synced.consumer.event_count()
    wait_for_listener(nats)
    with nats.client() as nc:
        request(nc, "resync-discovery")
    synced.daemon.wait_metric("meshsync_syncs_total", syncs + 1)

    def again():
        added = {uid for kind, uid, *_ in synced.consumer.events_since(mark)
                 if kind == "ADDED"}
        return set(state) <= added

    wait_until(again, "ADDED again for every object", TIMEOUT, proc=synced.daemon.proc,
               log=synced.daemon.log)
    events = synced.consumer.events_since(mark)
    assert not [e for e in events if e[0] == "DELETED"], "a resync retracted something"
    added = collections.Counter(uid for kind, uid, *_ in events if kind == "ADDED")
    assert max(added.values()) == 1, added.most_common(3)
    wait_picture(synced.consumer, synced.truth, "the cluster after the resync",
                 daemon=synced.daemon)
