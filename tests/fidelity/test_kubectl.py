"""kubectl (the real client, through its version dispatcher) against meshsync-kubesim.

Each test starts its own simulator over HTTPS with a bearer token, and gives kubectl its own
discovery cache directory, so that no test sees another's discovery documents.
"""

import json
import os
import shutil
import subprocess
import tempfile
import threading
import queue

import pytest
import yaml

from kubesim import Kubesim

KUBECTL = shutil.which("kubectl") or "kubectl"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


class Kubectl:
    """Runs kubectl with the simulator's kubeconfig and a private cache."""

    def __init__(self, sim):
        self.sim = sim
        self.cache = tempfile.mkdtemp(prefix="kubectl-cache-")
        self.env = dict(os.environ)
        self.env["KUBECONFIG"] = sim.kubeconfig
        self.env["KUBECACHEDIR"] = self.cache
        self.env["HOME"] = self.cache

    def run(self, *args, check=True, stdin=None):
        proc = subprocess.run([KUBECTL, *args], env=self.env, capture_output=True, text=True,
                              input=stdin, timeout=120)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({proc.returncode}):\n"
                                 f"{proc.stderr}\n--- kubesim log ---\n{self.sim.log()}")
        return proc

    def popen(self, *args):
        return subprocess.Popen([KUBECTL, *args], env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def close(self):
        shutil.rmtree(self.cache, ignore_errors=True)


@pytest.fixture
def cluster():
    with Kubesim(pods=50, namespaces=3) as sim:
        kubectl = Kubectl(sim)
        yield sim, kubectl
        kubectl.close()


def api_list(sim, path):
    status, body = sim.request("GET", path)
    assert status == 200, body
    return body["items"]


def test_get_pods_all_namespaces_lists_the_store(cluster):
    sim, kubectl = cluster
    want = sorted((p["metadata"]["namespace"], p["metadata"]["name"])
                  for p in api_list(sim, "/api/v1/pods"))
    assert len(want) == 50
    out = kubectl.run("get", "pods", "-A", "--no-headers").stdout
    got = sorted((line.split()[0], line.split()[1]) for line in out.splitlines() if line)
    assert got == want


def test_get_pods_prints_pod_columns(cluster):
    sim, kubectl = cluster
    header = kubectl.run("get", "pods", "-A").stdout.splitlines()[0].split()
    assert header == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"]


def test_get_namespaces_lists_the_store(cluster):
    sim, kubectl = cluster
    want = sorted(n["metadata"]["name"] for n in api_list(sim, "/api/v1/namespaces"))
    out = kubectl.run("get", "ns", "--no-headers").stdout
    got = sorted(line.split()[0] for line in out.splitlines() if line)
    assert got == want
    assert "default" in got


CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    shortNames: [wg]
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"""


def test_apply_crd_then_get_custom_resources(cluster):
    sim, kubectl = cluster
    # discovery is cached before the CRD exists, as in a real session
    kubectl.run("get", "ns")
    out = kubectl.run("apply", "--validate=false", "-f", "-", stdin=CRD).stdout
    assert "widgets.example.com" in out
    status, body = sim.request("POST", "/apis/example.com/v1/namespaces/team-1/widgets",
                               {"apiVersion": "example.com/v1", "kind": "Widget",
                                "metadata": {"name": "sprocket"}, "spec": {"size": 3}})
    assert status == 201, body
    out = kubectl.run("get", "widgets", "-A", "--no-headers").stdout.split()
    assert out[:2] == ["team-1", "sprocket"]
    out = kubectl.run("get", "wg", "-n", "team-1", "sprocket", "-o",
                      "jsonpath={.spec.size}").stdout
    assert out == "3"


def test_deleting_the_crd_removes_the_resource(cluster):
    sim, kubectl = cluster
    kubectl.run("apply", "--validate=false", "-f", "-", stdin=CRD)
    kubectl.run("delete", "crd", "widgets.example.com")
    proc = kubectl.run("get", "widgets", "-A", check=False)
    assert proc.returncode != 0
    assert "the server doesn't have a resource type \"widgets\"" in proc.stderr


def read_lines(stream, lines):
    for line in stream:
        lines.put(line)


def wait_line(lines, predicate, what, timeout=60):
    seen = []
    while True:
        try:
            line = lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"kubectl -w never printed {what}; saw {seen}") from None
        seen.append(line)
        if predicate(line):
            return line


def test_watch_sees_a_created_and_a_deleted_pod(cluster):
    sim, kubectl = cluster
    watches_before = sim.stats()["watches"]
    proc = kubectl.popen("get", "pods", "-n", "team-2", "-w", "--output-watch-events")
    lines = queue.Queue()
    reader = threading.Thread(target=read_lines, args=(proc.stdout, lines), daemon=True)
    reader.start()
    try:
        sim.wait_for_watches(watches_before + 1)
        victim = api_list(sim, "/api/v1/namespaces/team-2/pods")[0]["metadata"]["name"]
        sim.create({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": "watched-pod", "namespace": "team-2"},
                    "spec": {"containers": [{"name": "c", "image": "busybox"}]},
                    "status": {"phase": "Pending"}})
        wait_line(lines, lambda l: l.split()[:2] == ["ADDED", "watched-pod"],
                  "ADDED watched-pod")
        sim.delete("v1", "Pod", victim, namespace="team-2")
        wait_line(lines, lambda l: l.split()[:2] == ["DELETED", victim], f"DELETED {victim}")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    # the simulator notices the closed stream
    sim.wait_for(lambda: sim.stats()["watches"] == watches_before, "the watch to be closed")


def test_delete_pod(cluster):
    sim, kubectl = cluster
    pod = api_list(sim, "/api/v1/namespaces/team-3/pods")[0]["metadata"]["name"]
    out = kubectl.run("delete", "pod", "-n", "team-3", pod, "--wait=false").stdout
    assert f'pod "{pod}" deleted' in out
    status, body = sim.request("GET", f"/api/v1/namespaces/team-3/pods/{pod}")
    assert status == 404 and body["reason"] == "NotFound"
    proc = kubectl.run("delete", "pod", "-n", "team-3", pod, check=False)
    assert proc.returncode != 0
    assert f'pods "{pod}" not found' in proc.stderr


def test_thousand_pods_listed_in_full():
    with Kubesim(pods=1000, namespaces=5) as sim:
        kubectl = Kubectl(sim)
        try:
            out = kubectl.run("get", "pods", "-A", "--no-headers").stdout
            rows = [line for line in out.splitlines() if line]
            assert len(rows) == 1000
            assert len({tuple(r.split()[:2]) for r in rows}) == 1000
        finally:
            kubectl.close()


def test_wrong_token_is_refused():
    with Kubesim(pods=1, namespaces=1) as sim:
        kubectl = Kubectl(sim)
        try:
            kubectl.run("config", "set-credentials", "kubesim-user", "--token=not-the-token")
            proc = kubectl.run("get", "pods", "-A", check=False)
            assert proc.returncode != 0
            assert "You must be logged in to the server" in proc.stderr
        finally:
            kubectl.close()


def test_objects_carry_managed_fields_and_last_applied_configuration(cluster):
    sim, kubectl = cluster
    # kubectl hides managedFields from -o json unless asked; it must read them either way
    pods = json.loads(kubectl.run("get", "pods", "-A", "-o", "json").stdout)["items"]
    assert len(pods) == 50
    assert all("managedFields" not in p["metadata"] for p in pods)
    pods = json.loads(kubectl.run("get", "pods", "-A", "-o", "json",
                                  "--show-managed-fields").stdout)["items"]
    for pod in pods:
        entries = pod["metadata"]["managedFields"]
        assert [e["manager"] for e in entries][:2] == ["kube-controller-manager", "kubelet"]
        for entry in entries:
            assert entry["operation"] == "Update" and entry["fieldsType"] == "FieldsV1"
            assert entry["apiVersion"] == "v1" and entry["time"].endswith("Z")
        assert entries[1]["subresource"] == "status"
        owner = pod["metadata"]["ownerReferences"][0]
        assert f'k:{{"uid":"{owner["uid"]}"}}' in \
            entries[0]["fieldsV1"]["f:metadata"]["f:ownerReferences"]
        assert "f:containers" in entries[0]["fieldsV1"]["f:spec"]

    pod = pods[0]["metadata"]
    managers = kubectl.run("get", "pod", "-n", pod["namespace"], pod["name"], "-o",
                           "jsonpath={.metadata.managedFields[*].manager}").stdout
    assert managers.split()[:2] == ["kube-controller-manager", "kubelet"]

    deployments = yaml.safe_load(kubectl.run("get", "deploy", "-A", "-o", "yaml").stdout)
    assert deployments["items"]
    for deployment in deployments["items"]:
        meta = deployment["metadata"]
        applied_text = meta["annotations"][LAST_APPLIED]
        assert applied_text.endswith("\n")
        applied = json.loads(applied_text)
        assert (applied["kind"], applied["metadata"]["name"]) == ("Deployment", meta["name"])
        assert applied["metadata"]["namespace"] == meta["namespace"]
        assert applied["spec"]["replicas"] == deployment["spec"]["replicas"]
        assert LAST_APPLIED not in applied["metadata"]["annotations"]
    meta = deployments["items"][0]["metadata"]
    text = kubectl.run("get", "deploy", "-n", meta["namespace"], meta["name"], "-o",
                       "jsonpath={.metadata.annotations.kubectl\\.kubernetes\\.io/"
                       "last-applied-configuration}").stdout
    assert json.loads(text) == json.loads(meta["annotations"][LAST_APPLIED])

    for kind in ("services", "configmaps"):
        items = json.loads(kubectl.run("get", kind, "-A", "-o", "json").stdout)["items"]
        applied = [json.loads(i["metadata"]["annotations"][LAST_APPLIED]) for i in items
                   if LAST_APPLIED in i["metadata"].get("annotations", {})]
        assert applied, f"no {kind} carry a last-applied-configuration"
        assert all(a["metadata"]["name"] in {i["metadata"]["name"] for i in items}
                   for a in applied)


def test_kubectl_names_the_kind_of_list_items_the_server_leaves_it_out_of(cluster):
    sim, kubectl = cluster
    status, body = sim.request("GET", "/api/v1/namespaces/team-1/pods")
    assert status == 200 and all("kind" not in item for item in body["items"])
    names = sorted(item["metadata"]["name"] for item in body["items"])

    # kubectl takes the kind from the list, as with a real server
    listed = json.loads(kubectl.run("get", "pods", "-n", "team-1", "-o", "json").stdout)
    assert sorted(i["metadata"]["name"] for i in listed["items"]) == names
    assert {(i["kind"], i["apiVersion"]) for i in listed["items"]} == {("Pod", "v1")}
    listed = yaml.safe_load(kubectl.run("get", "deploy", "-A", "-o", "yaml").stdout)
    assert listed["items"] and \
        {(i["kind"], i["apiVersion"]) for i in listed["items"]} == {("Deployment", "apps/v1")}
    out = kubectl.run("get", "pods", "-n", "team-1", "-o", "name").stdout.split()
    assert out == [f"pod/{name}" for name in names]
    out = kubectl.run("get", "pods", "-n", "team-1", "--chunk-size=2", "--no-headers").stdout
    assert sorted(line.split()[0] for line in out.splitlines()) == names


def test_kubectl_writes_are_recorded_under_its_field_managers(cluster):
    sim, kubectl = cluster
    manifest = {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "applied", "namespace": "team-1"}, "data": {"a": "1"}}
    kubectl.run("apply", "--validate=false", "-f", "-", stdin=json.dumps(manifest))
    kubectl.run("label", "configmap", "-n", "team-1", "applied", "tier=web")
    kubectl.run("annotate", "configmap", "-n", "team-1", "applied", "note=hi")
    got = json.loads(kubectl.run("get", "configmap", "-n", "team-1", "applied", "-o", "json",
                                 "--show-managed-fields").stdout)
    entries = {e["manager"]: e for e in got["metadata"]["managedFields"]}
    assert set(entries) == {"kubectl-client-side-apply", "kubectl-label", "kubectl-annotate"}
    applied = entries["kubectl-client-side-apply"]["fieldsV1"]
    assert applied["f:data"] == {".": {}, "f:a": {}}
    assert "f:kubectl.kubernetes.io/last-applied-configuration" in \
        applied["f:metadata"]["f:annotations"]
    assert entries["kubectl-label"]["fieldsV1"] == \
        {"f:metadata": {"f:labels": {".": {}, "f:tier": {}}}}
    assert entries["kubectl-annotate"]["fieldsV1"] == \
        {"f:metadata": {"f:annotations": {"f:note": {}}}}
