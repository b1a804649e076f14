"""The rest of MXNet's top-level ``nd`` names that real code still calls: ``crop`` (the old name of
``slice``), ``onehot_encode``, ``khatri_rao``, ``histogram``, ``cast_storage`` (dense only),
``reset_arrays`` and the ``random_*`` aliases."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ast_hybrid.ndarray import NDArray
from ast_hybrid.ops._core import check, op, raw
from ast_hybrid.ops.random import generalized_negative_binomial, negative_binomial
from ast_hybrid.ops.shape import slice as crop

__all__ = ["crop", "Crop", "onehot_encode", "khatri_rao", "histogram", "cast_storage", "reset_arrays",
           "random_negative_binomial", "random_generalized_negative_binomial"]

random_negative_binomial = negative_binomial
random_generalized_negative_binomial = generalized_negative_binomial


def Crop(*args, **kwargs):
    raise NotImplementedError("Crop (the deprecated 2-D crop layer with offset/h_w/center_crop) is not supported; "
                              "use slice or slice_like")


def onehot_encode(indices, out):
    """Write the one-hot rows of ``indices`` into ``out`` (deprecated in MXNet: use ``one_hot``)."""
    idx = jnp.asarray(raw(indices)).astype(jnp.int32)
    out._arr = (idx[:, None] == jnp.arange(out.shape[1])).astype(out._arr.dtype)
    return out


@op
def khatri_rao(*args):
    """The column-wise Khatri-Rao product of matrices with the same number of columns."""
    mats = [jnp.asarray(a) for a in args]
    check(all(jnp.issubdtype(m.dtype, jnp.floating) for m in mats), "khatri_rao",
          f"inputs must be floating point, got {[np.dtype(m.dtype).name for m in mats]}")
    check(all(m.ndim == 2 and m.shape[1] == mats[0].shape[1] for m in mats), "khatri_rao",
          f"inputs must be matrices with the same number of columns, got {[tuple(m.shape) for m in mats]}")
    out = mats[0]
    for m in mats[1:]:
        out = (out[:, None, :] * m[None, :, :]).reshape(-1, out.shape[1])
    return out


@op
def _histogram(a, edges):
    x = jnp.asarray(a).reshape(-1)
    edges = jnp.asarray(edges, x.dtype)
    n = edges.shape[0] - 1
    idx = jnp.searchsorted(edges, x, side="right") - 1
    idx = jnp.where(x == edges[-1], n - 1, idx)      # the last bin is closed on the right
    inside = (idx >= 0) & (idx < n)
    count_dtype = jax.dtypes.canonicalize_dtype(np.int64)    # MXNet: int64 (int32 unless jax_enable_x64)
    counts = jnp.zeros((n,), count_dtype).at[jnp.where(inside, idx, 0)].add(inside.astype(count_dtype))
    return [counts, edges]


def histogram(a, bins=10, range=None, **kwargs):
    """``[counts, bin edges]`` of the flattened ``a``; values outside ``range`` are not counted.  Without
    ``range`` MXNet takes numpy's histogram (float32 counts), so does this (eagerly)."""
    if isinstance(bins, int):
        if range is None:
            counts, edges = np.histogram(np.asarray(raw(a)), bins=bins)
            return [NDArray(jnp.asarray(counts.astype(np.float32))), NDArray(jnp.asarray(edges.astype(np.float32)))]
        bins = np.linspace(range[0], range[1], bins + 1, dtype=np.float32)
    return _histogram(a, bins, **kwargs)


def cast_storage(data, stype="default"):
    check(stype == "default", "cast_storage", f"only dense storage ('default') is supported, got {stype!r}")
    return data if isinstance(data, NDArray) else NDArray(jnp.asarray(data))


def reset_arrays(*data, num_arrays=None):
    """Set every given NDArray to zero, in place."""
    for d in data:
        d._arr = jnp.zeros_like(d._arr)
