"""The GPU check (``python -m bench --gpu-check``, bench/gpu_check.py) stays wired: its dry run on the CPU runs
the sections that need no compiled zoo network and writes its report; without ``--dry-run`` and without a GPU
it stops with a message.  Its real run needs a GPU machine (bench/results/gpu/ holds the last report)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args, timeout=300):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-m", "bench", "--gpu-check", *args], cwd=ROOT, capture_output=True,
                          text=True, env=env, timeout=timeout)


def test_dry_run_writes_a_report_of_passing_checks(tmp_path):
    proc = _run("--dry-run", "--only", "contexts", "control_flow", "custom_ops", "launch", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((tmp_path / "gpu.json").read_text())
    assert report["dry_run"] is True
    results = {(c["section"], c["check"]): c["result"] for c in report["checks"]}
    assert {s for s, _ in results} == {"contexts", "control flow", "custom ops", "launch"}
    assert set(results.values()) <= {"pass", "not applicable"}, results
    assert "| contexts | ctx= places | pass |" in (tmp_path / "gpu.md").read_text()


def test_without_a_gpu_it_says_so(tmp_path):
    proc = _run("--out", str(tmp_path), timeout=120)
    assert proc.returncode == 2
    assert "no GPU" in proc.stderr and "--dry-run" in proc.stderr
