# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""The flatpak manifest GNOME Builder opens (build-aux/flatpak): flatpak-builder reads it
(--show-manifest parses and validates it without fetching a runtime, which this machine
cannot), and what it asks of the project exists: the options it passes, the source tree it
points at, the command it runs."""

import json
import os
import re
import subprocess

SRC = os.path.dirname(os.environ["G_TEST_SRCDIR"])
MANIFEST = os.path.join(SRC, "build-aux", "flatpak", "io.meshery.MeshSync.json")


def load():
    with open(MANIFEST, encoding="utf-8") as f:
        return json.load(f)


def meson_options():
    """{name: (type, choices or None)} from meson_options.txt."""
    with open(os.path.join(SRC, "meson_options.txt"), encoding="utf-8") as f:
        text = f.read()
    options = {}
    for m in re.finditer(r"option\('([^']+)',\s*type:\s*'([^']+)'(.*?)\)\n", text, re.S):
        choices = re.search(r"choices:\s*\[([^\]]*)\]", m.group(3))
        options[m.group(1)] = (m.group(2), choices and re.findall(r"'([^']*)'", choices[1]))
    return options


def test_flatpak_builder_accepts_it(tmp_path):
    # run elsewhere: flatpak-builder leaves its state directory where it runs
    result = subprocess.run(["flatpak-builder", "--show-manifest", MANIFEST],
                            capture_output=True, text=True, check=False, cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["id"] == load()["id"]


def test_it_builds_this_tree_with_options_that_exist():
    manifest = load()
    meshsync = manifest["modules"][-1]
    assert meshsync["name"] == "meshsync" and meshsync["buildsystem"] == "meson"
    source = meshsync["sources"][0]
    assert source["type"] == "dir"
    root = os.path.normpath(os.path.join(os.path.dirname(MANIFEST), source["path"]))
    assert os.path.exists(os.path.join(root, "meson.build")) and root == os.path.normpath(SRC)
    options = meson_options()
    for opt in meshsync["config-opts"]:
        name, value = re.fullmatch(r"-D([a-z_]+)=(.*)", opt).groups()
        assert name in options, f"{opt}: no such option"
        kind, _ = options[name]
        if kind == "feature":
            assert value in ("enabled", "disabled", "auto"), opt
        elif kind == "boolean":
            assert value in ("true", "false"), opt
    # the libraries the runtime lacks are built first; the rest are the GNOME SDK's
    assert [m["name"] for m in manifest["modules"][:-1]] == ["nats.c"]
    assert manifest["command"] == "meshsync"
    assert "--share=network" in manifest["finish-args"]
