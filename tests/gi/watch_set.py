# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""The default watch set (upstream's built-in whitelist) for the binding tests (GI and Vala),
as a fixed list: kubesim serves every one of these types, and seed_every_kind() gives each
one object, so a test expects all of them and fails if the engine misses any. Nothing is
dropped from the expectation because the simulator lacks it: that would let what a test
expects shrink together with what it observes.
"""

# (list path, kind)
WATCHED = [
    ("/api/v1/namespaces", "Namespace"),
    ("/api/v1/configmaps", "ConfigMap"),
    ("/api/v1/nodes", "Node"),
    ("/api/v1/secrets", "Secret"),
    ("/api/v1/persistentvolumes", "PersistentVolume"),
    ("/api/v1/persistentvolumeclaims", "PersistentVolumeClaim"),
    ("/apis/apps/v1/replicasets", "ReplicaSet"),
    ("/api/v1/pods", "Pod"),
    ("/api/v1/services", "Service"),
    ("/apis/apps/v1/deployments", "Deployment"),
    ("/apis/apps/v1/statefulsets", "StatefulSet"),
    ("/apis/apps/v1/daemonsets", "DaemonSet"),
    ("/apis/networking.k8s.io/v1/ingresses", "Ingress"),
    ("/api/v1/endpoints", "Endpoints"),
    ("/apis/batch/v1/cronjobs", "CronJob"),
    ("/apis/discovery.k8s.io/v1/endpointslices", "EndpointSlice"),
    # upstream's table misspells it and never watches it; see doc/deviations.md
    ("/api/v1/serviceaccounts", "ServiceAccount"),
    ("/api/v1/replicationcontrollers", "ReplicationController"),
    ("/apis/storage.k8s.io/v1/storageclasses", "StorageClass"),
    ("/apis/rbac.authorization.k8s.io/v1/clusterroles", "ClusterRole"),
    ("/apis/storage.k8s.io/v1/volumeattachments", "VolumeAttachment"),
    ("/apis/apiregistration.k8s.io/v1/apiservices", "APIService"),
]

KINDS = frozenset(kind for _, kind in WATCHED)

# What kubesim's generated workload holds (see doc/kubesim.md, "Generated objects").
GENERATED_KINDS = frozenset({"Namespace", "ConfigMap", "Secret", "ReplicaSet", "Pod",
                             "Service", "Deployment", "ServiceAccount"})


def _template(app):
    return {"metadata": {"labels": {"app": app}},
            "spec": {"containers": [{"name": "main", "image": "nginx:1.14.2"}]}}


# One object of each kind of the watch set the generator does not make.
SEEDS = [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"}},
    {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-a"},
     "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
              "hostPath": {"path": "/srv/pv-a"}}},
    {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
     "metadata": {"name": "pvc-a", "namespace": "default"},
     "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
    {"apiVersion": "apps/v1", "kind": "StatefulSet",
     "metadata": {"name": "sts-a", "namespace": "default"},
     "spec": {"serviceName": "sts-a", "selector": {"matchLabels": {"app": "sts-a"}},
              "template": _template("sts-a")}},
    {"apiVersion": "apps/v1", "kind": "DaemonSet",
     "metadata": {"name": "ds-a", "namespace": "default"},
     "spec": {"selector": {"matchLabels": {"app": "ds-a"}}, "template": _template("ds-a")}},
    {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
     "metadata": {"name": "ing-a", "namespace": "default"},
     "spec": {"rules": [{"host": "a.example.com"}]}},
    {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "ep-a", "namespace": "default"},
     "subsets": []},
    {"apiVersion": "batch/v1", "kind": "CronJob",
     "metadata": {"name": "cj-a", "namespace": "default"},
     "spec": {"schedule": "*/5 * * * *",
              "jobTemplate": {"spec": {"template": {"spec": {
                  "restartPolicy": "Never",
                  "containers": [{"name": "main", "image": "busybox:1.36"}]}}}}}},
    {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
     "metadata": {"name": "eps-a", "namespace": "default"}, "addressType": "IPv4",
     "endpoints": []},
    {"apiVersion": "v1", "kind": "ReplicationController",
     "metadata": {"name": "rc-a", "namespace": "default"},
     "spec": {"replicas": 0, "selector": {"app": "rc-a"}, "template": _template("rc-a")}},
    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "sc-a"},
     "provisioner": "example.com/none"},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
     "metadata": {"name": "cr-a"}, "rules": []},
    {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "va-a"},
     "spec": {"attacher": "example.com/none", "nodeName": "node-a",
              "source": {"persistentVolumeName": "pv-a"}}},
    {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
     "metadata": {"name": "v1.example.com"},
     "spec": {"group": "example.com", "version": "v1", "groupPriorityMinimum": 100,
              "versionPriority": 10}},
]

assert {seed["kind"] for seed in SEEDS} | GENERATED_KINDS == KINDS


def seed_every_kind(sim):
    """Creates one object of each kind the generated workload lacks."""
    for seed in SEEDS:
        sim.create(seed)


def cluster_view(sim):
    """{uid: (kind, namespace, name)} of the watch set, read through kubesim's API; fails if
    kubesim does not serve one of its types, or if a kind has no object."""
    view = {}
    for path, kind in WATCHED:
        status, body = sim.request("GET", path)
        assert status == 200, f"GET {path} of the default watch set: {status} {body}"
        for item in body["items"]:
            meta = item["metadata"]
            view[meta["uid"]] = (kind, meta.get("namespace", ""), meta["name"])
    assert {kind for kind, _, _ in view.values()} == KINDS, (
        f"kinds without an object: {sorted(KINDS - {k for k, _, _ in view.values()})}")
    return view
