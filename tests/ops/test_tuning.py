"""xla/tuning.py: a convolving predict program answers with the program as traced, and the channel-last one is
built, timed and swapped in over the next calls (issue 31); plans, their jobs and their failures."""

import subprocess
import sys
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from ast_hybrid.xla import program, tuning


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AST_HYBRID_COMPILE_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("AST_HYBRID_CONV_TUNE", "AST_HYBRID_CONV_LOWERING", "AST_HYBRID_HOIST", tuning.ENV):
        monkeypatch.delenv(name, raising=False)


def _net(leaves, x):
    w1, b, w2 = leaves
    y = lax.conv_general_dilated(x, w1, (1, 1), [(1, 1), (1, 1)], dimension_numbers=("NCHW", "OIHW", "NCHW"))
    y = jax.nn.relu(y + b[None, :, None, None])
    y = lax.conv_general_dilated(y, w2, (2, 2), [(1, 1), (1, 1)], dimension_numbers=("NCHW", "OIHW", "NCHW"))
    return y.mean(axis=(2, 3))


def _args():
    r = np.random.RandomState(0)
    leaves = tuple(jnp.asarray(r.randn(*s).astype("f4") * 0.3) for s in ((8, 3, 3, 3), (8,), (16, 8, 3, 3)))
    return leaves, jnp.asarray(r.randn(2, 3, 12, 12).astype("f4"))


def test_the_first_call_runs_the_program_as_traced_and_the_calls_alone_finish_the_tuning():
    leaves, x = _args()
    want = np.asarray(jax.jit(_net)(leaves, x))
    prog = program.Program(_net)
    first = np.asarray(prog(leaves, x))
    (tun,) = prog.table.values()
    assert isinstance(tun, tuning.Tuning) and tun.pending
    assert not isinstance(tun.current, program.Executable)     # XLA's own lowering, not channel-last
    np.testing.assert_allclose(first, want, rtol=1e-5, atol=1e-5)
    for calls in range(20000):
        np.testing.assert_allclose(np.asarray(prog(leaves, x)), want, rtol=1e-5, atol=1e-5)
        if not tun.pending:
            break
    assert not tun.pending and calls > 0
    assert isinstance(tun.current, program.Executable)          # the channel-last program swapped in
    assert tun.current.prepare is not None      # its kernels transposed once, not per call


def test_finish_ends_the_tuning_now_and_first_does_it_before_the_first_call(monkeypatch):
    leaves, x = _args()
    prog = program.Program(_net)
    prog(leaves, x)
    (tun,) = prog.table.values()
    assert isinstance(tuning.finish_all(prog) or tun.current, program.Executable) and not tun.pending
    monkeypatch.setenv(tuning.ENV, "first")
    prog = program.Program(_net)
    prog(leaves, x)
    (exe,) = prog.table.values()
    assert isinstance(exe, program.Executable)


def test_a_program_that_does_not_convolve_is_compiled_at_once():
    prog = program.Program(lambda leaves, x: jnp.tanh(x @ leaves[0]))
    prog((jnp.ones((3, 2)),), jnp.ones((4, 3)))
    (exe,) = prog.table.values()
    assert not isinstance(exe, tuning.Tuning)


def _plan(log, fail_job=False, catch=False):
    log.append("started")
    try:
        got = yield tuning.Job(lambda: 1 / 0 if fail_job else "compiled")
    except ZeroDivisionError:
        if not catch:
            raise
        got = "caught"
    log.append(got)
    yield tuning.Swap("swapped")
    yield tuning.SLICE
    log.append("timed")
    return "kept"


class _Fake:
    def __init__(self, name):
        self.name = name

    def __call__(self, leaves, *xs):
        return self.name


def _drive(tun, calls=200):
    outs = []
    for _ in range(calls):
        outs.append(tun(None))
        if tun._thread is not None:
            tun._thread.join()
        if not tun.pending:
            break
    return outs


def test_a_plan_runs_its_jobs_off_the_calling_thread_and_its_slices_between_calls(monkeypatch):
    monkeypatch.setattr(tuning, "BUDGET", 0.0)      # each call resumes the plan for one slice

    def plan():
        where = [threading.current_thread().name]
        where.append((yield tuning.Job(lambda: threading.current_thread().name)))
        yield tuning.Swap(_Fake("tuned"))
        yield tuning.SLICE
        where.append(threading.current_thread().name)
        return where

    kept = []
    tun = tuning.Tuning(_Fake("quick"), plan(), on_final=kept.append)
    outs = _drive(tun)
    me = threading.current_thread().name
    assert kept == [[me, tuning.THREAD_NAME, me]] and tun.current == kept[0]
    assert outs == ["quick", "quick", "tuned"]      # a call starts the job, the next swaps, the next runs it


def test_a_failed_job_is_thrown_into_its_plan():
    log = []
    tun = tuning.Tuning(_Fake("quick"), _plan(log, fail_job=True, catch=True))
    _drive(tun)
    assert log == ["started", "caught", "timed"] and tun.current == "kept"
    log = []
    tun = tuning.Tuning(_Fake("quick"), _plan(log, fail_job=True))
    outs = _drive(tun)
    assert log == ["started"] and not tun.pending and tun.current.name == "quick"     # dropped; the program runs
    assert set(outs) == {"quick"}
    log = []
    assert tuning.run_now(_plan(log, fail_job=True, catch=True)) == "kept" and log == ["started", "caught", "timed"]


def test_a_job_sees_the_calling_threads_jax_settings():
    def plan():
        return (yield tuning.Job(lambda: (jax.config.jax_enable_x64, threading.current_thread().name)))
    with jax.enable_x64(True):
        tun = tuning.Tuning(_Fake("quick"), plan())
    _drive(tun)
    assert tun.current == (True, tuning.THREAD_NAME)


def test_a_process_that_exits_while_a_job_compiles_exits_cleanly(tmp_path):
    script = (
        "import jax, jax.numpy as jnp, numpy as np\n"
        "from jax import lax\n"
        "from ast_hybrid.xla import program\n"
        "def f(leaves, x):\n"
        "    return lax.conv_general_dilated(x, leaves[0], (1, 1), [(1, 1)] * 2).sum()\n"
        "p = program.Program(f)\n"
        "print(float(p((jnp.ones((64, 32, 3, 3)),), jnp.ones((1, 32, 64, 64)))))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env={"AST_HYBRID_COMPILE_CACHE_DIR": str(tmp_path / "c"), "JAX_PLATFORMS": "cpu",
                              "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert float(out.stdout.strip()) > 0
