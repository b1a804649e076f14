"""Three lowerings of one convolution, and the rule that picks one per shape (XLA:CPU, measured here; on
another platform, ``core.context.trace_platform()``, XLA's own convolution).

Every lowering takes the same arguments: ``x`` (``N, C, *spatial`` when ``channel_first`` else
``N, *spatial, C``), ``w`` (``O, C/g, *kernel`` / ``O, *kernel, C/g``), ``stride``, ``dilate`` (one per
spatial axis), ``pad`` (one ``(before, after)`` pair per spatial axis) and ``groups``; they return the
same array up to float rounding, and all are plain jax (jax differentiates them):

- ``xla``: ``lax.conv_general_dilated``, XLA's own convolution;
- ``im2col``: the padded input's ``prod(kernel)`` strided windows stacked next to the channel axis, then
  one ``lax.dot_general`` with the weight (``groups == 1``).  XLA:CPU's convolution runs at about
  1 GFLOP/s on small feature maps with many channels (512 -> 512, 3x3, on 2x2); the GEMM does not;
- ``taps``: depthwise convolutions (``groups == C``, ``O = m * C``): ``prod(kernel)`` shifted windows
  of the padded input, each times its per-channel weight, summed; XLA fuses them into one loop, where
  its grouped convolution is 35-75x slower.

:func:`choose` is the rule, derived from ``bench/conv_lowering.py`` (numbers and reasoning in
``bench/HISTORY.md``, section "Convolution lowering"); :func:`convolve` applies it.  The environment
variable ``AST_HYBRID_CONV_LOWERING`` (``xla``, ``im2col`` or ``taps``) overrides the rule wherever that
lowering applies (read when a convolution is traced, i.e. before a hybridized block's first call): to
compare lowerings, or to fall back to XLA's convolution everywhere.
"""

from __future__ import annotations

import itertools
import math

import jax.numpy as jnp
from jax import lax

from ast_hybrid.core import settings
from ast_hybrid.core.context import trace_platform

__all__ = ["LOWERINGS", "ENV", "applicable", "choose", "convolve", "conv_xla", "conv_im2col", "conv_taps", "out_sizes",
           "patches"]


def out_sizes(sizes, kernel, stride, dilate, pad):
    """Output spatial sizes (MXNet's and XLA's: floor)."""
    return tuple((n + lo + hi - d * (k - 1) - 1) // s + 1
                 for n, k, s, d, (lo, hi) in zip(sizes, kernel, stride, dilate, pad))


def _dims(channel_first, nsp):
    """(channel axis, spatial axes) of an input with ``nsp`` spatial axes."""
    return (1, tuple(range(2, 2 + nsp))) if channel_first else (1 + nsp, tuple(range(1, 1 + nsp)))


def _pad(x, axes, pad):
    """``x`` zero-padded by ``pad`` (one ``(before, after)`` pair per axis of ``axes``)."""
    if not any(lo or hi for lo, hi in pad):
        return x
    widths = [(0, 0)] * x.ndim
    for a, p in zip(axes, pad):
        widths[a] = p
    return jnp.pad(x, widths)


def _windows(x, kernel, stride, dilate, pad, channel_first):
    """The padded input's strided window per kernel offset (offsets in row-major kernel order)."""
    nsp = len(kernel)
    _, axes = _dims(channel_first, nsp)
    x = _pad(x, axes, pad)
    outs = out_sizes([x.shape[a] for a in axes], kernel, stride, dilate, [(0, 0)] * nsp)
    for offset in itertools.product(*(range(k) for k in kernel)):
        start, limit, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
        for a, o, s, d, n in zip(axes, offset, stride, dilate, outs):
            start[a], limit[a], strides[a] = o * d, o * d + (n - 1) * s + 1, s
        yield offset, lax.slice(x, start, limit, strides)


def patches(x, kernel, stride, dilate, pad, channel_first):
    """im2col's patches: ``(N, C, K, *out)`` (channel first) or ``(N, *out, K, C)``, the ``K = prod(kernel)``
    kernel cells in row-major order.  Built from as few slices as the shape allows: one strided window per
    kernel cell where the kernel has fewer cells than the output has positions (the common case), else one
    kernel-sized window per output position (a 224x224 kernel on a 224x224 input: 1 slice, where 50,176
    window copies made a program XLA took over ten minutes to compile)."""
    nsp = len(kernel)
    _, axes = _dims(channel_first, nsp)
    kk = math.prod(kernel)
    outs = out_sizes([x.shape[a] for a in axes], kernel, stride, dilate, pad)
    if kk <= math.prod(outs):
        wins = [win for _, win in _windows(x, kernel, stride, dilate, pad, channel_first)]
        axis = 2 if channel_first else -2
        return jnp.expand_dims(wins[0], axis) if kk == 1 else jnp.stack(wins, axis=axis)
    x = _pad(x, axes, pad)
    n, c = x.shape[0], x.shape[1 if channel_first else -1]
    cells = []
    for pos in itertools.product(*(range(o) for o in outs)):
        start, limit, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
        for a, o, k, s, d in zip(axes, pos, kernel, stride, dilate):
            start[a], limit[a], strides[a] = o * s, o * s + d * (k - 1) + 1, d
        win = lax.slice(x, start, limit, strides)       # (N, C, *kernel) / (N, *kernel, C)
        cells.append(win.reshape((n, c, kk) if channel_first else (n, kk, c)))
    if channel_first:       # (N, C, K, P) -> (N, C, K, *out)
        p = cells[0][..., None] if len(cells) == 1 else jnp.stack(cells, axis=-1)
        return p.reshape((n, c, kk, *outs))
    p = cells[0][:, None] if len(cells) == 1 else jnp.stack(cells, axis=1)      # (N, P, K, C)
    return p.reshape((n, *outs, kk, c))


def conv_xla(x, w, stride, dilate, pad, groups, channel_first):
    """XLA's convolution.  One without padding is computed padded by one at the end of each spatial axis, its
    extra outputs sliced off: the same windows, the same bits, and XLA:CPU runs a padded convolution 1.3-2.7x
    faster than an unpadded one (jax 0.10: 3x3 80->192 on 73x73, batch 16, 352 ms unpadded, 142-162 padded;
    bench/HISTORY.md, "Convolution lowering")."""
    nsp = x.ndim - 2
    sp = "DHW"[3 - nsp:] if nsp <= 3 else None
    layout = "NC" + sp if channel_first else "N" + sp + "C"
    rhs = "OI" + sp if channel_first else "O" + sp + "I"
    kernel = w.shape[2:] if channel_first else w.shape[1:-1]
    unpadded = not any(lo or hi for lo, hi in pad) and any(k > 1 for k in kernel)
    y = lax.conv_general_dilated(x, w, stride, [(0, 1)] * nsp if unpadded else list(pad), rhs_dilation=dilate,
                                 dimension_numbers=(layout, rhs, layout), feature_group_count=groups)
    if unpadded:
        _, axes = _dims(channel_first, nsp)
        sizes = out_sizes([x.shape[a] for a in axes], kernel, stride, dilate, pad)
        y = lax.slice(y, [0] * y.ndim, [sizes[axes.index(a)] if a in axes else n for a, n in enumerate(y.shape)])
    return y


def conv_im2col(x, w, stride, dilate, pad, groups, channel_first):
    """Windows stacked beside the channel axis, contracted with the weight in one ``dot_general``."""
    assert groups == 1, "im2col lowers ungrouped convolutions"
    nsp = x.ndim - 2
    kernel = w.shape[2:] if channel_first else w.shape[1:-1]
    kk = math.prod(kernel)
    o = w.shape[0]
    p = patches(x, kernel, stride, dilate, pad, channel_first)
    if channel_first:
        # patches (N, C, K, *out) against w (O, C, K): (O, N, *out), then N first
        wk = w.reshape(o, w.shape[1], kk)
        y = lax.dot_general(wk, p, (((1, 2), (1, 2)), ((), ())))
        return jnp.moveaxis(y, 0, 1)
    # patches (N, *out, K, C) against w (O, K, C): (N, *out, O)
    wk = w.reshape(o, kk, w.shape[-1])
    return lax.dot_general(p, wk, (((nsp + 1, nsp + 2), (1, 2)), ((), ())))


def conv_taps(x, w, stride, dilate, pad, groups, channel_first):
    """Depthwise: sum over kernel offsets of (shifted window) x (that offset's weight per channel)."""
    nsp = x.ndim - 2
    c_axis, _ = _dims(channel_first, nsp)
    c, o = x.shape[c_axis], w.shape[0]
    assert groups == c and o % c == 0, "taps lower depthwise convolutions (groups == channels)"
    if o != c:      # channel multiplier m: output channel j reads input channel j // m
        x = jnp.repeat(x, o // c, axis=c_axis)
    kernel = w.shape[2:] if channel_first else w.shape[1:-1]
    bshape = [1] * x.ndim
    bshape[c_axis] = o
    acc = None
    for offset, win in _windows(x, kernel, stride, dilate, pad, channel_first):
        tap = w[(slice(None), 0) + offset] if channel_first else w[(slice(None),) + offset + (0,)]
        term = win * tap.reshape(bshape)
        acc = term if acc is None else acc + term
    return acc


LOWERINGS = {"xla": conv_xla, "im2col": conv_im2col, "taps": conv_taps}


ENV = "AST_HYBRID_CONV_LOWERING"


def applicable(x_shape, w_shape, groups, channel_first):
    """The lowerings that can compute this convolution (XLA's always; im2col ungrouped; taps depthwise)."""
    c = x_shape[1] if channel_first else x_shape[-1]
    return ["xla"] + (["im2col"] if groups == 1 else []) + \
        (["taps"] if groups > 1 and groups == c and w_shape[0] % c == 0 else [])


def choose(x_shape, w_shape, stride, dilate, pad, groups, channel_first, dtype=jnp.float32):
    """The lowering for this convolution (a name in ``LOWERINGS``), by the rule measured in bench/HISTORY.md,
    or the one ``AST_HYBRID_CONV_LOWERING`` names where it applies."""
    nsp = len(x_shape) - 2
    if not jnp.issubdtype(dtype, jnp.floating) or nsp not in (1, 2, 3):
        return "xla"
    can = applicable(x_shape, w_shape, groups, channel_first)
    forced = settings.get(ENV)
    if forced in can:
        return forced
    if trace_platform() != "cpu":       # the rule below was measured on XLA:CPU; a GPU has cuDNN's
        return "xla"
    if "taps" in can:
        return "taps"
    if "im2col" not in can:
        return "xla"
    c = x_shape[1] if channel_first else x_shape[-1]
    kernel = w_shape[2:] if channel_first else w_shape[1:-1]
    out = out_sizes(x_shape[2:] if channel_first else x_shape[1:-1], kernel, stride, dilate, pad)
    return "im2col" if _im2col_wins(x_shape[0], c, w_shape[0], math.prod(kernel), math.prod(out)) else "xla"


def _im2col_wins(n, c, o, kk, npix):
    """Whether im2col + GEMM beats XLA's convolution: ``n`` images of ``c`` channels, ``o`` filters,
    ``kk`` kernel cells, ``npix`` output pixels per image (bench/HISTORY.md, "Convolution lowering").

    A 1x1 kernel is a plain GEMM (no window copies): it won at every shape measured (0.2-0.7x XLA's
    time).  A larger kernel copies ``kk`` windows; that pays where XLA:CPU's convolution is slow, few
    output pixels against a long contraction (0.02x at 512 channels on 2x2, 0.3x at 512 on 7x7, 0.7x
    at 256 on 14x14) and loses on large maps (1.3-3.7x at 28x28 and up, 3x for a 7x7 stem on 3 channels).
    """
    if kk == 1:
        return True
    pixels, depth = n * npix, c * kk
    return (pixels <= 256 and depth >= 1152) or (pixels <= 784 and depth >= 2304)


def convolve(x, w, stride, dilate, pad, groups, channel_first, lowering=None):
    """The convolution by ``lowering`` (a name in ``LOWERINGS``), or by :func:`choose`'s pick."""
    lowering = lowering or choose(x.shape, w.shape, stride, dilate, pad, groups, channel_first, x.dtype)
    return LOWERINGS[lowering](x, w, tuple(stride), tuple(dilate), tuple(pad), groups, channel_first)
