"""``ast-hybrid demo``: the whole product on one embedded Gluon model, no files to prepare.

1. lint this file statically (nothing is imported or run) for what breaks
   MXNet's ``hybridize()``, and for what ast-hybrid's own conversion rejects;
2. show the code the transpiler generates for the model's ``hybrid_forward``;
3. run the model op by op and hybridized (one XLA program) on inputs that take
   different branches, and check both give the same result;
4. time 1000 calls of each.

The model is ordinary MXNet 1.x Gluon code (only the import lines differ): a
tensor-dependent ``if``, a data-dependent ``while`` and a ``for`` over a
tensor's rows, which MXNet's tracing either rejected or silently baked in.
"""

from __future__ import annotations

import time

from ast_hybrid import nd
from ast_hybrid.gluon import nn

__all__ = ["GatedMLP", "newton_sqrt", "main", "run"]


def newton_sqrt(a):
    """Plain Python over arrays: under ``ast_hybrid.jit`` this ``while`` becomes ``lax.while_loop``."""
    g = a * 0.5 + 0.5
    while abs(g * g - a) > 1e-4:
        g = (g + a / g) * 0.5
    return g


class GatedMLP(nn.HybridBlock):
    """An MLP whose forward depends on its activations' values."""

    def __init__(self, hidden=64, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.hidden = nn.Dense(hidden, activation="relu")
            self.out = nn.Dense(2)

    def hybrid_forward(self, F, x):
        h = self.hidden(x)
        if h.mean() > 0.5:                      # a branch on a tensor value
            h = h * 0.5
        else:
            h = F.tanh(h) + 1.0
        steps = 0
        while F.norm(h) > 4.0 and steps < 10:   # a loop until a tensor condition holds
            h = h * 0.7
            steps += 1
        for row in h:                           # iteration over a tensor's rows
            h = h + row.mean() * 0.01
        return self.out(h)


def _section(title):
    print(f"\n=== {title} ===")


def main() -> int:
    import numpy as np

    import ast_hybrid
    from ast_hybrid.linter.api import lint
    from ast_hybrid.common.render import render_text

    _section("1. ast-hybrid lint --target mxnet (static: this file is read, never imported)")
    found = lint(__file__, target="mxnet", respect_config=False)
    print(render_text(found, color=False).rstrip() or "(nothing found)")
    jax_found = lint(__file__, target="jax", respect_config=False)
    print(f"\nwith --target jax: {len(jax_found)} finding(s), all notes: ast-hybrid converts these constructs "
          f"({', '.join(sorted({d.code for d in jax_found}))})")

    _section("2. ast_hybrid.to_source(GatedMLP.hybrid_forward): the generated code")
    print(ast_hybrid.to_source(GatedMLP.hybrid_forward))

    _section("3. op by op vs hybridize() (one jitted XLA program), on inputs taking different branches")
    net = GatedMLP()
    net.initialize(ast_hybrid.init.Xavier())
    rng = np.random.RandomState(0)
    inputs = [nd.array(rng.randn(4, 32) * s) for s in (0.1, 1.0, 10.0)]
    imperative = [net(x) for x in inputs]
    net.hybridize()
    ok = True
    for x, want in zip(inputs, imperative):
        got = net(x)
        diff = float(abs(got - want).max().asscalar())
        ok &= diff <= 1e-5
        print(f"input scale {float(abs(x).max().asscalar()):6.2f}: max |op by op - hybridized| = {diff:.2e}")

    _section("4. 1000 calls at batch 4")
    for label, active in (("op by op", False), ("hybridized", True)):
        net.hybridize(active)
        net(inputs[0]).wait_to_read()
        start = time.perf_counter()
        for _ in range(1000):
            out = net(inputs[0])
        out.wait_to_read()
        print(f"{label:>10}: {(time.perf_counter() - start) * 1e3:8.1f} ms")
    print("\nresults agree" if ok else "\nRESULTS DIFFER")
    return 0 if ok else 1


def run(args) -> int:
    """``ast-hybrid demo``."""
    return main()


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
