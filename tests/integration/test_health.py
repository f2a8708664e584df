# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""/healthz, /readyz and /metrics of the meshsync daemon, against kubesim and nats-server.

Readiness latches as upstream's does (ready for good once the broker is connected; in file
mode once synced), or, with --readiness=strict, follows the broker connection and the
informers' initial sync; /metrics counts
agree with what a subscriber received. Every wait is for state (an HTTP answer, a metric, a
message on the wire); "nothing more to come" is an end marker, never a quiet second.
"""

import re
import socket

from kubesim import Kubesim
from test_broker_mode import (CORE, Daemon, NatsServer, Seen, cluster_view, envelope,
                              free_port, request, wait_for_listener)

SMALL = {"pods": 20, "namespaces": 2}


def metric_samples(text, name):
    """{labels text: value} of every sample of @name."""
    samples = {}
    for line in text.splitlines():
        m = re.match(re.escape(name) + r"(\{[^}]*\})? (\S+)$", line)
        if m:
            samples[m.group(1) or ""] = float(m.group(2))
    return samples


def wait_status(run, path, status):
    return run.wait_until(lambda: run.http(path)[0] == status, f"{path} answering {status}")


def test_readyz_latches_by_default(tmp_path):
    port = free_port()
    with Kubesim(**SMALL) as sim:
        with Daemon(str(tmp_path), sim.kubeconfig, f"nats://127.0.0.1:{port}") as run:
            assert run.http("/readyz") == (503, "not ready")
            status, body = run.http("/readyz?verbose")
            # only the broker gates it: no informers-synced check in upstream's meaning
            assert status == 503
            assert re.fullmatch(r"\[-\]broker failed: [^\n]+\nreadyz check failed\n", body), body

            with NatsServer(port=port) as nats:
                # upstream's meaning: ready once the broker is there, synced or not
                wait_status(run, "/readyz", 200)
                assert run.http("/readyz?verbose") == (200, "[+]broker ok\nreadyz check passed\n")
                run.wait_synced()

                nats.stop()
                # the broker is gone, and readiness stays: the pod stays in its Service
                run.wait_until(lambda: "[-]broker failed" in run.http("/readyz?verbose")[1],
                               "the broker check failing")
                status, body = run.http("/readyz?verbose")
                assert status == 200, body
                assert body.endswith("readyz check passed (latched)\n"), body
                assert run.http("/readyz") == (200, "ok")
                nats.start()
                run.wait_metric("meshsync_broker_reconnects_total", 1)
                assert run.http("/readyz") == (200, "ok")
            assert run.terminate() == 0


def test_readyz_strict_follows_broker_and_sync(tmp_path):
    port = free_port()
    with Kubesim(**SMALL) as sim:
        # the broker is not there yet: start-up waits for it
        with Daemon(str(tmp_path), sim.kubeconfig, f"nats://127.0.0.1:{port}",
                    "--readiness=strict") as run:
            assert run.http("/healthz") == (200, "ok")
            status, body = run.http("/readyz")
            assert (status, body) == (503, "not ready")
            status, body = run.http("/readyz?verbose")
            assert status == 503
            assert "[-]broker failed: " in body
            assert "[-]informers-synced failed: " in body
            assert body.endswith("readyz check failed\n")

            with NatsServer(port=port) as nats:
                run.wait_synced()
                wait_status(run, "/readyz", 200)
                status, body = run.http("/readyz?verbose")
                assert status == 200
                assert body == "[+]broker ok\n[+]informers-synced ok\nreadyz check passed\n"

                nats.stop()
                wait_status(run, "/readyz", 503)
                status, body = run.http("/readyz?verbose")
                assert "[-]broker failed: " in body and "[+]informers-synced ok" in body
                assert run.http("/healthz") == (200, "ok")
                # what the user is told
                run.wait_for_line("lost the connection to the broker")

                nats.start()
                wait_status(run, "/readyz", 200)
                run.wait_for_line("reconnected to the broker")
                assert run.metric("meshsync_broker_reconnects_total") >= 1
            assert run.terminate() == 0


def test_metrics_agree_with_subscriber(tmp_path):
    with Kubesim(**SMALL) as sim, NatsServer() as nats, nats.client() as nc:
        nc.subscribe(CORE)
        with Daemon(str(tmp_path), sim.kubeconfig, nats.url) as run:
            run.wait_synced()
            view = cluster_view(sim)
            seen = Seen(nc)
            seen.until(lambda: set(seen.last) >= set(view), "the initial sync")
            created = sim.create({"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": "metrics-test", "namespace": "default"},
                                  "data": {"a": "b"}})
            assert created is not None
            seen.until(lambda: any(o["metadata"]["name"] == "metrics-test"
                                   for _, _, o in seen.events), "the new ConfigMap")
            wait_for_listener(nats)
            nc.subscribe("meshsync-meta")
            request(nc, "meshsync-meta")
            while True:
                msg = nc.next_msg(30)
                if msg.subject == "meshsync-meta":
                    assert envelope(msg)["Object"]
                    break
                seen.add(msg)
            # an end marker rather than a quiet moment: the daemon publishes in order, so
            # once the marker is here every event published before it is too
            marker = sim.create({"apiVersion": "v1", "kind": "ConfigMap",
                                 "metadata": {"name": "end-marker", "namespace": "default"},
                                 "data": {"marker": "yes"}})
            seen.until(lambda: marker["metadata"]["uid"] in seen.last, "the end marker")

            status, text = run.http("/metrics")
            assert status == 200
            events = metric_samples(text, "meshsync_events_total")
            by_type = {}
            for labels, value in events.items():
                kind_type = re.search(r'type="([A-Z]+)"', labels).group(1)
                by_type[kind_type] = by_type.get(kind_type, 0) + value
            seen_types = {}
            for event, _, _ in seen.events:
                seen_types[event] = seen_types.get(event, 0) + 1
            assert by_type == seen_types, (by_type, seen_types)
            published = metric_samples(text, "meshsync_broker_messages_published_total")
            assert published == {"": float(len(seen.events))}
            assert metric_samples(text, "meshsync_broker_publish_errors_total") == {"": 0.0}
            assert metric_samples(text, "meshsync_broker_reconnects_total") == {"": 0.0}
            requests = metric_samples(text, "meshsync_requests_total")
            assert requests.get('{entity="meshsync-meta"}', 0) >= 1, requests
            assert metric_samples(text, "meshsync_ready") == {"": 1.0}


def test_file_mode_readiness_is_sync_only(tmp_path):
    with Kubesim(pods=3, namespaces=1) as sim:
        with Daemon(str(tmp_path), sim.kubeconfig, None, "-outputFile",
                    str(tmp_path / "s.yaml"), output="file") as run:
            run.wait_synced()
            wait_status(run, "/readyz", 200)
            assert run.http("/readyz?verbose") == (
                200, "[+]informers-synced ok\nreadyz check passed\n")
            assert run.terminate() == 0


def test_health_port_in_use_exit_1(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        with Kubesim(pods=1, namespaces=1) as sim, NatsServer() as nats:
            argv_port = ["--health-port", str(port)]
            with Daemon(str(tmp_path), sim.kubeconfig, nats.url, *argv_port) as run:
                assert run.wait_exit() == 1
                log = run.log()
                assert re.search(r"meshsync: health server: cannot listen on .*%d" % port,
                                 log), log
