# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""The daemon under systemd: its unit file and the notification protocol.

The unit is checked with systemd-analyze (verify, and the offline security exposure) on a copy
whose ExecStart names the built daemon. The protocol is checked against an AF_UNIX datagram
socket the test owns, named by NOTIFY_SOCKET as the service manager names its own: READY=1
only once the daemon is ready for its consumers (held back while kubesim refuses the pod list
or the gate to the broker is shut), STATUS= lines, STOPPING=1 on SIGTERM, and WATCHDOG=1 when
WATCHDOG_USEC asks for it.
"""

import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request

import pytest

from broker_faults import GatedProxy
from kubesim import Kubesim
from meshsync_run import DAEMON, HEALTH_FLAGS, TIMEOUT, DaemonProcess, cluster_view
from meshsync_run import snapshot_uid_counts
from nats_server import NatsServer

UNIT = os.environ.get("MESHSYNC_UNIT")
SYSTEMD_ANALYZE = os.environ.get("SYSTEMD_ANALYZE", "systemd-analyze")
# the built man pages, when the build has them (tests/meson.build)
MAN_DIR = os.environ.get("MESHSYNC_MAN_DIR")
REQUEST = "meshery.meshsync.request"
QUEUE = "meshsync-request-stream"
# the exposure systemd-analyze may give the unit, in its tenths (2.0)
MAX_EXPOSURE = 20


class Notifications:
    """The service manager's end: a datagram socket, bound to a path in @tmpdir or (with
    @abstract) to an abstract name, and every message received on it, in order."""

    def __init__(self, tmpdir, abstract=False):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        if abstract:
            name = f"meshsync-test-notify-{os.getpid()}-{id(self)}"
            self.sock.bind("\0" + name)
            self.address = "@" + name
        else:
            self.address = os.path.join(tmpdir, "notify.sock")
            self.sock.bind(self.address)
        self.messages = []

    def close(self):
        self.sock.close()

    def env(self, **extra):
        env = dict(os.environ, NOTIFY_SOCKET=self.address)
        for name in ("BROKER_URL", "WATCHDOG_USEC", "WATCHDOG_PID"):
            env.pop(name, None)
        env.update(extra)
        return env

    @staticmethod
    def parse(datagram):
        """{name: value} of one message (newline-separated assignments)."""
        fields = {}
        for line in datagram.decode().split("\n"):
            name, sep, value = line.partition("=")
            assert sep and name, f"not an assignment: {line!r} in {datagram!r}"
            fields[name] = value
        return fields

    def drain(self):
        """Takes every message already queued, without waiting."""
        self.sock.setblocking(False)
        try:
            while True:
                self.messages.append(self.parse(self.sock.recv(65536)))
        except BlockingIOError:
            pass
        finally:
            self.sock.setblocking(True)

    def wait_for(self, predicate, what, run, timeout=TIMEOUT):
        """Receives until a message satisfies @predicate, which is returned; fails if the
        daemon exits first or time runs out."""
        deadline = time.monotonic() + timeout
        seen = len(self.messages)
        while True:
            for message in self.messages[seen:]:
                if predicate(message):
                    return message
            seen = len(self.messages)
            if run.proc.poll() is not None:
                self.drain()
                for message in self.messages[seen:]:
                    if predicate(message):
                        return message
                raise AssertionError(f"meshsync exited with {run.proc.returncode} before "
                                     f"{what}; messages {self.messages}:\n{run.log()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; messages "
                                     f"{self.messages}:\n{run.log()}")
            self.sock.settimeout(0.2)
            try:
                self.messages.append(self.parse(self.sock.recv(65536)))
            except socket.timeout:
                pass
            finally:
                self.sock.settimeout(None)

    def statuses(self):
        return [m["STATUS"] for m in self.messages if "STATUS" in m]

    def count(self, name):
        return sum(1 for m in self.messages if name in m)


@pytest.fixture
def notifications(tmp_path):
    sink = Notifications(str(tmp_path))
    yield sink
    sink.close()


@pytest.fixture
def abstract_notifications(tmp_path):
    sink = Notifications(str(tmp_path), abstract=True)
    yield sink
    sink.close()


def unit_copy(tmp_path):
    """The generated unit with ExecStart naming the built daemon, for systemd-analyze."""
    assert UNIT and os.path.exists(UNIT), f"MESHSYNC_UNIT={UNIT!r} is not the generated unit"
    with open(UNIT, encoding="utf-8") as f:
        text = f.read()
    daemon = shutil.which(DAEMON) or os.path.abspath(DAEMON)
    text, n = re.subn(r"^ExecStart=\S+/meshsync\b", "ExecStart=" + daemon, text, flags=re.M)
    assert n == 1, "the unit has no single ExecStart of meshsync"
    path = tmp_path / "meshsync.service"
    path.write_text(text, encoding="utf-8")
    return path


def test_unit_verifies(tmp_path):
    """systemd-analyze verify finds nothing to say about the unit, and its Documentation=
    man:meshsync(8) resolves to the built page (without man pages, that check is off)."""
    path = unit_copy(tmp_path)
    env = dict(os.environ)
    argv = [SYSTEMD_ANALYZE, "verify", str(path)]
    if MAN_DIR:
        (tmp_path / "man" / "man8").mkdir(parents=True)
        shutil.copy(os.path.join(MAN_DIR, "meshsync.8"), tmp_path / "man" / "man8")
        env["MANPATH"] = str(tmp_path / "man")
    else:
        argv.insert(2, "--man=no")
    result = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, env=env,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr.strip() == "", result.stderr
    text = path.read_text(encoding="utf-8")
    assert re.search(r"^Type=notify$", text, re.M)
    assert re.search(r"^WatchdogSec=", text, re.M)
    assert re.search(r"^User=meshsync$", text, re.M)


def test_unit_security_exposure(tmp_path):
    """The offline security analysis rates the sandbox 2.0 or better."""
    path = unit_copy(tmp_path)
    result = subprocess.run([SYSTEMD_ANALYZE, "security", "--offline=true",
                             f"--threshold={MAX_EXPOSURE}", "--no-pager", str(path)],
                            capture_output=True, text=True, cwd=tmp_path, check=False)
    m = re.search(r"Overall exposure level for \S+: (\d+\.\d)", result.stdout)
    assert m, result.stdout + result.stderr
    assert float(m.group(1)) <= MAX_EXPOSURE / 10, result.stdout
    assert result.returncode == 0, result.stdout + result.stderr


def test_file_mode_ready_after_initial_sync(tmp_path, notifications):
    """File mode (a path socket): READY=1 is held back while the pod list is refused, and
    comes with the whole initial state in the snapshot; STATUS= follows the sync;
    STOPPING=1 on SIGTERM."""
    with Kubesim(pods=300) as sim:
        held = sim.arm_fault("both", code=500, count=1000000, path="/api/v1/pods")
        snapshot = tmp_path / "snapshot.yaml"
        argv = [DAEMON, "-output", "file", "-outputFile", str(snapshot)] + HEALTH_FLAGS + [
            "--kubeconfig", sim.kubeconfig]
        with DaemonProcess(str(tmp_path), argv, notifications.env()) as run:
            run.wait_until(lambda: sim.fault(held)["consumed"] >= 1, "a refused pod list")
            notifications.drain()
            # still refused after the drain (list and watch): nothing before it can have been ready
            assert sim.fault(held)["remaining"] > 0
            assert notifications.count("READY") == 0, notifications.messages
            assert notifications.statuses(), "no status line while starting"
            sim.clear_faults()

            ready = notifications.wait_for(lambda m: "READY" in m, "READY=1", run)
            # at that moment the whole initial state is in the snapshot
            expected = set(cluster_view(sim))
            written = set(snapshot_uid_counts(str(snapshot)))
            assert expected <= written, f"{len(expected - written)} objects missing at READY"
            assert ready["READY"] == "1"
            m = re.fullmatch(r"synced (\d+) types, (\d+) objects; writing (.+)",
                             ready["STATUS"])
            assert m, ready
            assert int(m.group(2)) >= len(expected)
            assert m.group(3) == str(snapshot)
            assert any(s.startswith("initial sync: ") for s in notifications.statuses())
            assert notifications.count("READY") == 1

            run.proc.terminate()
            stopping = notifications.wait_for(lambda m: "STOPPING" in m, "STOPPING=1", run)
            assert stopping["STOPPING"] == "1"
            assert stopping["STATUS"].startswith("stopping")
            assert run.wait_exit() == 0
            notifications.drain()
            assert notifications.count("READY") == 1, notifications.messages
            assert notifications.count("WATCHDOG") == 0, "pings without WATCHDOG_USEC"


def request_subscribed(nats):
    """Whether the server holds the daemon's request subscription now (no waiting)."""
    with urllib.request.urlopen(nats.monitor + "/connz?subs=detail", timeout=10) as resp:
        connz = json.load(resp)
    return any(sub.get("subject") == REQUEST and sub.get("qgroup") == QUEUE
               for conn in connz.get("connections", [])
               for sub in conn.get("subscriptions_list_detail", []))


def test_broker_mode_ready_after_connect(tmp_path, abstract_notifications):
    """Broker mode (an abstract socket): READY=1 is held back while the broker cannot be
    reached, and comes once the server holds the request subscription."""
    sink = abstract_notifications
    with Kubesim(pods=50) as sim, NatsServer() as nats:
        proxy = GatedProxy(nats.port)
        try:
            proxy.cut()
            argv = [DAEMON, "-output", "broker"] + HEALTH_FLAGS + ["--kubeconfig",
                                                                   sim.kubeconfig]
            with DaemonProcess(str(tmp_path), argv, sink.env(BROKER_URL=proxy.url)) as run:
                connecting = sink.wait_for(
                    lambda m: m.get("STATUS", "").startswith("connecting to the broker"),
                    "the connecting status", run)
                assert connecting["STATUS"] == f"connecting to the broker at {proxy.url}"
                sink.drain()
                # the gate is shut: the daemon cannot have reached the broker
                assert sink.count("READY") == 0, sink.messages
                assert not request_subscribed(nats)
                proxy.open = True

                ready = sink.wait_for(lambda m: "READY" in m, "READY=1", run)
                assert request_subscribed(nats), "READY=1 before the server had the request " \
                    "subscription"
                assert ready["READY"] == "1"
                synced = sink.wait_for(lambda m: m.get("STATUS", "").startswith("synced "),
                                       "the synced status", run)
                assert re.fullmatch(r"synced \d+ types, \d+ objects; publishing to "
                                    + re.escape(proxy.url), synced["STATUS"]), synced

                run.proc.terminate()
                stopping = sink.wait_for(lambda m: "STOPPING" in m, "STOPPING=1", run)
                assert "flushing the broker" in stopping["STATUS"]
                assert run.wait_exit() == 0
        finally:
            proxy.close()


def test_watchdog_pings(tmp_path, notifications):
    """WATCHDOG_USEC with WATCHDOG_PID naming the daemon: WATCHDOG=1 again and again, also
    after READY=1."""
    with Kubesim(pods=20) as sim:
        snapshot = tmp_path / "snapshot.yaml"
        # the shell's pid is the daemon's after exec, as the service manager's main pid is
        script = 'WATCHDOG_PID=$$ exec "$@"'
        argv = ["/bin/sh", "-c", script, "sh", DAEMON, "-output", "file", "-outputFile",
                str(snapshot)] + HEALTH_FLAGS + ["--kubeconfig", sim.kubeconfig]
        with DaemonProcess(str(tmp_path), argv, notifications.env(WATCHDOG_USEC="100000")) \
                as run:
            notifications.wait_for(lambda m: "READY" in m, "READY=1", run)
            after = len(notifications.messages)
            for n in range(3):
                notifications.wait_for(lambda m: "WATCHDOG" in m, f"ping {n + 1}", run)
            assert all(m["WATCHDOG"] == "1" for m in notifications.messages[after:]
                       if "WATCHDOG" in m)
            assert notifications.count("WATCHDOG") >= 3
            assert run.terminate() == 0


def test_watchdog_for_another_process(tmp_path, notifications):
    """WATCHDOG_PID naming another process: the interval is not the daemon's, no pings over
    a whole run, though at 1 ms they would be many."""
    with Kubesim(pods=20) as sim:
        argv = [DAEMON, "-output", "file", "-outputFile", str(tmp_path / "snapshot.yaml")] + \
            HEALTH_FLAGS + ["--kubeconfig", sim.kubeconfig]
        env = notifications.env(WATCHDOG_USEC="2000", WATCHDOG_PID="1")
        with DaemonProcess(str(tmp_path), argv, env) as run:
            notifications.wait_for(lambda m: "READY" in m, "READY=1", run)
            run.proc.terminate()
            notifications.wait_for(lambda m: "STOPPING" in m, "STOPPING=1", run)
            assert run.wait_exit() == 0
            notifications.drain()
            assert notifications.count("WATCHDOG") == 0, notifications.messages
