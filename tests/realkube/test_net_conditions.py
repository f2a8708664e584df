# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""Network faults between meshsync and a real API server, under churn that writes to the
server directly. The link cut for 30 s in a network namespace of the test's own
(tests/lib/netcond.py): nftables drops every segment between meshsync and the relay in front
of the server, on the connections meshsync holds and on new ones; afterwards the consumer's
picture must equal what the server lists, nothing the consumer held announced again as ADDED,
and the daemon's resident set within RSS_SLACK_KIB (tests/lib/netcond.py). And the relay
black-holing the connections it holds (doc/durability.md, "Silent connections"). Both are
mostly waited out, so this file runs beside the parallel tests (tests/realkube/meson.build)."""

import time

from broker_faults import RssSampler
from netcond import RSS_SLACK_KIB, PrivateNetwork
from realkube_run import TIMEOUT, Churn, wait_until
from test_faults import Setup

CUT_SECONDS = 30.0


def test_link_cut_30s(tmp_path):
    with PrivateNetwork() as net, Setup(tmp_path, relay=True) as s:
        sampler = RssSampler(s.daemon.proc.pid)
        sampler.phase = "synced"
        sampler.start()
        churn = Churn(s.rk.kubeconfig, ["churn-0", "churn-1"], rate=100).start()
        try:
            churn.wait_writes(200)
            sampler.phase = "cut"
            net.drop(s.relay.port)
            time.sleep(CUT_SECONDS)
            dropped = net.dropped()
            net.restore()
            sampler.phase = "after"
            restored = time.monotonic()
            churn.wait_writes(churn.writes + 200)
        finally:
            churn.stop()
        try:
            waited, state = s.settle("the cluster after the cut")
            converged = time.monotonic() - restored
        finally:
            sampler.stopping = True
            sampler.join()
        assert dropped > 0, "the cut dropped nothing of meshsync's traffic"
        readded = s.consumer.readded_since(0)
        assert readded == [], f"{len(readded)} ADDED for objects the consumer held"
        baseline = sampler.peak("synced")
        peak = max(sampler.peak("cut"), sampler.peak("after"))
        assert peak <= baseline + RSS_SLACK_KIB, (
            f"RSS rose from {baseline} KiB (synced) to {peak} KiB")
        print(f"cut {CUT_SECONDS:.0f} s, {dropped} segments dropped, {churn.writes} writes; "
              f"picture equal to the {len(state)} objects {converged:.1f} s after the "
              f"restore; RSS {baseline} KiB synced, {peak} KiB peak since; watch restarts "
              f"{s.daemon.metric('meshsync_watch_restarts_total')}")


def test_black_holed_watch(tmp_path):
    """The daemon's connections to the real API server black-holed by the relay (what either
    side sends is dropped, nothing is closed) while churn writes through a connection of its
    own: every silent watch is abandoned after its bound and resumed, and the picture equals
    what the server lists again."""
    with Setup(tmp_path, relay=True) as s:
        relists = s.daemon.metric("meshsync_relists_total")
        churn = Churn(s.rk.kubeconfig, ["churn-0", "churn-1"], rate=100).start()
        try:
            churn.wait_writes(200)
            s.relay.hole()
            holed_at = time.monotonic()
            wait_until(lambda: s.daemon.metric("meshsync_watch_silences_total") >= 1,
                       "a silent watch noticed", timeout=TIMEOUT)
            noticed = time.monotonic() - holed_at
            churn.wait_writes(churn.writes + 200)
        finally:
            churn.stop()
        waited, state = s.settle("the cluster after the black hole")
        assert "watch silent for" in s.daemon.log()
        print(f"noticed {noticed:.1f} s after the hole; {churn.writes} writes; picture equal "
              f"to the {len(state)} objects {waited:.2f} s after the churn; relists "
              f"{relists} -> {s.daemon.metric('meshsync_relists_total')}")
