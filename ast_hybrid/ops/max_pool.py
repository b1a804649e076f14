"""Max pooling over windows that do not overlap (``MaxPool2D(2)``: kernel = stride, no padding), with MXNet's
backward written out: the gradient of each window goes to its first maximum in row-major order (MXNet's CPU
``unpool_max``), as the general ``reduce_window`` path's does.

Why apart: the general path's backward is jax's ``select_and_gather_add``, which XLA:CPU expands into a
reduce-window over the value and one iota array per input dimension, then a scatter: in issue 32's small CNN
(b64, 32x32) its max pools took 25 ms of an 86 ms training step, MXNet's 1.7 ms.  Here the backward is element-wise:
for each window position in row-major order, the cells equal to the window's maximum that no earlier position
took.  The forward is the same ``reduce_window`` max as the general path's (what predict programs and the
channel-last rewrite see: a ``custom_vjp`` is inlined there).  A NaN never equals the maximum: no gradient,
as in MXNet.

>>> import jax, jax.numpy as jnp
>>> x = jnp.array([[[[1., 3., 0., 0.], [3., 2., 0., 0.]]]])
>>> y, vjp = jax.vjp(lambda v: max_pool_windows(v, (2, 2), True), x)
>>> y.tolist(), vjp(jnp.ones_like(y))[0].tolist()
([[[[3.0, 0.0]]]], [[[[0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0]]]])
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

__all__ = ["max_pool_windows", "MAX_WINDOW"]

#: the most cells a window may have here (the backward visits each position once)
MAX_WINDOW = 16


def _forward(x, kernel, channel_first):
    window = (1, 1, *kernel) if channel_first else (1, *kernel, 1)
    return lax.reduce_window(x, np.array(-np.inf, x.dtype), lax.max, window, window, "VALID")


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2))
def max_pool_windows(x, kernel, channel_first):
    """2-D max pooling of ``x`` (NCHW when ``channel_first``, else NHWC) with ``stride = kernel``, no padding
    (rows and columns past the last whole window are left out, MXNet's 'valid')."""
    return _forward(x, kernel, channel_first)


def _fwd(x, kernel, channel_first):
    y = _forward(x, kernel, channel_first)
    return y, (x, y)


def _bwd(kernel, channel_first, res, g):
    x, y = res
    kh, kw = kernel
    if channel_first:
        n, c, h, w = x.shape
        ho, wo = y.shape[2:]
        xr = x[:, :, :ho * kh, :wo * kw].reshape(n, c, ho, kh, wo, kw)
        cell = lambda i, j: xr[:, :, :, i, :, j]                 # noqa: E731
    else:
        n, h, w, c = x.shape
        ho, wo = y.shape[1:3]
        xr = x[:, :ho * kh, :wo * kw, :].reshape(n, ho, kh, wo, kw, c)
        cell = lambda i, j: xr[:, :, i, :, j, :]                 # noqa: E731
    taken = jnp.zeros(y.shape, bool)
    rows = []
    for i in range(kh):
        row = []
        for j in range(kw):
            hit = (cell(i, j) == y) & ~taken
            taken = taken | hit
            row.append(jnp.where(hit, g, jnp.zeros((), g.dtype)))
        rows.append(row)
    if channel_first:
        gr = jnp.stack([jnp.stack(r, axis=-1) for r in rows], axis=3).reshape(n, c, ho * kh, wo * kw)
        gx = jnp.pad(gr, ((0, 0), (0, 0), (0, h - ho * kh), (0, w - wo * kw)))
    else:
        gr = jnp.stack([jnp.stack(r, axis=3) for r in rows], axis=2).reshape(n, ho * kh, wo * kw, c)
        gx = jnp.pad(gr, ((0, 0), (0, h - ho * kh), (0, w - wo * kw), (0, 0)))
    return (gx,)


max_pool_windows.defvjp(_fwd, _bwd)
