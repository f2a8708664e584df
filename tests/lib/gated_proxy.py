# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""A TCP relay with a gate, run as a process of its own (python3 gated_proxy.py UPSTREAM_PORT):
it prints the port it listens on, then takes one command a line on stdin and answers "ok":

  cut   refuse new connections (accept, then close) and drop the ones relayed
  open  relay new connections to 127.0.0.1:UPSTREAM_PORT again
  mute  stop passing what the server sends on the current connections (new ones are
        relayed both ways): the client's data still arrives, no answer comes back
  hole  black-hole the current connections both ways, as a NAT gateway or a firewall that
        forgot them does: what either side sends is read and dropped, nothing is closed, no
        FIN or RST reaches either side; new connections are relayed both ways
  hole-after BYTES  black-hole, as "hole" does, the first connection (from now on) on which
        the server has sent more than BYTES: a list that stops arriving mid-body; once
  delay MS  hold what is read in either direction MS milliseconds before passing it on, on
        the current connections and new ones (0: pass at once): latency, for a kernel
        without the netem qdisc. Order is kept and reading goes on meanwhile (up to
        IN_FLIGHT bytes held), so a stream keeps its throughput and only arrives later, as
        over a long link

Its own process, so that relaying megabytes a second does not share a GIL with the test's
consumer. tests/lib/broker_faults.py drives it (GatedProxy).
"""

import collections
import socket
import sys
import threading
import time

CHUNK = 1 << 20
# What a direction holds before it stops reading: TCP's back-pressure still reaches the
# sender when the receiver is slow or stopped, and under a delay it is the bandwidth-delay
# product (20 MB/s at 200 ms), more than any test here sends.
IN_FLIGHT = 4 << 20


class Line:
    """One direction's data on its way: (due time, bytes, or None for the end), oldest
    first, up to IN_FLIGHT bytes; an entry counts until it has been sent."""

    def __init__(self):
        self.entries = collections.deque()
        self.held = 0
        self.closed = False
        self.cond = threading.Condition()

    def put(self, due, data):
        """Waits for room; False once the sender has given up."""
        with self.cond:
            while self.held >= IN_FLIGHT and not self.closed:
                self.cond.wait()
            if self.closed:
                return False
            self.entries.append((due, data))
            self.held += len(data or b"")
            self.cond.notify_all()
            return True

    def first(self):
        with self.cond:
            while not self.entries:
                self.cond.wait()
            return self.entries[0]

    def done(self):
        with self.cond:
            _, data = self.entries.popleft()
            self.held -= len(data or b"")
            self.cond.notify_all()

    def close(self):
        with self.cond:
            self.closed = True
            self.cond.notify_all()


class Relay:
    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.open = True
        self.delay = 0.0  # seconds each chunk is held before it is passed on
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.pairs = []
        self.held = []  # black-holed: kept open, never relayed again
        self.hole_after = None  # bytes from the server that black-hole a connection, once
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if not self.open:
                conn.close()
                continue
            try:
                up = socket.create_connection(("127.0.0.1", self.upstream_port))
            except OSError:
                conn.close()
                continue
            muted = threading.Event()
            holed = threading.Event()
            pair = (conn, up, muted, holed)
            with self.lock:
                self.pairs.append(pair)
            for a, b, m, down in ((conn, up, holed, None), (up, conn, muted, pair)):
                threading.Thread(target=self._pump, args=(a, b, m, holed, down),
                                 daemon=True).start()

    def _count(self, pair, passed):
        """Black-holes @pair once the server has sent it more than hole_after bytes."""
        with self.lock:
            if self.hole_after is None or passed <= self.hole_after or pair not in self.pairs:
                return
            self.hole_after = None
            pair[2].set()
            pair[3].set()
            self.pairs.remove(pair)
            self.held.append(pair)

    def _pump(self, src, dst, muted, holed, pair):
        """Reads @src; a sender of its own writes to @dst what is due, so that a delay holds
        data back without stopping the reading. @pair is set for the server's direction."""
        line = Line()
        passed = 0
        threading.Thread(target=self._send, args=(src, dst, line, holed),
                         daemon=True).start()
        try:
            while True:
                data = src.recv(CHUNK)
                if not data:
                    break
                if pair is not None:
                    passed += len(data)
                    self._count(pair, passed)
                if not muted.is_set() and not line.put(time.monotonic() + self.delay, data):
                    return
        except OSError:
            pass
        # a black hole passes no FIN either: the other side keeps waiting
        if not holed.is_set():
            line.put(time.monotonic() + self.delay, None)

    @staticmethod
    def _send(src, dst, line, holed):
        try:
            while True:
                due, data = line.first()
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                if data is None:
                    break
                if not holed.is_set():
                    dst.sendall(data)
                line.done()
        except OSError:
            if holed.is_set():
                return
        line.close()
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        self.open = False
        with self.lock:
            for a, b, _, _ in self.pairs + self.held:
                for s in (a, b):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
            self.pairs = []
            self.held = []

    def mute(self):
        with self.lock:
            for _, _, muted, _ in self.pairs:
                muted.set()

    def hole(self):
        with self.lock:
            for _, _, muted, holed in self.pairs:
                holed.set()
                muted.set()
            # new connections are relayed normally; the held ones stay open, silent
            self.held += self.pairs
            self.pairs = []


def main():
    relay = Relay(int(sys.argv[1]))
    print(relay.port, flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "cut":
            relay.cut()
        elif command == "open":
            relay.open = True
        elif command == "mute":
            relay.mute()
        elif command == "hole":
            relay.hole()
        elif command.startswith("hole-after ") and command[11:].isdigit():
            with relay.lock:
                relay.hole_after = int(command[11:])
        elif command.startswith("delay ") and command[6:].isdigit():
            relay.delay = int(command[6:]) / 1000.0
        else:
            print(f"unknown command {command!r}", flush=True)
            continue
        print("ok", flush=True)
    relay.cut()


if __name__ == "__main__":
    main()
