"""MXNet's sparse arrays, ``RowSparseNDArray`` and ``CSRNDArray``, held dense.

Every array here is one dense jax array (XLA has no sparse storage); a sparse array is that dense value plus
the structure MXNet's would store: a row_sparse array's stored rows (``indices``), a csr matrix's column
indices and row pointers (``indices``, ``indptr``).  The structure is the one given (``row_sparse_array((data,
indices))``, ``retain``, ``zeros``), else the non-zero rows / entries of the value, as MXNet's
``cast_storage`` makes it; any write into the array (``x[:] = v``, an op's ``out=``, a backward filling a
gradient) makes it the value's again.

What is MXNet's: the classes, ``stype``, ``data``/``indices``/``indptr``, ``tostype``, ``retain``, the
storage type each operator gives (checked against MXNet 1.9.1 in ``tests/mxnet/test_sparse_oracle.py``: an
operator that keeps zeros keeps the storage type, ``rsp * dense`` stays row_sparse, everything else falls
back to dense, as MXNet's storage fallback does), and the rows a lazy optimizer update touches (a
row_sparse gradient's rows).  What is not: the memory savings (a csr matrix of a million columns is a
million columns wide here), and a gradient row that is looked up but exactly zero counts as not stored.

May import: the standard library, numpy, jax (inside functions) and ``core.ndarray``.
"""

from __future__ import annotations

import numpy as np

from ast_hybrid.core.ndarray import NDArray

__all__ = ["BaseSparseNDArray", "RowSparseNDArray", "CSRNDArray", "SPARSE", "sparse_like", "to_stype",
           "STYPE_RULES", "binary_stype", "unary_rule"]


class BaseSparseNDArray(NDArray):
    """A dense value (``_arr``) with MXNet's sparse structure (``_aux``: None = the value's non-zeros)."""

    __slots__ = ("_dense", "_aux")

    def __init__(self, arr, _ag=None, aux=None):
        self._dense, self._ag, self._base, self._aux = arr, _ag, None, aux

    @property
    def _arr(self):
        return self._dense

    @_arr.setter
    def _arr(self, value):      # a new value: the structure is its non-zeros again
        self._dense, self._aux = value, None

    def __repr__(self):
        shape = "x".join(str(d) for d in self.shape)
        return f"\n<{type(self).__name__} {shape} @{self.context}>"

    __str__ = __repr__

    def __reduce__(self):
        return _rebuild, (type(self).__name__, self.asnumpy(), self._aux)

    def _same(self, value, aux=None):
        return type(self)(value, None, aux)

    def _structure(self):
        """The stored structure, fixed now (``_aux`` or the value's non-zeros): what an op that keeps the
        entries stored gives its result, as MXNet's (``g * 0`` keeps ``g``'s rows)."""
        if self._aux is not None:
            return self._aux
        return self._rows() if isinstance(self, RowSparseNDArray) else self._struct()[1:]

    def copy(self):
        return self._same(self._arr, self._aux)

    def copyto(self, other):
        if isinstance(other, BaseSparseNDArray) and other is not self:
            other._arr = self._arr.astype(other._arr.dtype)
            other._aux = self._aux
            return other
        moved = NDArray.copyto(self, other)
        return self._same(moved._arr, self._aux) if type(moved) is NDArray else moved

    def as_in_context(self, context):
        moved = NDArray.as_in_context(NDArray(self._arr), context)
        return self._same(moved._arr, self._aux)

    as_in_ctx = as_in_context

    def astype(self, dtype, copy=True):
        if not copy and np.dtype(dtype) == np.dtype(self.dtype):
            return self
        return self._same(self._arr.astype(np.dtype(dtype)), self._aux)

    def detach(self):
        return self._same(self._arr, self._aux)

    def reshape(self, *shape, **kwargs):
        raise NotImplementedError(f"reshape is not supported for {type(self).__name__}")

    def _host(self):
        return np.asarray(self._arr)

    # the storage type MXNet's operators give (the oracle's table); what is not listed falls back to dense
    def __neg__(self):      # the stored entries negated (a stored zero becomes -0.0), as MXNet's
        import jax.numpy as jnp

        return self._same(jnp.where(self._stored(), -self._arr, 0).astype(self._arr.dtype), self._structure())

    def __mul__(self, other):
        return _binary(NDArray.__mul__(self, other), self, other, "mul")

    def __rmul__(self, other):      # (a dense array times a sparse one comes here first: it is dense)
        result = NDArray.__rmul__(self, other)
        return result if isinstance(other, NDArray) else _binary(result, self, other, "mul")

    def __truediv__(self, other):
        return _binary(NDArray.__truediv__(self, other), self, other, "div")

    __div__ = __truediv__

    def __add__(self, other):
        return _binary(NDArray.__add__(self, other), self, other, "add")

    def __sub__(self, other):
        return _binary(NDArray.__sub__(self, other), self, other, "sub")


class RowSparseNDArray(BaseSparseNDArray):
    """MXNet's row_sparse array: the rows ``indices`` of a ``shape[0]``-row array are stored (``data``)."""

    __slots__ = ()
    stype = "row_sparse"

    def _rows(self):
        if self._aux is not None:
            return self._aux
        value = self._host()
        nonzero = value.reshape(value.shape[0], -1).any(axis=1) if value.ndim else np.zeros(0, bool)
        return np.flatnonzero(nonzero).astype(np.int64)

    @property
    def indices(self):
        import jax.numpy as jnp

        return NDArray(jnp.asarray(self._rows()))

    def _stored(self):
        """A boolean mask of the stored entries (broadcastable to the shape)."""
        import jax.numpy as jnp

        keep = np.zeros(self.shape[0], bool)
        keep[self._rows()] = True
        return jnp.asarray(keep).reshape((-1,) + (1,) * (self.ndim - 1))

    @property
    def data(self):
        return NDArray(self._arr[self._rows()])

    def tostype(self, stype):
        if stype == "row_sparse":
            return self.copy()
        if stype == "csr":
            raise ValueError("cast_storage from row_sparse to csr is not supported")
        return to_stype(self, stype)

    def retain(self, indices):
        """The stored rows that are in ``indices`` (MXNet's ``sparse.retain``)."""
        import jax.numpy as jnp

        wanted = np.unique(np.asarray(getattr(indices, "_arr", indices)).astype(np.int64).reshape(-1))
        rows = wanted[(wanted >= 0) & (wanted < self.shape[0])]      # MXNet: the rows asked for, stored or not
        keep = np.zeros(self.shape[0], bool)
        keep[rows] = True
        mask = jnp.asarray(keep).reshape((-1,) + (1,) * (self.ndim - 1))
        return RowSparseNDArray(jnp.where(mask, self._arr, 0).astype(self._arr.dtype), None, rows)

    def __getitem__(self, key):
        if isinstance(key, slice) and key == slice(None):
            return self
        raise Exception("RowSparseNDArray only supports [:] for __getitem__")

    def __setitem__(self, key, value):
        if not (isinstance(key, slice) and key == slice(None)):
            raise ValueError("Assignment with slice for RowSparseNDArray is not implmented yet.")
        _assign(self, value)


class CSRNDArray(BaseSparseNDArray):
    """MXNet's csr matrix: row ``i``'s stored entries are ``data[indptr[i]:indptr[i+1]]`` at columns
    ``indices[indptr[i]:indptr[i+1]]``."""

    __slots__ = ()
    stype = "csr"

    def _struct(self):
        """(row of each stored entry, its column, indptr)."""
        if self._aux is not None:
            cols, indptr = self._aux
            rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
            return rows, cols, indptr
        rows, cols = np.nonzero(self._host())
        indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=self.shape[0]))])
        return rows.astype(np.int64), cols.astype(np.int64), indptr.astype(np.int64)

    @property
    def indices(self):
        import jax.numpy as jnp

        return NDArray(jnp.asarray(self._struct()[1]))

    def _stored(self):
        import jax.numpy as jnp

        rows, cols, _ = self._struct()
        keep = np.zeros(self.shape, bool)
        keep[rows, cols] = True
        return jnp.asarray(keep)

    @property
    def indptr(self):
        import jax.numpy as jnp

        return NDArray(jnp.asarray(self._struct()[2]))

    @property
    def data(self):
        rows, cols, _ = self._struct()
        return NDArray(self._arr[rows, cols])

    def tostype(self, stype):
        if stype == "csr":
            return self.copy()
        if stype == "row_sparse":
            raise ValueError("cast_storage from csr to row_sparse is not supported")
        return to_stype(self, stype)

    def asscipy(self):
        import scipy.sparse as spsp

        rows, cols, indptr = self._struct()
        return spsp.csr_matrix((self._host()[rows, cols], cols, indptr), shape=self.shape)

    def __getitem__(self, key):
        if isinstance(key, int):
            key = slice(key, key + 1) if key != -1 else slice(-1, None)
        if isinstance(key, slice):
            if key.step not in (None, 1):
                raise ValueError("CSRNDArray only supports continuous slicing on axis 0")
            return CSRNDArray(self._arr[key])
        if isinstance(key, tuple) and len(key) == 2 and all(isinstance(k, slice) for k in key):
            return CSRNDArray(self._arr[key])
        raise ValueError(f"Undefined behaviour for {key}")

    def __setitem__(self, key, value):
        if not (isinstance(key, slice) and key == slice(None)):
            raise ValueError("Assignment with slice for CSRNDArray is not implmented yet.")
        _assign(self, value)


SPARSE = (RowSparseNDArray, CSRNDArray)
for _cls in (BaseSparseNDArray,) + SPARSE:
    _cls.__module__ = "mxnet.ndarray.sparse"      # what type(x) shows, as in MXNet
_CLASSES = {"row_sparse": RowSparseNDArray, "csr": CSRNDArray}


def _assign(target, value):
    import jax.numpy as jnp

    if isinstance(value, NDArray):
        if value.shape != target.shape:
            raise ValueError(f"cannot assign an array of shape {value.shape} to one of shape {target.shape}")
        target._arr = value._arr.astype(target._arr.dtype)
        if type(value) is type(target):
            target._aux = value._aux
    elif isinstance(value, (int, float, np.generic)):
        target._arr = jnp.full(target.shape, value, target._arr.dtype)
    else:
        target._arr = jnp.asarray(np.broadcast_to(np.asarray(value), target.shape), target._arr.dtype)


def sparse_like(result, like):
    """``result`` (an NDArray) as an array of ``like``'s storage type, its autograd record kept."""
    return type(like)(result._arr, result._ag) if isinstance(result, NDArray) else result


def to_stype(array, stype, aux=None):
    """``array``'s value in storage ``stype`` ('default', 'row_sparse' or 'csr'): MXNet's ``cast_storage``."""
    if stype in (None, "default"):
        return array if type(array) is NDArray else NDArray(array._arr)
    cls = _CLASSES.get(stype)
    if cls is None:
        raise ValueError(f"unknown storage type {stype!r}; MXNet's are 'default', 'row_sparse' and 'csr'")
    if type(array) is cls:
        return array
    if cls is CSRNDArray and array.ndim != 2:
        raise ValueError(f"a csr array has two dimensions, this one has shape {array.shape}")
    if isinstance(array, BaseSparseNDArray):
        raise ValueError(f"cast_storage from {array.stype} to {stype} is not supported")
    return cls(array._arr, None, aux)


def binary_stype(op, lhs, rhs):
    """The storage type MXNet gives ``lhs <op> rhs`` (``op``: add, sub, mul, div; ``rhs`` may be a number)."""
    a = getattr(lhs, "stype", "default")
    if not isinstance(rhs, NDArray):
        return a if op in ("mul", "div") and isinstance(rhs, (int, float, np.generic)) else "default"
    b = rhs.stype
    if a == "default" or lhs.shape != rhs.shape:
        return "default"
    if op in ("add", "sub", "mul") and a == b:
        return a
    if op == "mul" and b == "default":
        return a
    if op == "div" and a == "csr" and b == "default":
        return a
    return "default"


def _elemwise(op):
    def rule(args, kwargs):     # elemwise_add/sub/mul: same shapes; a dense * sparse product stays sparse
        a, b = (getattr(x, "stype", "default") for x in args[:2])
        if op in ("add", "sub"):
            return a if a == b else "default"
        if op == "mul":
            return a if a == b or b == "default" else (b if a == "default" else "default")
        return "default"
    return rule


def _broadcast(args, kwargs):       # broadcast_mul/div: csr by dense stays csr
    a, b = (getattr(x, "stype", "default") for x in args[:2])
    return "csr" if a == "csr" and b == "default" else "default"


def _dot(args, kwargs):
    a, b = (getattr(x, "stype", "default") for x in args[:2])
    if a == "csr" and kwargs.get("transpose_a", False) and b in ("default", "row_sparse"):
        return "row_sparse"
    if a == "default" and b == "csr" and not kwargs.get("transpose_a", False):
        return "csr"
    return "default"


def unary_rule(args, kwargs):
    return args[0].stype


#: operator name -> the storage type MXNet's FInferStorageType gives it when an input is sparse (checked in
#: tests/mxnet/test_sparse_oracle.py): unary operators that map zero to zero and the copies keep it; dense
#: otherwise (MXNet's storage fallback)
STYPE_RULES = {name: unary_rule for name in (
    "relu", "abs", "sign", "round", "rint", "ceil", "floor", "trunc", "fix", "square", "sqrt", "sin", "tan",
    "arcsin", "arctan", "sinh", "tanh", "arcsinh", "arctanh", "expm1", "log1p", "degrees", "radians",
    "negative", "clip", "zeros_like", "copy", "_copy", "cast", "Cast", "_mul_scalar", "_div_scalar")}
STYPE_RULES.update(elemwise_add=_elemwise("add"), elemwise_sub=_elemwise("sub"), elemwise_mul=_elemwise("mul"),
                   _plus=_elemwise("add"), _minus=_elemwise("sub"), _mul=_elemwise("mul"),
                   broadcast_mul=_broadcast, broadcast_div=_broadcast, dot=_dot)


def _binary(result, lhs, rhs, op):
    stype = binary_stype(op, lhs, rhs)
    if stype == "default" or not isinstance(result, NDArray):
        return result
    keep = not isinstance(rhs, NDArray) and stype == lhs.stype      # by a number: the same entries stored
    return _CLASSES[stype](result._arr, result._ag, lhs._structure() if keep else None)


def _rebuild(cls, value, aux):
    import jax.numpy as jnp

    return _CLASSES["row_sparse" if cls == "RowSparseNDArray" else "csr"](jnp.asarray(value), None, aux)


def _register_pytree():
    import jax

    for cls in SPARSE:      # into a compiled program as its dense value
        jax.tree_util.register_pytree_node(cls, lambda x: ((x._arr,), None), lambda _, c, cls=cls: cls(c[0]))


_register_pytree()
