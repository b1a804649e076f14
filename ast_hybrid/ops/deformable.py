"""``F.contrib.DeformableConvolution`` and ``F.contrib.ModulatedDeformableConvolution``: MXNet 1.9.1's 2-D
deformable convolutions (Dai et al. 2017, v1; Zhu et al. 2018, v2 with a mask), NCHW only, as MXNet has them.

Each kernel tap ``(i, j)`` of output pixel ``(y, x)`` reads the input at
``(y * stride_h - pad_h + i * dilate_h + dy, x * stride_w - pad_w + j * dilate_w + dx)``, where ``(dy, dx)`` is
channel pair ``2 * (i * kw + j)``, ``2 * (i * kw + j) + 1`` of the offset input's deformable group (the
input channels are split into ``num_deformable_group`` groups, each with its own ``2 * kh * kw`` offset
channels and, in v2, ``kh * kw`` mask channels).  The sample is bilinear; the two ops differ at the border,
as MXNet's CPU kernels do:

- v1 (``deformable_im2col``): a point with ``h < 0``, ``w < 0``, ``h >= H`` or ``w >= W`` reads 0; inside,
  a point on or past the last row (column) reads that row (column): ``h`` is taken as ``min(h, H - 1)``;
- v2 (``modulated_deformable_im2col``): the image is zero beyond its edge, so a point with ``-1 < h < H``
  and ``-1 < w < W`` mixes its in-image corners, anything farther reads 0; the sample is then multiplied by
  the tap's mask value.

The samples of all taps (columns ``(C * kh * kw, Ho * Wo)`` per image, gathered with one index per
deformable group) are then one grouped matrix product with the weight ``(num_filter, C / num_group, kh,
kw)``.  The gradients are JAX's of this forward; for v1 they are MXNet's backward (checked against it), for v2
MXNet 1.9.1 has no CPU backward and they are checked against finite differences of MXNet's forward.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ast_hybrid.ops._core import as_tuple, check, op

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]


def _pair(v, default, opname, arg):
    v = as_tuple(v)
    if not v:
        return (default, default)
    check(len(v) == 2, opname, f"{arg} must have 2 values (h, w) for a 2-D kernel, got {v}")
    return v


def _corners(h, w, height, width, modulated):
    """The four bilinear corners of the points (h, w): a list of (flat index into H*W, weight), the weight 0
    where the corner (or, for v1, the point) is outside the image."""
    if modulated:
        inside = (h > -1) & (w > -1) & (h < height) & (w < width)
        h_low, w_low = jnp.floor(h), jnp.floor(w)
        h_high, w_high = h_low + 1, w_low + 1
        ok_h = (h_low >= 0, h_high <= height - 1)
        ok_w = (w_low >= 0, w_high <= width - 1)
    else:
        inside = (h >= 0) & (w >= 0) & (h < height) & (w < width)
        h_low, w_low = jnp.floor(h), jnp.floor(w)
        # on or past the last row/column the point is moved onto it (MXNet: h = h_low, h_high = H - 1)
        last_h, last_w = h_low >= height - 1, w_low >= width - 1
        h = jnp.where(last_h, h_low, h)
        w = jnp.where(last_w, w_low, w)
        h_high = jnp.where(last_h, height - 1, h_low + 1)
        w_high = jnp.where(last_w, width - 1, w_low + 1)
        ok_h = ok_w = (True, True)
    lh, lw = h - h_low, w - w_low
    weights_h, weights_w = (1 - lh, lh), (1 - lw, lw)
    rows, cols = (h_low, h_high), (w_low, w_high)
    out = []
    for a in range(2):
        for b in range(2):
            ok = inside & ok_h[a] & ok_w[b]
            r = jnp.clip(rows[a], 0, height - 1).astype(jnp.int32)
            c = jnp.clip(cols[b], 0, width - 1).astype(jnp.int32)
            out.append((r * width + c, jnp.where(ok, weights_h[a] * weights_w[b], 0)))
    return out


def _deformable(opname, x, offset, mask, weight, bias, kernel, stride, dilate, pad, num_filter, num_group,
                num_deformable_group, no_bias, layout):
    check(layout in (None, "NCHW"), opname, f"only the NCHW layout is implemented (as in MXNet), got {layout!r}")
    kernel = as_tuple(kernel)
    check(len(kernel) == 2, opname, f"only 2-D kernels are implemented (as in MXNet), got kernel={kernel}")
    check(x.ndim == 4, opname, f"data must be 4-D (N, C, H, W), got shape {tuple(x.shape)}")
    kh, kw = kernel
    (sh, sw), (dh, dw), (ph, pw) = (_pair(stride, 1, opname, "stride"), _pair(dilate, 1, opname, "dilate"),
                                    _pair(pad, 0, opname, "pad"))
    n, c, height, width = x.shape
    g, dg = int(num_group), int(num_deformable_group)
    f = int(num_filter) if num_filter is not None else weight.shape[0]
    check(g >= 1 and dg >= 1, opname, f"num_group and num_deformable_group must be >= 1, got {g}, {dg}")
    check(c % g == 0, opname, f"the {c} input channels do not split into num_group={g} groups")
    check(c % dg == 0, opname, f"the {c} input channels do not split into num_deformable_group={dg} groups")
    check(f % g == 0, opname, f"num_filter={f} does not split into num_group={g} groups")
    check(kh <= height + 2 * ph and kw <= width + 2 * pw, opname,
          f"kernel {kernel} exceeds the padded input {(height + 2 * ph, width + 2 * pw)}")
    ho = (height + 2 * ph - (dh * (kh - 1) + 1)) // sh + 1
    wo = (width + 2 * pw - (dw * (kw - 1) + 1)) // sw + 1
    taps = kh * kw
    want = (n, dg * 2 * taps, ho, wo)
    check(tuple(offset.shape) == want, opname, f"offset must have shape {want} (N, num_deformable_group * 2 * "
          f"kh * kw, out_h, out_w), got {tuple(offset.shape)}")
    if mask is not None:
        check(f % dg == 0, opname, f"num_filter={f} does not split into num_deformable_group={dg} groups")
        want = (n, dg * taps, ho, wo)
        check(tuple(mask.shape) == want, opname, f"mask must have shape {want} (N, num_deformable_group * kh * "
              f"kw, out_h, out_w), got {tuple(mask.shape)}")
    want = (f, c // g, kh, kw)
    check(tuple(weight.shape) == want, opname, f"weight must have shape {want}, got {tuple(weight.shape)}")

    # the sampling points: (N, dg, taps, Ho, Wo)
    base_h = (jnp.arange(ho) * sh - ph)[None, :] + (jnp.arange(kh) * dh)[:, None]          # (kh, Ho)
    base_w = (jnp.arange(wo) * sw - pw)[None, :] + (jnp.arange(kw) * dw)[:, None]          # (kw, Wo)
    base_h = jnp.broadcast_to(base_h[:, None, :, None], (kh, kw, ho, wo)).reshape(taps, ho, wo)
    base_w = jnp.broadcast_to(base_w[None, :, None, :], (kh, kw, ho, wo)).reshape(taps, ho, wo)
    off = offset.reshape(n, dg, taps, 2, ho, wo)
    h = base_h.astype(off.dtype) + off[:, :, :, 0]
    w = base_w.astype(off.dtype) + off[:, :, :, 1]

    # bilinear samples of every channel: (N, dg, C / dg, taps * Ho * Wo)
    images = x.reshape(n, dg, c // dg, height * width)
    take = jax.vmap(jax.vmap(lambda img, idx: jnp.take(img, idx, axis=1)))
    cols = 0
    for index, wt in _corners(h, w, height, width, mask is not None):
        cols = cols + wt.reshape(n, dg, 1, -1).astype(x.dtype) * take(images, index.reshape(n, dg, -1))
    cols = cols.reshape(n, dg, c // dg, taps, ho * wo)
    if mask is not None:
        cols = cols * mask.reshape(n, dg, 1, taps, ho * wo)

    # one grouped product: (N, g, C / g * taps, L) with (g, F / g, C / g * taps)
    cols = cols.reshape(n, g, (c // g) * taps, ho * wo)
    out = jnp.einsum("ngkl,gfk->ngfl", cols, weight.reshape(g, f // g, (c // g) * taps))
    out = out.reshape(n, f, ho, wo)
    check(not (no_bias and bias is not None), opname, "no_bias=True takes no bias input (MXNet refuses the "
          "extra input); drop the bias or set no_bias=False")
    if not no_bias:
        check(bias is not None, opname, "bias is required unless no_bias=True")
        check(tuple(bias.shape) == (f,), opname, f"bias must have shape {(f,)}, got {tuple(bias.shape)}")
        out = out + bias.reshape(1, f, 1, 1)
    return out


@op(compile_arrays=("data", "offset", "weight", "bias"))
def DeformableConvolution(data, offset, weight, bias=None, kernel=(), stride=(), dilate=(), pad=(), num_filter=None,
                          num_group=1, num_deformable_group=1, workspace=1024, no_bias=False, layout=None):
    """Deformable convolution v1 on NCHW ``data``; ``offset`` (N, num_deformable_group * 2 * kh * kw, out_h,
    out_w), ``weight`` (num_filter, C / num_group, kh, kw); see the module doc for the sampling."""
    x, o, w = jnp.asarray(data), jnp.asarray(offset), jnp.asarray(weight)
    b = None if bias is None else jnp.asarray(bias)
    return _deformable("DeformableConvolution", x, o, None, w, b, kernel, stride, dilate, pad, num_filter,
                       num_group, num_deformable_group, no_bias, layout)


@op(compile_arrays=("data", "offset", "mask", "weight", "bias"))
def ModulatedDeformableConvolution(data, offset, mask, weight, bias=None, kernel=(), stride=(), dilate=(), pad=(),
                                   num_filter=None, num_group=1, num_deformable_group=1, workspace=1024,
                                   no_bias=False, im2col_step=64, layout=None):
    """Modulated deformable convolution (v2): v1's with each tap's sample multiplied by ``mask`` (N,
    num_deformable_group * kh * kw, out_h, out_w) and zero beyond the image's edge; see the module doc.
    ``im2col_step`` (images per MXNet column buffer) changes nothing here but must, as in MXNet, divide a
    larger batch."""
    x, o, m, w = jnp.asarray(data), jnp.asarray(offset), jnp.asarray(mask), jnp.asarray(weight)
    step = int(im2col_step)
    check(step >= 1 and (x.shape[0] <= step or x.shape[0] % step == 0), "ModulatedDeformableConvolution",
          f"im2col_step={step} must divide the batch size {x.shape[0]} (or be at least as large)")
    b = None if bias is None else jnp.asarray(bias)
    return _deformable("ModulatedDeformableConvolution", x, o, m, w, b, kernel, stride, dilate, pad, num_filter,
                       num_group, num_deformable_group, no_bias, layout)
