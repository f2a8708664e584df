"""MeshSync.Session through the GObject Introspection bindings, on its own (no NATS): a log
session reads the history and what is appended, an exec session runs a shell round trip, and a
missing pod ends with an error. kubesim is the API server."""

from kubesim import Kubesim

WATCHDOG_SECONDS = 30
NS = "gi"


def _import():
    # Imported here, not at module level: the typelib does not exist when pytest collects.
    import gi

    gi.require_version("MeshSync", "1.0")
    from gi.repository import GLib, MeshSync

    return GLib, MeshSync


def _run_until(loop, GLib, condition, what):
    expired = []

    def watchdog():
        expired.append(True)
        loop.quit()
        return GLib.SOURCE_REMOVE

    watchdog_id = GLib.timeout_add_seconds(WATCHDOG_SECONDS, watchdog)
    while not condition() and not expired:
        loop.run()
    if not expired:
        GLib.source_remove(watchdog_id)
    assert condition(), f"timed out waiting for {what}"


def _spin_until(GLib, sim, condition, what):
    """Waits on kubesim while the main context runs: a stopped session lets go of its
    connection from the main loop."""
    def check():
        GLib.MainContext.default().iteration(False)
        return condition()

    sim.wait_for(check, what)


def _pod(name, containers):
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"nodeName": "node-1",
                 "containers": [{"name": c, "image": "busybox:1.36"} for c in containers]},
        "status": {"phase": "Running", "containerStatuses": [
            {"name": c, "ready": True, "restartCount": 0, "started": True,
             "image": "busybox:1.36", "imageID": "", "containerID":
             f"containerd://{name}-{c}-{'0' * 40}",
             "state": {"running": {"startedAt": "2026-01-01T10:00:00Z"}}, "lastState": {}}
            for c in containers]},
    }


def _sim():
    sim = Kubesim()
    sim.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    sim.create(_pod("solo", ["app"]))
    return sim


class Watcher:
    """Keeps what a session says; quits the loop after each signal so the test re-checks."""

    def __init__(self, session, loop):
        self.loop = loop
        self.output = b""
        self.chunks = []
        self.errors = []
        self.closed = 0
        session.connect("output", self.on_output)
        session.connect("error", self.on_error)
        session.connect("closed", self.on_closed)

    def on_output(self, session, data):
        chunk = data.get_data()
        self.chunks.append(chunk)
        self.output += chunk
        self.loop.quit()

    def on_error(self, session, error):
        self.errors.append(error.message)
        self.loop.quit()

    def on_closed(self, session):
        self.closed += 1
        self.loop.quit()


def test_log_session_history_follow_and_stop():
    GLib, MeshSync = _import()
    with _sim() as sim:
        config = MeshSync.KubeConfig.new_from_file(sim.kubeconfig, None)
        loop = GLib.MainLoop()
        session = MeshSync.Session.new_log(config, NS, "solo", "app")
        assert session.get_kind() == MeshSync.SessionKind.LOG
        assert session.get_id() == f"logs.{NS}.solo.app"
        session.set_follow(True)
        session.set_tail_lines(2)
        session.set_chunk_size(16)
        seen = Watcher(session, loop)
        session.start()
        _run_until(loop, GLib, lambda: seen.output.count(b"\n") >= 2, "two history lines")
        sim.wait_for_log_followers(NS, "solo", "app")
        sim.append_log(NS, "solo", "app", "hello from the test ünïcödé")
        _run_until(loop, GLib, lambda: b"hello from the test" in seen.output, "the new line")
        assert all(len(c) <= 16 for c in seen.chunks)
        # every chunk is whole UTF-8 on its own
        for chunk in seen.chunks:
            chunk.decode("utf-8")
        assert session.get_state() == MeshSync.SessionState.RUNNING
        session.stop()
        assert seen.closed == 1 and seen.errors == []
        assert session.get_state() == MeshSync.SessionState.CLOSED
        session.stop()
        assert seen.closed == 1
        _spin_until(GLib, sim, lambda: sim.log_followers(NS, "solo", "app") == 0,
                    "the follower gone")


def test_log_session_of_a_missing_pod_fails():
    GLib, MeshSync = _import()
    with _sim() as sim:
        config = MeshSync.KubeConfig.new_from_file(sim.kubeconfig, None)
        loop = GLib.MainLoop()
        session = MeshSync.Session.new_log(config, NS, "ghost", None)
        seen = Watcher(session, loop)
        session.start()
        _run_until(loop, GLib, lambda: seen.closed, "the end")
        assert len(seen.errors) == 1 and "not found" in seen.errors[0], seen.errors


def test_exec_session_round_trip():
    GLib, MeshSync = _import()
    with _sim() as sim:
        config = MeshSync.KubeConfig.new_from_file(sim.kubeconfig, None)
        loop = GLib.MainLoop()
        session = MeshSync.Session.new_exec(config, NS, "solo", "app", ["/bin/sh"])
        seen = Watcher(session, loop)
        session.start()
        # written before the shell runs: sent once it does
        session.write(b"echo round-trip-ok\n")
        _run_until(loop, GLib, lambda: seen.closed or b"round-trip-ok" in seen.output.replace(
            b"echo round-trip-ok", b""), "the echo")
        assert not seen.closed, seen.errors
        assert session.get_protocol() in ("v5.channel.k8s.io", "v4.channel.k8s.io")
        session.write(b"exit 3\n")
        _run_until(loop, GLib, lambda: seen.closed, "the end of the shell")
        assert session.get_exit_code() == 3
        assert len(seen.errors) == 1 and "3" in seen.errors[0], seen.errors
        _spin_until(GLib, sim, lambda: sim.exec_sessions() == 0, "no exec left in kubesim")


def test_exec_session_of_a_missing_container_fails():
    GLib, MeshSync = _import()
    with _sim() as sim:
        config = MeshSync.KubeConfig.new_from_file(sim.kubeconfig, None)
        loop = GLib.MainLoop()
        session = MeshSync.Session.new_exec(config, NS, "solo", "nope", None)
        seen = Watcher(session, loop)
        session.start()
        _run_until(loop, GLib, lambda: seen.closed, "the end")
        assert seen.errors == ["container nope is not valid for pod solo"], seen.errors


def test_subclass_handles_the_signals_in_its_class():
    GLib, MeshSync = _import()

    class Recorded(MeshSync.Session):
        def __init__(self, loop, **props):
            super().__init__(**props)
            self.loop = loop
            self.errors = []
            self.closed = 0

        def do_error(self, error):
            self.errors.append(error.message)

        def do_closed(self):
            self.closed += 1
            self.loop.quit()

    with _sim() as sim:
        config = MeshSync.KubeConfig.new_from_file(sim.kubeconfig, None)
        loop = GLib.MainLoop()
        session = Recorded(loop, kube_config=config, kind=MeshSync.SessionKind.LOG,
                           namespace=NS, pod="ghost")
        assert session.get_id() == f"logs.{NS}.ghost."
        session.start()
        _run_until(loop, GLib, lambda: session.closed, "the end")
        assert session.closed == 1
        assert len(session.errors) == 1 and "not found" in session.errors[0]
