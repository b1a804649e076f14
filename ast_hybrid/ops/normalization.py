"""Normalisation ops: BatchNorm, LayerNorm, InstanceNorm, GroupNorm, L2Normalization, LRN.

``BatchNorm(data, gamma, beta, moving_mean, moving_var, eps=1e-3,
momentum=0.9, fix_gamma=True, use_global_stats=False, output_mean_var=False,
axis=1)``: in training mode (``autograd.is_training()``) and without
``use_global_stats`` it normalises with the batch's mean and biased variance
and the running statistics follow ``running = running * momentum + batch *
(1 - momentum)``; otherwise it uses the running statistics.  ``fix_gamma``
uses 1 for gamma.  ``output_mean_var=True`` also returns the mean and the
inverse standard deviation ``1 / sqrt(var + eps)``, as MXNet does.

The running statistics are updated as MXNet does it, in the backward pass
(``autograd.on_backward``): when ``backward()`` differentiates a recorded
training-mode BatchNorm (one of data, gamma, beta leads to a variable that gets
a gradient), ``moving_mean`` and ``moving_var`` (NDArrays: MXNet's aux states,
written in place, here rebound) become ``running * momentum + batch * (1 -
momentum)``, with the batch's biased variance.  Without recording, without
``backward()``, or when no input needs a gradient (a BatchNorm on the raw
input with ``scale=False, center=False``) they are left as they are, as in
MXNet.  ``batch_norm(..., update=fn)`` is the same op with ``fn(batch_mean,
batch_var, momentum)`` as the update (the Gluon layers update their
parameters that way).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ast_hybrid.core import autograd
from ast_hybrid.core.ndarray import NDArray
from ast_hybrid.ops._core import check, choice, norm_axis, op, rounded

__all__ = ["BatchNorm", "BatchNorm_v1", "LayerNorm", "InstanceNorm", "GroupNorm", "L2Normalization", "LRN",
           "batch_norm_kernel"]


def _channel_shape(x, axis):
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    return tuple(shape)


@op(compile_arrays=("data", "gamma", "beta", "moving_mean", "moving_var"))
def batch_norm_kernel(data, gamma, beta, moving_mean, moving_var, eps=1e-3, fix_gamma=True, training=False, axis=1,
                      global_grad=True):
    """``[out, mean, inverse std, variance]`` (pure; see BatchNorm): the batch's statistics in training,
    else the moving ones.  ``global_grad=False`` (predict mode without ``use_global_stats``): the gradient to
    the data is MXNet 1.9.1's there, the batch-statistics formula evaluated at the moving statistics
    (:func:`_predict_normalise`)."""
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
    if training:
        axes = tuple(i for i in range(x.ndim) if i != axis)
        mean = jnp.mean(xc, axis=axes)
        var = jnp.mean(jnp.square(xc - mean.reshape(shape)), axis=axes)
    else:
        mean, var = jnp.asarray(moving_mean).astype(compute), jnp.asarray(moving_var).astype(compute)
    inv = lax.rsqrt(var + eps)
    if not training and not global_grad:
        out = _predict_normalise(xc, g, jnp.asarray(beta, compute), mean, inv, axis)
        return [out.astype(x.dtype), mean, inv, var]
    scale = g * inv
    out = xc * scale.reshape(shape) + (jnp.asarray(beta, compute) - mean * scale).reshape(shape)
    return [out.astype(x.dtype), mean, inv, var]


@functools.partial(jax.custom_vjp, nondiff_argnums=(5,))
def _predict_normalise(x, g, beta, mean, inv, axis):
    """``(x - mean) * inv * g + beta`` per channel, whose gradient to ``x`` is what MXNet 1.9.1's BatchNorm gives
    in a recorded predict-mode call without ``use_global_stats``: ``g * inv * (dy - mean(dy) - xr *
    mean(dy * xr))`` with ``xr = (x - mean) * inv`` of the MOVING statistics (its CPU kernel runs the
    batch-statistics backward on them; checked on the oracle, tests/ops/test_batchnorm_predict_grad.py).
    gamma and beta get their usual gradients; the moving statistics none."""
    shape = _channel_shape(x, axis)
    scale = g * inv
    return x * scale.reshape(shape) + (beta - mean * scale).reshape(shape)


def _predict_normalise_fwd(x, g, beta, mean, inv, axis):
    return _predict_normalise(x, g, beta, mean, inv, axis), (x, g, mean, inv)


def _predict_normalise_bwd(axis, res, dy):
    x, g, mean, inv = res
    shape = _channel_shape(x, axis)
    axes = tuple(i for i in range(x.ndim) if i != axis)
    xr = (x - mean.reshape(shape)) * inv.reshape(shape)
    dx = (g * inv).reshape(shape) * (dy - jnp.mean(dy, axis=axes, keepdims=True)
                                      - xr * jnp.mean(dy * xr, axis=axes, keepdims=True))
    return dx, jnp.sum(dy * xr, axis=axes), jnp.sum(dy, axis=axes), jnp.zeros_like(mean), jnp.zeros_like(inv)


_predict_normalise.defvjp(_predict_normalise_fwd, _predict_normalise_bwd)


@jax.jit
def running_update(value, batch, momentum, rest):
    """A running statistic's update, ``value * momentum + batch * rest`` (``rest = 1 - momentum``, both Python
    floats) in ``value``'s dtype, as one program (op by op, five dispatches were 10% of a training step of
    mobilenetv2); each product rounded before the sum, as MXNet's kernel and the ops one by one round them
    (XLA:CPU would contract them into a fused multiply-add)."""
    return (rounded(value * momentum) + rounded(batch * rest)).astype(value.dtype)


def _rebind(moving_mean, moving_var):
    """The public op's update: the NDArrays given as moving_mean/moving_var are rebound (MXNet writes them)."""
    def update(mean, var, momentum):
        for aux, batch in ((moving_mean, mean), (moving_var, var)):
            if isinstance(aux, NDArray):
                aux._arr = running_update(aux._arr, batch, momentum, 1 - momentum)
    return update


def batch_norm(data, gamma, beta, moving_mean, moving_var, eps=1e-3, momentum=0.9, fix_gamma=True,
               use_global_stats=False, output_mean_var=False, axis=1, update=None, **kwargs):
    """BatchNorm whose statistics update (at backward, see the module doc) is ``update(batch_mean, batch_var,
    momentum)``; by default the moving_mean/moving_var NDArrays are rebound."""
    training = autograd.is_training() and not use_global_stats
    out, mean, inv, var = batch_norm_kernel(data, gamma, beta, moving_mean, moving_var, eps=eps,
                                            fix_gamma=fix_gamma, training=training, axis=axis,
                                            global_grad=bool(use_global_stats), **kwargs)
    if training:
        fn = update if update is not None else _rebind(moving_mean, moving_var)
        momentum = float(np.float32(momentum))      # MXNet's BatchNormParam holds it as a float (float64 steps)
        batch_mean, batch_var = mean._arr, var._arr     # the arrays, not the node's outputs: no cycle through it
        autograd.on_backward(out, lambda: fn(batch_mean, batch_var, momentum))
    return [out, mean, inv] if output_mean_var else out


def BatchNorm(data, gamma, beta, moving_mean, moving_var, eps=1e-3, momentum=0.9, fix_gamma=True,
              use_global_stats=False, output_mean_var=False, axis=1, cudnn_off=False, min_calib_range=None,
              max_calib_range=None, **kwargs):
    """MXNet's BatchNorm (see the module doc)."""
    return batch_norm(data, gamma, beta, moving_mean, moving_var, eps=eps, momentum=momentum, fix_gamma=fix_gamma,
                      use_global_stats=use_global_stats, output_mean_var=output_mean_var, axis=axis, **kwargs)


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
    per group.  The gradient is MXNet's formula (``_group_norm``)."""
    x = jnp.asarray(data)
    n, c = x.shape[:2]
    check(c % num_groups == 0, "GroupNorm", f"{c} channels do not split into num_groups={num_groups}")
    check(jnp.shape(gamma) == (num_groups,) and jnp.shape(beta) == (num_groups,), "GroupNorm",
          f"gamma and beta must have shape ({num_groups},), got {tuple(jnp.shape(gamma))}, {tuple(jnp.shape(beta))}")
    y, mean, std = _group_norm(x.reshape((n, num_groups, -1)), jnp.reshape(gamma, (1, -1, 1)),
                               jnp.reshape(beta, (1, -1, 1)), float(eps))
    out = y.reshape(x.shape)
    if output_mean_var:
        return [out, mean.reshape(n, num_groups), std.reshape(n, num_groups)]
    return out


def _group_mean(v):
    """The mean over axis 2 as MXNet takes it: the sum divided by the count.  XLA makes a division by a
    constant a multiplication by its reciprocal, which its CPU code then fuses with ``x - mean`` into one
    multiply-add: on a constant input ``x - mean`` was a rounding error, not MXNet's 0 (times 1/sqrt(eps):
    1.5e-5 on MXNet's own test_groupnorm).  A divisor XLA cannot see through (an optimization barrier on
    the count, one per mean) keeps the division."""
    s = jnp.sum(v, axis=2, keepdims=True)
    return s / lax.optimization_barrier(jnp.full(s.shape, v.shape[2], s.dtype))


def _group_moments(g, eps):
    mean = _group_mean(g)
    std = jnp.sqrt(_group_mean(jnp.square(g - mean)) + eps)
    return mean, std


@functools.partial(jax.custom_vjp, nondiff_argnums=(3,))
def _group_norm(g, gamma, beta, eps):
    """``(n, groups, m)`` normalised over ``m``: ``(y, mean, std)``."""
    mean, std = _group_moments(g, eps)
    return (g - mean) / std * gamma + beta, mean, std


def _group_norm_fwd(g, gamma, beta, eps):
    mean, std = _group_moments(g, eps)
    xhat = (g - mean) / std
    return (xhat * gamma + beta, mean, std), (xhat, std, gamma)


def _group_norm_bwd(eps, res, cts):
    """MXNet's ``GroupNormGradCompute``: with ``d = ograd * gamma / std``, ``dx = d - mean(d) - xhat *
    mean(d * xhat)`` (each mean a sum over the group divided by its size), here with the group's constant
    ``gamma / std`` taken out of the means: MXNet sums with Kahan's compensation, so a constant ``ograd``
    gives it exactly 0 where XLA's plain sum of ``d`` would leave rounding times ``1 / std``.  The
    gradients of the mean and std outputs are not propagated, as in MXNet."""
    xhat, std, gamma = res
    ct = cts[0]
    dx = gamma / std * (ct - _group_mean(ct) - xhat * _group_mean(ct * xhat))
    dgamma = jnp.sum(ct * xhat, axis=(0, 2), keepdims=True)
    dbeta = jnp.sum(ct, axis=(0, 2), keepdims=True)
    return dx, dgamma.astype(gamma.dtype), dbeta.astype(gamma.dtype)


_group_norm.defvjp(_group_norm_fwd, _group_norm_bwd)


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
