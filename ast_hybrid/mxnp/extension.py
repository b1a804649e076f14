"""``mx.npx``: MXNet 1.9.1's numpy extension, the switches (``set_np``/``reset_np``/``is_np_array``), the
contexts and the neural-network operators on ``mx.np`` arrays.  Each operator is the MXNet operator of the
same computation (``ast_hybrid.ops``; ``npx.fully_connected`` is ``FullyConnected``...) giving ``mx.np``
arrays."""

from __future__ import annotations

from ast_hybrid import ops as _ops
from ast_hybrid.core.context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus  # noqa: F401
from ast_hybrid.core.npmode import MODE
from ast_hybrid.mxnp import npx_random as random  # noqa: F401  (npx.random)
from ast_hybrid.mxnp._base import missing_getattr, np_op

__all__ = ["set_np", "reset_np", "is_np_array", "is_np_shape", "waitall", "cpu", "gpu", "cpu_pinned", "num_gpus",
           "current_context", "Context", "save", "load"]

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
