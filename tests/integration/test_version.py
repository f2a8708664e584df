# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""The version every consumer sees names the build: the project's version and the commit the
tree was built from (git describe once there is a tag), never upstream's "Not Set"."""

import os
import re
import subprocess

from meshsync_run import DAEMON

SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def git(*args):
    return subprocess.run(["git", "-C", SOURCE_ROOT, *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def daemon_version():
    out = subprocess.run([DAEMON, "--version"], capture_output=True, text=True,
                         check=True).stdout
    assert out.startswith("meshsync "), out
    return out.split()[1]


def test_version_names_the_commit_built():
    version = daemon_version()
    assert "Not Set" not in version
    head = git("rev-parse", "HEAD")
    tagged = subprocess.run(["git", "-C", SOURCE_ROOT, "describe", "--tags"],
                            capture_output=True, text=True, check=False)
    if tagged.returncode == 0:
        assert version.split("-dirty")[0] == tagged.stdout.strip(), version
        return
    m = re.fullmatch(r"v(\d+\.\d+\.\d+)-(\d+)-g([0-9a-f]{7,})(-dirty)?", version)
    assert m, version
    assert head.startswith(m.group(3)), (version, head)
    assert int(m.group(2)) == int(git("rev-list", "--count", "HEAD")), version

