"""Reductions, norms, arg-reductions, sorting and top-k, with MXNet 1.9.1's arguments.

``sum/mean/max/min/prod/nansum/nanprod(data, axis=None, keepdims=False,
exclude=False)``: ``axis`` is an int, a tuple, or None / ``()`` for every axis;
``exclude=True`` reduces over the axes NOT listed.  A reduction to no
dimensions gives shape ``(1,)``, as MXNet has no 0-d arrays.  ``argmax`` and
``argmin`` return indices in the input's dtype; ``argsort``/``topk`` in
``dtype`` (float32 by default).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from ast_hybrid.ops._core import check, choice, is_int, norm_axes, norm_axis, op

__all__ = ["sum", "mean", "max", "min", "prod", "nansum", "nanprod", "sum_axis", "max_axis", "min_axis",
           "norm", "argmax", "argmin", "argmax_channel", "topk", "sort", "argsort", "moments", "cumsum"]


def _finish(out):
    return out.reshape((1,)) if out.ndim == 0 else out


def _reducer(name, fn, int_mean=False):
    def impl(data, axis=None, keepdims=False, exclude=False):
        data = jnp.asarray(data)
        axes = norm_axes(axis, data.ndim, name, exclude)
        if name in ("max", "min"):     # no identity: MXNet refuses a reduction over no elements
            check(all(data.shape[a] > 0 for a in axes), name, f"cannot reduce an empty axis of shape {data.shape}")
        if int_mean and is_int(data.dtype):
            n = int(np.prod([data.shape[a] for a in axes]))
            out = (jnp.sum(data, axis=axes, keepdims=keepdims) / (n or 1)).astype(data.dtype)
        else:
            out = fn(data, axis=axes, keepdims=keepdims)
        return _finish(out.astype(data.dtype))

    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = f"MXNet's ``{name}(data, axis=None, keepdims=False, exclude=False)``."
    return op(impl)


def nan_kept(fn):
    """``fn`` (jnp.max/min) with a NaN anywhere in the reduced cells giving NaN, as MXNet's and numpy's: XLA:CPU's
    vectorised reduction drops it for some shapes (an (8, 10, 5, 3, 4) array over axis 2: 271 of 960 cells).
    ``mx.np``'s max/min use it too."""
    def reduce(data, axis=None, *args, keepdims=False, **kwargs):
        data = jnp.asarray(data)
        out = fn(data, axis, *args, keepdims=keepdims, **kwargs)
        if not jnp.issubdtype(data.dtype, jnp.inexact):
            return out
        return jnp.where(jnp.isnan(data).any(axis=axis, keepdims=keepdims), jnp.nan, out).astype(out.dtype)
    return reduce


sum = _reducer("sum", jnp.sum)
mean = _reducer("mean", jnp.mean, int_mean=True)
max = _reducer("max", nan_kept(jnp.max))
min = _reducer("min", nan_kept(jnp.min))
prod = _reducer("prod", jnp.prod)
nansum = _reducer("nansum", jnp.nansum)
nanprod = _reducer("nanprod", jnp.nanprod)
sum_axis, max_axis, min_axis = sum, max, min


@op
def norm(data, ord=2, axis=None, out_dtype=None, keepdims=False):
    """The L1 or L2 norm over ``axis`` (all axes by default; two axes: the Frobenius norm)."""
    choice("norm", "ord", ord, (1, 2))
    data = jnp.asarray(data)
    axes = norm_axes(axis, data.ndim, "norm")
    if out_dtype is not None and np.dtype(out_dtype).itemsize < np.dtype(data.dtype).itemsize:
        # MXNet's kernel takes a narrower output only with MXNET_SAFE_ACCUMULATION=1 (otherwise its TBlob
        # type check fails); the norm is then computed in the input's type and cast
        from ast_hybrid.core.settings import environ

        check(environ("MXNET_SAFE_ACCUMULATION", "0") == "1", "norm",
              f"out_dtype={np.dtype(out_dtype).name} is narrower than the input's {np.dtype(data.dtype).name} "
              "(MXNet takes it with MXNET_SAFE_ACCUMULATION=1 only)")
    x = data.astype(jnp.float32) if data.dtype == jnp.float16 else data
    if ord == 1:
        out = jnp.sum(jnp.abs(x), axis=axes, keepdims=keepdims)
    else:
        out = _nrm2(x, axes, keepdims)
    return _finish(out.astype(np.dtype(out_dtype) if out_dtype is not None else data.dtype))


def _nrm2(x, axes, keepdims):
    """MXNet's L2 reducer (``mshadow_op::nrm2``): ``scale * sqrt(sum((x / scale)^2))`` with ``scale`` the
    largest magnitude, so that squares do not overflow (float32 values past 1e19 keep a finite norm); an
    infinity gives inf, two of them NaN (its running form meets inf / inf), a NaN NaN, zeros 0."""
    a = jnp.abs(x)
    scale = jnp.max(a, axis=axes, keepdims=True)
    safe = jnp.where(jnp.isfinite(scale) & (scale > 0), scale, jnp.ones_like(scale))
    out = safe * jnp.sqrt(jnp.sum((a / safe) ** 2, axis=axes, keepdims=True))
    infs = jnp.sum(jnp.isinf(a), axis=axes, keepdims=True)
    out = jnp.where(scale == 0, jnp.zeros_like(out), out)
    out = jnp.where(jnp.isinf(scale), jnp.where(infs > 1, jnp.nan, jnp.inf).astype(out.dtype), out)
    out = jnp.where(jnp.isnan(scale), jnp.full_like(out, jnp.nan), out)
    return out if keepdims else jnp.squeeze(out, axis=axes)


def _arg(name, fn):
    def impl(data, axis=None, keepdims=False):
        data = jnp.asarray(data)
        if axis is None:
            out = fn(data.reshape(-1), axis=0)
            out = out.reshape((1,) * data.ndim) if keepdims else out.reshape((1,))
        else:
            ax = norm_axis(axis, data.ndim, name)
            out = fn(data, axis=ax, keepdims=keepdims)
        return _finish(out.astype(data.dtype))

    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = f"MXNet's ``{name}(data, axis=None, keepdims=False)``: indices in the input's dtype."
    return op(impl)


argmax = _arg("argmax", jnp.argmax)
argmin = _arg("argmin", jnp.argmin)


@op
def argmax_channel(data):
    """``argmax`` over axis 1 (the channels)."""
    data = jnp.asarray(data)
    return _finish(jnp.argmax(data, axis=1 if data.ndim > 1 else 0).astype(data.dtype))


def _sorted_indices(data, axis, is_ascend):
    """Indices that sort ``data`` along ``axis`` (stable; descending keeps the first of equal values first)."""
    if is_ascend:
        return jnp.argsort(data, axis=axis, stable=True)
    return jnp.argsort(data, axis=axis, stable=True, descending=True)


@op(compile_arrays=("data",))
def sort(data, axis=-1, is_ascend=True):
    data = jnp.asarray(data)
    if axis is None:
        data, axis = data.reshape(-1), 0
    idx = _sorted_indices(data, axis, is_ascend)
    return jnp.take_along_axis(data, idx, axis=axis)


@op(compile_arrays=("data",))
def argsort(data, axis=-1, is_ascend=True, dtype="float32"):
    data = jnp.asarray(data)
    if axis is None:
        data, axis = data.reshape(-1), 0
    return _sorted_indices(data, axis, is_ascend).astype(np.dtype(dtype))


@op(compile_arrays=("data",))
def topk(data, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype="float32"):
    """The ``k`` largest (or smallest) entries along ``axis``: their values, indices, a 0/1 mask, or both."""
    choice("topk", "ret_typ", ret_typ, ("value", "indices", "mask", "both"))
    data = jnp.asarray(data)
    shape = data.shape
    if axis is None:
        data, axis = data.reshape(-1), 0
    axis = norm_axis(axis, data.ndim, "topk")
    n = data.shape[axis]
    k = n if k <= 0 else k
    check(k <= n, "topk", f"k={k} is larger than the size {n} of axis {axis}")
    idx = lax.slice_in_dim(_sorted_indices(data, axis, is_ascend), 0, k, axis=axis)
    if ret_typ == "mask":
        moved = jnp.moveaxis(idx, axis, -1)
        onehot = (moved[..., :, None] == jnp.arange(n)).any(axis=-2)
        hits = jnp.moveaxis(onehot, -1, axis)
        return hits.astype(data.dtype).reshape(shape)        # the input's shape, over all axes too (MXNet's)
    values = jnp.take_along_axis(data, idx, axis=axis)
    indices = idx.astype(np.dtype(dtype))
    if ret_typ == "value":
        return values
    if ret_typ == "indices":
        return indices
    return [values, indices]


@op
def moments(data, axes=None, keepdims=False):
    """``[mean, variance]`` over ``axes``."""
    data = jnp.asarray(data)
    ax = norm_axes(axes, data.ndim, "moments")
    mean_ = jnp.mean(data, axis=ax, keepdims=True)
    var = jnp.mean(jnp.square(data - mean_), axis=ax, keepdims=keepdims)
    if not keepdims:
        mean_ = jnp.squeeze(mean_, axis=ax)
    return [_finish(mean_), _finish(var)]


@op
def cumsum(a, axis=None, dtype=None):
    a = jnp.asarray(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    out = jnp.cumsum(a, axis=axis)
    return out.astype(np.dtype(dtype)) if dtype is not None else out.astype(a.dtype)
