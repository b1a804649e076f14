"""The image ops behind the transforms (MXNet's ``nd.image.*`` and ``image.*`` helpers), on jax arrays.

``resize`` is OpenCV's ``INTER_LINEAR`` as MXNet calls it: half-pixel centres, edges clamped, horizontal
pass then vertical; float images in float32, uint8 images in OpenCV's 11-bit fixed point with its SIMD
rounding of the vertical pass (what MXNet 1.9.1's OpenCV gives, bit for bit in ``tests/mxnet/test_vision.py``).
"""

from __future__ import annotations

import numpy as np

from ast_hybrid.ops._core import from_host, op

_COEF_BITS = 11
_COEF_SCALE = 1 << _COEF_BITS


def _taps(src, dst, clamp_weights=True):
    """OpenCV's source indices and the weight of the second tap for each output pixel (``dst`` of ``src``).
    Past an edge OpenCV clamps the indices, and for columns (not rows) the weight too."""
    scale = np.float64(src) / dst
    f = ((np.arange(dst) + 0.5) * scale - 0.5).astype(np.float32)
    s = np.floor(f).astype(np.int64)
    f = f - s
    if not clamp_weights:
        return np.clip(s, 0, src - 1), np.clip(s + 1, 0, src - 1), f
    low = s < 0
    f[low], s[low] = 0, 0
    high = s >= src - 1
    f[high], s[high] = 0, src - 1
    return s, np.minimum(s + 1, src - 1), f


def host_or_traced(data):
    """The array module to compute ``data`` with: numpy for a concrete array, jax.numpy inside a trace.

    Data augmentation crops and resizes every image to a size of its own; computed with jax.numpy, each new
    shape compiles its XLA programs again (a random crop per image: a compile per image, 20x MXNet's time
    in GluonCV's ImageNet script).  Concrete arrays are computed on the host, where a new shape costs
    nothing, with the same integer and float32 arithmetic: uint8 results are the same bits, float32 ones
    within a rounding (XLA may fuse a multiply and an add)."""
    import jax
    import jax.numpy as jnp

    return (jnp, data) if isinstance(data, jax.core.Tracer) else (np, np.asarray(data))


@op
def resize_hwc(data, width, height):
    """``data`` (H, W, C) or (N, H, W, C) to ``height`` x ``width`` (bilinear, OpenCV's rounding)."""
    xp, data = host_or_traced(data)
    h_axis = data.ndim - 3
    sh, sw = data.shape[h_axis], data.shape[h_axis + 1]
    x0, x1, fx = _taps(sw, width)
    y0, y1, fy = _taps(sh, height, clamp_weights=False)
    shape_x = (1,) * (data.ndim - 2) + (width, 1)
    shape_y = (1,) * (data.ndim - 3) + (height, 1, 1)
    if data.dtype == np.uint8:
        ax = np.round((1 - fx) * _COEF_SCALE).astype(np.int32)
        ay = np.round((1 - fy) * _COEF_SCALE).astype(np.int32)
        d = data.astype(np.int32)
        rows = (xp.take(d, x0, axis=h_axis + 1) * ax.reshape(shape_x)
                + xp.take(d, x1, axis=h_axis + 1) * (_COEF_SCALE - ax).reshape(shape_x))
        s0, s1 = xp.take(rows, y0, axis=h_axis), xp.take(rows, y1, axis=h_axis)
        b0, b1 = ay.reshape(shape_y), (_COEF_SCALE - ay).reshape(shape_y)
        vector = (((b0 * (s0 >> 4)) >> 16) + ((b1 * (s1 >> 4)) >> 16) + 2) >> 2
        return from_host(xp.clip(vector, 0, 255).astype(np.uint8))
    d = data.astype(np.float32)
    rows = (xp.take(d, x0, axis=h_axis + 1) * (1 - fx).reshape(shape_x)
            + xp.take(d, x1, axis=h_axis + 1) * fx.reshape(shape_x))
    out = (xp.take(rows, y0, axis=h_axis) * (1 - fy).reshape(shape_y)
           + xp.take(rows, y1, axis=h_axis) * fy.reshape(shape_y))
    return from_host(out.astype(data.dtype))


def resize_size(size, keep_ratio, src_h, src_w):
    """MXNet's ``image.resize`` target ``(width, height)``."""
    if isinstance(size, (int, np.integer)) or len(size) == 1:
        size = size if isinstance(size, (int, np.integer)) else size[0]
        if not keep_ratio:
            return size, size
        if src_h > src_w:
            return size, int(src_h * size / src_w)
        return int(src_w * size / src_h), size
    return size[0], size[1]


@op
def to_tensor(data):
    """(H, W, C) or (N, H, W, C) in [0, 255] to float32 (C, H, W) / (N, C, H, W) in [0, 1]."""
    import jax.numpy as jnp

    axes = (2, 0, 1) if data.ndim == 3 else (0, 3, 1, 2)
    return jnp.transpose(data.astype(jnp.float32) / 255.0, axes)


@op
def normalize(data, mean=0.0, std=1.0):
    """(C, H, W) or (N, C, H, W): ``(x - mean[c]) / std[c]``; a scalar or one value serves every channel."""
    import jax.numpy as jnp

    channels = data.shape[-3]

    def per_channel(v):
        v = np.asarray(v, dtype=np.float32).reshape(-1)
        if v.size == 1:
            v = np.repeat(v, channels)
        if v.size != channels:
            raise ValueError(f"Normalize: {v.size} values for {channels} channels")
        return jnp.asarray(v.reshape(channels, 1, 1))

    return ((data - per_channel(mean)) / per_channel(std)).astype(data.dtype)


@op
def flip(data, axis, draw):
    """``data`` reversed along ``axis`` where ``draw`` (one boolean) is true."""
    import jax.numpy as jnp

    return jnp.where(draw.reshape(()), jnp.flip(data, axis), data)


def imread(filename, flag=1, to_rgb=True):
    """An image file as a uint8 NDArray (H, W, 3) in RGB (``flag=1``; BGR with ``to_rgb=False``) or (H, W, 1)
    in grey (``flag=0``), as MXNet's ``image.imread``; decoded with Pillow (``pip install 'ast-hybrid[image]'``)
    where MXNet uses OpenCV: PNG and BMP give the same pixels, JPEG may differ by the decoders' rounding."""
    from ast_hybrid import nd

    try:
        from PIL import Image
    except ImportError as e:
        raise ImportError(f"reading the image {filename!r} (mxnet.image.imread, which ImageFolderDataset uses) "
                          "needs Pillow in ast-hybrid: pip install 'ast-hybrid[image]' (or pip install pillow)") \
            from e
    with Image.open(filename) as im:
        arr = np.asarray(im.convert("L"))[:, :, None] if flag == 0 else np.asarray(im.convert("RGB"))
    if flag != 0 and not to_rgb:
        arr = arr[:, :, ::-1]
    return nd.array(np.ascontiguousarray(arr), dtype=np.uint8)
