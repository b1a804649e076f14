"""The examples run and say what they claim; a training loop through ``functional`` lowers the loss."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp

from ast_hybrid.gluon import nn
from ast_hybrid.gluon.functional import functional
import pytest

pytestmark = pytest.mark.processes     # each test starts Python processes: not in the quick tier

ROOT = Path(__file__).resolve().parents[2]


def _load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_sgd_through_functional_lowers_the_loss():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(16, activation="relu"), nn.Dense(2))
    net.initialize()
    x = jax.random.normal(jax.random.PRNGKey(0), (64, 8))
    y = (x[:, 0] > 0).astype(jnp.int32)
    apply_fn, params = functional(net, x[:1])

    def loss(p):
        logits = apply_fn(p, x)
        return -jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1).mean()

    step = jax.jit(lambda p: jax.tree_util.tree_map(lambda a, g: a - 0.5 * g, p, jax.grad(loss)(p)))
    first = float(loss(params))
    for _ in range(50):
        params = step(params)
    assert float(loss(params)) < 0.5 * first


def test_train_optax_example():
    mod = _load(ROOT / "examples" / "train_optax.py")
    losses, acc = mod.main(steps=15)
    assert losses[-1] < 0.5 * losses[0] and acc > 0.9


def test_chapter_example(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "chapter_mlp.py")], cwd=tmp_path,
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "same results before/after hybridize: True" in done.stdout
    assert "reloaded program gives the same output: True" in done.stdout
    assert (tmp_path / "my_mlp-0000.params").exists()
    assert '"nodes"' in (tmp_path / "my_mlp-symbol.json").read_text()         # MXNet's graph JSON


def test_hybridnet_print_example_prints_every_call():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "hybridnet_print.py")], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    after = done.stdout.split("--- second hybridized call")[1]
    assert "hidden:" in after and "Traced" not in after
