"""Runs the Vala handler program (a MeshSync.Writer written in Vala) against the simulator
and compares the ADDED events it counted until ready with the simulator's own objects."""

import os
import subprocess

from kubesim import Kubesim

PROGRAM = os.path.join(os.environ.get("G_TEST_BUILDDIR", ""), "vala", "vala-handler")

# The default watch set (upstream's built-in whitelist) as list paths; types the simulator
# does not serve are skipped, as the handler skips them.
WATCHED = [
    "/api/v1/namespaces", "/api/v1/configmaps", "/api/v1/nodes", "/api/v1/secrets",
    "/api/v1/persistentvolumes", "/api/v1/persistentvolumeclaims", "/apis/apps/v1/replicasets",
    "/api/v1/pods", "/api/v1/services", "/apis/apps/v1/deployments",
    "/apis/apps/v1/statefulsets", "/apis/apps/v1/daemonsets",
    "/apis/networking.k8s.io/v1/ingresses", "/api/v1/endpoints",
    "/apis/discovery.k8s.io/v1/endpointslices", "/apis/batch/v1/cronjobs",
    "/api/v1/replicationcontrollers", "/apis/storage.k8s.io/v1/storageclasses",
    "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "/apis/storage.k8s.io/v1/volumeattachments", "/apis/apiregistration.k8s.io/v1/apiservices",
]


def _cluster_view(sim):
    view = {}
    for path in WATCHED:
        status, body = sim.request("GET", path)
        if status == 404:
            continue
        assert status == 200, f"GET {path}: {status} {body}"
        for item in body["items"]:
            meta = item["metadata"]
            view[meta["uid"]] = (item.get("kind") or body["kind"].removesuffix("List"),
                                 meta.get("namespace", ""), meta["name"])
    return view


def test_vala_writer_counts_every_object():
    assert os.access(PROGRAM, os.X_OK), f"{PROGRAM} was not built"
    with Kubesim(pods=50, namespaces=3) as sim:
        view = _cluster_view(sim)
        run = subprocess.run([PROGRAM, sim.kubeconfig], capture_output=True, text=True,
                             timeout=90, check=False)
        assert run.returncode == 0, f"{run.stdout}\n{run.stderr}\n{sim.log()}"

    lines = run.stdout.splitlines()
    assert lines[-1] == f"added {len(view)}", f"{lines[-1]!r}, cluster has {len(view)}"
    seen = {}
    for line in lines[:-1]:
        _, uid, kind, namespace, name = line.split("\t")
        assert uid not in seen, f"{uid} added twice"
        seen[uid] = (kind, namespace, name)
    assert seen == view

