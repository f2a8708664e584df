# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""Real network conditions between meshsync and the API server, under churn, in broker mode:
200 ms of latency each way, 5 % of the segments lost, and the link cut for 30 s. Every
process runs in a network namespace of the test's own (tests/lib/netcond.py): the losses and
the cut are the kernel's (nftables drops segments; TCP retransmits and backs off), the
latency is the relay's (the kernel has no netem). Afterwards the consumer's picture must
equal kubesim's state, every event meshsync published must have arrived, and the daemon's
resident set must have stayed within the bound RSS_SLACK_KIB gives (tests/lib/netcond.py).
"""

import socket
import ssl
import time
import urllib.parse

from broker_faults import GatedProxy, Picture, RssSampler, kubesim_rv, server_conf_file
from kubesim import Kubesim
from nats_server import NatsServer
from netcond import RSS_SLACK_KIB, PrivateNetwork, relayed_kubeconfig
from test_broker_faults import assert_agrees, assert_all_arrived, metric, metrics, wait_ready
from test_broker_mode import Daemon

PODS = 300
CHURN = 100  # API writes per second
SEED = "24"
FAULT_SECONDS = 5.0
CUT_SECONDS = 30.0
LATENCY_MS = 200
LOSS_PERCENT = 5


def churning_sim():
    return Kubesim(pods=PODS, namespaces=3, extra=["--churn", str(CHURN), "--seed", SEED])


def run_condition(tmp_path, fault, before=None, relay=False):
    """The daemon against churning kubesim in a private network. @before(net, proxy, port)
    sets a condition up before the daemon starts (so that the initial sync goes through it
    too); @fault(net, proxy, port) runs after the initial sync. Then the picture must agree
    and every event arrive. Returns (seconds the picture took to agree after the fault,
    the RSS sampler, the daemon's metrics at the end)."""
    with PrivateNetwork() as net, churning_sim() as sim, \
            NatsServer("-c", server_conf_file()) as nats:
        port = urllib.parse.urlparse(sim.url).port
        proxy = GatedProxy(port) if relay else None
        kubeconfig = sim.kubeconfig
        if proxy is not None:
            kubeconfig = relayed_kubeconfig(sim.kubeconfig, proxy.port, str(tmp_path))
        picture = Picture(nats.port)
        picture.start()
        assert picture.subscribed.wait(30)
        try:
            if before is not None:
                before(net, proxy, port)
            with Daemon(str(tmp_path), kubeconfig, nats.url, "-outputResources",
                        "pod") as run:
                sampler = RssSampler(run.proc.pid)
                sampler.phase = "sync"
                sampler.start()
                try:
                    wait_ready(run)
                    assert_agrees(picture, sim, run, "the initial sync")
                    sampler.phase = "fault"
                    fault(net, proxy, port)
                    sampler.phase = "after"
                    start = time.monotonic()
                    wait_ready(run)
                    assert_agrees(picture, sim, run, "after the fault")
                    converged = time.monotonic() - start
                    text = metrics(run)
                finally:
                    sampler.stopping = True
                    sampler.join()
                baseline = sampler.peak("sync")
                peak = max(sampler.peak("fault"), sampler.peak("after"))
                assert peak <= baseline + RSS_SLACK_KIB, (
                    f"RSS rose from {baseline} KiB (initial sync) to {peak} KiB")
                published = assert_all_arrived(picture, run)
                print(f"picture agreed {converged:.1f} s after the fault; RSS {baseline} KiB "
                      f"peak in the sync, {peak} KiB peak since; {published} events "
                      f"published, {picture.unique()} received, {picture.counts()}; "
                      f"kubesim at rv {kubesim_rv(sim)}; watch restarts "
                      f"{metric(text, 'meshsync_watch_restarts_total')}, relists "
                      f"{metric(text, 'meshsync_relists_total')}")
                return converged, sampler, text
        finally:
            picture.stop()
            if proxy is not None:
                proxy.close()


def round_trip(port):
    """Seconds one TLS handshake takes through 127.0.0.1:@port: at least one round trip."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
        with context.wrap_socket(raw):
            return time.monotonic() - start


def test_latency_200ms_each_way(tmp_path):
    def before(net, proxy, port):
        proxy.delay(LATENCY_MS)
        # the relay does delay: the server's hello comes back no sooner than two delays
        assert round_trip(proxy.port) >= 2 * LATENCY_MS / 1000

    def fault(net, proxy, port):
        # churn goes on through the slow link, as it did during the initial sync
        time.sleep(FAULT_SECONDS)

    run_condition(tmp_path, fault, before=before, relay=True)


def test_loss_5_percent(tmp_path):
    counters = []

    def before(net, proxy, port):
        counters.append(net.tcp_counters())
        net.drop(port, LOSS_PERCENT)

    def fault(net, proxy, port):
        time.sleep(FAULT_SECONDS)
        counters.append(net.tcp_counters())
        counters.append(net.dropped())

    run_condition(tmp_path, fault, before=before)
    retransmitted = counters[1]["RetransSegs"] - counters[0]["RetransSegs"]
    print(f"{counters[2]} segments dropped, {retransmitted} retransmitted (all ports)")
    # the kernel did drop, and TCP sent again
    assert counters[2] > 0
    assert retransmitted > 0


def test_link_cut_30s(tmp_path):
    def fault(net, proxy, port):
        # both ways, held connections and new ones: segments vanish, nothing is refused
        net.drop(port)
        time.sleep(CUT_SECONDS)
        dropped.append(net.dropped())
        net.restore()

    dropped = []
    converged, _, _ = run_condition(tmp_path, fault)
    print(f"cut {CUT_SECONDS:.0f} s, {dropped[0]} segments dropped; the picture agreed "
          f"{converged:.1f} s after the restore")
    # the churn's events were on their way when the link went: the cut did hit them
    assert dropped[0] > 0
