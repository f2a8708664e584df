"""Pod logs and exec through the real clients: kubectl (through its version dispatcher, so the
kubectl that matches kubesim's /version, which exec over WebSockets) and python3-kubernetes.

kubesim makes up a few startup lines per container instance and appends what /kubesim/logs
is given; exec runs its built-in commands in-process over the v5 (kubectl) or v4 (python)
channel protocol.
"""

import json
import queue
import ssl
import threading
import urllib.parse

import pytest
import websocket
from kubernetes import client
from kubernetes.client.rest import ApiException
from kubernetes.stream import stream

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


def test_a_restart_ends_followers_and_makes_the_output_the_previous_instance(sim, kubectl):
    proc = kubectl.popen("logs", "-n", NS, "duo", "-c", "app", "-f", "--tail=0")
    try:
        lines = reader(proc.stdout)
        sim.wait_for_log_followers(NS, "duo", "app")
        sim.append_log(NS, "duo", "app", "last words")
        wait_for_line(lines, "last words", [])
        # the kubelet reports the container restarted: a new instance, the old one is last
        status, pod = sim.request("GET", f"/api/v1/namespaces/{NS}/pods/duo")
        assert status == 200
        app = pod["status"]["containerStatuses"][0]
        app["lastState"] = {"terminated": {
            "exitCode": 1, "reason": "Error", "containerID": app["containerID"],
            "startedAt": app["state"]["running"]["startedAt"],
            "finishedAt": "2026-01-01T11:00:00Z"}}
        app["containerID"] = "containerd://" + "2" * 64
        app["state"] = {"running": {"startedAt": "2026-01-01T11:00:01Z"}}
        app["restartCount"] = 1
        sim.replace(pod)
        assert proc.wait(timeout=WAIT) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    previous = kubectl.run("logs", "-n", NS, "duo", "-c", "app", "--previous").stdout
    # what it printed, then the line it exited with
    assert previous.splitlines()[-2] == "last words"
    assert '"exitCode":1' in previous.splitlines()[-1]
    current = kubectl.run("logs", "-n", NS, "duo", "-c", "app").stdout
    assert "last words" not in current and "starting app" in current


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


# ---- exec: kubectl ----

def test_kubectl_exec_echo_over_websocket(sim, kubectl):
    before = sim.stats()["execsV5"]
    proc = kubectl.run("exec", "-n", NS, "solo", "--", "echo", "hi")
    assert proc.stdout == "hi\n"
    # the dispatcher's kubectl (1.31 for kubesim's /version) took the WebSocket path, v5
    assert sim.stats()["execsV5"] == before + 1


def test_kubectl_exec_cat_echoes_stdin(sim, kubectl):
    text = "hello stdin\nsecond line\n"
    proc = kubectl.run("exec", "-i", "-n", NS, "solo", "--", "cat", stdin=text)
    assert proc.stdout == text


def test_kubectl_exec_exit_code_is_the_commands(sim, kubectl):
    proc = kubectl.run("exec", "-n", NS, "solo", "--", "sh", "-c", "echo before; exit 3",
                       check=False)
    assert proc.returncode == 3
    assert proc.stdout == "before\n"
    assert "command terminated with exit code 3" in proc.stderr
    assert kubectl.run("exec", "-n", NS, "solo", "--", "exit", "7",
                       check=False).returncode == 7


def test_kubectl_exec_sh_reads_commands_from_stdin(sim, kubectl):
    script = "echo $APP_MODE\ncd /etc && pwd\nfalse || echo recovered\nexit 4\necho never\n"
    proc = kubectl.run("exec", "-i", "-n", NS, "solo", "--", "sh", stdin=script, check=False)
    assert proc.returncode == 4
    assert proc.stdout == "production\n/etc\nrecovered\n"


def test_kubectl_exec_errors_are_the_servers(sim, kubectl):
    missing = kubectl.run("exec", "-n", NS, "ghost", "--", "ls", check=False)
    assert missing.returncode != 0
    assert 'pods "ghost" not found' in missing.stderr
    bad = kubectl.run("exec", "-n", NS, "duo", "-c", "nope", "--", "ls", check=False)
    assert bad.returncode != 0
    assert "container nope is not valid for pod duo" in bad.stderr, bad.stderr
    unknown = kubectl.run("exec", "-n", NS, "solo", "--", "no-such-binary", check=False)
    assert unknown.returncode != 0
    assert 'exec: "no-such-binary": executable file not found in $PATH' in unknown.stderr


def test_kubectl_spdy_exec_gets_an_error_at_once(sim, kubectl):
    # kubesim speaks no SPDY: kubectl told not to use WebSockets gets a Status, not a hang
    kubectl.env["KUBECTL_REMOTE_COMMAND_WEBSOCKETS"] = "false"
    proc = kubectl.run("exec", "-n", NS, "solo", "--", "echo", "hi", check=False)
    assert proc.returncode == 1
    assert "Error from server (BadRequest): kubesim serves exec over WebSockets" in proc.stderr


def test_python_interrupt_and_end_of_input_on_a_tty(sim, api):
    resp = stream(api.connect_get_namespaced_pod_exec, "solo", NS, command=["sh"],
                  stderr=True, stdin=True, stdout=True, tty=True, _preload_content=False)
    try:
        read_until(resp, "/ # ")
        resp.write_stdin("sleep 3600\r")
        read_until(resp, "sleep 3600\r\n")
        resp.write_stdin("\x03")  # ^C ends the sleep, not the shell
        read_until(resp, "^C\r\n/ # ")
        resp.write_stdin("echo $?\r")
        read_until(resp, "130\r\n/ # ")
        resp.write_stdin("\x04")  # ^D: end of input; the shell exits with echo's status
        resp.run_forever(timeout=WAIT)
        assert resp.returncode == 0
    finally:
        resp.close()


# ---- exec: python ----

def test_python_stream_exec_stdout_and_error_channel(sim, api):
    out = stream(api.connect_get_namespaced_pod_exec, "solo", NS, command=["echo", "hi there"],
                 stderr=True, stdin=False, stdout=True, tty=False)
    assert out == "hi there\n"
    resp = stream(api.connect_get_namespaced_pod_exec, "duo", NS, container="sidecar",
                  command=["sh", "-c", "echo out; ls /nope; exit 3"], stderr=True,
                  stdin=False, stdout=True, tty=False, _preload_content=False)
    resp.run_forever(timeout=WAIT)
    assert not resp.is_open()
    assert resp.read_stdout() == "out\n"
    assert resp.read_stderr() == "ls: /nope: No such file or directory\n"
    assert resp.returncode == 3
    assert sim.stats()["execsV4"] >= 2


def read_until(resp, text):
    seen = ""
    for _ in range(1000):
        if text in seen:
            return seen
        assert resp.is_open(), f"closed before {text!r}; saw {seen!r}"
        seen += resp.read_stdout(timeout=WAIT)
    raise AssertionError(f"never saw {text!r}; saw {seen!r}")


def test_python_stream_interactive_shell_on_a_tty(sim, api):
    resp = stream(api.connect_get_namespaced_pod_exec, "solo", NS, command=["/bin/sh"],
                  stderr=True, stdin=True, stdout=True, tty=True, _preload_content=False)
    try:
        read_until(resp, "/ # ")
        resp.write_stdin("echo round trip\r")
        # the terminal echoes what was typed, then the command's output, then a prompt
        seen = read_until(resp, "round trip\r\n/ # ")
        assert seen.startswith("echo round trip\r\n")
        resp.write_stdin("exit 5\r")
        resp.run_forever(timeout=WAIT)
        assert resp.returncode == 5
    finally:
        resp.close()


# ---- exec: the wire ----

def ws_url(sim, pod, container, command, **flags):
    params = [("command", arg) for arg in command] + [("container", container)]
    params += [(key, "true") for key, on in flags.items() if on]
    base = sim.url.replace("https://", "wss://").replace("http://", "ws://")
    return f"{base}/api/v1/namespaces/{NS}/pods/{pod}/exec?{urllib.parse.urlencode(params)}"


def ws_connect(sim, url, protocols):
    return websocket.create_connection(
        url, header=[f"Authorization: Bearer {sim.token}"], subprotocols=protocols,
        sslopt={"cert_reqs": ssl.CERT_NONE}, timeout=WAIT)


def ws_run(ws):
    """Messages until the server closes: (stdout, stderr, the error channel's Status)."""
    out = {1: b"", 2: b"", 3: b""}
    while True:
        opcode, data = ws.recv_data(control_frame=False)
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            assert data[:2] == b"\x03\xe8", data  # 1000, normal
            break
        assert opcode == websocket.ABNF.OPCODE_BINARY
        out[data[0]] += data[1:]
    return out[1].decode(), out[2].decode(), json.loads(out[3])


def test_wire_v5_opens_answers_pings_and_honours_close(sim):
    ws = ws_connect(sim, ws_url(sim, "solo", "app", ["cat"], stdin=True, stdout=True,
                                stderr=True), ["v5.channel.k8s.io", "v4.channel.k8s.io"])
    try:
        assert ws.getsubprotocol() == "v5.channel.k8s.io"
        assert ws.recv() == b"\x01"  # one empty message on the lowest output channel
        ws.ping(b"are you there")
        opcode, frame = ws.recv_data_frame(control_frame=True)
        assert opcode == websocket.ABNF.OPCODE_PONG and frame.data == b"are you there"
        ws.send_binary(b"\x00ping pong\n")
        assert ws.recv() == b"\x01ping pong\n"
        ws.send_binary(b"\xff\x00")  # v5: stdin is done
        stdout, stderr, status = ws_run(ws)
        assert (stdout, stderr) == ("", "")
        assert status == {"metadata": {}, "status": "Success"}
    finally:
        ws.close()


def test_wire_error_channel_carries_the_exit_code_status(sim):
    ws = ws_connect(sim, ws_url(sim, "solo", "app", ["sh", "-c", "exit 42"], stdout=True),
                    ["v4.channel.k8s.io"])
    try:
        assert ws.getsubprotocol() == "v4.channel.k8s.io"
        _, _, status = ws_run(ws)
    finally:
        ws.close()
    assert status == {
        "metadata": {}, "status": "Failure",
        "message": "command terminated with non-zero exit code: error executing command "
                   "[sh -c exit 42], exit code 42",
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": "42"}]}}


def test_wire_refusals(sim):
    with pytest.raises(websocket.WebSocketBadStatusException) as err:
        ws_connect(sim, ws_url(sim, "solo", "app", ["ls"], stdout=True),
                   ["base64.channel.k8s.io"])
    assert err.value.status_code == 403
    status, body = sim.request("GET", f"/api/v1/namespaces/{NS}/pods/solo/exec?command=ls"
                                      "&stdout=true")
    assert status == 400 and body["message"] == "Upgrade request required"
    status, body = sim.request("GET", f"/api/v1/namespaces/{NS}/pods/duo/exec?command=ls"
                                      "&stdout=true")
    assert status == 400 and "choose one of: [app sidecar]" in body["message"]


SHELL_CASES = [
    (["echo", "-n", "a", "b"], "a b", "", 0),
    (["sh", "-c", "echo 'single $HOME' \"double $HOME\" back\\ slash"],
     "single $HOME double /root back slash\n", "", 0),
    (["sh", "-c", "false; echo $?; true && echo and; false || echo or"], "1\nand\nor\n", "", 0),
    (["sh", "-c", "X=1; export Y=2; printenv X Y"], "1\n2\n", "", 0),
    (["sh", "-c", "cd /etc; pwd; ls"], "/etc\nhostname\nhosts\nos-release\npasswd\n"
                                       "resolv.conf\n", "", 0),
    (["cat", "/etc/hostname"], "solo\n", "", 0),
    (["cat", "/nope"], "", "cat: can't open '/nope': No such file or directory\n", 1),
    (["sh", "-c", "frobnicate"], "", "sh: frobnicate: not found\n", 127),
    (["sh", "-c", "sleep 0.05 && echo slept"], "slept\n", "", 0),
    (["sh", "-c", "ls | wc"], "", "sh: syntax error: pipes, redirections, background jobs "
                                  "and subshells are not supported by kubesim's shell\n", 2),
    (["sh", "-c", "exit 300"], "", "", 44),
]


@pytest.mark.parametrize("command,stdout,stderr,code", SHELL_CASES)
def test_shell_commands(sim, command, stdout, stderr, code):
    ws = ws_connect(sim, ws_url(sim, "solo", "app", command, stdout=True, stderr=True),
                    ["v4.channel.k8s.io"])
    try:
        got_out, got_err, status = ws_run(ws)
    finally:
        ws.close()
    assert (got_out, got_err) == (stdout, stderr)
    got_code = 0 if status["status"] == "Success" else int(
        status["details"]["causes"][0]["message"])
    assert got_code == code


def test_env_holds_the_containers_variables(sim):
    ws = ws_connect(sim, ws_url(sim, "solo", "app", ["env"], stdout=True),
                    ["v4.channel.k8s.io"])
    try:
        stdout, _, _ = ws_run(ws)
    finally:
        ws.close()
    env = dict(line.split("=", 1) for line in stdout.splitlines())
    assert env["APP_MODE"] == "production"
    assert env["HOSTNAME"] == "solo"
    assert env["KUBERNETES_SERVICE_HOST"] == "10.96.0.1"
