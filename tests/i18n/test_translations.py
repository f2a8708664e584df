# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""The zh_CN translation, read from the build tree (MESHSYNC_LOCALEDIR names it).

LANGUAGE picks the catalogue; glibc applies it in any locale but plain C, and C.UTF-8 is
enough. The daemon's --help and two of its error paths (its own usage error, and a library
error through the daemon), meshsyncctl's usage error, and a library error raised in Python
(the library binds its text domain itself) come out in Simplified Chinese; the catalogue
passes `msgfmt --check` and translates every message the sources mark.
"""

import os
import subprocess
import sys
import tempfile

DAEMON = os.environ["MESHSYNC_DAEMON"]
MESHSYNCCTL = os.environ["MESHSYNCCTL"]
PO = os.environ["MESHSYNC_ZH_CN_PO"]
SOURCE_ROOT = os.environ["MESHSYNC_SOURCE_ROOT"]


def chinese_env(**extra):
    env = dict(os.environ, LANGUAGE="zh_CN", LC_ALL="C.UTF-8",
               MESHSYNC_LOCALEDIR=os.environ["MESHSYNC_BUILD_LOCALEDIR"])
    for name in ("BROKER_URL", "KUBECONFIG", "KUBERNETES_SERVICE_HOST"):
        env.pop(name, None)
    env.update(extra)
    return env


def run(argv, **extra):
    return subprocess.run(argv, capture_output=True, text=True, env=chinese_env(**extra),
                          timeout=60)


def test_daemon_help():
    result = run([DAEMON, "--help"])
    assert result.returncode == 0
    assert "使 Meshery 与 Kubernetes 集群的状态保持同步。" in result.stdout
    assert "打印版本号后退出" in result.stdout
    assert "Print the version and exit" not in result.stdout


def test_daemon_usage_error():
    result = run([DAEMON, "--output=bogus"])
    assert result.returncode == 2
    assert result.stderr == 'meshsync: 不支持的输出模式 "bogus"，支持的列表为 [broker, file]\n'


def test_library_error_through_the_daemon():
    with tempfile.TemporaryDirectory() as tmp:
        missing = os.path.join(tmp, "kubeconfig")
        result = run([DAEMON, "--list-resources", "--kubeconfig=" + missing])
    assert result.returncode == 1
    assert result.stderr.startswith(f"meshsync: {missing}: 无法读取：")


def test_meshsyncctl_usage_error():
    result = run([MESHSYNCCTL, "bogus"])
    assert result.returncode == 2
    assert result.stderr == ('meshsyncctl：未知命令 "bogus"\n'
                             "运行 'meshsyncctl --help' 查看命令。\n")


def test_library_binds_its_domain_in_python():
    script = """
import locale, gi
locale.setlocale(locale.LC_ALL, "")
gi.require_version("MeshSync", "1.0")
from gi.repository import GLib, MeshSync
try:
    MeshSync.KubeConfig.load("/nonexistent/kubeconfig", None)
except GLib.Error as error:
    print(error.message)
"""
    result = run([sys.executable, "-c", script])
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("/nonexistent/kubeconfig: 无法读取：")


def test_msgfmt_check():
    result = subprocess.run([os.environ["MSGFMT"], "--check", "--statistics", "-o", os.devnull,
                             PO], capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))
    assert result.returncode == 0, result.stderr
    # "N translated messages." and nothing fuzzy or untranslated
    assert "fuzzy" not in result.stderr and "untranslated" not in result.stderr


def test_every_marked_message_is_translated():
    with tempfile.TemporaryDirectory() as tmp:
        pot = os.path.join(tmp, "meshsync.pot")
        subprocess.run([os.environ["XGETTEXT"], "--from-code=UTF-8", "--keyword=_",
                        "--keyword=N_", "--language=C", "-D", SOURCE_ROOT,
                        "-f", os.path.join(SOURCE_ROOT, "po", "POTFILES.in"), "-o", pot],
                       check=True, timeout=60)
        result = subprocess.run([os.environ["MSGCMP"], PO, pot], capture_output=True,
                                text=True, env=dict(os.environ, LC_ALL="C"))
    assert result.returncode == 0, result.stderr
