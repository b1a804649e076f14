"""Normalisation ops: BatchNorm, LayerNorm, InstanceNorm, GroupNorm, L2Normalization, LRN.

``BatchNorm(data, gamma, beta, moving_mean, moving_var, eps=1e-3,
momentum=0.9, fix_gamma=True, use_global_stats=False, output_mean_var=False,
axis=1)``: in training mode (``autograd.is_training()``) and without
``use_global_stats`` it normalises with the batch's mean and biased variance
and the running statistics follow ``running = running * momentum + batch *
(1 - momentum)``; otherwise it uses the running statistics.  ``fix_gamma``
uses 1 for gamma.  ``output_mean_var=True`` also returns the mean and the
inverse standard deviation ``1 / sqrt(var + eps)``, as MXNet does.

Where MXNet updates the running statistics in the backward pass, the update
here is made by the training-mode forward call: when ``moving_mean`` and
``moving_var`` are NDArrays they are rebound to the new values (MXNet's aux
states are written in place); the Gluon layer writes them back into its
parameters, out of the compiled program.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from ast_hybrid import autograd
from ast_hybrid.ndarray import NDArray
from ast_hybrid.ops._core import check, choice, norm_axis, op

__all__ = ["BatchNorm", "BatchNorm_v1", "LayerNorm", "InstanceNorm", "GroupNorm", "L2Normalization", "LRN",
           "batch_norm_kernel"]


def _channel_shape(x, axis):
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    return tuple(shape)


@op(compile_arrays=("data", "gamma", "beta", "moving_mean", "moving_var"))
def batch_norm_kernel(data, gamma, beta, moving_mean, moving_var, eps=1e-3, momentum=0.9, fix_gamma=True,
                      training=False, axis=1):
    """``[out, mean, inverse std, new moving mean, new moving var]`` (pure; see BatchNorm)."""
    x = jnp.asarray(data)
    axis = norm_axis(axis, x.ndim, "BatchNorm")
    c = x.shape[axis]
    for name, v in (("gamma", gamma), ("beta", beta), ("moving_mean", moving_mean), ("moving_var", moving_var)):
        check(jnp.shape(v) == (c,), "BatchNorm", f"{name} must have shape ({c},) for {c} channels on axis {axis} "
              f"of input {tuple(x.shape)}, got {tuple(jnp.shape(v))}")
    shape = _channel_shape(x, axis)
    compute = jnp.float32 if x.dtype == jnp.float16 else x.dtype
    xc = x.astype(compute)
    g = jnp.ones((c,), compute) if fix_gamma else jnp.asarray(gamma, compute)
    mm, mv = jnp.asarray(moving_mean), jnp.asarray(moving_var)
    if training:
        axes = tuple(i for i in range(x.ndim) if i != axis)
        mean = jnp.mean(xc, axis=axes)
        var = jnp.mean(jnp.square(xc - mean.reshape(shape)), axis=axes)
        new_mm = (mm * momentum + mean * (1 - momentum)).astype(mm.dtype)
        new_mv = (mv * momentum + var * (1 - momentum)).astype(mv.dtype)
    else:
        mean, var = mm.astype(compute), mv.astype(compute)
        new_mm, new_mv = mm, mv
    inv = lax.rsqrt(var + eps)
    scale = g * inv
    out = xc * scale.reshape(shape) + (jnp.asarray(beta, compute) - mean * scale).reshape(shape)
    return [out.astype(x.dtype), mean, inv, new_mm, new_mv]


def BatchNorm(data, gamma, beta, moving_mean, moving_var, eps=1e-3, momentum=0.9, fix_gamma=True,
              use_global_stats=False, output_mean_var=False, axis=1, cudnn_off=False, min_calib_range=None,
              max_calib_range=None, **kwargs):
    """MXNet's BatchNorm (see the module doc)."""
    training = autograd.is_training() and not use_global_stats
    out, mean, inv, new_mm, new_mv = batch_norm_kernel(data, gamma, beta, moving_mean, moving_var, eps=eps,
                                                       momentum=momentum, fix_gamma=fix_gamma, training=training,
                                                       axis=axis, **kwargs)
    if training:
        for aux, new in ((moving_mean, new_mm), (moving_var, new_mv)):
            if isinstance(aux, NDArray):
                aux._arr = new._arr
    return [out, mean, inv] if output_mean_var else out


BatchNorm_v1 = BatchNorm


@op(compile_arrays=("data", "gamma", "beta"))
def LayerNorm(data, gamma, beta, axis=-1, eps=1e-5, output_mean_var=False):
    """Normalise over ``axis`` then scale by ``gamma`` and shift by ``beta`` (both of that axis' size);
    ``output_mean_var`` also returns the mean and the standard deviation ``sqrt(var + eps)``."""
    x = jnp.asarray(data)
    axis = norm_axis(axis, x.ndim, "LayerNorm")
    c = x.shape[axis]
    check(jnp.shape(gamma) == (c,) and jnp.shape(beta) == (c,), "LayerNorm",
          f"gamma and beta must have shape ({c},), got {tuple(jnp.shape(gamma))} and {tuple(jnp.shape(beta))}")
    compute = jnp.float32 if x.dtype == jnp.float16 else x.dtype
    xc = x.astype(compute)
    mean = jnp.mean(xc, axis=axis, keepdims=True)
    var = jnp.mean(jnp.square(xc - mean), axis=axis, keepdims=True)
    std = jnp.sqrt(var + eps)
    shape = _channel_shape(x, axis)
    out = ((xc - mean) / std * jnp.reshape(gamma, shape) + jnp.reshape(beta, shape)).astype(x.dtype)
    return [out, mean.astype(x.dtype), std.astype(x.dtype)] if output_mean_var else out


@op(compile_arrays=("data", "gamma", "beta"))
def InstanceNorm(data, gamma, beta, eps=1e-3):
    """Normalise each (sample, channel) over its spatial axes; ``gamma``/``beta`` per channel (axis 1)."""
    x = jnp.asarray(data)
    c = x.shape[1]
    check(jnp.shape(gamma) == (c,) and jnp.shape(beta) == (c,), "InstanceNorm",
          f"gamma and beta must have shape ({c},), got {tuple(jnp.shape(gamma))} and {tuple(jnp.shape(beta))}")
    axes = tuple(range(2, x.ndim))
    mean = jnp.mean(x, axis=axes, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=axes, keepdims=True)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return (x - mean) * lax.rsqrt(var + eps) * jnp.reshape(gamma, shape) + jnp.reshape(beta, shape)


@op(compile_arrays=("data", "gamma", "beta"))
def GroupNorm(data, gamma, beta, num_groups=1, eps=1e-5, output_mean_var=False):
    """Normalise each group of ``C / num_groups`` channels; MXNet 1.9.1's ``gamma``/``beta`` have one value
    per group."""
    x = jnp.asarray(data)
    n, c = x.shape[:2]
    check(c % num_groups == 0, "GroupNorm", f"{c} channels do not split into num_groups={num_groups}")
    check(jnp.shape(gamma) == (num_groups,) and jnp.shape(beta) == (num_groups,), "GroupNorm",
          f"gamma and beta must have shape ({num_groups},), got {tuple(jnp.shape(gamma))}, {tuple(jnp.shape(beta))}")
    g = x.reshape((n, num_groups, -1))
    mean = jnp.mean(g, axis=2, keepdims=True)
    var = jnp.mean(jnp.square(g - mean), axis=2, keepdims=True)
    std = jnp.sqrt(var + eps)
    y = (g - mean) / std * jnp.reshape(gamma, (1, -1, 1)) + jnp.reshape(beta, (1, -1, 1))
    out = y.reshape(x.shape)
    if output_mean_var:
        return [out, mean.reshape(n, num_groups), std.reshape(n, num_groups)]
    return out


@op(compile_arrays=("data",))
def L2Normalization(data, eps=1e-10, mode="instance"):
    """Divide by the L2 norm over all but axis 0 (``instance``), over axis 1 (``channel``) or over the spatial
    axes (``spatial``)."""
    choice("L2Normalization", "mode", mode, ("instance", "channel", "spatial"))
    x = jnp.asarray(data)
    axes = {"instance": tuple(range(1, x.ndim)), "channel": (1,), "spatial": tuple(range(2, x.ndim))}[mode]
    return x / jnp.sqrt(jnp.sum(jnp.square(x), axis=axes, keepdims=True) + eps)


@op(compile_arrays=("data",))
def LRN(data, alpha=1e-4, beta=0.75, knorm=2.0, nsize=5):
    """Local response normalisation across channels: ``x / (knorm + alpha / nsize * sum x^2) ** beta``."""
    x = jnp.asarray(data)
    half = nsize // 2
    sq = jnp.pad(jnp.square(x), [(0, 0), (half, half)] + [(0, 0)] * (x.ndim - 2))
    window = (1, nsize) + (1,) * (x.ndim - 2)
    total = lax.reduce_window(sq, 0.0, lax.add, window, (1,) * x.ndim, "VALID")
    return x / jnp.power(knorm + alpha / nsize * total, beta)
