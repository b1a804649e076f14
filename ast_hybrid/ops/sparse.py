"""``nd.sparse`` (``F.sparse``): MXNet's row_sparse and csr arrays (``core/sparse.py``: held dense, with MXNet's
structure and storage types) and the functions that make and combine them, as MXNet 1.9.1's
``python/mxnet/ndarray/sparse.py``."""

from __future__ import annotations

import numpy as np

from ast_hybrid.core.ndarray import NDArray
from ast_hybrid.core.sparse import BaseSparseNDArray, CSRNDArray, RowSparseNDArray, to_stype
from ast_hybrid.ops.creation import _dtype, _place
from ast_hybrid.ops.elemwise import (add_n, broadcast_add, broadcast_div, broadcast_mul, broadcast_sub, cast, clip,
                                     elemwise_add, elemwise_mul, elemwise_sub, zeros_like)
from ast_hybrid.ops.linalg import dot
from ast_hybrid.ops.reduce import mean, sum

__all__ = ["dot", "elemwise_add", "elemwise_sub", "elemwise_mul", "add_n", "zeros_like", "sum", "mean", "clip",
           "cast", "retain", "cast_storage", "csr_matrix", "row_sparse_array", "zeros", "empty", "array", "add",
           "subtract", "multiply", "divide", "BaseSparseNDArray", "CSRNDArray", "RowSparseNDArray"]


def _host(x):
    return np.asarray(x._arr if isinstance(x, NDArray) else x)


def _default_dtype(source, dtype):
    """MXNet's ``_prepare_default_dtype``: the source's dtype when it is an array, else float32."""
    if dtype is not None:
        return np.dtype(dtype)
    return np.dtype(source.dtype) if isinstance(source, (NDArray, np.ndarray)) else np.dtype(np.float32)


def _device(dense, ctx):
    import jax

    return _place(jax.device_put(np.ascontiguousarray(dense)), ctx)._arr


def _make(cls, dense, aux, ctx):
    return cls(_device(dense, ctx), None, aux)


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None):
    """A RowSparseNDArray from ``(data, indices)`` (with ``shape``), a shape (empty), a dense array or another
    RowSparseNDArray."""
    if isinstance(arg1, RowSparseNDArray):
        return _make(RowSparseNDArray, _host(arg1).astype(_default_dtype(arg1, dtype)), arg1._rows(), ctx)
    if isinstance(arg1, tuple) and len(arg1) == 2 and not all(isinstance(d, (int, np.integer)) for d in arg1):
        data, indices = arg1
        dt = _default_dtype(data, dtype)
        data, indices = np.asarray(_host(data), dt), _host(indices).astype(np.int64).reshape(-1)
        if shape is None:
            shape = (int(indices.max()) + 1 if indices.size else 0,) + data.shape[1:]
        dense = np.zeros(tuple(shape), dt)
        dense[indices] = data.reshape((len(indices),) + tuple(shape[1:]))
        return _make(RowSparseNDArray, dense, np.array(indices), ctx)
    if isinstance(arg1, tuple):     # a shape: all zeros, no row stored
        return _make(RowSparseNDArray, np.zeros(arg1, _default_dtype(None, dtype)), np.zeros(0, np.int64), ctx)
    dense = np.asarray(_host(arg1), _default_dtype(arg1, dtype))
    return to_stype(NDArray(_device(dense, ctx)), "row_sparse")


def csr_matrix(arg1, shape=None, ctx=None, dtype=None):
    """A CSRNDArray from ``(data, indices, indptr)`` (with ``shape``), ``(data, (row, col))``, a shape
    (empty), a scipy sparse matrix, a dense 2-D array or another CSRNDArray."""
    if isinstance(arg1, CSRNDArray):
        return _make(CSRNDArray, _host(arg1).astype(_default_dtype(arg1, dtype)), arg1._struct()[1:], ctx)
    if hasattr(arg1, "tocsr") and hasattr(arg1, "indptr"):        # scipy
        arg1, shape = (arg1.data, arg1.indices, arg1.indptr), arg1.shape
    if isinstance(arg1, tuple) and len(arg1) == 3:
        data, indices, indptr = arg1
        dt = _default_dtype(data, dtype)
        data = np.asarray(_host(data), dt).reshape(-1)
        indices, indptr = _host(indices).astype(np.int64).reshape(-1), _host(indptr).astype(np.int64).reshape(-1)
        if shape is None:
            shape = (len(indptr) - 1, int(indices.max()) + 1 if indices.size else 0)
        rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
        dense = np.zeros(tuple(shape), dt)
        np.add.at(dense, (rows, indices), data)
        return _make(CSRNDArray, dense, (indices, indptr), ctx)
    if isinstance(arg1, tuple) and len(arg1) == 2 and isinstance(arg1[1], tuple):    # COO: (data, (row, col))
        data, (row, col) = arg1
        dt = _default_dtype(data, dtype)
        dense = np.zeros(tuple(shape) if shape is not None else (int(np.max(row)) + 1, int(np.max(col)) + 1), dt)
        np.add.at(dense, (np.asarray(row, np.int64), np.asarray(col, np.int64)), np.asarray(data, dt))
        return to_stype(NDArray(_device(dense, ctx)), "csr")
    if isinstance(arg1, tuple):
        return _make(CSRNDArray, np.zeros(arg1, _default_dtype(None, dtype)),
                     (np.zeros(0, np.int64), np.zeros(arg1[0] + 1, np.int64)), ctx)
    dense = np.asarray(_host(arg1), _default_dtype(arg1, dtype))
    return to_stype(NDArray(_device(dense, ctx)), "csr")


def zeros(stype, shape, ctx=None, dtype=None, **kwargs):
    """An all-zero array of storage ``stype`` (nothing stored)."""
    if stype == "default":
        from ast_hybrid.ops.creation import zeros as dense_zeros

        return dense_zeros(shape, ctx=ctx, dtype=dtype)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if stype == "row_sparse":
        return row_sparse_array(shape, ctx=ctx, dtype=_dtype(dtype))
    if stype == "csr":
        return csr_matrix(shape, ctx=ctx, dtype=_dtype(dtype))
    raise ValueError(f"unknown storage type {stype!r}")


def empty(stype, shape, ctx=None, dtype=None):
    return zeros(stype, shape, ctx, dtype)


def array(source_array, ctx=None, dtype=None):
    """A sparse array from a sparse NDArray or a scipy sparse matrix (MXNet takes nothing else here)."""
    if isinstance(source_array, BaseSparseNDArray):
        make = csr_matrix if isinstance(source_array, CSRNDArray) else row_sparse_array
        return make(source_array, ctx=ctx, dtype=dtype)
    if hasattr(source_array, "tocsr"):
        return csr_matrix(source_array.tocsr(), ctx=ctx, dtype=dtype)
    raise ValueError("Unexpected source_array type: ", type(source_array))


def cast_storage(data, stype="default"):
    """``data`` in storage ``stype``: a dense array to row_sparse keeps its non-zero rows, to csr its non-zero
    entries; a sparse one to dense."""
    if not isinstance(data, NDArray):
        data = NDArray(_device(np.asarray(data), None))
    out = to_stype(data, stype)
    return out.copy() if out is data else out


def retain(data, indices):
    """The rows of a RowSparseNDArray that are in ``indices``."""
    if not isinstance(data, RowSparseNDArray):
        raise ValueError(f"sparse.retain takes a row_sparse array, got storage {getattr(data, 'stype', None)!r}")
    return data.retain(indices)


def _arith(dense_op, elem_op):
    def apply(lhs, rhs):
        if isinstance(lhs, NDArray) and isinstance(rhs, NDArray) and lhs.shape == rhs.shape:
            return elem_op(lhs, rhs)
        return dense_op(lhs, rhs)
    return apply


add = _arith(broadcast_add, elemwise_add)
subtract = _arith(broadcast_sub, elemwise_sub)
multiply = _arith(broadcast_mul, elemwise_mul)
divide = _arith(broadcast_div, broadcast_div)
for _f, _n in ((add, "add"), (subtract, "subtract"), (multiply, "multiply"), (divide, "divide")):
    _f.__name__ = _n
    _f.__doc__ = f"MXNet's ``sparse.{_n}``: elementwise for equal shapes (storage kept as MXNet's), else broadcast."
