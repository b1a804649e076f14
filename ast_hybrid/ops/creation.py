"""Array creation: ``array``, ``zeros``, ``ones``, ``full``, ``empty``, ``arange``, ``linspace``, ``eye``.

MXNet's defaults: dtype float32 unless given; ``array(source)`` keeps the
dtype only of an NDArray (or jax array) source, and makes float32 of Python
lists and numpy arrays alike.  ``ctx`` places the result (``gpu(0)`` needs a
jax with a GPU).  ``arange(start, stop=None, step=1.0, repeat=1)`` repeats
each value ``repeat`` times.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ast_hybrid.core.context import current_context, filled, place
from ast_hybrid.core.ndarray import NDArray
from ast_hybrid.core.storage import Storage
from ast_hybrid.ops._core import OpError, as_tuple, check, op

__all__ = ["array", "zeros", "ones", "full", "empty", "arange", "linspace", "eye", "from_numpy", "from_dlpack",
           "to_dlpack_for_read", "to_dlpack_for_write"]


def _dtype(dtype):
    return np.dtype("float32" if dtype is None else dtype)


def _place(arr, ctx):
    """On ``ctx``'s device (no ctx: the current context), by ``core.context.place``'s rule."""
    return NDArray(place(arr, current_context() if ctx is None else ctx))


def _shape(shape):
    return as_tuple(shape) if not isinstance(shape, int) else (shape,)


def array(source_array, ctx=None, dtype=None):
    """An NDArray holding a copy of ``source_array`` (see the module doc for the dtype rule)."""
    if isinstance(source_array, NDArray):
        src = source_array._arr
        return _place(src.astype(np.dtype(dtype)) if dtype is not None else src, ctx)
    if isinstance(source_array, jax.Array):
        return _place(source_array.astype(np.dtype(dtype)) if dtype is not None else source_array, ctx)
    try:
        a = np.array(source_array, dtype=_dtype(dtype))     # a copy: the device array may alias it
    except (TypeError, ValueError) as exc:
        raise TypeError(f"array: source_array must be array like object, got {type(source_array).__name__}: "
                        f"{exc}") from None
    return _place(jax.device_put(a), ctx)      # no program (jnp.asarray compiles one per new shape)


def from_numpy(ndarray, zero_copy=True, array_cls=None):
    """An NDArray of a numpy array.  ``zero_copy`` (MXNet's default): as MXNet, the numpy array must be
    C-contiguous and becomes read-only, and writes into the NDArray reach it (MXNet's NDArray is that memory;
    here each write is copied in: ``core.storage``)."""
    out = (array_cls or NDArray)(jax.device_put(np.asarray(ndarray)))
    if not zero_copy:
        return out
    if not ndarray.flags["C_CONTIGUOUS"]:
        raise ValueError("Only c-contiguous arrays are supported for zero-copy")
    ndarray.flags.writeable = False

    def write(value):
        ndarray.flags.writeable = True
        try:
            ndarray[...] = np.asarray(value)
        finally:
            ndarray.flags.writeable = False

    out._base = (Storage(lambda: jax.device_put(ndarray), write), None)
    return out


class DLPack:
    """What ``to_dlpack_for_read``/``_for_write`` give: an object with ``__dlpack__``/``__dlpack_device__`` (the
    array's, shared, not copied), which ``nd.from_dlpack``, ``numpy.from_dlpack`` and ``torch.from_dlpack``
    take.  MXNet gives a bare PyCapsule; jax reads only objects like this one."""

    __slots__ = ("_arr",)

    def __init__(self, arr):
        self._arr = arr

    def __dlpack__(self, *args, **kwargs):
        return self._arr.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._arr.__dlpack_device__()


def to_dlpack_for_read(data):
    """The array for another framework (DLPack), without a copy."""
    return DLPack(data._arr)


def to_dlpack_for_write(data):
    """As :func:`to_dlpack_for_read`: arrays here are immutable, so a writer gets a value it cannot change
    under this NDArray (MXNet shares the memory both ways)."""
    return DLPack(data._arr)


def from_dlpack(dlpack):
    """An NDArray of another framework's array (an object with ``__dlpack__``: torch, numpy, jax, ours)."""
    import jax.dlpack

    if not hasattr(dlpack, "__dlpack__"):
        raise TypeError("from_dlpack: jax reads DLPack from an object with __dlpack__ and __dlpack_device__ "
                        "(a torch tensor, a numpy array, what to_dlpack_for_read gives), not a bare PyCapsule; "
                        "pass the tensor itself")
    return NDArray(jax.dlpack.from_dlpack(dlpack))


def _into(res, out):
    """``out=``: the values written into ``out`` (its dtype kept), which is returned, as MXNet does."""
    if out is None:
        return res
    if tuple(out.shape) != tuple(res.shape):
        raise ValueError(f"out= has shape {tuple(out.shape)}, the result has shape {tuple(res.shape)}")
    if out._arr.dtype != res._arr.dtype:       # MXNet: "Type inconsistent, Provided = int32, inferred ..."
        raise ValueError(f"out= is {out._arr.dtype}, the result {res._arr.dtype}: give dtype= to match it")
    out._arr = res._arr
    return out


def _filled(shape, value, dtype):
    from ast_hybrid.core.trace import FRAMES

    shape = _shape(shape)
    if FRAMES.traces or not isinstance(value, (int, float, bool, np.generic)):
        return jnp.full(shape, value, dtype)
    return filled(shape, value, dtype)      # no program per new shape


def _known(shape, opname):
    """MXNet's _zeros/_ones outside numpy shape semantics: every dimension known (0 there means unknown)."""
    from ast_hybrid.core.npmode import MODE
    from ast_hybrid.core.trace import FRAMES

    dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if not MODE.shape and not FRAMES.traces and (not dims or 0 in dims):
        raise OpError(f"{opname}: shape {dims} has an unknown (0) dimension or none, which MXNet's legacy shape "
                      "semantics refuse here; zero-size and 0-d arrays need numpy shapes (mx.np_shape(), "
                      "npx.set_np())")


def zeros(shape, ctx=None, dtype=None, stype=None, out=None, **kwargs):
    if stype not in (None, "default"):
        from ast_hybrid.ops.sparse import zeros as sparse_zeros

        return _into(sparse_zeros(stype, shape, ctx, dtype), out)
    _known(shape, "zeros")
    return _into(_place(_filled(shape, 0, _dtype(dtype)), ctx), out)


def ones(shape, ctx=None, dtype=None, out=None, **kwargs):
    _known(shape, "ones")
    return _into(_place(_filled(shape, 1, _dtype(dtype)), ctx), out)


def full(shape, val, ctx=None, dtype=None, out=None):
    return _into(_place(_filled(shape, val, _dtype(dtype)), ctx), out)


def empty(shape, ctx=None, dtype=None, stype=None):
    """Zeros (jax has no uninitialised memory); a zero-size shape is taken, as MXNet's ``empty`` takes it."""
    if stype not in (None, "default"):
        return zeros(shape, ctx, dtype, stype)
    return _place(_filled(shape, 0, _dtype(dtype)), ctx)


@op
def _arange(start, stop=None, step=1.0, repeat=1, infer_range=False, dtype=None):
    if stop is None:
        start, stop = 0, start
    check(step != 0, "arange", "step cannot be 0")
    dt = np.dtype(_dtype(dtype))
    values = np.arange(start, stop, step, dtype=np.float64)
    if dt.kind in "iu":     # MXNet's: the length from the floats, the values int(start) + i * int(step)
        values = int(start) + np.arange(len(values), dtype=np.int64) * int(step)
    values = values.astype(dt)
    if repeat > 1:
        values = np.repeat(values, int(repeat))
    return jax.device_put(values)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None, dtype=None):
    """``[start, start + step, ...)`` below ``stop`` (or ``[0, start)``), each value ``repeat`` times."""
    res = _arange(start, stop, step, repeat, dtype=dtype)
    return _place(res._arr, ctx)


def linspace(start, stop, num, endpoint=True, ctx=None, dtype=None):
    return _place(jnp.asarray(np.linspace(start, stop, int(num), endpoint=endpoint).astype(_dtype(dtype))), ctx)


def eye(N, M=0, k=0, ctx=None, dtype=None):
    return _place(jnp.eye(int(N), int(M) if M else None, int(k), dtype=_dtype(dtype)), ctx)
