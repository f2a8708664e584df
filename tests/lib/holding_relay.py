# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""A TCP relay to a local port that can start holding the connections it is offered: once
hold() is called (and after the number of connections it still lets through), a new
connection is accepted and then never read, answered or closed, while the ones already
relayed go on. In front of a proxy, it is a proxy that black-holes new
connections but keeps its tunnels, which a client with a pool of open connections meets when
the proxy's upstream side hangs."""

import socket
import threading


class HoldingRelay:
    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.holding = threading.Event()
        self.passes = 0
        self.held = []
        self.sockets = []
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._accept, daemon=True).start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def hold(self, after=0):
        """New connections are held, once @after more have been relayed."""
        with self.lock:
            self.passes = after
        self.holding.set()

    def held_count(self):
        with self.lock:
            return len(self.held)

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.sockets.append(conn)
                if self.holding.is_set() and self.passes == 0:
                    self.held.append(conn)
                    continue
                if self.holding.is_set():
                    self.passes -= 1
            try:
                up = socket.create_connection(("127.0.0.1", self.upstream_port))
            except OSError:
                conn.close()
                continue
            with self.lock:
                self.sockets.append(up)
            for a, b in ((conn, up), (up, conn)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def stop(self):
        self.sock.close()
        with self.lock:
            for s in self.sockets:
                s.close()
