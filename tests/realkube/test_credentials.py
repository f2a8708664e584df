# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""Credentials a real API server checks: a kubeconfig whose user is an exec credential plugin
(client.authentication.k8s.io/v1, as cloud providers ship them) gets meshsync through the
real server's token authentication, and a plugin whose token the server refuses makes a
one-shot run exit 1 with the server's reason."""

import stat
import subprocess

import yaml

from realkube_run import start_realkube
from meshsync_run import DAEMON, HEALTH_FLAGS, TIMEOUT, daemon_env, read_documents


def plugin_kubeconfig(cluster, tmp_path, token):
    """The cluster's kubeconfig with its user replaced by an exec plugin printing @token."""
    plugin = tmp_path / "credential-plugin.sh"
    plugin.write_text(
        "#!/bin/sh\n"
        "# an ExecCredential on stdout, as client-go's exec plugins write it\n"
        "[ \"$KUBERNETES_EXEC_INFO\" ] || { echo 'no KUBERNETES_EXEC_INFO' >&2; exit 1; }\n"
        "cat <<EOF\n"
        '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",'
        '"status":{"token":"' + token + '",'
        '"expirationTimestamp":"2099-01-01T00:00:00Z"}}\n'
        "EOF\n")
    plugin.chmod(plugin.stat().st_mode | stat.S_IXUSR)
    with open(cluster.kubeconfig, encoding="utf-8") as f:
        config = yaml.safe_load(f)
    config["users"][0]["user"] = {"exec": {
        "apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin),
        "interactiveMode": "Never"}}
    path = tmp_path / "plugin.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def one_shot(kubeconfig, tmp_path):
    snapshot = tmp_path / "snapshot.yaml"
    run = subprocess.run([DAEMON, "-output", "file", "-outputFile", str(snapshot),
                          "--kubeconfig", kubeconfig, "--stop-after-sync", *HEALTH_FLAGS],
                         capture_output=True, text=True, timeout=TIMEOUT, env=daemon_env())
    return run, snapshot


def test_exec_plugin_token_is_accepted_and_refused(tmp_path):
    with start_realkube() as cluster:
        namespaces = {n["metadata"]["uid"] for n in cluster.get_json("namespaces")["items"]}

        good = tmp_path / "good"
        good.mkdir()
        run, snapshot = one_shot(plugin_kubeconfig(cluster, good, cluster.token), good)
        assert run.returncode == 0, run.stderr
        seen = {d["metadata"]["uid"] for d in read_documents(str(snapshot))
                if d and d.get("kind") == "Namespace"}
        assert seen == namespaces

        bad = tmp_path / "bad"
        bad.mkdir()
        run, _ = one_shot(plugin_kubeconfig(cluster, bad, "not-a-token-the-server-knows"), bad)
        assert run.returncode == 1, run.stderr
        # one line that names the request and the server's answer
        assert any(line.startswith("meshsync: ") and "401 Unauthorized" in line
                   for line in run.stderr.splitlines()), run.stderr
