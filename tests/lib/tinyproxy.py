# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""Debian's tinyproxy as an HTTP CONNECT proxy on a port of its own, for the proxy tests.
Its log (LogLevel Info) names every CONNECT it was asked for, which is how a test tells that
a request went through it or around it."""

import os
import shutil
import socket
import subprocess
import tempfile
import time

from nats_server import wait_until

TINYPROXY = shutil.which("tinyproxy") or "/usr/bin/tinyproxy"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def accepts(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


class Tinyproxy:
    """tinyproxy in the foreground; @connect_ports limits the ports CONNECT may reach
    (tinyproxy answers 403 to the others); None allows every port. @basic_auth, a (user,
    password) pair, makes it answer 407 to a request without those credentials."""

    def __init__(self, port=None, connect_ports=None, basic_auth=None):
        self.tmpdir = tempfile.mkdtemp(prefix="tinyproxy-test-")
        self.port = port or free_port()
        self.logfile = os.path.join(self.tmpdir, "tinyproxy.log")
        conf = os.path.join(self.tmpdir, "tinyproxy.conf")
        lines = [f"Port {self.port}", "Listen 127.0.0.1", "Timeout 60", "MaxClients 100",
                 f"LogFile \"{self.logfile}\"", "LogLevel Info", "Allow 127.0.0.1"]
        lines += [f"ConnectPort {p}" for p in (connect_ports or [])]
        if basic_auth is not None:
            lines.append(f"BasicAuth {basic_auth[0]} {basic_auth[1]}")
        with open(conf, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        self.proc = subprocess.Popen([TINYPROXY, "-d", "-c", conf], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        wait_until(lambda: accepts(self.port), f"tinyproxy listening on {self.port}",
                   proc=self.proc, log=self.log)
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def log(self):
        try:
            with open(self.logfile, encoding="utf-8", errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def connects(self, target):
        """How many CONNECTs to @target ("host:port") the proxy was asked for."""
        return self.log().count(f"CONNECT {target} ")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.tmpdir, ignore_errors=True)
