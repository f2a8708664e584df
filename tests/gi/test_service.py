"""MeshSync.Service through the GObject Introspection bindings: broker mode with request
answering and readiness served, assembled in a few lines of Python, against the simulator and
a real nats-server. What a Meshery Server would see is checked from a NATS client running in
a thread while the GLib main loop runs the service."""

import json
import threading
import urllib.error
import urllib.request

from kubesim import Kubesim
from nats_server import NatsServer

CORE = "meshery.meshsync.core"
REQUEST = "meshery.meshsync.request"
TIMEOUT = 60.0


def _import():
    # Imported here, not at module level: the typelib does not exist when pytest collects.
    import gi

    gi.require_version("MeshSync", "1.0")
    from gi.repository import GLib, MeshSync

    return GLib, MeshSync


def _request(nc, entity, payload=None):
    body = {"ObjectType": "request-payload", "EventType": "ADDED",
            "Request": {"Entity": entity, "Payload": payload}, "Object": None}
    nc.publish(REQUEST, json.dumps(body))
    nc.flush()


def _readyz(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz?verbose", timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def _pods(sim):
    status, body = sim.request("GET", "/api/v1/pods")
    assert status == 200, body
    return {item["metadata"]["uid"] for item in body["items"]}


def test_broker_mode_from_python():
    GLib, MeshSync = _import()
    with Kubesim(pods=12, namespaces=2) as sim, NatsServer() as nats, nats.client() as nc:
        pods = _pods(sim)
        nc.subscribe(CORE)
        nc.subscribe("meshsync-meta")
        nc.subscribe("store.reply")

        # --- what the README shows: broker mode, requests answered, /readyz served ---
        service = MeshSync.Service.new(MeshSync.KubeConfig.new_from_file(sim.kubeconfig, None))
        service.set_broker(MeshSync.Broker.new(nats.url))
        service.set_output_resources(["pod"])
        service.set_health("127.0.0.1", 0)
        loop = GLib.MainLoop()
        started = []
        service.start_async(None, lambda s, r: started.append(s.start_finish(r)))
        # ---

        failures = []
        seen = {"published": set(), "meta": None, "store": set()}

        def client():
            """Plays Meshery Server: waits for readiness, then asks each request."""
            try:
                health = None
                deadline = GLib.get_monotonic_time() + int(TIMEOUT * 1e6)
                while GLib.get_monotonic_time() < deadline:
                    if health is None and service.get_health_server() is not None:
                        health = service.get_health_server().get_port()
                    if health is not None and _readyz(health)[0] == 200:
                        break
                    threading.Event().wait(0.05)
                status, body = _readyz(health)
                assert status == 200, body
                # upstream's latched readiness: ready once the broker is connected
                assert body == "[+]broker ok\nreadyz check passed\n", body

                # every pod published once as ADDED on meshery.meshsync.core
                while seen["published"] != pods:
                    msg = nc.next_msg(timeout=TIMEOUT)
                    if msg.subject == CORE:
                        envelope = msg.json()
                        assert envelope["EventType"] == "ADDED", envelope
                        seen["published"].add(envelope["Object"]["metadata"]["uid"])

                _request(nc, "meshsync-meta")
                _request(nc, "informer-store", {"Reply": "store.reply"})
                while seen["meta"] is None or seen["store"] != pods:
                    msg = nc.next_msg(timeout=TIMEOUT)
                    if msg.subject == "meshsync-meta":
                        seen["meta"] = msg.json()
                    elif msg.subject == "store.reply":
                        batch = msg.json()["Object"]
                        assert 1 <= len(batch) <= 5, batch
                        seen["store"].update(o["metadata"]["uid"] for o in batch)

                # resync-discovery: the run is torn down and every pod listed again
                _request(nc, "resync-discovery")
                again = set()
                while again != pods:
                    msg = nc.next_msg(timeout=TIMEOUT)
                    if msg.subject == CORE:
                        again.add(msg.json()["Object"]["metadata"]["uid"])
            except Exception as error:  # noqa: BLE001 - reported by the main thread
                failures.append(error)
            finally:
                GLib.idle_add(loop.quit)

        thread = threading.Thread(target=client, daemon=True)
        thread.start()
        GLib.timeout_add_seconds(int(TIMEOUT * 3), loop.quit)
        service.set_flush_timeout(2000)
        loop.run()
        thread.join(timeout=5)
        if failures:
            raise failures[0]
        assert started == [True]
        assert seen["published"] == pods
        assert seen["store"] == pods
        assert seen["meta"] is not None
        handler = service.get_handler()
        assert handler.get_n_objects() == len(pods)
        assert handler.get_resource_names() == ["pods.v1."]

        stopped = []
        service.stop_async(None, lambda s, r: (stopped.append(s.stop_finish(r)), loop.quit()))
        loop.run()
        assert stopped == [True]


def test_file_mode_from_python(tmp_path):
    GLib, MeshSync = _import()
    with Kubesim(pods=5, namespaces=1) as sim:
        pods = _pods(sim)
        snapshot = tmp_path / "snapshot.yaml"
        service = MeshSync.Service.new(MeshSync.KubeConfig.new_from_file(sim.kubeconfig, None))
        service.set_output_file(str(snapshot), False)
        service.set_output_resources(["pod"])
        loop = GLib.MainLoop()
        service.connect("notify::ready", lambda s, p: loop.quit())
        started = []
        service.start_async(None, lambda s, r: started.append(s.start_finish(r)))
        GLib.timeout_add_seconds(int(TIMEOUT), loop.quit)
        loop.run()
        assert started == [True]
        assert service.props.ready
        stopped = []
        service.stop_async(None, lambda s, r: (stopped.append(s.stop_finish(r)), loop.quit()))
        loop.run()
        assert stopped == [True]
        text = snapshot.read_text()
        assert text.count("---\n") == len(pods)
        for uid in pods:
            assert f"uid: {uid}" in text
        assert service.get_file_writer().get_n_documents() == len(pods)


def test_start_fails_without_broker():
    GLib, MeshSync = _import()
    with Kubesim(pods=1, namespaces=1) as sim:
        service = MeshSync.Service.new(MeshSync.KubeConfig.new_from_file(sim.kubeconfig, None))
        broker = MeshSync.Broker.new("nats://127.0.0.1:1")
        broker.set_connect_timeout(1)
        # the daemon's JetStream settings are the library's public API, Python's too
        broker.set_jetstream(True)
        broker.set_jetstream_ack_timeout(500)
        service.set_broker(broker)
        loop = GLib.MainLoop()
        errors = []

        def done(s, r):
            try:
                s.start_finish(r)
            except GLib.Error as error:
                errors.append(error)
            loop.quit()

        service.start_async(None, done)
        GLib.timeout_add_seconds(int(TIMEOUT), loop.quit)
        loop.run()
        assert len(errors) == 1
        assert errors[0].matches(MeshSync.error_quark(), MeshSync.Error.CONNECTION), errors[0]
        assert "127.0.0.1:1" in errors[0].message
