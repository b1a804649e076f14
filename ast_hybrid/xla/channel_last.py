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

:class:`Program` (what a hybridized block's predict program is) also computes as im2col + GEMM each XLA
convolution that ``conv_tuning`` measured faster so on this machine (``im2col``: a set of signatures), and,
where its parameters do not fit the last-level cache, gives a GEMM over few rows (an im2col convolution on a
small feature map, a Dense layer at a small batch) its weight as first operand, stored output-features-major
(``weight_first``, :data:`WEIGHT_FIRST`): XLA:CPU streams a cold weight from memory faster that way.

Nested jitted calls and ``custom_jvp``/``custom_vjp`` functions are inlined (this is for predict programs:
nothing differentiates the result).  ``kernel_perms`` tells which program inputs are used only as
convolution kernels, so that a caller can store those parameters already transposed, once, instead of in
every call (:func:`kernel_perms`).  :class:`Program` first moves what the parameters alone determine out of
the program (``xla/hoist.py``); one small compiled program computes it and the transposed kernels once per
parameter update (:class:`Executable`).

Before::

    x (N,C,H,W) -> transpose -> conv -> transpose -> bias add, relu -> transpose -> conv -> transpose ...

After::

    x (N,C,H,W) -> transpose -> conv -> bias add, relu -> conv -> ... -> transpose -> out

Over 600 lines: the channel-last interpreter, its rules per primitive and the program that runs it share
one state; splitting the program from the interpreter is in progress (issue 29).
"""

from __future__ import annotations

import math
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ast_hybrid.xla import host_memory
from ast_hybrid.core import settings
from ast_hybrid.ops import conv_lowering
from ast_hybrid.xla import conv_tuning, hoist

__all__ = ["channel_last", "kernel_perms", "count_convolutions"]

_ELEMENTWISE = frozenset("""
add sub mul div max min neg exp exp2 log tanh logistic sqrt rsqrt cbrt abs pow integer_pow select_n
convert_element_type erf erfc erf_inv sign floor ceil round square and or not xor gt lt ge le eq ne clamp
nextafter is_finite copy copy_p expm1 log1p atan2 rem sin cos tan asin acos atan sinh cosh asinh acosh
atanh reduce_precision stop_gradient imag real conj
""".split())
_REDUCE = frozenset("reduce_sum reduce_max reduce_min reduce_prod reduce_and reduce_or argmax argmin".split())
_WINDOW = frozenset("reduce_window_max reduce_window_min reduce_window_sum reduce_window".split())
_INLINE = hoist.INLINE       # nested calls, run inline


def _inv(p):
    out = [0] * len(p)
    for i, d in enumerate(p):
        out[d] = i
    return tuple(out)


def _ident(p):
    return p is None or all(i == d for i, d in enumerate(p))


class _Val:
    """A value stored as ``transpose(logical, perm)``; ``make(perm)`` (a broadcast) builds it in any layout."""

    __slots__ = ("arr", "perm", "make", "shape", "static", "elementwise", "_memo")

    def __init__(self, arr, perm=None, make=None, shape=None, static=False):
        self.arr, self.make, self.static, self._memo = arr, make, static, {}
        self.elementwise = False        # made by an element-wise operation (XLA fuses it into its consumer)
        self.perm = None if perm is None or _ident(perm) else tuple(perm)
        if shape is None:
            stored = tuple(np.shape(arr))
            shape = stored if self.perm is None else tuple(stored[i] for i in _inv(self.perm))
        self.shape = shape

    @property
    def ndim(self):
        return len(self.shape)

    def get(self, perm):
        """The array stored in ``perm`` (None: logical)."""
        perm = None if perm is None or _ident(perm) else tuple(perm)
        if perm == self.perm and self.arr is not None:
            return self.arr
        if perm in self._memo:
            return self._memo[perm]
        if self.make is not None:
            out = self.make(perm)
        else:
            src = self.perm or tuple(range(len(self.arr.shape)))
            inv = _inv(src)
            tgt = perm or tuple(range(len(src)))
            out = lax.transpose(self.arr, tuple(inv[d] for d in tgt))
        self._memo[perm] = out
        return out


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
                    first = _im2col(e, im2col) and _conv_m(e) <= weight_first
                    uses.setdefault(names[v], set()).add(_im2col_kernel_perm(dn.rhs_spec, first))
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


def channel_last(closed, args, in_perms=None, n_static=0, stored_out=False, im2col=False, weight_first=0):
    """Run ``closed`` (a ClosedJaxpr) on ``args`` channel-last; ``in_perms[i]``: the layout ``args[i]`` is
    stored in (default logical); the first ``n_static`` args are parameters (what only they determine is a
    weight: ``dot_general`` puts the other operand first); ``im2col``: every ungrouped XLA convolution
    computed as im2col + one GEMM instead (True), or those whose ``conv_tuning.signature`` it holds (a set);
    ``weight_first``: a GEMM of a weight with an activation whose other axes hold at most that many elements
    (an im2col convolution on a small feature map, a Dense layer at a small batch) takes the weight as its
    first operand, stored output-features-major (:data:`WEIGHT_FIRST`).  Returns the outputs, logical
    (``stored_out``: as stored, each with its layout, for measuring a piece of a program)."""
    in_perms = in_perms or {}
    vals = [_Val(a, in_perms.get(i), static=i < n_static) for i, a in enumerate(args)]
    outs = _run(closed.jaxpr, [_Val(c, static=True) for c in closed.consts], vals, (im2col, weight_first))
    if stored_out:
        return [(o.get(o.perm), o.perm) for o in outs]
    return [o.get(None) for o in outs]


def _run(jaxpr, consts, args, opts):
    from jax.extend import core

    env = {}

    def read(v):
        return _Val(v.val, static=True) if isinstance(v, core.Literal) else env[v]

    for v, c in zip(jaxpr.constvars, consts):
        env[v] = c
    for v, a in zip(jaxpr.invars, args):
        env[v] = a
    for e in jaxpr.eqns:
        ins = [read(v) for v in e.invars]
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
    im2col, weight_first = opts
    if name in _INLINE:
        sub = params[_INLINE[name]]
        if hasattr(sub, "consts"):
            return _run(sub.jaxpr, [_Val(c, static=True) for c in sub.consts], ins, opts)
        return _run(sub, [], ins, opts)
    if name == "conv_general_dilated" and _im2col(e, im2col):
        return _conv_im2col(e, ins, weight_first)
    if name == "dot_general":
        out = _dot(e, ins, weight_first)
        if out is not None:
            return out
    rule = _RULES.get(name)
    if rule is None and name in _ELEMENTWISE:
        rule = _elementwise
    if rule is None and name in _REDUCE:
        rule = _reduce
    if rule is None and name in _WINDOW:
        rule = _window
    if rule is not None:
        out = rule(e, ins)
        if out is not None:
            return out
    return _plain(e, [i.get(None) for i in ins])


def _im2col(e, im2col):
    """Whether convolution ``e`` is computed as im2col (``im2col``: True, or a set of signatures)."""
    if im2col is True:
        return _conv_im2col_applies(e)
    return bool(im2col) and conv_tuning.signature(e) in im2col and _conv_im2col_applies(e)


def _plain(e, arrays, **override):
    params = dict(e.primitive.get_bind_params(e.params))
    params.update(override)
    with e.ctx.manager:
        out = e.primitive.bind(*arrays, **params)
    outs = out if e.primitive.multiple_results else [out]
    return [_Val(o) for o in outs]


def _bind1(e, arrays, perm, **override):
    return [_Val(_plain(e, arrays, **override)[0].arr, perm)]


# --- rules: each returns the outputs, or None to fall back to the logical layout -------------------------------

def _conv(e, ins):
    x, w = ins
    dn = e.params["dimension_numbers"]
    lhs, rhs, out = dn.lhs_spec, dn.rhs_spec, dn.out_spec
    r = len(lhs)
    x_perm = (lhs[0], *lhs[2:], lhs[1])
    w_perm = (*rhs[2:], rhs[1], rhs[0])
    # stored: lhs N,*S,C; rhs *S,I,O; out N,*S,C  (spec = (batch/out-feature, feature/in-feature, *spatial))
    new = lax.ConvDimensionNumbers((0, r - 1, *range(1, r - 1)), (r - 1, r - 2, *range(r - 2)),
                                   (0, r - 1, *range(1, r - 1)))
    out_perm = (out[0], *out[2:], out[1])
    return _bind1(e, [x.get(x_perm), w.get(w_perm)], out_perm, dimension_numbers=new)


def _conv_im2col(e, ins, weight_first=0):
    """An ungrouped float convolution as im2col + one GEMM, channel-last: the input's windows stacked before
    its channels ``(N, *out, K, C)`` against the kernel as stored, ``(*kernel, I, O)`` = ``(K, C, O)``; or,
    where the output has at most ``weight_first`` positions, the kernel stored ``(O, *kernel, I)`` first."""
    x, w = ins
    p = e.params
    if not _conv_im2col_applies(e):
        return _conv(e, ins)
    dn = p["dimension_numbers"]
    lhs, rhs, out = dn.lhs_spec, dn.rhs_spec, dn.out_spec
    nsp = len(lhs) - 2
    xs = x.get((lhs[0], *lhs[2:], lhs[1]))
    first = _conv_m(e) <= weight_first
    ws = w.get(_im2col_kernel_perm(rhs, first))
    kernel = ws.shape[1:-1] if first else ws.shape[:nsp]
    pad = [tuple(q) for q in p["padding"]]
    windows = [win for _, win in conv_lowering._windows(xs, kernel, p["window_strides"], p["rhs_dilation"], pad, False)]
    patches = windows[0][..., None, :] if len(windows) == 1 else jnp.stack(windows, axis=-2)
    if first:       # (O, K, C) x (N, *out, K, C) -> (O, N, *out), then channel-last
        wk = ws.reshape(ws.shape[0], len(windows), ws.shape[-1])
        y = lax.dot_general(wk, patches, (((1, 2), (nsp + 1, nsp + 2)), ((), ())))
        y = lax.transpose(y, (*range(1, nsp + 2), 0))
    else:
        wk = ws.reshape(len(windows), ws.shape[-2], ws.shape[-1])
        y = lax.dot_general(patches, wk, (((nsp + 1, nsp + 2), (0, 1)), ((), ())))
    return [_Val(y, (out[0], *out[2:], out[1]))]


def _conv_im2col_applies(e):
    p = e.params
    return p["feature_group_count"] == 1 and p["batch_group_count"] == 1 and all(d == 1 for d in p["lhs_dilation"]) \
        and jnp.issubdtype(e.outvars[0].aval.dtype, jnp.floating)


def _gemm_m(dot, weight):
    """How many elements ``dot``'s operand other than ``weight`` holds outside its contracted axes (a huge
    number for a batched dot: never weight-first)."""
    (lc, rc), (lb, rb) = dot.params["dimension_numbers"]
    other, contracted, batch = (dot.invars[1], rc, rb) if dot.invars[0] is weight else (dot.invars[0], lc, lb)
    if batch:
        return 1 << 62
    return math.prod(n for d, n in enumerate(other.aval.shape) if d not in contracted)


def _conv_m(e):
    """The output positions (batch x spatial) of convolution ``e``: the GEMM's M as im2col computes it."""
    shape = e.outvars[0].aval.shape
    dn = e.params["dimension_numbers"]
    return shape[dn.out_spec[0]] * math.prod(shape[d] for d in dn.out_spec[2:])


def _im2col_kernel_perm(rhs, first):
    return (rhs[0], *rhs[2:], rhs[1]) if first else (*rhs[2:], rhs[1], rhs[0])


def _target(ins):
    """The layout an element-wise operation works in: its first stored (not broadcast) operand's."""
    for v in ins:
        if v.make is None and v.perm is not None and v.ndim > 0:
            return v.perm
    return None


def _elementwise(e, ins):
    perm = _target(ins)
    if perm is None:
        return None
    arrays = [v.get(perm) if v.ndim == len(perm) else v.get(None) for v in ins]
    out = _bind1(e, arrays, perm)
    out[0].elementwise = True
    return out


def _broadcast(e, ins):
    (x,) = ins
    shape, bdims = e.params["shape"], e.params["broadcast_dimensions"]
    if len(shape) < 3:      # no layout to choose
        return None
    if _stored(x):
        # a stored value given new axes: keep its order, each new axis right after the one before it logically
        order = [bdims[d] for d in x.perm]
        for a in sorted(set(range(len(shape))) - set(bdims)):
            order.insert(order.index(a - 1) + 1 if a - 1 in order else 0, a)
        pos = {d: i for i, d in enumerate(order)}
        return _bind1(e, [x.arr], tuple(order), shape=tuple(shape[d] for d in order),
                      broadcast_dimensions=tuple(pos[bdims[d]] for d in x.perm))

    def make(perm):
        perm = perm or tuple(range(len(shape)))
        invq = _inv(perm)
        pos = [invq[d] for d in bdims]          # where operand axis j lands, stored
        order = tuple(sorted(range(len(bdims)), key=pos.__getitem__))
        arr = x.get(order if order else None)
        return _plain(e, [arr], shape=tuple(shape[d] for d in perm),
                      broadcast_dimensions=tuple(sorted(pos)))[0].arr

    return [_Val(None, None, make, tuple(shape))]


def _transpose(e, ins):
    (x,) = ins
    t = e.params["permutation"]
    if not _stored(x):
        return None
    invt = _inv(t)
    return [_Val(x.arr, tuple(invt[d] for d in x.perm))]


def _stored(v):
    """Whether ``v`` is an array kept in a layout of its own (else a rule leaves it to the logical layout)."""
    return v.perm is not None and v.make is None


def _dims_left(perm, dropped):
    """The layout of what remains of a value stored in ``perm`` once logical axes ``dropped`` are gone."""
    keep = [d for d in range(len(perm)) if d not in dropped]
    rank = {d: i for i, d in enumerate(keep)}
    return tuple(rank[d] for d in perm if d not in dropped)


def _dropping(param):
    """The rule of reductions (``axes``) and ``squeeze`` (``dimensions``): those axes renumbered; what remains
    keeps its stored order."""
    def rule(e, ins):
        (x,) = ins
        if not _stored(x):
            return None
        dropped, invp = e.params[param], _inv(x.perm)
        return _bind1(e, [x.arr], _dims_left(x.perm, set(dropped)), **{param: tuple(sorted(invp[a] for a in dropped))})
    return rule


_reduce = _dropping("axes")


def _permuted(params, keys, perm):
    return {k: tuple(params[k][d] for d in perm) for k in keys if params.get(k) is not None}


def _window(e, ins):
    x = ins[0]
    if not _stored(x) or any(v.ndim for v in ins[1:]):
        return None
    keys = ("window_dimensions", "window_strides", "padding", "base_dilation", "window_dilation")
    params = _permuted(e.params, keys, x.perm)
    if e.primitive.name in _SEPARABLE:
        return _separable(e, x, params)
    return _bind1(e, [x.arr] + [v.get(None) for v in ins[1:]], x.perm, **params)


_SEPARABLE = frozenset({"reduce_window_max", "reduce_window_min", "reduce_window_sum"})


def _separable(e, x, params):
    """A window that overlaps its neighbours (3x3 windows at stride 2 or 1: most vision networks' max
    pooling, Inception's average pooling) reduced over each axis in turn, the last stored axis first, where
    XLA:CPU's reduce_window visits every cell of every window: max pooling 3x3/2 on 111x111x64 (SqueezeNet's
    first pool) 0.61 -> 0.15 ms at batch 1, 8.5 -> 5.0 ms at 16; a 3x3/1 sum on 17x17x768 0.49 -> 0.10 ms
    (bench/HISTORY.md).  A max or min is the same bit for bit (each step picks one of its inputs; padding adds
    the identity on each axis as on the whole window); a sum is added in another order (1e-7 relative).
    Windows that do not overlap (2x2 at stride 2, global pooling) measured slower in two steps: left whole."""
    window, strides = params["window_dimensions"], params["window_strides"]
    pad, dilation = params["padding"], params["window_dilation"]
    axes = [d for d in range(len(window)) if window[d] > 1 or strides[d] > 1 or tuple(pad[d]) != (0, 0)]
    overlapping = any(window[d] > strides[d] for d in axes)
    if len(axes) < 2 or not overlapping or any(b != 1 for b in params["base_dilation"]):
        return _bind1(e, [x.arr], x.perm, **params)
    y = x.arr
    for d in reversed(axes):
        def only(values, rest):
            return tuple(v if i == d else rest for i, v in enumerate(values))
        y = _plain(e, [y], window_dimensions=only(window, 1), window_strides=only(strides, 1),
                   padding=only(tuple(tuple(q) for q in pad), (0, 0)), base_dilation=params["base_dilation"],
                   window_dilation=only(dilation, 1))[0].arr
    return [_Val(y, x.perm)]


def _pad(e, ins):
    x, value = ins
    if not _stored(x):
        return None
    config = tuple(e.params["padding_config"][d] for d in x.perm)
    return _bind1(e, [x.arr, value.get(None)], x.perm, padding_config=config)


def _slice(e, ins):
    (x,) = ins
    if not _stored(x):
        return None
    return _bind1(e, [x.arr], x.perm, **_permuted(e.params, ("start_indices", "limit_indices", "strides"), x.perm))


def _concatenate(e, ins):
    perm = _target(ins)
    if perm is None:
        return None
    arrays = [v.get(perm) for v in ins]
    d = _inv(perm)[e.params["dimension"]]
    if len(arrays) == _SELECTED and d == len(perm) - 1 and all(v.elementwise for v in ins):
        return [_Val(_selected(arrays), perm)]
    return _bind1(e, arrays, perm, dimension=d)


_SELECTED = 2       # concatenations of this many element-wise results on the channel axis: padded and selected


def _selected(arrays):
    """Two arrays joined on their last axis as ``select(index < n, pad(a), pad(b))``: the same values, and
    where element-wise operations make both (a Fire module's two ReLUs), XLA fuses them with it into one
    pass, where its concatenate is a copy of its own after they were written.  SqueezeNet 1.1, whole
    programs interleaved: batch 1 6.83 -> 6.50 ms, 16 143 -> 136 and 140 -> 137.  Not taken where an operand
    is not element-wise (DenseNet's growing concatenations, 2.8% slower at batch 16 this way), nor for
    three or four operands (Inception-v3's, 2.7% slower) (bench/HISTORY.md)."""
    a, b = arrays
    n, total = a.shape[-1], a.shape[-1] + b.shape[-1]
    zero = jnp.zeros((), a.dtype)
    keep = [(0, 0, 0)] * (a.ndim - 1)
    pa = lax.pad(a, zero, keep + [(0, total - n, 0)])
    pb = lax.pad(b, zero, keep + [(n, 0, 0)])
    return lax.select(lax.broadcasted_iota(jnp.int32, pa.shape, a.ndim - 1) < n, pa, pb)


def _stack(e, ins):
    perm = _target(ins)
    if perm is None:
        return None
    axis = e.params["axis"]
    invp = _inv(perm)
    # the new axis goes right before the stored position of logical axis ``axis - 1`` (im2col: the kernel
    # offsets before the channels, as a kernel stored ``*spatial, I, O`` has them)
    s = invp[axis - 1] if axis > 0 else invp[0]
    shifted = [d + (d >= axis) for d in perm]
    out_perm = tuple(shifted[:s] + [axis] + shifted[s:])
    return _bind1(e, [v.get(perm) for v in ins], out_perm, axis=s)


def _dot(e, ins, weight_first=0):
    lhs, rhs = ins
    (lc, rc), (lb, rb) = e.params["dimension_numbers"]
    if lhs.make is not None or rhs.make is not None:
        return None
    nb = len(lb)
    lp = lhs.perm or tuple(range(lhs.ndim))
    rp = rhs.perm or tuple(range(rhs.ndim))
    lfree = [d for d in range(len(lp)) if d not in lc and d not in lb]
    rfree = [d for d in range(len(rp)) if d not in rc and d not in rb]
    # a weight (what the parameters alone determine) second: the activation's free axes lead the output,
    # and a kernel stored ``*spatial, I, O`` is then a plain (K, O) matrix to XLA's GEMM; first where the
    # activation has at most ``weight_first`` rows and the weight is stored with its free axes leading
    # (a kernel ``O, *spatial, I``, a Dense weight ``(O, I)``): a plain (O, K) matrix
    keep = lhs.static and not rhs.static and not nb and _rows(rhs, rfree) <= weight_first and _leads(lp, lfree, lc)
    first = rhs.static and not lhs.static and not nb and _rows(lhs, lfree) <= weight_first and _leads(rp, rfree, rc)
    if not (_stored(lhs) or _stored(rhs) or first):
        return None
    # logical output: batch, lhs free (logical order), rhs free (logical order)
    lpos = {d: nb + i for i, d in enumerate(lfree)}
    rpos = {d: nb + len(lfree) + i for i, d in enumerate(rfree)}
    li, ri = _inv(lp), _inv(rp)
    lstored = [lpos[d] for d in lp if d in lpos]
    rstored = [rpos[d] for d in rp if d in rpos]
    pairs = sorted((li[a], ri[b]) for a, b in zip(lc, rc))     # contracted in the lhs's stored order
    dn_l = (tuple(a for a, _ in pairs), tuple(li[d] for d in lb))
    dn_r = (tuple(b for _, b in pairs), tuple(ri[d] for d in rb))
    if first or (lhs.static and not rhs.static and not keep):
        pairs = sorted((b, a) for a, b in pairs)
        dn = ((tuple(b for b, _ in pairs), tuple(a for _, a in pairs)), (dn_r[1], dn_l[1]))
        perm = tuple(range(nb)) + tuple(rstored) + tuple(lstored)
        arrays = [rhs.arr, lhs.arr]
    else:
        dn = ((dn_l[0], dn_r[0]), (dn_l[1], dn_r[1]))
        perm = tuple(range(nb)) + tuple(lstored) + tuple(rstored)
        arrays = [lhs.arr, rhs.arr]
    return _bind1(e, arrays, perm, dimension_numbers=dn)


def _rows(v, free):
    """The elements of ``v`` outside its contracted and batch axes (``free``): a GEMM's M."""
    return math.prod(v.shape[d] for d in free)


def _leads(perm, free, contracted):
    """Whether a value stored in ``perm`` holds its ``free`` axes before all its ``contracted`` ones."""
    pos = _inv(perm)
    return bool(free) and max(pos[d] for d in free) < min(pos[d] for d in contracted)


def _groups(old, new):
    """For a reshape from ``old`` to ``new``: per new axis, the old axes (of size > 1) it merges or splits
    from, or None when an old axis is split across new axes with others (not a regrouping)."""
    groups, i = [], 0
    for n in new:
        g, prod = [], 1
        while prod < n:
            while i < len(old) and old[i] == 1:
                i += 1
            if i == len(old):
                return None
            prod *= old[i]
            g.append(i)
            i += 1
        if prod != n:
            return None
        groups.append(g)
    if any(old[j] != 1 for j in range(i, len(old))):
        return None
    return groups


def _reshape(e, ins):
    x = ins[0]
    if not _stored(x) or len(ins) > 1 or e.params.get("dimensions") is not None:
        return None
    new = tuple(e.params["new_sizes"])
    groups = _groups(x.shape, new)
    if groups is None:
        return None
    stored = [d for d in x.perm if x.shape[d] != 1]        # the old axes of size > 1, in stored order
    where = {d: i for i, d in enumerate(stored)}
    sized = sorted((j for j, g in enumerate(groups) if g), key=lambda j: where[groups[j][0]])
    if [d for j in sized for d in groups[j]] != stored:
        return None         # a merged group is not contiguous (or not in order) in the stored array
    order = list(sized)
    for j in range(len(new)):
        if not groups[j]:       # a new axis of size 1: right after the new axis before it
            order.insert(order.index(j - 1) + 1 if j - 1 in order else 0, j)
    return _bind1(e, [x.arr], tuple(order), new_sizes=tuple(new[j] for j in order))


_RULES = {"conv_general_dilated": _conv, "broadcast_in_dim": _broadcast, "transpose": _transpose,
          "squeeze": _dropping("dimensions"), "pad": _pad, "slice": _slice, "concatenate": _concatenate,
          "stack": _stack, "reshape": _reshape}      # and dot_general: _dot, in _apply


# --- a predict program compiled channel-last, as jax.jit compiles it ---------------------------------------------

ENV_SWITCH = "AST_HYBRID_CHANNEL_LAST"


def enabled() -> bool:
    """Whether hybridized blocks' predict programs run channel-last (``AST_HYBRID_CHANNEL_LAST=0`` turns it off)."""
    return settings.get(ENV_SWITCH)


class Program:
    """``fn(leaves, *xs)`` (a predict program: ``leaves`` the parameters) compiled channel-last when it
    convolves, else exactly as ``jax.jit(fn)``.  Behaves as a jitted function: called, or ``.lower(leaves,
    *xs).compile()``; its executables take the parameters as they are and keep their kernels transposed
    (``*spatial, I, O``) while the same ``leaves`` tuple comes back, so a kernel is transposed once per
    parameter update, not per call."""

    def __init__(self, fn):
        self.fn = fn
        self.plain = jax.jit(fn)
        self.table = {}

    def __call__(self, leaves, *xs):
        # keyed by the inputs only, as the program cache keys it: the parameters' shapes cannot change under
        # one program (the block builds a new one), and walking them would cost every call
        sig = []
        for a in jax.tree_util.tree_leaves(xs):
            if isinstance(a, jax.core.Tracer) or not hasattr(a, "shape"):
                return self.plain(leaves, *xs)        # inside another trace, or Python values: jax.jit's path
            sig.append((a.shape, a.dtype, getattr(a, "weak_type", False)))
        sig = tuple(sig)
        exe = self.table.get(sig)
        if exe is None:
            exe = self.table[sig] = self.lower(leaves, *xs).compile()
        return exe(leaves, *xs)

    def lower(self, leaves, *xs):
        closed, out_tree = self._trace(leaves, xs)
        n = len(jax.tree_util.tree_leaves(leaves))
        if not count_convolutions(closed.jaxpr) or closed.effects:      # as traced (and not traced again)
            def as_traced(leaves, *xs):
                args = jax.tree_util.tree_leaves((leaves, xs))
                return jax.tree_util.tree_unflatten(out_tree, jax.core.eval_jaxpr(closed.jaxpr, closed.consts, *args))

            return jax.jit(as_traced).lower(leaves, *xs)
        # what the parameters alone determine, computed once per parameter update (xla/hoist.py)
        mode = hoist.mode()
        if mode == "off" or not hoist.retraceable(closed):
            mode, flat, cut = "off", None, hoist.unsplit(closed, n)
        else:
            flat = hoist.inline(closed)
            cut = hoist.split(flat, n)
        # convolutions measured faster as im2col on this machine (xla/conv_tuning.py)
        picks = conv_tuning.im2col_picks(convolutions(cut.main.jaxpr)) \
            if conv_tuning.enabled() and _concrete(leaves, xs) else set()
        first = weight_first(leaves)
        candidates = [_candidate(cut, out_tree, xs, picks, first)]
        if _tuning(leaves, xs) and count_convolutions(cut.main.jaxpr, ungrouped=True):
            # and the same program with im2col for XLA's convolutions: the faster is kept
            candidates.append(_candidate(cut, out_tree, xs, True, first))
        alternative = None
        if mode == "timed" and cut.hoisted and len(candidates) == 1 and _concrete(leaves, xs):
            # the program as written, timed against it where it is short (hoist.LONG)
            alternative = lambda: _candidate(hoist.unsplit(flat, n), out_tree, xs, picks, first)
        return _Lowered(candidates, leaves, xs, alternative)

    def _trace(self, leaves, xs):
        flat, in_tree = jax.tree_util.tree_flatten((leaves, xs))
        closed, out_shape = jax.make_jaxpr(
            lambda *a: self.fn(*_split(jax.tree_util.tree_unflatten(in_tree, a))), return_shape=True)(*flat)
        return closed, jax.tree_util.tree_structure(out_shape)


# A GEMM whose activation operand holds at most this many rows (an im2col convolution's output positions, a
# Dense layer's batch) takes its weight first, stored output-features-major, in programs whose parameters
# do not fit the last-level cache.  Streaming a cold (K, O) weight row-major to few rows is what XLA:CPU's
# GEMM does slowest: (4, 4608) x (4608, 512) with the weight out of cache 0.56 ms as (K, O) second, 0.29 as
# (O, K) first (1.9x; 16 rows: 0.85 against 0.49); with the weight in cache the order as written is the
# faster (0.12 against 0.14).  Whole programs, interleaved in one process, batch 1 at 64x64: resnet18_v1
# (47 MB of parameters against a 32 MB L3) 0.76-0.91x, resnet18_v2 0.80-0.90x, resnet50_v1 0.86-0.93x, and
# alexnet batch 16 at 224 (its Dense layers) 0.90x; but mobilenet1.0 (17 MB) 1.16x and mobilenetv2_1.0
# (14 MB) 1.14x, whose weights stay in cache: hence the cache test (bench/HISTORY.md, session 21).
WEIGHT_FIRST = 16
FIRST_SWITCH = "AST_HYBRID_WEIGHT_FIRST"


def weight_first(leaves):
    """The row bound for weight-first GEMMs in a program over parameters ``leaves``: :data:`WEIGHT_FIRST`
    where their bytes exceed the last-level cache, else 0; ``AST_HYBRID_WEIGHT_FIRST=0`` never, ``=1`` always
    (whatever the cache)."""
    chosen = settings.get(FIRST_SWITCH)
    if chosen == "off":
        return 0
    if chosen == "on":
        return WEIGHT_FIRST
    size = sum(math.prod(a.shape) * np.dtype(a.dtype).itemsize for a in jax.tree_util.tree_leaves(leaves)
               if hasattr(a, "shape") and hasattr(a, "dtype"))      # arrays or their ShapeDtypeStructs
    cache = host_memory.last_level_cache()
    return WEIGHT_FIRST if cache and size > cache else 0


TUNE_SWITCH = conv_tuning.ENV        # "1": the whole program timed too


def _tuning(leaves, xs):
    """Whether to time the whole program against the one with im2col for every XLA convolution and keep the
    faster: with ``AST_HYBRID_CONV_TUNE=1``, no lowering forced (``AST_HYBRID_CONV_LOWERING``), concrete
    inputs.  Off by default (each convolution is timed alone instead, ``conv_tuning``): which program wins
    can change from one process to the next with the machine's load, and the two round differently (the
    program cache keeps the winner for later processes)."""
    if settings.get(TUNE_SWITCH) != "program" or settings.is_set(conv_lowering.ENV):
        return False
    return _concrete(leaves, xs)


def _concrete(leaves, xs):
    return all(isinstance(a, (jax.Array, np.ndarray)) and not isinstance(a, jax.core.Tracer)
               for a in jax.tree_util.tree_leaves((leaves, xs)))


def _candidate(cut, out_tree, xs, im2col, first=0):
    """(lowered, preparation): ``cut.main`` (a ``hoist.Split``'s program over the residuals, then the inputs)
    lowered channel-last, taking the residuals as stored (the kernels transposed to ``kernel_perms``), and
    what prepares them (:func:`_preparation`)."""
    main, n_res = cut.main, len(cut.sources)
    perms = kernel_perms(main, n_res, im2col, first)

    def inner(stored, *xs):
        args = list(stored) + jax.tree_util.tree_leaves(xs)
        return jax.tree_util.tree_unflatten(out_tree, channel_last(main, args, perms, n_res, im2col=im2col,
                                                                   weight_first=first))

    specs = [jax.ShapeDtypeStruct(tuple(v.aval.shape[d] for d in perms[i]) if i in perms else v.aval.shape,
                                  v.aval.dtype) for i, v in enumerate(main.jaxpr.invars[:n_res])]
    return jax.jit(inner).lower(specs, *xs), _preparation(cut, perms)


def _preparation(cut, perms):
    """(``sources``, ``prepare``) for :class:`Executable`: each residual of ``cut`` (a ``hoist.Split``) is a
    parameter as it is (``("param", j)``) or the ``k``-th output of ``prepare(flat parameters)``
    (``("prepared", k)``): what the parameters alone determine, and the kernels transposed to their
    ``perms``.  ``prepare`` is None where there is nothing to prepare."""
    sources, jobs = [], []
    for i, (kind, j) in enumerate(cut.sources):
        if kind == "param" and i not in perms:
            sources.append(("param", j))
        else:
            sources.append(("prepared", len(jobs)))
            jobs.append((kind, j, perms.get(i)))
    if not jobs:
        return tuple(sources), None

    def prepare(flat):
        computed = cut.prepare(flat) if any(kind == "computed" for kind, _, _ in jobs) else []
        values = [flat[j] if kind == "param" else computed[j] for kind, j, _ in jobs]
        return [v if perm is None else lax.transpose(v, perm) for v, (_, _, perm) in zip(values, jobs)]

    return tuple(sources), prepare


def _split(tree):
    leaves, xs = tree
    return (leaves, *xs)


class _Lowered:
    """One candidate program, or two (the rule's lowerings, and im2col wherever it applies), each with what
    prepares its parameters; ``alternative`` (or None) lowers the program without ``xla/hoist.py``'s split.
    ``compile()`` compiles them and keeps the fastest on these parameters and inputs (:func:`_fastest`); the
    alternative only where the first program's run is shorter than ``hoist.LONG``."""

    def __init__(self, candidates, leaves, xs, alternative=None):
        self.candidates, self.leaves, self.xs, self.alternative = candidates, leaves, xs, alternative

    def as_text(self):
        return self.candidates[0][0].as_text()

    def compile(self):
        exes = [self._compiled(c) for c in self.candidates]
        if self.alternative is not None:
            jax.block_until_ready(exes[0](self.leaves, *self.xs))     # its first run: YNNPACK builds its pipelines
            t = time.perf_counter()
            jax.block_until_ready(exes[0](self.leaves, *self.xs))
            if time.perf_counter() - t < hoist.LONG:
                exes.append(self._compiled(self.alternative()))
        if len(exes) > 1:
            exes = [_fastest(exes, self.leaves, self.xs)]
        self.leaves = self.xs = self.alternative = None
        return exes[0]

    def _compiled(self, candidate):
        lowered, (sources, prepare) = candidate
        if prepare is not None:
            # on the parameters themselves: their shardings too (replicated over several devices)
            prepare = jax.jit(prepare).lower(jax.tree_util.tree_leaves(self.leaves)).compile()
        return Executable(lowered.compile(), sources, prepare)


_CALLS = 5


def _fastest(exes, leaves, xs):
    """The fastest of ``exes`` on ``leaves, xs``: each run once (its first run builds YNNPACK's pipelines),
    then in turn, samples of ``conv_tuning.SAMPLE`` seconds' worth of consecutive calls, at least
    ``_CALLS``, the fastest sample of each, up to 9 rounds or ``conv_tuning.BUDGET`` seconds (past 3 rounds);
    one round for programs over 0.5 s.  Consecutive calls, as a user's loop makes them: resnet50_v1 64x64 b1
    split by xla/hoist.py took 10.1 ms a single call against 10.5 as written, but 11.7 against 10.3 in runs
    of 10 calls of each (the thread pool's state after the call before)."""
    def run(exe, calls):
        t = time.perf_counter()
        for _ in range(calls):
            out = exe(leaves, *xs)
        jax.block_until_ready(out)
        return (time.perf_counter() - t) / calls

    for exe in exes:
        run(exe, 1)
    calls = max(_CALLS, int(conv_tuning.SAMPLE / max(run(exes[0], 1), 1e-6)))
    times = [[] for _ in exes]
    spent = time.perf_counter()
    for r in range(9):
        for k in range(len(exes)) if r % 2 == 0 else reversed(range(len(exes))):
            times[k].append(run(exes[k], calls))
        if times[0][-1] > 0.5 or (r >= 2 and time.perf_counter() - spent > conv_tuning.BUDGET):
            break
    return min(zip(exes, times), key=lambda et: min(et[1]))[0]


class Executable:
    """A compiled channel-last program called with the parameters as they are: ``prepare`` (a compiled
    program, or None) computes from them what the program reads besides them (``xla/hoist.py``, the kernels
    transposed ``*spatial, I, O``) once per ``leaves`` tuple, i.e. once per parameter update, not per call;
    ``sources`` says where each of the program's first inputs comes from (``("param", j)``: parameter leaf
    ``j``; ``("prepared", k)``: ``prepare``'s ``k``-th output).  The program cache writes all three."""

    def __init__(self, compiled, sources, prepare=None):
        self.compiled, self.prepare = compiled, prepare
        self.sources = tuple((str(kind), int(i)) for kind, i in sources)
        self._src = self._stored = None

    def __call__(self, leaves, *xs):
        if leaves is not self._src:
            flat = jax.tree_util.tree_leaves(leaves)
            made = self.prepare(flat) if self.prepare is not None else ()
            self._stored = [flat[i] if kind == "param" else made[i] for kind, i in self.sources]
            self._src = leaves
        return self.compiled(self._stored, *xs)

    def as_text(self):
        return self.compiled.as_text()
