# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""API-server connections black-holed, as a NAT gateway or a firewall that forgets them does
(no FIN, no RST; new connections pass), through the relay of tests/lib/gated_proxy.py: a watch
under churn, and an answer in the middle of the initial sync. Each ends with the consumer's
picture, built from meshery.meshsync.core, equal to kubesim's state. Mostly the 30 s silence
bound waited out, so they run beside the other tests rather than alone (tests/integration/
meson.build); doc/durability.md, "Silent connections", says how the bounds are chosen."""

import time

from broker_faults import GatedProxy, Picture, server_conf_file
from kubesim import Kubesim
from nats_server import NatsServer
from test_broker_faults import (SEED, assert_agrees, assert_all_arrived, metric, metrics,
                                wait_metric, wait_ready)
from test_broker_mode import Daemon


def relayed(sim, nats, tmp_path):
    """The relay in front of kubesim, a kubeconfig that goes through it, and the consumer's
    picture subscribed."""
    port = sim.url.rsplit(":", 1)[1].rstrip("/")
    relay = GatedProxy(int(port))
    config = tmp_path / "relayed.kubeconfig"
    config.write_text(open(sim.kubeconfig, encoding="utf-8").read().replace(
        f":{port}", f":{relay.port}"))
    picture = Picture(nats.port)
    picture.start()
    assert picture.subscribed.wait(30)
    return relay, config, picture


def test_black_holed_watch(tmp_path):
    """A NAT gateway that forgets the daemon's connections: the relay between the daemon and
    kubesim drops everything on the connections it holds without closing them, while new
    connections pass. The silent watch must be abandoned and resumed at its resourceVersion,
    not relisted, and the picture must agree again with the churn going on."""
    with Kubesim(pods=300, namespaces=5, extra=["--churn", "100", "--seed", SEED]) as sim, \
            NatsServer("-c", server_conf_file()) as nats:
        relay, config, picture = relayed(sim, nats, tmp_path)
        try:
            with Daemon(str(tmp_path), str(config), nats.url, "-outputResources",
                        "pod") as run:
                wait_ready(run)
                assert_agrees(picture, sim, run, "the initial sync")
                relists = metric(metrics(run), "meshsync_relists_total") or 0
                relay.hole()
                holed_at = time.monotonic()
                wait_metric(run, "meshsync_watch_silences_total", lambda n: n >= 1,
                            "a silent watch noticed")
                noticed = time.monotonic() - holed_at
                assert_agrees(picture, sim, run, "after the black hole")
                agreed = time.monotonic() - holed_at
                assert "watch silent for" in run.log()
                # resumed where it was: the history was there, no list was needed
                assert metric(metrics(run), "meshsync_relists_total") == relists
                assert_all_arrived(picture, run)
                print(f"black hole noticed after {noticed:.1f} s, picture agreeing after "
                      f"{agreed:.1f} s")
        finally:
            picture.stop()
            relay.close()


def test_black_holed_initial_list(tmp_path):
    """A connection black-holed in the middle of the initial sync, 128 KiB into an answer (the
    pods' streaming list, gzipped, or a discovery answer): whatever stopped arriving is given
    up after 30 s without a byte and asked again on a new connection, and the initial sync
    completes with the picture equal to the truth."""
    with Kubesim(pods=1000, namespaces=5, extra=["--churn", "20", "--seed", SEED]) as sim, \
            NatsServer("-c", server_conf_file()) as nats:
        relay, config, picture = relayed(sim, nats, tmp_path)
        relay.hole_after(128 * 1024)
        try:
            with Daemon(str(tmp_path), str(config), nats.url, "-outputResources",
                        "pod") as run:
                started = time.monotonic()
                wait_metric(run, "meshsync_ready", lambda n: n == 1, "the initial sync")
                synced = time.monotonic() - started
                log = run.log()
                # a streaming list that went silent is counted as a silent watch; an answer
                # whose headers or body stopped says so (which one depends on where the 128 KiB
                # fell: the connection may have carried discovery before the pods)
                assert (metric(metrics(run), "meshsync_watch_silences_total") or 0) >= 1 or \
                    "its connection is given up" in log, log[-4000:]
                assert_agrees(picture, sim, run, "after the black-holed list")
                assert_all_arrived(picture, run)
                print(f"initial sync through a list black-holed mid-body: ready after "
                      f"{synced:.1f} s")
        finally:
            picture.stop()
            relay.close()
