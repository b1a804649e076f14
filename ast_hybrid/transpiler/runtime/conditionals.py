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

A branch that computes nothing (its code only loads and stores names and constants
and builds the tuple it returns, as ``if t: done = True``, the flag a ``break`` leaves)
is called as it is, both are, and the statement is a ``jnp.where`` between their
outputs when these have the same types: the same values and derivatives as
``lax.cond`` (nothing is computed that Python would not compute, no effect can
run), and no conditional in the compiled program (inside a loop body XLA would run
one per iteration).  Anything else is ``lax.cond``.
"""

from __future__ import annotations

import dis
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

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

    if _moves_only(true_fn) and _moves_only(false_fn):
        picked = _select(pred, true_fn(*args), false_fn(*args), len(names))
        if picked is not None:
            return picked
    try:
        dyn = lax.cond(pred, branch(true_fn, "t", None), branch(false_fn, "f", None))
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


#: what a branch that computes nothing is made of: loads and stores of its own names, constants,
#: globals and closure cells read, the tuple it returns (no call, operator, attribute, item, iteration)
_MOVES = frozenset({"RESUME", "NOP", "CACHE", "EXTENDED_ARG", "COPY_FREE_VARS", "MAKE_CELL", "LOAD_FAST",
                    "LOAD_FAST_CHECK", "LOAD_CONST", "STORE_FAST", "LOAD_DEREF", "LOAD_GLOBAL", "BUILD_TUPLE",
                    "POP_TOP", "RETURN_VALUE", "RETURN_CONST"})


def _moves_only(fn) -> bool:
    code = getattr(fn, "__code__", None)
    return code is not None and _code_moves_only(code)


@functools.lru_cache(maxsize=1024)
def _code_moves_only(code) -> bool:
    return all(i.opname in _MOVES for i in dis.get_instructions(code))


def _select(pred, outs_t, outs_f, n):
    """The outputs of two branches that computed nothing, picked by ``jnp.where(pred, t, f)`` leaf by
    leaf, or None when their structures or leaf types differ (``lax.cond`` then says how, or fails)."""
    t, f = Layout(outs_t), Layout(outs_f)
    if len(t.dyn) != len(f.dyn) or not all(t.same_static(f, i) for i in range(n)):
        return None
    out = []
    for a, b in zip(t.dyn, f.dyn):
        if a is b and isinstance(a, jax.core.Tracer):
            out.append(a)            # the same value either way (a variable neither branch assigns)
            continue
        ta = jax.typeof(a)
        if ta != jax.typeof(b):
            return None
        picked = jnp.where(pred, a, b)
        if jax.typeof(picked) != ta:
            return None
        out.append(picked)
    return t.rebuild(out)


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
