"""What the daemon logs and where: --log-format=json lines a collector parses, --log-level,
--verbose for meshsync's own domains only, DEBUG=true, and stdout left to what was asked for
(--list-resources prints its table there and nothing else).

Each run is a one-shot (--stop-after-sync or --list-resources) whose stdout and stderr are
read apart after it exited, except the progress case, whose line is itself what it checks.
"""

import json
import re
import subprocess

from kubesim import Kubesim
from meshsync_run import DAEMON, HEALTH_FLAGS, TIMEOUT, Meshsync, daemon_env

SMALL = {"pods": 20, "namespaces": 2}


def run_daemon(tmp_path, sim, *flags, env=None):
    argv = [DAEMON, "-output", "file", "-outputFile", str(tmp_path / "snapshot.yaml"),
            "--stop-after-sync", "--kubeconfig", sim.kubeconfig] + HEALTH_FLAGS + list(flags)
    # health port 0 is "any free port": the test never needs to know it
    environment = daemon_env()
    environment.pop("G_MESSAGES_DEBUG", None)
    environment.pop("DEBUG", None)
    environment.update(env or {})
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          env=environment, timeout=TIMEOUT)
    assert proc.returncode == 0, f"exit {proc.returncode}:\n{proc.stderr}"
    return proc


def test_json_lines_parse_and_carry_fields(tmp_path):
    with Kubesim(**SMALL) as sim:
        proc = run_daemon(tmp_path, sim, "--log-format=json")
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert lines, "nothing logged"
    records = []
    for line in lines:
        record = json.loads(line)
        for key in ("timestamp", "level", "domain", "message"):
            assert isinstance(record.get(key), str), f"{key} missing: {line}"
        assert record["timestamp"].endswith("Z"), line
        assert record["level"] in {"error", "critical", "warning", "notice", "info", "debug"}
        records.append(record)
    synced = [r for r in records if r["message"].startswith("pods.v1.: synced")]
    assert synced, proc.stderr
    assert synced[0]["MESHSYNC_RESOURCE"] == "pods.v1."
    assert synced[0]["domain"] == "MeshSyncEngine"
    assert synced[0]["level"] == "info"
    assert synced[0]["CODE_FILE"].endswith(".c") and synced[0]["CODE_FUNC"]
    # the default level: info, no debug
    assert not [r for r in records if r["level"] == "debug"], proc.stderr
    assert any(r["message"].startswith("initial sync complete") for r in records)


def test_log_level_warning_hides_info(tmp_path):
    with Kubesim(**SMALL) as sim:
        quiet = run_daemon(tmp_path, sim, "--log-level=warning")
    assert "synced" not in quiet.stderr, quiet.stderr
    assert "initial sync complete" not in quiet.stderr, quiet.stderr
    assert quiet.stdout == ""


def test_unknown_log_format_or_level_is_refused(tmp_path):
    for flag, text in (("--log-format=xml", "--log-format must be text or json"),
                       ("--log-level=loud", "--log-level must be error, warning, info or debug")):
        proc = subprocess.run([DAEMON, flag, "--list-resources"], capture_output=True,
                              text=True, timeout=TIMEOUT, env=daemon_env())
        assert proc.returncode == 2, proc.stderr
        assert text in proc.stderr


def domain_of(line):
    """The DOMAIN of "[(prog:pid): ]DOMAIN-LEVEL: time: message"."""
    if line.startswith("("):
        line = line.partition("): ")[2]
    return line.partition("-")[0] if ": " in line else ""


def own_debug_and_noise(stderr):
    lines = stderr.splitlines()
    ours = [line for line in lines if "-DEBUG: " in line
            and domain_of(line).startswith("MeshSync")]
    noise = [line for line in lines if "GSocketClient" in line
             or "GLib-Net" in line or domain_of(line).startswith("GLib")]
    return ours, noise


def test_verbose_shows_meshsync_debug_only(tmp_path):
    with Kubesim(**SMALL) as sim:
        proc = run_daemon(tmp_path, sim, "--verbose")
    ours, noise = own_debug_and_noise(proc.stderr)
    assert ours, proc.stderr
    assert not noise, noise[:5]
    assert proc.stdout == ""


def test_debug_environment_is_verbose(tmp_path):
    for value in ("true", "1", "TRUE"):
        with Kubesim(**SMALL) as sim:
            proc = run_daemon(tmp_path, sim, env={"DEBUG": value})
        ours, noise = own_debug_and_noise(proc.stderr)
        assert ours, f"DEBUG={value}:\n{proc.stderr}"
        assert not noise, noise[:5]


def test_list_resources_verbose_keeps_stdout_to_the_table(tmp_path):
    with Kubesim(**SMALL) as sim:
        plain = subprocess.run([DAEMON, "--list-resources", "--kubeconfig", sim.kubeconfig],
                               capture_output=True, text=True, timeout=TIMEOUT,
                               env=daemon_env())
        verbose = subprocess.run(
            [DAEMON, "--list-resources", "--verbose", "--kubeconfig", sim.kubeconfig],
            capture_output=True, text=True, timeout=TIMEOUT, env=daemon_env())
    assert plain.returncode == 0 and verbose.returncode == 0, verbose.stderr
    assert verbose.stdout == plain.stdout
    assert verbose.stdout.splitlines()[0].split()[0] == "NAME", verbose.stdout[:200]
    # the debug lines went to stderr instead
    assert "-DEBUG: " in verbose.stderr, verbose.stderr
    assert "-DEBUG" not in verbose.stdout


def test_progress_while_a_list_runs(tmp_path):
    """A type whose list does not end says every few seconds how far it got, as a structured
    line a collector can follow by MESHSYNC_RESOURCE."""
    with Kubesim(**SMALL) as sim:
        # the streaming list refused, the paginated one never ends
        sim.arm_fault("watch", code=400, path="/api/v1/pods")
        sim.arm_fault("list", fault="endless", rate=20, path="/api/v1/pods")
        with Meshsync(str(tmp_path), sim.kubeconfig, "--log-format=json") as run:
            run.wait_for_line('"message":"listing pods.v1.: ')
            assert run.terminate() == 0, run.log()
            log = run.log()
    progress = [json.loads(line) for line in log.splitlines()
                if '"message":"listing pods.v1.: ' in line]
    record = progress[0]
    assert re.fullmatch(r"listing pods\.v1\.: [0-9,]+ objects so far", record["message"])
    assert record["MESHSYNC_RESOURCE"] == "pods.v1."
    assert record["level"] == "info" and record["domain"] == "MeshSyncEngine"
    # only the type still listing says so
    assert not [line for line in log.splitlines() if '"message":"listing services.v1.' in line]
