"""The chapter's MLP (512 -> 256 -> 128 -> 2): ours hybridized vs hand-written jax.jit vs MXNet 1.9.1.

    python bench/mlp.py [--calls N] [--no-mxnet]

"ours" is called with an NDArray (``nd.array``), as Gluon code does, and returns one; "ours(jax)"
with a jax array.  MXNet runs ``hybridize(static_alloc=True, static_shape=True)`` in an oracle
subprocess and is timed inside that process, its repeats interleaved with ours, twice: as a user
runs it (its threaded engine, OpenMP on every core: the engine overlaps Python with compute) and as
the tests' oracle runs it (the synchronous NaiveEngine on one thread).  Times are medians of 9
repeats (the contenders timed in turn, so all see the same noise), in microseconds per call; the
ratios are the point (the machine is noisy: two runs differ by up to 1.5x, compare only numbers from one run).
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax
import numpy as np
from jax import lax

from ast_hybrid import nd
from ast_hybrid.gluon import nn

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
for _ in range(n // 5): net(x)
nd.waitall()
t = time.perf_counter()
for _ in range(n): y = net(x)
nd.waitall()
meta['us'] = (time.perf_counter() - t) / n * 1e6
"""


def _ready(y):
    return jax.block_until_ready(y._arr if isinstance(y, nd.NDArray) else y)


def _time(fns, n, repeats=9):
    """Median us per call of each contender, timed round-robin so no contender always goes first and
    all see the same noise.  A contender is ``(f, x)``, timed here, or a callable of ``n`` that times
    itself elsewhere (MXNet, in its process) and returns us per call.  Each timed repeat follows
    n/5 untimed calls of the same contender (its threads awake, its data in cache)."""
    for c in fns:
        if isinstance(c, tuple):
            f, x = c
            for _ in range(200):
                f(x)
            _ready(f(x))
    reps = [[] for _ in fns]
    for _ in range(repeats):
        for i, c in enumerate(fns):
            if not isinstance(c, tuple):
                reps[i].append(c(n))
                continue
            f, x = c
            for _ in range(n // 5):
                y = f(x)
            _ready(y)
            t = time.perf_counter()
            for _ in range(n):
                y = f(x)
            _ready(y)
            reps[i].append((time.perf_counter() - t) / n * 1e6)
    return [statistics.median(r) for r in reps]


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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--no-mxnet", action="store_true")
    args = ap.parse_args(argv)
    oracles = []        # MXNet as users run it, and as the tests' oracle runs it
    if not args.no_mxnet:
        from ast_hybrid.testing.oracle import Oracle, OracleUnavailable

        try:
            oracles = [Oracle(as_users_run_it=True), Oracle()]
        except OracleUnavailable as exc:
            print(f"MXNet oracle unavailable, MXNet columns not measured: {exc}")
    print("mxnet: threaded engine, OpenMP on every core (as users run it); mx1: NaiveEngine, one thread")
    print(f"{'batch':>5} {'ours us':>9} {'ours(jax) us':>12} {'jax.jit us':>10} {'mxnet us':>9} {'mx1 us':>8} "
          f"{'ours/jit':>8} {'ours/mxnet':>10} {'ours/mx1':>8}")
    for b in BATCHES:
        n = max(20, args.calls // (1 if b == 1 else 4 if b == 64 else 20))
        x = np.random.default_rng(0).standard_normal((b, 512)).astype("float32")
        net = _net()
        net(x)
        hand = _hand(net)
        net.hybridize()
        np.testing.assert_allclose(np.asarray(net(x)), np.asarray(hand(x)), rtol=1e-4, atol=1e-5)
        xj = jax.numpy.asarray(x)
        xn = nd.array(x)    # what a Gluon user passes (an NDArray in, an NDArray out)
        mxs = []
        for mx in oracles:
            mx.run(MX_SETUP, x=x)
            mxs.append(lambda k, mx=mx: mx.run(MX_TIME, n=np.array(k))["meta"]["us"])
        ours, ours_jax, jit, *theirs = _time([(net, xn), (net, xj), (hand, xj), *mxs], n)
        theirs = theirs or [float("nan")] * 2
        print(f"{b:>5} {ours:>9.1f} {ours_jax:>12.1f} {jit:>10.1f} {theirs[0]:>9.1f} {theirs[1]:>8.1f} "
              f"{ours / jit:>8.2f} {ours / theirs[0]:>10.2f} {ours / theirs[1]:>8.2f}")
    for mx in oracles:
        mx.close()


if __name__ == "__main__":
    main()
