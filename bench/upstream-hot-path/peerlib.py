"""Helpers for running the Go peer (upstream's hot path rebuilt on encoding/json).

Used by bench/upstream-hot-path/run and bench/steady-state. Standard library only.
  find_go()                  the go tool, or None
  build(tmp)                 go build the peer into tmp (offline: no module proxy)
  Recorder(url, kubeconfig)  records pod watch lines from a running meshsync-kubesim
  run_peer(binary, events)   replays a recorded file through the peer, returns its JSON
"""

import base64
import http.client
import json
import os
import re
import shutil
import ssl
import subprocess
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
EVENT_TYPE = re.compile(rb'^\s*\{\s*"type"\s*:\s*"([A-Z]+)"')


def find_go():
    return shutil.which("go")


def go_env(tmp):
    """An environment in which go builds offline, with its caches under tmp."""
    env = dict(os.environ)
    env.update(GOFLAGS="-mod=mod", GOPROXY="off", GOSUMDB="off", GO111MODULE="on",
               GOCACHE=os.path.join(tmp, "gocache"), GOPATH=os.path.join(tmp, "gopath"),
               CGO_ENABLED="0")
    return env


def build(tmp):
    """Builds the peer into tmp and returns the binary's path (raises on failure)."""
    binary = os.path.join(tmp, "upstream-hot-path")
    subprocess.run([find_go() or "go", "build", "-trimpath", "-o", binary, "."], cwd=HERE,
                   env=go_env(tmp), check=True)
    return binary


def kubeconfig_ca(kubeconfig):
    """The CA PEM a kubesim kubeconfig carries, or None (kubesim without --tls)."""
    with open(kubeconfig) as f:
        m = re.search(r"certificate-authority-data:\s*(\S+)", f.read())
    return base64.b64decode(m.group(1)).decode() if m else None


def kubeconfig_token(kubeconfig):
    with open(kubeconfig) as f:
        m = re.search(r'token:\s*"?([^"\s]+)"?', f.read())
    return m.group(1) if m else None


class Recorder:
    """Records watch lines of /api/v1/pods from a running kubesim, verifying its CA."""

    def __init__(self, url, kubeconfig):
        self.url = urllib.parse.urlsplit(url)
        self.token = kubeconfig_token(kubeconfig)
        ca = kubeconfig_ca(kubeconfig)
        self.context = None
        if self.url.scheme == "https":
            self.context = ssl.create_default_context(cadata=ca)

    def _connect(self, timeout):
        if self.context is not None:
            return http.client.HTTPSConnection(self.url.hostname, self.url.port,
                                               context=self.context, timeout=timeout)
        return http.client.HTTPConnection(self.url.hostname, self.url.port, timeout=timeout)

    def _headers(self):
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def resource_version(self):
        conn = self._connect(60)
        try:
            conn.request("GET", "/kubesim/stats", headers=self._headers())
            resp = conn.getresponse()
            if resp.status != 200:
                raise RuntimeError(f"kubesim stats: HTTP {resp.status}")
            return json.load(resp)["resourceVersion"]
        finally:
            conn.close()

    def record(self, path, count, timeout=300):
        """Writes the next `count` ADDED/MODIFIED/DELETED pod watch lines (from the current
        resourceVersion on) to path; other lines (BOOKMARK) are not kept. Returns
        (events, bytes)."""
        rv = self.resource_version()
        conn = self._connect(timeout)
        kept = size = 0
        try:
            conn.request("GET", f"/api/v1/pods?watch=true&resourceVersion={rv}",
                         headers=self._headers())
            resp = conn.getresponse()
            if resp.status != 200:
                raise RuntimeError(f"watch: HTTP {resp.status}")
            with open(path, "wb") as out:
                while kept < count:
                    line = resp.readline()
                    if not line:
                        raise RuntimeError(f"watch ended after {kept} of {count} events")
                    m = EVENT_TYPE.match(line)
                    kind = m.group(1) if m else json.loads(line).get("type", "").encode()
                    if kind == b"ERROR":
                        raise RuntimeError(f"watch error: {line[:200]!r}")
                    if kind not in (b"ADDED", b"MODIFIED", b"DELETED"):
                        continue
                    if not line.endswith(b"\n"):
                        line += b"\n"
                    out.write(line)
                    kept += 1
                    size += len(line)
        finally:
            conn.close()
        return kept, size


def run_peer(binary, events, rounds=5, extra=()):
    """Replays the events file through the peer; returns its result (a dict)."""
    out = subprocess.run([binary, "-events", events, "-rounds", str(rounds), *extra],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])
