"""``mxnet.ndarray.image`` (``mx.nd.image``): MXNet 1.9.1's image operators on (H, W, C) / (N, H, W, C)
NDArrays, which GluonCV's transforms call (``to_tensor``, ``normalize``...), from the ops behind
``gluon.data.vision.transforms`` (``tests/mxnet/test_image.py`` compares them with MXNet).

``to_tensor``, ``normalize``, ``resize`` (``interp`` 1 on any image; 0, 2 and 3 to shrink on one (H, W, C)
image, through ``mxnet.image.imresize``), ``flip_left_right``, ``flip_top_bottom``, ``crop`` and
``adjust_lighting`` are here; the random ones are errors naming the MXNet API (``gluon.data.vision.transforms``'
``Random*`` blocks do that work).  The module is put on ``ast_hybrid.nd`` as ``image`` by the compatibility
package.
"""

from __future__ import annotations

from ast_hybrid.gluon.data.vision import _color, _image
from ast_hybrid.core.errors import unsupported

__all__ = ["to_tensor", "normalize", "resize", "flip_left_right", "flip_top_bottom", "crop", "adjust_lighting"]

to_tensor = _image.to_tensor
normalize = _image.normalize
adjust_lighting = _color.adjust_lighting


def resize(data, size=(), keep_ratio=False, interp=1, out=None, name=None):
    """``data`` resized to ``size`` (``(w, h)``; an int: a square, or with ``keep_ratio`` the shorter side)."""
    h, w = data.shape[-3], data.shape[-2]
    width, height = _image.resize_size(size, keep_ratio, h, w)
    if int(interp) == 1:
        result = _image.resize_hwc(data, width=width, height=height)
    elif data.ndim == 3:
        from ast_hybrid.image.image import imresize

        result = imresize(data, width, height, interp=interp)
    else:
        raise unsupported("mxnet.ndarray.image", f"resize(interp={interp}) of a batch",
                          "only interp=1 resizes a batch (N, H, W, C) in ast-hybrid; resize one image at a time")
    if out is not None:
        out._arr = result._arr.astype(out._arr.dtype)
        return out
    return result


def flip_left_right(data, out=None, name=None):
    """``data`` mirrored along its width."""
    from ast_hybrid import nd

    return nd.flip(data, axis=data.ndim - 2, out=out)


def flip_top_bottom(data, out=None, name=None):
    """``data`` mirrored along its height."""
    from ast_hybrid import nd

    return nd.flip(data, axis=data.ndim - 3, out=out)


def crop(data, x, y, width, height, out=None, name=None):
    """The ``width`` x ``height`` window at column ``x``, row ``y`` of each image."""
    from ast_hybrid import nd

    result = data[y:y + height, x:x + width] if data.ndim == 3 else data[:, y:y + height, x:x + width]
    return nd.identity(result, out=out) if out is not None else result
