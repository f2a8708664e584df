"""The manifests of data/kubernetes, as an operator-less user applies them: with the real
kubectl against kubesim (applied, read back, dry-run on the server), the Deployment held to
Pod Security "restricted" and to what Meshery Operator renders, and the ClusterRole held to
what a default meshsync run asks of the API server (kubesim counts requests by verb and
resource).

kubesim serves no OpenAPI document, so kubectl runs with --validate=false; nothing else
differs from applying to a cluster.
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest
import yaml

from kubesim import Kubesim

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from meshsync_run import Meshsync, env_allowing_warnings  # noqa: E402

SOURCE_ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
MANIFESTS = os.path.join(SOURCE_ROOT, "data", "kubernetes")
OPT_IN = os.path.join(MANIFESTS, "opt-in")
KUBECTL = "/usr/bin/kubectl"


def load(path):
    with open(path, encoding="utf-8") as f:
        return [doc for doc in yaml.safe_load_all(f) if doc]


def manifests():
    """Every object `kubectl apply -f data/kubernetes/` applies, in its order."""
    return [doc for path in sorted(glob.glob(os.path.join(MANIFESTS, "*.yaml")))
            for doc in load(path)]


def find(docs, kind, name=None):
    found = [d for d in docs if d["kind"] == kind and (name is None or
                                                      d["metadata"]["name"] == name)]
    assert len(found) == 1, f"one {kind} {name or ''} expected, found {len(found)}"
    return found[0]


def project_version():
    with open(os.path.join(SOURCE_ROOT, "meson.build"), encoding="utf-8") as f:
        return re.search(r"version:\s*'([^']+)'", f.read()).group(1)


class Kubectl:
    """kubectl with the simulator's kubeconfig and a private discovery cache."""

    def __init__(self, sim):
        self.cache = tempfile.mkdtemp(prefix="kubectl-cache-")
        self.env = dict(os.environ, KUBECONFIG=sim.kubeconfig, KUBECACHEDIR=self.cache,
                        HOME=self.cache)
        self.sim = sim

    def run(self, *args, check=True):
        proc = subprocess.run([KUBECTL, *args], env=self.env, capture_output=True, text=True,
                              timeout=120, check=False)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({proc.returncode}):\n"
                                 f"{proc.stderr}\n--- kubesim log ---\n{self.sim.log()}")
        return proc

    def get(self, doc, check=True):
        kind = doc["kind"].lower() + ("." + group_of(doc) if group_of(doc) else "")
        args = ["get", kind, doc["metadata"]["name"], "-o", "yaml"]
        if "namespace" in doc["metadata"]:
            args += ["-n", doc["metadata"]["namespace"]]
        proc = self.run(*args, check=check)
        return yaml.safe_load(proc.stdout) if proc.returncode == 0 else None

    def close(self):
        shutil.rmtree(self.cache, ignore_errors=True)


def group_of(doc):
    api_version = doc["apiVersion"]
    return api_version.split("/")[0] if "/" in api_version else ""


@pytest.fixture
def cluster():
    with Kubesim(pods=20, namespaces=2) as sim:
        kubectl = Kubectl(sim)
        yield sim, kubectl
        kubectl.close()


def contains(got, want, path="$"):
    """Fails unless everything in @want is in @got (the server may add, never change)."""
    if isinstance(want, dict):
        assert isinstance(got, dict), f"{path}: {got!r} is not a mapping"
        for key, value in want.items():
            assert key in got, f"{path}.{key} missing"
            contains(got[key], value, f"{path}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{path}: {got!r} != {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            contains(g, w, f"{path}[{i}]")
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"


# -- the Deployment ------------------------------------------------------------------------

def assert_pod_security_restricted(pod):
    pod_sc = pod.get("securityContext", {})

    # Pod Security Standards, restricted profile (baseline included)
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        assert not pod.get(key), key
    for volume in pod.get("volumes", []):
        assert set(volume) - {"name"} <= {"emptyDir", "configMap", "secret", "projected",
                                          "downwardAPI", "persistentVolumeClaim",
                                          "ephemeral", "csi"}, volume
    assert pod_sc.get("seccompProfile", {}).get("type") == "RuntimeDefault"
    for container in pod["containers"] + pod.get("initContainers", []):
        sc = container.get("securityContext", {})
        assert not sc.get("privileged")
        assert sc.get("allowPrivilegeEscalation") is False
        assert sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot")) is True
        uid = sc.get("runAsUser", pod_sc.get("runAsUser"))
        assert isinstance(uid, int) and uid != 0, "a numeric non-root user"
        assert sc.get("capabilities", {}).get("drop") == ["ALL"]
        assert set(sc.get("capabilities", {}).get("add", [])) <= {"NET_BIND_SERVICE"}
        assert sc.get("seccompProfile", pod_sc.get("seccompProfile"))["type"] in (
            "RuntimeDefault", "Localhost")
        assert sc.get("readOnlyRootFilesystem") is True
        for port in container.get("ports", []):
            assert "hostPort" not in port



def test_deployment_passes_pod_security_restricted_as_the_operator_renders_it():
    docs = manifests()
    deployment = find(docs, "Deployment", "meshery-meshsync")
    pod = deployment["spec"]["template"]["spec"]
    assert_pod_security_restricted(pod)

    # what Meshery Operator sets: image tag, command, port, env, probes
    (container,) = pod["containers"]
    image, _, tag = container["image"].rpartition(":")
    assert image.endswith("meshery/meshsync") and tag == project_version()
    assert container["command"] == ["./meshery-meshsync"]
    assert {"name": "client", "containerPort": 11000, "protocol": "TCP"} in container["ports"]
    assert "BROKER_URL" in {e["name"] for e in container["env"]}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "client"}
    assert container["livenessProbe"]["exec"]["command"] == ["./meshery-meshsync", "-h"]
    mounts = {m["mountPath"] for m in container.get("volumeMounts", [])}
    assert "/tmp" in mounts, "a writable /tmp under the read-only root"

    account = find(docs, "ServiceAccount")
    assert pod["serviceAccountName"] == account["metadata"]["name"]
    assert deployment["metadata"]["namespace"] == account["metadata"]["namespace"]
    binding = find(docs, "ClusterRoleBinding")
    assert binding["roleRef"]["name"] == find(docs, "ClusterRole")["metadata"]["name"]
    assert binding["subjects"] == [{"kind": "ServiceAccount",
                                    "name": account["metadata"]["name"],
                                    "namespace": account["metadata"]["namespace"]}]
    # the namespace comes first in `kubectl apply -f` order
    assert docs[0]["kind"] == "Namespace"
    assert docs[0]["metadata"]["name"] == deployment["metadata"]["namespace"]


# -- applying ------------------------------------------------------------------------------

def test_apply_creates_every_object_and_reads_back(cluster):
    sim, kubectl = cluster
    out = kubectl.run("apply", "--validate=false", "-f", MANIFESTS + "/").stdout
    docs = manifests()
    for doc in docs:
        got = kubectl.get(doc)
        contains(got, {k: v for k, v in doc.items()}, f"{doc['kind']}/{doc['metadata']['name']}")
        assert got["metadata"].get("uid"), got["metadata"]
    assert len(out.splitlines()) == len(docs), out

    # the opt-in grants apply on top
    kubectl.run("apply", "--validate=false", "-f", OPT_IN + "/")
    for path in sorted(glob.glob(os.path.join(OPT_IN, "*.yaml"))):
        for doc in load(path):
            contains(kubectl.get(doc), doc)

    # and applying again changes nothing
    before = sim.stats()["resourceVersion"]
    out = kubectl.run("apply", "--validate=false", "-f", MANIFESTS + "/").stdout
    assert all(line.endswith(" unchanged") for line in out.splitlines()), out
    assert sim.stats()["resourceVersion"] == before


def test_server_dry_run_keeps_nothing(cluster, tmp_path):
    sim, kubectl = cluster
    docs = [d for d in manifests() if d["kind"] != "CustomResourceDefinition"]
    sim.admin("requests", method="DELETE")
    before = sim.stats()
    out = kubectl.run("apply", "--validate=false", "--dry-run=server",
                      "-f", MANIFESTS + "/").stdout
    assert "(server dry run)" in out, out
    after = sim.stats()
    assert (after["objects"], after["resourceVersion"]) == (before["objects"],
                                                            before["resourceVersion"])
    for doc in docs:
        assert kubectl.get(doc, check=False) is None, f"{doc['kind']} was kept"
    creates = sim.admin("requests", method="GET")["resources"]
    assert creates.get("create apps/deployments") == 1, creates

    # a dry-run change of what exists: patched in the answer, not in the store
    kubectl.run("apply", "--validate=false", "-f", MANIFESTS + "/")
    changed = tmp_path / "changed.yaml"
    with open(changed, "w", encoding="utf-8") as f:
        for doc in docs:
            doc.setdefault("metadata", {}).setdefault("labels", {})["dry-run"] = "yes"
        yaml.safe_dump_all(docs, f)
    sim.admin("requests", method="DELETE")
    rv = sim.stats()["resourceVersion"]
    out = kubectl.run("apply", "--validate=false", "--dry-run=server", "-f", str(changed),
                      "-o", "yaml").stdout
    answered = [d for d in yaml.safe_load_all(out) if d]
    items = answered[0]["items"] if answered and answered[0].get("kind") == "List" \
        else answered
    assert all(i["metadata"]["labels"].get("dry-run") == "yes" for i in items), out
    assert sim.stats()["resourceVersion"] == rv
    for doc in docs:
        assert "dry-run" not in (kubectl.get(doc)["metadata"].get("labels") or {})
    patches = sim.admin("requests", method="GET")["resources"]
    assert patches.get("patch apps/deployments") == 1, patches

    status, body = sim.request("POST", "/api/v1/namespaces/default/configmaps?dryRun=Some",
                               {"metadata": {"name": "x"}})
    assert status == 400 and "dryRun" in body["message"], body


# -- RBAC against what meshsync asks -------------------------------------------------------

def grants(rules, verb, group, resource, names):
    """Whether RBAC @rules allow @verb on @group/@resource for every one of @names (None: a
    request that names no object, which a rule with resourceNames does not allow)."""
    for rule in rules:
        if not ({group, "*"} & set(rule.get("apiGroups", [])) and
                {resource, "*"} & set(rule.get("resources", [])) and
                {verb, "*"} & set(rule.get("verbs", []))):
            continue
        allowed = rule.get("resourceNames")
        if not allowed or (names is not None and set(names) <= set(allowed)):
            return True
    return False


def requested(answer):
    """[(verb, group, resource[/sub], names or None)] from /kubesim/requests."""
    out = []
    for key in answer["resources"]:
        verb, _, rest = key.partition(" ")
        group, _, resource = rest.partition("/")
        out.append((verb, group, resource, answer["resourceNames"].get(key)))
    return out


def rules_of(docs):
    return [rule for d in docs if d["kind"] in ("ClusterRole", "Role") for rule in d["rules"]]


def test_clusterrole_grants_what_a_default_run_asks_and_nothing_sensitive(cluster, tmp_path):
    sim, kubectl = cluster
    cluster_role = find(manifests(), "ClusterRole")
    rules = cluster_role["rules"]
    secrets = rules_of(load(os.path.join(OPT_IN, "secrets.yaml")))
    sessions = rules_of(load(os.path.join(OPT_IN, "sessions.yaml")))

    # nothing sensitive, and no wildcard that could include it
    for rule in rules:
        for field in ("apiGroups", "resources", "verbs"):
            assert "*" not in rule[field], rule
        assert not {"secrets", "pods/log", "pods/exec", "pods/attach"} & set(rule["resources"])
    assert grants(secrets, "list", "", "secrets", None)
    assert grants(sessions, "get", "", "pods/log", ["p"])
    assert grants(sessions, "create", "", "pods/exec", ["p"])

    # the MeshSync resource present, as under Meshery Operator, so its read and the CRD
    # watch it enables are among the requests
    kubectl.run("apply", "--validate=false", "-f", MANIFESTS + "/")
    sim.create({"apiVersion": "meshery.io/v1alpha1", "kind": "MeshSync",
                "metadata": {"name": "meshery-meshsync", "namespace": "meshery"},
                "spec": {}})
    sim.admin("requests", method="DELETE")
    # its empty spec is warned about (no watch-list: the whole built-in table is watched)
    with Meshsync(str(tmp_path), sim.kubeconfig, "--stop-after-sync",
                  env=env_allowing_warnings()) as run:
        assert run.wait_exit() == 0, run.log()
    made = requested(sim.admin("requests", method="GET"))
    keys = {(verb, group, resource) for verb, group, resource, _ in made}
    assert {("watch", "", "pods"), ("get", "meshery.io", "meshsyncs"),
            ("get", "", "namespaces")} <= keys, sorted(keys)

    refused = [(verb, group, resource, names) for verb, group, resource, names in made
               if not grants(rules, verb, group, resource, names)]
    # Secrets are in the default watch set but only the opt-in grants them
    assert {(v, g, r) for v, g, r, _ in refused} <= {("list", "", "secrets"),
                                                     ("watch", "", "secrets")}, refused
    assert all(grants(secrets, v, g, r, n) for v, g, r, n in refused), refused


# -- the sharded StatefulSet ---------------------------------------------------------------

def test_sharded_statefulset_applies_and_names_its_shards(cluster):
    sim, kubectl = cluster
    (statefulset,) = load(os.path.join(MANIFESTS, "sharded", "statefulset.yaml"))
    pod = statefulset["spec"]["template"]["spec"]
    assert_pod_security_restricted(pod)
    (container,) = pod["containers"]
    replicas = statefulset["spec"]["replicas"]
    assert container["command"] == ["./meshery-meshsync", f"--total-shards={replicas}"]
    # the shard comes from the pod's name, which ends in its ordinal
    env = {e["name"]: e for e in container["env"]}
    assert env["POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    assert pod["serviceAccountName"] == find(manifests(), "ServiceAccount")["metadata"]["name"]
    kubectl.run("apply", "--validate=false", "-f", MANIFESTS + "/")
    kubectl.run("apply", "--validate=false", "-f",
                os.path.join(MANIFESTS, "sharded", "statefulset.yaml"))
    contains(kubectl.get(statefulset), statefulset)
