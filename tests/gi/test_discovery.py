"""Discovery through the GObject Introspection bindings, against the simulator."""

from kubesim import Kubesim

# Fails a run that never calls back instead of hanging until meson's timeout.
WATCHDOG_SECONDS = 60


def _import():
    # Imported here, not at module level: the typelib does not exist when pytest collects.
    import gi

    gi.require_version("MeshSync", "1.0")
    from gi.repository import GLib, MeshSync

    return GLib, MeshSync


def _discover(kubeconfig):
    """Runs one discovery on a main loop; returns (discovery, error or None)."""
    GLib, MeshSync = _import()
    config = MeshSync.KubeConfig.new_from_file(kubeconfig, None)
    discovery = MeshSync.Discovery.new(config)
    loop = GLib.MainLoop()
    outcome = {}

    def done(source, result):
        try:
            outcome["ok"] = source.run_finish(result)
        except GLib.Error as err:
            outcome["error"] = err
        loop.quit()

    def watchdog():
        outcome["timeout"] = True
        loop.quit()
        return GLib.SOURCE_REMOVE

    watchdog_id = GLib.timeout_add_seconds(WATCHDOG_SECONDS, watchdog)
    discovery.run_async(None, done)
    loop.run()
    if "timeout" not in outcome:
        GLib.source_remove(watchdog_id)
    assert "timeout" not in outcome, "discovery never called back"
    return discovery, outcome.get("error")


def test_discovery_table():
    _, MeshSync = _import()
    with Kubesim() as sim:
        discovery, error = _discover(sim.kubeconfig)
        assert error is None, f"{error}\n{sim.log()}"

        table = {(r.get_group(), r.get_plural()): r for r in discovery.get_resources()}
        for group, plural, kind, namespaced in [
            ("", "pods", "Pod", True),
            ("", "namespaces", "Namespace", False),
            ("apps", "deployments", "Deployment", True),
        ]:
            assert (group, plural) in table, f"{group}/{plural} missing from {sorted(table)}"
            resource = table[(group, plural)]
            assert isinstance(resource, MeshSync.ApiResource)
            assert resource.get_kind() == kind
            assert resource.get_namespaced() == namespaced
            assert resource.get_watchable()
            assert resource.props.watchable
            assert discovery.lookup(group, None, plural) is not None

        pods = discovery.lookup("", "v1", "pods")
        assert pods.get_group_version() == "v1"
        assert pods.build_path("shop") == "/api/v1/namespaces/shop/pods"
        deployments = discovery.lookup("apps", None, "deployments")
        assert deployments.build_path(None) == "/apis/apps/v1/deployments"
        # subresources are folded into their parent, never rows of their own
        assert all("/" not in r.get_plural() for r in discovery.get_resources())
        assert discovery.get_server_version()


def test_discovery_wrong_token():
    GLib, MeshSync = _import()
    with Kubesim(token="sim-token") as sim:
        with open(sim.kubeconfig, encoding="utf-8") as f:
            text = f.read()
        assert "sim-token" in text
        wrong = sim.kubeconfig + ".wrong"
        with open(wrong, "w", encoding="utf-8") as f:
            f.write(text.replace("sim-token", "not-the-token"))

        discovery, error = _discover(wrong)
        assert error is not None, "discovery with a wrong token succeeded"
        assert error.matches(MeshSync.error_quark(), MeshSync.Error.UNAUTHORIZED), error.message
        assert "401" in error.message
        assert len(discovery.get_resources()) == 0
