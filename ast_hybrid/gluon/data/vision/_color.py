"""MXNet 1.9.1's colour ops of ``nd.image`` (``src/operator/image/image_random-inl.h``) on jax arrays, for the
colour transforms: images (H, W, 3) or (N, H, W, 3), any dtype; a uint8 result is clipped to [0, 255] and
truncated, as MXNet's ``saturate_cast``.  The factors are arrays, so one compiled program serves every draw.

What MXNet computes, kept as it is (``tests/mxnet/test_vision.py`` compares each with MXNet at fixed factors):
- contrast: ``x * a + (1 - a) * mean`` with ``mean`` the image's mean grey (0.299 R + 0.587 G + 0.114 B);
- saturation: ``grey * (1 - a) + x * a`` where MXNet's ``grey`` is only ``0.114 * B`` (its loop assigns
  instead of summing);
- hue: the pixel through HLS, its hue turned by ``a`` of a full turn;
- lighting: AlexNet's PCA noise, ``x + eigvec * eigval @ alpha`` per channel.
"""

from __future__ import annotations

import numpy as np

from ast_hybrid.ops._core import op

_GREY = (0.299, 0.587, 0.114)
_EIG = np.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                 [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                 [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]], dtype=np.float32)


def _saturate(v, dtype):
    import jax.numpy as jnp

    if dtype == jnp.uint8:
        v = jnp.clip(v, 0, 255)
    return v.astype(dtype)


def _brightness(x, a):
    return x * a


def _contrast(x, a):
    import jax.numpy as jnp

    grey = (x * jnp.asarray(_GREY, jnp.float32)).sum(axis=(-3, -2, -1), keepdims=True)
    mean = grey / (x.shape[-3] * x.shape[-2])
    return x * a + (1 - a) * mean


def _saturation(x, a):
    return x[..., 2:3] * _GREY[2] * (1 - a) + x * a


def _rgb_to_hls(x):
    import jax.numpy as jnp

    r, g, b = x[..., 0] / 255.0, x[..., 1] / 255.0, x[..., 2] / 255.0
    vmax, vmin = jnp.maximum(jnp.maximum(r, g), b), jnp.minimum(jnp.minimum(r, g), b)
    diff, l_ = vmax - vmin, (vmax + vmin) / 2
    grey = diff == 0
    safe = jnp.where(grey, 1.0, diff)
    s = jnp.where(grey, 0.0, jnp.where(l_ < 0.5, diff / jnp.where(grey, 1.0, vmax + vmin),
                                       diff / jnp.where(grey, 1.0, 2 - vmax - vmin)))
    h = jnp.where(vmax == r, (g - b) / safe, jnp.where(vmax == g, 2 + (b - r) / safe, 4 + (r - g) / safe))
    return jnp.where(grey, 0.0, (h / 6) % 1.0), l_, s


def _hls_to_rgb(h, l_, s):
    import jax.numpy as jnp

    m2 = jnp.where(l_ <= 0.5, l_ * (1 + s), l_ + s - l_ * s)
    m1 = 2 * l_ - m2

    def channel(hue):
        hue = hue % 1.0
        return jnp.where(hue < 1 / 6, m1 + (m2 - m1) * hue * 6,
                         jnp.where(hue < 0.5, m2, jnp.where(hue < 2 / 3, m1 + (m2 - m1) * (2 / 3 - hue) * 6, m1)))

    rgb = jnp.stack([channel(h + 1 / 3), channel(h), channel(h - 1 / 3)], axis=-1)
    return jnp.where((s == 0)[..., None], l_[..., None], rgb) * 255.0


def _hue(x, a):
    h, l_, s = _rgb_to_hls(x)
    return _hls_to_rgb(h + a, l_, s)


def _lighting(x, alpha):
    import jax.numpy as jnp

    return x + jnp.asarray(_EIG) @ alpha.astype(jnp.float32)


_ADJUST = (_brightness, _contrast, _saturation, _hue)


@op(compile_arrays=("data", "factor"))
def adjust(data, factor, which):
    """Brightness (``which=0``), contrast (1), saturation (2) or hue (3) of ``data`` by ``factor``."""
    import jax.numpy as jnp

    return _saturate(_ADJUST[which](data.astype(jnp.float32), factor.reshape(())), data.dtype)


@op(compile_arrays=("data", "alpha"))
def adjust_lighting(data, alpha):
    """MXNet's ``nd.image.adjust_lighting``: ``alpha`` (3,) weighs the three principal components."""
    import jax.numpy as jnp

    return _saturate(_lighting(data.astype(jnp.float32), alpha), data.dtype)


@op(compile_arrays=("data", "draws", "order_draws"))   # one program for every draw (eager scan: a compile per call)
def color_jitter(data, draws, order_draws, amounts):
    """MXNet's ``random_color_jitter``: ``draws`` (4,) in [-1, 1] scale ``amounts`` (brightness, contrast,
    saturation, hue; 0 turns one off) into the factors, applied in the order that sorts ``order_draws`` (4,);
    each step casts back to the image's dtype, as MXNet's does."""
    import jax
    import jax.numpy as jnp

    amounts = jnp.asarray(amounts, jnp.float32)
    factors = jnp.asarray((1.0, 1.0, 1.0, 0.0), jnp.float32) + amounts * draws.astype(jnp.float32)
    order = jnp.argsort(order_draws)
    branches = [lambda v, i=i: _saturate(_ADJUST[i](v.astype(jnp.float32), factors[i]), data.dtype)
                for i in range(4)]

    def step(x, which):
        return jnp.where(amounts[which] > 0, jax.lax.switch(which, branches, x), x), None

    out, _ = jax.lax.scan(step, data, order)
    return out
