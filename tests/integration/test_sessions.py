# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""Log and exec sessions over NATS: the daemon in broker mode, a real nats-server, kubesim as
the API server, and a stdlib NATS client playing Meshery Server.

Every wait is for a message, a kubesim counter, a metric or the nats-server's monitoring view,
with a deadline that fails the test. "Nothing more arrives" is shown with a barrier: a
meshsync-meta request sent afterwards is answered in order, and the kubesim side has no
follower left that could still produce output.
"""

import json
import os
import shutil
import signal
import urllib.request

import pytest

from kubesim import DATA, Kubesim
from meshsync_run import DAEMON, HEALTH_FLAGS, DaemonProcess
from nats_server import NatsServer, wait_until
from test_broker_mode import Daemon, envelope, request, wait_for_listener

TIMEOUT = 60.0
NS = "shop"
LOGS = "meshery.meshsync.logs"
ACTIVE = "active_sessions.exec"


def pod_manifest(name, containers):
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"nodeName": "node-1",
                 "containers": [{"name": c, "image": "busybox:1.36"} for c in containers]},
        "status": {"phase": "Running", "containerStatuses": [
            {"name": c, "ready": True, "restartCount": 0, "started": True,
             "image": "busybox:1.36", "imageID": "",
             "containerID": f"containerd://{name}-{c}-{'0' * 40}",
             "state": {"running": {"startedAt": "2026-01-01T10:00:00Z"}}, "lastState": {}}
            for c in containers]},
    }


@pytest.fixture
def sim():
    with Kubesim(pods=2, namespaces=1) as s:
        s.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        s.create(pod_manifest("solo", ["app"]))
        s.create(pod_manifest("duo", ["app", "sidecar"]))
        for i in range(8):
            s.create(pod_manifest(f"web-{i}", ["app"]))
        yield s


@pytest.fixture
def nats():
    with NatsServer() as server:
        yield server


@pytest.fixture
def nc(nats):
    with nats.client() as client:
        yield client


def start_daemon(tmp_path, sim, nats, *flags):
    run = Daemon(str(tmp_path), sim.kubeconfig, nats.url, *flags, debug=True)
    wait_for_listener(nats)
    return run


def log_request(**fields):
    return {"operator": fields}


def exec_request(**fields):
    return {"shell": fields}


def barrier(nc, timeout=TIMEOUT):
    """Every request sent before has been handled once this returns (they are handled in
    order); returns the messages that arrived meanwhile. @timeout bounds the wait for each
    message (a daemon under valgrind needs longer)."""
    sid = nc.subscribe("meshsync-meta")
    request(nc, "meshsync-meta")
    seen = []
    while True:
        msg = nc.next_msg(timeout)
        if msg.subject == "meshsync-meta":
            nc.unsubscribe(sid)
            return seen
        seen.append(msg)


def collect(nc, until, what):
    """Takes messages until @until(messages) holds."""
    got = []
    while not until(got):
        try:
            got.append(nc.next_msg(TIMEOUT))
        except TimeoutError:
            raise AssertionError(f"timed out waiting for {what}; got {got}") from None
    return got


def log_text(msgs, request_id=None):
    out = ""
    for msg in msgs:
        if msg.subject != LOGS:
            continue
        env = envelope(msg)
        if env["ObjectType"] != "log-stream":
            continue
        if request_id is not None and env["Object"].get("id") != request_id:
            continue
        out += env["Object"]["data"]
    return out


def exec_text(msgs, subject):
    return "".join(envelope(m)["Object"] for m in msgs
                   if m.subject == subject and envelope(m)["ObjectType"] == "exec-output")


def exec_errors(msgs, subject):
    return [envelope(m)["Object"] for m in msgs
            if m.subject == subject and envelope(m)["ObjectType"] == "error"]


def send_input(nc, session_id, line):
    body = {"ObjectType": "exec-input", "EventType": "", "Request": None, "Object": line}
    nc.publish("input." + session_id, json.dumps(body))
    nc.flush()


def subscriptions(nats, name="meshsync"):
    """The subjects the daemon's connection (named meshsync) subscribes to, from the
    server's monitoring port."""
    with urllib.request.urlopen(nats.monitor + "/connz?subs=1", timeout=10) as resp:
        connz = json.load(resp)
    subs = []
    for conn in connz.get("connections", []):
        if conn.get("name") == name:
            subs += conn.get("subscriptions_list", [])
    return subs


def wait_for_input_subscription(nats, session_id, present=True):
    wait_until(lambda: (("input." + session_id) in subscriptions(nats)) == present,
               f"input.{session_id} {'subscribed' if present else 'gone'}", TIMEOUT)


def open_fds(run):
    return len(os.listdir(f"/proc/{run.proc.pid}/fd"))


# ---- logs ------------------------------------------------------------------------------------

def test_logs_history_then_appended_lines_then_stop(tmp_path, sim, nats, nc):
    with start_daemon(tmp_path, sim, nats) as run:
        nc.subscribe(LOGS)
        sim.append_log(NS, "solo", "app", "history one", "history two", "history three")
        request(nc, "log-stream", log_request(id="r1", name="solo", namespace=NS,
                                              container="app", follow=True, taillines=2))
        msgs = collect(nc, lambda got: log_text(got).count("\n") >= 2, "two history lines")
        text = log_text(msgs)
        assert "history two" in text and "history three" in text
        assert "history one" not in text
        for msg in msgs:
            env = envelope(msg)
            assert env["ObjectType"] == "log-stream" and env["EventType"] == "ADDED"
            assert env["Request"] is None
            assert list(env["Object"]) == ["id", "data", "primary", "secondary"]
            assert env["Object"]["id"] == "r1"
            assert env["Object"]["primary"] == "solo"
            assert env["Object"]["secondary"] == "app"
            assert len(env["Object"]["data"].encode()) <= 2000
        # upstream asks with timestamps: each line starts with its RFC 3339 time
        assert text.split("\n")[0][:4].isdigit(), text

        sim.wait_for_log_followers(NS, "solo", "app")
        sim.append_log(NS, "solo", "app", "appended while following")
        collect(nc, lambda got: "appended while following" in log_text(got), "the new line")

        request(nc, "log-stream", log_request(id="r1", name="solo", namespace=NS,
                                              container="app", stop=True))
        sim.wait_for(lambda: sim.log_followers(NS, "solo", "app") == 0, "no follower left")
        sim.append_log(NS, "solo", "app", "after the stop")
        late = barrier(nc)
        assert "after the stop" not in log_text(late)
        run.wait_until(lambda: run.metric("meshsync_sessions_active", kind="log") == 0,
                       "no log session")
        assert run.metric("meshsync_sessions_started_total", kind="log") == 1


def test_logs_two_viewers_share_one_stream(tmp_path, sim, nats, nc):
    with start_daemon(tmp_path, sim, nats) as run:
        nc.subscribe(LOGS)
        for rid in ("viewer-a", "viewer-b"):
            request(nc, "log-stream", log_request(id=rid, name="duo", namespace=NS,
                                                  container="sidecar", follow=True))
        barrier(nc)
        sim.wait_for_log_followers(NS, "duo", "sidecar")
        assert run.metric("meshsync_sessions_active", kind="log") == 1
        assert sim.log_followers(NS, "duo", "sidecar") == 1
        sim.append_log(NS, "duo", "sidecar", "shared line")
        msgs = collect(nc, lambda got: "shared line" in log_text(got), "the shared line")
        msgs += barrier(nc)
        # one stream, published once, under the first viewer's id (as upstream)
        assert log_text(msgs).count("shared line") == 1
        assert "shared line" in log_text(msgs, "viewer-a")
        # a stop from either viewer ends it
        request(nc, "log-stream", log_request(id="viewer-b", name="duo", namespace=NS,
                                              container="sidecar", stop=True))
        sim.wait_for(lambda: sim.log_followers(NS, "duo", "sidecar") == 0, "no follower")
        run.wait_until(lambda: run.metric("meshsync_sessions_active", kind="log") == 0,
                       "no log session")


def test_logs_of_a_missing_pod_get_an_error(tmp_path, sim, nats, nc):
    with start_daemon(tmp_path, sim, nats) as run:
        nc.subscribe(LOGS)
        request(nc, "log-stream", log_request(id="r9", name="ghost", namespace=NS,
                                              container="app", follow=True))
        msgs = collect(nc, lambda got: any(envelope(m)["ObjectType"] == "error" for m in got),
                       "the error")
        env = [envelope(m) for m in msgs if envelope(m)["ObjectType"] == "error"][0]
        assert env["EventType"] == "ERROR"
        assert env["Object"]["id"] == "r9"
        assert env["Object"]["primary"] == "ghost"
        assert 'pods "ghost" not found' in env["Object"]["data"], env
        run.wait_until(lambda: run.metric("meshsync_sessions_failed_total", kind="log") == 1,
                       "the failure counted")
        run.wait_until(lambda: run.metric("meshsync_sessions_active", kind="log") == 0,
                       "no log session")


def test_session_limit_refuses_with_an_error(tmp_path, sim, nats, nc):
    with start_daemon(tmp_path, sim, nats, "--max-sessions", "1") as run:
        nc.subscribe(LOGS)
        request(nc, "log-stream", log_request(id="one", name="solo", namespace=NS,
                                              container="app", follow=True))
        request(nc, "log-stream", log_request(id="two", name="web-0", namespace=NS,
                                              container="app", follow=True))
        msgs = collect(nc, lambda got: any(envelope(m)["ObjectType"] == "error" for m in got),
                       "the refusal")
        env = [envelope(m) for m in msgs if envelope(m)["ObjectType"] == "error"][0]
        assert env["Object"]["id"] == "two"
        assert "limit of 1" in env["Object"]["data"]
        assert run.metric("meshsync_sessions_refused_total", kind="log", reason="limit") == 1
        run.wait_for_line("refused: too many sessions")


# ---- exec ------------------------------------------------------------------------------------

def exec_id(pod, container, rid):
    return f"exec.{NS}.{pod}.{container}.{rid}"


def open_exec(nc, nats, pod, container, rid, namespace=NS):
    sid = exec_id(pod, container, rid) if namespace == NS else \
        f"exec.{namespace}.{pod}.{container}.{rid}"
    nc.subscribe(sid)
    request(nc, "exec-request", exec_request(id=rid, name=pod, namespace=namespace,
                                             container=container))
    return sid


def test_exec_echo_round_trip_then_exit_code(tmp_path, sim, nats, nc):
    with start_daemon(tmp_path, sim, nats) as run:
        nc.subscribe(ACTIVE)
        sid = open_exec(nc, nats, "solo", "app", "e1")
        active = collect(nc, lambda got: any(m.subject == ACTIVE for m in got),
                         "the active list")
        env = [envelope(m) for m in active if m.subject == ACTIVE][0]
        assert env["ObjectType"] == "active-exec" and sid in env["Object"]
        wait_for_input_subscription(nats, sid)
        send_input(nc, sid, "echo round-trip-ok")
        # the terminal echoes the line typed, then the command prints it
        collect(nc, lambda got: exec_text(got, sid).count("round-trip-ok") >= 2, "the echo")
        send_input(nc, sid, "exit 3")
        msgs = collect(nc, lambda got: exec_errors(got, sid), "the end of the shell")
        assert "3" in exec_errors(msgs, sid)[0]
        wait_for_input_subscription(nats, sid, present=False)
        run.wait_until(lambda: run.metric("meshsync_sessions_active", kind="exec") == 0,
                       "no exec session")
        sim.wait_for(lambda: sim.exec_sessions() == 0, "no exec in kubesim")


def test_exec_chunks_never_cut_a_character(tmp_path, sim, nats, nc):
    with start_daemon(tmp_path, sim, nats) as run:
        sid = open_exec(nc, nats, "solo", "app", "utf8")
        wait_for_input_subscription(nats, sid)
        text = "é€😀" * 300  # 2700 bytes: crosses the 1024-byte chunks at every width
        send_input(nc, sid, "echo " + text)
        msgs = collect(nc, lambda got: exec_text(got, sid).count(text) >= 1, "the long echo")
        for msg in msgs:
            if msg.subject == sid:
                assert len(envelope(msg)["Object"].encode()) <= 1024
                assert "\ufffd" not in envelope(msg)["Object"]
        request(nc, "exec-request", exec_request(id="utf8", name="solo", namespace=NS,
                                                 container="app", stop=True))
        wait_for_input_subscription(nats, sid, present=False)
        run.wait_until(lambda: run.metric("meshsync_sessions_active", kind="exec") == 0,
                       "no exec session")


def test_exec_idle_session_is_stopped(tmp_path, sim, nats, nc):
    with start_daemon(tmp_path, sim, nats, "--exec-idle-timeout", "1s") as run:
        sid = open_exec(nc, nats, "solo", "app", "idle")
        msgs = collect(nc, lambda got: exec_errors(got, sid), "the idle stop")
        assert "idle" in exec_errors(msgs, sid)[0]
        wait_for_input_subscription(nats, sid, present=False)
        sim.wait_for(lambda: sim.exec_sessions() == 0, "no exec in kubesim")
        run.wait_until(lambda: run.metric("meshsync_sessions_active", kind="exec") == 0,
                       "no exec session")


def test_exec_unknown_pod_gets_an_error(tmp_path, sim, nats, nc):
    with start_daemon(tmp_path, sim, nats) as run:
        sid = open_exec(nc, nats, "ghost", "app", "x")
        msgs = collect(nc, lambda got: exec_errors(got, sid), "the error")
        assert 'pods "ghost" not found' in exec_errors(msgs, sid)[0]
        wait_for_input_subscription(nats, sid, present=False)
        run.wait_until(lambda: run.metric("meshsync_sessions_active", kind="exec") == 0,
                       "no exec session")


def test_exec_refusals_disabled_and_namespace(tmp_path, sim, nats, nc):
    with start_daemon(tmp_path, sim, nats, "--disable-exec") as run:
        sid = open_exec(nc, nats, "solo", "app", "no")
        msgs = collect(nc, lambda got: exec_errors(got, sid), "the refusal")
        assert "disabled" in exec_errors(msgs, sid)[0]
        assert run.metric("meshsync_sessions_refused_total", kind="exec",
                          reason="exec-disabled") == 1
    nc2 = nats.client()
    with nc2, start_daemon(tmp_path, sim, nats, "--exec-namespaces", "other,more") as run:
        sid = open_exec(nc2, nats, "solo", "app", "ns")
        msgs = collect(nc2, lambda got: exec_errors(got, sid), "the refusal")
        assert f'namespace "{NS}"' in exec_errors(msgs, sid)[0]
        assert run.metric("meshsync_sessions_refused_total", kind="exec",
                          reason="namespace") == 1


def test_subject_tokens_are_encoded(tmp_path, sim, nats, nc):
    with start_daemon(tmp_path, sim, nats) as run:
        # a request id with a dot and a space would change the subject's shape
        sid = f"exec.{NS}.ghost.app.a%2Eb%20c"
        nc.subscribe(sid)
        request(nc, "exec-request", exec_request(id="a.b c", name="ghost", namespace=NS,
                                                 container="app"))
        msgs = collect(nc, lambda got: exec_errors(got, sid), "the error on the encoded id")
        assert exec_errors(msgs, sid)
        # a pod's dots stay: the subject is the one Meshery Server builds
        dotted = f"exec.{NS}.db.primary.app.r2"
        nc.subscribe(dotted)
        request(nc, "exec-request", exec_request(id="r2", name="db.primary", namespace=NS,
                                                 container="app"))
        msgs = collect(nc, lambda got: exec_errors(got, dotted), "the dotted pod's error")
        assert 'pods "db.primary" not found' in exec_errors(msgs, dotted)[0]
        run.wait_until(lambda: run.metric("meshsync_sessions_active", kind="exec") == 0,
                       "no exec session")


# ---- many ------------------------------------------------------------------------------------

def many_sessions(run, sim, nats, nc, timeout=TIMEOUT):
    """Opens and closes 200 sessions, half logs (some of containers that do not exist, so
    they fail on their own), half exec shells, in batches below the session limit; then
    nothing may be left: no session, no subscription, no descriptor."""
    run.wait_until(lambda: run.metric("meshsync_ready") == 1, "the initial sync", timeout)
    base_subs = sorted(subscriptions(nats))
    base_fds = open_fds(run)
    total = 0
    batch = 50
    while total < 200:
        ids = []
        for i in range(batch):
            n = total + i
            pod = f"web-{n % 8}"
            if n % 2 == 0:
                request(nc, "log-stream", {f"k{n}": {
                    "id": f"l{n}", "name": pod, "namespace": NS,
                    "container": "app" if n % 4 == 0 else f"c{n}", "follow": True}})
                ids.append(("log", pod, "app" if n % 4 == 0 else f"c{n}", f"l{n}"))
            else:
                request(nc, "exec-request", exec_request(id=f"x{n}", name=pod,
                                                         namespace=NS, container="app"))
                ids.append(("exec", pod, "app", f"x{n}"))
        barrier(nc, timeout)
        # every exec is open in kubesim before it is stopped, so teardown meets live
        # WebSockets (the logs of made-up containers fail on their own)
        sim.wait_for(lambda: sim.exec_sessions() == batch // 2, "the batch's execs open",
                     timeout)
        for kind, pod, container, rid in ids:
            if kind == "log":
                request(nc, "log-stream", log_request(id=rid, name=pod, namespace=NS,
                                                      container=container, stop=True))
            else:
                request(nc, "exec-request", exec_request(id=rid, name=pod, namespace=NS,
                                                         container="app", stop=True))
        barrier(nc, timeout)
        run.wait_until(lambda: run.metric("meshsync_sessions_active", kind="log") == 0 and
                       run.metric("meshsync_sessions_active", kind="exec") == 0,
                       "every session closed", timeout)
        total += batch
    assert run.metric("meshsync_sessions_started_total") >= 150
    wait_until(lambda: sorted(subscriptions(nats)) == base_subs,
               "the daemon's subscriptions back to the request listener's", timeout)
    sim.wait_for(lambda: sim.exec_sessions() == 0, "no exec in kubesim", timeout)
    # the pod lookups say Connection: close, so their connections go with the answer
    run.wait_until(lambda: open_fds(run) <= base_fds,
                   f"the daemon's descriptors back to {base_fds}", timeout)


def test_many_sessions_leave_nothing_behind(tmp_path, sim, nats, nc):
    with start_daemon(tmp_path, sim, nats) as run:
        many_sessions(run, sim, nats, nc)


def test_many_sessions_under_valgrind(tmp_path, sim, nats, nc):
    """The same under valgrind: no memory error and no definite leak of the daemon's own
    (tests/valgrind.supp holds the libraries' one-time allocations)."""
    valgrind = shutil.which("valgrind")
    assert valgrind is not None, "valgrind is a test dependency (scripts/bootstrap)"
    vlog = str(tmp_path / "valgrind.log")
    argv = [valgrind, "--error-exitcode=99", "--leak-check=full",
            "--errors-for-leak-kinds=definite", "--num-callers=30",
            "--suppressions=" + os.path.join(DATA, "..", "valgrind.supp"),
            "--log-file=" + vlog, DAEMON, "-output", "broker", "-v",
            "--kubeconfig", sim.kubeconfig] + HEALTH_FLAGS
    env = dict(os.environ)
    env.update({"BROKER_URL": nats.url, "G_SLICE": "always-malloc", "G_DEBUG": "gc-friendly"})
    with DaemonProcess(str(tmp_path), argv, env) as run:
        wait_for_listener(nats, timeout=TIMEOUT * 10)
        many_sessions(run, sim, nats, nc, timeout=TIMEOUT * 10)
        run.proc.send_signal(signal.SIGTERM)
        status = run.wait_exit(TIMEOUT * 10)
        with open(vlog, encoding="utf-8", errors="replace") as f:
            report = f.read()
        assert status == 0, report[-6000:]
