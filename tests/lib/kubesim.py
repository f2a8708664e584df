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

from sanitizer import fast_unwinder_env

KUBESIM = os.environ.get("MESHSYNC_KUBESIM", "meshsync-kubesim")

DATA = os.environ.get("MESHSYNC_TEST_DATA", os.path.join(os.path.dirname(__file__), "..", "data"))


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
                                     text=True, env=fast_unwinder_env())
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

    def create(self, obj, silent=False):
        """Creates @obj; @silent: without any watch event (only a list shows it)."""
        return self.admin("objects", body=obj, **({"silent": "true"} if silent else {}))

    def replace(self, obj, silent=False):
        return self.admin("objects", method="PUT", body=obj,
                          **({"silent": "true"} if silent else {}))

    def delete(self, api_version, kind, name, namespace="", silent=False):
        return self.admin("objects", method="DELETE", apiVersion=api_version, kind=kind,
                          name=name, namespace=namespace,
                          **({"silent": "true"} if silent else {}))

    def install(self, name):
        """Install an infrastructure (istio, linkerd, ...) as `--install` does."""
        return self.admin("install", name=name)

    def uninstall(self, name):
        return self.admin("install", method="DELETE", name=name)

    def stats(self):
        return self.admin("stats", method="GET")

    def touch(self, api_version, kind, rounds=1, namespace=""):
        """Writes every object of @kind (in @namespace) @rounds times, a MODIFIED event
        each time; {"events", "resourceVersion"}."""
        return self.admin("touch", apiVersion=api_version, kind=kind, rounds=rounds,
                          namespace=namespace)

    def arm_fault(self, on, fault="status", **params):
        """Arms a fault for the next list and/or watch requests (@on: "list", "watch" or
        "both"); see doc/kubesim.md for @fault and its parameters (dashes as underscores).
        Returns the fault's id."""
        params = {key.replace("_", "-"): str(value) for key, value in params.items()}
        return self.admin("faults", on=on, fault=fault, **params)["id"]

    def fault(self, fault_id):
        """The state of an armed fault: count, consumed, remaining."""
        for entry in self.admin("faults", method="GET")["faults"]:
            if entry["id"] == fault_id:
                return entry
        raise KeyError(fault_id)

    def clear_faults(self):
        return self.admin("faults", method="DELETE")

    def replace_cluster(self, **params):
        """Replaces the whole state, as an API server restarted on another etcd: seed, pods,
        namespaces, data, rv. Returns the new and previous resourceVersion."""
        return self.admin("replace", **{key: str(value) for key, value in params.items()})

    def snapshot(self):
        return self.admin("snapshot")

    def restore(self, bump=0):
        return self.admin("restore", bump=str(bump))

    def settings(self, **params):
        return self.admin("settings", **{key.replace("_", "-"): str(value)
                                         for key, value in params.items()})

    def append_log(self, namespace, pod, container, *lines):
        """Appends @lines to the output of @container (None: the pod's only container) of
        @pod's current instance; followers see them at once. Returns
        {"appended", "followers"}."""
        params = {"namespace": namespace, "pod": pod}
        if container:
            params["container"] = container
        body = "".join(line + "\n" for line in lines).encode()
        return self.admin("logs", body=body, **params)

    def log_followers(self, namespace, pod, container=None):
        """How many clients follow @container's output (logs with follow=true)."""
        params = {"namespace": namespace, "pod": pod}
        if container:
            params["container"] = container
        return self.admin("logs", method="GET", **params)["followers"]

    def wait_for_log_followers(self, namespace, pod, container=None, count=1, timeout=30.0):
        self.wait_for(lambda: self.log_followers(namespace, pod, container) >= count,
                      f"{count} followers of {namespace}/{pod} {container or ''}", timeout)

    def exec_sessions(self):
        """The number of open exec sessions."""
        return self.stats().get("execs", 0)

    def watch(self, path, timeout=60):
        """Opens a watch (@path with its query, e.g. "/api/v1/pods?watch=true&...") and
        yields each event as a dict {"type", "object"} as it arrives. The socket @timeout
        bounds the wait for any single line, so a stalled stream fails the test."""
        req = urllib.request.Request(self.url + path)
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        with urllib.request.urlopen(req, context=self._ssl if self.tls else None,
                                    timeout=timeout) as resp:
            for line in resp:
                if line.strip():
                    yield json.loads(line)

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
