"""A live watch list: the MeshSync resource (meshery/meshery-meshsync) is followed, and a
change to its watch list is applied to the running informers type by type, without a resync
and without a new discovery.

Progress is waited for on state: /metrics (meshsync_watch_list_changes_total,
meshsync_objects, meshsync_syncs_total), the snapshot on disk and kubesim's request counters
(/kubesim/requests), which tell which types were listed again.
"""

import json

from kubesim import Kubesim
from meshsync_run import Meshsync, extended_events

SMALL = {"pods": 30, "namespaces": 2}
ALL_EVENTS = ["ADDED", "MODIFIED", "DELETED"]


def meshsync_resource(names, annotations=None):
    whitelist = [{"Resource": name, "Events": ALL_EVENTS} for name in names]
    metadata = {"name": "meshery-meshsync", "namespace": "meshery"}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "meshery.io/v1alpha1", "kind": "MeshSync", "metadata": metadata,
            "spec": {"watch-list": {"data": {"whitelist": json.dumps(whitelist)}}}}


def count(sim, path):
    status, body = sim.request("GET", path)
    assert status == 200, body
    return len(body["items"])


def lists_since_reset(sim):
    """The types listed or watched since the last reset (a list may stream as a watch:
    either way a type not touched opens neither), and the discovery requests."""
    requests = sim.admin("requests", method="GET")
    lists = {key.split(" ", 1)[1] for key in requests["resources"]
             if key.startswith(("list ", "watch "))}
    discovery = [key for key in requests["nonResourceURLs"] if key.startswith("get /api")]
    return lists, discovery


def test_watch_list_change_adds_and_removes_only_the_changed_types(tmp_path):
    with Kubesim(**SMALL) as sim:
        sim.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "meshery"}})
        sim.create(meshsync_resource(["pods.v1.", "configmaps.v1.", "services.v1."]))
        secret = sim.create({"apiVersion": "v1", "kind": "Secret",
                             "metadata": {"name": "token", "namespace": "team-1"},
                             "data": {"a": "MQ=="}})
        pods = count(sim, "/api/v1/pods")
        configmaps = count(sim, "/api/v1/configmaps")
        services = count(sim, "/api/v1/services")
        secrets = count(sim, "/api/v1/secrets")
        assert services > 0 and secrets > 0
        with Meshsync(str(tmp_path), sim.kubeconfig, extended=True) as run:
            run.wait_synced()
            # the custom resources (the MeshSync one) join as upstream's CRD rule has them
            base = run.metric("meshsync_objects") - (pods + configmaps + services)
            assert base >= 0
            assert secret["metadata"]["uid"] not in run.snapshot_uids()
            sim.admin("requests", method="DELETE")

            # Services out, Secrets in: one change, applied to those two types only
            sim.replace(meshsync_resource(["pods.v1.", "configmaps.v1.", "secrets.v1."]))
            run.wait_metric("meshsync_watch_list_changes_total", 1)
            run.wait_in_snapshot({secret["metadata"]["uid"]})
            run.wait_until(lambda: run.metric("meshsync_objects")
                           == base + pods + configmaps + secrets, "the stores without Services")
            lists, discovery = lists_since_reset(sim)
            assert lists == {"/secrets"}, lists
            assert discovery == [], discovery
            assert run.metric("meshsync_syncs_total") == 1

            # the same watch list written again with an annotation: nothing happens. The next
            # real change counts as the second, so this one was seen and did nothing.
            sim.admin("requests", method="DELETE")
            sim.replace(meshsync_resource(["pods.v1.", "configmaps.v1.", "secrets.v1."],
                                          annotations={"touched": "yes"}))
            sim.replace(meshsync_resource(["secrets.v1.", "configmaps.v1.", "pods.v1."]))
            sim.replace(meshsync_resource(["pods.v1.", "configmaps.v1.", "secrets.v1.",
                                           "services.v1."]))
            run.wait_metric("meshsync_watch_list_changes_total", 2)
            run.wait_until(lambda: run.metric("meshsync_objects")
                           == base + pods + configmaps + secrets + services,
                           "Services back")
            assert run.metric("meshsync_watch_list_changes_total") == 2
            lists, discovery = lists_since_reset(sim)
            assert lists == {"/services"}, lists
            assert discovery == []
            assert run.metric("meshsync_syncs_total") == 1
            assert "watch list changed, applied without a resync: added [secrets.v1.], " \
                   "removed [services.v1.]" in run.log()
            assert run.terminate() == 0, run.log()[-3000:]
        # a type that left the watch list is not retracted: its objects still exist
        deleted = [event for event in extended_events(run.extended_file)
                   if event[0] == "DELETED"]
        assert deleted == [], deleted[:3]


def test_deleting_the_resource_returns_to_the_default_configuration(tmp_path):
    with Kubesim(**SMALL) as sim:
        sim.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "meshery"}})
        sim.create(meshsync_resource(["pods.v1."]))
        pods = count(sim, "/api/v1/pods")
        with Meshsync(str(tmp_path), sim.kubeconfig) as run:
            run.wait_synced()
            base = run.metric("meshsync_objects") - pods
            assert base >= 0
            sim.admin("requests", method="DELETE")
            sim.delete("meshery.io/v1alpha1", "MeshSync", "meshery-meshsync",
                       namespace="meshery")
            run.wait_metric("meshsync_watch_list_changes_total", 1)
            services = count(sim, "/api/v1/services")
            # no custom resource types in the default configuration
            run.wait_until(lambda: run.metric("meshsync_objects") > pods + services,
                           "the default configuration's types")
            lists, discovery = lists_since_reset(sim)
            # the default whitelist's types, Pods not among them again
            assert "/services" in lists and "/namespaces" in lists, lists
            assert "/pods" not in lists, lists
            assert discovery == []
            assert run.metric("meshsync_syncs_total") == 1

            # created again: its watch list replaces the default
            sim.create(meshsync_resource(["pods.v1.", "services.v1."]))
            run.wait_metric("meshsync_watch_list_changes_total", 2)
            run.wait_until(lambda: run.metric("meshsync_objects") == base + pods + services,
                           "the resource's types only")
            assert run.metric("meshsync_syncs_total") == 1
            assert run.terminate() == 0, run.log()[-3000:]


def test_events_change_keeps_the_informer(tmp_path):
    """A type whose events list changes keeps its informer and store: no list, no watch; the
    next event is filtered by the new list."""
    with Kubesim(**SMALL) as sim:
        sim.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "meshery"}})
        resource = meshsync_resource(["configmaps.v1."])
        whitelist = [{"Resource": "configmaps.v1.", "Events": ["ADDED", "MODIFIED"]}]
        resource["spec"]["watch-list"]["data"]["whitelist"] = json.dumps(whitelist)
        sim.create(resource)
        with Meshsync(str(tmp_path), sim.kubeconfig, extended=True) as run:
            run.wait_synced()
            first = sim.create({"apiVersion": "v1", "kind": "ConfigMap",
                                "metadata": {"name": "first", "namespace": "team-1"}})
            run.wait_in_extended("ADDED", first["metadata"]["uid"])
            objects = run.metric("meshsync_objects")
            sim.admin("requests", method="DELETE")

            sim.replace(meshsync_resource(["configmaps.v1."]))
            run.wait_metric("meshsync_watch_list_changes_total", 1)
            sim.delete("v1", "ConfigMap", "first", namespace="team-1")
            run.wait_in_extended("DELETED", first["metadata"]["uid"])
            lists, discovery = lists_since_reset(sim)
            assert lists == set(), lists
            assert discovery == []
            assert run.metric("meshsync_objects") == objects - 1
            assert "events changed [configmaps.v1.]" in run.log()
            assert run.terminate() == 0, run.log()[-3000:]
