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


def collect(sim, path, rv, until, out):
    """Puts (rv, type, object) of the watch at @path into @out until @until(rv) holds."""
    for event in sim.watch(f"{path}?watch=true&resourceVersion={rv}"):
        assert event["type"] != "ERROR", event
        meta = event["object"]["metadata"]
        out.append((int(meta["resourceVersion"]), event["type"], event["object"]))
        if until(int(meta["resourceVersion"])):
            return


def ready(pod):
    return any(c["type"] == "Ready" and c["status"] == "True"
               for c in pod["status"]["conditions"])


def test_owners_follow_their_pods_with_churn_controllers():
    with Kubesim(pods=200, namespaces=2,
                 extra=["--churn", "2000", "--seed", SEED, "--churn-controllers"]) as sim:
        pods = list_items(sim, "/api/v1/pods")
        rv = pods["metadata"]["resourceVersion"]
        sets = {rs["metadata"]["uid"]: rs
                for rs in list_items(sim, "/apis/apps/v1/replicasets")["items"]}
        owned = {uid: [rs_uid for rs_uid, rs in sets.items()
                       if rs["metadata"]["ownerReferences"][0]["uid"] == uid]
                 for uid in {rs["metadata"]["ownerReferences"][0]["uid"]
                             for rs in sets.values()}}
        writes = []
        collect(sim, "/apis/apps/v1/replicasets", rv,
                lambda _: sum(1 for w in writes if w[1] == "MODIFIED") >= 40, writes)
        deployments = []

        def unavailable(deployment):
            return any(c["type"] == "Available" and c["status"] == "False"
                       for c in deployment["status"]["conditions"])

        # crashes take some below their minimum: wait until one is, and 20 writes
        collect(sim, "/apis/apps/v1/deployments", rv,
                lambda _: len(deployments) >= 20 and unavailable(deployments[-1][2]),
                deployments)
        last = max(w[0] for w in writes + deployments)
        pod_events = []
        collect(sim, "/api/v1/pods", rv, lambda pod_rv: pod_rv > last, pod_events)

    # the pods as the controllers saw them when they wrote at @at
    def counts_at(at):
        state = {p["metadata"]["uid"]: p for p in pods["items"]}
        for event_rv, kind, pod in pod_events:
            if event_rv >= at:
                break
            if kind == "DELETED":
                state.pop(pod["metadata"]["uid"], None)
            else:
                state[pod["metadata"]["uid"]] = pod
        total, up = {}, {}
        for pod in state.values():
            owner = pod["metadata"]["ownerReferences"][0]["uid"]
            total[owner] = total.get(owner, 0) + 1
            up[owner] = up.get(owner, 0) + ready(pod)
        return total, up

    for at, kind, rs in writes:
        assert kind == "MODIFIED"
        total, up = counts_at(at)
        uid = rs["metadata"]["uid"]
        status = rs["status"]
        assert status["replicas"] == total.get(uid, 0), (at, status)
        assert status.get("fullyLabeledReplicas", 0) == total.get(uid, 0)
        assert status.get("readyReplicas", 0) == up.get(uid, 0), (at, status)
        assert status.get("availableReplicas", 0) == up.get(uid, 0)
        # only the status (and the controller's time) changed
        before = sets[uid]
        assert rs["spec"] == before["spec"] and rs["metadata"]["labels"] == \
            before["metadata"]["labels"]
        entry = [e for e in rs["metadata"]["managedFields"]
                 if e.get("subresource") == "status"][0]
        assert entry["manager"] == "kube-controller-manager"
    flipped = 0
    for at, kind, deployment in deployments:
        assert kind == "MODIFIED"
        total, up = counts_at(at)
        mine = owned[deployment["metadata"]["uid"]]
        status = deployment["status"]
        assert status.get("replicas", 0) == sum(total.get(uid, 0) for uid in mine)
        assert status.get("readyReplicas", 0) == sum(up.get(uid, 0) for uid in mine)
        desired = deployment["spec"]["replicas"]
        available = status.get("availableReplicas", 0)
        assert status.get("unavailableReplicas", 0) == max(desired - available, 0)
        condition = [c for c in status["conditions"] if c["type"] == "Available"][0]
        assert (condition["status"] == "True") == (available >= desired - desired * 25 // 100)
        if condition["status"] == "False":
            flipped += 1
            assert condition["reason"] == "MinimumReplicasUnavailable"
            assert condition["lastTransitionTime"] == condition["lastUpdateTime"]
    assert flipped > 0, "no Deployment lost its minimum availability"


def test_churn_controllers_follow_a_replaced_cluster():
    with Kubesim(pods=100, namespaces=2,
                 extra=["--churn", "1000", "--seed", SEED, "--churn-controllers"]) as sim:
        sim.replace_cluster(seed=7, pods=60)
        sets = list_items(sim, "/apis/apps/v1/replicasets")
        uids = {rs["metadata"]["uid"] for rs in sets["items"]}
        for event in sim.watch(f"/apis/apps/v1/replicasets?watch=true"
                               f"&resourceVersion={sets['metadata']['resourceVersion']}"):
            # the controllers write the new cluster's owners, not the old one's
            assert event["type"] == "MODIFIED", event
            assert event["object"]["metadata"]["uid"] in uids
            break


def test_paginated_list_is_one_snapshot_under_churn():
    """Later pages come from the first page's resourceVersion, as etcd serves them: with
    churn between the pages, every object they give is at a version no newer than it, and
    each object once."""
    with Kubesim(pods=600, namespaces=3, extra=["--churn", "500", "--seed", SEED]) as sim:
        items = []
        cont = ""
        list_rv = None
        while True:
            path = "/api/v1/pods?limit=100" + (f"&continue={cont}" if cont else "")
            status, body = sim.request("GET", path)
            assert status == 200, body
            list_rv = list_rv or int(body["metadata"]["resourceVersion"])
            assert int(body["metadata"]["resourceVersion"]) == list_rv
            items += body["items"]
            cont = body["metadata"].get("continue")
            if not cont:
                break
            # a slow client: the cluster moves on before the next page is asked for
            moved = list_rv + 50
            while int(sim.stats()["resourceVersion"]) < moved:
                pass
        versions = [int(i["metadata"]["resourceVersion"]) for i in items]
        assert max(versions) <= list_rv
        uids = [i["metadata"]["uid"] for i in items]
        assert len(uids) == len(set(uids))
        assert int(sim.stats()["resourceVersion"]) > list_rv, "no churn while paging"


def test_continue_of_a_forgotten_list_is_expired():
    with Kubesim(pods=50, namespaces=1) as sim:
        status, body = sim.request("GET", "/api/v1/pods?limit=10")
        assert status == 200 and body["metadata"]["continue"]
        sim.replace_cluster(pods=50, namespaces=1, seed=2)
        status, body = sim.request(
            "GET", f"/api/v1/pods?limit=10&continue={body['metadata']['continue']}")
        assert status in (410, 500), body
