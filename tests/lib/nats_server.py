"""A real nats-server for the tests: on 127.0.0.1, port -1 picks a free one (read back from
its ports file), the monitoring port too."""

import glob
import json
import os
import socket
import subprocess
import tempfile
import time

from nats_client import NatsClient

NATS_SERVER = os.environ.get("NATS_SERVER", "nats-server")
TIMEOUT = 90.0


def wait_until(predicate, what, timeout=TIMEOUT, proc=None, log=None):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"meshsync exited ({proc.returncode}) before {what}:\n"
                                 f"{log() if log else ''}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}\n{log() if log else ''}")
        time.sleep(0.02)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class NatsServer:
    """A nats-server on 127.0.0.1; port -1 picks one, read back from the ports file."""

    def __init__(self, *extra, port=-1):
        self.extra = list(extra)
        self.port = port
        self.proc = None
        self.dir = tempfile.mkdtemp(prefix="meshsync-nats-")
        self.start()

    def start(self):
        for old in glob.glob(os.path.join(self.dir, "*.ports")):
            os.unlink(old)
        argv = [NATS_SERVER, "-a", "127.0.0.1", "-p", str(self.port), "-m", "-1",
                "--ports_file_dir", self.dir] + self.extra
        self.log = open(os.path.join(self.dir, "server.log"), "a", encoding="utf-8")
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)

        def ports():
            for path in glob.glob(os.path.join(self.dir, "*.ports")):
                try:
                    with open(path, encoding="utf-8") as f:
                        ports = json.load(f)
                    self.monitor = ports["monitoring"][0]
                    return ports["nats"][0]
                except (ValueError, KeyError, IndexError, OSError):
                    return None
            if self.proc.poll() is not None:
                raise AssertionError(f"nats-server exited: {self.proc.returncode}")
            return None

        url = wait_until(ports, "the nats-server ports file", timeout=20)
        self.port = int(url.rsplit(":", 1)[1])

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.proc is not None:
            self.log.close()
        self.proc = None

    @property
    def url(self):
        return f"nats://127.0.0.1:{self.port}"

    def client(self, **kwargs):
        return NatsClient("127.0.0.1", self.port, timeout=10.0, **kwargs).connect()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


