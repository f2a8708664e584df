# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""Network conditions the kernel makes: a test enters a network namespace of its own, where
every process it starts afterwards (kubesim, nats-server, meshsync, the relay) talks over a
private loopback, and nftables rules there drop segments of one TCP port at random or all
of them. The losses are real: TCP retransmits and backs off as on a real link, and nothing
outside the namespace is touched, so other tests running beside it are not disturbed.

The kernel of the CI machine has nftables (numgen random) but no netem qdisc, so latency
cannot be made here; GatedProxy's `delay` makes it in the relay instead.

Needs root (CAP_SYS_ADMIN for the namespace, CAP_NET_ADMIN for the rules) and the nft
client; without them the tests that use it are skipped, saying why.
"""

import ctypes
import os
import re
import shutil
import subprocess
import urllib.parse

import pytest
import yaml

CLONE_NEWNET = 0x40000000
TABLE = "netcond"
# The loopback of a fresh namespace is 64 KiB per packet; an Ethernet-sized MTU makes a
# dropped segment as small as one on a real link, so a loss costs what it costs there.
MTU = 1500
# The MTU alone does not do it: loopback takes TCP's segmentation offload, so TCP hands it
# packets of up to 64 KiB (about 43 segments) that pass the input hook whole, and a drop there
# loses them all at once. One segment per packet makes each segment pass the hook, and be
# dropped, on its own, as on a wire.
GSO_MAX_SEGS = 1

# What the daemon's resident set may add to its peak during the initial sync while a network
# condition lasts and after it. What the API server could not send during a fault waits on
# its side, not in meshsync, and the informer keeps one copy of each object either way; what
# arrives in a burst afterwards is published into the broker's replay window, which holds what
# the broker has not confirmed yet, 64 MiB at most whatever the fault's length (beyond that
# meshsync stops reading), and under load a burst can fill a good part of it before the
# confirmation comes back. The rest covers the write buffer (4 MiB high mark) and what the
# allocator keeps. Measured rises: doc/reliability.md, "Network conditions".
REPLAY_WINDOW_KIB = 64 * 1024
RSS_SLACK_KIB = REPLAY_WINDOW_KIB + 16 * 1024
# Under ASan (the sanitizer run) freed memory waits in its quarantine, 256 MiB by default,
# before it is reused: the resident set then measures the sanitizer.
if "ASAN_OPTIONS" in os.environ:
    RSS_SLACK_KIB += 256 * 1024

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result, what):
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


class PrivateNetwork:
    """Moves the calling thread (pytest's main thread) into a new network namespace for
    the `with` block and back afterwards. Threads and processes started inside inherit it;
    ones started before stay outside. Every process started inside must be stopped before
    the block ends."""

    def __enter__(self):
        if os.geteuid() != 0 or shutil.which("nft") is None:
            pytest.skip("network conditions need root and nft (nftables)")
        self._home = os.open("/proc/self/ns/net", os.O_RDONLY)
        try:
            _check(_libc.unshare(CLONE_NEWNET), "unshare(CLONE_NEWNET)")
        except OSError as err:
            os.close(self._home)
            pytest.skip(f"no network namespace: {err}")
        try:
            subprocess.run(["ip", "link", "set", "lo", "up", "mtu", str(MTU),
                            "gso_max_segs", str(GSO_MAX_SEGS)], check=True)
            self._nft(f"add table inet {TABLE}\n"
                      f"add chain inet {TABLE} input "
                      "{ type filter hook input priority 0; policy accept; }\n")
        except BaseException:
            self._leave()
            raise
        return self

    def __exit__(self, *exc):
        self._leave()

    def _leave(self):
        _check(_libc.setns(self._home, CLONE_NEWNET), "setns back")
        os.close(self._home)

    @staticmethod
    def _nft(script):
        subprocess.run(["nft", "-f", "-"], input=script, text=True, check=True)

    def drop(self, port, percent=100):
        """Drops @percent of the segments to and from TCP @port (both ways, independently),
        on the connections it has and on new ones; 100 cuts the link: no RST, no FIN,
        connection attempts go unanswered."""
        # on loopback every segment passes the input hook once, whichever way it goes
        match = "" if percent >= 100 else f"numgen random mod 100 < {int(percent)} "
        self._nft(f"add rule inet {TABLE} input tcp dport {port} {match}counter drop\n"
                  f"add rule inet {TABLE} input tcp sport {port} {match}counter drop\n")

    def dropped(self):
        """How many segments the rules in place have dropped so far."""
        listing = subprocess.run(["nft", "list", "chain", "inet", TABLE, "input"],
                                 check=True, capture_output=True, text=True).stdout
        return sum(int(n) for n in re.findall(r"counter packets (\d+)", listing))

    def restore(self):
        """Removes every drop rule: the link works again."""
        self._nft(f"flush chain inet {TABLE} input\n")

    @staticmethod
    def tcp_counters():
        """This namespace's TCP counters from /proc/net/snmp (RetransSegs, OutSegs, ...):
        evidence that the kernel did drop and TCP did retransmit."""
        with open("/proc/thread-self/net/snmp", encoding="ascii") as f:
            lines = [line.split() for line in f if line.startswith("Tcp:")]
        return {name: int(value) for name, value in zip(lines[0][1:], lines[1][1:])}


def relayed_kubeconfig(kubeconfig, port, directory):
    """A copy of @kubeconfig whose server is 127.0.0.1:@port (a relay in front of kubesim;
    kubesim's certificate names 127.0.0.1, so TLS still verifies)."""
    with open(kubeconfig, encoding="utf-8") as f:
        config = yaml.safe_load(f)
    for cluster in config["clusters"]:
        server = urllib.parse.urlsplit(cluster["cluster"]["server"])
        cluster["cluster"]["server"] = f"{server.scheme}://127.0.0.1:{port}"
    path = os.path.join(directory, "kubeconfig-relayed")
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump(config, f)
    return path
