# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""Debian's microsocks as a SOCKS5 proxy on a port of its own, for the proxy tests. It logs
every connection it makes for a client ("client[N] ADDRESS: connected to HOST:PORT"), which is
how a test tells that a request went through it."""

import shutil

from proxy_process import ProxyProcess

MICROSOCKS = shutil.which("microsocks") or "/usr/bin/microsocks"


class Microsocks(ProxyProcess):
    """microsocks on 127.0.0.1; @auth, a (user, password) pair, makes it require the SOCKS5
    username/password method and refuse any other."""

    def __init__(self, auth=None):
        super().__init__("microsocks")
        argv = [MICROSOCKS, "-i", "127.0.0.1", "-p", str(self.port)]
        if auth is not None:
            argv += ["-u", auth[0], "-P", auth[1]]
        self.start(argv, output_to_log=True)
        userinfo = f"{auth[0]}:{auth[1]}@" if auth is not None else ""
        self.url = f"socks5://{userinfo}127.0.0.1:{self.port}"

    def connects(self, target):
        """How many connections to @target ("host:port") the proxy made for a client."""
        return self.log().count(f": connected to {target}\n")
