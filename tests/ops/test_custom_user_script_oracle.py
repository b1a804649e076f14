"""Issue 17 as a user meets it: an unchanged MXNet script with three custom operators and an
``autograd.Function`` (``custom_user_script.py``), run by MXNet 1.9.1 and by ``ast-hybrid run`` (``import
mxnet`` resolving to ast-hybrid), every result compared: op by op, recorded, a hybridized network trained
three steps (its aux state included), and the Function's block, which ast-hybrid's run hybridizes (MXNet
cannot: compared with MXNet's run of it not hybridized)."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ast_hybrid.testing.oracle import DEFAULT_VENV, venv_python

pytestmark = pytest.mark.oracle

SCRIPT = Path(__file__).with_name("custom_user_script.py")


def _run(cmd, out, *flags):
    done = subprocess.run([*cmd, str(SCRIPT), str(out), *flags], capture_output=True, text=True, timeout=600,
                          cwd=SCRIPT.parent)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stderr, dict(np.load(out))


def test_user_script_matches_mxnet(tmp_path, oracle):       # the oracle fixture: MXNet's venv is there
    _, ref = _run([str(venv_python(DEFAULT_VENV))], tmp_path / "mxnet.npz")
    stderr, got = _run([sys.executable, "-m", "ast_hybrid", "run"], tmp_path / "ours.npz", "hybridize-function")
    assert sorted(got) == sorted(ref) and len(ref) == 17
    for k in ref:
        np.testing.assert_allclose(got[k], ref[k], rtol=1e-5, atol=1e-6, err_msg=k)
    # the numpy op leaves the compiled program: a note at the user's line, not an error
    assert "custom_user_script.py" in stderr and "leaves the compiled program" in stderr
    assert "Traceback" not in stderr
