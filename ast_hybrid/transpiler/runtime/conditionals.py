"""``if`` and ``x if c else y`` on a traced condition: ``lax.cond``.

Both branches are functions of the state; they return the variables live
after the statement.  The fast path is one ``lax.cond`` whose branches return
only the dynamic leaves of their outputs.  When the branches disagree (a
variable undefined in one, Python numbers of different kinds, a different
structure), the records taken while jax traced them say how: a synthetic
variable (the return value) undefined in one branch is filled with zeros of
the other's type (it is never read on that path), numbers of different dtypes
are promoted as Python would, and everything else is a diagnostic (HY030,
HY033).

Each branch is traced once, to a jaxpr (``jax.make_jaxpr``), before anything is
emitted.  When neither branch computes anything (no equation: each output is a
value computed before the statement, or a constant, as in ``if t: done = True``,
the flag a ``break`` leaves), the statement is a ``jnp.where`` between those
values instead of a ``lax.cond``: the same values and the same derivatives
(nothing is computed that Python would not compute), and no conditional in the
compiled program (inside a loop body, XLA runs one per iteration).  Otherwise
``lax.cond`` evaluates the two jaxprs (the user's code is not traced again).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend.core import jaxpr_as_fun

from ..ast_tools.naming import is_synthetic
from .values import Layout, describe

__all__ = ["traced_cond"]


def traced_cond(rt, pred, true_fn, false_fn, args, names, line, kind="if"):
    """Run ``true_fn(*args)``/``false_fn(*args)`` under ``lax.cond(pred, ...)``; their outputs."""
    recs = {}

    def branch(fn, key, plan):
        def run():
            outs = fn(*args)
            lay = Layout(outs)
            recs[key] = lay
            if plan is None:
                return lay.dyn
            return _apply(plan, lay)
        return run

    try:
        jt = jax.make_jaxpr(branch(true_fn, "t", None))()
        jf = jax.make_jaxpr(branch(false_fn, "f", None))()
        dyn = _select(pred, jt, jf)
        if dyn is None:
            dyn = lax.cond(pred, jaxpr_as_fun(jt), jaxpr_as_fun(jf))
        failure = None
    except TypeError as exc:
        if len(recs) < 2:
            raise
        failure = exc
    t, f = recs["t"], recs["f"]
    if failure is None and all(t.same_static(f, i) for i in range(len(names))):
        return t.rebuild(dyn)
    plan = _plan(rt, t, f, names, line, kind)
    if plan is None:  # consistent layouts: the TypeError was something else
        raise failure
    recs.clear()
    dyn = lax.cond(pred, branch(true_fn, "t", plan), branch(false_fn, "f", plan))
    return plan["layout"].rebuild(dyn)


def _select(pred, jt, jf):
    """``jnp.where(pred, t, f)`` for each output when neither branch computes anything (both jaxprs
    without equations) and their outputs have the same types; else None."""
    if jt.jaxpr.eqns or jf.jaxpr.eqns or jt.out_avals != jf.out_avals:
        return None
    out = []
    for a, b, aval in zip(jaxpr_as_fun(jt)(), jaxpr_as_fun(jf)(), jt.out_avals):
        if a is not b:
            a = jnp.where(pred, a, b)
            if (a.shape, a.dtype, getattr(a, "weak_type", False)) != (aval.shape, aval.dtype, aval.weak_type):
                return None   # never seen: a constant whose type `where` would not keep
        out.append(a)
    return out


def _plan(rt, t, f, names, line, kind):
    """How to make both branches' outputs agree, or raise the diagnostics saying why not."""
    diags = []
    fills, casts = {}, {}
    changed = False
    for i, name in enumerate(names):
        a, b = t.slots[i], f.slots[i]
        if a is None and b is None:
            continue
        if a is None or b is None:
            if is_synthetic(name):
                fills[i] = "f" if a is None else "t"   # the branch that has the value
                changed = True
                continue
            where, other = ("if", "else") if b is None else ("else", "if")
            diags.append(rt.hy030(name, line, where, other))
            continue
        if not t.same_static(f, i):
            diags.append(rt.hy033(name, line, describe(t.rebuild(t.dyn)[i]),
                                  describe(f.rebuild(f.dyn)[i]), kind))
            continue
        for k, (x, y) in enumerate(zip(t.slot_dyn(i), f.slot_dyn(i))):
            sx, sy = np.shape(x), np.shape(y)
            if sx != sy:
                diags.append(rt.hy033(name, line, describe(x), describe(y), kind))
                break
            dx, dy = jnp.result_type(x), jnp.result_type(y)
            if dx != dy or _weak(x) != _weak(y):
                casts[(i, k)] = jnp.result_type(x, y)
                changed = True
    if diags:
        rt.fail(diags)
    if not changed:
        return None
    # the merged layout: defined slots from whichever branch has them
    merged = [None] * len(names)
    for i in range(len(names)):
        src = t if t.slots[i] is not None else f
        if i in fills:
            src = t if fills[i] == "t" else f
        merged[i] = src.rebuild(src.dyn)[i]
    layout = Layout(merged)
    protos = {i: (t if fills[i] == "t" else f).slot_dyn(i) for i in fills}
    return {"layout": layout, "fills": protos, "casts": casts}


def _weak(x) -> bool:
    return isinstance(x, (bool, int, float, complex)) or bool(getattr(x, "weak_type", False))


def _apply(plan, lay):
    out = []
    for i, slot in enumerate(plan["layout"].slots):
        if slot is None:
            continue
        if lay.slots[i] is None:    # fill a synthetic variable with zeros of the other branch's type
            out.extend(jnp.zeros(np.shape(p), jnp.result_type(p)) for p in plan["fills"][i])
            continue
        for k, leaf in enumerate(lay.slot_dyn(i)):
            dtype = plan["casts"].get((i, k))
            out.append(leaf if dtype is None else jnp.asarray(leaf, dtype))
    return out
