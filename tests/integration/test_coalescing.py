# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""The coalescing queue against a real nats-server and kubesim: a burst of 100,000 updates to
1,000 pods (and deletions among them) while the broker hangs (SIGSTOP). Once it is back, the
consumer's picture must agree with kubesim's, resourceVersions included, every deleted pod
must have arrived as DELETED, and far fewer messages than updates must have been sent: the
updates of a pod waiting for the broker merged into one. Waits are for state (the picture,
/readyz, /metrics); nothing is timed. About 30 s on a 2-core machine: suite 'scale'.
"""

import re
import signal

from broker_faults import Picture, metric, server_conf_file, truth
from kubesim import Kubesim
from nats_server import NatsServer, wait_until
from test_broker_faults import TIMEOUT, assert_agrees, metrics, wait_ready
from test_broker_mode import Daemon

PODS = 1000
DELETED = 100  # pods deleted half-way through the burst, their updates still waiting
FIRST = 50  # rounds writing every pod once before the deletions
SECOND = 56  # and after them: 50,000 + 50,400 updates
# The replay window's bound: while the broker is away the writer takes events into the
# window until it holds this much, and only then says it can take no more.
WINDOW = 64 << 20
MAX_MESSAGES = 20000


def sample(text, name, **labels):
    """The value of the sample of @name with exactly @labels, or 0."""
    want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        m = re.match(r"^(\w+)(?:\{(.*)\})? (\S+)$", line)
        if m and m.group(1) == name and ",".join(sorted((m.group(2) or "").split(","))) == want:
            return float(m.group(3))
    return 0.0


def pod_names(sim):
    status, body = sim.request("GET", "/api/v1/pods")
    assert status == 200
    return sorted((item["metadata"]["namespace"], item["metadata"]["name"],
                   item["metadata"]["uid"]) for item in body["items"])


def test_burst_while_broker_hangs_is_coalesced(tmp_path):
    with Kubesim(pods=PODS, namespaces=5) as sim, NatsServer("-c", server_conf_file()) as nats:
        picture = Picture(nats.port)
        picture.start()
        assert picture.subscribed.wait(30)
        try:
            # strict readiness: /readyz then tells when the hang was noticed
            with Daemon(str(tmp_path), sim.kubeconfig, nats.url, "-outputResources",
                        "pod", "--readiness=strict") as run:
                wait_ready(run)
                assert_agrees(picture, sim, run, "the initial sync")
                pods = pod_names(sim)
                assert len(pods) == PODS
                before = picture.counts()["messages"]
                read_before = sample(metrics(run), "meshsync_events_total", kind="Pod",
                                     type="MODIFIED")

                nats.proc.send_signal(signal.SIGSTOP)
                try:
                    # the worst case, made certain: the hang noticed first, so that the
                    # replay window fills up (64 MiB) before the writer says it can take
                    # no more and the updates merge
                    wait_ready(run, ready=False)
                    first = sim.touch("v1", "Pod", rounds=FIRST)
                    for namespace, name, _ in pods[:DELETED]:
                        sim.delete("v1", "Pod", name, namespace)
                    second = sim.touch("v1", "Pod", rounds=SECOND)
                    updates = first["events"] + second["events"]
                    assert updates == PODS * FIRST + (PODS - DELETED) * SECOND
                    assert updates > 100000

                    # every update read while the broker still hangs: handed to the
                    # output (the buffers and the window before the writer said no more),
                    # merged, or waiting; the informers never stopped reading
                    def all_read():
                        text = metrics(run)
                        read = (sample(text, "meshsync_events_total", kind="Pod",
                                       type="MODIFIED") - read_before +
                                metric(text, "meshsync_delivery_coalesced_total") +
                                metric(text, "meshsync_delivery_queue_events"))
                        return read >= updates and metric(text, "meshsync_objects") == (
                            PODS - DELETED)
                    wait_until(all_read, "the burst read", timeout=TIMEOUT, proc=run.proc,
                               log=run.log)
                    held = metrics(run)
                    assert metric(held, "meshsync_delivery_queue_objects") > 0
                    assert metric(held, "meshsync_delivery_coalesced_total") > updates / 2
                finally:
                    nats.proc.send_signal(signal.SIGCONT)

                wait_ready(run)
                rv, state = assert_agrees(picture, sim, run, "after the burst")
                assert len(state) == PODS - DELETED
                text = metrics(run)
                # no relist: everything came through the watch, and the queue
                assert metric(text, "meshsync_relists_total") == 0
                assert sample(text, "meshsync_delivery_drops_total",
                              reason="queue_full") == 0
                wait_until(lambda: metric(metrics(run), "meshsync_delivery_queue_events") == 0,
                           "the queue empty", timeout=TIMEOUT, proc=run.proc, log=run.log)
                latest = picture.latest()
                for _, name, uid in pods[:DELETED]:
                    assert latest.get(uid, (0, False))[1], f"no DELETED for {name}"
                for uid, want in state.items():
                    assert latest[uid] == (want, False), (uid, latest[uid], want)
                counts = picture.counts()
                sent = counts["messages"] - before
                size = counts["bytes"] / counts["messages"]
                resent = metric(text, "meshsync_broker_resent_messages_total")
                print(f"{updates} updates and {DELETED} deletions while the broker hung: "
                      f"{sent} messages of {size:.0f} bytes, "
                      f"{metric(text, 'meshsync_delivery_coalesced_total'):.0f} merged, "
                      f"{resent:.0f} re-sent")
                # at most: what the window held, one message per pod and deletion, and the
                # re-sends of what the hung server had not confirmed
                assert sent <= WINDOW / size + PODS + DELETED + resent, sent
                assert sent < MAX_MESSAGES, f"{sent} messages for {updates} updates"
        finally:
            picture.stop()
