# Copyright the meshsync authors
# SPDX-License-Identifier: Apache-2.0
"""The man pages against the programs they describe.

Every long option a program's --help (and --help-all, where there are option groups) shows
is in its page; hidden options may be documented or not. The pages have the sections a man
page needs, groff renders them without a warning, the daemon's page names upstream's
single-dash spellings and every variable its --help names, and the systemd unit points at
meshsync(8).
"""

import os
import re
import subprocess

import pytest

MAN_DIR = os.environ["MESHSYNC_MAN_DIR"]
PROGRAMS = {
    "meshsync.8": os.environ["MESHSYNC_DAEMON"],
    "meshsyncctl.1": os.environ["MESHSYNCCTL"],
    "meshsync-kubesim.1": os.environ["MESHSYNC_KUBESIM"],
    # the plugin's options are its snapshot command's
    "kubectl-meshsync.1": [os.environ["MESHSYNC_KUBECTL_PLUGIN"], "snapshot"],
}
SECTIONS = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "ENVIRONMENT", "FILES",
            "EXIT STATUS", "EXAMPLES", "SEE ALSO"]
# GOption's own; documented as -h, --help where it is in a page at all
GOPTION_BUILTIN = {"--help-all"}


def page_text(page):
    """The page's roff with font changes dropped and escaped hyphens plain."""
    with open(os.path.join(MAN_DIR, page), encoding="utf-8") as f:
        roff = f.read()
    roff = re.sub(r"\\f[BIRP]|\\f\(..|\\&|\\%", "", roff)
    return roff.replace("\\-", "-").replace("\\(aq", "'")


def help_text(program, flag):
    env = dict(os.environ, LC_ALL="C.UTF-8")
    env.pop("LANGUAGE", None)
    argv = list(program) if isinstance(program, list) else [program]
    result = subprocess.run(argv + [flag], capture_output=True, text=True, env=env,
                            timeout=30, check=True)
    return result.stdout


def listed_options(program):
    """The long options of --help, and of --help-all when --help offers it."""
    text = help_text(program, "--help")
    if re.search(r"^\s+--help-all\b", text, re.M):
        text += help_text(program, "--help-all")
    options = set()
    for line in text.splitlines():
        match = re.match(r"^\s+(?:-\w, )?(--[A-Za-z][\w-]*)", line)
        if match:
            options.add(match.group(1))
    return options - GOPTION_BUILTIN


def mentions(text, word):
    return re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", text) is not None


def section(text, name):
    match = re.search(r'^\.SH "?' + re.escape(name) + r'"?\n(.*?)(?=^\.SH |\Z)', text,
                      re.M | re.S)
    assert match, f"no {name} section"
    return match.group(1)


@pytest.mark.parametrize("page", sorted(PROGRAMS))
def test_every_listed_option_is_documented(page):
    options = listed_options(PROGRAMS[page])
    assert "--help" in options and len(options) > 1
    text = section(page_text(page), "OPTIONS")
    missing = sorted(o for o in options if not mentions(text, o))
    assert not missing, f"{page} does not document {missing}"


@pytest.mark.parametrize("page", sorted(PROGRAMS))
def test_sections(page):
    text = page_text(page)
    headings = re.findall(r'^\.SH "?([^"\n]+)"?$', text, re.M)
    assert [h for h in headings if h in SECTIONS] == [s for s in SECTIONS if s in headings]
    missing = [s for s in SECTIONS if s not in headings]
    assert not missing, f"{page} lacks {missing}"
    status = section(text, "EXIT STATUS")
    for code in ("0", "1", "2"):
        assert re.search(r"^\.B " + code + r"$", status, re.M), f"{page}: exit status {code}"


@pytest.mark.parametrize("page", sorted(PROGRAMS))
def test_groff_renders_without_warnings(page):
    result = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z",
                             os.path.join(MAN_DIR, page)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and result.stderr == ""


def test_daemon_page_has_upstream_spellings_and_variables():
    text = page_text("meshsync.8")
    options = section(text, "OPTIONS")
    for flag in ("-output", "-outputFile", "-outputExtended", "-outputNamespaces",
                 "-outputResources", "-stopAfter", "-broker-url"):
        assert mentions(options, flag), flag
    summary = help_text(PROGRAMS["meshsync.8"], "--help").split("Help Options:")[0]
    variables = set(re.findall(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\bDEBUG\b|\bKUBECONFIG\b",
                               summary.split("Environment:")[1]))
    environment = section(text, "ENVIRONMENT")
    assert "BROKER_URL" in variables and "NATS_TOKEN" in variables
    for name in sorted(variables | {"NOTIFY_SOCKET", "MESHSYNC_FLAGS", "MESHSYNC_LOCALEDIR"}):
        assert mentions(environment, name), name
    files = section(text, "FILES")
    for name in ("/etc/meshsync/meshsync.env", "meshsync.service", "io.meshery.MeshSync1.conf",
                 "meshery-cluster-snapshot-YYYYMMDD-NN.yaml"):
        assert name in files, name


def test_unit_points_at_the_daemon_page():
    with open(os.environ["MESHSYNC_UNIT"], encoding="utf-8") as f:
        lines = [l for l in f if l.startswith("Documentation=")]
    assert lines and "man:meshsync(8)" in lines[0].split("=", 1)[1].split()
