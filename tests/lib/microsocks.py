# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""Debian's microsocks as a SOCKS5 proxy on a port of its own, for the proxy tests. It logs
every connection it makes for a client ("client[N] ADDRESS: connected to HOST:PORT"), which is
how a test tells that a request went through it."""

import os
import shutil
import subprocess
import tempfile

from nats_server import wait_until
from tinyproxy import accepts, free_port

MICROSOCKS = shutil.which("microsocks") or "/usr/bin/microsocks"


class Microsocks:
    """microsocks on 127.0.0.1; @auth, a (user, password) pair, makes it require the SOCKS5
    username/password method and refuse any other."""

    def __init__(self, auth=None):
        self.tmpdir = tempfile.mkdtemp(prefix="microsocks-test-")
        self.port = free_port()
        self.logfile = os.path.join(self.tmpdir, "microsocks.log")
        argv = [MICROSOCKS, "-i", "127.0.0.1", "-p", str(self.port)]
        if auth is not None:
            argv += ["-u", auth[0], "-P", auth[1]]
        with open(self.logfile, "w", encoding="utf-8") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        wait_until(lambda: accepts(self.port), f"microsocks listening on {self.port}",
                   proc=self.proc, log=self.log)
        userinfo = f"{auth[0]}:{auth[1]}@" if auth is not None else ""
        self.url = f"socks5://{userinfo}127.0.0.1:{self.port}"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def log(self):
        with open(self.logfile, encoding="utf-8", errors="replace") as f:
            return f.read()

    def connects(self, target):
        """How many connections to @target ("host:port") the proxy made for a client."""
        return self.log().count(f": connected to {target}\n")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.tmpdir, ignore_errors=True)
