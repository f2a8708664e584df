# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""Infrastructure detection and tier 3 (issue 23 §2), against kubesim and a real nats-server.

kubesim installs and uninstalls istio (watched here, tier 3) and linkerd (delegated to its
adapter) at run time; a subscriber checks what reaches meshery.meshsync.core and
meshery.meshsync.infra-detected. Every wait is for a message, a metric or a process exit.
"""

import collections
import json
import os

from kubesim import Kubesim
from meshsync_run import DAEMON, HEALTH_FLAGS, TIMEOUT, DaemonProcess
from nats_server import NatsServer
from test_broker_mode import request, wait_for_listener

CORE = "meshery.meshsync.core"
INFRA = "meshery.meshsync.infra-detected"
STORE_REPLY = "store.reply"
ENVELOPE_KEYS = ["ObjectType", "EventType", "Request", "Object"]


class Daemon(DaemonProcess):
    """meshsync in broker mode against @kubeconfig and @broker_url."""

    def __init__(self, tmpdir, kubeconfig, broker_url, *flags):
        argv = [DAEMON, "-output", "broker", "--kubeconfig", kubeconfig] + HEALTH_FLAGS
        argv += list(flags)
        env = dict(os.environ)
        for name in ("BROKER_URL", "NATS_TOKEN", "NATS_CREDS"):
            env.pop(name, None)
        env["BROKER_URL"] = broker_url
        super().__init__(tmpdir, argv, env)


class Wire:
    """Every envelope seen, by subject, in order."""

    def __init__(self, nc):
        self.nc = nc
        self.by_subject = collections.defaultdict(list)

    def until(self, predicate, what, timeout=TIMEOUT):
        while True:
            found = predicate()
            if found:
                return found
            try:
                msg = self.nc.next_msg(timeout)
            except TimeoutError:
                raise AssertionError(f"timed out waiting for {what}") from None
            pairs = json.loads(msg.data, object_pairs_hook=lambda p: p)
            assert [k for k, _ in pairs] == ENVELOPE_KEYS, msg.data[:300]
            self.by_subject[msg.subject].append(json.loads(msg.data))

    def core(self, kind, name, event_type):
        return [e for e in self.by_subject[CORE]
                if e["EventType"] == event_type and e["Object"]["kind"] == kind
                and e["Object"]["metadata"]["name"] == name]

    def in_store(self, uid):
        """Whether an informer-store reply so far held @uid."""
        return any(o["metadata"]["uid"] == uid
                   for e in self.by_subject[STORE_REPLY] for o in e["Object"])

    def infra(self, name, event_type):
        return [e for e in self.by_subject[INFRA]
                if e["EventType"] == event_type and e["Object"]["name"] == name]


def virtual_service(name):
    return {"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"hosts": ["reviews"], "http": [{"route": [
                {"destination": {"host": "reviews", "subset": "v1"}}]}]}}


def requested(sim, resource):
    """How often the daemon listed or watched @resource ("<group>/<plural>")."""
    _, counts = sim.request("GET", "/kubesim/requests")
    return sum(n for key, n in counts["resources"].items()
               if key in (f"list {resource}", f"watch {resource}"))


def test_tier3_follows_an_installation(tmp_path):
    """istio installed at run time: its tier-3 types are watched and their objects published;
    uninstalled: the informers stop and what they published is retracted; shutdown is
    clean."""
    with Kubesim(pods=2, namespaces=1) as sim, NatsServer() as nats, nats.client() as nc:
        nc.subscribe(CORE)
        nc.subscribe(INFRA)
        wire = Wire(nc)
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url) as run:
            run.wait_synced()
            assert requested(sim, "networking.istio.io/virtualservices") == 0

            sim.install("istio")
            wire.until(lambda: wire.core("Deployment", "istiod", "ADDED"), "istiod")
            vs = sim.create(virtual_service("reviews"))
            added = wire.until(lambda: wire.core("VirtualService", "reviews", "ADDED"),
                               "the VirtualService, watched at tier 3")
            assert added[0]["Object"]["metadata"]["uid"] == vs["metadata"]["uid"]
            # tier 3 is part of what informer-store answers from
            wait_for_listener(nats)
            nc.subscribe(STORE_REPLY)
            request(nc, "informer-store", {"Reply": STORE_REPLY})
            wire.until(lambda: wire.in_store(vs["metadata"]["uid"]),
                       "the VirtualService in the informer-store reply")
            log = run.wait_for_line("infrastructure istio detected")
            assert "starting its tier-3 informers" in log
            assert "app=istiod" in log and "virtualservices.networking.istio.io" in log
            # the other tier-3 types are watched too, each once
            for plural in ("destinationrules", "gateways"):
                assert requested(sim, f"networking.istio.io/{plural}") >= 1

            sim.uninstall("istio")
            wire.until(lambda: wire.core("VirtualService", "reviews", "DELETED"),
                       "the VirtualService retracted")
            run.wait_for_line("infrastructure istio is gone")
            # a non-delegated infrastructure is never announced
            assert wire.infra("istio", "ADDED") == []

            sim.install("istio")
            run.wait_for_line("infrastructure istio detected", count=2)
            assert run.terminate() == 0
            assert "meshsync: shutting down" in run.log()


def virtual_service_crd():
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "virtualservices.networking.istio.io"},
            "spec": {"group": "networking.istio.io", "scope": "Namespaced",
                     "names": {"plural": "virtualservices", "singular": "virtualservice",
                               "kind": "VirtualService", "listKind": "VirtualServiceList"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {
                                       "type": "object",
                                       "x-kubernetes-preserve-unknown-fields": True}}}]}}


def test_a_signature_crd_alone_activates_tier3(tmp_path):
    """fd1: a synthetic CRD matching a signature, with no control plane at all, activates
    tier 3 for that infrastructure; deleting it ends tier 3 again."""
    with Kubesim(pods=2, namespaces=1) as sim, NatsServer() as nats, nats.client() as nc:
        nc.subscribe(CORE)
        wire = Wire(nc)
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url) as run:
            run.wait_synced()
            sim.create(virtual_service_crd())
            vs = sim.create(virtual_service("ratings"))
            added = wire.until(lambda: wire.core("VirtualService", "ratings", "ADDED"),
                               "the VirtualService of a CRD alone, watched at tier 3")
            assert added[0]["Object"]["metadata"]["uid"] == vs["metadata"]["uid"]
            assert wire.core("Deployment", "istiod", "ADDED") == []
            sim.delete("apiextensions.k8s.io/v1", "CustomResourceDefinition",
                       "virtualservices.networking.istio.io")
            # tier 3 ends with its evidence: what it published is retracted
            wire.until(lambda: wire.core("VirtualService", "ratings", "DELETED"),
                       "the VirtualService retracted with its CRD")
            assert run.terminate() == 0


def test_delegated_infrastructure_is_announced_and_not_watched(tmp_path):
    """linkerd is delegated to its adapter: infra-detected on its subject, on detection and when
    it goes, and none of its types listed or watched here."""
    with Kubesim(pods=2, namespaces=1, extra=["--install", "linkerd"]) as sim, \
            NatsServer() as nats, nats.client() as nc:
        nc.subscribe(INFRA)
        wire = Wire(nc)
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url) as run:
            found = wire.until(lambda: wire.infra("linkerd", "ADDED"), "infra-detected")
            env = found[0]
            assert env["ObjectType"] == "infra-detected"
            assert env["Request"] is None
            obj = env["Object"]
            _, kube_system = sim.request("GET", "/api/v1/namespaces/kube-system")
            assert obj["clusterId"] == kube_system["metadata"]["uid"]
            assert obj["detected"] is True and obj["delegateToAdapter"] is True
            assert "serviceprofiles.linkerd.io" in obj["evidence"]["crds"]
            assert obj["evidence"]["labels"] == ["linkerd.io/control-plane-component"]
            # three Deployments and their three Pods
            assert obj["evidence"]["workloads"] == 6
            assert "serviceprofiles.v1alpha2.linkerd.io" in obj["tier3ResourceKeys"]

            sim.uninstall("linkerd")
            gone = wire.until(lambda: wire.infra("linkerd", "DELETED"), "linkerd gone")
            assert gone[0]["Object"]["detected"] is False
            assert run.terminate() == 0
        assert requested(sim, "linkerd.io/serviceprofiles") == 0
        assert requested(sim, "policy.linkerd.io/servers") == 0
        assert "tier 3 of linkerd" not in run.log()


def test_types_watched_in_full_are_not_watched_again(tmp_path):
    """With a MeshSync resource every CRD's type is watched at tier 2 (upstream's rule): an
    installation present at start is detected, and its tier 3 adds no second informer."""
    with Kubesim(pods=2, namespaces=1, extra=["--install", "istio"]) as sim, \
            NatsServer() as nats, nats.client() as nc:
        sim.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "meshery"}})
        sim.create({"apiVersion": "meshery.io/v1alpha1", "kind": "MeshSync",
                    "metadata": {"name": "meshery-meshsync", "namespace": "meshery"},
                    "spec": {"watch-list": {"data": {"blacklist": '["secrets.v1."]'}}}})
        vs = sim.create(virtual_service("reviews"))
        nc.subscribe(CORE)
        wire = Wire(nc)
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url) as run:
            found = wire.until(lambda: wire.core("VirtualService", "reviews", "ADDED"),
                               "the VirtualService, watched at tier 2")
            assert found[0]["Object"]["metadata"]["uid"] == vs["metadata"]["uid"]
            log = run.wait_for_line("tier 3 of istio: every type is watched already")
            assert "infrastructure istio detected" in log
            # the detection read the CRDs the CRD follower watches: one watch of them in all
            _, counts = sim.request("GET", "/kubesim/requests")
            assert counts["resources"].get(
                "watch apiextensions.k8s.io/customresourcedefinitions") == 1, counts
            assert run.terminate() == 0
        assert "tier 3 of istio synced" not in run.log()


def test_shards_decide_alike_and_one_announces(tmp_path):
    """Sharded replicas see only their share of the workloads: each decides on the CRDs, read
    whole, and only shard 0 announces a delegated infrastructure."""
    with Kubesim(pods=2, namespaces=1, extra=["--install", "linkerd"]) as sim, \
            NatsServer() as nats, nats.client() as nc:
        nc.subscribe(INFRA)
        wire = Wire(nc)
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url, "--shard", "1",
                    "--total-shards", "2") as second:
            second.wait_synced()
            log = second.wait_for_line("infrastructure linkerd detected")
            assert "delegated to its adapter" in log
            with Daemon(str(tmp_path), sim.kubeconfig, nats.url, "--shard", "0",
                        "--total-shards", "2") as first:
                wire.until(lambda: wire.infra("linkerd", "ADDED"), "shard 0's announcement")
                first.wait_for_line("infrastructure linkerd detected")
                assert first.terminate() == 0
            assert second.terminate() == 0
            # both exited: the server has handled all they published, and what it sent this
            # subscriber before the PONG of a PING is here
            nc.flush()
            for msg in nc.messages(timeout=0):
                wire.by_subject[msg.subject].append(json.loads(msg.data))
        assert [e["EventType"] for e in wire.by_subject[INFRA]] == ["ADDED"]


def meshsync_resource(blacklist):
    return {"apiVersion": "meshery.io/v1alpha1", "kind": "MeshSync",
            "metadata": {"name": "meshery-meshsync", "namespace": "meshery"},
            "spec": {"watch-list": {"data": {"blacklist": json.dumps(blacklist)}}}}


def test_live_watch_list_hands_types_between_tiers(tmp_path):
    """The MeshSync resource created while istio's tier 3 runs: its CRD types join the tier-1
    run (upstream's rule), so tier 3 lets them go; the resource deleted: tier 3 takes them on
    again. The objects are never retracted on the way."""
    vs_name = "virtualservices.v1.networking.istio.io"
    with Kubesim(pods=2, namespaces=1, extra=["--install", "istio"]) as sim, \
            NatsServer() as nats, nats.client() as nc:
        sim.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "meshery"}})
        vs = sim.create(virtual_service("reviews"))
        nc.subscribe(CORE)
        wire = Wire(nc)
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url) as run:
            wire.until(lambda: wire.core("VirtualService", "reviews", "ADDED"),
                       "the VirtualService, watched at tier 3")
            log = run.wait_for_line("tier 3 of istio synced")
            assert vs_name in log.split("tier 3 of istio synced")[1].splitlines()[0]

            sim.create(meshsync_resource(["secrets.v1."]))
            run.wait_for_line(f"{vs_name}: watched by tier 1 now, no longer by tier 3 of istio")
            # listed by tier 3, then by tier 1
            run.wait_for_line(f"{vs_name}: synced, 1 objects", count=2)
            sim.delete("meshery.io/v1alpha1", "MeshSync", "meshery-meshsync",
                       namespace="meshery")
            run.wait_for_line(f"{vs_name}: no longer watched by tier 1: tier 3 of istio "
                              "takes it on")
            # and by tier 3 again: held before istio goes
            run.wait_for_line(f"{vs_name}: synced, 1 objects", count=3)
            # istio goes: the VirtualService is retracted by tier 3, which holds it again
            sim.uninstall("istio")
            wire.until(lambda: wire.core("VirtualService", "reviews", "DELETED"),
                       "the VirtualService retracted")
            assert run.terminate() == 0
        events = [e["EventType"] for e in wire.by_subject[CORE]
                  if e["Object"]["metadata"]["uid"] == vs["metadata"]["uid"]]
        # retracted once, at the end only
        assert events.count("DELETED") == 1 and events[-1] == "DELETED", events


def blacklist_resource(tiers=None):
    data = {"blacklist": json.dumps(["secrets.v1."])}
    if tiers is not None:
        data["tier-config"] = json.dumps(tiers)
    return {"apiVersion": "meshery.io/v1alpha1", "kind": "MeshSync",
            "metadata": {"name": "meshery-meshsync", "namespace": "meshery"},
            "spec": {"watch-list": {"data": data}}}


def test_live_disabled_infra_applies_without_a_resync(tmp_path):
    """The tier-config's DisabledInfra edited in the followed MeshSync resource: linkerd, now
    disabled, is announced gone, and announced again once enabled; no resync either time."""
    with Kubesim(pods=2, namespaces=1, extra=["--install", "linkerd"]) as sim, \
            NatsServer() as nats, nats.client() as nc:
        sim.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "meshery"}})
        sim.create(blacklist_resource())
        nc.subscribe(INFRA)
        wire = Wire(nc)
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url) as run:
            wire.until(lambda: wire.infra("linkerd", "ADDED"), "linkerd announced")
            sim.replace(blacklist_resource({"DisabledInfra": ["linkerd"]}))
            gone = wire.until(lambda: wire.infra("linkerd", "DELETED"),
                              "linkerd announced gone once disabled")
            assert gone[0]["Object"]["detected"] is False
            sim.replace(blacklist_resource({"DisabledInfra": []}))
            wire.until(lambda: len(wire.infra("linkerd", "ADDED")) == 2,
                       "linkerd announced again once enabled")
            assert run.metric("meshsync_syncs_total") == 1
            assert run.terminate() == 0
