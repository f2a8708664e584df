"""Runs the Vala handler program (a MeshSync.Writer written in Vala) against the simulator
and compares the ADDED events it counted until ready with the simulator's own objects."""

import os
import subprocess
import sys

from kubesim import Kubesim

# the binding tests share the fixed watch set
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gi"))
from watch_set import KINDS, cluster_view, seed_every_kind  # noqa: E402

PROGRAM = os.path.join(os.environ.get("G_TEST_BUILDDIR", ""), "vala", "vala-handler")

def test_vala_writer_counts_every_object():
    assert os.access(PROGRAM, os.X_OK), f"{PROGRAM} was not built"
    with Kubesim(pods=50, namespaces=3) as sim:
        seed_every_kind(sim)
        view = cluster_view(sim)
        run = subprocess.run([PROGRAM, sim.kubeconfig], capture_output=True, text=True,
                             timeout=90, check=False)
        assert run.returncode == 0, f"{run.stdout}\n{run.stderr}\n{sim.log()}"

    lines = run.stdout.splitlines()
    assert lines[-1] == f"added {len(view)}", f"{lines[-1]!r}, cluster has {len(view)}"
    seen = {}
    for line in lines[:-1]:
        _, uid, kind, namespace, name = line.split("\t")
        assert uid not in seen, f"{uid} added twice"
        seen[uid] = (kind, namespace, name)
    assert seen == view
    # every kind of the default watch set, none left out
    assert {kind for kind, _, _ in seen.values()} == KINDS

