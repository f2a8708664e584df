"""This image under Meshery Operator: the Deployment is built as the Operator renders it from a
MeshSync resource whose spec.version is this project's image tag (the facts are taken from
meshery-operator's pkg/meshsync, see doc/operator.md), stored in kubesim through the API and
read back, and then held to the image: the command it runs is in the runtime tree
(scripts/runtime-tree) and starts there as the image's user with the environment the
Deployment gives it, every probe it declares succeeds against that process (an exec probe run
in the tree, an httpGet probe sent to the port its name resolves to) and the port named
`client` is the one the daemon serves. The broker is a real nats-server; every wait is for an
HTTP answer.
"""

import os
import re
import socket
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
import yaml

from kubesim import Kubesim
from nats_server import NatsServer, wait_until

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from meshsync_run import DaemonProcess  # noqa: E402
from test_image import RUNTIME_TREE, DAEMON, chroot_argv, image_user  # noqa: E402
from test_manifests import contains, project_version  # noqa: E402

SOURCE_ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
CRD = os.path.join(SOURCE_ROOT, "data", "kubernetes", "crd-meshsync.yaml")

# -- the Operator's rendering, mirrored --------------------------------------------------------
# Facts of meshery-operator's pkg/meshsync (resources.go, meshsync.go) and
# controllers/meshsync_controller.go; doc/operator.md names the files and what each does.

OPERATOR_IMAGE_REPO = "meshery/meshsync"
OPERATOR_DEFAULT_TAG = "stable-latest"
OPERATOR_FIELD_MANAGER = "meshery-operator-meshsync"
# the first MeshSync release the Operator trusts to serve /healthz and /readyz
OPERATOR_HTTP_PROBES_FROM = (1, 0, 1)
OPERATOR_LABELS = {"app": "meshery", "component": "meshsync"}
OPERATOR_ANNOTATIONS = {"meshery/component-type": "management-plane"}


def semver(version):
    """(major, minor, patch) of a plain release version with or without its "v", or None for
    anything else: a channel tag, a commit, a pre-release."""
    m = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)", version)
    return tuple(int(g) for g in m.groups()) if m else None


def publishing_to(meshsync, broker_endpoint=None, token=""):
    """status.publishing-to: a native Broker's internal endpoint (with the auth token as
    userinfo when the Broker has one), else the custom URL."""
    broker = meshsync["spec"].get("broker", {})
    if broker.get("native"):
        if not broker_endpoint:
            return ""
        return "nats://" + (token + "@" if token else "") + broker_endpoint
    return broker.get("custom", {}).get("url", "")


def operator_deployment(meshsync, broker_endpoint=None):
    """The apps/v1 Deployment the Operator applies for @meshsync (a MeshSync resource with its
    metadata.uid), the fields it sets and nothing else."""
    meta, spec = meshsync["metadata"], meshsync["spec"]
    version = spec.get("version", "")
    tag = version or OPERATOR_DEFAULT_TAG
    pinned = bool(version) and not version.endswith("-latest")
    container = {
        "name": "meshsync",
        "image": f"{OPERATOR_IMAGE_REPO}:{tag}",
        "imagePullPolicy": "IfNotPresent" if pinned else "Always",
        "ports": [{"name": "client", "containerPort": 11000}],
        "command": ["./meshery-meshsync"],
        "env": [{"name": "BROKER_URL", "value": "nats://localhost:4222"}],
        "resources": {"requests": {"cpu": "500m", "memory": "512Mi"},
                      "limits": {"cpu": "4", "memory": "4Gi"}},
        "livenessProbe": {"exec": {"command": ["./meshery-meshsync", "-h"]},
                          "initialDelaySeconds": 60, "periodSeconds": 30,
                          "timeoutSeconds": 30, "failureThreshold": 5},
    }
    release = semver(version)
    if release is not None and release >= OPERATOR_HTTP_PROBES_FROM:
        container["livenessProbe"] = {"httpGet": {"path": "/healthz", "port": "client"},
                                      "initialDelaySeconds": 10, "periodSeconds": 30,
                                      "timeoutSeconds": 5, "failureThreshold": 5}
        container["readinessProbe"] = {"httpGet": {"path": "/readyz", "port": "client"},
                                       "initialDelaySeconds": 5, "periodSeconds": 10,
                                       "timeoutSeconds": 5, "failureThreshold": 3}
    url = publishing_to(meshsync, broker_endpoint)
    if url:
        container["env"][0]["value"] = url if "://" in url else "nats://" + url
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": meta["name"], "namespace": meta["namespace"],
            "labels": dict(OPERATOR_LABELS), "annotations": dict(OPERATOR_ANNOTATIONS),
            "ownerReferences": [{"apiVersion": "meshery.io/v1alpha1", "kind": "MeshSync",
                                 "name": meta["name"], "uid": meta["uid"],
                                 "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": {
            "replicas": spec.get("size") or 1,
            "selector": {"matchLabels": dict(OPERATOR_LABELS)},
            "template": {
                "metadata": {"name": meta["name"], "labels": dict(OPERATOR_LABELS),
                             "annotations": dict(OPERATOR_ANNOTATIONS)},
                "spec": {
                    "serviceAccountName": "meshery-operator",
                    "shareProcessNamespace": True,
                    "terminationGracePeriodSeconds": 60,
                    "containers": [container],
                },
            },
        },
    }


def meshsync_resource(version, broker_url):
    """The MeshSync resource doc/operator.md tells the user to apply, with @broker_url as its
    custom broker (the test's nats-server) and a watch list of what kubesim serves."""
    events = '"Events":["ADDED","MODIFIED","DELETED"]'
    whitelist = "[" + ",".join('{"Resource":"%s",%s}' % (r, events) for r in (
        "namespaces.v1.", "pods.v1.", "configmaps.v1.", "deployments.v1.apps")) + "]"
    return {
        "apiVersion": "meshery.io/v1alpha1",
        "kind": "MeshSync",
        "metadata": {"name": "meshery-meshsync", "namespace": "meshery"},
        "spec": {
            "size": 1,
            "version": version,
            "broker": {"custom": {"url": broker_url}},
            "watch-list": {"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": "watch-list", "namespace": "meshery"},
                           "data": {"whitelist": whitelist}},
        },
    }


# -- helpers -----------------------------------------------------------------------------------

def api(sim, method, path, body=None):
    status, answer = sim.request(method, path, body)
    assert 200 <= status < 300, f"{method} {path}: {status} {answer}\n{sim.log()}"
    return answer


def install_crd(sim):
    with open(CRD, encoding="utf-8") as f:
        crd = yaml.safe_load(f)
    # kubesim may hold it already, as a cluster with the Operator's chart installed does
    status, answer = sim.request(
        "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert 200 <= status < 300 or status == 409, (status, answer)
    # served once discovery lists it: wait on that, not on time
    def served():
        status, answer = sim.request("GET", "/apis/meshery.io/v1alpha1")
        return status == 200 and any(r["name"] == "meshsyncs"
                                     for r in answer.get("resources", []))
    wait_until(served, "the MeshSync CRD served")


def get(port, path):
    """(status, body) of one GET on 127.0.0.1:@port, or None while nothing answers."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()
    except (ConnectionError, urllib.error.URLError, socket.timeout):
        return None


def port_number(container, port):
    """A probe's port: a number as is, a name resolved through the container's ports."""
    if isinstance(port, int):
        return port
    (number,) = [p["containerPort"] for p in container["ports"] if p["name"] == port]
    return number


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("image") / "root")
    uid, _ = image_user()
    proc = subprocess.run([sys.executable, RUNTIME_TREE, "--binary", DAEMON, "--uid", str(uid),
                           root], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return root


# -- the rendering itself ----------------------------------------------------------------------

def test_rendering_follows_spec_version():
    """What the doc says the Operator does with spec.version, as the mirror renders it."""
    ours = operator_deployment(dict(meshsync_resource(project_version(), "nats://b:4222"),
                                    metadata={"name": "m", "namespace": "n", "uid": "u"}))
    (c,) = ours["spec"]["template"]["spec"]["containers"]
    assert c["image"] == f"meshery/meshsync:{project_version()}"
    assert c["imagePullPolicy"] == "IfNotPresent", "a pinned tag: a side-loaded image is used"
    assert c["livenessProbe"]["exec"]["command"] == ["./meshery-meshsync", "-h"]
    assert "readinessProbe" not in c, "below the Operator's HTTP-probe version: exec only"
    assert c["env"] == [{"name": "BROKER_URL", "value": "nats://b:4222"}]

    channel = operator_deployment(dict(meshsync_resource("", "b:4222"),
                                       metadata={"name": "m", "namespace": "n", "uid": "u"}))
    (c,) = channel["spec"]["template"]["spec"]["containers"]
    assert c["image"] == "meshery/meshsync:stable-latest" and c["imagePullPolicy"] == "Always"
    assert c["env"][0]["value"] == "nats://b:4222", "a bare host:port gets nats://"


# -- the Deployment against the image ----------------------------------------------------------

VERSIONS = [pytest.param(None, id="project-version"), pytest.param("v1.0.1", id="http-probes")]


@pytest.mark.parametrize("version", VERSIONS)
def test_operator_deployment_runs_this_image(tree, version):
    version = version or project_version()
    with socket.socket() as s:
        # as the daemon binds: a connection of the previous case in TIME_WAIT is no listener
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("0.0.0.0", 11000))
        except OSError:
            pytest.fail("port 11000 (the Deployment's `client` port) is taken on this machine")

    with Kubesim(pods=20, namespaces=2) as sim, NatsServer() as nats:
        # the resources the user applies: the namespace, the CRD and the MeshSync resource
        api(sim, "POST", "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "meshery"}})
        install_crd(sim)
        meshsync = api(sim, "POST", "/apis/meshery.io/v1alpha1/namespaces/meshery/meshsyncs",
                       meshsync_resource(version, nats.url))

        # what the Operator applies, stored and read back unchanged
        rendered = operator_deployment(meshsync)
        path = "/apis/apps/v1/namespaces/meshery/deployments"
        api(sim, "POST", f"{path}?fieldManager={OPERATOR_FIELD_MANAGER}", rendered)
        stored = api(sim, "GET", f"{path}/meshery-meshsync")
        contains(stored, rendered)
        pod = stored["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        assert container["image"] == f"meshery/meshsync:{version}"
        assert {"name": "client", "containerPort": 11000} in [
            {k: p[k] for k in ("name", "containerPort")} for p in container["ports"]]
        assert "hostPort" not in container["ports"][0]

        # the command is the image's entrypoint, found from the working directory
        command = container["command"]
        assert command == ["./meshery-meshsync"]
        binary = os.path.join(tree, command[0])
        assert os.path.isfile(binary) and os.access(binary, os.X_OK)

        # started as the pod starts it: the Deployment's env over the image's, no arguments;
        # the kubeconfig stands in for the in-cluster service account
        with open(sim.kubeconfig, encoding="utf-8") as src, \
                open(os.path.join(tree, "kubeconfig"), "w", encoding="utf-8") as dst:
            dst.write(src.read())
        os.chmod(os.path.join(tree, "kubeconfig"), 0o644)
        env = {e["name"]: e["value"] for e in container["env"]}
        assert env == {"BROKER_URL": nats.url}
        env["KUBECONFIG"] = "/kubeconfig"
        argv = chroot_argv(tree, command)
        argv[2:2] = [f"{k}={v}" for k, v in env.items()]
        with DaemonProcess(str(os.path.dirname(tree)), argv) as run:
            try:
                # every probe the Deployment declares succeeds against the process
                probes = [container[k] for k in ("livenessProbe", "readinessProbe")
                          if k in container]
                for probe in probes:
                    if "exec" in probe:
                        proc = subprocess.run(chroot_argv(tree, probe["exec"]["command"]),
                                              capture_output=True, text=True, timeout=60,
                                              check=False)
                        assert proc.returncode == 0, (probe, proc.stderr)
                    else:
                        target = port_number(container, probe["httpGet"]["port"])
                        assert target == 11000
                        wait_until(lambda: get(target, probe["httpGet"]["path"]) == (200, "ok"),
                                   f"{probe['httpGet']['path']} answering 200", proc=run.proc,
                                   log=run.log)

                # the port named `client` is where the daemon serves its health paths, and it
                # is ready only once connected to the broker the Deployment names
                client = port_number(container, "client")
                wait_until(lambda: get(client, "/readyz") == (200, "ok"), "/readyz answering 200",
                           proc=run.proc, log=run.log)
                assert get(client, "/healthz") == (200, "ok")
                status, body = get(client, "/readyz?verbose")
                assert status == 200 and "[+]broker ok" in body, body
                # the watch list came from the MeshSync resource the Operator was given
                run.wait_for_line("watch configuration from the MeshSync resource")
            finally:
                run.proc.terminate()
                assert run.wait_exit() == 0, run.log()
        os.unlink(os.path.join(tree, "kubeconfig"))
