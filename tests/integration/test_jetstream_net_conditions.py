# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""Real network conditions between meshsync and a JetStream server, under churn: 200 ms of
latency each way, and 5 % of the segments lost. As in test_net_conditions.py every process
runs in a network namespace of the test's own (tests/lib/netcond.py); meshsync reaches
nats-server through the relay (tests/lib/gated_proxy.py), whose listening port is the one the
condition is put on: the relay's `delay` makes the latency (the kernel has no netem), nftables
drops on that port make the loss, so only meshsync's connection suffers it. The test reads the
stream directly from the server, message by message in sequence order (StreamPicture, no
consumer: see doc/durability.md on durable consumers in nats-server 2.9.10).

A single server: latency and loss are between meshsync and the node it publishes to, which
a cluster would not change (the cluster's own faults are test_jetstream_partition.py's).
Afterwards the stream's picture must equal kubesim's truth, hold every event meshsync
published, each Nats-Msg-Id once, and the daemon's resident set must have stayed within
RSS_SLACK_KIB of its peak in the initial sync: in JetStream mode what is not acknowledged yet
waits in the JetStream window instead of the core replay window, with the same 64 MiB bound
(doc/durability.md, "JetStream bounds"); the rest is the write buffer and the allocator's.
"""

import time

from broker_faults import GatedProxy, RssSampler, kubesim_rv, published_at_exit, truth, \
    wait_for_picture
from kubesim import Kubesim
from nats_client import NatsClient
from netcond import RSS_SLACK_KIB, PrivateNetwork
from test_broker_faults import metric, metrics
from test_broker_mode import Daemon
from test_jetstream import jetstream_server
from test_jetstream_partition import StreamPicture, assert_stream_whole

PODS = 300
CHURN = 100  # API writes per second
SEED = "24"
FAULT_SECONDS = 5.0
LATENCY_MS = 200
LOSS_PERCENT = 5
TIMEOUT = 120.0


def agree(picture, sim, run, what):
    rv, state, diff, took = wait_for_picture(picture, sim, what, TIMEOUT, run.proc, run.log)
    assert not any(diff.values()), (
        f"the stream's picture at rv {rv} differs {what}: "
        f"{ {k: len(v) for k, v in diff.items()} }\n{run.log()[-3000:]}")
    return rv, state, took


def run_condition(tmp_path, before, after=None):
    """The daemon in JetStream mode against churning kubesim, through the relay, in a private
    network. @before(net, proxy) sets the condition up before the daemon starts, so that the
    initial sync goes through it too; it stays on to the end. @after(net, proxy) runs once
    the picture agreed after the churn window, the condition still on. Churn goes on for
    FAULT_SECONDS after the initial sync; then the picture must agree, and once the daemon
    stopped the stream must hold each event it published exactly once."""
    with PrivateNetwork() as net, \
            Kubesim(pods=PODS, namespaces=3,
                    extra=["--churn", str(CHURN), "--seed", SEED]) as sim, \
            jetstream_server() as nats:
        proxy = GatedProxy(nats.port)
        picture = StreamPicture(nats.port)
        try:
            before(net, proxy)
            first_rv = kubesim_rv(sim)
            with Daemon(str(tmp_path), sim.kubeconfig, proxy.url, "--jetstream",
                        "-outputResources", "pod") as run:
                sampler = RssSampler(run.proc.pid)
                sampler.phase = "sync"
                sampler.start()
                picture.start()
                try:
                    agree(picture, sim, run, "after the initial sync")
                    sampler.phase = "fault"
                    # churn goes on through the condition, as it did during the initial sync
                    time.sleep(FAULT_SECONDS)
                    sampler.phase = "after"
                    rv, state, took = agree(picture, sim, run, "after the churn window")
                    if after is not None:
                        after(net, proxy)
                    text = metrics(run)
                finally:
                    sampler.stopping = True
                    sampler.join()
                assert run.terminate() == 0
                writes = kubesim_rv(sim) - first_rv
                published = published_at_exit(run.log())
        finally:
            picture.stop()
            if picture.is_alive():
                picture.join()
            proxy.close()
        baseline = sampler.peak("sync")
        during, since = sampler.peak("fault"), sampler.peak("after")
        peak = max(during, since)
        assert peak <= baseline + RSS_SLACK_KIB, (
            f"RSS rose from {baseline} KiB (initial sync) to {peak} KiB")

        # the stream as it is once meshsync stopped (and flushed its window), read whole
        final = assert_stream_whole(nats, published, rv, state, truth(sim)[1])
        count, last_seq = final.sequences()
        resent = metric(text, "meshsync_jetstream_resent_total")
        print(f"{len(state)} pods at rv {rv} agreed {took:.1f} s after the churn window; "
              f"{writes} kubesim writes while meshsync ran; {published} events published, "
              f"{count} stored (last sequence {last_seq}), none twice; re-sent {resent:.0f}; "
              f"RSS peak in the sync / the churn window / after it {baseline} / {during} / "
              f"{since} KiB; watch restarts {metric(text, 'meshsync_watch_restarts_total')}, "
              f"relists {metric(text, 'meshsync_relists_total')}")


def nats_round_trip(port):
    """Seconds a PING takes to come back as a PONG through 127.0.0.1:@port."""
    with NatsClient("127.0.0.1", port, timeout=30.0).connect() as nc:
        start = time.monotonic()
        nc.flush(timeout=30.0)
        return time.monotonic() - start


def test_jetstream_latency_200ms_each_way(tmp_path):
    def before(net, proxy):
        proxy.delay(LATENCY_MS)
        # the relay does delay: a PONG comes back no sooner than two delays
        assert nats_round_trip(proxy.port) >= 2 * LATENCY_MS / 1000

    run_condition(tmp_path, before)


def test_jetstream_loss_5_percent(tmp_path):
    counters = []

    def before(net, proxy):
        counters.append(net.tcp_counters())
        net.drop(proxy.port, LOSS_PERCENT)

    def after(net, proxy):
        counters.append(net.tcp_counters())
        counters.append(net.dropped())

    run_condition(tmp_path, before, after)
    retransmitted = counters[1]["RetransSegs"] - counters[0]["RetransSegs"]
    print(f"{counters[2]} segments of the relay's port dropped, {retransmitted} "
          "retransmitted (all ports)")
    # the kernel did drop, and TCP sent again
    assert counters[2] > 0
    assert retransmitted > 0
