"""2-D max pooling with MXNet's backward written out: the gradient of each window goes to its first maximum in
row-major order (MXNet's CPU ``unpool_max``), as the general ``reduce_window`` path's does.

Why apart: the general path's backward is jax's ``select_and_gather_add``, which XLA:CPU expands into a
reduce-window over the value and one iota array per input dimension, then a scatter: in issue 32's small CNN
(b64, 32x32) its max pools took 25 ms of an 86 ms training step, MXNet's 1.7 ms.  Here the backward is
element-wise: for each window position in row-major order, the cells (a strided slice of the padded input) equal
to their window's maximum that no earlier position took get the window's gradient, placed back by a padding with
the stride as interior (overlapping windows add up).  (A variant that stacked and reshaped the shares of windows
tiling the input gave wrong gradients in one op-by-op tape, vgg11_bn's last 4x4 -> 2x2 pool, and was dropped.)
The forward is the general path's ``reduce_window`` max (what predict programs and the channel-last
rewrite see: a ``custom_vjp`` is inlined there).  Padding is -inf,
never a maximum; a NaN never equals the maximum: no gradient, as in MXNet.

>>> import jax, jax.numpy as jnp
>>> x = jnp.array([[[[1., 3., 0., 0.], [3., 2., 0., 0.]]]])
>>> y, vjp = jax.vjp(lambda v: max_pool_windows(v, (2, 2), (2, 2), ((0, 0), (0, 0)), True), x)
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


def _full(v, fill, channel_first):
    return (fill, fill, *v) if channel_first else (fill, *v, fill)


def _forward(x, kernel, stride, pads, channel_first):
    return lax.reduce_window(x, np.array(-np.inf, x.dtype), lax.max, _full(kernel, 1, channel_first),
                             _full(stride, 1, channel_first), _full(pads, (0, 0), channel_first))


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3, 4))
def max_pool_windows(x, kernel, stride, pads, channel_first):
    """2-D max pooling of ``x`` (NCHW when ``channel_first``, else NHWC): ``kernel``, ``stride`` and ``pads``
    (``((before, after), (before, after))``, the 'full' convention's overhang included) per spatial axis."""
    return _forward(x, kernel, stride, pads, channel_first)


def _fwd(x, kernel, stride, pads, channel_first):
    y = _forward(x, kernel, stride, pads, channel_first)
    return y, (x, y)


def _bwd(kernel, stride, pads, channel_first, res, g):
    x, y = res
    axes = (2, 3) if channel_first else (1, 2)
    xp = lax.pad(x, np.array(-np.inf, x.dtype), _full([(lo, hi, 0) for lo, hi in pads], (0, 0, 0), channel_first))
    out = [y.shape[a] for a in axes]
    padded = [xp.shape[a] for a in axes]
    zero = jnp.zeros((), g.dtype)
    taken = jnp.zeros(y.shape, bool)
    gxp = jnp.zeros(xp.shape, g.dtype)
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            start = (i, j)
            limit = [s + (o - 1) * st + 1 for s, o, st in zip(start, out, stride)]
            cell = lax.slice(xp, _full(start, 0, channel_first), [*xp.shape[:axes[0]], *limit, *xp.shape[axes[1] + 1:]],
                             _full(stride, 1, channel_first))
            hit = (cell == y) & ~taken
            taken = taken | hit
            back = [(s, p - lim, st - 1) for s, lim, p, st in zip(start, limit, padded, stride)]
            gxp = gxp + lax.pad(jnp.where(hit, g, zero), zero, _full(back, (0, 0, 0), channel_first))
    inside = [slice(lo, p - hi) for (lo, hi), p in zip(pads, padded)]
    gx = gxp[(slice(None), slice(None), *inside)] if channel_first else gxp[(slice(None), *inside, slice(None))]
    return (gx,)


max_pool_windows.defvjp(_fwd, _bwd)
