# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""A small NATS client on plain sockets, for the Python tests.

Debian 12 ships no Python NATS client, and the core protocol is a handful of text lines:
INFO/CONNECT/PING/PONG, SUB/UNSUB, PUB, MSG/HMSG and -ERR. Everything here is synchronous;
each wait takes a timeout and raises TimeoutError when it runs out.

    with NatsClient.from_url("nats://127.0.0.1:4222") as nc:
        nc.subscribe("meshery.meshsync.core")
        for msg in nc.messages(count=10, timeout=5):
            print(msg.subject, msg.data)
"""

import collections
import json
import socket
import time
import urllib.parse

__all__ = ["Msg", "NatsClient", "NatsError"]


class NatsError(Exception):
    """The server sent -ERR (for example 'Authorization Violation') or closed the socket."""


class Msg(collections.namedtuple("Msg", "subject sid reply data headers")):
    """One delivered message; data is bytes, headers a dict of lists or None."""

    def json(self):
        return json.loads(self.data)


def _parse_headers(block):
    lines = block.decode("utf-8", "replace").split("\r\n")
    headers = {}
    for line in lines[1:]:  # lines[0] is "NATS/1.0[ status]"
        if not line:
            continue
        key, _, value = line.partition(":")
        headers.setdefault(key.strip(), []).append(value.strip())
    return headers


class NatsClient:
    def __init__(self, host="127.0.0.1", port=4222, *, user=None, password=None, token=None,
                 name="meshsync-test", timeout=5.0):
        self.host = host
        self.port = int(port)
        self.user = user
        self.password = password
        self.token = token
        self.name = name
        self.timeout = timeout
        self.info = {}
        self._sock = None
        self._buf = bytearray()
        self._pending = collections.deque()
        self._pongs = 0
        self._next_sid = 1

    @classmethod
    def from_url(cls, url, **kwargs):
        """nats://[user:password@|token@]host:port, as meshsync takes it."""
        if "://" not in url:
            url = "nats://" + url
        parts = urllib.parse.urlsplit(url)
        if parts.username is not None and parts.password is None:
            kwargs.setdefault("token", urllib.parse.unquote(parts.username))
        elif parts.username is not None:
            kwargs.setdefault("user", urllib.parse.unquote(parts.username))
            kwargs.setdefault("password", urllib.parse.unquote(parts.password))
        return cls(parts.hostname or "127.0.0.1", parts.port or 4222, **kwargs)

    # -- connection --------------------------------------------------------------------------

    def connect(self):
        self._sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        deadline = time.monotonic() + self.timeout
        line = self._read_line(deadline)
        if not line.startswith(b"INFO "):
            raise NatsError("expected INFO, got %r" % line[:80])
        self.info = json.loads(line[5:])
        options = {"verbose": False, "pedantic": False, "name": self.name, "lang": "python",
                   "version": "0", "protocol": 1, "headers": True, "no_responders": True}
        if self.user is not None:
            options["user"] = self.user
            options["pass"] = self.password or ""
        if self.token is not None:
            options["auth_token"] = self.token
        self._send(b"CONNECT " + json.dumps(options).encode() + b"\r\n")
        # An auth failure arrives as -ERR before the PONG.
        self.flush(self.timeout)
        return self

    def close(self):
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None

    def __enter__(self):
        if self._sock is None:
            self.connect()
        return self

    def __exit__(self, *exc):
        self.close()

    # -- commands ----------------------------------------------------------------------------

    def publish(self, subject, data=b"", reply=None):
        if isinstance(data, str):
            data = data.encode()
        head = "PUB %s %s%d\r\n" % (subject, reply + " " if reply else "", len(data))
        self._send(head.encode() + bytes(data) + b"\r\n")

    def subscribe(self, subject, queue=None, confirm=True):
        """Returns the sid; with confirm, waits until the server has registered the SUB."""
        sid = self._next_sid
        self._next_sid += 1
        self._send(("SUB %s %s%d\r\n" % (subject, queue + " " if queue else "", sid)).encode())
        if confirm:
            self.flush()
        return sid

    def unsubscribe(self, sid, max_msgs=None):
        extra = " %d" % max_msgs if max_msgs is not None else ""
        self._send(("UNSUB %d%s\r\n" % (sid, extra)).encode())

    def flush(self, timeout=None):
        """PING and wait for the PONG: the server has processed everything sent before."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        wanted = self._pongs + 1
        self._send(b"PING\r\n")
        while self._pongs < wanted:
            self._read_one(deadline)

    def next_msg(self, timeout=None):
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while not self._pending:
            self._read_one(deadline)
        return self._pending.popleft()

    def messages(self, count=None, timeout=None):
        """Yields messages until count arrived; each one must come within timeout."""
        got = 0
        while count is None or got < count:
            try:
                msg = self.next_msg(timeout)
            except TimeoutError:
                if count is None:
                    return
                raise
            got += 1
            yield msg

    def hpublish(self, subject, data=b"", headers=None, reply=None):
        """PUB with a header block (HPUB); headers is a dict of strings."""
        if isinstance(data, str):
            data = data.encode()
        block = "NATS/1.0\r\n" + "".join("%s: %s\r\n" % kv for kv in (headers or {}).items())
        block = (block + "\r\n").encode()
        head = "HPUB %s %s%d %d\r\n" % (subject, reply + " " if reply else "", len(block),
                                        len(block) + len(data))
        self._send(head.encode() + block + bytes(data) + b"\r\n")

    def request(self, subject, data=b"", timeout=None):
        """One request and its reply, on an inbox subscription of its own. Messages of other
        subscriptions that arrive meanwhile stay queued for next_msg()."""
        inbox = "_INBOX.test.%d.%d" % (id(self), self._next_sid)
        sid = self.subscribe(inbox, confirm=False)
        self.unsubscribe(sid, 1)
        self.publish(subject, data, reply=inbox)
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            for i, msg in enumerate(self._pending):
                if msg.sid == sid:
                    del self._pending[i]
                    return msg
            self._read_one(deadline)

    # -- JetStream: the $JS.API requests the tests need ------------------------------------

    def js_api(self, name, body=None, timeout=None):
        """A JetStream API request ($JS.API.<name>); returns the decoded answer, and raises
        NatsError for an error answer or when no JetStream answered."""
        data = json.dumps(body).encode() if body is not None else b""
        msg = self.request("$JS.API." + name, data, timeout)
        if not msg.data:
            raise NatsError("no JetStream answered %s" % name)
        answer = json.loads(msg.data)
        if "error" in answer:
            raise NatsError("%s: %s" % (name, answer["error"]))
        return answer

    def stream_info(self, stream, timeout=None):
        return self.js_api("STREAM.INFO." + stream, timeout=timeout)

    def add_pull_consumer(self, stream, durable, **config):
        """A durable pull consumer, explicit acks, from the start of the stream."""
        cfg = {"durable_name": durable, "ack_policy": "explicit", "deliver_policy": "all"}
        cfg.update(config)
        return self.js_api("CONSUMER.DURABLE.CREATE.%s.%s" % (stream, durable),
                           {"stream_name": stream, "config": cfg})

    def fetch(self, stream, durable, batch, expires=1.0, ack=True):
        """Pulls up to @batch messages, waiting at most @expires seconds for them; acks each
        one (and waits until the server has the acks) unless ack is false."""
        inbox = "_INBOX.fetch.%d.%d" % (id(self), self._next_sid)
        sid = self.subscribe(inbox, confirm=False)
        body = {"batch": batch, "expires": int(expires * 1e9)}
        self.publish("$JS.API.CONSUMER.MSG.NEXT.%s.%s" % (stream, durable),
                     json.dumps(body).encode(), reply=inbox)
        got = []
        deadline = time.monotonic() + expires + self.timeout
        while len(got) < batch:
            msg = None
            for i, m in enumerate(self._pending):
                if m.sid == sid:
                    msg = m
                    del self._pending[i]
                    break
            if msg is None:
                self._read_one(deadline)
                continue
            if not msg.data and msg.headers is not None:
                break  # 404 no messages or 408 request timeout: the batch is done
            got.append(msg)
            if ack and msg.reply:
                self.publish(msg.reply, b"+ACK")
        self.unsubscribe(sid)
        self.flush()
        return got

    # -- protocol ----------------------------------------------------------------------------

    def _send(self, data):
        if self._sock is None:
            raise NatsError("not connected")
        # Reads shorten the socket timeout to their deadline; a send gets the full one.
        self._sock.settimeout(self.timeout)
        self._sock.sendall(data)

    def _fill(self, deadline):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no data from the NATS server at %s:%d" % (self.host, self.port))
        self._sock.settimeout(remaining)
        try:
            chunk = self._sock.recv(256 * 1024)
        except socket.timeout:
            raise TimeoutError("no data from the NATS server at %s:%d" % (self.host, self.port))
        if not chunk:
            raise NatsError("the NATS server at %s:%d closed the connection" % (self.host, self.port))
        self._buf += chunk

    def _read_line(self, deadline):
        while True:
            end = self._buf.find(b"\r\n")
            if end >= 0:
                line = bytes(self._buf[:end])
                del self._buf[:end + 2]
                return line
            self._fill(deadline)

    def _read_exact(self, n, deadline):
        while len(self._buf) < n + 2:
            self._fill(deadline)
        data = bytes(self._buf[:n])
        del self._buf[:n + 2]
        return data

    def _read_one(self, deadline):
        line = self._read_line(deadline)
        op, _, rest = line.partition(b" ")
        op = op.upper()
        if op == b"PING":
            self._send(b"PONG\r\n")
        elif op == b"PONG":
            self._pongs += 1
        elif op == b"+OK":
            pass
        elif op == b"INFO":
            self.info = json.loads(rest)
        elif op == b"-ERR":
            raise NatsError(rest.decode("utf-8", "replace").strip().strip("'"))
        elif op == b"MSG":
            args = rest.decode().split()
            subject, sid = args[0], int(args[1])
            reply = args[2] if len(args) == 4 else None
            data = self._read_exact(int(args[-1]), deadline)
            self._pending.append(Msg(subject, sid, reply, data, None))
        elif op == b"HMSG":
            args = rest.decode().split()
            subject, sid = args[0], int(args[1])
            reply = args[2] if len(args) == 5 else None
            hdr_len, total = int(args[-2]), int(args[-1])
            block = self._read_exact(total, deadline)
            self._pending.append(Msg(subject, sid, reply, block[hdr_len:],
                                     _parse_headers(block[:hdr_len])))
        else:
            raise NatsError("unexpected line from the server: %r" % line[:80])
