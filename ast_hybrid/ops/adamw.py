"""MXNet 1.9.1's AdamW update ops (``nd.contrib.adamw_update`` and its mixed-precision and multi-tensor forms),
which GluonNLP's ``BERTAdam`` calls.  Each updates its state arrays in place, as MXNet's kernels do:

- ``adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0,
  clip_gradient=-1, out=None)``, in the weight's dtype: ``grad`` becomes ``rescale_grad * grad`` (clipped to
  ``[-clip_gradient, clip_gradient]`` when ``clip_gradient >= 0``) -- MXNet overwrites the gradient too --,
  ``mean = beta1 * mean + (1 - beta1) * grad``, ``var = beta2 * var + (1 - beta2) * grad**2``, and the result
  ``weight - eta * (lr * mean / (sqrt(var) + epsilon) + wd * weight)``;
- ``mp_adamw_update(weight, grad, mean, var, weight32, ...)``: the same in float32 from ``weight32`` (updated),
  the result in the weight's dtype; the gradient is left alone;
- ``multi_adamw_update(weights, grads, mean, var, rescale_grad, lrs, wds, etas, ...)`` and
  ``multi_mp_adamw_update(weights, grads, mean, var, weights32, ...)``: per tensor, in float32, with MXNet's
  multi-tensor kernel's arithmetic ``mean = beta1 * (mean - g) + g`` (its rounding differs from the single op's).

``rescale_grad`` is a number or a one-element NDArray; when it is 0, NaN or infinite MXNet skips the update:
nothing changes, ``out`` (if given) keeps its values, and without ``out`` the result is a copy of the weight
(MXNet's would be an uninitialised array).  The scalars are float32, as MXNet's parameters.
"""

from __future__ import annotations

import numpy as np

from ast_hybrid.core.ndarray import NDArray
from ast_hybrid.ops._core import raw

__all__ = ["adamw_update", "mp_adamw_update", "multi_adamw_update", "multi_mp_adamw_update"]


def _scale(rescale_grad):
    value = rescale_grad.asnumpy().reshape(-1)[0] if isinstance(rescale_grad, NDArray) else rescale_grad
    value = np.float32(value)
    return value if np.isfinite(value) and value != 0 else None


def _set(array, value):
    array._arr = value.astype(array._arr.dtype)


def _result(value, out):
    if out is None:
        return NDArray(value)
    if out.shape != value.shape:
        raise ValueError(f"adamw_update: out= has shape {out.shape}, the result has shape {value.shape}")
    _set(out, value)
    return out


def _clipped(g, scale, clip_gradient, dtype):
    import jax.numpy as jnp

    g = dtype.type(scale) * g
    if clip_gradient >= 0:
        bound = dtype.type(np.float32(clip_gradient))
        g = jnp.clip(g, -bound, bound)
    return g


def _step(w, g, mean, var, dtype, lr, eta, beta1, beta2, epsilon, wd, multi):
    """One AdamW step on raw arrays of ``dtype``: the new (weight, mean, var)."""
    import jax.numpy as jnp

    one_minus = [dtype.type(np.float32(1) - np.float32(b)) for b in (beta1, beta2)]
    lr, eta, beta1, beta2, epsilon, wd = (dtype.type(np.float32(v)) for v in (lr, eta, beta1, beta2, epsilon, wd))
    if multi:
        mean = beta1 * (mean - g) + g
        square = g * g
        var = beta2 * (var - square) + square
    else:
        mean = beta1 * mean + one_minus[0] * g
        var = beta2 * var + one_minus[1] * (g * g)
    return w - eta * (lr * mean / (jnp.sqrt(var) + epsilon) + wd * w), mean, var


def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0,
                 clip_gradient=-1, out=None, name=None, **kwargs):
    """MXNet's ``contrib.adamw_update`` (see the module doc)."""
    scale = _scale(rescale_grad)
    if scale is None:
        return out if out is not None else NDArray(raw(weight))
    dtype = np.dtype(raw(weight).dtype)
    g = _clipped(raw(grad), scale, clip_gradient, dtype)
    _set(grad, g)
    w, m, v = _step(raw(weight), g, raw(mean), raw(var), dtype, lr, eta, beta1, beta2, epsilon, wd, multi=False)
    _set(mean, m)
    _set(var, v)
    return _result(w, out)


def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, beta1=0.9, beta2=0.999, epsilon=1e-8,
                    wd=0, clip_gradient=-1, out=None, name=None, **kwargs):
    """MXNet's ``contrib.mp_adamw_update``: in float32 from ``weight32`` (see the module doc)."""
    scale = _scale(rescale_grad)
    if scale is None:
        return out if out is not None else NDArray(raw(weight))
    f32 = np.dtype(np.float32)
    g = _clipped(raw(grad).astype(f32), scale, clip_gradient, f32)
    w, m, v = _step(raw(weight32), g, raw(mean), raw(var), f32, lr, eta, beta1, beta2, epsilon, wd, multi=False)
    for array, value in ((mean, m), (var, v), (weight32, w)):
        _set(array, value)
    return _result(w.astype(raw(weight).dtype), out)


def _multi(weights, grads, mean, var, weights32, rescale_grad, lrs, wds, etas, out, size, beta1, beta2, epsilon,
           clip_gradient):
    size = size or len(weights)
    scale = _scale(rescale_grad)
    if scale is None:
        return out if out is not None else [NDArray(raw(w)) for w in weights[:size]]
    f32 = np.dtype(np.float32)
    results = []
    for i in range(size):
        w0 = raw(weights32[i]) if weights32 is not None else raw(weights[i]).astype(f32)
        g = _clipped(raw(grads[i]).astype(f32), scale, clip_gradient, f32)
        w, m, v = _step(w0, g, raw(mean[i]).astype(f32), raw(var[i]).astype(f32), f32, lrs[i], etas[i], beta1, beta2,
                        epsilon, wds[i], multi=True)
        _set(mean[i], m)
        _set(var[i], v)
        if weights32 is not None:
            _set(weights32[i], w)
        results.append(_result(w.astype(raw(weights[i]).dtype), None if out is None else out[i]))
    return results


def multi_adamw_update(weights, grads, mean, var, rescale_grad, lrs, wds, etas, out=None, name=None, size=0,
                       beta1=0.9, beta2=0.999, epsilon=1e-8, clip_gradient=-1, **kwargs):
    """MXNet's ``contrib.multi_adamw_update``: ``size`` tensors (default all) in one call (see the module doc)."""
    return _multi(weights, grads, mean, var, None, rescale_grad, lrs, wds, etas, out, size, beta1, beta2, epsilon,
                  clip_gradient)


def multi_mp_adamw_update(weights, grads, mean, var, weights32, rescale_grad, lrs, wds, etas, out=None, name=None,
                          size=0, beta1=0.9, beta2=0.999, epsilon=1e-8, clip_gradient=-1, **kwargs):
    """MXNet's ``contrib.multi_mp_adamw_update``: as ``multi_adamw_update`` from float32 master weights."""
    return _multi(weights, grads, mean, var, weights32, rescale_grad, lrs, wds, etas, out, size, beta1, beta2,
                  epsilon, clip_gradient)
