"""The channel-last interpreter's rules, one per primitive: how an equation of a traced program runs on values
stored in a permutation of their logical axes (``xla/channel_last.py`` runs the program with them).

:class:`Val` is such a value: an array stored as ``transpose(logical, perm)`` (``perm[i]`` is the logical axis
that stored axis ``i`` holds), or a broadcast that can be made in any layout (``make``).  A rule takes an
equation and its operands (``Val`` objects) and returns its outputs, each with the layout it is stored in,
or None: then the equation is bound as written on its operands transposed back to the logical layout (:func:`plain`).
:func:`rule` gives the rule of a primitive; :func:`conv_im2col` (a convolution as im2col + one GEMM) and
:func:`dot` (which takes ``weight_first``) are called by name.

What holds after a rule: its outputs are the equation's outputs as written, only stored in another order (float
results equal up to XLA's own reassociation), and a value stays stored as it is wherever the rule can renumber
the equation's axes instead of moving data.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
from jax import lax

from ast_hybrid.ops import conv_lowering

__all__ = ["Val", "plain", "rule", "target", "conv", "conv_perms", "conv_im2col", "conv_im2col_applies", "conv_m",
           "im2col_kernel_perm", "dot"]

_ELEMENTWISE = frozenset("""
add sub mul div max min neg exp exp2 log tanh logistic sqrt rsqrt cbrt abs pow integer_pow select_n
convert_element_type erf erfc erf_inv sign floor ceil round square and or not xor gt lt ge le eq ne clamp
nextafter is_finite copy copy_p expm1 log1p atan2 rem sin cos tan asin acos atan sinh cosh asinh acosh
atanh reduce_precision stop_gradient imag real conj
""".split())
_REDUCE = frozenset("reduce_sum reduce_max reduce_min reduce_prod reduce_and reduce_or argmax argmin".split())
_WINDOW = frozenset("reduce_window_max reduce_window_min reduce_window_sum reduce_window".split())


def _inv(p):
    out = [0] * len(p)
    for i, d in enumerate(p):
        out[d] = i
    return tuple(out)


def _ident(p):
    return p is None or all(i == d for i, d in enumerate(p))


class Val:
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


def plain(e, arrays, **override):
    params = dict(e.primitive.get_bind_params(e.params))
    params.update(override)
    with e.ctx.manager:
        out = e.primitive.bind(*arrays, **params)
    outs = out if e.primitive.multiple_results else [out]
    return [Val(o) for o in outs]


def _bind1(e, arrays, perm, **override):
    return [Val(plain(e, arrays, **override)[0].arr, perm)]


def conv_perms(e):
    """The channel-last layouts of convolution ``e``'s input ``N, *S, C``, kernel ``*S, I, O`` and output
    ``N, *S, C`` (each a permutation of the logical axes; spec = (batch/out-feature, feature/in-feature, *spatial))."""
    dn = e.params["dimension_numbers"]
    lhs, rhs, out = dn.lhs_spec, dn.rhs_spec, dn.out_spec
    return (lhs[0], *lhs[2:], lhs[1]), (*rhs[2:], rhs[1], rhs[0]), (out[0], *out[2:], out[1])


def conv(e, ins):
    x, w = ins
    x_perm, w_perm, out_perm = conv_perms(e)
    r = len(x_perm)
    new = lax.ConvDimensionNumbers((0, r - 1, *range(1, r - 1)), (r - 1, r - 2, *range(r - 2)),
                                   (0, r - 1, *range(1, r - 1)))
    return _bind1(e, [x.get(x_perm), w.get(w_perm)], out_perm, dimension_numbers=new)


def conv_im2col(e, ins, weight_first=0):
    """An ungrouped float convolution as im2col + one GEMM, channel-last: the input's windows stacked before
    its channels ``(N, *out, K, C)`` against the kernel as stored, ``(*kernel, I, O)`` = ``(K, C, O)``; or,
    where the output has at most ``weight_first`` positions, the kernel stored ``(O, *kernel, I)`` first."""
    x, w = ins
    p = e.params
    if not conv_im2col_applies(e):
        return conv(e, ins)
    dn = p["dimension_numbers"]
    lhs, rhs, out = dn.lhs_spec, dn.rhs_spec, dn.out_spec
    nsp = len(lhs) - 2
    xs = x.get((lhs[0], *lhs[2:], lhs[1]))
    first = conv_m(e) <= weight_first
    ws = w.get(im2col_kernel_perm(rhs, first))
    kernel = ws.shape[1:-1] if first else ws.shape[:nsp]
    pad = [tuple(q) for q in p["padding"]]
    patches = conv_lowering.patches(xs, kernel, p["window_strides"], p["rhs_dilation"], pad, False)
    kk = patches.shape[-2]
    if first:       # (O, K, C) x (N, *out, K, C) -> (O, N, *out), then channel-last
        wk = ws.reshape(ws.shape[0], kk, ws.shape[-1])
        y = lax.dot_general(wk, patches, (((1, 2), (nsp + 1, nsp + 2)), ((), ())))
        y = lax.transpose(y, (*range(1, nsp + 2), 0))
    else:
        wk = ws.reshape(kk, ws.shape[-2], ws.shape[-1])
        y = lax.dot_general(patches, wk, (((nsp + 1, nsp + 2), (0, 1)), ((), ())))
    return [Val(y, (out[0], *out[2:], out[1]))]


def conv_im2col_applies(e):
    p = e.params
    return p["feature_group_count"] == 1 and p["batch_group_count"] == 1 and all(d == 1 for d in p["lhs_dilation"]) \
        and jnp.issubdtype(e.outvars[0].aval.dtype, jnp.floating)


def conv_m(e):
    """The output positions (batch x spatial) of convolution ``e``: the GEMM's M as im2col computes it."""
    shape = e.outvars[0].aval.shape
    dn = e.params["dimension_numbers"]
    return shape[dn.out_spec[0]] * math.prod(shape[d] for d in dn.out_spec[2:])


def im2col_kernel_perm(rhs, first):
    return (rhs[0], *rhs[2:], rhs[1]) if first else (*rhs[2:], rhs[1], rhs[0])


def target(ins):
    """The layout an element-wise operation works in: its first stored (not broadcast) operand's."""
    for v in ins:
        if v.make is None and v.perm is not None and v.ndim > 0:
            return v.perm
    return None


def _elementwise(e, ins):
    perm = target(ins)
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
        return plain(e, [arr], shape=tuple(shape[d] for d in perm),
                      broadcast_dimensions=tuple(sorted(pos)))[0].arr

    return [Val(None, None, make, tuple(shape))]


def _transpose(e, ins):
    (x,) = ins
    t = e.params["permutation"]
    if not _stored(x):
        return None
    invt = _inv(t)
    return [Val(x.arr, tuple(invt[d] for d in x.perm))]


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


def _window(e, ins, whole=False):
    x = ins[0]
    if not _stored(x) or any(v.ndim for v in ins[1:]):
        return None
    keys = ("window_dimensions", "window_strides", "padding", "base_dilation", "window_dilation")
    params = _permuted(e.params, keys, x.perm)
    if e.primitive.name in _SEPARABLE and not whole:
        return _separable(e, x, params)
    return _bind1(e, [x.arr] + [v.get(None) for v in ins[1:]], x.perm, **params)


def _window_whole(e, ins):
    return _window(e, ins, whole=True)


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
        y = plain(e, [y], window_dimensions=only(window, 1), window_strides=only(strides, 1),
                   padding=only(tuple(tuple(q) for q in pad), (0, 0)), base_dilation=params["base_dilation"],
                   window_dilation=only(dilation, 1))[0].arr
    return [Val(y, x.perm)]


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
    perm = target(ins)
    if perm is None:
        return None
    arrays = [v.get(perm) for v in ins]
    d = _inv(perm)[e.params["dimension"]]
    if len(arrays) == _SELECTED and d == len(perm) - 1 and all(v.elementwise for v in ins):
        return [Val(_selected(arrays), perm)]
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
    perm = target(ins)
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


def dot(e, ins, weight_first=0):
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


_RULES = {"conv_general_dilated": conv, "broadcast_in_dim": _broadcast, "transpose": _transpose,
          "squeeze": _dropping("dimensions"), "pad": _pad, "slice": _slice, "concatenate": _concatenate,
          "stack": _stack, "reshape": _reshape}      # dot_general: dot, which takes weight_first


def rule(name, whole_windows=False):
    """The rule of primitive ``name`` (besides ``dot_general``, see :func:`dot`), or None: none applies, the
    equation runs on its operands in the logical layout.  ``whole_windows``: overlapping pooling windows are
    reduced whole, not one axis at a time (a program to differentiate: its backward stays as traced)."""
    found = _RULES.get(name)
    if found is None and name in _ELEMENTWISE:
        found = _elementwise
    if found is None and name in _REDUCE:
        found = _reduce
    if found is None and name in _WINDOW:
        found = _window_whole if whole_windows else _window
    return found
