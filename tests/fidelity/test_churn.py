"""meshsync-kubesim --churn: what its watch events look like to a client.

Churn drives the steady-state benchmark and the integration tests that run under load, so its
events must be what a real cluster's kubelet and controllers send: new pods with identities of
their own, and modifications that change status, not only the resourceVersion.
"""

import json

from kubesim import Kubesim

SEED = "1"
GENERATED_KINDS = [
    "/api/v1/namespaces",
    "/api/v1/services",
    "/api/v1/configmaps",
    "/api/v1/secrets",
    "/apis/apps/v1/deployments",
    "/apis/apps/v1/replicasets",
]


def list_items(sim, path):
    """The list at @path, its items given the kind and apiVersion a typed list leaves out,
    as clients (client-go's UnstructuredList) fill them in from the list."""
    status, body = sim.request("GET", path)
    assert status == 200, body
    for item in body["items"]:
        assert "kind" not in item and "apiVersion" not in item, item["metadata"]["name"]
        item["kind"] = body["kind"][:-len("List")]
        item["apiVersion"] = body["apiVersion"]
    return body


def churn_events(sim, rv, count, event_type):
    """Yields pod events from @rv on until @count events of @event_type were seen."""
    seen = 0
    for event in sim.watch(f"/api/v1/pods?watch=true&resourceVersion={rv}"):
        assert event["type"] != "ERROR", event
        yield event
        if event["type"] == event_type:
            seen += 1
            if seen == count:
                return


def kubelet_entry(pod):
    entries = [e for e in pod["metadata"]["managedFields"]
               if e["manager"] == "kubelet" and e.get("subresource") == "status"]
    assert len(entries) == 1, pod["metadata"]["managedFields"]
    return entries[0]


def condition(pod, kind):
    found = [c for c in pod["status"]["conditions"] if c["type"] == kind]
    assert len(found) == 1, pod["status"]["conditions"]
    return found[0]


def without_churned_fields(pod):
    """The pod minus what a status update may change."""
    copy = json.loads(json.dumps(pod))
    del copy["status"]
    del copy["metadata"]["resourceVersion"]
    for entry in copy["metadata"]["managedFields"]:
        if entry["manager"] == "kubelet":
            del entry["time"]
            del entry["fieldsV1"]
    return copy


def test_churn_never_reuses_a_uid():
    # the generator and churn run from the same --seed, as the benchmarks start them
    with Kubesim(pods=400, namespaces=3, extra=["--churn", "3000", "--seed", SEED]) as sim:
        owners = {}
        for path in GENERATED_KINDS:
            for item in list_items(sim, path)["items"]:
                uid = item["metadata"]["uid"]
                assert uid not in owners, f"{item['metadata']['name']} shares {owners.get(uid)}"
                owners[uid] = f"{item['kind']} {item['metadata']['name']}"
        pods = list_items(sim, "/api/v1/pods")
        by_name = {}
        for pod in pods["items"]:
            uid = pod["metadata"]["uid"]
            assert uid not in owners, f"pod {pod['metadata']['name']} shares {owners[uid]}"
            owners[uid] = f"pod {pod['metadata']['name']}"
            by_name[(pod["metadata"]["namespace"], pod["metadata"]["name"])] = uid

        added = 0
        for event in churn_events(sim, pods["metadata"]["resourceVersion"], 2000, "ADDED"):
            meta = event["object"]["metadata"]
            key = (meta["namespace"], meta["name"])
            if event["type"] == "ADDED":
                assert key not in by_name, f"{key} created twice"
                assert meta["uid"] not in owners, \
                    f"new pod {meta['name']} has the uid of {owners[meta['uid']]}"
                owners[meta["uid"]] = f"pod {meta['name']}"
                by_name[key] = meta["uid"]
                added += 1
            else:
                assert by_name[key] == meta["uid"], f"{key} changed its uid"
                if event["type"] == "DELETED":
                    del by_name[key]
        assert added == 2000


def restarts(pod):
    return [c["restartCount"] for c in pod["status"]["containerStatuses"]]


def test_churn_modifications_are_what_a_kubelet_sends():
    with Kubesim(pods=300, namespaces=2, extra=["--churn", "2000", "--seed", SEED]) as sim:
        pods = list_items(sim, "/api/v1/pods")
        known = {p["metadata"]["uid"]: p for p in pods["items"]}
        seen = {"started": 0, "crashed": 0, "restarted": 0}
        for event in sim.watch(f"/api/v1/pods?watch=true"
                               f"&resourceVersion={pods['metadata']['resourceVersion']}"):
            assert event["type"] != "ERROR", event
            pod = event["object"]
            meta = pod["metadata"]
            if event["type"] == "ADDED":
                # a ReplicaSet's replacement pod, its containers being created
                assert meta["ownerReferences"][0]["kind"] == "ReplicaSet"
                assert pod["status"]["phase"] == "Pending"
                assert all(c["state"]["waiting"]["reason"] == "ContainerCreating"
                           for c in pod["status"]["containerStatuses"])
                assert {e["manager"] for e in meta["managedFields"]} >= \
                    {"kube-controller-manager", "kubelet"}
                known[meta["uid"]] = pod
                continue
            if event["type"] == "DELETED":
                del known[meta["uid"]]
                continue
            before = known[meta["uid"]]
            known[meta["uid"]] = pod
            assert int(meta["resourceVersion"]) > int(before["metadata"]["resourceVersion"])
            assert without_churned_fields(pod) == without_churned_fields(before)
            assert pod["status"] != before["status"]

            entry = kubelet_entry(pod)
            assert entry["time"] >= kubelet_entry(before)["time"]
            ready = condition(pod, "Ready")
            assert ready["lastTransitionTime"] == entry["time"]
            assert condition(pod, "ContainersReady")["status"] == ready["status"]
            # the kubelet owns reason and message exactly while the pod is not ready
            owned = entry["fieldsV1"]["f:status"]["f:conditions"]['k:{"type":"Ready"}']
            assert ("f:reason" in owned) == (ready["status"] == "False")
            assert ("reason" in ready) == (ready["status"] == "False")

            app = pod["status"]["containerStatuses"][0]
            if before["status"]["phase"] == "Pending":
                assert pod["status"]["phase"] == "Running" and ready["status"] == "True"
                assert all(c["started"] and c["ready"] and c["imageID"] and c["containerID"]
                           for c in pod["status"]["containerStatuses"])
                seen["started"] += 1
            elif ready["status"] == "False":
                assert restarts(pod)[0] == restarts(before)[0] + 1
                assert app["state"]["waiting"]["reason"] == "CrashLoopBackOff"
                terminated = app["lastState"]["terminated"]
                assert terminated["containerID"] == \
                    before["status"]["containerStatuses"][0]["containerID"]
                assert terminated["finishedAt"] == entry["time"]
                seen["crashed"] += 1
            else:
                assert restarts(pod) == restarts(before)
                assert app["ready"] and app["state"]["running"]["startedAt"] == entry["time"]
                assert app["containerID"] != \
                    before["status"]["containerStatuses"][0].get("containerID")
                seen["restarted"] += 1
            if min(seen.values()) >= 20:
                break
        assert min(seen.values()) >= 20, seen
