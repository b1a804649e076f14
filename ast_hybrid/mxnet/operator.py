"""``mxnet.operator``: Python custom operators, ``ast_hybrid.operator``'s (``CustomOp``, ``CustomOpProp``,
``register``; ``F.Custom(..., op_type=...)`` runs them)."""

from __future__ import annotations

from ast_hybrid.mxnet._missing import module_getattr
from ast_hybrid.operator import CustomOp, CustomOpProp, get_all_registered_operators, register  # noqa: F401

__all__ = ["CustomOp", "CustomOpProp", "register", "get_all_registered_operators"]

_WHY = "MXNet's legacy NDArrayOp/NumpyOp/PythonOp are not there: subclass CustomOp and CustomOpProp instead"

__getattr__ = module_getattr("mxnet.operator", __name__, {"NDArrayOp": _WHY, "NumpyOp": _WHY, "PythonOp": _WHY})
