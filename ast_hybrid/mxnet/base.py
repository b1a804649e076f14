"""``mxnet.base``: the error type, the type tuples and helpers MXNet code imports from it.

``MXNetError`` is what MXNet raised from its C++ core (``ast_hybrid.core.errors.MXNetError``); where ours
raises in its place (an op's argument check, a file that is not MXNet's) the error is an ``MXNetError`` and a
``ValueError`` both (``NotAvailable`` is not one: an API that is missing is not an MXNet error).
"""

from __future__ import annotations

import ctypes

import numpy as np

from ast_hybrid.core import settings
from ast_hybrid.core.errors import MXNetError
from ast_hybrid.mxnet._missing import module_getattr

__all__ = ["MXNetError", "NotImplementedForSymbol", "NotSupportedForSparseNDArray", "numeric_types",
           "integer_types", "string_types", "py_str", "data_dir", "data_dir_default", "_as_list", "NDArrayHandle",
           "mx_real_t"]

__version__ = "1.9.1"

numeric_types = (float, int, np.generic)
integer_types = (int, np.integer)
string_types = (str,)
mx_real_t = np.float32          # MXNet's default real type


# MXNet's C handle type (GluonNLP's calibration collector imports it); ast-hybrid has no C handles to give
NDArrayHandle = ctypes.c_void_p


class NotImplementedForSymbol(MXNetError):
    def __init__(self, function, alias, *args):
        super().__init__(f"Function {function.__name__} (namely operator \"{alias}\") is not implemented for Symbol")


class NotSupportedForSparseNDArray(MXNetError):
    def __init__(self, function, alias, *args):
        super().__init__(f"Function {function.__name__} (namely operator \"{alias}\") is not supported for "
                         "SparseNDArray")


def py_str(x):
    return x.decode("utf-8") if isinstance(x, bytes) else x


def _as_list(obj):
    """A list: ``obj`` if it is one, else ``[obj]`` (MXNet's helper, tuples included as one item)."""
    return obj if isinstance(obj, list) else [obj]


def data_dir_default():
    """``~/.mxnet`` (``%APPDATA%\\mxnet`` on Windows), as MXNet."""
    return settings.mxnet_home({})


def data_dir():
    """``$MXNET_HOME`` or the default, where MXNet keeps models and datasets."""
    return settings.mxnet_home()


__getattr__ = module_getattr("mxnet.base", __name__)
