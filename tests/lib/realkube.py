"""Runs meshsync-realkube (a real kube-apiserver, embedded etcd and the controllers meshsync
depends on, in one process; see doc/realkube.md) for a test, and drives it with kubectl.

Like kubesim.py, the server is started with --port 0 and prints its URL as the first line of
stdout once /readyz is ok and its kubeconfigs are written, so the harness never sleeps to
guess. The binary is built by `scripts/realkube build`; MESHSYNC_REALKUBE names another one.
"""

import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

REALKUBE = os.environ.get("MESHSYNC_REALKUBE") or os.environ.get(
    "MESHSYNC_REALKUBE_BIN",
    os.path.join(os.path.expanduser("~"), ".cache", "meshsync", "realkube", "meshsync-realkube"))

KUBECTL = os.environ.get("KUBECTL", "kubectl")


def available():
    """Whether the binary is there (building it takes minutes; the realkube suite fails
    without it, naming `scripts/realkube build`)."""
    return os.access(REALKUBE, os.X_OK)


class Realkube:
    """A running cluster; use as a context manager. @extra: more meshsync-realkube flags."""

    def __init__(self, *extra, token="realkube-admin-token",
                 restricted_token="realkube-restricted-token"):
        self.tmpdir = tempfile.mkdtemp(prefix="realkube-test-")
        self.data_dir = os.path.join(self.tmpdir, "data")
        self.kubeconfig = os.path.join(self.tmpdir, "kubeconfig")
        self.restricted_kubeconfig = os.path.join(self.tmpdir, "restricted.kubeconfig")
        self.token = token
        self.restricted_token = restricted_token
        self.extra = list(extra)
        self.port = 0
        self.proc = None
        self.stderr = open(os.path.join(self.tmpdir, "realkube.log"), "w+", encoding="utf-8")
        self._ssl = ssl.create_default_context()
        self._ssl.check_hostname = False
        self._ssl.verify_mode = ssl.CERT_NONE
        try:
            self._start()
        except BaseException:
            self.stderr.close()
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            raise

    def _start(self):
        self._spawn()
        self._read_url()

    def _spawn(self):
        argv = [REALKUBE, "--port", str(self.port), "--data-dir", self.data_dir,
                "--write-kubeconfig", self.kubeconfig,
                "--write-restricted-kubeconfig", self.restricted_kubeconfig,
                "--token", self.token, "--restricted-token", self.restricted_token] + self.extra
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.stderr,
                                     stdin=subprocess.DEVNULL, text=True)

    def _read_url(self):
        line = self.proc.stdout.readline().strip()
        if not line.startswith("http"):
            self.proc.kill()
            self.proc.wait()
            self.proc.stdout.close()
            raise RuntimeError(f"meshsync-realkube did not start: {line!r}\n{self.log()}")
        self.url = line
        # A restart comes back on the same port, so a client configured before it (a
        # kubeconfig, a running meshsync) reconnects to the same cluster.
        self.port = int(line.rsplit(":", 1)[1])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def log(self):
        self.stderr.flush()
        with open(self.stderr.name, encoding="utf-8") as f:
            return f.read()

    def _terminate(self, timeout=60):
        """SIGTERM and wait; returns the exit status (0 for a clean stop)."""
        starved = getattr(self, "_starved", None)
        if starved is not None and not starved.is_set():
            # a test that failed before wait_ready(): let the server run to its stop
            starved.set()
            self._starver.join()
            self.proc.send_signal(signal.SIGCONT)
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        return self.proc.returncode

    def restart(self):
        """Stops the server cleanly and starts it again on the same data dir and port: the
        same cluster (objects, uids, resourceVersions, CA, keys). Returns the stop's exit
        status.

        kube-apiserver waits for open requests before it stops, watches included, up to its
        request timeout (60 s): with a client watching, start the server with
        "--apiserver-arg=--shutdown-send-retry-after=true" for a stop of a few seconds, or
        this stop runs into the 60 s limit and is killed."""
        status = self._terminate()
        self._start()
        return status

    def replace_cluster(self):
        """Stops the server and starts another cluster on the same port: a fresh etcd (new
        uids, kube-system's too, and resourceVersions counting from the start again) behind
        the same CA, serving certificate and tokens, so a client configured before (a
        kubeconfig, a running meshsync) still connects to it and trusts it. Returns the
        stop's exit status."""
        status = self._terminate()
        shutil.rmtree(os.path.join(self.data_dir, "etcd"))
        self._start()
        return status

    def replace_cluster_starved(self, share=(10, 40)):
        """replace_cluster() on a starved CPU, as on a loaded node: until it is ready, the new
        server runs @share[0] ms of every @share[0] + @share[1] (SIGSTOP and SIGCONT), so that
        its port accepts connections long before its post-start hooks have installed every
        API group in discovery. Returns the stop's exit status once the port accepts
        connections; wait_ready() ends the starvation when /readyz is ok."""
        status = self._terminate()
        shutil.rmtree(os.path.join(self.data_dir, "etcd"))
        self._spawn()
        proc, self._starved = self.proc, threading.Event()

        def starve(done=self._starved):
            while not done.is_set() and proc.poll() is None:
                time.sleep(share[0] / 1000)
                proc.send_signal(signal.SIGSTOP)
                time.sleep(share[1] / 1000)
                proc.send_signal(signal.SIGCONT)

        self._starver = threading.Thread(target=starve, daemon=True)
        self._starver.start()
        deadline = time.monotonic() + 120
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return status
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    self._starved.set()
                    self._starver.join()
                    proc.kill()
                    raise RuntimeError(f"meshsync-realkube did not listen:\n{self.log()}")
                time.sleep(0.05)

    def wait_ready(self):
        """After replace_cluster_starved(): waits for the server's /readyz (its URL line),
        then lets it run freely."""
        try:
            self._read_url()
        finally:
            self._starved.set()
            self._starver.join()
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGCONT)

    def stop(self):
        """Stops the server and removes its data; returns the stop's exit status."""
        if self.proc is None or self.stderr.closed:
            return None
        status = self._terminate()
        self.stderr.close()
        shutil.rmtree(self.tmpdir, ignore_errors=True)
        return status

    def kubectl(self, *args, input=None, restricted=False, timeout=60):
        """Runs kubectl against the cluster (as admin, or as the restricted user) and
        returns its stdout; raises with its stderr when it fails."""
        config = self.restricted_kubeconfig if restricted else self.kubeconfig
        if isinstance(input, (dict, list)):
            input = json.dumps(input)
        done = subprocess.run([KUBECTL, "--kubeconfig", config, *args], input=input,
                              capture_output=True, text=True, timeout=timeout, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)} failed ({done.returncode}):\n"
                               f"{done.stderr}")
        return done.stdout

    def apply(self, manifest, restricted=False):
        """Server-side applies @manifest: a dict (one object, or a v1 List) or YAML/JSON
        text (several YAML documents allowed)."""
        if not isinstance(manifest, str):
            manifest = json.dumps(manifest)
        return self.kubectl("apply", "--server-side", "--force-conflicts",
                            "--field-manager", "realkube-test", "-f", "-",
                            input=manifest, restricted=restricted)

    def get_json(self, resource, namespace=None, restricted=False):
        """`kubectl get RESOURCE -o json`, parsed; all namespaces when @namespace is None
        (cluster-scoped resources ignore it)."""
        scope = ["--all-namespaces"] if namespace is None else ["--namespace", namespace]
        return json.loads(self.kubectl("get", resource, *scope, "-o", "json",
                                       restricted=restricted))

    def request(self, method, path, body=None, token=None, headers=None):
        """Any HTTP request (admin token unless @token); returns (status, parsed JSON or
        text). Certificate checks are off: this is for probing the server's behaviour."""
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        req.add_header("Authorization", "Bearer " + (token or self.token))
        for key, value in (headers or {}).items():
            req.add_header(key, value)
        try:
            with urllib.request.urlopen(req, context=self._ssl, timeout=30) as resp:
                status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as err:
            status, raw = err.code, err.read()
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw.decode(errors="replace")

    def watch(self, path, timeout=60, headers=None):
        """Opens a watch (@path with its query, @headers added) and yields each event as a
        dict as it arrives; the socket @timeout bounds the wait for any one event."""
        req = urllib.request.Request(self.url + path)
        req.add_header("Authorization", "Bearer " + self.token)
        for key, value in (headers or {}).items():
            req.add_header(key, value)
        with urllib.request.urlopen(req, context=self._ssl, timeout=timeout) as resp:
            for line in resp:
                if line.strip():
                    yield json.loads(line)
