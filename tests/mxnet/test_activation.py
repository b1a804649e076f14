"""``ast-hybrid run`` and ``python -m ast_hybrid.run``: an MXNet script, unchanged, prints MXNet's numbers;
a real MXNet is never shadowed unless asked; numpy's removed aliases work, with a warning."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.processes     # each test starts Python processes: not in the quick tier

HERE = Path(__file__).parent
SCRIPT = HERE / "scripts" / "train_tiny.py"
AST_HYBRID = Path(sys.executable).parent / "ast-hybrid"
NUMBER = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?")


def _run(cmd, cwd=None, **env):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600, cwd=cwd,
                          env=dict(os.environ, **env))


def _numbers(text):
    """The losses and predictions the script prints."""
    return [float(x) for line in text.splitlines() if line.startswith(("epoch", "predict"))
            for x in NUMBER.findall(line)]


@pytest.mark.oracle
def test_training_script_runs_unchanged_and_prints_mxnets_numbers(oracle, tmp_path):
    from ast_hybrid.testing.oracle import venv_python

    args = ["--epochs", "4", "--lr", "0.05"]
    want = _run([venv_python(), SCRIPT, *args], PYTHONPATH="", MXNET_ENGINE_TYPE="NaiveEngine", OMP_NUM_THREADS="1")
    assert want.returncode == 0, want.stderr
    for cmd in ([AST_HYBRID, "run", SCRIPT, *args], [sys.executable, "-m", "ast_hybrid.run", SCRIPT, *args]):
        got = _run(cmd, cwd=tmp_path)
        assert got.returncode == 0, got.stderr
        assert [re.sub(NUMBER, "#", line) for line in got.stdout.splitlines()] == \
            [re.sub(NUMBER, "#", line) for line in want.stdout.splitlines()]
        assert got.stdout.count("epoch") == 4 and "mxnet 1.9.1 nd-is-F True" in got.stdout
        assert len(_numbers(want.stdout)) == 4 + 6 and np.isfinite(_numbers(want.stdout)).all()
        np.testing.assert_allclose(_numbers(got.stdout), _numbers(want.stdout), rtol=1e-4, atol=1e-5)
        assert got.stderr.count("np.int was removed from numpy") == 1       # the alias: one warning
        assert got.stderr.count("np.float was removed from numpy") == 1


def _fake_mxnet(tmp_path):
    (tmp_path / "mxnet").mkdir()
    (tmp_path / "mxnet" / "__init__.py").write_text("REAL = True\n")
    return str(tmp_path)


def test_install_never_shadows_an_importable_mxnet(tmp_path):
    code = ("import ast_hybrid.mxnet as m\n"
            "try:\n    m.install()\nexcept m._activate.RealMXNetInstalled as e:\n    print('refused:', e)\n"
            "import mxnet\nprint('real' if getattr(mxnet, 'REAL', False) else 'ours')\n")
    done = _run([sys.executable, "-c", code], PYTHONPATH=_fake_mxnet(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "refused: a real mxnet is installed at" in done.stdout and "install(force=True)" in done.stdout
    assert done.stdout.strip().endswith("real")

    forced = _run([sys.executable, "-c", code.replace("m.install()", "m.install(force=True)")],
                  PYTHONPATH=str(tmp_path))
    assert forced.returncode == 0, forced.stderr
    assert "refused" not in forced.stdout and forced.stdout.strip() == "ours"


def test_run_refuses_to_shadow_real_mxnet_without_force(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("import mxnet\nprint(mxnet.__name__)\n")
    env = {"PYTHONPATH": _fake_mxnet(tmp_path)}
    refused = _run([AST_HYBRID, "run", script], **env)
    assert refused.returncode == 2 and "a real mxnet is installed" in refused.stderr and "--force" in refused.stderr
    forced = _run([AST_HYBRID, "run", "--force", script], **env)
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.strip() == "ast_hybrid.mxnet"


def test_run_is_python_for_the_script(tmp_path):
    """``__main__``, ``sys.argv``, ``sys.path[0]`` the script's folder, its exit status, its traceback."""
    (tmp_path / "helper.py").write_text("VALUE = 42\n")
    script = tmp_path / "s.py"
    script.write_text("import sys, helper\nprint(__name__, sys.argv[1:], helper.VALUE)\n"
                      "if sys.argv[1:] == ['fail']:\n    raise KeyError('boom')\nsys.exit(7)\n")
    done = _run([sys.executable, "-m", "ast_hybrid.run", script, "--x", "1"])
    assert done.returncode == 7 and done.stdout.strip() == "__main__ ['--x', '1'] 42"
    failed = _run([AST_HYBRID, "run", script, "fail"])
    assert failed.returncode == 1 and "KeyError: 'boom'" in failed.stderr and str(script) in failed.stderr
    missing = _run([AST_HYBRID, "run", tmp_path / "nope.py"])
    assert missing.returncode == 2 and "no such file" in missing.stderr
