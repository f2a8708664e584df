"""A Python program using the library sees nothing on its stderr at GLib's default settings:
the library's routine lines are info and debug, which GLib's own writer prints only when
G_MESSAGES_DEBUG asks for them. The sync runs in a child process so that its stderr can be
read whole, after it exited."""

import os
import subprocess
import sys

from kubesim import Kubesim

CHILD = r"""
import sys
import gi

gi.require_version("MeshSync", "1.0")
from gi.repository import GLib, GObject, MeshSync


class Counter(GObject.Object, MeshSync.Writer):
    def __init__(self):
        super().__init__()
        self.events = 0

    def do_write(self, resource, event_type):
        self.events += 1
        return True

    def do_flush(self):
        return True

    def do_close(self):
        return True


loop = GLib.MainLoop()
writer = Counter()
config = MeshSync.KubeConfig.new_from_file(sys.argv[1], None)
handler = MeshSync.Handler.new(config, writer)
failures = []
handler.connect("failed", lambda h, error: (failures.append(error.message), loop.quit()))
handler.connect("ready-changed", lambda h, ready: loop.quit())
GLib.timeout_add_seconds(60, loop.quit)
assert handler.start()
while not handler.props.ready and not failures:
    loop.run()
handler.stop()
assert handler.props.ready is False and not failures, failures
assert writer.events > 0
print(writer.events)
"""


def run_child(kubeconfig, **env):
    environment = dict(os.environ)
    environment.pop("G_MESSAGES_DEBUG", None)
    environment.update(env)
    return subprocess.run([sys.executable, "-c", CHILD, kubeconfig], capture_output=True,
                          text=True, env=environment, timeout=120)


def test_sync_is_silent_by_default():
    with Kubesim(pods=20, namespaces=2) as sim:
        proc = run_child(sim.kubeconfig)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    # nothing of the library's on stdout either: the count alone
    assert int(proc.stdout) > 0, proc.stdout


def test_g_messages_debug_shows_the_library_lines():
    with Kubesim(pods=20, namespaces=2) as sim:
        proc = run_child(sim.kubeconfig, G_MESSAGES_DEBUG="MeshSyncEngine")
    assert proc.returncode == 0, proc.stderr
    # GLib's own writer, the host's here, puts info and debug lines on stdout
    output = proc.stdout + proc.stderr
    assert "MeshSyncEngine-INFO" in output and "pods.v1.: synced" in output, output
    # the host named one domain: the others stay quiet
    assert "MeshSyncInformer" not in output
