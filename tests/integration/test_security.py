# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""Secrets stay secret: credentials never reach the log, even a verbose one, and
--redact-secrets hides the values of Secrets on the wire."""

import base64
import json
import os
import time
import urllib.error
import urllib.request

from kubesim import Kubesim
from meshsync_run import DAEMON, DaemonProcess
from nats_server import NatsServer, free_port

TIMEOUT = 90.0
CORE = "meshery.meshsync.core"
REQUEST = "meshery.meshsync.request"
STORE_REPLY = "meshery-server.meshsync.store"
API_TOKEN = "api-bearer-4f9c2e7d1a"
NATS_PASSWORD = "nats-pass-8b3e6f0c"
NATS_TOKEN = "nats-token-2d7a9c4e5f"


def start(tmp_path, sim, broker_url, *flags, env=None):
    port = free_port()
    argv = [DAEMON, "-output", "broker", "--verbose", "--kubeconfig", sim.kubeconfig,
            "--health-address", "127.0.0.1", "--health-port", str(port)] + list(flags)
    full_env = {k: v for k, v in os.environ.items()
                if k not in ("BROKER_URL", "NATS_TOKEN", "MESHSYNC_REDACT_SECRETS")}
    full_env["BROKER_URL"] = broker_url
    full_env.update(env or {})
    return DaemonProcess(str(tmp_path), argv, full_env), port


def wait_ready(run, port):
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        assert run.proc.poll() is None, f"meshsync exited:\n{run.log()}"
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError):
            pass
        time.sleep(0.05)
    raise AssertionError(f"never ready:\n{run.log()}")


def assert_no_secret(text, *secrets):
    for secret in secrets:
        for form in (secret, base64.b64encode(secret.encode()).decode()):
            for number, line in enumerate(text.splitlines(), 1):
                assert form not in line, f"log line {number} holds a credential: {line}"


def test_verbose_log_holds_no_credentials(tmp_path):
    with Kubesim(pods=3, namespaces=1, token=API_TOKEN) as sim:
        with NatsServer("--user", "ms", "--pass", NATS_PASSWORD) as nats:
            url = f"nats://ms:{NATS_PASSWORD}@127.0.0.1:{nats.port}"
            # strict readiness, so that the second wait below is for the reconnection
            run, port = start(tmp_path, sim, url, "--readiness=strict")
            with run:
                wait_ready(run, port)
                # requests and reconnects log too: exercise them before reading the log
                sim.admin("close-watches")
                nats.stop()
                nats.start()
                wait_ready(run, port)
                assert run.terminate() == 0
                log = run.log()
        assert "DEBUG" in log or "-DEBUG" in log or "debug" in log.lower(), log[:2000]
        assert_no_secret(log, API_TOKEN, NATS_PASSWORD)

        with NatsServer("--auth", NATS_TOKEN) as nats:
            run, port = start(tmp_path, sim, nats.url, env={"NATS_TOKEN": NATS_TOKEN})
            with run:
                wait_ready(run, port)
                assert run.terminate() == 0
                log = run.log()
        assert_no_secret(log, API_TOKEN, NATS_TOKEN)

        with NatsServer("--auth", NATS_TOKEN) as nats:
            run, port = start(tmp_path, sim, nats.url, "--broker-token", NATS_TOKEN)
            with run:
                wait_ready(run, port)
                assert run.terminate() == 0
                log = run.log()
        assert_no_secret(log, API_TOKEN, NATS_TOKEN)


SECRET = {
    "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
    "metadata": {"name": "db-password", "namespace": "ns-0"},
    "data": {"password": base64.b64encode(b"hunter2").decode()},
}


def published_secret(tmp_path, *flags, env=None, store=False):
    """The data of the Secret as published on the core subject or, with @store, as the
    informer-store reply has it."""
    with Kubesim(pods=1, namespaces=1) as sim, NatsServer() as nats, nats.client() as nc:
        status, body = sim.request("POST", "/api/v1/namespaces/ns-0/secrets", SECRET)
        assert status == 201, body
        nc.subscribe(CORE)
        run, port = start(tmp_path, sim, nats.url, "-outputResources", "secret", *flags,
                          env=env)
        with run:
            if store:
                wait_ready(run, port)
                nc.subscribe(STORE_REPLY)
                # asked until the request listener is there: the first may come before it
                deadline = time.monotonic() + TIMEOUT
                while time.monotonic() < deadline:
                    nc.publish(REQUEST, json.dumps(
                        {"Request": {"Entity": "informer-store",
                                     "Payload": {"Reply": STORE_REPLY}}}))
                    nc.flush()
                    try:
                        msg = nc.next_msg(timeout=1.0)
                    except TimeoutError:
                        continue
                    if msg.subject != STORE_REPLY:
                        continue
                    for obj in json.loads(msg.data)["Object"]:
                        if obj["metadata"].get("name") == "db-password":
                            assert run.terminate() == 0
                            return json.loads(obj["data"])
            deadline = time.monotonic() + TIMEOUT
            while time.monotonic() < deadline:
                msg = nc.next_msg(timeout=TIMEOUT)
                obj = json.loads(msg.data)["Object"]
                if obj["metadata"].get("name") == "db-password":
                    assert run.terminate() == 0
                    return json.loads(obj["data"])
    raise AssertionError("the secret was never published")


def test_redact_secrets_flag(tmp_path):
    assert published_secret(tmp_path) == SECRET["data"]
    assert published_secret(tmp_path, "--redact-secrets") == {"password": "[REDACTED]"}
    assert published_secret(tmp_path, env={"MESHSYNC_REDACT_SECRETS": "true"}) == {
        "password": "[REDACTED]"}
    # the informer-store reply converts the stored objects again, with the same setting
    assert published_secret(tmp_path, "--redact-secrets", store=True) == {
        "password": "[REDACTED]"}
    assert published_secret(tmp_path, store=True) == SECRET["data"]
