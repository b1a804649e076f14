"""``mxnet.operator``: Python custom operators, which ast-hybrid cannot run.

A module that defines and registers custom operators still imports (``@mx.operator.register('name')`` on a
``CustomOpProp`` subclass is accepted), so that the rest of it can be used; creating an operator
(``CustomOp()``/``CustomOpProp()``, what ``F.Custom(op_type=...)`` does) is the error naming the API.
"""

from __future__ import annotations

from ast_hybrid.mxnet._missing import module_getattr, unsupported

__all__ = ["CustomOp", "CustomOpProp", "register"]

_WHY = ("Python custom operators run outside the compiled program and cannot be traced by jax; "
        "write the operator with F ops in a HybridBlock instead")


class CustomOp:
    """MXNet's custom operator base class; subclasses can be defined, not run."""

    def __init__(self, *args, **kwargs):
        raise unsupported("mxnet.operator", "CustomOp", _WHY)


class CustomOpProp:
    """MXNet's custom operator property base class; subclasses can be defined, not run."""

    def __init__(self, *args, **kwargs):
        raise unsupported("mxnet.operator", "CustomOpProp", _WHY)


def register(reg_name):
    """``@mx.operator.register('name')``: accepted; the class is returned unchanged (and never run)."""
    return lambda prop_cls: prop_cls


__getattr__ = module_getattr("mxnet.operator", __name__, {"NDArrayOp": _WHY, "NumpyOp": _WHY, "PythonOp": _WHY})
