"""What computes with an ``mx.np`` array (``ast_hybrid.core.ndarray.ndarray``), installed on the class as
``ops/array_methods.py`` installs NDArray's: numpy's operators (broadcasting, bool comparisons, true division,
dtype promotion), numpy's indexing (scalars of shape ``()``, boolean masks eagerly), numpy's reductions and
shape methods, and MXNet 1.9.1's printing (``array([...])``, the dtype unless float32)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp

from ast_hybrid.core.ndarray import as_np, ndarray
from ast_hybrid.mxnp import functions as F
from ast_hybrid.mxnp._base import np_function, raw_of
from ast_hybrid.ops._core import op

__all__ = ["install"]


def _key(k):
    """An index as jax takes it: arrays unwrapped, lists and ranges as integer arrays."""
    return tuple(_key(v) for v in k) if isinstance(k, tuple) else raw_of(k)


def _int_arrays(key):
    """MXNet takes index arrays of any dtype (``mx.np.array`` of Python ints is float32): floats truncated."""
    if isinstance(key, tuple):
        return tuple(_int_arrays(k) for k in key)
    if hasattr(key, "dtype") and jnp.issubdtype(key.dtype, jnp.floating):
        return key.astype(jnp.int32)
    return key


@op
def _getitem(data, key):
    return data[_int_arrays(key)]


@op
def _setitem(data, key, value):
    key = _int_arrays(key)
    value = jnp.asarray(value, data.dtype)
    if value.ndim and value.shape[0] == 1:     # (the target's shape only where a leading 1 may need dropping)
        target = jax.eval_shape(lambda d: d[key], data).shape
        if value.ndim > len(target):    # numpy's rule, and MXNet's: leading 1s of the value are dropped
            extra = value.ndim - len(target)
            if all(d == 1 for d in value.shape[:extra]):
                value = value.reshape(value.shape[extra:])
    return data.at[key].set(value)


def _binary(name, reflected=False):
    fn = getattr(F, name)
    if reflected:
        def method(self, other):
            return fn(other, self)
    else:
        def method(self, other):
            return fn(self, other)
    method.__name__ = name
    return method


def _reduction(name):
    fn = getattr(F, name)

    def method(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        kw = {"axis": axis, "keepdims": keepdims}
        if dtype is not None:
            kw["dtype"] = dtype
        if out is not None:
            kw["out"] = out
        return fn(self, **kw, **kwargs)

    method.__name__ = name
    return method


def _arg(name):
    fn = getattr(F, name)

    def method(self, axis=None, out=None, keepdims=False):
        return fn(self, axis=axis, keepdims=keepdims)

    method.__name__ = name
    return method


class _Methods:
    """The methods :func:`install` puts on ``ndarray`` (never instantiated)."""

    def __getitem__(self, key):
        from ast_hybrid.ops.array_methods import _depth, _is_view

        out = as_np(_getitem(self, _key(key)))
        if _depth(self) < 3 and _is_view(key, self.shape):     # MXNet's view of the same memory, as nd's
            out._base = (self, key)
        return out

    def __setitem__(self, key, value):
        from ast_hybrid.ops.array_methods import whole_key, write_into     # MXNet's rules while recording

        out = _setitem(self, _key(key), value)
        write_into(self, out, reads_target=not whole_key(key, self.shape))

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self):
        text = repr(self.asnumpy())
        dtype = onp.dtype(self._arr.dtype)
        if "dtype=" in text:
            if dtype == onp.float32:
                text = text[:text.rindex(",")] + ")"
        elif dtype not in (onp.float32, onp.bool_):
            text = text[:-1] + f", dtype={dtype})"
        ctx = self.context
        return text if ctx.device_type == "cpu" else text[:-1] + f", ctx={ctx})"

    def __str__(self):
        text = str(self.asnumpy())
        ctx = self.context
        return text if ctx.device_type == "cpu" or self.ndim == 0 else f"{text} @{ctx}"

    def __format__(self, spec):
        if self.ndim == 0:
            return format(self.item(), spec)
        if not spec:
            return format(str(self), spec)
        raise TypeError("Cannot format mxnet.numpy.ndarray with format_spec")

    @property
    def dtype(self):
        """numpy's dtype object (``float32`` when printed), where an NDArray gives the scalar type."""
        return onp.dtype(self._arr.dtype)

    def item(self, *args):
        return self.asnumpy().item(*args)

    def asscalar(self):
        return self.item()

    def __bool__(self):
        if self.size == 1:
            return bool(self.item())
        if self.size == 0:
            return False
        raise ValueError("The truth value of an ndarray with more than one element is ambiguous.")

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if not onp.issubdtype(self.dtype, onp.integer) or self.ndim:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self.item())

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        if not copy and onp.dtype(dtype) == onp.dtype(self._arr.dtype):
            return self
        return _astype(self, dtype=onp.dtype(dtype).name)

    def copy(self, order="C"):
        F._c_order(order)
        return F.copy(self)

    def reshape(self, *shape, order="C", **kwargs):
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = shape[0]
        if not shape and "shape" in kwargs:
            shape = kwargs["shape"]
        return F.reshape(self, tuple(shape))

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (list, tuple))):
            axes = axes[0]
        return F.transpose(self, axes or None)

    @property
    def T(self):
        return F.transpose(self)

    def flatten(self, order="C"):
        return F.reshape(self, (-1,))

    def ravel(self, order="C"):
        return F.reshape(self, (-1,))

    def squeeze(self, axis=None):
        return F.squeeze(self, axis)

    def swapaxes(self, axis1, axis2):
        return F.swapaxes(self, axis1, axis2)

    def repeat(self, repeats, axis=None):
        return F.repeat(self, repeats, axis)

    def tile(self, reps):
        return F.tile(self, reps)

    def clip(self, min=None, max=None, out=None):
        return F.clip(self, min, max)

    def round(self, decimals=0, out=None):
        return F.round(self, decimals)

    def dot(self, b, out=None):
        return F.dot(self, b)

    def take(self, indices, axis=None, mode="raise"):
        return F.take(self, _key(indices), axis=axis)

    def argsort(self, axis=-1, kind=None, order=None):
        return F.argsort(self, axis=axis)

    def sort(self, axis=-1, kind=None, order=None):
        out = F.sort(self, axis=axis)
        self._arr, self._ag = out._arr, out._ag

    def cumsum(self, axis=None, dtype=None, out=None):
        return F.cumsum(self, axis=axis, dtype=dtype)

    def nonzero(self):
        return F.nonzero(self)

    def tolist(self):
        return self.asnumpy().tolist()

    def as_in_ctx(self, ctx):
        return self.as_in_context(ctx)

    def __neg__(self):
        return F.negative(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return F.absolute(self)

    def __invert__(self):
        return F.invert(self)

    def _inplace(self, result):
        if result.shape != self.shape:
            raise ValueError(f"in-place operation would change the shape from {self.shape} to {result.shape}")
        from ast_hybrid.ops.array_methods import write_into     # MXNet's rules while recording, nd's too

        if result.dtype != self.dtype:
            result = result.astype(self.dtype)
        write_into(self, result)
        return self


for _name, _fn in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "true_divide"),
                   ("floordiv", "floor_divide"), ("mod", "mod"), ("pow", "power"), ("matmul", "matmul"),
                   ("and", "logical_and"), ("or", "logical_or"), ("xor", "logical_xor")):
    setattr(_Methods, f"__{_name}__", _binary(_fn))
    setattr(_Methods, f"__r{_name}__", _binary(_fn, reflected=True))

    def _in_place(self, other, _fn=_fn):
        return self._inplace(getattr(F, _fn)(self, other))

    setattr(_Methods, f"__i{_name}__", _in_place)
for _name, _fn in (("eq", "equal"), ("ne", "not_equal"), ("lt", "less"), ("le", "less_equal"), ("gt", "greater"),
                   ("ge", "greater_equal")):
    setattr(_Methods, f"__{_name}__", _binary(_fn))
for _name in ("sum", "mean", "prod", "std", "var", "max", "min", "all", "any"):
    setattr(_Methods, _name, _reduction(_name))
for _name in ("argmax", "argmin"):
    setattr(_Methods, _name, _arg(_name))
_Methods.__div__, _Methods.__rdiv__ = _Methods.__truediv__, _Methods.__rtruediv__


_astype = np_function(lambda a, dtype: a.astype(dtype), "astype")


def install(cls=ndarray):
    """Put the methods above on ``cls`` (idempotent).  ``__hash__`` stays object's (as NDArray's)."""
    for name, value in vars(_Methods).items():
        if name not in ("__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__hash__"):
            setattr(cls, name, value)
