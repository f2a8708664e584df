# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""Broker faults against the real daemon: a consumer's picture of the cluster, built from what
arrives on meshery.meshsync.core, compared with what kubesim holds.

The consumer follows the rule doc/durability.md gives: for every uid keep the newest
resourceVersion seen; a DELETED removes the object for good (uids are never reused). It reads
with its own thread on a plain socket, answers the server's PINGs, and reconnects (and
subscribes again) on its own when the server goes away, so that a test can wait for it before
letting meshsync back in (GatedProxy).

Used by tests/integration/test_broker_faults.py and bench/soak.
"""

import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

CORE = "meshery.meshsync.core"
EVENT = re.compile(rb'"EventType":"([A-Z]+)"')
# The first unescaped uid of the envelope is the object's own (metadata comes before the
# JSON-in-a-string fields such as ownerReferences), followed by its resourceVersion.
UID_RV = re.compile(rb'"uid":"([^"\\]+)","resourceVersion":"(\d+)"')

# A subscriber in Python is slower than meshsync; let the server hold what it has not taken
# yet instead of cutting it off as a slow consumer (64 MB and 10 s by default).
SERVER_CONF = 'max_pending: 1073741824\nwrite_deadline: "120s"\n'


class GatedProxy:
    """A TCP relay between meshsync and nats-server (tests/lib/gated_proxy.py, in a process
    of its own). While closed it refuses meshsync's connections, so a test decides when
    meshsync gets back to a restarted server (after its own subscriber is in place)."""

    def __init__(self, upstream_port):
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gated_proxy.py")
        self.proc = subprocess.Popen([sys.executable, script, str(upstream_port)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline())
        self._open = True

    def _command(self, command):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().strip()
        assert answer == "ok", f"the relay answered {answer!r} to {command}"

    @property
    def open(self):
        return self._open

    @open.setter
    def open(self, value):
        self._command("open" if value else "cut")
        self._open = value

    def cut(self):
        """Refuse new connections and drop the current ones."""
        self.open = False

    def mute(self):
        """Pass nothing the server sends on the current connections any more."""
        self._command("mute")

    def hole(self):
        """Black-hole the current connections both ways without closing them (what either
        side sends is dropped, no FIN, no RST); new connections are relayed."""
        self._command("hole")

    def hole_after(self, nbytes):
        """Black-hole the first connection on which the server sends more than @nbytes from
        now on, as hole() does: an answer that stops arriving mid-body."""
        self._command(f"hole-after {int(nbytes)}")

    def delay(self, ms):
        """Hold what passes either way @ms milliseconds, on current and new connections."""
        self._command(f"delay {int(ms)}")

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()
        self.proc.stdout.close()

    @property
    def url(self):
        return f"nats://127.0.0.1:{self.port}"


def server_conf_file():
    fd, path = tempfile.mkstemp(prefix="meshsync-nats-", suffix=".conf")
    with os.fdopen(fd, "w") as f:
        f.write(SERVER_CONF)
    return path


class Picture(threading.Thread):
    """Subscribes to @subject on 127.0.0.1:@port and keeps, per uid, every (resourceVersion,
    deleted) that arrived, plus counters. Thread-safe readers below."""

    def __init__(self, port, subject=CORE):
        super().__init__(daemon=True)
        self.port = port
        self.subject = subject
        self.lock = threading.Lock()
        self.history = {}  # uid -> [(rv, deleted), ...] in arrival order
        self.newest = {}  # uid -> highest rv seen
        self.messages = 0
        self.bytes = 0
        self.duplicates = 0  # the same (uid, rv, type) once more: a re-send
        self.older = 0  # arrived after a newer version of the same uid had
        self.connections = 0
        self.subscribed = threading.Event()
        self.stopping = False
        self.sock = None
        self.seen = set()

    # -- reading ------------------------------------------------------------------------------

    def _connect(self):
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        sock.settimeout(None)
        sock.sendall(b'CONNECT {"verbose":false,"pedantic":false,"name":"picture"}\r\n'
                     b"SUB %s 1\r\nPING\r\n" % self.subject.encode())
        return sock

    def run(self):
        while not self.stopping:
            try:
                self.sock = self._connect()
            except OSError:
                time.sleep(0.02)
                continue
            self.connections += 1
            try:
                self._read(self.sock)
            except OSError:
                pass
            self.subscribed.clear()
            try:
                self.sock.close()
            except OSError:
                pass

    def _read(self, sock):
        buf = b""
        need = None
        while not self.stopping:
            chunk = sock.recv(1 << 20)
            if not chunk:
                return
            buf += chunk
            pos = 0
            while True:
                if need is not None:
                    if len(buf) - pos < need + 2:
                        break
                    self._add(buf[pos:pos + need])
                    pos += need + 2
                    need = None
                    continue
                end = buf.find(b"\r\n", pos)
                if end < 0:
                    break
                line = buf[pos:end]
                pos = end + 2
                if line.startswith(b"MSG "):
                    need = int(line.rsplit(b" ", 1)[1])
                elif line.startswith(b"PING"):
                    sock.sendall(b"PONG\r\n")
                elif line.startswith(b"PONG"):
                    # the SUB is registered: what is published from now on reaches us
                    self.subscribed.set()
                elif line.startswith(b"-ERR"):
                    raise OSError(line.decode(errors="replace"))
            buf = buf[pos:]

    def _add(self, payload):
        event = EVENT.search(payload)
        ident = UID_RV.search(payload)
        if event is None or ident is None:
            raise AssertionError(f"not a resource event: {payload[:200]!r}")
        uid = ident.group(1).decode()
        rv = int(ident.group(2))
        deleted = event.group(1) == b"DELETED"
        key = (uid, rv, deleted)
        with self.lock:
            self.messages += 1
            self.bytes += len(payload)
            if key in self.seen:
                self.duplicates += 1
            else:
                self.seen.add(key)
            if rv < self.newest.get(uid, 0):
                self.older += 1
            self.newest[uid] = max(rv, self.newest.get(uid, 0))
            self.history.setdefault(uid, []).append((rv, deleted))

    def stop(self):
        self.stopping = True
        if self.sock is not None:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    # -- the picture ----------------------------------------------------------------------------

    def latest(self):
        """{uid: (resourceVersion, deleted)}: the newest version that arrived per uid, or
        (its version, True) once a DELETED arrived (a uid never comes back)."""
        with self.lock:
            histories = list(self.history.items())
        latest = {}
        for uid, events in histories:
            events = events[:]
            gone = [erv for erv, deleted in events if deleted]
            if gone:
                latest[uid] = (max(gone), True)
            else:
                latest[uid] = (max(erv for erv, _ in events), False)
        return latest

    def counts(self):
        with self.lock:
            return {"messages": self.messages, "bytes": self.bytes,
                    "duplicates": self.duplicates, "older": self.older,
                    "uids": len(self.history)}

    def unique(self):
        """How many distinct (uid, resourceVersion, deleted) arrived: without re-sends, one
        per event meshsync published, as long as this consumer was subscribed."""
        with self.lock:
            return len(self.seen)

    def last_not_newest(self):
        """uids whose last message is not the newest version that arrived for them."""
        with self.lock:
            return [uid for uid, events in self.history.items()
                    if events[-1][0] != self.newest[uid]]


def truth(sim, path="/api/v1/pods"):
    """(resourceVersion, {uid: resourceVersion}) of one list: a single page, so that churn
    cannot change the cluster between pages."""
    status, body = sim.request("GET", path)
    assert status == 200, f"GET {path}: {status}"
    return (int(body["metadata"]["resourceVersion"]),
            {item["metadata"]["uid"]: int(item["metadata"]["resourceVersion"])
             for item in body["items"]})


def compare(picture, rv, state, now=None):
    """What keeps the consumer's picture from having caught up with kubesim's @state at
    cluster version @rv. A relist skips versions and reports an object that went while
    nobody watched as DELETED with its last known state, stamped with an older version than
    the deletion's, so the picture is judged by what it ends on, not by replaying it as of
    @rv: every object of @state at that version or a later one, or DELETED (or never seen)
    when it is gone from @now (a later list; None: it counts as missing); nothing left that
    @state lacks unless it came later than @rv."""
    last = picture.latest()
    missing, extra, stale = [], [], []
    for uid, want in state.items():
        got = last.get(uid)
        if got is None or got[1]:
            # absent or DELETED is right only for what is gone by now: between two lists
            # an object can come and go unseen
            if now is None or uid in now:
                missing.append(uid)
        elif not got[1] and got[0] < want:
            stale.append(uid)
    for uid, (got_rv, deleted) in last.items():
        # absent at @rv yet held: fine only if it was created after @rv
        if uid not in state and not deleted and got_rv <= rv:
            extra.append(uid)
    return {"missing": sorted(missing), "extra": sorted(extra), "stale": sorted(stale)}


def wait_for_picture(picture, sim, what, timeout, proc=None, log=None, settled=None):
    """Takes kubesim's state now, then waits until the picture has caught up with it (see
    compare()); returns (rv, state, differences left, seconds waited). Churn goes on
    meanwhile: the state taken is a fixed point the stream has to get past. @settled, given
    the differences and the state, says when what is left is all that can be expected (by
    default: nothing); otherwise a difference that can never go away would be waited for
    until @timeout."""
    if settled is None:
        def settled(diff, state):
            return not any(diff.values())
    start = time.monotonic()
    deadline = start + timeout

    def list_now():
        while True:
            try:
                return truth(sim)
            except OSError:
                # a simulator busy with a relist of thousands of pods may miss a deadline
                if time.monotonic() > deadline:
                    raise

    rv, state = list_now()
    while True:
        diff = compare(picture, rv, state)
        if any(diff["missing"]):
            # deletions the picture holds are checked against the cluster as it is now
            diff = compare(picture, rv, state, list_now()[1])
        if settled(diff, state):
            return rv, state, diff, time.monotonic() - start
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"meshsync exited ({proc.returncode}) before {what}:\n"
                                 f"{log() if log else ''}")
        if time.monotonic() > deadline:
            return rv, state, diff, time.monotonic() - start
        # comparing costs the reader CPU: look twice a second
        time.sleep(0.5)


PUBLISHED = re.compile(r"broker flushed: (\d+) events published")


def published_at_exit(log):
    """What the daemon says it published, in the line it logs when it stops."""
    m = PUBLISHED.search(log)
    assert m, f"no published count in the log:\n{log[-2000:]}"
    return int(m.group(1))


def wait_for_all(picture, published, timeout):
    """Waits until the consumer has @published distinct events (what a stopped daemon
    published over its whole life, the consumer subscribed before it started); returns how
    many it has, which is fewer only if something was lost."""
    deadline = time.monotonic() + timeout
    while picture.unique() < published and time.monotonic() < deadline:
        time.sleep(0.1)
    return picture.unique()


def rss_kib(pid):
    """The resident set of @pid in KiB, from /proc."""
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class RssSampler(threading.Thread):
    """Samples a process's RSS every @interval seconds under the current phase's label."""

    def __init__(self, pid, interval=0.2):
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.phase = "before"
        self.samples = []  # (monotonic, phase, KiB)
        self.stopping = False

    def run(self):
        while not self.stopping:
            try:
                self.samples.append((time.monotonic(), self.phase, rss_kib(self.pid)))
            except OSError:
                return
            time.sleep(self.interval)

    def peak(self, phase=None):
        values = [kib for _, p, kib in self.samples if phase is None or p == phase]
        return max(values) if values else 0

    def last(self, phase):
        values = [kib for _, p, kib in self.samples if p == phase]
        return values[-1] if values else 0


def metric(text, name):
    """The value of an unlabelled sample of @name in a /metrics document, or None."""
    m = re.search(r"^" + re.escape(name) + r" (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def metric_type(text, name):
    m = re.search(r"^# TYPE " + re.escape(name) + r" (\w+)$", text, re.M)
    return m.group(1) if m else None


def kubesim_rv(sim):
    return int(sim.stats()["resourceVersion"])
