"""What computes with an ``NDArray``, installed on the class by the operator package.

``ast_hybrid.core.ndarray`` holds what the array is; its operators (``+ - * / ** %``, comparisons, the in-place
forms), indexing, ``reshape``, ``astype``/``copy``/``T`` and MXNet's fluent methods (``x.sum()`` is
``nd.sum(x)``) call the ops, so they are defined here and put on the class by :func:`install`, which
``ast_hybrid/ops/__init__.py`` runs once it holds every op: the array module imports nothing of the ops (jax
does the same with ``jax/_src/numpy/array_methods.py``).  Each method calls the op through the ``ast_hybrid.ops``
namespace, as before the split.  Which fluent methods there are is :data:`ast_hybrid.common.fluent.FLUENT_OPS`,
the list the linter reads too.

May import: ``ast_hybrid.core``, the ops package it is part of, and ``ast_hybrid.common.fluent``.
"""

from __future__ import annotations

import jax
import numpy as np

from ast_hybrid import ops as _ops  # noqa: F401  (imported at the end of ops/__init__: every op is there)
from ast_hybrid.common.fluent import FLUENT_OPS
from ast_hybrid.core.ndarray import NDArray

__all__ = ["install"]


class _Methods:
    """The methods :func:`install` puts on ``NDArray`` (this class is never instantiated)."""

    def astype(self, dtype, copy=True):
        if not copy and np.dtype(dtype) == np.dtype(self._arr.dtype):
            return self
        return _ops.cast(self, dtype=dtype)

    def copy(self):
        return _ops.identity(self)

    @staticmethod
    def _basic_indexing_slice_is_contiguous(slc_key, shape):
        """MXNet's helper (its own tests call it): whether indexing with ``slc_key`` (one slice per axis)
        gives a contiguous block, which MXNet returns as a view (and here, writes into which reach it)."""
        return _is_view(tuple(slc_key), shape)

    @property
    def T(self):
        return self if self.ndim < 2 else _ops.transpose(self)

    # --- indexing ----------------------------------------------------------------
    def __getitem__(self, key):
        out = _ops.indexing.getitem(self, key)
        # MXNet's view of the same memory: writes into it reach self (up to three views deep: each keeps the
        # array it views alive, and ``x = x[1:]`` in a loop must not keep every earlier x)
        if out.__class__ is self.__class__ and _depth(self) < 3 and _is_view(key, self.shape):
            out._base = (self, key)
        return out

    def __setitem__(self, key, value):
        whole = whole_key(key, self.shape)
        out = _whole_value(self, value) if whole else None
        if out is None:
            out = _ops.indexing.setitem(self, key, value)
        write_into(self, out, reads_target=not whole)

    def slice_assign(self, rhs, begin, end, step):
        self[tuple(slice(b, e, s) for b, e, s in zip(begin, end, tuple(step) + (None,) * len(begin)))] = rhs
        return self

    def slice_assign_scalar(self, value, begin, end, step):
        return self.slice_assign(value, begin, end, step)

    # --- DLPack ----------------------------------------------------------------------------------
    def to_dlpack_for_read(self):
        return _ops.creation.to_dlpack_for_read(self)

    def to_dlpack_for_write(self):
        return _ops.creation.to_dlpack_for_write(self)

    # --- MXNet's in-place shape methods: ``inplace=True`` gives a view there, a copy here ---------------
    def flatten(self, inplace=False):
        return _ops.flatten(self)

    def expand_dims(self, axis, inplace=False):
        return _ops.expand_dims(self, axis=axis)

    def squeeze(self, axis=None, inplace=False):
        return _ops.squeeze(self, axis=axis)

    # --- reshape takes a tuple or *ints ---------------------------------------------
    def reshape(self, *shape, **kwargs):
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = shape[0]
        elif not shape:
            shape = kwargs.get("shape")
            if not shape and shape != ():
                raise TypeError("reshape: shape must be provided")
        unknown = [k for k in kwargs if k not in ("shape", "reverse")]
        if unknown:
            raise TypeError(f"Got unknown keywords in reshape: {', '.join(unknown)}. "
                            "Accepted keyword arguments are 'shape' and 'reverse'.")
        return _ops.reshape(self, shape=tuple(shape), reverse=kwargs.get("reverse", False))

    # --- operators ---------------------------------------------------------------
    def __add__(self, other):
        return _ops.add(self, other)

    def __radd__(self, other):
        return _ops.add(other, self)

    def __sub__(self, other):
        return _ops.subtract(self, other)

    def __rsub__(self, other):
        return _ops.subtract(other, self)

    def __mul__(self, other):
        return _ops.multiply(self, other)

    def __rmul__(self, other):
        return _ops.multiply(other, self)

    def __truediv__(self, other):
        return _ops.divide(self, other)

    def __rtruediv__(self, other):
        return _ops.divide(other, self)

    __div__, __rdiv__ = __truediv__, __rtruediv__

    def __mod__(self, other):
        return _ops.modulo(self, other)

    def __rmod__(self, other):
        return _ops.modulo(other, self)

    def __pow__(self, other):
        return _ops.power(self, other)

    def __rpow__(self, other):
        return _ops.power(other, self)

    def __neg__(self):
        return _ops.negative(self)

    def __abs__(self):
        return _ops.abs(self)

    def __eq__(self, other):
        return _ops.equal(self, other)

    def __ne__(self, other):
        return _ops.not_equal(self, other)

    def __lt__(self, other):
        return _ops.lesser(self, other)

    def __le__(self, other):
        return _ops.lesser_equal(self, other)

    def __gt__(self, other):
        return _ops.greater(self, other)

    def __ge__(self, other):
        return _ops.greater_equal(self, other)

    def _inplace(self, result):
        if result.shape != self.shape:
            raise ValueError(f"in-place operation would change the shape from {self.shape} to {result.shape}")
        write_into(self, result)
        return self

    def __iadd__(self, other):
        return self._inplace(_ops.add(self, other))

    def __isub__(self, other):
        return self._inplace(_ops.subtract(self, other))

    def __imul__(self, other):
        return self._inplace(_ops.multiply(self, other))

    def __itruediv__(self, other):
        return self._inplace(_ops.divide(self, other))

    __idiv__ = __itruediv__

    def __imod__(self, other):
        return self._inplace(_ops.modulo(self, other))


def _depth(a):
    n = 0
    while a._base is not None:
        a, n = a._base[0], n + 1
    return n


def write_through(a):
    """``a``'s new value into the arrays it is a view of (``NDArray._base``: ``(array, key)``, the key None
    for the whole: a Parameter's storage behind ``data()``), as MXNet's shared memory."""
    while a._base is not None:
        parent, key = a._base
        parent._arr = a._arr if key is None else _ops.indexing.setitem.__wrapped__(parent._arr, key, a._arr)
        a = parent


def _basic_axes(key, shape):
    """``key`` as one integer or slice per axis of ``shape`` (None: new axes dropped, Ellipsis expanded), or
    None where it is not basic indexing."""
    key = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, bool) or not isinstance(k, (slice, int, np.integer, type(None), type(Ellipsis)))
           for k in key):
        return None
    ks = [k for k in key if k is not None]
    ellipses = sum(k is Ellipsis for k in ks)
    if ellipses > 1 or len(ks) - ellipses > len(shape):
        return None
    if ellipses:
        i = next(j for j, k in enumerate(ks) if k is Ellipsis)
        ks = ks[:i] + [slice(None)] * (len(shape) - len(ks) + 1) + ks[i + 1:]
    return ks + [slice(None)] * (len(shape) - len(ks))


def _is_view(key, shape):
    """MXNet's ``_basic_indexing_slice_is_contiguous``: basic indexing whose result is one contiguous block of
    the array (from the right, once an axis is cut, every axis to its left keeps at most one element), which
    MXNet returns as a view."""
    ks = _basic_axes(key, shape)
    if ks is None:
        return False
    lens, steps = [], []
    for k, n in zip(ks, shape):
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            lens.append(len(range(start, stop, step)))
            steps.append(step)
        elif not -n <= k < n:
            return False
        else:
            lens.append(1)
            steps.append(1)
    if int(np.prod(lens)) in (0, 1):
        return True
    cut = False
    for m, step, n in zip(reversed(lens), reversed(steps), reversed(shape)):
        if m == 0:
            return True
        if (m > 1 and step != 1) or (cut and m > 1):
            return False
        cut = cut or m < n
    return True


def whole_key(key, shape):
    """Whether ``x[key] = v`` covers all of ``x`` with basic indexing (MXNet then copies ``v`` into ``x``: an op
    that does not read ``x``)."""
    ks = _basic_axes(key, shape)
    if ks is None:
        return False
    for k, n in zip(ks, shape):
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            if step <= 0 or len(range(start, stop, step)) != n:
                return False
        elif n != 1:
            return False
    return True


def _whole_value(target, value):
    """``target[:] = value``'s new value without a program where none is needed (a new shape would compile a
    scatter): an array of the target's shape (cast only if its dtype differs), a host array or a number (made
    on the host and copied); None where ``setitem`` must do it (broadcasting, a recorded value)."""
    import jax

    from ast_hybrid.core.autograd import STATE
    from ast_hybrid.core.context import filled
    from ast_hybrid.core.trace import FRAMES

    if FRAMES.traces:
        return None
    if isinstance(value, NDArray):
        if tuple(value.shape) != tuple(target.shape) or (value._ag is not None and STATE.recording):
            return None
        arr = value._arr
        return NDArray(arr if arr.dtype == target._arr.dtype else arr.astype(target._arr.dtype))
    if isinstance(value, (int, float, bool, np.generic, np.ndarray)) and not isinstance(value, jax.core.Tracer):
        host, arr = np.asarray(value), target._arr
        if host.shape == ():
            return NDArray(filled(arr.shape, host, arr.dtype, like=arr))
        if host.shape != tuple(arr.shape):
            return None
        return NDArray(jax.device_put(np.array(host, dtype=arr.dtype), arr.sharding if arr.committed else None))
    return None


class InPlaceInProgram(TypeError):
    """An in-place write into a traced array inside a hybridized plain Block's forward (``gluon/whole.py``
    runs the block op by op instead)."""


def write_into(target, result, reads_target=True):
    """``target`` takes ``result``'s value (and record).  While recording, MXNet's ``Imperative::RecordOp``
    refuses a write into an array already in the graph (a variable, a recorded result), and one into an
    op's own input (``x += y``, ``x[i] = y``; ``x[:] = y`` copies, reading no ``x``) when the op is recorded
    (an input needs a gradient): the value is written all the same (MXNet's op ran before its check), the
    record is not, and the error is MXNet's.  Unrecorded writes are free."""
    from ast_hybrid.core.autograd import STATE, _Leaf
    from ast_hybrid.core.errors import MXNetError
    from ast_hybrid.core.trace import FRAMES

    if FRAMES.whole and FRAMES.traces and isinstance(target._arr, jax.core.Tracer):
        raise InPlaceInProgram("an in-place write into an array (`x += y`, `x /= 2`, `x[i] = y`) in a "
                               "hybridized Block's forward: write `x = x + y` (an array is a value in a program)")
    if not STATE.recording or FRAMES.traces or (target._ag is None and (not reads_target or result._ag is None)):
        if not isinstance(target._ag, _Leaf):   # a variable stays one (``w[:] = w - lr * w.grad``), as MXNet's
            target._ag = result._ag             # unrecorded write leaves its autograd entry alone
        target._arr = result._arr
        write_through(target)
        return
    target._arr = result._arr
    write_through(target)
    if target._ag is not None:
        raise MXNetError("Assigning to NDArrays that are already in a computational graph will cause undefined "
                         "behavior when evaluating gradients. Please call backward first to clear the graph or do "
                         "this out side of a record section. Also note that you cannot use inplace operations "
                         "like +=, *=, relu(x, out=x), y[idx]=x, etc inside a record section.")
    raise MXNetError("Inplace operations (+=, -=, x[:]=, etc) are not supported when recording with autograd.")


def _fluent(name):
    def method(self, *args, **kwargs):
        return getattr(_ops, name)(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Fluent form of ``nd.{name}(self, ...)``."
    return method


def install(cls=NDArray):
    """Put the methods above and the fluent ones (:data:`~ast_hybrid.common.fluent.FLUENT_OPS`) on ``cls``
    (idempotent)."""
    for name in FLUENT_OPS:
        setattr(cls, name, _fluent(name))
    for name, value in vars(_Methods).items():      # after the fluent ones: these take MXNet's extra keywords
        # __hash__: Python sets it to None in a class that defines __eq__; NDArray keeps object's
        if name not in ("__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__hash__"):
            setattr(cls, name, value)
