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

    @property
    def T(self):
        return self if self.ndim < 2 else _ops.transpose(self)

    # --- indexing ----------------------------------------------------------------
    def __getitem__(self, key):
        return _ops.indexing.getitem(self, key)

    def __setitem__(self, key, value):
        out = _ops.indexing.setitem(self, key, value)
        self._arr, self._ag = out._arr, out._ag

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
        self._arr, self._ag = result._arr, result._ag
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
