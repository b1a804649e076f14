"""Control-flow speed: converted (``ast_hybrid.jit``) vs hand-written lax, same run.

    python bench/control_flow.py [--calls N]

(a) data-dependent ``while`` with an ``if`` inside, scalar state, vs
    ``lax.while_loop`` + ``lax.cond``;
(b) 50-step tanh RNN (hidden 256, batch 32) as a Python ``for`` over a static
    range (unrolled by conversion) and as a ``for`` over the input array
    (becoming ``scan``), vs a hand-written ``lax.scan``;
(c) conversion time of a generated ~100-line function (target < 20 ms);
(d) cached-call overhead on a tiny function: ``ast_hybrid.jit(f)`` vs
    ``jax.jit(hand_written)``.

Medians of 5 repeats, microseconds per call.  Compare only numbers from one
run (the machine is noisy: two runs differ by up to 1.5x).  Where the transpiler
(``ast_hybrid.transpiler.api``) is not importable the converted column reads ``n/a``.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

HIDDEN, BATCH, STEPS = 256, 32, 50

USER_SRC = '''
import jax.numpy as jnp


def collatz_like(x):
    s = x
    k = 0.0
    while s > 1.0:
        if s > 10.0:
            s = s * 0.5
        else:
            s = s - 1.0
        k = k + 1.0
    return k


def rnn_static(xs, h, w, u):
    for t in range(50):
        h = jnp.tanh(xs[t] @ w + h @ u)
    return h


def rnn_array(xs, h, w, u):
    for x in xs:
        h = jnp.tanh(x @ w + h @ u)
    return h


def tiny(x):
    if x.sum() > 0:
        y = x + 1.0
    else:
        y = x - 1.0
    return y
'''


def hand_collatz(x):
    def body(c):
        s, k = c
        s = lax.cond(s > 10.0, lambda s: s * 0.5, lambda s: s - 1.0, s)
        return s, k + 1.0
    return lax.while_loop(lambda c: c[0] > 1.0, body, (x, jnp.float32(0.0)))[1]


def hand_rnn(xs, h, w, u):
    def step(h, x):
        return jnp.tanh(x @ w + h @ u), None
    return lax.scan(step, h, xs)[0]


def hand_tiny(x):
    return lax.cond(x.sum() > 0, lambda x: x + 1.0, lambda x: x - 1.0, x)


def long_function_source(lines: int = 100) -> str:
    """A realistic ~100-line hybrid_forward-like function with mixed control flow."""
    out = ["def long_fn(x, h, n):", "    acc = x * 0.0"]
    i = 0
    while len(out) < lines:
        k = i % 5
        if k == 0:
            out += [f"    if x.sum() > {i}.0:", f"        acc = acc + x * {i % 3 + 1}.0",
                    "    else:", "        acc = acc - h * 0.5"]
        elif k == 1:
            out += ["    for j in range(n):", f"        acc = acc * 0.9 + {i}.0", "        if acc.sum() > 100.0:",
                    "            break"]
        elif k == 2:
            out += [f"    t{i} = jnp.tanh(acc) if h.mean() > 0 else jnp.maximum(acc, 0.0)",
                    f"    acc = acc + t{i} * 0.1"]
        elif k == 3:
            out += ["    c = 0", "    while c < 3 and acc.max() > 0.0:", "        c = c + 1",
                    "        acc = acc * 0.5"]
        else:
            out += ["    for row in h:", "        acc = acc + row.sum() * 0.01"]
        i += 1
    out.append("    return acc")
    return "import jax.numpy as jnp\n\n\n" + "\n".join(out) + "\n"


_FILES = tempfile.TemporaryDirectory(prefix="ast_hybrid_bench_")   # removed at exit


def load(src: str, tag: str):
    p = Path(_FILES.name) / f"_bench_{tag}.py"
    p.write_text(src)
    spec = importlib.util.spec_from_file_location(p.stem, p)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[p.stem] = mod
    spec.loader.exec_module(mod)
    return mod


def timeit(fn, args, calls: int) -> float:
    jax.block_until_ready(fn(*args))
    reps = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(calls):
            r = fn(*args)
        jax.block_until_ready(r)
        reps.append((time.perf_counter() - t) / calls * 1e6)
    return statistics.median(reps)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200)
    a = ap.parse_args(argv)
    have = importlib.util.find_spec("ast_hybrid.transpiler.api") is not None
    if have:
        import ast_hybrid
    user = load(USER_SRC, "user")
    rng = np.random.default_rng(0)
    xs = jnp.asarray(rng.standard_normal((STEPS, BATCH, HIDDEN)), jnp.float32)
    h0 = jnp.zeros((BATCH, HIDDEN), jnp.float32)
    w = jnp.asarray(rng.standard_normal((HIDDEN, HIDDEN)) * 0.05, jnp.float32)
    u = jnp.asarray(rng.standard_normal((HIDDEN, HIDDEN)) * 0.05, jnp.float32)
    rows = []

    def row(name, conv, hand, args, calls):
        th = timeit(jax.jit(hand), args, calls)
        if have:
            g = ast_hybrid.jit(conv)
            want = np.asarray(jax.jit(hand)(*args))
            np.testing.assert_allclose(np.asarray(g(*args)), want, rtol=1e-4, atol=1e-4)
            tc = timeit(g, args, calls)
            rows.append((name, f"{tc:10.1f}", f"{th:10.1f}", f"{tc / th:6.2f}"))
        else:
            rows.append((name, f"{'n/a':>10}", f"{th:10.1f}", f"{'n/a':>6}"))

    row("(a) while+if, scalar state", user.collatz_like, hand_collatz, (jnp.float32(1000.0),), a.calls)
    row("(b) RNN for static range", user.rnn_static, hand_rnn, (xs, h0, w, u), max(a.calls // 10, 5))
    row("(b) RNN for over array", user.rnn_array, hand_rnn, (xs, h0, w, u), max(a.calls // 10, 5))
    row("(d) tiny fn, cached call", user.tiny, hand_tiny, (jnp.ones(4, jnp.float32),), a.calls * 5)

    print(f"{'case':32} {'converted us':>12} {'hand lax us':>12} {'ratio':>6}")
    for r in rows:
        print(f"{r[0]:32} {r[1]:>12} {r[2]:>12} {r[3]:>6}")

    src = long_function_source()
    nlines = src.count("\n")
    if have:
        ts = []
        for rep in range(11):
            mod = load(src, f"long{rep}")   # a fresh code object: conversion is cached per code object
            t = time.perf_counter()
            ast_hybrid.convert(mod.long_fn)
            ts.append((time.perf_counter() - t) * 1e3)
        t = time.perf_counter()
        ast_hybrid.convert(mod.long_fn)
        cached = (time.perf_counter() - t) * 1e6
        print(f"(c) convert a {nlines}-line function: median {statistics.median(ts):.2f} ms of 11, "
              f"min {min(ts):.2f} (target < 20 ms); "
              f"again (cached): {cached:.1f} us")
        print("(c') real code, per 100 lines: python bench/convert_speed.py [TREE ...]")
    else:
        compile(src, "<long>", "exec")
        print(f"(c) convert a {nlines}-line function: n/a (transpiler not importable)")


if __name__ == "__main__":
    main()
