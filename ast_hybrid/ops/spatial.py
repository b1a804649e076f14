"""MXNet's spatial transformer operators: ``GridGenerator`` (an affine transform's or a flow field's sampling
grid), ``BilinearSampler`` (sample the data at a grid) and ``SpatialTransformer`` (the two together), as
MXNet 1.9.1's CPU kernels compute them (``grid_generator-inl.h``, ``bilinear_sampler.cc``); their gradients are
JAX's of the same arithmetic, which are MXNet's backward kernels' formulas.  And FlowNet's ``Correlation`` of
two feature maps (``correlation.cc``).

A grid is (N, 2, H, W): channel 0 the x (column), channel 1 the y (row) source position, each in [-1, 1] over
the input's extent; a sample outside the input reads zeros.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
from jax import lax

from ast_hybrid.ops._core import as_tuple, check, choice, op

__all__ = ["GridGenerator", "BilinearSampler", "SpatialTransformer", "Correlation"]


@op
def GridGenerator(data, transform_type="affine", target_shape=(0, 0)):
    """``affine``: ``data`` (N, 6) maps the target's normalised (x, y, 1) to source positions, the grid of shape
    (N, 2, *target_shape); ``warp``: ``data`` (N, 2, H, W) is a flow in pixels added to each pixel's position,
    then normalised."""
    choice("GridGenerator", "transform_type", transform_type, ("affine", "warp"))
    x = jnp.asarray(data)
    if transform_type == "affine":
        h, w = as_tuple(target_shape)
        check(h > 1 and w > 1, "GridGenerator", f"target_shape={target_shape} must be at least 2 x 2")
        cols = -1.0 + jnp.arange(w, dtype=x.dtype) * (2.0 / (w - 1))
        rows = -1.0 + jnp.arange(h, dtype=x.dtype) * (2.0 / (h - 1))
        dst = jnp.stack([jnp.tile(cols, h), jnp.repeat(rows, w), jnp.ones((h * w,), x.dtype)])     # (3, H*W)
        return (x.reshape(-1, 2, 3) @ dst).reshape(x.shape[0], 2, h, w)
    n, _, h, w = x.shape
    grid = jnp.stack([jnp.broadcast_to(jnp.arange(w, dtype=x.dtype), (h, w)),
                      jnp.broadcast_to(jnp.arange(h, dtype=x.dtype)[:, None], (h, w))])
    scale = jnp.asarray([(w - 1.0) / 2.0, (h - 1.0) / 2.0], x.dtype).reshape(1, 2, 1, 1)
    return (x + grid[None]) / scale - 1


@op
def BilinearSampler(data, grid, cudnn_off=None):
    """``data`` (N, C, Hi, Wi) sampled bilinearly at ``grid`` (N, 2, Ho, Wo): (N, C, Ho, Wo), zeros outside."""
    x, g = jnp.asarray(data), jnp.asarray(grid).astype(jnp.asarray(data).dtype)
    n, c, hi, wi = x.shape
    xs = (g[:, 0] + 1) * (wi - 1) / 2       # (N, Ho, Wo)
    ys = (g[:, 1] + 1) * (hi - 1) / 2
    x0, y0 = jnp.floor(xs), jnp.floor(ys)
    wx, wy = 1 - (xs - x0), 1 - (ys - y0)       # the top-left corner's weights
    x0, y0 = x0.astype(jnp.int32), y0.astype(jnp.int32)
    flat = x.reshape(n, c, hi * wi)

    def corner(yy, xx):
        inside = (xx >= 0) & (xx <= wi - 1) & (yy >= 0) & (yy <= hi - 1)
        idx = (jnp.clip(yy, 0, hi - 1) * wi + jnp.clip(xx, 0, wi - 1)).reshape(n, 1, -1)
        v = jnp.take_along_axis(flat, jnp.broadcast_to(idx, (n, c, idx.shape[-1])), axis=2)
        return jnp.where(inside.reshape(n, 1, -1), v, 0).reshape((n, c) + xs.shape[1:])

    wx, wy = wx[:, None], wy[:, None]
    return (corner(y0, x0) * wy * wx + corner(y0, x0 + 1) * wy * (1 - wx)
            + corner(y0 + 1, x0) * (1 - wy) * wx + corner(y0 + 1, x0 + 1) * (1 - wy) * (1 - wx))


@op
def SpatialTransformer(data, loc, target_shape=(0, 0), transform_type=None, sampler_type=None, cudnn_off=None):
    """``BilinearSampler(data, GridGenerator(loc, 'affine', target_shape))``, MXNet's only combination (both
    types required, as MXNet's)."""
    choice("SpatialTransformer", "transform_type", transform_type, ("affine",))
    choice("SpatialTransformer", "sampler_type", sampler_type, ("bilinear",))
    grid = GridGenerator.__wrapped__(loc, "affine", target_shape)
    return BilinearSampler.__wrapped__(data, grid)


@op
def Correlation(data1, data2, kernel_size=1, max_displacement=1, stride1=1, stride2=1, pad_size=0,
                is_multiply=True):
    """Each ``kernel_size`` patch of ``data1`` (N, C, H, W) compared with the patches of ``data2`` displaced by up
    to ``max_displacement`` (in steps of ``stride2``): channel q of the output (N, D*D, Ht, Wt), D = 2 *
    (max_displacement // stride2) + 1, is the displacement (q // D, q % D) from the centre (row, column); a
    comparison is the mean over the patch and the channels of the product (``is_multiply``) or of the absolute
    difference.  Both maps are zero-padded by ``pad_size``; output positions step by ``stride1``."""
    a, b = jnp.asarray(data1), jnp.asarray(data2)
    check(a.ndim == 4 and b.ndim == 4, "Correlation", "data should be a 4D tensor")
    check(a.shape == b.shape, "Correlation", f"data1 {a.shape} and data2 {b.shape} differ")
    k, md, s1, s2, pad = int(kernel_size), int(max_displacement), int(stride1), int(stride2), int(pad_size)
    check(k % 2 == 1, "Correlation", "kernel size should be odd number")
    n, c, h, w = a.shape
    border = md + (k - 1) // 2
    th, tw = (math.ceil((h + 2 * pad - 2 * border) / s1), math.ceil((w + 2 * pad - 2 * border) / s1))
    check(th >= 1 and tw >= 1, "Correlation",
          "Correlation cannot be done with current settings.Neighborhood and kernel don't fit in blob")
    radius = md // s2
    grid = 2 * radius + 1
    ly, lx = (th - 1) * s1 + k, (tw - 1) * s1 + k         # the rows and columns the patches cover
    # zeros past the padded maps too: where the output's size rounds up, MXNet's kernel reads past them
    extra_y, extra_x = max(0, md + ly + md - (h + 2 * pad)), max(0, md + lx + md - (w + 2 * pad))
    tmp1 = jnp.pad(a, ((0, 0), (0, 0), (pad, pad + extra_y), (pad, pad + extra_x)))
    tmp2 = jnp.pad(b, ((0, 0), (0, 0), (pad, pad + extra_y), (pad, pad + extra_x)))
    first = tmp1[:, :, md:md + ly, md:md + lx]
    q = jnp.arange(grid * grid)
    shifts = jnp.stack([md + (q // grid - radius) * s2, md + (q % grid - radius) * s2], axis=1)

    def one(shift):
        second = lax.dynamic_slice(tmp2, (0, 0, shift[0], shift[1]), (n, c, ly, lx))
        if is_multiply:
            cmp = first * second
        else:           # |d| with MXNet's gradient: +1 where data1 >= data2, else -1
            d = first - second
            cmp = d * lax.stop_gradient(jnp.where(d >= 0, 1, -1).astype(d.dtype))
        summed = cmp.sum(axis=1)                                          # (N, ly, lx)
        # (a NumPy zero: reduce_window then knows the sum, and has its gradient)
        return lax.reduce_window(summed, np.zeros((), summed.dtype), lax.add, (1, k, k), (1, s1, s1), "VALID")

    out = lax.map(one, shifts)                                            # (D*D, N, Ht, Wt)
    return (jnp.moveaxis(out, 0, 1) / (k * k * c)).astype(a.dtype)
