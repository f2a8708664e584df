# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""What the proxy tests' servers (tinyproxy, stunnel, microsocks) share: a temporary
directory for their configuration and log, the process started in the foreground on a free
loopback port and waited for until it accepts, its log read back, and a stop that always
reaps it."""

import os
import shutil
import socket
import subprocess
import tempfile

from nats_server import free_port, wait_until


def accepts(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


class ProxyProcess:
    """A subclass makes self.tmpdir's files, then calls start(); @name is the program's."""

    def __init__(self, name, port=None):
        self.name = name
        self.tmpdir = tempfile.mkdtemp(prefix=f"{name}-test-")
        self.port = port or free_port()
        self.logfile = os.path.join(self.tmpdir, f"{name}.log")
        self.proc = None

    def start(self, argv, output_to_log=False):
        """Starts @argv and waits until self.port accepts; with @output_to_log its stdout and
        stderr are the log (for a program that cannot write one itself)."""
        if output_to_log:
            with open(self.logfile, "w", encoding="utf-8") as log:
                self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        else:
            self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
        wait_until(lambda: accepts(self.port), f"{self.name} listening on {self.port}",
                   proc=self.proc, log=self.log)

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

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.tmpdir, ignore_errors=True)
