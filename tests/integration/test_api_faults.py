# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""API-server faults under churn, in broker mode: watches dropped every two seconds, a storm
of 410s with the history compacted, 500/429 bursts with Retry-After, a slow API, and the
daemon itself stopped (SIGTERM) or killed (SIGKILL) in the middle of its initial sync and
started again (black-holed connections are in test_black_holes.py). Each test ends with the
consumer's picture, built from meshery.meshsync.core, equal to kubesim's state (every pod at
its resourceVersion, nothing extra), and every event the daemon published received. bench/soak runs the same faults longer and bigger."""

import signal
import time

from broker_faults import Picture, published_at_exit, server_conf_file, wait_for_all
from kubesim import Kubesim
from nats_server import NatsServer
from test_broker_faults import (TIMEOUT, assert_agrees, assert_all_arrived, churning_sim,
                                metric, metrics, wait_ready)
from test_broker_mode import Daemon

FAULT_SECONDS = 10.0
POD_PATH = "/api/v1/pods"


def run_with_churn(tmp_path, fault):
    """The daemon against churning kubesim; @fault(sim, run) runs for FAULT_SECONDS; then the
    picture must agree and every event arrive."""
    with churning_sim() as sim, NatsServer("-c", server_conf_file()) as nats:
        picture = Picture(nats.port)
        picture.start()
        assert picture.subscribed.wait(30)
        try:
            with Daemon(str(tmp_path), sim.kubeconfig, nats.url, "-outputResources",
                        "pod") as run:
                wait_ready(run)
                assert_agrees(picture, sim, run, "the initial sync")
                fault(sim, run)
                wait_ready(run)
                assert_agrees(picture, sim, run, "after the fault")
                assert_all_arrived(picture, run)
                return run
        finally:
            picture.stop()


def every(seconds, interval, action):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        action()
        time.sleep(interval)


def test_watches_dropped_every_two_seconds(tmp_path):
    restarts = []

    def fault(sim, run):
        every(FAULT_SECONDS, 2.0, lambda: sim.admin("close-watches"))
        restarts.append(metric(metrics(run), "meshsync_watch_restarts_total"))

    run_with_churn(tmp_path, fault)
    assert restarts[0] >= 3


def test_410_storm_with_compaction(tmp_path):
    relists = []

    def fault(sim, run):
        def storm():
            # the history forgotten, and the watches that resume answered 410 as a real
            # server answers a version it no longer has
            sim.admin("compact")
            sim.arm_fault("watch", code=410, count=2, path=POD_PATH)
            sim.admin("close-watches")

        every(FAULT_SECONDS, 2.0, storm)
        relists.append(metric(metrics(run), "meshsync_relists_total"))

    run_with_churn(tmp_path, fault)
    assert relists[0] >= 1


def test_500_and_429_bursts(tmp_path):
    armed = []

    def fault(sim, run):
        def burst():
            # watches only: the test reads the truth with lists of the same path
            armed.append(sim.arm_fault("watch", code=500, count=3, path=POD_PATH))
            armed.append(sim.arm_fault("watch", code=429, retry_after=1, count=3,
                                       path=POD_PATH))
            sim.admin("close-watches")

        every(FAULT_SECONDS, 3.0, burst)

    run_with_churn(tmp_path, fault)
    assert sum(1 for f in armed if f is not None) >= 6


def test_slow_api(tmp_path):
    def fault(sim, run):
        sim.admin("delay", ms="300")
        sim.admin("close-watches")
        time.sleep(FAULT_SECONDS)
        sim.admin("delay", ms="0")

    run_with_churn(tmp_path, fault)


def restart_mid_initial_sync(tmp_path, how):
    """A big cluster without churn: the daemon is stopped or killed once part of the initial
    state is out, and started again; the second run must complete the picture."""
    with Kubesim(pods=5000, namespaces=10) as sim, \
            NatsServer("-c", server_conf_file()) as nats:
        picture = Picture(nats.port)
        picture.start()
        assert picture.subscribed.wait(30)
        try:
            with Daemon(str(tmp_path), sim.kubeconfig, nats.url, "-outputResources",
                        "pod") as first:
                deadline = time.monotonic() + TIMEOUT
                while picture.counts()["uids"] < 500:
                    assert first.proc.poll() is None, first.log()
                    assert time.monotonic() < deadline, "no events from the first run"
                    time.sleep(0.01)
                first.proc.send_signal(how)
                status = first.wait_exit()
                expected = 0 if how == signal.SIGTERM else -signal.SIGKILL
                assert status == expected, first.log()
                partial = picture.counts()["uids"]
                if how == signal.SIGTERM:
                    # stopped cleanly: everything it published reached the consumer
                    published = published_at_exit(first.log())
                    assert wait_for_all(picture, published, TIMEOUT) == published
            with Daemon(str(tmp_path), sim.kubeconfig, nats.url, "-outputResources",
                        "pod") as second:
                wait_ready(second)
                rv, state = assert_agrees(picture, sim, second, "after the restart")
                assert partial < len(state), "the first run was not stopped mid-sync"
                assert second.terminate() == 0
        finally:
            picture.stop()


def test_sigterm_mid_initial_sync(tmp_path):
    restart_mid_initial_sync(tmp_path, signal.SIGTERM)


def test_sigkill_mid_initial_sync(tmp_path):
    restart_mid_initial_sync(tmp_path, signal.SIGKILL)
