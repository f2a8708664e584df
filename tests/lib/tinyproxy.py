# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""Debian's tinyproxy as an HTTP CONNECT proxy on a port of its own, for the proxy tests.
Its log (LogLevel Info) names every CONNECT it was asked for, which is how a test tells that
a request went through it or around it."""

import os
import shutil

from proxy_process import ProxyProcess

TINYPROXY = shutil.which("tinyproxy") or "/usr/bin/tinyproxy"


class Tinyproxy(ProxyProcess):
    """tinyproxy in the foreground; @connect_ports limits the ports CONNECT may reach
    (tinyproxy answers 403 to the others); None allows every port. @basic_auth, a (user,
    password) pair, makes it answer 407 to a request without those credentials."""

    def __init__(self, port=None, connect_ports=None, basic_auth=None):
        super().__init__("tinyproxy", port)
        conf = os.path.join(self.tmpdir, "tinyproxy.conf")
        lines = [f"Port {self.port}", "Listen 127.0.0.1", "Timeout 60", "MaxClients 100",
                 f"LogFile \"{self.logfile}\"", "LogLevel Info", "Allow 127.0.0.1"]
        lines += [f"ConnectPort {p}" for p in (connect_ports or [])]
        if basic_auth is not None:
            lines.append(f"BasicAuth {basic_auth[0]} {basic_auth[1]}")
        with open(conf, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        self.start([TINYPROXY, "-d", "-c", conf])
        self.url = f"http://127.0.0.1:{self.port}"

    def connects(self, target):
        """How many CONNECTs to @target ("host:port") the proxy was asked for."""
        return self.log().count(f"CONNECT {target} ")
