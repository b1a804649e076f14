"""``mxnet.init``/``mxnet.initializer``: ast-hybrid's initializers (``ast_hybrid.init``), and ``register``/``alias``.

The classes are ``ast_hybrid.init``'s own objects.  ``register`` and ``alias`` accept a user's
``Initializer`` subclass (as MXNet's decorators do) and return it unchanged; such a class is used by
passing an instance (``init=MyInit()``), not by its registered name.
"""

from __future__ import annotations

from ast_hybrid.init import (Constant, Initializer, MSRAPrelu, Normal, One, Orthogonal, Uniform, Xavier,  # noqa: F401
                             Zero, create)
from ast_hybrid.mxnet._missing import module_getattr

__all__ = ["Initializer", "Uniform", "Normal", "Xavier", "MSRAPrelu", "Zero", "One", "Constant", "Orthogonal",
           "create", "register", "alias"]


def register(klass):
    """``@mx.init.register``: accepted; the class is returned as it is."""
    return klass


def alias(*aliases):
    """``@mx.init.alias('name')``: accepted; the class is returned as it is."""
    return lambda klass: klass


__getattr__ = module_getattr("mxnet.initializer", __name__)
