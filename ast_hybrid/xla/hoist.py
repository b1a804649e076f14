"""What a predict program computes from its parameters alone, computed once per parameter update, not per call.

A hybridized block's parameters change only when the user sets them, yet its program recomputes whatever
depends on them alone at every call: BatchNorm's ``gamma * rsqrt(var + eps)`` and ``beta - mean * scale``,
a kernel scaled or cast.  XLA:CPU either runs each as a thunk of its own (ResNet-50: 53 tiny fusions per
call) or fuses the cheap producer into its consumer's loop and recomputes it for every element it writes (a
depthwise convolution's BatchNorm: an ``rsqrt`` per pixel and channel).  :func:`split` cuts a traced program
(parameters first, then the inputs) in two:

- ``prepare(params) -> computed``: every equation whose operands are parameters, constants, literals or
  values computed so, that is pure, holds no sub-program (control flow stays where it is) and makes nothing
  larger than its largest operand (a bias broadcast to an activation's shape, an ``iota`` stay in the
  program: stored, they would be read from memory at every call instead of made in its loops);
- ``main(residuals, *inputs)``: the rest, reading what it needs of the first part as inputs (**residuals**:
  a parameter as it is, or a computed value).

Layout-only operations (reshape, squeeze, expand_dims, transpose, broadcast_in_dim) whose results only the
second part reads stay in it: a kernel reshaped for an im2col GEMM remains a parameter that
``channel_last.kernel_perms`` stores transposed once, and a ``(1, C, 1, 1)`` scale is broadcast in the layout
its consumer wants.  Nested calls (``pjit``, ``custom_jvp_call``, ...) are inlined first, so that what a
jitted operator computes from its parameters is found inside it (this is for predict programs: nothing
differentiates the result).

``program.Program`` splits every channel-last predict program so (``program.Executable`` runs
``prepare``, with the kernels' transposition, once per parameter update); a program whose call takes under
``LONG`` is also compiled as written and the faster kept (:func:`mode`).

Before::

    program(gamma, beta, mean, var, w, x):
        s = gamma * rsqrt(var + eps); t = beta - mean * s       # every call
        return conv(x, w) * s + t

After::

    prepare(gamma, beta, mean, var, w) = [s, t]                 # once per parameter update
    main([s, t, w], x) = conv(x, w) * s + t
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import numpy as np

from ast_hybrid.core import settings

__all__ = ["Split", "split", "unsplit", "retraceable", "inline", "mode"]

ENV_SWITCH = "AST_HYBRID_HOIST"
# a program whose (second) run takes less is also compiled as written and the faster kept (xla/program.py):
# on such short programs the split measured 0.85x (mobilenet1.0 64x64 b1) to 1.09x (resnet50_v1 64x64 b1: 53
# BatchNorm thunks fewer, the same GEMMs 4% slower, how XLA:CPU's executor hands work to its threads); above it
# 0.84-1.0x on every network measured (bench/HISTORY.md), and a second compile would cost seconds
LONG = 0.025

# the primitives a Python-level call inlines (channel_last runs them the same way)
INLINE = {"pjit": "jaxpr", "jit": "jaxpr", "closed_call": "call_jaxpr", "core_call": "call_jaxpr",
          "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr", "custom_vjp_call_jaxpr": "fun_jaxpr",
          "remat": "jaxpr", "checkpoint": "jaxpr"}
_LAYOUT = frozenset({"reshape", "squeeze", "expand_dims", "transpose", "broadcast_in_dim"})


class Split(NamedTuple):
    main: object            # ClosedJaxpr over (*residuals, *inputs)
    sources: tuple          # per residual: ("param", j) parameter j as it is, or ("computed", k) prepare's k-th output
    prepare: Callable       # list of the flat parameters -> list of the computed residuals
    hoisted: int            # how many equations ``prepare`` runs


def mode() -> str:
    """How hybridized blocks' channel-last programs use :func:`split` (``AST_HYBRID_HOIST``): ``"timed"``
    (unset, the default: split; a program shorter than ``LONG`` is also compiled as written and the faster
    kept), ``"on"`` (``1``: split, untimed) or ``"off"`` (``0``: as written, every call computing it all)."""
    return settings.get(ENV_SWITCH)


def inline(closed):
    """``closed`` traced again with every nested call inlined: one flat ClosedJaxpr over the same inputs."""
    avals = [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype) for v in closed.jaxpr.invars]
    return jax.make_jaxpr(lambda *a: _eval(closed.jaxpr, closed.consts, a, inline=True))(*avals)


def unsplit(closed, n_params: int) -> Split:
    """``closed`` as it is: every parameter a residual, nothing to prepare (no trace)."""
    return Split(closed, tuple(("param", j) for j in range(n_params)), None, 0)


def retraceable(closed) -> bool:
    """Whether ``closed`` can be traced again here with the same types: not where it holds 64-bit values
    while ``jax_enable_x64`` is off now (a program traced under ``jax.enable_x64(True)``): traced
    again, they would become 32-bit."""
    return jax.config.jax_enable_x64 or not _wide(closed.jaxpr)


_WIDE = frozenset({"float64", "int64", "uint64", "complex128"})


def _wide(jaxpr):
    """Whether ``jaxpr`` (or one nested in it) has a 64-bit variable."""
    for v in (*jaxpr.invars, *jaxpr.constvars, *(o for e in jaxpr.eqns for o in e.outvars)):
        dtype = getattr(v.aval, "dtype", None)
        if dtype is not None and np.dtype(dtype).name in _WIDE:
            return True
    return any(_wide(getattr(sub, "jaxpr", sub)) for e in jaxpr.eqns for sub in _jaxprs(e.params.values()))


def _jaxprs(values):
    for p in values:
        if isinstance(p, (tuple, list)):
            yield from _jaxprs(p)
        elif hasattr(p, "eqns") or hasattr(p, "jaxpr"):
            yield p


def split(closed, n_params: int) -> Split:
    """Cut ``closed`` (a ClosedJaxpr whose first ``n_params`` inputs are parameters) into what the parameters
    alone determine and the rest (see the module's docstring)."""
    from jax.extend import core

    jaxpr = closed.jaxpr
    params, inputs = jaxpr.invars[:n_params], jaxpr.invars[n_params:]
    consts = {v: _typed(v, c) for v, c in zip(jaxpr.constvars, closed.consts)}
    known = set(params) | set(jaxpr.constvars)

    def operands(e):
        return [v for v in e.invars if not isinstance(v, core.Literal)]

    hoisted = set()
    for i, e in enumerate(jaxpr.eqns):
        ins = operands(e)
        if ins and all(v in known for v in ins) and _pure(e) \
                and max(_size(o) for o in e.outvars) <= max(_size(v) for v in ins):
            hoisted.add(i)
            known.update(e.outvars)
    users = {}
    for i, e in enumerate(jaxpr.eqns):
        for v in operands(e):
            users.setdefault(v, set()).add(i)
    for i in reversed(range(len(jaxpr.eqns))):       # layout-only ops the second part alone reads: stay there
        e = jaxpr.eqns[i]
        if i in hoisted and e.primitive.name in _LAYOUT \
                and not any(u in hoisted for o in e.outvars for u in users.get(o, ())):
            hoisted.discard(i)
    first = [e for i, e in enumerate(jaxpr.eqns) if i in hoisted]
    rest = [e for i, e in enumerate(jaxpr.eqns) if i not in hoisted]
    made = {o for e in first for o in e.outvars}
    where = {v: j for j, v in enumerate(params)}
    residuals = {}      # in the order the second part first reads them
    for v in [v for e in rest for v in operands(e)] + [v for v in jaxpr.outvars if not isinstance(v, core.Literal)]:
        if v in made or v in where:
            residuals.setdefault(v)
    residuals = list(residuals)
    computed = [v for v in residuals if v in made]
    index = {v: k for k, v in enumerate(computed)}
    sources = tuple(("param", where[v]) if v in where else ("computed", index[v]) for v in residuals)

    def prepare(flat):
        env = dict(consts)
        env.update(zip(params, flat))
        _run(first, env)
        return [env[v] for v in computed]

    def main(res, *xs):
        env = dict(consts)
        env.update(zip(residuals, res))
        env.update(zip(inputs, xs))
        _run(rest, env)
        return [_read(v, env) for v in jaxpr.outvars]

    avals = [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype) for v in residuals]
    main_closed = jax.make_jaxpr(main)(avals, *[jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype) for v in inputs])
    return Split(main_closed, sources, prepare, len(first))


def _pure(e):
    if e.effects or e.primitive.name.startswith("rng"):
        return False
    return not any(True for _ in _jaxprs(e.params.values()))


def _size(v):
    return int(np.prod(getattr(v.aval, "shape", ()), dtype=np.int64))


def _typed(v, value):
    """``value`` (a constant or literal of variable ``v``) in ``v``'s dtype: a captured numpy constant keeps its
    float64 where the traced program has float32, and bound to a primitive as it is, it would stay float64."""
    dtype = getattr(v.aval, "dtype", None)
    if dtype is not None and getattr(value, "dtype", dtype) != dtype:
        return np.asarray(value, dtype) if isinstance(value, (np.ndarray, np.generic)) else value.astype(dtype)
    return value


def _read(v, env):
    from jax.extend import core

    return _typed(v, v.val) if isinstance(v, core.Literal) else env[v]


def _run(eqns, env):
    from jax.extend import core

    for e in eqns:
        ins = [_read(v, env) for v in e.invars]
        for v, o in zip(e.outvars, _bind(e, ins)):
            if not isinstance(v, core.DropVar):
                env[v] = o


def _bind(e, ins):
    with e.ctx.manager:
        out = e.primitive.bind(*ins, **e.primitive.get_bind_params(e.params))
    return out if e.primitive.multiple_results else [out]


def _eval(jaxpr, consts, args, inline):
    from jax.extend import core

    env = {v: _typed(v, c) for v, c in zip(jaxpr.constvars, consts)}
    env.update(zip(jaxpr.invars, args))
    for e in jaxpr.eqns:
        ins = [_read(v, env) for v in e.invars]
        name = e.primitive.name
        if inline and name in INLINE:
            sub = e.params[INLINE[name]]
            outs = _eval(sub.jaxpr, sub.consts, ins, True) if hasattr(sub, "consts") else _eval(sub, [], ins, True)
        else:
            outs = _bind(e, ins)
        for v, o in zip(e.outvars, outs):
            if not isinstance(v, core.DropVar):
                env[v] = o
    return [_read(v, env) for v in jaxpr.outvars]
