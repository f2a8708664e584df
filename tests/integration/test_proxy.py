# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""The API server reached through an HTTP CONNECT proxy (Debian's tinyproxy) named by the
kubeconfig's proxy-url or by HTTPS_PROXY, NO_PROXY going around it, and a proxy that is not
there at first; a SOCKS5 proxy (Debian's microsocks); proxies that want credentials."""

import base64
import socket
import urllib.parse

import pytest
import yaml

from kubesim import Kubesim
from meshsync_run import TIMEOUT
from nats_server import NatsServer, free_port, wait_until
from test_broker_mode import Daemon, wait_for_listener
from test_sessions import NS, collect, exec_errors, open_exec, pod_manifest
from microsocks import Microsocks
from holding_relay import HoldingRelay
from stunnel import Stunnel
from tinyproxy import Tinyproxy

PROXY_ENV = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy")


def rewrite_kubeconfig(sim, path, server=None, **cluster):
    """A copy of kubesim's kubeconfig with the cluster's server or other fields changed."""
    with open(sim.kubeconfig, encoding="utf-8") as f:
        config = yaml.safe_load(f)
    entry = config["clusters"][0]["cluster"]
    if server is not None:
        entry["server"] = server
    entry.update(cluster)
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump(config, f)
    return str(path)


def target(sim):
    return urllib.parse.urlparse(sim.url).netloc


def file_daemon(tmp_path, kubeconfig, env):
    tmp_path.mkdir(exist_ok=True)
    full = {name: "" for name in PROXY_ENV}
    full.update(env)
    return Daemon(str(tmp_path), kubeconfig, None, "-outputFile", str(tmp_path / "s.yaml"),
                  output="file", env=full)


def host_name_and_address():
    """This machine's host name and the local address it resolves to (127.0.1.1 on Debian,
    else an interface's): a server name other than localhost or a loopback IP, which Go's
    proxy rules (meshsync follows them) never send to HTTPS_PROXY. kubesim listens there."""
    name = socket.gethostname()
    try:
        address = socket.gethostbyname(name)
    except OSError as e:
        raise AssertionError(f"the host name {name} does not resolve ({e}): /etc/hosts "
                             "should name it") from None
    assert name != "localhost", "the host name is localhost, which is never proxied"
    return name, address


def test_proxy_url_from_kubeconfig(tmp_path):
    with Kubesim(pods=3, namespaces=1) as sim, Tinyproxy() as proxy:
        # loopback included: proxy-url takes every request, and wins over the environment
        kubeconfig = rewrite_kubeconfig(sim, tmp_path / "kubeconfig", **{"proxy-url": proxy.url})
        env = {"HTTPS_PROXY": "http://127.0.0.1:1", "NO_PROXY": "*"}
        with file_daemon(tmp_path, kubeconfig, env) as run:
            run.wait_synced()
            assert proxy.connects(target(sim)) >= 1, proxy.log()


def test_https_proxy_and_no_proxy(tmp_path):
    name, address = host_name_and_address()
    with Kubesim(pods=3, namespaces=1, extra=["--address", address]) as sim, \
            Tinyproxy() as proxy:
        port = urllib.parse.urlparse(sim.url).port
        kubeconfig = rewrite_kubeconfig(sim, tmp_path / "kubeconfig",
                                        server=f"https://{name}:{port}",
                                        **{"tls-server-name": "localhost"})
        with file_daemon(tmp_path / "through", kubeconfig, {"HTTPS_PROXY": proxy.url}) as run:
            run.wait_synced()
            assert run.terminate() == 0
        through = proxy.connects(f"{name}:{port}")
        assert through >= 1, proxy.log()

        env = {"HTTPS_PROXY": proxy.url, "NO_PROXY": f"example.com, {name.upper()}:{port}"}
        with file_daemon(tmp_path / "around", kubeconfig, env) as run:
            run.wait_synced()
            assert run.terminate() == 0
        assert proxy.connects(f"{name}:{port}") == through, proxy.log()


def test_proxy_refused_then_back(tmp_path):
    port = free_port()
    with Kubesim(pods=3, namespaces=1) as sim:
        proxy_url = f"http://127.0.0.1:{port}"
        kubeconfig = rewrite_kubeconfig(sim, tmp_path / "kubeconfig", **{"proxy-url": proxy_url})
        with file_daemon(tmp_path, kubeconfig, {}) as run:
            line = wait_until(lambda: next((l for l in run.log().splitlines()
                                            if proxy_url in l), None),
                              "a line naming the proxy", timeout=TIMEOUT, proc=run.proc,
                              log=run.log)
            assert f"through proxy {proxy_url} (cluster kubesim): " in line, line
            with Tinyproxy(port=port) as proxy:
                run.wait_synced()
                assert proxy.connects(target(sim)) >= 1, proxy.log()


def test_proxy_forbids_connect(tmp_path):
    # a proxy that answers CONNECT with 403 (it allows port 1 only): the line says which
    # proxy, for which cluster; discovery keeps retrying
    with Kubesim(pods=3, namespaces=1) as sim, Tinyproxy(connect_ports=[1]) as proxy:
        kubeconfig = rewrite_kubeconfig(sim, tmp_path / "kubeconfig", **{"proxy-url": proxy.url})
        with file_daemon(tmp_path, kubeconfig, {}) as run:
            lines = wait_until(lambda: [l for l in run.log().splitlines()
                                        if f"through proxy {proxy.url} (cluster kubesim)" in l]
                               [1:], "two attempts through the proxy", timeout=TIMEOUT,
                               proc=run.proc, log=run.log)
            assert "the proxy answered 403" in lines[0] and "retrying" in lines[0], lines
            assert proxy.connects(target(sim)) >= 2, proxy.log()


@pytest.mark.parametrize("scheme", ["http", "https", "socks5"])
def test_proxy_black_hole(tmp_path, scheme):
    # a proxy that accepts (the kernel completes the TCP handshake for a listening socket
    # nobody accepts from) and never answers the CONNECT, the TLS handshake or the SOCKS5
    # greeting: the attempt ends at the connect bound, shortened here to 2 s, and is retried
    with Kubesim(pods=3, namespaces=1) as sim, socket.socket() as hole:
        hole.bind(("127.0.0.1", 0))
        hole.listen(64)
        proxy_url = f"{scheme}://127.0.0.1:{hole.getsockname()[1]}"
        kubeconfig = rewrite_kubeconfig(sim, tmp_path / "kubeconfig", **{"proxy-url": proxy_url})
        with file_daemon(tmp_path, kubeconfig, {"MESHSYNC_KUBE_CONNECT_TIMEOUT": "2"}) as run:
            # a second attempt for one scheme shows the retry; one line each for the others
            lines = proxy_lines(run, proxy_url, 2 if scheme == "http" else 1)
            assert all("no connection within 2 s; retrying" in l for l in lines), lines


def proxy_lines(run, proxy_url, count):
    """The daemon's first @count lines naming @proxy_url (as shown: password hidden) for
    kubesim, once there are that many."""
    def found():
        lines = [l for l in run.log().splitlines()
                 if f"through proxy {proxy_url} (cluster kubesim)" in l]
        return lines if len(lines) >= count else None
    return wait_until(found, f"{count} attempts through {proxy_url}", timeout=TIMEOUT,
                      proc=run.proc, log=run.log)


def test_socks5_proxy_with_credentials(tmp_path):
    with Kubesim(pods=3, namespaces=1) as sim, Microsocks(auth=("mesh", "s0cks-pass")) as proxy:
        kubeconfig = rewrite_kubeconfig(sim, tmp_path / "kubeconfig", **{"proxy-url": proxy.url})
        with file_daemon(tmp_path, kubeconfig, {"HTTPS_PROXY": "http://127.0.0.1:1"}) as run:
            run.wait_synced()
            assert proxy.connects(target(sim)) >= 1, proxy.log()


def test_socks5_proxy_wrong_password(tmp_path):
    with Kubesim(pods=3, namespaces=1) as sim, Microsocks(auth=("mesh", "right")) as proxy:
        url = f"socks5://mesh:wrong-secret@127.0.0.1:{proxy.port}"
        kubeconfig = rewrite_kubeconfig(sim, tmp_path / "kubeconfig", **{"proxy-url": url})
        with file_daemon(tmp_path, kubeconfig, {}) as run:
            shown = f"socks5://mesh@127.0.0.1:{proxy.port}"
            lines = proxy_lines(run, shown, 2)
            assert "retrying" in lines[0], lines
            assert "wrong-secret" not in run.log()
            assert proxy.connects(target(sim)) == 0, proxy.log()


def test_http_proxy_credentials(tmp_path):
    # the right credentials pass; none, or wrong ones, get the proxy's 407 in one line that
    # names the proxy without its password, and discovery keeps retrying
    with Kubesim(pods=3, namespaces=1) as sim, \
            Tinyproxy(basic_auth=("mesh", "pr0xy-pass")) as proxy:
        good = f"http://mesh:pr0xy-pass@127.0.0.1:{proxy.port}"
        kubeconfig = rewrite_kubeconfig(sim, tmp_path / "good.kubeconfig", **{"proxy-url": good})
        with file_daemon(tmp_path / "good", kubeconfig, {}) as run:
            run.wait_synced()
            assert run.terminate() == 0
        assert proxy.connects(target(sim)) >= 1, proxy.log()
        assert "pr0xy-pass" not in run.log()

        # tinyproxy answers wrong credentials with 401, not 407
        for name, url, shown, answer in (
                ("none", proxy.url, proxy.url, "407 Proxy Authentication Required"),
                ("wrong", f"http://mesh:bad-secret@127.0.0.1:{proxy.port}",
                 f"http://mesh@127.0.0.1:{proxy.port}", "401 Unauthorized")):
            kubeconfig = rewrite_kubeconfig(sim, tmp_path / f"{name}.kubeconfig",
                                            **{"proxy-url": url})
            with file_daemon(tmp_path / name, kubeconfig, {}) as run:
                lines = proxy_lines(run, shown, 2)
                assert f"the proxy answered {answer}; retrying" in lines[0], lines
                assert "bad-secret" not in run.log()


def test_exec_upgrade_through_black_holing_proxy(tmp_path):
    # the sync goes through tinyproxy behind a relay; then the relay lets one more connection
    # through (the exec session's pod lookup) and holds every later one (accepted, never
    # answered): the session's WebSocket upgrade, always on a new connection, ends at the
    # connect bound, shortened to 2 s, and the session gets that line as its error instead
    # of waiting out the 300 s I/O timeout
    with Kubesim(pods=1, namespaces=1) as sim, NatsServer() as nats, nats.client() as nc, \
            Tinyproxy() as proxy, HoldingRelay(proxy.port) as relay:
        sim.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        sim.create(pod_manifest("solo", ["app"]))
        kubeconfig = rewrite_kubeconfig(sim, tmp_path / "kubeconfig", **{"proxy-url": relay.url})
        with Daemon(str(tmp_path), kubeconfig, nats.url,
                    env={"MESHSYNC_KUBE_CONNECT_TIMEOUT": "2"}) as run:
            wait_for_listener(nats)
            run.wait_synced()
            assert proxy.connects(target(sim)) >= 1, proxy.log()
            relay.hold(after=1)
            sid = open_exec(nc, nats, "solo", "app", "hole")
            msgs = collect(nc, lambda got: exec_errors(got, sid), "the exec error")
            error = exec_errors(msgs, sid)[0]
            assert "/pods/solo/exec?" in error, error
            assert f"through proxy {relay.url} (cluster kubesim): no connection within 2 s" \
                in error, error
            assert relay.held_count() >= 1


def with_extra_ca(sim, pem_file):
    """kubesim's CA bundle with the CA of @pem_file added, base64 as the kubeconfig holds it."""
    with open(sim.kubeconfig, encoding="utf-8") as f:
        ca = base64.b64decode(yaml.safe_load(f)["clusters"][0]["cluster"]
                              ["certificate-authority-data"])
    with open(pem_file, "rb") as f:
        return base64.b64encode(ca + b"\n" + f.read()).decode()


def test_https_proxy(tmp_path):
    # proxy-url https://user:password@: TLS to the proxy (stunnel in front of tinyproxy with
    # BasicAuth), its certificate checked as client-go checks it, with the cluster's CA
    # bundle (here kubesim's CA and the proxy's), the credentials sent with the CONNECT: the
    # sync goes through it; wrong credentials get the proxy's answer in one line without the
    # password
    with Kubesim(pods=3, namespaces=1) as sim, \
            Tinyproxy(basic_auth=("mesh", "tls-pass")) as proxy, Stunnel(proxy.port) as tls:
        ca = with_extra_ca(sim, tls.ca_file)
        good = f"https://mesh:tls-pass@127.0.0.1:{tls.port}"
        kubeconfig = rewrite_kubeconfig(sim, tmp_path / "good.kubeconfig",
                                        **{"proxy-url": good, "certificate-authority-data": ca})
        with file_daemon(tmp_path / "good", kubeconfig, {}) as run:
            run.wait_synced()
            assert run.terminate() == 0
        assert proxy.connects(target(sim)) >= 1, proxy.log()
        assert "tls-pass" not in run.log()

        wrong = f"https://mesh:bad-secret@127.0.0.1:{tls.port}"
        kubeconfig = rewrite_kubeconfig(sim, tmp_path / "wrong.kubeconfig",
                                        **{"proxy-url": wrong, "certificate-authority-data": ca})
        with file_daemon(tmp_path / "wrong", kubeconfig, {}) as run:
            lines = proxy_lines(run, f"https://mesh@127.0.0.1:{tls.port}", 2)
            assert "the proxy answered 401 Unauthorized; retrying" in lines[0], lines
            assert "bad-secret" not in run.log()


def test_https_proxy_insecure_skip_tls_verify(tmp_path):
    # insecure-skip-tls-verify covers the proxy's certificate too, as in Go's transport; the
    # daemon warns that verification is off, which must not abort it here
    with Kubesim(pods=3, namespaces=1) as sim, Tinyproxy() as proxy, \
            Stunnel(proxy.port) as tls:
        kubeconfig = rewrite_kubeconfig(sim, tmp_path / "kubeconfig",
                                        **{"proxy-url": tls.url,
                                           "insecure-skip-tls-verify": True,
                                           "certificate-authority-data": None})
        with file_daemon(tmp_path, kubeconfig, {"G_DEBUG": "gc-friendly,fatal-criticals"}) as run:
            run.wait_synced()
            assert proxy.connects(target(sim)) >= 1, proxy.log()


def test_https_proxy_untrusted_certificate(tmp_path):
    # the same proxy, its CA in no bundle: the line names the proxy and its handshake, not
    # the API server, and discovery keeps retrying
    with Kubesim(pods=3, namespaces=1) as sim, Tinyproxy() as proxy, \
            Stunnel(proxy.port) as tls:
        kubeconfig = rewrite_kubeconfig(sim, tmp_path / "kubeconfig", **{"proxy-url": tls.url})
        with file_daemon(tmp_path, kubeconfig, {}) as run:
            lines = proxy_lines(run, tls.url, 2)
            assert "TLS handshake with the proxy failed: " in lines[0], lines
            assert "retrying" in lines[0], lines
            wait_until(lambda: "accepted connection from 127.0.0.1" in tls.log(),
                       "stunnel's log of the connection", timeout=TIMEOUT, log=tls.log)
            assert proxy.connects(target(sim)) == 0, proxy.log()
