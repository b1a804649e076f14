"""MXNet 1.9.1's int8 inference ops as its oneDNN (MKLDNN) CPU build runs them, value for value.

GluonCV's ``*_int8`` models are graphs MXNet's quantization pass wrote: ``_contrib_quantize_v2`` turns the
float input into int8/uint8 with a range, ``_sg_mkldnn_conv`` (a fused Convolution [+ BatchNorm] [+ ReLU]
[+ residual sum [+ ReLU]] subgraph) computes on int8 and requantizes with calibrated ranges,
``_contrib_quantized_pooling`` pools int8, ``_contrib_dequantize`` goes back to float.  What each computes,
read from MXNet 1.9.1's sources (``src/operator/quantization``, ``src/operator/subgraph/mkldnn``) and checked
against it (tests/ops/test_quantization.py):

* a range's scale is ``127.5 / max(|min|, |max|)`` for int8 and ``255.5 / ...`` for uint8 (MXNet's
  ``kInt8Range``/``kUint8Range``); float -> int is round-half-even then saturate to the type (oneDNN's reorder);
  ``quantize_v2``'s ``out_type='auto'`` is uint8 when a calibrated minimum is >= 0, else int8; without a
  calibrated range the data's own min and max are the range;
* the fused convolution folds BatchNorm into the weight and bias in float (``alpha = gamma / sqrt(var + eps)``),
  quantizes the weight per output channel (scale ``127.5 / max|w_c|``, lowered where the bias would overflow
  int32 / 2) and the bias to int32 at ``data_scale * weight_scale_c``, accumulates exactly in int32, then
  ``(acc + bias) * output_scale / data_scale / weight_scale_c``, ReLU, ``+ sum_scale * sum`` (a fused
  multiply-add), ReLU, rounds and saturates.  Its output type is uint8 when a ReLU ends it, else int8; with a residual sum oneDNN writes into
  the sum's own buffer, so the sum's type bounds the result (an int8 sum caps a uint8 output at 127);
* the int32 accumulation is computed as float convolutions whose partial sums stay below 2**24 (the weight
  split in two 4-bit digits, the input channels in chunks where needed), so any summation order is exact.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ast_hybrid.ops._core import check, choice, divided, op, rounded
from ast_hybrid.ops.conv import Pooling, _tup
from ast_hybrid.ops.conv_lowering import convolve

__all__ = ["quantize", "quantize_v2", "dequantize", "quantized_pooling", "sg_mkldnn_conv"]

INT8_RANGE, UINT8_RANGE = np.float32(127.5), np.float32(255.5)
_LIMITS = {"int8": (-128, 127), "uint8": (0, 255), "int32": (-2 ** 31, 2 ** 31 - 1)}
_EXACT = 2 ** 24                     # float32 holds every integer below this


def _max_abs(lo, hi):
    return jnp.maximum(jnp.abs(jnp.asarray(lo, jnp.float32)), jnp.abs(jnp.asarray(hi, jnp.float32)))


def _scale(dtype, lo, hi):
    """MXNet's ``GetQuantizeScale``: the factor from real values to the type's integers (INT32_MAX for an
    empty range)."""
    real = _max_abs(lo, hi)
    q = INT8_RANGE if jnp.dtype(dtype) == jnp.int8 else UINT8_RANGE
    return rounded(jnp.where(real == 0, np.float32(2 ** 31 - 1), q / jnp.where(real == 0, 1, real)))


def _saturate(x, dtype):
    """Round half to even, clamp to the type, cast (oneDNN's float -> integer conversion)."""
    lo, hi = _LIMITS[jnp.dtype(dtype).name]
    return jnp.clip(jnp.round(x), lo, hi).astype(dtype)


def _as_range(v):
    return jnp.reshape(jnp.asarray(v, jnp.float32), (1,))


def _out_type(out_type, min_calib_range, max_calib_range):
    choice("quantize_v2", "out_type", out_type, ("auto", "int8", "uint8"))
    if out_type != "auto":
        return jnp.dtype(out_type)
    if min_calib_range is not None and max_calib_range is not None and float(min_calib_range) >= 0.0:
        return jnp.dtype(jnp.uint8)
    return jnp.dtype(jnp.int8)


@op(compile_arrays=("data",))
def quantize_v2(data, out_type="int8", min_calib_range=None, max_calib_range=None):
    """``(quantized, min, max)``: float data in int8/uint8 (see the module doc); int8/uint8 data passes."""
    x = jnp.asarray(data)
    calibrated = min_calib_range is not None and max_calib_range is not None
    if x.dtype in (jnp.int8, jnp.uint8):
        if calibrated:
            return x, _as_range(min_calib_range), _as_range(max_calib_range)
        top = 255.0 if x.dtype == jnp.uint8 else 127.5     # MXNet writes these two (not 255.5) here
        return x, _as_range(0.0 if x.dtype == jnp.uint8 else -127.5), _as_range(top)
    check(x.dtype == jnp.float32, "quantize_v2", f"data must be float32, int8 or uint8, got {x.dtype}")
    dtype = _out_type(out_type, min_calib_range, max_calib_range)
    if calibrated:
        lo, hi = jnp.float32(min_calib_range), jnp.float32(max_calib_range)
    else:
        lo, hi = jnp.min(x), jnp.max(x)
    real = _max_abs(lo, hi)
    scale = rounded((UINT8_RANGE if dtype == jnp.uint8 else INT8_RANGE) / real)
    q = _saturate(x * scale, dtype)
    if dtype == jnp.uint8:
        return q, _as_range(lo), _as_range(hi)
    return q, _as_range(-real), _as_range(real)


@op(compile_arrays=("data", "min_range", "max_range"))
def quantize(data, min_range, max_range, out_type="uint8"):
    """MXNet's older ``contrib.quantize`` (a range given as arrays) as its oneDNN build runs it: scale ``255 /
    max(|min|, |max|)`` for uint8 (the given range kept), ``127 / ...`` for int8 (the range made
    ``-real, real``), rounded half to even and saturated; ``(quantized, min, max)``."""
    choice("quantize", "out_type", out_type, ("int8", "uint8"))
    x = jnp.asarray(data)
    check(x.dtype == jnp.float32, "quantize", f"data must be float32, got {x.dtype}")
    lo, hi = jnp.reshape(min_range, ()).astype(jnp.float32), jnp.reshape(max_range, ()).astype(jnp.float32)
    real = _max_abs(lo, hi)
    dtype = jnp.dtype(out_type)
    q = _saturate(x * rounded(np.float32(255.0 if dtype == jnp.uint8 else 127.0) / real), dtype)
    if dtype == jnp.uint8:
        return q, _as_range(lo), _as_range(hi)
    return q, _as_range(-real), _as_range(real)


@op(compile_arrays=("data", "min_range", "max_range"))
def dequantize(data, min_range, max_range, out_type="float32"):
    """int8/uint8 back to float32: ``q * max(|min|, |max|) / 127.5`` (uint8: ``/ 255.5``)."""
    q = jnp.asarray(data)
    check(q.dtype in (jnp.int8, jnp.uint8, jnp.int32), "dequantize", f"data must be int8, uint8 or int32, got {q.dtype}")
    real = _max_abs(jnp.reshape(min_range, ()), jnp.reshape(max_range, ()))
    if q.dtype == jnp.int32:
        return q.astype(jnp.float32) * rounded(divided(real, np.float32(2 ** 31 - 1)))
    return q.astype(jnp.float32) * rounded(divided(real, UINT8_RANGE if q.dtype == jnp.uint8 else INT8_RANGE))


@op(compile_arrays=("data", "min_data", "max_data"))
def quantized_pooling(data, min_data, max_data, kernel=(), pool_type="max", global_pool=False, cudnn_off=False,
                      pooling_convention="valid", stride=(), pad=(), p_value=None, count_include_pad=None,
                      layout=None):
    """Pooling on int8/uint8 (oneDNN's: max exact, average rounded half to even); the range passes through."""
    q = jnp.asarray(data)
    choice("quantized_pooling", "pool_type", pool_type, ("max", "avg"))
    kw = dict(kernel=kernel, pool_type=pool_type, global_pool=global_pool, pooling_convention=pooling_convention,
              stride=stride, pad=pad, count_include_pad=count_include_pad, layout=layout)
    if pool_type == "max":
        out = Pooling.__wrapped__(q, **kw)
    else:
        out = _saturate(Pooling.__wrapped__(q.astype(jnp.float32), **kw), q.dtype)
    return out, _as_range(min_data), _as_range(max_data)


quantized_pooling.mx_outputs = 3      # (MXNet's generated output table, common/op_outputs.py, lacks it)


def _exact_conv(x, w, stride, dilate, pad, groups):
    """The int32 convolution of integer-valued ``x`` (|x| <= 255) and int8 ``w``, computed exactly with float32
    convolutions: ``w = 16 * hi + lo`` with ``lo`` in [-8, 7] and ``hi`` in [-8, 8], so a product is at most
    2040, and the input channels are taken in chunks small enough that a partial sum stays below 2**24."""
    wi = w.astype(jnp.int32)
    lo = (wi + 8) % 16 - 8
    hi = (wi - lo) // 16
    cin_g = w.shape[1]
    cells = int(np.prod(w.shape[2:]))
    chunk = max(1, (_EXACT - 1) // (2040 * cells))
    xf = x.astype(jnp.float32)

    def conv(xx, ww):
        return convolve(xx, ww.astype(jnp.float32), stride, dilate, [(p, p) for p in pad], groups, True)

    if groups == 1 and cin_g > chunk:
        total = 0
        for start in range(0, cin_g, chunk):
            part = slice(start, min(cin_g, start + chunk))
            total = total + _exact_conv(x[:, part], w[:, part], stride, dilate, pad, 1)
        return total
    if groups == 1:
        both = conv(xf, jnp.concatenate([lo, hi], axis=0)).astype(jnp.int32)
        o = w.shape[0]
        return both[:, :o] + 16 * both[:, o:]
    check(cin_g <= chunk, "sg_mkldnn_conv", f"a grouped int8 convolution with {cin_g} input channels per group "
          f"and a {w.shape[2:]} kernel is beyond the exact float32 path ({chunk} channels per group at most)")
    return conv(xf, lo).astype(jnp.int32) + 16 * conv(xf, hi).astype(jnp.int32)


def _fma(a, b, c):
    """``a * b + c`` rounded once, as oneDNN's sum post-op computes it (``vfmadd231ps``): in double, where the
    product of a float32 and an 8-bit integer is exact (rounding twice differed from MXNet on one value of
    fcn_resnet101_voc_int8's 65,536 in a residual sum, and from there on the network)."""
    import jax

    with jax.enable_x64(True):
        return (a.astype(jnp.float64) * b.astype(jnp.float64) + c.astype(jnp.float64)).astype(jnp.float32)


def _act(x, act_type):
    if act_type is None:
        return x
    choice("sg_mkldnn_conv", "act_type", act_type, ("relu",))
    return jnp.maximum(x, 0)


def _fold_bn(w, b, gamma, beta, mean, var, eps, fix_gamma):
    """MXNet's ``UpdateConvWeightBias``: BatchNorm folded into the convolution's weight and bias (float32, but
    ``alpha`` rounded from double as MXNet's C++ computes it: float32 throughout differs in the last bit for a
    quarter of the channels, which moves int8 outputs that sit near a rounding boundary)."""
    import jax

    g = jnp.ones_like(gamma) if fix_gamma else gamma
    with jax.enable_x64(True):      # MXNet's eps is a double: sqrt(var + eps) and the division are in double
        alpha = (g.astype(jnp.float64) / rounded(jnp.sqrt(var.astype(jnp.float64) + eps))).astype(jnp.float32)
    shape = (-1,) + (1,) * (w.ndim - 1)
    w = w * alpha.reshape(shape)
    b = beta + rounded(alpha * (b - mean)) if b is not None else beta - rounded(alpha * mean)
    return w, b


def sg_mkldnn_conv_outputs(quantized=False, **kwargs):
    """How many outputs the fused convolution has: ``(output, min, max)`` when quantized."""
    return 3 if quantized else 1


# each run as one program when called op by op (a SymbolBlock not hybridized): resnet50_v1_int8's 53 fused
# convolutions were each some 15 small eager programs, 757 compilations and 38 s for a 32x32 input
@op(compile_arrays=("data", "weight", "bias", "gamma", "beta", "moving_mean", "moving_var", "sum", "data_min",
                    "data_max", "sum_min", "sum_max"))
def sg_mkldnn_conv(data, weight, bias=None, gamma=None, beta=None, moving_mean=None, moving_var=None, sum=None,
                   data_min=None, data_max=None, sum_min=None, sum_max=None, *, kernel=(), stride=(), dilate=(),
                   pad=(), num_filter=None, num_group=1, no_bias=True, bn_eps=1e-3, bn_fix_gamma=False,
                   act_type=None, postsum_act_type=None, quantized=False, with_bn=False, with_act=False,
                   with_sum=False, with_postsum_act=False, min_calib_range=None, max_calib_range=None):
    """MXNet's ``_sg_mkldnn_conv``: Convolution [+ BatchNorm] [+ act] [+ sum [+ act]] fused, float or int8
    (the module doc says what the int8 one computes).  The convolution's and BatchNorm's options come from
    the node's subgraph (``symbol_json`` reads them)."""
    w = jnp.asarray(weight, jnp.float32)
    n = w.ndim - 2
    stride, dilate, pad = _tup(stride, n, 1), _tup(dilate, n, 1), _tup(pad, n, 0)
    b = None if no_bias or bias is None else jnp.asarray(bias, jnp.float32)
    if with_bn:
        w, b = _fold_bn(w, b, *(jnp.asarray(v, jnp.float32) for v in (gamma, beta, moving_mean, moving_var)),
                        bn_eps, bn_fix_gamma)
    act = act_type if with_act else None
    post = postsum_act_type if with_postsum_act else None
    x = jnp.asarray(data)
    if not quantized:
        out = convolve(x, w, stride, dilate, [(p, p) for p in pad], num_group, True)
        if b is not None:
            out = out + b.reshape((1, -1) + (1,) * n)
        out = _act(out, act)
        if with_sum:
            out = out + jnp.asarray(sum)
        return _act(out, post)
    check(x.dtype in (jnp.int8, jnp.uint8), "sg_mkldnn_conv", f"quantized data must be int8 or uint8, got {x.dtype}")
    check(min_calib_range is not None and max_calib_range is not None, "sg_mkldnn_conv",
          "a quantized fused convolution without calibrated output ranges (int32 output) is not supported")
    dmin, dmax = jnp.reshape(data_min, ()), jnp.reshape(data_max, ())
    data_scale = _scale(x.dtype, dmin, dmax)
    # per output channel weight scales (MXNet's GetWeightScales, channel-wise since the output is calibrated)
    flat = w.reshape(w.shape[0], -1)
    wscale = rounded(INT8_RANGE / _max_abs(flat.min(axis=1), flat.max(axis=1)))
    if b is not None:
        half = jnp.where(b > 0, np.float32(2.0 ** 30), np.float32(-2.0 ** 30))     # (float)INT32_MAX / 2
        cap = divided(rounded(half / jnp.where(b == 0, 1, b)), data_scale)
        wscale = rounded(jnp.where(b != 0, jnp.minimum(wscale, cap), wscale))
    shape = (-1,) + (1,) * (n + 1)
    qw = _saturate(w * wscale.reshape(shape), jnp.int8)
    acc = _exact_conv(x, qw, stride, dilate, pad, num_group).astype(jnp.float32)
    bshape = (1, -1) + (1,) * n
    if b is not None:
        qb = _saturate(b * rounded(wscale * data_scale), jnp.int32)
        acc = acc + qb.astype(jnp.float32).reshape(bshape)
    out_u8 = (post if with_sum else act) == "relu"
    out_dtype = jnp.dtype(jnp.uint8 if out_u8 else jnp.int8)
    out_scale = _scale(out_dtype, jnp.float32(min_calib_range), jnp.float32(max_calib_range))
    requant = rounded(rounded(out_scale / data_scale) / wscale)
    f = _act(acc * requant.reshape(bshape), act)
    dst = out_dtype
    if with_sum:
        s = jnp.asarray(sum)
        sum_scale = rounded(out_scale / _scale(s.dtype, jnp.reshape(sum_min, ()), jnp.reshape(sum_max, ())))
        f = _act(_fma(sum_scale, s.astype(jnp.float32), f), post)
        dst = s.dtype                     # oneDNN writes the result into the sum's buffer, in its type
    out = _saturate(f, dst).astype(out_dtype)
    return out, _as_range(min_calib_range), _as_range(max_calib_range)
