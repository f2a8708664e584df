# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""Broker faults under churn: the daemon against kubesim changing pods all the time, a
nats-server that hangs (SIGSTOP) or dies (SIGKILL) for a while or a connection to it that a
relay black-holes for good, and a consumer that builds the cluster's picture from
meshery.meshsync.core (tests/lib/broker_faults.py). Afterwards the picture must agree with
kubesim's own state: every pod present with its resourceVersion, nothing deleted left over. Every wait is for state (the picture, /readyz, /metrics); the only
timed part is how long the fault lasts.

bench/soak runs the same scenarios longer, with more pods and a faster churn.
"""

import json
import signal
import time
import urllib.request

from broker_faults import (Picture, RssSampler, compare, kubesim_rv, metric, metric_type,
                           published_at_exit, server_conf_file, truth, wait_for_all,
                           wait_for_picture)
from kubesim import Kubesim
from nats_server import NatsServer, wait_until
from test_broker_mode import Daemon, GatedProxy

TIMEOUT = 120.0
PODS = 1000
CHURN = 400  # events per second
HANG = 12.0  # seconds the server stays stopped
SEED = "11"
# The black hole needs no pile-up to be meaningful: a few hundred pods at 100 writes/s.
HOLE_PODS = 300
HOLE_CHURN = 100


def churning_sim(pods=PODS, churn=CHURN):
    return Kubesim(pods=pods, namespaces=5, extra=["--churn", str(churn), "--seed", SEED])


def wait_ready(run, ready=True):
    want = 200 if ready else 503
    wait_until(lambda: run.http("/readyz")[0] == want, f"/readyz answering {want}",
               timeout=TIMEOUT, proc=run.proc, log=run.log)


def metrics(run):
    status, text = run.http("/metrics")
    assert status == 200
    return text


def wait_metric(run, name, predicate, what):
    return wait_until(lambda: predicate(metric(metrics(run), name) or 0), what,
                      timeout=TIMEOUT, proc=run.proc, log=run.log)


def assert_agrees(picture, sim, run, what):
    rv, state, diff, _ = wait_for_picture(picture, sim, what, TIMEOUT, run.proc, run.log)
    summary = {k: (len(v), v[:3]) for k, v in diff.items()}
    if any(diff.values()):
        # what arrived for a few of the differing objects, for the failure report
        seen = {uid: (state.get(uid), picture.history.get(uid))
                for uid in (diff["missing"][:3] + diff["extra"][:3] + diff["stale"][:3])}
        raise AssertionError(f"{what}: the picture at rv {rv} differs: {summary}\n"
                             f"truth and arrivals: {seen}\npicture: {picture.counts()}\n"
                             f"{metrics(run) if run.proc.poll() is None else ''}\n"
                             f"{run.log()[-6000:]}")
    return rv, state


def assert_all_arrived(picture, run):
    """Stops the daemon (which waits for the broker to confirm what it holds) and checks
    that every event it ever published reached the consumer."""
    assert run.terminate() == 0
    published = published_at_exit(run.log())
    assert wait_for_all(picture, published, TIMEOUT) == published, (
        f"published {published}, the consumer got {picture.unique()} of them")
    return published


def assert_broker_metrics(text):
    assert metric_type(text, "meshsync_broker_window_bytes") == "gauge"
    assert metric_type(text, "meshsync_broker_resent_messages_total") == "counter"
    assert metric_type(text, "meshsync_broker_confirmations_total") == "counter"
    assert metric(text, "meshsync_broker_confirmations_total") > 0


def test_hung_broker_loses_nothing(tmp_path):
    with churning_sim() as sim, NatsServer("-c", server_conf_file()) as nats:
        picture = Picture(nats.port)
        picture.start()
        assert picture.subscribed.wait(30)
        try:
            # strict readiness: /readyz then tells whether the broker is connected now
            with Daemon(str(tmp_path), sim.kubeconfig, nats.url, "-outputResources",
                        "pod", "--readiness=strict") as run:
                wait_ready(run)
                assert_agrees(picture, sim, run, "the initial sync")
                before = picture.counts()

                nats.proc.send_signal(signal.SIGSTOP)
                stopped = time.monotonic()
                try:
                    # noticed while the server still hangs, by pings, not by a socket error
                    wait_ready(run, ready=False)
                    noticed = time.monotonic() - stopped
                    assert noticed < HANG, f"stale connection noticed after {noticed:.1f} s"
                    time.sleep(max(0.0, HANG - (time.monotonic() - stopped)))
                finally:
                    nats.proc.send_signal(signal.SIGCONT)

                wait_ready(run)
                wait_metric(run, "meshsync_broker_reconnects_total", lambda v: v >= 1,
                            "the reconnection")
                rv, state = assert_agrees(picture, sim, run, "after the hang")
                text = metrics(run)
                assert_broker_metrics(text)
                assert metric(text, "meshsync_broker_resent_messages_total") > 0
                after = picture.counts()
                # the unconfirmed window went again: some versions arrived twice
                assert after["duplicates"] > before["duplicates"]
                published = assert_all_arrived(picture, run)
                after = picture.counts()
                print(f"hang {HANG:.0f} s noticed after {noticed:.1f} s; {len(state)} pods at "
                      f"rv {rv}; {published} events published, {after['messages']} "
                      f"messages, {after['duplicates']} duplicates, {after['older']} older "
                      f"than one seen before, {len(picture.last_not_newest())} uids whose "
                      f"last message is older; re-sent "
                      f"{metric(text, 'meshsync_broker_resent_messages_total'):.0f}")
        finally:
            picture.stop()


def test_killed_broker_loses_nothing(tmp_path):
    with churning_sim() as sim, NatsServer("-c", server_conf_file()) as nats:
        # meshsync goes through the gate, so that it gets back to the restarted server only
        # once the consumer subscribed there again: core NATS drops what nobody listens to
        proxy = GatedProxy(nats.port)
        picture = Picture(nats.port)
        picture.start()
        assert picture.subscribed.wait(30)
        try:
            with Daemon(str(tmp_path), sim.kubeconfig, proxy.url, "-outputResources",
                        "pod", "--readiness=strict") as run:
                wait_ready(run)
                assert_agrees(picture, sim, run, "the initial sync")

                proxy.cut()
                nats.stop()
                wait_ready(run, ready=False)
                # events pile up in the window while the broker is gone
                wait_metric(run, "meshsync_broker_window_bytes", lambda v: v > 4 << 20,
                            "4 MiB of events held")
                connections = picture.connections
                nats.start()
                wait_until(lambda: picture.connections > connections and
                           picture.subscribed.is_set(), "the consumer back on the server",
                           timeout=TIMEOUT)
                proxy.open = True

                wait_ready(run)
                rv, state = assert_agrees(picture, sim, run, "after the restart")
                text = metrics(run)
                assert_broker_metrics(text)
                assert metric(text, "meshsync_broker_reconnects_total") >= 1
                # No re-send count is asserted here: a socket that fails at once may leave
                # nothing unconfirmed when it goes (what it had was confirmed, what came
                # after was held, not sent); the hung broker above always leaves some.
                # the events held while the broker was gone are sent, then confirmed
                wait_metric(run, "meshsync_broker_window_bytes", lambda v: v < 4 << 20,
                            "the window confirmed")
                # what the dead server had confirmed and the consumer got needs no re-send,
                # so the last message of every pod is its newest: nothing came from an
                # older connection
                assert picture.last_not_newest() == []
                published = assert_all_arrived(picture, run)
                counts = picture.counts()
                print(f"{len(state)} pods at rv {rv}; {published} events published, "
                      f"{counts['messages']} messages, {counts['duplicates']} duplicates; "
                      f"re-sent {metric(text, 'meshsync_broker_resent_messages_total'):.0f}")
        finally:
            picture.stop()
            proxy.close()


def test_black_holed_broker_connection_loses_nothing(tmp_path):
    """A NAT gateway that forgot the broker connection: the relay drops what either side
    sends on it, closes nothing, and lets new connections through. No socket error ever
    comes, so only the daemon's pings (every second, three missed) can give the connection
    up; it must then reconnect on a new one and re-send what the dead one left unconfirmed."""
    with churning_sim(HOLE_PODS, HOLE_CHURN) as sim, \
            NatsServer("-c", server_conf_file()) as nats:
        proxy = GatedProxy(nats.port)
        picture = Picture(nats.port)
        picture.start()
        assert picture.subscribed.wait(30)
        try:
            with Daemon(str(tmp_path), sim.kubeconfig, proxy.url, "-outputResources",
                        "pod", "--readiness=strict") as run:
                first_rv = kubesim_rv(sim)
                rss = RssSampler(run.proc.pid)
                rss.start()
                wait_ready(run)
                assert_agrees(picture, sim, run, "the initial sync")
                assert metric(metrics(run), "meshsync_broker_reconnects_total") == 0
                before = picture.counts()

                assert relayed_connections(nats) == 1
                rss.phase = "during"
                proxy.hole()
                holed = time.monotonic()
                # the held connection stays black-holed for good: only the pings can give it
                # up (strict readiness then answers 503 until the reconnection, which waits
                # the 2 s between attempts on the same server)
                wait_ready(run, ready=False)
                noticed = time.monotonic() - holed
                wait_metric(run, "meshsync_broker_reconnects_total", lambda v: v >= 1,
                            "the reconnection past the black hole")
                back = time.monotonic() - holed
                rss.phase = "after"
                wait_until(lambda: relayed_connections(nats) == 2,
                           "the held connection and the new one on the server",
                           timeout=TIMEOUT, proc=run.proc, log=run.log)

                wait_ready(run)
                rv, state = assert_agrees(picture, sim, run, "after the black hole")
                agreed = time.monotonic() - holed
                # what the held connection swallowed was never confirmed: it goes again; a
                # confirmation whose PING the hole swallowed holds the next one for up to its
                # 10 s timeout, so both are waited for, not read at once
                wait_metric(run, "meshsync_broker_resent_messages_total", lambda v: v > 0,
                            "the unconfirmed events sent again")
                wait_metric(run, "meshsync_broker_confirmations_total", lambda v: v > 0,
                            "a confirmation")
                text = metrics(run)
                assert_broker_metrics(text)
                assert metric(text, "meshsync_broker_reconnects_total") == 1
                after = picture.counts()
                assert after["messages"] > before["messages"]
                # the sampler ends with the daemon
                published = assert_all_arrived(picture, run)
                after = picture.counts()
                print(f"black hole given up after {noticed:.1f} s, reconnected after "
                      f"{back:.1f} s, picture agreed after {agreed:.1f} s (machine under "
                      f"other load); {kubesim_rv(sim) - first_rv} kubesim events; RSS "
                      f"before/during/after {rss.peak('before') // 1024}/"
                      f"{rss.peak('during') // 1024}/{rss.peak('after') // 1024} MiB; "
                      f"{len(state)} pods at rv {rv}; {published} events published, "
                      f"{after['messages']} messages, {after['duplicates']} duplicates; "
                      f"re-sent {metric(text, 'meshsync_broker_resent_messages_total'):.0f}")
        finally:
            picture.stop()
            proxy.close()


def relayed_connections(nats):
    """How many client connections nats-server holds besides the consumer's own."""
    with urllib.request.urlopen(nats.monitor + "/connz", timeout=10) as resp:
        connz = json.load(resp)
    return sum(1 for conn in connz.get("connections", []) if conn.get("name") != "picture")


def test_truth_is_one_consistent_list(tmp_path):
    """The harness's own premise: one list is a consistent snapshot, and the picture's view
    of it is exact (no daemon involved)."""
    with churning_sim() as sim:
        rv, state = truth(sim)
        assert len(state) >= PODS * 0.8
        assert all(v <= rv for v in state.values())
        empty = Picture(1)
        diff = compare(empty, rv, state)
        assert len(diff["missing"]) == len(state) and not diff["extra"]
