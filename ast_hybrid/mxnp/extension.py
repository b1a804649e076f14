"""``mx.npx``: MXNet 1.9.1's numpy extension, the switches (``set_np``/``reset_np``/``is_np_array``), the
contexts and the neural-network operators on ``mx.np`` arrays.  Each operator is the MXNet operator of the
same computation (``ast_hybrid.ops``; ``npx.fully_connected`` is ``FullyConnected``...) giving ``mx.np``
arrays."""

from __future__ import annotations

import numpy as np

from ast_hybrid import ops as _ops
from ast_hybrid.core.context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus  # noqa: F401
from ast_hybrid.core.npmode import MODE
from ast_hybrid.mxnp import npx_random as random  # noqa: F401  (npx.random)
from ast_hybrid.mxnp._base import missing_getattr, np_op

__all__ = ["set_np", "reset_np", "is_np_array", "is_np_shape", "waitall", "cpu", "gpu", "cpu_pinned", "num_gpus",
           "current_context", "Context", "save", "load", "reshape"]

# npx's name -> the MXNet operator computing it
OPERATORS = {
    "activation": "Activation", "arange_like": "contrib.arange_like", "batch_dot": "batch_dot",
    "batch_flatten": "Flatten", "batch_norm": "BatchNorm", "cast": "cast", "convolution": "Convolution",
    "deconvolution": "Deconvolution", "dropout": "Dropout", "embedding": "Embedding", "erf": "erf",
    "erfinv": "erfinv", "fully_connected": "FullyConnected", "gamma": "gamma", "gammaln": "gammaln",
    "gather_nd": "gather_nd", "layer_norm": "LayerNorm", "leaky_relu": "LeakyReLU", "log_softmax": "log_softmax",
    "one_hot": "one_hot", "pick": "pick", "pooling": "Pooling", "relu": "relu", "reshape_like": "reshape_like",
    "rnn": "RNN", "roi_pooling": "ROIPooling", "sequence_mask": "SequenceMask", "shape_array": "shape_array",
    "sigmoid": "sigmoid", "slice": "slice", "smooth_l1": "smooth_l1", "softmax": "softmax", "topk": "topk",
}


def _find(path):
    obj = _ops
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


_g = globals()
for _name, _path in OPERATORS.items():
    _g[_name] = np_op(_find(_path), _name)
__all__ += list(OPERATORS)


def _npx_shape(src, target):
    """MXNet's ``NumpyXReshapeInferShape`` (src/operator/numpy/np_matrix_op.cc): -1 inferred, -2 copied, -3 a
    size-1 dimension dropped, -4 the rest copied, -5 two merged, -6 one split in the next two values."""
    from ast_hybrid.core.errors import MXNetError

    def fail(why=""):
        raise MXNetError(f"Cannot reshape array of shape {tuple(src)} into shape {tuple(target)}{why}")

    size = int(np.prod(src, dtype=np.int64))
    if all(t >= 0 for t in target):
        if int(np.prod(target, dtype=np.int64)) != size:
            fail()
        return tuple(target)
    out, unknown, known, j, i = [], -1, 1, 0, 0
    while i < len(target):
        t = target[i]
        if t < -6:
            fail(": dimension size must be greater than -6")
        if t == -1:
            if unknown >= 0:
                fail(": one and only one dim can be inferred")
            unknown = len(out)
            out.append(-1)
            j += 1
        elif t == -2:
            if j >= len(src):
                fail(": unmatching dimension of proposed new shape")
            known *= src[j]
            out.append(src[j])
            j += 1
        elif t == -3:
            if j >= len(src) or src[j] != 1:
                fail(": -3 index should only be used to skip dimension size 1")
            j += 1
        elif t == -4:
            for d in src[j:]:
                known *= d
                out.append(d)
            j = len(src)
        elif t == -5:
            if j >= len(src) - 1:
                fail(": not enough dimensions left for the product")
            known *= src[j] * src[j + 1]
            out.append(src[j] * src[j + 1])
            j += 2
        elif t == -6:
            if i + 2 >= len(target) or j >= len(src):
                fail()
            d0, d1, d2 = src[j], target[i + 1], target[i + 2]
            j, i = j + 1, i + 2
            if d1 == -1 and d2 == -1:
                fail(": split dims cannot both be -1")
            d1 = d0 // d2 if d1 == -1 else d1
            d2 = d0 // d1 if d2 == -1 else d2
            if d1 * d2 != d0:
                fail(f": split dims {d1}, {d2} do not divide original dim {d0}")
            known *= d0
            out += [d1, d2]
        else:
            known *= t
            out.append(t)
            j += 1
        i += 1
    if unknown >= 0:
        if known == 0 or size % known:
            fail()
        out[unknown] = size // known
    if int(np.prod(out, dtype=np.int64)) != size:
        fail()
    return tuple(out)


def reshape(a, newshape, reverse=False, order="C"):
    """MXNet's ``npx.reshape``: numpy's reshape with MXNet's special values in ``newshape`` (-2 copy, -3 drop a
    size-1 dimension, -4 copy the rest, -5 merge two, -6 split one), read from the right with ``reverse``."""
    from ast_hybrid.core.ndarray import ARRAYS, ndarray

    if order != "C":
        raise NotImplementedError(f"npx.reshape: order={order!r} is not supported (MXNet: 'C' only)")
    target = (newshape,) if isinstance(newshape, int) else tuple(int(d) for d in newshape)
    src = tuple(a.shape)
    if reverse:
        shape = _npx_shape(src[::-1], target[::-1])[::-1]
    else:
        shape = _npx_shape(src, target)
    return a.reshape(shape) if a.__class__ in ARRAYS else ndarray(a).reshape(shape)


def set_np(shape=True, array=True):
    """Turn numpy semantics on (or off) in this thread: Gluon then creates and returns ``mx.np`` arrays."""
    if not shape and array:
        raise ValueError("NumPy Shape semantics is required in using NumPy array semantics.")
    MODE.array = bool(array)
    MODE.shape = bool(shape)


def reset_np():
    """Numpy semantics off in this thread (MXNet's legacy NDArray semantics)."""
    set_np(shape=False, array=False)


def is_np_array():
    return MODE.array


def is_np_shape():
    return MODE.shape


def waitall():
    """Wait for every computation (jax's arrays are ready when read: a no-op but for pending effects)."""
    import jax

    jax.effects_barrier()


def save(file, arr):
    """An array, a list or a dict of them in MXNet's file format, as MXNet writes under numpy semantics."""
    from ast_hybrid.core.ndarray import ARRAYS
    from ast_hybrid.io.params_file import save as _save

    _save(file, [arr] if arr.__class__ in ARRAYS else arr, np_shape=True)


def load(file):
    """What :func:`save` (or MXNet's ``npx.save``/``nd.save``) wrote: a list, or a dict, of ``mx.np`` arrays."""
    import jax.numpy as jnp

    from ast_hybrid.core.ndarray import ndarray
    from ast_hybrid.io.params_file import load as _load

    loaded = _load(file)
    if isinstance(loaded, dict):
        return {k: ndarray(jnp.asarray(v)) for k, v in loaded.items()}
    return [ndarray(jnp.asarray(v)) for v in loaded]


__getattr__ = missing_getattr("mxnet.numpy_extension", __name__)
