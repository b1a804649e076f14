"""Which op namespace ``F`` is, plus a minimal stand-in while ``ast_hybrid.ops`` is absent.

Blocks receive ``F = namespace()``.  When the ops package exists it is used;
otherwise the few ops the basic layers need are defined here on jax arrays
with MXNet's semantics (``FullyConnected`` contracts dimension 1 of both
operands with ``lax.dot_general``, as PERF_NOTES asks).
"""

from __future__ import annotations

import math
import types

__all__ = ["namespace", "raw"]


def raw(x):
    """The jax array inside ``x`` (an NDArray wrapper or a jax array)."""
    import jax
    import numpy as np

    if isinstance(x, (jax.Array, np.ndarray, np.generic)):
        return x
    return getattr(x, "data", x)


def _fully_connected(data, weight, bias=None, num_hidden=None, no_bias=False, flatten=True):
    from jax import lax

    x = raw(data)
    if flatten and x.ndim != 2:
        x = x.reshape(x.shape[0], -1)
    out = lax.dot_general(x, raw(weight), (((x.ndim - 1,), (1,)), ((), ())))
    if not no_bias and bias is not None:
        out = out + raw(bias)
    return out


def _activation(data, act_type="relu"):
    import jax
    import jax.numpy as jnp

    x = raw(data)
    fns = {"relu": jax.nn.relu, "sigmoid": jax.nn.sigmoid, "tanh": jnp.tanh,
           "softrelu": jax.nn.softplus, "softsign": jax.nn.soft_sign}
    if act_type not in fns:
        raise ValueError(f"Activation: unknown act_type {act_type!r} (one of {', '.join(fns)})")
    return fns[act_type](x)


def _dropout(data, p=0.5, mode="training", axes=(), cudnn_off=False):
    import jax

    x = raw(data)
    if p <= 0 or (mode != "always" and not is_training()):
        return x
    from ast_hybrid.gluon.block import _TRACE_STACK
    from ast_hybrid.init import _key

    shape = list(x.shape)
    for a in axes:
        shape[a] = 1
    keep = jax.random.bernoulli(_TRACE_STACK[-1].next_key() if _TRACE_STACK else _key(), 1.0 - p, tuple(shape))
    return x * keep.astype(x.dtype) / (1.0 - p)


def _flatten(data):
    x = raw(data)
    return x.reshape(x.shape[0], -1)


def _tup(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def _convolution(data, weight, bias=None, kernel=None, stride=(), dilate=(), pad=(), num_filter=None,
                 num_group=1, no_bias=False, layout=None, **_):
    from jax import lax

    x, w = raw(data), raw(weight)
    n = x.ndim - 2
    spatial = "DHW"[-n:] if n <= 3 else None
    dn = lax.conv_dimension_numbers(x.shape, w.shape, ("NC" + spatial, "OI" + spatial, "NC" + spatial))
    pad = _tup(pad or 0, n)
    out = lax.conv_general_dilated(x, w, _tup(stride or 1, n), [(p, p) for p in pad],
                                   rhs_dilation=_tup(dilate or 1, n), dimension_numbers=dn,
                                   feature_group_count=num_group)
    if not no_bias and bias is not None:
        out = out + raw(bias).reshape((1, -1) + (1,) * n)
    return out


def _pooling(data, kernel=(), pool_type="max", global_pool=False, stride=(), pad=(),
             pooling_convention="valid", count_include_pad=True, layout=None, **_):
    import jax.numpy as jnp
    from jax import lax

    x = raw(data)
    n = x.ndim - 2
    axes = tuple(range(2, x.ndim))
    if global_pool:
        return (jnp.max if pool_type == "max" else jnp.mean)(x, axis=axes, keepdims=True)
    kernel, stride, pad = _tup(kernel, n), _tup(stride or 1, n), _tup(pad or 0, n)
    pads = []
    for k, s, p, size in zip(kernel, stride, pad, x.shape[2:]):
        extra = 0
        if pooling_convention == "full":
            out = -(-(size + 2 * p - k) // s) + 1
            extra = max(0, (out - 1) * s + k - size - 2 * p)
        pads.append((p, p + extra))
    window, strides, padding = (1, 1) + kernel, (1, 1) + stride, [(0, 0), (0, 0)] + pads
    if pool_type == "max":
        return lax.reduce_window(x, -jnp.inf, lax.max, window, strides, padding)
    total = lax.reduce_window(x, 0.0, lax.add, window, strides, padding)
    if count_include_pad:
        return total / float(math.prod(kernel))
    ones = jnp.ones(x.shape[2:], x.dtype)[None, None]
    count = lax.reduce_window(ones, 0.0, lax.add, window, strides, padding)
    return total / count


def _batch_norm(data, gamma, beta, moving_mean, moving_var, eps=1e-3, momentum=0.9, fix_gamma=True,
                use_global_stats=False, axis=1, **_):
    """MXNet's BatchNorm in predict mode (running statistics); see ``batch_norm_train``."""
    import jax.numpy as jnp

    x = raw(data)
    shape = [1] * x.ndim
    shape[axis] = -1
    g = jnp.ones_like(raw(gamma)) if fix_gamma else raw(gamma)
    scale = g / jnp.sqrt(raw(moving_var) + eps)
    return x * scale.reshape(shape) + (raw(beta) - raw(moving_mean) * scale).reshape(shape)


def batch_norm_train(data, gamma, beta, moving_mean, moving_var, eps=1e-3, momentum=0.9, fix_gamma=True,
                     axis=1):
    """Training-mode BatchNorm: (output, new running mean, new running var), MXNet's momentum rule."""
    import jax.numpy as jnp

    x = raw(data)
    axes = tuple(i for i in range(x.ndim) if i != axis % x.ndim)
    shape = [1] * x.ndim
    shape[axis] = -1
    mean = x.mean(axis=axes)
    var = ((x - mean.reshape(shape)) ** 2).mean(axis=axes)
    g = jnp.ones_like(raw(gamma)) if fix_gamma else raw(gamma)
    out = (x - mean.reshape(shape)) / jnp.sqrt(var.reshape(shape) + eps) * g.reshape(shape) + raw(beta).reshape(shape)
    new_mean = raw(moving_mean) * momentum + mean * (1 - momentum)
    new_var = raw(moving_var) * momentum + var * (1 - momentum)
    return out, new_mean, new_var


def _leaky_relu(data, gamma=None, act_type="leaky", slope=0.25, **_):
    import jax
    import jax.numpy as jnp

    x = raw(data)
    if act_type == "leaky":
        return jnp.where(x > 0, x, x * slope)
    if act_type == "prelu":
        g = raw(gamma)
        g = g.reshape((1, -1) + (1,) * (x.ndim - 2)) if x.ndim > 1 and g.size > 1 else g
        return jnp.where(x > 0, x, x * g)
    if act_type == "elu":
        return jnp.where(x > 0, x, slope * jnp.expm1(x))
    if act_type == "selu":
        return jax.nn.selu(x)
    if act_type == "gelu":
        return jax.nn.gelu(x, approximate=False)
    raise ValueError(f"LeakyReLU: unknown act_type {act_type!r}")


def _layer_norm(data, gamma, beta, axis=-1, eps=1e-5, **_):
    x = raw(data)
    mean = x.mean(axis=axis, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axis, keepdims=True)
    shape = [1] * x.ndim
    shape[axis] = -1
    return (x - mean) / (var + eps) ** 0.5 * raw(gamma).reshape(shape) + raw(beta).reshape(shape)


def _instance_norm(data, gamma, beta, eps=1e-3, **_):
    x = raw(data)
    axes = tuple(range(2, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean) / (var + eps) ** 0.5 * raw(gamma).reshape(shape) + raw(beta).reshape(shape)


def _group_norm(data, gamma, beta, num_groups=1, eps=1e-5, **_):
    x = raw(data)
    n, c = x.shape[:2]
    g = x.reshape((n, num_groups, -1))
    mean = g.mean(axis=2, keepdims=True)
    var = ((g - mean) ** 2).mean(axis=2, keepdims=True)
    y = (g - mean) / (var + eps) ** 0.5 * raw(gamma).reshape(1, -1, 1) + raw(beta).reshape(1, -1, 1)
    return y.reshape(x.shape)


def _embedding(data, weight, input_dim=None, output_dim=None, dtype=None, sparse_grad=False, **_):
    import jax.numpy as jnp

    idx = jnp.clip(raw(data).astype("int32"), 0, raw(weight).shape[0] - 1)
    return jnp.take(raw(weight), idx, axis=0)


def _deconvolution(data, weight, bias=None, kernel=None, stride=(), dilate=(), pad=(), adj=(),
                   target_shape=(), num_filter=None, num_group=1, no_bias=False, layout=None, **_):
    """MXNet's Deconvolution (weight (C_in, C_out / groups, *kernel)) as a dilated convolution."""
    import jax.numpy as jnp
    from jax import lax

    x, w = raw(data), raw(weight)
    n = x.ndim - 2
    kernel, stride = tuple(w.shape[2:]), _tup(stride or 1, n)
    dilate, pad, adj = _tup(dilate or 1, n), _tup(pad or 0, n), _tup(adj or 0, n)
    g = num_group
    cin, coutg = w.shape[0], w.shape[1]
    w = jnp.flip(w, axis=tuple(range(2, w.ndim)))
    w = w.reshape((g, cin // g, coutg) + kernel).swapaxes(1, 2).reshape((g * coutg, cin // g) + kernel)
    spatial = "DHW"[-n:]
    dn = lax.conv_dimension_numbers(x.shape, w.shape, ("NC" + spatial, "OI" + spatial, "NC" + spatial))
    padding = [(d * (k - 1) - p, d * (k - 1) - p + a) for k, d, p, a in zip(kernel, dilate, pad, adj)]
    out = lax.conv_general_dilated(x, w, (1,) * n, padding, lhs_dilation=stride, rhs_dilation=dilate,
                                   dimension_numbers=dn, feature_group_count=g)
    if not no_bias and bias is not None:
        out = out + raw(bias).reshape((1, -1) + (1,) * n)
    return out


def _pad(data, mode="constant", pad_width=(), constant_value=0.0, **_):
    import jax.numpy as jnp

    x = raw(data)
    pw = list(zip(pad_width[::2], pad_width[1::2]))
    np_mode = {"constant": "constant", "edge": "edge", "reflect": "reflect"}[mode]
    if np_mode == "constant":
        return jnp.pad(x, pw, mode="constant", constant_values=constant_value)
    return jnp.pad(x, pw, mode=np_mode)


_FALLBACK = types.SimpleNamespace(
    FullyConnected=_fully_connected, Activation=_activation, Dropout=_dropout, Flatten=_flatten,
    flatten=_flatten, relu=lambda x: _activation(x, "relu"), sigmoid=lambda x: _activation(x, "sigmoid"),
    tanh=lambda x: _activation(x, "tanh"),
    Convolution=_convolution, Pooling=_pooling, BatchNorm=_batch_norm, LeakyReLU=_leaky_relu,
    LayerNorm=_layer_norm, InstanceNorm=_instance_norm, GroupNorm=_group_norm, Embedding=_embedding,
    Deconvolution=_deconvolution, pad=_pad, Pad=_pad,
)


MODE_STACK: list = []   # train/predict overrides while ast_hybrid.autograd is absent


def _fallback_is_training() -> bool:
    return MODE_STACK[-1] if MODE_STACK else False


_PROBE = []   # the is_training function, resolved at the first call (a failed import per call costs µs)


def is_training() -> bool:
    """``ast_hybrid.autograd.is_training()``, or the local mode stack while that module is absent."""
    if not _PROBE:
        try:
            from ast_hybrid.autograd import is_training as probe
        except ImportError:
            probe = _fallback_is_training
        _PROBE.append(probe)
    return bool(_PROBE[0]())


def namespace():
    try:
        from ast_hybrid import ops
    except ImportError:
        return _FALLBACK
    return ops
