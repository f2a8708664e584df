# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""A C and a Vala program built against libmeshsync the way a third party builds them, with
pkg-config (and the VAPI) only: once against the build tree (meson-uninstalled, as GNOME
Builder or `meson devenv` sees it) and once against a `meson install --destdir` tree. Both
must compile with the headers included as <libmeshsync/meshsync.h> and run."""

import json
import os
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ["MESHSYNC_BUILD_ROOT"]
EXPECTED_SERVER = "https://127.0.0.1:6443"


def build_options():
    out = subprocess.run(["meson", "introspect", BUILD, "--buildoptions"], check=True,
                         capture_output=True, text=True).stdout
    return {o["name"]: o["value"] for o in json.loads(out)}


def version():
    """The build's version (meshsync_get_version()), as the build wrote it."""
    with open(os.path.join(BUILD, "src", "libmeshsync", "meshsync-build-version.h"),
              encoding="utf-8") as header:
        return re.search(r'MESHSYNC_BUILD_VERSION "([^"]+)"', header.read()).group(1)


def compile_and_run(tmp_path, env, vapidir, libdir):
    env = dict(os.environ, **env)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "meshsync-1"], env=env,
                           check=True, capture_output=True, text=True).stdout.split()
    c_prog = str(tmp_path / "consumer-c")
    subprocess.run(["cc", "-Wall", "-Werror", os.path.join(HERE, "consumer.c"), "-o", c_prog]
                   + flags, env=env, check=True)
    vala_prog = str(tmp_path / "consumer-vala")
    subprocess.run(["valac", "--vapidir", vapidir, "--pkg", "meshsync-1", "--pkg", "gio-2.0",
                    "-X", "-w", "-d", str(tmp_path), "-o", vala_prog,
                    os.path.join(HERE, "consumer.vala")], env=env, check=True,
                   cwd=str(tmp_path))
    run_env = dict(env, LD_LIBRARY_PATH=libdir)
    for prog in (c_prog, vala_prog):
        out = subprocess.run([prog], env=run_env, check=True, capture_output=True,
                             text=True).stdout
        assert out == f"{version()} {EXPECTED_SERVER}\n", (prog, out)


def test_against_the_build_tree(tmp_path):
    compile_and_run(tmp_path,
                    {"PKG_CONFIG_PATH": os.path.join(BUILD, "meson-uninstalled")},
                    os.path.join(BUILD, "src", "libmeshsync"),
                    os.path.join(BUILD, "src", "libmeshsync"))


def test_against_an_installed_tree(tmp_path):
    dest = tmp_path / "dest"
    subprocess.run(["meson", "install", "-C", BUILD, "--no-rebuild", "--quiet",
                    "--destdir", str(dest)], check=True, capture_output=True)
    options = build_options()
    prefix = options["prefix"].lstrip("/")
    libdir = dest / prefix / options["libdir"]
    installed_pc = (libdir / "pkgconfig" / "meshsync-1.pc").read_text(encoding="utf-8")
    # relocated as a package manager would unpack it: only the prefix line changes, so the
    # include and library directories are the installed file's own
    assert f"prefix={options['prefix']}\n" in installed_pc, installed_pc
    pcdir = tmp_path / "pkgconfig"
    pcdir.mkdir()
    (pcdir / "meshsync-1.pc").write_text(
        installed_pc.replace(f"prefix={options['prefix']}\n", f"prefix={dest / prefix}\n", 1),
        encoding="utf-8")
    compile_and_run(tmp_path, {"PKG_CONFIG_PATH": str(pcdir)},
                    str(dest / prefix / "share" / "vala" / "vapi"), str(libdir))


def test_devenv_sets_the_library_and_typelib_paths():
    out = subprocess.run(["meson", "devenv", "-C", BUILD, "--dump"], check=True,
                         capture_output=True, text=True).stdout
    lib = os.path.join(BUILD, "src", "libmeshsync")
    assert f'GI_TYPELIB_PATH="{lib}' in out, out
    assert f'LD_LIBRARY_PATH="{lib}' in out, out
    # and what it sets is enough for Python to find the bindings
    env = {k: v for k, v in os.environ.items()
           if k not in ("GI_TYPELIB_PATH", "LD_LIBRARY_PATH")}
    got = subprocess.run(["meson", "devenv", "-C", BUILD, "/usr/bin/python3", "-c",
                          "import gi; gi.require_version('MeshSync', '1.0'); "
                          "from gi.repository import MeshSync; print(MeshSync.get_version())"],
                         env=env, check=True, capture_output=True, text=True).stdout
    assert got.strip() == version()
