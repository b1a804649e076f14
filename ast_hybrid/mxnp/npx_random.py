"""``mx.npx.random``: MXNet 1.9.1's numpy-extension draws (``python/mxnet/numpy_extension/random.py``):
``bernoulli`` by ``prob`` or ``logit``, and ``uniform_n``/``normal_n``, whose shape is ``batch_shape`` followed
by the parameters' broadcast shape; on the random stream of ``mx.np.random``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp

from ast_hybrid.core.ndarray import as_np
from ast_hybrid.mxnp._base import missing_getattr, raw_of
from ast_hybrid.mxnp.random import _draw, seed  # noqa: F401  (npx.random.seed is np.random.seed)
from ast_hybrid.ops import rng
from ast_hybrid.ops._core import op

__all__ = ["seed", "bernoulli", "uniform_n", "normal_n"]


@op
def _bernoulli(key, p, logit, shape, dtype):
    prob = jax.nn.sigmoid(jnp.asarray(logit, jnp.float32)) if p is None else jnp.asarray(p, jnp.float32)
    return (jax.random.uniform(key, shape, jnp.float32) < prob).astype(dtype)


def bernoulli(prob=None, logit=None, size=None, dtype=None, ctx=None, out=None):
    """0/1 draws with probability ``prob`` (or ``sigmoid(logit)``): exactly one of the two."""
    if (prob is None) == (logit is None):
        raise ValueError("Either `prob` or `logit` must be specified, but not both. "
                         f"Received prob={prob}, logit={logit}")
    param = prob if prob is not None else logit
    if prob is not None:
        known = onp.asarray(raw_of(prob)) if not isinstance(raw_of(prob), jax.core.Tracer) else None
        if known is not None and known.size and not ((known >= 0) & (known <= 1)).all():
            raise ValueError("expect probs >= 0 && probs <= 1")
    shape = tuple(jnp.shape(raw_of(param))) if size is None else ((size,) if isinstance(size, int) else tuple(size))
    res = as_np(_bernoulli(rng.next_key(), prob, logit, shape, onp.dtype(dtype or "float32").name))
    if out is not None:
        out._arr, out._ag = res._arr, None
        return out
    return res


def _batched(batch_shape, *params):
    batch = () if batch_shape is None else ((batch_shape,) if isinstance(batch_shape, int) else tuple(batch_shape))
    return batch + tuple(jnp.broadcast_shapes(*[jnp.shape(raw_of(p)) for p in params]))


def uniform_n(low=0.0, high=1.0, batch_shape=None, dtype=None, ctx=None):
    return _draw("uniform", low, high, _batched(batch_shape, low, high), dtype, None, ctx)


def normal_n(loc=0.0, scale=1.0, batch_shape=None, dtype=None, ctx=None):
    return _draw("normal", loc, scale, _batched(batch_shape, loc, scale), dtype, None, ctx)


__getattr__ = missing_getattr("mxnet.numpy_extension.random", __name__)
