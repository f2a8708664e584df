"""Two MeshSync.Service engines in one Python process, each on its own thread with its own
GLib.MainContext pushed as that thread's default, against two simulators: each writes exactly
its own cluster's pods, and nothing of either is attached to the global default context, which
no thread runs here (a timer put there would never fire)."""

import re
import threading

from kubesim import Kubesim

TIMEOUT = 60
# A reconcile tick keeps one timer of each engine alive for the whole run: where it is attached
# says which context the engine runs in.
RECONCILE_MS = 3600 * 1000
TICK = "[meshsync] reconcile tick"


def _import():
    # Imported here, not at module level: the typelib does not exist when pytest collects.
    import gi

    gi.require_version("MeshSync", "1.0")
    from gi.repository import GLib, MeshSync

    return GLib, MeshSync


def _pods(sim):
    status, body = sim.request("GET", "/api/v1/pods")
    assert status == 200, body
    return {item["metadata"]["uid"] for item in body["items"]}


def _source_names(GLib, context):
    """The names of the sources attached to @context now. Ids are handed out per context in
    increasing order, so a fresh source's id bounds those of every source still attached.
    Call it from the thread that runs @context (or while nobody does)."""
    probe = GLib.idle_source_new()
    last = probe.attach(context)
    probe.destroy()
    names = []
    for source_id in range(1, last):
        source = context.find_source_by_id(source_id)
        if source is not None:
            names.append(source.get_name() or "")
    return names


def _engine(GLib, MeshSync, name, sim, snapshot, report, checked):
    context = GLib.MainContext.new()
    context.push_thread_default()
    try:
        loop = GLib.MainLoop.new(context, False)
        expired = []

        def watchdog():
            expired.append(True)
            loop.quit()
            return GLib.SOURCE_REMOVE

        timer = GLib.timeout_source_new_seconds(TIMEOUT)
        timer.set_callback(watchdog)
        timer.attach(context)

        service = MeshSync.Service.new(MeshSync.KubeConfig.new_from_file(sim.kubeconfig, None))
        service.set_output_file(str(snapshot), False)
        service.set_output_resources(["pod"])
        service.set_reconcile_interval(RECONCILE_MS)
        service.connect("notify::ready", lambda s, p: loop.quit())
        started = []
        service.start_async(None, lambda s, r: (started.append(s.start_finish(r)), loop.quit()))
        while not (started and service.props.ready) and not expired:
            loop.run()
        report["started"] = started
        report["ready"] = service.props.ready
        report["own"] = _source_names(GLib, context)

        # the main thread looks at the default context while both engines are running
        checked.wait()
        checked.wait()

        stopped = []
        service.stop_async(None, lambda s, r: (stopped.append(s.stop_finish(r)), loop.quit()))
        while not stopped and not expired:
            loop.run()
        report["stopped"] = stopped
        report["documents"] = service.get_file_writer().get_n_documents()
        timer.destroy()
    except Exception as error:  # noqa: BLE001 - reported by the main thread
        report["error"] = error
        checked.abort()
    finally:
        context.pop_thread_default()


def test_two_services_on_two_threads_each_in_its_own_context(tmp_path):
    GLib, MeshSync = _import()
    with Kubesim(pods=7, namespaces=1) as a, Kubesim(pods=12, namespaces=3) as b:
        expected = {"a": _pods(a), "b": _pods(b)}
        assert expected["a"] and expected["b"]
        assert expected["a"].isdisjoint(expected["b"])
        reports = {"a": {}, "b": {}}
        checked = threading.Barrier(3, timeout=TIMEOUT * 2)
        threads = [
            threading.Thread(target=_engine, daemon=True,
                             args=(GLib, MeshSync, name, sim, tmp_path / f"{name}.yaml",
                                   reports[name], checked))
            for name, sim in (("a", a), ("b", b))
        ]
        for thread in threads:
            thread.start()
        checked.wait()
        # nobody runs the default context: whatever is attached there stays until we look
        default = _source_names(GLib, GLib.MainContext.default())
        checked.wait()
        for thread in threads:
            thread.join(TIMEOUT * 2)
            assert not thread.is_alive()

        assert not [n for n in default if n.startswith("[meshsync]")], default
        for name in ("a", "b"):
            report = reports[name]
            assert "error" not in report, report["error"]
            assert report["started"] == [True], report
            assert report["ready"], report
            assert TICK in report["own"], report["own"]
            assert report["stopped"] == [True], report
            assert report["documents"] == len(expected[name]), report
            text = (tmp_path / f"{name}.yaml").read_text()
            written = set(re.findall(r"^  uid: (\S+)$", text, re.MULTILINE))
            other = "b" if name == "a" else "a"
            assert expected[name] <= written, (name, expected[name] - written)
            assert not written & expected[other], (name, written & expected[other])


def test_handler_alone_runs_in_the_context_of_the_thread_that_starts_it():
    """A handler used without a service, made on this thread and started on another one with
    its own context pushed: its timers follow the start, and the default context stays empty."""
    GLib, MeshSync = _import()
    with Kubesim(pods=5, namespaces=1) as sim:
        handler = MeshSync.Handler.new(MeshSync.KubeConfig.new_from_file(sim.kubeconfig, None),
                                       None)
        handler.set_output_resources(["pod"])
        handler.set_reconcile_interval(RECONCILE_MS)
        report = {}
        checked = threading.Barrier(2, timeout=TIMEOUT * 2)

        def run():
            context = GLib.MainContext.new()
            context.push_thread_default()
            try:
                loop = GLib.MainLoop.new(context, False)
                expired = []
                timer = GLib.timeout_source_new_seconds(TIMEOUT)
                timer.set_callback(lambda: (expired.append(True), loop.quit(), False)[-1])
                timer.attach(context)
                handler.connect("ready-changed", lambda h, ready: loop.quit())
                report["started"] = handler.start()
                while not handler.props.ready and not expired:
                    loop.run()
                report["ready"] = handler.props.ready
                report["n_objects"] = handler.get_n_objects()
                report["own"] = _source_names(GLib, context)
                checked.wait()
                handler.stop()
                timer.destroy()
            except Exception as error:  # noqa: BLE001 - reported by the main thread
                report["error"] = error
                checked.abort()
            finally:
                context.pop_thread_default()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        try:
            checked.wait()
        except threading.BrokenBarrierError:
            pass
        default = _source_names(GLib, GLib.MainContext.default())
        thread.join(TIMEOUT * 2)
        assert not thread.is_alive()
        assert "error" not in report, report["error"]
        assert report["started"] and report["ready"], report
        assert report["n_objects"] >= len(_pods(sim)), report
        assert TICK in report["own"], report["own"]
        assert not [n for n in default if n.startswith("[meshsync]")], default
