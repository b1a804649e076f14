"""Whole-program channel-last layout: a predict program's convolutions run NHWC, the user's code stays NCHW.

XLA:CPU's convolution is native channel-last (input ``N, *spatial, C``, kernel ``*spatial, I, O``): given
MXNet's ``NCHW``/``OIHW`` it transposes the input, the kernel and the output around every convolution, and
consecutive convolutions pay all three each time.  :func:`channel_last` rewrites a traced program instead:
it runs the program's jaxpr again with every value carrying the *permutation it is stored in* (``perm[i]`` is
the logical axis that stored axis ``i`` holds), so that

- a convolution takes its input channel-last and its kernel ``*spatial, I, O`` (converting only what is not
  already stored so) and gives a channel-last output;
- what follows a convolution keeps the layout it finds: element-wise operations, pooling windows (``reduce_window``),
  ``pad``, ``slice``, ``concatenate``, ``stack``, reductions, ``squeeze``, ``dot_general`` (an im2col
  convolution or a 1x1 one) and ``transpose`` (which then moves no data) are applied to the stored array
  with their axes renumbered;
- a broadcast (a bias, BatchNorm's scale) is produced directly in the layout its consumer wants;
- anything else (reshape, gather, control flow, ...) gets its operands transposed back to the logical
  layout first, so the rewrite is exact for every program: the values are the same operations on the
  same numbers, only stored in another order (float results equal up to XLA's own reassociation).

This module is the interpreter (the program's equations in order, nested calls inlined); the rule of each
primitive, and the stored value they share, are in ``xla/channel_last_rules.py``.  It also computes as
im2col + GEMM the XLA convolutions it is given (``im2col``: all, or a set of ``conv_tuning`` signatures), and
gives a GEMM over few rows (an im2col convolution on a small feature map, a Dense layer at a small batch) its
weight as first operand, stored output-features-major (``weight_first``).  ``xla/program.py`` decides both
per program, and compiles, times and runs predict programs with this interpreter (``Program``,
``Executable``).

Nested jitted calls and ``custom_jvp``/``custom_vjp`` functions are inlined (a predict program: nothing
differentiates the result).  A training program's forward is interpreted ``differentiable`` instead, and then
differentiated (``gluon/programs.py``, so its backward runs channel-last too): there a function with a derivative
rule of its own keeps it (an element-wise ``custom_jvp``, ``jax.nn.relu`` or MXNet's ReLU and clip, runs on the
stored layout with its rule interpreted in that layout as well; max pooling's ``custom_vjp`` runs its NHWC form;
any other takes its operands in the logical layout), overlapping pooling windows are reduced whole, and a thin
stem convolution (3 input channels, few filters) is computed as im2col + GEMM (:func:`_thin_stem`).
``kernel_perms`` tells which program inputs are used only as convolution kernels, so that a caller can store
those parameters already transposed, once, instead of in every call (:func:`kernel_perms`).

Before::

    x (N,C,H,W) -> transpose -> conv -> transpose -> bias add, relu -> transpose -> conv -> transpose ...

After::

    x (N,C,H,W) -> transpose -> conv -> bias add, relu -> conv -> ... -> transpose -> out
"""

from __future__ import annotations

import math

from ast_hybrid.ops import max_pool
from ast_hybrid.xla import channel_last_rules as rules
from ast_hybrid.xla import conv_tuning, hoist, onednn

__all__ = ["channel_last", "kernel_perms", "count_convolutions"]

_INLINE = hoist.INLINE       # nested calls, run inline
_CUSTOM = frozenset({"custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr"})    # a derivative rule of their own


def count_convolutions(jaxpr, ungrouped=False):
    """How many ``conv_general_dilated`` (``ungrouped``: with one feature group) a jaxpr runs, inlined calls
    included."""
    return sum(not ungrouped or e.params["feature_group_count"] == 1 for e in convolutions(jaxpr))


def convolutions(jaxpr):
    """The ``conv_general_dilated`` equations of a jaxpr, inlined calls included."""
    for e in jaxpr.eqns:
        if e.primitive.name == "conv_general_dilated":
            yield e
        elif e.primitive.name in _INLINE:
            sub = e.params[_INLINE[e.primitive.name]]
            yield from convolutions(getattr(sub, "jaxpr", sub))


def kernel_perms(closed, n_inputs=None, im2col=False, weight_first=0):
    """{input index: perm} for the program inputs (among the first ``n_inputs``) that are convolution
    kernels: used only as a convolution's kernel or reshaped (an im2col convolution's kernel), each with the
    layout :func:`channel_last` wants kernels in: ``*spatial, I, O``, or ``O, *spatial, I`` for a kernel
    that is the first operand of its GEMMs (``weight_first``, ``im2col``: as :func:`channel_last` takes them)."""
    from jax.extend import core     # here, not at import: a program read from the program cache needs none (26 ms)

    uses = {}

    def walk(jaxpr, names):
        readers = {}
        for e in jaxpr.eqns:
            for v in e.invars:
                if not isinstance(v, core.Literal):
                    readers.setdefault(v, []).append(e)
        for e in jaxpr.eqns:
            name = e.primitive.name
            if name in _INLINE:
                sub = e.params[_INLINE[name]]
                sub = getattr(sub, "jaxpr", sub)
                walk(sub, {sv: names[v] for v, sv in zip(e.invars, sub.invars)
                           if not isinstance(v, core.Literal) and v in names})
                continue
            for i, v in enumerate(e.invars):
                if isinstance(v, core.Literal) or v not in names:
                    continue
                if name == "conv_general_dilated" and i == 1:
                    dn = e.params["dimension_numbers"]
                    first = _im2col(e, im2col) and rules.conv_m(e) <= weight_first
                    uses.setdefault(names[v], set()).add(rules.im2col_kernel_perm(dn.rhs_spec, first))
                elif name == "reshape" and len(v.aval.shape) >= 3:
                    dots = [r for r in readers.get(e.outvars[0], ()) if r.primitive.name == "dot_general"]
                    if dots and all(_gemm_m(d, e.outvars[0]) <= weight_first for d in dots):
                        rank = len(v.aval.shape)
                        uses.setdefault(names[v], set()).add((0, *range(2, rank), 1))
                    else:
                        uses.setdefault(names[v], set()).add("reshape")
                else:
                    uses.setdefault(names[v], set()).add(None)
        for v in jaxpr.outvars:
            if not isinstance(v, core.Literal) and v in names:
                uses.setdefault(names[v], set()).add(None)

    jaxpr = closed.jaxpr
    invars = jaxpr.invars if n_inputs is None else jaxpr.invars[:n_inputs]
    walk(jaxpr, {v: i for i, v in enumerate(invars)})
    out = {}
    for i, s in uses.items():
        s = s - {"reshape"}
        rank = len(invars[i].aval.shape)
        if None not in s and len(s) <= 1 and rank >= 3:
            out[i] = next(iter(s)) if s else (*range(2, rank), 1, 0)
    return out


def channel_last(closed, args, in_perms=None, n_static=0, stored_out=False, im2col=False, weight_first=0,
                 differentiable=False, native=False):
    """Run ``closed`` (a ClosedJaxpr) on ``args`` channel-last; ``in_perms[i]``: the layout ``args[i]`` is
    stored in (default logical); the first ``n_static`` args are parameters (what only they determine is a
    weight: ``dot_general`` puts the other operand first); ``im2col``: every ungrouped XLA convolution
    computed as im2col + one GEMM instead (True), or those whose ``conv_tuning.signature`` it holds (a set);
    ``weight_first``: a GEMM of a weight with an activation whose other axes hold at most that many elements
    (an im2col convolution on a small feature map, a Dense layer at a small batch) takes the weight as its
    first operand, stored output-features-major (``program.WEIGHT_FIRST``); ``differentiable``: the result
    will be differentiated (a training program's forward), so derivative rules are kept (module doc); ``native``:
    2-D float32 convolutions that oneDNN computes go through it (``xla/onednn.py``; CPU only).  Returns
    the outputs, logical (``stored_out``: as stored, each with its layout, for measuring a piece of a program)."""
    in_perms = in_perms or {}
    vals = [rules.Val(a, in_perms.get(i), static=i < n_static) for i, a in enumerate(args)]
    opts = (im2col, weight_first, differentiable, native)
    outs = _run(closed.jaxpr, [rules.Val(c, static=True) for c in closed.consts], vals, opts)
    if stored_out:
        return [(o.get(o.perm), o.perm) for o in outs]
    return [o.get(None) for o in outs]


def _run(jaxpr, consts, args, opts):
    from jax._src import source_info_util
    from jax.extend import core

    env = {}

    def read(v):
        return rules.Val(v.val, static=True) if isinstance(v, core.Literal) else env[v]

    for v, c in zip(jaxpr.constvars, consts):
        env[v] = c
    for v, a in zip(jaxpr.invars, args):
        env[v] = a
    for e in jaxpr.eqns:
        ins = [read(v) for v in e.invars]
        # under the equation's name and traceback, as jax's own eval_jaxpr: the compiled program's metadata and
        # a profile's names (``jvp(Convolution)``) are the program's as traced
        name_stack = source_info_util.current_name_stack() + e.source_info.name_stack
        with source_info_util.user_context(e.source_info.traceback, name_stack=name_stack):
            outs = _apply(e, ins, opts)
        if e.primitive.name not in _INLINE:
            static = all(i.static for i in ins)
            for o in outs:
                o.static = static
        for v, o in zip(e.outvars, outs):
            if not isinstance(v, core.DropVar):
                env[v] = o
    return [read(v) for v in jaxpr.outvars]


def _apply(e, ins, opts):
    name, params = e.primitive.name, e.params
    im2col, weight_first, differentiable, native = opts
    if differentiable and name in _CUSTOM:
        out = _custom_jvp(e, ins, opts) if name == "custom_jvp_call" else _max_pool(e, ins)
        return out if out is not None else rules.plain(e, [i.get(None) for i in ins])
    if name in _INLINE:
        from jax._src import source_info_util

        sub = params[_INLINE[name]]
        with source_info_util.extend_name_stack(params.get("name") or ""):   # `Convolution`'s jit, say
            if hasattr(sub, "consts"):
                return _run(sub.jaxpr, [rules.Val(c, static=True) for c in sub.consts], ins, opts)
            return _run(sub, [], ins, opts)
    if name == "conv_general_dilated" and native:
        out = _onednn(e, ins)
        if out is not None:
            return out
    if name == "conv_general_dilated" and (_im2col(e, im2col) or (differentiable and _thin_stem(e))):
        return rules.conv_im2col(e, ins, weight_first)
    if name == "dot_general":
        out = rules.dot(e, ins, weight_first)
        if out is not None:
            return out
    rule = rules.rule(name, whole_windows=differentiable)
    if rule is not None:
        out = rule(e, ins)
        if out is not None:
            return out
    return rules.plain(e, [i.get(None) for i in ins])


def _custom_jvp(e, ins, opts):
    """An element-wise ``custom_jvp`` function (every operand and output of one shape, or a scalar; floats) on
    the layout its first stored operand has, its primal and its derivative rule both interpreted in that layout
    (the rule as jax traced it for these operands); None for any other."""
    import jax
    import jax.numpy as jnp

    p = e.params
    shapes = {tuple(v.aval.shape) for v in e.outvars}
    perm = rules.target(ins)
    if p["symbolic_zeros"] or perm is None or len(shapes) != 1:
        return None
    shape = shapes.pop()
    if any(v.ndim and v.shape != shape for v in ins) or \
            not all(jnp.issubdtype(v.aval.dtype, jnp.inexact) for v in (*e.invars, *e.outvars)):
        return None
    n_consts, call = p["num_consts"], p["call_jaxpr"]
    perms = [perm if v.ndim else None for v in ins]
    jvp_jaxpr, jvp_consts, out_zeros = p["jvp_jaxpr_fun"].call_wrapped(*[False] * (len(ins) - n_consts))

    def run(jaxpr, consts, arrays, layouts):
        outs = _run(jaxpr, [rules.Val(c, static=True) for c in consts],
                    [rules.Val(a, q) for a, q in zip(arrays, layouts)], opts)
        return [o.get(perm) for o in outs]

    @jax.custom_jvp
    def stored(*arrays):
        return run(call.jaxpr, call.consts, arrays, perms)

    @stored.defjvp
    def _jvp(primals, tangents):
        layouts = perms[n_consts:]
        outs = run(jvp_jaxpr, jvp_consts, (*primals[n_consts:], *tangents[n_consts:]), (*layouts, *layouts))
        values, nonzero = outs[:len(out_zeros)], iter(outs[len(out_zeros):])
        return values, [jnp.zeros_like(v) if z else next(nonzero) for v, z in zip(values, out_zeros)]

    return [rules.Val(o, perm) for o in stored(*[v.get(q) for v, q in zip(ins, perms)])]


def _max_pool(e, ins):
    """``ops.max_pool``'s 2-D max pooling (its ``custom_vjp``) of an NCHW value stored NHWC: its NHWC form on the
    stored array; None for any other ``custom_vjp`` function or layout."""
    bwd = getattr(e.params.get("bwd"), "f", None)
    if e.primitive.name != "custom_vjp_call" or getattr(bwd, "__module__", None) != max_pool.__name__:
        return None
    (x,), inner = ins, e.params["call_jaxpr"].jaxpr.eqns
    if len(inner) != 1 or inner[0].primitive.name != "reduce_window_max" or x.perm != (0, 2, 3, 1):
        return None
    w = inner[0].params
    if tuple(w["window_dimensions"][:2]) != (1, 1):     # pooled over H and W of an NCHW value
        return None
    y = max_pool.max_pool_windows(x.arr, tuple(w["window_dimensions"][2:]), tuple(w["window_strides"][2:]),
                                  tuple(tuple(q) for q in w["padding"][2:]), False)
    return [rules.Val(y, x.perm)]


def _onednn(e, ins):
    """Convolution ``e`` through oneDNN's primitives (channel-last operands, a channel-last output), or None where
    oneDNN does not compute it (``onednn.geometry``, ``onednn.prepare``)."""
    geo = onednn.geometry(e)
    if geo is None:
        return None
    x_perm, w_perm, out_perm = rules.conv_perms(e)
    shape = lambda v, perm: tuple(v.aval.shape[d] for d in perm)     # noqa: E731
    if not onednn.prepare(geo, shape(e.invars[0], x_perm), shape(e.invars[1], w_perm),
                          shape(e.outvars[0], out_perm)):
        return None
    x, w = ins
    return [rules.Val(onednn.conv(x.get(x_perm), w.get(w_perm), geo), out_perm)]


def _thin_stem(e):
    """Whether convolution ``e`` of a program to differentiate is a thin stem that im2col + GEMM computes faster,
    forward and weight gradient, than XLA:CPU's convolution: at most 27 input cells per output (3 channels 3x3, 1
    channel 5x5), at most 32 filters, at most 65,536 output positions (batch x spatial).  Measured at b64 NHWC
    (bench/HISTORY.md, session 53): 3 -> 32 channels on 32x32, forward 5.4 -> 1.8 ms, weight gradient 5.4 ->
    2.2 ms; training steps of the small CNN 59-65 -> 57-58 ms, CIFAR ResNet-20 222-225 -> 205-208 ms, LeNet
    6.0-7.7 -> 5.8-6.5 ms; wider stems (64 filters at 64x64 or 224x224, 7x7 kernels) were slower so and are
    left to XLA."""
    if not rules.conv_im2col_applies(e):
        return False
    dn = e.params["dimension_numbers"]
    xs, ws = e.invars[0].aval.shape, e.invars[1].aval.shape
    cells = xs[dn.lhs_spec[1]] * math.prod(ws[d] for d in dn.rhs_spec[2:])
    return cells <= 27 and ws[dn.rhs_spec[0]] <= 32 and rules.conv_m(e) <= 65536


def _im2col(e, im2col):
    """Whether convolution ``e`` is computed as im2col (``im2col``: True, or a set of signatures)."""
    if im2col is True:
        return rules.conv_im2col_applies(e)
    return bool(im2col) and conv_tuning.signature(e) in im2col and rules.conv_im2col_applies(e)


def _gemm_m(dot, weight):
    """How many elements ``dot``'s operand other than ``weight`` holds outside its contracted axes (a huge
    number for a batched dot: never weight-first)."""
    (lc, rc), (lb, rb) = dot.params["dimension_numbers"]
    other, contracted, batch = (dot.invars[1], rc, rb) if dot.invars[0] is weight else (dot.invars[0], lc, lb)
    if batch:
        return 1 << 62
    return math.prod(n for d, n in enumerate(other.aval.shape) if d not in contracted)
