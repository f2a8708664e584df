# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""`kubectl meshsync snapshot`: the real kubectl finds the plugin on PATH and runs it against
meshsync-kubesim. The snapshot is compared with what `kubectl get -o json` lists; a cluster
of 20,000 pods is whole with the default flags; the progress is drawn in place on a
pseudo-terminal and in plain lines otherwise; every error path ends in one line naming the
cause, exit 1, and a bad flag in the usage, exit 2."""

import json
import os
import pty
import re
import select
import shutil
import socket
import subprocess

import yaml

from kubesim import Kubesim
from sanitizer import fast_unwinder_env

PLUGIN = os.environ["MESHSYNC_KUBECTL_PLUGIN"]
KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
TIMEOUT = 300


def plugin_env():
    # in the sanitizer run the plugin gets the simulator's fast unwinder: with the full one
    # every allocation unwinds through libsoup and TLS, 20x slower (doc/reliability.md)
    env = fast_unwinder_env()
    env["PATH"] = os.path.dirname(PLUGIN) + os.pathsep + env.get("PATH", "")
    env.pop("KUBECONFIG", None)
    return env


def kubectl(*args, cwd=None, env=None):
    return subprocess.run([KUBECTL, *args], capture_output=True, text=True, cwd=cwd,
                          env=env or plugin_env(), timeout=TIMEOUT, check=False)


def snapshot_objects(path):
    """(kind, namespace, name) -> (uid, resourceVersion) of every document of the file."""
    objects = {}
    with open(path, encoding="utf-8") as f:
        for doc in yaml.load_all(f, Loader=yaml.CSafeLoader):
            if doc is None:
                continue
            meta = doc["metadata"]
            key = (doc["kind"], meta.get("namespace") or "", meta["name"])
            objects[key] = (meta["uid"], meta["resourceVersion"])
    return objects


def scalar(text):
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def snapshot_objects_fast(path):
    """snapshot_objects() for a file of hundreds of megabytes: the documents' top-level kind
    and metadata keys read line by line (the writer puts each on a line of its own), without
    building every document. snapshot_objects() checks the same files in the smaller tests."""
    objects = {}

    def close(doc):
        if doc.get("kind"):
            objects[(doc["kind"], doc.get("namespace", ""), doc["name"])] = (
                doc["uid"], doc["resourceVersion"])

    doc, in_meta = {}, False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("---"):
                close(doc)
                doc, in_meta = {}, False
            elif line.startswith("kind: "):
                doc["kind"] = scalar(line[6:])
            elif line.startswith("metadata:"):
                in_meta = True
            elif not line.startswith(" "):
                in_meta = False
            elif in_meta and line.startswith("  ") and line[2] not in " -":
                key, _, value = line[2:].partition(":")
                if key in ("name", "namespace", "uid", "resourceVersion"):
                    doc[key] = scalar(value)
    close(doc)
    return objects


def listed(sim, resource, kind):
    got = kubectl("get", resource, "-A", "-o", "json", "--kubeconfig", sim.kubeconfig)
    assert got.returncode == 0, got.stderr
    return {(kind, i["metadata"].get("namespace") or "", i["metadata"]["name"]):
            (i["metadata"]["uid"], i["metadata"]["resourceVersion"])
            for i in json.loads(got.stdout)["items"]}


def only(objects, kind):
    return {k: v for k, v in objects.items() if k[0] == kind}


def test_snapshot_through_kubectl_equals_kubectl_get(tmp_path):
    with Kubesim(pods=150, namespaces=3) as sim:
        out = tmp_path / "snap.yaml"
        run = kubectl("meshsync", "snapshot", "--kubeconfig", sim.kubeconfig, "-f", str(out))
        assert run.returncode == 0, run.stderr
        objects = snapshot_objects(out)
        for resource, kind in (("pods", "Pod"), ("deployments", "Deployment"),
                               ("services", "Service"), ("configmaps", "ConfigMap")):
            assert only(objects, kind) == listed(sim, resource, kind), kind
        # the summary: a line per kind with its count, then the file and its size
        pods = len(only(objects, "Pod"))
        assert pods >= 150 and re.search(rf"^Pod +{pods}$", run.stderr, re.M), run.stderr
        assert f"snapshot written to {out} ({out.stat().st_size} bytes)" in run.stderr


def test_default_file_name_and_filters(tmp_path):
    with Kubesim(pods=40, namespaces=2) as sim:
        run = kubectl("meshsync", "snapshot", "--kubeconfig", sim.kubeconfig,
                      "-r", "Pod,deployment", "-n", "team-1", cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        files = [p.name for p in tmp_path.iterdir()]
        assert len(files) == 1 and re.fullmatch(
            r"meshery-cluster-snapshot-\d{8}-00\.yaml", files[0]), files
        objects = snapshot_objects(tmp_path / files[0])
        assert {k[0] for k in objects} == {"Pod", "Deployment"}
        assert {k[1] for k in objects} == {"team-1"}
        pods = {k: v for k, v in listed(sim, "pods", "Pod").items() if k[1] == "team-1"}
        assert only(objects, "Pod") == pods
        # a second capture the same day takes the next number
        run = kubectl("meshsync", "snapshot", "--kubeconfig", sim.kubeconfig, "-r", "pod",
                      cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        assert sorted(p.name[-8:] for p in tmp_path.iterdir()) == ["-00.yaml", "-01.yaml"]


def test_output_dash_writes_standard_output(tmp_path):
    with Kubesim(pods=20, namespaces=1) as sim:
        run = kubectl("meshsync", "snapshot", "--kubeconfig", sim.kubeconfig, "-r", "pods",
                      "--output", "-", cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        assert list(tmp_path.iterdir()) == []
        docs = [d for d in yaml.load_all(run.stdout, Loader=yaml.CSafeLoader) if d]
        assert {d["metadata"]["uid"] for d in docs} == \
            {v[0] for v in listed(sim, "pods", "Pod").values()}


def test_twenty_thousand_pods_are_whole_with_the_default_flags(tmp_path):
    with Kubesim(pods=20000, namespaces=20) as sim:
        out = tmp_path / "snap.yaml"
        run = kubectl("meshsync", "snapshot", "--kubeconfig", sim.kubeconfig, "-f", str(out))
        assert run.returncode == 0, run.stderr
        # the server's own list (kubectl takes a minute to print 20,000 pods as JSON; the
        # comparison with kubectl's output is test_snapshot_through_kubectl_equals_kubectl_get)
        status, body = sim.request("GET", "/api/v1/pods")
        assert status == 200
        pods = {("Pod", i["metadata"].get("namespace") or "", i["metadata"]["name"]):
                (i["metadata"]["uid"], i["metadata"]["resourceVersion"]) for i in body["items"]}
        assert len(pods) >= 20000
        assert only(snapshot_objects_fast(out), "Pod") == pods


def run_on_terminal(argv, env):
    """Runs @argv with its standard error on a pseudo-terminal; returns (status, what the
    terminal got)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=slave, env=env)
    os.close(slave)
    got = b""
    while True:
        ready, _, _ = select.select([master], [], [], TIMEOUT)
        if not ready:
            proc.kill()
            raise AssertionError(f"no output for {TIMEOUT} s: {got!r}")
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the other side closed
            chunk = b""
        if not chunk:
            break
        got += chunk
    os.close(master)
    return proc.wait(timeout=TIMEOUT), got.decode()


def test_progress_is_drawn_in_place_on_a_terminal(tmp_path):
    with Kubesim(pods=3000, namespaces=3) as sim:
        status, text = run_on_terminal(
            [KUBECTL, "meshsync", "snapshot", "--kubeconfig", sim.kubeconfig, "-f",
             str(tmp_path / "snap.yaml")], plugin_env())
        assert status == 0, text
        progress = re.findall(r"\r\x1b\[K(\d+) of (\d+) resource types synced, (\d+) objects",
                              text)
        assert progress, text
        # drawn over itself: no newline between two progress updates
        first = text.index("\r\x1b[K")
        last_progress = text.rindex("resource types synced")
        assert "\n" not in text[first:last_progress], text
        # then cleared, and the summary in plain lines
        assert re.search(r"\r\x1b\[KKIND +COUNT\r?\n", text), text
        assert re.search(r"^Pod +\d+\r?$", text, re.M), text


def test_progress_is_plain_lines_off_a_terminal(tmp_path):
    with Kubesim(pods=3000, namespaces=3) as sim:
        run = kubectl("meshsync", "snapshot", "--kubeconfig", sim.kubeconfig, "-f",
                      str(tmp_path / "snap.yaml"))
        assert run.returncode == 0, run.stderr
        assert "\r" not in run.stderr and "\x1b" not in run.stderr
        lines = re.findall(r"^(\d+) of (\d+) resource types synced, \d+ objects, [\d.]+ s$",
                           run.stderr, re.M)
        assert lines, run.stderr
        synced = [int(s) for s, _ in lines]
        assert synced == sorted(set(synced)), synced  # a line when the count moves


def one_line_failure(run):
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 1, (run.returncode, run.stderr)
    assert len(lines) == 1 and lines[0].startswith("kubectl meshsync: "), run.stderr
    return lines[0]


def test_unreachable_server(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with Kubesim(pods=1, namespaces=1) as sim:
        text = open(sim.kubeconfig, encoding="utf-8").read()
    config = tmp_path / "kubeconfig"
    config.write_text(re.sub(r"server: \S+", f"server: https://127.0.0.1:{port}", text))
    line = one_line_failure(kubectl("meshsync", "snapshot", "--kubeconfig", str(config),
                                    cwd=tmp_path))
    assert f"127.0.0.1:{port}" in line, line
    assert list(tmp_path.iterdir()) == [config]


def test_refused_token(tmp_path):
    with Kubesim(pods=1, namespaces=1) as sim:
        config = tmp_path / "kubeconfig"
        config.write_text(open(sim.kubeconfig, encoding="utf-8").read().replace(
            sim.token, "not-the-token"))
        line = one_line_failure(kubectl("meshsync", "snapshot", "--kubeconfig", str(config),
                                        cwd=tmp_path))
        assert "401" in line or "nauthorized" in line, line


def test_unknown_resource(tmp_path):
    with Kubesim(pods=1, namespaces=1) as sim:
        line = one_line_failure(kubectl("meshsync", "snapshot", "--kubeconfig",
                                        sim.kubeconfig, "-r", "pod,Gizmo", cwd=tmp_path))
        assert '"gizmo"' in line, line
        assert list(tmp_path.iterdir()) == []


def test_duration_that_cuts_the_sync_names_what_is_missing(tmp_path):
    with Kubesim(pods=2000, namespaces=2) as sim:
        run = kubectl("meshsync", "snapshot", "--kubeconfig", sim.kubeconfig, "-r", "pod",
                      "-d", "1ms", "-f", str(tmp_path / "snap.yaml"))
        assert run.returncode == 1, run.stderr
        assert "was not complete when --duration ended" in run.stderr, run.stderr


def test_bad_flags_give_the_usage():
    for argv in (["meshsync", "snapshot", "--no-such-flag"],
                 ["meshsync", "snapshot", "-d", "soon"],
                 ["meshsync", "snapshot", "stray"],
                 ["meshsync", "frobnicate"]):
        run = kubectl(*argv)
        assert run.returncode == 2, (argv, run.returncode, run.stderr)
        assert "snapshot" in run.stderr, (argv, run.stderr)


def test_version_names_the_build():
    run = kubectl("meshsync", "version")
    daemon = subprocess.run([os.environ["MESHSYNC_DAEMON"], "--version"], capture_output=True,
                            text=True, check=True).stdout.split()[-1]
    assert run.returncode == 0 and run.stdout == f"kubectl-meshsync {daemon}\n", run


def test_krew_package_installs_under_upstreams_name(tmp_path):
    """build-aux/krew-package's archive and manifest, laid out as krew installs them: the
    binary linked as kubectl-meshsync_snapshot, so `kubectl meshsync-snapshot` runs it."""
    import hashlib
    import tarfile

    source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = tmp_path / "krew"
    subprocess.run([os.path.join(source, "build-aux", "krew-package"),
                    os.environ["MESHSYNC_BUILD_ROOT"], str(out), "https://downloads.invalid/x"],
                   check=True, capture_output=True, text=True)
    manifest = yaml.safe_load((out / "meshsync-snapshot.yaml").read_text())
    assert manifest["kind"] == "Plugin" and manifest["metadata"]["name"] == "meshsync-snapshot"
    assert re.fullmatch(r"v\d+\.\d+\.\d+(-.+)?", manifest["spec"]["version"]), manifest
    (platform,) = manifest["spec"]["platforms"]
    archive = out / platform["uri"].rsplit("/", 1)[1]
    assert platform["uri"].startswith("https://downloads.invalid/x/")
    assert platform["sha256"] == hashlib.sha256(archive.read_bytes()).hexdigest()
    install = tmp_path / "install"
    with tarfile.open(archive) as tar:
        tar.extractall(install)  # noqa: S202 - the archive the test just made
    binary = install / platform["bin"]
    links = tmp_path / "krew-bin"
    links.mkdir()
    (links / "kubectl-meshsync_snapshot").symlink_to(binary)
    env = dict(os.environ, PATH=str(links) + os.pathsep + os.environ.get("PATH", ""))
    with Kubesim(pods=10, namespaces=1) as sim:
        run = kubectl("meshsync-snapshot", "--kubeconfig", sim.kubeconfig, "-r", "pod", "-f",
                      str(tmp_path / "snap.yaml"), env=env)
        assert run.returncode == 0, run.stderr
        assert only(snapshot_objects(tmp_path / "snap.yaml"), "Pod") == \
            listed(sim, "pods", "Pod")


SECRET = {
    "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
    "metadata": {"name": "db-password", "namespace": "team-1"},
    "data": {"password": "aHVudGVyMg=="},
}


def secret_data(stdout):
    for doc in yaml.load_all(stdout, Loader=yaml.CSafeLoader):
        if doc and doc["metadata"]["name"] == "db-password":
            return json.loads(doc["data"])
    raise AssertionError("no db-password in the snapshot")


def test_redact_secrets_and_extended(tmp_path):
    with Kubesim(pods=5, namespaces=1) as sim:
        status, body = sim.request("POST", "/api/v1/namespaces/team-1/secrets", SECRET)
        assert status == 201, body
        plain = kubectl("meshsync", "snapshot", "--kubeconfig", sim.kubeconfig, "-r", "secret",
                        "-o", "-", cwd=tmp_path)
        assert plain.returncode == 0, plain.stderr
        assert secret_data(plain.stdout) == SECRET["data"]
        redacted = kubectl("meshsync", "snapshot", "--kubeconfig", sim.kubeconfig, "-r",
                           "secret", "--redact-secrets", "-o", "-", cwd=tmp_path)
        assert redacted.returncode == 0, redacted.stderr
        assert secret_data(redacted.stdout) == {"password": "[REDACTED]"}

        out = tmp_path / "snap.yaml"
        run = kubectl("meshsync", "snapshot", "--kubeconfig", sim.kubeconfig, "-r", "pod",
                      "--extended", "-f", str(out), cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        (extended,) = [p for p in tmp_path.iterdir() if p.name.endswith("-extended.yaml")]
        pods = {v[0] for v in listed(sim, "pods", "Pod").values()}
        # every event with its type: {EventType, Object}
        events = [d for d in yaml.load_all(extended.read_text(), Loader=yaml.CSafeLoader) if d]
        assert {e["EventType"] for e in events} <= {"ADDED", "MODIFIED", "DELETED"}
        assert pods <= {e["Object"]["metadata"]["uid"] for e in events}


def test_context_chooses_the_cluster(tmp_path):
    """A kubeconfig whose current context names an unreachable server: --context picks the
    one that works, and without it the capture fails naming the other."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    with Kubesim(pods=5, namespaces=1) as sim:
        config = yaml.safe_load(open(sim.kubeconfig, encoding="utf-8"))
        good = config["current-context"]
        context = next(c for c in config["contexts"] if c["name"] == good)
        cluster = next(c for c in config["clusters"] if c["name"] == context["context"]["cluster"])
        config["clusters"].append({"name": "dead", "cluster": dict(
            cluster["cluster"], server=f"https://127.0.0.1:{dead}")})
        config["contexts"].append({"name": "dead", "context": dict(context["context"],
                                                                   cluster="dead")})
        config["current-context"] = "dead"
        path = tmp_path / "kubeconfig"
        path.write_text(yaml.safe_dump(config))
        run = kubectl("meshsync", "snapshot", "--kubeconfig", str(path), "--context", good,
                      "-r", "pod", "-f", str(tmp_path / "snap.yaml"))
        assert run.returncode == 0, run.stderr
        assert only(snapshot_objects(tmp_path / "snap.yaml"), "Pod") == \
            listed(sim, "pods", "Pod")
        line = one_line_failure(kubectl("meshsync", "snapshot", "--kubeconfig", str(path),
                                        "-r", "pod", cwd=tmp_path))
        assert f"127.0.0.1:{dead}" in line, line
