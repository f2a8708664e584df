# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""What happens to a real API server under meshsync, and what the consumer's picture becomes:
etcd compacted past a watch that fell behind, the API server restarted in the middle of
churn, another cluster answering at the same URL. meshsync runs in broker mode and a
consumer on meshery.meshsync.core builds its picture; every test ends with that picture
equal to what the API server lists (uids and resourceVersions).

Each test has a cluster of its own (they stop, restart and replace it); one at a time."""

import signal
import time

import kube_seed
from realkube_run import (TIMEOUT, Churn, Consumer, Daemon, GatedProxy, cluster_uid,
                          current_rv, kubeconfig_for, nats_server, start_realkube, truth,
                          wait_for_subscription, wait_picture, wait_until)

PODS = 300

# kube-apiserver waits for its requests to end before it stops, long-running ones (watches)
# included, up to its request timeout (60 s): with meshsync's watches open, a restart would
# take a minute (and realkube gives up on a stop after 60 s). With --shutdown-send-retry-after
# it drains the short requests (answering new ones 429 with Retry-After meanwhile), then
# gives the open connections 2 s: a stop of a few seconds, as an HA control plane does it.
QUICK_STOP = "--apiserver-arg=--shutdown-send-retry-after=true"


class Setup:
    """A cluster seeded with PODS pods, a nats-server, a consumer and meshsync (with
    @flags, against @kubeconfig when given: a relay's), synced and pictured."""

    def __init__(self, tmp_path, *realkube_flags, kubeconfig=None, relay=False, flags=()):
        self.rk = start_realkube(*realkube_flags)
        self.nats = self.consumer = self.daemon = self.relay = None
        try:
            kube_seed.seed_pods(self.rk.kubeconfig, PODS, namespaces=3, threads=4,
                                prefix="seed")
            self.client = kube_seed.Client(self.rk.kubeconfig)
            self.nats = nats_server()
            self.consumer = Consumer(self.nats.port)
            self.consumer.start()
            wait_for_subscription(self.consumer)
            kubeconfig = self.rk.kubeconfig
            if relay:
                self.relay = GatedProxy(self.rk.port)
                kubeconfig = kubeconfig_for(self.rk, str(tmp_path / "relayed.kubeconfig"),
                                            port=self.relay.port)
            self.daemon = Daemon(str(tmp_path), kubeconfig, self.nats.url, *flags)
            self.daemon.wait_synced()
            self.settle("the cluster after the initial sync")
        except BaseException:
            self.close()
            raise

    def truth(self):
        return truth(self.client)

    def settle(self, what, timeout=TIMEOUT):
        return wait_picture(self.consumer, self.truth, what, timeout=timeout,
                            daemon=self.daemon)

    def close(self):
        if self.daemon is not None:
            self.daemon.__exit__(None, None, None)
        if self.relay is not None:
            self.relay.close()
        if self.consumer is not None:
            self.consumer.close()
        if self.nats is not None:
            self.nats.stop()
        self.rk.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def test_watch_behind_etcd_compaction_relists(tmp_path):
    """meshsync frozen (SIGSTOP) and its connections dropped while 1,500 writes happen and
    etcd is compacted past every resourceVersion it holds: thawed, each watch is refused
    with 410 Expired, the types are listed again, and the picture becomes the cluster.

    The API server serves watches from etcd here (--watch-cache=false): its watch cache
    keeps at least 75 s of history whatever etcd compacts, so a cached watch would resume
    quietly. A frozen client on a connection still open does not fall out of history
    either (the server buffers its events and delivers them on SIGCONT), hence the relay
    between meshsync and the server, which drops the connections."""
    with Setup(tmp_path, "--etcd-compaction-interval", "1s", "--watch-cache=false",
               relay=True) as s:
        relists = s.daemon.metric("meshsync_relists_total")
        frozen_at = current_rv(s.client)
        s.daemon.proc.send_signal(signal.SIGSTOP)
        try:
            s.relay.cut()
            churn = Churn(s.rk.kubeconfig, ["churn-0", "churn-1"], rate=300).start()
            churn.wait_writes(1500)
            churn.stop()

            def compacted():
                events = s.rk.watch(f"/api/v1/pods?watch=1&resourceVersion={frozen_at}",
                                    timeout=10)
                try:
                    event = next(events)
                finally:
                    events.close()
                return event["type"] == "ERROR" and event["object"]["code"] == 410

            wait_until(compacted, f"etcd compacted past resourceVersion {frozen_at}",
                       TIMEOUT, log=s.rk.log, interval=0.2)
            s.relay.open = True
        finally:
            s.daemon.proc.send_signal(signal.SIGCONT)
        waited, state = s.settle("the cluster after the compaction")
        log = s.daemon.log()
        expired = [line for line in log.splitlines()
                   if "relisting" in line and ("410" in line or "xpired" in line
                                               or "too old" in line)]
        assert expired, log[-6000:]
        assert any("pods.v1." in line for line in expired), expired
        assert s.daemon.metric("meshsync_relists_total") > relists
        # a relist reconciles: what the consumer held comes as MODIFIED or DELETED
        assert s.consumer.readded_since(0) == []
        print(expired[0])
        print(f"{len(expired)} watches expired; picture equal to the {len(state)} objects "
              f"{waited:.2f} s after the thaw")


def test_apiserver_restart_mid_churn(tmp_path):
    """The API server stopped (SIGTERM) and started again on the same data dir while churn
    writes through it: nothing is lost, and nothing the consumer already held is announced
    again as ADDED. The bound is zero: the cluster is the same, so a watch resumed from its
    resourceVersion, or a relist (which reconciles: MODIFIED for what changed, nothing for
    what did not), never has cause to say ADDED for an object the consumer knows."""
    with Setup(tmp_path, QUICK_STOP) as s:
        restarts = s.daemon.metric("meshsync_watch_restarts_total")
        churn = Churn(s.rk.kubeconfig, ["churn-0", "churn-1"], rate=200,
                      tolerate_outage=True).start()
        try:
            churn.wait_writes(800)
            stopping = time.monotonic()
            assert s.rk.restart() == 0, s.rk.log()[-3000:]
            print(f"restarted in {time.monotonic() - stopping:.1f} s")
            after = churn.writes
            # the churn goes on through the restarted server
            churn.wait_writes(after + 800)
        finally:
            churn.stop()
        waited, state = s.settle("the cluster after the restart")
        readded = s.consumer.readded_since(0)
        unchanged = [r for r in readded if r[1] == r[2]]
        assert readded == [], (f"{len(readded)} ADDED for objects the consumer held "
                               f"({len(unchanged)} unchanged): {readded[:5]}")
        assert churn.outage_errors > 0, "the restart interrupted no write"
        assert s.daemon.metric("meshsync_watch_restarts_total") > restarts
        print(f"{churn.writes} writes ({churn.outage_errors} retried over the restart); "
              f"picture equal to the {len(state)} objects {waited:.2f} s after the churn")


def test_replaced_cluster(tmp_path):
    """Another cluster at the same URL (a fresh etcd behind the same certificates and
    tokens), starting slowly as on a loaded node, so that meshsync meets it before it is
    ready (its discovery still without RBAC, storage and networking): meshsync notices it
    (kube-system's uid changed), retracts every object of the old cluster exactly once under
    the old cluster_id, waits for the new server's /readyz, and the picture becomes the new
    cluster, every type of it, published under the new cluster_id and never retracted."""
    with Setup(tmp_path, QUICK_STOP) as s:
        old_cluster = cluster_uid(s.client)
        old_uids = set(s.consumer.picture())
        mark = s.consumer.event_count()
        assert s.rk.replace_cluster_starved() == 0
        s.rk.wait_ready()
        kube_seed.seed_pods(s.rk.kubeconfig, 150, namespaces=2, threads=4, prefix="new")
        new_cluster = cluster_uid(s.client)
        assert new_cluster != old_cluster
        waited, state = s.settle("the new cluster, and nothing of the old")
        assert not old_uids & set(state)

        # the new cluster's objects under its own id: what "noticed" means to a consumer
        # (given the time of a few identity checks, 5 s apart, to get there)
        def wrong_ids():
            latest = {}
            for kind, uid, _, cluster, *_ in s.consumer.events_since(mark):
                latest[uid] = cluster
            return {u: latest.get(u) for u in s.consumer.picture()
                    if latest.get(u) != new_cluster}

        try:
            wait_until(lambda: not wrong_ids(), "every object under the new cluster_id", 30,
                       proc=s.daemon.proc, log=s.daemon.log)
        except AssertionError:
            wrong = wrong_ids()
            notes = [line for line in s.daemon.log().splitlines()
                     if "replaced" in line or "went back in time" in line]
            raise AssertionError(
                f"{len(wrong)} of the {len(state)} objects of the new cluster published "
                f"under cluster_id {set(wrong.values())}, not the new cluster's "
                f"{new_cluster!r} (the old one was {old_cluster!r}); meshsync said:\n"
                + "\n".join(notes)) from None
        waited, state = s.settle("the new cluster under its own id")
        events = s.consumer.events_since(mark)
        log = s.daemon.log()
        notes = [line for line in log.splitlines() if "replaced" in line]
        assert (f"was replaced (kube-system uid {new_cluster}, was {old_cluster})"
                in log), "\n".join(notes)
        deleted = {}
        for kind, uid, _, cluster, *_ in events:
            if kind == "DELETED":
                deleted.setdefault(uid, []).append(cluster)
        assert {u: c for u, c in deleted.items() if u in old_uids} == \
            {u: [old_cluster] for u in old_uids}
        assert not set(deleted) & set(state), "an object of the new cluster retracted"
        print(f"{len(old_uids)} old objects retracted, {len(state)} new ones pictured "
              f"{waited:.2f} s after the new cluster was seeded")


def test_started_beside_a_starting_server(tmp_path):
    """meshsync started while its API server is still starting (on a loaded node: the port
    answers, the post-start hooks have not yet put RBAC, storage or networking into
    discovery): it waits for /readyz instead of skipping the types a partial discovery lacks,
    so the picture becomes the whole cluster, ClusterRoles and StorageClasses included."""
    rk = start_realkube(QUICK_STOP)
    nats = consumer = daemon = None
    try:
        # a copy: the server writes its own again once it is ready
        kubeconfig = kubeconfig_for(rk, str(tmp_path / "starting.kubeconfig"))
        nats = nats_server()
        consumer = Consumer(nats.port)
        consumer.start()
        wait_for_subscription(consumer)
        assert rk.replace_cluster_starved() == 0
        daemon = Daemon(str(tmp_path), kubeconfig, nats.url)
        rk.wait_ready()
        client = kube_seed.Client(rk.kubeconfig)
        kube_seed.seed_pods(rk.kubeconfig, 60, namespaces=2, threads=4, prefix="late")
        daemon.wait_synced()
        waited, state = wait_picture(consumer, lambda: truth(client),
                                     "the whole cluster, ClusterRoles included", daemon=daemon)
        kinds = {record[4] for record in consumer.events_since(0)}
        assert "ClusterRole" in kinds, sorted(kinds)
    finally:
        if daemon is not None:
            daemon.__exit__(None, None, None)
        if consumer is not None:
            consumer.close()
        if nats is not None:
            nats.stop()
        rk.stop()
