"""``mx.np.random``: numpy's signatures (``size=``, a scalar's shape ``()`` when no size is given) on the
eager/program random stream of ``nd.random`` (``ast_hybrid.ops.random``); float32 unless told."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp

from ast_hybrid.core.context import current_context, place
from ast_hybrid.core.ndarray import as_np, ndarray
from ast_hybrid.mxnp._base import missing_getattr, raw_of
from ast_hybrid.ops import random as _r
from ast_hybrid.ops import rng
from ast_hybrid.ops._core import op

__all__ = ["seed", "uniform", "normal", "randn", "rand", "randint", "exponential", "gamma", "choice", "shuffle",
           "multinomial", "lognormal", "logistic", "gumbel", "laplace", "rayleigh", "weibull", "pareto", "power",
           "beta", "chisquare", "multivariate_normal"]


def seed(seed, ctx="all"):  # noqa: F811  (MXNet's parameter name)
    _r.seed(seed, ctx)


def _size(size, *params):
    if size is not None:
        return (size,) if isinstance(size, int) else tuple(size)
    shapes = [jnp.shape(raw_of(p)) for p in params]
    return tuple(jnp.broadcast_shapes(*shapes)) if shapes else ()


@op
def _sample(key, dist, a, b, shape, dtype):
    if dist == "uniform":
        u = jax.random.uniform(key, shape, jnp.float32)
        return (a + (b - a) * u).astype(dtype)
    if dist == "normal":
        return (a + b * jax.random.normal(key, shape, jnp.float32)).astype(dtype)
    if dist == "exponential":
        return (a * jax.random.exponential(key, shape, jnp.float32)).astype(dtype)
    if dist == "gamma":
        return (jax.random.gamma(key, jnp.broadcast_to(jnp.asarray(a, jnp.float32), shape)) * b).astype(dtype)
    u = jax.random.uniform(key, shape, jnp.float32, minval=jnp.finfo(jnp.float32).tiny)     # in (0, 1)
    e = -jnp.log(u)                                             # a standard exponential
    if dist == "logistic":
        return (a + b * (jnp.log(u) - jnp.log1p(-u))).astype(dtype)
    if dist == "gumbel":
        return (a - b * jnp.log(e)).astype(dtype)
    if dist == "lognormal":
        return jnp.exp(a + b * jax.random.normal(key, shape, jnp.float32)).astype(dtype)
    if dist == "laplace":
        return (a - b * jnp.sign(u - 0.5) * jnp.log1p(-2 * jnp.abs(u - 0.5))).astype(dtype)
    if dist == "rayleigh":
        return (a * jnp.sqrt(2 * e)).astype(dtype)
    if dist == "weibull":
        return (e ** (1 / a)).astype(dtype)
    if dist == "pareto":
        return (jnp.exp(e / a) - 1).astype(dtype)
    if dist == "power":
        return ((1 - jnp.exp(-e)) ** (1 / a)).astype(dtype)
    if dist == "beta":
        a, b = (jnp.broadcast_to(jnp.asarray(v, jnp.float32), shape) for v in (a, b))
        return jax.random.beta(key, a, b, shape).astype(dtype)
    if dist == "chisquare":
        return (2 * jax.random.gamma(key, jnp.broadcast_to(jnp.asarray(a, jnp.float32) / 2, shape))).astype(dtype)
    raise ValueError(f"unknown distribution {dist!r}")


# MXNet's checks of a distribution's parameters (src/operator/numpy/random/*.h: "ValueError: ..."), made on
# the values where they are known (not inside a compiled program, where MXNet checks at run time)
_CHECKS = {
    "normal": ("b", "ge", "scale < 0"), "logistic": ("b", "ge", "scale < 0"), "gumbel": ("b", "ge", "scale < 0"),
    "laplace": ("b", "ge", "scale < 0"), "lognormal": ("b", "ge", "scale < 0"),
    "exponential": ("a", "ge", "expect scale >= 0"), "rayleigh": ("a", "ge", "expect scale >= 0"),
    "weibull": ("a", "gt", "expect a > 0"), "pareto": ("a", "gt", "expect a > 0"), "power": ("a", "gt", "expect a > 0"),
}


def _known(v):
    v = raw_of(v)
    return None if isinstance(v, jax.core.Tracer) else onp.asarray(v)


def _check(dist, a, b):
    checks = [_CHECKS[dist]] if dist in _CHECKS else []
    if dist == "gamma":
        checks = [("a", "gt", "expect shape > 0"), ("b", "gt", "expect scale > 0")]
    for which, how, why in checks:
        v = _known(a if which == "a" else b)
        if v is not None and v.size and not (v > 0 if how == "gt" else v >= 0).all():
            raise ValueError(why)


def _draw(dist, a, b, size, dtype, out, ctx=None):
    _check(dist, a, b)
    dtype = onp.dtype(onp.float32 if dtype is None else dtype).name
    res = as_np(_sample(rng.next_key(), dist, a, b, _size(size, a, b), dtype))
    if ctx is not None or not (hasattr(a, "_arr") or hasattr(b, "_arr")):      # array parameters: their device
        res._arr = place(res._arr, current_context() if ctx is None else ctx)
    if out is not None:
        out._arr, out._ag = res._arr, None
        return out
    return res


def uniform(low=0.0, high=1.0, size=None, dtype=None, ctx=None, out=None):
    return _draw("uniform", low, high, size, dtype, out, ctx)


def normal(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None, out=None):
    return _draw("normal", loc, scale, size, dtype, out, ctx)


def exponential(scale=1.0, size=None, ctx=None, out=None):
    return _draw("exponential", scale, 0.0, size, None, out, ctx)


def gamma(shape=1.0, scale=1.0, size=None, dtype=None, ctx=None, out=None):
    return _draw("gamma", shape, scale, size, dtype, out, ctx)


def lognormal(mean=0.0, sigma=1.0, size=None, dtype=None, ctx=None, out=None):
    return _draw("lognormal", mean, sigma, size, dtype, out, ctx)


def logistic(loc=0.0, scale=1.0, size=None, ctx=None, out=None):
    return _draw("logistic", loc, scale, size, None, out, ctx)


def gumbel(loc=0.0, scale=1.0, size=None, ctx=None, out=None):
    return _draw("gumbel", loc, scale, size, None, out, ctx)


def laplace(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None, out=None):
    return _draw("laplace", loc, scale, size, dtype, out, ctx)


def rayleigh(scale=1.0, size=None, ctx=None, out=None):
    return _draw("rayleigh", scale, 0.0, size, None, out, ctx)


def weibull(a, size=None, ctx=None, out=None):
    return _draw("weibull", a, 0.0, size, None, out, ctx)


def pareto(a, size=None, ctx=None, out=None):
    return _draw("pareto", a, 0.0, size, None, out, ctx)


def power(a, size=None, ctx=None, out=None):
    return _draw("power", a, 0.0, size, None, out, ctx)


def beta(a, b, size=None, dtype=None, ctx=None):
    return _draw("beta", a, b, size, dtype, None, ctx)


def chisquare(df, size=None, dtype=None, ctx=None):
    return _draw("chisquare", df, 0.0, size, dtype, None, ctx)


def multivariate_normal(mean, cov, size=None, check_valid=None, tol=None):
    """Samples of the ``N``-dimensional normal ``(mean, cov)``, batched and broadcast as MXNet's: shape ``size +
    broadcast(mean.shape, cov.shape[:-1])``."""
    return as_np(_mvn(rng.next_key(), mean, cov, () if size is None else _size(size)))


@op
def _mvn(key, mean, cov, size):
    mean, cov = jnp.asarray(mean, jnp.float32), jnp.asarray(cov, jnp.float32)
    batch = jnp.broadcast_shapes(mean.shape, cov.shape[:-1])
    chol = jnp.linalg.cholesky(cov)
    z = jax.random.normal(key, tuple(size) + batch, jnp.float32)
    return jnp.broadcast_to(mean, tuple(size) + batch) + jnp.einsum("...ij,...j->...i", chol, z)


def rand(*size, **kwargs):
    return uniform(size=size, **kwargs)


def randn(*size, **kwargs):
    return normal(size=size, **kwargs)


def randint(low, high=None, size=None, dtype=None, ctx=None, out=None):
    """Integers in ``[low, high)`` (``[0, low)`` without ``high``); int32 by default, as MXNet."""
    if high is None:
        low, high = 0, low
    res = as_np(_r._randint(rng.next_key(), low, high, _size(size), onp.dtype(dtype or "int32")))
    if out is not None:
        out._arr = res._arr
        return out
    return res


def choice(a, size=None, replace=True, p=None, ctx=None, out=None):
    key = rng.next_key()
    pool = raw_of(a) if not isinstance(a, int) else a
    res = jax.random.choice(key, pool, _size(size), replace=replace, p=None if p is None else raw_of(p))
    return ndarray(res if not isinstance(a, int) else res.astype(jnp.int32))


def shuffle(x):
    """Shuffle ``x`` in place along its first axis (numpy's: returns None)."""
    out = _r.shuffle(x)
    x._arr, x._ag = out._arr, out._ag


def multinomial(n, pvals, size=None):
    key = rng.next_key()
    shape = _size(size)
    k = len(raw_of(pvals))
    int64 = jax.dtypes.canonicalize_dtype(onp.int64)      # MXNet's counts (int32 unless jax's x64 is on)
    if k == 0 or 0 in shape:        # no category, or no experiment: an empty result, as MXNet's
        return ndarray(jnp.zeros(shape + (k,), int64))
    draws = jax.random.categorical(key, jnp.log(jnp.asarray(raw_of(pvals), jnp.float32)), shape=shape + (n,))
    counts = jax.nn.one_hot(draws, k, dtype=int64).sum(axis=-2)
    return ndarray(counts)


__getattr__ = missing_getattr("mxnet.numpy.random", __name__)
