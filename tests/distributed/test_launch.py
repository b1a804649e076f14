"""Two processes x four devices over gloo (issue 16): ``ast-hybrid launch -n 2`` of an unchanged MXNet script.

``scripts/mlp_kvstore.py``: each worker trains on its slice of every global batch with
``mx.kv.create('dist_sync')`` and ``trainer.step(global batch)``.  Summed over the workers, the losses and the
final parameters are one process's with ``kvstore='local'``, and that process's are MXNet 1.9.1's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parent / "scripts" / "mlp_kvstore.py"
LAUNCH = [sys.executable, "-m", "ast_hybrid", "launch"]


def _read(prefix, rank):
    with open(f"{prefix}.{rank}.json") as f:
        return json.load(f)


@pytest.fixture(scope="module")
def one_process(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("one") / "r"
    done = subprocess.run([sys.executable, "-m", "ast_hybrid.run", str(SCRIPT), str(prefix), "local"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return _read(prefix, 0)


def test_two_processes_of_four_devices_sum_to_one_process(one_process, tmp_path):
    prefix = tmp_path / "r"
    done = subprocess.run([*LAUNCH, "-n", "2", "--devices-per-process", "4", str(SCRIPT), str(prefix), "dist_sync",
                           "4"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    workers = [_read(prefix, rank) for rank in range(2)]
    assert [w["workers"] for w in workers] == [2, 2] and [w["rank"] for w in workers] == [0, 1]
    np.testing.assert_allclose(np.sum([w["losses"] for w in workers], axis=0), one_process["losses"],
                               rtol=1e-5, atol=1e-5)
    assert not np.allclose(workers[0]["losses"], workers[1]["losses"])       # each its own slice
    for ours, theirs in zip(workers[0]["params"], one_process["params"]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    assert "params" not in workers[1]
    assert os.path.exists(f"{prefix}.0.params") and not os.path.exists(f"{prefix}.1.params")   # process 0 writes
    shown = [line for line in done.stdout.splitlines() if line.startswith("step ")]
    assert len(shown) == 20          # process 0's output only


@pytest.mark.oracle
def test_one_process_local_is_mxnets(oracle, one_process, tmp_path):
    from ast_hybrid.testing.oracle import venv_python

    prefix = tmp_path / "m"
    done = subprocess.run([str(venv_python()), str(SCRIPT), str(prefix), "local"], capture_output=True, text=True,
                          timeout=600, env=dict(os.environ, PYTHONPATH="", MXNET_ENGINE_TYPE="NaiveEngine",
                                                OMP_NUM_THREADS="1"))
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = _read(prefix, 0)
    np.testing.assert_allclose(one_process["losses"], theirs["losses"], rtol=1e-5, atol=1e-5)
    for ours, want in zip(one_process["params"], theirs["params"]):
        np.testing.assert_allclose(ours, want, rtol=1e-5, atol=1e-5)


def test_a_process_that_dies_stops_the_others_with_a_clear_error(tmp_path):
    start = time.monotonic()
    done = subprocess.run([*LAUNCH, "-n", "2", "--timeout", "5", str(SCRIPT), str(tmp_path / "r"), "dist_sync",
                           "1", "2"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 3, done.stderr[-3000:]
    assert "launch: process 1 of 2 failed (exit status 3)" in done.stderr
    # process 0 fails at its next gradient all-reduce saying why, or is stopped after the 5 s it is given
    assert ("PeerLost: process 0: summing the gradients over the 2 processes failed, most likely because another "
            "process has stopped" in done.stderr) or "launch: stopping process 0, still running 5 s" in done.stderr
    assert not (tmp_path / "r.0.json").exists()
    assert time.monotonic() - start < 300


def test_dist_async_is_refused_saying_why():
    from ast_hybrid import gluon
    from ast_hybrid.mxnet import kv

    for make in (lambda: kv.create("dist_async"), lambda: gluon.Trainer([], "sgd", kvstore="dist_async")):
        with pytest.raises(ValueError, match="kvstore='dist_async' is not supported.*Use kvstore='dist_sync'"):
            make()
    with pytest.raises(ValueError, match="unknown kvstore 'dist'; ast-hybrid has 'local', 'device'"):
        gluon.Trainer([], "sgd", kvstore="dist")


def test_launch_refuses_bad_arguments(tmp_path):
    done = subprocess.run([*LAUNCH, "-n", "0", str(SCRIPT)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "must be at least 1" in done.stderr
    done = subprocess.run([*LAUNCH, "-n", "2", str(tmp_path / "missing.py")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and "no such file" in done.stderr


def test_a_single_process_kvstore():
    from ast_hybrid.mxnet import kv, nd

    store = kv.create("dist_sync")
    assert (store.rank, store.num_workers, store.type) == (0, 1, "dist_sync")
    store.barrier()
    store.init("w", nd.ones((2,)))
    store.push("w", [nd.ones((2,)), nd.ones((2,)) * 2])
    out = nd.zeros((2,))
    store.pull("w", out=out)
    assert out.asnumpy().tolist() == [3.0, 3.0]


def test_initialize_after_jax_started_says_where_to_call_it():
    code = ("import jax.numpy as jnp; jnp.ones(1).block_until_ready()\n"
            "from ast_hybrid import distributed\n"
            "distributed.initialize('localhost:1', 2, 0, initialization_timeout=5)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "ast_hybrid.distributed.initialize() must run before anything uses jax" in done.stderr
    assert "call it at the top of the script" in done.stderr


def test_workers_start_from_process_0s_parameters(tmp_path):
    """Unseeded initializers draw differently in each process; MXNet's Trainer broadcasts process 0's values at
    its first step (and kv.init keeps process 0's value), so the workers train one model, not two."""
    prefix = tmp_path / "w"
    done = subprocess.run([*LAUNCH, "-n", "2", "--devices-per-process", "1",
                           str(SCRIPT.parent / "unseeded.py"), str(prefix)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    w0, w1 = (np.load(f"{prefix}.{rank}.npy") for rank in range(2))
    n = 15   # a (3, 5) weight
    assert not np.array_equal(w0[:n], w1[:n])              # the draws did differ
    np.testing.assert_array_equal(w0[n:2 * n], w1[n:2 * n])  # and the trained weights are the same
    np.testing.assert_array_equal(w0[2 * n:], [1.0, 7.0])   # kv.init: process 0's value
    np.testing.assert_array_equal(w1[2 * n:], [1.0, 7.0])


class _Done:
    """A launched process that has already exited with ``code``."""

    def __init__(self, code):
        self.returncode = code

    def poll(self):
        return self.returncode


def test_the_cause_is_reported_not_the_process_that_lost_its_peer(capsys):
    """Both have exited by the time the launcher looks (CI saw this order): process 0 failed at its
    all-reduce because process 1 had stopped; the launcher reports process 1 and returns its status."""
    from ast_hybrid.cli import launch

    assert launch._watch([_Done(launch.EXIT_PEER_LOST), _Done(3)], timeout=5) == 3
    err = capsys.readouterr().err
    assert "launch: process 1 of 2 failed (exit status 3)" in err and "process 0 of 2 failed" not in err
    assert launch._watch([_Done(launch.EXIT_PEER_LOST), _Done(0)], timeout=5) == launch.EXIT_PEER_LOST
    assert launch._watch([_Done(0), _Done(0)], timeout=5) == 0
