"""The container image without a container engine: scripts/runtime-tree builds the runtime
stage's tree from the built daemon, and the tree is run as the image runs it, under chroot as
the image's numeric user, from its working directory, with the environment the Containerfile
sets. The Containerfile is read to check that its runtime stage is exactly that tree, and the
Deployment's liveness command and user are the ones run here.
"""

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys

import pytest
import yaml

from kubesim import Kubesim

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from meshsync_run import TIMEOUT, cluster_view, free_port, read_documents  # noqa: E402

SOURCE_ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
RUNTIME_TREE = os.path.join(SOURCE_ROOT, "scripts", "runtime-tree")
CONTAINERFILE = os.path.join(SOURCE_ROOT, "Containerfile")
DEPLOYMENT = os.path.join(SOURCE_ROOT, "data", "kubernetes", "20-deployment.yaml")
DAEMON = os.environ["MESHSYNC_DAEMON"]
CHROOT = shutil.which("chroot", path="/usr/sbin:/usr/bin:/sbin:/bin")
UNSHARE = shutil.which("unshare", path="/usr/bin:/bin:/usr/sbin")


def containerfile_stages():
    """[(FROM line, [(instruction, arguments)])] of the Containerfile, continuation lines
    joined and comments left out."""
    stages, logical = [], ""
    with open(CONTAINERFILE, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not logical and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if line.endswith("\\"):
                logical += line[:-1] + " "
                continue
            logical += line
            word, _, rest = logical.strip().partition(" ")
            logical = ""
            if word.upper() == "FROM":
                stages.append((rest.strip(), []))
            else:
                stages[-1][1].append((word.upper(), rest.strip()))
    return stages


def runtime_stage():
    """The last stage's instructions as a dict (the last value of each) and its COPY lines."""
    base, instructions = containerfile_stages()[-1]
    values = {word: rest for word, rest in instructions}
    env = dict(rest.split("=", 1) for word, rest in instructions if word == "ENV")
    copies = [rest for word, rest in instructions if word == "COPY"]
    return base, values, env, copies


def deployment_container():
    with open(DEPLOYMENT, encoding="utf-8") as f:
        deployment = yaml.safe_load(f)
    pod = deployment["spec"]["template"]["spec"]
    return pod, pod["containers"][0]


def image_user():
    _, values, _, _ = runtime_stage()
    uid, _, gid = values["USER"].partition(":")
    return int(uid), int(gid or uid)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("image") / "root")
    uid, _ = image_user()
    proc = subprocess.run([sys.executable, RUNTIME_TREE, "--binary", DAEMON, "--uid", str(uid),
                           root], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return root


def chroot_argv(root, argv):
    """@argv run in @root as the image's user, with the image's environment only (env -i), from
    its working directory: chroot changes to the new root's /, which is the WORKDIR (checked
    below)."""
    uid, gid = image_user()
    _, _, env, _ = runtime_stage()
    return (["env", "-i"] + [f"{k}={v}" for k, v in env.items()] +
            [CHROOT, f"--userspec={uid}:{gid}", root] + list(argv))


def test_runtime_stage_is_the_tree_and_what_the_operator_runs():
    stages = containerfile_stages()
    assert len(stages) >= 2, "a build stage and a runtime stage"
    build_from, build = stages[0]
    assert "debian:bookworm" in build_from or "debian:12" in build_from, build_from
    build_runs = " ".join(rest for word, rest in build if word == "RUN")
    assert "meson setup" in build_runs and "ninja" in build_runs
    assert "scripts/runtime-tree" in build_runs and " /runtime" in build_runs, build_runs

    base, values, env, copies = runtime_stage()
    assert base == "scratch", "nothing but the tree in the runtime stage"
    assert copies == ["--from=build /runtime/ /"], copies
    uid, gid = image_user()
    assert uid != 0 and gid != 0
    assert values["WORKDIR"] == "/", "chroot starts the tests in /: the same directory"
    assert values["EXPOSE"] == "11000"
    assert json.loads(values["ENTRYPOINT"]) == ["./meshery-meshsync"]
    assert env.get("LANG") == "C.UTF-8"

    pod, container = deployment_container()
    assert container["command"] == ["./meshery-meshsync"]
    assert pod["securityContext"]["runAsUser"] == uid
    assert container["securityContext"]["runAsUser"] == uid


def test_tree_holds_the_binary_libraries_certificates_and_user(tree):
    uid, gid = image_user()
    binary = os.path.join(tree, "meshery-meshsync")
    assert stat.S_ISREG(os.lstat(binary).st_mode) and os.access(binary, os.X_OK)
    assert os.readlink(os.path.join(tree, "meshsync")) == "meshery-meshsync"
    with open(os.path.join(tree, "etc", "passwd"), encoding="utf-8") as f:
        users = [line.split(":") for line in f.read().splitlines()]
    assert any(u[2] == str(uid) and u[3] == str(gid) for u in users), users
    assert os.path.getsize(os.path.join(tree, "etc/ssl/certs/ca-certificates.crt")) > 0
    assert stat.S_IMODE(os.stat(os.path.join(tree, "tmp")).st_mode) == 0o1777
    modules = [os.path.join(d, f) for d, _, files in os.walk(tree) for f in files
               if d.endswith("gio/modules")]
    assert sorted(os.path.basename(m) for m in modules) == ["giomodule.cache",
                                                            "libgiognutls.so"]
    # a host path would have leaked into the image: nothing links out of the tree but
    # absolute links that resolve inside it
    for d, dirs, files in os.walk(tree):
        for name in dirs + files:
            path = os.path.join(d, name)
            if os.path.islink(path):
                target = os.readlink(path)
                inside = (os.path.join(tree, target.lstrip("/")) if target.startswith("/")
                          else os.path.join(d, target))
                assert os.path.lexists(inside), f"{path} -> {target} dangles in the tree"


def test_help_and_the_liveness_command_exit_zero_as_the_image_user(tree):
    proc = subprocess.run(chroot_argv(tree, ["./meshery-meshsync", "-h"]), capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "Usage" in proc.stdout and "--stop-after-sync" in proc.stdout

    _, container = deployment_container()
    probe = container["livenessProbe"]["exec"]["command"]
    proc = subprocess.run(chroot_argv(tree, probe), capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, (probe, proc.stderr)

    proc = subprocess.run(chroot_argv(tree, ["./meshsync", "--version"]), capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0 and proc.stdout.startswith("meshsync "), proc


SNAPSHOT = "tmp/snapshot.yaml"


def test_file_mode_sync_under_a_read_only_root(tree, tmp_path):
    """A one-shot snapshot over TLS with a bearer token, as the image's user, with the root
    read-only and only /tmp writable (readOnlyRootFilesystem with an emptyDir on /tmp)."""
    uid, _ = image_user()
    out = tmp_path / "tmp"
    out.mkdir()
    os.chmod(out, 0o1777)
    with Kubesim(pods=20, namespaces=2) as sim:
        view = cluster_view(sim)
        shutil.copy(sim.kubeconfig, os.path.join(tree, "kubeconfig"))
        os.chmod(os.path.join(tree, "kubeconfig"), 0o644)
        # relative to the image's working directory, whose tmp/ is the one writable mount
        daemon = ["./meshery-meshsync", "-output", "file", "-outputFile", SNAPSHOT,
                  "--stop-after-sync", "--kubeconfig", "/kubeconfig",
                  "--health-port", str(free_port()), "--health-address", "127.0.0.1"]
        # a private mount namespace: the read-only bind of the tree and its /tmp go with it
        script = ('mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && '
                  'mount --bind "$2" "$1/tmp" && shift 2 && exec "$@"')
        argv = [UNSHARE, "--mount", "sh", "-c", script, "sh", tree, str(out)] + \
            chroot_argv(tree, daemon)
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT,
                              check=False)
        assert proc.returncode == 0, f"{shlex.join(argv)}\n{proc.stdout}\n{proc.stderr}"
        os.unlink(os.path.join(tree, "kubeconfig"))

    snapshot = out / "snapshot.yaml"
    assert os.stat(snapshot).st_uid == uid, "written by the image's user"
    documents = read_documents(str(snapshot))
    assert {doc["metadata"]["uid"] for doc in documents} == set(view)
    assert "snapshot %s: %d documents written" % (SNAPSHOT, len(documents)) in proc.stderr
