"""Pod logs and exec through the real clients: kubectl (through its version dispatcher, so the
kubectl that matches kubesim's /version, which exec over WebSockets) and python3-kubernetes.

kubesim makes up a few startup lines per container instance and appends what /kubesim/logs
is given; exec runs its built-in commands in-process over the v5 (kubectl) or v4 (python)
channel protocol.
"""

import queue
import threading

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from kubesim import Kubesim
from test_kubectl import Kubectl
from test_python_client import make_api_client

NS = "io"
WAIT = 60  # upper bound for waiting on output; a healthy run never gets close


def pod_manifest(name, containers, restarted=None):
    """A running pod of @containers; @restarted: a container that ran before (a previous
    instance, terminated with exit code 2)."""
    statuses = []
    for i, cname in enumerate(containers):
        status = {
            "name": cname, "ready": True, "restartCount": 0, "started": True,
            "image": "registry.example.com/shop/api:2.14.1",
            "imageID": "registry.example.com/shop/api@sha256:" + "ab" * 32,
            "containerID": f"containerd://{name}-{cname}-{'0' * 40}",
            "state": {"running": {"startedAt": "2026-01-01T10:00:00Z"}},
            "lastState": {},
        }
        if cname == restarted:
            status["restartCount"] = 1
            status["lastState"] = {"terminated": {
                "exitCode": 2, "reason": "Error",
                "startedAt": "2026-01-01T09:00:00Z", "finishedAt": "2026-01-01T09:59:59Z",
                "containerID": f"containerd://{name}-{cname}-{'1' * 40}"}}
        statuses.append(status)
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NS,
                     "creationTimestamp": "2026-01-01T09:00:00Z"},
        "spec": {"nodeName": "node-1", "containers": [
            {"name": c, "image": "registry.example.com/shop/api:2.14.1",
             "env": [{"name": "APP_MODE", "value": "production"}]} for c in containers]},
        "status": {"phase": "Running", "containerStatuses": statuses},
    }


@pytest.fixture
def sim():
    with Kubesim() as s:
        s.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        s.create(pod_manifest("solo", ["app"], restarted="app"))
        s.create(pod_manifest("duo", ["app", "sidecar"]))
        yield s


@pytest.fixture
def kubectl(sim):
    k = Kubectl(sim)
    yield k
    k.close()


@pytest.fixture
def api(sim):
    with make_api_client(sim) as a:
        yield client.CoreV1Api(a)


def reader(pipe):
    """Lines of @pipe in a queue, read by a thread, so that a test waits on output."""
    lines = queue.Queue()

    def run():
        for line in pipe:
            lines.put(line)
        lines.put(None)
    threading.Thread(target=run, daemon=True).start()
    return lines


def wait_for_line(lines, text, seen):
    while True:
        try:
            line = lines.get(timeout=WAIT)
        except queue.Empty:
            raise AssertionError(f"never saw {text!r}; saw {seen}") from None
        if line is None:
            raise AssertionError(f"the stream ended before {text!r}; saw {seen}")
        seen.append(line)
        if text in line:
            return


# ---- logs ----

def test_kubectl_logs_prints_the_startup_lines(sim, kubectl):
    out = kubectl.run("logs", "-n", NS, "solo").stdout.splitlines()
    assert len(out) >= 3
    assert "starting app" in out[0]
    # the same instance says the same every time
    assert kubectl.run("logs", "-n", NS, "solo").stdout.splitlines() == out


def test_kubectl_logs_tail_and_timestamps(sim, kubectl):
    sim.append_log(NS, "solo", "app", "one", "two", "three")
    out = kubectl.run("logs", "-n", NS, "solo", "--tail=2").stdout
    assert out == "two\nthree\n"
    stamped = kubectl.run("logs", "-n", NS, "solo", "--tail=1", "--timestamps").stdout
    stamp, text = stamped.rstrip("\n").split(" ", 1)
    assert text == "three"
    assert stamp.endswith("Z") and len(stamp.split(".")[1]) == 10  # nine digits and Z


def test_kubectl_logs_previous_instance(sim, kubectl):
    sim.append_log(NS, "solo", "app", "only in the current instance")
    previous = kubectl.run("logs", "-n", NS, "solo", "--previous").stdout
    assert "exitCode\":2" in previous.splitlines()[-1]
    assert "only in the current instance" not in previous
    proc = kubectl.run("logs", "-n", NS, "duo", "-c", "app", "--previous", check=False)
    assert proc.returncode != 0
    assert ('previous terminated container "app" in pod "duo" not found'
            in proc.stderr), proc.stderr


def test_kubectl_logs_follow_sees_appended_lines(sim, kubectl):
    proc = kubectl.popen("logs", "-n", NS, "solo", "-f", "--tail=0")
    try:
        lines = reader(proc.stdout)
        sim.wait_for_log_followers(NS, "solo", "app")
        seen = []
        sim.append_log(NS, "solo", "app", "live line 1")
        wait_for_line(lines, "live line 1", seen)
        sim.append_log(NS, "solo", "app", "live line 2")
        wait_for_line(lines, "live line 2", seen)
        assert seen == ["live line 1\n", "live line 2\n"]
        # a deleted pod's containers stop: the stream ends and kubectl exits
        sim.delete("v1", "Pod", "solo", namespace=NS)
        assert proc.wait(timeout=WAIT) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def test_kubectl_logs_defaults_the_container_and_names_unknown_ones(sim, kubectl):
    proc = kubectl.run("logs", "-n", NS, "duo")
    assert 'Defaulted container "app" out of: app, sidecar' in proc.stderr
    bad = kubectl.run("logs", "-n", NS, "duo", "-c", "nope", check=False)
    assert bad.returncode != 0
    assert "container nope is not valid for pod duo" in bad.stderr, bad.stderr
    missing = kubectl.run("logs", "-n", NS, "ghost", check=False)
    assert 'pods "ghost" not found' in missing.stderr


def test_raw_log_request_of_a_multi_container_pod_gets_the_servers_400(sim):
    status, body = sim.request("GET", f"/api/v1/namespaces/{NS}/pods/duo/log")
    assert status == 400
    assert body["kind"] == "Status" and body["reason"] == "BadRequest"
    assert body["message"] == ("a container name must be specified for pod duo, "
                               "choose one of: [app sidecar]")


def test_python_read_namespaced_pod_log(sim, api):
    sim.append_log(NS, "duo", "sidecar", "from the sidecar")
    text = api.read_namespaced_pod_log("duo", NS, container="sidecar", tail_lines=1)
    assert text == "from the sidecar\n"
    with pytest.raises(ApiException) as err:
        api.read_namespaced_pod_log("duo", NS)
    assert err.value.status == 400
    assert "choose one of: [app sidecar]" in err.value.body
    limited = api.read_namespaced_pod_log("solo", NS, limit_bytes=5)
    assert len(limited) == 5


def test_python_follows_a_log(sim, api):
    resp = api.read_namespaced_pod_log("solo", NS, follow=True, tail_lines=0,
                                       _preload_content=False)
    try:
        sim.wait_for_log_followers(NS, "solo", "app")
        sim.append_log(NS, "solo", "app", "streamed")
        assert resp.readline() == b"streamed\n"
    finally:
        resp.release_conn()
