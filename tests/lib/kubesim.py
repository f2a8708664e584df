"""Runs meshsync-kubesim for a test and talks to its admin endpoint.

The simulator is started with --port 0; it prints its URL as the first line of stdout once it
listens and its kubeconfig is written, so the harness never guesses with sleeps.
"""

import json
import os
import shutil
import ssl
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

KUBESIM = os.environ.get("MESHSYNC_KUBESIM", "meshsync-kubesim")

DATA = os.environ.get("MESHSYNC_TEST_DATA", os.path.join(os.path.dirname(__file__), "..", "data"))


def fixture_env():
    """The environment for the simulator: the test's own, except that in a sanitizer build
    (ASAN_OPTIONS set) the simulator records allocation stacks with the fast unwinder. It is
    the fixture, not the code under test: its memory errors still abort it, but the full
    unwinder that leak suppressions need would make it several times slower."""
    env = dict(os.environ)
    if "ASAN_OPTIONS" in env:
        env["ASAN_OPTIONS"] += ":fast_unwind_on_malloc=1:detect_leaks=0"
    return env


class Kubesim:
    """A running simulator; use as a context manager."""

    def __init__(self, *args, tls=True, token="sim-token", pods=None, namespaces=None,
                 data=None, extra=()):
        self.tmpdir = tempfile.mkdtemp(prefix="kubesim-test-")
        self.kubeconfig = os.path.join(self.tmpdir, "kubeconfig")
        self.token = token
        self.tls = tls
        argv = [KUBESIM, "--port", "0", "--address", "127.0.0.1",
                "--write-kubeconfig", self.kubeconfig]
        if tls:
            argv.append("--tls")
        if token:
            argv += ["--token", token]
        if pods is not None:
            argv += ["--pods", str(pods)]
        if namespaces is not None:
            argv += ["--namespaces", str(namespaces)]
        if data is not None:
            argv += ["--data", data]
        argv += list(extra) + list(args)
        self.stderr = open(os.path.join(self.tmpdir, "kubesim.log"), "w+", encoding="utf-8")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.stderr,
                                     text=True, env=fixture_env())
        line = self.proc.stdout.readline().strip()
        if not line.startswith("http"):
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError(f"kubesim did not start: {line!r}\n{self.log()}")
        self.url = line
        self._ssl = ssl.create_default_context()
        self._ssl.check_hostname = False
        self._ssl.verify_mode = ssl.CERT_NONE

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def log(self):
        self.stderr.flush()
        with open(self.stderr.name, encoding="utf-8") as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        self.stderr.close()
        shutil.rmtree(self.tmpdir, ignore_errors=True)

    def request(self, method, path, body=None, content_type="application/json", auth=True):
        """Any HTTP request to the simulator; returns (status, parsed JSON or text)."""
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", content_type)
        if auth and self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(req, context=self._ssl if self.tls else None,
                                        timeout=30) as resp:
                status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as err:
            status, raw = err.code, err.read()
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw.decode(errors="replace")

    def admin(self, action, method="POST", body=None, **params):
        """Calls /kubesim/<action>?params on the admin endpoint; raises unless 2xx."""
        query = ("?" + urllib.parse.urlencode(params)) if params else ""
        status, answer = self.request(method, f"/kubesim/{action}{query}", body=body,
                                      auth=False)
        if not 200 <= status < 300:
            raise RuntimeError(f"admin {action} failed: {status} {answer}")
        return answer

    def create(self, obj):
        return self.admin("objects", body=obj)

    def replace(self, obj):
        return self.admin("objects", method="PUT", body=obj)

    def delete(self, api_version, kind, name, namespace=""):
        return self.admin("objects", method="DELETE", apiVersion=api_version, kind=kind,
                          name=name, namespace=namespace)

    def stats(self):
        return self.admin("stats", method="GET")

    def wait_for(self, predicate, what, timeout=30.0):
        """Polls @predicate until it holds; fails the test after @timeout seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(0.02)
        raise AssertionError(f"timed out waiting for {what}\n{self.log()}")

    def wait_for_watches(self, count, timeout=30.0):
        self.wait_for(lambda: self.stats()["watches"] >= count, f"{count} open watches",
                      timeout)
