"""MXNet 1.9.1's ``gluon.data.vision.transforms`` on NDArrays (images as (H, W, C), tensors as (C, H, W)).

``Compose`` groups consecutive hybrid transforms into one hybridized ``HybridSequential``, as MXNet does.
``RandomResizedCrop`` draws from Python's ``random`` module, as MXNet's ``image.random_size_crop`` does
(seed it with ``random.seed``: the same seed gives MXNet's crop); ``RandomFlipLeftRight`` and
``RandomFlipTopBottom`` and the colour transforms (``RandomBrightness``, ``RandomContrast``,
``RandomSaturation``, ``RandomHue``, ``RandomColorJitter``, ``RandomLighting``) draw from ast-hybrid's stream,
seeded by ``mx.random.seed`` (MXNet's own generator is not reproduced: the same seed does not give MXNet's
draws; given the same factor, each gives MXNet's image, ``_color.py``).  ``RandomApply`` draws from Python's
``random``, as MXNet's does.
"""

from __future__ import annotations

import random

import jax
import numpy as np

from ast_hybrid.gluon.block import Block, HybridBlock
from ast_hybrid.gluon.data.vision import _color, _image
from ast_hybrid.gluon.nn import HybridSequential, Sequential
from ast_hybrid.core.ndarray import NDArray
from ast_hybrid.ops._core import from_host

__all__ = ["Compose", "Cast", "ToTensor", "Normalize", "Resize", "CenterCrop", "RandomResizedCrop",
           "RandomFlipLeftRight", "RandomFlipTopBottom", "RandomBrightness", "RandomContrast", "RandomSaturation",
           "RandomHue", "RandomColorJitter", "RandomLighting", "RandomApply"]

_NUMERIC = (int, float, np.integer, np.floating)


class Compose(Sequential):
    """The transforms in order; runs of hybrid ones become one hybridized ``HybridSequential``."""

    def __init__(self, transforms):
        super().__init__()
        transforms.append(None)
        hybrid = []
        for i in transforms:
            if isinstance(i, HybridBlock):
                hybrid.append(i)
                continue
            elif len(hybrid) == 1:
                self.add(hybrid[0])
                hybrid = []
            elif len(hybrid) > 1:
                hblock = HybridSequential()
                for j in hybrid:
                    hblock.add(j)
                hblock.hybridize()
                self.add(hblock)
                hybrid = []
            if i is not None:
                self.add(i)


class Cast(HybridBlock):
    """``F.cast(x, dtype)``."""

    def __init__(self, dtype="float32"):
        super().__init__()
        self._dtype = dtype

    def hybrid_forward(self, F, x):
        return F.cast(x, self._dtype)


class ToTensor(HybridBlock):
    """(H, W, C) in [0, 255] to float32 (C, H, W) in [0, 1] (also batched, (N, H, W, C))."""

    def hybrid_forward(self, F, x):
        return _image.to_tensor(x)


class Normalize(HybridBlock):
    """``(x - mean) / std`` per channel of a (C, H, W) or (N, C, H, W) tensor."""

    def __init__(self, mean=0.0, std=1.0):
        super().__init__()
        self._mean, self._std = mean, std

    def hybrid_forward(self, F, x):
        return _image.normalize(x, self._mean, self._std)


class Resize(HybridBlock):
    """To ``size`` (``(width, height)``; an int: a square, or with ``keep_ratio`` the shorter side),
    bilinear (``interpolation=1``, the only one here)."""

    def __init__(self, size, keep_ratio=False, interpolation=1):
        super().__init__()
        _check_interpolation(interpolation)
        self._keep, self._size, self._interpolation = keep_ratio, size, interpolation

    def hybrid_forward(self, F, x):
        h, w = x.shape[-3], x.shape[-2]
        width, height = _image.resize_size(self._size, self._keep, h, w)
        return _image.resize_hwc(x, width=width, height=height)


def _check_interpolation(interpolation):
    if interpolation != 1:
        raise NotImplementedError(f"interpolation={interpolation} is not available in ast-hybrid's vision "
                                  "transforms: only 1 (bilinear, MXNet's default) is")


def _scale_down(src_size, size):
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def _fixed_crop(src, x0, y0, w, h, size=None):
    if isinstance(src, NDArray) and src._ag is None and not isinstance(src._arr, jax.core.Tracer):
        # a concrete image: cut on the host (as jax ops, each crop's size compiles a program of its own)
        out = np.ascontiguousarray(np.asarray(src._arr)[y0:y0 + h, x0:x0 + w])
        if size is not None and (w, h) != size:
            return _image.resize_hwc(out, width=size[0], height=size[1])
        return NDArray(from_host(out))
    out = src[y0:y0 + h, x0:x0 + w]
    if size is not None and (w, h) != size:
        out = _image.resize_hwc(out, width=size[0], height=size[1])
    return out


def _center_crop(src, size):
    h, w, _ = src.shape
    new_w, new_h = _scale_down((w, h), size)
    x0, y0 = int((w - new_w) / 2), int((h - new_h) / 2)
    return _fixed_crop(src, x0, y0, new_w, new_h, size)


class CenterCrop(Block):
    """The centre ``size`` (``(width, height)`` or an int) of an (H, W, C) image, resized to ``size`` where
    the image is smaller (MXNet's ``image.center_crop``)."""

    def __init__(self, size, interpolation=1):
        super().__init__()
        _check_interpolation(interpolation)
        self._size = (size, size) if isinstance(size, _NUMERIC) else tuple(size)

    def forward(self, x):
        return _center_crop(x, self._size)


class RandomResizedCrop(Block):
    """A random crop of area ``scale`` times the image's and aspect ratio in ``ratio`` (log-uniform),
    resized to ``size``; after 10 misses, the centre crop (MXNet's ``image.random_size_crop``)."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        super().__init__()
        _check_interpolation(interpolation)
        self._size = (size, size) if isinstance(size, _NUMERIC) else tuple(size)
        self._scale, self._ratio = scale, ratio

    def forward(self, x):
        h, w, _ = x.shape
        area = (self._scale, 1.0) if isinstance(self._scale, _NUMERIC) else self._scale
        for _ in range(10):
            target_area = random.uniform(area[0], area[1]) * h * w
            log_ratio = (np.log(self._ratio[0]), np.log(self._ratio[1]))
            new_ratio = np.exp(random.uniform(*log_ratio))
            new_w = int(round(np.sqrt(target_area * new_ratio)))
            new_h = int(round(np.sqrt(target_area / new_ratio)))
            if new_w <= w and new_h <= h:
                x0 = random.randint(0, w - new_w)
                y0 = random.randint(0, h - new_h)
                return _fixed_crop(x, x0, y0, new_w, new_h, self._size)
        return _center_crop(x, self._size)


class _RandomFlip(HybridBlock):
    _axis_from_end = 0

    def hybrid_forward(self, F, x):
        draw = F.random.uniform(shape=(1,)) < 0.5
        return _image.flip(x, x.ndim - self._axis_from_end, draw)


class RandomFlipLeftRight(_RandomFlip):
    """Flip an (H, W, C) image left-right with probability 0.5."""

    _axis_from_end = 2


class RandomFlipTopBottom(_RandomFlip):
    """Flip an (H, W, C) image top-bottom with probability 0.5."""

    _axis_from_end = 3


class _RandomColor(HybridBlock):
    """One colour op with a factor drawn uniformly from ``[max(0, 1 - amount), 1 + amount]``."""

    _which = 0      # _color.adjust's op: brightness, contrast, saturation, hue

    def __init__(self, amount):
        super().__init__()
        self._args = (max(0, 1 - amount), 1 + amount)

    def hybrid_forward(self, F, x):
        return _color.adjust(x, F.random.uniform(*self._args, shape=(1,)), which=self._which)


class RandomBrightness(_RandomColor):
    """``x * a`` (an (H, W, 3) image)."""


class RandomContrast(_RandomColor):
    """``x * a + (1 - a) * mean grey``."""

    _which = 1


class RandomSaturation(_RandomColor):
    """Towards (or away from) grey by ``a`` (MXNet's grey: see ``_color.py``)."""

    _which = 2


class RandomHue(_RandomColor):
    """The hue turned by ``a`` of a full turn."""

    _which = 3


class RandomColorJitter(HybridBlock):
    """Brightness, contrast and saturation by ``1 + u * amount`` and hue by ``u * hue`` (``u`` uniform in
    [-1, 1]; an amount of 0 skips that op), the four in a random order."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self._args = (brightness, contrast, saturation, hue)

    def hybrid_forward(self, F, x):
        return _color.color_jitter(x, F.random.uniform(-1, 1, shape=(4,)), F.random.uniform(shape=(4,)),
                                   amounts=tuple(float(a) for a in self._args))


class RandomLighting(HybridBlock):
    """AlexNet's PCA lighting noise, the three weights drawn from ``N(0, alpha)``."""

    def __init__(self, alpha):
        super().__init__()
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return _color.adjust_lighting(x, F.random.normal(0, self._alpha, shape=(3,)))


class RandomApply(Sequential):
    """``transforms`` with probability ``p`` (Python's ``random``), else the input unchanged."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms, self.p = transforms, p

    def forward(self, x):
        if self.p < random.random():
            return x
        return self.transforms(x)
