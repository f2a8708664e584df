# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""A one-shot snapshot of a real cluster: meshsync -output file --stop-after-sync against
meshsync-realkube holding 2,000 seeded pods, a Deployment whose ReplicaSet and pods the
controllers made, and at least one object of every type of meshsync's default watch set.
The snapshot must hold, type by type, exactly what `kubectl get TYPES -A -o json` lists:
the same uids at the same resourceVersions. Over HTTP/1.1 (the default) and HTTP/2."""

import json
import os
import re
import subprocess
import time

import pytest

from realkube_run import (DAEMON, PROTOCOLS, TIMEOUT, WATCHED, start_realkube, wait_until)
from meshsync_run import daemon_env, read_documents, uncompressed_kubeconfig
import kube_seed

PODS = 2000

# One of everything the default watch set covers that a fresh cluster lacks (it has
# Namespaces, the kubernetes Service, Endpoints and EndpointSlice, ServiceAccounts,
# ClusterRoles and APIServices of its own). No controller runs for StatefulSets,
# DaemonSets, CronJobs, ReplicationControllers or volumes, so these stay as created.
OBJECTS = """\
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: registry.example/web:1}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: app-config, namespace: shop}
data: {mode: production}
---
apiVersion: v1
kind: Secret
metadata: {name: app-secret, namespace: shop}
type: Opaque
stringData: {password: hunter2}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: deployer, namespace: shop}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: shop-reader}
rules: [{apiGroups: [""], resources: [pods], verbs: [get, list, watch]}]
---
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {kubernetes.io/hostname: node-1}}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-1}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /srv/pv-1}
  storageClassName: fast
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: shop}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
  storageClassName: fast
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: example.com/fast
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va-1}
spec:
  attacher: csi.example.com
  nodeName: node-1
  source: {persistentVolumeName: pv-1}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop}
spec:
  serviceName: db
  replicas: 1
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: registry.example/db:1}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: shop}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: registry.example/agent:1}]}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: shop}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: job, image: registry.example/job:1}]
---
apiVersion: v1
kind: ReplicationController
metadata: {name: legacy, namespace: shop}
spec:
  replicas: 0
  selector: {app: legacy}
  template:
    metadata: {labels: {app: legacy}}
    spec: {containers: [{name: legacy, image: registry.example/legacy:1}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: shop}
spec:
  rules:
  - host: shop.example
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
apiVersion: v1
kind: Endpoints
metadata: {name: external, namespace: shop}
subsets: [{addresses: [{ip: 192.0.2.10}], ports: [{port: 443}]}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: external-1
  namespace: shop
  labels: {kubernetes.io/service-name: external}
addressType: IPv4
endpoints: [{addresses: [192.0.2.10]}]
ports: [{port: 443}]
"""

def kubectl_name(plural, path):
    """kubectl's name of a type of the default watch set, fully qualified."""
    if path.startswith("/api/v1/"):
        return plural
    group = path.split("/")[2]
    return f"{plural}.{group}"


def kubectl_truth(rk):
    """{kind: {uid: resourceVersion}} of every type of the default watch set, as one
    `kubectl get TYPES -A -o json` lists them."""
    names = ",".join(kubectl_name(plural, path) for plural, path, _, _ in WATCHED)
    listed = json.loads(rk.kubectl("get", names, "--all-namespaces", "-o", "json",
                                   timeout=120))
    truth = {kind: {} for _, _, kind, _ in WATCHED}
    for item in listed["items"]:
        assert item["kind"] in truth, item["kind"]
        truth[item["kind"]][item["metadata"]["uid"]] = item["metadata"]["resourceVersion"]
    return truth


@pytest.fixture(scope="module")
def cluster():
    """The cluster, seeded once for both protocols: 2,000 pods in 10 namespaces, the objects
    above, the Deployment's ReplicaSet and pods made by the controllers; returned once it
    is quiet (two readings of the truth a second apart agree)."""
    started = time.monotonic()
    with start_realkube() as rk:
        kube_seed.seed_pods(rk.kubeconfig, PODS, namespaces=10, threads=6, prefix="seed")
        rk.apply(OBJECTS)

        def rolled_out():
            deployment = rk.get_json("deployment/web", "shop")
            status = deployment.get("status", {})
            pods = rk.get_json("pods", "shop")["items"]
            owned = [p for p in pods if p["metadata"].get("ownerReferences")]
            return (status.get("observedGeneration") == deployment["metadata"]["generation"]
                    and status.get("replicas") == 3 and len(owned) == 3)

        wait_until(rolled_out, "the Deployment's ReplicaSet and 3 pods", TIMEOUT,
                   log=rk.log, interval=0.2)
        previous = {}

        def quiet():
            nonlocal previous
            now = kubectl_truth(rk)
            same, previous = now == previous, now
            return same

        wait_until(quiet, "the cluster to stop changing", TIMEOUT, log=rk.log, interval=1.0)
        print(f"cluster ready in {time.monotonic() - started:.1f} s")
        yield rk


def snapshot_by_kind(path):
    """{kind: {uid: resourceVersion}} of the snapshot; fails on an object written twice."""
    by_kind = {}
    seen = set()
    for doc in read_documents(path):
        uid = doc["metadata"]["uid"]
        assert uid not in seen, f"{doc['kind']} {uid} written twice"
        seen.add(uid)
        by_kind.setdefault(doc["kind"], {})[uid] = doc["metadata"]["resourceVersion"]
    return by_kind


SUMMARY = re.compile(r"initial sync complete: (\d+) objects of (\d+) resource types "
                     r"in [0-9.]+ s \(([^)]*)\)")


# the server gzips lists over 128 KiB and every streaming list unless asked not to
@pytest.mark.parametrize("protocol", list(PROTOCOLS) + ["http1-uncompressed"])
def test_one_shot_snapshot_equals_kubectl(cluster, tmp_path, protocol):
    out = str(tmp_path / "snapshot.yaml")
    kubeconfig = cluster.kubeconfig
    if protocol.endswith("-uncompressed"):
        kubeconfig = uncompressed_kubeconfig(kubeconfig, tmp_path / "kubeconfig")
    argv = [DAEMON, "-output", "file", "--outputFile", out, "--stop-after-sync",
            "--kubeconfig", kubeconfig, "--health-port", "0",
            "--health-address", "127.0.0.1"] + PROTOCOLS[protocol.split("-")[0]]
    started = time.monotonic()
    run = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                         env=daemon_env(), stdin=subprocess.DEVNULL, check=False)
    elapsed = time.monotonic() - started
    assert run.returncode == 0, run.stderr[-6000:]
    truth = kubectl_truth(cluster)
    snapshot = snapshot_by_kind(out)

    kinds = [kind for _, _, kind, _ in WATCHED]
    assert set(snapshot) <= set(kinds), sorted(set(snapshot) - set(kinds))
    # every type of the default set has something in it: the comparison is not vacuous
    assert all(truth[kind] for kind in kinds), [k for k in kinds if not truth[k]]
    assert sum(len(v) for k, v in truth.items() if k == "Pod") >= PODS + 3
    for kind in kinds:
        got, want = snapshot.get(kind, {}), truth[kind]
        missing = sorted(set(want) - set(got))
        extra = sorted(set(got) - set(want))
        stale = sorted((u, got[u], want[u]) for u in set(got) & set(want) if got[u] != want[u])
        assert not (missing or extra or stale), (
            f"{kind}: {len(missing)} missing {missing[:5]}, {len(extra)} extra {extra[:5]}, "
            f"{len(stale)} at another resourceVersion {stale[:5]}")

    # the daemon's own account: the default set is these 22 types, with these counts
    match = SUMMARY.search(run.stderr)
    assert match, run.stderr[-3000:]
    counts = dict((k, int(n)) for k, n in
                  (part.rsplit(" ", 1) for part in match.group(3).split(", ")))
    assert sorted(counts) == sorted(kinds) and len(counts) == len(kinds), list(counts)
    assert counts == {kind: len(truth[kind]) for kind in kinds}
    assert int(match.group(1)) == sum(len(v) for v in truth.values())
    assert int(match.group(2)) == len(WATCHED) == 22
    assert f"snapshot {out}: {sum(len(v) for v in truth.values())} documents written" \
        in run.stderr
    print(f"{protocol}: {int(match.group(1))} objects, one-shot in {elapsed:.2f} s")
    assert os.stat(out).st_size > 0


def test_kubectl_meshsync_snapshot_equals_kubectl(cluster, tmp_path):
    """The kubectl plugin, run by the real kubectl against the real API server, with the
    default flags: the whole default set, type by type as kubectl lists it."""
    plugin = os.environ["MESHSYNC_KUBECTL_PLUGIN"]
    env = dict(os.environ, PATH=os.path.dirname(plugin) + os.pathsep + os.environ["PATH"])
    env.pop("KUBECONFIG", None)
    out = tmp_path / "plugin.yaml"
    run = subprocess.run(["kubectl", "meshsync", "snapshot", "--kubeconfig", cluster.kubeconfig,
                          "-f", str(out)], capture_output=True, text=True, timeout=300,
                         env=env, stdin=subprocess.DEVNULL, check=False)
    assert run.returncode == 0, run.stderr[-6000:]
    truth = kubectl_truth(cluster)
    snapshot = snapshot_by_kind(str(out))
    for _, _, kind, _ in WATCHED:
        assert snapshot.get(kind, {}) == truth[kind], kind
    # the summary counts what the file holds
    for kind, objects in snapshot.items():
        assert re.search(rf"^{kind} +{len(objects)}$", run.stderr, re.M), (kind, run.stderr)
