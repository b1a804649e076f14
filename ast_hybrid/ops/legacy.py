"""The rest of MXNet's top-level ``nd`` names that real code still calls: ``crop`` (the old name of
``slice``), ``onehot_encode``, ``khatri_rao``, ``histogram``, ``cast_storage`` (dense only),
``reset_arrays`` and the raw ``random_*`` samplers (and ``nd.normal``/``nd.uniform``) with the operators'
positional order ``(params..., shape, ctx, dtype)``; ``random_exponential`` takes the rate ``lam`` (the
``nd.random.exponential`` wrapper takes ``scale``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ast_hybrid.core.ndarray import NDArray
from ast_hybrid.ops._core import check, op, raw
from ast_hybrid.ops import random as _random
from ast_hybrid.ops.shape import slice as crop

__all__ = ["crop", "Crop", "onehot_encode", "khatri_rao", "histogram", "cast_storage", "reset_arrays",
           "random_uniform", "random_normal", "random_exponential", "random_gamma", "random_poisson",
           "random_negative_binomial", "random_generalized_negative_binomial", "random_randint",
           "sample_multinomial", "normal", "uniform", "sample_uniform", "sample_normal", "sample_gamma",
           "sample_exponential", "sample_poisson", "sample_negative_binomial", "sample_generalized_negative_binomial"]


def random_uniform(low=0, high=1, shape=None, ctx=None, dtype=None, out=None, name=None, **kwargs):
    return _random.uniform(low, high, shape, dtype, ctx, out)


def random_normal(loc=0, scale=1, shape=None, ctx=None, dtype=None, out=None, name=None, **kwargs):
    return _random.normal(loc, scale, shape, dtype, ctx, out)


def random_exponential(lam=1, shape=None, ctx=None, dtype=None, out=None, name=None, **kwargs):
    return _random.exponential(1.0 / lam, shape, dtype, ctx, out)


def random_gamma(alpha=1, beta=1, shape=None, ctx=None, dtype=None, out=None, name=None, **kwargs):
    return _random.gamma(alpha, beta, shape, dtype, ctx, out)


def random_poisson(lam=1, shape=None, ctx=None, dtype=None, out=None, name=None, **kwargs):
    return _random.poisson(lam, shape, dtype, ctx, out)


def random_negative_binomial(k=1, p=1, shape=None, ctx=None, dtype=None, out=None, name=None, **kwargs):
    return _random.negative_binomial(k, p, shape, dtype, ctx, out)


def random_generalized_negative_binomial(mu=1, alpha=1, shape=None, ctx=None, dtype=None, out=None, name=None,
                                         **kwargs):
    return _random.generalized_negative_binomial(mu, alpha, shape, dtype, ctx, out)


def random_randint(low, high, shape=None, ctx=None, dtype=None, out=None, name=None, **kwargs):
    return _random.randint(low, high, shape, dtype, ctx, out)


def sample_multinomial(data, shape=None, get_prob=False, dtype="int32", out=None, name=None, **kwargs):
    return _random.multinomial(data, shape, get_prob, out, dtype)


normal, uniform = random_normal, random_uniform     # MXNet's legacy nd.normal / nd.uniform are the raw ops


# MXNet's sample_* operators: one draw (or a ``shape`` of them) per element of the parameter arrays


def sample_uniform(low, high, shape=(), dtype=None, out=None, name=None, **kwargs):
    return _random.uniform(low, high, shape, dtype, None, out)


def sample_normal(mu, sigma, shape=(), dtype=None, out=None, name=None, **kwargs):
    return _random.normal(mu, sigma, shape, dtype, None, out)


def sample_gamma(alpha, beta, shape=(), dtype=None, out=None, name=None, **kwargs):
    return _random.gamma(alpha, beta, shape, dtype, None, out)


def sample_exponential(lam, shape=(), dtype=None, out=None, name=None, **kwargs):
    return _random.exponential(1.0 / lam, shape, dtype, None, out)


def sample_poisson(lam, shape=(), dtype=None, out=None, name=None, **kwargs):
    return _random.poisson(lam, shape, dtype, None, out)


def sample_negative_binomial(k, p, shape=(), dtype=None, out=None, name=None, **kwargs):
    return _random.negative_binomial(k, p, shape, dtype, None, out)


def sample_generalized_negative_binomial(mu, alpha, shape=(), dtype=None, out=None, name=None, **kwargs):
    return _random.generalized_negative_binomial(mu, alpha, shape, dtype, None, out)


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


histogram.mx_outputs = 2       # in a graph: counts and edges (MXNet's _histogram)


def cast_storage(data, stype="default"):
    from ast_hybrid.ops.sparse import cast_storage as cast

    return cast(data, stype)


def reset_arrays(*data, num_arrays=None):
    """Set every given NDArray to zero, in place (zeros made on the host and placed as the array was: a
    ``jnp.zeros_like`` compiled a program per shape, 80-120 s for MXNet's test_zero_grad)."""
    for d in data:
        a = d._arr
        zeros = np.zeros(a.shape, a.dtype)
        d._arr = jax.device_put(zeros, a.sharding) if getattr(a, "committed", False) else jax.device_put(zeros)
