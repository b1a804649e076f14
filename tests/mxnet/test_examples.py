"""``examples/train_mnist_style.py`` under ``ast-hybrid run`` prints what MXNet 1.9.1 prints for it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.processes     # each test starts Python processes: not in the quick tier

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "train_mnist_style.py"
NUMBER = re.compile(r"-?\d+\.\d+")


def _epochs(text):
    return [[float(x) for x in NUMBER.findall(line)] for line in text.splitlines() if line.startswith("epoch")]


@pytest.mark.oracle
def test_train_mnist_style_matches_mxnet(oracle, tmp_path):
    from ast_hybrid.testing.oracle import venv_python

    args = ["--epochs", "3"]
    want = subprocess.run([str(venv_python()), str(SCRIPT), *args], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONPATH="", MXNET_ENGINE_TYPE="NaiveEngine", OMP_NUM_THREADS="1"))
    assert want.returncode == 0, want.stderr
    got = subprocess.run([sys.executable, "-m", "ast_hybrid.run", str(SCRIPT), *args], capture_output=True,
                         text=True, timeout=600, cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    ours, theirs = _epochs(got.stdout), _epochs(want.stdout)
    assert len(ours) == len(theirs) == 3
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4)
    assert theirs[-1][-1] > 0.5                     # it learns
