# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""The daemon's io.meshery.MeshSync1 interface and meshsyncctl, on a session bus of their own.

meson runs this file under dbus-run-session, so the daemon started with --dbus=session owns
the name on a private bus. Every property is checked against what kubesim serves; waits are
for state, each with a deadline: the bus name (gdbus wait), PropertiesChanged signals and the
daemon's /metrics (meshsync_syncs_total). The log is read only for messages the user must
see.
"""

import os
import re
import subprocess
import time

from gi.repository import Gio, GLib
from kubesim import Kubesim
from meshsync_run import DAEMON, TIMEOUT, Meshsync, cluster_view, daemon_env

NAME = "io.meshery.MeshSync1"
PATH = "/io/meshery/MeshSync1"
IFACE = "io.meshery.MeshSync1"
MESHSYNCCTL = os.environ.get("MESHSYNCCTL", "meshsyncctl")

SMALL = {"pods": 30, "namespaces": 2}


class Bus:
    """The test's own connection to the session bus; records every PropertiesChanged of the
    interface from the moment it is created, so no transition can be missed."""

    def __init__(self):
        self.conn = Gio.bus_get_sync(Gio.BusType.SESSION, None)
        self.changes = []
        self.sub = self.conn.signal_subscribe(
            None, "org.freedesktop.DBus.Properties", "PropertiesChanged", PATH, None,
            Gio.DBusSignalFlags.NONE, self._on_changed)

    def _on_changed(self, conn, sender, path, iface, signal, params):
        interface, changed, _ = params.unpack()
        if interface == IFACE:
            self.changes.append(changed)

    def close(self):
        self.conn.signal_unsubscribe(self.sub)

    def has_owner(self):
        reply = self.conn.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                    "org.freedesktop.DBus", "NameHasOwner",
                                    GLib.Variant("(s)", (NAME,)), GLib.VariantType("(b)"),
                                    Gio.DBusCallFlags.NONE, 10000, None)
        return reply.unpack()[0]

    def get(self, prop):
        reply = self.conn.call_sync(NAME, PATH, "org.freedesktop.DBus.Properties", "Get",
                                    GLib.Variant("(ss)", (IFACE, prop)),
                                    GLib.VariantType("(v)"), Gio.DBusCallFlags.NONE, 10000,
                                    None)
        return reply.unpack()[0]

    def get_all(self):
        reply = self.conn.call_sync(NAME, PATH, "org.freedesktop.DBus.Properties", "GetAll",
                                    GLib.Variant("(s)", (IFACE,)),
                                    GLib.VariantType("(a{sv})"), Gio.DBusCallFlags.NONE,
                                    10000, None)
        return reply.unpack()[0]

    def call(self, method, reply_type="()"):
        reply = self.conn.call_sync(NAME, PATH, IFACE, method, None,
                                    GLib.VariantType(reply_type), Gio.DBusCallFlags.NONE,
                                    10000, None)
        return reply.unpack()

    def wait_change(self, prop, value, run, start=0, timeout=TIMEOUT):
        """Dispatches signals until a PropertiesChanged at or after index @start sets @prop
        to @value; returns the index after it."""
        context = GLib.MainContext.default()
        deadline = time.monotonic() + timeout
        while True:
            for i in range(start, len(self.changes)):
                if self.changes[i].get(prop) == value:
                    return i + 1
            if run.proc.poll() is not None:
                raise AssertionError(f"meshsync exited with {run.proc.returncode} before "
                                     f"{prop} became {value!r}:\n{run.log()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{prop} never became {value!r} (changes: "
                                     f"{self.changes}):\n{run.log()}")
            # wakes the blocking iteration at least every 100 ms to look at the deadline
            GLib.timeout_add(100, lambda: False)
            context.iteration(True)


def wait_for_name(run):
    result = subprocess.run(["gdbus", "wait", "--session", "--timeout", "30", NAME],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"{NAME} never appeared: {result.stderr}\n{run.log()}"


def dbus_daemon(tmp_path, sim_or_kubeconfig, *flags):
    kubeconfig = getattr(sim_or_kubeconfig, "kubeconfig", sim_or_kubeconfig)
    return Meshsync(str(tmp_path), kubeconfig, "--dbus=session", *flags)


def meshsyncctl(*args):
    return subprocess.run([MESHSYNCCTL, *args], capture_output=True, text=True, check=False,
                          timeout=TIMEOUT)


def kube_system_uid(sim):
    status, body = sim.request("GET", "/api/v1/namespaces/kube-system")
    assert status == 200, body
    return body["metadata"]["uid"]


def server_version(sim):
    status, body = sim.request("GET", "/version")
    assert status == 200, body
    return body["gitVersion"]


def daemon_version():
    out = subprocess.run([DAEMON, "--version"], capture_output=True, text=True, check=True)
    return out.stdout.split()[1]


def synced_objects(log):
    return int(re.search(r"initial sync complete: (\d+) objects", log).group(1))


def status_fields(text):
    fields = {}
    for line in text.splitlines():
        m = re.match(r"([A-Za-z ]+):\s+(.*)$", line)
        assert m, f"unexpected status line {line!r}"
        fields[m.group(1)] = m.group(2)
    return fields


def test_properties_match_kubesim(tmp_path):
    bus = Bus()
    with Kubesim(**SMALL) as sim, dbus_daemon(tmp_path, sim) as run:
        wait_for_name(run)
        # The bus shows the owner before the daemon's name-acquired handler has logged it.
        run.wait_for_line(f"D-Bus name {NAME} owned on the session bus")
        assert run.log().count(f"D-Bus name {NAME} owned on the session bus") == 1
        bus.wait_change("Ready", True, run)
        log = run.wait_synced()
        props = bus.get_all()
        assert set(props) == {"Version", "Server", "ServerVersion", "Ready", "ClusterId",
                              "Objects", "Sessions"}
        assert props["Sessions"] == []
        assert props["Version"] == daemon_version()
        assert props["Server"] == sim.url
        assert props["ServerVersion"] == server_version(sim)
        assert props["Ready"] is True
        assert props["ClusterId"] == kube_system_uid(sim)
        assert props["Objects"] > 0
        assert props["Objects"] == synced_objects(log) == len(cluster_view(sim))
        # each one on its own, through Get, too
        for name, value in props.items():
            assert bus.get(name) == value
        assert run.terminate() == 0, run.log()
    bus.close()


def test_objects_follow_changes(tmp_path):
    bus = Bus()
    with Kubesim(**SMALL) as sim, dbus_daemon(tmp_path, sim) as run:
        wait_for_name(run)
        index = bus.wait_change("Ready", True, run)
        before = bus.get("Objects")
        created = sim.create({"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": {"name": "dbus-test", "namespace": "default"},
                              "data": {"a": "b"}})
        assert created is not None
        bus.wait_change("Objects", before + 1, run, start=index)
        assert run.terminate() == 0, run.log()
    bus.close()


def test_list_resources(tmp_path):
    bus = Bus()
    with Kubesim(**SMALL) as sim, dbus_daemon(tmp_path, sim) as run:
        wait_for_name(run)
        bus.wait_change("Ready", True, run)
        (resources,) = bus.call("ListResources", "(a(ssssbb))")
        assert ("", "v1", "Pod", "pods", True, True) in resources
        assert ("apps", "v1", "Deployment", "deployments", True, True) in resources
        assert ("", "v1", "Namespace", "namespaces", False, True) in resources
        assert len(set(resources)) == len(resources)

        # the same table as the daemon's own --list-resources
        expected = subprocess.run([DAEMON, "--list-resources", "--kubeconfig", sim.kubeconfig],
                                  capture_output=True, text=True, check=True, timeout=TIMEOUT,
                                  env=daemon_env())
        table = meshsyncctl("resources")
        assert table.returncode == 0, table.stderr
        assert table.stdout == expected.stdout
        assert len(table.stdout.splitlines()) == len(resources) + 1
        assert run.terminate() == 0, run.log()
    bus.close()


def test_meshsyncctl_status(tmp_path):
    bus = Bus()
    with Kubesim(**SMALL) as sim, dbus_daemon(tmp_path, sim) as run:
        wait_for_name(run)
        bus.wait_change("Ready", True, run)
        result = meshsyncctl("status")
        assert result.returncode == 0, result.stderr
        fields = status_fields(result.stdout)
        assert fields == {
            "Version": daemon_version(),
            "Server": sim.url,
            "Server version": server_version(sim),
            "Ready": "yes",
            "Cluster id": kube_system_uid(sim),
            "Objects": str(bus.get("Objects")),
            "Sessions": "0",
        }
        assert run.terminate() == 0, run.log()
    bus.close()


def test_resync(tmp_path):
    bus = Bus()
    with Kubesim(**SMALL) as sim, dbus_daemon(tmp_path, sim) as run:
        wait_for_name(run)
        index = bus.wait_change("Ready", True, run)
        run.wait_synced()

        assert bus.call("Resync") == ()
        index = bus.wait_change("Ready", False, run, start=index)
        bus.wait_change("Ready", True, run, start=index)
        run.wait_synced(count=2)
        assert "resync requested over D-Bus by :" in run.log()

        # meshsyncctl asks for the same
        result = meshsyncctl("resync")
        assert result.returncode == 0, result.stderr
        assert "Resync requested" in result.stdout
        run.wait_synced(count=3)
        assert bus.get("Ready") is True
        assert bus.get("ClusterId") == kube_system_uid(sim)
        assert run.terminate() == 0, run.log()
    bus.close()


def test_list_resources_before_discovery(tmp_path):
    """An unreachable API server: the name is owned at once, Ready stays false and the
    resource table is a NotFound error of the registered domain."""
    bus = Bus()
    with Kubesim(**SMALL) as sim:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(open(sim.kubeconfig, encoding="utf-8").read())
    with dbus_daemon(tmp_path, str(kubeconfig)) as run:
        wait_for_name(run)
        props = bus.get_all()
        assert props["Ready"] is False
        assert props["ServerVersion"] == ""
        assert props["ClusterId"] == ""
        assert props["Objects"] == 0
        try:
            bus.call("ListResources", "(a(ssssbb))")
            raise AssertionError("ListResources succeeded without a discovery")
        except GLib.Error as error:
            assert Gio.DBusError.get_remote_error(error) == \
                "io.meshery.MeshSync1.Error.NotFound", error.message
            assert "discovery" in error.message

        result = meshsyncctl("resources")
        assert result.returncode == 1
        assert result.stderr.startswith("meshsyncctl: No resource table yet"), result.stderr
        result = meshsyncctl("status")
        assert result.returncode == 0, result.stderr
        assert status_fields(result.stdout)["Ready"] == "no"
        assert run.terminate() == 0, run.log()
    bus.close()


def test_second_daemon_exits_1(tmp_path):
    bus = Bus()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with Kubesim(**SMALL) as sim, dbus_daemon(tmp_path / "a", sim) as first:
        wait_for_name(first)
        with dbus_daemon(tmp_path / "b", sim) as second:
            assert second.wait_exit() == 1
            assert f"cannot own the D-Bus name {NAME} on the session bus" in second.log()
        assert first.proc.poll() is None
        assert bus.has_owner()
        assert first.terminate() == 0, first.log()
    bus.close()


def test_meshsyncctl_without_daemon():
    bus = Bus()
    assert not bus.has_owner()
    for command in ("status", "resources", "resync", "sessions"):
        result = meshsyncctl(command)
        assert result.returncode == 1, result
        assert result.stdout == ""
        assert result.stderr == (
            f"meshsyncctl: the meshsync daemon is not running on the session bus (nothing "
            f"owns {NAME}); start it with --dbus=session\n")
    bus.close()


def test_meshsyncctl_usage():
    result = meshsyncctl("--help")
    assert result.returncode == 0
    for command in ("status", "resources", "resync", "sessions", "--system"):
        assert command in result.stdout
    for args, message in ((), "no command given"), (("frobnicate",), "unknown command"), (
            ("status", "resync"), "one command at a time"):
        result = meshsyncctl(*args)
        assert result.returncode == 2, result
        assert message in result.stderr


def test_bad_bus_option(tmp_path):
    result = subprocess.run([DAEMON, "--dbus=wrong", "-output", "file"], capture_output=True,
                            text=True, check=False, timeout=TIMEOUT)
    assert result.returncode == 2
    assert "--dbus must be session or system" in result.stderr


def test_sessions_property_and_meshsyncctl(tmp_path):
    """A log session opened over NATS appears in Sessions and in meshsyncctl, and leaves
    both when it is stopped."""
    from nats_server import NatsServer
    from test_broker_mode import Daemon, request, wait_for_listener

    bus = Bus()
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "solo", "namespace": "default"},
           "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "x:1"}]},
           "status": {"phase": "Running", "containerStatuses": [
               {"name": "app", "ready": True, "restartCount": 0, "started": True,
                "image": "x:1", "imageID": "", "containerID": "containerd://" + "0" * 40,
                "state": {"running": {"startedAt": "2026-01-01T10:00:00Z"}},
                "lastState": {}}]}}
    with Kubesim(pods=2, namespaces=1) as sim, NatsServer() as nats, nats.client() as nc:
        sim.create(pod)
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url, "--dbus=session") as run:
            wait_for_name(run)
            wait_for_listener(nats)
            entry = ("logs.default.solo.app", "log", "default", "solo", "app")
            request(nc, "log-stream", {"v": {"id": "r1", "name": "solo", "namespace": "default",
                                             "container": "app", "follow": True}})
            index = bus.wait_change("Sessions", [entry], run)
            assert bus.get("Sessions") == [entry]
            listed = meshsyncctl("sessions")
            assert listed.returncode == 0, listed.stderr
            assert listed.stdout.splitlines()[1].split() == ["log", "default", "solo", "app",
                                                             "logs.default.solo.app"]
            assert status_fields(meshsyncctl("status").stdout)["Sessions"] == "1"
            request(nc, "log-stream", {"v": {"id": "r1", "name": "solo", "namespace": "default",
                                             "container": "app", "stop": True}})
            bus.wait_change("Sessions", [], run, start=index)
            assert run.terminate() == 0, run.log()
    bus.close()
