"""Random sampling: ``nd.random.uniform/normal/randn/randint/exponential/gamma/poisson/multinomial/shuffle``.

Each call draws a fresh key from ``ast_hybrid.ops.rng``: the eager stream, or
inside a hybridized program the program's own key, so every call of a
compiled program gives new samples.  ``seed(n)`` makes the eager stream
reproducible.  With scalar parameters the result has ``shape`` (``(1,)`` when
no shape is given); with NDArray parameters (one distribution per element),
``params.shape + shape``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ast_hybrid.ops import rng
from ast_hybrid.core.context import Context, current_context, place  # noqa: F401  (mx.nd.random has Context)
from ast_hybrid.core.ndarray import NDArray
from ast_hybrid.ops._core import as_tuple, check, op, raw

__all__ = ["seed", "uniform", "normal", "randn", "randint", "exponential", "gamma", "poisson", "negative_binomial",
           "generalized_negative_binomial", "multinomial", "shuffle", "uniform_like", "normal_like",
           "exponential_like", "gamma_like", "poisson_like", "negative_binomial_like",
           "generalized_negative_binomial_like"]


def seed(seed_state, ctx="all"):
    """Seed the eager random stream (``mx.random.seed``)."""
    rng.seed(seed_state, ctx)


def _out_shape(params, shape):
    shape = as_tuple(shape) if not isinstance(shape, int) else (shape,)
    pshape = jnp.shape(params[0]) if params and not isinstance(params[0], (int, float)) else ()
    if pshape:
        return tuple(pshape) + shape, len(pshape)
    return (shape or (1,)), 0


def _expand(p, extra):
    p = jnp.asarray(p)
    return p.reshape(p.shape + (1,) * extra) if p.ndim else p


def _dtype(dtype, default="float32"):
    return np.dtype(default if dtype is None else dtype)


@op(compile_arrays=("key", "params"))     # eagerly one program per distribution, shape and dtype, not ~8
def _sample(key, dist, params, shape, dtype):
    out_shape, nparam = _out_shape(params, shape)
    extra = len(out_shape) - nparam if nparam else 0
    p = [_expand(q, extra) for q in params]
    dt = _dtype(dtype)
    if dist == "uniform":
        return (p[0] + (p[1] - p[0]) * jax.random.uniform(key, out_shape, jnp.float32)).astype(dt)
    if dist == "normal":
        return (p[0] + p[1] * jax.random.normal(key, out_shape, jnp.float32)).astype(dt)
    if dist == "exponential":
        return (p[0] * jax.random.exponential(key, out_shape, jnp.float32)).astype(dt)
    if dist == "gamma":
        return (jax.random.gamma(key, jnp.broadcast_to(jnp.asarray(p[0], jnp.float32), out_shape)) * p[1]).astype(dt)
    if dist == "poisson":
        return jax.random.poisson(key, jnp.broadcast_to(jnp.asarray(p[0], jnp.float32), out_shape)).astype(dt)
    if dist == "negative_binomial":   # failures before k successes: Poisson(Gamma(k, (1 - p) / p))
        k1, k2 = jax.random.split(key)
        lam = jax.random.gamma(k1, jnp.broadcast_to(jnp.asarray(p[0], jnp.float32), out_shape)) * (1 - p[1]) / p[1]
        return jax.random.poisson(k2, lam).astype(dt)
    k1, k2 = jax.random.split(key)     # generalized: Poisson(Gamma(1 / alpha, alpha * mu))
    lam = jax.random.gamma(k1, jnp.broadcast_to(1.0 / jnp.asarray(p[1], jnp.float32), out_shape)) * p[1] * p[0]
    return jax.random.poisson(k2, lam).astype(dt)


_HOST_DRAWS = {
    "uniform": lambda g, p, shape: g.random(shape, dtype=np.float32) * np.float32(p[1] - p[0]) + np.float32(p[0]),
    "normal": lambda g, p, shape: g.standard_normal(shape, dtype=np.float32) * np.float32(p[1]) + np.float32(p[0]),
    "exponential": lambda g, p, shape: g.standard_exponential(shape, dtype=np.float32) * np.float32(p[0]),
    "gamma": lambda g, p, shape: g.standard_gamma(p[0], shape, dtype=np.float32) * np.float32(p[1]),
    "poisson": lambda g, p, shape: g.poisson(p[0], shape),
    "negative_binomial": lambda g, p, shape: g.negative_binomial(p[0], p[1], shape),
    "randint": lambda g, p, shape: g.integers(int(p[0]), int(p[1]), shape),
}


_HOST_MAX = 1 << 20     # elements: above, XLA's draw (1.2x faster per element) wins over its compile


def _host_sample(dist, params, shape, dtype, ctx):
    """An eager draw of up to ``_HOST_MAX`` values with number parameters on a machine of CPUs only: from the
    eager stream's NumPy generator (``rng.host_generator``, as the initializers draw), nothing compiled.
    Drawn in XLA, every new shape is a program of its own (0.1-0.7 s to compile: MXNet's test_zero_grad draws
    a thousand shapes).  None where it does not apply (in a program, array parameters, an accelerator)."""
    from ast_hybrid.core.context import accelerated

    draw = _HOST_DRAWS.get(dist)
    if draw is None or rng._scopes() or accelerated() or (ctx is not None and Context(ctx).device_type != "cpu") \
            or not all(isinstance(q, (int, float, np.integer, np.floating)) and not isinstance(q, bool)
                       for q in params):
        return None
    out_shape, _ = _out_shape((), shape)
    if int(np.prod(out_shape)) > _HOST_MAX:
        return None
    values = np.asarray(draw(rng.host_generator(), params, out_shape)).astype(_dtype(dtype), copy=False)
    # (jnp.asarray would compile a copy per new shape)
    return NDArray(place(jax.device_put(values), current_context() if ctx is None else ctx))


def _draw(dist, params, shape, dtype, ctx, out):
    res = _host_sample(dist, params, shape, dtype, ctx)       # (placed on its context already)
    if res is None:
        res = _sample(rng.next_key(), dist, list(params), shape, dtype)
        if ctx is not None or not any(hasattr(p, "_arr") for p in params):     # array parameters: their device
            res = NDArray(place(res._arr, current_context() if ctx is None else ctx))
    if out is not None:
        out._arr = res._arr.reshape(out.shape) if res.size == out.size else res._arr
        return out
    return res


def uniform(low=0, high=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    return _draw("uniform", (low, high), shape, dtype, ctx, out)


def normal(loc=0, scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    return _draw("normal", (loc, scale), shape, dtype, ctx, out)


def randn(*shape, loc=0, scale=1, dtype=None, ctx=None, out=None, **kwargs):
    return _draw("normal", (loc, scale), shape, dtype, ctx, out)


def exponential(scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    return _draw("exponential", (scale,), shape, dtype, ctx, out)


def gamma(alpha=1, beta=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    return _draw("gamma", (alpha, beta), shape, dtype, ctx, out)


def poisson(lam=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    return _draw("poisson", (lam,), shape, dtype, ctx, out)


def negative_binomial(k=1, p=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    return _draw("negative_binomial", (k, p), shape, dtype, ctx, out)


def generalized_negative_binomial(mu=1, alpha=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    return _draw("generalized_negative_binomial", (mu, alpha), shape, dtype, ctx, out)


@op
def _randint(key, low, high, shape, dtype):
    return jax.random.randint(key, shape, int(low), int(high), dtype=np.dtype(dtype))


def randint(low, high, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Integers in ``[low, high)``; int32 by default."""
    check(high > low, "random.randint", f"high ({high}) must be larger than low ({low})")
    res = _host_sample("randint", (low, high), shape, _dtype(dtype, "int32"), ctx)
    if res is None:
        res = _randint(rng.next_key(), low, high, _out_shape((), shape)[0], _dtype(dtype, "int32"))
    return _draw_out(res, out)


def _draw_out(res, out):
    if out is not None:
        out._arr = res._arr
        return out
    return res


def _like(dist, data, params):
    d = raw(data)
    if not isinstance(d, jax.core.Tracer):
        res = _host_sample(dist, params, tuple(d.shape), d.dtype, None)
        if res is not None:
            return res
    return _sample(rng.next_key(), dist, params, tuple(d.shape), d.dtype)


def uniform_like(data, low=0, high=1, **kwargs):
    """Uniform samples on [low, high) with the shape and dtype of ``data``."""
    return _like("uniform", data, [low, high])


def normal_like(data, loc=0, scale=1, **kwargs):
    """Normal samples with the shape and dtype of ``data``."""
    return _like("normal", data, [loc, scale])


def exponential_like(data, lam=1, **kwargs):
    """Exponential samples of rate ``lam`` with the shape and dtype of ``data``."""
    return _like("exponential", data, [1.0 / lam])


def gamma_like(data, alpha=1, beta=1, **kwargs):
    """Gamma samples with the shape and dtype of ``data``."""
    return _like("gamma", data, [alpha, beta])


def negative_binomial_like(data, k=1, p=1, **kwargs):
    """Negative binomial samples (failures before ``k`` successes) with the shape and dtype of ``data``."""
    return _like("negative_binomial", data, [k, p])


def generalized_negative_binomial_like(data, mu=1, alpha=1, **kwargs):
    """Generalized negative binomial samples with the shape and dtype of ``data``."""
    return _like("generalized_negative_binomial", data, [mu, alpha])


def poisson_like(data, lam=1, **kwargs):
    """Poisson samples with the shape and dtype of ``data``."""
    return _like("poisson", data, [lam])


@op
def _multinomial(key, data, shape, get_prob, dtype):
    probs = jnp.asarray(data)
    extra = as_tuple(shape) if not isinstance(shape, int) else (shape,)
    n = int(np.prod(extra)) if extra else 1
    logits = jnp.log(jnp.maximum(probs, 1e-38))
    batch = probs.shape[:-1]
    draws = jax.random.categorical(key, logits[..., None, :], axis=-1, shape=batch + (n,))
    draws = draws.reshape(batch + extra)
    out = draws.astype(np.dtype(dtype))
    if get_prob:
        flat = jnp.take_along_axis(jnp.log(probs).reshape(batch + (1,) * len(extra) + probs.shape[-1:])
                                   if extra else jnp.log(probs), draws[..., None].astype(jnp.int32), axis=-1)[..., 0]
        return [out, flat]
    return out


def multinomial(data, shape=None, get_prob=False, out=None, dtype="int32", **kwargs):
    """Draw indices from the categorical distributions in the last axis of ``data`` (probabilities)."""
    return _draw_out(_multinomial(rng.next_key(), data, shape or (), get_prob, dtype), out)


@op
def _shuffle(key, data):
    data = jnp.asarray(data)
    return jax.random.permutation(key, data, axis=0) if data.ndim else data


def shuffle(data, **kwargs):
    """``data`` with its first axis randomly permuted."""
    return _shuffle(rng.next_key(), data, **kwargs)
