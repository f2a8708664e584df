# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""A TCP relay that can cut a link the way a network partition does, for the routes between
nats-servers (tests/integration/test_jetstream_partition.py). Run as a process of its own
(python3 partition_relay.py UPSTREAM_PORT): it prints the port it listens on, then takes one
command a line on stdin (partition, heal) and answers "ok"; PartitionLink drives it.

partition() stops the link: nothing is read from or passed on over the connections it holds,
in either direction, and nothing is closed (no FIN, no RST), as on a cut cable where no packet
gets through and none is acknowledged; what a side sends fills its socket buffers and then
its writes stall. New connections are refused (accepted, then closed at once), so the servers
cannot route around the cut through this relay; they find out through their pings or, for a
side that keeps writing, through their write deadline. heal() lets the bytes flow again on
the held connections (what waited in the buffers arrives; a side that gave its connection up
meanwhile closes it and the other side sees that) and relays new ones.

tests/lib/gated_proxy.py's 'hole' is another fault, a NAT gateway that forgot its
connections: it reads and drops what they carry for good and lets new connections through. A
partition must refuse new connections, and must give the held ones back when it heals: the
majority side of a nats-server cluster kept its routes to the cut-off server through the cut,
pings every second notwithstanding, and only the bytes flowing again ended them (with the held
routes silent for good, the cut-off server's new routes were refused as duplicates).

Its own process, so that the test's readers, busy with the GIL, cannot delay route traffic
long enough for the servers to take a live route for a dead one.
"""

import os
import socket
import subprocess
import sys
import threading

CHUNK = 1 << 16
# The relay's own sockets buffer little, so that what a held connection's sender can still
# write is mostly its own send buffer, as across a real cut.
BUFFER = 64 << 10


def small_buffers(sock):
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, BUFFER)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, BUFFER)


class Relay:
    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.lock = threading.Lock()
        self.flowing = threading.Event()  # clear while the link is cut
        self.flowing.set()
        self.closing = threading.Event()
        self.pairs = []
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        small_buffers(self.sock)  # accepted connections inherit them
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if not self.flowing.is_set():
                conn.close()
                continue
            up = socket.socket()
            try:
                small_buffers(up)
                up.connect(("127.0.0.1", self.upstream_port))
            except OSError:
                up.close()
                conn.close()
                continue
            with self.lock:
                # a cut that came while this one was being connected refuses it too
                if not self.flowing.is_set():
                    conn.close()
                    up.close()
                    continue
                self.pairs.append((conn, up))
            for src, dst in ((conn, up), (up, conn)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src, dst):
        try:
            while self.flowing.wait() and not self.closing.is_set():
                data = src.recv(CHUNK)
                if not data:
                    break
                # read just as the cut came: it waits for the heal like the rest
                self.flowing.wait()
                if self.closing.is_set():
                    return
                dst.sendall(data)
        except OSError:
            pass
        for sock in (src, dst):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def partition(self):
        with self.lock:
            self.flowing.clear()

    def heal(self):
        with self.lock:
            self.flowing.set()

    def close(self):
        self.closing.set()
        self.flowing.set()
        self.sock.close()
        with self.lock:
            for pair in self.pairs:
                for sock in pair:
                    try:
                        sock.close()
                    except OSError:
                        pass
            self.pairs = []


def main():
    relay = Relay(int(sys.argv[1]))
    print(relay.port, flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "partition":
            relay.partition()
        elif command == "heal":
            relay.heal()
        else:
            print(f"unknown command {command!r}", flush=True)
            continue
        print("ok", flush=True)
    relay.close()


class PartitionLink:
    """The relay above in a process of its own, driven from a test."""

    def __init__(self, upstream_port):
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__),
                                      str(upstream_port)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline())

    def _command(self, command):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().strip()
        assert answer == "ok", f"the relay answered {answer!r} to {command}"

    def partition(self):
        """Stop the bytes on the held connections both ways, close nothing, refuse new
        connections."""
        self._command("partition")

    def heal(self):
        """Let the bytes flow again on the held connections, relay new ones."""
        self._command("heal")

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()
        self.proc.stdout.close()


if __name__ == "__main__":
    main()
