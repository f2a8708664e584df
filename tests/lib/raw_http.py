"""A raw HTTP/1.1 client for the differential tests (tests/fidelity): one GET over its own TLS
connection, read as framed on the wire (the status line, every header, every chunk, every gzip
member), so that two servers' answers can be compared for what clients see of their framing
too."""

import socket
import ssl
import time
import urllib.parse
import zlib


class Response:
    def __init__(self):
        self.status = None
        self.headers = []
        self.chunks = []
        self.chunked = False
        self.complete = False  # a Content-Length body read whole, or the terminating chunk

    def header(self, name):
        values = [v for k, v in self.headers if k.lower() == name.lower()]
        return ", ".join(values) if values else None

    @property
    def body(self):
        return b"".join(self.chunks)


class GzipMembers:
    """Decodes a stream of concatenated gzip members as it arrives."""

    def __init__(self):
        self.members = []  # decoded bytes of each complete member
        self.partial = b""
        self._decoder = None
        self.error = None

    def feed(self, data):
        while data and self.error is None:
            if self._decoder is None:
                self._decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
            try:
                self.partial += self._decoder.decompress(data)
            except zlib.error as err:
                self.error = str(err)
                return
            if not self._decoder.eof:
                return
            self.members.append(self.partial)
            self.partial = b""
            data = self._decoder.unused_data
            self._decoder = None

    @property
    def text(self):
        return b"".join(self.members) + self.partial

    @property
    def in_member(self):
        return self._decoder is not None


def http_request(url, target, headers, stop=None, max_time=30.0):
    """Sends one GET over its own TLS connection (ALPN http/1.1) and reads the answer until
    the body ends, @stop(response, text so far) says so, or @max_time passes."""
    parsed = urllib.parse.urlparse(url)
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["http/1.1"])
    deadline = time.monotonic() + max_time
    sock = socket.create_connection((parsed.hostname, parsed.port), timeout=max_time)
    conn = ctx.wrap_socket(sock, server_hostname=parsed.hostname)
    try:
        lines = [f"GET {target} HTTP/1.1", f"Host: {parsed.hostname}:{parsed.port}"]
        lines += [f"{k}: {v}" for k, v in headers]
        conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        stream = conn.makefile("rb")
        resp = Response()
        status_line = stream.readline().decode("latin-1")
        resp.status = int(status_line.split(" ")[1])
        while True:
            line = stream.readline().decode("latin-1").rstrip("\r\n")
            if not line:
                break
            name, value = line.split(":", 1)
            resp.headers.append((name.strip(), value.strip()))
        gz = GzipMembers() if resp.header("Content-Encoding") == "gzip" else None
        plain = []

        def text():
            return gz.text if gz is not None else b"".join(plain)

        if "chunked" in (resp.header("Transfer-Encoding") or "").lower():
            resp.chunked = True
            try:
                while time.monotonic() < deadline:
                    conn.settimeout(max(0.05, deadline - time.monotonic()))
                    size_line = stream.readline()
                    if not size_line:
                        break
                    size = int(size_line.split(b";")[0].strip(), 16)
                    if size == 0:
                        stream.readline()
                        resp.complete = True
                        break
                    data = stream.read(size)
                    stream.read(2)
                    resp.chunks.append(data)
                    if gz is not None:
                        gz.feed(data)
                    else:
                        plain.append(data)
                    if stop is not None and stop(resp, text()):
                        break
            except (socket.timeout, TimeoutError):
                pass
        elif resp.header("Content-Length") is not None:
            resp.chunks.append(stream.read(int(resp.header("Content-Length"))))
            resp.complete = True
            if gz is not None:
                gz.feed(resp.chunks[0])
        resp.gzip = gz
        resp.text = gz.text if gz is not None else resp.body
        return resp
    finally:
        conn.close()
