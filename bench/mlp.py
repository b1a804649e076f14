"""The chapter's MLP (512 -> 256 -> 128 -> 2): ours hybridized vs hand-written jax.jit vs MXNet 1.9.1.

    python -m bench.mlp [--calls N] [--no-mxnet]      (python -m bench runs it with every other scenario)

"ours" is called with an NDArray (``nd.array``), as Gluon code does, and returns one; "ours(jax in)"
with a jax array.  MXNet runs ``hybridize(static_alloc=True, static_shape=True)`` in an oracle
subprocess as a user runs it (its threaded engine, OpenMP on every core: the engine overlaps Python with
compute) and is timed inside that process, its rounds interleaved with ours (``bench/harness.py``).
Times are medians of 9 rounds in microseconds per call; the ratios are the point (the machine is noisy:
two runs differ by up to 1.5x, compare only numbers from one run).
"""

from __future__ import annotations

import argparse

import jax
import numpy as np
from jax import lax

from ast_hybrid import nd
from ast_hybrid.gluon import nn
from bench import harness

BATCHES = (1, 64, 1024)

MX_SETUP = """
net = gluon.nn.HybridSequential()
net.add(gluon.nn.Dense(256, activation='relu'), gluon.nn.Dense(128, activation='relu'), gluon.nn.Dense(2))
net.initialize()
net.hybridize(static_alloc=True, static_shape=True)
x = nd.array(inp['x'])
for _ in range(200): net(x)
nd.waitall()
mx._bench = net, x
"""

MX_TIME = """
import time
net, x = mx._bench
n = int(inp['n'])
w, t = float(inp['warm']), time.perf_counter()
while True:                        # untimed calls for harness.WARM_S, as ours
    net(x).wait_to_read()
    if time.perf_counter() - t >= w: break
t = time.perf_counter()
for _ in range(n): y = net(x)
nd.waitall()
meta['us'] = (time.perf_counter() - t) / n * 1e6
"""


def _net():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(256, activation="relu"), nn.Dense(128, activation="relu"), nn.Dense(2))
    net.initialize()
    return net


def _hand(net):
    params = tuple(jax.numpy.asarray(p.data()) for p in net.collect_params().values())
    dims = (((1,), (1,)), ((), ()))

    @jax.jit
    def f(p, x):
        w1, b1, w2, b2, w3, b3 = p
        h = jax.nn.relu(lax.dot_general(x, w1, dims) + b1)
        h = jax.nn.relu(lax.dot_general(h, w2, dims) + b2)
        return lax.dot_general(h, w3, dims) + b3

    return lambda x: f(params, x)


def scenario(report, mx=None, quick=False, calls=1000, batches=BATCHES):
    """The chapter's MLP at each batch: ours called with an NDArray (as Gluon code does) and with a jax array,
    hand-written ``jax.jit``, MXNet static_alloc (``mx``: an oracle, or None), in microseconds per call."""
    for b in batches:
        n = max(20, calls // (1 if b == 1 else 4 if b == 64 else 20) // (4 if quick else 1))
        x = np.random.default_rng(0).standard_normal((b, 512)).astype("float32")
        net = _net()
        net(x)
        hand = _hand(net)
        net.hybridize()
        np.testing.assert_allclose(np.asarray(net(x)), np.asarray(hand(x)), rtol=1e-4, atol=1e-5)
        xj = jax.numpy.asarray(x)
        contenders = {harness.OURS: harness.local(net, nd.array(x)), "ours(jax in)": harness.local(net, xj),
                      harness.JIT: harness.local(hand, xj)}
        if mx is not None:
            mx.run(MX_SETUP, x=x)
            contenders[harness.MXNET] = harness.remote(mx, MX_TIME, "us", 1e-6)
        t = harness.interleave(contenders, n, rounds=5 if quick else 9)
        report.add("MLP 512-256-128-2", f"batch {b}", "us", {k: v * 1e6 for k, v in t.items()})


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--no-mxnet", action="store_true")
    args = ap.parse_args(argv)
    with harness.mxnet_oracle(not args.no_mxnet, harness.Report()) as mx:
        scenario(harness.Report(), mx, calls=args.calls)


if __name__ == "__main__":
    main()
