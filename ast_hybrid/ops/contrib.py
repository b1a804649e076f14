"""``F.contrib.*``: the contrib ops real models call (resizing, adaptive pooling, boxes, control flow, ...).

- ``BilinearResize2D(data, like=None, height, width, scale_height, scale_width,
  mode='size'|'like', align_corners=True)`` on NCHW;
- ``AdaptiveAvgPooling2D(data, output_size)``: cell ``i`` averages input rows
  ``floor(i * H / h)`` to ``ceil((i + 1) * H / h)``;
- ``box_iou``, ``box_nms``, ``box_encode``, ``box_decode``, ``bipartite_matching``, ``ROIAlign``
  (``sample_ratio`` > 0), ``PSROIPooling``, ``ROIPooling`` (also at top level): the detection ops
  (``ops/detection.py``);
- ``foreach``, ``while_loop``, ``cond``: Python loops on concrete arrays,
  ``lax.scan``/``lax.cond`` inside a hybridized program;
- ``adamw_update`` and its ``mp_``/``multi_`` forms: MXNet's AdamW steps, in place (``ops/adamw.py``);
- ``DeformableConvolution``, ``ModulatedDeformableConvolution``: deformable convolutions v1/v2
  (``ops/deformable.py``);
- ``SyncBatchNorm(data, gamma, beta, moving_mean, moving_var, eps=1e-3,
  momentum=0.9, fix_gamma=True, use_global_stats=False,
  output_mean_var=False, ndev=1, key)``: MXNet's cross-device BatchNorm, on
  the one device there is (see its doc).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ast_hybrid.core import autograd
from ast_hybrid.core.ndarray import NDArray
from ast_hybrid.ops._core import as_tuple, check, choice, divided, norm_axis, op, raw, rounded, wrap
from ast_hybrid.ops.adamw import adamw_update, mp_adamw_update, multi_adamw_update, multi_mp_adamw_update
from ast_hybrid.ops.deformable import DeformableConvolution, ModulatedDeformableConvolution
from ast_hybrid.ops.detection import (PSROIPooling, ROIAlign, ROIPooling, bipartite_matching, box_decode, box_encode,
                                      box_iou, box_nms, box_non_maximum_suppression)
from ast_hybrid.ops.indexing import boolean_mask, index_copy
from ast_hybrid.ops.nn import CTCLoss
from ast_hybrid.ops.normalization import BatchNorm
from ast_hybrid.ops.quantization import dequantize, quantize, quantize_v2, quantized_pooling

__all__ = ["ROIAlign", "ROIPooling", "PSROIPooling", "bipartite_matching", "box_encode", "box_decode", "CTCLoss",
           "ctc_loss", "BatchNormWithReLU", "BilinearResize2D", "AdaptiveAvgPooling2D", "box_iou", "box_nms",
           "box_non_maximum_suppression", "arange_like", "div_sqrt_dim", "boolean_mask", "index_copy", "isnan",
           "isinf", "isfinite", "SyncBatchNorm", "quadratic", "allclose", "foreach", "while_loop", "cond",
           "interleaved_matmul_selfatt_qk", "interleaved_matmul_selfatt_valatt", "interleaved_matmul_encdec_qk",
           "interleaved_matmul_encdec_valatt", "adamw_update", "mp_adamw_update", "multi_adamw_update",
           "multi_mp_adamw_update", "DeformableConvolution", "ModulatedDeformableConvolution", "quantize",
           "quantize_v2",
           "dequantize", "quantized_pooling", "index_array"]

ctc_loss = CTCLoss


def SyncBatchNorm(data, gamma, beta, moving_mean, moving_var, eps=1e-3, momentum=0.9, fix_gamma=True,
                  use_global_stats=False, output_mean_var=False, ndev=1, key=None, name=None, attr=None, update=None):
    """MXNet's ``contrib.SyncBatchNorm``: BatchNorm over axis 1 (it has no ``axis`` argument) whose batch
    statistics MXNet gathers from ``ndev`` devices that meet under ``key``.  A program here runs on one device,
    so ``ndev`` changes nothing; ``key`` is required, as in MXNet (Gluon's SyncBatchNorm passes its prefix).

    ``output_mean_var=True`` returns ``[out, mean, var]``: the batch's mean and biased VARIANCE (BatchNorm's
    third output is the inverse standard deviation); outside training MXNet leaves those two outputs
    unwritten, and here they are the moving statistics.  ``update``: as BatchNorm's (the Gluon layer's running
    statistics)."""
    check(key is not None, "SyncBatchNorm", "key is required: the name that pairs a layer's copies on the "
          "devices (Gluon's SyncBatchNorm passes its prefix)")
    training = autograd.is_training() and not use_global_stats
    moments = _sync_batch_moments(data, moving_mean, moving_var, training=training) if output_mean_var else []
    out = BatchNorm(data, gamma, beta, moving_mean, moving_var, eps=eps, momentum=momentum, fix_gamma=fix_gamma,
                    use_global_stats=use_global_stats, axis=1, **({} if update is None else {"update": update}))
    return [out, *moments] if output_mean_var else out


@op
def _sync_batch_moments(data, moving_mean, moving_var, training=False):
    """SyncBatchNorm's extra outputs: the batch's mean and biased variance over every axis but 1 in training,
    else the moving statistics."""
    if not training:
        return [jnp.asarray(moving_mean), jnp.asarray(moving_var)]
    x = jnp.asarray(data)
    x = x.astype(jnp.float32) if x.dtype == jnp.float16 else x
    axes = tuple(i for i in range(x.ndim) if i != 1)
    return [jnp.mean(x, axis=axes), jnp.var(x, axis=axes)]


def BatchNormWithReLU(data, gamma, beta, moving_mean, moving_var, eps=1e-3, momentum=0.9, fix_gamma=True,
                      use_global_stats=False, output_mean_var=False, axis=1, cudnn_off=False, min_calib_range=None,
                      max_calib_range=None, **kwargs):
    """``relu(BatchNorm(...))`` (MXNet's fused contrib op; same arguments as BatchNorm)."""
    out = BatchNorm(data, gamma, beta, moving_mean, moving_var, eps=eps, momentum=momentum, fix_gamma=fix_gamma,
                    use_global_stats=use_global_stats, output_mean_var=output_mean_var, axis=axis,
                    cudnn_off=cudnn_off, min_calib_range=min_calib_range, max_calib_range=max_calib_range, **kwargs)
    if isinstance(out, list):
        return [_relu(out[0])] + out[1:]
    return _relu(out)


@op
def _relu(x):
    return jnp.maximum(x, jnp.zeros((), x.dtype))


def _source_weights(n, out_size, align_corners):
    """MXNet's CPU kernel's source row (or column) and weight per output index, in its float32 arithmetic:
    ``scale = float(n - 1) / (out - 1)`` (or ``float(n) / out``), ``src = scale * dst`` (or
    ``float(double(scale) * (dst + 0.5) - 0.5)``, at least 0), ``i0 = int(src)``, ``w1 = src - i0``,
    ``w0 = 1 - w1``."""
    f32 = np.float32
    dst = np.arange(out_size)
    if out_size <= 1:
        scale = f32(0)
    else:
        scale = f32(n - 1) / f32(out_size - 1) if align_corners else f32(n) / f32(out_size)
    if align_corners:
        src = (scale * dst.astype(f32)).astype(f32)
    else:
        src = np.maximum((np.float64(scale) * (dst + 0.5) - 0.5).astype(f32), f32(0))
    i0 = src.astype(np.int64)
    i1 = np.where(i0 < n - 1, i0 + 1, i0)
    w1 = (src - i0.astype(f32)).astype(f32)
    return i0, i1, (f32(1) - w1).astype(f32), w1


def _resize_bilinear(x, oh, ow, align_corners):
    """MXNet's ``SpatialUpSamplingBilinearUpdateOutput`` value for value:
    ``h0 * (w0 * a + w1 * b) + h1 * (w0 * c + w1 * d)`` from the four neighbours, each product rounded on its
    own (resizing one axis then the other as two blends rounds differently: 80% of the values were off by an
    ulp, and an int8 graph that quantizes a resized map moves with them).  The inner sums depend on the input
    row and the output column only, so they are computed once per input row, then blended across rows."""
    n, m = x.shape[2], x.shape[3]
    if (oh, ow) == (n, m):
        return x
    hi0, hi1, h0, h1 = _source_weights(n, oh, align_corners)
    wi0, wi1, w0, w1 = _source_weights(m, ow, align_corners)
    w0, w1 = (jnp.asarray(v, x.dtype) for v in (w0, w1))
    inner = rounded(w0 * jnp.take(x, wi0, axis=3)) + rounded(w1 * jnp.take(x, wi1, axis=3))     # N, C, n, ow
    h0, h1 = (jnp.asarray(v, x.dtype).reshape(-1, 1) for v in (h0, h1))
    return rounded(h0 * jnp.take(inner, hi0, axis=2)) + rounded(h1 * jnp.take(inner, hi1, axis=2))


@op(compile_arrays=("data", "like"))
def BilinearResize2D(data, like=None, height=1, width=1, scale_height=None, scale_width=None, mode="size",
                     align_corners=True):
    choice("BilinearResize2D", "mode", mode,
           ("size", "like", "odd_scale", "to_even_down", "to_even_up", "to_odd_down", "to_odd_up"))
    x = jnp.asarray(data)
    check(x.ndim == 4, "BilinearResize2D", f"data must be 4-D (N, C, H, W), got shape {tuple(x.shape)}")
    h, w = x.shape[2:]
    if mode == "like":
        check(like is not None, "BilinearResize2D", "mode='like' needs like=")
        oh, ow = jnp.shape(like)[2:]
    elif mode == "odd_scale":   # an odd side keeps its ends: (n - 1) * scale + 1
        oh, ow = (int(n * sc) if n % 2 == 0 else int((n - 1) * sc) + 1
                  for n, sc in ((h, scale_height), (w, scale_width)))
    elif mode != "size":        # to the nearest even/odd size below/above (a side already so is kept)
        parity, step = (0 if "even" in mode else 1), (-1 if mode.endswith("down") else 1)
        oh, ow = (n if n % 2 == parity else n + step for n in (h, w))
    elif scale_height is not None or scale_width is not None:
        oh = int(x.shape[2] * (scale_height or 1))
        ow = int(x.shape[3] * (scale_width or 1))
    else:
        oh, ow = int(height), int(width)
    return _resize_bilinear(x, oh, ow, align_corners)


def _adaptive_windows(n, out):
    """Per output index, MXNet's window ``[floor(i * n / out), ceil((i + 1) * n / out))``: the positions padded
    to the longest window (clipped), which of them are inside, and each window's length."""
    starts = [(i * n) // out for i in range(out)]
    ends = [-(-((i + 1) * n) // out) for i in range(out)]
    k = max(e - b for b, e in zip(starts, ends))
    index = np.array([[min(b + t, n - 1) for t in range(k)] for b in starts])
    inside = np.array([[t < e - b for t in range(k)] for b, e in zip(starts, ends)])
    return index, inside, np.array([e - b for b, e in zip(starts, ends)], np.float32)


@op(compile_arrays=("data",))
def AdaptiveAvgPooling2D(data, output_size=()):
    """MXNet's CPU kernel value for value: each window summed one value at a time, row by row, in float32,
    then ``sum / kW / kH`` (a matrix product sums in another order and differs in the last bit, which moves
    an int8 graph that quantizes the pooled map)."""
    from jax import lax

    x = jnp.asarray(data)
    size = as_tuple(output_size) or (1,)
    oh, ow = (size[0], size[0]) if len(size) == 1 else size
    rows, row_in, kh = _adaptive_windows(x.shape[2], oh)
    cols, col_in, kw = _adaptive_windows(x.shape[3], ow)
    g = jnp.take(jnp.take(x, rows.reshape(-1), axis=2).reshape(x.shape[:2] + rows.shape + x.shape[3:]),
                 cols.reshape(-1), axis=4).reshape(x.shape[:2] + rows.shape + cols.shape)    # N,C,oh,KH,ow,KW
    inside = jnp.asarray(row_in[:, :, None, None] & col_in[None, None, :, :])
    g = jnp.where(inside, g, jnp.zeros((), x.dtype))
    by_row = jnp.moveaxis(g, 3, 0)                                              # KH,N,C,oh,ow,KW

    def add_row(total, row):
        for j in range(row.shape[-1]):                 # the columns of a window row, in order
            total = total + row[..., j]
        return total, None

    total, _ = lax.scan(add_row, jnp.zeros(x.shape[:2] + (oh, ow), x.dtype), by_row)
    return divided(divided(total, kw[None, :]), kh[:, None])


@op
def arange_like(data, start=0.0, step=1.0, repeat=1, ctx=None, axis=None):
    """``start, start + step, ...`` with the shape of ``data`` (or the length of its ``axis``)."""
    x = jnp.asarray(data)
    n = x.size if axis is None else x.shape[axis]
    values = start + step * (jnp.arange(-(-n // repeat), dtype=jnp.float32))
    values = jnp.repeat(values, repeat)[:n].astype(x.dtype)
    return values.reshape(x.shape) if axis is None else values


@op
def index_array(data, axes=None):
    """Each element's coordinates (along ``axes``, all by default) as a last axis: shape ``data.shape +
    (len(axes),)``, int64 (int32 unless jax's x64 is on), MXNet's ``contrib.index_array``."""
    x = jnp.asarray(data)
    axes = range(x.ndim) if axes is None else [norm_axis(a, x.ndim, "index_array", "axes") for a in as_tuple(axes)]
    dtype = jax.dtypes.canonicalize_dtype(np.int64)
    grids = [lax.broadcasted_iota(dtype, x.shape, a) for a in axes]
    return jnp.stack(grids, axis=-1) if grids else jnp.zeros(x.shape + (0,), dtype)


@op
def div_sqrt_dim(data):
    """``data / sqrt(data.shape[-1])``."""
    x = jnp.asarray(data)
    return x / jnp.asarray(math.sqrt(x.shape[-1]), x.dtype)


@op
def isnan(data):
    x = jnp.asarray(data)
    return jnp.isnan(x).astype(x.dtype)


@op
def isinf(data):
    x = jnp.asarray(data)
    return jnp.isinf(x).astype(x.dtype)


@op
def isfinite(data):
    x = jnp.asarray(data)
    return jnp.isfinite(x).astype(x.dtype)


@op
def quadratic(data, a=0.0, b=0.0, c=0.0):
    x = jnp.asarray(data)
    return a * x * x + b * x + c


def allclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=True):
    """MXNet's: a 0-d uint8 array, 1 where every ``|a - b| <= atol + rtol * |b|``."""
    return wrap(jnp.asarray(jnp.allclose(raw(a), raw(b), rtol, atol, equal_nan), jnp.uint8))


# --- interleaved attention matmuls (GluonNLP's transformer) -------------------------------------

def _split_heads(x, heads, parts):
    t, b, _ = x.shape
    return x.reshape(t, b, heads, parts, -1)


@op
def interleaved_matmul_selfatt_qk(queries_keys_values, heads):
    """(T, B, H * 3 * D) interleaved q/k/v -> (B * H, T, T) scores ``q k^T / sqrt(D)``."""
    x = _split_heads(jnp.asarray(queries_keys_values), heads, 3)
    q, k = x[:, :, :, 0], x[:, :, :, 1]
    d = q.shape[-1]
    scores = jnp.einsum("tbhd,sbhd->bhts", q / jnp.asarray(math.sqrt(d), q.dtype), k)
    return scores.reshape((-1,) + scores.shape[2:])


@op
def interleaved_matmul_selfatt_valatt(queries_keys_values, attention, heads):
    x = _split_heads(jnp.asarray(queries_keys_values), heads, 3)
    v = x[:, :, :, 2]
    t, b, h, d = v.shape
    att = jnp.asarray(attention).reshape(b, h, t, t)
    out = jnp.einsum("bhts,sbhd->tbhd", att, v)
    return out.reshape(t, b, h * d)


@op
def interleaved_matmul_encdec_qk(queries, keys_values, heads):
    q = jnp.asarray(queries)
    tq, b, _ = q.shape
    q = q.reshape(tq, b, heads, -1)
    kv = _split_heads(jnp.asarray(keys_values), heads, 2)
    d = q.shape[-1]
    scores = jnp.einsum("tbhd,sbhd->bhts", q / jnp.asarray(math.sqrt(d), q.dtype), kv[:, :, :, 0])
    return scores.reshape((-1,) + scores.shape[2:])


@op
def interleaved_matmul_encdec_valatt(keys_values, attention, heads):
    kv = _split_heads(jnp.asarray(keys_values), heads, 2)
    v = kv[:, :, :, 1]
    s, b, h, d = v.shape
    att = jnp.asarray(attention)
    att = att.reshape(b, h, att.shape[-2], s)
    out = jnp.einsum("bhts,sbhd->tbhd", att, v)
    return out.reshape(out.shape[0], b, h * d)


# --- control flow ---------------------------------------------------------------------------

def _traced(tree):
    return any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(tree))


def _as_list(x):
    return (list(x), False) if isinstance(x, (list, tuple)) else ([x], True)


def foreach(body, data, init_states):
    """``body(data_t, states) -> (outputs, states)`` over axis 0 of ``data``: (stacked outputs, final states)."""
    if _traced((data, init_states)):
        def step(states, x):
            out, new = body(x, states)
            return new, out
        states, outs = lax.scan(step, init_states, data)
        return outs, states
    states = init_states
    items, single = _as_list(data)
    outputs = []
    for t in range(len(items[0])):
        x = items[0][t] if single else [d[t] for d in items]
        out, states = body(x, states)
        outputs.append(out)
    first, single_out = _as_list(outputs[0])
    from ast_hybrid.ops.shape import stack
    stacked = [stack(*[_as_list(o)[0][i] for o in outputs]) for i in range(len(first))]
    return (stacked[0] if single_out else stacked), states


def while_loop(cond, func, loop_vars, max_iterations=None):
    """MXNet's ``contrib.while_loop``: ``(outputs stacked to max_iterations, final loop_vars)``."""
    check(max_iterations is not None, "contrib.while_loop", "max_iterations is required")
    vars_, single = _as_list(loop_vars)

    def pred(vs):
        return raw(cond(*vs))

    single_out = [False]

    def step_fn(vs):
        out, new = func(*vs)
        outs, single_out[0] = _as_list(out) if out is not None else ([], False)
        return outs, _as_list(new)[0]

    if not _traced(vars_):
        outputs, steps = [], 0
        while steps < max_iterations and bool(np.asarray(pred(vars_)).reshape(-1)[0]):
            outs, vars_ = step_fn(vars_)
            outputs.append(outs)
            steps += 1
        from ast_hybrid.ops.shape import concat, stack
        stacked = []
        if outputs and outputs[0]:
            for i in range(len(outputs[0])):
                s = stack(*[o[i] for o in outputs])
                pad_rows = max_iterations - steps
                if pad_rows:
                    pad = NDArray(jnp.zeros((pad_rows,) + s.shape[1:], s._arr.dtype))
                    s = concat(s, pad, dim=0)
                stacked.append(s)
        return (stacked[0] if single_out[0] else stacked), (vars_[0] if single else vars_)
    out_shape = jax.eval_shape(lambda vs: func(*vs)[0], vars_)

    def step(carry, _):
        vs, done = carry
        go = jnp.logical_and(~done, jnp.asarray(pred(vs)).reshape(-1)[0] != 0)

        def run(vs):
            return step_fn(vs)

        def skip(vs):
            zeros = [NDArray(jnp.zeros(s.shape, s.dtype)) for s in jax.tree_util.tree_leaves(out_shape)]
            return zeros, list(vs)

        outs, new_vs = lax.cond(go, run, skip, vs)
        return (new_vs, ~go), outs

    (vars_, _), outs = lax.scan(step, (vars_, jnp.asarray(False)), None, length=max_iterations)
    return (outs[0] if single_out[0] else outs), (vars_[0] if single else vars_)


def cond(pred, then_func, else_func):
    """``then_func()`` if ``pred`` is non-zero else ``else_func()``; ``lax.cond`` when ``pred`` is traced."""
    p = raw(pred)
    if isinstance(p, jax.core.Tracer):
        return lax.cond(jnp.asarray(p).reshape(-1)[0] != 0, lambda _: then_func(), lambda _: else_func(), None)
    return then_func() if bool(np.asarray(p).reshape(-1)[0]) else else_func()
