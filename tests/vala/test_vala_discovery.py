"""Runs the Vala discovery program (built against the generated VAPI) against the simulator."""

import os
import subprocess

from kubesim import Kubesim

PROGRAM = os.path.join(os.environ.get("G_TEST_BUILDDIR", ""), "vala", "vala-discovery")


def test_vala_discovery():
    assert os.access(PROGRAM, os.X_OK), f"{PROGRAM} was not built"
    with Kubesim() as sim:
        run = subprocess.run([PROGRAM, sim.kubeconfig], capture_output=True, text=True,
                             timeout=60, check=False)
        assert run.returncode == 0, f"{run.stdout}\n{run.stderr}\n{sim.log()}"
        rows = [line.split("\t") for line in run.stdout.splitlines() if "\t" in line]
        table = {(row[0], row[1]): row for row in rows}
        assert table[("v1", "pods")][2:5] == ["Pod", "namespaced", "watchable"]
        assert table[("v1", "namespaces")][2:5] == ["Namespace", "cluster", "watchable"]
        assert table[("apps/v1", "deployments")][2:5] == ["Deployment", "namespaced",
                                                          "watchable"]
        assert "log" in table[("v1", "pods")][5].split(",")


def test_vala_discovery_wrong_token():
    with Kubesim(token="sim-token") as sim:
        with open(sim.kubeconfig, encoding="utf-8") as f:
            text = f.read()
        assert "sim-token" in text
        wrong = sim.kubeconfig + ".wrong"
        with open(wrong, "w", encoding="utf-8") as f:
            f.write(text.replace("sim-token", "not-the-token"))
        run = subprocess.run([PROGRAM, wrong], capture_output=True, text=True, timeout=60,
                             check=False)
        assert run.returncode == 1, run.stdout
        assert "401 Unauthorized" in run.stderr
