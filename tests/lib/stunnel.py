# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""Debian's stunnel4 as the TLS side of an HTTPS proxy: it takes TLS on a port of its own
and hands the plain stream to a local port (tinyproxy's, for the proxy tests). Its
certificate, for 127.0.0.1 and localhost, is signed by a CA made for the test, whose PEM file
is `ca_file`."""

import os
import shutil
import subprocess

from proxy_process import ProxyProcess

STUNNEL = shutil.which("stunnel4") or shutil.which("stunnel") or "/usr/bin/stunnel4"


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


class Stunnel(ProxyProcess):
    def __init__(self, upstream_port):
        super().__init__("stunnel")
        d = self.tmpdir
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
                "-subj", "/CN=proxy test CA", cwd=d)
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", "proxy.key", "-out", "proxy.csr", "-subj", "/CN=localhost", cwd=d)
        with open(os.path.join(d, "ext.cnf"), "w", encoding="utf-8") as f:
            f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
        openssl("x509", "-req", "-in", "proxy.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", "proxy.pem", "-days", "2", "-extfile", "ext.cnf",
                cwd=d)
        self.ca_file = os.path.join(d, "ca.pem")
        conf = os.path.join(d, "stunnel.conf")
        with open(conf, "w", encoding="utf-8") as f:
            f.write(f"foreground = yes\npid =\noutput = {self.logfile}\ndebug = info\n"
                    f"[proxy]\naccept = 127.0.0.1:{self.port}\n"
                    f"connect = 127.0.0.1:{upstream_port}\n"
                    f"cert = {os.path.join(d, 'proxy.pem')}\n"
                    f"key = {os.path.join(d, 'proxy.key')}\n")
        self.start([STUNNEL, conf])
        self.url = f"https://127.0.0.1:{self.port}"
