"""``mxnet.image.image``: MXNet 1.9.1's image functions and augmenters, on (H, W, C) NDArrays.

Implemented as MXNet's (``tests/mxnet/test_image.py`` compares them with MXNet 1.9.1):

- ``imdecode``/``imread``: decoded with Pillow where MXNet uses OpenCV (``pip install 'ast-hybrid[image]'``);
  PNG and BMP give MXNet's pixels, JPEG may differ by the decoders' rounding;
- ``imresize(src, w, h, interp)``: every OpenCV interpolation MXNet takes, ``0`` (nearest), ``1`` (bilinear),
  ``2`` (bicubic), ``3`` (area, shrinking or growing) and ``4`` (Lanczos-4), as OpenCV 3.4 computes them, uint8
  bit for bit (``9``/``10``, MXNet's automatic and random choices, resolve to one of them first);
- ``scale_down``, ``resize_short``, ``fixed_crop``, ``random_crop``, ``center_crop``, ``random_size_crop``
  (Python's ``random``, as MXNet), ``color_normalize`` (in place, as MXNet), ``copyMakeBorder`` (OpenCV's
  border types 0-4), ``_get_interp_method``;
- the augmenters (``Augmenter``... ``CastAug``) and ``CreateAugmenter``, which compose the above.

``imrotate``, ``random_rotate`` and ``ImageIter`` raise ``NotSupported`` naming the MXNet API.

Over 600 lines: MXNet's ``mxnet/image/image.py`` is one module of these functions and augmenters, and
scripts import them from it by name; kept as one module, in MXNet's order.
"""

from __future__ import annotations

import json
import math
import random
import warnings
from numbers import Number

import numpy as np

from ast_hybrid import nd
from ast_hybrid.core.errors import unsupported
from ast_hybrid.core.ndarray import NDArray
from ast_hybrid.ops._core import from_host, op

numeric_types = (float, int, np.generic)     # mxnet.base.numeric_types (mxnet.base is the door's)

__all__ = ["imread", "imresize", "imdecode", "scale_down", "copyMakeBorder", "resize_short", "fixed_crop",
           "random_crop", "center_crop", "color_normalize", "random_size_crop", "imrotate", "random_rotate",
           "Augmenter", "SequentialAug", "ResizeAug", "ForceResizeAug", "RandomCropAug", "RandomSizedCropAug",
           "CenterCropAug", "RandomOrderAug", "BrightnessJitterAug", "ContrastJitterAug", "SaturationJitterAug",
           "HueJitterAug", "ColorJitterAug", "LightingAug", "ColorNormalizeAug", "RandomGrayAug",
           "HorizontalFlipAug", "CastAug", "CreateAugmenter", "ImageIter"]


def imread(filename, flag=1, to_rgb=True, out=None):
    """The image file as a uint8 NDArray (H, W, 3) (RGB; BGR with ``to_rgb=False``) or (H, W, 1) with
    ``flag=0``."""
    from ast_hybrid.gluon.data.vision._image import imread as _imread

    return _out(_imread(filename, flag, to_rgb), out)


def imdecode(buf, flag=1, to_rgb=True, out=None):
    """An encoded image (bytes, bytearray, a uint8 numpy array or NDArray) as ``imread`` gives it."""
    import io

    if isinstance(buf, NDArray):
        buf = buf.asnumpy().astype(np.uint8).tobytes()
    elif isinstance(buf, np.ndarray):
        buf = buf.astype(np.uint8, copy=False).tobytes()
    elif not isinstance(buf, (bytes, bytearray)):
        raise ValueError("buf must be of type bytes, bytearray or numpy.ndarray,"
                         "if you would like to input type str, please convert to bytes")
    try:
        from PIL import Image
    except ImportError as e:
        raise ImportError("mxnet.image.imdecode decodes images with Pillow in ast-hybrid (MXNet uses OpenCV): "
                          "pip install 'ast-hybrid[image]' (or pip install pillow)") from e
    with Image.open(io.BytesIO(bytes(buf))) as im:
        arr = np.asarray(im.convert("L"))[:, :, None] if flag == 0 else np.asarray(im.convert("RGB"))
    if flag != 0 and not to_rgb:
        arr = arr[:, :, ::-1]
    return _out(nd.array(np.ascontiguousarray(arr), dtype=np.uint8), out)


def _out(result, out):
    if out is None:
        return result
    out._arr = result._arr.astype(out._arr.dtype)
    return out


def _nearest_index(src, dst):
    """OpenCV's INTER_NEAREST source index for each of ``dst`` output pixels."""
    return np.minimum(np.floor(np.arange(dst) * (np.float64(src) / dst)).astype(np.int64), src - 1)


_CUBIC_A = np.float32(-0.75)


def _cubic_taps(src, dst):
    """OpenCV's INTER_CUBIC taps for ``dst`` outputs from ``src`` inputs: the 4 source indices (clamped to the
    edge) and their float32 weights (Keys' kernel, a = -0.75) for each output pixel."""
    f = ((np.arange(dst) + 0.5) * (np.float64(src) / dst) - 0.5).astype(np.float32)
    start = np.floor(f).astype(np.int64)
    x = (f - start).astype(np.float32)
    a, one = _CUBIC_A, np.float32(1)
    c0 = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a
    c1 = ((a + 2) * x - (a + 3)) * x * x + 1
    c2 = ((a + 2) * (one - x) - (a + 3)) * (one - x) * (one - x) + 1
    weights = np.stack([c0, c1, c2, one - c0 - c1 - c2], -1).astype(np.float32)
    return np.clip(start[:, None] + np.arange(-1, 3), 0, src - 1), weights


def _host_or_traced(data):
    from ast_hybrid.gluon.data.vision._image import host_or_traced

    return host_or_traced(data)


def _to_uint8(xp, values):
    return xp.clip(xp.rint(values), 0, 255).astype(np.uint8)


_S45 = 0.70710678118654752440084436210485
_LANCZOS_CS = ((1, 0), (-_S45, -_S45), (0, 1), (_S45, -_S45), (-1, 0), (_S45, _S45), (0, -1), (-_S45, _S45))


def _lanczos_weights(x):
    """OpenCV's 8 Lanczos-4 weights for a fractional offset ``x`` (computed in double, stored and
    normalised in float32)."""
    x = float(x)
    if x < np.finfo(np.float32).eps:
        return np.eye(8, dtype=np.float32)[3]
    y0 = -(x + 3) * math.pi * 0.25
    s0, c0 = math.sin(y0), math.cos(y0)
    weights = np.array([(cs * s0 + cc * c0) / ((-(x + 3 - i) * math.pi * 0.25) ** 2)
                        for i, (cs, cc) in enumerate(_LANCZOS_CS)], np.float32)
    total = np.float32(0)
    for v in weights:
        total = np.float32(total + v)
    return (weights * (np.float32(1) / total)).astype(np.float32)


def _lanczos_taps(src, dst):
    """OpenCV's INTER_LANCZOS4 taps: 8 source indices (clamped to the edge) and weights per output pixel."""
    f = ((np.arange(dst) + 0.5) * (np.float64(src) / dst) - 0.5).astype(np.float32)
    start = np.floor(f).astype(np.int64)
    x = (f - start).astype(np.float32)
    return np.clip(start[:, None] + np.arange(-3, 5), 0, src - 1), np.stack([_lanczos_weights(v) for v in x])


_TAPS = {"cubic": _cubic_taps, "lanczos": _lanczos_taps}


@op
def _resize_separable(data, width, height, kind):
    """(H, W, C) bicubic (``kind='cubic'``) or Lanczos-4 as OpenCV 3.4 (MXNet 1.9.1's): float images in
    float32, columns then rows, each a sum of the taps in order; uint8 in 11-bit fixed point across, the rows
    pass in float32 rounded to nearest (OpenCV's SIMD path for cubic; the same bits as its integer pass for
    Lanczos on the sizes measured), saturated.  A concrete image is computed on the host (numpy; no compile
    per size)."""
    xp, data = _host_or_traced(data)
    xi, xw = _TAPS[kind](data.shape[1], width)
    yi, yw = _TAPS[kind](data.shape[0], height)
    if data.dtype == np.uint8:
        d = data.astype(np.int32)
        ax = np.round(xw * 2048).astype(np.int32)
        rows = sum(d[:, xi[:, k], :] * ax[None, :, k, None] for k in range(xi.shape[1])).astype(np.float32)
        beta = np.round(yw * 2048).astype(np.float32) * np.float32(1.0 / (2048 * 2048))
    else:
        d = data.astype(np.float32)
        rows = d[:, xi[:, 0], :] * xw[None, :, 0, None]
        for k in range(1, xi.shape[1]):
            rows = rows + d[:, xi[:, k], :] * xw[None, :, k, None]
        beta = yw
    out = rows[yi[:, 0]] * beta[:, 0, None, None]
    for k in range(1, yi.shape[1]):
        out = out + rows[yi[:, k]] * beta[:, k, None, None]
    return from_host(_to_uint8(xp, out) if data.dtype == np.uint8 else out.astype(data.dtype))


def _area_taps(src, dst):
    """OpenCV's INTER_AREA taps for shrinking ``src`` pixels to ``dst``: per output, the source indices it
    covers in increasing order and their float32 weights (a partly covered cell by the covered fraction),
    padded with weight 0 to the same count."""
    scale = src / dst
    taps = []
    for d in range(dst):
        lo, hi = d * scale, (d + 1) * scale
        cell = min(scale, src - lo)
        first, last = math.ceil(lo), min(math.floor(hi), src - 1)
        first = min(first, last)
        row = [(first - 1, (first - lo) / cell)] if first - lo > 1e-3 else []
        row += [(i, 1.0 / cell) for i in range(first, last)]
        if hi - last > 1e-3:
            row.append((last, min(hi - last, 1.0, cell) / cell))
        taps.append(row)
    count = max(len(row) for row in taps)
    index = np.array([[i for i, _ in row] + [0] * (count - len(row)) for row in taps], np.int32)
    weight = np.array([[w for _, w in row] + [0.0] * (count - len(row)) for row in taps], np.float32)
    return index, weight


def _area_enlarge_taps(src, dst):
    """OpenCV's INTER_AREA taps where a side grows: bilinear between source ``floor(d * scale)`` and the next,
    weighted by the part of the output cell past the source cell's end; past the last pixel, that pixel."""
    s = np.floor(np.arange(dst) * (np.float64(src) / dst)).astype(np.int64)
    f = ((np.arange(dst) + 1) - (s + 1) * (np.float64(dst) / src)).astype(np.float32)
    f = np.where(f <= 0, np.float32(0), f - np.floor(f)).astype(np.float32)
    last = s >= src - 1
    return np.minimum(s, src - 1), np.minimum(s + 1, src - 1), np.where(last, np.float32(0), f)


@op
def _resize_area(data, width, height):
    """(H, W, C) by INTER_AREA as OpenCV 3.4.  Shrinking both sides: integer factors average each block
    (uint8 2x2 blocks rounded half up, other blocks ``sum * (1/area)`` rounded to nearest, as OpenCV's fast
    paths); other factors weigh the covered cells (float32, across then down, accumulated tap by tap as
    OpenCV does).  A side growing: OpenCV's area-weighted bilinear on both sides (uint8 in its 11-bit fixed
    point).  A concrete image is computed on the host (numpy; no compile per size)."""
    xp, data = _host_or_traced(data)
    h, w = data.shape[0], data.shape[1]
    if width > w or height > h:
        x0, x1, fx = _area_enlarge_taps(w, width)
        y0, y1, fy = _area_enlarge_taps(h, height)
        if data.dtype != np.uint8:
            d = data.astype(np.float32)
            rows = d[:, x0] * (1 - fx)[None, :, None] + d[:, x1] * fx[None, :, None]
            out = rows[y0] * (1 - fy)[:, None, None] + rows[y1] * fy[:, None, None]
            return from_host(out.astype(data.dtype))
        ax = np.round((1 - fx) * 2048).astype(np.int32)[None, :, None]
        ay = np.round((1 - fy) * 2048).astype(np.int32)[:, None, None]
        d = data.astype(np.int32)
        rows = d[:, x0] * ax + d[:, x1] * (2048 - ax)
        out = (((ay * (rows[y0] >> 4)) >> 16) + (((2048 - ay) * (rows[y1] >> 4)) >> 16) + 2) >> 2
        return from_host(xp.clip(out, 0, 255).astype(np.uint8))
    fy, fx = h // height, w // width
    if fy * height == h and fx * width == w:
        blocks = data.reshape(height, fy, width, fx, data.shape[2])
        if data.dtype == np.uint8:
            total = blocks.astype(np.int32).sum((1, 3))
            if fy == fx == 2:
                return from_host(((total + 2) >> 2).astype(np.uint8))
            return from_host(_to_uint8(xp, total.astype(np.float32) * np.float32(1 / (fy * fx))))
        total = blocks[:, 0, :, 0]
        for k in range(1, fy * fx):
            total = total + blocks[:, k // fx, :, k % fx]
        return from_host((total * np.float32(1 / (fy * fx))).astype(data.dtype))
    # OpenCV's order: each row's sum across, then the rows' weighted sum, each accumulated tap by tap
    d = data.astype(np.float32)
    xi, xw = _area_taps(w, width)
    rows = d[:, xi[:, 0], :] * xw[None, :, 0, None]
    for k in range(1, xi.shape[1]):
        rows = rows + d[:, xi[:, k], :] * xw[None, :, k, None]
    yi, yw = _area_taps(h, height)
    out = rows[yi[:, 0]] * yw[:, 0, None, None]
    for k in range(1, yi.shape[1]):
        out = out + rows[yi[:, k]] * yw[:, k, None, None]
    return from_host(_to_uint8(xp, out) if data.dtype == np.uint8 else out.astype(data.dtype))


@op
def _resize_nearest(data, width, height):
    """(H, W, C) by OpenCV's INTER_NEAREST (on the host for a concrete image)."""
    _, data = _host_or_traced(data)
    return from_host(data[_nearest_index(data.shape[0], height)][:, _nearest_index(data.shape[1], width)])


def imresize(src, w, h, interp=1, out=None):
    """``src`` (H, W, C) resized to ``h`` x ``w`` (``interp`` 0: nearest, 1: bilinear, 2: bicubic, 3: area,
    4: Lanczos-4; see the module doc)."""
    from ast_hybrid.gluon.data.vision._image import resize_hwc

    interp = int(interp)
    if interp in (2, 4):
        return _out(_resize_separable(src, width=int(w), height=int(h), kind="cubic" if interp == 2 else "lanczos"),
                    out)
    if interp == 3:
        return _out(_resize_area(src, width=int(w), height=int(h)), out)
    if interp == 0:
        result = _resize_nearest(src, width=int(w), height=int(h))
    elif interp == 1:
        result = resize_hwc(src, width=int(w), height=int(h))
    else:
        raise ValueError(f"mxnet.image.imresize: unknown interp {interp} (OpenCV's 0-4)")
    return _out(result, out)


def scale_down(src_size, size):
    """``size`` (w, h) shrunk, keeping its aspect ratio, until it fits in ``src_size`` (w, h)."""
    from ast_hybrid.gluon.data.vision.transforms import _scale_down

    return _scale_down(src_size, size)


# OpenCV's border types -> numpy.pad modes
_BORDERS = {0: "constant", 1: "edge", 2: "symmetric", 3: "wrap", 4: "reflect"}


def copyMakeBorder(src, top, bot, left, right, type=0, value=0.0, values=(), out=None):  # noqa: A002,N802
    """``src`` (H, W, C) padded by ``top``/``bot`` rows and ``left``/``right`` columns, as OpenCV's
    ``copyMakeBorder``: ``type`` 0 constant (``value``, or ``values`` per channel), 1 replicate, 2 reflect,
    3 wrap, 4 reflect-101."""
    import jax.numpy as jnp

    if type not in _BORDERS:
        raise ValueError(f"mxnet.image.copyMakeBorder: border type {type} is not one of OpenCV's 0-4")
    arr = src._arr
    widths = ((top, bot), (left, right)) + ((0, 0),) * (arr.ndim - 2)
    if type != 0:
        return _out(NDArray(jnp.pad(arr, widths, mode=_BORDERS[type])), out)
    fill = np.asarray(values if len(values) else [value] * (arr.shape[2] if arr.ndim == 3 else 1), np.float64)
    if np.issubdtype(np.dtype(arr.dtype), np.integer):
        info = np.iinfo(np.dtype(arr.dtype))
        fill = np.clip(np.round(fill), info.min, info.max)
    padded = jnp.pad(arr, widths)
    mask = np.zeros(padded.shape[:2], bool)
    mask[top:top + arr.shape[0], left:left + arr.shape[1]] = True
    filled = jnp.where(mask.reshape(mask.shape + (1,) * (arr.ndim - 2)), padded,
                       jnp.asarray(fill.reshape((1, 1, -1) if arr.ndim == 3 else ()), dtype=arr.dtype))
    return _out(NDArray(filled), out)


def _get_interp_method(interp, sizes=()):
    """MXNet's interpolation choice: 9 is bicubic to enlarge, area to shrink, else bilinear (bicubic without
    ``sizes`` = (old h, old w, new h, new w)); 10 is a random one of 0-4."""
    if interp == 9:
        if not sizes:
            return 2
        assert len(sizes) == 4
        oh, ow, nh, nw = sizes
        if nh > oh and nw > ow:
            return 2
        if nh < oh and nw < ow:
            return 3
        return 1
    if interp == 10:
        return random.randint(0, 4)
    if interp not in (0, 1, 2, 3, 4):
        raise ValueError("Unknown interp method %d" % interp)
    return interp


def resize_short(src, size, interp=2):
    """``src`` resized so that its shorter side is ``size`` (the other by integer division)."""
    h, w, _ = src.shape
    new_h, new_w = (size * h // w, size) if h > w else (size, size * w // h)
    return imresize(src, new_w, new_h, interp=_get_interp_method(interp, (h, w, new_h, new_w)))


def fixed_crop(src, x0, y0, w, h, size=None, interp=2):
    """The ``w`` x ``h`` crop at (``x0``, ``y0``), resized to ``size`` (w, h) if given and different."""
    out = src[y0:y0 + h, x0:x0 + w]
    if size is not None and (w, h) != size:
        out = imresize(out, *size, interp=_get_interp_method(interp, (h, w, size[1], size[0])))
    return out


def random_crop(src, size, interp=2):
    """A crop at a random place, of ``size`` scaled down to fit, resized to ``size``: ``(crop, (x0, y0, w, h))``."""
    h, w, _ = src.shape
    new_w, new_h = scale_down((w, h), size)
    x0 = random.randint(0, w - new_w)
    y0 = random.randint(0, h - new_h)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def center_crop(src, size, interp=2):
    """As ``random_crop``, at the centre."""
    h, w, _ = src.shape
    new_w, new_h = scale_down((w, h), size)
    x0, y0 = int((w - new_w) / 2), int((h - new_h) / 2)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def color_normalize(src, mean, std=None):
    """``src`` minus ``mean``, divided by ``std``, in place (``src`` itself is returned), as MXNet's."""
    if mean is not None:
        src -= mean
    if std is not None:
        src /= std
    return src


def random_size_crop(src, size, area, ratio, interp=2, **kwargs):
    """A crop of a random area fraction in ``area`` and log-uniform aspect ratio in ``ratio``, resized to
    ``size``; after 10 draws that do not fit, the centre crop.  ``(crop, (x0, y0, w, h))``."""
    h, w, _ = src.shape
    if "min_area" in kwargs:
        warnings.warn("`min_area` is deprecated. Please use `area` instead.", DeprecationWarning)
        area = kwargs.pop("min_area")
    assert not kwargs, "unexpected keyword arguments for `random_size_crop`."
    if isinstance(area, numeric_types):
        area = (area, 1.0)
    for _ in range(10):
        target_area = random.uniform(area[0], area[1]) * h * w
        new_ratio = np.exp(random.uniform(np.log(ratio[0]), np.log(ratio[1])))
        new_w = int(round(np.sqrt(target_area * new_ratio)))
        new_h = int(round(np.sqrt(target_area / new_ratio)))
        if new_w <= w and new_h <= h:
            x0 = random.randint(0, w - new_w)
            y0 = random.randint(0, h - new_h)
            return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)
    return center_crop(src, size, interp)


_ROTATE_WHY = "image rotation (BilinearSampler on a rotated grid) is not implemented in ast-hybrid"


def imrotate(src, rotation_degrees, zoom_in=False, zoom_out=False):
    """Not supported here (raises ``NotSupported``)."""
    raise unsupported("mxnet.image", "imrotate", _ROTATE_WHY)


def random_rotate(src, angle_limits, zoom_in=False, zoom_out=False):
    """Not supported here (raises ``NotSupported``)."""
    raise unsupported("mxnet.image", "random_rotate", _ROTATE_WHY)


class Augmenter:
    """Base of the image augmenters: ``aug(src)`` gives the augmented image; ``dumps()`` its JSON."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        for k, v in self._kwargs.items():
            if isinstance(v, NDArray):
                v = v.asnumpy()
            if isinstance(v, np.ndarray):
                self._kwargs[k] = v.tolist()

    def dumps(self):
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, src):
        raise NotImplementedError("Must override implementation.")


class SequentialAug(Augmenter):
    """The augmenters ``ts`` one after another."""

    def __init__(self, ts):
        super().__init__()
        self.ts = ts

    def dumps(self):
        return [self.__class__.__name__.lower(), [x.dumps() for x in self.ts]]

    def __call__(self, src):
        for aug in self.ts:
            src = aug(src)
        return src


class RandomOrderAug(SequentialAug):
    """The augmenters ``ts`` in a random order (``random.shuffle`` of the list itself, as MXNet)."""

    def __call__(self, src):
        random.shuffle(self.ts)
        return super().__call__(src)


class _SizedAug(Augmenter):
    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size, self.interp = size, interp


class ResizeAug(_SizedAug):
    """``resize_short(src, size, interp)``."""

    def __call__(self, src):
        return resize_short(src, self.size, self.interp)


class ForceResizeAug(_SizedAug):
    """Resize to ``size`` (w, h), whatever the aspect ratio."""

    def __call__(self, src):
        sizes = (src.shape[0], src.shape[1], self.size[1], self.size[0])
        return imresize(src, *self.size, interp=_get_interp_method(self.interp, sizes))


class RandomCropAug(_SizedAug):
    """``random_crop(src, size, interp)``'s crop."""

    def __call__(self, src):
        return random_crop(src, self.size, self.interp)[0]


class CenterCropAug(_SizedAug):
    """``center_crop(src, size, interp)``'s crop."""

    def __call__(self, src):
        return center_crop(src, self.size, self.interp)[0]


class RandomSizedCropAug(Augmenter):
    """``random_size_crop(src, size, area, ratio, interp)``'s crop."""

    def __init__(self, size, area, ratio, interp=2, **kwargs):
        super().__init__(size=size, area=area, ratio=ratio, interp=interp)
        self.size = size
        if "min_area" in kwargs:
            warnings.warn("`min_area` is deprecated. Please use `area` instead.", DeprecationWarning)
            area = kwargs.pop("min_area")
        self.area, self.ratio, self.interp = area, ratio, interp
        assert not kwargs, "unexpected keyword arguments for `RandomSizedCropAug`."

    def __call__(self, src):
        return random_size_crop(src, self.size, self.area, self.ratio, self.interp)[0]


_GRAY = ((0.299, 0.587, 0.114),)


class BrightnessJitterAug(Augmenter):
    """``src`` times ``1 + uniform(-brightness, brightness)``, in place."""

    def __init__(self, brightness):
        super().__init__(brightness=brightness)
        self.brightness = brightness

    def __call__(self, src):
        src *= 1.0 + random.uniform(-self.brightness, self.brightness)
        return src


class _GrayJitterAug(Augmenter):
    """``src * alpha + (1 - alpha) * grey`` in place, ``alpha`` = ``1 + uniform(-amount, amount)``; the grey of
    ``_gray(src * coef)`` (MXNet's luma weights)."""

    _kind = ""

    def __init__(self, amount):
        super().__init__(**{self._kind: amount})
        setattr(self, self._kind, amount)
        self.coef = nd.array([_GRAY])

    def __call__(self, src):
        amount = getattr(self, self._kind)
        alpha = 1.0 + random.uniform(-amount, amount)
        gray = self._gray(src * self.coef, alpha)
        src *= alpha
        src += gray
        return src


class ContrastJitterAug(_GrayJitterAug):
    """Scaled by ``alpha`` about the image's mean grey level."""

    _kind = "contrast"

    @staticmethod
    def _gray(weighted, alpha):
        return 3.0 * (1.0 - alpha) / weighted.size * nd.sum(weighted)


class SaturationJitterAug(_GrayJitterAug):
    """Scaled by ``alpha`` about each pixel's grey level."""

    _kind = "saturation"

    @staticmethod
    def _gray(weighted, alpha):
        gray = nd.sum(weighted, axis=2, keepdims=True)
        gray *= 1.0 - alpha
        return gray


class HueJitterAug(Augmenter):
    """The hue turned by ``uniform(-hue, hue)`` half-turns, through YIQ (MXNet's matrices)."""

    def __init__(self, hue):
        super().__init__(hue=hue)
        self.hue = hue
        self.tyiq = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321], [0.211, -0.523, 0.311]])
        self.ityiq = np.array([[1.0, 0.956, 0.621], [1.0, -0.272, -0.647], [1.0, -1.107, 1.705]])

    def __call__(self, src):
        alpha = random.uniform(-self.hue, self.hue)
        u, w = np.cos(alpha * np.pi), np.sin(alpha * np.pi)
        turn = np.array([[1.0, 0.0, 0.0], [0.0, u, -w], [0.0, w, u]])
        return nd.dot(src, nd.array(np.dot(np.dot(self.ityiq, turn), self.tyiq).T))


class ColorJitterAug(RandomOrderAug):
    """Brightness, contrast and saturation jitters (those > 0) in a random order."""

    def __init__(self, brightness, contrast, saturation):
        ts = []
        if brightness > 0:
            ts.append(BrightnessJitterAug(brightness))
        if contrast > 0:
            ts.append(ContrastJitterAug(contrast))
        if saturation > 0:
            ts.append(SaturationJitterAug(saturation))
        super().__init__(ts)


class LightingAug(Augmenter):
    """AlexNet's PCA lighting noise (``numpy.random.normal(0, alphastd, 3)``), added in place."""

    def __init__(self, alphastd, eigval, eigvec):
        super().__init__(alphastd=alphastd, eigval=eigval, eigvec=eigvec)
        self.alphastd, self.eigval, self.eigvec = alphastd, eigval, eigvec

    def __call__(self, src):
        alpha = np.random.normal(0, self.alphastd, size=(3,))
        src += nd.array(np.dot(self.eigvec * alpha, self.eigval))
        return src


class ColorNormalizeAug(Augmenter):
    """``color_normalize(src, mean, std)``."""

    def __init__(self, mean, std):
        super().__init__(mean=mean, std=std)
        self.mean = mean if mean is None or isinstance(mean, NDArray) else nd.array(mean)
        self.std = std if std is None or isinstance(std, NDArray) else nd.array(std)

    def __call__(self, src):
        return color_normalize(src, self.mean, self.std)


class RandomGrayAug(Augmenter):
    """With probability ``p``, grey (MXNet's 0.21/0.72/0.07 weights) in all three channels."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p
        self.mat = nd.array([[0.21, 0.21, 0.21], [0.72, 0.72, 0.72], [0.07, 0.07, 0.07]])

    def __call__(self, src):
        return nd.dot(src, self.mat) if random.random() < self.p else src


class HorizontalFlipAug(Augmenter):
    """With probability ``p``, mirrored left-right."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src):
        return nd.flip(src, axis=1) if random.random() < self.p else src


class CastAug(Augmenter):
    """``src.astype(typ)``."""

    def __init__(self, typ="float32"):
        super().__init__(type=typ)
        self.typ = typ

    def __call__(self, src):
        return src.astype(self.typ)


def CreateAugmenter(data_shape, resize=0, rand_crop=False, rand_resize=False, rand_mirror=False,  # noqa: N802
                    mean=None, std=None, brightness=0, contrast=0, saturation=0, hue=0, pca_noise=0, rand_gray=0,
                    inter_method=2):
    """MXNet's standard augmenter list for ``data_shape`` (C, H, W), in MXNet's order."""
    auglist = [ResizeAug(resize, inter_method)] if resize > 0 else []
    crop_size = (data_shape[2], data_shape[1])
    if rand_resize:
        assert rand_crop
        auglist.append(RandomSizedCropAug(crop_size, 0.08, (3.0 / 4.0, 4.0 / 3.0), inter_method))
    elif rand_crop:
        auglist.append(RandomCropAug(crop_size, inter_method))
    else:
        auglist.append(CenterCropAug(crop_size, inter_method))
    if rand_mirror:
        auglist.append(HorizontalFlipAug(0.5))
    auglist.append(CastAug())
    if brightness or contrast or saturation:
        auglist.append(ColorJitterAug(brightness, contrast, saturation))
    if hue:
        auglist.append(HueJitterAug(hue))
    if pca_noise > 0:
        eigval = np.array([55.46, 4.794, 1.148])
        eigvec = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140], [-0.5836, -0.6948, 0.4203]])
        auglist.append(LightingAug(pca_noise, eigval, eigvec))
    if rand_gray > 0:
        auglist.append(RandomGrayAug(rand_gray))
    if mean is True:
        mean = nd.array([123.68, 116.28, 103.53])
    elif mean is not None:
        assert isinstance(mean, (np.ndarray, NDArray)) and mean.shape[0] in [1, 3]
    if std is True:
        std = nd.array([58.395, 57.12, 57.375])
    elif std is not None:
        assert isinstance(std, (np.ndarray, NDArray)) and std.shape[0] in [1, 3]
    if mean is not None or std is not None:
        auglist.append(ColorNormalizeAug(mean, std))
    return auglist


class ImageIter:
    """MXNet's ``image.ImageIter`` (a ``DataIter`` over .rec/.lst files): not supported here; constructing one
    raises ``NotSupported``.  ``gluon.data.vision.ImageRecordDataset`` with ``gluon.data.DataLoader`` reads the
    same files."""

    def __init__(self, *args, **kwargs):
        raise unsupported("mxnet.image", "ImageIter",
                          "MXNet's DataIter over image files is not implemented in ast-hybrid; use "
                          "gluon.data.vision.ImageRecordDataset (or ImageFolderDataset) with gluon.data.DataLoader")


Number = Number    # MXNet's module has it (numbers.Number), and code reads it from here
