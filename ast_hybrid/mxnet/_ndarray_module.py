"""``mxnet.ndarray.ndarray``: the module MXNet's NDArray class lives in, for the names code imports from it
(``NDArray``, ``py_slice``, ``_STORAGE_TYPE_STR_TO_ID``...); the operators are ``mxnet.ndarray``'s."""

from __future__ import annotations

from ast_hybrid.core.ndarray import NDArray  # noqa: F401
from ast_hybrid.mxnet._missing import module_getattr
from ast_hybrid.ops.creation import array, empty, full, ones, zeros  # noqa: F401

py_slice = slice
_STORAGE_TYPE_UNDEFINED, _STORAGE_TYPE_DEFAULT, _STORAGE_TYPE_ROW_SPARSE, _STORAGE_TYPE_CSR = -1, 0, 1, 2
_STORAGE_TYPE_STR_TO_ID = {"undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}
_STORAGE_TYPE_ID_TO_STR = {v: k for k, v in _STORAGE_TYPE_STR_TO_ID.items()}
_GRAD_REQ_MAP = {"null": 0, "write": 1, "add": 3}

__getattr__ = module_getattr("mxnet.ndarray.ndarray", __name__)
