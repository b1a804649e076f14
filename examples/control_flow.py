"""Python control flow on tensors, converted by ast-hybrid and run under jax.jit.

    python examples/control_flow.py

Each function below is plain Python.  For each we print the eager result
(plain Python on numpy inputs), the converted+jitted result
(``ast_hybrid.jit(fn)`` on jax arrays), whether they agree, and, for a few,
``ast_hybrid.to_source(fn)``: the code the transpiler generated.  Then the
same constructs in a small Gluon model, run op by op and hybridized.
"""

from __future__ import annotations

import sys

import jax.numpy as jnp
import numpy as np

import ast_hybrid


def relu_or_neg(x):
    """``if`` on a tensor value (becomes lax.cond)."""
    if x.sum() > 0:
        y = x * 2.0
    else:
        y = -x
    return y


def power_sum(x, n):
    """``for`` over a traced range (becomes fori_loop/while_loop)."""
    acc = x * 0.0
    for i in range(n):
        acc = acc + x * (i + 1.0)
    return acc


def newton_sqrt(a):
    """``while`` until convergence (becomes while_loop)."""
    g = a * 0.5 + 0.5
    while abs(g * g - a) > 1e-4:
        g = (g + a / g) * 0.5
    return g


def first_big(x, t):
    """``break`` out of a loop over an array's leading axis."""
    found = x[0] * 0.0 - 1.0
    for v in x:
        if v > t:
            found = v
            break
    return found


def clip_early(x):
    """early ``return`` under a tensor condition."""
    if x.max() > 10.0:
        return x * 0.0
    return x + 1.0


def sign_ternary(x):
    """ternary and ``and``/``or``/``not`` on tensor values."""
    s = x.sum()
    y = x * 2.0 if (s > 0 and x[0] > 0) or not (x[1] < 5.0) else x * -1.0
    return y


def noisy(x):
    """``print`` prints real values on every call, not tracers."""
    s = x.sum()
    print("  sum inside the jitted function:", s)
    return s * 2.0


EXAMPLES = [
    (relu_or_neg, (np.array([1.0, -0.5, 2.0], np.float32),)),
    (relu_or_neg, (np.array([-1.0, -0.5, 0.0], np.float32),)),
    (power_sum, (np.array([1.0, 2.0], np.float32), 4)),
    (newton_sqrt, (np.float32(2.0),)),
    (first_big, (np.array([0.1, 0.7, 3.0, 9.0], np.float32), np.float32(0.5))),
    (first_big, (np.array([0.1, 0.2], np.float32), np.float32(5.0))),
    (clip_early, (np.array([1.0, 20.0], np.float32),)),
    (clip_early, (np.array([1.0, 2.0], np.float32),)),
    (sign_ternary, (np.array([1.0, 2.0], np.float32),)),
    (sign_ternary, (np.array([-3.0, 1.0], np.float32),)),
    (noisy, (np.array([1.0, 2.0, 3.0], np.float32),)),
    (noisy, (np.array([4.0, 5.0, 6.0], np.float32),)),
]


def gluon_model_section() -> bool:
    """A recurrent Gluon block with a data-dependent early exit, op by op vs hybridized."""
    from ast_hybrid import nd
    from ast_hybrid.gluon import nn

    class EarlyExitRNN(nn.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.cell = nn.Dense(8, activation="tanh", flatten=False)
                self.out = nn.Dense(1, flatten=False)

        def hybrid_forward(self, F, xs):
            h = F.zeros_like(xs[0])
            for x in xs:                          # scan over the time axis
                h = self.cell(F.concat(x, h, dim=-1))
                if F.abs(h).max() > 0.99:         # saturated: stop early
                    break
            if h.sum() < 0:                       # early return on a tensor value
                return -self.out(h)
            return self.out(h)

    net = EarlyExitRNN()
    net.initialize()
    ok = True
    for scale in (0.1, 3.0):
        xs = nd.array(np.random.RandomState(1).randn(6, 2, 8).astype("float32") * scale)
        net.hybridize(False)
        want = net(xs)
        net.hybridize()
        got = net(xs)
        same = float(abs(got - want).max().asscalar()) <= 1e-5
        ok &= same
        print(f"EarlyExitRNN, input scale {scale}: op by op and hybridized {'agree' if same else 'DISAGREE'}")
    print("\n--- ast_hybrid.to_source(EarlyExitRNN.hybrid_forward) ---")
    print(ast_hybrid.to_source(EarlyExitRNN.hybrid_forward))
    return ok


def main() -> int:
    ok = True
    compiled = {}
    for fn, args in EXAMPLES:
        print(f"{fn.__name__}{tuple(np.asarray(a).tolist() for a in args)}  # {fn.__doc__.strip()}")
        want = fn(*args)
        g = compiled.setdefault(fn, ast_hybrid.jit(fn))
        got = g(*(jnp.asarray(a) for a in args))
        same = np.allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)
        ok &= bool(same)
        print(f"  eager: {np.asarray(want).tolist()}  jit: {np.asarray(got).tolist()}  "
              f"{'agree' if same else 'DISAGREE'}")
    for fn in (relu_or_neg, first_big):
        print(f"\n--- ast_hybrid.to_source({fn.__name__}) ---")
        print(ast_hybrid.to_source(fn))
    print()
    ok &= gluon_model_section()
    print("all agree" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
