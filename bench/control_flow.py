"""Control-flow speed: converted (``ast_hybrid.jit``) vs hand-written lax, same run.

    python -m bench.control_flow [--calls N]      (python -m bench runs it with every other scenario)

(a) data-dependent ``while`` with an ``if`` inside, scalar state, vs
    ``lax.while_loop`` + ``lax.cond``;
(b) 50-step tanh RNN (hidden 256, batch 32) as a Python ``for`` over a static
    range (unrolled by conversion) and as a ``for`` over the input array
    (becoming ``scan``), vs a hand-written ``lax.scan``;
(c) a ``for`` over ``range(100)`` with a ``break`` on a traced test vs ``lax.while_loop``;
(d) cached-call overhead on a tiny function: ``ast_hybrid.jit(f)`` vs
    ``jax.jit(hand_written)``;
(e) the first call of each (trace + compile), and the conversion time of a generated ~100-line
    function (target < 20 ms).

Contenders interleaved round by round, medians of 5 rounds, microseconds per call
(``bench/harness.py``).  Compare only numbers from one run (the machine is noisy:
two runs differ by up to 1.5x).
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

from bench import harness

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


def first_above(x, limit):
    s = x * 0.0
    for i in range(100):
        s = s + x
        if s.sum() > limit:
            break
    return s


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


def hand_break(x, limit):
    def cond(c):
        return (c[0] < 100) & ~c[2]

    def body(c):
        s = c[1] + x
        return c[0] + 1, s, s.sum() > limit
    return lax.while_loop(cond, body, (0, x * 0.0, False))[1]


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


def scenario(report, quick=False, calls=200):
    """Each case converted (``ast_hybrid.jit``) against the same written by hand in lax under ``jax.jit``,
    interleaved; then what conversion and the first call (trace + compile) cost."""
    import ast_hybrid

    user = load(USER_SRC, "user")
    rng = np.random.default_rng(0)
    xs = jnp.asarray(rng.standard_normal((STEPS, BATCH, HIDDEN)), jnp.float32)
    h0 = jnp.zeros((BATCH, HIDDEN), jnp.float32)
    w = jnp.asarray(rng.standard_normal((HIDDEN, HIDDEN)) * 0.05, jnp.float32)
    u = jnp.asarray(rng.standard_normal((HIDDEN, HIDDEN)) * 0.05, jnp.float32)
    calls = calls // 4 if quick else calls
    cases = [("while+if, scalar state, 1000 steps", user.collatz_like, hand_collatz, (jnp.float32(1000.0),), calls),
             ("RNN, Python for over range(50)", user.rnn_static, hand_rnn, (xs, h0, w, u), max(calls // 10, 5)),
             ("RNN, Python for over the array", user.rnn_array, hand_rnn, (xs, h0, w, u), max(calls // 10, 5)),
             ("for with break (traced test)", user.first_above, hand_break,
              (jnp.full(64, 0.5, jnp.float32), jnp.float32(1000.0)), calls),
             ("tiny fn, cached call", user.tiny, hand_tiny, (jnp.ones(4, jnp.float32),), calls * 5)]
    for name, conv, hand, args, n in cases:
        ours, jit = ast_hybrid.jit(conv), jax.jit(hand)
        first = {harness.OURS: harness.once(ours, *args) * 1e3, harness.JIT: harness.once(jit, *args) * 1e3}
        np.testing.assert_allclose(np.asarray(ours(*args)), np.asarray(jit(*args)), rtol=1e-4, atol=1e-4)
        t = harness.interleave({harness.OURS: harness.local(ours, *args), harness.JIT: harness.local(jit, *args)},
                               n, rounds=5)
        report.add("control flow", name, "us", {k: v * 1e6 for k, v in t.items()})
        report.add("first call (trace + compile)", f"control flow: {name}", "ms", first)

    src = long_function_source()
    ts = []
    for rep in range(5 if quick else 11):
        mod = load(src, f"long{rep}")   # a fresh code object: conversion is cached per code object
        t = time.perf_counter()
        ast_hybrid.convert(mod.long_fn)
        ts.append((time.perf_counter() - t) * 1e3)
    report.add("conversion", f"convert a {src.count(chr(10))}-line function (target < 20 ms)", "ms",
               {harness.OURS: statistics.median(ts)})


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200)
    a = ap.parse_args(argv)
    scenario(harness.Report(), calls=a.calls)
    print("real code, per 100 lines: python -m bench.convert_speed [TREE ...]")


if __name__ == "__main__":
    main()
