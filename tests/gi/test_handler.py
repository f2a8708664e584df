"""MeshSync.Handler through the GObject Introspection bindings, against the simulator: a
Python MeshSync.Writer receives every event, and a Python MeshSync.Stage joins each run."""

from kubesim import Kubesim
from watch_set import KINDS, cluster_view, seed_every_kind

# Fails a run that never gets where the test waits for instead of hanging until meson's
# timeout.
WATCHDOG_SECONDS = 60

def _import():
    # Imported here, not at module level: the typelib does not exist when pytest collects.
    import gi

    gi.require_version("MeshSync", "1.0")
    from gi.repository import GLib, GObject, MeshSync

    return GLib, GObject, MeshSync


def _run_until(loop, GLib, condition, what):
    """Runs @loop until @condition() holds (checked whenever the test quits the loop)."""
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


def _recorder_class(GObject, MeshSync):
    class Recorder(GObject.Object, MeshSync.Writer):
        """Keeps every event; quits the loop after each so the test re-checks."""

        def __init__(self, loop):
            super().__init__()
            self.loop = loop
            self.events = []
            self.closed = False

        def do_write(self, resource, event_type):
            self.events.append((event_type, resource.get_kind(),
                                resource.get_namespace() or "",
                                resource.get_name(), resource.get_uid(),
                                resource.get_resource_version()))
            self.loop.quit()
            return True

        def do_flush(self):
            return True

        def do_close(self):
            self.closed = True
            return True

    return Recorder


def test_python_writer_receives_added_modified_deleted():
    GLib, GObject, MeshSync = _import()
    Recorder = _recorder_class(GObject, MeshSync)
    with Kubesim(pods=40, namespaces=2) as sim:
        seed_every_kind(sim)
        view = cluster_view(sim)
        loop = GLib.MainLoop()
        writer = Recorder(loop)
        config = MeshSync.KubeConfig.new_from_file(sim.kubeconfig, None)
        handler = MeshSync.Handler.new(config, writer)
        failures = []
        handler.connect("failed", lambda h, error: (failures.append(error), loop.quit()))
        handler.connect("ready-changed", lambda h, ready: loop.quit())
        assert not handler.props.ready
        # what the daemon reads for its D-Bus properties and status line, public since
        assert handler.get_discovery() is None
        assert handler.describe_listing() is None
        assert handler.start()
        try:
            _run_until(loop, GLib, lambda: handler.props.ready or failures, "the initial sync")
            assert not failures, failures[0].message
            assert handler.get_ready()
            assert handler.get_discovery().get_server_version()
            assert handler.describe_listing() == ""

            added = [e for e in writer.events if e[0] == MeshSync.EventType.ADDED]
            assert all(e[0] == MeshSync.EventType.ADDED for e in writer.events), writer.events
            uids = [e[4] for e in added]
            assert len(uids) == len(set(uids)), "an object was added twice"
            assert set(uids) == set(view), (
                f"missing: {[view[u] for u in set(view) - set(uids)]}, "
                f"unexpected: {sorted(set(uids) - set(view))}")
            for event in added:
                assert event[1:4] == view[event[4]], event
            # every kind of the default watch set, none left out
            assert {e[1] for e in added} == KINDS
            assert handler.get_n_objects() == len(view)

            # a change made through the admin API arrives as MODIFIED with the new version
            kind, namespace, name = next(v for v in view.values() if v[0] == "ConfigMap")
            status, current = sim.request(
                "GET", f"/api/v1/namespaces/{namespace}/configmaps/{name}")
            assert status == 200, current
            uid = current["metadata"]["uid"]
            current["data"] = {"changed": "yes"}
            replaced = sim.replace(current)
            new_rv = replaced["metadata"]["resourceVersion"]
            assert new_rv != current["metadata"]["resourceVersion"]
            _run_until(loop, GLib,
                       lambda: any(e[0] == MeshSync.EventType.MODIFIED and e[4] == uid
                                   for e in writer.events),
                       f"MODIFIED {namespace}/{name}")
            modified = [e for e in writer.events if e[0] == MeshSync.EventType.MODIFIED]
            assert modified == [(MeshSync.EventType.MODIFIED, "ConfigMap", namespace, name, uid,
                                 new_rv)]

            # a delete arrives as DELETED
            pod_uid, (_, pod_ns, pod_name) = next(
                (u, v) for u, v in view.items() if v[0] == "Pod")
            sim.delete("v1", "Pod", pod_name, pod_ns)
            _run_until(loop, GLib,
                       lambda: any(e[0] == MeshSync.EventType.DELETED for e in writer.events),
                       f"DELETED {pod_ns}/{pod_name}")
            deleted = [e[:5] for e in writer.events if e[0] == MeshSync.EventType.DELETED]
            assert deleted == [(MeshSync.EventType.DELETED, "Pod", pod_ns, pod_name, pod_uid)]
        finally:
            handler.stop()
        assert not handler.props.ready
        # the handler leaves the writer open for the program
        assert not writer.closed


def test_python_stage_runs_once_per_run():
    GLib, GObject, MeshSync = _import()

    class CountingStage(MeshSync.Stage):
        def __init__(self):
            super().__init__(name="python-counting")
            self.runs = 0
            self.resources_seen = []

        def do_run(self, pipeline):
            self.runs += 1
            self.resources_seen.append(list(pipeline.get_resource_names()))
            return True

    with Kubesim(pods=10, namespaces=1) as sim:
        loop = GLib.MainLoop()
        config = MeshSync.KubeConfig.new_from_file(sim.kubeconfig, None)
        handler = MeshSync.Handler.new(config, None)
        handler.set_resync_delay(100)
        stage = CountingStage()
        pipelines = []
        readiness = []

        def pipeline_created(h, pipeline):
            pipelines.append(pipeline)
            pipeline.add_stage(stage)

        def ready_changed(h, ready):
            readiness.append(ready)
            loop.quit()

        handler.connect("pipeline-created", pipeline_created)
        handler.connect("ready-changed", ready_changed)
        assert handler.start()
        try:
            _run_until(loop, GLib, lambda: readiness.count(True) >= 1, "the first run")
            assert stage.runs == 1
            assert len(pipelines) == 1
            # our stage comes after the engine's own and sees what they registered
            names = [pipelines[0].get_stage(i).get_name()
                     for i in range(pipelines[0].get_n_stages())]
            assert names[-1] == "python-counting", names
            assert "pods.v1." in stage.resources_seen[0]

            handler.resync()
            _run_until(loop, GLib, lambda: readiness.count(True) >= 2, "the resync's run")
            assert readiness == [True, False, True]
            assert stage.runs == 2
            assert len(pipelines) == 2
            assert pipelines[0] is not pipelines[1]
        finally:
            handler.stop()
        assert stage.runs == 2


def test_unwritable_writer_holds_events_and_loses_none():
    """A writer that refuses events while it is not writable (a broker whose buffer is full)
    gets every one of them once it is writable again: nothing is dropped, nothing doubled."""
    GLib, GObject, MeshSync = _import()

    class Flaky(GObject.Object, MeshSync.Writer):
        def __init__(self, loop, fail_after):
            super().__init__()
            self.loop = loop
            self.fail_after = fail_after
            self.open = True
            self.refused = 0
            self.events = []

        def do_is_writable(self):
            return self.open

        def do_write(self, resource, event_type):
            if len(self.events) == self.fail_after and not self.refused:
                # The output fills up on this very event: refuse it and say so.
                self.open = False
            if not self.open:
                self.refused += 1
                self.loop.quit()
                raise GLib.Error("buffer full")
            self.events.append(resource.get_uid())
            self.loop.quit()
            return True

    with Kubesim(pods=30, namespaces=2) as sim:
        seed_every_kind(sim)
        view = cluster_view(sim)
        loop = GLib.MainLoop()
        writer = Flaky(loop, fail_after=25)
        config = MeshSync.KubeConfig.new_from_file(sim.kubeconfig, None)
        handler = MeshSync.Handler.new(config, writer)
        handler.connect("ready-changed", lambda h, ready: loop.quit())
        assert handler.start()
        try:
            _run_until(loop, GLib, lambda: writer.refused > 0, "the writer to fill up")
            assert len(writer.events) == 25
            # While it is not writable the handler holds back: no further attempts.
            refused = writer.refused
            context = GLib.MainContext.default()
            while context.iteration(False):
                pass
            assert writer.refused == refused

            writer.open = True
            writer.emit("writable-changed")
            _run_until(loop, GLib, lambda: handler.props.ready and
                       set(writer.events) == set(view), "every object after the writer recovered")
            assert len(writer.events) == len(set(writer.events)), "an event was written twice"
        finally:
            handler.stop()
