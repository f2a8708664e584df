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

Its own process, so that relaying megabytes a second does not share a GIL with the test's
consumer. tests/lib/broker_faults.py drives it (GatedProxy).
"""

import socket
import sys
import threading

CHUNK = 1 << 20


class Relay:
    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.open = True
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.pairs = []
        self.held = []  # black-holed: kept open, never relayed again
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
            with self.lock:
                self.pairs.append((conn, up, muted, holed))
            for a, b, m in ((conn, up, holed), (up, conn, muted)):
                threading.Thread(target=self._pump, args=(a, b, m, holed),
                                 daemon=True).start()

    @staticmethod
    def _pump(src, dst, muted, holed):
        try:
            while True:
                data = src.recv(CHUNK)
                if not data:
                    # a black hole passes no FIN either: the other side keeps waiting
                    if holed.is_set():
                        return
                    break
                if not muted.is_set():
                    dst.sendall(data)
        except OSError:
            if holed.is_set():
                return
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
        else:
            print(f"unknown command {command!r}", flush=True)
            continue
        print("ok", flush=True)
    relay.cut()


if __name__ == "__main__":
    main()
