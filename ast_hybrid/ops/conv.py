"""Convolution, Deconvolution, Pooling and UpSampling with MXNet 1.9.1's arguments and layouts.

Layouts: channel-first ``NCW/NCHW/NCDHW`` (the default, weights ``(O, I/g,
*kernel)``) and channel-last ``NWC/NHWC/NDHWC`` (weights ``(O, *kernel,
I/g)``).  ``Pooling``'s ``pooling_convention``: ``valid`` (floor), ``full``
(ceil: the last window may hang over the padded edge) and ``same`` (output
``ceil(in / stride)``); for ``avg``, ``count_include_pad=True`` divides by the
number of window cells inside the padded input (MXNet's rule), else by the
cells inside the input.  ``Convolution`` lowers each call by its shape (XLA's convolution, im2col + one
GEMM, or shifted taps for depthwise): ``conv_lowering``.  ``im2col``/``col2im``: MXNet's sliding blocks of an
NC... array as columns (N, C * prod(kernel), blocks), channel first then the kernel's positions (a
Convolution's weight reshaped to (O, -1) multiplies them), and their adjoint (overlaps summed).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ast_hybrid.ops._core import as_tuple, check, choice, op
from ast_hybrid.ops.conv_lowering import convolve
from ast_hybrid.ops.max_pool import MAX_WINDOW, max_pool_windows

__all__ = ["Convolution", "Convolution_v1", "Deconvolution", "Pooling", "Pooling_v1", "UpSampling", "im2col",
           "col2im"]

_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _tup(v, n, default):
    v = as_tuple(v)
    return v if v else (default,) * n


def _layout(x, layout, opname):
    n = x.ndim - 2
    check(n in _LAYOUTS, opname, f"input must be 3-D, 4-D or 5-D (N, C, spatial...), got shape {tuple(x.shape)}")
    layout = layout or _LAYOUTS[n][0]
    choice(opname, "layout", layout, _LAYOUTS[n])
    return layout, layout[1] == "C"


def _conv_numbers(layout, channel_first):
    spatial = layout.replace("N", "").replace("C", "")
    rhs = "OI" + spatial if channel_first else "O" + spatial + "I"
    return layout, rhs, layout


def _bias(out, bias, channel_first):
    n = out.ndim - 2
    shape = (1, -1) + (1,) * n if channel_first else (1,) * (n + 1) + (-1,)
    return out + jnp.reshape(bias, shape)


@op(compile_arrays=("data", "weight", "bias"))
def Convolution(data, weight, bias=None, kernel=(), stride=(), dilate=(), pad=(), num_filter=None, num_group=1,
                workspace=1024, no_bias=False, cudnn_tune=None, cudnn_off=False, layout=None):
    x, w = jnp.asarray(data), jnp.asarray(weight)
    layout, cf = _layout(x, layout, "Convolution")
    n = x.ndim - 2
    cin = x.shape[1] if cf else x.shape[-1]
    kernel = as_tuple(kernel) or tuple(w.shape[2:] if cf else w.shape[1:-1])
    wexp = (num_filter or w.shape[0], cin // num_group) + kernel if cf else \
        (num_filter or w.shape[0],) + kernel + (cin // num_group,)
    check(tuple(w.shape) == wexp, "Convolution", f"weight must have shape {wexp} for input {tuple(x.shape)} "
          f"(layout {layout}, kernel {kernel}, num_group {num_group}), got {tuple(w.shape)}")
    pad = _tup(pad, n, 0)
    # the lowering (XLA's convolution, im2col + GEMM, or shifted taps) is picked per shape: conv_lowering
    out = convolve(x, w, _tup(stride, n, 1), _tup(dilate, n, 1), [(p, p) for p in pad], num_group, cf)
    if not no_bias:
        check(bias is not None, "Convolution", "bias is required unless no_bias=True")
        out = _bias(out, bias, cf)
    return out


Convolution_v1 = Convolution


def _deconv_pad(n, x_spatial, kernel, stride, dilate, pad, adj, target_shape):
    if not target_shape:
        return pad, adj
    pad, adj = [], []
    for size, k, s, d, t in zip(x_spatial, kernel, stride, dilate, target_shape):
        total = s * (size - 1) + (k - 1) * d + 1 - t
        adj.append(total % 2)
        pad.append((total + 1) // 2)
    return tuple(pad), tuple(adj)


@op(compile_arrays=("data", "weight", "bias"))
def Deconvolution(data, weight, bias=None, kernel=(), stride=(), dilate=(), pad=(), adj=(), target_shape=(),
                  num_filter=None, num_group=1, workspace=512, no_bias=True, cudnn_tune=None, cudnn_off=False,
                  layout=None):
    """The transpose of Convolution; weight ``(C_in, C_out / num_group, *kernel)``."""
    x, w = jnp.asarray(data), jnp.asarray(weight)
    layout, cf = _layout(x, layout, "Deconvolution")
    check(cf, "Deconvolution", f"only channel-first layouts are supported, got {layout}")
    n = x.ndim - 2
    kernel = tuple(w.shape[2:])
    stride, dilate = _tup(stride, n, 1), _tup(dilate, n, 1)
    pad, adj = _deconv_pad(n, x.shape[2:], kernel, stride, dilate, _tup(pad, n, 0), _tup(adj, n, 0),
                           as_tuple(target_shape))
    g = num_group
    cin, coutg = w.shape[0], w.shape[1]
    check(cin == x.shape[1], "Deconvolution", f"weight has {cin} input channels, the input {x.shape[1]}")
    w = jnp.flip(w, axis=tuple(range(2, w.ndim)))
    w = w.reshape((g, cin // g, coutg) + kernel).swapaxes(1, 2).reshape((g * coutg, cin // g) + kernel)
    padding = [(d * (k - 1) - p, d * (k - 1) - p + a) for k, d, p, a in zip(kernel, dilate, pad, adj)]
    out = lax.conv_general_dilated(x, w, (1,) * n, padding, lhs_dilation=stride, rhs_dilation=dilate,
                                   dimension_numbers=_conv_numbers(layout, True), feature_group_count=g)
    if not no_bias and bias is not None:
        out = _bias(out, bias, True)
    return out


def _pool_pads(sizes, kernel, stride, pad, convention):
    """Per spatial axis: (pad before, pad after incl. the extra of 'full'/'same', count-region after)."""
    pads = []
    for size, k, s, p in zip(sizes, kernel, stride, pad):
        if convention == "valid":
            out = (size + 2 * p - k) // s + 1
            pads.append((p, p, p))
            continue
        if convention == "full":
            out = -(-(size + 2 * p - k) // s) + 1
            extra = max(0, (out - 1) * s + k - size - 2 * p)
            pads.append((p, p + extra, p))
            continue
        out = -(-size // s)
        total = max(0, (out - 1) * s + k - size)
        pads.append((total // 2, total - total // 2, total - total // 2))
    return pads


@op(compile_arrays=("data",))
def Pooling(data, kernel=(), pool_type="max", global_pool=False, cudnn_off=False, pooling_convention="valid",
            stride=(), pad=(), p_value=None, count_include_pad=None, layout=None):
    """Max/avg/sum/lp pooling (see the module doc for the conventions and the avg divisor)."""
    choice("Pooling", "pool_type", pool_type, ("max", "avg", "sum", "lp"))
    choice("Pooling", "pooling_convention", pooling_convention, ("valid", "full", "same"))
    x = jnp.asarray(data)
    if pooling_convention == "same":    # MXNet 1.9.1's CPU Pooling runs it only where no padding is needed
        ks, st = as_tuple(kernel), as_tuple(stride) or (1,) * len(as_tuple(kernel))
        check(bool(as_tuple(pad)) and not any(as_tuple(pad)) and len(ks) == x.ndim - 2 == 1 and pool_type == "max"
              and all(size % s == 0 and k == s for size, k, s in zip(x.shape[2:], ks, st)), "Pooling",
              "pooling_convention='same' is rejected by MXNet 1.9.1's CPU Pooling but for 1-D max pooling given a "
              "pad whose windows need no padding (kernel = stride dividing the length); use 'valid' or 'full'")
        pooling_convention = "valid"
    layout, cf = _layout(x, layout, "Pooling")
    n = x.ndim - 2
    spatial_axes = tuple(range(2, x.ndim)) if cf else tuple(range(1, x.ndim - 1))
    sizes = [x.shape[a] for a in spatial_axes]
    if global_pool:
        kernel, stride, pad = tuple(sizes), (1,) * n, (0,) * n
    else:
        kernel = as_tuple(kernel)
        check(len(kernel) == n, "Pooling", f"kernel={kernel} must have {n} entries for a {x.ndim}-D input")
        stride, pad = _tup(stride, n, 1), _tup(pad, n, 0)
    pads = _pool_pads(sizes, kernel, stride, pad, "valid" if global_pool else pooling_convention)

    def full(v, fill):
        out = [fill] * x.ndim
        for a, val in zip(spatial_axes, v):
            out[a] = val
        return tuple(out)

    window, strides = full(kernel, 1), full(stride, 1)
    padding = full([(b, a) for b, a, _ in pads], (0, 0))
    # init values are numpy scalars: lax recognises max/add with their identity only when the init is a
    # constant, and then uses its differentiable window reductions (a jnp scalar is traced inside a
    # compiled program, which gives the generic reduce_window: no reverse mode)
    if pool_type == "max":
        if n == 2 and not global_pool and jnp.issubdtype(x.dtype, jnp.floating) and math.prod(kernel) <= MAX_WINDOW:
            return max_pool_windows(x, tuple(int(k) for k in kernel), tuple(int(s) for s in stride),     # its
                                    tuple((int(b), int(a)) for b, a, _ in pads), cf)                # backward

        init = -np.inf if jnp.issubdtype(x.dtype, jnp.floating) else jnp.iinfo(x.dtype).min
        return lax.reduce_window(x, np.array(init, x.dtype), lax.max, window, strides, padding)
    p = 1 if pool_type != "lp" else int(p_value or 2)
    xp = x if p == 1 else (x * x if p == 2 else x ** p)
    total = lax.reduce_window(xp, np.zeros((), x.dtype), lax.add, window, strides, padding)
    if pool_type == "sum":
        return total
    if pool_type == "lp":
        if p <= 2:
            return total if p == 1 else jnp.sqrt(total)
        return jnp.cbrt(total) if p == 3 else jnp.sign(total) * jnp.power(jnp.abs(total), 1.0 / p)
    include = True if count_include_pad is None else count_include_pad
    ones = jnp.ones(sizes, x.dtype)
    if include:   # cells inside the padded input count, cells of the 'full' overhang do not
        ones = jnp.pad(ones, [(b, c) for b, _, c in pads], constant_values=1)
        count_pad = [(0, a - c) for (_, a, c) in pads]
    else:
        count_pad = [(b, a) for b, a, _ in pads]
    count = lax.reduce_window(ones, np.zeros((), x.dtype), lax.add, kernel, stride, count_pad)
    count = count.reshape(full(count.shape, 1))
    return total / count


def Pooling_v1(data, kernel=(), pool_type="max", global_pool=False, pooling_convention="valid", stride=(), pad=(),
               **kwargs):
    """MXNet's deprecated Pooling_v1 (its argument order; max/avg/sum): ``Pooling``."""
    return Pooling(data, kernel=kernel, pool_type=pool_type, global_pool=global_pool,
                   pooling_convention=pooling_convention, stride=stride, pad=pad)


@op
def UpSampling(*data, scale=1, num_filter=0, sample_type="nearest", multi_input_mode="concat", num_args=None,
               workspace=512):
    """``nearest``: repeat each pixel ``scale`` x ``scale`` (several inputs: each scaled to the first's output
    size, then concatenated or summed); ``bilinear``: a grouped deconvolution with the given weight."""
    choice("UpSampling", "sample_type", sample_type, ("nearest", "bilinear"))
    scale = int(scale)
    if sample_type == "bilinear":
        check(len(data) == 2, "UpSampling", "sample_type='bilinear' takes (data, weight)")
        x, w = data
        k = 2 * scale - scale % 2
        p = int(math.ceil((scale - 1) / 2.0))
        return Deconvolution.__wrapped__(x, w, kernel=(k, k), stride=(scale, scale), pad=(p, p),
                                         num_filter=num_filter, num_group=num_filter, no_bias=True)
    choice("UpSampling", "multi_input_mode", multi_input_mode, ("concat", "sum"))
    first = jnp.asarray(data[0])
    oh, ow = first.shape[2] * scale, first.shape[3] * scale
    outs = []
    for d in data:
        d = jnp.asarray(d)
        sh, sw = oh // d.shape[2], ow // d.shape[3]
        outs.append(jnp.repeat(jnp.repeat(d, sh, axis=2), sw, axis=3))
    if len(outs) == 1:
        return outs[0]
    return jnp.concatenate(outs, axis=1) if multi_input_mode == "concat" else sum(outs[1:], outs[0])


def _blocks_args(nd, kernel, stride, dilate, pad, opname):
    kernel = as_tuple(kernel)
    check(len(kernel) == nd, opname, f"kernel {kernel} must have one size per spatial dimension ({nd})")
    return kernel, _tup(stride, nd, 1), _tup(dilate, nd, 1), _tup(pad, nd, 0)


def _im2col(x, kernel, stride, dilate, pad):
    n, c = x.shape[:2]
    patches = lax.conv_general_dilated_patches(x, kernel, stride, [(p, p) for p in pad], rhs_dilation=dilate)
    return patches.reshape(n, c * int(np.prod(kernel)), -1)     # (channels first, then the kernel's positions)


@op(compile_arrays=("data",))
def im2col(data, kernel, stride=(), dilate=(), pad=()):
    """Each ``kernel`` block of ``data`` (N, C, *spatial), zero-padded by ``pad``, sliding by ``stride``, its
    points ``dilate`` apart, as a column: (N, C * prod(kernel), number of blocks)."""
    x = jnp.asarray(data)
    check(x.ndim in (3, 4, 5), "im2col", f"data must be 3-D, 4-D or 5-D (N, C, spatial...), got {tuple(x.shape)}")
    return _im2col(x, *_blocks_args(x.ndim - 2, kernel, stride, dilate, pad, "im2col"))


@op(compile_arrays=("data",))
def col2im(data, output_size, kernel, stride=(), dilate=(), pad=()):
    """im2col's adjoint: the columns (N, C * prod(kernel), blocks) put back into an image of ``output_size``
    (N, C, *output_size), where blocks overlap their values summed."""
    cols = jnp.asarray(data)
    size = as_tuple(output_size)
    kernel, stride, dilate, pad = _blocks_args(len(size), kernel, stride, dilate, pad, "col2im")
    k = int(np.prod(kernel))
    check(cols.ndim == 3 and cols.shape[1] % k == 0, "col2im",
          f"data {tuple(cols.shape)} must be (N, C * {k}, blocks) for kernel {kernel}")
    image = jax.ShapeDtypeStruct((cols.shape[0], cols.shape[1] // k) + size, cols.dtype)
    blocks = jax.eval_shape(lambda x: _im2col(x, kernel, stride, dilate, pad), image)
    check(blocks.shape == cols.shape, "col2im",
          f"data {tuple(cols.shape)} does not match {blocks.shape}: the blocks of output_size {size}")
    (out,) = jax.linear_transpose(lambda x: _im2col(x, kernel, stride, dilate, pad), image)(cols)
    return out
