"""``mxnet.test_utils``' random sparse arrays (``rand_sparse_ndarray``, ``create_sparse_array``...), drawn as
MXNet 1.9.1's ``python/mxnet/test_utils.py`` draws them (numpy's global generator, the same calls in the same
order: a seeded test gets the same arrays), made with ``nd.sparse`` (``core/sparse.py``)."""

from __future__ import annotations

import numpy as np
import numpy.random as rnd

from ast_hybrid.core.context import current_context
from ast_hybrid.ops import sparse

__all__ = ["rand_sparse_ndarray", "shuffle_csr_column_indices", "assign_each", "assign_each2",
           "create_sparse_array", "create_sparse_array_zd"]


def _validate_csr_generation_inputs(num_rows, num_cols, density, distribution="uniform"):
    total_nnz = int(num_rows * num_cols * density)
    if density < 0 or density > 1:
        raise ValueError("density has to be between 0 and 1")
    if num_rows <= 0 or num_cols <= 0:
        raise ValueError("num_rows or num_cols should be greater than 0")
    if distribution == "powerlaw" and total_nnz < 2 * num_rows:
        raise ValueError(f"not supported for this density: {density} for this shape ({num_rows}, {num_cols}) "
                         "Please keep : num_rows * num_cols * density >= 2 * num_rows")


def shuffle_csr_column_indices(csr):
    """Shuffle a scipy csr matrix's column indices within each row (valid, unordered csr)."""
    for i in range(len(csr.indptr) - 1):
        start, end = csr.indptr[i], csr.indptr[i + 1]
        sub = np.array(csr.indices[start:end])
        np.random.shuffle(sub)
        csr.indices[start:end] = sub


def _uniform_csr(num_rows, num_cols, density=0.1, dtype=None, data_init=None, shuffle_csr_indices=False):
    _validate_csr_generation_inputs(num_rows, num_cols, density)
    from scipy import sparse as spsp

    csr = spsp.rand(num_rows, num_cols, density, dtype=dtype, format="csr")
    if data_init is not None:
        csr.data.fill(data_init)
    if shuffle_csr_indices:
        shuffle_csr_column_indices(csr)
    return sparse.csr_matrix((csr.data, csr.indices, csr.indptr), shape=(num_rows, num_cols), dtype=dtype)


def _powerlaw_csr(num_rows, num_cols, density=0.1, dtype=None):
    """Row ``i`` with twice row ``i - 1``'s non-zeros (every row has one), until ``density`` is reached."""
    _validate_csr_generation_inputs(num_rows, num_cols, density, distribution="powerlaw")
    unused = int(num_rows * num_cols * density)
    out = np.zeros((num_rows, num_cols), dtype=dtype)

    def done():
        return sparse.csr_matrix(out)

    for row in range(num_rows):
        out[row][0] = 1 + rnd.uniform(0.001, 2)
        unused -= 1
        if unused <= 0:
            return done()
    col_max = 2
    for row in range(num_rows):
        col_limit = min(num_cols, col_max)
        if col_limit == num_cols and unused > col_limit:
            out[row] = 1 + rnd.uniform(0.001, 2)
            unused = unused - col_limit + 1
            if unused <= 0:
                return done()
            continue
        for col in range(1, col_limit):
            out[row][col] = 1 + rnd.uniform(0.001, 2)
            unused -= 1
            if unused <= 0:
                return done()
        col_max *= 2
    if unused > 0:
        raise ValueError(f"not supported for this density: {density} for this shape ({num_rows},{num_cols})")
    return done()


def assign_each(the_input, function):
    """``function`` applied to each value (float64 result), or a copy when ``function`` is None."""
    if function is None:
        return np.array(the_input)
    return np.vectorize(function, otypes=[np.float64])(the_input) if np.size(the_input) else \
        np.zeros(np.shape(the_input))


def assign_each2(input1, input2, function):
    if function is None:
        return np.array(input1)
    assert np.shape(input1) == np.shape(input2)
    return np.vectorize(function, otypes=[np.float64])(input1, input2) if np.size(input1) else \
        np.zeros(np.shape(input1))


def rand_sparse_ndarray(shape, stype, density=None, dtype=None, distribution=None, data_init=None,
                        rsp_indices=None, modifier_func=None, shuffle_csr_indices=False, ctx=None):
    """A random sparse array and its parts: ``(rsp, (values, indices))`` or ``(csr, (indptr, indices, data))``."""
    ctx = ctx if ctx else current_context()
    density = rnd.rand() if density is None else density
    dtype = np.float32 if dtype is None else dtype
    distribution = "uniform" if distribution is None else distribution
    if stype == "row_sparse":
        assert distribution == "uniform", f"Distribution {distribution} not supported for row_sparse"
        if rsp_indices is not None:
            indices = rsp_indices
            assert len(indices) <= shape[0]
        else:
            indices = np.argwhere(rnd.rand(shape[0]) < density).flatten()
        if indices.shape[0] == 0:
            empty = sparse.zeros("row_sparse", shape, ctx=ctx, dtype=dtype)
            return empty, (np.array([], dtype=dtype), np.array([]))
        val = rnd.rand(indices.shape[0], *shape[1:]).astype(dtype)
        if data_init is not None:
            val.fill(data_init)
        if modifier_func is not None:
            val = assign_each(val, modifier_func)
        arr = sparse.row_sparse_array((val, indices), shape=shape, dtype=dtype, ctx=ctx)
        return arr, (val, indices)
    if stype == "csr":
        assert len(shape) == 2
        if distribution == "uniform":
            csr = _uniform_csr(shape[0], shape[1], density, data_init=data_init,
                               shuffle_csr_indices=shuffle_csr_indices, dtype=dtype).as_in_context(ctx)
        elif distribution == "powerlaw":
            csr = _powerlaw_csr(shape[0], shape[1], density=density, dtype=dtype).as_in_context(ctx)
        else:
            raise AssertionError(f"Distribution not supported: {distribution}")
        return csr, (csr.indptr, csr.indices, csr.data)
    raise AssertionError("unknown storage type")


def create_sparse_array(shape, stype, data_init=None, rsp_indices=None, dtype=None, modifier_func=None,
                        density=.5, shuffle_csr_indices=False):
    """A random sparse array (row_sparse: ``rsp_indices`` sorted first)."""
    if stype == "row_sparse":
        indices = None if rsp_indices is None else np.sort(np.asarray(rsp_indices))
        return rand_sparse_ndarray(shape, stype, density=density, data_init=data_init, rsp_indices=indices,
                                   dtype=dtype, modifier_func=modifier_func)[0]
    if stype == "csr":
        return rand_sparse_ndarray(shape, stype, density=density, data_init=data_init, dtype=dtype,
                                   modifier_func=modifier_func, shuffle_csr_indices=shuffle_csr_indices)[0]
    raise AssertionError("Unknown storage type: " + stype)


def create_sparse_array_zd(shape, stype, density, data_init=None, rsp_indices=None, dtype=None,
                           modifier_func=None, shuffle_csr_indices=False):
    """``create_sparse_array`` with a row_sparse array's density given by ``rsp_indices`` alone."""
    if stype == "row_sparse":
        density = 0.0
        if rsp_indices is not None:
            assert len(rsp_indices) <= shape[0]
    return create_sparse_array(shape, stype, data_init=data_init, rsp_indices=rsp_indices, dtype=dtype,
                               modifier_func=modifier_func, density=density,
                               shuffle_csr_indices=shuffle_csr_indices)
